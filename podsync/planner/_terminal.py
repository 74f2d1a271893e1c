"""Finished pods: which admitted pods have ended - the kubelet's terminal pods,
Succeeded or Failed - so that they hold nothing at admission (``_admission``; the
kubelet's ``filterOutInactivePods``, ``HandlePodAdditions`` in ``pkg/kubelet/kubelet.go``).

Whether a pod will run again is the per-pod planner's restart rules' to say (the kubelet
asks its pod worker the same), so a candidate is planned to find out: a pod whose plan
starts nothing and waits for nothing has finished.

Contract: pure; the plan made is kept for the pod's own planning.

May import: the model, the vocabulary, ownership, the plan's shared state (``_context``)
and the per-pod planner (``_pod``). Never ``_plan`` (which imports it), a runtime, or
anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from podsync.actions._actions import Create, PodAction, Wait
from podsync.model._pod import Pod
from podsync.planner._context import PlanContext
from podsync.planner._pod import PodPlanner
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import Identity, Instance

__all__: list[str] = []  # the planner's own


def finished(
    pod: Pod,
    by_identity: Mapping[Identity, list[Instance]],
    not_adopted: Mapping[Identity, list[Instance]],
    ctx: PlanContext,
    plans: dict[str, list[PodAction]],
) -> bool:
    """Whether ``pod`` has finished - the kubelet's terminal pod, Succeeded or Failed,
    which ``filterOutInactivePods`` leaves out of admission: it ran, no container of it
    runs, and its plan starts nothing and waits for nothing (every container exited and
    none will run again, as the restart rules of ``PodPlanner`` say). Its plan is kept
    in ``plans`` (by uid) for the pod's own planning.

    The plan is made on a copy of ``ctx`` that collects no pulls: a pod that has not
    finished may yet be rejected, and then needs no image; it is planned again, on
    ``ctx``, once admitted (a pod with no container running is rarely planned).
    """
    identity = (pod.uid, pod.full_name)
    instances = by_identity.get(identity)
    if not instances or any(i.running and i.container != NETWORK_CONTAINER for i in instances):
        return False
    scratch = attrs.evolve(ctx, pulls={})
    actions = PodPlanner(pod, list(instances), scratch, not_adopted.get(identity, ())).plan()
    if scratch.pulls or any(isinstance(a, Create | Wait) for a in actions):
        return False
    plans[pod.uid] = actions
    return True
