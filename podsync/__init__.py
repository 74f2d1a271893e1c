"""podsync: the 2014 kubelet's pod sync as a library.

A pure core - naming, hashing, port bindings, CPU shares, resolv.conf, host-port
conflicts and ``plan`` - that does no I/O at all, and an imperative shell that observes
an engine and applies plans through a small runtime protocol.

The public API an orchestrator syncs pods with is re-exported here by name, and
``__all__`` lists it: a deliberate surface, checked by
``tests/unit/test_exported_members.py``. Beside it, the public faces of one concern each:
``podsync.labels`` (the container label keys), ``podsync.docker`` (the Docker runtime),
``podsync.testing`` (``FakeRuntime``), ``podsync.aio`` (asyncio, on threads),
``podsync.cli`` (the command line), ``podsync.exceptions`` (the errors),
``podsync.runtime`` (what a runtime author implements), ``podsync.status`` (pod status
and operating pods), ``podsync.prober`` (the prober's rules), ``podsync.fleet`` (hosts,
fleets, publishing) and ``podsync.spec`` (the naming and hashing rules). Everything
else lives in private modules (``_*``) of the folders, whose ``__all__`` is what they
offer the rest of podsync, not a promise to users.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# Every public name is imported when it is first used (``__getattr__`` below), so that
# ``import podsync`` loads no module of podsync's and none of the libraries it uses
# (issue 33: at most 80 ms, it took 87-166 ms with the model, the planner and attrs
# loaded up front): ``import podsync.cli`` or ``from podsync import plan`` loads what
# that name needs and nothing else. ``from podsync import X``, ``dir(podsync)`` and
# ``__all__`` are unchanged; type checkers and the API reference read the imports below.
if _TYPE_CHECKING:
    #: The installed version, from the package metadata (``importlib.metadata``);
    #: ``"0+unknown"`` for a source tree that was never installed. Read on first use.
    __version__: str
    # isort: off
    from podsync.exceptions import (
        ActionError,
        ConfigError,
        Conflict,
        EngineUnavailable,
        EtcdError,
        NameConflict,
        NotFound,
        PodsyncError,
        Problem,
        PublishConflict,
        RuntimeCallError,
    )
    from podsync.model._pod import (
        Container,
        DNSPolicy,
        EnvVar,
        Handler,
        HostAlias,
        HTTPGetAction,
        HTTPHeader,
        Lifecycle,
        ObservedContainer,
        ObservedImage,
        ObservedVolume,
        Pod,
        Port,
        PortProtocol,
        Probe,
        PullPolicy,
        ResourceList,
        Resources,
        RestartPolicy,
        TCPSocketAction,
        TerminationMessagePolicy,
        derive_pod_uid,
        pod_full_name,
    )
    from podsync.model._pulls import PullFailure
    from podsync.model._usage import ContainerUsage, PodUsage, UsageFigures
    from podsync.model._volume import (
        ClaimSource,
        MemoryMedium,
        Volume,
        VolumeContent,
        VolumeFile,
        VolumeKind,
        VolumeMount,
        WrittenVolume,
    )
    from podsync.spec._naming import (
        NETWORK_CONTAINER,
        ParsedName,
        container_name,
        parse_container_name,
    )
    from podsync.actions._options import (
        DEFAULT_NETWORK_IMAGE,
        NODE_SCOPE,
        AllowedHostPath,
        BackOffPolicy,
        GCPolicy,
        PlanOptions,
        PodSecurityLevel,
    )
    from podsync.actions._actions import (
        PLAN_FORMAT_VERSION,
        Action,
        Create,
        CreateSpec,
        CreateVolume,
        Kill,
        Plan,
        PodAction,
        PodPlan,
        Pull,
        Reason,
        Rejection,
        Remove,
        RemoveImage,
        RemovePodDir,
        RemoveVolume,
        Wait,
        WriteVolume,
    )
    from podsync.spec._ownership import Ownership, VolumeOwnership, ownership, volume_ownership
    from podsync.actions._fingerprint import plan_fingerprint
    from podsync.model._observation import Observation
    from podsync.planner._plan import plan
    from podsync.runtime._protocol import Runtime
    from podsync.spec._hashing import spec_hash
    from podsync.spec._ports import exposed_ports, port_bindings
    from podsync.planner._host_ports import filter_host_port_conflicts
    from podsync.spec._cpu import CPU_PERIOD, cpu_quota, cpu_shares
    from podsync.spec._resolv import ResolvConf, parse_resolv_conf
    from podsync.spec._volumes import DEFAULT_ROOT_DIR
    from podsync.model._secrets import SecretPart, SecretText
    from podsync.model._security import (
        Capabilities,
        PodSecurityContext,
        ProfileType,
        SecurityContext,
        SecurityProfile,
        Sysctl,
    )
    from podsync.actions._json import plan_from_json, plan_to_json
    from podsync.load._config import (
        DEFAULT_MAX_BYTES,
        NodeInfo,
        PodFileCache,
        load_pods,
        parse_pods,
    )
    from podsync.host._secret_key import host_secret_key
    from podsync.applier._apply import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS, apply
    from podsync.applier._results import ActionResult, ActionStatus, ApplyResult, Event, EventKind
    from podsync.loop._sync import SyncResult, sync
    from podsync.loop._observe import observe
    from podsync.loop._down import down
    from podsync.loop._reconciler import Reconciler
    from podsync.load._pod_set import PodSet
    from podsync.load._dump import dump_pods
    from podsync.loop._reporting import LoopNotice, NoticeKind
    from podsync.etcd._urls import EtcdOptions
    from podsync.load._sources import HttpOptions, shown_url
    from podsync.fleet._publish import PublishResult, publish
    from podsync.report._reporter import HostReporter
    from podsync.status._pod import (
        ContainerState,
        ContainerStatus,
        PodCondition,
        PodPhase,
        PodStatus,
        pod_status,
    )
    import podsync.labels as labels  # noqa: F401 (the submodule, shown on first use)
    # isort: on

#: The names imported on first use, by module (the ``_TYPE_CHECKING`` block above
#: lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.exceptions": (
        "ActionError",
        "ConfigError",
        "Conflict",
        "EngineUnavailable",
        "EtcdError",
        "NameConflict",
        "NotFound",
        "PodsyncError",
        "Problem",
        "PublishConflict",
        "RuntimeCallError",
    ),
    "podsync.model._pod": (
        "Container",
        "DNSPolicy",
        "EnvVar",
        "Handler",
        "HostAlias",
        "HTTPGetAction",
        "HTTPHeader",
        "Lifecycle",
        "ObservedContainer",
        "ObservedImage",
        "ObservedVolume",
        "Pod",
        "Port",
        "PortProtocol",
        "Probe",
        "PullPolicy",
        "ResourceList",
        "Resources",
        "RestartPolicy",
        "TCPSocketAction",
        "TerminationMessagePolicy",
        "derive_pod_uid",
        "pod_full_name",
    ),
    "podsync.model._pulls": ("PullFailure",),
    "podsync.model._usage": ("ContainerUsage", "PodUsage", "UsageFigures"),
    "podsync.model._volume": (
        "ClaimSource",
        "MemoryMedium",
        "Volume",
        "VolumeContent",
        "VolumeFile",
        "VolumeKind",
        "VolumeMount",
        "WrittenVolume",
    ),
    "podsync.spec._naming": (
        "NETWORK_CONTAINER",
        "ParsedName",
        "container_name",
        "parse_container_name",
    ),
    "podsync.actions._options": (
        "DEFAULT_NETWORK_IMAGE",
        "NODE_SCOPE",
        "AllowedHostPath",
        "BackOffPolicy",
        "GCPolicy",
        "PlanOptions",
        "PodSecurityLevel",
    ),
    "podsync.actions._actions": (
        "PLAN_FORMAT_VERSION",
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
    ),
    "podsync.spec._ownership": ("Ownership", "VolumeOwnership", "ownership", "volume_ownership"),
    "podsync.actions._fingerprint": ("plan_fingerprint",),
    "podsync.model._observation": ("Observation",),
    "podsync.planner._plan": ("plan",),
    "podsync.runtime._protocol": ("Runtime",),
    "podsync.spec._hashing": ("spec_hash",),
    "podsync.spec._ports": ("exposed_ports", "port_bindings"),
    "podsync.planner._host_ports": ("filter_host_port_conflicts",),
    "podsync.spec._cpu": ("CPU_PERIOD", "cpu_quota", "cpu_shares"),
    "podsync.spec._resolv": ("ResolvConf", "parse_resolv_conf"),
    "podsync.spec._volumes": ("DEFAULT_ROOT_DIR",),
    "podsync.model._secrets": ("SecretPart", "SecretText"),
    "podsync.model._security": (
        "Capabilities",
        "PodSecurityContext",
        "ProfileType",
        "SecurityContext",
        "SecurityProfile",
        "Sysctl",
    ),
    "podsync.actions._json": ("plan_from_json", "plan_to_json"),
    "podsync.load._config": (
        "DEFAULT_MAX_BYTES",
        "NodeInfo",
        "PodFileCache",
        "load_pods",
        "parse_pods",
    ),
    "podsync.host._secret_key": ("host_secret_key",),
    "podsync.applier._apply": ("DEFAULT_HOOK_TIMEOUT", "DEFAULT_WORKERS", "apply"),
    "podsync.applier._results": (
        "ActionResult",
        "ActionStatus",
        "ApplyResult",
        "Event",
        "EventKind",
    ),
    "podsync.loop._sync": ("SyncResult", "sync"),
    "podsync.loop._observe": ("observe",),
    "podsync.loop._down": ("down",),
    "podsync.loop._reconciler": ("Reconciler",),
    "podsync.load._pod_set": ("PodSet",),
    "podsync.load._dump": ("dump_pods",),
    "podsync.loop._reporting": ("LoopNotice", "NoticeKind"),
    "podsync.etcd._urls": ("EtcdOptions",),
    "podsync.load._sources": ("HttpOptions", "shown_url"),
    "podsync.fleet._publish": ("PublishResult", "publish"),
    "podsync.report._reporter": ("HostReporter",),
    "podsync.status._pod": (
        "ContainerState",
        "ContainerStatus",
        "PodCondition",
        "PodPhase",
        "PodStatus",
        "pod_status",
    ),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

__all__ = [
    "CPU_PERIOD",
    "DEFAULT_HOOK_TIMEOUT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_NETWORK_IMAGE",
    "DEFAULT_ROOT_DIR",
    "DEFAULT_WORKERS",
    "NETWORK_CONTAINER",
    "NODE_SCOPE",
    "PLAN_FORMAT_VERSION",
    "Action",
    "ActionError",
    "ActionResult",
    "ActionStatus",
    "AllowedHostPath",
    "ApplyResult",
    "BackOffPolicy",
    "Capabilities",
    "ClaimSource",
    "ConfigError",
    "Conflict",
    "Container",
    "ContainerState",
    "ContainerStatus",
    "ContainerUsage",
    "Create",
    "CreateSpec",
    "CreateVolume",
    "DNSPolicy",
    "EngineUnavailable",
    "EnvVar",
    "EtcdError",
    "EtcdOptions",
    "Event",
    "EventKind",
    "GCPolicy",
    "HTTPGetAction",
    "HTTPHeader",
    "Handler",
    "HostAlias",
    "HostReporter",
    "HttpOptions",
    "Kill",
    "Lifecycle",
    "LoopNotice",
    "MemoryMedium",
    "NameConflict",
    "NodeInfo",
    "NotFound",
    "NoticeKind",
    "Observation",
    "ObservedContainer",
    "ObservedImage",
    "ObservedVolume",
    "Ownership",
    "ParsedName",
    "Plan",
    "PlanOptions",
    "Pod",
    "PodAction",
    "PodCondition",
    "PodFileCache",
    "PodPhase",
    "PodPlan",
    "PodSecurityContext",
    "PodSecurityLevel",
    "PodSet",
    "PodStatus",
    "PodUsage",
    "PodsyncError",
    "Port",
    "PortProtocol",
    "Probe",
    "Problem",
    "ProfileType",
    "PublishConflict",
    "PublishResult",
    "Pull",
    "PullFailure",
    "PullPolicy",
    "Reason",
    "Reconciler",
    "Rejection",
    "Remove",
    "RemoveImage",
    "RemovePodDir",
    "RemoveVolume",
    "ResolvConf",
    "ResourceList",
    "Resources",
    "RestartPolicy",
    "Runtime",
    "RuntimeCallError",
    "SecretPart",
    "SecretText",
    "SecurityContext",
    "SecurityProfile",
    "SyncResult",
    "Sysctl",
    "TCPSocketAction",
    "TerminationMessagePolicy",
    "UsageFigures",
    "Volume",
    "VolumeContent",
    "VolumeFile",
    "VolumeKind",
    "VolumeMount",
    "VolumeOwnership",
    "Wait",
    "WriteVolume",
    "WrittenVolume",
    "apply",
    "container_name",
    "cpu_quota",
    "cpu_shares",
    "derive_pod_uid",
    "down",
    "dump_pods",
    "exposed_ports",
    "filter_host_port_conflicts",
    "host_secret_key",
    "load_pods",
    "observe",
    "ownership",
    "parse_container_name",
    "parse_pods",
    "parse_resolv_conf",
    "plan",
    "plan_fingerprint",
    "plan_from_json",
    "plan_to_json",
    "pod_full_name",
    "pod_status",
    "port_bindings",
    "publish",
    "shown_url",
    "spec_hash",
    "sync",
    "volume_ownership",
]

# Names that left the top level: each still imports from here, with a DeprecationWarning
# naming its new home, for one release, then goes. Before 0.1.0: the label keys moved to
# ``podsync.labels``; the alias ``RejectedPod`` is ``Rejection``; the helpers of the
# planner and the runtimes that nothing outside podsync needs stay in their private
# modules, which make no promise. In 0.2.0: the names of one concern that an orchestrator
# does not need to sync pods moved to the face of their folder (``podsync.runtime`` for
# runtime authors, ``podsync.status``, ``podsync.prober``, ``podsync.fleet``,
# ``podsync.spec``), where they stay public.
# The label keys are found in ``podsync.labels.__all__`` when one is asked for
# (``_moved``): reading that list here would import the model with every ``import
# podsync``.
_MOVED: dict[str, tuple[str, str]] = {
    "RejectedPod": ("podsync.planner._host_ports", "use podsync.Rejection"),
    # 0.2.0: the public names of one concern live on its folder's face.
    **{
        name: (face, f"use {face}.{name}")
        for face, names in {
            "podsync.runtime": (
                "ExecResult",
                "LogLine",
                "EngineEvent",
                "Stream",
                "ContainerSecurity",
                "PortMapping",
                "Mount",
                "TmpfsMount",
                "NamedVolumeMount",
                "VolumeFileMount",
            ),
            "podsync.status": (
                "orphaned_pod_statuses",
                "pod_events",
                "PodEngineEvent",
                "termination_inputs",
                "previous_instance",
                "statuses_to_json",
                "STATUS_FORMAT_VERSION",
            ),
            "podsync.prober": (
                "probe_liveness",
                "DEFAULT_PROBE_TIMEOUT",
                "ProbeState",
                "ProbeKind",
                "ProbeResult",
            ),
            "podsync.fleet": (
                "Host",
                "HostTLS",
                "load_hosts",
                "parse_hosts",
                "load_host_pods",
                "host_root_dir",
                "sync_hosts",
                "HostResult",
                "FleetResult",
            ),
            "podsync.spec": (
                "parse_2014_container_name",
                "network_spec_hash",
                "CONTAINER_NAME_PREFIX",
                "claim_volume_name",
                "empty_dir_volume_name",
                "SpecHash",
                "SPEC_HASH_VERSION",
            ),
        }.items()
        for name in names
    },
    **{
        name: (module, "it is internal to podsync")
        for module, names in {
            "podsync.spec._hashing": ("canonical_json", "canonical_spec", "network_spec"),
            "podsync.spec._naming": ("is_dns_label", "dns_label_problem", "is_safe_uid"),
            "podsync.spec._resolv": (
                "cluster_dns",
                "without_loopback",
                "is_loopback_nameserver",
                "only_loopback_nameservers",
            ),
            "podsync.spec._images": (
                "split_image",
                "has_latest_tag",
                "is_pinned_digest",
                "pull_reference",
                "should_pull",
                "normalize_image",
                "image_reference_problem",
            ),
            "podsync.spec._environment": ("environment",),
            "podsync.spec._volumes": ("binds", "volume_host_paths", "termination_message_file"),
        }.items()
        for name in names
    },
}


def _moved(name: str) -> tuple[str, str] | None:
    """Where ``name``, a name that left the top level, lives now and the advice of its
    warning; ``None`` for a name podsync never had."""
    if name.startswith("LABEL_"):
        import importlib

        if name in importlib.import_module("podsync.labels").__all__:
            return "podsync.labels", f"use podsync.labels.{name}"
    return _MOVED.get(name)


# Hidden from type checkers on purpose: a module ``__getattr__`` would make every
# misspelt ``podsync.<name>`` type-check, and a deprecated name should fail there.
if not _TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A public name imported on first use (kept, so it is imported once), the
        ``labels`` module, or a name that left the top level, with a DeprecationWarning
        at the caller."""
        # Imported here, not at the top: ``import podsync`` imports nothing.
        import importlib

        if name == "__version__":
            # Read from the package metadata when asked for: reading it costs every
            # ``import podsync`` its time otherwise.
            from podsync.host._version import package_version

            globals()[name] = version = package_version()
            return version
        lazy = _LAZY.get(name)
        if lazy is not None:
            value = getattr(importlib.import_module(lazy), name)
            globals()[name] = value
            return value
        if name == "labels":
            # Importing a submodule sets it on the package: asked for once.
            return importlib.import_module("podsync.labels")
        moved = _moved(name)
        if moved is None:
            raise AttributeError(f"module 'podsync' has no attribute {name!r}")
        module, advice = moved
        import warnings

        warnings.warn(
            f"podsync.{name} is deprecated and will be removed from the top level of "
            f"podsync in the next release: {advice}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY, "__version__", "labels"})
