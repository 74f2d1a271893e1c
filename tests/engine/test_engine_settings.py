"""What Docker got for the engine settings of issue 27, on a real engine, read back with
``docker inspect`` and from inside the containers.

Three pods, one per QoS class, synced with ``podsync.sync``: a BestEffort pod whose two
containers share the network container's IPC namespace (one writes ``/dev/shm``, the
other reads it), a Guaranteed one and a Burstable one. Per container: ``CpuShares`` (2
without any CPU request, ``MilliCPUToShares``), ``Memory`` and ``MemorySwap`` (equal: no
swap beyond the limit), ``OomScoreAdj`` from the QoS class (``GetContainerOOMScoreAdjust``)
and the kernel's ``/proc/1/oom_score_adj`` in the container, and ``IpcMode``.

The planner's table of these values is ``tests/unit/planner/test_plan_engine_settings.py``.
Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>`` only.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import docker

import podsync
from podsync import Pod, parse_pods
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

MI = 2**20
# Stops at once on SIGTERM (busybox sh as PID 1 would ignore it).
SERVE = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"

PODS = """\
apiVersion: v1
kind: Pod
metadata: {{name: best-{tag}, uid: {uid}-0}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: writer
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "echo shared by the pod > /dev/shm/note; {serve}"]
  - name: reader
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{serve}"]
---
apiVersion: v1
kind: Pod
metadata: {{name: guaranteed-{tag}, uid: {uid}-1}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{serve}"]
    resources:
      limits: {{cpu: 100m, memory: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata: {{name: burstable-{tag}, uid: {uid}-2}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{serve}"]
    resources:
      requests: {{cpu: 250m, memory: 32Mi}}
      limits: {{memory: 64Mi}}
"""


def _load(cleanup: Cleanup) -> list[Pod]:
    uid = str(uuid.uuid4())
    text = PODS.format(tag=uid[:6], uid=uid, image=TEST_IMAGE, serve=SERVE.replace('"', '\\"'))
    pods = parse_pods(text, source="file")
    for pod in pods:
        cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    return pods


def _inspected(engine: docker.DockerClient, pod: Pod) -> dict[str, dict[str, Any]]:
    listed = engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
    )
    found = {}
    for entry in listed:
        inspected = engine.api.inspect_container(entry["Id"])
        found[inspected["Config"]["Labels"][podsync.labels.LABEL_CONTAINER]] = inspected
    return found


def _settings(inspected: dict[str, Any]) -> tuple[Any, ...]:
    host = inspected["HostConfig"]
    return host["CpuShares"], host["Memory"], host["MemorySwap"], host["OomScoreAdj"]


def _read(runtime: DockerRuntime, container_id: str, *command: str) -> str:
    result = runtime.exec_in_container(container_id, list(command), 10.0)
    assert 0 == result.exit_code, result
    return result.output.decode().strip()


def test_engine_settings(engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path) -> None:
    """Each QoS class's settings reach Docker and the kernel; the pod's containers share
    one IPC namespace, the network container's; a second sync changes nothing."""
    best, guaranteed, burstable = _load(cleanup)
    capacity = int(engine.info()["MemTotal"])
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
        memory_capacity=capacity,
    )

    with DockerRuntime() as runtime:
        result = podsync.sync([best, guaranteed, burstable], runtime, options=options)
        assert result.ok, result.apply_result.summary()
        pods = [_inspected(engine, pod) for pod in (best, guaranteed, burstable)]
        first, second, third = pods

        # BestEffort: the smallest CPU weight, not Docker's 1024; killed first.
        assert (2, 0, 0, 1000) == _settings(first["writer"]) == _settings(first["reader"])
        # An engine without CAP_SYS_RESOURCE cannot lower a score: the runtime raises
        # the negative ones to 0 there (restrict_oom_score_adj).
        lowers = runtime._lowers_oom_scores(TEST_IMAGE)
        guaranteed_score, network_score = (-997, -998) if lowers else (0, 0)
        # Guaranteed: the limits, no swap beyond the memory limit; killed last.
        assert (102, 64 * MI, 64 * MI, guaranteed_score) == _settings(second["app"])
        # Burstable: 1000 - 1000 * request / the host's memory.
        score = 1000 - 1000 * 32 * MI // capacity
        assert (256, 64 * MI, 64 * MI, score) == _settings(third["app"])
        # Every network container: shareable IPC, the sandbox's OOM score, 2 shares.
        for found in pods:
            net = found["net"]
            assert (2, 0, 0, network_score) == _settings(net)
            assert "shareable" == net["HostConfig"]["IpcMode"]
            for name, inspected in found.items():
                if name != "net":
                    assert f"container:{net['Id']}" == inspected["HostConfig"]["IpcMode"]
        # The kernel got the scores.
        kernel = {
            _read(runtime, c["Id"], "/bin/cat", "/proc/1/oom_score_adj")
            for c in (first["reader"], second["app"], third["app"])
        }
        assert {"1000", str(guaranteed_score), str(score)} == kernel

        # One IPC namespace for the pod: what one container puts in /dev/shm, the
        # other reads; both see the same namespace, another pod's is another.
        reader, writer = first["reader"]["Id"], first["writer"]["Id"]
        assert "shared by the pod" == _read(runtime, reader, "/bin/cat", "/dev/shm/note")
        namespaces = [
            _read(runtime, c, "/bin/readlink", "/proc/self/ns/ipc")
            for c in (reader, writer, second["app"]["Id"])
        ]
        assert namespaces[0] == namespaces[1] != namespaces[2]

        # A second sync changes nothing: none of these settings is a spec change.
        again = podsync.sync([best, guaranteed, burstable], runtime, options=options)
        assert not again.plan.has_changes, again.plan.describe()
