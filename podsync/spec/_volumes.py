"""Volumes: where a pod's volumes live on the host, and the mounts of a container.

Contract: pure path arithmetic. ``volume_host_paths`` says where each pod volume is on
the host, ``container_mounts`` turns a container's volume mounts into the runtime-neutral
``Mount`` values a ``CreateSpec`` carries, ``binds`` spells those as Docker ``Binds``
strings (the Docker runtime's translation uses it), and
``termination_message_file`` names the host file behind a container's termination
message. Creating and removing the directories is the apply side's job.

Ported from the seed's ``makeBinds`` and the volume and termination-log paths of
``mountExternalVolumes`` / ``runContainer`` (reference §2.4, §2.5, test §4.1 #18). Paths
are POSIX paths (``posixpath``), whatever the machine podsync runs on, because they are
paths on the engine's host.

Differences from the seed:

* The seed put emptyDir volumes under ``<root>/<pod name>/volumes/empty/<volume>`` but
  the termination-log files under ``<root>/<pod uid>/...``. Two pods with the same name
  in two namespaces (or from two sources) therefore shared their emptyDir directories.
  podsync keys both by the pod uid.
* The seed named the termination-message file after the Docker container ID, which only
  exists after the container is created; a pure plan cannot know it. podsync names the
  file after the container instance (its container name), which the plan chooses. A
  container name can be longer than a file name may be (255 bytes on Linux
  filesystems): such a name is shortened, with a digest of the whole name.

Nothing here does I/O.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterable, Mapping

import attrs

from podsync.model._pod import Container, ObservedContainer, Pod
from podsync.model._volume import Volume, VolumeContent, VolumeKind, VolumeMount
from podsync.spec._labels import (
    LABEL_CONTAINER,
    LABEL_CONTENT_VOLUMES,
    LABEL_POD_UID,
    LABEL_VOLUME_CLAIM,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    LABEL_VOLUME_NAMESPACE,
    VOLUME_KIND_CLAIM,
    VOLUME_KIND_CONTENT,
    VOLUME_KIND_EMPTY_DIR,
    VOLUME_KIND_POD_STATE,
)

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "DEFAULT_ROOT_DIR",
    "VOLUME_ACCESS_PATH",
    "VOLUME_HELPER_IMAGE",
    "Mount",
    "NamedVolumeMount",
    "TmpfsMount",
    "VolumeFileMount",
    "binds",
    "claim_volume_labels",
    "claim_volume_name",
    "content_digest",
    "content_dir",
    "content_labels",
    "content_volume_labels",
    "content_volume_name",
    "decode_content_volumes",
    "empty_dir_host_path",
    "empty_dir_volume_labels",
    "empty_dir_volume_name",
    "encode_content_volumes",
    "legacy_content_mounts",
    "pod_state_mount",
    "pod_state_volume_labels",
    "pod_state_volume_name",
    "termination_file_mount",
    "termination_message_entry",
    "termination_message_file",
    "volume_host_paths",
]

# The longest file name Linux filesystems take (NAME_MAX; ext4, xfs, btrfs, overlayfs).
_NAME_MAX = 255
# Hex digits of the SHA-256 of a shortened name that stand for the part cut off.
_DIGEST_HEX = 16

#: The host directory holding per-pod data (emptyDir volumes, termination-message
#: files) unless ``PlanOptions.root_dir`` says otherwise.
DEFAULT_ROOT_DIR = "/var/lib/podsync"


def volume_host_paths(pod: Pod, root_dir: str) -> dict[str, str]:
    """The host path of each of ``pod``'s volumes, by volume name.

    A ``host_path`` volume is its path; an emptyDir in memory has none (it is a
    ``TmpfsMount``), nor has a claim (a ``NamedVolumeMount``); a volume with content
    is its ``content_dir``; an emptyDir on disk is
    ``<root_dir>/<pod uid>/volumes/empty/<volume name>`` (the seed's layout, under the
    uid rather than the pod name - see the module docstring): where podsync kept it
    before emptyDirs were engine volumes (``empty_dir_volume_name``), and where the
    containers of such a pod still bind it from (``podsync.planner._empty_dirs``).
    """
    paths: dict[str, str] = {}
    for volume in pod.volumes:
        if volume.memory is not None or volume.claim is not None:
            # A tmpfs (``container_tmpfs``) or a named volume (``container_volumes``)
            # of the engine's: no host path.
            continue
        if volume.host_path is not None:
            paths[volume.name] = volume.host_path
        elif volume.content is not None:
            paths[volume.name] = content_dir(root_dir, pod.uid, volume)
        else:
            paths[volume.name] = empty_dir_host_path(root_dir, pod.uid, volume.name)
    return paths


# The directory under ``<root>/<uid>/volumes`` of each kind of volume with content.
_CONTENT_DIRS = {
    VolumeKind.CONFIG_MAP: "configmap",
    VolumeKind.SECRET: "secret",
    VolumeKind.DOWNWARD_API: "downward-api",
    VolumeKind.PROJECTED: "projected",
}


def content_digest(content: VolumeContent, fs_group: int | None) -> str:
    """What podsync records having written for a volume with ``content``: its digest,
    and the fsGroup that owns the files when there is one (a new fsGroup rewrites them;
    see ``ObservedVolume.digest``)."""
    return content.digest if fs_group is None else f"{content.digest}:{fs_group}"


def content_dir(root_dir: str, pod_uid: str, volume: Volume) -> str:
    """The host directory of a volume with ``content`` (configMap, secret, downwardAPI):
    ``<root_dir>/<pod uid>/volumes/<configmap|secret|downward-api>/<volume name>``,
    beside the pod's emptyDir volumes (the kubelet's
    ``pods/<uid>/volumes/kubernetes.io~configmap/<name>``)."""
    assert volume.content is not None
    kind = _CONTENT_DIRS[volume.content.kind]
    return posixpath.join(root_dir, pod_uid, "volumes", kind, volume.name)


@attrs.frozen
class Mount:
    """A host path made visible inside a container: the file or directory ``host_path``
    on the engine's host appears at ``container_path``, writable unless ``read_only``.
    Both are absolute POSIX paths."""

    host_path: str
    container_path: str
    read_only: bool = False


def container_mounts(
    volume_mounts: Iterable[VolumeMount], host_paths: Mapping[str, str], pod: Pod | None = None
) -> list[Mount]:
    """The ``Mount`` of each of a container's ``volume_mounts``, in mount order, with the
    host path of its volume from ``host_paths``. A mount naming a volume that is not in
    ``host_paths`` is skipped, as the seed did. The volumes of ``pod`` with content
    (configMap, secret, downwardAPI) are mounted read-only whatever the mount says, as
    the kubelet mounts them: their files are podsync's to write."""
    written = {v.name for v in pod.volumes if v.content is not None} if pod is not None else ()
    return [
        Mount(host_paths[m.name], m.mount_path, m.read_only or m.name in written)
        for m in volume_mounts
        if m.name in host_paths
    ]


