"""The emptyDir host directories of earlier podsync versions, and moving them out.

Before ``emptyDir`` volumes were engine volumes, podsync kept each one in a directory
under its root directory, ``<root>/<pod uid>/volumes/empty/<volume>``, and bound it into
the pod's containers. A pod that still has such directories moves to engine volumes once
none of its containers binds them (``podsync.planner._pod``): apply then copies each
directory into the pod's new volume through the engine (``VolumeRuntime.write_volume``) and
removes the directory. Those directories are on the machine podsync runs on, which was
the engine's host for the podsync that made them: that podsync worked with a local
engine only.

``list_host_empty_dirs`` finds the directories (the observation), ``read_host_tree``
reads one as ``VolumeEntry`` values, ``remove_host_empty_dir`` removes one. The safety
rules of ``podsync.host._files`` hold: only inside a marked pod directory under the root,
symlinks never followed (a symlink inside is copied as a symlink), nothing but regular
files, directories and symlinks copied (a socket or a device is not data an emptyDir
holds across a restart).

Not public API.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterator

from podsync.host._files import HostPathRefused, _is_marked
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.runtime._protocol import VolumeRuntime
from podsync.spec._naming import is_safe_uid

__all__: list[str] = []

# The most bytes of file data one ``write_volume`` call of a move carries: a directory
# is written in parts, each through its own helper container, so that a large emptyDir
# is not one archive in memory.
_BATCH_BYTES = 64 * 1024 * 1024

# ``<pod dir>/volumes/empty``: where the directories are.
_EMPTY = ("volumes", "empty")


def _empty_root(root_dir: str, pod_uid: str) -> str | None:
    """``<root>/<uid>/volumes/empty`` when the pod directory is a real, marked directory
    and the path below it has no symlink; else ``None``."""
    if not is_safe_uid(pod_uid):
        return None
    pod_dir = os.path.join(root_dir, pod_uid)
    try:
        if stat.S_ISLNK(os.lstat(pod_dir).st_mode) or not _is_marked(pod_dir):
            return None
        path = pod_dir
        for part in _EMPTY:
            path = os.path.join(path, part)
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
    except (FileNotFoundError, NotADirectoryError):
        return None
    return path


def list_host_empty_dirs(
    root_dir: str, pods: Collection[tuple[str, Collection[str]]]
) -> set[tuple[str, str]]:
    """The (pod uid, volume name) of each emptyDir host directory under ``root_dir`` of
    ``pods`` (pod uid, the names of its on-disk emptyDir volumes): real directories
    only, in marked pod directories.

    Raises:
        OSError: a directory exists but cannot be listed.
    """
    found: set[tuple[str, str]] = set()
    for uid, names in pods:
        path = _empty_root(root_dir, uid)
        if path is None:
            continue
        for name in names:
            try:
                if stat.S_ISDIR(os.lstat(os.path.join(path, name)).st_mode):
                    found.add((uid, name))
            except FileNotFoundError:
                continue
    return found


def _checked(path: str, root_dir: str) -> str:
    """``path`` when it is ``<root_dir>/<uid>/volumes/empty/<volume>`` in a marked pod
    directory and a real directory; else ``HostPathRefused``."""
    rel = os.path.relpath(os.path.normpath(path), os.path.normpath(root_dir))
    parts = rel.split(os.sep)
    if len(parts) != 4 or tuple(parts[1:3]) != _EMPTY or parts[3] in ("", ".", ".."):
        raise HostPathRefused(f"{path!r} is not an emptyDir directory under {root_dir!r}")
    base = _empty_root(os.path.realpath(root_dir), parts[0])
    if base is None:
        raise HostPathRefused(f"{path!r} is not in a podsync pod directory of {root_dir!r}")
    return os.path.join(base, parts[3])


def read_host_tree(path: str, root_dir: str) -> Iterator[VolumeEntry]:
    """The content of the emptyDir host directory ``path`` as entries, parents before
    children (its root directory itself is not one: the volume's root is set up on its
    own): regular files with their data, directories and symlinks, with their modes,
    owners and groups. A missing directory has none.

    Raises:
        HostPathRefused: ``path`` is not an emptyDir directory of a pod directory
            under ``root_dir``.
        OSError: something in it cannot be read.
    """
    try:
        top = _checked(path, root_dir)
        if not stat.S_ISDIR(os.lstat(top).st_mode):
            raise HostPathRefused(f"{path!r} is not a real directory")
    except FileNotFoundError:
        return
    yield from _walk(top, "")


def _walk(directory: str, prefix: str) -> Iterator[VolumeEntry]:
    with os.scandir(directory) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        rel = f"{prefix}{entry.name}"
        st = entry.stat(follow_symlinks=False)
        mode, uid, gid = stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
        if stat.S_ISDIR(st.st_mode):
            yield VolumeEntry(rel, EntryKind.DIRECTORY, mode, uid, gid)
            yield from _walk(entry.path, rel + "/")
        elif stat.S_ISLNK(st.st_mode):
            target = os.readlink(entry.path)
            yield VolumeEntry(rel, EntryKind.SYMLINK, mode, uid, gid, target=target)
        elif stat.S_ISREG(st.st_mode):
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as file:
                data = file.read()
            yield VolumeEntry(rel, EntryKind.FILE, mode, uid, gid, data)


def remove_host_empty_dir(path: str, root_dir: str) -> bool:
    """Remove the emptyDir host directory ``path`` and everything in it (symlinks
    inside removed, never followed); False when it was gone already.

    Raises:
        HostPathRefused: ``path`` is not an emptyDir directory of a pod directory
            under ``root_dir``; nothing was removed.
        OSError: the removal failed part-way.
    """
    try:
        target = _checked(path, root_dir)
        st = os.lstat(target)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise HostPathRefused(f"{path!r} is not a real directory (a symlink or a file)")
    import shutil  # here, as in podsync.host._files: only a migration needs it

    shutil.rmtree(target)
    return True


def move_into_volume(runtime: VolumeRuntime, volume: str, path: str, root_dir: str) -> str:
    """Copy the emptyDir host directory ``path`` into the named ``volume`` through
    ``runtime`` (``write_volume``, in parts of at
    most about 64 MiB of data), then remove the directory. Returns what was done, for
    the event (``" (moved in <path>: 3 entries)"``; empty when the directory was gone).

    Raises:
        HostPathRefused: ``path`` is not an emptyDir directory of a pod directory under
            ``root_dir``.
        OSError: the directory cannot be read or removed (what was copied stays).
        RuntimeCallError: a write failed (the directory stays, for the next try).
    """
    batch: list[VolumeEntry] = []
    size = copied = 0
    for entry in read_host_tree(path, root_dir):
        batch.append(entry)
        size += len(entry.data)
        if size >= _BATCH_BYTES:
            runtime.write_volume(volume, batch)
            copied, batch, size = copied + len(batch), [], 0
    if batch:
        runtime.write_volume(volume, batch)
        copied += len(batch)
    if not remove_host_empty_dir(path, root_dir):
        return ""
    return f" (moved in {path}: {copied} entries)"
