"""The rules of content-record volumes (``podsync.spec._content_records``) one by one: what
a record says, which labels can be read back, and which record of a pod volume is
believed - each pinned where a change of the rule would go unnoticed otherwise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podsync import NodeInfo, PlanOptions, Pod, parse_pods, plan
from podsync.actions._actions import CreateVolume, PodAction, Reason, RemoveVolume, WriteVolume
from podsync.model._pod import ObservedContainer, ObservedVolume
from podsync.model._volume import VolumeContent, VolumeFile, VolumeKind, WrittenVolume
from podsync.planner._volumes import _why, record_upkeep, volume_writes
from podsync.spec._content_layout import parse_record, record_text
from podsync.spec._content_records import (
    RecordChoice,
    believed,
    content_record_labels,
    content_record_volume,
    record_choices,
    record_data,
)
from podsync.spec._labels import (
    LABEL_CONTAINER,
    LABEL_CONTENT_VOLUMES,
    LABEL_POD_UID,
    LABEL_RECORD_DATA,
    LABEL_RECORD_GENERATION,
    LABEL_RECORD_VOLUME_CREATED,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    VOLUME_KIND_CONTENT,
)
from podsync.spec._ownership import Instance
from podsync.spec._volumes import (
    content_digest,
    content_dir,
    content_volume_labels,
    content_volume_name,
    encode_content_volumes,
)
from tests.unit.loop.test_content_volumes import load

CREATED = "2027-01-01T00:00:00Z"


def _pod() -> Pod:
    (pod,) = parse_pods(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, uid: u1}\nspec:\n"
        "  volumes: [{name: config, configMap: {name: settings, optional: true}}]\n"
        "  containers: [{name: app, image: busybox}]\n",
        node=NodeInfo(name="n", milli_cpu=1000, memory=2**30),
    )
    return pod


POD = _pod()
TARGET = f"podsync-content_{POD.uid}_config"
CONTENT = ObservedVolume(TARGET, content_volume_labels(POD, "config"), CREATED)
WRITTEN = WrittenVolume(POD.uid, "config", "d2", {}, TARGET, "..payload-2", ("a",))


def record(
    name: str, generation: int = 1, over: Mapping[str, str | None] | None = None
) -> ObservedVolume:
    """A record volume saying ``WRITTEN``; ``over`` replaces labels (``None``: drops)."""
    labels: dict[str, str | None] = {**content_record_labels(WRITTEN, CREATED, generation)}
    labels.update(over or {})
    return ObservedVolume(name, {k: v for k, v in labels.items() if v is not None})


def choice(*volumes: ObservedVolume) -> RecordChoice | None:
    return record_choices(volumes).get((POD.uid, "config"))


def winner(*volumes: ObservedVolume) -> str | None:
    """The name of the record volume that wins among ``volumes`` (there are some)."""
    found = choice(*volumes)
    assert found is not None
    return found.winner.volume if found.winner is not None else None


def test_a_record_says_what_the_volumes_own_file_says() -> None:
    """A record's data is the ``..podsync`` file's text, byte for byte (canonical JSON:
    sorted keys, no spaces): the two records of one write are the same record."""
    content = VolumeContent(
        VolumeKind.SECRET,
        (VolumeFile("tls/key", b"k", 0o400), VolumeFile("password", b"s3cret", 0o400)),
        {"Secret default/z": "2", "Secret default/a": "1"},
    )
    text = record_text(content, 2000, "..payload-1")
    written = parse_record(POD.uid, "creds", text, "podsync-content_u1_creds")
    assert written is not None

    assert text.decode() == record_data(written)


def test_a_record_without_its_pod_or_volume_is_no_record() -> None:
    """Each of the pod uid and the volume name is needed: a record volume without
    either is not read as one (and a volume that is no record before it stops
    nothing)."""
    other = ObservedVolume("someone-elses", {"purpose": "backup"})

    assert {} == record_choices([record("a", over={LABEL_POD_UID: None})])
    assert {} == record_choices([record("a", over={LABEL_VOLUME_NAME: None})])
    assert {} == record_choices([record("a", over={LABEL_POD_UID: ""})])
    found = choice(other, record("z", over={LABEL_VOLUME_NAME: None}), record("a"))
    assert found is not None
    assert ["a"] == [r.volume for r in found.records]
    assert "a" == winner(other, record("z", over={LABEL_VOLUME_NAME: None}), record("a"))


def test_a_record_with_a_label_missing_or_unreadable_never_wins() -> None:
    """A record without its data, its generation or the creation time it describes -
    or whose data is not text (a lone surrogate, which JSON can carry) - is read as
    unreadable, never believed, and never stops the reading of the others."""
    for over in (
        {LABEL_RECORD_DATA: None},
        {LABEL_RECORD_DATA: "\ud800"},
        {LABEL_RECORD_GENERATION: None},
        {LABEL_RECORD_GENERATION: "x"},
        {LABEL_RECORD_VOLUME_CREATED: None},
    ):
        assert winner(record("a", 1, over)) is None, over
        alone = choice(record("a", 1, over))
        assert alone is not None
        assert ["a"] == alone.losers()


def test_the_generation_is_a_plain_decimal_number() -> None:
    """Generation 0 is a generation (it wins alone); up to 18 digits are read, longer
    ones are unreadable; and a record that replaces an unreadable one is believed."""
    assert "a" == winner(record("a", 0))
    longest = "9" * 18
    assert "a" == winner(record("a", over={LABEL_RECORD_GENERATION: longest}), record("b", 5))
    assert "b" == winner(record("a", over={LABEL_RECORD_GENERATION: "1" + longest}), record("b", 5))

    garbage = record("a", over={LABEL_RECORD_GENERATION: "x"})
    unreadable = choice(garbage)
    assert unreadable is not None
    assert "b" == winner(garbage, record("b", unreadable.next_generation))


def test_a_record_is_believed_only_for_podsyncs_volume_of_that_pod_volume() -> None:
    """The engine volume the record names must carry podsync's content kind, the pod's
    uid and the volume's name - each of the three."""
    found = choice(record("a"))
    labels = CONTENT.labels

    assert WRITTEN == believed(found, {TARGET: CONTENT})
    for key, value in (
        (LABEL_VOLUME_KIND, "claim"),
        (LABEL_POD_UID, "another-uid"),
        (LABEL_VOLUME_NAME, "other"),
    ):
        assert labels[key] != value
        changed = ObservedVolume(TARGET, {**labels, key: value}, CREATED)
        assert believed(found, {TARGET: changed}) is None, key
    assert VOLUME_KIND_CONTENT == labels[LABEL_VOLUME_KIND]


