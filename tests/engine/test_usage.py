"""Usage readings on the real engine (``DockerRuntime.container_usage``, ``node_usage``,
``podsync top``): a busy container (``while :; do :; done``) shows about one core, a
container that fills 40 MiB of its ``/dev/shm`` (tmpfs pages: charged to its memory
cgroup, and never inactive file cache) shows them in its working set - read from the
cgroup files (the engine is local here) and through the Engine API's one-shot stats -
and a container that stopped is left out, without an error.

The machine is shared (two cores, three pytests side by side in CI): a busy loop is
asked to show more than a quarter of a core (seen in CI: 0.498 of one), not exactly
one, and clearly more than the idle container beside it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import docker
import pytest

import podsync
from podsync import ContainerUsage, PlanOptions, UsageFigures, cli
from podsync.docker import DockerRuntime
from podsync.status import pod_usage, usage_figures
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

MiB = 1024 * 1024
WINDOW = 2.0  # seconds between two readings: long enough to average a busy loop


def _pod(cleanup: Cleanup) -> podsync.Pod:
    name = f"usage-{uuid.uuid4().hex[:8]}"
    (pod,) = podsync.parse_pods(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
    - name: spin
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: ["sh", "-c", "while :; do :; done"]
    - name: mem
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: ["sh", "-c", "head -c 41943040 /dev/zero > /dev/shm/fill; exec sleep 3600"]
""",
        source="file",
    )
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    return pod


@pytest.fixture
def running(tmp_path: Path, cleanup: Cleanup) -> tuple[podsync.Pod, dict[str, str]]:
    """A pod with a busy and a memory-filling container, started; its container ids by
    name, once the memory is written."""
    pod = _pod(cleanup)
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
        stop_timeout=1,
    )
    with DockerRuntime() as runtime:
        assert podsync.sync([pod], runtime, options=options).ok
        ids = {}
        for c in runtime.list_containers():
            owner = podsync.ownership(c)
            if owner is not None and owner.pod_uid == pod.uid and c.running:
                ids[owner.container] = c.id
        assert {"spin", "mem", "net"} == set(ids)
        deadline = time.monotonic() + 30
        while runtime.container_usage([ids["mem"]])[ids["mem"]].memory_working_set < 40 * MiB:
            assert time.monotonic() < deadline, "the mem container did not fill /dev/shm"
            time.sleep(0.2)
    return pod, ids


def _read_twice(
    read: Callable[[list[str]], Mapping[str, ContainerUsage]], ids: Mapping[str, str]
) -> tuple[Mapping[str, ContainerUsage], Mapping[str, ContainerUsage]]:
    """Two readings ``WINDOW`` apart, checked: the busy container near a core, the other
    idle with its 40 MiB."""
    first = read(list(ids.values()))
    time.sleep(WINDOW)
    second = read(list(ids.values()))
    busy = usage_figures(first[ids["spin"]], second[ids["spin"]])
    assert busy.cpu_cores is not None
    assert 0.25 < busy.cpu_cores < 1.2, busy
    filled = usage_figures(first[ids["mem"]], second[ids["mem"]])
    assert filled.cpu_cores is not None
    assert filled.cpu_cores < 0.2
    assert 40 * MiB <= filled.memory_working_set < 80 * MiB
    return first, second


def test_cgroup_readings_show_a_busy_core_and_the_memory(
    running: tuple[podsync.Pod, dict[str, str]], engine: docker.DockerClient
) -> None:
    pod, ids = running
    with DockerRuntime() as runtime:
        first, second = _read_twice(runtime.container_usage, ids)
        # Read from the cgroup files: each id was verified local (this machine's /proc).
        assert set(ids.values()) <= set(runtime._cgroups)
        (usage,) = pod_usage(first, second, runtime.list_containers())
        assert usage.uid == pod.uid
        assert {"spin", "mem", "net"} == set(usage.containers)
        assert usage.total.cpu_cores is not None
        assert usage.total.cpu_cores > 0.25
        assert usage.total.memory_working_set >= 40 * MiB

        engine.api.stop(ids["spin"], timeout=0)
        after = runtime.container_usage([ids["spin"], ids["mem"], "0" * 64])
        assert [ids["mem"]] == list(after)  # stopped and missing: left out, no error


def test_api_readings_show_a_busy_core_and_the_memory(
    running: tuple[podsync.Pod, dict[str, str]], engine: docker.DockerClient
) -> None:
    _, ids = running
    with DockerRuntime() as runtime:
        _read_twice(runtime._api_readings, ids)
        # One container alone is one compat call (on podman the others came in one call
        # of its own API).
        single = runtime._api_reading(ids["mem"])
        assert single is not None
        assert single.memory_working_set >= 40 * MiB
        engine.api.stop(ids["spin"], timeout=0)
        assert [ids["mem"]] == list(runtime._api_readings([ids["spin"], ids["mem"]]))
        assert runtime._api_reading(ids["spin"]) is None


def test_node_usage_is_this_machines(engine: docker.DockerClient) -> None:
    with DockerRuntime() as runtime:
        first = runtime.node_usage()
        time.sleep(0.5)
        second = runtime.node_usage()
    assert first is not None
    assert second is not None
    figures = usage_figures(first, second)
    assert isinstance(figures, UsageFigures)
    assert figures.cpu_cores is not None
    assert 0 <= figures.cpu_cores
    assert 0 < second.memory_working_set


def test_top_shows_the_pod_and_its_containers(
    running: tuple[podsync.Pod, dict[str, str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pod, _ = running
    assert 0 == cli.main(["top", pod.key, "--containers", "--window", "1s"])
    out = capsys.readouterr().out.splitlines()
    assert ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"] == out[0].split()
    rows = {line.split()[1]: line.split() for line in out[1:]}
    assert {"mem", "net", "spin"} == set(rows)
    assert int(rows["spin"][2].removesuffix("m")) > 250
    assert int(rows["mem"][3].removesuffix("Mi")) >= 40