@attrs.frozen
class TmpfsMount:
    """A tmpfs the engine mounts at ``container_path`` for one container (an ``emptyDir``
    with ``medium: Memory``), of at most ``size`` bytes (0: the engine's default),
    writable unless ``read_only``."""

    container_path: str
    size: int = 0
    read_only: bool = False

    @property
    def options(self) -> str:
        """The mount options, as Docker's ``Tmpfs`` map takes them (``ro,size=1048576``)."""
        return ",".join(
            [*(["ro"] if self.read_only else []), *([f"size={self.size}"] if self.size else [])]
        )


def container_tmpfs(volume_mounts: Iterable[VolumeMount], pod: Pod) -> list[TmpfsMount]:
    """The ``TmpfsMount`` of each of a container's mounts of a memory volume, in order."""
    sizes = {v.name: v.memory.size for v in pod.volumes if v.memory is not None}
    return [
        TmpfsMount(m.mount_path, sizes[m.name], m.read_only)
        for m in volume_mounts
        if m.name in sizes
    ]


def binds(mounts: Iterable[Mount]) -> list[str]:
    """Docker ``Binds`` for ``mounts``, in order: ``"<host path>:<container path>"``, with
    ``":ro"`` when read-only (the seed's makeBinds spelling)."""
    return [f"{m.host_path}:{m.container_path}" + (":ro" if m.read_only else "") for m in mounts]


