"""``podsync apply --hosts HOSTS.yaml SOURCE...`` and ``podsync.fleet.sync_hosts`` on
FakeRuntimes: each pod goes to the host its ``spec.nodeName`` names, every host is
applied, an unreachable one fails alone and is named, and a bad hosts file or a pod
bound to no host applies nothing anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

import podsync
import podsync.fleet
import podsync.spec
from podsync.actions._actions import RemovePodDir, RemoveVolume
from podsync.actions._options import PlanOptions
from podsync.cli import _main as cli
from podsync.testing import FakeClock, FakeRuntime

IMAGE = "podsync-test/busybox:1"
PAUSE = "podsync-test/pause:1"
T0 = 1_700_000_000.0
HOSTS = ("node-a", "node-b", "node-c")


def pod_yaml(name: str, node: str | None, *, empty_dir: bool = False) -> str:
    node_line = f"\n  nodeName: {node}" if node is not None else ""
    volume = "\n  volumes:\n  - name: scratch\n    emptyDir: {}" if empty_dir else ""
    mount = (
        "\n    volumeMounts:\n    - name: scratch\n      mountPath: /scratch" if empty_dir else ""
    )
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
spec:{node_line}{volume}
  containers:
  - name: app
    image: {IMAGE}{mount}
"""


class Result(NamedTuple):
    code: int
    out: str
    err: str


