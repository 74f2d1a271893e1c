"""The ``podsync`` command line without an engine: ``podsync.cli.main`` with a
``FakeRuntime`` injected through ``runtime_factory``.

Argument parsing and exit codes, plan output (text, JSON, saved and shown), saved-plan
staleness, deletion and ``--no-delete``, ``down``'s selection, ``--wait``, progress
rendering and the JSON log format. The same commands against a real engine, through the
console script, are in ``test_cli.py``.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

import podsync
from podsync.cli import _console, _oneshot, _planning, _wait
from podsync.cli import _main as cli
from podsync.spec._labels import LABEL_POD_UID
from podsync.spec._records import probe_records, records_of
from podsync.testing import MUTATING_CALL_NAMES, FakeClock, FakeRuntime
from tests.support import paths
from tests.support.cri import cri_labels, cri_name

IMAGE = "app:1"
PAUSE = "pause:1"
REPO = paths.REPO
# The time of the tests' clocks: they start here, and stand still unless told to move.
T0 = 1_000_000_000.0


@attrs.frozen
class Result:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def pod_yaml(
    name: str,
    *,
    command: Sequence[str] = ("sleep", "3600"),
    restart: str = "Always",
    host_port: int | None = None,
    pull: str = "IfNotPresent",
    image: str = IMAGE,
) -> str:
    ports = ""
    if host_port is not None:
        ports = f"\n      ports: [{{containerPort: 80, hostPort: {host_port}}}]"
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: {restart}
  containers:
    - name: app
      image: {image}
      imagePullPolicy: {pull}
      command: {json.dumps(list(command))}{ports}
"""


def write(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(text)
    return str(path)


def no_engine(host: str | None) -> podsync.Runtime:
    raise AssertionError(f"the engine was contacted (host {host!r})")


@pytest.fixture
def clock() -> FakeClock:
    """The command's clock, and the fake engine's: a millisecond passes per reading (so
    that creations and exits are ordered, as on an engine), and ``--wait``'s sleeps
    move it on."""
    return FakeClock(T0, step=0.001)


@pytest.fixture
def fake(clock: FakeClock) -> FakeRuntime:
    return FakeRuntime(images=[IMAGE, PAUSE], clock=clock)


@pytest.fixture
def run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, clock: FakeClock
) -> Callable[..., Result]:
    """Run ``podsync ARGV`` against a runtime (``None``: the engine must not be
    contacted) with the test's ``clock`` (``sleep``: ``clock.advance`` unless given);
    ``--root-dir`` and the network options are added to engine commands."""

    def runner(
        *argv: str,
        runtime: podsync.Runtime | None = None,
        engine_options: bool = True,
        sleep: Callable[[float], None] | None = None,
    ) -> Result:
        args = list(argv)
        if engine_options and args and args[0] in ("plan", "apply", "down"):
            args[1:1] = ["--root-dir", str(tmp_path / "root")]
            if args[0] in ("plan", "apply") and "--plan" not in args:
                args[1:1] = ["--network-image", PAUSE, "--network-mode", "none"]
        factory = no_engine if runtime is None else (lambda host: runtime)
        code = cli.main(args, runtime_factory=factory, sleep=sleep or clock.advance, clock=clock)
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return Result(code, captured.out, captured.err)

    return runner


def mutations(fake: FakeRuntime) -> list[str]:
    return [name for name in fake.call_names() if name in MUTATING_CALL_NAMES]


def running_pods(fake: FakeRuntime) -> set[str]:
    return {
        c.labels.get("io.podsync.pod.name", "")
        for c in fake.containers
        if c.running and LABEL_POD_UID in c.labels
    }


# --- arguments and exit codes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "required: COMMAND"),  # no command
        (["frobnicate"], "invalid choice"),  # unknown command
        (["plan"], "required: SOURCE"),  # plan needs sources
        (["apply"], "give the pods' SOURCEs, or --plan FILE"),
        (["apply", "--plan", "p.json", "x.yaml"], "not both"),
        (["apply", "--plan", "p.json", "--wait"], "--wait needs the pods"),
        (["apply", "--plan", "p.json", "--no-delete"], "--no-delete cannot be used with --plan"),
        (["apply", "--workers", "0", "x.yaml"], "must be at least 1"),
        (["apply", "--timeout", "0", "x.yaml"], "must be more than 0"),
        (["plan", "--min-age", "-1", "x.yaml"], "must not be negative"),
        (["plan", "--max-total", "lots", "x.yaml"], "expected a whole number"),
        (["plan", "--log-format", "xml", "x.yaml"], "invalid choice"),
        (["plan", "--no-del", "x.yaml"], "unrecognized arguments"),  # no abbreviations
        (["plan", "--detailed-exitcode", "--jsn", "x.yaml"], "unrecognized arguments"),
        (["plan", "--detailed-exitcode"], "required: SOURCE"),
        (["plan", "--probe", "--no-probe", "x.yaml"], "--probe and --no-probe"),
        (["plan", "--system-reserved", "cpu", "x.yaml"], "expected RESOURCE=QUANTITY pairs"),
        (["plan", "--system-reserved", "gpu=1", "x.yaml"], "'gpu' cannot be reserved"),
        (["plan", "--system-reserved", "cpu=1,cpu=2", "x.yaml"], "cpu is given twice"),
        (["plan", "--system-reserved", "memory=1Qi", "x.yaml"], "memory: '1Qi' is not a valid"),
        (
            ["apply", "--plan", "p.json", "--system-reserved", "cpu=1"],
            "--system-reserved cannot be used with --plan",
        ),
    ],
)
def test_usage_errors_exit_1(run: Callable[..., Result], argv: list[str], message: str) -> None:
    """A command line that cannot be used exits 1, as every error (Terraform's
    convention), and says why, before anything is read or contacted. Never argparse's
    2: under plan --detailed-exitcode, 2 means "changes", and a script must not act on
    a typo."""
    result = run(*argv, engine_options=False)

    assert 1 == result.code
    assert message in result.err
    assert "" == result.out


def test_help_and_version_exit_0(run: Callable[..., Result]) -> None:
    """--help and --version succeed."""
    help_result = run("apply", "--help", engine_options=False)
    version_result = run("--version", engine_options=False)

    assert (0, 0) == (help_result.code, version_result.code)
    assert "--wait" in help_result.out
    assert version_result.out.startswith("podsync ")


def test_gc_options_reach_the_plan_options() -> None:
    """The GC limits, 'none' included, and the other planning options map onto
    PlanOptions; --root-dir is made absolute."""
    args = cli.build_parser().parse_args(
        [
            "plan",
            "--max-per-container",
            "none",
            "--min-age",
            "0",
            "--max-total",
            "7",
            "--remove-dangling-images",
            "--no-delete",
            "--allow-privileged",
            "--stop-timeout",
            "3",
            "--root-dir",
            "rel/dir",
            "x.yaml",
        ]
    )

    options = _planning._plan_options(args)

    assert podsync.GCPolicy(None, 0.0, 7, True) == options.gc
    assert (False, True, 3) == (
        options.allow_deletions,
        options.allow_privileged,
        options.stop_timeout,
    )
    assert os.path.join(os.getcwd(), "rel/dir") == options.root_dir
    assert podsync.DEFAULT_NETWORK_IMAGE == options.network_image


