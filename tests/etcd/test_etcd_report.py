"""``podsync.HostReporter`` against a real etcd (the ``etcd`` fixture), reporting a
``Reconciler`` on FakeRuntime: the heartbeat bound to its lease, the pod records written
only when they change (one transaction, one revision), the steady state of keepalives
only, etcd going away and coming back, a lease lost meanwhile, two hosts each on their
own prefix with users that may write nothing else, the stale keys of a previous run,
a clean stop that revokes the lease."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import pytest

import podsync
from podsync import NODE_SCOPE, GCPolicy, PlanOptions, cli
from podsync.etcd._client import EtcdClient
from podsync.etcd._urls import EtcdOptions, parse_etcd_url
from podsync.host._node import NodeInfo
from podsync.model._usage import PodUsage, UsageFigures
from podsync.report._records import (
    heartbeat_key,
    host_prefix,
    node_key,
    parse_host_record,
    pod_key,
)
from podsync.spec._labels import LABEL_CONTAINER
from podsync.testing import FakeRuntime
from tests.etcd.test_etcd_loop import pods_value, wait_for
from tests.support.etcd_server import EtcdServer
from tests.unit.cli.test_cli_run import terminate_when
from tests.unit.loop.test_reconciler import RecordingBoard

NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)
IMAGES = ["busybox:1", "pause:1"]
WAIT = 15.0
HOUR = 3600.0


def kubelet_key(host: str) -> str:
    return f"/registry/hosts/{host}/kubelet"


def keys(etcd: EtcdServer, prefix: str = "/registry/") -> dict[str, bytes]:
    """Every key under ``prefix`` and its value (as root when auth is on)."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    body = etcd._post(
        "/kv/range",
        {
            "key": base64.b64encode(prefix.encode()).decode(),
            "range_end": base64.b64encode(end.encode()).decode(),
        },
    )
    return {
        base64.b64decode(kv["key"]).decode(): base64.b64decode(kv.get("value", ""))
        for kv in body.get("kvs", ())
    }


def pod_record(etcd: EtcdServer, host: str, pod: str) -> dict[str, Any] | None:
    value = keys(etcd, host_prefix(host)).get(pod_key(host, pod))
    return None if value is None else dict(json.loads(value))


class Host:
    """A loop on FakeRuntime reporting to etcd as ``host``."""

    def __init__(
        self,
        etcd: EtcdServer,
        tmp_path: Path,
        host: str = "node-1",
        *,
        options: EtcdOptions | None = None,
        lease_ttl: int = 4,
        sync_period: float = HOUR,
        fake: FakeRuntime | None = None,
        scope: str = NODE_SCOPE,
    ) -> None:
        self.host = host
        self.fake = fake if fake is not None else FakeRuntime(images=IMAGES)
        self.board = RecordingBoard()
        self.warnings: list[str] = []
        self.reporter = podsync.HostReporter(
            f"etcd://{etcd.endpoint}/registry/hosts/{host}",
            etcd=options,
            runtime=self.fake,
            lease_ttl=lease_ttl,
            on_warning=self.warnings.append,
        )
        self.reconciler = podsync.Reconciler(
            [etcd.url(kubelet_key(host))],
            self.fake,
            PlanOptions(
                network_image="pause:1",
                root_dir=str(tmp_path / host),
                gc=GCPolicy(),
                scope=scope,
            ),
            node=NODE,
            sync_period=sync_period,
            source_period=HOUR,
            gc_period=HOUR,
            board=[self.board, self.reporter],
            follow_events=False,
            etcd=options,
        )

    def __enter__(self) -> Host:
        self.reporter.start()
        self.reconciler.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.reconciler.__exit__(*exc_info)
        self.reporter.close()

    def app(self, pod: str) -> str:
        (found,) = [
            c.id
            for c in self.fake.containers
            if c.labels.get("io.podsync.pod.name") == pod and c.labels.get(LABEL_CONTAINER) == "app"
        ]
        return found

    def syncs(self) -> int:
        return len(self.board.named("sync_done"))

    def running(self, etcd: EtcdServer, pod: str) -> bool:
        """Whether ``pod``'s record says Running; a sync is asked for meanwhile (the
        periods are an hour: the round after the pod's start shows it running)."""
        if phase(etcd, self.host, pod) == "Running":
            return True
        self.reconciler.request_sync()
        time.sleep(0.1)
        return False


def phase(etcd: EtcdServer, host: str, pod: str) -> str | None:
    record = pod_record(etcd, host, pod)
    return None if record is None else str(record["phase"])


