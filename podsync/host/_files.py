"""Files on the host: pod directories under the root directory.

Since pod state moved into the engine (issue 18: termination-message files in the
pod's state volume, stop and probe records as record volumes, ``_records``), podsync
writes no termination-message file, stop record or probe record here any more: the
readers below serve the pods an earlier podsync made, until they are gone, and the
removals clean up after them.

What lives there (paths come from the plan, see ``_volumes.py``)::

    <root>/<pod uid>/.podsync-pod                    the marker: podsync made this directory
    <root>/<pod uid>/volumes/empty/<volume>          emptyDir volumes
    <root>/<pod uid>/<container>/<instance>          termination-message files
    <root>/<pod uid>/.podsync-stopped/<container id> stop records: podsync stopped it
    <root>/<pod uid>/.podsync-probes/<container id>  probe records: the prober's states

Ported from the seed's ``runContainer`` (mkdir ``<root>/<uid>/<container>`` 0750, then
create the file that is bound to ``terminationMessagePath``), the emptyDir plugin's
``SetUp`` (mkdir 0750) and ``reconcileVolumes`` / ``TearDown`` (reference §2.3, §2.5).
hostPath volumes are the user's directories: podsync never creates or removes them (the
engine creates a missing bind source, as Docker did for the seed).

Safety rules, because a plan may come from a file and the root may be misconfigured:

1. Every path podsync creates or removes must be strictly inside the root directory
   once symlinks are resolved (``os.path.realpath``); anything else is refused.
2. Directories are made one component at a time with ``lstat`` checks, so a symlink
   planted inside the root is never followed out of it; files are opened with
   ``O_NOFOLLOW``.
3. Only directories that carry the marker file are pod directories: ``list_pod_dirs``
   reports nothing else, and ``remove_pod_dir`` refuses anything else. A root directory
   pointed at ``/tmp`` by mistake therefore loses nothing podsync did not create
   (the seed tore down whatever it found under its root). A pod directory left by a
   2014 kubelet has no marker and is left alone.
4. Removal is ``shutil.rmtree`` on a real (not symlinked) directory, which on Linux
   works through directory file descriptors and removes symlinks inside the tree without
   following them (``shutil.rmtree.avoids_symlink_attacks``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Collection

from podsync.actions._actions import CreateSpec
from podsync.exceptions import PodsyncError

# Nothing here is public API: ``podsync.observe`` and ``podsync.apply`` use it.
__all__: list[str] = []

#: The file that marks a directory under the root as a podsync pod directory.
POD_DIR_MARKER = ".podsync-pod"

#: The directory under a pod directory that holds podsync's stop records: one file per
#: container podsync stopped, named by the container's id and holding the reason.
#: Starts with a dot, so it can never be a container's directory (a DNS label).
STOP_RECORDS_DIR = ".podsync-stopped"

#: The directory under a pod directory that holds podsync's probe records: one file per
#: running container with probes, named by the container's id and holding its probes'
#: states (``podsync.prober._rules.states_to_json``), so that consecutive probe failures count
#: across syncs - also across podsync processes, as every ``podsync apply`` is one.
PROBE_RECORDS_DIR = ".podsync-probes"

# Longer record contents are cut: a reason is a short code.
_RECORD_MAX_BYTES = 128
# A probe record holds three small JSON objects.
_PROBE_RECORD_MAX_BYTES = 4096

# The seed made its pod and container directories 0750 (os.MkdirAll(dir, 0750)); the
# process umask applies on top, as it did for the seed.
DIR_MODE = 0o750
#: An emptyDir volume's own directory: any user of the pod may write there (kubelet).
EMPTY_DIR_MODE = 0o777
# The seed's os.Create: 0666 before the umask, so the container may write its message
# whatever user it runs as.
FILE_MODE = 0o666


class HostPathRefused(PodsyncError):
    """A host path podsync was asked to create or remove is not a safe place to touch."""


def _components(path: str, root_dir: str) -> tuple[str, list[str]]:
    """The real root directory and the components of ``path`` below it.

    Raises:
        HostPathRefused: ``path`` is relative, or not strictly inside ``root_dir`` once
            symlinks and ``..`` are resolved.
    """
    if not os.path.isabs(path):
        raise HostPathRefused(f"expected an absolute path, got {path!r}")
    real_root = os.path.realpath(root_dir)
    real_path = os.path.realpath(path)
    rel = os.path.relpath(real_path, real_root)
    parts = rel.split(os.sep)
    if rel == os.curdir or parts[0] == os.pardir or os.path.isabs(rel):
        raise HostPathRefused(
            f"{path!r} is not inside the root directory {root_dir!r} (resolved: {real_path!r})"
        )
    return real_root, parts


def _make_dir(path: str) -> None:
    """Make one directory (if missing) and check that it is a real directory."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, DIR_MODE)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        # A symlink appeared after realpath looked (or a file is in the way).
        raise HostPathRefused(f"{path!r} is not a directory (a symlink or a file?)")


