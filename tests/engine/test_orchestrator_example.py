"""``examples/orchestrator.py`` - an orchestrator on podsync's public API - run as a
program against the real engine: it must converge at each step of its scenario (two
pods started; one added, one edited, one removed while the loop runs; all removed),
report the engine's events and the pods' statuses, exit 0, and leave nothing behind.

Network rule (``tests/support/engine.py``): the example's pods use network mode
``none``; its images are the local test images, never pulled.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import docker

import podsync
from podsync.labels import LABEL_POD_NAMESPACE, LABEL_POD_UID
from tests.support import paths
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup


def test_the_orchestrator_example_converges_at_each_step_and_cleans_up(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    namespace = f"example-{uuid.uuid4().hex[:8]}"
    cleanup.add_label(f"{LABEL_POD_NAMESPACE}={namespace}")
    uids = [podsync.derive_pod_uid("api", namespace, n) for n in ("web", "worker", "cache")]
    for uid in uids:
        cleanup.add_label(f"{LABEL_POD_UID}={uid}")  # and the pods' volumes
    argv = [
        sys.executable,
        str(paths.REPO / "examples" / "orchestrator.py"),
        *("--image", TEST_IMAGE, "--network-image", PAUSE_IMAGE),
        *("--namespace", namespace, "--timeout", "60", "--root-dir", str(tmp_path / "root")),
        # A scope of this run's own: the example's last step removes every pod of its
        # scope, and the engine is shared (another run of this test, other programs).
        *("--scope", namespace),
    ]
    # The example imports podsync as a program does: this checkout's.
    env = {**os.environ, "PYTHONPATH": str(paths.REPO)}
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "Traceback" not in done.stderr
    steps = [line for line in out.splitlines() if line.startswith("step ")]
    assert steps == [
        "step start: web and worker: converged",
        "step change: cache added, web edited, worker removed: converged",
        "step stop: every pod removed: converged",
    ]
    # The statuses printed at each step: the pods desired then, running.
    assert f"  status: {namespace}/web Running running (1/1 containers)" in out
    assert f"  status: {namespace}/cache Running running (1/1 containers)" in out
    # The events it reacted to: the edit replaced web's app container, the removal
    # stopped the worker.
    assert f"event: stopping {namespace}/web" in out
    assert "replaced, spec changed (command changed, env changed)" in out
    assert f"event: stopping {namespace}/worker" in out
    assert "pod is no longer desired" in out
    left = engine.containers.list(all=True, filters={"label": f"{LABEL_POD_NAMESPACE}={namespace}"})
    assert left == []
    volumes = [
        v["Name"]
        for uid in uids
        for v in engine.api.volumes(filters={"label": f"{LABEL_POD_UID}={uid}"})["Volumes"] or ()
    ]
    assert volumes == []