class Fleet:
    """Three fake engines, a hosts file naming them, and ``podsync`` to run."""

    def __init__(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.clock = FakeClock(T0, step=0.001)
        self.fakes = {
            f"unix:///run/{h}.sock": FakeRuntime(images=[IMAGE, PAUSE], clock=self.clock)
            for h in HOSTS
        }
        self.by_host = dict(zip(HOSTS, self.fakes.values(), strict=True))
        self.hosts = tmp_path / "hosts.yaml"
        self.hosts.write_text("hosts:\n" + "".join(f"  {h}: unix:///run/{h}.sock\n" for h in HOSTS))
        self.pods = tmp_path / "pods"
        self.pods.mkdir()
        self.root = tmp_path / "root"
        self.capsys = capsys
        self.contacted: list[str] = []

    def factory(self, address: str | None) -> FakeRuntime:
        assert address is not None
        self.contacted.append(address)
        return self.fakes[address]

    def run(self, *argv: str) -> Result:
        args = ["apply", "--hosts", str(self.hosts), "--root-dir", str(self.root)]
        args += ["--network-image", PAUSE, "--network-mode", "none", *argv]
        code = cli.main(args, runtime_factory=self.factory, clock=self.clock)
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err
        return Result(code, captured.out, captured.err)

    def running(self, host: str) -> set[str]:
        return {
            c.labels["io.podsync.pod.name"]
            for c in self.by_host[host].containers
            if c.running and c.labels.get("io.podsync.container.name") == "app"
        }


@pytest.fixture
def fleet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Fleet:
    return Fleet(tmp_path, capsys)


def test_each_host_runs_the_pods_bound_to_it(fleet: Fleet) -> None:
    (fleet.pods / "web.yaml").write_text(pod_yaml("web", "node-a"))
    (fleet.pods / "api.yaml").write_text(pod_yaml("api", "node-a"))
    (fleet.pods / "db.yaml").write_text(pod_yaml("db", "node-b"))
    result = fleet.run(str(fleet.pods))
    assert result.code == 0, result.err
    assert fleet.running("node-a") == {"web", "api"}
    assert fleet.running("node-b") == {"db"}
    assert fleet.running("node-c") == set()
    lines = result.out.splitlines()
    assert "# node-a (unix:///run/node-a.sock)" in lines
    summaries = [
        re.sub(r"in [0-9.]+s", "in Ts", line) for line in lines if line.startswith("node-")
    ]
    assert summaries == [
        "node-a: Apply complete! 4 done, 0 failed, 0 skipped in Ts.",
        "node-b: Apply complete! 2 done, 0 failed, 0 skipped in Ts.",
        "node-c: No changes. 0 pod(s) up to date.",
    ]
    assert lines[-1] == "Fleet: 3 of 3 host(s) applied."
    # Progress lines name their host.
    assert re.search(r"^\[ *[0-9.]+s\] node-b: default/db/app: started \(c\d+\)$", result.err, re.M)

    again = fleet.run(str(fleet.pods))
    assert again.code == 0
    assert [line for line in again.out.splitlines() if line.startswith("node-")] == [
        "node-a: No changes. 2 pod(s) up to date.",
        "node-b: No changes. 1 pod(s) up to date.",
        "node-c: No changes. 0 pod(s) up to date.",
    ]


def test_an_unreachable_host_fails_alone_and_is_named(fleet: Fleet) -> None:
    for i, host in enumerate(HOSTS):
        (fleet.pods / f"p{i}.yaml").write_text(pod_yaml(f"p{i}", host))
    fleet.by_host["node-b"].fail(
        "list", unavailable=True, error="cannot reach the engine: no such socket"
    )
    result = fleet.run(str(fleet.pods))
    assert result.code == 1
    assert fleet.running("node-a") == {"p0"}
    assert fleet.running("node-c") == {"p2"}
    assert fleet.running("node-b") == set()
    assert "node-b: not applied: " in result.out
    assert "no such socket" in result.out
    assert "Fleet: 2 of 3 host(s) applied; failed: node-b." in result.out
    assert "podsync: error: host node-b (unix:///run/node-b.sock): " in result.err
    assert "podsync: error: 1 of 3 host(s) failed: node-b" in result.err


def test_json_gives_each_hosts_outcome(fleet: Fleet) -> None:
    (fleet.pods / "web.yaml").write_text(pod_yaml("web", "node-a"))
    fleet.by_host["node-c"].fail("list", unavailable=True, error="gone")
    result = fleet.run("--json", str(fleet.pods))
    assert result.code == 1
    document = json.loads(result.out)
    assert document["format_version"] == 1
    assert document["ok"] is False
    assert document["failed"] == ["node-c"]
    by_host = {h["host"]: h for h in document["hosts"]}
    assert by_host["node-a"]["ok"] is True
    assert (by_host["node-a"]["done"], by_host["node-a"]["failed"]) == (2, 0)
    assert by_host["node-a"]["pods"] == 1
    assert by_host["node-a"]["root_dir"] == str(fleet.root / "hosts" / "node-a")
    assert by_host["node-b"]["applied"] is False
    assert by_host["node-c"]["ok"] is False
    assert "gone" in by_host["node-c"]["error"]


@pytest.mark.parametrize("option", [["-o", "json"], ["-o", "yaml"]], ids=["json", "yaml"])
def test_output_is_the_json_flags_document(
    fleet: Fleet, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str]
) -> None:
    """``apply --hosts -o json`` is today's ``--json``; ``-o yaml`` the same document."""
    (fleet.pods / "web.yaml").write_text(pod_yaml("web", "node-a"))
    (tmp_path / "twin").mkdir()
    twin = Fleet(tmp_path / "twin", capsys)
    (twin.pods / "web.yaml").write_text(pod_yaml("web", "node-a"))
    flag = fleet.run("--json", str(fleet.pods))

    result = twin.run(*option, str(twin.pods))

    assert (0, 0) == (flag.code, result.code), flag.err + result.err
    document = json.loads(flag.out.replace(str(tmp_path / "root"), "ROOT"))
    text = result.out.replace(str(tmp_path / "twin" / "root"), "ROOT")
    other = json.loads(text) if option[1] == "json" else yaml.safe_load(text)
    # The hosts are synced at once, on one clock: their durations differ from run to run.
    for host in (*document["hosts"], *other["hosts"]):
        host.pop("duration", None)
    assert document == other
    assert ["default/web"] == document["hosts"][0]["changed"]


def test_json_log_lines_carry_the_host(fleet: Fleet) -> None:
    (fleet.pods / "web.yaml").write_text(pod_yaml("web", "node-a"))
    result = fleet.run("--log-format", "json", str(fleet.pods))
    assert result.code == 0
    records = [json.loads(line) for line in result.err.splitlines()]
    events = [r for r in records if r["kind"] == "started"]
    assert {r["host"] for r in events} == {"node-a"}
    summaries = [r for r in records if r["kind"] == "host-summary"]
    assert [r["host"] for r in summaries] == list(HOSTS)


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        (
            pod_yaml("web", None),
            "$.spec.nodeName: pod default/web: no spec.nodeName: each pod names its host of",
        ),
        (
            pod_yaml("web", "node-z"),
            "$.spec.nodeName: pod default/web: 'node-z' is not a host of",
        ),
        (
            "version: v1beta1\nid: legacy\ncontainers:\n- name: app\n  image: busybox\n",
            "$: a v1beta1 manifest names no host",
        ),
    ],
)
def test_a_pod_bound_to_no_host_of_the_fleet_applies_nothing(
    fleet: Fleet, pod: str, message: str
) -> None:
    (fleet.pods / "good.yaml").write_text(pod_yaml("good", "node-a"))
    (fleet.pods / "bad.yaml").write_text(pod)
    result = fleet.run(str(fleet.pods))
    assert result.code == 1
    assert f"podsync: error: {fleet.pods / 'bad.yaml'}: {message}" in result.err
    assert "(its hosts: node-a, node-b, node-c)" in result.err or "v1beta1" in message
    assert fleet.contacted == []
    assert all(f.calls == [] for f in fleet.fakes.values())


