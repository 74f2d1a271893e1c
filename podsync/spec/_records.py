"""podsync's records in the engine: stop records and probe records.

podsync keeps two kinds of record about the containers it runs, because no engine
reports them and every ``podsync apply`` is a new process:

* a **stop record** says that podsync stopped a container, and why
  (``ObservedContainer.stopped_by_podsync``): the restart policy judges only how a
  container ended by itself;
* a **probe record** holds the prober's states of a running container (consecutive
  results, when each probe last ran), so that thresholds count across syncs.

Earlier versions kept them as files under the root directory, on the machine podsync
runs on - wrong for a remote engine, and lost when podsync moves. They now live in the
engine, as **empty named volumes whose labels are the record** (``LABEL_VOLUME_KIND``
``stop-record`` or ``probe-record``, ``LABEL_POD_UID``, ``LABEL_RECORD_CONTAINER``,
``LABEL_RECORD_DATA``): one ``GET /volumes`` reads every record of every pod, in a few
milliseconds, where reading files out of a volume costs an archive call per pod (about
0.1 s each on Docker 20.10, measured) and a helper container on top. A record is made
with one call and removed with one; labels cannot change, so a probe record is replaced
by a new volume (named by a digest of its content) and the old one removed.

The names are ``podsync-stopped_<container id>`` and
``podsync-probes_<container id>_<digest>``: container ids are hex (Docker) or at least
``[a-zA-Z0-9_.-]`` (any runtime podsync takes), so every name is one Docker's local
driver takes. No container ever mounts a record: an application cannot forge one.

Contract: pure - names, labels, and reading them back from a volume list. Apply writes
stop records, the prober probe records (``podsync.applier._apply``, ``podsync.prober._probing``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

import attrs

from podsync.model._pod import ObservedVolume
from podsync.spec._labels import (
    LABEL_POD_UID,
    LABEL_RECORD_CONTAINER,
    LABEL_RECORD_DATA,
    LABEL_RECORD_TIME,
    LABEL_VOLUME_KIND,
    VOLUME_KIND_PROBE_RECORD,
    VOLUME_KIND_STOP_RECORD,
)

__all__: list[str] = []  # podsync's own

_STOP_PREFIX = "podsync-stopped"
_PROBE_PREFIX = "podsync-probes"
# A container id as a part of a volume name: Docker's local driver takes
# [a-zA-Z0-9][a-zA-Z0-9_.-]*, and a name must stay under 255 bytes.
_ID = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,199}")
# Hex digits of the digest that names a probe record.
_DIGEST_HEX = 16
# Longer stop reasons are cut: a reason is a short code.
_REASON_MAX = 128
#: The kinds of volume that are records.
RECORD_KINDS = frozenset({VOLUME_KIND_STOP_RECORD, VOLUME_KIND_PROBE_RECORD})


def _checked(container_id: str) -> str:
    if not _ID.fullmatch(container_id):
        raise ValueError(f"cannot name a record of container {container_id!r}")
    return container_id


def stop_record_volume(container_id: str) -> str:
    """The volume that is the stop record of ``container_id``.

    Raises:
        ValueError: the id cannot be part of a volume name.
    """
    return f"{_STOP_PREFIX}_{_checked(container_id)}"


def probe_record_volume(container_id: str, text: str) -> str:
    """The volume that is the probe record ``text`` of ``container_id``.

    Raises:
        ValueError: the id cannot be part of a volume name.
    """
    digest = hashlib.sha256(text.encode()).hexdigest()[:_DIGEST_HEX]
    return f"{_PROBE_PREFIX}_{_checked(container_id)}_{digest}"


@attrs.frozen
class Record:
    """One record volume, as listed.

    Attributes:
        volume: its name.
        kind: ``VOLUME_KIND_STOP_RECORD`` or ``VOLUME_KIND_PROBE_RECORD``.
        pod_uid: the pod of the container.
        container_id: the container it is about.
        data: what it says: a stop's reason, or the probe states as JSON.
        time: a probe record's time (seconds since the epoch); 0 for a stop record.
    """

    volume: str
    kind: str
    pod_uid: str
    container_id: str
    data: str
    time: float = 0.0


def records_of(volumes: Iterable[ObservedVolume]) -> list[Record]:
    """The records among ``volumes``: those whose labels say podsync made them as a
    record and name a pod and a container (anything else is not one), by name."""
    found: list[Record] = []
    for volume in volumes:
        labels = volume.labels
        kind = labels.get(LABEL_VOLUME_KIND, "")
        uid = labels.get(LABEL_POD_UID, "")
        cid = labels.get(LABEL_RECORD_CONTAINER, "")
        if kind not in RECORD_KINDS or not uid or not cid:
            continue
        try:
            at = float(labels.get(LABEL_RECORD_TIME, "0"))
        except ValueError:
            at = 0.0
        found.append(Record(volume.name, kind, uid, cid, labels.get(LABEL_RECORD_DATA, ""), at))
    return sorted(found, key=lambda r: r.volume)


def named_as_made(record: Record) -> bool:
    """Whether ``record``'s volume has the name podsync gives that record
    (``stop_record_volume``, ``probe_record_volume``): labels alone can be copied onto
    any volume, and podsync removes a record on its own only when both say it is one."""
    cid = record.container_id
    if not _ID.fullmatch(cid):
        return False
    if record.kind == VOLUME_KIND_STOP_RECORD:
        return record.volume == f"{_STOP_PREFIX}_{cid}"
    prefix = f"{_PROBE_PREFIX}_{cid}_"
    digest = record.volume[len(prefix) :]
    return (
        record.kind == VOLUME_KIND_PROBE_RECORD
        and record.volume.startswith(prefix)
        and len(digest) == _DIGEST_HEX
        and all(c in "0123456789abcdef" for c in digest)
    )


def stop_records(records: Iterable[Record]) -> dict[str, str]:
    """Container id -> the reason podsync stopped it (``"unknown"`` for an empty one)."""
    return {
        r.container_id: r.data.strip() or "unknown"
        for r in records
        if r.kind == VOLUME_KIND_STOP_RECORD
    }


def probe_records(records: Iterable[Record]) -> dict[str, str]:
    """Container id -> its newest probe record's text (several are left only when a
    replacement was interrupted)."""
    newest: dict[str, Record] = {}
    for r in records:
        if r.kind != VOLUME_KIND_PROBE_RECORD:
            continue
        known = newest.get(r.container_id)
        if known is None or (r.time, r.volume) > (known.time, known.volume):
            newest[r.container_id] = r
    return {cid: r.data for cid, r in newest.items()}


def stop_record_labels(pod_uid: str, container_id: str, reason: str) -> dict[str, str]:
    """The labels of the stop record of ``container_id`` of pod ``pod_uid``: podsync
    stopped it, for ``reason`` (a short code, cut at 128 characters).

    Apply writes a record before the stop: the volume ``stop_record_volume`` removed
    (an earlier stop that failed may have left one, for another reason), then created
    with these labels - two calls."""
    return {
        LABEL_VOLUME_KIND: VOLUME_KIND_STOP_RECORD,
        LABEL_POD_UID: pod_uid,
        LABEL_RECORD_CONTAINER: container_id,
        LABEL_RECORD_DATA: reason[:_REASON_MAX],
    }


def probe_record_labels(pod_uid: str, container_id: str, text: str, at: float) -> dict[str, str]:
    """The labels of the probe record ``text`` (the prober's states, as JSON) of
    ``container_id`` of pod ``pod_uid`` as of ``at``.

    The prober writes a changed record as a new volume (``probe_record_volume``) first,
    then removes the container's older ones: an interruption in between leaves two, and
    the newest is read (``probe_records``)."""
    return {
        LABEL_VOLUME_KIND: VOLUME_KIND_PROBE_RECORD,
        LABEL_POD_UID: pod_uid,
        LABEL_RECORD_CONTAINER: container_id,
        LABEL_RECORD_DATA: text,
        LABEL_RECORD_TIME: repr(float(at)),
    }


def by_container(records: Iterable[Record]) -> Mapping[str, list[Record]]:
    """``records`` grouped by the container they are about."""
    grouped: dict[str, list[Record]] = {}
    for r in records:
        grouped.setdefault(r.container_id, []).append(r)
    return grouped
