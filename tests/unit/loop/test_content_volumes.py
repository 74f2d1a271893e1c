"""configMap, secret and downwardAPI volumes as engine volumes (issue 18): created and
written through the engine before the first container that mounts them, mounted
read-only as named volumes, read back through the containers that mount them,
rewritten in place for the same containers, removed with their pod - and nothing of
them under the root directory. Containers made by an earlier podsync, which bind the
host directories, keep them updated until they are replaced."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from podsync import NodeInfo, Pod, parse_pods, plan, sync
from podsync.actions._actions import Create, CreateVolume, Reason, RemoveVolume, WriteVolume
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.host._volume_writer import write_volume as write_host_volume
from podsync.model._pod import ObservedVolume
from podsync.model._volume_entries import EntryKind
from podsync.spec._content_layout import PAYLOADS
from podsync.spec._labels import (
    LABEL_CONTENT_VOLUMES,
    LABEL_POD_UID,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
)
from podsync.spec._volumes import NamedVolumeMount, content_dir
from podsync.testing import FakeClock, FakeRuntime

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)
NOW = 1_800_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"

OBJECTS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data:
  app.conf: |
    color=blue
  extra.conf: "x=1"
---
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData:
  password: hunter2
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  volumes:
  - name: config
    configMap: {name: settings}
  - name: creds
    secret: {secretName: db}
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - {name: config, mountPath: /etc/config}
    - {name: creds, mountPath: /etc/creds}
    - {name: info, mountPath: /etc/info}
  - name: sidecar
    image: busybox
"""


HOST_KEY = b"k" * 32


def load(objects: str = OBJECTS, pod: str = POD) -> list[Pod]:
    text = objects + "---\n" + pod
    return list(parse_pods(text, source_name="pods.yaml", node=NODE, secret_key=HOST_KEY))


def as_made_by_an_earlier_podsync(runtime: FakeRuntime, root: Path, container_id: str) -> None:
    """Make a container look as a podsync before engine content volumes made it: no
    ``LABEL_CONTENT_VOLUMES``, binds of the host directories instead of the volumes."""
    with runtime._lock:
        found = runtime._containers[container_id]
        found.labels.pop(LABEL_CONTENT_VOLUMES)
        assert found.spec is not None
        found.spec = attrs.evolve(found.spec, volumes=())


def fake() -> FakeRuntime:
    return FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW))


def run(pods: list[Pod], runtime: FakeRuntime, root: Path, now: float = NOW):  # type: ignore[no-untyped-def]
    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(root))
    return sync(pods, runtime, options=options, probe=False, clock=FakeClock(now))


def visible(runtime: FakeRuntime, volume: str) -> dict[str, tuple[bytes, int] | None]:
    """What a container reading each name of ``volume`` gets: bytes and mode, or None."""
    files = runtime.volume_files(volume)
    payload = files["..data"].target
    out: dict[str, tuple[bytes, int] | None] = {}
    for path, entry in files.items():
        if path == "." or "/" in path or path.startswith(".."):
            continue
        assert (entry.kind, entry.target) == (EntryKind.SYMLINK, f"..data/{path}")
        real = files.get(f"{payload}/{path}")
        out[path] = None if real is None else (real.data, real.mode)
    return out


def test_the_plan_creates_and_writes_each_volume_before_the_containers(tmp_path: Path) -> None:
    pods = load()
    uid = pods[0].uid
    made = plan(pods, now=NOW, options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)))
    (pod_plan,) = made.pods
    kinds = [type(a).__name__ for a in pod_plan.actions]
    assert kinds == ["CreateVolume", "WriteVolume"] * 3 + ["Create"] * 3
    create, write = pod_plan.actions[0], pod_plan.actions[1]
    assert isinstance(create, CreateVolume)
    assert isinstance(write, WriteVolume)
    assert create.volume == f"podsync-content_{uid}_config"
    assert create.labels == {
        LABEL_VOLUME_KIND: "content",
        "io.podsync.volume.namespace": "default",
        LABEL_POD_UID: uid,
        LABEL_VOLUME_NAME: "config",
    }
    assert (write.engine_volume, write.path, write.image) == (create.volume, "", PAUSE)
    assert (write.payload, write.previous) == (PAYLOADS[0], "")
    assert (write.reason, write.message) == (
        Reason.VOLUME_MISSING,
        "write default/web volume config (configMap): files not written yet",
    )
    app = pod_plan.actions[-2]
    assert isinstance(app, Create)
    assert app.container == "app"
    # Named volumes, read-only; no host path at all.
    assert app.spec.volumes == tuple(
        NamedVolumeMount(f"podsync-content_{uid}_{name}", f"/etc/{name}", True)
        for name in ("config", "creds", "info")
    )
    assert not [m for m in app.spec.mounts if str(tmp_path) in m.host_path]
    assert json.loads(app.spec.labels[LABEL_CONTENT_VOLUMES]) == {
        "config": "/etc/config",
        "creds": "/etc/creds",
        "info": "/etc/info",
    }
    sidecar = pod_plan.actions[-1]
    assert isinstance(sidecar, Create)
    assert LABEL_CONTENT_VOLUMES not in sidecar.spec.labels


