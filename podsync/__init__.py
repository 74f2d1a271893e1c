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
    ParsedName,
    container_name,
    parse_container_name,
    pod_full_name,
)
from podsync.exceptions import (
    ConfigError,
    EngineUnavailable,
    PodsyncError,
    Problem,
    RuntimeCallError,
)

# --- more modules are added below, one block each ---

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
from podsync._resolv import ResolvConf, cluster_dns, parse_resolv_conf

# isort: split
from podsync._environment import environment

# isort: split
from podsync._volumes import binds, termination_message_file, volume_host_paths

# isort: split
from podsync._images import (
    has_latest_tag,
    is_pinned_digest,
    pull_reference,
    should_pull,
    split_image,
)

__all__ = [
    "CONTAINER_NAME_PREFIX",
    "DEFAULT_MAX_BYTES",
    "SPEC_HASH_VERSION",
    "ConfigError",
    "Container",
    "DNSPolicy",
    "EngineUnavailable",
    "EnvVar",
    "HTTPGetAction",
    "Handler",
    "Lifecycle",
    "ObservedContainer",
    "ObservedImage",
    "ParsedName",
    "Pod",
    "PodsyncError",
    "Port",
    "PortProtocol",
    "Probe",
    "Problem",
    "PullPolicy",
    "RejectedPod",
    "ResolvConf",
    "RestartPolicy",
    "RuntimeCallError",
    "SpecHash",
    "TCPSocketAction",
    "Volume",
    "VolumeMount",
    "binds",
    "canonical_json",
    "canonical_spec",
    "cluster_dns",
    "container_name",
    "cpu_shares",
    "derive_pod_uid",
    "environment",
    "exposed_ports",
    "filter_host_port_conflicts",
    "has_latest_tag",
    "is_pinned_digest",
    "load_pods",
    "network_spec",
    "network_spec_hash",
    "parse_container_name",
    "parse_pods",
    "parse_resolv_conf",
    "pod_full_name",
    "port_bindings",
    "pull_reference",
    "should_pull",
    "spec_hash",
    "split_image",
    "termination_message_file",
    "volume_host_paths",
]
