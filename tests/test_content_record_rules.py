"""The rules of content-record volumes (``podsync._content_records``) one by one: what
a record says, which labels can be read back, and which record of a pod volume is
believed - each pinned where a change of the rule would go unnoticed otherwise."""

from __future__ import annotations

from podsync import NodeInfo, Pod, parse_pods
from podsync._content_layout import parse_record, record_text
from podsync._content_records import (
    RecordChoice,
    believed,
    content_record_labels,
    record_choices,
    record_data,
)
from podsync._labels import (
    LABEL_POD_UID,
    LABEL_RECORD_DATA,
    LABEL_RECORD_GENERATION,
    LABEL_RECORD_VOLUME_CREATED,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    VOLUME_KIND_CONTENT,
)
from podsync._models import ObservedVolume, VolumeContent, VolumeFile, VolumeKind, WrittenVolume
from podsync._volumes import content_volume_labels

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


def record(name: str, generation: int = 1, **over: str | None) -> ObservedVolume:
    """A record volume saying ``WRITTEN``; ``over`` replaces labels (``None``: drops)."""
    labels: dict[str, str | None] = {**content_record_labels(WRITTEN, CREATED, generation)}
    labels.update(over)
    return ObservedVolume(name, {k: v for k, v in labels.items() if v is not None})


def choice(*volumes: ObservedVolume) -> RecordChoice | None:
    return record_choices(volumes).get((POD.uid, "config"))


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

    assert {} == record_choices([record("a", **{LABEL_POD_UID: None})])
    assert {} == record_choices([record("a", **{LABEL_VOLUME_NAME: None})])
    assert {} == record_choices([record("a", **{LABEL_POD_UID: ""})])
    found = choice(other, record("a"))
    assert found is not None and found.winner is not None


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
        alone = choice(record("a", 1, **over))
        assert alone is not None and alone.winner is None, over
        assert ["a"] == alone.losers()


def test_the_generation_is_a_plain_decimal_number() -> None:
    """Generation 0 is a generation (it wins alone); up to 18 digits are read, longer
    ones are unreadable; and a record that replaces an unreadable one is believed."""
    zero = choice(record("a", 0))
    assert zero is not None and zero.winner is not None
    longest = "9" * 18
    read = choice(record("a", **{LABEL_RECORD_GENERATION: longest}), record("b", 5))
    assert read is not None and read.winner is not None and read.winner.volume == "a"
    too_long = choice(record("a", **{LABEL_RECORD_GENERATION: "1" + longest}), record("b", 5))
    assert too_long is not None and too_long.winner is not None
    assert "b" == too_long.winner.volume

    garbage = choice(record("a", **{LABEL_RECORD_GENERATION: "x"}))
    assert garbage is not None
    after = choice(record("a", **{LABEL_RECORD_GENERATION: "x"}), record("b", garbage.next_generation))
    assert after is not None and after.winner is not None and after.winner.volume == "b"


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
