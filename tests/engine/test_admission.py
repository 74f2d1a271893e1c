"""Admission against what the real engine has: its CPUs and memory (``docker info``) are
the node's capacity, less ``--system-reserved``; a pod whose requests do not fit is
rejected as the kubelet rejects it (``OutOfcpu``) and nothing of it reaches the engine.
"""

from __future__ import annotations

import secrets
import uuid
from pathlib import Path

import docker

import podsync
from podsync import Container, Pod, PullPolicy, Reason, ResourceList, Resources
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

SUFFIX = secrets.token_hex(4)


def test_node_capacity_is_the_engines(engine: docker.DockerClient) -> None:
    """``node_capacity`` is ``docker info``'s ``NCPU`` (as milli-CPU) and ``MemTotal``."""
    info = engine.info()

    with DockerRuntime() as runtime:
        capacity = runtime.node_capacity()

    assert (info["NCPU"] * 1000, info["MemTotal"]) == (capacity.cpu, capacity.memory)
    assert capacity.cpu >= 1000
    assert capacity.memory > 6 * 1024 * 1024


def test_a_pod_that_does_not_fit_is_rejected_and_nothing_is_created(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """With the engine's CPUs all reserved but one, a pod asking for two is rejected
    (``OutOfcpu``), a pod asking for half a CPU runs; only the one that fits has
    containers on the engine."""
    cpus = engine.info()["NCPU"]
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
        stop_timeout=1,
        system_reserved=ResourceList(cpu=(cpus - 1) * 1000),
    )

    def pod(name: str, cpu: int) -> Pod:
        made = Pod(
            f"{name}-{SUFFIX}",
            (
                Container(
                    "app",
                    TEST_IMAGE,
                    command=("/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"),
                    image_pull_policy=PullPolicy.NEVER,
                    resources=Resources(requests=ResourceList(cpu=cpu)),
                ),
            ),
            uid=str(uuid.uuid4()),
        )
        cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={made.uid}")
        return made

    big, small = pod("big", 2000), pod("small", 500)
    with DockerRuntime() as runtime:
        result = podsync.sync([big, small], runtime, options=options, probe=False)

    assert result.ok, result.apply_result.summary()
    assert [
        (
            big.key,
            Reason.OUT_OF_CPU,
            "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000",
        )
    ] == [(r.pod, r.reason, r.message) for r in result.plan.rejected]
    owners = {
        c.labels[podsync.labels.LABEL_POD_UID]
        for c in engine.containers.list(all=True)
        if c.labels.get(podsync.labels.LABEL_POD_UID) in (big.uid, small.uid)
    }
    assert {small.uid} == owners
