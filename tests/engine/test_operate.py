"""Operating pods on the real engine: ``podsync logs`` (both streams, tail, follow that
ends when the container exits, the previous instance), ``exec`` (exit codes, stdin),
``status`` after a crash loop and after an OOM kill, termination messages with and
without the pod file, and ``events`` while a pod restarts. Pods use network mode
``none``; nothing connects to a container's address."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import docker
import pytest

import podsync
from podsync import cli
from tests.support import paths
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup
from tests.support.podman_records import oom_reason

REPO = paths.REPO


@attrs.frozen
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Callable[..., Result]:
    """``podsync ARGV`` in this process, on the engine at ``DOCKER_HOST``."""

    def runner(*argv: str) -> Result:
        args = list(argv)
        if args[0] in ("apply", "status", "describe"):
            args[1:1] = ["--root-dir", str(tmp_path / "root")]
            args[1:1] = ["--network-mode", "none", "--network-image", PAUSE_IMAGE]
        if args[0] == "apply":
            args[1:1] = ["--no-delete", "--stop-timeout", "1"]
        code = cli.main(args)
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return Result(code, captured.out, captured.err)

    return runner


@pytest.fixture
def pod_file(tmp_path: Path, cleanup: Cleanup) -> Callable[..., tuple[str, podsync.Pod]]:
    suffix = uuid.uuid4().hex[:8]

    def make(base: str, script: str, *, restart: str = "Always", extra: str = "") -> Any:
        name = f"op-{base}-{suffix}"
        path = tmp_path / f"{base}.yaml"
        path.write_text(
            f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: {restart}
  containers:
    - name: app
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: ["/bin/sh", "-c", {json.dumps(script)}]{extra}
  volumes: [{{name: data, emptyDir: {{}}}}]
"""
        )
        (pod,) = podsync.load_pods([str(path)])
        cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
        return str(path), pod

    return make


def app_instances(engine: docker.DockerClient, pod: podsync.Pod) -> list[dict[str, Any]]:
    """The pod's app containers, newest first."""
    found: list[dict[str, Any]] = engine.api.containers(
        all=True,
        filters={
            "label": [f"{podsync.labels.LABEL_POD_UID}={pod.uid}", "io.podsync.container.name=app"]
        },
    )
    return sorted(found, key=lambda c: c["Created"], reverse=True)


