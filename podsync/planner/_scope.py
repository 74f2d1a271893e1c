"""Scopes: what one plan owns, so what it may remove and whose pods it may run.

A scope (``PlanOptions.scope``) is podsync's answer to "which of the podsync pods on
this engine are mine?" - compose's project, Terraform's state, ``podman kube down``'s
file. The kubelet never needed one: its pod sources are the whole node's, so every pod
it does not find in them goes (the seed's ``SyncPods`` killed each container of a pod
it was not given, kubelet-2014.md §2.3; the modern kubelet's ``HandlePodCleanups`` does
the same for every pod the pod manager does not hold, kubelet-modern.md). podsync keeps
that rule for the node scope only:

* ``NODE_SCOPE``: the kubelet's - every podsync pod is the plan's, whatever its scope
  label; each one not desired is removed, with its directory and volumes.
* ``None``: only the pods given. Nothing of a pod that is not desired is removed: its
  containers, volumes and directory stay (``kubectl apply`` without ``--prune``). The
  stale instances of a desired pod (its uid under an older full name) still go, as do
  the records of containers that are gone, when they are a desired pod's.
* a name: the pods whose containers carry ``LABEL_SCOPE=<name>`` are the plan's, and
  each one not desired goes, with its volumes (the ones labelled with the name, and the
  ones podsync made for such a pod) and its directory (attributed through them: a pod
  directory names no scope). Another scope's pods are never touched.

A desired pod some container of which carries another scope's label is another
scope's: ``None`` and a named scope reject it (``scope-conflict``) rather than run it -
one script cannot take over another's pod by naming it. The node scope adopts it.
Containers without the label (an unscoped sync's, ``podsync run``'s, a podsync before
0.2.0's, a 2014 kubelet's) are adopted by whichever scope desires their pod, and
removed only by the node scope: an installation keeps its pods across the upgrade.

What a named scope creates - containers, named volumes, the state volume a network
container's create makes - carries its label (``labelled``); the label is not in any
spec hash, so a container adopted into a scope, or moved out of one, is not replaced.
The records apply writes (stop, probe and content records) carry no label: they go
with their container, whose pod says whose they are.

Contract: pure; reads only its arguments.

May import: the vocabulary, options, ownership, the label keys, ``attrs``. Never a
runtime or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import attrs

from podsync.actions._actions import Create, CreateVolume, PodAction, Reason, Rejection
from podsync.actions._options import NODE_SCOPE
from podsync.model._pod import ObservedVolume, Pod
from podsync.spec._labels import LABEL_SCOPE
from podsync.spec._ownership import Identity, Instance, volume_ownership

__all__: list[str] = []  # the planner's own


class ScopeRule:
    """One plan's scope: which observed pods it owns (``owns_pod``, ``owns_uid``), what
    the global cap counts (``counted``), and the label its creates carry
    (``labelled``). Which desired pods are another scope's is ``scope_conflicts``'s.

    Args:
        scope: ``PlanOptions.scope``.
        by_identity: the owned containers, by pod identity.
        volumes: the named volumes on the engine.
        desired_uids: the uids of the desired pods that were admitted: their stale
            instances are theirs in every scope.
    """

    def __init__(
        self,
        scope: str | None,
        by_identity: Mapping[Identity, Sequence[Instance]],
        volumes: Sequence[ObservedVolume],
        desired_uids: Collection[str] = (),
    ) -> None:
        self.scope = scope
        self.node = scope == NODE_SCOPE
        self._desired = frozenset(desired_uids)
        # The pods whose containers carry the scope's own label, by uid, and the uids of
        # the volumes that do: what a named scope can attribute to itself.
        self._uids: set[str] = set()
        if scope is not None and not self.node:
            for (uid, _), instances in by_identity.items():
                if any(i.scope == scope for i in instances):
                    self._uids.add(uid)
            for volume in volumes:
                owned = volume_ownership(volume)
                if owned is not None and owned.pod_uid and owned.scope == scope:
                    self._uids.add(owned.pod_uid)

    def owns_pod(self, identity: Identity, instances: Sequence[Instance]) -> bool:
        """Whether the observed pod ``identity`` (not desired under that full name) is
        the plan's to remove: every pod for the node scope; a desired uid's stale
        instances for every scope; a pod some container of which carries its label
        for a named scope."""
        if self.node or identity[0] in self._desired:
            return True
        return self.scope is not None and any(i.scope == self.scope for i in instances)

    def owns_uid(self, uid: str) -> bool:
        """Whether what podsync keeps of pod ``uid`` beside its containers (its
        directory, its volumes - labelled or not: one made before the pod was adopted -,
        its containers' records) is the plan's: the node scope's always, a named
        scope's when one of the pod's containers or volumes carries its label, and a
        desired pod's in every scope."""
        return self.node or uid in self._desired or uid in self._uids

    def counted(
        self,
        by_identity: Mapping[Identity, list[Instance]],
        planned: Collection[Identity],
    ) -> Mapping[Identity, list[Instance]]:
        """The observed pods whose exited containers the global cap
        (``GCPolicy.max_total``) counts: the ones the plan has planned for
        (``planned``: desired, or removed) and the ones of its scope (``owns_pod``);
        another scope's are neither counted nor removed."""
        if self.node:
            return by_identity
        return {i: v for i, v in by_identity.items() if i in planned or self.owns_pod(i, v)}

    def labelled(self, actions: list[PodAction]) -> list[PodAction]:
        """``actions`` with the scope's label on what they create: each container, each
        named volume, and the volumes a create makes (the pod's state volume at its
        network container's). A plan without a named scope labels nothing."""
        scope = self.scope
        if scope is None or self.node:
            return actions
        out: list[PodAction] = []
        for action in actions:
            if isinstance(action, Create):
                spec = action.spec
                mounts = tuple(
                    attrs.evolve(
                        m, labels=tuple(sorted({**dict(m.labels), LABEL_SCOPE: scope}.items()))
                    )
                    if m.labels
                    else m
                    for m in spec.volumes
                )
                spec = attrs.evolve(
                    spec, labels={**spec.labels, LABEL_SCOPE: scope}, volumes=mounts
                )
                action = attrs.evolve(action, spec=spec)
            elif isinstance(action, CreateVolume):
                action = attrs.evolve(action, labels={**action.labels, LABEL_SCOPE: scope})
            out.append(action)
        return out


def another_scopes(labels: Mapping[str, str], scope: str | None) -> bool:
    """Whether a container with ``labels`` is a pod of another scope than ``scope``: a
    plan of ``scope`` never touches it (the node scope's touches every podsync pod)."""
    if scope == NODE_SCOPE:
        return False
    label = labels.get(LABEL_SCOPE)
    return label is not None and label != scope


def scope_conflicts(
    scope: str | None,
    desired: Sequence[Pod],
    by_identity: Mapping[Identity, Sequence[Instance]],
) -> tuple[list[Pod], list[Rejection]]:
    """``desired`` without the pods of another scope, and their rejections: a pod
    some container of which (under any full name) carries a scope label other than
    ``scope`` is not run by an unscoped or a named plan (the node scope adopts every
    pod)."""
    if scope == NODE_SCOPE:
        return list(desired), []
    theirs: dict[str, str] = {}
    for (uid, _), instances in by_identity.items():
        for instance in instances:
            label = instance.scope
            if label and label != scope:
                theirs.setdefault(uid, label)
    if not theirs:
        return list(desired), []
    kept: list[Pod] = []
    rejected: list[Rejection] = []
    for pod in desired:
        other = theirs.get(pod.uid)
        if other is None:
            kept.append(pod)
            continue
        mine = "no scope" if scope is None else f"scope {scope!r}"
        rejected.append(
            Rejection(
                pod.key,
                pod.uid,
                Reason.SCOPE_CONFLICT,
                f"its containers belong to scope {other!r}, not {mine}: sync it with "
                f"--scope {other} (scope={other!r}), take it over with --scope "
                f"{NODE_SCOPE}, or remove it there first (podsync down --scope {other})",
            )
        )
    return kept, rejected


def in_input_order(desired: Sequence[Pod], rejected: list[Rejection]) -> list[Rejection]:
    """``rejected`` in the order of the pods of ``desired`` they are about (the order
    ``admit`` reports in), the rejections of one pod in their given order."""
    first: dict[tuple[str, str], int] = {}
    for index, pod in enumerate(desired):
        first.setdefault((pod.uid, pod.key), index)
    return sorted(rejected, key=lambda r: first.get((r.uid, r.pod), len(desired)))
