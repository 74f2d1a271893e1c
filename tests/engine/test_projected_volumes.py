"""A projected volume on a real engine: the container reads the files of a ConfigMap, a
Secret and the downward API merged in one read-only directory, with their modes, and an
edited ConfigMap reaches the same running container through the ``..data`` swap (no
restart), as a configMap volume's does (tests/engine/test_volume_files.py)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

import podsync
from podsync import Reason, WriteVolume, parse_pods
from podsync.docker import DockerRuntime
from tests.engine.test_volume_files import SERVE, _app, _exec, _nothing_under, _options, _sync
from tests.support.engine import TEST_IMAGE, Cleanup

HOST_KEY = b"k" * 32

PROJECTED = f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: NAME-config
data:
  app.conf: |
    color=blue
---
apiVersion: v1
kind: Secret
metadata:
  name: NAME-db
stringData:
  password: hunter2
  username: app
---
apiVersion: v1
kind: Pod
metadata:
  name: NAME
  labels:
    app: web
spec:
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    volumeMounts:
    - name: all-in-one
      mountPath: /etc/app
  volumes:
  - name: all-in-one
    projected:
      sources:
      - configMap:
          name: NAME-config
      - secret:
          name: NAME-db
          items:
          - key: password
            path: db/password
            mode: 0440
          - key: username
            path: db/username
      - downwardAPI:
          items:
          - path: labels
            fieldRef:
              fieldPath: metadata.labels
"""


@pytest.fixture
def runtime(engine: docker.DockerClient) -> Iterator[DockerRuntime]:
    with DockerRuntime() as rt:
        yield rt


def test_a_container_reads_the_merged_files_and_an_edited_configmap_without_a_restart(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    name = f"proj-{uuid.uuid4().hex[:8]}"
    text = PROJECTED.replace("NAME", name)
    (pod,) = parse_pods(text, secret_key=HOST_KEY)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    cleanup.add_volume(f"podsync-content_{pod.uid}_all-in-one")
    options = _options(tmp_path)

    _sync(pod, runtime, options)
    app = _app(engine, pod)
    cid = str(app["Id"])
    # Every source's files, in one directory.
    assert _exec(runtime, cid, "/bin/cat", "/etc/app/app.conf") == (0, "color=blue\n")
    assert _exec(runtime, cid, "/bin/cat", "/etc/app/db/password") == (0, "hunter2")
    assert _exec(runtime, cid, "/bin/cat", "/etc/app/db/username") == (0, "app")
    assert _exec(runtime, cid, "/bin/cat", "/etc/app/labels") == (0, 'app="web"')
    # Their modes: 0644 by default (a Secret's too, as Kubernetes'), the item's mode.
    stat = ["/bin/stat", "-L", "-c", "%a"]
    assert _exec(runtime, cid, *stat, "/etc/app/app.conf") == (0, "644\n")
    assert _exec(runtime, cid, *stat, "/etc/app/db/password") == (0, "440\n")
    assert _exec(runtime, cid, *stat, "/etc/app/db/username") == (0, "644\n")
    assert _exec(runtime, cid, *stat, "/etc/app/labels") == (0, "644\n")
    # Mounted read-only, as the kubelet mounts it; no Secret value in a label.
    code, output = _exec(runtime, cid, "/bin/touch", "/etc/app/new")
    assert code != 0
    assert "Read-only file system" in output
    config = app["Config"]
    assert isinstance(config, dict)
    assert "hunter2" not in json.dumps(config["Labels"])

    (edited,) = parse_pods(text.replace("blue", "green"), secret_key=HOST_KEY)
    result = _sync(edited, runtime, options)
    assert [(type(a), a.reason, a.message) for a in result.plan.actions] == [
        (
            WriteVolume,
            Reason.VOLUME_CHANGED,
            f"write default/{name} volume all-in-one (projected): "
            f"ConfigMap default/{name}-config changed",
        )
    ]
    after = _app(engine, edited)
    assert after["Id"] == cid
    state, before = after["State"], app["State"]
    assert isinstance(state, dict)
    assert isinstance(before, dict)
    assert (state["Running"], state["StartedAt"]) == (True, before["StartedAt"])
    assert _exec(runtime, cid, "/bin/cat", "/etc/app/app.conf") == (0, "color=green\n")
    # The other sources' files are still read, with their modes.
    assert _exec(runtime, cid, "/bin/cat", "/etc/app/db/password") == (0, "hunter2")
    assert _exec(runtime, cid, *stat, "/etc/app/db/password") == (0, "440\n")
    assert not podsync.sync([edited], runtime, options=options, probe=False).plan.has_changes
    assert _nothing_under(tmp_path / "root") == []