def test_a_bad_hosts_file_applies_nothing(fleet: Fleet) -> None:
    (fleet.pods / "good.yaml").write_text(pod_yaml("good", "node-a"))
    fleet.hosts.write_text("hosts:\n  node-a: unix:///run/node-a.sock\n  node-b: ftp://x\n")
    result = fleet.run(str(fleet.pods))
    assert result.code == 1
    assert (
        f"podsync: error: {fleet.hosts}: $.hosts.node-b: 'ftp://x' is not an engine "
        "address: expected unix://, tcp:// or ssh://"
    ) in result.err
    assert fleet.contacted == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-H", "unix:///x.sock", "pods"], "-H/--docker-host cannot be used with --hosts"),
        (["--wait", "pods"], "--wait cannot be used with --hosts"),
    ],
)
def test_usage_errors(fleet: Fleet, argv: list[str], message: str) -> None:
    result = fleet.run(*argv)
    assert result.code == 1
    assert message in result.err
    assert fleet.contacted == []


def test_names_with_hosts_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``apply --hosts`` prints a document per fleet (json, yaml), no pod names; the
    error lists what it takes, before any engine is contacted."""
    argv = ["apply", "--hosts", str(tmp_path / "hosts.yaml"), "-o", "name", str(tmp_path)]

    code = cli.main(argv, clock=FakeClock(T0))

    assert code == 1
    assert "-o name: apply --hosts prints json, yaml" in capsys.readouterr().err


def test_one_hosts_sync_never_removes_another_hosts_pod_directories(tmp_path: Path) -> None:
    """The hazard of one root for several engines: a sync removes what is left of the
    pods it does not desire. Each host keeps its pods' emptyDirs in its own engine (and
    its pod directories under its own root), so node-b, which desires no pod of node-a,
    never sees (nor removes) node-a's emptyDir."""
    clock = FakeClock(T0, step=0.001)
    fakes = {h: FakeRuntime(images=[IMAGE, PAUSE], clock=clock) for h in HOSTS[:2]}
    (tmp_path / "a.yaml").write_text(pod_yaml("web", "node-a", empty_dir=True))
    (tmp_path / "b.yaml").write_text(pod_yaml("db", "node-b", empty_dir=True))
    hosts = podsync.fleet.parse_hosts(
        "hosts:\n  node-a: unix:///a.sock\n  node-b: unix:///b.sock\n",
        this_host=podsync.NodeInfo("here", 1000, 2**30),
    )
    desired = podsync.fleet.load_host_pods([tmp_path / "a.yaml", tmp_path / "b.yaml"], hosts)
    root = tmp_path / "root"
    options = PlanOptions(network_image=PAUSE, network_mode="none", root_dir=str(root))
    first = podsync.fleet.sync_hosts(desired, fakes, options=options, clock=clock, probe=False)
    assert first.ok, first
    (web,) = desired["node-a"]
    (db,) = desired["node-b"]

    def empty_dirs(host: str) -> list[str]:
        return [v.name for v in fakes[host].volumes if v.name.startswith("podsync-emptydir_")]

    assert [podsync.spec.empty_dir_volume_name(web.uid, "scratch")] == empty_dirs("node-a")
    assert [podsync.spec.empty_dir_volume_name(db.uid, "scratch")] == empty_dirs("node-b")
    second = podsync.fleet.sync_hosts(desired, fakes, options=options, clock=clock, probe=False)
    assert second.ok
    removals = [
        a
        for h in second.hosts
        for a in (h.result.plan.actions if h.result else ())
        if isinstance(a, RemovePodDir | RemoveVolume)
    ]
    assert removals == []
    assert [podsync.spec.empty_dir_volume_name(web.uid, "scratch")] == empty_dirs("node-a")
    assert [podsync.spec.empty_dir_volume_name(db.uid, "scratch")] == empty_dirs("node-b")