def settle(etcd: EtcdServer, quiet: float = 1.0) -> int:
    """Wait until etcd's revision has not changed for ``quiet`` seconds; that revision."""
    revision, since = etcd.revision(), time.monotonic()
    deadline = since + WAIT
    while time.monotonic() - since < quiet:
        time.sleep(0.1)
        now = etcd.revision()
        if now != revision:
            revision, since = now, time.monotonic()
        if time.monotonic() > deadline:
            pytest.fail("etcd's revision never settled")
    return revision


def test_the_heartbeat_and_the_statuses_are_written_then_only_kept_alive(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    # A sync every 0.2 s and a keepalive every second: many of both over the quiet time.
    with Host(etcd, tmp_path, lease_ttl=4, sync_period=0.2) as host:
        wait_for(lambda: host.running(etcd, "default/web"), "web's record")
        record = parse_host_record(keys(etcd)[heartbeat_key("node-1")])
        assert record.host == "node-1"
        assert (record.engine_kind, record.engine_version) == ("fake", "1.0")
        assert (record.cpus, record.memory) == (8.0, 16 * 1024**3)
        assert record.podsync_version == podsync.__version__
        assert (record.pods_desired, record.pods_running) == (1, 1)
        assert record.lease_ttl == 4
        assert record.lease
        assert record.last_sync_ok
        assert [s.source for s in record.sources] == [etcd.url(kubelet_key("node-1"))]
        assert keys(etcd)[node_key("node-1")]
        web = pod_record(etcd, "node-1", "default/web")
        assert web is not None
        assert web["host"] == "node-1"
        assert web["written"]

        revision = settle(etcd)
        syncs = host.syncs()
        time.sleep(3.0)  # three keepalives, fifteen syncs
        assert host.syncs() >= syncs + 5
        assert etcd.revision() == revision  # keepalives only: no write
        assert heartbeat_key("node-1") in keys(etcd)
        assert host.warnings == []


def test_a_changed_status_is_written_within_one_sync_in_one_transaction(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web", "db", restart="Never"))
    with Host(etcd, tmp_path) as host:
        wait_for(lambda: host.running(etcd, "default/db"), "db's record")
        revision = settle(etcd)
        transactions = host.reporter.transactions
        syncs = host.syncs()
        host.fake.exit(host.app("db"), 0)
        host.reconciler.request_sync()
        wait_for(lambda: phase(etcd, "node-1", "default/db") == "Succeeded", "db's new phase")
        assert host.syncs() == syncs + 1  # within the one sync it took
        time.sleep(0.5)
        # The record and the heartbeat (a pod fewer running), at one revision.
        assert etcd.revision() == revision + 1
        assert host.reporter.transactions == transactions + 1
        heartbeat = parse_host_record(keys(etcd)[heartbeat_key("node-1")])
        assert (heartbeat.pods_desired, heartbeat.pods_running) == (2, 1)


def test_etcd_away_changes_nothing_of_the_loop_and_the_statuses_catch_up(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web", "db", restart="Never"))
    with Host(etcd, tmp_path) as host:
        wait_for(lambda: host.running(etcd, "default/db"), "db's record")
        etcd.stop()
        syncs = host.syncs()
        host.fake.exit(host.app("db"), 3)
        host.reconciler.request_sync()
        wait_for(lambda: host.syncs() > syncs, "a sync without etcd")
        # The loop is unchanged: web runs, nothing was deleted.
        assert [c.running for c in host.fake.containers if c.id == host.app("web")] == [True]
        wait_for(lambda: host.warnings, "etcd's absence to be said")
        time.sleep(2.0)  # retries meanwhile: said once
        assert len(host.warnings) == 1
        assert "reporting to etcd" in host.warnings[0]

        etcd.start()
        wait_for(lambda: phase(etcd, "node-1", "default/db") == "Failed", "the status to catch up")
        wait_for(lambda: len(host.warnings) == 2, "the end of the trouble to be said")
        assert "works again" in host.warnings[1]
        assert phase(etcd, "node-1", "default/web") == "Running"
        assert heartbeat_key("node-1") in keys(etcd)


def test_a_lease_lost_meanwhile_is_granted_again_and_the_heartbeat_rewritten(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    with Host(etcd, tmp_path, lease_ttl=2) as host:
        wait_for(lambda: heartbeat_key("node-1") in keys(etcd), "the heartbeat")
        lease = parse_host_record(keys(etcd)[heartbeat_key("node-1")]).lease
        etcd._post("/lease/revoke", {"ID": str(lease)})
        assert heartbeat_key("node-1") not in keys(etcd)
        wait_for(lambda: heartbeat_key("node-1") in keys(etcd), "the heartbeat again")
        again = parse_host_record(keys(etcd)[heartbeat_key("node-1")])
        assert again.lease != lease
        assert host.reconciler is not None


def test_a_clean_stop_revokes_the_heartbeat_and_keeps_the_rest(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    with Host(etcd, tmp_path, lease_ttl=30) as host:
        wait_for(lambda: host.running(etcd, "default/web"), "web's record")
    left = keys(etcd, host_prefix("node-1"))
    assert heartbeat_key("node-1") not in left  # NotReady at once, not 30 s later
    assert node_key("node-1") in left
    assert pod_key("node-1", "default/web") in left
    events = [json.loads(v) for k, v in left.items() if "/events/" in k]
    reasons = [e["reason"] for e in events]
    assert reasons[0] == "Starting"
    for reason in ("Pulled", "Created", "Started", "Stopping", "Stopped"):
        assert reason in reasons or reason == "Pulled"  # images are present: no pull
    started = [e for e in events if e["reason"] == "Started"]
    assert {e["object"] for e in started} == {"pod/default/web/net", "pod/default/web/app"}
    assert all(e["type"] == "Normal" and e["host"] == "node-1" for e in started)


def test_a_previous_runs_stale_keys_are_deleted_and_unchanged_ones_kept(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    with Host(etcd, tmp_path) as host:
        wait_for(lambda: host.running(etcd, "default/web"), "web's record")
    kept = etcd._post(
        "/kv/range", {"key": base64.b64encode(pod_key("node-1", "default/web").encode()).decode()}
    )["kvs"][0]["mod_revision"]
    etcd.put(pod_key("node-1", "default/gone"), json.dumps({"pod": "gone", "format_version": 1}))
    # The same engine (its containers as they were): a second run of the same host.
    with Host(etcd, tmp_path, fake=host.fake) as host:
        wait_for(lambda: host.syncs() >= 1, "the first sync")
        wait_for(
            lambda: pod_record(etcd, "node-1", "default/gone") is None, "the stale key's delete"
        )
        now = etcd._post(
            "/kv/range",
            {"key": base64.b64encode(pod_key("node-1", "default/web").encode()).decode()},
        )["kvs"][0]["mod_revision"]
        assert now == kept  # the same record: not written again


def _user_for(etcd: EtcdServer, user: str, password: str, prefix: str) -> None:
    """Another user whose role reads and writes ``prefix`` only (auth is on)."""
    b64 = lambda text: base64.b64encode(text.encode()).decode()  # noqa: E731
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    etcd._post("/auth/role/add", {"name": user})
    permission = {"permType": "READWRITE", "key": b64(prefix), "range_end": b64(end)}
    etcd._post("/auth/role/grant", {"name": user, "perm": permission})
    etcd._post("/auth/user/add", {"name": user, "password": password})
    etcd._post("/auth/user/grant", {"user": user, "role": user})


def test_two_hosts_each_write_their_own_keys_with_users_limited_to_them(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    etcd.put(kubelet_key("node-2"), pods_value("db"))
    etcd.enable_auth("node-1", "pw-1", prefix=host_prefix("node-1"))
    _user_for(etcd, "node-2", "pw-2", host_prefix("node-2"))
    one = EtcdOptions(user="node-1", password="pw-1")
    two = EtcdOptions(user="node-2", password="pw-2")
    with (
        Host(etcd, tmp_path, "node-1", options=one) as host,
        Host(etcd, tmp_path, "node-2", options=two) as host2,
    ):
        wait_for(lambda: host.running(etcd, "default/web"), "node-1's web")
        wait_for(lambda: host2.running(etcd, "default/db"), "node-2's db")
        everything = keys(etcd)
        for key in everything:
            assert key.startswith((host_prefix("node-1"), host_prefix("node-2"))), key
        assert not [k for k in everything if k.startswith(host_prefix("node-1")) and "/db" in k]
        assert not [k for k in everything if k.startswith(host_prefix("node-2")) and "/web" in k]
        # And node-1's user could not have written node-2's keys.
        client = EtcdClient(parse_etcd_url(etcd.url(kubelet_key("node-1"))), one)
        with pytest.raises(podsync.EtcdError):
            client.read(heartbeat_key("node-2"))
        client.close()


def test_podsync_run_on_a_hosts_key_reports_by_itself_and_a_clean_stop_revokes(
    etcd: EtcdServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``podsync run etcd://EP/registry/hosts/node-1/kubelet``: no ``--report-to``, yet
    the host's prefix gets its heartbeat and its pods; SIGTERM: the heartbeat goes at
    once, the loop's last events are written before it."""
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    fake = FakeRuntime(images=IMAGES)
    watcher = terminate_when(
        lambda: (
            heartbeat_key("node-1") in keys(etcd)
            and phase(etcd, "node-1", "default/web") == "Running"
        )
    )
    argv = ["run", etcd.url(kubelet_key("node-1")), "--root-dir", str(tmp_path / "root")]
    argv += ["--network-image", "pause:1", "--sync-period", "500ms", "--report-ttl", "30"]
    code = cli.main([*argv, "--log-format", "json"], runtime_factory=lambda host: fake)
    watcher.join()
    assert code == 0, capsys.readouterr().err
    left = keys(etcd, host_prefix("node-1"))
    assert heartbeat_key("node-1") not in left  # revoked: not 30 s later
    assert node_key("node-1") in left
    reasons = [json.loads(v)["reason"] for k, v in sorted(left.items()) if "/events/" in k]
    assert reasons[0] == "Starting"
    assert reasons[-2:] == ["Stopping", "Stopped"]


def test_events_wait_in_a_bounded_queue_while_etcd_is_away(etcd: EtcdServer) -> None:
    """Started with etcd away: nothing fails; the newest events are kept (three), the
    older ones counted as dropped, and written when etcd answers."""
    etcd.stop()
    warnings: list[str] = []
    reporter = podsync.HostReporter(
        f"etcd://{etcd.endpoint}/registry/hosts/node-1",
        lease_ttl=2,
        max_events=3,
        on_warning=warnings.append,
    )
    with reporter:
        for n in range(10):
            reporter.notice_seen(podsync.LoopNotice(podsync.NoticeKind.SYNC_ERROR, f"round {n}"))
        wait_for(lambda: warnings, "the trouble to be said")
        assert reporter.dropped_events == 8  # "Starting" and ten notices, three kept
        etcd.start()
        wait_for(lambda: len(warnings) == 2, "reporting to work again")
        assert "8 event(s) dropped meanwhile" in warnings[1]
        events = [json.loads(v) for k, v in keys(etcd).items() if "/events/" in k]
        assert [e["message"] for e in events] == ["round 7", "round 8", "round 9"]
        assert {e["reason"] for e in events} == {"FailedSync"}
        assert heartbeat_key("node-1") in keys(etcd)


def test_two_loops_on_one_engine_each_report_only_their_own_pods(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    """Two scopes on one engine: each host's prefix holds its own pods, not the other
    loop's (which ``pods_seen`` also shows, as ``podsync status`` does)."""
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    etcd.put(kubelet_key("node-2"), pods_value("db"))
    fake = FakeRuntime(images=IMAGES)
    with (
        Host(etcd, tmp_path, "node-1", fake=fake, scope="one") as host,
        Host(etcd, tmp_path, "node-2", fake=fake, scope="two") as host2,
    ):
        wait_for(lambda: host.running(etcd, "default/web"), "node-1's web")
        wait_for(lambda: host2.running(etcd, "default/db"), "node-2's db")
        host.reconciler.request_sync()
        wait_for(lambda: host.syncs() >= 3, "node-1 to see db too")
        time.sleep(0.3)
        assert [k for k in keys(etcd, host_prefix("node-1")) if "/pods/" in k] == [
            pod_key("node-1", "default/web")
        ]
        assert [k for k in keys(etcd, host_prefix("node-2")) if "/pods/" in k] == [
            pod_key("node-2", "default/db")
        ]
        heartbeat = parse_host_record(keys(etcd)[heartbeat_key("node-1")])
        assert (heartbeat.pods_desired, heartbeat.pods_running) == (1, 1)


def test_usage_goes_into_the_records_at_the_report_frequency(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(kubelet_key("node-1"), pods_value("web"))
    with Host(etcd, tmp_path) as host:
        wait_for(lambda: host.running(etcd, "default/web"), "web's record")
        host.reporter._frequency = 0.5  # the 5 minutes, shortened
        app = UsageFigures(0.25, 10 << 20)
        host.reporter.usage_seen(
            [PodUsage("default/web", "uid", app, {"app": app})], UsageFigures(1.5, 1 << 30)
        )
        host.reconciler.request_sync()
        wait_for(
            lambda: (pod_record(etcd, "node-1", "default/web") or {}).get("usage"),
            "web's usage",
        )
        usage = pod_record(etcd, "node-1", "default/web")["usage"]  # type: ignore[index]
        assert (usage["cpu_cores"], usage["memory_working_set"]) == (0.25, 10 << 20)
        assert {"app": {"cpu_cores": 0.25, "memory_working_set": 10 << 20}} == usage["containers"]
        wait_for(
            lambda: parse_host_record(keys(etcd)[heartbeat_key("node-1")]).cpu_cores == 1.5,
            "the host's usage",
        )
        heartbeat = parse_host_record(keys(etcd)[heartbeat_key("node-1")])
        assert heartbeat.memory_working_set == 1 << 30
