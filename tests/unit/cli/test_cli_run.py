"""``podsync run``: the continuous loop on the command line, on FakeRuntime.

The command runs in the test's main thread until SIGTERM, which a helper thread sends
to the main thread once the pods run (the command blocks the signal and waits for it,
so no handler interrupts anything). The engine tests (``tests/engine/test_loop.py``)
run it in a subprocess against a real engine."""

from __future__ import annotations

import importlib.util
import json
import signal
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from podsync import cli
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_UID
from podsync.testing import FakeClock, FakeRuntime

PAUSE = "pause:1"
IMAGE = "app:1"
WAIT = 10.0

POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: {IMAGE}
"""


def running(fake: FakeRuntime) -> list[str]:
    return sorted(
        c.labels[LABEL_CONTAINER]
        for c in fake.containers
        if c.running and LABEL_POD_UID in c.labels
    )


def terminate_when(condition: Callable[[], bool]) -> threading.Thread:
    """A thread that sends SIGTERM to the main thread once ``condition`` holds (or
    after WAIT seconds)."""
    main = threading.main_thread().ident
    assert main is not None

    def watch() -> None:
        pause = threading.Event()
        for _ in range(int(WAIT / 0.01)):
            if condition():
                break
            pause.wait(0.01)
        signal.pthread_kill(main, signal.SIGTERM)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_run_keeps_the_pods_in_shape_until_sigterm_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(POD)
    clock = FakeClock(1_000_000.0, step=0)
    fake = FakeRuntime(images=[IMAGE, PAUSE], clock=clock)
    watcher = terminate_when(lambda: running(fake) == ["app", "net"])
    code = cli.main(
        [
            "run",
            str(pods),
            "--root-dir",
            str(tmp_path / "root"),
            "--network-image",
            PAUSE,
            "--sync-period",
            "1s",
            "--source-period",
            "500ms",
            "--gc-period",
            "1m",
            "--log-format",
            "json",
        ],
        runtime_factory=lambda host: fake,
        clock=clock,
    )
    watcher.join()
    captured = capsys.readouterr()
    assert code == 0, captured.err
    # The pods keep running: the kubelet does not stop pods when it exits.
    assert running(fake) == ["app", "net"]
    assert "stop" not in fake.call_names()
    lines = [json.loads(line) for line in captured.err.splitlines()]
    started = [r for r in lines if r["kind"] == "started"]
    assert sorted(r["container"] for r in started) == ["app", "net"]
    assert all(r["pod"] == "default/web" for r in started)
    assert lines[-1]["kind"] == "stopped"
    assert fake.closes == 1


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_run_logs_a_source_error_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text("kind: [\n")
    clock = FakeClock(1_000_000.0, step=0)
    fake = FakeRuntime(images=[IMAGE, PAUSE], clock=clock)
    watcher = terminate_when(lambda: "list" in fake.call_names())
    code = cli.main(
        ["run", str(pods), "--root-dir", str(tmp_path / "root")],
        runtime_factory=lambda host: fake,
        clock=clock,
    )
    watcher.join()
    err = capsys.readouterr().err
    assert code == 0
    errors = [line for line in err.splitlines() if "web.yaml" in line]
    assert len(errors) == 1
    assert errors[0].startswith("podsync: error: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run"], "SOURCE"),
        (["run", "-"], "standard input"),
        (["run", "pods/", "--sync-period", "0s"], "--sync-period"),
        (["run", "pods/", "--source-period", "soon"], "--source-period"),
        # Reporting: a bad --report-to names the flag, before the engine is asked.
        (["run", "pods/", "--report-to", "etcd://127.0.0.1:2379/registry"], "--report-to"),
        (["run", "pods/", "--report-to", "ftp://x/registry/hosts/a"], "--report-to"),
        (
            ["run", "pods/", "--report-to", "etcd://127.0.0.1:2379/registry/hosts/a/kubelet"],
            "--report-to: names no host's prefix",
        ),
        (
            ["run", "pods/", "--no-report", "--report-to", "etcd://h:1/registry/hosts/a"],
            "--report-to and --no-report",
        ),
        (["run", "pods/", "--report-ttl", "1"], "--report-ttl"),
        (["run", "pods/", "--event-ttl", "two days"], "--event-ttl"),
    ],
)
def test_run_usage_errors_exit_1(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_engine(host: str | None) -> FakeRuntime:
        raise AssertionError("the engine was contacted")

    code = cli.main(argv, runtime_factory=no_engine, clock=FakeClock())
    assert code == 1
    assert message in capsys.readouterr().err


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.real_clock
@pytest.mark.skipif(
    importlib.util.find_spec("podsync.loop._board") is None,
    reason="the status board is not merged yet",
)
def test_run_listen_serves_health_and_pods_on_loopback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(POD)
    fake = FakeRuntime(images=[IMAGE, PAUSE])
    port = free_port()
    answers: dict[str, tuple[int, bytes]] = {}

    def get(path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def served() -> bool:
        if running(fake) != ["app", "net"]:
            return False
        try:
            answers["/healthz"] = get("/healthz")
            answers["/pods"] = get("/pods")
        except OSError:
            return False
        return answers["/healthz"][0] == 200 and answers["/pods"][0] == 200

    watcher = terminate_when(served)
    code = cli.main(
        [
            *("run", str(pods), "--root-dir", str(tmp_path / "root")),
            *("--network-image", PAUSE, "--listen", f"127.0.0.1:{port}"),
        ],
        runtime_factory=lambda host: fake,
    )
    watcher.join()
    assert code == 0, capsys.readouterr().err
    assert answers["/healthz"][0] == 200
    assert b"default/web" in answers["/pods"][1]


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_a_second_signal_while_stopping_still_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    clock = FakeClock(1_000_000.0, step=0)
    fake = FakeRuntime(images=[IMAGE, PAUSE], clock=clock)
    main = threading.main_thread().ident
    assert main is not None

    def twice() -> None:
        pause = threading.Event()
        for _ in range(int(WAIT / 0.01)):
            if "list" in fake.call_names():
                break
            pause.wait(0.01)
        signal.pthread_kill(main, signal.SIGTERM)
        signal.pthread_kill(main, signal.SIGINT)

    watcher = threading.Thread(target=twice, daemon=True)
    watcher.start()
    code = cli.main(
        ["run", str(pods), "--root-dir", str(tmp_path / "root")],
        runtime_factory=lambda host: fake,
        clock=clock,
    )
    watcher.join()
    err = capsys.readouterr().err
    assert code == 0, err
    assert "interrupted" not in err