def test_sync_hosts_reports_each_host_and_names_the_failed(tmp_path: Path) -> None:
    clock = FakeClock(T0, step=0.001)
    fakes = {h: FakeRuntime(images=[IMAGE, PAUSE], clock=clock) for h in HOSTS}
    fakes["node-c"].fail("list", unavailable=True, error="engine gone")
    web = podsync.Pod("web", containers=(podsync.Container("app", IMAGE),))
    options = PlanOptions(network_image=PAUSE, network_mode="none", root_dir=str(tmp_path))
    seen: list[tuple[str, str]] = []
    result = podsync.fleet.sync_hosts(
        {"node-a": [web]},
        fakes,
        options=options,
        clock=clock,
        on_event=lambda host, event: seen.append((host, event.kind.value)),
    )
    assert [h.host for h in result.hosts] == list(HOSTS)
    assert result.failed == ("node-c",)
    assert not result.ok
    assert result["node-a"].ok
    assert result["node-b"].ok
    assert result["node-c"].result is None
    assert "engine gone" in result["node-c"].error
    assert {host for host, _ in seen} == {"node-a"}
    assert result["node-b"].root_dir == str(tmp_path / "hosts" / "node-b")
    with pytest.raises(KeyError, match="node-z"):
        podsync.fleet.sync_hosts({"node-z": [web]}, fakes, options=options, clock=clock)


def test_a_host_with_tls_gets_a_docker_runtime_with_its_certificates(tmp_path: Path) -> None:
    from podsync.cli._fleet import _runtime
    from podsync.docker import DockerRuntime

    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("x")
    (host,) = podsync.fleet.parse_hosts(
        f"""\
hosts:
  node-a:
    engine: tcp://127.0.0.1:2376
    tls: {{ca: {tmp_path / "ca.pem"}, cert: {tmp_path / "cert.pem"}, key: {tmp_path / "key.pem"}}}
""",
        this_host=podsync.NodeInfo("here", 1000, 2**30),
    )

    def no_factory(address: str | None) -> FakeRuntime:
        raise AssertionError("a TLS host is not the factory's")

    runtime = _runtime(host, no_factory)
    assert isinstance(runtime, DockerRuntime)
    try:
        assert runtime.host == "tcp://127.0.0.1:2376"
        tls = runtime._tls
        assert not isinstance(tls, bool)
        assert tls.cert == (str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
        assert tls.verify == str(tmp_path / "ca.pem")
    finally:
        runtime.close()


def test_cert_without_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("x")
    with pytest.raises(podsync.ConfigError) as caught:
        podsync.fleet.parse_hosts(
            "hosts:\n  a:\n    engine: tcp://127.0.0.1:1\n"
            f"    tls: {{cert: {tmp_path / 'cert.pem'}}}\n",
            source_name="hosts.yaml",
            this_host=podsync.NodeInfo("here", 1000, 2**30),
        )
    assert [str(p) for p in caught.value.problems] == [
        "hosts.yaml: $.hosts.a.tls: give cert and key together (the client certificate and its key)"
    ]


def test_a_pod_moved_to_another_host_leaves_the_first_in_a_scope_only(fleet: Fleet) -> None:
    """``apply --hosts`` owns what ``apply`` owns (issue 29): without a scope, a pod
    that moves to another host starts there and keeps running on the first; with
    ``--scope``, its old host's apply removes it."""
    web = fleet.pods / "web.yaml"
    web.write_text(pod_yaml("web", "node-a"))
    assert 0 == fleet.run(str(fleet.pods)).code
    web.write_text(pod_yaml("web", "node-b"))
    assert 0 == fleet.run(str(fleet.pods)).code
    assert (fleet.running("node-a"), fleet.running("node-b")) == ({"web"}, {"web"})

    (fleet.pods / "api.yaml").write_text(pod_yaml("api", "node-a"))
    assert 0 == fleet.run("--scope", "site", str(fleet.pods)).code
    (fleet.pods / "api.yaml").write_text(pod_yaml("api", "node-c"))
    moved = fleet.run("--scope", "site", str(fleet.pods))

    assert 0 == moved.code, moved.err
    # api was site's on node-a: it goes there; web, from before the scope, stays.
    assert fleet.running("node-a") == {"web"}
    assert fleet.running("node-c") == {"api"}
