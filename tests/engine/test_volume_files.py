"""configMap, secret and downwardAPI volumes on a real engine (issues 14 and 18): the
files live in engine volumes written through the engine (nothing under the root
directory), the container reads them through its read-only mount of the volume, an
edited ConfigMap reaches the running container (same container, not restarted)
through the ``..data`` swap, as the kubelet's atomic writer does it, and ``down``
leaves no volume of the pod behind."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import attrs
import docker
import pytest

import podsync
from podsync import PlanOptions, Pod, Reason, SyncResult, WriteVolume, parse_pods
from podsync.docker import DockerRuntime
from podsync.runtime._protocol import Runtime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, remove_volumes

SERVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data:
  app.conf: |
    color=blue
  mode: production
"""

POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: NAME
  labels: {{app: web}}
spec:
  volumes:
  - name: config
    configMap:
      name: settings
      items: [{{key: app.conf, path: app.conf}}, {{key: mode, path: env/mode, mode: 0600}}]
  - name: info
    downwardAPI:
      items:
      - {{path: labels, fieldRef: {{fieldPath: metadata.labels}}}}
      - {{path: name, fieldRef: {{fieldPath: metadata.name}}}}
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    volumeMounts:
    - {{name: config, mountPath: /etc/config}}
    - {{name: info, mountPath: /etc/info}}
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


def _load(name: str, settings: str = SETTINGS) -> Pod:
    (pod,) = parse_pods(settings + "---\n" + POD.replace("NAME", name))
    return pod


def _sync(pod: Pod, runtime: DockerRuntime, options: PlanOptions) -> SyncResult:
    result = podsync.sync([pod], runtime, options=options, probe=False)
    assert result.ok, result.plan.describe() + result.apply_result.summary()
    return result


def _volumes_of(cleanup: Cleanup, pod: Pod) -> None:
    """Remove the pod's content volumes after the test (its containers go first)."""
    for volume in pod.volumes:
        cleanup.add_volume(f"podsync-content_{pod.uid}_{volume.name}")


def _nothing_under(root: Path) -> list[str]:
    """Every volume file under the root directory (none: they live in the engine)."""
    return [str(p) for p in root.glob("*/volumes/**/*")] if root.exists() else []


def _app(engine: docker.DockerClient, pod: Pod) -> dict[str, object]:
    (entry,) = engine.api.containers(
        filters={
            "label": [
                f"{podsync.labels.LABEL_POD_UID}={pod.uid}",
                f"{podsync.labels.LABEL_CONTAINER}=app",
            ]
        }
    )
    inspected: dict[str, object] = engine.api.inspect_container(entry["Id"])
    return inspected


def _exec(runtime: DockerRuntime, container_id: str, *command: str) -> tuple[int, str]:
    result = runtime.exec_in_container(container_id, list(command), 10.0)
    return result.exit_code, result.output.decode()


