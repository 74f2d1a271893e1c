"""Garbage collection and pods no longer desired, as plan actions.

Which exited containers go (``gc_candidates``: beyond those kept per pod container and
older than the minimum age, the seed's purgeOldest done per pod container), the global
cap across pods (``apply_global_cap``), and what happens to a pod that is no longer
desired (``plan_orphan``: stop what runs, preStop first, remove what exited). The preStop
handler and grace period of a container whose spec is gone are read from its labels.

Contract: pure; builds ``Kill``/``Remove`` actions and changes nothing else (the global
cap appends to the per-pod action lists it is given).

May import: the model and helpers, the vocabulary, options, ownership. Never the
per-pod planner or ``_plan`` (they import this), a runtime, or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from podsync.actions._actions import (
    Kill,
    PodAction,
    Reason,
    Remove,
)
from podsync.actions._options import PlanOptions
from podsync.model._pod import (
    Handler,
)
from podsync.planner._termination import pod_stop
from podsync.spec._labels import (
    LABEL_GRACE_PERIOD,
    LABEL_INIT_INDEX,
    LABEL_INIT_RESTART_POLICY,
    LABEL_PRE_STOP,
    decode_grace_period,
    decode_handler,
)
from podsync.spec._naming import (
    NETWORK_CONTAINER,
)
from podsync.spec._ownership import Identity, Instance, end_order, newest_first

__all__: list[str] = []  # the planner's own


def gc_candidates(
    instances: Sequence[Instance], killed: Collection[str], keep: int, now: float, min_age: float
) -> list[Instance]:
    """The exited instances to remove, seed purgeOldest-style: the exited ones (and the
    ones this plan stops, which exit now) that are older than ``min_age`` are candidates;
    the ``keep`` that ended last stay (``end_order``: the first of them is the instance
    the restart policy is judged on - kubelet-modern.md §1.1 row 2, losing it re-runs a
    ``Never`` container - also when this plan stops it). The rest are returned in the
    order given."""
    candidates: dict[str, tuple[float, float, int, str]] = {}
    for instance in instances:
        stopping = instance.observed.id in killed
        if instance.running and not stopping:
            continue
        exited_at = now if stopping else instance.ended
        if min_age == 0 or now - exited_at > min_age:
            candidates[instance.observed.id] = end_order(instance, exited_at)
    kept = set(sorted(candidates, key=candidates.__getitem__, reverse=True)[:keep])
    return [i for i in instances if i.observed.id in candidates and i.observed.id not in kept]


def remove_action(
    pod_key: str, pod_uid: str, instance: Instance, reason: Reason, why: str
) -> Remove:
    return Remove(
        pod=pod_key,
        pod_uid=pod_uid,
        container=instance.container,
        id=instance.observed.id,
        name=instance.observed.name,
        reason=reason,
        message=f"remove {pod_key}/{instance.container} ({instance.observed.name}): {why}",
    )


def label_pre_stop(instance: Instance) -> Handler | None:
    """The preStop handler remembered in a container's label: what stops a container
    gracefully once its spec is gone (its pod left the desired state, or its name left
    the pod spec); ``None`` when there is none or the label is not podsync's."""
    text = instance.observed.labels.get(LABEL_PRE_STOP)
    return decode_handler(text) if text else None


def _label_grace(instance: Instance, default: int) -> int:
    """The grace period remembered in a container's label (its pod's
    terminationGracePeriodSeconds when it was created; the kubelet reads the same from
    its ``io.kubernetes.pod.terminationGracePeriod`` label when the pod is gone), else
    ``default``."""
    text = instance.observed.labels.get(LABEL_GRACE_PERIOD)
    grace = decode_grace_period(text) if text is not None else None
    return default if grace is None else grace


def _init_index(instance: Instance) -> int | None:
    """The index in ``initContainers`` that an init container's label records; ``None``
    for any other container (or a label that is not podsync's)."""
    index = instance.observed.labels.get(LABEL_INIT_INDEX, "")
    init = index.isascii() and index.isdigit() and len(index) < 6
    return int(index) if init else None


def _stop_order(instance: Instance) -> tuple[bool, bool, int]:
    """App containers first, then init containers by descending index, the network
    container last."""
    index = _init_index(instance)
    return instance.container == NETWORK_CONTAINER, index is not None, -(index or 0)


