"""configMap, secret and downwardAPI volumes through the engine: writing a
``WriteVolume`` into its engine volume (``write_content_volume``), and reading back
what podsync wrote into the volumes of the desired pods (``read_content_records``): the
``WrittenVolume`` records the planner compares with what the volumes should hold
(``podsync.planner._volumes``).

A write is one ``VolumeRuntime.write_volume`` (Docker: one short-lived container, one
archive): the entries of ``_content_layout.payload_entries``.

What podsync wrote is recorded in the volume (``..data/..podsync``) and, once the write
succeeded, in a record volume (``_content_records``): ``write_content_volume`` writes,
lists the volumes (one call: the volume's ``CreatedAt`` as the write left it, and the
pod volume's earlier records), makes the new record volume and removes the earlier
ones.

The records are read from the volume list (``read_content_records`` with the volumes
``observe`` lists): no further call for a volume whose record volume is believed. The
others' records are read through the engine, never a path on this machine: from a
container of the pod that mounts the volume (``LABEL_CONTENT_VOLUMES`` says where),
running or exited, with one ``FileRuntime.read_container_file`` of
``<mount path>/..data/..podsync`` (Docker: one ``GET .../archive``, about 60 ms; the
link ``..data`` is followed). A volume no container mounts and no record volume
describes is not read at all: the planner writes it before the first container that
mounts it is created. The host directories of containers made by an earlier podsync
are read as before, only while such a container runs
(``_volumes.legacy_content_mounts``).

Cost of a steady sync: nothing beyond the volume list (a volume written by a podsync
before record volumes: one archive read, until the plan records it).

Contract: the runtime's calls and reads under the root directory; decides nothing
(the planner did).
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Sequence

from podsync.actions._actions import Plan, WriteVolume
from podsync.exceptions import RuntimeCallError
from podsync.host._volume_writer import read_volumes
from podsync.model._pod import ObservedContainer, ObservedVolume, Pod
from podsync.model._volume import WrittenVolume
from podsync.runtime._protocol import FileRuntime, Runtime, VolumeRuntime
from podsync.spec._content_layout import (
    RECORD_MAX_BYTES,
    RECORD_PATH,
    parse_record,
    payload_entries,
    record_text,
)
from podsync.spec._content_records import (
    content_record_labels,
    content_record_volume,
    content_records,
    record_choices,
)
from podsync.spec._labels import LABEL_CONTENT_VOLUMES, LABEL_POD_UID
from podsync.spec._volumes import (
    content_dir,
    content_volume_name,
    decode_content_volumes,
    legacy_content_mounts,
)

__all__: list[str] = []


def read_content_records(
    runtime: Runtime,
    root_dir: str,
    desired: Sequence[Pod],
    containers: Sequence[ObservedContainer],
    pod_dirs: Collection[str],
    volumes: Sequence[ObservedVolume] | None = None,
) -> tuple[WrittenVolume, ...]:
    """The records of the ``desired`` pods' configMap, secret and downwardAPI volumes:
    from the record volumes among ``volumes`` (the engine's list; ``None`` when not
    listed) where one is believed (``_content_records.believed``), else from their
    engine volumes, through the pods' ``containers`` that mount them, and from the host
    directories containers of earlier podsync versions bind.

    Raises:
        RuntimeCallError: a read failed for another reason than the container being
            gone (it is then read through another one, if any): a record that could
            not be read is not taken for one that is missing.
        OSError: a host record exists but cannot be read.
    """
    pods = [p for p in desired if any(v.content is not None for v in p.volumes)]
    if not pods:
        return ()
    labelled = content_records(volumes) if volumes is not None else {}
    by_pod: dict[str, list[ObservedContainer]] = {}
    uids = {p.uid for p in pods}
    for container in containers:
        uid = container.labels.get(LABEL_POD_UID)
        if uid in uids:
            by_pod.setdefault(uid, []).append(container)
    found: list[WrittenVolume] = []
    legacy: dict[str, dict[str, str]] = {}
    for pod in pods:
        names: list[str] = []
        for volume in pod.volumes:
            if volume.content is None:
                continue
            record = labelled.get((pod.uid, volume.name))
            if record is not None:
                found.append(record)
            else:
                names.append(volume.name)
        mine = by_pod.get(pod.uid, [])
        if not mine:
            continue
        if names:
            found.extend(_engine_records(runtime, pod.uid, names, mine))
        if pod.uid in pod_dirs:
            for name in sorted(legacy_content_mounts(pod, mine)):
                volume = next(v for v in pod.volumes if v.name == name)
                legacy.setdefault(pod.uid, {})[name] = content_dir(root_dir, pod.uid, volume)
    if legacy:
        found.extend(read_volumes(root_dir, legacy))
    return tuple(found)


def _engine_records(
    runtime: Runtime, pod_uid: str, names: Sequence[str], containers: Sequence[ObservedContainer]
) -> list[WrittenVolume]:
    """The records of pod ``pod_uid``'s volumes ``names``, read through its
    ``containers`` that mount them (running ones first, then the newest); none on a
    runtime that reads no container file (``FileRuntime``): such volumes are written
    again."""
    if not isinstance(runtime, FileRuntime):
        return []
    ordered = sorted(containers, key=lambda c: (not c.running, -c.created, c.id))
    where: dict[str, list[tuple[str, str]]] = {}
    for container in ordered:
        text = container.labels.get(LABEL_CONTENT_VOLUMES)
        if text:
            for name, path in decode_content_volumes(text).items():
                where.setdefault(name, []).append((container.id, path))
    records: list[WrittenVolume] = []
    for name in names:
        for container_id, path in where.get(name, ()):
            try:
                data = runtime.read_container_file(
                    container_id, posixpath.join(path, RECORD_PATH), limit=RECORD_MAX_BYTES
                )
            except RuntimeCallError as exc:
                if "no such container" in str(exc).lower():
                    continue  # removed since it was listed: read through another one
                raise
            if data is not None:
                record = parse_record(pod_uid, name, data, content_volume_name(pod_uid, name))
                if record is not None:
                    records.append(record)
            break
    return records


def planned_engine_records(
    runtime: Runtime,
    plan: Plan,
    containers: Sequence[ObservedContainer],
    volumes: Sequence[ObservedVolume] | None = None,
) -> tuple[WrittenVolume, ...]:
    """The records, as they are now in the engine, of the engine volumes ``plan``
    writes: what a saved plan's fingerprint is checked against (with
    ``_volume_writer.planned_volume_records`` for the host directories it writes).

    Read as ``observe`` reads them (``read_content_records``): from the believed record
    volumes among ``volumes`` (listed here, one call, when ``None`` and the plan writes
    any), else through a container that mounts the volume. The same reader on both
    sides, or a volume that no container mounts but whose record volume is believed
    would count as changed between the plan and its apply.

    Raises:
        RuntimeCallError: a read, or the volume list, failed.
    """
    wanted: dict[str, list[str]] = {}
    for action in plan.actions:
        if isinstance(action, WriteVolume) and action.engine_volume:
            wanted.setdefault(action.pod_uid, []).append(action.volume)
    if not wanted:
        return ()
    if volumes is None:
        volumes = runtime.list_volumes() if isinstance(runtime, VolumeRuntime) else ()
    labelled = content_records(volumes)
    found: list[WrittenVolume] = []
    for uid, names in wanted.items():
        rest: list[str] = []
        for name in names:
            record = labelled.get((uid, name))
            if record is not None:
                found.append(record)
            else:
                rest.append(name)
        mine = [c for c in containers if c.labels.get(LABEL_POD_UID) == uid]
        if rest:
            found.extend(_engine_records(runtime, uid, rest, mine))
    return tuple(found)


def write_content_volume(runtime: VolumeRuntime, action: WriteVolume) -> str:
    """Write ``action``'s files into its engine volume (``action.engine_volume``), in
    one ``write_volume``: the payload, then ``..data`` swapped, then the previous
    payload emptied (``_content_layout``); then record the write in a record volume
    (``_content_records``). The values of Secret files must be known. Returns what was
    done, for people.

    Four steps: the files are written; only then are the volumes listed (one call: the
    engine volume's ``CreatedAt`` as the write left it - Docker's local driver reports
    the time the volume's root directory last changed, which every write changes - and
    the pod volume's earlier records), the record volume made (one more than the
    highest generation listed), and the earlier record volumes removed. An
    interruption before the record leaves the old record (it names another
    ``CreatedAt``, or other content) or none: the volume is written again by the next
    sync, which changes nothing a container sees. One after it leaves both: the newer
    generation wins. An engine volume the list does not have or whose ``CreatedAt`` the
    runtime does not report gets no record: it is read through a container.

    Raises:
        ValueError: the action's payload names are not ones podsync writes.
        RuntimeCallError: the engine failed (the previous payload is then still the
            one ``..data`` names, unless the failure came after the swap).
    """
    entries = payload_entries(
        action.content,
        action.fs_group,
        payload=action.payload,
        previous=action.previous,
        linked=action.linked,
    )
    runtime.write_volume(action.engine_volume, entries)
    kind = action.content.kind.value
    what = f"wrote the files of volume {action.volume} ({kind}) into {action.engine_volume}"
    listed = runtime.list_volumes()
    target = next((v for v in listed if v.name == action.engine_volume), None)
    choice = record_choices(listed).get((action.pod_uid, action.volume))
    if target is None or not target.created:
        return what
    written = parse_record(
        action.pod_uid,
        action.volume,
        record_text(action.content, action.fs_group, action.payload),
        action.engine_volume,
    )
    assert written is not None  # podsync's own record text
    generation = choice.next_generation if choice is not None else 1
    name = content_record_volume(written, generation)
    runtime.create_volume(name, content_record_labels(written, target.created, generation))
    for old in choice.records if choice is not None else ():
        if old.volume != name:
            runtime.remove_volume(old.volume)
    return what


def unknown_secrets(write: WriteVolume) -> list[str]:
    """The Secret keys whose values ``write`` holds by reference only (a saved plan's:
    ``VolumeFile.known`` False), as ``Secret <namespace>/<name> key <key>``, sorted:
    nothing is written without them."""
    return sorted(
        {
            f"Secret {f.secret.secret} key {f.secret.key}"
            for f in write.content.files
            if not f.known and f.secret is not None
        }
    )
