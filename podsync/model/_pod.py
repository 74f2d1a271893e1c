"""The desired-state model (pods and their containers) and what a runtime observes.

All values are frozen attrs classes: they hash, compare by value, and cannot change
after construction, so a ``Pod`` can be shared between the planner, the apply side and
the caller without copies. Sequences are tuples for the same reason.

The model is the 2014 kubelet's ``api.BoundPod`` / ``api.Container`` subset that the
seed's sync used (reference §3), in Python spelling, with the later Kubernetes fields
podsync honours added at the end of each class (``resources`` as requests and limits,
terminals, the pod's labels, host identity and scheduling gates). Serialisation is not the model's
business: YAML is read by ``_config.py`` and plans are written by ``podsync/actions/_json.py``
through private cattrs converters.

The volumes (``Volume``, its sources and files, ``VolumeMount``, ``WrittenVolume``) are
``_volume``'s, re-exported by ``podsync``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from podsync.model._security import PodSecurityContext, SecurityContext
from podsync.model._validators import (
    absolute_path,
    container_name,
    dns_label,
    env_name,
    host_ip,
    optional_dns_label,
    pod_spec_problem,
    port_number,
    safe_uid,
    strings,
)

# The volumes are ``_volume``'s: ``Pod`` and ``Container`` hold these (imported
# at run time, as every name the model's annotations use, for whoever resolves them).
from podsync.model._volume import Volume, VolumeMount

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "Container",
    "DNSPolicy",
    "EnvVar",
    "HTTPGetAction",
    "HTTPHeader",
    "Handler",
    "HostAlias",
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
    "derive_pod_uid",
    "pod_full_name",
]


class RestartPolicy(enum.StrEnum):
    """What to do when a container exits (seed syncPod, reference §2.4)."""

    ALWAYS = "Always"
    ON_FAILURE = "OnFailure"  # restart only after a non-zero exit code
    NEVER = "Never"


class DNSPolicy(enum.StrEnum):
    """Where a pod's containers resolve names.

    ``CLUSTER_FIRST`` puts the cluster DNS server and search domains before the host's
    (seed applyClusterDNS), except on the host's network, where it is ``DEFAULT``;
    ``CLUSTER_FIRST_WITH_HOST_NET`` is ``CLUSTER_FIRST`` on the host's network too (a
    node agent that resolves the cluster's names); ``DEFAULT`` leaves the engine's
    default (the host's). Without a cluster DNS server or domain, every policy is the
    host's, as the kubelet falls back (``getPodDNSType``, ``pkg/kubelet/network/dns``).
    """

    CLUSTER_FIRST = "ClusterFirst"
    DEFAULT = "Default"
    CLUSTER_FIRST_WITH_HOST_NET = "ClusterFirstWithHostNet"


class PullPolicy(enum.StrEnum):
    """When to pull a container's image (seed IsPullAlways/IsPullNever/IsPullIfNotPresent).

    A container that gives none (``Container.image_pull_policy`` is ``None``) gets the
    modern kubelet's default, which depends on the image's tag
    (``podsync.spec.default_pull_policy``): ``ALWAYS`` for ``:latest`` or no tag at
    all, ``IF_NOT_PRESENT`` otherwise. A policy that is given is honoured as it is,
    whatever the tag.
    """

    ALWAYS = "Always"
    NEVER = "Never"
    IF_NOT_PRESENT = "IfNotPresent"


class TerminationMessagePolicy(enum.StrEnum):
    """Where a container's termination message comes from (Kubernetes'
    ``terminationMessagePolicy``): the termination-message file only, or, when that is
    empty and the container failed, the tail of its log."""

    FILE = "File"
    FALLBACK_TO_LOGS_ON_ERROR = "FallbackToLogsOnError"


class PortProtocol(enum.StrEnum):
    """The transport protocol of a port."""

    TCP = "TCP"
    UDP = "UDP"


# The converters of the argv fields (named functions, as mypy's attrs plugin reads them).
def _command(value: Iterable[str]) -> tuple[str, ...]:
    return strings(value, "command")


def _args(value: Iterable[str]) -> tuple[str, ...]:
    return strings(value, "args")


def _exec_command(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else strings(value, "exec_command")


def _protocol(value: PortProtocol | str) -> PortProtocol:
    # A string is read as the protocol it names ("UDP"); another raises ValueError.
    return value if type(value) is PortProtocol else PortProtocol(value)


@attrs.frozen
class Port:
    """A port a container listens on, optionally published on the host.

    ``host_port == 0`` means "not published" (seed makePortsAndBindings skips it).
    ``host_ip == ""`` means all host addresses.

    Raises:
        ValueError: ``container_port`` is not 1-65535, ``host_port`` not 0-65535
            (Kubernetes' ``validateContainerPorts``; Docker refuses such a port at
            create), ``protocol`` is neither ``TCP`` nor ``UDP`` (a string is read as
            a ``PortProtocol``), ``name`` is neither empty nor a DNS-1123 label, or
            ``host_ip`` is neither empty nor an IP address.
        TypeError: a port number is not an ``int``.
    """

    container_port: int = attrs.field(validator=port_number(1))
    host_port: int = attrs.field(default=0, validator=port_number(0))
    protocol: PortProtocol = attrs.field(default=PortProtocol.TCP, converter=_protocol)
    name: str = attrs.field(default="", validator=optional_dns_label)
    host_ip: str = attrs.field(default="", validator=host_ip)


@attrs.frozen
class EnvVar:
    """One environment variable; a container's env is passed to the engine in order.

    ``source`` names the object its value was read from (``ConfigMap default/settings``,
    ``Secret default/db-creds``) when it came from one (``configMapKeyRef``,
    ``secretKeyRef``, ``envFrom``), so that a plan that replaces the container can say
    which object changed; empty otherwise. A value that holds a Secret's (read from one,
    or expanded with one) is a ``SecretText``: the engine gets the value, labels and
    plans a reference and a keyed digest, ``repr`` shows the reference.

    Raises:
        ValueError: ``name`` is not a C identifier (letters, digits and ``_``, not
            starting with a digit), as the loader requires.
    """

    name: str = attrs.field(validator=env_name)
    value: str = ""
    source: str = ""


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

    exec_command: tuple[str, ...] | None = attrs.field(default=None, converter=_exec_command)
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


def _not_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value!r}")


@attrs.frozen
class ResourceList:
    """Amounts of the resources podsync honours (Kubernetes' ``ResourceList``); 0 means
    "not given", as a zero quantity does to the kubelet.

    Attributes:
        cpu: milli-CPU (``500m`` = 500, ``2`` = 2000).
        memory: bytes.
        ephemeral_storage: bytes of local disk (``ephemeral-storage``); a request only:
            a scheduling hint podsync reports and passes on to nothing (see
            ``Resources``).
    """

    cpu: int = attrs.field(default=0, validator=_not_negative)
    memory: int = attrs.field(default=0, validator=_not_negative)
    ephemeral_storage: int = attrs.field(default=0, validator=_not_negative)


@attrs.frozen
class Resources:
    """A container's ``resources``: what it requests and what it may use at most.

    Honoured as the modern kubelet does (``calculateLinuxResources``,
    pkg/kubelet/kuberuntime/kuberuntime_container_linux.go; kubelet-modern.md §6):

    * the CPU *request* is the container's weight (Docker ``CpuShares``); without a
      request, the CPU limit is (the API server copies a missing request from the limit);
    * the CPU *limit* is a CFS quota (``CpuQuota`` per ``CpuPeriod`` of 100 ms);
    * the memory *limit* is the hard limit (``Memory``); a memory request is never a
      limit: the kubelet only counts it at admission;
    * an ``ephemeral-storage`` request is a scheduling hint: podsync reserves no disk
      and passes it to nothing. A limit cannot be given: Docker enforces none without a
      storage-driver quota, and the kubelet enforces it by evicting the pod.

    Raises:
        ValueError: a request exceeds its limit, or an ephemeral-storage limit is given.
    """

    requests: ResourceList = attrs.field(factory=ResourceList)
    limits: ResourceList = attrs.field(factory=ResourceList)

    @property
    def cpu_weight(self) -> int:
        """The milli-CPU that set the container's CPU weight: the request, else the
        limit (``calculateLinuxResources``); 0 when neither is given."""
        return self.requests.cpu or self.limits.cpu

    def __attrs_post_init__(self) -> None:
        if self.limits.ephemeral_storage:
            raise ValueError(
                "an ephemeral-storage limit is not supported by podsync: Docker enforces "
                "none without a storage-driver quota"
            )
        for name in ("cpu", "memory"):
            request, limit = getattr(self.requests, name), getattr(self.limits, name)
            if limit and request > limit:
                raise ValueError(f"the {name} request {request} exceeds its limit {limit}")


@attrs.frozen
class HostAlias:
    """Extra ``/etc/hosts`` lines of a pod (Kubernetes ``hostAliases``): ``ip`` for
    every name in ``hostnames``."""

    ip: str
    hostnames: tuple[str, ...] = ()


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
        cpu: the 2014 (v1beta1) single CPU value in milli-CPU (``500m`` = 500), with
            the seed's meaning: a weight (CPU shares) and no quota, the same as
            ``resources.requests.cpu``; 0 means unset. A v1 pod's ``resources`` go
            to ``resources`` and leave this 0.
        memory: the 2014 (v1beta1) single memory value in bytes, with the seed's
            meaning: a hard limit, the same as ``resources.limits.memory``; 0 means
            unset.
        image_pull_policy: when to pull ``image`` (``PullPolicy``); ``None`` when the
            pod gives none: then the default depends on the tag, as the kubelet's
            ``SetDefaults_Container`` (``podsync.spec.default_pull_policy``). Kept apart
            from a given policy, so that an explicit ``IfNotPresent`` on a ``:latest``
            image is honoured. Not part of the spec hash.
        termination_message_path: where, inside the container, the termination-message
            file is mounted, as the pod gave it; empty when it gave none, which means
            Kubernetes' default, ``/dev/termination-log`` (``SetDefaults_Container``):
            every container has the file, at ``message_path``. Kept as given, so that
            a container made before the default (issue 27) keeps its spec hash.
        liveness_probe: when its verdict is failure, the container is killed and
            restarted as its pod's restart policy says.
        readiness_probe: decides whether the running container is ready
            (``ContainerStatus.ready``); it never restarts the container.
        startup_probe: until it succeeds, neither the liveness nor the readiness probe
            runs; when its verdict is failure, the container is killed as for liveness.
        resources: requests and limits (Kubernetes ``resources``), honoured as the
            modern kubelet does (see ``Resources``); ``None`` when not given.
            ``cpu`` / ``memory`` and ``resources`` are two spellings of one setting:
            a container gives one of them (``effective_resources`` reads either).
        tty: allocate a terminal for the process (Kubernetes ``tty``).
        stdin: keep the process's standard input open (``stdin``); nothing is
            attached to it unless someone attaches (``docker attach``).
        stdin_once: close standard input after the first attached client detaches
            (``stdinOnce``; meaningful with ``stdin``).
        security_context: the container's ``securityContext`` (user, groups,
            capabilities, seccomp, AppArmor ...) besides ``privileged``; ``None`` when
            none is given (the pod's then apply).
        termination_message_policy: whether the log tail stands in for an empty
            termination message of a failed run (read by ``pod_status``'s callers,
            not by the engine: it is not part of the spec hash).
        restart_policy: an init container's own restart policy: ``ALWAYS`` makes it a
            sidecar (Kubernetes 1.29+: started in order with the other init
            containers, then kept running beside the app containers and restarted
            whenever it exits); ``None`` for every other container, which follows its
            pod's policy. Only an init container may set it (``Pod`` checks).
        config_error: why the container cannot be created as its pod file says: a
            ConfigMap or Secret (or one of their keys) that its ``env`` or ``envFrom``
            reads without ``optional: true`` is not in the sources (the kubelet's
            ``CreateContainerConfigError``, ``makeEnvironmentVariables``). The message
            names the object and the key, never a value. Empty when it can be created.
            Not part of the spec hash: no instance is created while it is set, and a
            running one is kept (the kubelet resolves env only at a start).

    Probes (and ``lifecycle``) are run by podsync against the container: they are not
    part of its spec hash, so changing one restarts nothing.

    Raises:
        ValueError: ``name`` is not a DNS-1123 label or is ``net``; ``working_dir`` is
            neither empty nor absolute; ``cpu`` or ``memory`` is given together with
            ``resources``, or is negative; ``restart_policy`` is other than ``ALWAYS``.
        TypeError: ``command`` or ``args`` is one string, or holds something else than
            strings: each is a list of arguments (``["sleep", "10"]``; a list is kept
            as a tuple).
    """

    name: str = attrs.field(validator=container_name)
    image: str
    command: tuple[str, ...] = attrs.field(default=(), converter=_command)
    args: tuple[str, ...] = attrs.field(default=(), converter=_args)
    working_dir: str = attrs.field(default="", validator=absolute_path(optional=True, bind=False))
    env: tuple[EnvVar, ...] = ()
    ports: tuple[Port, ...] = ()
    volume_mounts: tuple[VolumeMount, ...] = ()
    cpu: int = 0
    memory: int = 0
    image_pull_policy: PullPolicy | None = None
    liveness_probe: Probe | None = None
    lifecycle: Lifecycle | None = None
    privileged: bool = False
    termination_message_path: str = ""
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    resources: Resources | None = None
    tty: bool = False
    stdin: bool = False
    stdin_once: bool = False
    security_context: SecurityContext | None = None
    termination_message_policy: TerminationMessagePolicy = TerminationMessagePolicy.FILE
    restart_policy: RestartPolicy | None = None
    config_error: str = ""

    def __attrs_post_init__(self) -> None:
        if self.restart_policy not in (None, RestartPolicy.ALWAYS):
            # Kubernetes' validation: Always is the only container-level policy (a
            # sidecar); without the ContainerRestartRules gate there is no other.
            raise ValueError(
                f"a container's restart_policy can only be Always, got {self.restart_policy!r}"
            )
        if self.cpu < 0 or self.memory < 0:
            raise ValueError(
                f"cpu and memory must be 0 or more, got cpu={self.cpu!r}, memory={self.memory!r}"
            )
        if self.resources is not None and (self.cpu or self.memory):
            # Never guess which of two spellings of one setting the caller meant.
            raise ValueError(
                "give resources or the 2014 cpu/memory values, not both: cpu is "
                "resources.requests.cpu, memory is resources.limits.memory"
            )

    @property
    def message_path(self) -> str:
        """Where the termination-message file is mounted: ``termination_message_path``,
        or Kubernetes' default ``/dev/termination-log`` when it is empty
        (``SetDefaults_Container``, ``TerminationMessagePathDefault``)."""
        return self.termination_message_path or DEFAULT_TERMINATION_MESSAGE_PATH

    @property
    def effective_resources(self) -> Resources:
        """``resources``, or the 2014 values as what they meant: ``cpu`` a request (a
        weight without a quota, as the seed's CpuShares), ``memory`` a limit."""
        if self.resources is not None:
            return self.resources
        return Resources(
            requests=ResourceList(cpu=self.cpu), limits=ResourceList(memory=self.memory)
        )


#: Kubernetes' default ``terminationMessagePath`` (``TerminationMessagePathDefault``,
#: ``pkg/apis/core/types.go``; ``SetDefaults_Container``): ``Container.message_path``.
DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log"


def engine_resources(c: Container) -> tuple[int, int, int]:
    """(CPU weight, CPU limit, memory limit) of ``c`` in milli-CPU and bytes: what
    ``c.effective_resources`` says reaches the engine, without building it (the planner
    asks this of every container on every plan)."""
    r = c.resources
    if r is None:
        return c.cpu, 0, c.memory
    return r.requests.cpu or r.limits.cpu, r.limits.cpu, r.limits.memory


# A fixed namespace for uuid5: pod uids derived by podsync are the same on every machine
# and in every run, so a re-read pod file names the same pod.
_POD_UID_NAMESPACE = "3b0f6e8e-6a4c-5d7e-9c1a-70d5f0c0d5a1"
_POD_UID_NAMESPACE_BYTES = bytes.fromhex(_POD_UID_NAMESPACE.replace("-", ""))


def pod_full_name(name: str, namespace: str, source: str) -> str:
    """``<name>.<namespace>.<source>`` (seed GetPodFullName): a pod's name in its
    containers' names (``podsync.spec._naming``).

    The seed read the source from the ``kubernetes.io/config.source`` annotation; podsync
    keeps it on the pod (``file``, ``http`` or ``api``).
    """
    return f"{name}.{namespace}.{source}"


def derive_pod_uid(source: str, namespace: str, name: str) -> str:
    """The deterministic uid of a pod that has none: a UUID-5 of source, namespace and name.

    Repeated runs over the same pod files therefore see the same pod, and two pods that
    differ in any of the three get different uids.
    """
    # RFC 4122's name-based version 5, as ``uuid.uuid5`` makes it: the first 16 bytes of
    # the SHA-1 of namespace and name, with the version and variant bits set. Written
    # out because ``uuid.UUID`` checks and converts its input twice per call (a third of
    # this function's time for 10,000 pods, issue 33); tests compare the two. hashlib is
    # imported here: only the loader (and pods without a uid) need it.
    import hashlib

    digest = bytearray(
        hashlib.sha1(
            _POD_UID_NAMESPACE_BYTES + f"{source}/{namespace}/{name}".encode(),
            usedforsecurity=False,
        ).digest()[:16]
    )
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = digest.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


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
            ``None`` leaves it to ``PlanOptions.stop_timeout`` (30 s unless the
            operator says otherwise, the API's default for the field).
        labels: the pod's ``metadata.labels``: every container of the pod carries them
            as Docker labels, as they are (``docker ps --filter label=app=web``).
        annotations: the pod's ``metadata.annotations``: every container carries them
            as Docker labels ``annotation.<key>`` (dockershim's spelling). Keys under
            ``io.podsync.`` and ``io.kubernetes.`` are podsync's and Kubernetes' own
            records and are refused, by the loader and at admission.
        hostname: the pod's hostname (Kubernetes ``hostname``); empty means the pod name.
        subdomain: with a cluster domain (``PlanOptions.cluster_domain``), the pod's
            fully qualified name is ``<hostname>.<subdomain>.<namespace>.svc.<domain>``,
            as the kubelet forms it; empty means none.
        host_aliases: extra ``/etc/hosts`` entries of the pod (``hostAliases``).
        scheduling_gates: names of the pod's ``schedulingGates``: while there is one,
            the pod is not ready to run and podsync creates nothing for it (its plan
            waits, reason ``scheduling-gated``).
        security_context: the pod's ``securityContext`` (defaults for every container,
            groups, sysctls) and its host namespaces (``hostNetwork``, ``hostPID``,
            ``hostIPC``, ``shareProcessNamespace``); ``None`` when none is given.
        init_containers: the pod's ``initContainers``, in order: each runs to
            completion (exit code 0) before the next starts, and all of them before
            any app container starts; those with ``restart_policy`` ``ALWAYS`` are
            sidecars, which keep running (see ``Container.restart_policy``).

    Raises:
        ValueError: as Kubernetes' validation of a pod (``ValidatePodSpec``) and the
            loader refuse it: ``name``, ``namespace`` or ``source`` is not a DNS-1123
            label, or ``uid`` cannot be a container-name field and a directory name;
            two containers have one name (init and app containers share one namespace
            of names); an app container has a ``restart_policy``; two volumes have one
            name; a container mounts a volume the pod does not have, or mounts two at
            one path, or names two of its ports alike. The message names the field or
            the container. (The rest is refused by ``plan``'s admission, as a
            ``Rejection``: a pod without containers, one host port published twice, a
            mount where the termination-message file goes, an image reference the
            engine refuses ...)
    """

    name: str = attrs.field(validator=dns_label)
    containers: tuple[Container, ...] = ()
    volumes: tuple[Volume, ...] = ()
    namespace: str = attrs.field(default="default", validator=dns_label)
    source: str = attrs.field(default="api", validator=dns_label)
    restart_policy: RestartPolicy = RestartPolicy.ALWAYS
    dns_policy: DNSPolicy = DNSPolicy.CLUSTER_FIRST
    uid: str = attrs.field(
        default=attrs.Factory(
            lambda self: derive_pod_uid(self.source, self.namespace, self.name), takes_self=True
        ),
        validator=safe_uid,
    )
    termination_grace_period_seconds: int | None = None
    labels: dict[str, str] = attrs.field(factory=dict, hash=False)
    annotations: dict[str, str] = attrs.field(factory=dict, hash=False)
    hostname: str = ""
    subdomain: str = ""
    host_aliases: tuple[HostAlias, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    security_context: PodSecurityContext | None = None
    init_containers: tuple[Container, ...] = ()
    # What planning computed for this very object and may reuse in a later plan of it:
    # a loop plans the same Pod objects again and again, and the canonical spec text of
    # each running app container was a third of a steady plan. No part of the pod (not
    # compared, hashed, shown, copied by ``attrs.evolve`` or pickled); see
    # ``_spec_change``.
    _planned: tuple[Any, ...] | None = attrs.field(
        init=False, default=None, eq=False, hash=False, repr=False
    )

    def __getstate__(self) -> dict[str, Any]:
        """The pod's fields for ``pickle`` and ``copy``, without what planning
        remembered: it is keyed by the identity of this process's container objects,
        which an unpickled pod's containers do not have (and another object's may)."""
        return {
            f.name: getattr(self, f.name) for f in attrs.fields(type(self)) if f.name != "_planned"
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)  # frozen: as attrs' own __setstate__
        object.__setattr__(self, "_planned", None)  # never planned, as a new object

    def __attrs_post_init__(self) -> None:
        for c in self.containers:
            if c.restart_policy is not None:
                raise ValueError(
                    f"container {c.name!r}: only an init container may have a restart_policy"
                )
        problem = pod_spec_problem(self.containers, self.init_containers, self.volumes)
        if problem is not None:
            raise ValueError(f"pod {self.namespace}/{self.name}: {problem}")

    @property
    def full_name(self) -> str:
        """``<name>.<namespace>.<source>``, the seed's GetPodFullName."""
        return pod_full_name(self.name, self.namespace, self.source)

    @property
    def key(self) -> str:
        """``<namespace>/<name>``, how the pod is named to people (plans, messages)."""
        return f"{self.namespace}/{self.name}"

    @property
    def sidecars(self) -> tuple[Container, ...]:
        """The init containers that are sidecars (``restart_policy`` ``ALWAYS``)."""
        return tuple(c for c in self.init_containers if c.restart_policy is RestartPolicy.ALWAYS)


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
            adds it from podsync's stop records, which podsync keeps in the engine
            (``podsync.spec._records``; an earlier podsync's under the root directory are
            read too).
        oom_killed: the kernel's OOM killer ended its last run (Docker's
            ``State.OOMKilled``); the status then says ``OOMKilled``, whatever the code.
        started_at: when its current (or last) run started, seconds since the epoch
            (Docker's ``State.StartedAt``): a probe's initialDelaySeconds counts from
            it. ``None`` when the runtime does not report it; the creation time then
            stands for it (podsync starts what it creates at once).
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
    oom_killed: bool = False
    started_at: float | None = None

    @property
    def start_time(self) -> float:
        """When its current (or last) run started: ``started_at``, else ``created``.

        A probe's initialDelaySeconds counts from here (the kubelet's prober worker
        skips while the seconds since State.StartedAt are fewer, worker.go doProbe; the
        seed counted from the creation). A runtime that does not report the start
        (``DockerRuntime`` for a running container: its list does not say, and one
        inspect per container would cost the one-request sync) leaves the creation time
        to stand for it: podsync starts what it creates in the same apply.
        """
        return self.created if self.started_at is None else self.started_at


@attrs.frozen
class ObservedImage:
    """An image present on the engine.

    Attributes:
        id: the engine's image id (``sha256:...``).
        tags: the references that name it (``busybox:latest``); empty for a dangling
            image.
        digests: repository digests (``busybox@sha256:...``), when the engine knows them.
        user: the user the image's processes run as (``Config.User``: ``uid``,
            ``uid:gid``, ``name`` ...); ``""`` when the image names none (root);
            ``None`` when the runtime did not report it (unknown).
    """

    id: str
    tags: tuple[str, ...] = ()
    digests: tuple[str, ...] = ()
    user: str | None = None


@attrs.frozen
class ObservedVolume:
    """A named volume on the engine (``docker volume ls``), which outlives the
    containers that mount it.

    Attributes:
        name: the volume's name, unique on the engine.
        labels: its labels, as given when it was created; empty for one the engine made
            itself (a container mounted a missing name) or made without any. podsync's
            carry ``LABEL_VOLUME_KIND`` and more: see ``podsync.volume_ownership``.
        created: Docker's ``CreatedAt`` (whole seconds): for the local driver, when its
            root directory last changed - made, or an entry at its top written or
            removed; empty when not reported (``podsync.spec._content_records``).
    """

    name: str
    labels: dict[str, str] = attrs.field(factory=dict, hash=False)
    created: str = ""
