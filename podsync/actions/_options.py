"""Planning options and policies: everything besides desired and observed state that
shapes a plan (``PlanOptions``, ``GCPolicy``, ``BackOffPolicy``, ``DEFAULT_NETWORK_IMAGE``,
the Pod Security level, the host paths admission allows and the runtime's optional
capabilities, ``Capability``).

Contract: frozen values with defaults, no behaviour beyond ``BackOffPolicy.delay``
(arithmetic) and ``AllowedHostPath``'s normalisation of its path. The planner reads
them; a ``Plan`` carries the options it was made with, so the apply side reads them too.

May import: the model and pure helpers (``_volumes`` for the default root directory),
``attrs``. Never the planner, the runtime or anything that does I/O.
"""

from __future__ import annotations

import enum
import posixpath
import re
from collections.abc import Iterable

import attrs

from podsync.model._pod import ResourceList
from podsync.spec._backoff import doubling
from podsync.spec._volumes import DEFAULT_ROOT_DIR

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "DEFAULT_NETWORK_IMAGE",
    "NODE_SCOPE",
    "AllowedHostPath",
    "BackOffPolicy",
    "Capability",
    "GCPolicy",
    "PlanOptions",
    "PodSecurityLevel",
]

#: The image of each pod's network container unless ``PlanOptions.network_image`` says
#: otherwise: the upstream pause image (the seed's was ``kubernetes/pause:latest``).
DEFAULT_NETWORK_IMAGE = "registry.k8s.io/pause:3.10"

# The continuous loop's settings (podsync.loop._reconciler), here rather than in the loop's
# module so that the command line's parser does not import the loop to show them.
#: The seed's periods (reference §2.2, §2.6): sync every 10 s, sources every 20 s,
#: garbage collection every minute.
DEFAULT_SYNC_PERIOD = 10.0
DEFAULT_SOURCE_PERIOD = 20.0
DEFAULT_GC_PERIOD = 60.0
#: Seconds the syncs in progress get to finish when the loop stops.
DEFAULT_SHUTDOWN_TIMEOUT = 10.0
#: Seconds between two usage readings of the loop (``podsync.loop._usage_report``): the
#: metrics server's resolution (its ``--metric-resolution``, 15 s); cAdvisor reads a
#: container's cgroup every 10 s under the kubelet (``defaultHousekeepingInterval``).
DEFAULT_USAGE_PERIOD = 15.0


@attrs.frozen
class GCPolicy:
    """Garbage collection of exited containers and images.

    Attributes:
        max_per_container: exited instances kept per pod container (the seed's
            ``maxContainerCount``, default 5); ``None`` disables count-based collection.
            The exited instance of a desired container that ended last (or that the
            plan stops) is always kept, by this and by ``max_total``, because the
            restart policy is judged on it.
        min_age: seconds an exited container is kept at least (the seed's
            ``minimumGCAge``, default 1 minute); 0 means no minimum.
        max_total: a global cap on exited containers podsync owns; ``None`` is no cap.
        remove_dangling_images: remove untagged images no container uses (the seed's
            GarbageCollectImages).
    """

    max_per_container: int | None = 5
    min_age: float = 60.0
    max_total: int | None = None
    remove_dangling_images: bool = False


@attrs.frozen
class BackOffPolicy:
    """Crash-loop back-off between restarts of an exiting container.

    The first restart is immediate; then ``initial`` seconds, doubling up to ``maximum``
    (the modern kubelet's 10 s and 5 min). A container that ran for ``reset_after``
    seconds before exiting starts over.
    """

    initial: float = 10.0
    maximum: float = 300.0
    reset_after: float = 600.0

    def delay(self, restarts: int) -> float:
        """Seconds to wait before restart number ``restarts + 1``."""
        return doubling(self.initial, self.maximum, restarts)


class PodSecurityLevel(enum.StrEnum):
    """A level of the Kubernetes Pod Security Standards: what admission lets a pod ask
    of the node (``podsync.planner._pod_security`` holds the checks of each level).

    The levels are cumulative: ``PRIVILEGED`` checks nothing, ``BASELINE`` prevents the
    known privilege escalations (podsync's default, with host ports allowed),
    ``RESTRICTED`` adds the hardening best practices.
    """

    PRIVILEGED = "privileged"
    BASELINE = "baseline"
    RESTRICTED = "restricted"


