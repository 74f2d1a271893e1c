"""The desired-state model (pods and their containers) and what a runtime observes.

All values are frozen attrs classes: they hash, compare by value, and cannot change
after construction, so a ``Pod`` can be shared between the planner, the apply side and
the caller without copies. Sequences are tuples for the same reason.

The model is the 2014 kubelet's ``api.BoundPod`` / ``api.Container`` subset that the
seed's sync used (reference §3), in Python spelling. Serialisation is not the model's
business: YAML is read by ``_config.py`` and plans are written by ``_plan_json.py``
through private cattrs converters.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable
from typing import Any

import attrs

from podsync._naming import pod_full_name

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "Container",
    "DNSPolicy",
    "EnvVar",
    "HTTPGetAction",
    "HTTPHeader",
    "Handler",
    "Lifecycle",
    "ObservedContainer",
    "ObservedImage",
    "Pod",
    "Port",
    "PortProtocol",
    "Probe",
    "PullPolicy",
    "RestartPolicy",
    "TCPSocketAction",
    "Volume",
    "VolumeMount",
    "derive_pod_uid",
]


class RestartPolicy(enum.StrEnum):
    """What to do when a container exits (seed syncPod, reference §2.4)."""

    ALWAYS = "Always"
    ON_FAILURE = "OnFailure"  # restart only after a non-zero exit code
    NEVER = "Never"


class DNSPolicy(enum.StrEnum):
    """Where a pod's containers resolve names.

    ``CLUSTER_FIRST`` puts the cluster DNS server and search domains before the host's
    (seed applyClusterDNS); ``DEFAULT`` leaves the engine's default (the host's).
    """

    CLUSTER_FIRST = "ClusterFirst"
    DEFAULT = "Default"


class PullPolicy(enum.StrEnum):
    """When to pull a container's image (seed IsPullAlways/IsPullNever/IsPullIfNotPresent)."""

    ALWAYS = "Always"
    NEVER = "Never"
    IF_NOT_PRESENT = "IfNotPresent"  # also the default; an explicit ``:latest`` still pulls


class PortProtocol(enum.StrEnum):
    """The transport protocol of a port."""

    TCP = "TCP"
    UDP = "UDP"


@attrs.frozen
class Port:
    """A port a container listens on, optionally published on the host.

    ``host_port == 0`` means "not published" (seed makePortsAndBindings skips it).
    ``host_ip == ""`` means all host addresses.
    """

    container_port: int
    host_port: int = 0
    protocol: PortProtocol = PortProtocol.TCP
    name: str = ""
    host_ip: str = ""


@attrs.frozen
class EnvVar:
    """One environment variable; a container's env is passed to the engine in order."""

    name: str
    value: str = ""


@attrs.frozen
class Volume:
    """A pod volume: a host directory (``host_path``, the seed's ``hostDir``) or, when
    ``host_path`` is ``None``, an empty directory that lives as long as the pod
    (``emptyDir``, created under the runtime's root directory)."""

    name: str
    host_path: str | None = None

    @property
    def is_empty_dir(self) -> bool:
        """True for an ``emptyDir`` volume."""
        return self.host_path is None


@attrs.frozen
class VolumeMount:
    """Where a pod volume appears inside a container."""

    name: str
    mount_path: str
    read_only: bool = False


@attrs.frozen
class HTTPHeader:
    """One header an httpGet action sends (Kubernetes ``httpHeaders[]``); a name may be
    given more than once, and every entry is sent."""

    name: str
    value: str = ""


@attrs.frozen
class HTTPGetAction:
    """An HTTP GET against the container; ``port`` is a number or a named container port.

    An empty ``host`` means the pod's address (the seed used the pod IP). ``scheme`` is
    ``HTTP`` or ``HTTPS`` (whose certificate is not verified, as the kubelet's probes
    do not verify it). ``http_headers`` are sent as given, in order; a ``Host`` header
    names the request's host, and ``User-Agent`` and ``Accept`` replace podsync's."""

    port: int | str
    path: str = ""
    host: str = ""
    scheme: str = "HTTP"
    http_headers: tuple[HTTPHeader, ...] = ()


