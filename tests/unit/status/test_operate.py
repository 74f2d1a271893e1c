"""``podsync.status._operate``'s choices, purely: which instance is current and which previous,
and how a POD argument finds its pod."""

from __future__ import annotations

from podsync import ObservedContainer
from podsync.spec._labels import LABEL_ATTEMPT, LABEL_CONTAINER, LABEL_POD_UID
from podsync.status import previous_instance
from podsync.status._operate import PodRef, current_instance, find_pods


def instance(
    cid: str, attempt: int, *, created: float = 100.0, running: bool = False
) -> ObservedContainer:
    labels = {LABEL_POD_UID: "u", LABEL_CONTAINER: "app", LABEL_ATTEMPT: str(attempt)}
    return ObservedContainer(
        cid,
        f"k8s_app_{attempt}",
        labels=labels,
        created=created,
        running=running,
        exit_code=1,
        finished_at=None if running else created + 1,
    )


def test_instances_of_one_second_are_ordered_by_attempt() -> None:
    """The engine lists creation times in whole seconds: a crash loop makes several
    instances in one, and their attempt numbers say which came last (ids say nothing)."""
    first, second = instance("ffff", 1), instance("0000", 2)

    assert second is current_instance([first, second])
    assert first is previous_instance([second, first])


def test_previous_is_the_newest_exited_one_before_a_running_one() -> None:
    old, older, now = (
        instance("a", 2, created=90),
        instance("b", 1, created=80),
        instance("c", 3, running=True),
    )

    assert now is current_instance([old, older, now])
    assert old is previous_instance([older, now, old])
    assert previous_instance([now]) is None


def test_finding_pods() -> None:
    refs = [
        PodRef("u1", "default/web", "web.default.file"),
        PodRef("u2", "team/web", "web.team.file"),
        PodRef("u3", "default/job", "job.default.http"),
    ]

    assert [refs[0], refs[1]] == find_pods(refs, "web")
    assert [refs[1]] == find_pods(refs, "team/web")
    assert [refs[0]] == find_pods(refs, "web.default.file")
    assert [refs[2]] == find_pods(refs, "u3")
    assert [] == find_pods(refs, "default/nope")
