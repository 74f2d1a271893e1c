"""The records of configMap, secret and downwardAPI volumes as labelled record volumes:
a steady sync reads them from the one volume list instead of one archive read per
volume, each write replaces its pod volume's record, a record never outlives the
engine volume it describes, and duplicates are resolved the same way every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from podsync import PlanOptions, observe, plan, plan_fingerprint
from podsync.actions._actions import CreateVolume, Reason, RemoveVolume, WriteVolume
from podsync.actions._options import NODE_SCOPE
from podsync.applier._content_engine import planned_engine_records
from podsync.exceptions import RuntimeCallError
from podsync.model._pod import ObservedVolume
from podsync.model._volume import WrittenVolume
from podsync.spec._content_layout import RECORD_PATH, parse_record
from podsync.spec._content_records import (
    content_record_labels,
    content_record_volume,
    content_records,
)
from podsync.spec._labels import (
    LABEL_POD_UID,
    LABEL_RECORD_GENERATION,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    VOLUME_KIND_CONTENT_RECORD,
)
from podsync.spec._volumes import content_volume_labels
from podsync.testing import FakeClock
from tests.unit.loop.test_content_volumes import OBJECTS, POD, fake, load, run, visible

NOW = 1_800_000_000.0
NAMES = ("config", "creds", "info")


def records(runtime, uid: str, name: str | None = None) -> list[ObservedVolume]:  # type: ignore[no-untyped-def]
    return [
        v
        for v in runtime.volumes
        if v.labels.get(LABEL_VOLUME_KIND) == VOLUME_KIND_CONTENT_RECORD
        and v.labels.get(LABEL_POD_UID) == uid
        and (name is None or v.labels.get(LABEL_VOLUME_NAME) == name)
    ]


def archive_reads(runtime) -> list[object]:  # type: ignore[no-untyped-def]
    return [c for c in runtime.calls if c.name == "read_file"]


def test_a_steady_sync_reads_no_archive(tmp_path: Path) -> None:
    runtime = fake()
    pods = load()
    uid = pods[0].uid
    assert run(pods, runtime, tmp_path).ok
    # One record volume per pod volume, written after the files.
    assert sorted(v.labels[LABEL_VOLUME_NAME] for v in records(runtime, uid)) == list(NAMES)
    runtime.calls.clear()
    again = run(pods, runtime, tmp_path)
    assert not again.plan.has_changes
    assert archive_reads(runtime) == []
    assert runtime.call_names().count("list_volumes") == 1
    assert not [c for c in runtime.calls if c.name in ("write_volume", "create_volume")]


def test_a_label_record_says_what_the_file_record_says(tmp_path: Path) -> None:
    """Everything a WrittenVolume holds round-trips through the labels, for each kind
    (a Secret's only as keyed digests: no value in any label)."""
    runtime = fake()
    fs_group = POD.replace("spec:\n", "spec:\n  securityContext: {fsGroup: 2000}\n", 1)
    pods = load(pod=fs_group)
    uid = pods[0].uid
    assert run(pods, runtime, tmp_path).ok
    from_labels = {w.name: w for w in content_records(runtime.volumes).values() if w is not None}
    for name in NAMES:
        volume = f"podsync-content_{uid}_{name}"
        files = runtime.volume_files(volume)
        data = files[f"{files['..data'].target}/..podsync"].data
        assert from_labels[name] == parse_record(uid, name, data, volume)
        assert from_labels[name].digest.endswith(":2000")
    assert from_labels["config"].names == ("app.conf", "extra.conf")
    for volume in runtime.volumes:
        assert not any("hunter2" in v for v in volume.labels.values())


def test_a_rewrite_leaves_exactly_one_record_volume(tmp_path: Path) -> None:
    runtime = fake()
    uid = load()[0].uid
    assert run(load(), runtime, tmp_path).ok
    (first,) = records(runtime, uid, "config")
    edited = OBJECTS.replace("color=blue", "color=green")
    result = run(load(edited), runtime, tmp_path)
    assert result.ok
    assert [a.volume for a in result.plan.actions if isinstance(a, WriteVolume)] == ["config"]
    (second,) = records(runtime, uid, "config")
    assert second.name != first.name
    assert second.labels[LABEL_RECORD_GENERATION] == "2"
    assert len(records(runtime, uid)) == 3
    runtime.calls.clear()
    assert not run(load(edited), runtime, tmp_path).plan.has_changes
    assert archive_reads(runtime) == []


def test_a_failed_write_leaves_the_old_record(tmp_path: Path) -> None:
    """The record is made only after the files were written: a write that fails leaves
    the old record (another content), so the next sync writes again."""
    runtime = fake()
    uid = load()[0].uid
    assert run(load(), runtime, tmp_path).ok
    (first,) = records(runtime, uid, "config")
    edited = OBJECTS.replace("color=blue", "color=green")
    runtime.fail("write_volume", times=1)
    assert not run(load(edited), runtime, tmp_path).ok
    assert records(runtime, uid, "config") == [first]
    retried = run(load(edited), runtime, tmp_path)
    assert [a.volume for a in retried.plan.actions if isinstance(a, WriteVolume)] == ["config"]
    assert visible(runtime, f"podsync-content_{uid}_config")["app.conf"] == (
        b"color=green\n",
        0o644,
    )


def test_a_recreated_content_volume_is_written_again(tmp_path: Path) -> None:
    """A volume removed and made again by hand (a new CreatedAt) is empty whatever its
    old record volume says: it is written again before the containers that mount it."""
    clock = FakeClock(NOW)
    runtime = fake()
    runtime.clock = clock
    pods = load()
    uid = pods[0].uid
    assert run(pods, runtime, tmp_path).ok
    for container in runtime.containers:
        runtime.stop_container(container.id, 0)
        runtime.remove_container(container.id)
    volume = f"podsync-content_{uid}_config"
    runtime.remove_volume(volume)
    clock.advance(5)
    runtime.create_volume(volume, content_volume_labels(pods[0], "config"))
    result = run(pods, runtime, tmp_path, NOW + 10)
    assert result.ok
    writes = [a for a in result.plan.actions if isinstance(a, WriteVolume)]
    assert [(w.volume, w.reason) for w in writes] == [("config", Reason.VOLUME_MISSING)]
    assert visible(runtime, volume)["app.conf"] == (b"color=blue\n", 0o644)
    assert len(records(runtime, uid, "config")) == 1


def test_a_missing_content_volume_is_made_and_written_again(tmp_path: Path) -> None:
    runtime = fake()
    pods = load()
    uid = pods[0].uid
    assert run(pods, runtime, tmp_path).ok
    for container in runtime.containers:
        runtime.stop_container(container.id, 0)
        runtime.remove_container(container.id)
    volume = f"podsync-content_{uid}_creds"
    runtime.remove_volume(volume)
    result = run(pods, runtime, tmp_path)
    assert result.ok
    made = [a.volume for a in result.plan.actions if isinstance(a, CreateVolume)]
    assert volume in made
    assert visible(runtime, volume) == {"password": (b"hunter2", 0o644)}


def test_a_stale_duplicate_is_resolved_and_removed(tmp_path: Path) -> None:
    """A crash between the new record and the removal of the old one leaves two: the
    higher generation wins, and the other is removed (no archive read)."""
    runtime = fake()
    uid = load()[0].uid
    assert run(load(), runtime, tmp_path).ok
    (current,) = records(runtime, uid, "config")
    old = WrittenVolume(
        uid, "config", "sha256:old", {}, f"podsync-content_{uid}_config", "..payload-2", ("a",)
    )
    created = next(v.created for v in runtime.volumes if v.name == f"podsync-content_{uid}_config")
    stale = content_record_volume(old, 0)
    runtime.add_volume(ObservedVolume(stale, content_record_labels(old, created, 0)))
    runtime.calls.clear()
    result = run(load(), runtime, tmp_path)
    assert result.ok
    assert archive_reads(runtime) == []
    assert not [a for a in result.plan.actions if isinstance(a, WriteVolume)]
    removed = [a for a in result.plan.actions if isinstance(a, RemoveVolume)]
    assert [(a.volume, a.reason) for a in removed] == [(stale, Reason.STALE_RECORD)]
    assert records(runtime, uid, "config") == [current]


def test_equal_generations_that_disagree_are_not_trusted(tmp_path: Path) -> None:
    """Two records of one generation that say different things (two podsync processes
    wrote at once): neither is believed, the volume's own record is read, and it gets
    a record of a newer generation that replaces both."""
    runtime = fake()
    uid = load()[0].uid
    assert run(load(), runtime, tmp_path).ok
    (current,) = records(runtime, uid, "config")
    volume = f"podsync-content_{uid}_config"
    created = next(v.created for v in runtime.volumes if v.name == volume)
    other = WrittenVolume(uid, "config", "sha256:other", {}, volume, "..payload-1", ("a",))
    rival = content_record_volume(other, 1)
    runtime.add_volume(ObservedVolume(rival, content_record_labels(other, created, 1)))
    runtime.calls.clear()
    result = run(load(), runtime, tmp_path)
    assert result.ok
    assert [c.args[1] for c in archive_reads(runtime)] == [f"/etc/config/{RECORD_PATH}"]
    assert not [a for a in result.plan.actions if isinstance(a, WriteVolume)]
    made = [a for a in result.plan.actions if isinstance(a, CreateVolume)]
    assert [a.reason for a in made] == [Reason.VOLUME_RECORDED]
    removed = sorted(a.volume for a in result.plan.actions if isinstance(a, RemoveVolume))
    assert removed == sorted([current.name, rival])
    (newest,) = records(runtime, uid, "config")
    assert newest.labels[LABEL_RECORD_GENERATION] == "2"
    runtime.calls.clear()
    assert not run(load(), runtime, tmp_path).plan.has_changes
    assert archive_reads(runtime) == []


def test_an_upgrade_reads_the_file_record_once(tmp_path: Path) -> None:
    """Volumes written by a podsync before record volumes (only ``..data/..podsync``):
    read through the archive once, recorded in labels, then never read again."""
    runtime = fake()
    uid = load()[0].uid
    assert run(load(), runtime, tmp_path).ok
    for record in records(runtime, uid):
        runtime.remove_volume(record.name)
    runtime.calls.clear()
    upgraded = run(load(), runtime, tmp_path)
    assert upgraded.ok
    assert len(archive_reads(runtime)) == 3
    assert not [a for a in upgraded.plan.actions if isinstance(a, WriteVolume)]
    made = [a for a in upgraded.plan.actions if isinstance(a, CreateVolume)]
    assert [(a.reason, a.labels[LABEL_VOLUME_NAME]) for a in made] == [
        (Reason.VOLUME_RECORDED, n) for n in NAMES
    ]
    assert made[0].message == (
        f"record the files of volume podsync-content_{uid}_config in the volume list: read "
        "from the volume itself"
    )
    runtime.calls.clear()
    assert not run(load(), runtime, tmp_path).plan.has_changes
    assert archive_reads(runtime) == []
    edited = OBJECTS.replace("color=blue", "color=green")
    assert run(load(edited), runtime, tmp_path).ok
    assert visible(runtime, f"podsync-content_{uid}_config")["app.conf"] == (
        b"color=green\n",
        0o644,
    )


def test_observe_lists_the_volumes_once_and_a_failed_list_fails(tmp_path: Path) -> None:
    runtime = fake()
    pods = load()
    assert run(pods, runtime, tmp_path).ok
    runtime.calls.clear()
    seen = observe(runtime, str(tmp_path), images=False, desired=pods, probed=False)
    assert seen.volumes_listed
    assert runtime.call_names() == ["list", "list_volumes"]
    assert {w.name for w in seen.volume_files} == set(NAMES)
    runtime.fail("list_volumes", times=1)
    with pytest.raises(RuntimeCallError):
        observe(runtime, str(tmp_path), images=False, desired=pods, probed=False)


def test_a_pod_that_goes_takes_its_record_volumes_with_it(tmp_path: Path) -> None:
    runtime = fake()
    uid = load()[0].uid
    assert run(load(), runtime, tmp_path).ok
    assert run([], runtime, tmp_path).ok
    result = run([], runtime, tmp_path, NOW + 3600)
    assert result.ok
    removed = {a.volume: a.reason for a in result.plan.actions if isinstance(a, RemoveVolume)}
    recorded = [n for n, r in removed.items() if r == Reason.ORPHANED_RECORD]
    assert len(recorded) == 3
    (config,) = [
        a
        for a in result.plan.actions
        if isinstance(a, RemoveVolume) and a.volume.startswith(f"podsync-contentrec_{uid}_config")
    ]
    assert config.message == (
        f"remove volume {config.volume}: the record of the files of volume config of a pod "
        "that is no longer desired"
    )
    assert runtime.volumes == []
    assert not records(runtime, uid)


def test_a_saved_plans_check_reads_the_records_as_observe_does(tmp_path: Path) -> None:
    """A saved plan's fingerprint is checked against the records of the volumes it
    writes, read as ``observe`` read them: from the believed record volumes (no archive
    read), so the check agrees with the plan even for a volume no container mounts."""
    runtime = fake()
    uid = load()[0].uid
    assert run(load(), runtime, tmp_path).ok
    for container in runtime.containers:
        runtime.stop_container(container.id, 0)
        runtime.remove_container(container.id)
    edited = load(OBJECTS.replace("color=blue", "color=green"))
    seen = observe(runtime, str(tmp_path), images=False, desired=edited, probed=False)
    made = plan(
        edited,
        seen.containers,
        now=NOW,
        volumes=seen.volumes,
        volume_files=seen.volume_files,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
    )
    writes = [a for a in made.actions if isinstance(a, WriteVolume)]
    assert [(w.volume, w.reason, w.previous) for w in writes] == [
        ("config", Reason.VOLUME_CHANGED, "..payload-1")
    ]
    runtime.calls.clear()
    records = planned_engine_records(runtime, made, seen.containers)
    assert runtime.call_names() == ["list_volumes"]
    assert [(r.pod_uid, r.name) for r in records] == [(uid, "config")]
    assert made.fingerprint == plan_fingerprint(made, seen.containers, volume_files=records)
    # Once the volume is written by another sync, the saved plan is stale.
    assert run(edited, runtime, tmp_path).ok
    fresh = observe(runtime, str(tmp_path), images=False, probed=False)
    again = planned_engine_records(runtime, made, fresh.containers)
    assert made.fingerprint != plan_fingerprint(made, fresh.containers, volume_files=again)


def test_which_record_is_believed() -> None:
    """Of a pod volume's record volumes the highest generation wins, whatever their
    names; unreadable ones never win; several of the highest generation are believed
    when they say the same, by none when they disagree or cannot be read; and none is
    believed for a content volume that is missing, not podsync's, or made at another
    time."""
    from podsync import NodeInfo, parse_pods
    from podsync.spec._content_records import believed, record_choices

    (pod,) = parse_pods(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, uid: u1}\nspec:\n"
        "  volumes: [{name: config, configMap: {name: settings, optional: true}}]\n"
        "  containers: [{name: app, image: busybox}]\n",
        node=NodeInfo(name="n", milli_cpu=1000, memory=2**30),
    )
    target = f"podsync-content_{pod.uid}_config"
    content = ObservedVolume(target, content_volume_labels(pod, "config"), "2027-01-01T00:00:00Z")
    old = WrittenVolume(pod.uid, "config", "d1", {}, target, "..payload-1", ("a",))
    new = WrittenVolume(pod.uid, "config", "d2", {}, target, "..payload-2", ("a",))

    def record(name: str, written: WrittenVolume, generation: int, **over: str) -> ObservedVolume:
        labels = content_record_labels(written, content.created, generation)
        return ObservedVolume(name, {**labels, **over})

    def winner(*records: ObservedVolume, volume: ObservedVolume | None = content) -> object:
        present = {v.name: v for v in (*records, *([volume] if volume else []))}
        return believed(record_choices(records).get((pod.uid, "config")), present)

    assert winner(record("zz", old, 1), record("aa", new, 2)) == new
    assert winner(record("aa", old, 1), record("zz", new, 2)) == new
    garbage = record("zz", old, 9, **{LABEL_RECORD_GENERATION: "9x"})
    assert winner(garbage, record("aa", new, 2)) == new
    assert winner(record("aa", old, 2), record("zz", new, 2)) is None
    assert winner(record("aa", new, 2), record("zz", new, 2)) == new
    unreadable = record("zz", new, 3, **{"io.podsync.record.data": "{"})
    assert winner(record("aa", new, 2), unreadable) is None
    assert winner(record("aa", new, 2), volume=None) is None
    foreign = ObservedVolume(target, {}, content.created)
    assert winner(record("aa", new, 2), volume=foreign) is None
    remade = ObservedVolume(target, content.labels, "2027-01-01T00:00:01Z")
    assert winner(record("aa", new, 2), volume=remade) is None
    choice = record_choices([record("aa", old, 1), record("zz", new, 2)])[(pod.uid, "config")]
    assert (choice.next_generation, choice.losers()) == (3, ["aa"])
