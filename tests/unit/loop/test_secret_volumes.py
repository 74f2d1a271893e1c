"""Secret volumes (issue 14): a configMap volume's rules, files of mode 0644 by
default as Kubernetes' (issue 27; 0400 before), written into engine volumes like the
others - and the values never in the plan's text or JSON (the Secret's reference and
keyed digest instead, the same mechanism as Secret env values:
``podsync.model._secrets``), never in container labels. A saved plan gets its values
from the sources again when it is applied."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from podsync import (
    ConfigError,
    NodeInfo,
    Pod,
    WriteVolume,
    apply,
    parse_pods,
    plan,
    plan_from_json,
    plan_to_json,
    sync,
)
from podsync.actions._actions import Reason
from podsync.actions._options import PlanOptions
from podsync.model._volume import VolumeKind
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.loop.test_content_volumes import visible

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)
NOW = 1_800_000_000.0
HOST_KEY = b"k" * 32
PASSWORD = "hunter2-correct-horse"

SECRET = f"""\
apiVersion: v1
kind: Secret
metadata: {{name: db}}
stringData:
  password: {PASSWORD}
  user: app
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  volumes:
  - name: creds
    secret: {secretName: db}
  containers:
  - name: app
    image: busybox
    volumeMounts: [{name: creds, mountPath: /run/creds}]