def _host_path_prefix(value: str) -> str:
    # Compared by whole path components: normalised once, here, so that ``/data/``,
    # ``/data/.`` and ``/data`` are one prefix.
    if not value.startswith("/"):
        raise ValueError(f"an allowed host path must be absolute, got {value!r}")
    return posixpath.normpath(value)


@attrs.frozen
class AllowedHostPath:
    """A host directory hostPath volumes may use (PodSecurityPolicy's
    ``allowedHostPaths`` entry): ``path_prefix`` and everything under it, compared by
    whole path components after normalisation (``/srv/data`` admits ``/srv/data/x``,
    not ``/srv/database`` nor ``/srv/data/../etc``). With ``read_only``, every mount of
    such a volume must be read-only; a writable one rejects the pod, as PodSecurityPolicy
    did (a volume that another, writable entry also admits may be mounted writable).
    An absolute path is required (``ValueError`` otherwise)."""

    path_prefix: str = attrs.field(converter=_host_path_prefix)
    read_only: bool = False


class Capability(enum.StrEnum):
    """An optional capability of a runtime, beyond the core every runtime has
    (``podsync.runtime``: each is a protocol of its own, discovered with ``isinstance``).

    The plan is made for the capabilities in ``PlanOptions.capabilities``: a pod that
    needs one the runtime lacks is rejected, naming it (``podsync.planner._capabilities``).
    """

    VOLUMES = "volumes"  # VolumeRuntime: named volumes and the files in them
    FILES = "files"  # FileRuntime: read a file of a container
    EXEC = "exec"  # ExecRuntime: run a command in a container
    LOGS = "logs"  # LogRuntime: what a container wrote
    EVENTS = "events"  # EventRuntime: the engine's container events
    NODE = "node"  # NodeRuntime: the host's capacity, a container's address


#: Every capability: what a plan assumes unless told otherwise.
ALL_CAPABILITIES = frozenset(Capability)


def _capability_set(value: Iterable[str]) -> frozenset[Capability]:
    # Any iterable of the names (``{"volumes", "exec"}``); an unknown name is a
    # ValueError, never a capability silently assumed or dropped.
    return frozenset(Capability(name) for name in value)


#: The scope of a node agent (``PlanOptions.scope``; ``podsync run``'s default, the CLI's
#: ``--scope node``): it owns every podsync pod on the engine, whatever its scope label,
#: and removes each one that is not desired - the kubelet's rule (its pod sources are
#: the whole node's). A reserved word: no named scope may be called so, and it is never
#: written as a label.
NODE_SCOPE = "node"

# A scope's name: what a Docker label value and a compose project name both take, short
# enough to read in ``docker ps``.
_SCOPE_NAME = re.compile(r"[a-z0-9]([-a-z0-9_.]*[a-z0-9])?")
_SCOPE_MAX = 63


def scope_problem(scope: str) -> str | None:
    """Why ``scope`` is not a scope (``PlanOptions.scope``); ``None`` when it is one:
    ``NODE_SCOPE``, or a name of at most 63 lower-case letters, digits, ``-``, ``_``
    and ``.`` that starts and ends with a letter or a digit."""
    if scope == NODE_SCOPE:
        return None
    if len(scope) > _SCOPE_MAX or _SCOPE_NAME.fullmatch(scope) is None:
        return (
            f"bad scope {scope!r}: a scope is {NODE_SCOPE!r} or a name of at most "
            f"{_SCOPE_MAX} lower-case letters, digits, '-', '_' and '.', starting and "
            "ending with a letter or a digit"
        )
    return None


def _check_scope(
    options: PlanOptions, attribute: attrs.Attribute[str | None], value: object
) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"scope must be a str or None, got {type(value).__name__}")
    problem = scope_problem(value)
    if problem is not None:
        raise ValueError(problem)


