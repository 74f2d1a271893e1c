"""``podsync status``, ``describe``, ``logs``, ``exec`` and ``events`` without an engine:
``podsync.cli.main`` with a ``FakeRuntime``. The same commands on a real engine are in
``tests/engine/test_operate.py``."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

import podsync
from podsync import cli
from podsync.testing import FakeClock, FakeRuntime

IMAGE = "app:1"
PAUSE = "pause:1"
T0 = 1_000_000_000.0


@attrs.frozen
class Result:
    code: int
    out: str
    err: str


def pod_yaml(
    name: str, *containers: str, restart: str = "Always", namespace: str = "default"
) -> str:
    listed = "".join(
        f"""
    - name: {c}
      image: {IMAGE}
      terminationMessagePolicy: FallbackToLogsOnError"""
        for c in containers or ("app",)
    )
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  restartPolicy: {restart}
  containers:{listed}
"""


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0, step=0.001)


@pytest.fixture
def fake(clock: FakeClock) -> FakeRuntime:
    return FakeRuntime(images=[IMAGE, PAUSE], clock=clock)


@pytest.fixture
def run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, clock: FakeClock, fake: FakeRuntime
) -> Callable[..., Result]:
    def runner(*argv: str, sleep: Callable[[float], None] | None = None) -> Result:
        args = list(argv)
        if args[0] in ("apply", "status", "describe", "down"):
            args[1:1] = ["--root-dir", str(tmp_path / "root")]
        if args[0] in ("apply", "status"):
            args[1:1] = ["--network-image", PAUSE, "--network-mode", "none"]
        code = cli.main(
            args, runtime_factory=lambda host: fake, sleep=sleep or clock.advance, clock=clock
        )
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return Result(code, captured.out, captured.err)

    return runner


@pytest.fixture
def pods(tmp_path: Path) -> Path:
    """A web pod of two containers and a one-container job, in one directory."""
    directory = tmp_path / "pods"
    directory.mkdir()
    (directory / "web.yaml").write_text(pod_yaml("web", "app", "side"))
    (directory / "job.yaml").write_text(pod_yaml("job", restart="Never"))
    return directory


def container(fake: FakeRuntime, pod: str, name: str) -> podsync.ObservedContainer:
    found = [
        c
        for c in fake.containers
        if c.labels.get("io.podsync.pod.name") == pod
        and c.labels.get("io.podsync.container.name") == name
    ]
    return max(found, key=lambda c: c.created)


# --- status ----------------------------------------------------------------------------


def test_status_table(run: Callable[..., Result], fake: FakeRuntime, pods: Path) -> None:
    """A row per pod, as kubectl get pods: ready n/m, phase, restarts, age, reason."""
    assert 0 == run("apply", str(pods)).code
    fake.exit(container(fake, "job", "app").id, 0)
    fake.clock.advance(125)  # type: ignore[attr-defined]

    result = run("status", str(pods))

    assert 0 == result.code
    lines = result.out.splitlines()
    assert ["POD", "READY", "PHASE", "RESTARTS", "AGE", "REASON"] == lines[0].split()
    assert ["default/job", "0/1", "Succeeded", "0", "2m5s", "Completed"] == lines[1].split()
    assert ["default/web", "2/2", "Running", "0", "2m5s"] == lines[2].split()


def test_status_json(run: Callable[..., Result], fake: FakeRuntime, pods: Path) -> None:
    assert 0 == run("apply", str(pods)).code

    document = json.loads(run("status", "--json", str(pods)).out)

    assert 1 == document["format_version"]
    assert ["default/job", "default/web"] == [p["pod"] for p in document["pods"]]
    assert [2, 2] == document["pods"][1]["ready"]


def test_status_without_sources_shows_every_pod_podsync_runs(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, tmp_path: Path
) -> None:
    assert 0 == run("apply", str(pods)).code
    fake.exit(container(fake, "web", "side").id, 1)

    result = run("status")

    rows = [line.split() for line in result.out.splitlines()[1:]]
    assert [
        ["default/job", "1/1", "Running", "0", "0s"],
        ["default/web", "1/2", "Running", "0", "0s", "Error"],
    ] == rows


def test_status_shows_orphaned_pods(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, tmp_path: Path
) -> None:
    assert 0 == run("apply", str(pods)).code

    result = run("status", str(pods / "web.yaml"))

    assert ["default/job", "1/1", "Running", "0", "0s", "Orphaned"] == result.out.splitlines()[
        1
    ].split()


