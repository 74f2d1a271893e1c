"""The rules of podsync's engine volumes, one test per rule, pure and fast: the records
it keeps as labelled volumes (``podsync._records``), the emptyDir volumes it plans
(``podsync._empty_dir_planner``) and the atomic-writer layout of content volumes
(``podsync._content_layout``). Each was found unchecked by mutation testing
(``tools/mutation.sh``): the mutant it kills is named in its docstring.
"""

from __future__ import annotations

import pytest

from podsync._labels import (
    LABEL_POD_UID,
    LABEL_RECORD_CONTAINER,
    LABEL_RECORD_DATA,
    LABEL_RECORD_TIME,
    LABEL_VOLUME_KIND,
    VOLUME_KIND_EMPTY_DIR,
    VOLUME_KIND_PROBE_RECORD,
    VOLUME_KIND_STOP_RECORD,
)
from podsync._models import ObservedVolume
from podsync._records import (
    Record,
    probe_record_labels,
    probe_record_volume,
    probe_records,
    records_of,
    stop_record_labels,
    stop_record_volume,
    stop_records,
)

UID = "8f7c2a10-5d1e-4c5b-9a43-0e6d2f1b7c90"
CID = "3b1f0c9e8d7a"

# --- records: podsync's stop and probe records, as labelled volumes ---------------------


def _stop(cid: str = CID, reason: str = "replaced", without: str = "") -> ObservedVolume:
    """The stop record apply writes, with the label ``without`` left out."""
    labels = stop_record_labels(UID, cid, reason)
    labels.pop(without, None)
    return ObservedVolume(stop_record_volume(cid), labels)


def _probe(text: str, at: float, cid: str = CID) -> ObservedVolume:
    return ObservedVolume(probe_record_volume(cid, text), probe_record_labels(UID, cid, text, at))


def test_a_record_names_only_a_container_id_a_volume_name_can_hold() -> None:
    """A container id outside Docker's volume-name alphabet is refused, and the error
    names it (``_checked``: the message, mutant 3)."""
    with pytest.raises(ValueError, match=r"cannot name a record of container 'a/b'"):
        stop_record_volume("a/b")
    with pytest.raises(ValueError, match=r"cannot name a record of container '-x'"):
        probe_record_volume("-x", "{}")


def test_a_probe_record_reads_back_its_time() -> None:
    """The time a probe record is written at is read back exactly (``repr`` of a float):
    the newest record wins by it (``probe_record_labels``, ``records_of``)."""
    (record,) = records_of([_probe('{"liveness": 1}', 1_000_000.25)])
    assert record == Record(
        probe_record_volume(CID, '{"liveness": 1}'),
        VOLUME_KIND_PROBE_RECORD,
        UID,
        CID,
        '{"liveness": 1}',
        1_000_000.25,
    )


def test_a_stop_record_has_no_time_and_an_unreadable_time_is_zero() -> None:
    """A stop record carries no time (0.0); a probe record whose time label is not a
    number - a label is engine data - reads as 0.0, the oldest, never as an error."""
    (stop,) = records_of([_stop()])
    assert stop.time == 0.0
    volume = _probe("{}", 5.0)
    volume.labels[LABEL_RECORD_TIME] = "yesterday"
    (probe,) = records_of([volume])
    assert probe.time == 0.0
    assert probe_records([probe]) == {CID: "{}"}


@pytest.mark.parametrize("missing", [LABEL_VOLUME_KIND, LABEL_POD_UID, LABEL_RECORD_CONTAINER])
def test_a_volume_is_a_record_only_with_kind_pod_and_container(missing: str) -> None:
    """A volume is a record only when its labels give a record kind, a pod and a
    container; without any one of them it is not a record - and a volume that is not
    one does not hide the records listed after it (``records_of``)."""
    broken = _stop("0000aaaa", without=missing)
    assert records_of([broken, _stop()]) == [
        Record(stop_record_volume(CID), VOLUME_KIND_STOP_RECORD, UID, CID, "replaced")
    ]


def test_a_volume_of_another_kind_with_record_labels_is_not_a_record() -> None:
    """Only the two record kinds are records, whatever else the labels say."""
    labels = stop_record_labels(UID, CID, "replaced")
    labels[LABEL_VOLUME_KIND] = VOLUME_KIND_EMPTY_DIR
    assert records_of([ObservedVolume("podsync-stopped_" + CID, labels)]) == []


def test_a_stop_record_without_a_reason_says_unknown() -> None:
    """podsync stopped the container, the reason is lost: ``"unknown"``, whether the
    data label is empty, blank or missing (``stop_records``)."""
    records = records_of(
        [
            _stop("aaaa", ""),
            _stop("bbbb", "  "),
            _stop("cccc", without=LABEL_RECORD_DATA),
            _stop("dddd", "unhealthy"),
        ]
    )
    assert stop_records(records) == {
        "aaaa": "unknown",
        "bbbb": "unknown",
        "cccc": "unknown",
        "dddd": "unhealthy",
    }


def test_the_newest_probe_record_of_a_container_wins_in_any_order() -> None:
    """An interrupted replacement leaves two probe records of a container: the newer one
    (by its time) is read, whichever is listed first, and stop records among them are
    skipped, not the end of the list (``probe_records``)."""
    old, new = _probe('{"n": 1}', 100.0), _probe('{"n": 2}', 200.0)
    other = _probe('{"n": 9}', 50.0, cid="ffff")
    for volumes in ([old, new], [new, old]):
        records = [r for v in volumes for r in records_of([v])]
        assert probe_records(records) == {CID: '{"n": 2}'}
    stop_first = [*records_of([_stop()]), *records_of([new]), *records_of([other])]
    assert probe_records(stop_first) == {CID: '{"n": 2}', "ffff": '{"n": 9}'}
