"""configMap and downwardAPI volumes through plan, apply and sync (issue 14; in engine
volumes since issue 18): the files are written before the first container that mounts
them is created, rewritten with the ``..data`` swap when an object changes - naming it
- and the running containers are left alone; a container whose env came from the
edited ConfigMap is replaced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from podsync import (
    NodeInfo,
    Pod,
    WriteVolume,
    WrittenVolume,
    parse_pods,
    plan,
    plan_fingerprint,
    plan_from_json,
    plan_to_json,
    sync,
)
from podsync.actions._actions import Create, Kill, Reason
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.loop.test_content_volumes import visible

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)
NOW = 1_800_000_000.0

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data:
  app.conf: |
    color=blue
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
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
  containers:
  - name: app
    image: busybox:1
    volumeMounts:
    - {name: config, mountPath: /etc/config}
    - {name: info, mountPath: /etc/info}
"""

ENV = """\
    env:
    - name: COLOR
      valueFrom:
        configMapKeyRef: {name: settings, key: app.conf}
"""


def load(settings: str = SETTINGS, pod: str = POD) -> list[Pod]:
    return list(parse_pods(settings + "---\n" + pod, source_name="pods.yaml", node=NODE))


def fake() -> FakeRuntime:
    return FakeRuntime(images=["busybox:1", "registry.k8s.io/pause:3.10"], clock=FakeClock(NOW))


def run(pods: list[Pod], runtime: FakeRuntime, root: Path):  # type: ignore[no-untyped-def]
    return sync(
        pods,
        runtime,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(root)),
        probe=False,
        clock=FakeClock(NOW),
    )


def test_the_files_are_written_before_the_containers(tmp_path: Path) -> None:
    pods = load()
    p = plan(pods, now=NOW, options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)))
    (pod_plan,) = p.pods
    kinds = [type(a).__name__ for a in pod_plan.actions]
    assert kinds == [
        "CreateVolume",
        "WriteVolume",
        "CreateVolume",
        "WriteVolume",
        "Create",
        "Create",
    ]
    config = pod_plan.actions[1]
    assert isinstance(config, WriteVolume)
    uid = pods[0].uid
    assert (config.engine_volume, config.path) == (f"podsync-content_{uid}_config", "")
    assert (config.reason, config.message) == (
        Reason.VOLUME_MISSING,
        "write default/web volume config (configMap): files not written yet",
    )
    assert pod_plan.actions[3].message == (
        "write default/web volume info (downwardAPI): files not written yet"
    )
    assert p.summary() == "Plan: 2 to pull, 2 to create volume, 2 to write files, 2 to create."
    # The app container mounts the volume, read-only.
    create = pod_plan.actions[5]
    assert isinstance(create, Create)
    mounts = {m.container_path: (m.volume, m.read_only) for m in create.spec.volumes}
    assert mounts["/etc/config"] == (config.engine_volume, True)


def test_sync_writes_them_and_an_edit_rewrites_them_in_place(tmp_path: Path) -> None:
    runtime = fake()
    first = run(load(), runtime, tmp_path)
    assert first.ok
    uid = load()[0].uid
    volume = f"podsync-content_{uid}_config"
    assert visible(runtime, volume)["app.conf"] == (b"color=blue\n", 0o644)
    assert visible(runtime, f"podsync-content_{uid}_info")["labels"] == (b'app="web"', 0o644)
    assert not (tmp_path / uid / "volumes").exists()
    (app,) = [c for c in runtime.list_containers() if "app" in c.name]

    # Converged: the records match, nothing to do.
    again = run(load(), runtime, tmp_path)
    assert not again.plan.has_changes

    # An edited ConfigMap: the files are rewritten, the container keeps running.
    edited = SETTINGS.replace("blue", "green")
    third = run(load(edited), runtime, tmp_path)
    assert third.ok
    actions = third.plan.actions
    assert [(type(a).__name__, a.reason) for a in actions] == [
        ("WriteVolume", Reason.VOLUME_CHANGED)
    ]
    assert actions[0].message == (
        "write default/web volume config (configMap): ConfigMap default/settings changed"
    )
    assert third.plan.render().splitlines()[1] == (
        "  write default/web volume config (configMap): ConfigMap default/settings changed"
        "  [volume-changed]"
    )
    assert visible(runtime, volume)["app.conf"] == (b"color=green\n", 0o644)
    (still,) = [c for c in runtime.list_containers() if "app" in c.name]
    assert (still.id, still.running) == (app.id, True)
    assert not run(load(edited), runtime, tmp_path).plan.has_changes


