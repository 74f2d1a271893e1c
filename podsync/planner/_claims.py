"""Planning ``persistentVolumeClaim`` volumes (issue 14), and their fsGroup (issue 27).

A claim's data is one named engine volume per claim and namespace
(``claim_volume_name``), as podman's ``kube play`` maps claims to volumes. ``claim_setup``
says what a plan does about it before the first create of a pod that mounts it: create
it, labelled as podsync's, when the engine does not have it (``claim-first-use``); when
the pod has an ``fsGroup``, give its root to that group (``claim-fs-group`` for a volume
that exists); and use a volume of the claim's name that podsync did not make as it is,
saying so.

The fsGroup is the kubelet's ``SetVolumeOwnership`` (``pkg/volume/volume_linux.go``,
kubelet-modern.md §7), which runs whenever the kubelet mounts a volume that supports
ownership management for a pod - a local claim's does: the group becomes the fsGroup,
0660 is ORed in (0440 when the volume is read-only), directories get 0110 and setgid, so
that what the pod's processes make there keeps the group and its other users can write
it. podsync sets the volume's root that way, through the engine
(``VolumeRuntime.write_volume``, the mechanism that sets an emptyDir's root up),
before each container of the pod that mounts the claim is created; a Docker volume's
root is root's and 0755, so it becomes 02775 (02755 read-only), root's, of the
fsGroup. Files already in the volume are not walked (the engine's archive API cannot
change a file's group without writing the file again): those the pod's processes make
keep the group through setgid, as on a cluster. The kubelet's ``OnRootMismatch`` policy
skips the walk when the root is right; podsync, which never walks, does the same for
both policies. A volume podsync did not make is used as it is, its root too: its owner
set it up (the kubelet would keep its owner and change only its group, which the archive
API cannot do).

Pure, a planner module: no I/O.
"""

from __future__ import annotations

import attrs

from podsync.actions._actions import CreateVolume, Reason
from podsync.actions._options import PlanOptions
from podsync.model._pod import ObservedVolume, Pod
from podsync.model._volume import ClaimSource
from podsync.spec._labels import VOLUME_KIND_CLAIM
from podsync.spec._ownership import volume_ownership
from podsync.spec._volumes import claim_volume_labels, claim_volume_name

__all__: list[str] = []  # the planner's own

# What SetVolumeOwnership does to a directory (pkg/volume/volume_linux.go): the group's
# read and write bits (read only on a read-only volume: 0440), its search bit (0110),
# setgid.
_RW_DIR_BITS = 0o0660 | 0o0110 | 0o2000
_RO_DIR_BITS = 0o0440 | 0o0110 | 0o2000
# The root of a volume the engine makes: root's, 0755 (Docker's local driver).
_ENGINE_ROOT_MODE = 0o755


def claim_root_mode(claim: ClaimSource) -> int:
    """The mode ``claim_setup`` gives a claim's root for an fsGroup: the engine's 0755
    with ``SetVolumeOwnership``'s directory bits ORed in - 02775, or 02755 when the
    claim's volume source is read-only (the volume's, not a mount's ``readOnly``, as the
    kubelet's mounter attributes say)."""
    return _ENGINE_ROOT_MODE | (_RO_DIR_BITS if claim.read_only else _RW_DIR_BITS)


def claim_of(pod: Pod, volume_name: str) -> ClaimSource | None:
    """The claim of ``pod`` whose engine volume is ``volume_name``, if any."""
    for volume in pod.volumes:
        claim = volume.claim
        if claim is not None and claim_volume_name(pod.namespace, claim.claim_name) == volume_name:
            return claim
    return None


def not_the_claims(volume: ObservedVolume, namespace: str, claim: str) -> bool:
    """Whether ``volume`` is not the one podsync made for ``claim`` of ``namespace``."""
    owner = volume_ownership(volume)
    return owner is None or (owner.kind, owner.namespace, owner.claim) != (
        VOLUME_KIND_CLAIM,
        namespace,
        claim,
    )


def claim_setup(
    pod: Pod, claim: ClaimSource, observed: ObservedVolume | None, options: PlanOptions
) -> tuple[CreateVolume | None, str]:
    """What a plan does about ``pod``'s ``claim`` (whose volume the engine has as
    ``observed``, or not) before the first create that mounts it: a ``CreateVolume``
    or ``None``, and a note for that create ("" when none).

    * The engine does not have the volume: it is created with podsync's labels
      (``claim-first-use``) and, with an fsGroup, its root set up.
    * podsync's volume, and the pod has an fsGroup: its root is set up again
      (``claim-fs-group``), as the kubelet does at every mount; a create of a volume
      that exists changes nothing else.
    * A volume of the claim's name that podsync did not make: used as it is (the note
      says so, and that the fsGroup is not applied to it).

    The set-up runs a helper container of ``options.network_image``: the caller makes
    sure the image is present."""
    name = claim_volume_name(pod.namespace, claim.claim_name)
    what = f"claim {pod.namespace}/{claim.claim_name}"
    fs_group = pod.security_context.fs_group if pod.security_context is not None else None
    if observed is not None and not_the_claims(observed, pod.namespace, claim.claim_name):
        note = f"{what}: volume {name} exists and was not made by podsync: used as it is"
        if fs_group is not None:
            note += f", the pod's fsGroup {fs_group} not applied to it"
        return None, note
    if observed is None:
        reason, why = Reason.CLAIM_FIRST_USE, f"create volume {name}: {what}: first use"
    elif fs_group is not None:
        reason, why = Reason.CLAIM_FS_GROUP, f"set up volume {name}: {what}"
    else:
        return None, ""
    create = CreateVolume(
        pod=pod.key,
        pod_uid=pod.uid,
        volume=name,
        labels=claim_volume_labels(pod.namespace, claim.claim_name),
        reason=reason,
        message=why,
    )
    if fs_group is None:
        return create, ""
    mode = claim_root_mode(claim)
    return attrs.evolve(
        create,
        message=f"{why}; its root {mode:04o}, group {fs_group} (the pod's fsGroup)",
        mode=mode,
        gid=fs_group,
        image=options.network_image,
    ), ""
