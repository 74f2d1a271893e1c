"""The files people keep, applied to a real engine: a Helm-rendered chart (``# Source:``
headers, empty documents, keys a template left null, a ConfigMap its pod reads, a
``helm test`` pod) and a pod with an init container, a sidecar and two emptyDir volumes
(``tests/data/pod_files``).

What the pure tests cannot show: the null keys really are "not given" once the engine
runs the containers (the environment a template left empty is there, empty), the
containers of one pod reach each other on localhost (what podsync says instead of a
Service), and a ``helm test`` pod that names a Service fails - there is no Service
name to resolve on one host - while the chart's own pod runs.

Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>`` only;
nothing leaves the pods' loopback.
"""

from __future__ import annotations

import time
from pathlib import Path

import docker

import podsync
import podsync.spec
from podsync import Pod, PodPhase, load_pods
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from tests.support import paths
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

FILES = paths.DATA / "pod_files"
# The files name busybox:1.36, as people write them; the test image stands for it under
# that name (a tag of the local image: nothing is pulled, the policy is IfNotPresent).
IMAGE = "busybox:1.36"
LOCAL = "podsync-test/busybox:1.36"


def _pods(engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path) -> tuple[Pod, ...]:
    engine.api.tag(TEST_IMAGE, "podsync-test/busybox", "1.36")
    directory = tmp_path / "pods"
    directory.mkdir()
    for name in ("helm-rendered.yaml", "static-site.yaml"):
        text = (FILES / name).read_text(encoding="utf-8").replace(IMAGE, LOCAL)
        (directory / name).write_text(text, encoding="utf-8")
    pods = load_pods([directory], on_warning=lambda line: None)
    for pod in pods:
        cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
        for volume in pod.volumes:
            cleanup.add_volume(podsync.spec.empty_dir_volume_name(pod.uid, volume.name))
    return pods


def _options(tmp_path: Path) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
    )


def _settled(statuses: dict[str, podsync.PodStatus]) -> bool:
    """The chart's pod and the site run all their containers; the test pod ended."""
    return (
        statuses["default/release-notes"].message == "running (1/1 containers)"
        and statuses["default/static-site"].message == "running (2/2 containers)"
        and statuses["default/release-notes-test-connection"].phase == PodPhase.FAILED
    )


def test_a_helm_chart_and_a_pod_with_init_and_empty_dirs_run(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    pods, options = _pods(engine, cleanup, tmp_path), _options(tmp_path)
    with DockerRuntime() as runtime:
        deadline = time.monotonic() + 90
        while True:
            result = podsync.sync(pods, runtime, options=options)
            assert result.ok, result.apply_result.summary()
            observed = podsync.observe(runtime, options.root_dir).containers
            statuses = {p.key: podsync.pod_status(p, observed, options=options) for p in pods}
            if _settled(statuses) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert _settled(statuses), {k: (s.phase, s.message) for k, s in statuses.items()}

        # The ConfigMap's keys and the chart's values, the empty one included.
        notes = statuses["default/release-notes"].containers[0].container_id
        env = runtime.exec_in_container(notes, ["/bin/env"], 10.0)
        assert 0 == env.exit_code
        lines = set(env.output.decode().splitlines())
        assert {"LOG_LEVEL=info", "LISTEN_PORT=8080", "RELEASE=3", "EXTRA_FLAGS="} <= lines

        # The sidecar reads what the init container wrote, from the server, on localhost.
        site = statuses["default/static-site"]
        tailer = next(c for c in site.containers if c.name == "log-tailer").container_id
        page = runtime.exec_in_container(
            tailer, ["/bin/wget", "-q", "-O", "-", "http://127.0.0.1:8080/"], 10.0
        )
        assert (0, b"<h1>hello</h1>\n") == (page.exit_code, page.output)

        # Nothing left to do: the failed test pod stays failed, the rest stays up.
        again = podsync.sync(pods, runtime, options=options).plan
        assert not again.has_changes, again.describe()
