"""Tar archives for the Docker engine's archive API (``PUT``/``GET
/containers/{id}/archive``): ``VolumeEntry`` items in, one file's bytes out.

Docker extracts a ``PUT`` archive under the given directory of the container's
filesystem (and of the volumes mounted there), keeping each header's mode, uid and gid
when the request does not ask to copy the container user's ids (the SDK's
``put_archive`` does not); an existing directory takes the header's mode and owner,
an existing file is replaced. A ``GET`` answers a tar of the path named, whose first
member is that path itself.

Contract: pure - in-memory archives (``io.BytesIO``), no I/O; the Docker runtime sends
and receives them.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable, Iterator, Sequence

from podsync.model._volume_entries import EntryKind, VolumeEntry, entry_path_refusal

__all__ = ["first_file", "tar_of"]

_TAR_TYPES = {
    EntryKind.FILE: tarfile.REGTYPE,
    EntryKind.DIRECTORY: tarfile.DIRTYPE,
    EntryKind.SYMLINK: tarfile.SYMTYPE,
}


def tar_of(entries: Sequence[VolumeEntry], *, under: str, mtime: float = 0.0) -> bytes:
    """The tar archive (POSIX.1-2001 format) holding ``entries``, in their order, each
    named under the directory ``under`` (relative: ``"."`` is ``under`` itself).

    Extract it in ``under``'s parent: Docker skips a tar's root entry (``.``) when it
    extracts, so the mode and owner of the directory an archive is extracted *into*
    cannot be set; named by its own name from its parent, it can.

    ``mtime`` is every entry's modification time: the engine has no other clock for
    files podsync writes, and a fixed one keeps the archive a pure function.

    Raises:
        ValueError: an entry's path is refused (``entry_path_refusal``).
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            refusal = entry_path_refusal(entry.path)
            if refusal is not None:
                raise ValueError(f"cannot write {entry.path!r} into a volume: {refusal}")
            name = under if entry.path == "." else f"{under}/{entry.path}"
            info = tarfile.TarInfo(name)
            info.type = _TAR_TYPES[entry.kind]
            info.mode = entry.mode
            info.uid, info.gid = entry.uid, entry.gid
            info.mtime = mtime
            if entry.kind is EntryKind.SYMLINK:
                info.linkname = entry.target
            if entry.kind is EntryKind.FILE:
                info.size = len(entry.data)
                tar.addfile(info, io.BytesIO(entry.data))
            else:
                tar.addfile(info)
    return buffer.getvalue()


class _ChunkReader(io.RawIOBase):
    """A readable file over an iterator of byte chunks (the engine's streamed answer),
    so that ``tarfile`` reads no more of it than it needs."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = chunk
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def first_file(
    chunks: Iterable[bytes], *, limit: int, tail: bool = False, name: str | None = None
) -> bytes | None:
    """The content of the archive's first member, at most ``limit`` bytes of it - its
    first ones (the rest is not read), or with ``tail`` its last ones (the kubelet reads
    the last 4096 bytes of a termination message: the file is read through, keeping
    them) - or ``None`` when that member is not a regular file (a directory, a symbolic
    link: the caller asked for a file's content).

    ``name``: the base name of the path asked for; a first member named otherwise is a
    symbolic link's target - podman (4.3) follows a link it is asked for and answers
    with the target, named by its own name, where Docker answers with the link - and
    gives ``None`` too.

    Raises:
        tarfile.TarError: the chunks are not a tar archive.
    """
    raw = io.BufferedReader(_ChunkReader(chunks))
    with tarfile.open(fileobj=raw, mode="r|") as tar:
        member = tar.next()
        if member is None or not member.isreg():
            return None
        if name is not None and member.name.rstrip("/").rpartition("/")[2] != name:
            return None
        extracted = tar.extractfile(member)
        if extracted is None:  # pragma: no cover - isreg() members always extract
            return None
        if not tail:
            return extracted.read(limit)
        kept = b""
        while chunk := extracted.read(max(limit, 65536)):
            kept = (kept + chunk)[-limit:] if limit else b""
        return kept
