"""``podsync.down`` as a library call (issue 29), on a ``FakeRuntime``: the pods named
go whatever their scope, a scope alone takes everything of its own, a caller may look
at the plan first, and what cannot be a ``down`` is a ``ValueError`` that changes
nothing."""

from __future__ import annotations

import pytest

import podsync
from podsync import Container, Plan, PlanOptions, Pod
from podsync.testing import MUTATING_CALL_NAMES, FakeClock, FakeRuntime

NOW = 1_700_000_000.0
OPTIONS = PlanOptions(root_dir="/nonexistent", network_image="pause:1")


def _pod(name: str) -> Pod:
    return Pod(name, (Container("app", "busybox:1"),), source="file")


def _engine(*made: tuple[Pod, str | None]) -> FakeRuntime:
    """An engine that runs each pod, synced alone in its scope."""
    fake = FakeRuntime(images=["busybox:1", "pause:1"], clock=FakeClock(NOW, step=0))
    for pod, scope in made:
        assert podsync.sync([pod], fake, options=OPTIONS, scope=scope, clock=fake.clock).ok
    fake.clear_calls()
    return fake


def _pods(fake: FakeRuntime) -> set[str]:
    return {c.labels["io.podsync.pod.name"] for c in fake.containers}


def test_down_of_pods_takes_them_whatever_their_scope() -> None:
    web, db, cache = _pod("web"), _pod("db"), _pod("cache")
    fake = _engine((web, "team-a"), (db, None), (cache, "team-b"))

    result = podsync.down([web, db], fake, options=OPTIONS, clock=fake.clock)

    assert result.ok, result.apply_result.summary()
    assert {"cache"} == _pods(fake)


def test_down_of_a_scope_takes_its_own_and_nothing_else() -> None:
    web, db, cache = _pod("web"), _pod("db"), _pod("cache")
    fake = _engine((web, "team-a"), (db, None), (cache, "team-a"))

    result = podsync.down(runtime=fake, scope="team-a", options=OPTIONS, clock=fake.clock)

    assert result.ok, result.apply_result.summary()
    assert {"db"} == _pods(fake)
    assert [] == [v.name for v in fake.list_volumes() if web.uid in v.name or cache.uid in v.name]


def test_a_declined_down_changes_nothing() -> None:
    web = _pod("web")
    fake = _engine((web, None))
    seen: list[Plan] = []

    def decline(the_plan: Plan, observation: object) -> bool:
        seen.append(the_plan)
        return False

    result = podsync.down([web], fake, options=OPTIONS, before_apply=decline, clock=fake.clock)

    assert not result.applied
    assert [web.uid] == [p.uid for p in seen[0].pods]
    assert [] == [n for n in fake.call_names() if n in MUTATING_CALL_NAMES]


@pytest.mark.parametrize(
    ("pods", "scope", "message"),
    [((), None, "pods to remove, a scope"), ((), "Team A", "bad scope")],
    ids=["neither-pods-nor-a-scope", "a-bad-scope"],
)
def test_what_cannot_be_a_down(pods: tuple[Pod, ...], scope: str | None, message: str) -> None:
    fake = _engine()

    with pytest.raises(ValueError, match=message):
        podsync.down(pods, fake, scope=scope)

    assert [] == fake.call_names()
