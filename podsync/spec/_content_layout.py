"""The files of a configMap, secret or downwardAPI volume in an engine volume.

The layout is the kubelet's atomic writer's (``pkg/volume/util/atomic_writer.go``,
kubelet-modern.md §9), as a container sees it::

    ..payload-1/app.conf           the payload: a hidden directory
    ..payload-1/..podsync          podsync's record of it (root only, 0400)
    ..payload-2                    the other payload's place: an empty file
    ..data -> ..payload-1          the current payload
    app.conf -> ..data/app.conf    what a container reads

but written through the engine's archive API (``VolumeRuntime.write_volume``), which can add
and overwrite, never rename or remove. So:

* The payload alternates between two directories, ``..payload-1`` and
  ``..payload-2`` (the kubelet names a fresh one after the time and removes the old
  one; a name podsync cannot remove would stay for ever). A write fills the one
  ``..data`` does not name, points ``..data`` at it, and then writes an empty file
  over the previous one: the engine removes a directory that a file replaces, with
  everything in it, so no file of an old payload - no old Secret value - stays in the
  volume.
* ``..data`` is a symbolic link written over a symbolic link: the engine removes the
  old link and makes the new one (no ``rename``), so for the time between those two
  system calls ``..data`` does not exist, and a reader opening a file then gets
  ``ENOENT``. The kubelet's rename has no such window.
* A user-visible link ``<name> -> ..data/<name>`` is written only for a name the
  current payload does not have (rewriting one that exists would remove it for a
  moment); a name the new payload no longer has keeps its link, which then dangles:
  opening it fails with ``ENOENT``, as opening the name the kubelet removes does, but
  ``ls`` still lists it.

The record (``..podsync``: canonical JSON of the content's digest, its sources'
digests, the payload's name and its top-level names) is inside the payload, so it
swaps with the files: read through ``..data`` it always describes them.

Contract: pure - no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from podsync.model._volume import VolumeContent, VolumeFile, WrittenVolume
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.spec._volumes import content_digest

__all__: list[str] = []

#: The symbolic link naming the current payload directory (the kubelet's ``..data``).
DATA_DIR = "..data"
#: podsync's record of a payload, inside the payload directory.
RECORD = "..podsync"
#: Where the record of the current payload is read, relative to the volume's root.
RECORD_PATH = f"{DATA_DIR}/{RECORD}"
#: The most bytes of a record that are read.
RECORD_MAX_BYTES = 64 * 1024
#: The two payload directories a volume alternates between.
PAYLOADS = ("..payload-1", "..payload-2")

#: The mode of the volume's root and of the payload's directories: every user of the
#: container may read the files (each file's own mode permitting), as the kubelet's.
DIR_MODE = 0o755
# podsync's record: for podsync, not for the container's processes.
_RECORD_MODE = 0o400
# What a previous payload becomes: an empty file nobody reads.
_EMPTIED_MODE = 0o600


def next_payload(previous: str) -> str:
    """The payload directory a write fills when ``..data`` names ``previous`` (empty
    when not known: the first one)."""
    return PAYLOADS[1] if previous == PAYLOADS[0] else PAYLOADS[0]


def top_names(files: Sequence[VolumeFile]) -> tuple[str, ...]:
    """The top-level names of ``files`` (``a`` for ``a/b``), sorted: the user-visible
    links of a payload."""
    return tuple(sorted({f.path.split("/", 1)[0] for f in files}))


def record_text(content: VolumeContent, fs_group: int | None, payload: str) -> bytes:
    """podsync's record of a payload written into ``payload``: the content's digest
    (with the fsGroup it was written for), its sources' digests, the payload's name
    and its top-level names, as canonical JSON."""
    data = {
        "digest": content_digest(content, fs_group),
        "sources": dict(content.sources),
        "payload": payload,
        "names": list(top_names(content.files)),
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def parse_record(pod_uid: str, name: str, data: bytes, volume: str = "") -> WrittenVolume | None:
    """The ``WrittenVolume`` a record says (read from the engine volume ``volume``, or
    under the root directory when empty), or ``None`` for anything podsync did not
    write (an unreadable record is as good as none: the volume is written again)."""
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    digest, sources = value.get("digest"), value.get("sources")
    if not isinstance(digest, str) or not isinstance(sources, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items()):
        return None
    payload = value.get("payload", "")
    names = value.get("names", [])
    if payload and payload not in PAYLOADS:
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return WrittenVolume(pod_uid, name, digest, dict(sources), volume, payload, tuple(names))


def payload_entries(
    content: VolumeContent,
    fs_group: int | None,
    *,
    payload: str,
    previous: str,
    linked: Sequence[str] = (),
) -> list[VolumeEntry]:
    """The entries that make a volume hold ``content`` (see the module docstring), in
    the order the engine must write them: the root, the payload ``payload`` (emptied
    first, so that nothing an interrupted write left there stays), its files and its
    record, the links of the names not in ``linked``, ``..data``, and the previous
    payload emptied. With ``previous`` empty (not known: a volume no container has
    mounted) both payload places are emptied first and every link is written.

    Owner and modes as the kubelet's ``SetVolumeOwnership`` for a read-only volume
    (``pkg/volume/volume_linux.go``): everything is root's; with an fsGroup, the
    group is the fsGroup, files get ``0440`` ORed in, directories ``0550`` and setgid.
    Each file keeps its ``VolumeFile.mode`` otherwise (0644 by default).

    Raises:
        ValueError: ``payload`` is not one of ``PAYLOADS``, or is ``previous``.
    """
    if payload not in PAYLOADS or payload == previous:
        raise ValueError(f"cannot write payload {payload!r} over {previous!r}")
    gid = fs_group if fs_group is not None else 0
    dir_mode = DIR_MODE | (0o2550 if fs_group is not None else 0)
    file_bits = 0o440 if fs_group is not None else 0

    def directory(path: str) -> VolumeEntry:
        return VolumeEntry(path, EntryKind.DIRECTORY, mode=dir_mode, gid=gid)

    def emptied(path: str) -> VolumeEntry:
        return VolumeEntry(path, EntryKind.FILE, mode=_EMPTIED_MODE)

    entries = [directory(".")]
    if not previous:
        entries.extend(emptied(p) for p in PAYLOADS if p != payload)
    entries += [emptied(payload), directory(payload)]
    made: set[str] = set()
    for f in sorted(content.files, key=lambda f: f.path):
        parts = f.path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent not in made:
                made.add(parent)
                entries.append(directory(f"{payload}/{parent}"))
        entries.append(
            VolumeEntry(
                f"{payload}/{f.path}", EntryKind.FILE, mode=f.mode | file_bits, gid=gid, data=f.data
            )
        )
    entries.append(
        VolumeEntry(
            f"{payload}/{RECORD}",
            EntryKind.FILE,
            mode=_RECORD_MODE,
            data=record_text(content, fs_group, payload),
        )
    )
    have = set(linked) if previous else set()
    entries.extend(
        VolumeEntry(name, EntryKind.SYMLINK, mode=0o777, target=f"{DATA_DIR}/{name}")
        for name in top_names(content.files)
        if name not in have
    )
    entries.append(VolumeEntry(DATA_DIR, EntryKind.SYMLINK, mode=0o777, target=payload))
    if previous:
        entries.append(emptied(previous))
    return entries
