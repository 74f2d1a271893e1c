"""What podsync writes into, and reads out of, an engine volume: ``VolumeEntry``.

Pod state that lives in the engine (issue 18: emptyDir volumes, the files of
configMap/secret/downwardAPI volumes, termination messages) is written and read through
the runtime (``VolumeRuntime.write_volume``, ``VolumeRuntime.read_volume_file``,
``FileRuntime.read_container_file``), never through a path on the machine podsync runs on,
so that a remote engine works as a local one does.

An entry is runtime-neutral: the Docker runtime turns a sequence of them into the tar
archive its archive API takes (``podsync.runtime.docker._archive``), ``FakeRuntime`` keeps them
as they are. The engine's archive API can add and overwrite, never remove: so can this.

Contract: pure - attrs classes and path checks, no I/O.
"""

from __future__ import annotations

import enum
import posixpath

import attrs

__all__ = ["EntryKind", "VolumeEntry", "entry_path_refusal"]


class EntryKind(enum.Enum):
    """What an entry is."""

    FILE = "file"
    DIRECTORY = "directory"
    SYMLINK = "symlink"


@attrs.frozen
class VolumeEntry:
    """One file, directory or symbolic link to write into a volume.

    Attributes:
        path: where, relative to the volume's root, in POSIX spelling, normalised, never
            absolute and never climbing out (``..``): ``"."`` is the root directory
            itself (so that its mode and owner can be set: an emptyDir is 0777), ``"a"``,
            ``"..data/key"``. Parents must come before their children in a sequence
            (a missing parent is created 0755 by the engine).
        kind: file, directory or symbolic link.
        mode: permission bits (``0o644``; setgid ``0o2000`` and sticky bits allowed).
        uid: the owner's numeric user id.
        gid: the owner's numeric group id.
        data: a file's content (empty for the others).
        target: a symbolic link's target, as it is written (relative or absolute).
    """

    path: str
    kind: EntryKind
    mode: int = 0o644
    uid: int = 0
    gid: int = 0
    data: bytes = attrs.field(default=b"", repr=lambda d: f"<{len(d)} bytes>")
    target: str = ""


def entry_path_refusal(path: str) -> str | None:
    """Why ``path`` cannot name an entry of a volume, or ``None`` when it can (see
    ``VolumeEntry.path``). An entry must stay inside its volume whatever the engine
    does with it: a path that is absolute, not normalised, or climbs out is refused."""
    if not path:
        return "an empty path"
    if path.startswith("/"):
        return f"{path!r} is absolute"
    if posixpath.normpath(path) != path:
        return f"{path!r} is not normalised (expected {posixpath.normpath(path)!r})"
    if path == ".." or path.startswith("../"):
        return f"{path!r} leaves the volume"
    if "\0" in path:
        return f"{path!r} holds a NUL character"
    return None
