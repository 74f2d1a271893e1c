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

__all__ = [
    "CONTAINER_NAME_PREFIX",
    "ConfigError",
    "Container",
    "DNSPolicy",
    "EngineUnavailable",
    "EnvVar",
    "HTTPGetAction",
    "Handler",
    "Lifecycle",
    "ObservedContainer",
    "ParsedName",
    "Pod",
    "PodsyncError",
    "Port",
    "PortProtocol",
    "Probe",
    "Problem",
    "PullPolicy",
    "RestartPolicy",
    "RuntimeCallError",
    "TCPSocketAction",
    "Volume",
    "VolumeMount",
    "container_name",
    "derive_pod_uid",
    "parse_container_name",
    "pod_full_name",
]