def wait_exit(engine: docker.DockerClient, pod: podsync.Pod, count: int) -> None:
    """Until ``count`` instances of the app container have exited."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        exited = [c for c in app_instances(engine, pod) if c["State"] == "exited"]
        if len(exited) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"{count} instance(s) of {pod.key}/app did not exit in time")


def test_logs_both_streams_tail_and_follow(
    engine: docker.DockerClient, run: Callable[..., Result], pod_file: Any
) -> None:
    """stdout to stdout, stderr to stderr; --tail counts the lines of both; -f prints
    what comes and ends when the container exits."""
    source, pod = pod_file(
        "logs", "echo out1; echo err1 >&2; sleep 2; echo out2; exit 3", restart="Never"
    )
    assert 0 == run("apply", source).code

    followed = run("logs", "-f", pod.name)
    everything = run("logs", pod.key)
    tail = run("logs", pod.name, "--tail", "1", "--timestamps")

    assert (0, "out1\nout2\n", "err1\n") == attrs.astuple(followed)
    assert ("out1\nout2\n", "err1\n") == (everything.out, everything.err)
    assert tail.out.endswith("Z out2\n")
    assert "" == tail.err
    assert "exited" == app_instances(engine, pod)[0]["State"]


def test_previous_logs_and_status_after_a_crash_loop(
    engine: docker.DockerClient, run: Callable[..., Result], pod_file: Any
) -> None:
    """A container that fails each run: --previous prints the run before the current
    one; status shows CrashLoopBackOff with the restarts; events show each start and
    die."""
    script = "echo x >> /data/runs; echo run $(wc -l < /data/runs); exit 1"
    extra = "\n      volumeMounts: [{name: data, mountPath: /data}]"
    source, pod = pod_file("crash", script, extra=extra)
    assert 0 == run("apply", source).code
    wait_exit(engine, pod, 1)
    assert 0 == run("apply", source).code
    wait_exit(engine, pod, 2)

    previous = run("logs", pod.name, "--previous")
    current = run("logs", pod.name)
    status = run("status", source)
    described = run("describe", pod.name, "-f", source)
    events = [json.loads(line) for line in run("events", "--json").out.splitlines()]

    assert ("run 1\n", "run 2\n") == (previous.out, current.out)
    # Other pods podsync runs on the engine are listed too (as orphaned).
    (row,) = [line.split() for line in status.out.splitlines() if line.startswith(pod.key)]
    assert [pod.key, "0/1", "Running", "1"] == row[:4]
    assert "CrashLoopBackOff" == row[-1]
    assert "State:          Waiting (CrashLoopBackOff)" in described.out
    assert "Last State:     Terminated (Error, exit code 1)" in described.out
    mine = [
        (e["container"], e["action"], e["exit_code"]) for e in events if e["pod_uid"] == pod.uid
    ]
    app = [m for m in mine if m[0] == "app" and m[1] in ("start", "die")]
    assert [("app", "start", None), ("app", "die", 1)] * 2 == app
    assert ("net", "start", None) in mine


def test_status_of_an_oom_killed_container(
    engine: docker.DockerClient, engine_name: str, run: Callable[..., Result], pod_file: Any
) -> None:
    extra = "\n      resources: {limits: {memory: 8Mi}}"
    source, pod = pod_file("oom", "tail /dev/zero", restart="Never", extra=extra)
    assert 0 == run("apply", source).code
    wait_exit(engine, pod, 1)

    document = json.loads(run("status", "--json", source).out)

    (entry,) = [p for p in document["pods"] if p["uid"] == pod.uid]
    (app,) = entry["containers"]
    # podman does not report the OOM kill (oom_reason): the run shows as an Error there
    reason = oom_reason(engine_name)
    assert ("Failed", reason, 137) == (entry["phase"], app["reason"], app["exit_code"])
    # kubectl's STATUS column, beside the pod's own reason (none) and podsync's verdict
    assert (reason, "", "failed") == (entry["display_status"], entry["reason"], entry["state"])


def test_status_shows_what_the_container_wrote_at_dev_termination_log(
    engine: docker.DockerClient, run: Callable[..., Result], pod_file: Any
) -> None:
    """terminationMessagePath defaults to /dev/termination-log (SetDefaults_Container,
    issue 27): a container whose pod gives no path writes its reason there, as a
    Kubernetes container does, and status shows it as the run's message once it has
    exited (the file is in the pod's state volume, read back through the engine)."""
    script = "echo 'done: 3 rows' > /dev/termination-log; exit 2"
    source, pod = pod_file("message", script, restart="Never")
    assert 0 == run("apply", source).code
    wait_exit(engine, pod, 1)

    document = json.loads(run("status", "--json", source).out)

    (entry,) = [p for p in document["pods"] if p["uid"] == pod.uid]
    (app,) = entry["containers"]
    assert ("Failed", 2, "done: 3 rows\n") == (
        entry["phase"],
        app["exit_code"],
        app["termination_message"],
    )


def test_status_and_describe_show_messages_without_the_pod_file(
    engine: docker.DockerClient, run: Callable[..., Result], pod_file: Any
) -> None:
    """Issue 30: a container records where its termination message is (its spec label)
    and its policy (a label of its own), so status and describe read the message
    through the engine without -f or SOURCE: the file at a path of the pod's own, and
    under FallbackToLogsOnError, the log's tail when the file is empty."""
    fields = (
        "\n      terminationMessagePath: /var/run/done"
        "\n      terminationMessagePolicy: FallbackToLogsOnError"
    )
    wrote, wrote_pod = pod_file(
        "wrote", "echo 'no space left' > /var/run/done; exit 1", restart="Never", extra=fields
    )
    logged, logged_pod = pod_file(
        "logged", "echo 'cannot reach db' >&2; exit 1", restart="Never", extra=fields
    )
    assert 0 == run("apply", wrote).code
    assert 0 == run("apply", logged).code
    wait_exit(engine, wrote_pod, 1)
    wait_exit(engine, logged_pod, 1)

    document = json.loads(run("status", "--json").out)
    described = run("describe", wrote_pod.key)

    said = {
        p["uid"]: [(c["name"], c["exit_code"], c["termination_message"]) for c in p["containers"]]
        for p in document["pods"]
    }
    assert [("app", 1, "no space left\n")] == said[wrote_pod.uid]
    assert [("app", 1, "cannot reach db\n")] == said[logged_pod.uid]
    assert 0 == described.code, described.err
    assert "    Message:        no space left\n" in described.out


def test_exec_exit_codes_and_stdin(
    engine: docker.DockerClient, run: Callable[..., Result], pod_file: Any
) -> None:
    """exec passes the command's exit code through and standard input on (-i), with
    no shell of its own; through the real command, in a subprocess."""
    source, pod = pod_file("exec", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done")
    assert 0 == run("apply", source).code

    def podsync_exec(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "podsync", "exec", *argv],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
            check=False,
        )

    cat = podsync_exec(
        "-i", pod.name, "--", "/bin/sh", "-c", "cat; echo done >&2; exit 4", stdin="hi\n"
    )
    false = podsync_exec(pod.name, "--", "false")
    missing = podsync_exec(pod.name, "--", "/no/such/command")

    assert (4, "hi\n", "done\n") == (cat.returncode, cat.stdout, cat.stderr)
    assert (1, "") == (false.returncode, false.stdout)
    assert missing.returncode in (126, 127)