def termination_message_file(root_dir: str, pod_uid: str, container: str, instance: str) -> str:
    """The host file behind a container's termination message.

    ``<root_dir>/<pod uid>/<container>/<instance>``: one directory per pod container, as
    the seed had, and one file per container instance, named after the instance (its
    container name, without the ``/`` the Docker API puts in front) rather than the
    Docker ID the seed used.

    A container name longer than a file name may be (255 bytes: long pod names and
    uids make names of up to about 480) becomes its first bytes, ``-``, and 16 hex
    digits of its SHA-256: still one file per instance, and the same file for the same
    instance in every plan. Names of up to 255 bytes are used as they are.
    """
    return posixpath.join(root_dir, pod_uid, container, _file_name(instance))


def _file_name(name: str) -> str:
    encoded = name.encode()
    if len(encoded) <= _NAME_MAX:
        return name
    digest = hashlib.sha256(encoded).hexdigest()[:_DIGEST_HEX]
    keep = _NAME_MAX - 1 - _DIGEST_HEX
    # Cut on a character boundary (names are ASCII today; a multi-byte character is
    # dropped whole rather than split).
    head = encoded[:keep].decode(errors="ignore")
    return f"{head}-{digest}"


@attrs.frozen
class NamedVolumeMount:
    """A named engine volume made visible inside a container: the volume ``volume``
    appears at ``container_path`` (absolute), writable unless ``read_only``. An engine
    creates a volume it does not have yet, unlabelled (Docker does), so whoever wants it
    labelled creates it first (``VolumeRuntime.create_volume``).

    ``no_copy``: never fill the volume from the image. Docker copies the content, the
    mode and the owner of the image's directory at ``container_path`` into an empty
    volume the first time a container mounts it, unless the mount says ``nocopy``; an
    ``emptyDir`` starts empty, with its own mode, whatever the image holds there.

    ``labels``: the labels (key, value) the engine gives the volume when it creates it
    at this container's create (Docker's mount ``VolumeOptions.Labels``); a volume that
    exists keeps its own. A volume so mounted needs no create of its own: it is made,
    labelled, with the container that holds it (a pod's state volume, ``pod_state_mount``)."""

    volume: str
    container_path: str
    read_only: bool = False
    no_copy: bool = False
    labels: tuple[tuple[str, str], ...] = ()


# The prefix of a claim's volume name: podsync's, and apart from the names compose gives
# (``<project>_<volume>``) and from the names people give their own volumes.
_CLAIM_VOLUME_PREFIX = "podsync"


def claim_volume_name(namespace: str, claim: str) -> str:
    """The named engine volume that holds the data of claim ``claim`` (``claimName``) in
    ``namespace``: ``podsync_<namespace>_<claim>``.

    Unambiguous: a namespace is a DNS-1123 label and a claim name a DNS-1123 subdomain,
    and neither has a ``_``, so a name splits back into exactly its namespace and claim
    (``podsync_team-a_db.primary`` is claim ``db.primary`` of namespace ``team-a``); and
    every character is one Docker's local driver takes (``[a-zA-Z0-9][a-zA-Z0-9_.-]*``).
    One volume per claim and namespace, as podman's ``kube play`` makes one volume per
    claim: pods of one namespace that name one claim share its data, as they would on
    one node of a cluster.
    """
    return f"{_CLAIM_VOLUME_PREFIX}_{namespace}_{claim}"


def claim_volume_labels(namespace: str, claim: str) -> dict[str, str]:
    """The labels of the volume podsync creates for a claim: its ownership label
    (``LABEL_VOLUME_KIND`` ``claim``), the namespace and the claim name."""
    return {
        LABEL_VOLUME_KIND: VOLUME_KIND_CLAIM,
        LABEL_VOLUME_NAMESPACE: namespace,
        LABEL_VOLUME_CLAIM: claim,
    }