def _label_roles(instances: Sequence[Instance]) -> tuple[set[str], list[str]]:
    """The pod's app containers and its sidecars in spec order, as their labels say
    (the pod file may be gone): what ``pod_stop`` orders a pod-wide stop by."""
    apps: set[str] = set()
    sidecars: dict[str, int] = {}
    for instance in instances:
        index = _init_index(instance)
        if index is None:
            if instance.container != NETWORK_CONTAINER:
                apps.add(instance.container)
        elif instance.observed.labels.get(LABEL_INIT_RESTART_POLICY) == "Always":
            sidecars[instance.container] = index
    return apps, sorted(sidecars, key=lambda name: (sidecars[name], name))


def plan_orphan(
    key: str, uid: str, instances: list[Instance], options: PlanOptions, now: float
) -> list[PodAction]:
    """A pod that is no longer desired: stop what runs - at once, within its grace
    period, sidecars after the app containers and the network container last
    (``pod_stop``) - and remove what exited."""
    stops: list[PodAction] = []
    net_stops: list[PodAction] = []
    killed: set[str] = set()
    ordered = newest_first(instances)
    # Stop app containers before the network container they live in, and sidecars
    # after the app containers, in reverse order (the kubelet's termination ordering,
    # kubelet-modern.md §3 rule 8; their labels say which and in what order).
    for instance in sorted(ordered, key=_stop_order):
        if not instance.running:
            continue
        killed.add(instance.observed.id)
        (net_stops if instance.container == NETWORK_CONTAINER else stops).append(
            Kill(
                pod=key,
                pod_uid=uid,
                container=instance.container,
                id=instance.observed.id,
                name=instance.observed.name,
                timeout=_label_grace(instance, options.stop_timeout),
                reason=Reason.POD_NOT_DESIRED,
                message=(
                    f"stop {key}/{instance.container} ({instance.observed.name}): "
                    "pod is no longer desired"
                ),
                pre_stop=label_pre_stop(instance),
            )
        )
    apps, sidecars = _label_roles(ordered)
    actions = [*pod_stop(stops, apps, sidecars), *net_stops]
    for instance in gc_candidates(ordered, killed, 0, now, options.gc.min_age):
        actions.append(
            remove_action(
                key, uid, instance, Reason.GC_NOT_DESIRED, "exited, pod is no longer desired"
            )
        )
    return actions


def apply_global_cap(
    groups: dict[Identity, tuple[str, list[PodAction]]],
    owner: Mapping[Identity, Identity],
    by_identity: Mapping[Identity, list[Instance]],
    cap: int | None,
    now: float,
) -> None:
    """Remove the oldest exited containers beyond ``cap`` (``GCPolicy.max_total``) across all pods.

    Counted after this plan's own stops and removals. The exited instance of each pod
    container that ended last (``end_order``; one this plan stops ends at ``now``) is
    protected: the restart policy is judged on it.
    """
    if cap is None:
        return
    planned = [a for _, actions in groups.values() for a in actions]
    removed = {a.id for a in planned if isinstance(a, Remove)}
    killed = {a.id for a in planned if isinstance(a, Kill)}
    remaining: list[tuple[Identity, Instance]] = []
    protected: set[str] = set()
    for identity, instances in by_identity.items():
        last: dict[str, tuple[tuple[float, float, int, str], str]] = {}
        for instance in instances:
            oid = instance.observed.id
            if (instance.running and oid not in killed) or oid in removed:
                continue
            remaining.append((identity, instance))
            # The one the restart policy is judged on: the last to end (a container this
            # plan stops ends now), as gc_candidates keeps.
            order = end_order(instance, now if oid in killed else None)
            if instance.container not in last or order > last[instance.container][0]:
                last[instance.container] = (order, oid)
        protected.update(oid for _, oid in last.values())
    excess = len(remaining) - cap
    if excess <= 0:
        return
    victims = sorted(
        (item for item in remaining if item[1].observed.id not in protected),
        key=lambda item: (item[1].observed.created, item[1].observed.id),
    )[:excess]
    for identity, instance in victims:
        if identity not in owner:
            # Not desired and deletions are off: not ours to remove now.
            continue
        group = owner[identity]
        # A pod with no other action has no group yet.
        key, actions = groups.setdefault(group, (instance.pod_key, []))
        actions.append(
            remove_action(
                key,
                group[0],
                instance,
                Reason.GC_GLOBAL_CAP,
                f"exited, beyond the global cap of {cap}",
            )
        )
