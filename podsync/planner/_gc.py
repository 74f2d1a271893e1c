"""Garbage collection and pods no longer desired, as plan actions.

Which exited containers go (``gc_candidates``: beyond those kept per pod container and
older than the minimum age, the seed's purgeOldest done per pod container), the global
cap across pods (``apply_global_cap``), and what happens to a pod that is no longer
desired (``plan_orphan``: stop what runs, preStop first, remove what exited). The preStop
handler and grace period of a container whose spec is gone are read from its labels.

Containers that others join are removed after them (``joined_last``), on every engine.
A pod's network container holds the network and IPC namespaces its other containers
join (``CreateSpec.join``, ``join_ipc``). podman refuses to remove a container that
another container joins, running or exited ("container <id> has dependent containers
which must be removed before it", HTTP 500 through its Docker-compatible API: libpod's
``removeContainer``, runtime_ctr.go); Docker allows it. So a plan removes the containers
that join a network container before that network container, and removes a network
container only with every container that may join it: one that stays (an exited
instance garbage collection keeps, one younger than ``GCPolicy.min_age``, one that
runs) keeps its network container until it goes. That is the kubelet's own order
(``kuberuntime_gc.go``): ``containerGC.evictContainers`` removes containers first, and
``evictSandboxes`` removes a sandbox only when it is not ready and no container of it
is left - a dead sandbox stays while an exited container of it is kept.

Which network container a container joins is read from what every engine lists: its
pod (ownership labels) and times. podman's compatible list reports no network mode (its
``HostConfig.NetworkMode`` is a constant there), so the ``container:<id>`` Docker lists
is not used. podsync creates a container joined to its pod's network container that
runs, so a container may join each network container of its identity that could have
been running when it was created: created no later than it, and not ended before it
(``may_join``). Docker lists creation times in whole seconds, which only makes the set
larger: the rule over-approximates, and an over-approximation only delays a removal,
never plans one an engine refuses.

Contract: pure; builds ``Kill``/``Remove`` actions and changes nothing else (the global
cap appends to the per-pod action lists it is given; ``joined_last`` reorders and drops
the removals of one pod's plan).

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


def may_join(instances: Sequence[Instance]) -> dict[str, set[str]]:
    """The containers that may join each network container of one pod identity, by id:
    for each network container, the ids of the pod's other containers created no
    earlier than it while it may have been running (it had not ended before they were
    created). Network containers nothing may join map to an empty set."""
    nets = [i for i in instances if i.container == NETWORK_CONTAINER]
    joiners: dict[str, set[str]] = {n.observed.id: set() for n in nets}
    if not nets:
        return joiners
    for instance in instances:
        if instance.container == NETWORK_CONTAINER:
            continue
        created = instance.observed.created
        for net in nets:
            ended = net.observed.finished_at
            if net.observed.created <= created and (ended is None or ended >= created):
                joiners[net.observed.id].add(instance.observed.id)
    return joiners


def joined_last(actions: list[PodAction], instances: Sequence[Instance]) -> list[PodAction]:
    """``actions`` (one pod identity's plan; ``instances``: its observed containers) with
    each ``Remove`` of a network container moved after the removals of the containers
    that may join it (``may_join``), or left out when one of those is not removed by
    this plan: it is removed by a later plan, once they are gone (the kubelet's
    ``evictSandboxes``: a sandbox with a container left is not evictable).

    Everything else keeps its place; a plan without such a removal is returned as it
    is (the steady state costs one pass over the actions)."""
    if not any(isinstance(a, Remove) and a.container == NETWORK_CONTAINER for a in actions):
        return actions
    joiners = may_join(instances)
    where = {a.id: n for n, a in enumerate(actions) if isinstance(a, Remove)}
    # Each kept network removal, by the position of the last removal it must follow.
    after: dict[int, list[PodAction]] = {}
    out: list[PodAction] = []
    for n, action in enumerate(actions):
        if isinstance(action, Remove) and action.container == NETWORK_CONTAINER:
            joined = joiners.get(action.id, set())
            if any(j not in where for j in joined):
                continue  # a container that joins it stays: not before it goes
            last = max((where[j] for j in joined), default=-1)
            if last > n:
                after.setdefault(last, []).append(action)
                continue
        out.append(action)
        out.extend(after.pop(n, ()))
    return out


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
    protected: the restart policy is judged on it. A network container goes only once
    the containers that may join it are gone (``_in_eviction_order``).
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
    candidates = sorted(
        (item for item in remaining if item[1].observed.id not in protected),
        key=lambda item: (item[1].observed.created, item[1].observed.id),
    )
    joiners: dict[str, set[str]] = {}
    for identity in {identity for identity, _ in candidates}:
        joiners.update(may_join(by_identity[identity]))
    for identity, instance in _in_eviction_order(candidates, joiners, removed, excess):
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


def _in_eviction_order(
    candidates: Sequence[tuple[Identity, Instance]],
    joiners: Mapping[str, set[str]],
    removed: Collection[str],
    count: int,
) -> list[tuple[Identity, Instance]]:
    """Up to ``count`` of ``candidates`` (oldest first), each time the oldest that may go:
    a network container only once every container that may join it (``joiners``, by
    network container id: ``may_join``) is removed - by this plan already (``removed``),
    or chosen here before it. The kubelet's cap evicts containers (``evictContainers``,
    kuberuntime_gc.go) and a sandbox only once no container of it is left
    (``evictSandboxes``); a network container whose joiner stays (protected, running)
    is not chosen, so the cap takes the next candidate instead of a removal that
    ``joined_last`` would leave out (and podman would refuse)."""
    waiting: dict[int, int] = {}  # candidate index -> joiners not gone yet
    blocks: dict[str, list[int]] = {}  # joiner id -> the candidates waiting for it
    for n, (_, instance) in enumerate(candidates):
        missing = joiners.get(instance.observed.id, set()).difference(removed)
        if missing:
            waiting[n] = len(missing)
            for joiner in missing:
                blocks.setdefault(joiner, []).append(n)

    def ready_from(n: int) -> int:
        while n < len(candidates) and waiting.get(n, 0):
            n += 1
        return n

    # In age order: the next candidate not waiting (``at``), unless one that waited,
    # and was passed over, is older (``freed``: it may go since its last joiner went).
    chosen: list[tuple[Identity, Instance]] = []
    freed: list[int] = []
    at = ready_from(0)
    while len(chosen) < count:
        n = min(freed, default=len(candidates))
        if at < n:
            n, at = at, ready_from(at + 1)
        elif freed:
            freed.remove(n)
        if n >= len(candidates):
            break
        chosen.append(candidates[n])
        for later in blocks.pop(candidates[n][1].observed.id, ()):
            waiting[later] -= 1
            if not waiting[later] and later < at:
                freed.append(later)  # else ``at`` reaches it
    return chosen