"""


def load(secret: str = SECRET, pod: str = POD) -> list[Pod]:
    return list(
        parse_pods(secret + "---\n" + pod, source_name="pods.yaml", node=NODE, secret_key=HOST_KEY)
    )


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pods.yaml", node=NODE, secret_key=HOST_KEY)
    return [str(p) for p in info.value.problems]


def fake() -> FakeRuntime:
    return FakeRuntime(images=["busybox", "registry.k8s.io/pause:3.10"], clock=FakeClock(NOW))


def shows_no_value(text: str) -> None:
    for value in (PASSWORD, base64.b64encode(PASSWORD.encode()).decode()):
        assert value not in text


def test_every_key_is_a_file_of_mode_0644() -> None:
    (pod,) = load()
    content = pod.volumes[0].content
    assert content is not None
    assert content.kind is VolumeKind.SECRET
    files = {f.path: (f.data, f.mode) for f in content.files}
    # Kubernetes' 0644 (SetDefaults_SecretVolumeSource, issue 27): a container of any
    # user reads it.
    assert files == {"password": (PASSWORD.encode(), 0o644), "user": (b"app", 0o644)}
    assert [(f.secret.secret, f.secret.key) for f in content.files if f.secret] == [
        ("default/db", "password"),
        ("default/db", "user"),
    ]
    shows_no_value(repr(pod))


def test_items_and_default_mode() -> None:
    pod_text = POD.replace(
        "secret: {secretName: db}",
        "secret: {secretName: db, defaultMode: 0440, items: [{key: password, path: pw/db}]}",
    )
    (pod,) = load(pod=pod_text)
    assert pod.volumes[0].content is not None
    assert [(f.path, f.mode) for f in pod.volumes[0].content.files] == [("pw/db", 0o440)]


def test_a_missing_secret_or_key_is_an_error_unless_optional() -> None:
    assert errors(POD) == [
        "pods.yaml: $.spec.volumes[0].secret.secretName: no Secret default/db in the sources "
        "(set optional: true if the pod may run without it)"
    ]
    optional = POD.replace("secretName: db}", "secretName: db, optional: true}")
    (pod,) = parse_pods(optional, node=NODE, secret_key=HOST_KEY)
    assert pod.volumes[0].content is not None
    assert pod.volumes[0].content.files == ()
    missing_key = POD.replace("secretName: db}", "secretName: db, items: [{key: pin, path: p}]}")
    assert errors(SECRET + "---\n" + missing_key) == [
        "pods.yaml: document 2: $.spec.volumes[0].secret.items[0].key: Secret default/db has "
        "no key 'pin' (keys: password, user)"
    ]


def test_the_plan_never_shows_the_value(tmp_path: Path) -> None:
    p = plan(load(), now=NOW, options=PlanOptions(root_dir=str(tmp_path)))
    shows_no_value(p.describe())
    shows_no_value(p.render())
    text = plan_to_json(p)
    shows_no_value(text)
    (write,) = [a for a in json.loads(text)["pods"][0]["actions"] if a["action"] == "writevolume"]
    assert write["content"]["files"][0] == {
        "path": "password",
        "secret": {
            "digest": write["content"]["files"][0]["secret"]["digest"],
            "key": "password",
            "name": "db",
            "namespace": "default",
        },
    }
    # The labels of the containers it creates hold nothing of it either.
    for action in p.actions:
        spec = getattr(action, "spec", None)
        if spec is not None:
            shows_no_value(json.dumps(spec.labels))


def test_a_saved_plan_writes_nothing_without_the_values(tmp_path: Path) -> None:
    p = plan(load(), now=NOW, options=PlanOptions(root_dir=str(tmp_path)))
    saved = plan_from_json(plan_to_json(p))
    (write,) = [a for a in saved.actions if isinstance(a, WriteVolume)]
    assert [f.known for f in write.content.files] == [False, False]
    # The same digest: the record it would write is the planned one.
    assert write.content.digest == p.pods[0].actions[1].content.digest  # type: ignore[union-attr]
    runtime = fake()
    result = apply(saved, runtime, clock=FakeClock(NOW))
    failure = result.failures[0]
    assert failure.action == write
    assert "the plan holds Secret values by reference (Secret default/db key password, " in (
        failure.error
    )
    assert runtime.volume_files(write.engine_volume) == {}


def test_sync_writes_the_files_and_a_rotated_secret_rewrites_them(
    tmp_path: Path,
) -> None:
    runtime = fake()
    options = PlanOptions(root_dir=str(tmp_path))
    assert sync(load(), runtime, options=options, probe=False, clock=FakeClock(NOW)).ok
    (volume,) = [v.name for v in runtime.volumes if v.name.startswith("podsync-content_")]
    assert visible(runtime, volume) == {
        "password": (PASSWORD.encode(), 0o644),
        "user": (b"app", 0o644),
    }
    assert not list(tmp_path.glob("*/volumes"))
    (app,) = [c for c in runtime.list_containers() if "app" in c.name]
    shows_no_value(json.dumps(app.labels))

    rotated = SECRET.replace(PASSWORD, "new-password")
    result = sync(load(rotated), runtime, options=options, probe=False, clock=FakeClock(NOW))
    assert [(a.reason, a.message) for a in result.plan.actions] == [
        (
            Reason.VOLUME_CHANGED,
            "write default/web volume creds (secret): Secret default/db changed",
        )
    ]
    assert visible(runtime, volume)["password"] == (b"new-password", 0o644)
    # Nothing of the old value is left in the volume.
    assert PASSWORD.encode() not in b"".join(e.data for e in runtime.volume_files(volume).values())
    (still,) = [c for c in runtime.list_containers() if "app" in c.name]
    assert still.id == app.id


def test_apply_plan_reads_the_values_from_the_sources_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from podsync.cli import _main as cli

    runtime = fake()
    root = tmp_path / "root"

    def run(*args: str) -> tuple[int, str, str]:
        argv = [args[0], "--root-dir", str(root), *args[1:]]
        code = cli.main(argv, runtime_factory=lambda host: runtime, clock=FakeClock(NOW))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    source = tmp_path / "pods.yaml"
    source.write_text(SECRET + "---\n" + POD)
    saved = tmp_path / "plan.json"
    code, out, err = run("plan", "--out", str(saved), str(source))
    assert code == 0, err
    shows_no_value(out + err + saved.read_text())

    code, out, err = run("apply", "--plan", str(saved))
    assert code == 0, err
    shows_no_value(out + err)
    (volume,) = [v.name for v in runtime.volumes if v.name.startswith("podsync-content_")]
    assert visible(runtime, volume)["password"] == (PASSWORD.encode(), 0o644)

    # Planned again with a value the sources no longer hold: refused, nothing written.
    source.write_text(SECRET.replace(PASSWORD, "rotated") + "---\n" + POD)
    code, out, err = run("plan", "--out", str(saved), str(source))
    assert code == 0, err
    source.write_text(SECRET.replace(PASSWORD, "rotated-again") + "---\n" + POD)
    code, out, err = run("apply", "--plan", str(saved))
    assert code == 1
    assert (
        "the value of Secret default/db key password is not the one the plan was made with" in err
    )
    shows_no_value(err)
    assert visible(runtime, volume)["password"] == (PASSWORD.encode(), 0o644)
