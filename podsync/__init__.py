"""podsync: the 2014 kubelet's pod sync as a library.

A pure core - naming, hashing, port bindings, CPU shares, resolv.conf, host-port
conflicts and ``plan`` - that does no I/O at all, and an imperative shell that observes
an engine and applies plans through a small runtime protocol.

The public API is re-exported here by name; every private module marks what it exports
with ``__all__``.
"""

from __future__ import annotations

from podsync._models import (
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HTTPGetAction,
    Lifecycle,
    ObservedContainer,
    ObservedImage,
    Pod,
    Port,
    PortProtocol,
    Probe,
    PullPolicy,
    RestartPolicy,
    TCPSocketAction,
    Volume,
    VolumeMount,
    derive_pod_uid,
)
from podsync._naming import (
    CONTAINER_NAME_PREFIX,
    NETWORK_CONTAINER,
    ParsedName,
    container_name,
    dns_label_problem,
    is_dns_label,
    is_safe_uid,
    parse_2014_container_name,
    parse_container_name,
    pod_full_name,
)
from podsync.exceptions import (
    ConfigError,
    EngineUnavailable,
    NameConflict,
    PodsyncError,
    Problem,
    RuntimeCallError,
)

# --- more modules are added below, one block each ---

# isort: split
from podsync._options import DEFAULT_NETWORK_IMAGE, BackOffPolicy, GCPolicy, PlanOptions

# isort: split
from podsync._actions import (
    PLAN_FORMAT_VERSION,
    Action,
    Create,
    CreateSpec,
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
    Wait,
)

# isort: split
from podsync._ownership import Ownership, ownership

# isort: split
from podsync._fingerprint import plan_fingerprint

# isort: split
from podsync._plan import plan

# isort: split
from podsync._plan_json import plan_from_json, plan_to_json

# isort: split
from podsync._labels import (
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_GRACE_PERIOD,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_UID,
    LABEL_PRE_STOP,
    LABEL_RESTART_COUNT,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
)

# isort: split
from podsync._runtime import ExecResult, Runtime

# isort: split
from podsync._config import DEFAULT_MAX_BYTES, load_pods, parse_pods

# isort: split
from podsync._hashing import (
    SPEC_HASH_VERSION,
    SpecHash,
    canonical_json,
    canonical_spec,
    network_spec,
    network_spec_hash,
    spec_hash,
)

# isort: split
from podsync._ports import exposed_ports, port_bindings

# isort: split
from podsync._host_ports import RejectedPod, filter_host_port_conflicts

# isort: split
from podsync._cpu import cpu_shares

# isort: split
from podsync._resolv import (
    ResolvConf,
    cluster_dns,
    is_loopback_nameserver,
    only_loopback_nameservers,
    parse_resolv_conf,
    without_loopback,
)

# isort: split
from podsync._environment import environment

# isort: split
from podsync._volumes import (
    DEFAULT_ROOT_DIR,
    binds,
    termination_message_file,
    volume_host_paths,
)

# isort: split
from podsync._images import (
    has_latest_tag,
    image_reference_problem,
    is_pinned_digest,
    normalize_image,
    pull_reference,
    should_pull,
    split_image,
)

# isort: split
from podsync._hooks import DEFAULT_PROBE_TIMEOUT, probe_liveness

# isort: split
from podsync._apply import (
    DEFAULT_HOOK_TIMEOUT,
    DEFAULT_WORKERS,
    ActionResult,
    ActionStatus,
    ApplyResult,
    Event,
    EventKind,
    apply,
)

# isort: split
from podsync._sync import Observation, SyncResult, observe, sync

# isort: split
from podsync._status import ContainerState, ContainerStatus, PodPhase, PodStatus, pod_status

__all__ = [
    "CONTAINER_NAME_PREFIX",
    "DEFAULT_HOOK_TIMEOUT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_NETWORK_IMAGE",
    "DEFAULT_PROBE_TIMEOUT",
    "DEFAULT_ROOT_DIR",
    "DEFAULT_WORKERS",
    "LABEL_ATTEMPT",
    "LABEL_CONTAINER",
    "LABEL_GRACE_PERIOD",
    "LABEL_POD_NAME",
    "LABEL_POD_NAMESPACE",
    "LABEL_POD_SOURCE",
    "LABEL_POD_UID",
    "LABEL_PRE_STOP",
    "LABEL_RESTART_COUNT",
    "LABEL_SPEC",
    "LABEL_SPEC_HASH",
    "NETWORK_CONTAINER",
    "PLAN_FORMAT_VERSION",
    "SPEC_HASH_VERSION",
    "Action",
    "ActionResult",
    "ActionStatus",
    "ApplyResult",
    "BackOffPolicy",
    "ConfigError",
    "Container",
    "ContainerState",
    "ContainerStatus",
    "Create",
    "CreateSpec",
    "DNSPolicy",
    "EngineUnavailable",
    "EnvVar",
    "Event",
    "EventKind",
    "ExecResult",
    "GCPolicy",
    "HTTPGetAction",
    "Handler",
    "Kill",
    "Lifecycle",
    "NameConflict",
    "Observation",
    "ObservedContainer",
    "ObservedImage",
    "Ownership",
    "ParsedName",
    "Plan",
    "PlanOptions",
    "Pod",
    "PodAction",
    "PodPhase",
    "PodPlan",
    "PodStatus",
    "PodsyncError",
    "Port",
    "PortProtocol",
    "Probe",
    "Problem",
    "Pull",
    "PullPolicy",
    "Reason",
    "RejectedPod",
    "Rejection",
    "Remove",
    "RemoveImage",
    "RemovePodDir",
    "ResolvConf",
    "RestartPolicy",
    "Runtime",
    "RuntimeCallError",
    "SpecHash",
    "SyncResult",
    "TCPSocketAction",
    "Volume",
    "VolumeMount",
    "Wait",
    "apply",
    "binds",
    "canonical_json",
    "canonical_spec",
    "cluster_dns",
    "container_name",
    "cpu_shares",
    "derive_pod_uid",
    "dns_label_problem",
    "environment",
    "exposed_ports",
    "filter_host_port_conflicts",
    "has_latest_tag",
    "image_reference_problem",
    "is_dns_label",
    "is_loopback_nameserver",
    "is_pinned_digest",
    "is_safe_uid",
    "load_pods",
    "network_spec",
    "network_spec_hash",
    "normalize_image",
    "observe",
    "only_loopback_nameservers",
    "ownership",
    "parse_2014_container_name",
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
    "probe_liveness",
    "pull_reference",
    "should_pull",
    "spec_hash",
    "split_image",
    "sync",
    "termination_message_file",
    "volume_host_paths",
    "without_loopback",
]
