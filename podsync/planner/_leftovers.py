"""What is left of pods that are gone: the volumes podsync made for a pod that is no
longer desired (``remove_pod_volumes``), and the records of containers removed by hand
(``remove_gone_records``), as ``RemoveVolume`` actions in their pods' plans - the volume
half of theory step 4 (``podsync.planner._plan``), within the plan's scope
(``podsync.planner._scope``).

Contract: pure; adds actions to the plan's groups, reads nothing else.

May import: the vocabulary, options, ownership, the label and record helpers, the
scope rule. Never a runtime or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from podsync.actions._actions import PodAction, Reason, Remove, RemovePodDir, RemoveVolume
from podsync.actions._options import PlanOptions
from podsync.model._pod import ObservedContainer, ObservedVolume, Pod
from podsync.planner._scope import ScopeRule
from podsync.spec._labels import (
    VOLUME_KIND_CONTENT,
    VOLUME_KIND_CONTENT_RECORD,
    VOLUME_KIND_EMPTY_DIR,
    VOLUME_KIND_POD_STATE,
    VOLUME_KIND_STOP_RECORD,
)
from podsync.spec._ownership import Identity, Instance, volume_ownership
from podsync.spec._records import RECORD_KINDS, named_as_made, records_of

__all__: list[str] = []  # the planner's own


#: The kinds of volume podsync makes for one pod (``LABEL_POD_UID``), which go with it:
#: its state volume, its emptyDir volumes, the files of its configMap, secret and
#: downwardAPI volumes, their records and the records of its containers.
_POD_VOLUME_KINDS = frozenset(
    {
        VOLUME_KIND_POD_STATE,
        VOLUME_KIND_EMPTY_DIR,
        VOLUME_KIND_CONTENT,
        *RECORD_KINDS,
        VOLUME_KIND_CONTENT_RECORD,
    }
)


def remove_pod_volumes(
    groups: dict[Identity, tuple[str, list[PodAction]]],
    volumes: Sequence[ObservedVolume],
    by_identity: Mapping[Identity, list[Instance]],
    keep: Collection[str],
    options: PlanOptions,
    scope: ScopeRule,
) -> None:
    """A ``RemoveVolume`` for each volume podsync made for a pod (``_POD_VOLUME_KINDS``)
    whose pod is not desired (nor rejected: a rejected pod is not asked to go away),
    once none of its containers is left: a pod whose containers are removed in this plan
    has its volumes removed after them; one some of whose containers are kept (younger
    than ``GCPolicy.min_age``, or still stopping) keeps them until they are gone - the
    termination messages of its exited containers are in its state volume, and Docker
    would remove a volume whose file a container binds. Claims' volumes and volumes
    podsync does not own are never removed."""
    removed: set[str] = set()
    for _, actions in groups.values():
        removed.update(a.id for a in actions if isinstance(a, Remove))
    left: set[str] = set()
    known: dict[str, Identity] = {}
    for identity, instances in by_identity.items():
        known.setdefault(identity[0], identity)
        if any(i.observed.id not in removed for i in instances):
            left.add(identity[0])
    for volume in sorted(volumes, key=lambda v: v.name):
        owned = volume_ownership(volume)
        if owned is None or owned.kind not in _POD_VOLUME_KINDS or not owned.pod_uid:
            continue
        uid = owned.pod_uid
        if uid in keep or uid in left or not scope.owns_uid(uid):
            continue
        found = known.get(uid)
        if found is None and options.ready_sources is not None:
            # Without containers the pod's source is unknown: kept until every source
            # is ready (as a pod directory).
            continue
        # The pod's own plan, named by its containers' pod; without containers the one
        # its pod directory's teardown has (``(uid, "")``), named by nothing.
        group = found if found is not None else (uid, "")
        key = by_identity[found][0].pod_key if found is not None else ""
        actions = groups.setdefault(group, (key, []))[1]
        what = {
            VOLUME_KIND_POD_STATE: "state",
            VOLUME_KIND_EMPTY_DIR: f"emptyDir {owned.volume or '?'}",
            VOLUME_KIND_CONTENT: f"files of volume {owned.volume or '?'}",
            VOLUME_KIND_CONTENT_RECORD: f"record of the files of volume {owned.volume or '?'}",
        }.get(owned.kind, owned.kind)
        record = owned.kind in RECORD_KINDS or owned.kind == VOLUME_KIND_CONTENT_RECORD
        reason = Reason.ORPHANED_RECORD if record else Reason.ORPHANED_POD_VOLUME
        _before_teardown(
            actions,
            RemoveVolume(
                pod=key,
                pod_uid=uid,
                volume=volume.name,
                reason=reason,
                message=(
                    f"remove volume {volume.name}: the {what} of a pod that is no longer desired"
                ),
            ),
        )


def _before_teardown(actions: list[PodAction], action: RemoveVolume) -> None:
    """``action`` added to a pod's ``actions``, after its other work and before its pod
    directory's teardown: a removal that fails skips the rest of the pod, and the next
    sync tries again."""
    at = next((n for n, a in enumerate(actions) if isinstance(a, RemovePodDir)), len(actions))
    actions.insert(at, action)


def remove_gone_records(
    groups: dict[Identity, tuple[str, list[PodAction]]],
    volumes: Sequence[ObservedVolume],
    observed: Sequence[ObservedContainer],
    by_identity: Mapping[Identity, list[Instance]],
    accepted: Sequence[Pod],
    rejected_uids: Collection[str],
    scope: ScopeRule,
) -> None:
    """A ``RemoveVolume`` (``orphaned-record``) for each record (``podsync.spec._records``)
    of a container that is not in ``observed``, in the plan of the record's pod.

    ``observed`` is every container on the engine, so a container that is not in it is
    gone: someone removed it by hand (``docker rm -f``), which leaves its records
    behind - podsync's own removals take a container's stop record with it. The record
    of a container that exists, running or exited, is never removed here (a stopped
    container's record says podsync stopped it). Races: a stop record is written
    before podsync stops a container, which exists then; the volumes are listed after
    the containers, and ``observe`` leaves out the records of containers another
    podsync made in between (``podsync.loop._sync._confirmed``: a second container list); a
    container created by this plan has no record yet; and the loop never applies a
    pod's plan made from an observation its pod's worker changed
    (``Reconciler._dispatch``), which is why the removal goes in the record's pod's
    plan. Only volumes podsync made as records go: its kind label says so, no
    Kubernetes label, and the name podsync gives that record (``named_as_made``). A
    rejected pod is left alone (nothing is done to it); a pod no longer desired gets the
    removal even when deletions are not allowed - a container that is gone is no
    deletion -, when it is in the plan's scope (``ScopeRule.owns_uid``: another scope's
    plans tidy its own). The records ``remove_pod_volumes`` already removes (a gone
    pod's) are not planned twice."""
    existing = {oc.id for oc in observed}
    planned = {
        a.volume for _, actions in groups.values() for a in actions if isinstance(a, RemoveVolume)
    }
    mine = [
        v
        for v in volumes
        if v.name not in planned
        and (owned := volume_ownership(v)) is not None
        and owned.kind in RECORD_KINDS
    ]
    if not mine:
        return
    # The plan of the record's pod: a desired pod's own; else the one named by a
    # container of the pod that is left; else the one of a pod without containers,
    # ``(uid, "")``, named by nothing (as ``remove_pod_volumes`` does).
    plans: dict[str, tuple[Identity, str]] = {}
    for identity, instances in by_identity.items():
        plans.setdefault(identity[0], (identity, instances[0].pod_key))
    plans.update({pod.uid: ((pod.uid, pod.full_name), pod.key) for pod in accepted})
    for record in records_of(mine):
        cid = record.container_id
        if cid in existing or record.pod_uid in rejected_uids or not named_as_made(record):
            continue
        if not scope.owns_uid(record.pod_uid):
            # Another scope's pod (or one no scope can attribute): its own plans tidy it.
            continue
        identity, key = plans.get(record.pod_uid, ((record.pod_uid, ""), ""))
        actions = groups.setdefault(identity, (key, []))[1]
        what = "stop record" if record.kind == VOLUME_KIND_STOP_RECORD else "probe record"
        _before_teardown(
            actions,
            RemoveVolume(
                pod=key,
                pod_uid=record.pod_uid,
                volume=record.volume,
                reason=Reason.ORPHANED_RECORD,
                message=(
                    f"remove volume {record.volume}: the {what} of container {cid[:12]}, "
                    "which no longer exists"
                ),
            ),
        )
