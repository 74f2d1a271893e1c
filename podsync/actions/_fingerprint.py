"""The plan fingerprint: a digest of the part of an observed state a plan acts on.

A saved plan is applied only to an engine whose fingerprint is still the plan's
(``Plan.fingerprint``): Terraform's "saved plan is stale". ``plan`` computes it from the
owned containers it already indexed (``scoped_fingerprint``); the command line recomputes
it from a fresh observation (``plan_fingerprint``).

Contract: pure; equal inputs give an equal digest.

May import: the model, the vocabulary (``_actions``), ownership (``_ownership``),
``_images``, ``hashlib``. Never the planner, a runtime, or anything that does I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping, Sequence

from podsync.actions._actions import Create, Plan, Pull, RemoveImage, WriteVolume
from podsync.model._pod import ObservedContainer, ObservedImage
from podsync.model._volume import WrittenVolume
from podsync.spec._images import normalize_image
from podsync.spec._ownership import Identity, Instance, identify

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["plan_fingerprint"]


def _state_digest(
    observed: Iterable[ObservedContainer],
    images: Iterable[ObservedImage],
    pod_dirs: Iterable[str],
    volume_files: Iterable[WrittenVolume] = (),
) -> str:
    lines = sorted(
        f"c\0{oc.id}\0{oc.name}\0{oc.running:d}\0{oc.finished_at}\0{oc.stopped_by_podsync}"
        for oc in observed
    )
    lines += sorted(f"i\0{image.id}\0{','.join(sorted(image.tags))}" for image in images)
    lines += sorted(f"d\0{uid}" for uid in pod_dirs)
    # Only when there are any: the digest of a state without them is what it was.
    lines += sorted(f"v\0{v.pod_uid}\0{v.name}\0{v.digest}" for v in volume_files)
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


def plan_fingerprint(
    plan: Plan,
    observed: Sequence[ObservedContainer],
    images: Sequence[ObservedImage] = (),
    pod_dirs: Collection[str] = (),
    volume_files: Sequence[WrittenVolume] = (),
) -> str:
    """A digest of the part of an observed state that ``plan`` acts on.

    Covers the containers and pod directories of the pods in the plan, the images it
    pulls, creates from or removes, and the records of the volumes it writes
    (``volume_files``: those of the plan's ``WriteVolume`` s count, the others are
    ignored). ``plan()`` stores it as ``Plan.fingerprint``; before applying a saved
    plan, compute it again from a fresh observation: a different value means the state
    the plan was made for has changed (Terraform's "saved plan is stale"). A plan made
    against an empty engine is covered too: once its pods have containers, the digest
    differs.

    Scoped on purpose: applying the plan touches nothing else, and on an engine that runs
    other workloads containers come and go all the time, so a digest of everything would
    make every saved plan stale within seconds. It covers the containers that name one
    of the plan's pods - by podsync's labels, or by a 2014 kubelet's exact name whether
    or not the plan took them over - so it needs no planning option.
    """
    by_identity: dict[Identity, list[Instance]] = {}
    for oc in observed:
        instance = identify(oc)
        if instance is not None:
            by_identity.setdefault((instance.pod_uid, instance.full_name), []).append(instance)
    return scoped_fingerprint(plan, by_identity, images, pod_dirs, volume_files)


def scoped_fingerprint(
    plan: Plan,
    by_identity: Mapping[Identity, list[Instance]],
    images: Sequence[ObservedImage],
    pod_dirs: Collection[str],
    volume_files: Sequence[WrittenVolume] = (),
) -> str:
    uids = {p.uid for p in plan.pods if p.uid}
    references: set[str] = set()
    writes: set[tuple[str, str, str]] = set()
    for action in plan.actions:
        if isinstance(action, WriteVolume):
            # A host directory's record or an engine volume's, as the write's target.
            writes.add((action.pod_uid, action.volume, action.engine_volume))
        elif isinstance(action, Pull):
            references.add(normalize_image(action.image))
        elif isinstance(action, Create):
            references.add(normalize_image(action.spec.image))
        elif isinstance(action, RemoveImage):
            references.add(action.image_id)
    containers = [
        instance.observed
        for (uid, _), instances in by_identity.items()
        if uid in uids
        for instance in instances
    ]
    relevant = [
        image
        for image in images
        if image.id in references
        or references.intersection(normalize_image(t) for t in image.tags)
        or references.intersection(image.digests)
    ]
    written = [v for v in volume_files if (v.pod_uid, v.name, v.volume) in writes]
    return _state_digest(containers, relevant, [d for d in pod_dirs if d in uids], written)
