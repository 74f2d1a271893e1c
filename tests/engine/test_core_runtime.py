"""A runtime with the core protocol alone, on the real engine (issue 29): the Docker
runtime seen through the nine core methods (``tests/support/core_runtime.py``). A plain
pod runs on it with no named volume made (no pod state volume, no termination-message
file bound), a second sync does nothing, and a pod with an emptyDir volume is refused
by name before anything reaches the engine.

Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>`` only.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import docker

import podsync
from podsync import Container, PlanOptions, Pod, PullPolicy, Reason, Volume, VolumeMount
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_POD_UID
from tests.support.core_runtime import CoreRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup


def _pod(uid: str, *volumes: Volume) -> Pod:
    mounts = tuple(VolumeMount(v.name, "/data") for v in volumes)
    app = Container(
        "app",
        TEST_IMAGE,
        command=("sleep", "3600"),
        image_pull_policy=PullPolicy.NEVER,
        volume_mounts=mounts,
    )
    return Pod(f"core-{uid[:8]}", (app,), uid=uid, volumes=volumes, source="test")


def test_a_plain_pod_runs_on_the_core_of_the_docker_runtime(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    uid = str(uuid.uuid4())
    cleanup.add_label(f"{LABEL_POD_UID}={uid}")
    options = PlanOptions(
        network_image=PAUSE_IMAGE,
        network_mode="none",
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,  # (other pods on the engine are not this test's)
        stop_timeout=1,
    )
    with DockerRuntime() as docker_runtime:
        core = CoreRuntime(docker_runtime)
        first = podsync.sync([_pod(uid)], core, options=options)
        second = podsync.sync([_pod(uid)], core, options=options)
        refused = podsync.sync([_pod(str(uuid.uuid4()), Volume("data"))], core, options=options)

    containers = engine.api.containers(filters={"label": f"{LABEL_POD_UID}={uid}"})
    volumes = engine.api.volumes(filters={"label": f"{LABEL_POD_UID}={uid}"})["Volumes"]
    assert first.ok
    assert 2 == len(containers)  # the network container and app, running
    assert not volumes  # no state volume: nothing of the pod is kept in named volumes
    assert not any(m["Type"] == "volume" for c in containers for m in c["Mounts"])
    assert () == second.plan.pods
    assert [Reason.MISSING_CAPABILITY] == [r.reason for r in refused.plan.rejected]
    assert 'volumes (volume "data": emptyDir)' in refused.plan.rejected[0].message