# Record upkeep (``podsync.planner._volumes.record_upkeep``): what the plan does to keep one
# believed record volume per pod volume. Several volumes of one pod may show the same
# ConfigMap.
SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {app.conf: color=blue}
"""
SHOP = """\
apiVersion: v1
kind: Pod
metadata: {name: shop, uid: shop-uid}
spec:
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: config, configMap: {name: settings}}
  - {name: backup, configMap: {name: settings}}
  - {name: theirs, configMap: {name: settings}}
  - {name: legacy, configMap: {name: settings}}
  - {name: main, configMap: {name: settings}}
  containers:
  - name: app
    image: busybox
    volumeMounts: [{name: main, mountPath: /etc/app}]
"""
LATER = "2027-01-01T00:05:00Z"


def shop() -> Pod:
    (pod,) = load(SETTINGS, SHOP)
    return pod


def engine_volume(pod: Pod, name: str, created: str = CREATED) -> ObservedVolume:
    """podsync's content volume of ``pod``'s ``name``, made at ``created``."""
    return ObservedVolume(
        content_volume_name(pod.uid, name), content_volume_labels(pod, name), created
    )


def from_file(pod: Pod, name: str, volume: str | None = None) -> WrittenVolume:
    """What the ``..podsync`` file of ``pod``'s ``name`` says, read through the engine."""
    where = content_volume_name(pod.uid, name) if volume is None else volume
    return WrittenVolume(pod.uid, name, "digest-1", {}, where, "..payload-1", ("app.conf",))


def upkeep(
    pod: Pod,
    volumes: Sequence[ObservedVolume],
    engine: dict[str, WrittenVolume],
    writes: Sequence[PodAction] = (),
) -> list[PodAction]:
    return record_upkeep(
        pod,
        engine=engine,
        writes=writes,
        present={v.name: v for v in volumes},
        records=record_choices(volumes),
    )


def test_a_volume_read_from_its_own_file_gets_its_first_record() -> None:
    """Without a record volume, a content volume whose file was read gets a record of
    generation 1 saying what the file says, at the volume's creation time - only when
    the volume is listed, was read from that engine volume, reports a creation time and
    is podsync's; the other volumes of the pod are each looked at in turn."""
    pod = shop()
    theirs = ObservedVolume(content_volume_name(pod.uid, "theirs"), {}, CREATED)
    volumes = [
        # config: not listed (made by the pod's writes)
        engine_volume(pod, "backup"),  # not read through the engine
        theirs,
        engine_volume(pod, "legacy"),
        engine_volume(pod, "main"),
    ]
    main = from_file(pod, "main")
    engine = {
        "config": from_file(pod, "config"),
        "theirs": from_file(pod, "theirs"),
        "legacy": from_file(pod, "legacy", volume=""),  # a host directory's
        "main": main,
    }

    actions = upkeep(pod, volumes, engine)

    name = content_volume_name(pod.uid, "main")
    assert [
        CreateVolume(
            pod=pod.key,
            pod_uid=pod.uid,
            volume=content_record_volume(main, 1),
            labels=content_record_labels(main, CREATED, 1),
            reason=Reason.VOLUME_RECORDED,
            message=f"record the files of volume {name} in the volume list: read from "
            "the volume itself",
        )
    ] == actions


