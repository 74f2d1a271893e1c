"""``podsync hosts``, ``podsync status --etcd`` and ``podsync events --etcd``:
``podsync.cli.main`` in this process against a real etcd (the ``etcd`` fixture), the
hosts' records written as a reporter writes them, with real leases; no engine is
contacted (the runtime factory refuses)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from podsync import cli
from podsync.etcd._client import EtcdClient
from podsync.etcd._kv import Put
from podsync.report._records import EventRecord, event_key, event_record_json, pod_key
from podsync.testing import FakeClock
from tests.support.etcd_server import EtcdServer
from tests.support.fleet_reports import NOW, endpoints, etcd_client, report


@attrs.frozen
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def client(etcd: EtcdServer) -> Iterator[EtcdClient]:
    with etcd_client(etcd) as made:
        yield made


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    def runner(*argv: str) -> Result:
        def factory(host: str | None) -> object:
            raise AssertionError("the engine must not be contacted")

        code = cli.main(list(argv), runtime_factory=factory, clock=FakeClock(NOW, step=0))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return runner


@pytest.fixture
def fleet(etcd: EtcdServer, client: EtcdClient) -> str:
    """node-a Ready with two pods, node-b NotReady (its lease expired: its node copy
    only) with one; an event of each."""
    report(client, "node-a", ttl=60, pods=("default/web", "kube-system/dns"))
    report(client, "node-b", ttl=None, pods=("default/api",), engine="27.0.1")
    for host, second, reason in (("node-b", 10, "BackOff"), ("node-a", 20, "Started")):
        event = EventRecord(
            f"2026-12-02T20:00:{second}Z", "Normal", reason, f"pod/default/{host}", "it  did"
        )
        client.commit([Put(event_key(host, second, 0), event_record_json(event))])
    return endpoints(etcd)


def test_hosts_lists_ready_and_notready_hosts_as_kubectl_get_nodes(
    fleet: str, run: Callable[..., Result]
) -> None:
    result = run("hosts", "--etcd", fleet)

    assert (0, "") == (result.code, result.err)
    header, ready, lost = result.out.splitlines()
    assert "NAME     STATUS     LAST HEARTBEAT   PODS   ENGINE" == header
    assert ["node-a", "Ready", "2/2", "docker", "28.2.2"] == [
        w for w in ready.split() if not w.endswith("s")
    ]
    assert ["node-b", "NotReady", "30s", "(record)", "1/1", "docker", "27.0.1"] == lost.split()


def test_hosts_wide_and_json(fleet: str, run: Callable[..., Result]) -> None:
    wide = run("hosts", "--etcd", fleet, "-o", "wide")
    as_json = run("hosts", "--etcd", fleet, "-o", "json")

    assert 0 == wide.code, wide.err
    header, ready, lost = wide.out.splitlines()
    assert "PODSYNC   CPUS   MEMORY   CPU USE     MEMORY USE   LAST SYNC   SOURCES" in header
    assert ["0.3.0", "2", "4096Mi", "250m", "300Mi", "5s", "1/1", "ok"] == ready.split()[-8:]
    assert ["<unknown>", "<unknown>", "5s"] == lost.split()[-5:-2]
    document = json.loads(as_json.out)
    assert 1 == document["format_version"]
    assert ["node-a", "node-b"] == [h["name"] for h in document["hosts"]]
    lost_host = document["hosts"][1]
    assert {
        "status": "NotReady",
        "ready": False,
        "last_heartbeat_seconds": 30.0,
        "last_heartbeat_from": "written",
        "pods_running": 1,
        "pods_desired": 1,
        "engine": "docker 27.0.1",
        "podsync_version": "0.3.0",
    } == {k: v for k, v in lost_host.items() if k not in ("name", "record")}
    assert "node-b" == lost_host["record"]["host"]
    assert "lease" == document["hosts"][0]["last_heartbeat_from"]


def test_status_etcd_gives_every_hosts_pods_with_a_host_column(
    fleet: str, run: Callable[..., Result]
) -> None:
    table = run("status", "--etcd", fleet)
    one = run("status", "--etcd", fleet, "--host", "node-b", "-o", "json")
    names = run("status", "--etcd", fleet, "-o", "name")

    assert 0 == table.code, table.err
    assert [
        ["POD", "READY", "PHASE", "RESTARTS", "AGE", "REASON", "HOST"],
        ["default/web", "1/1", "Running", "0", "2m30s", "node-a"],
        ["kube-system/dns", "1/1", "Running", "0", "2m30s", "node-a"],
        ["default/api", "0/1", "Unknown", "0", "2m30s", "NodeLost", "node-b"],
    ] == [line.split() for line in table.out.splitlines()]
    document = json.loads(one.out)
    assert 1 == document["format_version"]
    [pod] = document["pods"]
    assert ("default/api", "node-b", "Unknown", "NodeLost", "Running") == (
        pod["pod"],
        pod["host"],
        pod["display_status"],
        pod["reason"],
        pod["reported_phase"],
    )
    assert "format_version" not in pod
    assert "pod/default/web\npod/kube-system/dns\npod/default/api\n" == names.out


def test_events_etcd_lists_the_fleets_events_oldest_first(
    fleet: str, run: Callable[..., Result]
) -> None:
    table = run("events", "--etcd", fleet)
    lines = run("events", "--etcd", fleet, "-o", "json")
    recent = run("events", "--etcd", fleet, "--since", "15s")

    assert 0 == table.code, table.err
    assert [
        ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE", "HOST"],
        ["20s", "Normal", "BackOff", "pod/default/node-b", "it", "did", "node-b"],
        ["10s", "Normal", "Started", "pod/default/node-a", "it", "did", "node-a"],
    ] == [line.split() for line in table.out.splitlines()]
    assert [
        {
            "time": "2026-12-02T20:00:10Z",
            "type": "Normal",
            "reason": "BackOff",
            "object": "pod/default/node-b",
            "message": "it  did",
            "host": "node-b",
        },
        {
            "time": "2026-12-02T20:00:20Z",
            "type": "Normal",
            "reason": "Started",
            "object": "pod/default/node-a",
            "message": "it  did",
            "host": "node-a",
        },
    ] == [json.loads(line) for line in lines.out.splitlines()]
    assert ["node-a"] == [line.split()[-1] for line in recent.out.splitlines()[1:]]


def test_a_bad_record_is_a_warning_naming_its_key(
    fleet: str, etcd: EtcdServer, run: Callable[..., Result]
) -> None:
    etcd.put(pod_key("node-a", "default/broken"), "{not json")

    result = run("status", "--etcd", fleet)

    assert 0 == result.code
    assert result.err.startswith(
        f"podsync: warning: {pod_key('node-a', 'default/broken')}: skipped: not JSON"
    )
    assert 4 == len(result.out.splitlines())


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("status", "--etcd", "{url}", "pods.yaml"), "SOURCEs cannot be given with it"),
        (("status", "--etcd", "{url}", "--watch"), "--watch cannot be given with it"),
        (("events", "--etcd", "{url}", "-f"), "--follow cannot be given with it"),
        (("status", "--host", "node-a"), "--host NAME is a host of the fleet: give --etcd"),
        (("events", "--etcd", "{url}", "--host", "../x"), "--host: host name '../x' is not"),
        (("hosts", "--etcd", "{url}", "-o", "name"), "-o name: hosts prints json, yaml, wide"),
    ],
)
def test_what_the_fleet_forms_do_not_take_is_a_usage_error(
    argv: tuple[str, ...], says: str, run: Callable[..., Result], etcd: EtcdServer
) -> None:
    result = run(*(a.format(url=endpoints(etcd)) for a in argv))

    assert 1 == result.code
    assert says in result.err


def test_unreachable_etcd_is_an_error_line_and_exit_code_1(
    etcd: EtcdServer, run: Callable[..., Result]
) -> None:
    url = endpoints(etcd)
    etcd.stop()

    results = [run(*argv) for argv in (("hosts", "--etcd", url), ("status", "--etcd", url))]
    bad_url = run("hosts", "--etcd", "etcd://nowhere")

    for result in results:
        assert 1 == result.code
        assert f"podsync: error: cannot reach etcd at {etcd.endpoint}: connection refused\n" == (
            result.err
        )
    assert 1 == bad_url.code
    assert "podsync: error: --etcd etcd://nowhere: 'nowhere' is not HOST:PORT" in bad_url.err
    assert "Traceback" not in "".join(r.err for r in [*results, bad_url])


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: podsync-test/busybox:latest
"""


