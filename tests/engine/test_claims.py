"""``persistentVolumeClaim`` volumes on a real engine (issue 14): a pod writes into its
claim; ``podsync down`` removes the pod, not the claim's volume; another pod of the same
claim reads what the first wrote; neither ``down`` nor garbage collection removes the
volume; a volume someone made by hand is used as it is.

Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>`` only.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import docker

import podsync
import podsync.cli
import podsync.spec
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_POD_UID, LABEL_VOLUME_CLAIM, LABEL_VOLUME_KIND
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

SERVE = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  restartPolicy: {policy}
  terminationGracePeriodSeconds: 1
  volumes:
  - name: store
    persistentVolumeClaim: {{claimName: {claim}}}
  containers:
  - name: app
    image: {image}
    imagePullPolicy: Never
    command: [/bin/sh, -c, {script}]
    volumeMounts: [{{name: store, mountPath: /data}}]
"""


def _pod_file(tmp_path: Path, name: str, claim: str, namespace: str, script: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        POD.format(
            name=name,
            namespace=namespace,
            claim=claim,
            image=TEST_IMAGE,
            policy="Never",
            script=json.dumps(script),
        )
    )
    return path


def _argv(command: str, tmp_path: Path, *extra: str) -> list[str]:
    return [
        command,
        "--root-dir",
        str(tmp_path / "root"),
        *(["--network-mode", "none", "--network-image", PAUSE_IMAGE] if command != "down" else []),
        "--stop-timeout",
        "1",
        *extra,
    ]


def _volume(engine: docker.DockerClient, name: str) -> dict[str, object] | None:
    try:
        return dict(engine.api.inspect_volume(name))
    except docker.errors.NotFound:
        return None


def _app_logs(pod: podsync.Pod, timeout: float = 30.0) -> list[bytes]:
    """The log lines of ``pod``'s container ``app``, once its script has ended (every
    script here does): ``apply --wait`` returns as soon as it runs, before its ``cat``
    may have written anything."""
    deadline = time.monotonic() + timeout
    with DockerRuntime() as runtime:
        while True:
            (app,) = [
                c
                for c in runtime.list_containers()
                if c.labels.get(LABEL_POD_UID) == pod.uid
                and c.labels.get(podsync.labels.LABEL_CONTAINER) == "app"
            ]
            if not app.running or time.monotonic() > deadline:
                return [line.data for line in runtime.container_logs(app.id)]
            time.sleep(0.1)


def test_a_claim_outlives_its_pods_down_and_gc(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    namespace = f"claims-{uuid.uuid4().hex[:8]}"
    volume = cleanup.add_volume(podsync.spec.claim_volume_name(namespace, "data"))
    cleanup.add_label(f"{podsync.labels.LABEL_POD_NAMESPACE}={namespace}")
    writer = _pod_file(tmp_path, "writer", "data", namespace, "echo kept > /data/note; " + SERVE)
    reader = _pod_file(tmp_path, "reader", "data", namespace, "cat /data/note")

    # The writer runs and writes into its claim: the volume was created by podsync,
    # labelled as its own.
    assert 0 == podsync.cli.main(_argv("apply", tmp_path, "--wait", "--timeout", "60", str(writer)))
    created = _volume(engine, volume)
    assert created is not None
    labels = created["Labels"]
    assert isinstance(labels, dict)
    assert ("claim", "data") == (labels[LABEL_VOLUME_KIND], labels[LABEL_VOLUME_CLAIM])

    # down removes the pod, not the claim's data.
    assert 0 == podsync.cli.main(_argv("down", tmp_path, str(writer)))
    assert not engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_NAMESPACE}={namespace}"}
    )
    assert _volume(engine, volume) is not None

    # Another pod of the same claim reads what the first wrote.
    assert 0 == podsync.cli.main(_argv("apply", tmp_path, "--wait", "--timeout", "60", str(reader)))
    (pod,) = podsync.load_pods([str(reader)])
    assert [b"kept\n"] == _app_logs(pod)

    # Garbage collection of every exited instance it may take, then down again: the
    # volume stays.
    gc = ("--max-per-container", "0", "--min-age", "0", "--no-delete", str(reader))
    assert 0 == podsync.cli.main(_argv("apply", tmp_path, *gc))
    assert 0 == podsync.cli.main(_argv("down", tmp_path, str(reader)))
    assert _volume(engine, volume) is not None


