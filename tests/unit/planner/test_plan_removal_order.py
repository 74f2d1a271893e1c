"""A container that others join is removed after them, case by case, in the manner of
the kubelet's ``TestComputePodActions`` (issue 31, ``podsync.planner._gc.joined_last``).

podman refuses to remove a container that another container - running or exited -
joins ("has dependent containers which must be removed before it"); Docker allows it.
Once a pod's network container had died and the pod had been rebuilt, ``podsync down``
removed the old network container before the exited container that joined it, and
failed on podman every time. Each row is one path that plans removals - ``down``, a
scope's removal, a pod no longer desired, a rebuild after a lost network, garbage
collection per container and under the global cap - from an engine on which podsync
ran the pod and rebuilt it after its network container died (``deaths`` times), and
lists the plan's actions as (kind, instance, reason): ``work#1`` is the instance of
attempt 1 of ``work``. Every plan is then applied to ``EngineModel``, which refuses a
removal podman refuses; and a property holds it for any plan of any such history.
"""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podsync.actions._actions import Kill, Plan, Remove
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.model._pod import Pod
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_ATTEMPT, LABEL_CONTAINER, LABEL_SCOPE
from tests.support.engine_model import EngineModel
from tests.support.strategies import pods
from tests.unit.planner.test_compute_pod_actions import (
    JOB,
    NOW,
    PAIR,
    STARTED,
    instances,
    pod_file,
    ran,
)

#: What ``down`` plans with: nothing desired, everything of the scope goes, at any age.
DOWN = PlanOptions(
    scope=NODE_SCOPE, allow_deletions=True, gc=GCPolicy(max_per_container=0, min_age=0)
)
#: Per pod container, keep one exited instance, of any age.
KEEP_ONE = PlanOptions(gc=GCPolicy(max_per_container=1, min_age=0))


def cap(total: int) -> PlanOptions:
    """No count per container, a global cap of ``total`` exited containers."""
    return PlanOptions(gc=GCPolicy(max_per_container=None, min_age=0, max_total=total))


@attrs.frozen
class Case:
    """One row: the pod (``template`` under ``policy``) as podsync ran it, rebuilt after
    ``deaths`` deaths of its network container (at ``STARTED + 100``, ``+ 200``);
    ``completed``: that container exited 0 first; ``last_death``: the network container
    of the last rebuild died too, ``last_death`` seconds before ``NOW``, and no sync ran
    since; the plan's ``desired`` pods (the pod, or none) and options; its actions.
    ``nets_first``: the network containers' ids sort before the others' (the order that
    takes the oldest first, among containers created in one second)."""

    id: str
    deaths: int
    expected: tuple[tuple[str, str, str], ...]
    options: PlanOptions
    desired: bool = True
    template: str = JOB
    policy: str = "Always"
    completed: str = ""
    last_death: float = 0.0
    scope: str = ""
    nets_first: bool = False


def world(case: Case) -> tuple[Pod, EngineModel]:
    """The engine of the row (see ``Case``)."""
    pod = pod_file(case.template, case.policy)
    model = ran(pod)
    if case.completed:
        (done,) = instances(model, case.completed)
        model.exit(done.id, 0, STARTED + 50)
    for death in range(1, case.deaths + 1):
        at = STARTED + 100 * death
        (net,) = [o for o in instances(model, "net") if o.running]
        model.exit(net.id, 137, at)
        # The next syncs rebuild the pod, the second once the containers' back-off is
        # over (the defaults: nothing is old enough to go).
        for later in (at + 1, at + 50):
            model.apply(plan([pod], model.observed, images=model.images, now=later), later)
    if case.last_death:
        (net,) = [o for o in instances(model, "net") if o.running]
        model.exit(net.id, 137, NOW - case.last_death)
    if case.scope:
        # Made by the scope's sync: every container carries its label.
        for o in model.observed:
            model.containers[o.id] = attrs.evolve(o, labels={**o.labels, LABEL_SCOPE: case.scope})
    return pod, engine_ids(model, nets_first=case.nets_first)


def engine_ids(model: EngineModel, *, nets_first: bool = False) -> EngineModel:
    """``model`` with its containers' ids as an engine gives them: random, so that the
    containers one apply created (one creation time, one attempt) come in any order
    of ids. Here each network container's id sorts after the others' - the order in
    which a plan once removed a network container before the container that joins it
    (the newest first, by id among equals) - or, ``nets_first``, before them (the
    oldest first: the global cap's order)."""
    net = {cid for cid, o in model.containers.items() if o.labels.get(LABEL_CONTAINER) == "net"}
    first, last = ("0", "f") if nets_first else ("f", "0")
    model.reid({cid: (first if cid in net else last) + cid for cid in model.containers})
    return model


