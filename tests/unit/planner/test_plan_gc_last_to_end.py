"""Garbage collection keeps the instance the restart policy is judged on, case by case,
in the manner of the kubelet's ``TestComputePodActions``.

The restart policy reads a container's newest stopped instance - the one that ended
last (``last_to_end``) - and losing it re-runs a ``Never`` container
(kubelet-modern.md §1.1 row 2: ``ShouldContainerBeRestarted`` starts a container with
no status, even under ``Never``). So garbage collection - per pod container and the
global cap - keeps that instance: the one that ended last, or that this very plan stops
(it ends now), even when another instance was created after it. Keeping the newest
*created* instead (the seed's purgeOldest, the kubelet's ``byCreated``) lost a
``Never`` pod's failure when an older instance outlived a newer one: a 2014 kubelet's
container that still ran beside one podsync had stopped, killed when its network
container was gone - the next sync judged the other instance, which was no run, and
ran the container again (the fault-convergence property found it).

Each row starts from an engine on which podsync ran the one-container job (its
``work`` runs: the *first* instance), adds a *second* instance of ``work`` created after
it, sets what both show, and lists the plan's actions - (kind, instance or container,
reason) - and those of the next plan, once the engine did the first.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from podsync.actions._actions import Kill, Plan, Remove
from podsync.actions._options import GCPolicy, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_ATTEMPT, LABEL_RESTART_COUNT
from tests.support.engine_model import EngineModel
from tests.unit.planner.test_compute_pod_actions import (
    JOB,
    NOW,
    STARTED,
    instances,
    pod_file,
    ran,
)

#: Per pod container, keep one exited instance: the one the policy is judged on.
KEEP_ONE = PlanOptions(gc=GCPolicy(max_per_container=1, min_age=0))
#: No count per container, a global cap of none: only the protected instance stays.
CAP_NONE = PlanOptions(gc=GCPolicy(max_per_container=None, min_age=0, max_total=0))


@attrs.frozen
class Shows:
    """What an instance of ``work`` shows at ``NOW``: created at ``created``; running, or
    exited with ``code`` ``ago`` seconds ago (``started=False``: created, never started)
    with podsync's stop ``record``; its restart count label (a first restart is at
    once, a later one after the back-off)."""

    created: float
    running: bool = False
    code: int = 0
    ago: float = 50.0
    started: bool = True
    record: str = ""
    restarts: int = 0

    def fields(self) -> dict[str, Any]:
        ended = None if self.running or not self.started else NOW - self.ago
        return {
            "created": self.created,
            "running": self.running,
            "exit_code": self.code,
            "finished_at": ended,
            "stopped_by_podsync": self.record,
        }


@attrs.frozen
class Case:
    """One row: the pod's restart ``policy``, what the ``first`` and ``second`` instances
    of ``work`` show, whether the network container is gone, the GC options, and the
    actions of the plan and of the ``then`` plan (``first``/``second`` name an
    instance)."""

    id: str
    policy: str
    first: Shows
    second: Shows
    expected: tuple[tuple[str, str, str], ...]
    then: tuple[tuple[str, str, str], ...]
    net_gone: bool = False
    options: PlanOptions = KEEP_ONE


FIRST = STARTED + 1  # when ``ran`` created the first instance
SECOND = STARTED + 100  # after it


def world(case: Case) -> EngineModel:
    """The engine of the row: ``ran``'s, its ``work`` instance renamed ``first``, a
    ``second`` of the next attempt beside it, without the network container when it is
    gone."""
    model = ran(pod_file(JOB, case.policy))
    (ran_work,) = instances(model, "work")
    net = instances(model, "net") if case.net_gone else []
    for o in (ran_work, *net):
        del model.containers[o.id]
    second_name = ran_work.name[:-1] + "1"
    for cid, name, attempt, shows in (
        ("first", ran_work.name, "0", case.first),
        ("second", second_name, "1", case.second),
    ):
        labels = {
            **ran_work.labels,
            LABEL_ATTEMPT: attempt,
            LABEL_RESTART_COUNT: str(shows.restarts),
        }
        model.add(attrs.evolve(ran_work, id=cid, name=name, labels=labels, **shows.fields()))
    return model


def actions(p: Plan) -> list[tuple[str, str, str]]:
    """The pod's actions (pulls left out) as (kind, target, reason): the target is the
    instance (``first``, ``second``) a kill or removal names, else the container."""
    return [
        (
            type(a).__name__,
            a.id if isinstance(a, Kill | Remove) and a.id in ("first", "second") else a.container,
            a.reason.value,
        )
        for pod in p.pods
        for a in pod.actions
    ]


CASES = [
    Case(
        "never-network-lost-kill-is-kept-over-a-newer-stopped-instance",
        "Never",
        Shows(FIRST, running=True),
        Shows(SECOND, code=137, ago=200, record="duplicate"),
        (("Kill", "first", "network-lost"), ("Remove", "second", "gc-exited")),
        (),
        net_gone=True,
    ),
    Case(
        "never-network-lost-kill-is-kept-under-the-global-cap",
        "Never",
        Shows(FIRST, running=True),
        Shows(SECOND, code=137, ago=200, record="duplicate"),
        (("Kill", "first", "network-lost"), ("Remove", "second", "gc-global-cap")),
        (),
        net_gone=True,
        options=CAP_NONE,
    ),
    Case(
        "never-failed-run-is-kept-over-a-newer-never-started-instance",
        "Never",
        Shows(FIRST, code=1, ago=50),
        Shows(SECOND, started=False),
        (("Kill", "net", "pod-completed"), ("Remove", "second", "gc-exited")),
        (),
    ),
    Case(
        "never-failed-run-is-kept-under-the-global-cap",
        "Never",
        Shows(FIRST, code=1, ago=50),
        Shows(SECOND, started=False),
        (("Kill", "net", "pod-completed"), ("Remove", "second", "gc-global-cap")),
        (),
        options=CAP_NONE,
    ),
    Case(
        "on-failure-failed-run-is-kept-over-a-newer-success",
        "OnFailure",
        Shows(FIRST, code=1, ago=2, restarts=3),
        Shows(SECOND, code=0, ago=200),
        (("Wait", "work", "back-off"), ("Remove", "second", "gc-exited")),
        (("Wait", "work", "back-off"),),
    ),
    # The usual order, where the last to end is the newest created: the older one goes.
    Case(
        "always-newest-created-ended-last-and-is-kept",
        "Always",
        Shows(FIRST, code=1, ago=400),
        Shows(SECOND, code=1, ago=2, restarts=3),
        (("Wait", "work", "back-off"), ("Remove", "first", "gc-exited")),
        (("Wait", "work", "back-off"),),
    ),
    Case(
        "never-newest-created-ended-last-and-is-kept-under-the-global-cap",
        "Never",
        Shows(FIRST, code=0, ago=400, record="spec-changed"),
        Shows(SECOND, code=0, ago=2),
        (("Kill", "net", "pod-completed"), ("Remove", "first", "gc-global-cap")),
        (),
        options=CAP_NONE,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gc_keeps_the_instance_the_policy_is_judged_on(case: Case) -> None:
    """The plan collects every exited instance but the one that ended last, and the next
    plan - on the engine that did the first - decides as the first did."""
    model = world(case)

    first = plan(
        [pod_file(JOB, case.policy)],
        model.observed,
        images=model.images,
        now=NOW,
        options=case.options,
    )
    model.apply(first, NOW)
    then = plan(
        [pod_file(JOB, case.policy)],
        model.observed,
        images=model.images,
        now=NOW + 1,
        options=case.options,
    )

    assert (list(case.expected), list(case.then)) == (actions(first), actions(then))


@pytest.mark.parametrize(
    ("cap", "removed"),
    [(3, []), (2, []), (1, ["first"]), (0, ["first"])],
    ids=["under", "at", "one-over", "none-allowed"],
)
def test_the_global_cap_removes_only_what_is_beyond_it(cap: int, removed: list[str]) -> None:
    """Two exited instances (the newer protected): the cap removes the older only once
    there are more exited instances than it allows, and each removal names its pod and
    the cap."""
    case = Case(
        "x",
        "Always",
        Shows(FIRST, code=1, ago=400),
        Shows(SECOND, code=1, ago=2, restarts=3),
        (),
        (),
        options=PlanOptions(gc=GCPolicy(max_per_container=None, min_age=0, max_total=cap)),
    )
    pod = pod_file(JOB, case.policy)
    model = world(case)
    names = {o.id: o.name for o in model.observed}

    p = plan([pod], model.observed, images=model.images, now=NOW, options=case.options)

    assert [
        (
            "default/job",
            pod.uid,
            i,
            f"remove default/job/work ({names[i]}): exited, beyond the global cap of {cap}",
        )
        for i in removed
    ] == [(a.pod, a.pod_uid, a.id, a.message) for a in p.actions if isinstance(a, Remove)]