def test_an_edited_configmap_reaches_the_running_container(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    name = f"vol-{uuid.uuid4().hex[:8]}"
    pod = _load(name)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    _volumes_of(cleanup, pod)
    options = _options(tmp_path)

    _sync(pod, runtime, options)
    app = _app(engine, pod)
    cid = str(app["Id"])
    assert _exec(runtime, cid, "/bin/cat", "/etc/config/app.conf") == (0, "color=blue\n")
    assert _exec(runtime, cid, "/bin/cat", "/etc/config/env/mode") == (0, "production")
    assert _exec(runtime, cid, "/bin/cat", "/etc/info/labels") == (0, 'app="web"')
    assert _exec(runtime, cid, "/bin/cat", "/etc/info/name") == (0, name)
    # The modes, through the symlinks into ..data.
    assert _exec(runtime, cid, "/bin/stat", "-L", "-c", "%a", "/etc/config/env/mode") == (
        0,
        "600\n",
    )
    assert _exec(runtime, cid, "/bin/stat", "-L", "-c", "%a", "/etc/config/app.conf") == (
        0,
        "644\n",
    )
    # Mounted read-only, as the kubelet mounts these volumes.
    code, output = _exec(runtime, cid, "/bin/touch", "/etc/config/new")
    assert code != 0, output
    assert "Read-only file system" in output

    edited = _load(name, SETTINGS.replace("blue", "green"))
    result = _sync(edited, runtime, options)

    assert [(type(a), a.reason) for a in result.plan.actions] == [
        (WriteVolume, Reason.VOLUME_CHANGED)
    ]
    # The same container, still running, never restarted, sees the new file.
    after = _app(engine, edited)
    assert after["Id"] == cid
    state = after["State"]
    assert isinstance(state, dict)
    assert isinstance(app["State"], dict)
    assert state["StartedAt"] == app["State"]["StartedAt"]
    assert state["Running"] is True
    assert _exec(runtime, cid, "/bin/cat", "/etc/config/app.conf") == (0, "color=green\n")
    code, target = _exec(runtime, cid, "/bin/readlink", "/etc/config/..data")
    assert code == 0
    assert target.startswith("..")
    assert not podsync.sync([edited], runtime, options=options, probe=False).plan.has_changes
    # An item removed from the ConfigMap: its name dangles (ENOENT), the rest is read.
    dropped = SETTINGS.replace("blue", "red")
    third = _load(name, dropped)
    third = attrs.evolve(
        third,
        volumes=tuple(
            attrs.evolve(
                v,
                content=attrs.evolve(
                    v.content, files=tuple(f for f in v.content.files if f.path != "env/mode")
                ),
            )
            if v.content is not None and v.name == "config"
            else v
            for v in third.volumes
        ),
    )
    _sync(third, runtime, options)
    assert _exec(runtime, cid, "/bin/cat", "/etc/config/app.conf") == (0, "color=red\n")
    code, output = _exec(runtime, cid, "/bin/cat", "/etc/config/env/mode")
    assert code != 0
    assert "No such file or directory" in output
    # Nothing of the content volumes is under the root directory.
    assert _nothing_under(tmp_path / "root") == []
    # The record is read through the container, running or exited (the archive API
    # follows ..data and mounts an exited container's volumes).
    record = "/etc/config/..data/..podsync"
    running = runtime.read_container_file(cid, record, limit=65536)
    assert running is not None
    assert json.loads(running)["names"] == ["app.conf"]
    runtime.stop_container(cid, 1)
    assert runtime.read_container_file(cid, record, limit=65536) == running


FS_GROUP_POD = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  securityContext: {{runAsUser: 1000, fsGroup: 2000}}
  volumes:
  - name: config
    configMap:
      name: settings
      defaultMode: 0600
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    volumeMounts: [{{name: config, mountPath: /etc/config}}]
"""


def test_a_non_root_user_reads_owner_only_files_through_the_fs_group(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    """With an fsGroup the files belong to that group and are group-readable
    (SetVolumeOwnership ORs in 0440 for a read-only volume): user 1000 reads a file of
    mode 0600 that root owns."""
    (pod,) = parse_pods(
        SETTINGS + "---\n" + FS_GROUP_POD.replace("NAME", f"vol-{uuid.uuid4().hex[:8]}")
    )
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    _volumes_of(cleanup, pod)
    _sync(pod, runtime, _options(tmp_path))
    cid = str(_app(engine, pod)["Id"])
    assert _exec(runtime, cid, "/bin/cat", "/etc/config/mode") == (0, "production")
    assert _exec(runtime, cid, "/bin/stat", "-L", "-c", "%a %u %g", "/etc/config/mode") == (
        0,
        "640 0 2000\n",
    )


SECRET_POD = f"""\
apiVersion: v1
kind: Secret
metadata: {{name: db}}
stringData: {{password: hunter2}}
---
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  volumes:
  - {{name: creds, secret: {{secretName: db}}}}
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    securityContext: {{runAsUser: 1000}}
    volumeMounts: [{{name: creds, mountPath: /run/creds}}]
"""


def test_a_non_root_container_reads_its_secret_without_extra_settings(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    """A secret volume's file is 0644, Kubernetes' default (SetDefaults_SecretVolumeSource,
    issue 27): a container of user 1000, with no fsGroup and no defaultMode, reads the
    root-owned file; its value is in no label of the container."""
    text = SECRET_POD.replace("NAME", f"vol-{uuid.uuid4().hex[:8]}")
    (pod,) = parse_pods(text, secret_key=b"k" * 32)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    _volumes_of(cleanup, pod)
    _sync(pod, runtime, _options(tmp_path))
    app = _app(engine, pod)
    cid = str(app["Id"])
    assert _exec(runtime, cid, "/bin/cat", "/run/creds/password") == (0, "hunter2")
    assert _exec(runtime, cid, "/bin/id", "-u") == (0, "1000\n")
    assert _exec(runtime, cid, "/bin/stat", "-L", "-c", "%a %u", "/run/creds/password") == (
        0,
        "644 0\n",
    )
    config = app["Config"]
    assert isinstance(config, dict)
    assert "hunter2" not in json.dumps(config["Labels"])


ALL_KINDS = f"""\
apiVersion: v1
kind: ConfigMap
metadata: {{name: NAME-settings}}
data: {{app.conf: "color=blue"}}
---
apiVersion: v1
kind: Secret
metadata: {{name: NAME-db}}
stringData: {{password: hunter2}}
---
apiVersion: v1
kind: Pod
metadata: {{name: NAME, labels: {{app: web}}}}
spec:
  volumes:
  - {{name: config, configMap: {{name: NAME-settings}}}}
  - {{name: creds, secret: {{secretName: NAME-db}}}}
  - name: info
    downwardAPI:
      items: [{{path: labels, fieldRef: {{fieldPath: metadata.labels}}}}]
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    volumeMounts:
    - {{name: config, mountPath: /etc/config}}
    - {{name: creds, mountPath: /run/creds}}
    - {{name: info, mountPath: /etc/info}}
"""


def test_apply_and_down_leave_no_content_volume_and_nothing_under_the_root(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """``podsync apply`` makes one labelled engine volume per configMap, secret and
    downwardAPI volume (mounted as volumes, not host binds), the container sees its
    files with their modes, and ``podsync down`` removes them with the pod; the root
    directory never holds any of their files."""
    name = f"vol-{uuid.uuid4().hex[:8]}"
    source = tmp_path / "pods.yaml"
    source.write_text(ALL_KINDS.replace("NAME", name))
    root = tmp_path / "root"
    common = ["--root-dir", str(root), "--stop-timeout", "1"]
    network = ["--network-mode", "none", "--network-image", PAUSE_IMAGE]
    argv = ["apply", *common, *network, str(source)]
    assert 0 == podsync.cli.main(argv)
    (entry,) = engine.api.containers(
        filters={
            "label": [
                f"{podsync.labels.LABEL_CONTAINER}=app",
                f"{podsync.labels.LABEL_POD_NAME}={name}",
            ]
        }
    )
    uid = entry["Labels"][podsync.labels.LABEL_POD_UID]
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={uid}")
    ours = sorted(f"podsync-content_{uid}_{v}" for v in ("config", "creds", "info"))
    for volume in ours:
        cleanup.add_volume(volume)
    labelled = engine.api.volumes(filters={"label": f"{podsync.labels.LABEL_POD_UID}={uid}"})
    kinds = {v["Name"]: v["Labels"][podsync.labels.LABEL_VOLUME_KIND] for v in labelled["Volumes"]}
    assert sorted(n for n, k in kinds.items() if k == "content") == ours
    # And one record volume each (tests/unit/spec/test_content_records.py), beside the
    # pod's state volume (its termination-message files: /dev/termination-log).
    assert sorted(kinds.values()) == ["content"] * 3 + ["content-record"] * 3 + ["pod-state"]
    inspected = engine.api.inspect_container(entry["Id"])
    mounts = {m["Destination"]: (m["Type"], m["RW"]) for m in inspected["Mounts"]}
    assert mounts["/etc/config"] == ("volume", False)
    assert mounts["/run/creds"] == ("volume", False)
    assert mounts["/etc/info"] == ("volume", False)
    with DockerRuntime() as runtime:
        cid = entry["Id"]
        assert _exec(runtime, cid, "/bin/cat", "/etc/config/app.conf") == (0, "color=blue")
        assert _exec(runtime, cid, "/bin/cat", "/run/creds/password") == (0, "hunter2")
        assert _exec(runtime, cid, "/bin/cat", "/etc/info/labels") == (0, 'app="web"')
        stat = ["/bin/stat", "-L", "-c", "%a %u %g"]
        assert _exec(runtime, cid, *stat, "/run/creds/password") == (
            0,
            "644 0 0\n",
        )  # Kubernetes' default mode
        assert _exec(runtime, cid, *stat, "/etc/config/app.conf") == (0, "644 0 0\n")
    assert _nothing_under(root) == []

    assert 0 == podsync.cli.main(["down", *common, str(source)])
    left = engine.api.volumes(filters={"label": f"{podsync.labels.LABEL_POD_UID}={uid}"})
    assert left["Volumes"] in (None, [])
    assert (
        engine.api.containers(all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={uid}"})
        == []
    )
    assert _nothing_under(root) == []


class _Counting:
    """A ``DockerRuntime`` that counts the calls a command makes through it: how many
    records were read out of a container (``read_container_file``: one ``GET
    .../archive`` each) and how many times the volumes were listed."""

    def __init__(self, runtime: DockerRuntime, counts: dict[str, int]) -> None:
        self._runtime = runtime
        self._counts = counts

    def __getattr__(self, name: str) -> object:
        found = getattr(self._runtime, name)
        if name in ("read_container_file", "list_volumes") and callable(found):

            def counted(*args: object, **kwargs: object) -> object:
                self._counts[name] = self._counts.get(name, 0) + 1
                return found(*args, **kwargs)

            return counted
        return found


def _records_of(engine: docker.DockerClient, uid: str) -> dict[str, dict[str, str]]:
    """The pod's record volumes of content volumes: their labels, by name."""
    listed = engine.api.volumes(filters={"label": f"{podsync.labels.LABEL_POD_UID}={uid}"})
    return {
        v["Name"]: v["Labels"]
        for v in listed["Volumes"] or ()
        if v["Labels"][podsync.labels.LABEL_VOLUME_KIND] == "content-record"
    }


def test_a_second_apply_reads_no_record_out_of_a_container(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """The records of content volumes are record volumes: a second ``podsync apply``
    of pods with a ConfigMap volume lists the volumes once and makes no archive read
    (counted around the real DockerRuntime); an edited ConfigMap is still seen by the
    running container and replaces its volume's record; volumes written before record
    volumes are read once and then recorded; ``down`` leaves no podsync volume."""
    name = f"rec-{uuid.uuid4().hex[:8]}"
    source = tmp_path / "pods.yaml"
    source.write_text(ALL_KINDS.replace("NAME", name))
    root = tmp_path / "root"
    common = ["--root-dir", str(root), "--stop-timeout", "1"]
    network = ["--network-mode", "none", "--network-image", PAUSE_IMAGE]
    argv = ["apply", *common, *network, str(source)]
    counts: dict[str, int] = {}

    def factory(host: str | None) -> Runtime:
        return cast(Runtime, _Counting(DockerRuntime(), counts))

    def apply() -> dict[str, int]:
        counts.clear()
        assert 0 == podsync.cli.main(argv, runtime_factory=factory)
        return dict(counts)

    apply()
    (entry,) = engine.api.containers(
        filters={
            "label": [
                f"{podsync.labels.LABEL_CONTAINER}=app",
                f"{podsync.labels.LABEL_POD_NAME}={name}",
            ]
        }
    )
    uid, cid = entry["Labels"][podsync.labels.LABEL_POD_UID], entry["Id"]
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={uid}")
    first = _records_of(engine, uid)
    assert sorted(r[podsync.labels.LABEL_VOLUME_NAME] for r in first.values()) == [
        "config",
        "creds",
        "info",
    ]
    assert not any("hunter2" in value for r in first.values() for value in r.values())

    assert apply() == {"list_volumes": 1}

    source.write_text(ALL_KINDS.replace("NAME", name).replace("color=blue", "color=green"))
    apply()
    with DockerRuntime() as runtime:
        assert _exec(runtime, cid, "/bin/cat", "/etc/config/app.conf") == (0, "color=green")
    second = _records_of(engine, uid)
    assert len(second) == 3
    (config,) = [r for r in second.values() if r[podsync.labels.LABEL_VOLUME_NAME] == "config"]
    assert config["io.podsync.record.generation"] == "2"
    assert apply() == {"list_volumes": 1}

    # As written by a podsync before record volumes: the file in the volume only.
    remove_volumes(engine, list(second))
    assert apply() == {"list_volumes": 1, "read_container_file": 3}
    assert len(_records_of(engine, uid)) == 3
    assert apply() == {"list_volumes": 1}

    assert 0 == podsync.cli.main(["down", *common, str(source)])
    left = engine.api.volumes(filters={"label": f"{podsync.labels.LABEL_POD_UID}={uid}"})
    assert left["Volumes"] in (None, [])
    assert not [v for v in engine.api.volumes()["Volumes"] or () if uid in v["Name"]]