def actions(p: Plan, model: EngineModel) -> list[tuple[str, str, str]]:
    """The plan's pod actions as (kind, target, reason): a kill or removal names its
    instance (``container#attempt``), anything else its container."""
    seen = {o.id: o for o in model.observed}

    def target(a: object) -> str:
        if isinstance(a, Kill | Remove):
            labels = seen[a.id].labels
            return f"{labels[LABEL_CONTAINER]}#{labels[LABEL_ATTEMPT]}"
        return str(getattr(a, "container", ""))

    return [(type(a).__name__, target(a), a.reason.value) for pod in p.pods for a in pod.actions]


NOT_DESIRED = "gc-not-desired"
#: The pod's state volume goes once none of its containers is left.
STATE_VOLUME = ("RemoveVolume", "", "orphaned-pod-volume")

CASES = [
    Case(
        # The issue: down after a rebuild removed net#0 before work#0, which joins it.
        "down-after-a-rebuild",
        1,
        (
            ("Kill", "work#1", "pod-not-desired"),
            ("Kill", "net#1", "pod-not-desired"),
            ("Remove", "work#1", NOT_DESIRED),
            ("Remove", "net#1", NOT_DESIRED),
            ("Remove", "work#0", NOT_DESIRED),
            ("Remove", "net#0", NOT_DESIRED),
            STATE_VOLUME,
        ),
        DOWN,
        desired=False,
    ),
    Case(
        "down-after-two-rebuilds-of-a-pair",
        2,
        (
            ("Kill", "serve#2", "pod-not-desired"),
            ("Kill", "load#2", "pod-not-desired"),
            ("Kill", "net#2", "pod-not-desired"),
            ("Remove", "serve#2", NOT_DESIRED),
            ("Remove", "load#2", NOT_DESIRED),
            ("Remove", "net#2", NOT_DESIRED),
            ("Remove", "serve#1", NOT_DESIRED),
            ("Remove", "load#1", NOT_DESIRED),
            ("Remove", "net#1", NOT_DESIRED),
            ("Remove", "serve#0", NOT_DESIRED),
            ("Remove", "load#0", NOT_DESIRED),
            ("Remove", "net#0", NOT_DESIRED),
            STATE_VOLUME,
        ),
        DOWN,
        desired=False,
        template=PAIR,
    ),
    Case(
        "scope-removal-after-a-rebuild",
        1,
        (
            ("Kill", "work#1", "pod-not-desired"),
            ("Kill", "net#1", "pod-not-desired"),
            ("Remove", "work#1", NOT_DESIRED),
            ("Remove", "net#1", NOT_DESIRED),
            ("Remove", "work#0", NOT_DESIRED),
            ("Remove", "net#0", NOT_DESIRED),
            STATE_VOLUME,
        ),
        attrs.evolve(DOWN, scope="team-a"),
        desired=False,
        scope="team-a",
    ),
    Case(
        # work#0 stops now: younger than min_age, it stays, and so does the network
        # container it joins, although that one died long enough ago to go.
        "not-desired-network-died-under-a-running-container",
        0,
        (("Kill", "work#0", "pod-not-desired"),),
        PlanOptions(scope=NODE_SCOPE, allow_deletions=True, gc=GCPolicy(min_age=60)),
        desired=False,
        last_death=100,
    ),
    Case(
        "not-desired-old-instances-go-joiner-first",
        1,
        (
            ("Kill", "work#1", "pod-not-desired"),
            ("Kill", "net#1", "pod-not-desired"),
            ("Remove", "work#0", NOT_DESIRED),
            ("Remove", "net#0", NOT_DESIRED),
        ),
        PlanOptions(scope=NODE_SCOPE, allow_deletions=True, gc=GCPolicy(min_age=60)),
        desired=False,
    ),
    Case(
        # The second loss: the pod is rebuilt (work waits out its back-off first), and
        # the instances of the first loss go, work#0 before the net#0 it joins.
        "rebuild-after-a-second-network-loss",
        1,
        (
            ("Kill", "work#1", "network-lost"),
            ("Wait", "work", "back-off"),
            ("Remove", "work#0", "gc-exited"),
            ("Remove", "net#0", "gc-exited"),
        ),
        KEEP_ONE,
        last_death=5,
    ),
    Case(
        "gc-after-two-rebuilds-joiner-first",
        2,
        (("Remove", "work#0", "gc-exited"), ("Remove", "net#0", "gc-exited")),
        KEEP_ONE,
    ),
    Case(
        # load#0 completed (OnFailure, exit 0): kept, the instance its policy is judged
        # on - and it joins net#0, which stays with it (evictSandboxes).
        "gc-keeps-the-network-container-a-completed-container-joins",
        2,
        (("Remove", "serve#0", "gc-exited"),),
        KEEP_ONE,
        template=PAIR,
        policy="OnFailure",
        completed="load",
    ),
    Case(
        "global-cap-takes-the-joiner-then-its-network-container",
        2,
        (("Remove", "work#0", "gc-global-cap"), ("Remove", "net#0", "gc-global-cap")),
        cap(2),
        nets_first=True,
    ),
    Case(
        # One to remove: net#0 is the oldest, but work#0 joins it; work#0 goes.
        "global-cap-takes-the-joiner-not-the-network-container",
        2,
        (("Remove", "work#0", "gc-global-cap"),),
        cap(3),
        nets_first=True,
    ),
    Case(
        # Two to remove: work#0, then net#0, older than net#1 and work#1.
        "global-cap-takes-the-oldest-that-may-go",
        3,
        (("Remove", "work#0", "gc-global-cap"), ("Remove", "net#0", "gc-global-cap")),
        cap(4),
        nets_first=True,
    ),
    Case(
        # Two to remove: net#0 waits for both containers that join it.
        "global-cap-waits-for-every-container-that-joins",
        2,
        (("Remove", "load#0", "gc-global-cap"), ("Remove", "serve#0", "gc-global-cap")),
        cap(4),
        template=PAIR,
        nets_first=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_joined_containers_are_removed_last(case: Case) -> None:
    """The plan's actions, in order; and the engine, with podman's rule, takes them."""
    pod, model = world(case)
    made = plan(
        [pod] if case.desired else [],
        model.observed,
        images=model.images,
        volumes=model.observed_volumes,
        now=NOW,
        options=case.options,
    )

    assert list(case.expected) == actions(made, model)
    model.apply(made, NOW)  # EngineModel refuses a removal podman refuses


# --- any plan: no removal before a container that joins it -----------------------------

#: The collection settings a plan may be made with: per container, the global cap, ages.
_GC = st.builds(
    GCPolicy,
    max_per_container=st.sampled_from([None, 0, 1, 2]),
    min_age=st.sampled_from([0.0, 60.0]),
    max_total=st.sampled_from([None, 0, 2, 4]),
)


@st.composite
def histories(draw: st.DrawFn) -> tuple[Pod, EngineModel, float, PlanOptions, bool]:
    """A pod that podsync ran through a few syncs while its containers - its network
    container too - exited or died, collected under drawn settings; then, at ``now``,
    the last plan's options and whether the pod is still desired (when not: ``down``'s
    options, or a pod no longer desired). The containers' ids are drawn, as random as
    an engine's."""
    pod = draw(pods(max_containers=2, minimal=True))
    model = EngineModel()
    now = NOW
    for _ in range(draw(st.integers(1, 4))):
        options = PlanOptions(gc=draw(_GC))
        model.apply(plan([pod], model.observed, images=model.images, now=now, options=options), now)
        for o in list(model.observed):
            if o.running and draw(st.integers(0, 2)) == 0:
                model.exit(o.id, draw(st.sampled_from([0, 1, 137])), now + 1)
        now += draw(st.sampled_from([2.0, 30.0, 100.0]))
    desired = draw(st.booleans())
    if desired:
        options = PlanOptions(gc=draw(_GC))
    else:
        gc = draw(st.one_of(st.just(DOWN.gc), _GC))
        options = PlanOptions(scope=NODE_SCOPE, allow_deletions=True, gc=gc)
    ids = draw(st.lists(st.uuids(), min_size=len(model.containers), unique=True))
    model.reid({cid: new.hex for cid, new in zip(sorted(model.containers), ids, strict=False)})
    return pod, model, now, options, desired


@settings(max_examples=150, deadline=None)
@given(histories())
def test_no_plan_removes_a_container_before_one_that_joins_it(history) -> None:
    """Whatever the pod went through and whatever the plan's settings: no ``Remove``
    of a container comes before the ``Remove`` of a container that joins it, and none
    comes while one that joins it stays - ``EngineModel`` knows what each container
    joins (what it was created with) and refuses such a removal, as podman does. With
    ``down``'s settings, one plan takes every container of the pod."""
    pod, model, now, options, desired = history
    made = plan(
        [pod] if desired else [], model.observed, images=model.images, now=now, options=options
    )

    model.apply(made, now)

    if not desired and options.gc == DOWN.gc:
        assert [] == model.observed
