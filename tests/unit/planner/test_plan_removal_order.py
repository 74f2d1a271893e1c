"""A container that others join is removed after them, case by case, in the manner of
the kubelet's ``TestComputePodActions`` (issue 31, ``podsync.planner._joins``).

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
removal podman refuses.
"""

from __future__ import annotations

from typing import TypeVar

import attrs
import pytest

from podsync.actions._actions import Kill, Plan, Remove
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.model._pod import Pod
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_ATTEMPT, LABEL_CONTAINER, LABEL_SCOPE
from tests.support.engine_model import EngineModel
from tests.unit.planner.test_compute_pod_actions import (
    JOB,
    NOW,
    PAIR,
    STARTED,
    instances,
    pod_file,
    ran,
)

_T = TypeVar("_T")

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
    since; the plan's ``desired`` pods (the pod, or none) and options; its actions."""

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
    return pod, engine_ids(model)


def engine_ids(model: EngineModel) -> EngineModel:
    """``model`` with its containers' ids as an engine gives them: random, so that the
    containers one apply created (one creation time, one attempt) come in any order
    of ids. Here each network container's id sorts after the others' - the order in
    which a plan once removed a network container before the container that joins it
    (the newest first, by id among equals)."""
    new = {
        cid: ("f" if o.labels.get(LABEL_CONTAINER) == "net" else "0") + cid
        for cid, o in model.containers.items()
    }

    def rekey(values: dict[str, _T]) -> dict[str, _T]:
        return {new.get(cid, cid): value for cid, value in values.items()}

    model.containers = rekey(
        {cid: attrs.evolve(o, id=new[cid]) for cid, o in model.containers.items()}
    )
    model.published, model.mounted = rekey(model.published), rekey(model.mounted)
    model.shareable = {new.get(cid, cid) for cid in model.shareable}
    model.joins = rekey({cid: {new.get(j, j) for j in js} for cid, js in model.joins.items()})
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
    ),
    Case(
        # One to remove: net#0 is the oldest, but work#0 joins it; work#0 goes.
        "global-cap-takes-the-joiner-not-the-network-container",
        2,
        (("Remove", "work#0", "gc-global-cap"),),
        cap(3),
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
