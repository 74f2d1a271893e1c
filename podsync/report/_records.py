"""What a reporting host writes to etcd, and where: the keys and the JSON records that
``podsync run`` writes (``_reporter``) and ``podsync hosts`` / ``status --etcd`` /
``events --etcd`` read (``_fleet``).

Everything a host reports lives under its own prefix, beside the key of its desired
pods that the seed's scheduler wrote (``/registry/hosts/<host>/kubelet``)::

    /registry/hosts/<host>/heartbeat             the host record, bound to the host's
                                                 lease (TTL, kept alive): gone when the
                                                 lease expires - the host is NotReady
    /registry/hosts/<host>/node                  the same record, with no lease: what a
                                                 reader shows of a host that went silent
    /registry/hosts/<host>/pods/<ns>/<name>      a pod's status (``podsync status --json``'s
                                                 record, with its usage), no lease
    /registry/hosts/<host>/events/<time>-<seq>   an event, bound to an events lease that
                                                 expires it (48 hours by default)

It is the modern kubelet's split: a node's Lease (``kube-node-lease``, renewed every
10 s, 40 s until the node lifecycle controller marks it NotReady) says that the host is
alive, at the cost of a keepalive; its status (the Node object, here ``node``) and its
pods' statuses are written when they change (``tryUpdateNodeStatus``: and at the latest
every ``nodeStatusReportFrequency``, 5 minutes). A reader takes a host whose heartbeat is
gone as NotReady and its pods as Unknown, as the node lifecycle controller does
(``MarkPodsNotReady``; kubectl shows such pods ``Unknown``).

Every record is JSON with a ``format_version``; a reader ignores fields it does not know
(as Kubernetes clients do) and skips a record it cannot read, naming its key. Times are
RFC 3339 in UTC, as the Kubernetes API writes them.

No Secret value is in any record: a pod status holds states, reasons, messages and
counts, never an environment or a file; a source is shown through ``shown_url``.

Contract: pure (no I/O, no clock: times are given).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

__all__: list[str] = []

#: Where every host's keys are (the seed's registry of hosts).
HOSTS_PREFIX = "/registry/hosts/"

#: The version of every record's JSON. It changes when a field changes meaning or goes
#: away; a new field does not change it.
REPORT_FORMAT_VERSION = 1

#: The modern kubelet's node Lease duration (``nodeLeaseDurationSeconds``): a host whose
#: heartbeat was not renewed for this long is NotReady.
DEFAULT_LEASE_TTL = 40

#: How long events are kept: the seed's ``LogEvent`` wrote each with a 48-hour TTL.
DEFAULT_EVENT_TTL = 48 * 3600

#: The longest a host record and a pod's usage go unwritten while nothing else changes:
#: the kubelet's ``nodeStatusReportFrequency`` (5 minutes).
REPORT_FREQUENCY = 300.0

_HOST_KEY = re.compile(r"/registry/hosts/(?P<host>[^/]+)/(?P<kind>[^/]+)(?:/(?P<rest>.+))?")


def host_prefix(host: str) -> str:
    """``/registry/hosts/<host>/``: every key of the host."""
    return f"{HOSTS_PREFIX}{host}/"


def heartbeat_key(host: str) -> str:
    """The key bound to the host's lease: present while the host is alive."""
    return f"{host_prefix(host)}heartbeat"


def node_key(host: str) -> str:
    """The key of the host's last record, kept when the lease expires."""
    return f"{host_prefix(host)}node"


def pods_prefix(host: str) -> str:
    """Where the host's pod statuses are."""
    return f"{host_prefix(host)}pods/"


def pod_key(host: str, pod: str) -> str:
    """The key of a pod's status; ``pod`` is its key, ``namespace/name``."""
    return f"{pods_prefix(host)}{pod}"


def events_prefix(host: str) -> str:
    """Where the host's events are."""
    return f"{host_prefix(host)}events/"


def event_key(host: str, time_ns: int, sequence: int) -> str:
    """An event's key: its time in nanoseconds (20 digits, so keys sort by time) and a
    sequence number that tells apart events of the same nanosecond."""
    return f"{events_prefix(host)}{time_ns:020d}-{sequence:06d}"


@attrs.frozen
class KeyPlace:
    """Where a key under ``HOSTS_PREFIX`` is: its host, its kind (``heartbeat``,
    ``node``, ``pods``, ``events``, ``kubelet``) and the rest of its path."""

    host: str
    kind: str
    rest: str = ""


def place_of(key: str) -> KeyPlace | None:
    """What ``key`` is, or ``None`` for a key that is not a host's."""
    match = _HOST_KEY.fullmatch(key)
    if match is None:
        return None
    return KeyPlace(match["host"], match["kind"], match["rest"] or "")


@attrs.frozen
class SourceState:
    """One of the host's sources, as its loop last read it.

    Attributes:
        source: the source, as ``shown_url`` shows it (no credentials).
        ok: whether its last read could be used.
        message: why not (empty when ``ok``).
    """

    source: str
    ok: bool
    message: str = ""


