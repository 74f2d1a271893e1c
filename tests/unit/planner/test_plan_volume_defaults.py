"""The volume rules of issue 27, as the modern kubelet has them, one table per rule in
the manner of the kubelet's ``TestComputePodActions`` (a case per row: an id, the pod,
what the engine holds, what the plan does and why).

* ConfigMap, Secret, downwardAPI and projected files default to mode 0644
  (``SetDefaults_ConfigMapVolumeSource``, ``SetDefaults_SecretVolumeSource``,
  ``SetDefaults_DownwardAPIVolumeSource``, ``SetDefaults_ProjectedVolumeSource``); a
  volume written with the 0400 of earlier versions is rewritten in place, the
  containers that mount it keep running.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from podsync.actions._actions import Reason, WriteVolume
from tests.unit.loop.test_content_volumes import fake, load, run, visible

OBJECTS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {app.conf: "color=blue"}
---
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: hunter2, user: app}
"""


def pod_with(volume: str, spec: str = "") -> str:
    """A pod whose one container mounts the volume ``files`` given as ``volume`` (the
    source's YAML, after ``- name: files``); ``spec`` adds pod fields."""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: web, labels: {{app: web}}}}
spec:
{spec}  volumes:
  - name: files
    {volume}
  containers:
  - name: app
    image: busybox
    volumeMounts: [{{name: files, mountPath: /etc/files}}]
"""


@attrs.frozen
class ModeCase:
    id: str
    volume: str
    modes: dict[str, int]
    spec: str = ""


MODE_CASES = [
    ModeCase("secret-default", "secret: {secretName: db}", {"password": 0o644, "user": 0o644}),
    ModeCase(
        "secret-default-mode",
        "secret: {secretName: db, defaultMode: 0400}",
        {"password": 0o400, "user": 0o400},
    ),
    ModeCase(
        "secret-item-mode",
        "secret: {secretName: db, items: [{key: password, path: pw, mode: 0440}, "
        "{key: user, path: user}]}",
        {"pw": 0o440, "user": 0o644},
    ),
    ModeCase("config-map-default", "configMap: {name: settings}", {"app.conf": 0o644}),
    ModeCase(
        "downward-api-default",
        "downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}",
        {"labels": 0o644},
    ),
    ModeCase(
        "projected-secret-default",
        "projected: {sources: [{secret: {name: db}}, {configMap: {name: settings}}]}",
        {"password": 0o644, "user": 0o644, "app.conf": 0o644},
    ),
    ModeCase(
        "projected-default-mode",
        "projected: {defaultMode: 0440, sources: [{secret: {name: db}}]}",
        {"password": 0o440, "user": 0o440},
    ),
    # An fsGroup ORs in 0440 (SetVolumeOwnership): nothing to add to 0644.
    ModeCase(
        "secret-fs-group",
        "secret: {secretName: db}",
        {"password": 0o644, "user": 0o644},
        spec="  securityContext: {fsGroup: 2000}\n",
    ),
    ModeCase(
        "secret-default-mode-fs-group",
        "secret: {secretName: db, defaultMode: 0400}",
        {"password": 0o440, "user": 0o440},
        spec="  securityContext: {fsGroup: 2000}\n",
    ),
]


@pytest.mark.parametrize("case", MODE_CASES, ids=[c.id for c in MODE_CASES])
def test_files_default_to_0644(case: ModeCase, tmp_path: Path) -> None:
    """The files a container sees, with their modes, after one sync."""
    pods = load(OBJECTS, pod_with(case.volume, case.spec))
    runtime = fake()
    assert run(pods, runtime, tmp_path).ok
    volume = f"podsync-content_{pods[0].uid}_files"
    assert {path: seen[1] for path, seen in visible(runtime, volume).items() if seen} == case.modes


@attrs.frozen
class UpgradeCase:
    id: str
    #: The volume as the earlier podsync wrote it (its 0400 default spelt out) ...
    before: str
    #: ... and as the pod file says it, read by this version.
    after: str
    #: What the plan of the second sync does: the message of its one write, or None.
    write: str | None
    modes: dict[str, int]
    spec: str = ""


UPGRADE_CASES = [
    UpgradeCase(
        "secret-0400-rewritten",
        "secret: {secretName: db, defaultMode: 0400}",
        "secret: {secretName: db}",
        "write default/web volume files (secret): Secret default/db changed",
        {"password": 0o644, "user": 0o644},
    ),
    UpgradeCase(
        "projected-secret-0400-rewritten",
        "projected: {sources: [{secret: {name: db, items: [{key: user, path: user, mode: 0400}]}},"
        " {configMap: {name: settings}}]}",
        "projected: {sources: [{secret: {name: db, items: [{key: user, path: user}]}},"
        " {configMap: {name: settings}}]}",
        "write default/web volume files (projected): Secret default/db changed",
        {"user": 0o644, "app.conf": 0o644},
    ),
    UpgradeCase(
        "secret-with-fs-group-rewritten",
        "secret: {secretName: db, defaultMode: 0400}",
        "secret: {secretName: db}",
        "write default/web volume files (secret): Secret default/db changed",
        {"password": 0o644, "user": 0o644},
        spec="  securityContext: {fsGroup: 2000}\n",
    ),
    # An explicit defaultMode keeps its files as they are: nothing to write.
    UpgradeCase(
        "explicit-0400-kept",
        "secret: {secretName: db, defaultMode: 0400}",
        "secret: {secretName: db, defaultMode: 0400}",
        None,
        {"password": 0o400, "user": 0o400},
    ),
    # A ConfigMap's default was 0644 already: nothing to write.
    UpgradeCase(
        "config-map-kept",
        "configMap: {name: settings}",
        "configMap: {name: settings}",
        None,
        {"app.conf": 0o644},
    ),
]


@pytest.mark.parametrize("case", UPGRADE_CASES, ids=[c.id for c in UPGRADE_CASES])
def test_a_volume_of_an_earlier_default_is_rewritten_in_place(
    case: UpgradeCase, tmp_path: Path
) -> None:
    """The first sync after the upgrade rewrites a volume whose files an earlier version
    wrote 0400 (its content digest holds the modes) and restarts nothing: the file
    content is no part of a container's spec hash, as the kubelet's atomic writer
    swaps ``..data`` under a running container."""
    runtime = fake()
    before = load(OBJECTS, pod_with(case.before, case.spec))
    assert run(before, runtime, tmp_path).ok
    running = {c.id for c in runtime.list_containers() if c.running}
    after = load(OBJECTS, pod_with(case.after, case.spec))
    assert after[0].uid == before[0].uid
    result = run(after, runtime, tmp_path)
    assert result.ok
    actions = [(type(a).__name__, a.reason, a.message) for a in result.plan.actions]
    if case.write is None:
        assert actions == []
    else:
        assert actions == [("WriteVolume", Reason.VOLUME_CHANGED, case.write)]
        assert all(isinstance(a, WriteVolume) for a in result.plan.actions)
    assert {c.id for c in runtime.list_containers() if c.running} == running
    volume = f"podsync-content_{after[0].uid}_files"
    assert {path: seen[1] for path, seen in visible(runtime, volume).items() if seen} == case.modes