def test_sync_writes_the_files_into_the_engine_and_nothing_under_the_root(
    tmp_path: Path,
) -> None:
    runtime = fake()
    pods = load()
    uid = pods[0].uid
    assert run(pods, runtime, tmp_path).ok
    assert visible(runtime, f"podsync-content_{uid}_config") == {
        "app.conf": (b"color=blue\n", 0o644),
        "extra.conf": (b"x=1", 0o644),
    }
    # A Secret's files are 0644 unless the pod says otherwise, as Kubernetes'.
    assert visible(runtime, f"podsync-content_{uid}_creds") == {"password": (b"hunter2", 0o644)}
    assert visible(runtime, f"podsync-content_{uid}_info") == {"labels": (b'app="web"', 0o644)}
    owned = {
        v.name: v.labels[LABEL_VOLUME_KIND]
        for v in runtime.volumes
        if v.name.startswith("podsync-content_")
    }
    assert owned == {f"podsync-content_{uid}_{n}": "content" for n in ("config", "creds", "info")}
    assert not (tmp_path / uid / "volumes").exists()
    # The steady state: nothing to write, the records read from one volume list (their
    # record volumes, tests/unit/spec/test_content_records.py), no archive read.
    runtime.calls.clear()
    again = run(pods, runtime, tmp_path)
    assert not again.plan.has_changes
    assert runtime.call_names() == ["list", "list_volumes"]


def test_an_edited_configmap_is_seen_by_the_same_container(tmp_path: Path) -> None:
    runtime = fake()
    assert run(load(), runtime, tmp_path).ok
    uid = load()[0].uid
    app = [c for c in runtime.containers if c.name.startswith("k8s_app") and c.running]
    edited = OBJECTS.replace("color=blue", "color=green").replace('  extra.conf: "x=1"\n', "")
    result = run(load(edited), runtime, tmp_path)
    assert result.ok
    writes = [a for a in result.plan.actions if isinstance(a, WriteVolume)]
    assert [(w.volume, w.reason, w.previous, w.payload) for w in writes] == [
        ("config", Reason.VOLUME_CHANGED, PAYLOADS[0], PAYLOADS[1])
    ]
    assert writes[0].message == (
        "write default/web volume config (configMap): ConfigMap default/settings changed"
    )
    assert not [a for a in result.plan.actions if isinstance(a, Create)]
    assert [c.id for c in runtime.containers if c.name.startswith("k8s_app") and c.running] == [
        c.id for c in app
    ]
    volume = f"podsync-content_{uid}_config"
    # The removed key's link dangles; the old payload is an empty file.
    assert visible(runtime, volume) == {"app.conf": (b"color=green\n", 0o644), "extra.conf": None}
    assert runtime.volume_files(volume)[PAYLOADS[0]].data == b""
    assert not run(load(edited), runtime, tmp_path).plan.has_changes


def test_a_pod_that_goes_takes_its_content_volumes_with_it(tmp_path: Path) -> None:
    runtime = fake()
    assert run(load(), runtime, tmp_path).ok
    runtime.add_volume(ObservedVolume("someone-elses", {}))
    runtime.add_volume(ObservedVolume("podsync_default_data", {LABEL_VOLUME_KIND: "claim"}))
    uid = load()[0].uid
    # Stopped first, removed once older than the GC's minimum age, then the volumes.
    assert run([], runtime, tmp_path).ok
    result = run([], runtime, tmp_path, NOW + 3600)
    assert result.ok
    assert not runtime.containers
    removed = [
        a
        for a in result.plan.actions
        if isinstance(a, RemoveVolume) and a.volume.startswith("podsync-content_")
    ]
    assert [(a.volume, a.reason) for a in removed] == [
        (f"podsync-content_{uid}_{n}", Reason.ORPHANED_POD_VOLUME)
        for n in ("config", "creds", "info")
    ]
    assert removed[0].message == (
        f"remove volume podsync-content_{uid}_config: the files of volume config of a pod "
        "that is no longer desired"
    )
    assert [v.name for v in runtime.volumes] == ["podsync_default_data", "someone-elses"]