@attrs.frozen
class HostRecord:
    """What a host says of itself (the ``heartbeat`` and ``node`` keys).

    Attributes:
        host: its name (a node name).
        engine_kind: ``docker`` or ``podman`` (or another runtime's name).
        engine_version: the engine's version.
        cpus: the CPUs the engine's host gives containers.
        memory: its memory, in bytes.
        podsync_version: the reporting podsync's version.
        last_sync: when the last sync ended (RFC 3339), ``""`` before the first.
        last_sync_ok: whether it succeeded.
        last_sync_message: why it failed (empty when it succeeded).
        sources: the sources' states.
        pods_desired: how many pods the sources give.
        pods_running: how many of them run (phase Running).
        cpu_cores: the host's CPU usage, in cores; ``None`` when unknown.
        memory_working_set: the host's memory working set, in bytes; ``None`` when unknown.
        lease: the lease the heartbeat is bound to (0 in a record not yet bound).
        lease_ttl: its TTL, in seconds.
        written: when this record was written (RFC 3339).
    """

    host: str
    engine_kind: str = ""
    engine_version: str = ""
    cpus: float = 0.0
    memory: int = 0
    podsync_version: str = ""
    last_sync: str = ""
    last_sync_ok: bool = True
    last_sync_message: str = ""
    sources: tuple[SourceState, ...] = ()
    pods_desired: int = 0
    pods_running: int = 0
    cpu_cores: float | None = None
    memory_working_set: int | None = None
    lease: int = 0
    lease_ttl: int = DEFAULT_LEASE_TTL
    written: str = ""

    def without_times(self) -> HostRecord:
        """The record without what changes at every sync (times, usage): two records
        equal this way say the same, and the second need not be written."""
        return attrs.evolve(self, last_sync="", written="", cpu_cores=None, memory_working_set=None)


def host_record_json(record: HostRecord) -> bytes:
    """The JSON of a host record (sorted keys: equal records give equal bytes)."""
    document = attrs.asdict(record)
    document["sources"] = [attrs.asdict(s) for s in record.sources]
    document["lease"] = str(record.lease)  # int64, as etcd's gateway writes IDs
    document["format_version"] = REPORT_FORMAT_VERSION
    return json.dumps(document, sort_keys=True).encode()


def parse_host_record(data: bytes) -> HostRecord:
    """A host record from its JSON; fields it does not know are ignored.

    Raises:
        ValueError: not a host record (the message says what is wrong).
    """
    document = _document(data)
    known = {f.name for f in attrs.fields(HostRecord)}
    fields = {k: v for k, v in document.items() if k in known}
    if not isinstance(fields.get("host"), str):
        raise ValueError("a host record names its host")
    try:
        fields["sources"] = tuple(
            SourceState(str(s["source"]), bool(s["ok"]), str(s.get("message", "")))
            for s in fields.get("sources", ())
        )
        fields["lease"] = int(fields.get("lease", 0) or 0)
        return HostRecord(**fields)
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"not a host record: {exc}") from None


@attrs.frozen
class EventRecord:
    """One event a host reported (the ``events`` keys), as ``kubectl get events``
    shows them.

    Attributes:
        time: when it happened (RFC 3339).
        type: ``Normal`` or ``Warning``.
        reason: the kubelet's reason (``Started``, ``Killing``, ``BackOff``, ``Failed``).
        object: what it is about: ``pod/<ns>/<name>``, with ``/<container>`` when it is a
            container's, or ``host/<host>`` for the loop's own.
        message: for people.
        host: the host it happened on.
    """

    time: str
    type: str
    reason: str
    object: str
    message: str
    host: str = ""


def event_record_json(record: EventRecord) -> bytes:
    """The JSON of an event record."""
    document = attrs.asdict(record)
    document["format_version"] = REPORT_FORMAT_VERSION
    return json.dumps(document, sort_keys=True).encode()


def parse_event_record(data: bytes) -> EventRecord:
    """An event record from its JSON.

    Raises:
        ValueError: not an event record.
    """
    document = _document(data)
    try:
        return EventRecord(
            **{f.name: str(document.get(f.name, "")) for f in attrs.fields(EventRecord)}
        )
    except TypeError as exc:  # pragma: no cover - every field is given a string
        raise ValueError(f"not an event record: {exc}") from None


def pod_record_json(record: Mapping[str, Any]) -> bytes:
    """The JSON of a pod's status record (``status_record``'s mapping with ``host``,
    ``usage`` and ``written`` added by the reporter)."""
    document = dict(record)
    document["format_version"] = REPORT_FORMAT_VERSION
    return json.dumps(document, sort_keys=True).encode()


def parse_pod_record(data: bytes) -> dict[str, Any]:
    """A pod's status record from its JSON.

    Raises:
        ValueError: not a pod status record.
    """
    document = _document(data)
    if not isinstance(document.get("pod"), str):
        raise ValueError("a pod status record names its pod")
    return document


#: The fields of a pod record that change without the pod changing: left out when
#: deciding whether a record must be written again.
VOLATILE_POD_FIELDS = frozenset({"usage", "written", "format_version"})


def pod_record_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether ``new`` says something ``old`` (the record written last) does not, its
    volatile fields (usage, the time it was written) aside."""
    if old is None:
        return True
    keep = {k: v for k, v in new.items() if k not in VOLATILE_POD_FIELDS}
    return keep != {k: v for k, v in old.items() if k not in VOLATILE_POD_FIELDS}


def _document(data: bytes) -> dict[str, Any]:
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    version = document.get("format_version")
    if not isinstance(version, int) or version > REPORT_FORMAT_VERSION:
        raise ValueError(
            f"format_version {version!r}: this podsync reads up to {REPORT_FORMAT_VERSION}"
        )
    return document
