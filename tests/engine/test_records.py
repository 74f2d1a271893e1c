"""podsync's records of a container removed by hand, on a real Docker engine: podsync
stops a container (it writes the container's stop record, an empty labelled volume),
someone removes the container with the docker CLI - which knows nothing of the record -
and the next ``podsync apply`` removes the record volume and nothing else.

Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>`` only.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import docker
import pytest

import podsync
import podsync.cli
from podsync.labels import LABEL_POD_UID, LABEL_VOLUME_KIND
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, docker_host

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  restartPolicy: OnFailure
  containers:
  - name: app
    image: {image}
    imagePullPolicy: Never
    env: [{{name: VERSION, value: "{version}"}}]
  - name: setup
    image: {image}
    imagePullPolicy: Never
    command: [/bin/true]
"""


def _apply(tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``podsync apply`` of ``source`` on the engine at ``DOCKER_HOST``; its output.
    ``--no-delete``: other pods on the engine are not this test's."""
    code = podsync.cli.main(
        [
            "apply",
            "--root-dir",
            str(tmp_path / "root"),
            "--network-mode",
            "none",
            "--network-image",
            PAUSE_IMAGE,
            "--stop-timeout",
            "1",
            "--no-delete",
            str(source),
        ]
    )
    out = capsys.readouterr().out
    assert 0 == code, out
    return out


def _state(engine: docker.DockerClient, uid: str) -> tuple[dict[str, str], list[str]]:
    """The pod's containers (id -> state), and the volumes on the engine but the ones
    podsync made for other pods (several test runs may share the engine, and the apply
    removes the records other runs' gone containers left, as it should)."""
    containers = engine.api.containers(all=True, filters={"label": f"{LABEL_POD_UID}={uid}"})
    volumes: list[dict[str, Any]] = engine.api.volumes().get("Volumes") or []
    kept = [
        v["Name"]
        for v in volumes
        if LABEL_VOLUME_KIND not in (v["Labels"] or {}) or v["Labels"].get(LABEL_POD_UID) == uid
    ]
    return {c["Id"]: c["State"] for c in containers}, sorted(kept)


def _wait_exited(engine: docker.DockerClient, uid: str, container: str) -> str:
    """The id of the pod's ``container`` once it has exited."""
    for _ in range(300):
        (found,) = engine.api.containers(
            all=True,
            filters={"label": [f"{LABEL_POD_UID}={uid}", f"io.podsync.container.name={container}"]},
        )
        if found["State"] == "exited":
            return str(found["Id"])
        engine.api.wait(found["Id"], timeout=10)
    raise AssertionError(f"{container} did not exit")


def test_apply_removes_the_record_of_a_container_removed_by_hand(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The pod's ``app`` is replaced (its env changed): podsync stops the old instance
    and records why in ``podsync-stopped_<id>``. ``docker rm -f`` removes the old
    instance and leaves the record; the next apply removes the record volume, and
    changes no container and no other volume. The pod's ``setup`` container, which
    finished, keeps an exited container of podsync's on the engine: with one, a sync
    lists the volumes (the steady state of a pod whose containers all run does not)."""
    name = f"records-{uuid.uuid4().hex[:8]}"
    source = tmp_path / "pod.yaml"
    source.write_text(POD.format(name=name, image=TEST_IMAGE, version="1"))
    (pod,) = podsync.load_pods([str(source)])
    cleanup.add_label(f"{LABEL_POD_UID}={pod.uid}")
    _apply(tmp_path, source, capsys)
    _wait_exited(engine, pod.uid, "setup")
    (old,) = engine.api.containers(
        filters={"label": [f"{LABEL_POD_UID}={pod.uid}", "io.podsync.container.name=app"]}
    )
    source.write_text(POD.format(name=name, image=TEST_IMAGE, version="2"))
    _apply(tmp_path, source, capsys)
    record = f"podsync-stopped_{old['Id']}"
    assert "spec-changed" == engine.api.inspect_volume(record)["Labels"]["io.podsync.record.data"]

    subprocess.run(
        ["docker", "rm", "-f", old["Id"]],
        check=True,
        capture_output=True,
        env={**os.environ, "DOCKER_HOST": docker_host()},
    )
    containers, volumes = _state(engine, pod.uid)
    assert old["Id"] not in containers
    assert record in volumes

    out = _apply(tmp_path, source, capsys)

    assert (containers, [v for v in volumes if v != record]) == _state(engine, pod.uid)
    assert f"remove volume {record}" in out, out
