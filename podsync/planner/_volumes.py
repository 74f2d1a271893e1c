"""Planning the files of configMap, secret and downwardAPI volumes.

The kubelet refreshes these volumes on every pod sync (kubelet-modern.md §9: the
periodic sync re-projects them through its cache and the atomic writer swaps ``..data``
when the payload changed), and a container that mounts one keeps running: only the
files change. podsync does the same on each sync: ``volume_writes`` compares the
content each volume should have (``Volume.content``, projected by the loader) with the
record of what podsync last wrote there (``WrittenVolume``), and plans a
``WriteVolume`` for each volume whose files differ - naming the object whose content
changed (``ConfigMap default/settings changed``). The pod's own plan then comes after
them, so the files exist before the first container that mounts them is created.

Containers are never replaced for it: the content is not in the spec hash (only the
volume's kind is, see ``_hashing``). An env that came from the same ConfigMap is in the
spec hash, so that container is replaced by the pod planner, as env cannot change in a
running process.

Pure, a planner module: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from podsync.actions._actions import (
    Create,
    CreateVolume,
    Kill,
    PodAction,
    Reason,
    RemoveVolume,
    WriteVolume,
)
from podsync.model._pod import ObservedVolume, Pod
from podsync.model._volume import Volume, WrittenVolume
from podsync.spec._content_layout import next_payload
from podsync.spec._content_records import (
    PodVolume,
    RecordChoice,
    believed,
    content_record_labels,
    content_record_volume,
)
from podsync.spec._labels import LABEL_CONTENT_VOLUMES
from podsync.spec._ownership import Instance
from podsync.spec._volumes import (
    content_digest,
    content_dir,
    content_volume_labels,
    content_volume_name,
    decode_content_volumes,
    legacy_content_mounts,
)

__all__: list[str] = []  # the planner's own


def volume_writes(
    pod: Pod,
    *,
    host: Mapping[str, WrittenVolume],
    engine: Mapping[str, WrittenVolume],
    instances: Sequence[Instance],
    actions: Sequence[PodAction],
    volumes: Collection[ObservedVolume],
    image: str,
    root_dir: str,
) -> list[PodAction]:
    """The actions that make ``pod``'s configMap, secret and downwardAPI volumes hold
    their content, to run before ``actions`` (the pod's plan), in the pod's volume
    order.

    A volume's engine volume (``content_volume_name``) is kept written while a
    container of the pod mounts it (one with ``LABEL_CONTENT_VOLUMES`` naming it,
    running or not) or ``actions`` create one that does: a ``WriteVolume`` when the
    record read from it (``engine``) is missing or says other content, after a
    ``CreateVolume`` when it has no record and ``volumes`` (the engine's, when listed)
    do not hold it as podsync's. Its host directory (``content_dir``) is written as
    before only while a running container made by an earlier podsync binds it and is
    not stopped by ``actions`` (``host``: the records found there). ``image`` is the
    helper containers' image (the pod's network image)."""
    fs_group = pod.security_context.fs_group if pod.security_context is not None else None
    stopping = {a.id for a in actions if isinstance(a, Kill)}
    legacy = legacy_content_mounts(
        pod, [i.observed for i in instances if i.observed.id not in stopping]
    )
    consumers: set[str] = set()
    for instance in instances:
        text = instance.observed.labels.get(LABEL_CONTENT_VOLUMES)
        if text:
            consumers.update(decode_content_volumes(text))
    created = {m.volume for a in actions if isinstance(a, Create) for m in a.spec.volumes}
    present = {v.name: v for v in volumes}
    out: list[PodAction] = []
    for volume in pod.volumes:
        content = volume.content
        if content is None:
            continue
        digest = content_digest(content, fs_group)
        kind = content.kind.value
        name = content_volume_name(pod.uid, volume.name)
        if volume.name in consumers or name in created:
            found = engine.get(volume.name)
            if found is None or found.digest != digest:
                if found is None and not _ours(present.get(name), pod, volume.name):
                    out.append(
                        CreateVolume(
                            pod=pod.key,
                            pod_uid=pod.uid,
                            volume=name,
                            labels=content_volume_labels(pod, volume.name),
                            reason=Reason.VOLUME_MISSING,
                            message=f"create volume {name}: {kind} volume {volume.name}",
                        )
                    )
                reason, why = _why(volume, found, fs_group)
                previous = found.payload if found is not None else ""
                out.append(
                    WriteVolume(
                        pod=pod.key,
                        pod_uid=pod.uid,
                        volume=volume.name,
                        path="",
                        content=content,
                        reason=reason,
                        message=f"write {pod.key} volume {volume.name} ({kind}): {why}",
                        fs_group=fs_group,
                        engine_volume=name,
                        image=image,
                        payload=next_payload(previous),
                        previous=previous,
                        linked=found.names if found is not None else (),
                    )
                )
        if volume.name in legacy:
            found = host.get(volume.name)
            if found is None or found.digest != digest:
                reason, why = _why(volume, found, fs_group)
                path = content_dir(root_dir, pod.uid, volume)
                out.append(
                    WriteVolume(
                        pod=pod.key,
                        pod_uid=pod.uid,
                        volume=volume.name,
                        path=path,
                        content=content,
                        reason=reason,
                        message=(
                            f"write {pod.key} volume {volume.name} ({kind}) into {path}, "
                            f"which a container made by an earlier podsync binds: {why}"
                        ),
                        fs_group=fs_group,
                    )
                )
    return out


def record_upkeep(
    pod: Pod,
    *,
    engine: Mapping[str, WrittenVolume],
    writes: Sequence[PodAction],
    present: Mapping[str, ObservedVolume],
    records: Mapping[PodVolume, RecordChoice],
) -> list[PodAction]:
    """The actions that keep the record volumes of ``pod``'s configMap, secret and
    downwardAPI volumes (``podsync.spec._content_records``) one per volume, to run after the
    pod's plan (a failure then holds nothing of the pod back). ``present``: the listed
    volumes by name (nothing is planned for a volume that is not among them);
    ``records``: the record volumes by pod volume; ``writes``: ``volume_writes``'s.

    A volume that is written gets its record from the write (``_content_engine``). Of
    the others, one whose record volume is believed keeps that one: the others of its
    pod volume are removed (``Reason.STALE_RECORD``: a crash between a record and the
    removal of the one it replaced, two podsync processes). One whose record was read
    from the volume's own file (``engine``: written by a podsync before record
    volumes, or records that disagree) gets a record volume saying it, of a newer
    generation than any it has, and those are removed (``Reason.VOLUME_RECORDED``):
    from the next sync on it is not read again."""
    written = {a.volume for a in writes if isinstance(a, WriteVolume) and a.engine_volume}
    out: list[PodAction] = []
    for volume in pod.volumes:
        if volume.content is None or volume.name in written:
            continue
        name = content_volume_name(pod.uid, volume.name)
        target = present.get(name)
        if target is None:
            continue
        choice = records.get((pod.uid, volume.name))
        keep = ""
        if believed(choice, present) is not None and choice is not None and choice.winner:
            keep = choice.winner.volume
        else:
            found = engine.get(volume.name)
            if found is None or found.volume != name or not target.created:
                continue
            if not _ours(target, pod, volume.name):
                continue
            generation = choice.next_generation if choice is not None else 1
            keep = content_record_volume(found, generation)
            out.append(
                CreateVolume(
                    pod=pod.key,
                    pod_uid=pod.uid,
                    volume=keep,
                    labels=content_record_labels(found, target.created, generation),
                    reason=Reason.VOLUME_RECORDED,
                    message=(
                        f"record the files of volume {name} in the volume list: read from "
                        "the volume itself"
                    ),
                )
            )
        for record in choice.records if choice is not None else ():
            if record.volume == keep:
                continue
            out.append(
                RemoveVolume(
                    pod=pod.key,
                    pod_uid=pod.uid,
                    volume=record.volume,
                    reason=Reason.STALE_RECORD,
                    message=(
                        f"remove volume {record.volume}: a record of volume {name} that a "
                        "newer one replaced"
                    ),
                )
            )
    return out


def _ours(observed: ObservedVolume | None, pod: Pod, volume: str) -> bool:
    """Whether ``observed`` is the engine volume podsync made for ``pod``'s ``volume``."""
    if observed is None:
        return False
    labels = observed.labels
    return labels == {**labels, **content_volume_labels(pod, volume)}


def _why(volume: Volume, found: WrittenVolume | None, fs_group: int | None) -> tuple[Reason, str]:
    if found is None:
        return Reason.VOLUME_MISSING, "files not written yet"
    return Reason.VOLUME_CHANGED, _what_changed(volume, found, fs_group)


def _what_changed(volume: Volume, found: WrittenVolume, fs_group: int | None) -> str:
    """Why the files are written again, for people: the sources whose digest changed
    (``ConfigMap default/settings changed``); else the fsGroup, else the items."""
    assert volume.content is not None
    sources = volume.content.sources
    changed = sorted(
        {name for name in sources if found.sources.get(name) != sources[name]}
        | {name for name in found.sources if name not in sources}
    )
    if changed:
        return ", ".join(changed) + " changed"
    if found.digest.partition(":")[0] == volume.content.digest:
        return "the pod's fsGroup changed" if fs_group is not None else "fsGroup was removed"
    return "its items or modes changed"
