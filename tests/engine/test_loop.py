"""``podsync run`` against the real engine, the loop in a subprocess.

Each test runs ``podsync run`` (``python -m tests.support.loop_runner``: the real command, on a
view of the engine holding only this test's pod namespace, so that its deletions touch
nothing of other test sessions) with short periods, changes the pod files, the HTTP
source or the containers, and watches the engine and the JSON log lines.

Network rule (``tests/support/engine.py``): network mode ``none``; the HTTP source is a server
on the loopback in this process. Nothing is pulled.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from podsync.labels import LABEL_CONTAINER, LABEL_POD_NAME, LABEL_POD_NAMESPACE
from tests.engine.test_faults import (  # the engine-restart test's gate and helpers
    _dockerd_pid,
    _start_dockerd,
    _wait_for_engine,
    restartable_engine,
)
from tests.support import paths
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

__all__ = ["restartable_engine"]  # a fixture, imported to be used here

REPO = paths.REPO
# A shell as PID 1 that exits at once on SIGTERM: stops take no grace period.
SLEEPER = '["/bin/sh", "-c", "trap \'exit 0\' TERM; while :; do sleep 1 & wait $!; done"]'
# How long a test waits for the loop to act, at most: generous for a loaded machine.
PATIENCE = 40.0


def pod_yaml(
    name: str, namespace: str, *, side_image: str = TEST_IMAGE, side_env: str = "a"
) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: {SLEEPER}
  - name: side
    image: {side_image}
    imagePullPolicy: Never
    command: {SLEEPER}
    env: [{{name: VERSION, value: "{side_env}"}}]
"""


class Loop:
    """A ``podsync run`` subprocess and its JSON log lines."""

    def __init__(self, tmp_path: Path, namespace: str, sources: list[str], *extra: str) -> None:
        self.log_path = tmp_path / f"loop-{uuid.uuid4().hex[:6]}.log"
        self.log = self.log_path.open("w")
        argv = [
            sys.executable,
            "-m",
            "tests.support.loop_runner",
            namespace,
            "run",
            "--root-dir",
            str(tmp_path / "root"),
            "--network-mode",
            "none",
            "--network-image",
            PAUSE_IMAGE,
            "--stop-timeout",
            "1",
            "--log-format",
            "json",
            *extra,
            *sources,
        ]
        self.process = subprocess.Popen(
            argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=self.log, env=dict(os.environ)
        )

    def lines(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log_path.read_text().splitlines():
            assert "Traceback" not in line
            out.append(json.loads(line))
        return out

    def terminate(self, timeout: float = 10.0) -> tuple[int, float]:
        """SIGTERM; the exit code and the seconds it took."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        return code, time.monotonic() - started

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.log.close()


@pytest.fixture
def namespace(cleanup: Cleanup) -> str:
    name = f"loop-{uuid.uuid4().hex[:8]}"
    cleanup.add_label(f"{LABEL_POD_NAMESPACE}={name}")
    return name


@pytest.fixture
def start_loop(tmp_path: Path, namespace: str) -> Iterator[Callable[..., Loop]]:
    loops: list[Loop] = []

    def start(sources: list[str], *extra: str) -> Loop:
        loop = Loop(tmp_path, namespace, sources, *extra)
        loops.append(loop)
        return loop

    yield start
    for loop in loops:
        loop.close()


def eventually(
    condition: Callable[[], Any], timeout: float = PATIENCE, log: Loop | None = None
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            lines = "\n".join(map(str, log.lines())) if log is not None else ""
            raise AssertionError(f"not within {timeout:g}s\n{lines}")
        time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def get(port: int, path: str) -> tuple[int, bytes] | None:
    """The status and body of GET ``path`` on the loopback; None when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return None


def running(engine: docker.DockerClient, namespace: str) -> dict[tuple[str, str], str]:
    """(pod, container) -> container id, of the running containers of the namespace."""
    found = engine.api.containers(filters={"label": f"{LABEL_POD_NAMESPACE}={namespace}"})
    return {(c["Labels"][LABEL_POD_NAME], c["Labels"][LABEL_CONTAINER]): c["Id"] for c in found}


def test_the_loop_follows_the_pod_files(
    engine: docker.DockerClient, tmp_path: Path, namespace: str, start_loop: Callable[..., Loop]
) -> None:
    """Add a pod file: its pod runs within a source period; edit it: only the changed
    container is replaced; break it: the pod is untouched and the error logged at each poll;
    fix it: back in sync; remove it: the pod is stopped. SIGTERM: exit 0 at once, the
    pods that remain keep running."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "keep.yaml").write_text(pod_yaml("keep", namespace))
    loop = start_loop([str(pods)], "--sync-period", "30s", "--source-period", "500ms")
    eventually(lambda: len(running(engine, namespace)) == 3)

    web = pods / "web.yaml"
    web.write_text(pod_yaml("web", namespace))
    before = eventually(lambda: (found := running(engine, namespace)) and len(found) == 6 and found)

    web.write_text(pod_yaml("web", namespace, side_env="b"))

    def side_replaced() -> dict[tuple[str, str], str] | None:
        found = running(engine, namespace)
        side = found.get(("web", "side"))
        return found if side is not None and side != before[("web", "side")] else None

    after = eventually(side_replaced)
    assert after[("web", "app")] == before[("web", "app")]
    assert after[("web", "net")] == before[("web", "net")]
    assert after[("keep", "app")] == before[("keep", "app")]

    web.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: web\n")
    errors = eventually(lambda: [r for r in loop.lines() if r["kind"] == "error"])
    assert "web.yaml" in errors[0]["message"]
    time.sleep(1.5)  # three more polls of the broken file
    assert running(engine, namespace) == after
    # Said again until fixed (the kubelet's file source logs it at each pass).
    assert len([r for r in loop.lines() if r["kind"] == "error"]) >= 2

    web.write_text(pod_yaml("web", namespace, side_env="c"))
    eventually(
        lambda: (
            running(engine, namespace).get(("web", "side")) not in (None, after[("web", "side")])
        )
    )
    assert any(r["kind"] == "source-ok" for r in loop.lines())

    web.unlink()
    eventually(
        lambda: (
            set(running(engine, namespace)) == {("keep", "app"), ("keep", "side"), ("keep", "net")}
        )
    )

    code, seconds = loop.terminate()
    assert code == 0
    assert seconds < 5
    assert len(running(engine, namespace)) == 3
    assert loop.lines()[-1]["kind"] == "stopped"


def test_a_stray_file_beside_pod_files_stops_nothing_but_itself(
    engine: docker.DockerClient, tmp_path: Path, namespace: str, start_loop: Callable[..., Loop]
) -> None:
    """Issue 27, as measured: a NOTES.txt beside two pod files in the watched directory
    started no pod at all. Now both pods run, and the loop names the file."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "a.yaml").write_text(pod_yaml("a", namespace))
    (pods / "b.yaml").write_text(pod_yaml("b", namespace))
    (pods / "NOTES.txt").write_text("Notes: remember: restart b\n  - on Mondays\n")

    loop = start_loop([str(pods)], "--sync-period", "30s", "--source-period", "500ms")

    eventually(lambda: len(running(engine, namespace)) == 6, log=loop)
    errors = [r for r in loop.lines() if r["kind"] == "error"]
    assert errors
    assert errors[0]["message"].startswith(f"{pods / 'NOTES.txt'}: invalid YAML at line 1")


class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "ok"  # ok, error, hang
    body = b""
    release = threading.Event()

    def do_GET(self) -> None:
        cls = type(self)
        if cls.mode == "hang":
            cls.release.wait(30)
            return
        if cls.mode == "error":
            self.send_error(500, "broken")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(cls.body)))
        self.end_headers()
        self.wfile.write(cls.body)

    def log_message(self, *args: Any) -> None:
        pass


