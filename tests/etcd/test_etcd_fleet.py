"""Reading a fleet back (``podsync.report``: ``fleet_hosts``, ``fleet_statuses``,
``fleet_events``) from a real etcd (the ``etcd`` fixture), its records written as a
reporting host writes them (``podsync.report._records``) with real leases."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from podsync.etcd._client import EtcdClient
from podsync.etcd._kv import Put
from podsync.exceptions import EtcdError
from podsync.report import fleet_events, fleet_hosts, fleet_statuses
from podsync.report._records import (
    EventRecord,
    event_key,
    event_record_json,
    heartbeat_key,
    node_key,
    pod_key,
)
from tests.support.etcd_server import EtcdServer
from tests.support.fleet_reports import NOW, endpoints, etcd_client, report


@pytest.fixture
def client(etcd: EtcdServer) -> Iterator[EtcdClient]:
    with etcd_client(etcd) as made:
        yield made


def test_a_host_is_ready_while_its_lease_lives_and_notready_once_it_expires(
    etcd: EtcdServer, client: EtcdClient
) -> None:
    report(client, "node-a", ttl=2, pods=("default/web", "default/db"))
    report(client, "node-b", ttl=60, pods=("default/api",), engine="27.0.1")

    before = fleet_hosts(endpoints(etcd), now=NOW)

    assert [("node-a", "Ready"), ("node-b", "Ready")] == [(h.name, h.status) for h in before]
    assert ["lease", "lease"] == [h.last_heartbeat_from for h in before]
    assert all(h.last_heartbeat is not None and h.last_heartbeat <= 2 for h in before)
    assert [(2, 2), (1, 1)] == [(h.pods_running, h.pods_desired) for h in before]
    assert ["docker 28.2.2", "docker 27.0.1"] == [h.engine for h in before]
    assert {"0.3.0"} == {h.podsync_version for h in before}

    # No keepalive: etcd expires node-a's lease and deletes its heartbeat.
    deadline = time.monotonic() + 10
    while etcd.get(heartbeat_key("node-a")) is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    after = fleet_hosts(endpoints(etcd), now=NOW)

    assert [("node-a", "NotReady"), ("node-b", "Ready")] == [(h.name, h.status) for h in after]
    lost = after[0]
    assert ("written", 30.0) == (lost.last_heartbeat_from, lost.last_heartbeat)
    assert lost.record is not None
    assert "28.2.2" == lost.record.engine_version


def test_a_notready_hosts_pods_are_unknown_node_lost(etcd: EtcdServer, client: EtcdClient) -> None:
    report(client, "node-a", ttl=None, pods=("default/web",))  # its lease expired: node only
    report(client, "node-b", ttl=60, pods=("default/api", "kube-system/dns"))

    statuses = fleet_statuses(endpoints(etcd), now=NOW)

    assert [
        ("node-a", "default/web", "Unknown", "NodeLost", False),
        ("node-b", "default/api", "Running", "", True),
        ("node-b", "kube-system/dns", "Running", "", True),
    ] == [
        (s.host, s.pod, s.record["display_status"], s.record["reason"], s.host_ready)
        for s in statuses
    ]
    lost = statuses[0].record
    assert "Running" == lost["reported_phase"]
    assert "Unknown" == lost["phase"]
    assert [0, 1] == lost["ready"]
    assert [False] == [c["status"] for c in lost["conditions"] if c["type"] == "Ready"]
    assert "host node-a is NotReady: its last record was written 30s ago" == lost["message"]
    assert {"node-a", "node-b"} == {s.record["host"] for s in statuses}


def test_the_host_filter_reads_one_hosts_keys_only(etcd: EtcdServer, client: EtcdClient) -> None:
    report(client, "node-a", ttl=60, pods=("default/web",))
    report(client, "node-ab", ttl=60, pods=("default/other",))  # a name node-a prefixes
    for host, at in (("node-a", 1), ("node-ab", 2)):
        event = EventRecord(f"2026-12-02T20:00:0{at}Z", "Normal", "Started", "pod/x", host)
        client.commit([Put(event_key(host, at, 0), event_record_json(event))])

    statuses = fleet_statuses(endpoints(etcd), host="node-a")
    events = fleet_events(endpoints(etcd), host="node-a")

    assert [("node-a", "default/web")] == [(s.host, s.pod) for s in statuses]
    assert [("node-a", "node-a")] == [(e.host, e.message) for e in events]


def test_events_come_oldest_first_whatever_host_wrote_them(
    etcd: EtcdServer, client: EtcdClient
) -> None:
    times = {
        ("node-a", 0): "2026-12-02T20:00:03Z",
        ("node-a", 1): "2026-12-02T20:00:01Z",  # a sequence later, a time earlier
        ("node-b", 0): "2026-12-02T20:00:02.5+00:00",
    }
    for (host, seq), at in times.items():
        event = EventRecord(at, "Warning", "BackOff", f"pod/default/{host}", f"{host} {seq}")
        client.commit([Put(event_key(host, 1_000 + seq, seq), event_record_json(event))])

    events = fleet_events(endpoints(etcd))

    assert ["node-a 1", "node-b 0", "node-a 0"] == [e.message for e in events]
    assert ["node-a", "node-b", "node-a"] == [e.host for e in events]


def test_a_record_that_cannot_be_read_is_skipped_and_named(
    etcd: EtcdServer, client: EtcdClient
) -> None:
    report(client, "node-a", ttl=60, pods=("default/web",))
    etcd.put(pod_key("node-a", "default/broken"), "{not json")
    etcd.put(pod_key("node-a", "default/future"), '{"format_version": 99, "pod": "default/f"}')
    etcd.put(event_key("node-a", 1, 0), '{"format_version": 1, "time": "yesterday"}')
    etcd.put(node_key("node-c"), '{"format_version": 1}')
    said: list[str] = []

    statuses = fleet_statuses(endpoints(etcd), on_warning=said.append)
    hosts = fleet_hosts(endpoints(etcd), on_warning=said.append)
    events = fleet_events(endpoints(etcd), on_warning=said.append)

    assert ["default/web"] == [s.pod for s in statuses]
    assert [("node-a", True), ("node-c", None)] == [
        (h.name, h.record and h.record.host == h.name) for h in hosts
    ]
    assert [] == events
    assert [
        f"{pod_key('node-a', 'default/broken')}: skipped: not JSON",
        f"{pod_key('node-a', 'default/future')}: skipped: format_version 99",
        f"{node_key('node-c')}: skipped: a host record names its host",
        f"{event_key('node-a', 1, 0)}: skipped: Invalid isoformat string",
    ] == [_head(s) for s in said]


def _head(said: str) -> str:
    """A warning up to the start of its reason's detail (the JSON error's position, the
    version this podsync reads)."""
    key, _, reason = said.partition(": skipped: ")
    for cut in (":", " (", " '"):
        reason = reason.split(cut)[0]
    return f"{key}: skipped: {reason}"


def test_unreachable_etcd_is_an_etcd_error_naming_the_endpoints(etcd: EtcdServer) -> None:
    url = endpoints(etcd)
    etcd.stop()

    for read in (fleet_hosts, fleet_statuses, fleet_events):
        with pytest.raises(EtcdError, match=f"cannot reach etcd at {etcd.endpoint}: "):
            read(url)
