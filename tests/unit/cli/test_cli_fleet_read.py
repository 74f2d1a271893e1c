"""What ``podsync hosts``, ``status --etcd`` and ``events --etcd`` print of the records
read back (``podsync.cli._fleet_read``), and a NotReady host's pod as shown
(``podsync.report._fleet.unknown_pod_record``): pure formatting, no etcd."""

from __future__ import annotations

import json

import pytest

from podsync.cli._fleet_read import (
    cores,
    event_row,
    heartbeat_age,
    host_row,
    memory,
    pod_age,
    pod_row,
    statuses_document,
)
from podsync.report._fleet import FleetPodStatus, HostView, unknown_pod_record
from podsync.report._records import EventRecord, HostRecord, SourceState

NOW = 1796241630.0  # 2026-12-02T20:00:30Z


def record(**fields: object) -> HostRecord:
    given: dict[str, object] = {
        "engine_kind": "podman",
        "engine_version": "5.4.0",
        "cpus": 4.0,
        "memory": 16 << 30,
        "podsync_version": "0.3.0",
        "pods_desired": 3,
        "pods_running": 2,
        "last_sync": "2026-12-02T20:00:18Z",
        "sources": (SourceState("a", True), SourceState("b", False, "404")),
        "cpu_cores": 1.5,
        "memory_working_set": 700 << 20,
        "written": "2026-12-02T19:57:26Z",
    }
    given.update(fields)
    return HostRecord("node-a", **given)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "shown"), [(None, "<none>"), (0.0, "0m"), (0.25, "250m"), (1.5, "1500m")]
)
def test_cpu_is_in_millicores_as_kubectl_top(value: float | None, shown: str) -> None:
    assert shown == cores(value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "<none>"), (300 << 20, "300Mi"), (4 << 30, "4096Mi"), (16 << 30, "16Gi")],
)
def test_memory_is_in_mebibytes_then_gibibytes(value: int | None, shown: str) -> None:
    assert shown == memory(value)


def test_a_ready_hosts_heartbeat_is_its_leases_and_a_notready_ones_its_records() -> None:
    assert "12s" == heartbeat_age(HostView("a", True, 12.0, "lease", record()))
    assert "3m4s (record)" == heartbeat_age(HostView("a", False, 184.0, "written", record()))
    assert "<unknown>" == heartbeat_age(HostView("a", False, None, "written", None))


def test_a_hosts_row_and_its_wide_columns() -> None:
    ready = HostView("node-a", True, 4.0, "lease", record())
    lost = HostView("node-a", False, 184.0, "written", record(last_sync_ok=False))

    assert ["node-a", "Ready", "4s", "2/3", "podman 5.4.0"] == host_row(ready, NOW, wide=False)
    assert [
        *("0.3.0", "4", "16Gi", "1500m", "700Mi", "12s", "1/2 ok"),
    ] == host_row(ready, NOW, wide=True)[5:]
    assert ["<unknown>", "<unknown>", "12s (failed)"] == host_row(lost, NOW, wide=True)[8:11]
    unread = HostView("node-z", False, None, "written", None)
    assert ["node-z", "NotReady", "<unknown>", "0/0", "<none>", "<none>"] == host_row(
        unread, NOW, wide=True
    )[:6]


def pod(**fields: object) -> dict[str, object]:
    given: dict[str, object] = {
        "pod": "default/web",
        "phase": "Running",
        "display_status": "Running",
        "reason": "",
        "message": "",
        "ready": [2, 2],
        "restarts": 3,
        "scope": None,
        "conditions": [
            {"type": "Ready", "status": True, "reason": "", "message": ""},
            {"type": "Initialized", "status": True, "reason": "", "message": ""},
        ],
        "containers": [
            {"name": "a", "image": "nginx:1", "running_since": NOW - 30},
            {"name": "b", "image": "nginx:1", "running_since": NOW - 7200},
            {"name": "c", "image": "redis:7", "running_since": None},
        ],
        "format_version": 1,
    }
    given.update(fields)
    return given


def test_a_pods_row_has_status_columns_and_its_host() -> None:
    status = FleetPodStatus("node-a", True, pod())
    crashing = FleetPodStatus(
        "node-a", True, pod(phase="Running", display_status="CrashLoopBackOff", scope="web")
    )

    assert ["default/web", "2/2", "Running", "3", "120m", "", "node-a"] == pod_row(
        status, NOW, wide=False
    )
    assert ["CrashLoopBackOff", "node-a", "web", "nginx:1,redis:7"] == pod_row(
        crashing, NOW, wide=True
    )[5:]


def test_a_pods_age_is_its_created_time_else_its_oldest_container() -> None:
    assert "5m" == pod_age(pod(created="2026-12-02T19:55:30Z"), NOW)
    assert "120m" == pod_age(pod(created="not a time"), NOW)
    assert "-" == pod_age(pod(containers=[]), NOW)


def test_a_notready_hosts_pod_is_unknown_node_lost() -> None:
    shown = unknown_pod_record(pod(), "node-b", "its last record was written 3m ago")
    status = FleetPodStatus("node-b", False, shown)

    assert ("Unknown", "Unknown", "NodeLost", "Running") == (
        shown["phase"],
        shown["display_status"],
        shown["reason"],
        shown["reported_phase"],
    )
    assert "host node-b is NotReady: its last record was written 3m ago" == shown["message"]
    assert [0, 2] == shown["ready"]
    assert [
        {"type": "Ready", "status": False, "reason": "NodeNotReady", "message": ""},
        {"type": "Initialized", "status": True, "reason": "", "message": ""},
    ] == shown["conditions"]
    assert ["default/web", "0/2", "Unknown", "3", "120m", "NodeLost", "node-b"] == pod_row(
        status, NOW, wide=False
    )


def test_the_json_of_the_fleets_statuses_is_status_json_with_hosts() -> None:
    document = json.loads(statuses_document([FleetPodStatus("node-a", True, pod())]))

    assert 1 == document["format_version"]
    [shown] = document["pods"]
    assert ("default/web", "node-a") == (shown["pod"], shown["host"])
    assert "format_version" not in shown


def test_an_events_row_is_kubectl_get_events_columns_with_its_host() -> None:
    event = EventRecord(
        "2026-12-02T20:00:18Z", "Warning", "BackOff", "pod/default/web/app", "back\noff", "n1"
    )

    assert ["12s", "Warning", "BackOff", "pod/default/web/app", "back off", "n1"] == event_row(
        event, NOW
    )
    assert "<unknown>" == event_row(EventRecord("", "", "", "", "", ""), NOW)[0]