@attrs.frozen
class PlanOptions:
    """Everything besides desired and observed state that shapes a plan.

    The options that shape containers - ``network_mode``, ``cluster_dns``,
    ``cluster_domain``, ``host_resolv_conf`` (as far as its name servers and search
    domains are used) and ``root_dir`` - are part of the compared specs: changing one
    rebuilds what it shapes (see ``canonical_spec`` and ``network_spec``).

    Attributes:
        network_image: the network (pause) container's image.
        network_mode: the network mode of each pod's network container: ``""`` is the
            engine's default (a bridge network, needed for host ports), ``none`` gives
            pods no network beyond loopback. App containers always join the pod's
            network container (``container:<net>``).
        cluster_dns: the cluster DNS server put first for ``ClusterFirst`` pods.
        cluster_domain: the cluster domain; ``ClusterFirst`` pods search
            ``<namespace>.<domain>`` and ``<domain>`` before the host's domains.
        host_resolv_conf: the host's resolv.conf contents, whose nameservers and
            search domains follow the cluster's (seed applyClusterDNS). Loopback name
            servers (systemd-resolved's ``127.0.0.53`` stub) are left out unless
            ``network_mode`` is ``host``: a pod cannot reach the host's loopback from
            its own network namespace. On a systemd-resolved host, pass
            ``/run/systemd/resolve/resolv.conf`` (``only_loopback_nameservers`` tells).
        pod_security: the Pod Security level every pod is admitted at (baseline by
            default; ``podsync.planner._pod_security``): a pod that fails any check of
            the level is rejected, with every failed check named. The options below
            that allow something open one check each, by name, at any level.
        allow_privileged: whether privileged containers may run (seed capabilities; the
            ``privileged`` check).
        allowed_host_paths: the host directories hostPath volumes may use (the
            ``hostPath volumes`` check, and ``restricted volume types`` for hostPath): a
            pod with a hostPath volume outside all of them is rejected, unless the level
            is ``privileged``. Empty by default: no hostPath at all.
        allowed_capabilities: capabilities beyond the baseline set (and, at the
            restricted level, beyond ``NET_BIND_SERVICE``) that containers may add,
            in Kubernetes' spelling; ``ALL`` allows every one (PodSecurityPolicy's
            ``allowedCapabilities``).
        allow_unconfined: whether seccomp and AppArmor profiles may be ``Unconfined``
            (pod or container level).
        host_path_prefixes: deprecated, to be removed in the next release: prefixes
            hostPath volumes may use read-write, read as ``allowed_host_paths``
            entries. ``None`` (the default) adds none; it no longer allows every path.
        adopt_2014_containers: take over containers a 2014 kubelet left behind: those
            without labels whose name is exactly the seed's format
            (``parse_2014_container_name``). Off by default: such a name proves nothing
            about who made the container, and deletions are on by default.
        scope: what the plan owns, so what it may remove of the pods it was not given
            (``podsync.planner._scope``):

            * ``None`` (the default): only the pods given. Nothing of another pod is
              removed (``kubectl apply`` without ``--prune``); the stale instances
              of the pods given still are. What it creates carries no scope label.
            * ``NODE_SCOPE``: the whole node, as the kubelet: every podsync pod on the
              engine, whatever its scope label, and each one not desired is removed
              (``podsync run``'s default). Writes no label.
            * a name (compose's project, Terraform's state): every container and named
              volume the plan creates is labelled ``LABEL_SCOPE=<name>``; the pods so
              labelled that are not desired are removed, with their volumes, and
              another scope's pods are never touched.

            A desired pod whose containers carry another scope's label is rejected
            (``scope-conflict``) unless the scope is ``NODE_SCOPE``, which adopts it.
            Containers without the label (an unscoped sync's, ``podsync run``'s, an
            earlier podsync's) are adopted by whichever scope desires their pod, and
            removed only by ``NODE_SCOPE`` (or ``podsync.down`` of their pod). A name
            that is not a scope is a ``ValueError`` (``scope_problem``).
        allow_deletions: whether containers of pods that are not desired may be stopped
            and removed, and their directories torn down (the seed's sourcesReady);
            turn it off when the desired state may be incomplete. Off, nothing of a pod
            that is not desired is removed, in any scope.
        ready_sources: when set, deletions are further limited to pods whose source is
            in the set: the sources that have reported completely (the kubelet's
            per-source readiness, a refinement of the seed's global flag).
        root_dir: the host directory holding per-pod data: emptyDir volumes and
            termination-message files, under ``<root_dir>/<pod uid>/``.
        stop_timeout: seconds a stopped container gets before it is killed, its preStop
            handler included, when its pod sets no terminationGracePeriodSeconds: 30,
            the Kubernetes API's default for that field (the seed used 10).
        gc: garbage-collection policy.
        back_off: crash-loop back-off policy.
        allow_host_namespaces: whether pods may use the host's namespaces
            (``hostNetwork``, ``hostPID``, ``hostIPC``); a pod that asks for one is
            rejected otherwise (gated like ``allow_privileged``: such a pod sees, and
            can disturb, the whole host).
        allowed_unsafe_sysctls: namespaced sysctls beyond the kubelet's safe set that
            pods may set: names, or prefixes ending in ``*`` (``net.core.*``), as the
            kubelet's ``--allowed-unsafe-sysctls``. Sysctls that are not namespaced are
            never allowed.
        memory_capacity: the memory of the engine's host in bytes (``docker info``'s
            ``MemTotal``), from which a Burstable container's OOM score adjustment is
            computed (``GetContainerOOMScoreAdjust``, ``podsync.spec._qos``); 0 when not
            known (``plan`` then takes the memory of its ``capacity``, when given): such a
            container then gets 999, just under a BestEffort one.
        system_reserved: what admission keeps from the pods for the system, as the
            kubelet's ``--system-reserved`` (``cpu`` in milli-CPU, ``memory`` in
            bytes): a pod is admitted only when its requests fit in the engine's
            capacity (``plan(..., capacity=...)``) less this and less what the pods
            admitted before it request (reasons ``OutOfcpu``, ``OutOfmemory``).
        capabilities: the runtime's optional capabilities (``Capability``; every one by
            default). ``sync`` and ``observe`` keep only those the runtime has. A pod
            that needs one that is missing is rejected (reason ``missing-capability``,
            naming it); without ``volumes``, the pods' containers get no
            termination-message file (``podsync.planner._capabilities``).
    """

    network_image: str = DEFAULT_NETWORK_IMAGE
    network_mode: str = ""
    cluster_dns: str = ""
    cluster_domain: str = ""
    host_resolv_conf: str = ""
    allow_privileged: bool = False
    host_path_prefixes: tuple[str, ...] | None = None
    pod_security: PodSecurityLevel = PodSecurityLevel.BASELINE
    allowed_host_paths: tuple[AllowedHostPath, ...] = ()
    allowed_capabilities: tuple[str, ...] = ()
    allow_unconfined: bool = False
    adopt_2014_containers: bool = False
    allow_deletions: bool = True
    ready_sources: frozenset[str] | None = None
    root_dir: str = DEFAULT_ROOT_DIR
    stop_timeout: int = 30
    gc: GCPolicy = GCPolicy()
    back_off: BackOffPolicy = BackOffPolicy()
    allow_host_namespaces: bool = False
    allowed_unsafe_sysctls: tuple[str, ...] = ()
    memory_capacity: int = 0
    system_reserved: ResourceList = attrs.field(factory=ResourceList)
    capabilities: frozenset[Capability] = attrs.field(
        default=ALL_CAPABILITIES, converter=_capability_set
    )
    scope: str | None = attrs.field(default=None, validator=_check_scope)


def with_scope(options: PlanOptions | None, scope: str | None) -> PlanOptions:
    """``options`` (``PlanOptions()`` when ``None``) in ``scope`` when one is given:
    what the ``scope=`` keyword of ``sync``, ``Reconciler`` and ``down`` does
    (``ValueError`` for a name that is not a scope)."""
    options = options or PlanOptions()
    return options if scope is None else attrs.evolve(options, scope=scope)