@attrs.frozen
class TCPSocketAction:
    """A TCP connect to the container's ``port`` (a number or a named container port)."""

    port: int | str
    host: str = ""


@attrs.frozen
class Handler:
    """One action run against a container: exactly one of the three fields is set.

    ``exec_command`` is an argument list, never a shell string: podsync runs no shell.
    """

    exec_command: tuple[str, ...] | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None

    def __attrs_post_init__(self) -> None:
        count = sum(x is not None for x in (self.exec_command, self.http_get, self.tcp_socket))
        if count != 1:
            raise ValueError(f"a handler needs exactly one action, got {count}")


def _at_least(minimum: int) -> Callable[[Any, attrs.Attribute[int], int], None]:
    def check(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
        if value < minimum:
            raise ValueError(f"{attribute.name} must be at least {minimum}, got {value}")

    return check


def _positive_or_none(_: Any, attribute: attrs.Attribute[int | None], value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, got {value}")


@attrs.frozen
class Probe:
    """A liveness, readiness or startup probe: the handler, and when and how often it
    runs, with Kubernetes' defaults (``SetDefaults_Probe``,
    ``pkg/apis/core/v1/defaults.go``: timeout 1 s, period 10 s, success threshold 1,
    failure threshold 3, no initial delay).

    Attributes:
        handler: what is run: exec, httpGet or tcpSocket.
        initial_delay_seconds: no probe runs until the container has been up this long.
        period_seconds: a probe runs at most once per period (see ``podsync.ProbeState``:
            in one-shot use, at most once per sync too).
        timeout_seconds: how long one run may take; a run that takes longer failed.
        success_threshold: consecutive successes that turn a failed verdict into
            success (Kubernetes requires 1 for liveness and startup probes).
        failure_threshold: consecutive failures that turn a verdict into failure.
        termination_grace_period_seconds: the grace period of the stop when this
            (liveness or startup) probe kills the container; ``None`` keeps the pod's.

    Raises:
        ValueError: a count or period below its minimum (0 for the delay, 1 for the
            others; the grace period, when given, at least 1).
    """

    handler: Handler
    initial_delay_seconds: int = attrs.field(default=0, validator=_at_least(0))
    period_seconds: int = attrs.field(default=10, validator=_at_least(1))
    timeout_seconds: int = attrs.field(default=1, validator=_at_least(1))
    success_threshold: int = attrs.field(default=1, validator=_at_least(1))
    failure_threshold: int = attrs.field(default=3, validator=_at_least(1))
    termination_grace_period_seconds: int | None = attrs.field(
        default=None, validator=_positive_or_none
    )


@attrs.frozen
class Lifecycle:
    """Hooks run by the apply side: after start, and before a stop."""

    post_start: Handler | None = None
    pre_stop: Handler | None = None


@attrs.frozen
class Container:
    """One container of a pod, as desired.

    Attributes:
        name: a DNS-1123 label, unique within the pod (``net`` is reserved for the
            pod's network container).
        image: the image reference, as given to the engine.
        command: the entrypoint override (Kubernetes ``command``); empty keeps the
            image's.
        args: arguments (Kubernetes ``args``); empty keeps the image's.
        cpu: CPU limit in milli-CPU (``500m`` = 500); 0 means unset.
        memory: memory limit in bytes; 0 means unset.
        termination_message_path: where, inside the container, the termination-message
            file is mounted; empty means none.
        liveness_probe: when its verdict is failure, the container is killed and
            restarted as its pod's restart policy says.
        readiness_probe: decides whether the running container is ready
            (``ContainerStatus.ready``); it never restarts the container.
        startup_probe: until it succeeds, neither the liveness nor the readiness probe
            runs; when its verdict is failure, the container is killed as for liveness.

    Probes (and ``lifecycle``) are run by podsync against the container: they are not
    part of its spec hash, so changing one restarts nothing.
    """

    name: str
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    working_dir: str = ""
    env: tuple[EnvVar, ...] = ()
    ports: tuple[Port, ...] = ()
    volume_mounts: tuple[VolumeMount, ...] = ()
    cpu: int = 0
    memory: int = 0
    image_pull_policy: PullPolicy = PullPolicy.IF_NOT_PRESENT
    liveness_probe: Probe | None = None
    lifecycle: Lifecycle | None = None
    privileged: bool = False
    termination_message_path: str = ""
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None


# A fixed namespace for uuid5: pod uids derived by podsync are the same on every machine
# and in every run, so a re-read pod file names the same pod.
_POD_UID_NAMESPACE = uuid.UUID("3b0f6e8e-6a4c-5d7e-9c1a-70d5f0c0d5a1")


def derive_pod_uid(source: str, namespace: str, name: str) -> str:
    """The deterministic uid of a pod that has none: a UUID-5 of source, namespace and name.

    Repeated runs over the same pod files therefore see the same pod, and two pods that
    differ in any of the three get different uids.
    """
    return str(uuid.uuid5(_POD_UID_NAMESPACE, f"{source}/{namespace}/{name}"))


@attrs.frozen
class Pod:
    """A group of containers that share one network container.

    Attributes:
        name: a DNS-1123 label.
        containers: the app containers, in order (the network container is implicit).
        namespace: a DNS-1123 label; ``default`` unless given.
        source: where the pod came from: ``file``, ``http`` or ``api`` (library
            callers); it is part of the pod's full name, as in the seed.
        uid: the pod's identity across changes of its spec; derived from source,
            namespace and name when not given (see ``derive_pod_uid``).
        termination_grace_period_seconds: seconds each of its containers gets to stop,
            its preStop handler included (Kubernetes' ``terminationGracePeriodSeconds``);
            ``None`` leaves it to ``PlanOptions.stop_timeout``.
    """

    name: str
    containers: tuple[Container, ...] = ()
    volumes: tuple[Volume, ...] = ()
    namespace: str = "default"
    source: str = "api"
    restart_policy: RestartPolicy = RestartPolicy.ALWAYS
    dns_policy: DNSPolicy = DNSPolicy.CLUSTER_FIRST
    uid: str = attrs.field(
        default=attrs.Factory(
            lambda self: derive_pod_uid(self.source, self.namespace, self.name), takes_self=True
        )
    )
    termination_grace_period_seconds: int | None = None

    @property
    def full_name(self) -> str:
        """``<name>.<namespace>.<source>``, the seed's GetPodFullName."""
        return pod_full_name(self.name, self.namespace, self.source)

    @property
    def key(self) -> str:
        """``<namespace>/<name>``, how the pod is named to people (plans, messages)."""
        return f"{self.namespace}/{self.name}"


@attrs.frozen
class ObservedContainer:
    """What a runtime reports about one container, exited ones included.

    No engine types: a runtime builds these from whatever its engine returns.

    Attributes:
        id: the engine's container id.
        name: the container name without the leading ``/`` the Docker API adds.
        labels: the container's labels (podsync's ownership and spec records live here).
        image: the image reference the container was created from.
        created: creation time, seconds since the Unix epoch.
        running: whether it runs now.
        exit_code: the last exit code (meaningful when not running and finished).
        finished_at: when it last exited, seconds since the epoch; ``None`` if it never
            exited (running, or created and never started).
        stopped_by_podsync: why podsync stopped it, when podsync did: the reason of the
            stop (``spec-changed``, ``unhealthy``, ``post-start-failed`` ...); empty when
            podsync did not stop it (it exited by itself, or it runs). Docker labels
            cannot change after create, so no engine reports this: ``podsync.observe``
            adds it from podsync's stop records under the root directory.
    """

    id: str
    name: str
    image: str = ""
    labels: dict[str, str] = attrs.field(factory=dict, hash=False)
    created: float = 0.0
    running: bool = False
    exit_code: int = 0
    finished_at: float | None = None
    stopped_by_podsync: str = ""


@attrs.frozen
class ObservedImage:
    """An image present on the engine.

    Attributes:
        id: the engine's image id (``sha256:...``).
        tags: the references that name it (``busybox:latest``); empty for a dangling
            image.
        digests: repository digests (``busybox@sha256:...``), when the engine knows them.
    """

    id: str
    tags: tuple[str, ...] = ()
    digests: tuple[str, ...] = ()
