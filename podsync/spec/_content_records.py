"""The records of configMap, secret and downwardAPI volumes as record volumes.

What podsync wrote into the engine volume of such a pod volume is recorded twice: in
the volume itself (``..data/..podsync``, ``_content_layout``), and - after that write
succeeded - as an **empty volume whose labels are the record** (``LABEL_VOLUME_KIND``
``content-record``), as the stop and probe records are (``_records``). The volume list
that a sync makes anyway then holds every record (one ``GET /volumes``, a few
milliseconds), where reading the file costs an archive read through a container that
mounts the volume (about 60 ms each on Docker, and Docker serialises them: a host with
100 such pods spent 6 s per sync only reading records).

A label record is believed only when it describes the engine volume that exists now:

* it names the volume's ``CreatedAt`` (``ObservedVolume.created``) as the write left
  it - Docker's local driver reports the time the volume's root directory last changed
  (made, or an entry at its top written or removed), which every write changes, so it
  is listed after the write - and a volume that reports another - removed and made
  again by hand, empty, or changed at its top by anyone else - is written again; one
  that is missing is made and written again;
* labels cannot change, so each write makes a new record volume (named by its pod
  volume, its generation and a digest of what it says) and then removes the earlier
  ones of that pod volume. A crash in between, or two podsync processes at once, leave
  several: the highest ``LABEL_RECORD_GENERATION`` wins and the others are removed by
  the plan (``Reason.STALE_RECORD``); records of the highest generation that disagree
  are believed by none, and the volume's own file is read instead.

Where no record is believed, the file is read through the archive as before (a volume
written by a podsync before record volumes: once; the plan then adds its record,
``Reason.VOLUME_RECORDED``). A record holds what the file holds: the content's digest,
its sources' digests (a Secret's keyed with the host's key, never a value), the payload
and its top-level names.

Docker reports ``CreatedAt`` in whole seconds: a volume removed and made again by hand
within the second of podsync's last write into it is not told apart, nor one removed
and made again between a write and the listing right after it (nothing else of a
volume is reported that would).

Contract: pure - names, labels, and reading them back from a volume list.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping

import attrs

from podsync.model._pod import ObservedVolume
from podsync.model._volume import WrittenVolume
from podsync.spec._content_layout import parse_record
from podsync.spec._labels import (
    LABEL_POD_UID,
    LABEL_RECORD_DATA,
    LABEL_RECORD_GENERATION,
    LABEL_RECORD_VOLUME_CREATED,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    VOLUME_KIND_CONTENT,
    VOLUME_KIND_CONTENT_RECORD,
)
from podsync.spec._volumes import _file_name, content_volume_name

__all__: list[str] = []  # podsync's own

_PREFIX = "podsync-contentrec"
# Hex digits of the digest in a record volume's name.
_DIGEST_HEX = 16
# The largest generation read back (a label is engine data).
_GENERATION_DIGITS = 18

#: A pod volume, as (pod uid, volume name).
PodVolume = tuple[str, str]


def record_data(written: WrittenVolume) -> str:
    """What a record says, as the ``..podsync`` file says it (canonical JSON of the
    digest, the sources' digests, the payload and its top-level names)."""
    data = {
        "digest": written.digest,
        "sources": dict(written.sources),
        "payload": written.payload,
        "names": list(written.names),
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def content_record_volume(written: WrittenVolume, generation: int) -> str:
    """The record volume of generation ``generation`` saying ``written``:
    ``podsync-contentrec_<pod uid>_<volume>_<generation>_<digest>``, a name Docker's
    local driver takes (cut with a digest past 255 bytes, as a content volume's), apart
    from every content volume's (the text before the first ``_`` differs)."""
    text = f"{written.pod_uid}\0{written.name}\0{generation}\0{record_data(written)}"
    digest = hashlib.sha256(text.encode()).hexdigest()[:_DIGEST_HEX]
    return _file_name(f"{_PREFIX}_{written.pod_uid}_{written.name}_{generation}_{digest}")


def content_record_labels(written: WrittenVolume, created: str, generation: int) -> dict[str, str]:
    """The labels of the record volume that says ``written`` (its pod volume's files,
    in the engine volume created at ``created``), generation ``generation``."""
    return {
        LABEL_VOLUME_KIND: VOLUME_KIND_CONTENT_RECORD,
        LABEL_POD_UID: written.pod_uid,
        LABEL_VOLUME_NAME: written.name,
        LABEL_RECORD_DATA: record_data(written),
        LABEL_RECORD_GENERATION: str(generation),
        LABEL_RECORD_VOLUME_CREATED: created,
    }


@attrs.frozen
class ContentRecord:
    """One record volume, as listed.

    Attributes:
        volume: its name.
        written: what it says; ``None`` when its labels cannot be read as a record.
        created: the ``CreatedAt`` of the engine volume it describes.
        generation: its generation; -1 when unreadable (it never wins).
    """

    volume: str
    written: WrittenVolume | None
    created: str
    generation: int


@attrs.frozen
class RecordChoice:
    """The record volumes of one pod volume.

    Attributes:
        records: all of them, by name.
        winner: the one believed when the volume is the one it describes: the only
            one of the highest generation, or the first of several of that generation
            that say the same; ``None`` when those disagree or cannot be read.
    """

    records: tuple[ContentRecord, ...]
    winner: ContentRecord | None

    @property
    def next_generation(self) -> int:
        """The generation of a record that replaces all of these."""
        return max((r.generation for r in self.records), default=0) + 1

    def losers(self) -> list[str]:
        """The record volumes to remove once ``winner`` is believed."""
        return [r.volume for r in self.records if self.winner is None or r != self.winner]


def _generation(text: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > _GENERATION_DIGITS:
        return -1
    return int(text)


def record_choices(volumes: Iterable[ObservedVolume]) -> dict[PodVolume, RecordChoice]:
    """The record volumes among ``volumes``, by pod volume (a volume without both a pod
    uid and a volume name is none)."""
    found: dict[PodVolume, list[ContentRecord]] = {}
    for volume in volumes:
        labels = volume.labels
        if labels.get(LABEL_VOLUME_KIND) != VOLUME_KIND_CONTENT_RECORD:
            continue
        uid, name = labels.get(LABEL_POD_UID, ""), labels.get(LABEL_VOLUME_NAME, "")
        if not uid or not name:
            continue
        data = labels.get(LABEL_RECORD_DATA, "").encode("utf-8", "surrogatepass")
        written = parse_record(uid, name, data, content_volume_name(uid, name))
        generation = _generation(labels.get(LABEL_RECORD_GENERATION, ""))
        created = labels.get(LABEL_RECORD_VOLUME_CREATED, "")
        found.setdefault((uid, name), []).append(
            ContentRecord(volume.name, written, created, generation)
        )
    return {key: _choose(records) for key, records in found.items()}


def _choose(records: list[ContentRecord]) -> RecordChoice:
    ordered = tuple(sorted(records, key=lambda r: r.volume))
    top = max(r.generation for r in ordered)
    newest = [r for r in ordered if r.generation == top]
    said = {(r.written, r.created) for r in newest}
    winner = newest[0]
    if top < 0 or winner.written is None or not winner.created or len(said) > 1:
        return RecordChoice(ordered, None)
    return RecordChoice(ordered, winner)


def believed(
    choice: RecordChoice | None, present: Mapping[str, ObservedVolume]
) -> WrittenVolume | None:
    """What ``choice``'s winner says, when the engine volume it describes is in
    ``present`` (the listed volumes, by name) as podsync's content volume of that pod
    volume, made at the time the record names; else ``None`` (read the file, or
    write the volume again)."""
    if choice is None or choice.winner is None or choice.winner.written is None:
        return None
    written = choice.winner.written
    volume = present.get(written.volume)
    if volume is None or not volume.created or volume.created != choice.winner.created:
        return None
    labels = volume.labels
    ours = (
        labels.get(LABEL_VOLUME_KIND) == VOLUME_KIND_CONTENT
        and labels.get(LABEL_POD_UID) == written.pod_uid
        and labels.get(LABEL_VOLUME_NAME) == written.name
    )
    return written if ours else None


def content_records(volumes: Iterable[ObservedVolume]) -> dict[PodVolume, WrittenVolume | None]:
    """Every pod volume with record volumes among ``volumes``: what its believed record
    says, or ``None``."""
    listed = list(volumes)
    present = {v.name: v for v in listed}
    return {key: believed(choice, present) for key, choice in record_choices(listed).items()}
