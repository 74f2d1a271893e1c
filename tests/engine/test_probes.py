"""Probes against a real Docker engine: exec probes (``docker exec``) that flip as the
container's files change, a probe's own timeout, and the count kept across syncs.

Network rule (``tests/support/engine.py``): network mode ``none`` only, and these probes are
exec probes: they run inside the containers and connect to nothing. (httpGet headers
and HTTPS are shown against servers on the host's loopback in
``tests/unit/prober/test_probe_http.py``: a pod with network mode none has no address the host can
reach.) Nothing is pulled: the test image is present and its pull policy is Never.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

import podsync
from podsync import Event, Kill, Pod, Reason, parse_pods, pod_status
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

# An app process that exits 0 at once on SIGTERM.
SERVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"


def _pod(cleanup: Cleanup, text: str) -> Pod:
    name = f"probes-{uuid.uuid4().hex[:6]}"
    (pod,) = parse_pods(text.replace("NAME", name), source_name="pods/probes.yaml", source="file")
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    return pod


def _options(tmp_path: Path) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        stop_timeout=1,
        allow_deletions=False,  # the engine is shared
    )


@pytest.fixture
def runtime(engine: docker.DockerClient) -> Iterator[DockerRuntime]:
    with DockerRuntime() as rt:
        yield rt


def _app(runtime: DockerRuntime, pod: Pod) -> str:
    return next(
        c.id
        for c in runtime.list_containers()
        if c.running
        and c.labels.get(podsync.labels.LABEL_POD_UID) == pod.uid
        and c.labels.get(podsync.labels.LABEL_CONTAINER) == "app"
    )


def _exec(engine: docker.DockerClient, container_id: str, *command: str) -> None:
    exec_id = engine.api.exec_create(container_id, list(command))["Id"]
    engine.api.exec_start(exec_id)
    assert 0 == engine.api.exec_inspect(exec_id)["ExitCode"]


READY_POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: NAME
spec:
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    readinessProbe:
      exec:
        command: [/bin/cat, /tmp/ready]
      periodSeconds: 1
      timeoutSeconds: 10
      failureThreshold: 1
"""


def test_an_exec_readiness_probe_flips_and_never_restarts(engine, cleanup, runtime, tmp_path):
    """The readiness probe reads a file in the container: not ready without it, ready
    once it exists, not ready again when it is gone - and the container runs on,
    the same instance, throughout."""
    pod = _pod(cleanup, READY_POD)
    options = _options(tmp_path)
    assert podsync.sync([pod], runtime, options=options).ok
    app = _app(runtime, pod)

    def sync_and_status() -> tuple[bool, bool]:
        time.sleep(1.0)  # periodSeconds: 1
        result = podsync.sync([pod], runtime, options=options)
        status = pod_status(pod, result.observation.containers, readiness=result.readiness)
        assert not result.plan.has_changes, result.plan.describe()
        return result.readiness[app], status.ready

    seen = [sync_and_status()]
    _exec(engine, app, "/bin/touch", "/tmp/ready")
    seen.append(sync_and_status())
    _exec(engine, app, "/bin/rm", "/tmp/ready")
    seen.append(sync_and_status())

    assert [(False, False), (True, True), (False, False)] == seen
    assert engine.api.inspect_container(app)["State"]["Running"]
    assert app == _app(runtime, pod)


STARTUP_POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: NAME
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    startupProbe:
      exec:
        command: [/bin/sleep, "30"]
      timeoutSeconds: 3
      periodSeconds: 1
      failureThreshold: 2
    livenessProbe:
      exec:
        command: [/bin/false]
      failureThreshold: 1
"""


def test_a_startup_probe_that_times_out_fails_and_kills_after_its_threshold(
    engine, cleanup, runtime, tmp_path
):
    """An exec startup probe that outlasts its timeoutSeconds (3 s) fails (the
    kubelet's ExecProbeTimeout), without waiting for the command; the second failure,
    one sync later, kills the container. The liveness probe (/bin/false) never ran:
    the container had not started."""
    pod = _pod(cleanup, STARTUP_POD)
    options = _options(tmp_path)
    events: list[Event] = []
    assert podsync.sync([pod], runtime, options=options).ok
    first = _app(runtime, pod)

    began = time.monotonic()
    one = podsync.sync([pod], runtime, options=options, on_event=events.append)
    took = time.monotonic() - began
    time.sleep(1.0)
    two = podsync.sync([pod], runtime, options=options, on_event=events.append)

    assert 3.0 <= took < 20.0, took
    assert not one.plan.has_changes
    assert ({}, {first: False}) == (one.startup, two.startup)
    kills = [a for a in two.plan.actions if isinstance(a, Kill)]
    assert [(first, Reason.UNHEALTHY)] == [(k.id, k.reason) for k in kills]
    assert two.ok, two.apply_result.summary()
    assert first != _app(runtime, pod)
    probe_messages = [e.message for e in events if e.kind.value == "unhealthy"]
    assert [
        "startup probe failed (1/2): exec ['/bin/sleep', '30'] did not finish within 3s",
        "startup probe failed (2/2): exec ['/bin/sleep', '30'] did not finish within 3s",
    ] == probe_messages