def test_a_believed_record_stays_and_the_others_of_its_volume_go() -> None:
    """Of several record volumes of one pod volume the believed one stays, whatever its
    name's place among them; each other one is removed as ``stale-record``."""
    pod = shop()
    main = from_file(pod, "main")
    winner = ObservedVolume("aa-record", content_record_labels(main, CREATED, 2))
    stale = [
        ObservedVolume(n, content_record_labels(main, CREATED, 1)) for n in ("a-old", "zz-old")
    ]

    actions = upkeep(pod, [engine_volume(pod, "main"), *stale, winner], {})

    name = content_volume_name(pod.uid, "main")
    assert [
        RemoveVolume(
            pod=pod.key,
            pod_uid=pod.uid,
            volume=old,
            reason=Reason.STALE_RECORD,
            message=f"remove volume {old}: a record of volume {name} that a newer one replaced",
        )
        for old in ("a-old", "zz-old")
    ] == actions


def test_a_record_of_a_volume_made_at_another_time_is_replaced() -> None:
    """A record that names another creation time than the volume's (touched at its top,
    or made again, by someone else) is not believed, even as the only one: the volume's
    file, read instead, gets a record of the next generation, and the old one goes."""
    pod = shop()
    main = from_file(pod, "main")
    old = ObservedVolume("old-record", content_record_labels(main, CREATED, 2))

    actions = upkeep(pod, [engine_volume(pod, "main", LATER), old], {"main": main})

    create, remove = actions
    assert isinstance(create, CreateVolume)
    assert isinstance(remove, RemoveVolume)
    assert (content_record_volume(main, 3), Reason.VOLUME_RECORDED) == (
        create.volume,
        create.reason,
    )
    assert content_record_labels(main, LATER, 3) == create.labels
    assert ("old-record", Reason.STALE_RECORD) == (remove.volume, remove.reason)


def test_a_volume_written_by_the_plan_gets_its_record_from_the_write() -> None:
    """A volume the plan writes is left to the write, which records it: no record is
    made from its old file, and its old records are removed by the write, not here."""
    pod = shop()
    main = from_file(pod, "main")
    volumes = [
        engine_volume(pod, "main", LATER),
        ObservedVolume("a-old", content_record_labels(main, CREATED, 1)),
        ObservedVolume("b-old", content_record_labels(main, CREATED, 2)),
    ]
    (volume,) = [v for v in pod.volumes if v.name == "main"]
    assert volume.content is not None
    write = WriteVolume(
        pod=pod.key,
        pod_uid=pod.uid,
        volume="main",
        path="",
        content=volume.content,
        reason=Reason.VOLUME_CHANGED,
        message="ConfigMap default/settings changed",
        engine_volume=content_volume_name(pod.uid, "main"),
    )

    assert [] == upkeep(pod, volumes, {"main": main}, writes=[write])
    assert [] != upkeep(pod, volumes, {"main": main})


def test_why_a_volume_is_written_again_is_said_for_people() -> None:
    """The reason of a rewrite names every source whose digest changed or that is gone,
    sorted; else, the content being the same, the fsGroup - given, changed or removed;
    else the items or their modes."""
    pod = shop()
    (volume,) = [v for v in pod.volumes if v.name == "main"]
    assert volume.content is not None
    same = volume.content.digest
    (source,) = volume.content.sources

    def why(digest: str, sources: dict[str, str], fs_group: int | None) -> str:
        found = WrittenVolume(pod.uid, "main", digest, sources, "", "..payload-1", ())
        reason, text = _why(volume, found, fs_group)
        assert Reason.VOLUME_CHANGED == reason
        return text

    both = {source: "old", "Secret default/gone": "x"}
    assert f"{source}, Secret default/gone changed" == why(same, both, None)
    unchanged = dict(volume.content.sources)
    assert "the pod's fsGroup changed" == why(same, unchanged, 2000)
    assert "the pod's fsGroup changed" == why(f"{same}:1000", unchanged, 2000)
    assert "fsGroup was removed" == why(f"{same}:1000", unchanged, None)
    assert "its items or modes changed" == why("another", unchanged, None)
    assert "its items or modes changed" == why(f"another:{same}", unchanged, 2000)
    assert (Reason.VOLUME_MISSING, "files not written yet") == _why(volume, None, 2000)


GROUPED = SHOP.replace("spec:\n", "spec:\n  securityContext: {fsGroup: 2000}\n", 1)


