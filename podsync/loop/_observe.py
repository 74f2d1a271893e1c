"""Observing an engine: what ``plan`` takes, read from the engine and the root directory.

``observe`` lists the containers (with podsync's stop records), the images, the named
volumes and the records podsync keeps in them, the pod directories, the content
volumes' records and the engine's capacity - each only when a plan can need it.
``podsync.loop._sync`` observes through it before planning; the operating commands
(``podsync status`` without pods, ``logs``, ``describe``) observe without planning, and
import this module alone: not the planner, the prober or apply (issue 33).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, MutableMapping, Sequence

import attrs

from podsync.actions._options import PlanOptions
from podsync.applier._content_engine import read_content_records
from podsync.applier._host_empty_dirs import list_host_empty_dirs
from podsync.host._files import list_pod_dirs, read_stop_records
from podsync.model._observation import Observation
from podsync.model._pod import ObservedContainer, ObservedVolume, Pod, ResourceList
from podsync.model._volume import Volume
from podsync.planner._node_resources import pod_requests
from podsync.runtime._protocol import NodeRuntime, PodListRuntime, Runtime, VolumeRuntime
from podsync.spec._labels import LABEL_POD_UID
from podsync.spec._ownership import ownership
from podsync.spec._records import records_of, stop_records

__all__ = ["observe"]


def observe(
    runtime: Runtime,
    root_dir: str | None = None,
    *,
    images: bool = True,
    volumes: bool | None = None,
    desired: Sequence[Pod] = (),
    probed: bool = True,
    capacity: bool | None = None,
    stop_records: MutableMapping[str, str] | None = None,
    pods_only: bool = False,
) -> Observation:
    """Observe ``runtime`` and the pod directories under ``root_dir``.

    Two runtime calls (``list_containers``, ``list_images``) and one directory listing;
    with ``images=False`` the image list is skipped (``Observation.images`` is empty).
    The named volumes are listed too (a third call) with ``volumes=True``, and by
    default (``None``) when a ``desired`` pod mounts a named engine volume (a
    ``persistentVolumeClaim``'s, an on-disk ``emptyDir``'s: a plan made without the list
    creates them again) - and whenever podsync's records in the engine
    (``podsync.spec._records``) can matter: when
    an owned container does not run (its stop record), or a ``desired`` pod has probes
    (their records) or configMap, secret or downwardAPI volumes (their records).
    Stopped containers get their stop records (see
    ``ObservedContainer.stopped_by_podsync``) from there, and, for pods that an earlier
    podsync kept a directory for, from that directory: podsync records the containers
    it stops, because no engine can report it. With the volumes, the emptyDir host
    directories an earlier podsync made for the ``desired`` pods are looked for
    (``Observation.empty_dirs``).

    Args:
        runtime: the engine.
        root_dir: the root directory of pod data; ``PlanOptions().root_dir`` when
            ``None``. A missing root directory holds no pod directories.
        desired: the pods about to be planned: the records of their configMap, secret
            and downwardAPI volumes are read from the volume list (listed whenever a
            desired pod has such a volume; ``podsync.spec._content_records``), through the
            engine where no record volume is believed (one archive read per such volume
            that a container of the pod mounts), and under the root directory for the
            host directories that running containers of an earlier podsync bind.
        probed: whether the ``desired`` pods' probes are about to run: their records
            are then read (False: a sync that does not probe).
        volumes: list the named volumes: True always; False only when podsync's
            records can matter; ``None`` (the default) also when a ``desired`` pod
            mounts a claim's or an on-disk emptyDir's volume.
        capacity: ask the engine's capacity (``NodeRuntime.node_capacity``, a fourth
            call): True always, False never; ``None`` (the default) when a ``desired``
            pod requests CPU or memory (admission checks it against the capacity).
        stop_records: where a caller that observes again and again keeps the stop
            records it read, by container id (``""``: none), between its observations
            (``podsync run`` does). An owned container that does not run and whose
            record is there does not make the records matter: it gets that record, and
            a steady state with stopped containers (a restarted container's earlier
            instance, a crash-looping one's) lists no volumes. Whenever the volumes are
            listed, the map is set to the records of every owned container that does
            not run, and the others are dropped. A stop record is written before the
            stop it is about, so a container's record is final once it does not run -
            except when podsync stops one that had already ended: the caller drops the
            ids of the containers podsync stops (``EventKind.STOPPING``) from the map.
        pods_only: observe the ``desired`` pods and nothing else: their containers
            (``PodListRuntime.list_pod_containers``, one call per pod, in place of
            ``list_containers``), their pod directories, and of the named volumes those
            of these pods and those of no pod (a claim's). A plan made from it sees no
            other pod, so it can remove nothing of one, in any scope: what the loop
            syncs when a container of a pod dies (the kubelet's pod worker). A
            container of such a pod without ``LABEL_POD_UID`` (a 2014 kubelet's) is not
            seen: the caller syncs only pods whose containers are all labelled.

    Returns:
        The observation, ready for ``plan(desired, obs, now=...)``: taken whole, so no
        field is left out. Pass the pods about to be planned as ``desired``: for other
        pods, the records of the files podsync wrote for their configMap, secret and
        downwardAPI volumes are not read (the plan writes them again), nor are their
        volumes or the capacity they need listed. (``sync`` observes less, and lists
        what its first plan turns out to need before planning again.)

    Raises:
        RuntimeCallError: a list call failed (``EngineUnavailable`` when the engine
            cannot be reached); nothing can be planned without the observation.
        OSError: the root directory exists but cannot be listed, or a stop record or
            a volume's record cannot be read.
        TypeError: ``pods_only`` on a runtime that is no ``PodListRuntime``.
    """
    root = root_dir if root_dir is not None else PlanOptions().root_dir
    only = frozenset(pod.uid for pod in desired) if pods_only else None
    containers = _list_containers(runtime, only)
    listed = tuple(runtime.list_images()) if images else ()
    if volumes is None:
        volumes = any(_in_an_engine_volume(v) for pod in desired for v in pod.volumes)
    known: Mapping[str, str] = stop_records if stop_records is not None else {}
    volumes = volumes or _records_matter(containers, desired, probed=probed, known=known)
    named = _confirmed(runtime, containers, _list_volumes(runtime, only)) if volumes else ()
    in_engine = _stop_records_of(named)
    if stop_records is not None:
        if volumes:
            _remember_stops(stop_records, containers, in_engine)
        else:
            in_engine = {cid: record for cid, record in stop_records.items() if record}
    if capacity is None:
        capacity = any(pod_requests(pod) != (0, 0) for pod in desired)
    pod_dirs = list_pod_dirs(root)
    if only is not None:
        pod_dirs &= only
    return Observation(
        _with_stop_records(containers, root, pod_dirs, in_engine),
        listed,
        frozenset(pod_dirs),
        named,
        read_content_records(
            runtime, root, desired, containers, pod_dirs, named if volumes else None
        ),
        volumes,
        _host_empty_dirs(root, desired, pod_dirs) if volumes else frozenset(),
        _capacity(runtime) if capacity else None,
    )


def _confirmed(
    runtime: Runtime, containers: Sequence[ObservedContainer], volumes: Sequence[ObservedVolume]
) -> tuple[ObservedVolume, ...]:
    """``volumes``, listed after ``containers``, without the records
    (``podsync.spec._records``) of containers that were made in between.

    The plan removes the records of containers it does not see (``orphaned-record``:
    gone, removed by hand), and a container another podsync on the engine (the loop's
    worker of a pod, a ``podsync apply`` beside ``podsync run``) created and stopped
    between the two lists is not in ``containers`` while its stop record is in
    ``volumes``. So when a record names a container ``containers`` lacks, the containers
    are listed again - after the volumes, so every container a listed record is about is
    in that list unless it is gone - and the records of the ones found are left out:
    they are about no container this observation holds. One more call, only when such a
    record is listed (in practice: the sync that removes it).

    Raises:
        RuntimeCallError: the second list failed.
    """
    listed = tuple(volumes)
    known = {c.id for c in containers}
    missing = {r.container_id for r in records_of(listed) if r.container_id not in known}
    if not missing:
        return listed
    late = missing.intersection(c.id for c in runtime.list_containers())
    if not late:
        return listed
    young = {r.volume for r in records_of(listed) if r.container_id in late}
    return tuple(v for v in listed if v.name not in young)


def _host_empty_dirs(
    root_dir: str, desired: Sequence[Pod], pod_dirs: Collection[str]
) -> frozenset[tuple[str, str]]:
    """The emptyDir host directories of the desired pods that have a pod directory."""
    pods = [
        (pod.uid, [v.name for v in pod.volumes if v.on_disk])
        for pod in desired
        if pod.uid in pod_dirs and any(v.on_disk for v in pod.volumes)
    ]
    return frozenset(list_host_empty_dirs(root_dir, pods)) if pods else frozenset()


def _stop_records_of(volumes: Sequence[ObservedVolume]) -> dict[str, str]:
    return stop_records(records_of(volumes))


def _remember_stops(
    known: MutableMapping[str, str],
    containers: Sequence[ObservedContainer],
    in_engine: Mapping[str, str],
) -> None:
    """Set ``known`` (``observe``'s ``stop_records``) from a volume list: the record of
    every owned container that does not run, ``""`` for none; the rest dropped."""
    stopped = {
        c.id
        for c in containers
        if not c.running and ownership(c, adopt_2014_containers=True) is not None
    }
    for cid in [cid for cid in known if cid not in stopped]:
        del known[cid]
    for cid in stopped:
        known[cid] = in_engine.get(cid, "")


def _records_matter(
    containers: Sequence[ObservedContainer],
    desired: Sequence[Pod],
    *,
    probed: bool,
    known: Mapping[str, str],
) -> bool:
    """Whether podsync's records in the engine can matter to a plan of ``desired``: an
    owned container that does not run may have a stop record (and may be removed, its
    record with it), and the probes of a desired pod count on their records. In the
    steady state of pods without probes (everything runs) there is nothing to read.
    The records of configMap, secret and downwardAPI volumes are record volumes too
    (``podsync.spec._content_records``): for a desired pod with one, the list call replaces
    an archive read per volume. ``probed``: whether the desired pods' probes are about
    to run (else their records do not matter). A stopped container whose record is
    ``known`` (``observe``'s ``stop_records``) needs no list."""
    for pod in desired:
        if any(v.content is not None for v in pod.volumes):
            return True
        if not probed:
            continue
        for c in (*pod.init_containers, *pod.containers):
            if c.liveness_probe or c.readiness_probe or c.startup_probe:
                return True
    return any(
        not c.running and c.id not in known and ownership(c, adopt_2014_containers=True) is not None
        for c in containers
    )


def _with_stop_records(
    containers: tuple[ObservedContainer, ...],
    root_dir: str,
    pod_dirs: Collection[str],
    in_engine: Mapping[str, str],
) -> tuple[ObservedContainer, ...]:
    """``containers``, with ``stopped_by_podsync`` set from podsync's stop records for
    each owned container that does not run (a running container's record is never read:
    it was not stopped, or it was started again): those in the engine (``in_engine``),
    and those an earlier podsync wrote in the pod directories of such containers (read
    only where a directory exists, so a steady state reads none)."""
    wanted: dict[str, set[str]] = {}
    for container in containers:
        if container.running or container.stopped_by_podsync:
            continue
        # Records exist only where podsync wrote them, so looking for those of every
        # container podsync might own (2014 kubelet names included) costs nothing.
        owner = ownership(container, adopt_2014_containers=True)
        if owner is not None and owner.pod_uid in pod_dirs:
            wanted.setdefault(owner.pod_uid, set()).add(container.id)
    records: dict[str, str] = {}
    for uid, ids in wanted.items():
        records.update(read_stop_records(root_dir, uid, ids))
    records.update(
        (c.id, in_engine[c.id]) for c in containers if not c.running and c.id in in_engine
    )
    if not records:
        return containers
    return tuple(
        attrs.evolve(c, stopped_by_podsync=records[c.id]) if c.id in records else c
        for c in containers
    )


def _in_an_engine_volume(volume: Volume) -> bool:
    """Whether a pod volume's data is a named engine volume (a claim's, an emptyDir's
    on disk, a configMap's, secret's or downwardAPI's files): a create that mounts it
    needs the volume list."""
    return volume.claim is not None or volume.on_disk or volume.content is not None


def _list_containers(
    runtime: Runtime, pods: Collection[str] | None
) -> tuple[ObservedContainer, ...]:
    """Every container of the engine; with ``pods`` (``observe``'s ``pods_only``),
    those labelled as of these pods, listed pod by pod (``PodListRuntime``)."""
    if pods is None:
        return tuple(runtime.list_containers())
    if not isinstance(runtime, PodListRuntime):
        raise TypeError(f"pods_only needs a PodListRuntime, got {type(runtime).__name__}")
    return tuple(c for uid in sorted(pods) for c in runtime.list_pod_containers(uid))


def _list_volumes(runtime: Runtime, pods: Collection[str] | None = None) -> list[ObservedVolume]:
    """The engine's named volumes; none on a runtime without them (``VolumeRuntime``),
    whose plans use none. With ``pods``, only those of these pods and those of no pod
    (``observe``'s ``pods_only``)."""
    listed = runtime.list_volumes() if isinstance(runtime, VolumeRuntime) else []
    if pods is None:
        return listed
    # A volume without a pod's uid is a claim's, or not podsync's: kept.
    return [v for v in listed if v.labels.get(LABEL_POD_UID, "") in pods or not _pod_of(v)]


def _pod_of(volume: ObservedVolume) -> str:
    return volume.labels.get(LABEL_POD_UID, "")


def _capacity(runtime: Runtime) -> ResourceList | None:
    """The engine's capacity; ``None`` (unknown: no pod is checked against it) on a
    runtime that does not tell it (``NodeRuntime``)."""
    return runtime.node_capacity() if isinstance(runtime, NodeRuntime) else None
