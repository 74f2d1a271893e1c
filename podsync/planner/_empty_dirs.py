"""Planning ``emptyDir`` volumes as engine volumes (issue 18).

An on-disk ``emptyDir`` is one named engine volume per pod volume
(``empty_dir_volume_name``), labelled as podsync's with its pod and volume
(``empty_dir_volume_labels``), mounted into the containers that mount it, never filled
from the image. The plan creates it (``empty_dir_setup``: a ``CreateVolume`` that also
sets its root's mode) before the first container that mounts it; ``podsync.planner._plan``
removes it (``RemoveVolume``) with the pod's other volumes once the pod is no longer
desired and none of its containers is left; a desired pod keeps it across restarts and rebuilds,
as the kubelet keeps an emptyDir for the life of its pod.

Earlier podsync versions kept an emptyDir in a host directory under the root directory
and bound it into the containers. ``binds_host_dirs`` says whether a pod's new
containers keep doing that - while any container of the pod that binds them runs, so
that all of them share the same data - and ``binds_stopping`` whether the plan stops
such containers before the pod moves over (the pod planner then stops them all before
it creates anything). A host directory left when the pod moves is copied into the new
volume, then removed (``CreateVolume.copy_from``).

Pure, a planner module: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence

from podsync.actions._actions import CreateVolume, Reason
from podsync.actions._options import PlanOptions
from podsync.model._pod import Container, ObservedVolume, Pod
from podsync.spec._labels import LABEL_EMPTY_DIRS, LABEL_SPEC, VOLUME_KIND_EMPTY_DIR
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import Instance, volume_ownership
from podsync.spec._volumes import (
    Mount,
    NamedVolumeMount,
    container_mounts,
    container_volumes,
    empty_dir_host_path,
    empty_dir_volume_labels,
    empty_dir_volume_name,
    volume_host_paths,
)

__all__: list[str] = []  # the planner's own

# An emptyDir's root: writable by every user of the pod, as the kubelet makes it
# (pkg/volume/emptydir/empty_dir.go, setupDir: 0777 whatever the umask).
EMPTY_DIR_MODE = 0o777
# With an fsGroup the kubelet's SetVolumeOwnership (pkg/volume/volume_linux.go,
# kubelet-modern.md §7) then gives the directory to the group, ORs in 0660 and 0110
# (already there) and sets setgid, so that what the pod's processes make there keeps
# the group.
_SETGID = 0o2000


def binds_host_dirs(pod: Pod, by_name: Mapping[str, Sequence[Instance]], killed: set[str]) -> bool:
    """Whether the containers a plan of ``pod`` creates bind its on-disk emptyDir
    volumes from the host directories (``empty_dir_host_path``), as podsync did before
    they were engine volumes: only while a container of the pod that binds them keeps
    running - one without ``LABEL_EMPTY_DIRS`` that mounts one, and that the plan does
    not stop (``killed``: container ids). A container that keeps running has the
    desired spec, so its mounts are the desired mounts. The pod's containers then keep
    sharing their data; once none of them runs (the pod is rebuilt, or all of them are
    replaced or have exited), the pod moves to engine volumes."""
    on_disk = {v.name for v in pod.volumes if v.on_disk}
    specs = {c.name: c for c in (*pod.init_containers, *pod.containers)}
    for name, instances in by_name.items():
        c = specs.get(name)
        if c is None or not any(m.name in on_disk for m in c.volume_mounts):
            continue
        for instance in instances:
            if (
                instance.running
                and instance.observed.id not in killed
                and LABEL_EMPTY_DIRS not in instance.observed.labels
            ):
                return True
    return False


def empty_dir_mode(
    pod: Pod, by_name: Mapping[str, Sequence[Instance]], stopped: Sequence[Instance], starts: bool
) -> tuple[bool, bool]:
    """How a plan of ``pod`` that stops ``stopped`` mounts its on-disk emptyDir volumes
    in the containers it creates (``starts``): (engine volumes, moving). Host
    directories while a container that binds them keeps running (``binds_host_dirs``);
    else engine volumes - and ``moving`` when containers that may bind the host
    directories stop in this plan (``binds_stopping``): the pod planner then stops
    every container before it creates one, so that the directories are copied whole."""
    if not starts or not any(v.on_disk for v in pod.volumes):
        return True, False
    killed = {instance.observed.id for instance in stopped}
    if binds_host_dirs(pod, by_name, killed):
        return False, False
    return True, binds_stopping(by_name, killed)


def binds_stopping(by_name: Mapping[str, Sequence[Instance]], killed: set[str]) -> bool:
    """Whether a container the plan stops (``killed``) may bind an emptyDir host
    directory: an app or init container without ``LABEL_EMPTY_DIRS`` whose spec, as its
    ``LABEL_SPEC`` records it, mounts an on-disk emptyDir - or does not say."""
    return any(
        instance.observed.id in killed
        and LABEL_EMPTY_DIRS not in instance.observed.labels
        and _may_mount_empty_dir(instance.observed.labels.get(LABEL_SPEC, ""))
        for name, instances in by_name.items()
        if name != NETWORK_CONTAINER
        for instance in instances
    )


def _may_mount_empty_dir(spec: str) -> bool:
    """Whether the canonical spec text ``spec`` (``LABEL_SPEC``) mounts an on-disk
    emptyDir: one of its pod volumes is none of the other kinds. A text that cannot be
    read (a label is engine data; a 2014 container has none) may: True."""
    try:
        volumes = json.loads(spec)["pod"]["volumes"]
        return any(
            v.get("host_path") is None and all(v.get(k) is None for k in _OTHER_KINDS)
            for v in volumes
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return True


# The fields of a canonical volume (``podsync.spec._hashing``) that make it something else
# than an on-disk emptyDir when they are there (a memory volume's size may be 0).
_OTHER_KINDS = ("memory", "claim", "content")


def container_storage(
    pod: Pod, c: Container, root_dir: str, *, engine: bool
) -> tuple[list[Mount], tuple[str, ...], tuple[NamedVolumeMount, ...]]:
    """Container ``c``'s host mounts, the host directories apply makes for them, and
    its named volumes. With ``engine``, its on-disk emptyDir volumes are engine volumes
    (``container_volumes``); without, the host directories an earlier podsync made,
    bound as it bound them (``empty_dir_host_path``)."""
    host_paths = volume_host_paths(pod, root_dir)
    mounted = {m.name for m in c.volume_mounts}
    on_disk = [v.name for v in pod.volumes if v.on_disk and v.name in mounted]
    directories: tuple[str, ...] = ()
    if engine:
        for volume in on_disk:
            del host_paths[volume]
    else:
        directories = tuple(host_paths[v] for v in on_disk)
    for v in pod.volumes:
        if v.content is not None:  # an engine volume (``container_volumes``)
            host_paths.pop(v.name, None)
    mounts = container_mounts(c.volume_mounts, host_paths, pod)
    return mounts, directories, tuple(container_volumes(c.volume_mounts, pod, empty_dirs=engine))


def empty_dir_setup(
    pod: Pod,
    volume: str,
    observed: ObservedVolume | None,
    empty_dirs: Collection[tuple[str, str]],
    options: PlanOptions,
    *,
    used: bool,
) -> CreateVolume | None:
    """The ``CreateVolume`` of ``pod``'s emptyDir ``volume``: when the engine does not
    have it (``observed`` None); when it is podsync's but no container of the pod has
    mounted it yet (``used``: a container with ``LABEL_EMPTY_DIRS``), as podsync may
    have stopped between its create and its set-up (a label cannot say it was set up;
    setting the root up again touches nothing else); or when its host directory is left
    from an earlier podsync (``empty_dirs``: copied in even into a volume that exists,
    so that a copy that stopped half-way is done again). ``None`` when the volume is
    there, in use or not podsync's, and nothing is to be copied.

    The root is made 0777 (02777 and the fsGroup's with an fsGroup) through a helper
    container of the pod's network image (``options.network_image``), which the caller
    makes sure is present."""
    migrate = (pod.uid, volume) in empty_dirs
    if observed is not None and not migrate and (used or not_the_pods(observed, pod.uid, volume)):
        return None
    name = empty_dir_volume_name(pod.uid, volume)
    fs_group = pod.security_context.fs_group if pod.security_context is not None else None
    path = empty_dir_host_path(options.root_dir, pod.uid, volume)
    if migrate:
        reason = Reason.EMPTY_DIR_MIGRATED
        why = f"copy in {path}, where an earlier podsync kept it, then remove that"
    else:
        reason, why = Reason.EMPTY_DIR_FIRST_USE, "first use"
    return CreateVolume(
        pod=pod.key,
        pod_uid=pod.uid,
        volume=name,
        labels=empty_dir_volume_labels(pod, volume),
        reason=reason,
        message=f"create volume {name}: emptyDir {volume}: {why}",
        mode=EMPTY_DIR_MODE | (_SETGID if fs_group is not None else 0),
        gid=fs_group,
        image=options.network_image,
        copy_from=path if migrate else "",
    )


def empty_dir_of(pod: Pod, volume_name: str) -> str | None:
    """The on-disk emptyDir of ``pod`` whose engine volume is ``volume_name``, if any."""
    for volume in pod.volumes:
        if volume.on_disk and empty_dir_volume_name(pod.uid, volume.name) == volume_name:
            return volume.name
    return None


def not_the_pods(volume: ObservedVolume | None, pod_uid: str, name: str) -> bool:
    """Whether ``volume`` exists but is not the one podsync made for pod ``pod_uid``'s
    emptyDir ``name`` (unlabelled: the engine made it for a container that mounted it,
    or someone else did)."""
    if volume is None:
        return False
    owner = volume_ownership(volume)
    return owner is None or (owner.kind, owner.pod_uid, owner.volume) != (
        VOLUME_KIND_EMPTY_DIR,
        pod_uid,
        name,
    )