def test_an_http_source_that_fails_or_hangs_keeps_its_pods(
    engine: docker.DockerClient, namespace: str, start_loop: Callable[..., Loop]
) -> None:
    handler = type("Handler", (_Handler,), {"release": threading.Event()})
    handler.body = pod_yaml("web", namespace).encode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/pods"
    try:
        loop = start_loop(
            [url], "--sync-period", "1s", "--source-period", "500ms", "--max-bytes", "100000"
        )
        ids = eventually(
            lambda: (found := running(engine, namespace)) and len(found) == 3 and found
        )
        handler.mode = "error"
        eventually(lambda: any("HTTP status 500" in r["message"] for r in loop.lines()))
        time.sleep(2)  # two sync periods with the source in error
        assert running(engine, namespace) == ids
        handler.mode = "hang"
        time.sleep(3)
        assert running(engine, namespace) == ids
        handler.mode = "ok"
        handler.release.set()
        code, _ = loop.terminate()
        assert code == 0
    finally:
        handler.release.set()
        server.shutdown()
        server.server_close()
    assert running(engine, namespace) == ids


def test_a_killed_container_is_restarted_through_the_event_stream(
    engine: docker.DockerClient, tmp_path: Path, namespace: str, start_loop: Callable[..., Loop]
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web", namespace))
    # The sync period is far longer than the test: only the event can restart it.
    port = free_port()
    loop = start_loop(
        [str(pods)],
        *("--sync-period", "5m", "--source-period", "5m", "--listen", f"127.0.0.1:{port}"),
    )
    ids = eventually(lambda: (found := running(engine, namespace)) and len(found) == 3 and found)
    # The status board answers on the loopback.
    assert eventually(lambda: (got := get(port, "/healthz")) and got[0] == 200)
    _, body = eventually(lambda: (got := get(port, "/pods")) and got[0] == 200 and got)
    assert f"{namespace}/web".encode() in body
    killed_at = time.monotonic()
    engine.api.kill(ids[("web", "app")])

    def restarted() -> bool:
        app = running(engine, namespace).get(("web", "app"))
        return app is not None and app != ids[("web", "app")]

    eventually(restarted, timeout=20, log=loop)
    assert time.monotonic() - killed_at < 20  # well under the sync period (5 min)


@pytest.mark.docker_only(reason="stops and restarts dockerd itself")
def test_the_loop_recovers_when_the_engine_restarts(
    restartable_engine: None,
    engine: docker.DockerClient,
    tmp_path: Path,
    namespace: str,
    start_loop: Callable[..., Loop],
) -> None:
    """dockerd stops (and stops the pods' containers) and starts again: the loop
    reports the failed syncs, backs off, and once the engine answers it re-observes
    everything and brings the pods back; it never exits."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web", namespace))
    loop = start_loop([str(pods)], "--sync-period", "2s", "--source-period", "1s")
    before = eventually(lambda: (found := running(engine, namespace)) and len(found) == 3 and found)
    pid = _dockerd_pid()
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while _dockerd_pid() is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    eventually(lambda: any(r["kind"] == "error" for r in loop.lines()), timeout=30)
    _start_dockerd()
    _wait_for_engine(time.monotonic() + 60)
    after = eventually(
        lambda: (found := running(engine, namespace)) and len(found) == 3 and found, timeout=90
    )
    assert set(after.values()).isdisjoint(before.values())
    assert any(r["kind"] == "engine-back" for r in loop.lines())
    assert loop.process.poll() is None
    code, _ = loop.terminate()
    assert code == 0
