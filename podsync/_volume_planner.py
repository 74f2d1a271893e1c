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

from collections.abc import Mapping

from podsync._actions import Reason, WriteVolume
from podsync._models import Pod, Volume, WrittenVolume
from podsync._volumes import content_digest, content_dir

__all__: list[str] = []  # the planner's own


def volume_writes(
    pod: Pod, observed: Mapping[str, WrittenVolume], root_dir: str
) -> list[WriteVolume]:
    """The ``WriteVolume`` s of ``pod``: one for each volume with content whose files
    under ``root_dir`` are not what its content says (``observed``: the records found,
    by volume name), in the pod's volume order."""
    fs_group = pod.security_context.fs_group if pod.security_context is not None else None
    writes: list[WriteVolume] = []
    for volume in pod.volumes:
        content = volume.content
        if content is None:
            continue
        digest = content_digest(content, fs_group)
        found = observed.get(volume.name)
        if found is not None and found.digest == digest:
            continue
        if found is None:
            reason, why = Reason.VOLUME_MISSING, "files not written yet"
        else:
            reason, why = Reason.VOLUME_CHANGED, _what_changed(volume, found, fs_group)
        writes.append(
            WriteVolume(
                pod=pod.key,
                pod_uid=pod.uid,
                volume=volume.name,
                path=content_dir(root_dir, pod.uid, volume),
                content=content,
                reason=reason,
                message=f"write {pod.key} volume {volume.name} ({content.kind.value}): {why}",
                fs_group=fs_group,
            )
        )
    return writes


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
