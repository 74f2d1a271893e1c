"""Writing a volume's files on the host, as the kubelet's atomic writer does.

The files of a configMap, secret or downwardAPI volume (``VolumeContent``) live in the
volume's directory under the pod's directory (``_volumes.content_dir``)::

    <volume>/..2026_11_30_17_38_46.1234567/app.conf    the payload: one hidden,
    <volume>/..2026_11_30_17_38_46.1234567/..podsync   timestamped directory (and
                                                       podsync's record of it)
    <volume>/..data -> ..2026_11_30_17_38_46.1234567   the current payload
    <volume>/app.conf -> ..data/app.conf               what a container sees

Ported from ``AtomicWriter.Write`` (``pkg/volume/util/atomic_writer.go``,
kubelet-modern.md §9): the new payload is written into a fresh hidden directory named
after the time (``..<YYYY_MM_DD_HH_MM_SS>.<random>``), a ``..data_tmp`` symlink to it is
renamed over ``..data`` - one atomic step, so a reader sees the whole old payload or
the whole new one, never a mix - then the top-level names of the payload are symlinks
into ``..data``, names the new payload no longer has are removed, and the old payload
directory goes. A container that bound the volume's directory sees the new files
without a restart. Nothing is written when the payload is the one recorded.

podsync's record (``..podsync``, JSON: the content's digest and its sources' digests,
``WrittenVolume``) is written into the payload directory itself, so it swaps with the
files: the record read through ``..data`` always describes the files there.

Modes: each file gets its ``VolumeFile.mode`` whatever the umask (the writer chmods, as
the kubelet's does); directories are 0755. With an fsGroup, every file and directory
is given to that group, files get ``0440`` ORed in and directories ``0550`` and setgid,
as the kubelet's ``SetVolumeOwnership`` does for a read-only volume
(``pkg/volume/volume_linux.go``).

Safety, as ``_files``: the volume's directory must be strictly inside the root
directory once symlinks are resolved; directories are made one component at a time
without following symlinks; files are created with ``O_EXCL | O_NOFOLLOW`` inside the
fresh payload directory, which nobody else knows yet.

This is the *host* writer. The projection (what to write) is pure and separate
(``_projection``), so another writer - into an engine volume through the engine's
archive API - can write the same content.

Nothing here is public API.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Mapping, Sequence

import attrs

from podsync.actions._actions import Plan, WriteVolume
from podsync.host._files import HostPathRefused, _components, _make_pod_path
from podsync.model._secrets import SecretLookup, checked_value
from podsync.model._volume import VolumeContent, VolumeFile, WrittenVolume
from podsync.spec._content_layout import parse_record
from podsync.spec._volumes import content_digest

__all__: list[str] = []

#: The symlink naming the current payload directory (the kubelet's ``..data``).
DATA_DIR = "..data"
_DATA_TMP = "..data_tmp"
#: podsync's record of a payload, inside the payload directory.
RECORD = "..podsync"
_RECORD_MAX_BYTES = 64 * 1024

#: The mode of the volume's directory and of the directories of its payload: every
#: user of the container may read the files (each file's own mode permitting).
VOLUME_DIR_MODE = 0o755


def record_text(content: VolumeContent, fs_group: int | None) -> bytes:
    """podsync's record of a payload: the content's digest (with the fsGroup it was
    written for) and its sources' digests, as canonical JSON."""
    data = {"digest": content_digest(content, fs_group), "sources": dict(content.sources)}
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _volume_dir(path: str, root_dir: str) -> str:
    """Make the volume's directory (and the pod directory with its marker) and return
    its real path."""
    real_root, parts = _components(path, root_dir)
    if len(parts) < 2:
        raise HostPathRefused(f"{path!r} is not inside a pod directory of {root_dir!r}")
    made = _make_pod_path(real_root, parts)
    fd = os.open(made, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fchmod(fd, VOLUME_DIR_MODE | (stat.S_IMODE(os.fstat(fd).st_mode) & stat.S_ISGID))
    finally:
        os.close(fd)
    return made


def _payload_dir(volume: str) -> str | None:
    """The name of the payload directory ``..data`` points at, or ``None``."""
    try:
        target = os.readlink(os.path.join(volume, DATA_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.EINVAL:  # ..data is not a symlink: not podsync's
            return None
        raise
    if "/" in target or not target.startswith("..") or target in ("..", DATA_DIR):
        return None
    return target


def read_record(path: str, root_dir: str) -> bytes | None:
    """The record of the payload the volume directory ``path`` holds now, or ``None``
    when there is none (no directory, no ``..data``, no record).

    Raises:
        HostPathRefused: ``path`` is not strictly inside ``root_dir``.
        OSError: the record exists but cannot be read.
    """
    real_root, parts = _components(path, root_dir)
    volume = os.path.join(real_root, *parts)
    try:
        if not stat.S_ISDIR(os.lstat(volume).st_mode):
            return None
    except (FileNotFoundError, NotADirectoryError):
        return None
    payload = _payload_dir(volume)
    if payload is None:
        return None
    try:
        fd = os.open(
            os.path.join(volume, payload, RECORD), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        )
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
        raise
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None
        return file.read(_RECORD_MAX_BYTES)


@attrs.frozen
class _Ownership:
    """What ``SetVolumeOwnership`` does for a read-only volume with an fsGroup."""

    group: int | None

    def file(self, fd: int, mode: int) -> None:
        if self.group is not None:
            os.fchown(fd, -1, self.group)
            mode |= 0o440
        os.fchmod(fd, mode)

    def directory(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            mode = VOLUME_DIR_MODE
            if self.group is not None:
                os.fchown(fd, -1, self.group)
                mode |= 0o440 | 0o110 | stat.S_ISGID
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def _write_payload(payload: str, files: Sequence[VolumeFile], owner: _Ownership) -> None:
    made: set[str] = set()
    for f in files:
        parts = f.path.split("/")
        current = payload
        for part in parts[:-1]:
            current = os.path.join(current, part)
            if current not in made:
                os.mkdir(current, VOLUME_DIR_MODE)
                owner.directory(current)
                made.add(current)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(os.path.join(current, parts[-1]), flags, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(f.data)
            # The mode as given, whatever the umask (the kubelet chmods after writing).
            owner.file(out.fileno(), f.mode)


def _top_names(files: Sequence[VolumeFile]) -> set[str]:
    return {f.path.split("/", 1)[0] for f in files}


def write_volume(
    path: str,
    root_dir: str,
    content: VolumeContent,
    *,
    fs_group: int | None = None,
    now: float,
) -> bool:
    """Make the volume directory ``path`` hold ``content`` (the atomic writer, see the
    module docstring); ``now`` (seconds since the epoch) names the payload directory.

    Returns:
        False when the directory held this content already (nothing was written).

    Raises:
        HostPathRefused: ``path`` is not strictly inside a pod directory of
            ``root_dir``, or something other than podsync's files is in the way.
        OSError: the filesystem refused; the previous payload is then still whole
            (``..data`` is swapped last but one step: only the old payload directory
            or user-visible names may be left behind, and the next write tidies them).
    """
    record = record_text(content, fs_group)
    if read_record(path, root_dir) == record:
        return False
    volume = _volume_dir(path, root_dir)
    # One writer at a time (two syncs racing): the lock is on the volume's directory
    # itself, released when the descriptor is closed.
    lock = os.open(volume, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if read_record(path, root_dir) == record:
            return False  # the other writer wrote it
        return _write_locked(volume, content, record, fs_group, now)
    finally:
        os.close(lock)


def _write_locked(
    volume: str, content: VolumeContent, record: bytes, fs_group: int | None, now: float
) -> bool:
    owner = _Ownership(fs_group)
    old = _payload_dir(volume)
    import tempfile  # here: only a write needs it

    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime(now))
    payload = tempfile.mkdtemp(prefix=stamp, dir=volume)
    name = os.path.basename(payload)
    try:
        owner.directory(payload)
        _write_payload(payload, content.files, owner)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(os.path.join(payload, RECORD), flags, 0o400)
        with os.fdopen(fd, "wb") as out:
            out.write(record)
        # The user-visible names: symlinks into ..data (dangling until the swap for a
        # new name, which no container reads yet).
        wanted = _top_names(content.files)
        for top in sorted(wanted):
            link = os.path.join(volume, top)
            target = os.path.join(DATA_DIR, top)
            try:
                if os.readlink(link) == target:
                    continue
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno == errno.EINVAL:
                    raise HostPathRefused(
                        f"{link!r} is in the way (not a symlink podsync made)"
                    ) from exc
                raise
            with contextlib.suppress(FileNotFoundError):
                os.unlink(link)
            os.symlink(target, link)
        # The swap: ..data_tmp -> payload, renamed over ..data (rename(2) is atomic).
        tmp = os.path.join(volume, _DATA_TMP)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.symlink(name, tmp)
        os.rename(tmp, os.path.join(volume, DATA_DIR))
    except BaseException:
        _remove_tree(volume, name)
        raise
    # Tidy up: names the payload no longer has, the old payload and any left behind by
    # an interrupted write. Only podsync's own entries: symlinks into ..data and hidden
    # payload directories.
    for entry in os.scandir(volume):
        if entry.name in wanted or entry.name in (DATA_DIR, name):
            continue
        if entry.is_symlink() and not entry.name.startswith(".."):
            with contextlib.suppress(OSError):
                if os.readlink(entry.path).startswith(DATA_DIR + "/"):
                    os.unlink(entry.path)
        elif entry.name.startswith("..") and entry.is_dir(follow_symlinks=False):
            _remove_tree(volume, entry.name)
    if old is not None and old != name:
        _remove_tree(volume, old)
    return True


def _remove_tree(volume: str, name: str) -> None:
    import shutil  # here: it brings the compression modules, which nothing else needs

    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(os.path.join(volume, name))


def read_volumes(
    root_dir: str, wanted: Mapping[str, Mapping[str, str]]
) -> tuple[WrittenVolume, ...]:
    """The records of the volume directories ``wanted`` (pod uid -> volume name -> host
    path), as ``WrittenVolume`` s; a volume without a record is left out.

    Raises:
        OSError: a record exists but cannot be read.
    """
    found: list[WrittenVolume] = []
    for uid, volumes in wanted.items():
        for name, path in volumes.items():
            try:
                data = read_record(path, root_dir)
            except HostPathRefused:  # a path outside the root: nothing podsync wrote
                continue
            if data is None:
                continue
            observed = parse_record(uid, name, data)
            if observed is not None:
                found.append(observed)
    return tuple(found)


def planned_volume_records(plan: Plan) -> tuple[WrittenVolume, ...]:
    """The records of the volumes ``plan`` writes (its ``WriteVolume`` s), as they are
    now under its root directory: what a saved plan's fingerprint is checked against.
    A record that cannot be read counts as none (the plan is then stale, not applied)."""
    wanted: dict[str, dict[str, str]] = {}
    for action in plan.actions:
        if isinstance(action, WriteVolume):
            wanted.setdefault(action.pod_uid, {})[action.volume] = action.path
    try:
        return read_volumes(plan.options.root_dir, wanted) if wanted else ()
    except OSError:
        return ()


def sealed_writes(plan: Plan) -> list[WriteVolume]:
    """The ``WriteVolume`` s of ``plan`` that write a Secret's files (a saved plan holds
    those by reference: ``VolumeFile.secret``)."""
    return [
        action
        for action in plan.actions
        if isinstance(action, WriteVolume) and any(f.secret for f in action.content.files)
    ]


def unseal_write(write: WriteVolume, lookup: SecretLookup, host_key: bytes) -> WriteVolume:
    """``write`` with the values of its Secret files put back from the Secrets
    ``lookup`` finds, each checked against the keyed digest it was planned with (as
    ``podsync.model._secrets.unseal`` does for a create's text, but bytes: a file may hold
    any).

    Raises:
        SecretMismatch: a Secret or key is missing, or its value is not the one the plan
            was made with.
    """
    files = []
    for f in write.content.files:
        part = f.secret
        if f.known or part is None:
            files.append(f)
            continue
        value = checked_value(part, lookup, host_key)
        files.append(attrs.evolve(f, data=value, known=True))
    content = attrs.evolve(write.content, files=tuple(files))
    return attrs.evolve(write, content=content)