def test_a_volume_made_by_hand_is_used_as_it_is(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """A pre-provisioned volume of the claim's name (``docker volume create``, data put
    in by hand) is mounted as it is: its data is there, its labels stay as they were."""
    namespace = f"claims-{uuid.uuid4().hex[:8]}"
    volume = cleanup.add_volume(podsync.spec.claim_volume_name(namespace, "seed"))
    cleanup.add_label(f"{podsync.labels.LABEL_POD_NAMESPACE}={namespace}")
    engine.api.create_volume(volume, labels={"owner": "ops"})
    filler = engine.api.create_container(
        TEST_IMAGE,
        ["/bin/sh", "-c", "echo provisioned > /data/note"],
        host_config=engine.api.create_host_config(binds=[f"{volume}:/data"], network_mode="none"),
    )
    cleanup.add(filler["Id"])
    engine.api.start(filler["Id"])
    engine.api.wait(filler["Id"], timeout=30)
    reader = _pod_file(tmp_path, "reader", "seed", namespace, "cat /data/note")
    (pod,) = podsync.load_pods([str(reader)])

    with DockerRuntime() as runtime:
        planned = podsync.sync(
            [pod],
            runtime,
            options=podsync.PlanOptions(
                network_mode="none",
                network_image=PAUSE_IMAGE,
                root_dir=str(tmp_path / "root"),
                allow_deletions=False,
            ),
        )
        assert planned.ok, planned.apply_result.summary()
        (create,) = [
            a
            for a in planned.plan.actions
            if isinstance(a, podsync.Create) and a.container == "app"
        ]
        assert "was not made by podsync: used as it is" in create.message
        assert not [a for a in planned.plan.actions if isinstance(a, podsync.CreateVolume)]

    inspected = _volume(engine, volume)
    assert inspected is not None
    assert {"owner": "ops"} == inspected["Labels"]
    assert 0 == podsync.cli.main(_argv("apply", tmp_path, "--wait", "--timeout", "60", str(reader)))
    assert [b"provisioned\n"] == _app_logs(pod)


def _writer_logs(tmp_path: Path, namespace: str, security: str) -> list[bytes]:
    """Apply a pod of user 1000 with ``security`` (its pod securityContext) that tries
    to write into claim ``data`` and says what it found; its log lines."""
    script = (
        "touch /data/note 2>/dev/null && echo wrote || echo refused; "
        "stat -c '%a %u %g' /data; stat -c '%g' /data/note 2>/dev/null; id -u"
    )
    path = _pod_file(tmp_path, "writer", "data", namespace, script)
    text = path.read_text().replace(
        "  volumes:\n", f"  securityContext: {{runAsUser: 1000{security}}}\n  volumes:\n"
    )
    path.write_text(text)
    assert 0 == podsync.cli.main(_argv("apply", tmp_path, "--wait", "--timeout", "60", str(path)))
    (pod,) = podsync.load_pods([str(path)])
    return _app_logs(pod)


def test_a_non_root_container_with_the_fs_group_writes_to_its_claim(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """The kubelet's SetVolumeOwnership on a claim (issue 27): with fsGroup 2000, the
    claim's volume root is 2775, root's, of group 2000, so a container of user 1000
    writes there, and what it makes keeps the group (setgid). Without an fsGroup the
    root stays the engine's 0755 and the same container cannot write."""
    namespace = f"claims-{uuid.uuid4().hex[:8]}"
    cleanup.add_volume(podsync.spec.claim_volume_name(namespace, "data"))
    cleanup.add_label(f"{podsync.labels.LABEL_POD_NAMESPACE}={namespace}")
    assert _writer_logs(tmp_path, namespace, ", fsGroup: 2000") == [
        b"wrote\n",
        b"2775 0 2000\n",
        b"2000\n",
        b"1000\n",
    ]

    other = f"claims-{uuid.uuid4().hex[:8]}"
    cleanup.add_volume(podsync.spec.claim_volume_name(other, "data"))
    cleanup.add_label(f"{podsync.labels.LABEL_POD_NAMESPACE}={other}")
    (tmp_path / "other").mkdir()
    assert _writer_logs(tmp_path / "other", other, "") == [
        b"refused\n",
        b"755 0 0\n",
        b"1000\n",
    ]