def container_volumes(
    volume_mounts: Iterable[VolumeMount], pod: Pod, *, empty_dirs: bool = False
) -> list[NamedVolumeMount]:
    """The ``NamedVolumeMount`` of each of a container's mounts of a claim, in order:
    the claim's volume, read-only when the mount or the claim's volume source says so
    (the kubelet mounts a claim read-only for either). With ``empty_dirs``, its mounts
    of the pod's on-disk ``emptyDir`` volumes too, in the same order: each volume's
    ``empty_dir_volume_name``, never filled from the image (``no_copy``). Its mounts of
    the pod's configMap, secret and downwardAPI volumes are their
    ``content_volume_name``, read-only whatever the mount says (their files are
    podsync's to write, as the kubelet mounts them)."""
    claims = {v.name: v.claim for v in pod.volumes if v.claim is not None}
    empty = {v.name for v in pod.volumes if v.on_disk} if empty_dirs else set()
    content = {v.name for v in pod.volumes if v.content is not None}
    mounts: list[NamedVolumeMount] = []
    for m in volume_mounts:
        claim = claims.get(m.name)
        if claim is not None:
            mounts.append(
                NamedVolumeMount(
                    claim_volume_name(pod.namespace, claim.claim_name),
                    m.mount_path,
                    m.read_only or claim.read_only,
                )
            )
        elif m.name in empty:
            mounts.append(
                NamedVolumeMount(
                    empty_dir_volume_name(pod.uid, m.name), m.mount_path, m.read_only, True
                )
            )
        elif m.name in content:
            # Read-only; never empty when mounted (written before the first container
            # that mounts it is created), so the engine copies nothing into it.
            mounts.append(
                NamedVolumeMount(content_volume_name(pod.uid, m.name), m.mount_path, True)
            )
    return mounts


# The prefix of the engine volume of a configMap, secret or downwardAPI volume: apart
# from a claim's (``podsync_``), an emptyDir's (``podsync-emptydir_``), compose's
# (``<project>_<volume>``) and, by the pod uid in it, every other pod's.
_CONTENT_VOLUME_PREFIX = "podsync-content"


def content_volume_name(pod_uid: str, volume: str) -> str:
    """The named engine volume that holds the files of the configMap, secret or
    downwardAPI volume ``volume`` of pod ``pod_uid``: ``podsync-content_<pod
    uid>_<volume>``.

    Unambiguous as ``empty_dir_volume_name`` is (a uid podsync admits and a volume
    name have no ``_``), and never equal to a claim's or an emptyDir's name: the text
    before the first ``_`` differs. Every character is one Docker's local driver takes
    (``[a-zA-Z0-9][a-zA-Z0-9_.-]+``); a name longer than 255 bytes is cut with a digest
    of the whole name, as an emptyDir's.
    """
    return _file_name(f"{_CONTENT_VOLUME_PREFIX}_{pod_uid}_{volume}")


def content_volume_labels(pod: Pod, volume: str) -> dict[str, str]:
    """The labels of the engine volume of ``pod``'s configMap, secret or downwardAPI
    ``volume``: its ownership label (``LABEL_VOLUME_KIND`` ``content``), the pod's uid
    and namespace and the volume's name; podsync removes it with the pod."""
    return {
        LABEL_VOLUME_KIND: VOLUME_KIND_CONTENT,
        LABEL_VOLUME_NAMESPACE: pod.namespace,
        LABEL_POD_UID: pod.uid,
        LABEL_VOLUME_NAME: volume,
    }


# The prefix of an emptyDir's volume name. Apart from a claim's (``podsync_``: the
# character after "podsync" differs), from compose's (``<project>_<volume>``) and, by
# the pod uid in it, from every other pod's.
_EMPTY_DIR_VOLUME_PREFIX = "podsync-emptydir"


def empty_dir_volume_name(pod_uid: str, volume: str) -> str:
    """The named engine volume that holds the data of the on-disk ``emptyDir``
    ``volume`` of pod ``pod_uid``: ``podsync-emptydir_<pod uid>_<volume>``.

    Unambiguous: a pod uid podsync admits (``is_safe_uid``: letters, digits, ``.``
    and ``-``) and a volume name (a DNS-1123 label) have no ``_``, so a name splits back
    into exactly its pod and volume, and it never equals a claim's
    ``podsync_<namespace>_<claim>``. Every character is one Docker's local driver takes
    (``[a-zA-Z0-9][a-zA-Z0-9_.-]+``). A name longer than a file name may be (255
    bytes: the local driver makes a directory of that name; a uid may have up to 253
    characters) is cut, with 16 hex digits of the SHA-256 of the whole name - the
    volume's labels say whose it is.
    """
    return _file_name(f"{_EMPTY_DIR_VOLUME_PREFIX}_{pod_uid}_{volume}")