def test_cluster_dns_reads_the_hosts_resolv_conf(
    run: Callable[..., Result],
    fake: FakeRuntime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With --cluster-dns, the host's resolv.conf follows the cluster's server."""
    monkeypatch.setattr(
        _planning, "_RESOLV_CONF", write(tmp_path, "resolv.conf", "nameserver 9.9.9.9\n")
    )
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("plan", "--json", "--cluster-dns", "10.0.0.10", source, runtime=fake)

    saved = podsync.plan_from_json(result.out)
    net = next(a for a in saved.actions if isinstance(a, podsync.Create))
    assert ("10.0.0.10", "9.9.9.9") == net.spec.dns


@attrs.frozen
class HostDNS:
    """The host's resolv.conf files, as temporary files the CLI reads instead."""

    etc: Path
    systemd: Path


@pytest.fixture
def host_dns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HostDNS:
    """/etc/resolv.conf and /run/systemd/resolve/resolv.conf, redirected to files of
    this test (not written yet: a file that is not written does not exist)."""
    files = HostDNS(tmp_path / "etc-resolv.conf", tmp_path / "systemd-resolv.conf")
    monkeypatch.setattr(_planning, "_RESOLV_CONF", str(files.etc))
    monkeypatch.setattr(_planning, "_SYSTEMD_RESOLV_CONF", str(files.systemd))
    return files


STUB = "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n"


def planned_dns(result: Result) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The name servers and search domains of the planned network container."""
    assert 0 == result.code, result.err
    saved = podsync.plan_from_json(result.out)
    net = next(a for a in saved.actions if isinstance(a, podsync.Create))
    return net.spec.dns, net.spec.dns_search


def test_systemd_resolved_host_uses_the_upstream_resolv_conf(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, host_dns: HostDNS
) -> None:
    """/etc/resolv.conf is systemd-resolved's stub (127.0.0.53 only): pods get the
    servers of /run/systemd/resolve/resolv.conf instead, as Docker and kubeadm do."""
    host_dns.etc.write_text(STUB)
    host_dns.systemd.write_text("nameserver 192.168.1.1\nnameserver 192.168.1.2\nsearch lan\n")
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("plan", "--json", "--cluster-dns", "10.0.0.10", source, runtime=fake)

    assert (("10.0.0.10", "192.168.1.1", "192.168.1.2"), ("lan",)) == planned_dns(result)
    assert "warning" not in result.err


def test_loopback_name_servers_are_left_out_with_a_warning(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, host_dns: HostDNS
) -> None:
    """A stub with no systemd-resolved file beside it: its loopback server is left out
    of the pods' DNS (they could not reach it), and podsync says so."""
    host_dns.etc.write_text(STUB)
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("plan", "--json", "--cluster-dns", "10.0.0.10", source, runtime=fake)

    assert (("10.0.0.10",), ("lan",)) == planned_dns(result)
    assert (
        f"podsync: warning: {host_dns.etc}: name server 127.0.0.53 is a loopback address, "
        "unreachable from the pods' own network namespace: it is left out of their DNS "
        "(use --resolv-conf FILE to name a resolv.conf with reachable servers)"
    ) in result.err_lines


def test_host_network_keeps_loopback_name_servers(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, host_dns: HostDNS
) -> None:
    """Pods on the host network share its loopback: the stub answers there."""
    host_dns.etc.write_text(STUB)
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run(
        "plan", "--json", "--network-mode", "host", "--cluster-dns", "10.0.0.10", source,
        runtime=fake,
    )  # fmt: skip

    assert (("10.0.0.10", "127.0.0.53"), ("lan",)) == planned_dns(result)
    assert "warning" not in result.err


def test_resolv_conf_option_names_the_file(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, host_dns: HostDNS
) -> None:
    """--resolv-conf FILE, as the kubelet's: that file is read and nothing else; its
    loopback servers are left out too. --resolv-conf "" means no host settings."""
    host_dns.etc.write_text("nameserver 9.9.9.9\n")
    mine = write(tmp_path, "mine.conf", "nameserver 10.1.1.1\nnameserver 127.0.0.1\nsearch corp\n")
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    dns = ("--cluster-dns", "10.0.0.10", "--cluster-domain", "cluster.local")

    named = run("plan", "--json", *dns, "--resolv-conf", mine, source, runtime=fake)
    empty = run("plan", "--json", *dns, "--resolv-conf", "", source, runtime=fake)

    cluster_search = ("default.cluster.local", "cluster.local")
    assert (("10.0.0.10", "10.1.1.1"), (*cluster_search, "corp")) == planned_dns(named)
    assert f"{mine}: name server 127.0.0.1 is a loopback address" in named.err
    assert (("10.0.0.10",), cluster_search) == planned_dns(empty)


def test_resolv_conf_that_cannot_be_read_fails_before_the_engine(
    run: Callable[..., Result], tmp_path: Path, host_dns: HostDNS
) -> None:
    """A --resolv-conf podsync cannot read is an error, never an empty file."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    missing = str(tmp_path / "nope.conf")

    result = run("plan", "--cluster-dns", "10.0.0.10", "--resolv-conf", missing, source)

    assert 1 == result.code
    assert f"podsync: error: cannot read {missing}: No such file or directory" in result.err_lines


@pytest.mark.parametrize(
    "argv",
    [
        ("plan", "--resolv-conf", "x.conf", "a.yaml"),
        ("apply", "--resolv-conf", "x.conf", "--plan", "saved.json"),
    ],
)
def test_resolv_conf_without_cluster_dns_is_a_usage_error(
    run: Callable[..., Result], argv: tuple[str, ...]
) -> None:
    """Without --cluster-dns or --cluster-domain pods get the engine's own DNS, so a
    --resolv-conf would be dropped: it is refused instead (and with --plan, as every
    planning option)."""
    result = run(*argv, engine_options=False)

    assert cli.EXIT_USAGE == result.code
    assert "--resolv-conf" in result.err


# --- plan ------------------------------------------------------------------------------


def test_plan_detailed_exitcode_is_2_with_changes_and_0_without(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Terraform's -detailed-exitcode: 2 while there is something to do, 0 after apply;
    without the flag a successful plan exits 0; plan changes nothing."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    plain = run("plan", source, runtime=fake)
    before = run("plan", "--detailed-exitcode", source, runtime=fake)
    untouched = mutations(fake)
    applied = run("apply", source, runtime=fake)
    after = run("plan", "--detailed-exitcode", source, runtime=fake)

    assert (0, 2, 0, 0) == (plain.code, before.code, applied.code, after.code)
    assert [] == untouched
    assert "Pod default/a:" in before.out
    assert "create default/a/app: no container yet  [missing]" in before.out
    assert "Plan: 2 to create." in before.out
    assert "No changes. The engine matches the desired pods." in after.out


def test_plan_json_and_saved_plan_shown(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """--json prints the canonical plan with its format_version; --out saves the same
    text (mode 0600); show renders it as text or JSON, without an engine."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    saved = tmp_path / "plan.json"

    printed = run("plan", "--json", "--out", str(saved), source, runtime=fake)
    shown = run("show", str(saved))
    shown_json = run("show", "--json", str(saved))

    data = json.loads(printed.out)
    assert podsync.PLAN_FORMAT_VERSION == data["format_version"]
    assert saved.read_text() == printed.out
    assert 0o600 == stat.S_IMODE(saved.stat().st_mode)
    assert (0, 0) == (shown.code, shown_json.code)
    assert "create default/a/app: no container yet  [missing]" in shown.out
    assert saved.read_text() == shown_json.out


def test_plan_saved_with_text_output_names_the_apply_command(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """plan --out without --json prints the plan and how to apply the saved file."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("plan", "--out", str(tmp_path / "p.json"), source, runtime=fake)

    assert f"podsync apply --plan {tmp_path / 'p.json'}" in result.out


def test_rejected_pods_are_warnings_and_fail_apply(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A pod that loses a host-port conflict is a warning on stderr (not in the plan on
    stdout); plan still succeeds, apply exits 1 because the pod will not run."""
    first = write(tmp_path, "1.yaml", pod_yaml("first", host_port=8080))
    second = write(tmp_path, "2.yaml", pod_yaml("second", host_port=8080))

    planned = run("plan", first, second, runtime=fake)
    applied = run("apply", first, second, runtime=fake)

    assert 0 == planned.code
    assert "podsync: warning: pod default/second is rejected" in planned.err
    assert "[host-port-conflict]" in planned.err
    assert "second" not in planned.out
    assert 1 == applied.code
    assert {"first"} == running_pods(fake)


def test_unpublished_host_ports_are_a_warning_in_network_mode_none(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Host ports cannot be published without a network: podsync says so."""
    source = write(tmp_path, "a.yaml", pod_yaml("a", host_port=18080))

    result = run("plan", source, runtime=fake)

    assert (
        "podsync: warning: pod default/a: host port(s) 18080 are recorded but not "
        "published in network mode none"
    ) in result.err


def test_several_problems_end_with_what_podsync_did_about_them(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    """A Deployment and its Service, and nothing else: each problem is a line, and a
    last one says podsync stopped before the engine."""
    bad = write(
        tmp_path,
        "web.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
    )

    result = run("apply", bad, runtime=None)

    lines = result.err.splitlines()
    assert 1 == result.code
    assert [
        f"podsync: error: {bad}: document 1: $.kind: Deployment",
        f"podsync: error: {bad}: document 2: $.kind: Service",
    ] == [line.split(" is not supported")[0] for line in lines[:2]]
    assert [
        "podsync: error: 2 problems in the sources: podsync stopped before contacting "
        "the engine, and changed nothing"
    ] == lines[2:]


# One bad file is one bad file (the kubelet's extractFromDir, kubectl apply -f DIR):
# (id, command, the directory's files, pods running after, exit code, bad files named).
BAD_FILE_CASES = [
    (
        "stray-text-file",
        "apply",
        {"a.yaml": "a", "NOTES.txt": "notes: [\n"},
        {"a"},
        1,
        ["NOTES.txt"],
    ),
    ("editor-backup", "apply", {"a.yaml": "a", "a.yaml~": "a"}, {"a"}, 1, ["a.yaml~"]),
    ("hidden-file-skipped", "apply", {"a.yaml": "a", ".a.yaml.swp": "\0"}, {"a"}, 0, []),
    ("empty-file", "apply", {"a.yaml": "a", "b.yaml": ""}, {"a"}, 1, ["b.yaml"]),
    (
        "plan-changes-nothing",
        "plan",
        {"a.yaml": "a", "NOTES.txt": "notes: [\n"},
        set(),
        1,
        ["NOTES.txt"],
    ),
]


@pytest.mark.parametrize(
    ("command", "files", "running", "code", "named"),
    [case[1:] for case in BAD_FILE_CASES],
    ids=[case[0] for case in BAD_FILE_CASES],
)
def test_a_bad_file_beside_good_ones_is_reported_and_the_good_ones_run(
    run: Callable[..., Result],
    fake: FakeRuntime,
    tmp_path: Path,
    command: str,
    files: dict[str, str],
    running: set[str],
    code: int,
    named: list[str],
) -> None:
    """plan and apply on a directory use its good files, name each bad one (with its
    ``$.path``) and exit non-zero for it; a file whose name starts with a dot is not
    read."""
    pods = tmp_path / "pods"
    pods.mkdir()
    for name, text in files.items():
        (pods / name).write_text(pod_yaml(text) if text in ("a", "b") else text)

    result = run(command, str(pods), runtime=fake)

    assert (code, running) == (result.code, running_pods(fake)), result.err
    errors = [line for line in result.err.splitlines() if "error:" in line]
    assert [str(pods / name) for name in named] == [
        line.split("error: ", 1)[1].split(": ", 1)[0] for line in errors[: len(named)]
    ]
    if named:
        assert errors[-1].endswith(
            f"{len(named)} source file(s) not used: what they hold was neither started nor "
            "stopped, and no pod of their kind of source was deleted; the other files were used"
        )


def test_a_bad_file_deletes_nothing_of_its_kind(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A pod that left the good files is not deleted while another file is bad: the bad
    file may be where it went (kubectl apply --prune prunes nothing after an error);
    once the bad file is fixed, it goes (from the scope that owns it)."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "a.yaml").write_text(pod_yaml("a"))
    (pods / "b.yaml").write_text(pod_yaml("b"))
    assert 0 == run("apply", "--scope", "site", str(pods), runtime=fake).code
    (pods / "b.yaml").write_text("kind: [\n")  # b, half-edited

    first = run("apply", "--scope", "site", str(pods), runtime=fake)
    after_first = running_pods(fake)
    (pods / "b.yaml").unlink()
    second = run("apply", "--scope", "site", str(pods), runtime=fake)

    assert (1, 0) == (first.code, second.code)
    assert ({"a", "b"}, {"a"}) == (after_first, running_pods(fake))
    assert "stop default/b" not in first.out
    assert "stop default/b" in second.out


def host_network_pod(name: str) -> str:
    """A node agent on the host's network, its port the host's own (9100)."""
    return (
        pod_yaml(name)
        .replace("spec:\n", "spec:\n  hostNetwork: true\n")
        .replace('"3600"]', '"3600"]\n      ports: [{containerPort: 9100, hostPort: 9100}]')
    )


def test_a_host_network_pods_ports_are_not_said_to_be_unpublished(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """On the host's network a container's port is the host's port whatever the
    network mode of the other pods: no "not published" warning."""
    source = write(tmp_path, "agent.yaml", host_network_pod("agent"))

    result = run("plan", "--allow-host-namespaces", source, runtime=fake)

    assert 0 == result.code
    assert "not published" not in result.err


def test_no_changes_with_a_rejected_pod_does_not_say_the_engine_matches(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A rejected pod does not run: "the engine matches the desired pods" would be
    false; the summary says how many pods are rejected (the warning says why)."""
    source = write(tmp_path, "agent.yaml", host_network_pod("agent"))

    result = run("plan", source, runtime=fake)

    assert 0 == result.code
    assert "[host-namespace-not-allowed]" in result.err
    assert "No changes, but 1 pod is rejected and does not run (see the warnings)." == (
        result.out.strip()
    )


def test_no_changes_with_two_rejected_pods_counts_them(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    first = write(tmp_path, "a.yaml", host_network_pod("a"))
    second = write(tmp_path, "b.yaml", host_network_pod("b").replace("9100", "9101"))

    result = run("plan", first, second, runtime=fake)

    assert "No changes, but 2 pods are rejected and do not run (see the warnings)." == (
        result.out.strip()
    )


def test_ignored_fields_are_one_warning_per_pod(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Fields that mean nothing on one host load, and plan and apply say once per pod
    which ones are ignored; down, which only removes, does not."""
    text = pod_yaml("a").replace("spec:\n", "spec:\n  nodeSelector: {disktype: ssd}\n")
    source = write(tmp_path, "a.yaml", text)
    warning = f"podsync: warning: {source}: pod default/a: ignoring scheduling fields: nodeSelector"

    planned = run("plan", source, runtime=fake)
    removed = run("down", source, runtime=fake)

    assert 0 == planned.code
    assert 1 == planned.err.count(warning)
    assert "warning" not in removed.err


PROBED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
    - name: app
      image: app:1
      command: [sleep, "3600"]
      livenessProbe:
        exec:
          command: [check-health]
        failureThreshold: 1
"""


def test_plan_runs_no_probe_unless_asked_and_apply_probes(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """plan is a dry run: it runs nothing inside containers (no exec liveness probe)
    unless --probe asks for it; apply probes as before and replaces what failed."""
    source = write(tmp_path, "web.yaml", PROBED_POD)
    assert 0 == run("apply", source, runtime=fake).code
    fake.set_exec_result(["check-health"], 1, b"sick")
    fake.clear_calls()

    dry = run("plan", "--detailed-exitcode", source, runtime=fake)
    dry_calls = fake.call_names()
    fake.clear_calls()
    probed = run("plan", "--probe", "--detailed-exitcode", source, runtime=fake)
    probed_calls = fake.call_names()
    fake.clear_calls()
    applied = run("apply", source, runtime=fake)

    assert 0 == dry.code
    assert "exec" not in dry_calls
    assert "No changes." in dry.out
    assert 2 == probed.code
    assert "exec" in probed_calls
    assert [] == [name for name in probed_calls if name in MUTATING_CALL_NAMES]
    assert "liveness probe failed  [unhealthy]" in probed.out
    assert 0 == applied.code
    # The probe's record and the stop's (podsync.spec._records) are volumes of the engine.
    records = ("list_volumes", "create_volume", "remove_volume")
    assert ["exec", "stop", "write_volume", "create", "start"] == [
        name for name in fake.call_names() if name not in ("list", "list_images", *records)
    ]


def test_apply_counts_probe_failures_across_runs(
    run: Callable[..., Result], fake: FakeRuntime, clock: FakeClock, tmp_path: Path
) -> None:
    """Each ``podsync apply`` is one sync in a new process: the liveness probe's count
    lives in the root directory, so the third apply in a row that finds it failing
    (failureThreshold 3, the default) replaces the container, not the first."""
    source = write(
        tmp_path,
        "web.yaml",
        PROBED_POD.replace("        failureThreshold: 1\n", "        periodSeconds: 5\n"),
    )
    assert 0 == run("apply", source, runtime=fake).code
    fake.set_exec_result(["check-health"], 1, b"sick")
    stops = []
    outs: list[str] = []
    errs: list[str] = []
    for _ in range(3):
        clock.advance(5)
        fake.clear_calls()
        result = run("apply", source, runtime=fake)
        assert 0 == result.code, result.err
        stops.append(fake.call_names().count("stop"))
        outs.append(result.out)
        errs.append(result.err)

    assert [0, 0, 1] == stops, outs
    # Below the threshold the plan has nothing to say: the failure is a warning.
    assert [
        "podsync: warning: default/web/app: liveness probe failed (1/3): "
        "exec ['check-health'] exited with code 1: sick\n",
        "podsync: warning: default/web/app: liveness probe failed (2/3): "
        "exec ['check-health'] exited with code 1: sick\n",
    ] == errs[:2]
    assert ["No changes.", "No changes.", "liveness probe failed  [unhealthy]"] == [
        next((w for w in ("No changes.", "liveness probe failed  [unhealthy]") if w in out), out)
        for out in outs
    ]


def test_plan_probe_records_nothing(
    run: Callable[..., Result], fake: FakeRuntime, clock: FakeClock, tmp_path: Path
) -> None:
    """``plan --probe`` is a dry run for the probes too: it runs them, and leaves no
    probe record for the next ``apply`` to count on."""
    source = write(tmp_path, "web.yaml", PROBED_POD.replace("failureThreshold: 1", ""))
    assert 0 == run("apply", source, runtime=fake).code
    fake.set_exec_result(["check-health"], 1, b"sick")
    clock.advance(10)
    fake.clear_calls()

    assert 0 == run("plan", "--probe", source, runtime=fake).code

    assert "exec" in fake.call_names()
    assert {} == probe_records(records_of(fake.volumes))
    clock.advance(10)
    assert 0 == run("apply", source, runtime=fake).code
    assert 1 == len(probe_records(records_of(fake.volumes)))


def test_show_refuses_other_format_versions(run: Callable[..., Result], tmp_path: Path) -> None:
    """A plan of another format_version, or no plan at all, is an error with its path."""
    other = write(tmp_path, "p.json", json.dumps({"format_version": "99"}))
    broken = write(tmp_path, "q.json", "{")

    results = [run("show", other), run("show", broken), run("show", str(tmp_path / "nope"))]

    assert [1, 1, 1] == [r.code for r in results]
    assert f"podsync: error: {other}: $.format_version: this podsync reads plan format" in (
        results[0].err
    )
    assert f"{broken}: $: not a JSON plan" in results[1].err
    assert "cannot read the saved plan: No such file or directory" in results[2].err


# --- bad sources ---------------------------------------------------------------------


def test_bad_source_changes_nothing_and_contacts_no_engine(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    """Every command reads its sources before it contacts the engine: when no file is
    good, problems are listed with file and $.path, exit 1, and no runtime is even made
    (with a good file beside them, see test_a_bad_file_beside_good_ones_...)."""
    bad = write(tmp_path, "bad.yaml", pod_yaml("bad").replace("restartPolicy", "restartPolicyy"))
    broken = write(tmp_path, "broken.yaml", "apiVersion: v1\nkind: [Pod\n")

    results = [run(command, bad, broken) for command in ("plan", "apply", "down")]

    for result in results:
        assert 1 == result.code
        assert f"podsync: error: {bad}: $.spec: unknown key 'restartPolicyy'" in result.err
        assert f"podsync: error: {broken}: " in result.err
        assert all(line.startswith("podsync: error: ") for line in result.err_lines)


# --- apply -----------------------------------------------------------------------------


def test_apply_runs_the_pods_and_reports(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """apply prints the plan, a line per event on stderr (not a terminal), and
    Terraform's summary line."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("apply", source, runtime=fake)

    assert 0 == result.code
    assert {"a"} == running_pods(fake)
    assert "Plan: 2 to create." in result.out
    assert "Apply complete! 2 done, 0 failed, 0 skipped in" in result.out
    assert any(line.endswith("default/a/app: started (c0002)") for line in result.err_lines)


@pytest.mark.parametrize("command", ["plan", "apply", "down"])
def test_every_engine_command_closes_its_runtime(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, command: str
) -> None:
    """The command line closes the runtime it made, once, whether the command
    succeeds or the engine fails it."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    assert 0 == run(command, source, runtime=fake).code
    fake.fail("list", error="engine on fire")
    assert 1 == run(command, source, runtime=fake).code

    assert 2 == fake.closes


def test_no_op_apply_makes_one_engine_call(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A second apply with nothing to do observes the engine with one list call, as
    ``podsync.sync`` does: the image list is fetched only when a plan creates
    something, and nothing else is called."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    assert 0 == run("apply", source, runtime=fake).code
    fake.clear_calls()

    result = run("apply", source, runtime=fake)

    assert 0 == result.code, result.err
    assert "No changes." in result.out
    assert ["list"] == fake.call_names()


def test_apply_lists_images_only_when_it_creates(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """An apply that creates a container fetches the image list once (to decide the
    pulls) before it creates."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("apply", source, runtime=fake)

    assert 0 == result.code, result.err
    assert ["list", "list_images", "create", "start", "write_volume", "create", "start"] == (
        fake.call_names()
    )


def test_apply_failure_exits_1_with_the_error(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A failed action is an error line and exit 1; the rest of its pod is skipped."""
    fake.fail("create", match="k8s_app", error="disk full")
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("apply", source, runtime=fake)

    assert 1 == result.code
    assert "Apply failed! 1 done, 1 failed, 0 skipped" in result.out
    assert "podsync: error: create default/a/app: no container yet: create k8s_app" in result.err
    assert "disk full" in result.err


def test_apply_failure_in_json_names_the_exception(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """--log-format json: a failed action's error line carries its exception's class,
    operation, target and status code beside the text, which is the exception's."""
    fake.fail("create", match="k8s_app", error="No such image: x:1", status_code=404)
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("apply", "--log-format", "json", source, runtime=fake)

    records = [json.loads(line) for line in result.err_lines]
    (error,) = [r for r in records if r["kind"] == "error"]
    assert ("NotFound", "create", 404) == (
        error["error"],
        error["operation"],
        error["status_code"],
    )
    assert error["target"].startswith("k8s_app.")
    assert error["message"].endswith(f"create {error['target']}: No such image: x:1")


def test_apply_deletes_other_pods_in_the_node_scope_unless_no_delete(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """In the node scope, pods podsync runs that the sources do not describe are
    stopped and removed - except with --no-delete."""
    old = write(tmp_path, "old.yaml", pod_yaml("old"))
    new = write(tmp_path, "new.yaml", pod_yaml("new"))
    run("apply", old, runtime=fake)

    kept = run("apply", "--scope", "node", "--no-delete", new, runtime=fake)
    running_after_kept = running_pods(fake)
    replaced = run("apply", "--scope", "node", new, runtime=fake)

    assert (0, 0) == (kept.code, replaced.code)
    assert {"old", "new"} == running_after_kept
    assert {"new"} == running_pods(fake)
    assert "stop default/old/app" in replaced.out
    assert "[pod-not-desired]" in replaced.out


def test_engine_unavailable_is_one_line(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """An engine that cannot be reached is one error line, exit 1."""
    fake.fail("list", unavailable=True, error="cannot reach the Docker engine at tcp://x:1: no")
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("apply", source, runtime=fake)

    assert 1 == result.code
    assert ["podsync: error: cannot reach the Docker engine at tcp://x:1: no"] == result.err_lines


@pytest.mark.parametrize("host", ["bogus", "tcp://127.0.0.1:99999"])
def test_invalid_docker_host_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, host: str
) -> None:
    """An address the docker SDK cannot use is one line naming it and the option."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    code = cli.main(["plan", "--docker-host", host, source])

    err = capsys.readouterr().err
    assert 1 == code
    assert 1 == len(err.splitlines())
    assert err.startswith(f"podsync: error: invalid Docker host {host!r} (--docker-host): ")


def test_unreachable_docker_host_names_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Nothing listens on 127.0.0.1:1: one line naming the host (the real DockerRuntime,
    no engine needed)."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    code = cli.main(["plan", "-H", "tcp://127.0.0.1:1", source])

    err = capsys.readouterr().err
    assert 1 == code
    assert [
        "podsync: error: cannot reach the Docker engine at tcp://127.0.0.1:1: Connection refused"
    ] == err.splitlines()


def test_unexpected_errors_are_one_line_not_a_traceback(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    """A bug is reported as an internal error in one line; Ctrl-C exits 130."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    def broken(host: str | None) -> podsync.Runtime:
        raise RuntimeError("oops")

    def interrupted(host: str | None) -> podsync.Runtime:
        raise KeyboardInterrupt

    bug = cli.main(["plan", source], runtime_factory=broken)
    stop = cli.main(["plan", source], runtime_factory=interrupted)

    assert (1, 130) == (bug, stop)


def test_internal_error_message(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The last-resort handler names the exception."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    def broken(host: str | None) -> podsync.Runtime:
        raise RuntimeError("oops")

    cli.main(["plan", source], runtime_factory=broken)

    assert (
        "podsync: internal error: RuntimeError: oops (please report this)\n"
        == capsys.readouterr().err
    )


# --- saved plans -----------------------------------------------------------------------


def test_saved_plan_is_applied_when_the_engine_did_not_change(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """apply --plan runs exactly the saved plan."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    saved = str(tmp_path / "p.json")
    run("plan", "--out", saved, source, runtime=fake)

    result = run("apply", "--plan", saved, runtime=fake)

    assert 0 == result.code
    assert {"a"} == running_pods(fake)
    assert f"Applying the saved plan {saved}: Plan: 2 to create." in result.out


def test_stale_saved_plan_is_refused_and_changes_nothing(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A pod of the plan changed after the plan was made (here: something else started
    its containers): the saved plan is stale, refused with exit 1, no mutating call."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    saved = str(tmp_path / "p.json")
    run("plan", "--out", saved, source, runtime=fake)
    run("apply", source, runtime=fake)
    fake.clear_calls()

    result = run("apply", "--plan", saved, runtime=fake)

    assert 1 == result.code
    assert [] == mutations(fake)
    (line,) = result.err_lines
    assert line.startswith(
        "podsync: error: Saved plan is stale: the engine changed since the plan was made "
        "(fingerprint "
    )
    assert line.endswith("; run podsync plan again.")


def test_changes_the_plan_does_not_act_on_leave_it_applicable(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Foreign containers, other pods and other images come and go on a shared engine;
    applying the plan does not touch them, so they do not make it stale."""
    fake.add_container(podsync.ObservedContainer("f1", "someone-else", running=True))
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    other = write(tmp_path, "b.yaml", pod_yaml("b"))
    saved = str(tmp_path / "p.json")
    run("plan", "--out", saved, source, runtime=fake)
    fake.stop_container("f1", 0)
    fake.add_image("unrelated:2")
    run("apply", "--no-delete", other, runtime=fake)

    result = run("apply", "--plan", saved, runtime=fake)

    assert 0 == result.code, result.err
    assert {"a", "b"} == running_pods(fake)


def test_saved_plan_of_a_pod_directory_is_stale_once_it_is_gone(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """The pod directories of the plan's pods are part of its fingerprint."""
    uid = "0123abcd"
    pod_dir = tmp_path / "root" / uid
    pod_dir.mkdir(parents=True)
    (pod_dir / ".podsync-pod").touch()
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    saved = str(tmp_path / "p.json")
    planned = run("plan", "--scope", "node", "--out", saved, source, runtime=fake)
    (pod_dir / ".podsync-pod").unlink()

    result = run("apply", "--plan", saved, runtime=fake)

    assert f"tear down {pod_dir}: pod is no longer desired" in planned.out
    assert 1 == result.code
    assert "Saved plan is stale" in result.err


def test_plan_made_against_an_empty_engine_applies_once(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Terraform #24078: a plan made against an empty engine cannot be applied twice."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    saved = str(tmp_path / "p.json")
    run("plan", "--out", saved, source, runtime=fake)

    first = run("apply", "--plan", saved, runtime=fake)
    second = run("apply", "--plan", saved, runtime=fake)

    assert (0, 1) == (first.code, second.code)
    assert "Saved plan is stale" in second.err
    assert 2 == len([c for c in fake.containers if c.running])


def test_saved_plan_from_stdin(
    run: Callable[..., Result],
    fake: FakeRuntime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """apply --plan - reads the plan from standard input (plan --json | apply --plan -)."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    printed = run("plan", "--json", source, runtime=fake)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(printed.out.encode())))

    result = run("apply", "--plan", "-", runtime=fake)

    assert 0 == result.code
    assert {"a"} == running_pods(fake)


def test_saved_plan_under_another_root_dir_is_refused(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """The plan's host paths live under the root directory it was made with."""
    volume = pod_yaml("a") + (
        "      volumeMounts: [{name: data, mountPath: /data}]\n"
        "  volumes: [{name: data, emptyDir: {}}]\n"
    )
    source = write(tmp_path, "a.yaml", volume)
    saved = str(tmp_path / "p.json")
    run("plan", "--out", saved, source, runtime=fake)
    fake.clear_calls()

    result = cli.main(
        ["apply", "--plan", saved, "--root-dir", str(tmp_path / "elsewhere")],
        runtime_factory=lambda host: fake,
    )

    assert 1 == result
    assert [] == fake.call_names()


# --- down ------------------------------------------------------------------------------


def test_down_removes_only_the_described_pods(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """down stops and removes every container of the described pods - running,
    exited, and with --adopt-2014-containers a 2014 kubelet's k8s_ container of the
    same pod - and tears down their directories; other pods and foreign containers
    stay."""
    web = write(tmp_path, "web.yaml", pod_yaml("web"))
    other = write(tmp_path, "other.yaml", pod_yaml("other"))
    run("apply", web, other, runtime=fake)
    (uid,) = [p.uid for p in podsync.load_pods([web])]
    seed_name = f"k8s_app.1234_web.default.file_{uid}_00000001"
    fake.add_container(podsync.ObservedContainer("old1", seed_name, created=1.0))
    fake.add_container(
        podsync.ObservedContainer("legacy", "k8s_app_web.default.file_", created=1.0)
    )
    fake.add_container(podsync.ObservedContainer("f1", "foreign", running=True))
    pod_dir = tmp_path / "root" / uid
    pod_dir.mkdir(parents=True)
    (pod_dir / ".podsync-pod").touch()

    result = run("down", web, runtime=fake)

    assert 0 == result.code
    assert {"other"} == running_pods(fake)
    remaining = {c.name for c in fake.containers}
    assert {"foreign", seed_name, "k8s_app_web.default.file_"} < remaining
    assert not any(name.endswith("_00000000") and "_web." in name for name in remaining)
    assert not pod_dir.exists()
    assert "Down complete!" in result.out

    adopting = run("down", "--adopt-2014-containers", web, runtime=fake)

    assert 0 == adopting.code
    remaining = {c.name for c in fake.containers}
    assert seed_name not in remaining
    assert {"foreign", "k8s_app_web.default.file_"} < remaining


def kubernetes_node(fake: FakeRuntime) -> dict[str, podsync.ObservedContainer]:
    """Put what Docker Desktop's Kubernetes runs for its API server on the fake engine:
    a running sandbox, the running app container and an exited earlier attempt."""
    uid, pod, ns = (
        "6b0d7f3c-1e2a-4c5b-8d9e-0f1a2b3c4d5e",
        "kube-apiserver-docker-desktop",
        "kube-system",
    )
    containers = {
        "sandbox": podsync.ObservedContainer(
            "sandbox",
            cri_name("POD", pod, ns, uid, 0),
            image="registry.k8s.io/pause:3.9",
            labels=cri_labels("POD", pod, ns, uid),
            created=1.0,
            running=True,
        ),
        "app": podsync.ObservedContainer(
            "app",
            cri_name("kube-apiserver", pod, ns, uid, 1),
            image="registry.k8s.io/kube-apiserver:v1.29.2",
            labels=cri_labels("kube-apiserver", pod, ns, uid, sandbox_id="sandbox"),
            created=3.0,
            running=True,
        ),
        "exited": podsync.ObservedContainer(
            "exited",
            cri_name("kube-apiserver", pod, ns, uid, 0),
            image="registry.k8s.io/kube-apiserver:v1.29.2",
            labels=cri_labels("kube-apiserver", pod, ns, uid, sandbox_id="sandbox"),
            created=2.0,
            exit_code=137,
            finished_at=2.5,
        ),
    }
    for container in containers.values():
        fake.add_container(container)
    return containers


@pytest.mark.parametrize("adopt", [(), ("--adopt-2014-containers",)], ids=["default", "adopting"])
def test_a_kubernetes_node_survives_apply_and_down(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, adopt: tuple[str, ...]
) -> None:
    """On a host that runs Kubernetes on Docker, apply (deletions on by default), apply
    of other pods, eager GC and down never touch the node's k8s_ containers."""
    node = kubernetes_node(fake)
    web = write(tmp_path, "web.yaml", pod_yaml("web"))
    gc = ("--min-age", "0", "--max-per-container", "0", "--max-total", "0")

    for argv in (
        ("apply", *adopt, *gc, web),
        ("apply", *adopt, *gc, web),
        ("apply", *adopt, *gc, write(tmp_path, "other.yaml", pod_yaml("other"))),
        ("down", *adopt, web),
    ):
        assert 0 == run(*argv, runtime=fake).code, argv

    assert all(cid not in call.args for call in fake.calls for cid in node), fake.calls
    assert node == {cid: fake.container(cid) for cid in node}


def test_apply_takes_over_2014_containers_only_when_asked(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A pod a 2014 kubelet ran, no longer described: apply leaves it alone unless
    --adopt-2014-containers is given, and then stops it as any pod that left."""
    name = "k8s_app.2a1b3c4d_old.default.file_1f0e2d3c-aaaa-bbbb-cccc-000000000001_8a3c01f2"
    fake.add_container(podsync.ObservedContainer("seed", name, image=IMAGE, running=True))
    web = write(tmp_path, "web.yaml", pod_yaml("web"))

    assert 0 == run("apply", web, runtime=fake).code
    assert fake.container("seed").running

    result = run("apply", "--scope", "node", "--adopt-2014-containers", web, runtime=fake)

    assert 0 == result.code
    assert not fake.container("seed").running
    assert f"stop default/old/app ({name}): pod is no longer desired" in result.out


def test_down_with_nothing_on_the_engine(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Pods that do not run: nothing to do, exit 0."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("down", source, runtime=fake)

    assert 0 == result.code
    assert [] == mutations(fake)
    assert "No changes." in result.out
    assert "Not on the engine: default/a" in result.err


def test_down_selection_by_identity() -> None:
    """A container belongs to a described pod by the planner's ownership rule: its uid
    label, or - only when taking them over - a 2014 kubelet's exact name with the pod's
    uid; never with an io.kubernetes label."""
    pod = podsync.Pod("web", (podsync.Container("app", IMAGE),), source="file")
    other_uid = "0" * 8
    containers = [
        podsync.ObservedContainer("1", "x", labels={LABEL_POD_UID: pod.uid}),
        podsync.ObservedContainer("2", "y", labels={LABEL_POD_UID: other_uid}),
        podsync.ObservedContainer("3", f"k8s_app.1_{pod.full_name}_{pod.uid}_00000000"),
        podsync.ObservedContainer("4", f"k8s_app.1_{pod.full_name}_{other_uid}_00000000"),
        podsync.ObservedContainer("5", f"k8s_app.1_{pod.full_name}_00000000"),
        podsync.ObservedContainer("6", f"k8s_app.1_{pod.full_name}_{pod.uid}_0"),
        podsync.ObservedContainer("7", "web"),
        podsync.ObservedContainer(
            "8", "z", labels={LABEL_POD_UID: pod.uid, "io.kubernetes.pod.uid": pod.uid}
        ),
        podsync.ObservedContainer("9", f"k8s_app_web_default_{pod.uid}_0"),
    ]

    found = _oneshot._by_pod([pod], containers)
    adopting = _oneshot._by_pod([pod], containers, adopt_2014_containers=True)

    assert ["1"] == [oc.id for oc in found[pod.uid]]
    assert ["1", "3"] == [oc.id for oc in adopting[pod.uid]]


# --- --wait ----------------------------------------------------------------------------


class CrashingRuntime(FakeRuntime):
    """A fake whose app containers running ``exit N`` exit with N as soon as they start."""

    def start_container(self, container_id: str) -> None:
        super().start_container(container_id)
        spec = self.spec(container_id)
        entry = spec.command if spec is not None else None
        if entry and entry[0] == "exit":
            self.exit(container_id, int(entry[1]))


def test_wait_reports_pods_that_come_up(
    run: Callable[..., Result],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    """--wait: a long-running pod runs, a job completes (and its network container is
    stopped): exit 0 with a line per pod."""
    monkeypatch.setattr(_wait, "_STABLE_SECONDS", 0.0)
    fake = CrashingRuntime(images=[IMAGE, PAUSE], clock=clock)
    web = write(tmp_path, "web.yaml", pod_yaml("web"))
    job = write(tmp_path, "job.yaml", pod_yaml("job", command=("exit", "0"), restart="OnFailure"))

    result = run("apply", "--wait", "--timeout", "5", web, job, runtime=fake)

    assert 0 == result.code, result.err
    assert "default/web: running (1/1 containers)" in result.out
    assert "default/job: completed (1/1 containers exited 0)" in result.out
    assert "All 2 pod(s) are up." in result.out
    assert {"web"} == running_pods(fake)


def test_wait_times_out_on_a_crash_loop(
    run: Callable[..., Result],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    """A container that keeps exiting is restarted with back-off until --timeout; the
    report names the pod and why, exit 1."""
    monkeypatch.setattr(_wait, "_STABLE_SECONDS", 0.0)
    fake = CrashingRuntime(images=[IMAGE, PAUSE], clock=clock)
    crash = write(tmp_path, "crash.yaml", pod_yaml("crash", command=("exit", "1")))
    naps: list[float] = []

    def nap(seconds: float) -> None:
        naps.append(seconds)
        clock.advance(seconds)

    result = run("apply", "--wait", "--timeout", "1.2", crash, runtime=fake, sleep=nap)

    assert 1 == result.code
    (line,) = [line for line in result.out.splitlines() if line.startswith("default/crash: ")]
    assert line.startswith("default/crash: not running (0/1 containers): app exited with code 1")
    assert "podsync: error: timed out after 1.2s: not running: default/crash" in result.err
    assert 1.0 == naps[0]  # the seed's first retry delay


def test_wait_gives_up_early_on_a_failed_never_pod(
    run: Callable[..., Result],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    """restartPolicy Never and a non-zero exit: the pod has failed, no need to wait."""
    monkeypatch.setattr(_wait, "_STABLE_SECONDS", 0.0)
    fake = CrashingRuntime(images=[IMAGE, PAUSE], clock=clock)
    once = write(tmp_path, "once.yaml", pod_yaml("once", command=("exit", "3"), restart="Never"))

    result = run("apply", "--wait", "--timeout", "30", once, runtime=fake)

    assert 1 == result.code
    assert "default/once: failed: app exited with code 3 (restart policy Never)" in result.out
    assert "will not come up: default/once" in result.err


def test_wait_counts_a_container_as_running_after_it_was_seen_running_a_while() -> None:
    """Just started is "starting"; after _STABLE_SECONDS it is running."""
    pod = podsync.Pod("web", (podsync.Container("app", IMAGE),), source="file")
    app = podsync.ObservedContainer(
        "c1", "x", running=True, labels={LABEL_POD_UID: pod.uid, "io.podsync.container.name": "app"}
    )
    first_seen: dict[str, float] = {}
    empty = podsync.Plan()

    (early,) = _wait.pod_statuses([pod], [app], empty, first_seen, now=100.0)
    (later,) = _wait.pod_statuses([pod], [app], empty, first_seen, now=101.0)

    assert ("pending", "not running (0/1 containers): app starting") == (
        early.state,
        early.message,
    )
    assert ("running", "running (1/1 containers)") == (later.state, later.message)


# --- progress and the JSON log format --------------------------------------------------


def test_json_log_format_writes_every_event_as_a_json_line(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """--log-format json: stderr is JSON lines only - events with time, kind, pod (key
    and uid), container (name and id), reason code and message, the warnings and the
    summary."""
    source = write(tmp_path, "a.yaml", pod_yaml("a", host_port=8080))

    result = run("apply", "--log-format", "json", source, runtime=fake)

    records = [json.loads(line) for line in result.err_lines]
    events = [r for r in records if r["kind"] in {k.value for k in podsync.EventKind}]
    assert ["created", "started", "created", "started"] == [e["kind"] for e in events]
    assert {
        "time",
        "kind",
        "pod",
        "pod_uid",
        "container",
        "container_id",
        "reason",
        "message",
    } == set(events[0])
    assert ("default/a", "net", "network-missing") == (
        events[0]["pod"],
        events[0]["container"],
        events[0]["reason"],
    )
    (net,) = [c for c in fake.containers if c.id == events[0]["container_id"]]
    assert net.labels[LABEL_POD_UID] == events[0]["pod_uid"]
    assert "warning" == records[0]["kind"]
    summary = records[-1]
    assert ("summary", 4 // 2, 0) == (summary["kind"], summary["done"], summary["failed"])


def test_the_command_reads_the_time_from_its_clock(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, clock: FakeClock
) -> None:
    """main's clock stamps the log lines and events and times the apply: with a clock
    that stands still, every record has its time and the apply took no time."""
    clock.step = 0
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("apply", "--log-format", "json", source, runtime=fake)

    records = [json.loads(line) for line in result.err_lines]
    assert 0 == result.code, result.err
    assert {T0} == {r["time"] for r in records}
    assert (0, 0.0) == (records[-1]["failed"], records[-1]["duration"])
    assert "Apply complete! 2 done, 0 failed, 0 skipped in 0.0s." in result.out


def test_a_clock_that_is_not_a_function_is_a_programming_error() -> None:
    """main(clock=...) takes a function; anything else is the caller's bug (TypeError),
    not a usage error of the command line."""
    with pytest.raises(TypeError, match="clock must be a function"):
        cli.main(["plan", "x.yaml"], runtime_factory=no_engine, clock=100.0)  # type: ignore[arg-type]


def test_json_log_format_errors_are_json(run: Callable[..., Result], tmp_path: Path) -> None:
    """Errors, too, are JSON lines."""
    bad = write(tmp_path, "bad.yaml", "kind: Pod\n")

    result = run("plan", "--log-format", "json", bad)

    records = [json.loads(line) for line in result.err_lines]
    assert [
        *(f"{bad}: $.{key}: required field missing" for key in ("apiVersion", "metadata", "spec")),
        "3 problems in the sources: podsync stopped before contacting the engine, and "
        "changed nothing",
    ] == [r["message"] for r in records]
    assert {"error"} == {r["kind"] for r in records}


@pytest.mark.parametrize(
    ("kind", "pod", "container", "message", "expected"),
    [
        # the container's name and the long id are left out: the line names both
        ("created", "default/a", "app", f"created k8s_app.1_a.default.file_u_0 ({'ab' * 32})",
         "default/a/app: created (abababababab)"),
        ("started", "default/a", "net", f"started k8s_net.1_a ({'cd' * 32})",
         "default/a/net: started (cdcdcdcdcdcd)"),
        # the id comes from the event's field, whatever the message says
        ("created", "default/a", "app", "created the app container",
         "default/a/app: created (abababababab)"),
        # a create that lost a race took over the winner's container
        ("adopted", "default/a", "app", "adopted k8s_app.1_a (c1): another apply created it",
         "default/a/app: adopted (efefefefefef)"),
        ("stopping", "default/a", "app", "stop default/a/app (k8s_app.1_a): liveness probe failed",
         "default/a/app: stopping: liveness probe failed"),
        ("removed", "default/a", "app", "remove default/a/app (k8s_app.1_a): exited, beyond 5",
         "default/a/app: removed: exited, beyond 5"),
        ("failed", "default/a", "app", f"start {'ef' * 32}: no such image",
         "default/a/app: failed: start efefefefefef: no such image"),
        ("pulled", "", "", "pulled image busybox:1", "pulled image busybox:1"),
        ("pod-dir-removed", "u-1", "", "tear down /r/u-1: pod is no longer desired",
         "u-1: tear down /r/u-1: pod is no longer desired"),
    ],
)  # fmt: skip
def test_progress_lines(kind: str, pod: str, container: str, message: str, expected: str) -> None:
    """Without a terminal: one line per event, after the seconds since the start."""
    err = io.StringIO()
    console = still_console()
    progress = _console.Progress(console, total=3, terminal=False)
    ids = {"created": "ab" * 32, "started": "cd" * 32, "adopted": "ef" * 32}
    event = make_event(
        podsync.EventKind(kind), pod, container, message, container_id=ids.get(kind, "")
    )

    with _stderr(err):
        progress(event)

    line = err.getvalue()
    assert line.endswith(f"s] {expected}\n")
    assert line.startswith("[  0.0s] ")


def test_progress_bar_on_a_terminal() -> None:
    """On a terminal: one line redrawn in place, the actions counted; a failure is
    kept above the bar; close() clears the bar."""
    err = io.StringIO()
    console = still_console()
    progress = _console.Progress(console, total=2, terminal=True)
    events = [
        make_event(
            podsync.EventKind.CREATED, "default/a", "net", "created n (c1)", container_id="c1"
        ),
        make_event(
            podsync.EventKind.STARTED, "default/a", "net", "started n (c1)", container_id="c1"
        ),
        make_event(podsync.EventKind.FAILED, "default/a", "app", "create x: no such image"),
    ]

    with _stderr(err):
        for event in events:
            progress(event)
        progress.close()

    text = err.getvalue()
    assert "\r[..........] 0/2 default/a/net: created (c1)\x1b[K" in text
    assert "\r[#####.....] 1/2 default/a/net: started (c1)\x1b[K" in text
    assert "default/a/app: failed: create x: no such image\n" in text
    assert "\r[##########] 2/2 " in text
    assert text.endswith("\r\x1b[K")


def test_progress_counts_a_failed_post_start_once() -> None:
    """started, hook-failed, stopping and failed of one create are one action."""
    progress = _console.Progress(still_console(), total=5, terminal=False)
    kinds = ["created", "started", "hook-failed", "stopping", "failed"]
    messages = ["c", "s", "postStart handler failed: boom", "stop", "postStart handler failed"]

    with _stderr(io.StringIO()):
        for kind, message in zip(kinds, messages, strict=True):
            progress(make_event(podsync.EventKind(kind), "default/a", "app", message))

    assert 1 == progress.done


def still_console(log_format: str = "text") -> _console.Console:
    """A console whose clock stands still at T0."""
    return _console.Console(log_format, FakeClock(T0, step=0))


def make_event(
    kind: podsync.EventKind, pod: str, container: str, message: str, **kwargs: Any
) -> podsync.Event:
    """An apply event, at T0 unless ``time`` says otherwise."""
    kwargs.setdefault("time", T0)
    return podsync.Event(kind, pod, container, message, **kwargs)


class _stderr:
    """Swap sys.stderr for a stream (the console writes to the current one)."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        self.saved = sys.stderr
        sys.stderr = self.stream

    def __exit__(self, *exc_info: Any) -> None:
        sys.stderr = self.saved


# --- the examples ----------------------------------------------------------------------


def test_examples_directory_holds_only_pod_files() -> None:
    """podsync plan examples/pods/ reads every file in it: all must be pods and the
    ConfigMaps and Secrets they use (the quickstart script lives one level up, in
    examples/, for that reason)."""
    pods = podsync.load_pods([str(REPO / "examples" / "pods")], secret_key=b"k" * 32)

    assert [
        "default/greeter",
        "default/job",
        "default/reporter",
        "default/seed",
        "default/web",
    ] == [p.key for p in pods]
    by_name = {p.name: p for p in pods}
    assert [
        podsync.EnvVar("SETTING_interval", "30", "ConfigMap default/greeter-settings"),
        podsync.EnvVar("GREETING", "hello from a ConfigMap", "ConfigMap default/greeter-settings"),
    ] == [e for e in by_name["greeter"].containers[0].env if e.name != "SETTING_greeting"]
    assert podsync.RestartPolicy.ON_FAILURE is by_name["job"].restart_policy
    assert [18080] == [p.host_port for c in by_name["web"].containers for p in c.ports]
    reporter = by_name["reporter"]
    assert ["prepare"] == [c.name for c in reporter.init_containers]
    (token,) = reporter.containers[0].env
    assert ("REPORT_TOKEN", "demo-token-not-a-secret") == (
        token.name,
        token.value.get_secret_value(),
    )
    assert "demo-token-not-a-secret" not in str(token.value)
    assert "demo-token-not-a-secret" not in repr(reporter)
    settings = next(v for v in reporter.volumes if v.name == "settings")
    assert settings.content is not None
    assert ["report.conf"] == [f.path for f in settings.content.files]


def test_examples_plan_against_a_fake_engine(
    run: Callable[..., Result], tmp_path: Path, clock: FakeClock
) -> None:
    """The examples create cleanly with the demo images present, nothing pulled."""
    fake = FakeRuntime(images=["podsync-demo/busybox:1", "podsync-demo/pause:1"], clock=clock)

    result = run(
        "apply",
        "--network-image",
        "podsync-demo/pause:1",
        "--root-dir",
        str(tmp_path / "root"),
        str(REPO / "examples" / "pods"),
        runtime=fake,
        engine_options=False,
    )

    assert 0 == result.code, result.err
    assert "pull" not in fake.call_names()
    assert {"greeter", "web", "job", "seed", "reporter"} == running_pods(fake)


# --- the bad-input corpus through the command line --------------------------------------

CORPUS = paths.DATA / "bad_inputs"


@pytest.mark.parametrize(
    "name", sorted(p.name for p in CORPUS.iterdir() if p.name != "expected.txt")
)
def test_every_bad_input_fails_apply_before_the_engine(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, name: str
) -> None:
    """Each malformed corpus file, given to ``podsync apply`` beside a valid pod file,
    exits 1 with the file named in its error and no traceback; nothing of it runs, and
    the good file's pod does (one bad file is one bad file, issue 27)."""
    good = write(tmp_path, "good.yaml", pod_yaml("good"))

    result = run("apply", good, str(CORPUS / name), runtime=fake)

    assert 1 == result.code
    assert name in result.err
    assert {"good"} == running_pods(fake)


def test_a_plan_saved_by_format_1_is_refused_with_what_to_do(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Format 1 plans named pods by namespace/name only; applying one could act on the
    wrong one of two pods of one name, so it is refused, saying how to get a new plan."""
    source = write(tmp_path, "a.yaml", pod_yaml("a"))
    saved = tmp_path / "plan.json"
    run("plan", "--out", str(saved), source, runtime=fake)
    data = json.loads(saved.read_text())
    data["format_version"] = "1"
    for pod_plan in data["pods"]:
        for action in pod_plan["actions"]:
            action.pop("pod_uid", None)
    saved.write_text(json.dumps(data))

    result = run("apply", "--plan", str(saved), runtime=fake)

    assert 1 == result.code
    assert (
        f"podsync: error: {saved}: $.format_version: plan format 1 was written by an older "
        "podsync (its actions name pods without their uids); make the plan again with "
        "`podsync plan --out FILE`" in result.err
    )
    assert [] == mutations(fake)


def test_json_events_carry_the_structured_fields() -> None:
    """--log-format json writes an event's fields besides its message: pod uid and key,
    container name and id, and the reason code."""
    err = io.StringIO()
    console = still_console("json")
    progress = _console.Progress(console, total=1)
    event = make_event(
        podsync.EventKind.STOPPING,
        "default/web",
        "app",
        "stop default/web/app (k8s_app.1_web.default.file_u_0): liveness probe failed",
        time=1.5,
        pod_uid="u-1",
        container_id="ab" * 32,
        reason=podsync.Reason.UNHEALTHY,
    )

    with _stderr(err):
        progress(event)

    assert {
        "time": 1.5,
        "kind": "stopping",
        "pod": "default/web",
        "pod_uid": "u-1",
        "container": "app",
        "container_id": "ab" * 32,
        "reason": "unhealthy",
        "message": event.message,
    } == json.loads(err.getvalue())


def test_progress_counts_an_adopted_create_as_one_action() -> None:
    """A create that adopted a racing apply's container ends its action."""
    progress = _console.Progress(still_console(), total=2, terminal=False)
    event = make_event(podsync.EventKind.ADOPTED, "default/a", "app", "adopted", container_id="c1")

    with _stderr(io.StringIO()):
        progress(event)

    assert 1 == progress.done


def test_host_namespace_and_sysctl_options_reach_the_plan_options() -> None:
    """--allow-host-namespaces and --allowed-unsafe-sysctls (comma-separated, repeatable,
    as the kubelet's) map onto PlanOptions; without them nothing is allowed."""
    parse = cli.build_parser().parse_args
    given = parse(
        [
            "plan",
            "--allow-host-namespaces",
            "--allowed-unsafe-sysctls",
            "net.core.*,kernel.msgmax",
            "--allowed-unsafe-sysctls",
            "fs.mqueue.*",
            "x.yaml",
        ]
    )

    options = _planning._plan_options(given)
    default = _planning._plan_options(parse(["plan", "x.yaml"]))

    assert (True, ("net.core.*", "kernel.msgmax", "fs.mqueue.*")) == (
        options.allow_host_namespaces,
        options.allowed_unsafe_sysctls,
    )
    assert (False, ()) == (default.allow_host_namespaces, default.allowed_unsafe_sysctls)


def test_system_reserved_reaches_the_plan_options() -> None:
    """--system-reserved in the kubelet's spelling: milli-CPU and bytes; nothing
    reserved without it."""
    parse = cli.build_parser().parse_args

    given = _planning._plan_options(
        parse(["plan", "--system-reserved", "cpu=500m, memory=1Gi", "x.yaml"])
    )
    default = _planning._plan_options(parse(["plan", "x.yaml"]))

    assert podsync.ResourceList(cpu=500, memory=1024**3) == given.system_reserved
    assert podsync.ResourceList() == default.system_reserved


def test_a_pod_that_does_not_fit_is_rejected_by_apply(
    run: Callable[..., Result], tmp_path: Path, fake: FakeRuntime
) -> None:
    """apply reads the engine's capacity (``info``) for a pod that requests CPU, and
    rejects it when the reserve leaves too little: exit 1, nothing created."""
    fake.capacity = podsync.ResourceList(cpu=2000, memory=1024**3)
    path = write(
        tmp_path,
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n"
        "  - name: app\n    image: busybox\n    resources: {requests: {cpu: 1500m}}\n",
    )

    result = run("apply", "--system-reserved", "cpu=1", path, runtime=fake)

    assert 1 == result.code
    assert "Node didn't have enough resource: cpu, requested: 1500, used: 0, capacity: 1000" in (
        result.err
    ), result.err
    assert "info" in fake.call_names()
    assert [] == mutations(fake)


def test_a_refused_host_network_pod_names_the_option(
    run: Callable[..., Result], tmp_path: Path, fake: FakeRuntime
) -> None:
    path = write(
        tmp_path,
        "web.yaml",
        pod_yaml("web").replace("spec:\n", "spec:\n  hostNetwork: true\n", 1),
    )

    refused = run("apply", path, runtime=fake)
    allowed = run("apply", "--allow-host-namespaces", path, runtime=fake)

    assert 1 == refused.code
    assert (
        'violates PodSecurity "baseline": host namespaces (hostNetwork=true; allow with '
        "--allow-host-namespaces)"
    ) in refused.err
    assert 0 == allowed.code, allowed.err


def test_max_bytes_caps_streams_and_is_named_in_the_error(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """--max-bytes sets the cap on streams (standard input, pipes, devices, URLs); the
    error names it; a regular file over it is read all the same."""
    source = write(tmp_path, "a.yaml", pod_yaml("a") + "#" * 2000 + "\n")

    endless = run("plan", "--max-bytes", "1000", "/dev/zero")
    big_file = run("plan", "--max-bytes", "1000", source, runtime=fake)
    negative = run("plan", "--max-bytes", "-1", source)

    assert 1 == endless.code
    assert "/dev/zero: larger than the limit of 1000 bytes (raise it with --max-bytes)" in (
        endless.err
    )
    assert (0, "Plan: 2 to create.") == (big_file.code, big_file.out.strip().splitlines()[-1])
    assert 1 == negative.code


def test_plan_json_is_streamed(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plan --json writes its JSON as it is encoded, pod by pod, never as one string of
    the whole plan; the text is plan_to_json's, byte for byte."""
    from podsync.actions import _json as _plan_json

    sources = [write(tmp_path, f"{name}.yaml", pod_yaml(name)) for name in ("a", "b", "c")]
    writes: list[str] = []

    class Recording(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return super().write(text)

    whole = _plan_json.plan_to_json
    monkeypatch.setattr(sys, "stdout", Recording())

    result = run("plan", "--json", *sources, runtime=fake)

    text = "".join(writes)
    assert 0 == result.code
    assert whole(podsync.plan_from_json(text)) == text
    assert max(map(len, writes)) < len(text) / 3


def test_a_claims_volume_in_a_dry_run_and_after_down(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """``podsync plan`` shows the claim's volume create, with its reason, and creates
    nothing; ``apply`` creates it, labelled; ``down`` removes the pod, not the volume."""
    source = write(
        tmp_path,
        "db.yaml",
        pod_yaml("db")
        + "      volumeMounts: [{name: store, mountPath: /data}]\n"
        + "  volumes:\n    - {name: store, persistentVolumeClaim: {claimName: db-data}}\n",
    )

    planned = run("plan", source, runtime=fake)
    untouched = mutations(fake)
    applied = run("apply", source, runtime=fake)
    down = run("down", source, runtime=fake)

    assert (0, 0, 0) == (planned.code, applied.code, down.code), applied.err
    assert [] == untouched
    assert (
        "  create volume podsync_default_db-data: claim default/db-data: first use  "
        "[claim-first-use]"
    ) in planned.out.splitlines()
    assert "Plan: 2 to create, 1 to create volume." in planned.out
    assert [] == [c for c in fake.containers if LABEL_POD_UID in c.labels]
    assert ["podsync_default_db-data"] == [v.name for v in fake.volumes]
    assert "claim" == fake.volumes[0].labels["io.podsync.volume.kind"]


def test_only_version_reads_the_package_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the installed version costs every command its time (issue 16: a one-pod
    apply is measured against two ``docker run``): only ``--version`` looks it up."""
    import importlib.metadata

    from podsync.cli._args import build_parser

    looked_up: list[str] = []
    monkeypatch.setattr(importlib.metadata, "version", lambda name: looked_up.append(name) or "9")

    build_parser().parse_args(["plan", "pods.yaml"])

    assert looked_up == []


def test_main_and_the_library_leave_the_garbage_collector_alone(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """``cli.main`` is called in-process by embedders and tests, and ``load_pods`` and
    ``plan`` by libraries: none of them switches the collector off or changes its
    thresholds (only the ``podsync`` program's own entry does, in its own process)."""
    import gc

    before = (gc.isenabled(), gc.get_threshold())
    pods = tmp_path / "pods.yaml"
    pods.write_text(pod_yaml("web"))

    planned = run("plan", "--json", str(pods), runtime=fake)
    applied = run("apply", str(pods), runtime=fake)
    loaded = podsync.load_pods([str(pods)])

    assert (0, 0, 1) == (planned.code, applied.code, len(loaded))
    assert before == (gc.isenabled(), gc.get_threshold())


def test_the_podsync_program_collects_full_generations_rarely() -> None:
    """The ``podsync`` program (its console script and ``python -m podsync``) builds a
    large, long-lived heap with next to no cyclic garbage: its own process runs full
    collections ten times more rarely than Python's default (issue 16). In-process
    callers of ``cli.main`` keep their settings (test above)."""
    import configparser
    import subprocess

    probe = (
        "import gc, sys\n"
        "import podsync.__main__ as entry\n"
        "before = gc.get_threshold()\n"
        "entry.tune_collector()\n"
        "print(before, gc.get_threshold(), gc.isenabled())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split(") (")
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")

    assert "podsync = podsync.__main__:run" in config["options.entry_points"]["console_scripts"]
    assert ["(700, 10, 10", "700, 10, 100) True"] == [part.strip() for part in out]