def test_publish_warns_when_the_host_has_no_live_heartbeat(
    etcd: EtcdServer, client: EtcdClient, run: Callable[..., Result], tmp_path: Path
) -> None:
    (tmp_path / "web.yaml").write_text(POD)
    report(client, "node-a", ttl=60)
    report(client, "node-b", ttl=None)  # it reported once; its lease expired since
    url = endpoints(etcd)
    warning = (
        "{} has no live heartbeat: no podsync run reports from it, or it stopped; "
        "the pods are published but nothing may run them"
    )

    alive = run("publish", "--etcd", url, "--host", "node-a", str(tmp_path / "web.yaml"))
    lost = run("publish", "--etcd", url, "--host", "node-b", str(tmp_path / "web.yaml"))
    never = run(
        "publish", "--etcd", url, "--host", "node-c", "-o", "json", str(tmp_path / "web.yaml")
    )

    assert (0, "") == (alive.code, alive.err)
    assert (0, f"podsync: warning: {warning.format('node-b')}\n") == (lost.code, lost.err)
    assert "Published revision" in lost.out
    assert 0 == never.code
    assert f"podsync: warning: {warning.format('node-c')}\n" == never.err
    document = json.loads(never.out)
    assert {
        "format_version": 1,
        "host": "node-c",
        "dry_run": False,
        "added": ["pod default/web"],
        "live_heartbeat": False,
        "warnings": [warning.format("node-c")],
    } == {
        k: document[k]
        for k in ("format_version", "host", "dry_run", "added", "live_heartbeat", "warnings")
    }
    assert document["revision"] == etcd.revision()


def test_the_fleet_is_read_with_the_etcd_options(
    fleet: str, etcd: EtcdServer, run: Callable[..., Result], tmp_path: Path
) -> None:
    """An etcd with users: refused without one, read with ``--etcd-user`` (the lease's
    time to live too: the user reads the heartbeat keys bound to it)."""
    etcd.enable_auth("reader", "reader-pw")
    password = tmp_path / "password"
    password.write_text("reader-pw\n")
    user = ("--etcd-user", "reader", "--etcd-password-file", str(password))

    refused = run("hosts", "--etcd", fleet)
    hosts = run("hosts", "--etcd", fleet, *user)
    statuses = run("status", "--etcd", fleet, "--host", "node-a", *user)

    assert 1 == refused.code
    assert "etcd wants a user and password" in refused.err
    assert (0, "") == (hosts.code, hosts.err)
    assert ["Ready", "NotReady"] == [line.split()[1] for line in hosts.out.splitlines()[1:]]
    assert 0 == statuses.code, statuses.err
    assert 3 == len(statuses.out.splitlines())
    assert "reader-pw" not in hosts.out + hosts.err + statuses.out + statuses.err