def _make_pod_path(real_root: str, parts: list[str]) -> str:
    """Make the root, the pod directory with its marker, and ``parts[1:]`` as
    directories; return the joined path."""
    os.makedirs(real_root, DIR_MODE, exist_ok=True)
    current = os.path.join(real_root, parts[0])
    _make_dir(current)
    marker = os.path.join(current, POD_DIR_MARKER)
    fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    os.close(fd)
    for part in parts[1:]:
        current = os.path.join(current, part)
        _make_dir(current)
    return current


def make_host_paths(spec: CreateSpec, root_dir: str) -> None:
    """Create ``spec.directories`` and the empty ``spec.files`` (with their parent
    directories), before the container is created (seed runContainer).

    Existing directories and files are kept as they are (a file is never truncated: a
    container instance's termination message belongs to it). With
    ``spec.security.fs_group``, each directory (an emptyDir volume) is made writable
    by every user (``EMPTY_DIR_MODE``, as the kubelet's emptyDir); with
    ``spec.security.fs_group``, each is also given to that
    group, group-writable and setgid, every time: the kubelet's SetVolumeOwnership
    (pkg/volume/volume_linux.go) ORs in 0660 and 0110 and sets setgid on directories,
    so files the pod's processes make there keep the group. Only the directory itself:
    podsync made it empty, and setgid passes the group on.

    Raises:
        HostPathRefused: a path is not strictly inside ``root_dir``, or a symlink or file
            is in the way.
        OSError: the filesystem refused (permissions, no space, ...).
    """
    fs_group = spec.security.fs_group
    for directory in spec.directories:
        real_root, parts = _components(directory, root_dir)
        made = _make_pod_path(real_root, parts)
        # Through a descriptor opened without following symlinks: what is changed is
        # the directory podsync made, never what a symlink put there points at.
        fd = os.open(made, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            # Writable by any user of the pod, as the kubelet makes an emptyDir
            # (empty_dir.go setupDir: mode 0777, whatever the umask), so a container that
            # runs as another user than root can write there. The pod directory around
            # it stays 0750: no other user of the host reaches it.
            mode = stat.S_IMODE(os.fstat(fd).st_mode) | EMPTY_DIR_MODE
            if fs_group is not None:
                os.fchown(fd, -1, fs_group)
                mode |= 0o660 | 0o110 | stat.S_ISGID
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    for file in spec.files:
        real_root, parts = _components(file, root_dir)
        if len(parts) < 2:
            raise HostPathRefused(f"{file!r} is not inside a pod directory of {root_dir!r}")
        parent = _make_pod_path(real_root, parts[:-1])
        fd = os.open(
            os.path.join(parent, parts[-1]),
            os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            FILE_MODE,
        )
        os.close(fd)


def remove_pod_dir(path: str, root_dir: str) -> bool:
    """Tear down the pod directory ``path`` and everything in it (seed TearDown).

    ``path`` must name a directory directly under ``root_dir`` (after resolving
    symlinks in ``root_dir``) that is itself a real directory, not a symlink, and
    carries the podsync marker. Symlinks inside it are removed, never followed.

    Returns:
        True if a directory was removed, False if there was none (already gone).

    Raises:
        HostPathRefused: ``path`` is not a podsync pod directory directly under
            ``root_dir``; nothing was removed.
        OSError: the removal failed part-way (permissions, a busy mount, ...).
    """
    if not os.path.isabs(path):
        raise HostPathRefused(f"expected an absolute path, got {path!r}")
    normalized = os.path.normpath(path)
    name = os.path.basename(normalized)
    real_root = os.path.realpath(root_dir)
    if name in ("", os.curdir, os.pardir) or (
        os.path.realpath(os.path.dirname(normalized)) != real_root
    ):
        raise HostPathRefused(f"{path!r} is not a directory directly under {root_dir!r}")
    target = os.path.join(real_root, name)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise HostPathRefused(f"{path!r} is not a real directory (a symlink or a file)")
    if not _is_marked(target):
        raise HostPathRefused(
            f"{path!r} has no {POD_DIR_MARKER} marker: podsync did not create it, "
            "so it is not torn down"
        )
    import shutil  # here: it brings the compression modules, which nothing else needs

    shutil.rmtree(target)
    return True


def _is_marked(directory: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(os.path.join(directory, POD_DIR_MARKER)).st_mode)
    except OSError:
        return False


def list_pod_dirs(root_dir: str) -> set[str]:
    """The pod uids that have a podsync pod directory under ``root_dir``.

    Only real directories (not symlinks) that carry the marker count; a missing root
    directory has none.

    Raises:
        OSError: ``root_dir`` exists but cannot be listed.
    """
    try:
        entries = list(os.scandir(root_dir))
    except FileNotFoundError:
        return set()
    return {
        entry.name
        for entry in entries
        if entry.is_dir(follow_symlinks=False)
        and not entry.name.startswith(".")
        and _is_marked(entry.path)
    }


# ---------------------------------------------------------------------------------------
# Stop records
#
# The restart policy judges how a container ended by itself. A container that podsync
# stopped (to replace it, to rebuild its pod, for a failed liveness probe or postStart
# handler) did not end by itself, and later plans must know that - also after podsync
# exits, as the next ``podsync apply`` is a new process. Docker labels cannot change
# after create and the engine has no field for it, so the record lives in the pod's
# directory under the root directory: podsync already owns that directory, observes it
# on every sync, and tears it down with the pod. A record is written *before* the stop
# (a stop without its record is exactly the failure the record prevents; a record whose
# stop then failed is harmless, as a running container's record is never read) and
# removed with the container.


def _record_component_ok(name: str) -> bool:
    # A pod uid or container id used as one path component under the root.
    return bool(name) and not name.startswith(".") and "/" not in name and "\0" not in name


def write_stop_record(root_dir: str, pod_uid: str, container_id: str, reason: str) -> None:
    """Record that podsync stops container ``container_id`` of pod ``pod_uid``, and why
    (a short code such as ``spec-changed``). Creates the pod directory (with its marker)
    when it is missing; an existing record is replaced.

    Raises:
        HostPathRefused: the uid or id cannot name a file safely, or the path is not
            strictly inside ``root_dir`` (or a symlink or file is in the way).
        OSError: the filesystem refused.
    """
    if not (_record_component_ok(pod_uid) and _record_component_ok(container_id)):
        raise HostPathRefused(
            f"cannot record a stop of container {container_id!r} of pod {pod_uid!r}"
        )
    _write_record(root_dir, pod_uid, STOP_RECORDS_DIR, container_id, reason.encode("utf-8"))


def _write_record(
    root_dir: str, pod_uid: str, directory: str, container_id: str, data: bytes
) -> None:
    path = os.path.join(root_dir, pod_uid, directory, container_id)
    real_root, parts = _components(path, root_dir)
    parent = _make_pod_path(real_root, parts[:-1])
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(os.path.join(parent, parts[-1]), flags, 0o644)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def remove_stop_record(root_dir: str, pod_uid: str, container_id: str) -> None:
    """Forget the stop record of a removed container; a missing record (or a uid or id
    that cannot have one) is fine.

    Raises:
        HostPathRefused: the path is not strictly inside ``root_dir``.
        OSError: the filesystem refused.
    """
    if not (_record_component_ok(pod_uid) and _record_component_ok(container_id)):
        return
    path = os.path.join(root_dir, pod_uid, STOP_RECORDS_DIR, container_id)
    real_root, parts = _components(path, root_dir)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        os.unlink(os.path.join(real_root, *parts))


def read_stop_records(
    root_dir: str, pod_uid: str, container_ids: Collection[str]
) -> dict[str, str]:
    """The stop records of pod ``pod_uid`` for ``container_ids``: container id -> reason
    (``"unknown"`` for an empty record). Records of other containers are not read.

    Only a real ``STOP_RECORDS_DIR`` directory in a real pod directory counts; record
    files are opened without following symlinks. podsync makes nothing else, so anything
    else there holds no records.

    Raises:
        OSError: a record exists but cannot be read.
    """
    found = _read_records(root_dir, pod_uid, STOP_RECORDS_DIR, container_ids, _RECORD_MAX_BYTES)
    return {
        container_id: data.decode("utf-8", "replace").strip() or "unknown"
        for container_id, data in found.items()
    }


def _records_dir(root_dir: str, pod_uid: str, directory: str) -> str | None:
    """The records directory ``directory`` of pod ``pod_uid``, when it is a real
    directory in a real pod directory; ``None`` otherwise."""
    if not _record_component_ok(pod_uid):
        return None
    pod_dir = os.path.join(root_dir, pod_uid)
    path = os.path.join(pod_dir, directory)
    for candidate in (pod_dir, path):
        try:
            if not stat.S_ISDIR(os.lstat(candidate).st_mode):
                return None
        except (FileNotFoundError, NotADirectoryError):
            return None
    return path


def _read_records(
    root_dir: str,
    pod_uid: str,
    directory: str,
    container_ids: Collection[str],
    max_bytes: int,
) -> dict[str, bytes]:
    """The record files in ``directory`` of pod ``pod_uid`` for ``container_ids``: only
    regular files, opened without following symlinks (podsync makes nothing else, so
    anything else holds no record)."""
    path = _records_dir(root_dir, pod_uid, directory)
    if path is None:
        return {}
    records: dict[str, bytes] = {}
    for container_id in sorted(container_ids):
        if not _record_component_ok(container_id):
            continue
        try:
            fd = os.open(
                os.path.join(path, container_id), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            )
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                continue  # a symlink: podsync writes none, so it is no record
            raise
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                continue
            records[container_id] = file.read(max_bytes)
    return records


# ---------------------------------------------------------------------------------------
# Probe records
#
# A probe's thresholds count consecutive results, and a one-shot ``podsync apply`` runs
# each probe at most once: the count must outlive the process. Like the stop records,
# the prober's states live in the pod's directory, one file per running container with
# probes; a replaced container has a new id and so starts from fresh states, as the
# kubelet's worker does on a new container id.


def write_probe_record(root_dir: str, pod_uid: str, container_id: str, text: str) -> None:
    """Store the probe states ``text`` of container ``container_id`` of pod ``pod_uid``,
    replacing any; creates the pod directory (with its marker) when it is missing.

    Raises:
        HostPathRefused: the uid or id cannot name a file safely, or the path is not
            strictly inside ``root_dir`` (or a symlink or file is in the way).
        OSError: the filesystem refused.
    """
    if not (_record_component_ok(pod_uid) and _record_component_ok(container_id)):
        raise HostPathRefused(
            f"cannot record the probes of container {container_id!r} of pod {pod_uid!r}"
        )
    _write_record(root_dir, pod_uid, PROBE_RECORDS_DIR, container_id, text.encode("utf-8"))


def read_probe_records(
    root_dir: str, pod_uid: str, container_ids: Collection[str]
) -> dict[str, str]:
    """The probe records of pod ``pod_uid`` for ``container_ids``: container id -> text.

    Raises:
        OSError: a record exists but cannot be read.
    """
    found = _read_records(
        root_dir, pod_uid, PROBE_RECORDS_DIR, container_ids, _PROBE_RECORD_MAX_BYTES
    )
    return {cid: data.decode("utf-8", "replace") for cid, data in found.items()}


def prune_probe_records(root_dir: str, pod_uid: str, keep: Collection[str]) -> None:
    """Remove the probe records of pod ``pod_uid`` whose container is not in ``keep``
    (containers that stopped or are gone: a new container starts from fresh states).

    Raises:
        OSError: the directory cannot be listed or a record cannot be removed.
    """
    path = _records_dir(root_dir, pod_uid, PROBE_RECORDS_DIR)
    if path is None:
        return
    for entry in os.scandir(path):
        if entry.name not in keep and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