def empty_dir_volume_labels(pod: Pod, volume: str) -> dict[str, str]:
    """The labels of the engine volume of ``pod``'s ``emptyDir`` ``volume``: its
    ownership label (``LABEL_VOLUME_KIND`` ``empty-dir``), the pod's uid and namespace
    and the volume's name; podsync removes it with the pod."""
    return {
        LABEL_VOLUME_KIND: VOLUME_KIND_EMPTY_DIR,
        LABEL_VOLUME_NAMESPACE: pod.namespace,
        LABEL_POD_UID: pod.uid,
        LABEL_VOLUME_NAME: volume,
    }


def empty_dir_host_path(root_dir: str, pod_uid: str, volume: str) -> str:
    """Where podsync before engine volumes kept an on-disk ``emptyDir``, on the host:
    ``<root_dir>/<pod uid>/volumes/empty/<volume>`` (the seed's layout, under the uid).
    Containers made then bind it; it is copied into the volume when the pod moves over
    (see ``podsync.planner._pod``)."""
    return posixpath.join(root_dir, pod_uid, "volumes", "empty", volume)


@attrs.frozen
class VolumeFileMount:
    """One file of a named engine volume made visible inside a container: the regular
    file ``path`` (relative to the volume's root, see ``VolumeEntry.path``) of the volume
    ``volume`` appears at the absolute ``container_path``, writable unless
    ``read_only``.

    Docker 20.10 mounts no part of a volume (no ``VolumeOptions.Subpath`` before API
    1.45), so the Docker runtime binds the file from where the engine keeps the volume
    (its ``Mountpoint``, as the engine reports it: a path on the engine's host, which is
    where binds resolve - so a remote engine works as a local one). The file must exist
    before the create (the apply side writes it, see ``CreateSpec.file_mounts``): for
    a missing bind source Docker makes a directory.

    ``mode``, ``image`` and ``through`` are the apply side's: the file is written empty
    with ``mode`` (``VolumeRuntime.write_volume``) before the container is created - through
    the container named ``through`` when it is set (the pod's network container, which
    mounts the volume at ``VOLUME_ACCESS_PATH``: one archive upload, no container made
    for it), else through a short-lived container the runtime makes (``image``, the
    network image the plan makes present, is no longer passed to it: issue 29).
    """

    volume: str
    path: str
    container_path: str
    read_only: bool = False
    mode: int = 0o666
    image: str = ""
    through: str = ""


#: Where a container that podsync writes a volume through mounts that volume: the
#: short-lived helper containers of ``VolumeRuntime.write_volume``, and the network container
#: of a pod, which mounts the pod's state volume there (``pod_state_mount``) so that
#: the termination-message files are written through it.
VOLUME_ACCESS_PATH = "/podsync-volume"


#: The image of the helper containers through which a runtime reaches a volume (Docker:
#: created, never started): an empty image the runtime imports itself, tagged so that
#: the dangling-image collection never takes it (``podsync.runtime.docker._volumes``).
VOLUME_HELPER_IMAGE = "podsync/volume-helper:empty"


#: The prefix of a pod's state volume name: apart from a claim's (``podsync_``) and from
#: every other pod's (the uid follows).
POD_STATE_VOLUME_PREFIX = "podsync-state"


def pod_state_volume_name(pod_uid: str) -> str:
    """The named engine volume that holds what podsync keeps for pod ``pod_uid`` in the
    engine: its containers' termination-message files (one per container instance).
    ``podsync-state_<pod uid>``; a name longer than a file name may be is cut, with a
    digest of the whole name (the volume's labels say whose it is)."""
    return _file_name(f"{POD_STATE_VOLUME_PREFIX}_{pod_uid}")


def pod_state_volume_labels(pod: Pod) -> dict[str, str]:
    """The labels of ``pod``'s state volume: its ownership label (``LABEL_VOLUME_KIND``
    ``pod-state``), the pod's uid and namespace; podsync removes it with the pod."""
    return {
        LABEL_VOLUME_KIND: VOLUME_KIND_POD_STATE,
        LABEL_VOLUME_NAMESPACE: pod.namespace,
        LABEL_POD_UID: pod.uid,
    }


# Where the termination-message files are in a pod's state volume.
_TERMINATION_DIR = "termination"


def termination_message_entry(instance: str) -> str:
    """The path, in its pod's state volume, of the termination-message file of the
    container instance ``instance`` (its container name): ``termination/<instance>``,
    with the name shortened as ``termination_message_file`` does. One file per
    instance, as the kubelet makes a fresh file for each container it starts."""
    return posixpath.join(_TERMINATION_DIR, _file_name(instance))


