"""The plan's vocabulary: what a plan says, independent of who makes or runs it.

``Reason`` (why an action is planned), ``CreateSpec`` (what a create asks of a runtime),
the actions (``Pull``, ``Create``, ``Kill``, ``Remove``, ``Wait``, ``RemovePodDir``,
``WriteVolume``, ``RemoveImage``, ``CreateVolume``, ``RemoveVolume``), ``PodPlan``,
``Rejection`` and ``Plan`` with its renderings for people (``describe``, ``render``,
``summary``); the stop-record words (``FAILED_STOPS``) that the planner reads and apply
writes; the plan's JSON format version.

Contract: frozen values and pure text functions. The planner produces these values; the
apply side, the runtimes, the JSON form and the command line consume them, so this
module is the boundary between deciding and doing.

May import: the model (``podsync.model._pod``), the options (``_options``), the helpers' values
(``PortMapping`` from ``_ports``, ``Mount`` from ``_volumes``), the standard library's
pure modules and ``attrs``. Never the planner (``_plan``), a runtime, or anything that
does I/O.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping

import attrs

from podsync.actions._options import PlanOptions
from podsync.model._pod import Handler, HostAlias
from podsync.model._security import ContainerSecurity
from podsync.model._volume import VolumeContent
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import Mount, NamedVolumeMount, TmpfsMount, VolumeFileMount

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "FAILED_STOPS",
    "PLAN_FORMAT_VERSION",
    "STOP_POST_START_FAILED",
    "VERBS",
    "Action",
    "Create",
    "CreateSpec",
    "CreateVolume",
    "Kill",
    "Plan",
    "PodAction",
    "PodPlan",
    "Pull",
    "Reason",
    "Rejection",
    "Remove",
    "RemoveImage",
    "RemovePodDir",
    "RemoveVolume",
    "Wait",
    "WriteVolume",
    "shorten_ids",
]

#: The version of the plan's JSON form; bumped on any incompatible change.
#: 2: pod actions carry ``pod_uid`` and ``Pull.pods`` holds uids (1 named pods by key).
#: 3: plans carry the options they were made with (``Plan.options``).
#: 4: ``CreateSpec`` is runtime-neutral: ``join``/``network``, ``ports``, ``mounts``,
#:    ``milli_cpu`` (3 had Docker's network mode, port and bind strings, CPU shares).
#: 5: creates carry the pod file fields of issues 13 and 14 (``cpu_limit``, ``security``,
#:    ``tmpfs``, host identity, terminals); a format-4 plan was made by a podsync that
#:    read requests as limits and dropped security settings, so it is not applied.
#: 6: the actions ``CreateVolume`` and ``WriteVolume``, creates with named volumes, and
#:    Secret values by reference (issue 14). A format-5 plan holds none of these and
#:    is still read; a podsync that reads only 5 refuses a format-6 plan by its version
#:    instead of failing on an action kind it does not know.
#: 7: pod state in the engine (issue 18): the action ``RemoveVolume``, creates with
#:    ``file_mounts`` (the termination-message file in the pod's state volume), emptyDir
#:    volumes as engine volumes (``CreateVolume`` with the root's ``mode``, ``gid``, the
#:    helper ``image`` and a host directory to ``copy_from``;
#:    ``NamedVolumeMount.no_copy``), configMap, secret and downwardAPI volumes as engine
#:    volumes too (``WriteVolume`` with ``engine_volume``, ``image``, ``payload``,
#:    ``previous`` and ``linked``; ``WrittenVolume`` with ``volume``, ``payload`` and
#:    ``names``). A format-6 plan holds none of these and is still read (its writes go
#:    to host directories).
#: 8: kills of a pod-wide stop (issue 27): ``Kill.concurrent`` and ``Kill.after``. A
#:    format-7 plan holds none (its kills run one after the other, as it was made to)
#:    and is still read.
#: 9: the rest of issue 27, which a podsync that reads 8 does not know: the reasons
#:    ``network-lost``, ``image-pull-back-off``, ``claim-fs-group``, ``OutOfcpu`` and
#:    ``OutOfmemory``, and of issue 28 ``pod-security``; creates with the engine
#:    settings (``memory_swap``, ``oom_score_adj``, ``ipc_shareable``, ``join_ipc``);
#:    options with ``memory_capacity`` and ``system_reserved``, and the Pod Security
#:    options (``pod_security``, ``allowed_host_paths``, ``allowed_capabilities``,
#:    ``allow_unconfined``); kills of the network container with ``record_stop``; named
#:    volume mounts with ``labels`` (the pod's state volume, made at its network
#:    container's create). Such a podsync refuses a format-9 plan by its version instead
#:    of misreading a reason or failing on a field it does not know. A format-8 plan holds
#:    none of these and is still read: its creates get the engine's swap, OOM score and
#:    IPC defaults, and its network container's stop is not recorded, as the podsync
#:    that made it planned.
#: 10: issue 29, which a podsync that reads 9 does not know:
#:
#:    - ``CreateSpec`` names its process as Kubernetes does: ``command`` (the executable
#:      and its arguments, 9's ``entrypoint``) and ``args`` (9's ``command``). A plan of
#:      formats 5 to 9 is still read, its creates' two fields renamed as it is read.
#:    - options with ``capabilities`` (written when the runtime lacks some): the plan
#:      was made for a runtime without them (a pod needing one is rejected, reason
#:      ``missing-capability``, and creates bind no termination-message file without
#:      ``volumes``). A format-9 plan has none and reads as made for every capability.
#:      The rejection reason ``missing-capability``.
#:    - scopes: options with ``scope``, the rejection reason ``scope-conflict``. A
#:      format-9 plan holds neither and is still read (its options have no scope: it
#:      was made as the node scope, which is how it removes what it removes).
#: 11: issue 33, the same plans in a sixth of the text (under 2 KB a pod of three
#:    containers): fields at their default left out, each action one line, and in a
#:    pod's plan what the rest of it says (``podsync.actions._json_pods``): its actions'
#:    pod and uid, the labels all its creates carry and those podsync's record of a
#:    container predicts, a create's spec label as what its other fields do not say, the
#:    spec hash of that label, the container name, ``join``, ``join_ipc`` and the joins
#:    label, a termination file's mount, the engine settings its other fields say, the
#:    start of a create's message. A podsync that reads 10 would read such a plan wrong,
#:    and refuses it by its version; a format-10 plan is still read (every field written).
PLAN_FORMAT_VERSION = "11"


class Reason(enum.StrEnum):
    """Why an action is in the plan (machine-readable; the message says it for people)."""

    # creates
    MISSING = "missing"  # the container has no instance yet
    EXITED = "exited"  # restarted after an exit, as the restart policy allows
    SPEC_CHANGED = "spec-changed"  # replaced: the spec differs from its last instance's
    UNHEALTHY = "unhealthy"  # replaced: its liveness or startup probe failed
    NETWORK_MISSING = "network-missing"  # the pod's network container does not run
    NETWORK_CHANGED = "network-changed"  # network spec (ports, image, options) changed
    POD_REBUILD = "pod-rebuild"  # an app container stopped/recreated with a new network
    NOT_STARTED = "not-started"  # its last instance was created but never started
    NOT_REPLACED = "not-replaced"  # podsync stopped its last instance; nothing replaced it
    # stops
    DUPLICATE = "duplicate"  # a second running instance of one pod container
    NOT_IN_SPEC = "not-in-spec"  # a container whose name left the pod spec
    POD_NOT_DESIRED = "pod-not-desired"  # the pod left the desired state
    POD_COMPLETED = "pod-completed"  # nothing of the pod runs or will run: stop net
    # a container that ran when its pod's network container died (computePodActions): a
    # failed run; under Never the pod has failed
    NETWORK_LOST = "network-lost"
    # waits
    BACK_OFF = "back-off"  # crash-loop back-off before the next restart
    IMAGE_NEVER_PULL = "image-never-pull"  # absent image, pull policy Never
    # a pull of the image for this pod failed a short while ago: no pull until its
    # back-off ends (the kubelet's ImagePullBackOff, 10 s doubling to 300 s)
    IMAGE_PULL_BACK_OFF = "image-pull-back-off"
    # runAsNonRoot and the image would run as root (the kubelet's verifyRunAsNonRoot,
    # CreateContainerConfigError): not created until the pod or the image changes
    RUN_AS_NON_ROOT = "run-as-non-root"
    # a ConfigMap or Secret key its env reads is not in the sources (the kubelet's
    # CreateContainerConfigError): not created until the sources hold it
    CONFIG_MISSING = "config-missing"
    # the create needs the image's user (runAsNonRoot, runAsGroup alone) and the image
    # is not present yet, or the runtime does not report its user
    IMAGE_USER_UNKNOWN = "image-user-unknown"
    # pulls
    IMAGE_ABSENT = "image-absent"
    # no pull policy given and the tag is latest (or none): the default is Always
    # (SetDefaults_Container)
    IMAGE_LATEST = "image-latest"
    PULL_ALWAYS = "pull-always"
    # garbage collection
    GC_EXITED = "gc-exited"  # beyond the exited instances kept per pod container
    GC_NOT_DESIRED = "gc-not-desired"  # exited, and its pod or container is not desired
    GC_GLOBAL_CAP = "gc-global-cap"
    DANGLING_IMAGE = "dangling-image"
    ORPHANED_POD_DIR = "orphaned-pod-dir"
    # rejections
    DUPLICATE_POD = "duplicate-pod"
    INVALID_POD = "invalid-pod"  # a name or uid that cannot be written into names/paths
    HOST_PORT_CONFLICT = "host-port-conflict"
    PRIVILEGED_NOT_ALLOWED = "privileged-not-allowed"
    HOST_PATH_NOT_ALLOWED = "host-path-not-allowed"
    HOST_NAMESPACE_NOT_ALLOWED = "host-namespace-not-allowed"  # hostNetwork/PID/IPC
    SYSCTL_NOT_ALLOWED = "sysctl-not-allowed"  # node-level, or unsafe and not allowed
    # a Pod Security check of the level fails (podsync.planner._pod_security) that has
    # no reason of its own above: capabilities, seccomp, AppArmor, restricted rules
    POD_SECURITY = "pod-security"
    # the pod's requests do not fit in what the node has left: the kubelet's own reasons
    # (predicate.go, "OutOf" + the resource's name), as its status shows them
    OUT_OF_CPU = "OutOfcpu"
    OUT_OF_MEMORY = "OutOfmemory"
    # the pod needs an optional capability the runtime lacks (podsync.planner._capabilities)
    MISSING_CAPABILITY = "missing-capability"
    # the pod's containers carry another scope's label (PlanOptions.scope): not taken
    # over by an unscoped or a named plan (podsync.planner._scope)
    SCOPE_CONFLICT = "scope-conflict"
    # waits (pod-wide)
    SCHEDULING_GATED = "scheduling-gated"  # the pod has schedulingGates: not ready to run
    # init containers (kubelet-modern.md §3)
    INIT_PENDING = "init-pending"  # wait: an init container before it has not finished
    INIT_FAILED = "init-failed"  # stop a sidecar: an init container failed under Never
    INIT_PURGED = "init-purged"  # remove an init instance from before the pod was rebuilt
    # volume files (configMap, secret, downwardAPI volumes; kubelet-modern.md §9)
    VOLUME_MISSING = "volume-missing"  # write: the volume's files were never written
    VOLUME_CHANGED = "volume-changed"  # rewrite: an object (or pod field) they show changed
    # named volumes (issue 14)
    CLAIM_FIRST_USE = "claim-first-use"  # create a claim's volume: the first container mounts it
    CLAIM_FS_GROUP = "claim-fs-group"  # set a claim's root up for the pod's fsGroup (issue 27)
    # pod state in the engine (issue 18)
    POD_STATE_FIRST_USE = "pod-state-first-use"  # create: a container's termination file
    ORPHANED_POD_VOLUME = "orphaned-pod-volume"  # remove: its pod is no longer desired
    ORPHANED_RECORD = "orphaned-record"  # remove a record volume: its container is gone
    # record volumes of configMap, secret and downwardAPI volumes (podsync.spec._content_records)
    VOLUME_RECORDED = "volume-recorded"  # create: files that only the volume's own file records
    STALE_RECORD = "stale-record"  # remove a record volume that a newer one replaced
    # emptyDir volumes as engine volumes (issue 18)
    EMPTY_DIR_FIRST_USE = "empty-dir-first-use"  # create: the first container mounts it
    # create, and copy in the host directory an earlier podsync kept the volume in
    EMPTY_DIR_MIGRATED = "empty-dir-migrated"


#: The stop record (``ObservedContainer.stopped_by_podsync``) of a container that apply
#: stopped because its postStart handler failed. Stops that a ``Kill`` makes are
#: recorded with the kill's ``Reason`` value.
STOP_POST_START_FAILED = "post-start-failed"

# Stop records of instances podsync killed because they failed, and what they say: such
# an instance is a failed run, whatever code the stopped process exited with (it may well exit 0 on
# SIGTERM). Every other stop record is of an instance podsync stopped for its own
# reasons (to replace it, to rebuild the pod, ...): that instance did not end by itself,
# so it is not a run at all.
FAILED_STOPS: Mapping[str, str] = {
    Reason.UNHEALTHY.value: "liveness probe failed",
    STOP_POST_START_FAILED: "postStart handler failed",
    Reason.NETWORK_LOST.value: "its pod's network container died",
}


def _one_network(spec: CreateSpec, attribute: attrs.Attribute[str], value: str) -> None:
    if value and spec.join:
        raise ValueError(
            f"a container that joins {spec.join!r}'s network has no network of its own, "
            f"got network {value!r}"
        )


def _one_ipc(spec: CreateSpec, attribute: attrs.Attribute[str], value: str) -> None:
    if value and (spec.ipc_shareable or spec.security.host_ipc):
        raise ValueError(
            f"a container that joins {value!r}'s IPC namespace has none of its own to "
            "share, nor the host's"
        )


@attrs.frozen
class CreateSpec:
    """Everything a runtime needs to create and start one container.

    Runtime-neutral: the fields say what the container is, in Kubernetes' and the
    operating system's terms, never an engine's spelling; each runtime translates them
    (``podsync.docker`` does in ``podsync.runtime.docker._api.docker_create_args``).
    Empty strings, empty tuples, zeros and ``None`` mean "unset": the image's or the
    engine's default.

    Attributes:
        name: the container's name, unique on the engine; the plan chooses it, so a
            plan needs no ids that do not exist yet.
        image: the image reference to run (present: pulls are separate actions).
        labels: string labels the runtime stores and lists back unchanged
            (``ObservedContainer.labels``): podsync's whole record of the container.
        command: the executable and its arguments, replacing the image's entrypoint
            (Kubernetes ``command``); the image's arguments are then dropped too.
        args: the arguments, replacing the image's (Kubernetes ``args``).
        env: ``NAME=value`` environment entries, in order (a later one wins).
        working_dir: the process's working directory.
        hostname: the hostname of a container with a network of its own.
        network: the network of a container that has its own (``join`` empty): ``""``
            the engine's default network, ``"none"`` loopback only, ``"host"`` the
            host's network namespace, ``"bridge"`` or any other word a network of that
            name on the engine. Only a pod's network container has one.
        join: the name of the container whose network namespace this one shares (the
            pod's network container, by the name its own spec gave it: it need not
            exist when the create is planned, only when the container starts). An app
            container joins; it then has no ``network``, ``hostname``, ``dns`` or
            ``ports`` of its own (an engine refuses them, as Docker does).
        ports: the container ports published on the host (``PortMapping``).
        mounts: host paths made visible in the container (``Mount``), in order.
        milli_cpu: the CPU weight in thousandths of a CPU - the CPU request, else the
            limit (the kubelet's rule, see ``Resources``); the runtime turns it into
            its engine's weight (Docker: ``podsync.cpu_shares``, the one conversion).
            0, no request nor limit, is the smallest weight there is (2 shares), not
            the engine's default.
        memory: the memory limit in bytes (never a request).
        privileged: run with every capability and every device of the host.
        dns: name servers for the container's resolv.conf, in order.
        dns_search: search domains for its resolv.conf, in order.
        directories: host directories the apply side creates (under the root
            directory) before the create: the emptyDir directories of a pod whose
            containers of an earlier podsync still bind them (emptyDir volumes are
            engine volumes otherwise, in ``volumes``).
        files: empty host files the apply side creates before the create (the
            termination-message file of plans made before it moved into the engine:
            ``file_mounts``).
        post_start: the handler apply runs once the container started.
        pre_stop: the handler run before the container is stopped, when apply stops
            it because its postStart handler failed (as any other stop, see ``Kill``).
        stop_timeout: the grace period of that stop, in seconds.
        cpu_limit: the CPU limit in thousandths of a CPU: a hard cap on CPU time (Docker:
            a CFS quota per period of ``podsync.CPU_PERIOD``, ``podsync.cpu_quota``).
        domainname: the domain of a container with a network of its own: with
            ``hostname``, its fully qualified name.
        host_aliases: extra ``/etc/hosts`` entries of a container with a network of its
            own (its joiners share its hosts file).
        tty: give the process a terminal.
        stdin: keep the process's standard input open.
        stdin_once: close it once the first attached client detaches.
        security: the process's user and groups, capabilities, seccomp and AppArmor
            profiles, sysctls and shared namespaces (``ContainerSecurity``); its
            default asks for nothing beyond the engine's defaults.
        tmpfs: in-memory filesystems the engine mounts for this container alone
            (``TmpfsMount``: emptyDir volumes with ``medium: Memory``), in order.
        volumes: named engine volumes mounted in the container (``NamedVolumeMount``:
            ``persistentVolumeClaim`` and on-disk ``emptyDir`` volumes), in order. The
            engine creates one that does not exist, unlabelled: a plan creates its
            volumes first (``CreateVolume``).
        file_mounts: single files of named engine volumes bound in the container
            (``VolumeFileMount``: the termination-message file, in the pod's state
            volume), in order. The apply side writes each file, empty, before the
            create (``VolumeRuntime.write_volume``); the volume exists by then (a plan creates
            it first).
        memory_swap: the limit of memory and swap together, in bytes: equal to
            ``memory`` (the planner's choice for every memory limit), the container
            gets no swap beyond its limit, as the kubelet's default NoSwap behaviour;
            0 leaves the engine's default (Docker: twice ``memory``). An engine
            refuses one without ``memory``, or under it.
        oom_score_adj: the kernel's OOM score adjustment of the container's processes,
            -1000 to 1000 (higher: killed first when the host runs out of memory); 0
            leaves the engine's default (0). The planner sets it from the pod's QoS
            class (``podsync.spec._qos``).
        ipc_shareable: other containers may join this container's IPC namespace (the
            pod's network container, which holds the pod's IPC namespace).
        join_ipc: the name of the container whose IPC namespace this one shares (the
            pod's network container, when it is ``ipc_shareable``): the pod's
            containers then share System V IPC and POSIX shared memory (``/dev/shm``),
            as the CRI's pod-level IPC namespace. Unlike ``join``, it must exist when
            the create runs (Docker resolves it then), and run, shareable, when the
            container starts.

    Raises:
        ValueError: both ``network`` and ``join`` are set; ``join_ipc`` is set with
            ``ipc_shareable`` or the host's IPC namespace.
    """

    name: str
    image: str
    labels: dict[str, str] = attrs.field(factory=dict, hash=False)
    command: tuple[str, ...] | None = None
    args: tuple[str, ...] | None = None
    env: tuple[str, ...] = ()
    working_dir: str = ""
    hostname: str = ""
    join: str = ""
    network: str = attrs.field(default="", validator=_one_network)
    ports: tuple[PortMapping, ...] = ()
    mounts: tuple[Mount, ...] = ()
    milli_cpu: int = 0
    memory: int = 0
    privileged: bool = False
    dns: tuple[str, ...] = ()
    dns_search: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    post_start: Handler | None = None
    pre_stop: Handler | None = None
    stop_timeout: int = 30
    cpu_limit: int = 0
    domainname: str = ""
    host_aliases: tuple[HostAlias, ...] = ()
    tty: bool = False
    stdin: bool = False
    stdin_once: bool = False
    security: ContainerSecurity = attrs.field(factory=ContainerSecurity)
    tmpfs: tuple[TmpfsMount, ...] = ()
    volumes: tuple[NamedVolumeMount, ...] = ()
    file_mounts: tuple[VolumeFileMount, ...] = ()
    memory_swap: int = 0
    oom_score_adj: int = 0
    ipc_shareable: bool = False
    join_ipc: str = attrs.field(default="", validator=_one_ipc)


@attrs.frozen
class Pull:
    """Pull ``image`` before any pod's actions; ``pods`` are the uids of the pods that
    need it (uids, not keys: two sources can hold pods of one ``namespace/name``)."""

    image: str
    reason: Reason
    message: str
    pods: tuple[str, ...] = ()


@attrs.frozen
class Create:
    """Create and start a container of the pod ``pod_uid``; ``pod`` is its
    ``namespace/name`` key, for people (two sources can hold one key)."""

    pod: str
    pod_uid: str
    container: str
    spec: CreateSpec
    reason: Reason
    message: str


@attrs.frozen
class Kill:
    """Stop a running container within ``timeout`` seconds of grace (the pod's
    ``terminationGracePeriodSeconds``, else ``PlanOptions.stop_timeout``; for a kill
    for a liveness or startup probe, that probe's own ``terminationGracePeriodSeconds``
    when it has one): its preStop
    handler runs first, with the grace period as its deadline, and the stop gets what
    is left of it (at least 2 s after a handler, as the kubelet's killContainer).
    ``pod_uid`` is the pod's identity; ``pod`` its key, for people.

    With ``record_stop``, apply first writes podsync's stop record of the container (its
    id, pod ``pod_uid`` and ``reason``, in the engine: ``podsync.spec._records``), so that
    later plans know the instance did not end by itself
    (``ObservedContainer.stopped_by_podsync``).

    A ``concurrent`` kill is part of a pod-wide stop (the kubelet's KillPod,
    killContainersWithSyncResult): apply runs it at the same time as the concurrent
    kills next to it in the pod's actions, so that the whole pod stops within one grace
    period instead of one per container. Each one still sends its stop signal only once
    the stops of the containers named in ``after`` (pod containers, ``container``) among
    those kills have ended - the kubelet's newTerminationOrdering: sidecars wait for the
    app containers and for the sidecars after them in the pod spec - and the time it
    waited comes out of its grace period, in whole seconds, as a preStop handler's does.
    Kills that are not concurrent run one after the other, in plan order.
    """

    pod: str
    pod_uid: str
    container: str
    id: str
    name: str
    timeout: int
    reason: Reason
    message: str
    pre_stop: Handler | None = None
    record_stop: bool = False
    concurrent: bool = False
    after: tuple[str, ...] = ()


@attrs.frozen
class Remove:
    """Remove an exited container of the pod ``pod_uid`` (``pod``: its key)."""

    pod: str
    pod_uid: str
    container: str
    id: str
    name: str
    reason: Reason
    message: str


@attrs.frozen
class Wait:
    """Nothing to do yet: ``seconds`` until the container may be (re)started
    (``pod_uid``: the pod; ``pod``: its key)."""

    pod: str
    pod_uid: str
    container: str
    seconds: float
    reason: Reason
    message: str


@attrs.frozen
class RemovePodDir:
    """Tear down a pod's directory under the root directory (its emptyDir volumes and
    termination-message files)."""

    pod_uid: str
    path: str
    reason: Reason
    message: str


@attrs.frozen
class WriteVolume:
    """Write the files of the volume ``volume`` of pod ``pod_uid`` (``pod``: its key) -
    a configMap, secret or downwardAPI volume - into its directory ``path`` under the
    root directory, replacing what is there in one atomic swap (the kubelet's atomic
    writer: the ``..data`` symlink). Planned before the first container that mounts the
    volume is created, and again whenever ``content`` changed: the containers that
    mount it keep running and see the new files.

    ``fs_group``: the pod's fsGroup, which then owns the files (``None``: root's group).

    With ``engine_volume`` the files go into that named engine volume instead, through
    the engine (``VolumeRuntime.write_volume``, which finds its own way in: ``image``,
    the pod's network image, is no longer passed to it), and ``path`` is empty: the same
    layout written as the engine's archive API can (see
    ``podsync.spec._content_layout``): the new payload into the payload directory
    ``payload``, links for the top-level names not in ``linked`` (those the current
    payload has), ``..data`` pointed at ``payload``, and the ``previous`` payload (empty
    when not known) emptied. A path ``path`` is written only for containers made by an
    earlier podsync, which bind that host directory.
    """

    pod: str
    pod_uid: str
    volume: str
    path: str
    content: VolumeContent
    reason: Reason
    message: str
    fs_group: int | None = None
    engine_volume: str = ""
    image: str = ""
    payload: str = ""
    previous: str = ""
    linked: tuple[str, ...] = ()


@attrs.frozen
class RemoveImage:
    """Remove an image by id."""

    image_id: str
    reason: Reason
    message: str


@attrs.frozen
class CreateVolume:
    """Create the named engine volume ``volume`` with ``labels``, before the first
    container of pod ``pod_uid`` (``pod``: its key) that mounts it: the engine would
    make a missing volume itself, unlabelled, and it would not be podsync's. Creating a
    volume that exists by then changes nothing, so every pod that needs a missing
    volume has its own ``CreateVolume``. ``container`` is empty: the volume is the
    pod's, not one container's.

    An ``emptyDir``'s volume is set up once created, through the engine
    (``VolumeRuntime.write_volume``; ``image``, the pod's network image, which the plan
    makes present, says a set-up is planned, and is no longer passed to the runtime,
    which finds its own way in): its root gets ``mode`` (permission bits, setgid
    included) and, unless ``gid`` is ``None``, the group ``gid`` (the pod's fsGroup).
    ``copy_from`` names the host directory an earlier podsync kept the volume's data in
    (``<root>/<pod uid>/volumes/empty/<volume>``): its content is copied into the volume
    first, and the directory is removed once copied (empty: nothing to copy).
    """

    pod: str
    pod_uid: str
    volume: str
    labels: dict[str, str] = attrs.field(hash=False)
    reason: Reason
    message: str
    container: str = ""
    mode: int | None = None
    gid: int | None = None
    image: str = ""
    copy_from: str = ""


@attrs.frozen
class RemoveVolume:
    """Remove the named engine volume ``volume`` that podsync made for pod ``pod_uid``
    (``pod``: its key, empty when no container of the pod is left to say it): the pod's
    state volume or one of its ``emptyDir`` volumes once the pod is no longer desired
    and none of its containers is left, or a record of a container that is gone
    (``podsync.spec._records``). Planned only for a volume podsync made for a pod (its
    ``LABEL_VOLUME_KIND`` says so), never a claim's or one podsync does not own; an
    engine refuses to remove a volume a container still mounts, and a missing one
    counts as removed."""

    pod: str
    pod_uid: str
    volume: str
    reason: Reason
    message: str
    container: str = ""


#: An action of one pod (``PodPlan.actions``), run in order with the pod's others.
PodAction = Create | Kill | Remove | Wait | RemovePodDir | WriteVolume | CreateVolume | RemoveVolume
#: Any action of a plan: the pulls, a pod's actions and the engine-wide cleanup.
Action = Pull | PodAction | RemoveImage


@attrs.frozen
class PodPlan:
    """The actions for one pod, in the order they must run."""

    pod: str
    uid: str
    full_name: str
    actions: tuple[PodAction, ...]


@attrs.frozen
class Rejection:
    """A desired pod that was not admitted, and why; nothing is done to it."""

    pod: str
    uid: str
    reason: Reason
    message: str


@attrs.frozen
class Plan:
    """What to do to make the engine match the desired pods.

    Attributes:
        pulls: image pulls, run before every pod's actions.
        pods: per-pod actions, sorted by pod key; a pod with nothing to do is absent.
        cleanup: engine-wide actions run last (dangling images).
        rejected: desired pods that were not admitted.
        fingerprint: a digest of the observed state the plan acts on
            (``plan_fingerprint``); a saved plan should only be applied to an engine
            that still has this fingerprint.
        format_version: the version of the plan's JSON form.
        options: the options the plan was made with. ``apply`` takes the root
            directory from here, so a plan cannot be applied under another one.
        sources: where the Secrets of a plan that uses Secret values are read again
            (``podsync plan --out`` records its sources, absolute): a saved plan holds
            such values by reference and keyed digest only (``podsync.model._secrets``), and
            ``podsync apply --plan`` puts them back from here, checking each digest.
            Empty otherwise, and left out of the JSON then.
    """

    pulls: tuple[Pull, ...] = ()
    pods: tuple[PodPlan, ...] = ()
    cleanup: tuple[RemoveImage, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    fingerprint: str = ""
    format_version: str = PLAN_FORMAT_VERSION
    options: PlanOptions = attrs.field(factory=PlanOptions)
    sources: tuple[str, ...] = ()

    @property
    def actions(self) -> tuple[Action, ...]:
        """Every action, in the order apply runs them (pods in parallel in between)."""
        out: list[Action] = list(self.pulls)
        for pod in self.pods:
            out.extend(pod.actions)
        out.extend(self.cleanup)
        return tuple(out)

    @property
    def has_changes(self) -> bool:
        """Whether applying the plan would change anything (waits change nothing)."""
        return any(not isinstance(a, Wait) for a in self.actions)

    def describe(self) -> str:
        """The plan as text for people: one line per action, grouped by pod."""
        lines: list[str] = []
        if self.pulls:
            lines.append("images:")
            lines.extend(f"  {a.message}" for a in self.pulls)
        for pod in self.pods:
            lines.append(f"pod {pod.pod}:" if pod.pod else f"pod uid {pod.uid}:")
            lines.extend(f"  {a.message}" for a in pod.actions)
        if self.cleanup:
            lines.append("engine:")
            lines.extend(f"  {a.message}" for a in self.cleanup)
        for r in self.rejected:
            lines.append(f"warning: rejected pod {r.pod}: {r.message}")
        lines.append(self.summary())
        return "\n".join(lines)

    def summary(self) -> str:
        """The summary line: ``Plan: 1 to pull, 3 to create.``, or what "no changes"
        means (``No changes now; 2 container(s) waiting.`` when only waits are left;
        never "the engine matches" while a rejected pod does not run)."""
        if not self.has_changes:
            waits = sum(isinstance(a, Wait) for a in self.actions)
            if waits:
                return f"No changes now; {waits} container(s) waiting."
            if len(self.rejected) == 1:
                return "No changes, but 1 pod is rejected and does not run (see the warnings)."
            if self.rejected:
                return (
                    f"No changes, but {len(self.rejected)} pods are rejected and do not run "
                    "(see the warnings)."
                )
            return "No changes. The engine matches the desired pods."
        counts: dict[str, int] = {}
        for action in self.actions:
            verb = VERBS[type(action)]
            counts[verb] = counts.get(verb, 0) + 1
        return "Plan: " + ", ".join(f"{n} to {verb}" for verb, n in counts.items()) + "."

    def render(self) -> str:
        """The plan as the command line shows it: grouped by pod, one line per action
        with its reason code in brackets and container ids cut to 12 characters, then
        the summary line. Rejected pods are not in it (the command line reports them as
        warnings; ``describe`` lists them)."""
        lines: list[str] = []

        def add(action: Action) -> None:
            lines.append(f"  {shorten_ids(action.message)}  [{action.reason.value}]")

        if self.pulls:
            lines.append("Images:")
            for pull in self.pulls:
                add(pull)
        for pod in self.pods:
            lines.append(f"Pod {pod.pod}:" if pod.pod else f"Pod uid {pod.uid}:")
            for action in pod.actions:
                add(action)
        if self.cleanup:
            lines.append("Engine:")
            for removal in self.cleanup:
                add(removal)
        if lines:
            lines.append("")
        lines.append(self.summary())
        return "\n".join(lines)


#: What each kind of action does, as messages and the summary line word it: a ``Kill``
#: *stops* a container (gracefully, preStop first; "kill" is only its type's name, kept
#: from the seed), and apply reports it with the ``stopping`` event.
VERBS: Mapping[type, str] = {
    Pull: "pull",
    Create: "create",
    Kill: "stop",
    Remove: "remove",
    Wait: "wait",
    RemovePodDir: "tear down",
    WriteVolume: "write files",
    RemoveImage: "remove image",
    CreateVolume: "create volume",
    RemoveVolume: "remove volume",
}

# A full 64-hex-digit container or image id, cut to the 12 digits people know.
_LONG_ID = re.compile(r"\b([0-9a-f]{12})[0-9a-f]{52}\b")


def shorten_ids(text: str) -> str:
    """``text`` with every full 64-digit id cut to its first 12 digits (as ``docker ps``
    shows them)."""
    return _LONG_ID.sub(r"\1", text)
