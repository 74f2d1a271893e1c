"""``podsync.down`` as a library call (issue 29), on a ``FakeRuntime``: the pods named
go whatever their scope, a scope alone takes everything of its own, a caller may look
at the plan first, and what cannot be a ``down`` is a ``ValueError`` that changes
nothing."""

from __future__ import annotations

import attrs
import pytest

import podsync
from podsync import Container, Plan, PlanOptions, Pod, RuntimeCallError
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


def _on_podman(made: FakeRuntime) -> FakeRuntime:
    """What ``made`` holds, on an engine with podman's rule (``refuse_joined_removal``):
    each container joins what it joined, under an id as an engine gives them - random,
    so that containers created in one second, of one attempt, come in any order of ids.
    Here each network container's id sorts after the others': the order in which
    ``down`` once removed a network container before the container that joins it."""
    podman = FakeRuntime(volumes=made.list_volumes(), clock=made.clock, refuse_joined_removal=True)
    for c in made.containers:
        net = c.labels["io.podsync.container.name"] == "net"
        spec = made.spec(c.id)
        joins = f"container:{spec.join}" if spec is not None and spec.join else ""
        podman.add_container(attrs.evolve(c, id=("f" if net else "0") + c.id), network_mode=joins)
    return podman


def test_down_converges_on_podman_after_the_network_container_died() -> None:
    """Issue 31: once a pod's network container had died and the pod had been rebuilt,
    ``down`` removed the dead network container before the exited container that joins
    it; podman refused ("has dependent containers which must be removed before it")
    and every ``down`` failed. The plan removes the containers that join a network
    container first: one ``down`` takes everything."""
    web = _pod("web")
    made = _engine((web, None))
    (net,) = [c for c in made.containers if c.labels["io.podsync.container.name"] == "net"]
    made.exit(net.id, 137)
    assert podsync.sync([web], made, options=OPTIONS, clock=made.clock).ok  # rebuilt
    fake = _on_podman(made)
    assert 4 == len(fake.containers)  # two network containers, two of app: one each runs
    with pytest.raises(RuntimeCallError, match="has dependent containers"):
        fake.remove_container("f" + net.id)  # the engine knows what joins what
    fake.clear_calls()

    result = podsync.down([web], fake, options=OPTIONS, clock=fake.clock)

    assert result.ok, result.apply_result.summary()
    assert ([], []) == (fake.containers, fake.list_volumes())
    assert 4 == fake.call_names().count("remove")  # each once: nothing was refused