def pod_state_mount(pod: Pod) -> NamedVolumeMount:
    """The mount of ``pod``'s state volume in its network container, at
    ``VOLUME_ACCESS_PATH``: the engine creates the volume, with its labels
    (``pod_state_volume_labels``), at the network container's create - no call of its
    own - and the termination-message files of the pod's containers are written through
    that container (one archive upload for the containers created beside it), not
    through a container made for each file. Nothing in the network image is copied into
    it (``no_copy``)."""
    return NamedVolumeMount(
        pod_state_volume_name(pod.uid),
        VOLUME_ACCESS_PATH,
        no_copy=True,
        labels=tuple(sorted(pod_state_volume_labels(pod).items())),
    )


def termination_file_mount(
    pod_uid: str, container: Container, instance: str, image: str, *, through: str = ""
) -> VolumeFileMount:
    """The termination-message file of the container instance ``instance`` of
    ``container`` of pod ``pod_uid``.

    A fresh file per instance, mode 0666, bound at ``terminationMessagePath``
    (``Container.message_path``: ``/dev/termination-log`` unless the pod says), as the
    kubelet's (kubelet-modern.md §11, ``getTerminationMessage``), but kept in the
    engine: a file of the pod's state volume (``termination_message_entry``), written
    through the network container ``through`` when it mounts the volume
    (``pod_state_mount``), else through a container of ``image`` (the network image,
    which the pod needs anyway).
    The message is then read through the engine (an exited container's ``/dev`` is a
    tmpfs that is gone), whether the engine is local or remote.
    """
    return VolumeFileMount(
        pod_state_volume_name(pod_uid),
        termination_message_entry(instance),
        container.message_path,
        image=image,
        through=through,
    )


def content_mount_paths(volume_mounts: Iterable[VolumeMount], pod: Pod) -> dict[str, str]:
    """The pod's configMap, secret and downwardAPI volumes that ``volume_mounts``
    mount, each with its first mount path: what ``LABEL_CONTENT_VOLUMES`` records."""
    content = {v.name for v in pod.volumes if v.content is not None}
    paths: dict[str, str] = {}
    for m in volume_mounts:
        if m.name in content:
            paths.setdefault(m.name, m.mount_path)
    return paths


def content_labels(volume_mounts: Iterable[VolumeMount], pod: Pod) -> dict[str, str]:
    """The labels of a container with ``volume_mounts`` that say where it mounts the
    pod's configMap, secret and downwardAPI volumes (``LABEL_CONTENT_VOLUMES``; none
    when it mounts none)."""
    paths = content_mount_paths(volume_mounts, pod)
    return {LABEL_CONTENT_VOLUMES: encode_content_volumes(paths)} if paths else {}


def encode_content_volumes(paths: Mapping[str, str]) -> str:
    """``LABEL_CONTENT_VOLUMES``'s value: canonical compact JSON."""
    return json.dumps(dict(paths), sort_keys=True, separators=(",", ":"))


def decode_content_volumes(text: str) -> dict[str, str]:
    """What ``LABEL_CONTENT_VOLUMES``'s value says (volume name -> mount path), or an
    empty mapping for a value podsync did not write."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {
        k: v
        for k, v in value.items()
        if isinstance(k, str) and isinstance(v, str) and v.startswith("/")
    }


def legacy_content_mounts(pod: Pod, containers: Iterable[ObservedContainer]) -> set[str]:
    """The configMap, secret and downwardAPI volumes of ``pod`` that a running container
    made by an earlier podsync binds from its host directory (``content_dir``): a
    running container of the pod without ``LABEL_CONTENT_VOLUMES`` whose container, as the pod
    says it, mounts them (a kept container's spec is the pod's; one that is not kept is
    replaced, and what its old spec mounted no longer matters then)."""
    content = {v.name for v in pod.volumes if v.content is not None}
    mounts = {
        c.name: {m.name for m in c.volume_mounts} & content
        for c in (*pod.init_containers, *pod.containers)
    }
    found: set[str] = set()
    for container in containers:
        labels = container.labels
        if (
            container.running
            and labels.get(LABEL_POD_UID) == pod.uid
            and LABEL_CONTENT_VOLUMES not in labels
        ):
            found |= mounts.get(labels.get(LABEL_CONTAINER, ""), set())
    return found
