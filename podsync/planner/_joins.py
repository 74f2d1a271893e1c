"""Network containers go after the containers that join them.

The rule, on every engine: a pod's network container is removed only once no container
that joins it (its network, and its IPC namespace when the pod shares one) is left, or
in the same pod plan right after the last of them. The kubelet's container garbage
collector keeps a sandbox while any container still belongs to it, running or not
(``evictSandboxes``, pkg/kubelet/kuberuntime/kuberuntime_gc.go: "sandboxes that still
have containers" are active). podman refuses the removal outright (HTTP 500, "container
... has dependent containers which must be removed before it"), so a plan that ignored
the rule never converged there: once a pod's network container had died and the pod
was rebuilt, the old one was kept in the old app instances' namespaces. Docker allows
the removal, and the joiners' records then name a container that is gone.

Which network container a container joins:

* podsync records it at create (``LABEL_JOINS``: the network container's name);
* a container without the label - made by an earlier podsync, or a 2014 kubelet's,
  taken over or not - is matched by creation time among the network containers of its
  own pod identity: it may join each one created at or before it that no other was
  created strictly between. Engines list creation times in whole seconds, so a tie is
  never taken to decide: a container made in the same second as a newer network
  container is counted as joining both (a held removal is retried by every later
  plan; a wrong removal is refused by podman and leaves Docker's joiner without its
  namespace).

A removal the rule holds back is left out of the plan, the kubelet's way: the next plan
that finds the joiners gone removes it.

Contract: pure; reorders and drops ``Remove`` actions of network containers in the plan's
per-pod action lists, and changes nothing else.

May import: the vocabulary, ownership, labels and naming. Never the per-pod planner or
``_plan`` (it calls this), a runtime, or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from podsync.actions._actions import PodAction, Remove
from podsync.spec._labels import LABEL_JOINS
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import Identity, Instance

__all__: list[str] = []  # the planner's own


def joiners(instances: Iterable[Instance]) -> dict[str, set[str]]:
    """The ids of the containers that may join each network container, by its id.

    ``instances`` are every identified container the plan observed (taken over or not,
    of every scope): a container that others may join is any network container among
    them; a joiner is any other, by its ``LABEL_JOINS`` label when it has one (the
    network container of that name, of whatever pod), else by creation time within
    its own pod identity (the module docstring's rule). Network containers nobody may
    join are absent.
    """
    nets: dict[Identity, list[Instance]] = {}
    others: list[Instance] = []
    for instance in instances:
        if instance.container == NETWORK_CONTAINER:
            nets.setdefault((instance.pod_uid, instance.full_name), []).append(instance)
        else:
            others.append(instance)
    if not nets:
        return {}
    by_name = {n.observed.name: n.observed.id for group in nets.values() for n in group}
    joined: dict[str, set[str]] = {}
    for other in others:
        named = other.observed.labels.get(LABEL_JOINS)
        if named is not None:
            target = by_name.get(named)
            targets = [] if target is None else [target]
        else:
            targets = _by_creation(nets.get((other.pod_uid, other.full_name), ()), other)
        for target in targets:
            joined.setdefault(target, set()).add(other.observed.id)
    return joined


def _by_creation(nets: Sequence[Instance], joiner: Instance) -> list[str]:
    """The ids of the network containers in ``nets`` that ``joiner`` may join, judged by
    creation times alone: each one created at or before it, unless another one was
    created strictly later than that one and strictly before the joiner (a pod's
    containers join its newest network container; equal times decide nothing)."""
    at = joiner.observed.created
    before = sorted({n.observed.created for n in nets if n.observed.created <= at})
    if not before:
        return []
    # The latest creation time strictly before the joiner's supersedes every earlier
    # one; times equal to the joiner's own are ambiguous and supersede nothing.
    strictly = [t for t in before if t < at]
    floor = strictly[-1] if strictly else before[0]
    return [n.observed.id for n in nets if floor <= n.observed.created <= at]


def order_network_removals(
    groups: Mapping[Identity, tuple[str, list[PodAction]]], instances: Iterable[Instance]
) -> None:
    """Apply the rule to the plan's pod action lists (``groups``, changed in place):
    each ``Remove`` of a network container that a remaining container may join is
    dropped, unless every such container is removed earlier in the same list - then it
    is moved right after the last of those removals if it came before it. A pod plan's
    actions run in order; pod plans run side by side, so a joiner removed by another
    pod plan holds the removal too."""
    if not any(
        isinstance(action, Remove) and action.container == NETWORK_CONTAINER
        for _, actions in groups.values()
        for action in actions
    ):
        return
    joined = joiners(instances)
    for _, actions in groups.values():
        if not any(isinstance(a, Remove) and a.id in joined for a in actions):
            continue
        _order(actions, joined)


def _order(actions: list[PodAction], joined: Mapping[str, set[str]]) -> None:
    """The rule for one pod plan's actions, in place."""
    for action in [a for a in actions if isinstance(a, Remove) and a.id in joined]:
        position = {a.id: i for i, a in enumerate(actions) if isinstance(a, Remove)}
        waiting = joined[action.id] - {action.id}
        if not waiting <= position.keys():
            # A joiner stays (it runs, is kept, is not this plan's, or another pod plan
            # removes it): the network container stays with it.
            actions.remove(action)
            continue
        last = max(position[j] for j in waiting)
        here = position[action.id]
        if here < last:
            actions.insert(last + 1, action)
            del actions[here]
