"""Containers that others join are removed after them: the removal-ordering rule of a
pod's plan (``joined_last``), on every engine.

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

Contract: pure; reorders and drops ``Remove`` actions of one pod's plan, adds nothing.

May import: the vocabulary, naming and ownership. Never a runtime or anything that does
I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from podsync.actions._actions import PodAction, Remove
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import Instance

__all__: list[str] = []  # the planner's own


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