def test_changed_labels_rewrite_the_downward_api_file(tmp_path: Path) -> None:
    runtime = fake()
    run(load(), runtime, tmp_path)
    relabelled = POD.replace("labels: {app: web}", "labels: {app: web, tier: front}")
    result = run(load(pod=relabelled), runtime, tmp_path)
    writes = [a for a in result.plan.actions if isinstance(a, WriteVolume)]
    assert [a.message for a in writes] == [
        "write default/web volume info (downwardAPI): the labels of pod default/web changed"
    ]
    uid = load()[0].uid
    labels = visible(runtime, f"podsync-content_{uid}_info")["labels"]
    assert labels == (b'app="web"\ntier="front"', 0o644)


def test_env_from_the_same_configmap_still_replaces_its_container(tmp_path: Path) -> None:
    runtime = fake()
    pod = POD + ENV
    run(load(pod=pod), runtime, tmp_path)
    result = run(load(SETTINGS.replace("blue", "green"), pod), runtime, tmp_path)
    assert [type(a) for a in result.plan.actions] == [WriteVolume, Kill, Create]
    assert result.plan.actions[2].message == (
        "replace default/web/app: spec changed (env changed (from ConfigMap default/settings))"
    )


def test_a_failed_write_creates_nothing_that_mounts_it(tmp_path: Path) -> None:
    runtime = fake()
    runtime.fail("write_volume", match=lambda call: call.args[0].endswith("_config"))
    result = run(load(), runtime, tmp_path)
    assert not result.ok
    (failure,) = result.apply_result.failures
    assert isinstance(failure, object)
    assert isinstance(failure.action, WriteVolume)
    assert "injected failure" in failure.error
    assert runtime.list_containers() == []


def test_the_plan_json_carries_the_files(tmp_path: Path) -> None:
    p = plan(load(), now=NOW, options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)))
    text = plan_to_json(p)
    assert plan_from_json(text) == p
    assert '"action":"writevolume"' in text


def test_the_fingerprint_covers_the_volumes_a_plan_writes() -> None:
    pods = load()
    uid = pods[0].uid
    name = f"podsync-content_{uid}_config"
    old = WrittenVolume(uid, "config", "0" * 64, {"ConfigMap default/settings": "x"}, name)
    p = plan(pods, now=NOW, volume_files=[old])
    assert p.fingerprint == plan_fingerprint(p, [], volume_files=[old])
    newer = WrittenVolume(uid, "config", "1" * 64, {"ConfigMap default/settings": "y"}, name)
    assert p.fingerprint != plan_fingerprint(p, [], volume_files=[newer])
    # A volume the plan does not write does not make it stale.
    other = WrittenVolume("another-uid", "config", "1" * 64)
    assert p.fingerprint == plan_fingerprint(p, [], volume_files=[old, other])
    # Nor does the record of a host directory the plan does not write.
    host = WrittenVolume(uid, "config", "1" * 64, {"ConfigMap default/settings": "y"})
    assert p.fingerprint == plan_fingerprint(p, [], volume_files=[old, host])


def test_the_pod_teardown_removes_the_files(tmp_path: Path) -> None:
    runtime = fake()
    run(load(), runtime, tmp_path)
    uid = load()[0].uid
    assert [v.name for v in runtime.volumes if v.name.startswith("podsync-content_")] == [
        f"podsync-content_{uid}_config",
        f"podsync-content_{uid}_info",
    ]
    assert run([], runtime, tmp_path).ok
    result = sync(
        [],
        runtime,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        probe=False,
        clock=FakeClock(NOW + 3600),
    )
    assert result.ok
    assert runtime.volumes == []
    assert not os.path.exists(tmp_path / uid)


def test_an_optional_missing_configmap_is_an_empty_volume(tmp_path: Path) -> None:
    pod = POD.replace("configMap: {name: settings}", "configMap: {name: later, optional: true}")
    runtime = fake()
    run(load(pod=pod), runtime, tmp_path)
    uid = load()[0].uid
    volume = f"podsync-content_{uid}_config"
    assert "..data" in runtime.volume_files(volume)
    assert visible(runtime, volume) == {}
    # The ConfigMap appears: the files follow, the container stays.
    later = SETTINGS.replace("name: settings", "name: later")
    result = run(load(later, pod), runtime, tmp_path)
    assert [a.message for a in result.plan.actions] == [
        "write default/web volume config (configMap): ConfigMap default/later changed"
    ]
    assert visible(runtime, volume) == {"app.conf": (b"color=blue\n", 0o644)}


