"""The pure parts of reporting: where ``--report-to`` points, the kubelet's event
reasons, RFC 3339 times, back-off events, and Secret values masked."""

from __future__ import annotations

import datetime

import pytest

from podsync.applier._results import Event, EventKind
from podsync.loop._reporting import LoopNotice, NoticeKind
from podsync.model._scrub import Scrubber
from podsync.model._secrets import SecretPart, SecretText
from podsync.report._events import back_off_records, event_record, notice_record, rfc3339
from podsync.report._reporter import report_target, report_target_of_source


def test_report_target_is_a_hosts_prefix() -> None:
    url, host = report_target("etcd://10.0.0.1:2379,10.0.0.2:2379/registry/hosts/node-a/")
    assert host == "node-a"
    assert url.key == "/registry/hosts/node-a"
    assert url.endpoints == (("10.0.0.1", 2379), ("10.0.0.2", 2379))
    for bad in (
        "etcd://h:1/registry/hosts/",
        "etcd://h:1/other/node-a",
        "etcd://h:1/registry/hosts/a/b",
    ):
        with pytest.raises(ValueError, match="names no host's prefix"):
            report_target(bad)


def test_an_etcd_host_key_source_implies_its_prefix() -> None:
    assert report_target_of_source("etcd://h:2379/registry/hosts/node-a/kubelet") == (
        "etcd://h:2379/registry/hosts/node-a"
    )
    assert report_target_of_source("https://h:2379/registry/hosts/node-a/kubelet") == (
        "https://h:2379/registry/hosts/node-a"
    )
    assert report_target_of_source("etcd://h:2379/pods/kubelet") is None
    assert report_target_of_source("pods/kubelet") is None
    assert report_target_of_source("https://example.com/pods.yaml") is None


def test_rfc3339_is_utc_to_the_microsecond() -> None:
    moment = datetime.datetime(2026, 12, 2, 21, 0, 5, 123456, tzinfo=datetime.UTC)
    assert rfc3339(moment.timestamp()) == "2026-12-02T21:00:05.123456Z"


def test_apply_events_take_the_kubelets_reasons() -> None:
    def record(kind: EventKind, message: str = "m", pod: str = "ns/web", container: str = "app"):
        return event_record(Event(kind, pod, container, message, 0.0), "node-a")

    assert record(EventKind.STARTED).reason == "Started"  # type: ignore[union-attr]
    assert record(EventKind.STOPPING).reason == "Killing"  # type: ignore[union-attr]
    failed = record(EventKind.FAILED, "start: boom")
    assert failed is not None
    assert (failed.reason, failed.type, failed.object) == ("Failed", "Warning", "pod/ns/web/app")
    hook = record(EventKind.HOOK_FAILED, "preStop handler failed: x")
    assert hook is not None
    assert hook.reason == "FailedPreStopHook"
    unhealthy = record(EventKind.UNHEALTHY)
    assert unhealthy is not None
    assert unhealthy.type == "Warning"
    pulled = record(EventKind.PULLED, pod="", container="")
    assert pulled is not None
    assert pulled.object == "host/node-a"
    assert record(EventKind.REMOVED) is None  # housekeeping is not written


def test_notices_are_the_hosts_events_or_their_pods() -> None:
    error = notice_record(LoopNotice(NoticeKind.SYNC_ERROR, "engine away"), "node-a", 0.0)
    assert (error.reason, error.type, error.object) == ("FailedSync", "Warning", "host/node-a")
    rejected = notice_record(LoopNotice(NoticeKind.REJECTED, "OutOfcpu", pod="ns/big"), "n", 0.0)
    assert rejected.object == "pod/ns/big"
    source = notice_record(LoopNotice(NoticeKind.SOURCE_ERROR, "bad", source="pods/"), "n", 0.0)
    assert source.message == "pods/: bad"


def test_a_container_entering_a_back_off_is_one_back_off_event() -> None:
    def pod(reason: str) -> dict[str, object]:
        return {"pod": "ns/web", "containers": [{"name": "app", "reason": reason, "message": ""}]}

    (event,) = back_off_records({"ns/web": pod("Error")}, [pod("CrashLoopBackOff")], "n", 0.0)
    assert (event.reason, event.type, event.object) == ("BackOff", "Warning", "pod/ns/web/app")
    assert (
        back_off_records({"ns/web": pod("CrashLoopBackOff")}, [pod("CrashLoopBackOff")], "n", 0)
        == []
    )
    (pull,) = back_off_records({}, [pod("ImagePullBackOff")], "n", 0.0)
    assert pull.type == "Normal"


def test_secret_values_and_their_pieces_are_masked() -> None:
    part = SecretPart("ns", "db", "password", "0" * 64)
    text = SecretText("postgres://app:hunter22@db", ("postgres://app:", part, "@db"))
    short = SecretText("abc", (SecretPart("ns", "db", "pin", "1" * 64),))
    masks = Scrubber({"postgres://app:hunter22@db": text.shown})
    assert masks("url postgres://app:hunter22@db") == f"url {text.shown}"

    from podsync.model import _scrub

    scrub = Scrubber(_scrub._masks_of(text) | _scrub._masks_of(short))
    assert scrub('exec: "hunter22": not found') == 'exec: "<secret ns/db key password>": not found'
    assert "hunter22" not in scrub("postgres://app:hunter22@db")
    assert scrub("abc") == "abc"  # shorter than MIN_SCRUBBED: not masked
    record = scrub.record({"containers": [{"message": "hunter22"}], "restarts": 2})
    assert record == {"containers": [{"message": "<secret ns/db key password>"}], "restarts": 2}