def test_an_earlier_podsyncs_container_keeps_its_host_directory_updated(
    tmp_path: Path,
) -> None:
    """A container made before content volumes were engine volumes binds the host
    directory: it keeps running, its spec hash unchanged, and the host directory keeps
    following the ConfigMap; a new container of the pod mounts the engine volume."""
    runtime = fake()
    pods = load()
    pod = pods[0]
    assert run(pods, runtime, tmp_path).ok
    # Make the app container look like an earlier podsync's: no LABEL_CONTENT_VOLUMES,
    # and its host directories written by the host writer.
    (app_id,) = [c.id for c in runtime.containers if c.name.startswith("k8s_app")]
    as_made_by_an_earlier_podsync(runtime, tmp_path, app_id)
    # Nor had it engine volumes, nor their record volumes (the pod's state volume stays:
    # its network container, of this version, holds it).
    for named in runtime.volumes:
        if not named.name.startswith("podsync-state_"):
            runtime.remove_volume(named.name)
    for volume in pod.volumes:
        assert volume.content is not None
        write_host_volume(
            content_dir(str(tmp_path), pod.uid, volume), str(tmp_path), volume.content, now=NOW
        )
    app = [c.id for c in runtime.containers if c.name.startswith("k8s_app")]
    edited = OBJECTS.replace("color=blue", "color=green")
    result = run(load(edited), runtime, tmp_path)
    assert result.ok
    writes = [a for a in result.plan.actions if isinstance(a, WriteVolume)]
    host = content_dir(str(tmp_path), pod.uid, pod.volumes[0])
    assert [(w.volume, w.path, w.engine_volume) for w in writes] == [("config", host, "")]
    assert "which a container made by an earlier podsync binds" in writes[0].message
    assert (Path(host) / "app.conf").read_text() == "color=green\n"
    assert [c.id for c in runtime.containers if c.name.startswith("k8s_app")] == app
    # It exits and is replaced: the new instance mounts the engine volume, written
    # with the current content first; the host directory is no longer written.
    runtime.exit(app_id, 1)
    # (A minute on: past the restart's back-off, whatever the fake engine's clock says.)
    later = run(load(edited.replace("color=green", "color=red")), runtime, tmp_path, NOW + 60)
    assert later.ok
    writes = [a for a in later.plan.actions if isinstance(a, WriteVolume)]
    assert [(w.volume, w.path, w.reason) for w in writes] == [
        ("config", "", Reason.VOLUME_MISSING),
        ("creds", "", Reason.VOLUME_MISSING),
        ("info", "", Reason.VOLUME_MISSING),
    ]
    assert (Path(host) / "app.conf").read_text() == "color=green\n"
    uid = pod.uid
    assert visible(runtime, f"podsync-content_{uid}_config")["app.conf"] == (b"color=red\n", 0o644)
    (new_app,) = [c for c in runtime.containers if c.name.startswith("k8s_app") and c.running]
    assert new_app.id != app_id
    assert LABEL_CONTENT_VOLUMES in new_app.labels


PINNED = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {app.conf: "color=blue"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: 6f1c0e7e-0000-4000-8000-000000000001}
spec:
  volumes:
  - {name: config, configMap: {name: settings}}
  - name: info
    downwardAPI:
      items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - {name: config, mountPath: /etc/config}
    - {name: info, mountPath: /etc/info}
"""


def test_the_spec_hash_of_a_container_with_content_volumes_did_not_change() -> None:
    """The hash podsync before engine content volumes gave this container (computed
    with that version): its running containers are kept on upgrade, not replaced."""
    from podsync.labels import LABEL_SPEC_HASH

    node = NodeInfo(name="n", milli_cpu=1000, memory=2**30)
    (pod,) = parse_pods(PINNED, source_name="pods.yaml", node=node)
    hashes = {
        a.container: a.spec.labels[LABEL_SPEC_HASH]
        for a in plan([pod], now=NOW).actions
        if isinstance(a, Create)
    }
    # Version 3 (issue 27) wrote the same text for a pod without labels: only the
    # version before the digest moved on, and an older label with this digest matches.
    assert hashes["app"] == "3:dc3c90d4fa02990121ae9740def0394e8b10f5a8a6657942a52c24b0ee83aefb"


def test_a_volume_is_read_back_through_an_exited_container(tmp_path: Path) -> None:
    """A pod whose containers all exited (restartPolicy Never) still has its record read,
    through the exited container: an edit is a change, not a first write."""
    runtime = fake()
    never = POD.replace("spec:\n", "spec:\n  restartPolicy: Never\n", 1)
    assert run(load(pod=never), runtime, tmp_path).ok
    for container in runtime.containers:
        if not container.name.startswith("k8s_net"):
            runtime.exit(container.id, 0)
    settled = run(load(pod=never), runtime, tmp_path)  # (stops net: the pod completed)
    assert not [a for a in settled.plan.actions if isinstance(a, WriteVolume)]
    edited = OBJECTS.replace("color=blue", "color=green")
    result = run(load(edited, never), runtime, tmp_path)
    writes = [a for a in result.plan.actions if isinstance(a, WriteVolume)]
    assert [(w.volume, w.reason, w.previous) for w in writes] == [
        ("config", Reason.VOLUME_CHANGED, PAYLOADS[0])
    ]
