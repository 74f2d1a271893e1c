"""Init containers on a real engine: they run in order, each once, before the app
container, sharing an emptyDir with it; a failing one under ``Never`` leaves the app
containers uncreated; a second apply changes nothing.

Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>`` only.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import docker

import podsync
import podsync.spec
from podsync import Pod, parse_pods
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, volume_path

SERVE = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, uid: {uid}}}
spec:
  restartPolicy: {policy}
  terminationGracePeriodSeconds: 1
  volumes:
  - {{name: work, emptyDir: {{}}}}
  initContainers:
  - name: setup
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "echo setup >> /work/order; exit {code}"]
    volumeMounts: [{{name: work, mountPath: /work}}]
  - name: migrate
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "echo migrate >> /work/order"]
    volumeMounts: [{{name: work, mountPath: /work}}]
  containers:
  - name: app
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "echo app >> /work/order; {serve}"]
    volumeMounts: [{{name: work, mountPath: /work}}]
"""


def _load(cleanup: Cleanup, policy: str = "Always", code: int = 0) -> Pod:
    uid = str(uuid.uuid4())
    text = POD.format(
        name=f"init-{uid[:6]}",
        uid=uid,
        image=TEST_IMAGE,
        policy=policy,
        code=code,
        serve=SERVE.replace('"', '\\"'),
    )
    (pod,) = parse_pods(text, source="file")
    cleanup.add_volume(podsync.spec.empty_dir_volume_name(pod.uid, "work"))
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    return pod


def _options(tmp_path: Path) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
    )


def _instances(engine: docker.DockerClient, pod: Pod) -> dict[str, int]:
    listed = engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
    )
    counts: dict[str, int] = {}
    for entry in listed:
        name = entry["Labels"][podsync.labels.LABEL_CONTAINER]
        counts[name] = counts.get(name, 0) + 1
    return counts


def _sync_until(runtime: DockerRuntime, pod: Pod, options: PlanOptions, done) -> podsync.PodStatus:
    """Sync until the pod's status, read before a sync, is ``done``; that sync, the
    last, has acted on it (a status read after a sync may show what the sync did not
    see: an init container that exited in between, whose failure the next sync acts on).
    """
    deadline = time.monotonic() + 60
    while True:
        observed = podsync.observe(runtime, options.root_dir).containers
        status = podsync.pod_status(pod, observed, options=options)
        last = done(status) or time.monotonic() > deadline
        result = podsync.sync([pod], runtime, options=options)
        assert result.ok, result.apply_result.summary()
        if last:
            return status
        time.sleep(0.5)


def test_init_containers_run_in_order_and_once(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    pod, options = _load(cleanup), _options(tmp_path)
    with DockerRuntime() as runtime:
        status = _sync_until(runtime, pod, options, lambda s: s.containers[0].state == "running")
        assert "running" == status.state, status.message
        assert ["Completed", "Completed"] == [s.reason for s in status.init_containers]

        # Each ran once, in order, before the app: the shared emptyDir says so, from
        # inside the app container and in the pod's engine volume.
        app = status.containers[0].container_id
        order = runtime.exec_in_container(app, ["/bin/cat", "/work/order"], 10.0)
        assert (0, b"setup\nmigrate\napp\n") == (order.exit_code, order.output)
        volume = volume_path(engine, podsync.spec.empty_dir_volume_name(pod.uid, "work"))
        assert "setup\nmigrate\napp\n" == (volume / "order").read_text()
        assert {"net": 1, "setup": 1, "migrate": 1, "app": 1} == _instances(engine, pod)

        # A second apply changes nothing, and the init containers do not run again.
        again = podsync.sync([pod], runtime, options=options)
        assert not again.plan.has_changes, again.plan.describe()
        assert {"net": 1, "setup": 1, "migrate": 1, "app": 1} == _instances(engine, pod)


def test_a_failing_init_container_under_never_leaves_the_app_uncreated(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    pod, options = _load(cleanup, policy="Never", code=3), _options(tmp_path)
    with DockerRuntime() as runtime:
        status = _sync_until(runtime, pod, options, lambda s: s.state == "failed")

        assert "failed" == status.state, status.message
        assert (
            "failed: Init:Error: init container setup exited with code 3 (restart policy Never)"
            == status.message
        )
        counts = _instances(engine, pod)
        assert "app" not in counts
        assert "migrate" not in counts
        assert 1 == counts["setup"]
        # And nothing more happens.
        again = podsync.sync([pod], runtime, options=options)
        assert not again.plan.has_changes, again.plan.describe()
