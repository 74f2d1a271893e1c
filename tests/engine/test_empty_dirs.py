"""``emptyDir`` volumes as engine volumes on a real engine (issue 18): shared by the
pod's containers, writable by a non-root user, empty whatever the image holds at the
mount point, removed by ``podsync down``; and a pod an earlier podsync ran with host
directories, moved into volumes with its data when it is rebuilt.

The engine is ``dockerd --bridge=none``: pods use network mode ``none``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import attrs
import docker
import pytest

import podsync
import podsync.cli
import podsync.spec
from podsync import Create, CreateSpec, PlanOptions, Pod, Reason, parse_pods
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_CONTAINER, LABEL_EMPTY_DIRS, LABEL_POD_UID
from podsync.spec._volumes import Mount, pod_state_volume_name
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, volume_path

SERVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"

POD = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME, uid: UID}}
spec:
  terminationGracePeriodSeconds: 1
  volumes:
  - {{name: shared, emptyDir: {{}}}}
  containers:
  - name: writer
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    securityContext: {{runAsUser: 1000}}
    volumeMounts: [{{name: shared, mountPath: /shared}}]
  - name: reader
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    # /root is 0700 in the image: the volume keeps its own mode and stays empty.
    volumeMounts: [{{name: shared, mountPath: /root}}]
"""


@pytest.fixture
def runtime(engine: docker.DockerClient) -> Iterator[DockerRuntime]:
    with DockerRuntime() as rt:
        yield rt


def _options(tmp_path: Path) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,  # the engine is shared with other tests
        stop_timeout=1,
    )


def _load(cleanup: Cleanup, tmp_path: Path) -> tuple[Pod, Path]:
    uid = str(uuid.uuid4())
    text = POD.replace("NAME", f"ed-{uid[:8]}").replace("UID", uid)
    source = tmp_path / "pod.yaml"
    source.write_text(text)
    (pod,) = parse_pods(text, source="file")
    cleanup.add_label(f"{LABEL_POD_UID}={pod.uid}")
    cleanup.add_volume(podsync.spec.empty_dir_volume_name(pod.uid, "shared"))
    return pod, source


def _ids(runtime: DockerRuntime, pod: Pod) -> dict[str, str]:
    return {
        c.labels[LABEL_CONTAINER]: c.id
        for c in runtime.list_containers()
        if c.labels.get(LABEL_POD_UID) == pod.uid and c.running
    }


def _exec(runtime: DockerRuntime, container_id: str, script: str) -> str:
    result = runtime.exec_in_container(container_id, ["/bin/sh", "-c", script], 10.0)
    assert 0 == result.exit_code, result
    return result.output.decode()


def test_the_pods_containers_share_a_volume_any_user_can_write(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    pod, source = _load(cleanup, tmp_path)
    name = podsync.spec.empty_dir_volume_name(pod.uid, "shared")

    result = podsync.sync([pod], runtime, options=_options(tmp_path), probe=False)

    assert result.ok, result.plan.describe() + result.apply_result.summary()
    labels = engine.api.inspect_volume(name)["Labels"]
    assert {"empty-dir", pod.uid, "shared"} <= set(labels.values())
    ids = _ids(runtime, pod)
    # user 1000 writes; root reads it in the other container, where the mount point
    # exists in the image (0700 there) and the volume is 0777 and holds nothing else.
    _exec(runtime, ids["writer"], "echo from 1000 > /shared/note")
    assert "from 1000\n" == _exec(runtime, ids["reader"], "cat /root/note")
    assert "note\n" == _exec(runtime, ids["reader"], "ls -A /root")
    assert "777\n" == _exec(runtime, ids["reader"], "stat -c %a /root")
    assert 1000 == (volume_path(engine, name) / "note").stat().st_uid
    # Nothing of it under the root directory.
    assert not (tmp_path / "root" / pod.uid / "volumes").exists()

    # down removes the pod's containers, then its volume.
    root = str(tmp_path / "root")
    code = podsync.cli.main(["down", "--root-dir", root, "--stop-timeout", "1", str(source)])
    assert 0 == code
    assert [] == engine.volumes.list(filters={"name": name})


def _legacy(spec: CreateSpec, root: str, uid: str) -> CreateSpec:
    """``spec`` as a podsync before engine volumes made it: the emptyDir bound from
    ``<root>/<uid>/volumes/empty/shared``, without ``LABEL_EMPTY_DIRS``."""
    host = f"{root}/{uid}/volumes/empty/shared"
    # (The pod's state volume, which the network container mounts, stays a volume.)
    state = pod_state_volume_name(uid)
    empty = [m for m in spec.volumes if m.volume != state]
    binds = tuple(Mount(host, m.container_path, m.read_only) for m in empty)
    return attrs.evolve(
        spec,
        labels={k: v for k, v in spec.labels.items() if k != LABEL_EMPTY_DIRS},
        volumes=tuple(m for m in spec.volumes if m.volume == state),
        mounts=(*spec.mounts, *binds),
    )


def test_a_pod_of_an_earlier_podsync_moves_into_a_volume_with_its_data(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    """A pod an earlier podsync ran binds its emptyDir host directory. A sync keeps it
    as it is; once its network container is gone, the pod is rebuilt, the directory is
    copied into the new volume (files, modes, owners) and removed."""
    pod, _ = _load(cleanup, tmp_path)
    options = _options(tmp_path)
    root = options.root_dir
    host = Path(root, pod.uid, "volumes", "empty", "shared")
    host.mkdir(parents=True)
    host.chmod(0o777)
    Path(root, pod.uid, ".podsync-pod").touch()
    made = podsync.plan([pod], now=0.0, options=options, images=runtime.list_images())
    for action in made.actions:
        if isinstance(action, Create):
            spec = _legacy(action.spec, root, pod.uid)
            runtime.start_container(cleanup.add(runtime.create_container(spec)))
    ids = _ids(runtime, pod)
    _exec(runtime, ids["writer"], "mkdir /shared/logs && echo kept > /shared/logs/app.log")
    assert "kept\n" == (host / "logs" / "app.log").read_text()

    steady = podsync.sync([pod], runtime, options=options, probe=False)
    assert not steady.plan.has_changes, steady.plan.describe()

    runtime.stop_container(ids["net"], 1)
    result = podsync.sync([pod], runtime, options=options, probe=False)

    assert result.ok, result.plan.describe() + result.apply_result.summary()
    moved = [
        a for a in result.plan.actions if getattr(a, "reason", None) is Reason.EMPTY_DIR_MIGRATED
    ]
    assert 1 == len(moved), result.plan.describe()
    ids = _ids(runtime, pod)
    assert "kept\n" == _exec(runtime, ids["reader"], "cat /root/logs/app.log")
    assert "1000\n" == _exec(runtime, ids["reader"], "stat -c %u /root/logs/app.log")
    assert "777\n" == _exec(runtime, ids["reader"], "stat -c %a /root")
    assert not host.exists()
    again = podsync.sync([pod], runtime, options=options, probe=False)
    assert not again.plan.has_changes, again.plan.describe()
