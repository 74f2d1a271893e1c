"""Reading a fleet back from etcd, from anywhere: its hosts (``fleet_hosts``), every
host's pods (``fleet_statuses``) and their events (``fleet_events``) - what ``podsync
hosts``, ``podsync status --etcd`` and ``podsync events --etcd`` print.

What the reporting hosts wrote (``podsync.report._records``) is read with few calls:

1. one keys-only range of ``/registry/hosts/``: which hosts reported, which of them have
   a heartbeat (the key etcd deletes when the host's lease expires) and its lease;
2. one transaction of ranges (``EtcdClient.ranges``, up to 128 per call): each host's
   record, or each host's pods, or each host's events;
3. for ``fleet_hosts``, the lease's time to live per Ready host: how long ago the
   host renewed it, its last heartbeat.

A host whose heartbeat is gone is NotReady, as the node lifecycle controller marks a
node whose Lease was not renewed within its duration (``tryUpdateNodeHealth``); its
pods are shown ``Unknown`` with the reason ``NodeLost``: the controller's
``MarkPodsNotReady`` sets their Ready condition to false, and kubectl's ``printPod``
shows a pod of an unreachable node (``NodeUnreachablePodReason``, ``"NodeLost"``) as
``Unknown``. What the host last reported stays in the record (``reported_phase``).

A record that cannot be read (not JSON, a newer ``format_version``, a field of the
wrong type) is skipped and said: ``on_warning`` is told its key and why (else the
``podsync`` logger warns). etcd that cannot be reached is an ``EtcdError`` naming the
endpoints, as everywhere else.

Contract: network I/O through ``EtcdClient`` (one client per call, closed after);
``now`` (seconds since the epoch, the system clock when ``None``) is the time ages are
measured against.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from podsync.etcd._client import EtcdClient
from podsync.etcd._kv import KeyValue, Range
from podsync.etcd._urls import EtcdOptions, host_key, parse_etcd_url
from podsync.report._records import (
    HOSTS_PREFIX,
    EventRecord,
    HostRecord,
    events_prefix,
    heartbeat_key,
    host_prefix,
    node_key,
    parse_event_record,
    parse_host_record,
    parse_pod_record,
    place_of,
    pods_prefix,
)

__all__ = ["FleetPodStatus", "HostView", "fleet_events", "fleet_hosts", "fleet_statuses"]

_LOG = logging.getLogger("podsync")

#: The reason of a NotReady host's pods: Kubernetes' ``NodeUnreachablePodReason``.
NODE_LOST = "NodeLost"

#: The status shown of them (kubectl's STATUS column for such a pod).
UNKNOWN = "Unknown"

Warn = Callable[[str], object]

# A heartbeat key that is bound to no lease.
_NO_LEASE = -1


@attrs.frozen
class HostView:
    """A host as ``podsync hosts`` shows it (``kubectl get nodes``).

    Attributes:
        name: the host's name (its key under ``/registry/hosts/``).
        ready: whether its heartbeat is there: its lease is alive.
        last_heartbeat: seconds since its last heartbeat, ``None`` when unknown. For a
            Ready host, since its lease was last renewed (etcd's whole seconds); for a
            NotReady one, the age of its last record (``written``): it renewed its lease
            for at most one lease TTL after that.
        last_heartbeat_from: ``"lease"`` or ``"written"``: which of the two it is.
        record: what the host last wrote of itself (its heartbeat, else its ``node``
            copy); ``None`` when neither could be read.
    """

    name: str
    ready: bool
    last_heartbeat: float | None
    last_heartbeat_from: str
    record: HostRecord | None

    @property
    def status(self) -> str:
        """``Ready`` or ``NotReady``, as ``kubectl get nodes`` words it."""
        return "Ready" if self.ready else "NotReady"

    @property
    def pods_running(self) -> int:
        """Its pods in phase Running, as it last reported (0 without a record)."""
        return self.record.pods_running if self.record else 0

    @property
    def pods_desired(self) -> int:
        """The pods its sources give, as it last reported (0 without a record)."""
        return self.record.pods_desired if self.record else 0

    @property
    def engine(self) -> str:
        """Its engine's kind and version, ``docker 28.2.2`` (``""`` when unknown)."""
        if self.record is None:
            return ""
        return " ".join(p for p in (self.record.engine_kind, self.record.engine_version) if p)

    @property
    def podsync_version(self) -> str:
        """The version of the podsync that reports for it."""
        return self.record.podsync_version if self.record else ""


@attrs.frozen(eq=False)
class FleetPodStatus:
    """One pod of one host, as ``podsync status --etcd`` shows it.

    Attributes:
        host: the host that reported it.
        host_ready: whether that host is Ready; when not, ``record`` says ``Unknown``.
        record: ``podsync status --json``'s record of the pod as reported (with ``host``,
            ``usage`` and ``written``); for a NotReady host's pod, with ``phase`` and
            ``display_status`` ``Unknown``, ``reason`` ``NodeLost``, no container
            ready, and ``reported_phase`` (what the host last said).
    """

    host: str
    host_ready: bool
    record: Mapping[str, Any]

    @property
    def pod(self) -> str:
        """The pod's key, ``namespace/name``."""
        return str(self.record.get("pod", ""))


def fleet_hosts(
    url: str,
    options: EtcdOptions | None = None,
    *,
    now: float | None = None,
    on_warning: Warn | None = None,
) -> list[HostView]:
    """Every host that reported (a ``heartbeat`` or a ``node`` key), by name.

    Args:
        url: etcd's endpoints, ``etcd://HOST:PORT[,HOST:PORT...]`` (or etcdctl's
            ``https://`` / ``http://`` form), as for ``publish``.
        options: TLS, user and password.
        now: the time ages are measured against (the system clock when ``None``).
        on_warning: told of each record that cannot be read, by key.

    Raises:
        EtcdError: etcd cannot be reached (the endpoints named) or refused.
        ValueError: ``url`` is not etcd endpoints.
    """
    at = time.time() if now is None else now
    warn = on_warning or _LOG.warning
    with _client(url, options) as client:
        seen = _seen(client, None)
        names = sorted(n for n, h in seen.items() if h.heartbeat is not None or h.node)
        reads = client.ranges(
            [Range(heartbeat_key(n) if seen[n].heartbeat else node_key(n)) for n in names]
        )
        views: list[HostView] = []
        for name, found in zip(names, reads, strict=True):
            record = _host_record(found, warn)
            lease = seen[name].heartbeat
            ttl = client.lease_ttl(lease) if lease is not None and lease > 0 else None
            if ttl is not None:
                views.append(HostView(name, True, float(ttl.since_renewal), "lease", record))
                continue
            # NotReady (or its lease expired since the range); a heartbeat bound to no
            # lease (not a reporter's) is there all the same: Ready, aged by its record.
            age = age_of(record.written, at) if record else None
            views.append(HostView(name, lease == _NO_LEASE, age, "written", record))
    return views


def fleet_statuses(
    url: str,
    options: EtcdOptions | None = None,
    host: str | None = None,
    *,
    now: float | None = None,
    on_warning: Warn | None = None,
) -> list[FleetPodStatus]:
    """Every host's pods (``host``: that host's only), by host then pod; a NotReady
    host's pods ``Unknown`` (reason ``NodeLost``).

    Args and raises: as ``fleet_hosts``'s; ``ValueError`` too for a ``host`` that is
    not a host's name (a lower-case DNS name).
    """
    at = time.time() if now is None else now
    warn = on_warning or _LOG.warning
    with _client(url, options) as client:
        seen = _seen(client, host)
        names = sorted(n for n, h in seen.items() if h.pods)
        wanted = [Range(pods_prefix(n), prefix=True) for n in names]
        lost = [n for n in names if seen[n].heartbeat is None and seen[n].node]
        reads = client.ranges([*wanted, *(Range(node_key(n)) for n in lost)])
    last_seen = {
        n: _host_record(found, warn) for n, found in zip(lost, reads[len(names) :], strict=True)
    }
    statuses: list[FleetPodStatus] = []
    for name, found in zip(names, reads[: len(names)], strict=True):
        ready = seen[name].heartbeat is not None
        for kv in found:
            try:
                record = parse_pod_record(kv.value)
            except ValueError as exc:
                warn(f"{kv.key}: skipped: {exc}")
                continue
            record["host"] = name
            if not ready:
                record = unknown_pod_record(record, name, _lost_since(last_seen.get(name), at))
            statuses.append(FleetPodStatus(name, ready, record))
    return statuses


def fleet_events(
    url: str,
    options: EtcdOptions | None = None,
    host: str | None = None,
    *,
    on_warning: Warn | None = None,
) -> list[EventRecord]:
    """Every host's events (``host``: that host's only), oldest first; each with its
    ``host``.

    Args and raises: as ``fleet_statuses``'.
    """
    warn = on_warning or _LOG.warning
    with _client(url, options) as client:
        seen = _seen(client, host)
        names = sorted(n for n, h in seen.items() if h.events)
        reads = client.ranges([Range(events_prefix(n), prefix=True) for n in names])
    events: list[tuple[float, str, EventRecord]] = []
    for name, found in zip(names, reads, strict=True):
        for kv in found:
            try:
                event = parse_event_record(kv.value)
                moment = rfc3339_seconds(event.time)
            except ValueError as exc:
                warn(f"{kv.key}: skipped: {exc}")
                continue
            # The key says whose it is (each host writes under its own prefix only).
            events.append((moment, kv.key, attrs.evolve(event, host=name)))
    events.sort(key=lambda item: (item[0], item[1]))
    return [event for _, _, event in events]


def unknown_pod_record(record: Mapping[str, Any], host: str, since: str) -> dict[str, Any]:
    """A NotReady host's pod: ``Unknown``, reason ``NodeLost``, its Ready condition
    false and no container ready (``MarkPodsNotReady``), what it last reported kept in
    ``reported_phase``; ``since`` says for how long, for the message."""
    shown = dict(record)
    shown["reported_phase"] = record.get("phase")
    shown["phase"] = shown["display_status"] = UNKNOWN
    shown["reason"] = NODE_LOST
    shown["message"] = f"host {host} is NotReady: {since}"
    ready = record.get("ready")
    if isinstance(ready, list) and len(ready) == 2:
        shown["ready"] = [0, ready[1]]
    conditions = record.get("conditions")
    if isinstance(conditions, list):
        shown["conditions"] = [
            {**c, "status": False, "reason": "NodeNotReady"}
            if isinstance(c, dict) and c.get("type") == "Ready"
            else c
            for c in conditions
        ]
    return shown


# ---------------------------------------------------------------------------------------


@attrs.define
class _Seen:
    """What the keys-only range says of a host."""

    heartbeat: int | None = None  # its lease, when the heartbeat is there
    node: bool = False
    pods: bool = False
    events: bool = False


@contextmanager
def _client(url: str, options: EtcdOptions | None) -> Iterator[EtcdClient]:
    client = EtcdClient(parse_etcd_url(url, key=False), options)
    try:
        yield client
    finally:
        client.close()


def _seen(client: EtcdClient, host: str | None) -> dict[str, _Seen]:
    """Every host's keys, from one keys-only range (of the host's prefix alone when
    ``host`` is given)."""
    if host is not None:
        host_key(host)  # a node name, or ValueError: never another prefix's keys
    prefix = host_prefix(host) if host is not None else HOSTS_PREFIX
    keys, _ = client.range_prefix(prefix, keys_only=True)
    seen: dict[str, _Seen] = {}
    for kv in keys:
        place = place_of(kv.key)
        if place is None:
            continue
        found = seen.setdefault(place.host, _Seen())
        if place.kind == "heartbeat" and not place.rest:
            found.heartbeat = kv.lease or _NO_LEASE
        elif place.kind == "node" and not place.rest:
            found.node = True
        elif place.kind == "pods" and place.rest:
            found.pods = True
        elif place.kind == "events" and place.rest:
            found.events = True
    return seen


def _host_record(found: Sequence[KeyValue], warn: Warn) -> HostRecord | None:
    for kv in found:
        try:
            return parse_host_record(kv.value)
        except ValueError as exc:
            warn(f"{kv.key}: skipped: {exc}")
    return None


def rfc3339_seconds(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 time (``Z`` or an offset).

    Raises:
        ValueError: not such a time.
    """
    if not text:
        raise ValueError("no time")
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"time {text!r} has no zone")
    return moment.timestamp()


def age_of(written: str, now: float) -> float | None:
    """Seconds from the RFC 3339 time ``written`` to ``now`` (0 for a time to come);
    ``None`` when it is not such a time."""
    try:
        return max(0.0, now - rfc3339_seconds(written))
    except ValueError:
        return None


def _lost_since(record: HostRecord | None, now: float) -> str:
    age = age_of(record.written, now) if record else None
    if age is None:
        return "no live heartbeat"
    return f"its last record was written {int(age)}s ago"