def test_writing_needs_a_root_inside_which_to_write(tmp_path: Path) -> None:
    """A saved plan whose host write (for containers of an earlier podsync) names a
    path outside its root directory writes nothing."""
    from podsync import apply

    p = plan(
        load(), now=NOW, options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path / "root"))
    )
    write = p.pods[0].actions[1]
    assert isinstance(write, WriteVolume)
    import attrs

    host = attrs.evolve(write, path=str(tmp_path / "x"), engine_volume="")
    bad = attrs.evolve(p, pods=(attrs.evolve(p.pods[0], actions=(host,)),), pulls=())
    result = apply(bad, fake(), clock=FakeClock(NOW))
    (failure,) = result.failures
    assert "is not inside the root directory" in failure.error
    assert not (tmp_path / "x").exists()


def test_describe_shows_the_mounts_read_only() -> None:
    from podsync.cli._ops import _spec_lines

    (pod,) = load()
    mounts = _spec_lines(None, pod, "app")[1]
    assert "/etc/config from config (ro), /etc/info from info (ro)" in mounts


def test_a_saved_plan_is_stale_once_a_volume_it_writes_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``podsync apply --plan``: the plan writes the files of the ConfigMap as it was;
    another apply wrote a newer version since, so the saved plan is refused rather than
    putting the old files back."""
    from podsync.cli import _main as cli

    runtime = fake()

    def run(*args: str) -> tuple[int, str]:
        argv = [args[0], "--root-dir", str(tmp_path / "root"), *args[1:]]
        code = cli.main(argv, runtime_factory=lambda host: runtime, clock=FakeClock(NOW))
        return code, capsys.readouterr().err

    source = tmp_path / "pods.yaml"
    source.write_text(SETTINGS + "---\n" + POD)
    assert run("apply", str(source))[0] == 0
    source.write_text(SETTINGS.replace("blue", "green") + "---\n" + POD)
    saved = str(tmp_path / "plan.json")
    assert run("plan", "--out", saved, str(source))[0] == 0
    source.write_text(SETTINGS.replace("blue", "red") + "---\n" + POD)
    assert run("apply", str(source))[0] == 0

    code, err = run("apply", "--plan", saved)

    assert code == 1
    assert "Saved plan is stale" in err
    (volume,) = [v.name for v in runtime.volumes if v.name.endswith("_config")]
    assert visible(runtime, volume)["app.conf"] == (b"color=red\n", 0o644)
    # A saved plan whose volumes are as it saw them applies.
    fresh = str(tmp_path / "fresh.json")
    source.write_text(SETTINGS + "---\n" + POD)
    assert run("plan", "--out", fresh, str(source))[0] == 0
    code, err = run("apply", "--plan", fresh)
    assert code == 0, err
    assert visible(runtime, volume)["app.conf"] == (b"color=blue\n", 0o644)


def test_apply_reports_the_files_it_wrote(tmp_path: Path) -> None:
    """One ``volume-written`` event per volume written (none when a racing apply wrote
    the same files first), which ends its action in the progress count."""
    from podsync import EventKind
    from podsync.cli._console import _ENDS_ACTION

    events: list[tuple[EventKind, str, str]] = []
    result = sync(
        load(),
        fake(),
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        probe=False,
        clock=FakeClock(NOW),
        on_event=lambda e: events.append((e.kind, e.pod, e.message)),
    )
    assert result.ok
    written = [e for e in events if e[0] is EventKind.VOLUME_WRITTEN]
    uid = load()[0].uid
    assert written == [
        (
            EventKind.VOLUME_WRITTEN,
            "default/web",
            f"wrote the files of volume config (configMap) into podsync-content_{uid}_config",
        ),
        (
            EventKind.VOLUME_WRITTEN,
            "default/web",
            f"wrote the files of volume info (downwardAPI) into podsync-content_{uid}_info",
        ),
    ]
    assert EventKind.VOLUME_WRITTEN in _ENDS_ACTION