def test_a_mounted_volume_is_written_when_its_record_says_other_content() -> None:
    """A volume a container of the pod mounts is written when the record read from it
    says other content - the fsGroup is part of it - into the next payload, replacing
    the links the record names; the volume is created first only when it has no record
    and the listing does not hold it as podsync's. Volumes that hold no files (an
    emptyDir, listed first) are passed over."""
    (pod,) = load(SETTINGS, GROUPED)
    (volume,) = [v for v in pod.volumes if v.name == "main"]
    content = volume.content
    assert content is not None
    name = content_volume_name(pod.uid, "main")
    labels = {LABEL_CONTENT_VOLUMES: encode_content_volumes({"main": "/etc/app"})}
    app = ObservedContainer("c1", "k8s_app", "busybox", labels)
    instances = [Instance(app, pod.uid, pod.full_name, pod.key, "file", "app")]
    listed = [engine_volume(pod, "main")]

    def writes(engine: dict[str, WrittenVolume], volumes: list[ObservedVolume]) -> list[object]:
        return list(
            volume_writes(
                pod,
                host={},
                engine=engine,
                instances=instances,
                actions=[],
                volumes=volumes,
                image="pause",
                root_dir="/nonexistent",
            )
        )

    def written(fs_group: int) -> WrittenVolume:
        digest = content_digest(content, fs_group)
        return WrittenVolume(
            pod.uid, "main", digest, dict(content.sources), name, "..payload-1", ("app.conf",)
        )

    assert [] == writes({"main": written(2000)}, listed)
    expected = WriteVolume(
        pod=pod.key,
        pod_uid=pod.uid,
        volume="main",
        path="",
        content=content,
        reason=Reason.VOLUME_CHANGED,
        message=f"write {pod.key} volume main ({content.kind.value}): the pod's fsGroup changed",
        fs_group=2000,
        engine_volume=name,
        image="pause",
        payload="..payload-2",
        previous="..payload-1",
        linked=("app.conf",),
    )
    assert [expected] == writes({"main": written(1000)}, listed)
    assert [expected] == writes({"main": written(1000)}, [])
    (first,) = writes({}, listed)
    assert isinstance(first, WriteVolume)
    assert (Reason.VOLUME_MISSING, "", ()) == (first.reason, first.previous, first.linked)
    create, write = writes({}, [])
    assert isinstance(create, CreateVolume)
    assert (name, Reason.VOLUME_MISSING) == (create.volume, create.reason)
    assert write == first


def test_a_host_directory_an_earlier_podsync_binds_is_written_as_the_pod_says() -> None:
    """A running container of an earlier podsync (no content-volume label) binds the
    volume's host directory: it is written there when its record says other content,
    with the pod's fsGroup, and the message says why it is written there."""
    (pod,) = load(SETTINGS, GROUPED)
    (volume,) = [v for v in pod.volumes if v.name == "main"]
    content = volume.content
    assert content is not None
    labels = {LABEL_POD_UID: pod.uid, LABEL_CONTAINER: "app"}
    old = ObservedContainer("c0", "k8s_app", "busybox", labels, running=True)
    instances = [Instance(old, pod.uid, pod.full_name, pod.key, "file", "app")]
    digest = content_digest(content, 1000)
    found = WrittenVolume(pod.uid, "main", digest, dict(content.sources), "", "", ("app.conf",))

    actions = volume_writes(
        pod,
        host={"main": found},
        engine={},
        instances=instances,
        actions=[],
        volumes=[],
        image="pause",
        root_dir="/srv/podsync",
    )

    path = content_dir("/srv/podsync", pod.uid, volume)
    assert [
        WriteVolume(
            pod=pod.key,
            pod_uid=pod.uid,
            volume="main",
            path=path,
            content=content,
            reason=Reason.VOLUME_CHANGED,
            message=(
                f"write {pod.key} volume main ({content.kind.value}) into {path}, which a "
                "container made by an earlier podsync binds: the pod's fsGroup changed"
            ),
            fs_group=2000,
        )
    ] == actions


UNMOUNTED = """\
apiVersion: v1
kind: Pod
metadata: {name: spare, uid: spare-uid}
spec:
  volumes:
  - {name: config, configMap: {name: settings}}
  containers:
  - {name: app, image: busybox}
"""


def test_a_volume_no_container_mounts_is_neither_written_nor_recorded() -> None:
    """A content volume left on the engine that no container of the pod mounts, whose
    file was not read (nothing asked for it): the plan neither writes it nor gives it a
    record volume - and plans the pod's containers as for any pod."""
    (pod,) = load(SETTINGS, UNMOUNTED)
    left = engine_volume(pod, "config")

    made = plan([pod], [], now=1.0, options=PlanOptions(root_dir="/nonexistent"), volumes=[left])

    kinds = {type(a).__name__ for a in made.actions}
    assert "Create" in kinds
    assert not kinds & {"WriteVolume", "CreateVolume", "RemoveVolume"}