def test_status_after_a_crash_loop(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    """A container that keeps failing: CrashLoopBackOff, with its restarts."""
    web = str(pods / "web.yaml")
    assert 0 == run("apply", web).code
    for _ in range(2):
        fake.exit(container(fake, "web", "app").id, 1)
        fake.clock.advance(30)  # type: ignore[attr-defined]
        assert 0 == run("apply", web).code
    fake.exit(container(fake, "web", "app").id, 1)

    result = run("status", web)

    assert ["default/web", "1/2", "Running", "2"] == result.out.splitlines()[1].split()[:4]
    assert "CrashLoopBackOff" == result.out.splitlines()[1].split()[-1]


def test_status_watch_prints_changes(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, clock: FakeClock
) -> None:
    """-w prints the table, then a row for each pod whose row changed, until
    interrupted (130)."""
    web = str(pods / "web.yaml")
    assert 0 == run("apply", web).code
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 1:
            fake.exit(container(fake, "web", "app").id, 2)
        if len(sleeps) == 3:
            raise KeyboardInterrupt
        clock.advance(seconds)

    result = run("status", "-w", web, sleep=sleep)

    assert 130 == result.code
    rows = result.out.splitlines()
    assert 3 == len(rows)  # the header, the first row, the row after the exit
    assert "Error" == rows[2].split()[-1]


# --- lookup ----------------------------------------------------------------------------


def test_lookup_errors_name_the_pod_and_the_candidates(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, tmp_path: Path
) -> None:
    assert 0 == run("apply", str(pods)).code
    other = tmp_path / "other.yaml"
    other.write_text(pod_yaml("web", namespace="team"))
    assert 0 == run("apply", "--no-delete", str(other)).code

    missing = run("logs", "nope")
    ambiguous = run("logs", "web")
    by_key = run("logs", "team/web")

    assert 1 == missing.code
    assert (
        'podsync: error: no pod "nope" on the engine; podsync runs: default/job, default/web, '
        "team/web" in missing.err
    )
    assert 1 == ambiguous.code
    assert (
        'pod "web" is ambiguous: default/web (web.default.file), team/web (web.team.file); '
        "give namespace/name or the full name" in ambiguous.err
    )
    assert 0 == by_key.code


def test_a_pod_of_several_containers_needs_c(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    assert 0 == run("apply", str(pods)).code

    result = run("logs", "web")

    assert 1 == result.code
    assert "pod default/web has 2 containers: app, side; choose one with -c" in result.err
    assert (
        'no container "nope" in pod default/web; it has: app, side'
        in run("logs", "web", "-c", "nope").err
    )


# --- logs ------------------------------------------------------------------------------


def test_logs_keep_the_streams_apart(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    assert 0 == run("apply", str(pods)).code
    app = container(fake, "job", "app").id
    for i in range(3):
        fake.write_log(app, f"out {i}\n")
    fake.write_log(app, "bad\n", "stderr")

    everything = run("logs", "job")
    tail = run("logs", "default/job", "--tail", "2")
    stamped = run("logs", "job", "--tail", "1", "--timestamps")

    assert (0, "out 0\nout 1\nout 2\n", "bad\n") == attrs.astuple(everything)
    assert ("out 2\n", "bad\n") == (tail.out, tail.err)
    assert stamped.err.startswith("2001-09-09T01:46:40.")
    assert stamped.err.endswith("Z bad\n")


def test_logs_since(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, clock: FakeClock
) -> None:
    assert 0 == run("apply", str(pods)).code
    app = container(fake, "job", "app").id
    fake.write_log(app, "old\n")
    clock.advance(3600)
    fake.write_log(app, "new\n")

    assert "new\n" == run("logs", "job", "--since", "10m").out
    assert "old\nnew\n" == run("logs", "job", "--since", "2h").out
    assert "podsync logs: error: argument --since" in run("logs", "job", "--since", "ten").err


def test_logs_of_the_previous_instance(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, clock: FakeClock
) -> None:
    web = str(pods / "web.yaml")
    assert 0 == run("apply", web).code
    first = container(fake, "web", "app").id
    fake.write_log(first, "first run\n")
    fake.exit(first, 1)
    assert 0 == run("apply", web).code
    fake.write_log(container(fake, "web", "app").id, "second run\n")

    assert "first run\n" == run("logs", "web", "-c", "app", "--previous").out
    assert "second run\n" == run("logs", "web", "-c", "app").out
    none = run("logs", "web", "-c", "side", "--previous")
    assert 1 == none.code
    assert "no previous instance of default/web/side" in none.err


def test_logs_follow_ends_when_the_container_stops(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    assert 0 == run("apply", str(pods)).code
    app = container(fake, "job", "app").id
    fake.write_log(app, "one\n")
    fake.exit(app, 0)

    assert (0, "one\n") == attrs.astuple(run("logs", "-f", "job"))[:2]


# --- exec ------------------------------------------------------------------------------


def test_exec_passes_the_exit_code_and_stdin(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert 0 == run("apply", str(pods)).code

    def cat(stdin: bytes, output: Any) -> int:
        output("stdout", stdin.upper())
        output("stderr", b"warn\n")
        return 7

    fake.set_exec_handler(["cat"], cat)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"hello\n")))

    result = run("exec", "-i", "job", "--", "cat")

    assert (7, "HELLO\n", "warn\n") == attrs.astuple(result)
    call = fake.calls[-1]
    assert ("exec_attached", ("cat",), False) == (call.name, call.args[1], call.args[2])


def test_exec_in_a_stopped_container_is_an_error(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    assert 0 == run("apply", str(pods)).code
    fake.exit(container(fake, "job", "app").id, 0)

    result = run("exec", "job", "--", "true")

    assert 1 == result.code
    assert "is not running" in result.err


def test_exec_needs_a_command(run: Callable[..., Result], fake: FakeRuntime, pods: Path) -> None:
    assert 1 == run("exec", "job").code


# --- describe --------------------------------------------------------------------------


def test_describe(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path, clock: FakeClock
) -> None:
    web = str(pods / "web.yaml")
    assert 0 == run("apply", web).code
    app = container(fake, "web", "app").id
    fake.write_log(app, "dying words\n", "stderr")
    fake.exit(app, 1)

    result = run("describe", "web", "-f", web)

    assert 0 == result.code
    text = result.out
    for expected in (
        "Name:        web",
        "Namespace:   default",
        "Phase:       Running",
        "  app:",
        "    State:          Terminated (Error, exit code 1)",
        "    Message:        dying words",
        "    Image:          app:1",
        "  ContainersReady  False  ContainersNotReady",
        "Next sync:",
        "Events:",
    ):
        assert expected in text
    assert " die " in text
    assert "exit code 1" in text


# --- events ----------------------------------------------------------------------------


def test_events_of_podsyncs_pods(run: Callable[..., Result], fake: FakeRuntime, pods: Path) -> None:
    assert 0 == run("apply", str(pods / "job.yaml")).code
    fake.add_container(podsync.ObservedContainer("foreign", "other", IMAGE, running=True))
    fake.exit(container(fake, "job", "app").id, 3)

    lines = run("events").out.splitlines()
    records = [json.loads(line) for line in run("events", "--json").out.splitlines()]

    assert any(" default/job app die exit code 3" in line for line in lines)
    assert all("other" not in line for line in lines)
    expected = {"pod": "default/job", "container": "app", "action": "die", "exit_code": 3}
    assert expected.items() <= records[-1].items()
    assert ["create", "start", "create", "start", "die"] == [r["action"] for r in records]


def test_exec_options_after_the_pod_and_the_commands_own(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    """Options after POD are podsync's; after ``--`` everything is the command's."""
    assert 0 == run("apply", str(pods)).code
    fake.set_exec_result(["ls", "-c", "-i"], 3, b"listed\n")

    result = run("exec", "web", "-c", "app", "--", "ls", "-c", "-i")

    assert (3, "listed\n") == (result.code, result.out)
    call = fake.calls[-1]
    assert (container(fake, "web", "app").id, ("ls", "-c", "-i")) == call.args[:2]


def test_describe_a_pod_not_created_yet(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    """A pod of the files that is not on the engine: Pending, what the next sync would
    create, no events."""
    result = run("describe", "job", "-f", str(pods))

    assert 0 == result.code, result.err
    assert "Phase:       Pending" in result.out
    assert "    State:          Waiting (ContainerCreating)" in result.out
    assert "create default/job/app: no container yet" in result.out
    assert result.out.endswith("Events:\n  <none>\n")


def test_status_probe_runs_readiness_probes(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A readiness probe is run only with --probe (status changes nothing and runs
    nothing in containers by default): without a verdict the container is not ready."""
    source = tmp_path / "ready.yaml"
    source.write_text(
        pod_yaml("ready") + "      readinessProbe:\n        exec: {command: [/bin/check]}\n"
    )
    assert 0 == run("apply", "--no-probe", str(source)).code
    fake.clear_calls()

    fake.set_exec_result(["/bin/check"], 0)
    unprobed = run("status", str(source))
    assert "exec" not in fake.call_names()
    passing = run("status", "--probe", str(source))
    fake.set_exec_result(["/bin/check"], 1)
    failing = run("status", "--probe", str(source))

    assert "0/1" == unprobed.out.splitlines()[1].split()[1]
    assert "1/1" == passing.out.splitlines()[1].split()[1]
    assert "0/1" == failing.out.splitlines()[1].split()[1]
    assert 1 == run("status", "--probe").code


def test_describe_an_orphaned_pod(
    run: Callable[..., Result], fake: FakeRuntime, pods: Path
) -> None:
    assert 0 == run("apply", str(pods)).code

    result = run("describe", "job", "-f", str(pods / "web.yaml"))

    assert 0 == result.code, result.err
    assert "Orphaned:    podsync runs it, but the pod files do not describe it" in result.out


def test_a_pod_of_one_app_container_and_init_containers_defaults_to_the_app(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """As ``kubectl logs``: init containers do not make a pod ambiguous; the one app
    container is taken, and stderr says so."""
    pod = tmp_path / "init.yaml"
    pod.write_text(
        pod_yaml("batch", "app") + f"  initContainers:\n  - name: prepare\n    image: {IMAGE}\n"
    )
    assert 0 == run("apply", str(pod)).code
    prepare = container(fake, "batch", "prepare")
    fake.exit(prepare.id, 0)
    assert 0 == run("apply", str(pod)).code

    result = run("logs", "batch")

    assert 0 == result.code, result.err
    assert 'Defaulted container "app" out of: app, prepare (init)' in result.err


# --- termination messages without the pod file (issue 30) ------------------------------

RECORDED = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: batch}}
spec:
  restartPolicy: Never
  initContainers:
  - name: prepare
    image: {IMAGE}
    terminationMessagePath: /tmp/prepared
  containers:
  - name: app
    image: {IMAGE}
    terminationMessagePath: /var/run/done
    terminationMessagePolicy: FallbackToLogsOnError
"""


@pytest.fixture
def batch(run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path) -> Path:
    """A pod whose init container said why it is done and whose app container runs;
    each writes its termination message at a path of its own, and the app falls back
    to its log."""
    source = tmp_path / "batch.yaml"
    source.write_text(RECORDED)
    assert 0 == run("apply", str(source)).code
    prepare = container(fake, "batch", "prepare").id
    fake.write_container_file(prepare, "/tmp/prepared", b"schema 7 ready\n")
    fake.exit(prepare, 0)
    assert 0 == run("apply", str(source)).code
    return source


def messages(document: dict[str, Any], kind: str = "containers") -> dict[str, str]:
    (pod,) = document["pods"]
    return {c["name"]: c["termination_message"] for c in pod[kind]}


def test_status_and_describe_without_the_pod_file_show_the_message(
    run: Callable[..., Result], fake: FakeRuntime, batch: Path
) -> None:
    """The path and the policy are the container's own record: no -f, no SOURCE."""
    app = container(fake, "batch", "app").id
    fake.write_container_file(app, "/var/run/done", b"disk full\n")
    fake.exit(app, 1)

    document = json.loads(run("status", "--json").out)
    described = run("describe", "batch")

    assert {"app": "disk full\n", "prepare": "schema 7 ready\n"} == messages(document)
    assert 0 == described.code, described.err
    assert "    Message:        disk full\n" in described.out
    assert "    Message:        schema 7 ready\n" in described.out


def test_without_the_pod_file_an_empty_file_falls_back_to_the_log(
    run: Callable[..., Result], fake: FakeRuntime, batch: Path
) -> None:
    app = container(fake, "batch", "app").id
    fake.write_log(app, "cannot reach db\n", "stderr")
    fake.exit(app, 1)

    document = json.loads(run("status", "--json").out)
    described = run("describe", "batch")

    assert "cannot reach db\n" == messages(document)["app"]
    assert "    Message:        cannot reach db\n" in described.out


def test_with_the_pod_file_init_containers_show_their_messages_too(
    run: Callable[..., Result], fake: FakeRuntime, batch: Path
) -> None:
    app = container(fake, "batch", "app").id
    fake.write_log(app, "cannot reach db\n", "stderr")
    fake.exit(app, 1)

    document = json.loads(run("status", "--json", str(batch)).out)

    assert {"prepare": "schema 7 ready\n"} == messages(document, "init_containers")
    assert {"app": "cannot reach db\n"} == messages(document)
