"""Hypothesis strategies for podsync's model.

Every strategy here produces *valid* values - what the loader would accept: DNS-1123
labels for names, ports 1-65535, absolute paths, unique container, port and volume
names, mounts that name a volume of the pod, at most one use of a host port and
protocol per pod. Tests that need invalid values build them by hand.

The strategies are small by default (short names, few containers) so property tests
stay fast; the bounds are parameters where a test may want more.
"""

from __future__ import annotations

import string

import attrs
from hypothesis import strategies as st

from podsync import (
    Capabilities,
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HostAlias,
    HTTPGetAction,
    Lifecycle,
    ObservedContainer,
    Pod,
    PodSecurityContext,
    Port,
    PortProtocol,
    Probe,
    ProfileType,
    PullPolicy,
    ResourceList,
    Resources,
    RestartPolicy,
    SecurityContext,
    SecurityProfile,
    Sysctl,
    TCPSocketAction,
    Volume,
    VolumeMount,
    derive_pod_uid,
)
from podsync.labels import LABEL_RESTART_COUNT
from podsync.model._volume import MemoryMedium

__all__ = [
    "STOP_RECORDS",
    "absolute_paths",
    "containers",
    "dns_labels",
    "env_vars",
    "handlers",
    "host_ips",
    "images",
    "later_states",
    "lifecycles",
    "pod_full_names",
    "pod_labels",
    "pod_security_contexts",
    "pod_sources",
    "pod_uids",
    "pods",
    "port_numbers",
    "ports",
    "probes",
    "resources",
    "secured_pods",
    "security_contexts",
    "volume_mounts",
    "volumes",
]

_LABEL_INNER = string.ascii_lowercase + string.digits + "-"
_LABEL_EDGE = string.ascii_lowercase + string.digits
# Free text (commands, env values): printable ASCII plus a few characters that have
# tripped up JSON and shell handling elsewhere (quotes, backslash, "=", ":", non-ASCII).
# A fixed alphabet is much cheaper to draw than st.characters().
_TEXT = string.ascii_letters + string.digits + " -_./:=$'\"\\\té☃𝄞"


@st.composite
def dns_labels(draw: st.DrawFn, max_size: int = 12) -> str:
    """A DNS-1123 label: ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``, at most ``max_size`` (<= 63)."""
    first = draw(st.sampled_from(_LABEL_EDGE))
    if max_size == 1:
        return first
    middle = draw(st.text(_LABEL_INNER, max_size=max(0, max_size - 2)))
    if not middle and draw(st.booleans()):
        return first
    last = draw(st.sampled_from(_LABEL_EDGE))
    return first + middle + last


def pod_sources() -> st.SearchStrategy[str]:
    """The sources podsync knows: ``file``, ``http`` and ``api``."""
    return st.sampled_from(["file", "http", "api"])


def pod_uids(*, allow_empty: bool = False) -> st.SearchStrategy[str]:
    """A pod uid as a UUID string (as the API and ``derive_pod_uid`` write), or ``""``."""
    uuids = st.uuids().map(str)
    return st.one_of(st.just(""), uuids) if allow_empty else uuids


def pod_full_names() -> st.SearchStrategy[str]:
    """``<name>.<namespace>.<source>`` with DNS-label name and namespace."""
    return st.builds(
        lambda name, namespace, source: f"{name}.{namespace}.{source}",
        dns_labels(),
        dns_labels(),
        pod_sources(),
    )


def port_numbers() -> st.SearchStrategy[int]:
    """A TCP/UDP port number, 1-65535."""
    return st.integers(min_value=1, max_value=65535)


def host_ips() -> st.SearchStrategy[str]:
    """A host address to publish on: ``""`` (all addresses) or an IPv4 address."""
    return st.one_of(
        st.just(""),
        st.sampled_from(["0.0.0.0", "127.0.0.1"]),
        st.ip_addresses(v=4).map(str),
    )


def ports(
    *,
    host_ports: st.SearchStrategy[int] | None = None,
    names: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[Port]:
    """A ``Port``; the host port is 0 (not published) about half the time.

    Args:
        host_ports: the published host ports to draw from (default 1-65535); pass a
            small range to make host-port clashes between pods likely.
        names: the port names (default: empty or a DNS label).
    """
    published = host_ports if host_ports is not None else port_numbers()
    return st.builds(
        Port,
        container_port=port_numbers(),
        host_port=st.one_of(st.just(0), published),
        protocol=st.sampled_from(PortProtocol),
        name=names if names is not None else st.one_of(st.just(""), dns_labels()),
        host_ip=host_ips(),
    )


def _unique_port_names(items: list[Port]) -> list[Port]:
    # Port names must be unique within a container (when not empty): blank later repeats.
    seen: set[str] = set()
    result = []
    for port in items:
        if port.name and port.name in seen:
            port = attrs.evolve(port, name="")
        seen.add(port.name)
        result.append(port)
    return result


@st.composite
def absolute_paths(draw: st.DrawFn) -> str:
    """An absolute POSIX path of 1-3 short segments, without ``:`` (Docker's bind separator)."""
    segment = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=8)
    parts = draw(st.lists(segment, min_size=1, max_size=3))
    # "." and ".." are not path segments of a real directory: spell them out instead.
    return "/" + "/".join(p if p.strip(".") else f"d{len(p)}" for p in parts)


def env_vars() -> st.SearchStrategy[EnvVar]:
    """An ``EnvVar`` with a C-identifier name and any value without NUL, sometimes
    read from a ConfigMap (``source``)."""
    name = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
    value = st.text(_TEXT, max_size=12)
    source = st.sampled_from(["", "", "ConfigMap default/settings", 'ConfigMap a/"b\\'])
    return st.builds(EnvVar, name=name, value=value, source=source)


_IMAGE_NAMES = [
    "busybox",
    "nginx:1.25",
    "nginx:latest",
    "library/redis:7",
    "registry.example.com:5000/team/app",
    "registry.example.com:5000/team/app:v2",
    "ghcr.io/org/tool@sha256:" + "ab" * 32,
]


def images() -> st.SearchStrategy[str]:
    """An image reference: a fixed sample of shapes, or a generated ``name[:tag]``."""
    generated = st.builds(
        lambda name, tag: f"{name}:{tag}" if tag else name,
        dns_labels(),
        st.one_of(st.just(""), st.just("latest"), dns_labels()),
    )
    return st.one_of(st.sampled_from(_IMAGE_NAMES), generated)


def volumes() -> st.SearchStrategy[Volume]:
    """A pod ``Volume``: a host directory or an emptyDir (``host_path=None``), on disk or
    in memory."""
    return st.one_of(
        st.builds(Volume, name=dns_labels(), host_path=st.one_of(st.none(), absolute_paths())),
        st.builds(
            Volume,
            name=dns_labels(),
            memory=st.builds(MemoryMedium, size=st.integers(1, 2**40)),
        ),
    )


def volume_mounts(volume_names: list[str]) -> st.SearchStrategy[VolumeMount]:
    """A ``VolumeMount`` of one of ``volume_names`` (which must not be empty)."""
    return st.builds(
        VolumeMount,
        name=st.sampled_from(volume_names),
        mount_path=absolute_paths(),
        read_only=st.booleans(),
    )


def handlers() -> st.SearchStrategy[Handler]:
    """A ``Handler`` with exactly one action."""
    port = st.one_of(port_numbers(), dns_labels())
    return st.one_of(
        st.builds(
            Handler,
            exec_command=st.lists(
                st.text(_TEXT, min_size=1, max_size=8), min_size=1, max_size=3
            ).map(tuple),
        ),
        st.builds(
            Handler,
            http_get=st.builds(HTTPGetAction, port=port, path=st.sampled_from(["", "/healthz"])),
        ),
        st.builds(Handler, tcp_socket=st.builds(TCPSocketAction, port=port)),
    )


def probes() -> st.SearchStrategy[Probe]:
    """A liveness ``Probe``."""
    return st.builds(
        Probe, handler=handlers(), initial_delay_seconds=st.integers(min_value=0, max_value=300)
    )


def lifecycles() -> st.SearchStrategy[Lifecycle]:
    """A ``Lifecycle`` with either hook, both, or neither."""
    return st.builds(
        Lifecycle,
        post_start=st.one_of(st.none(), handlers()),
        pre_stop=st.one_of(st.none(), handlers()),
    )


# 0 (no limit) or at least the engine's minimum memory limit, 6 MiB (smaller is invalid).
_MEMORY_LIMITS = st.one_of(st.just(0), st.integers(min_value=6 * 2**20, max_value=2**34))


@st.composite
def resources(draw: st.DrawFn) -> Resources:
    """Valid ``Resources``: each request at most its limit, no ephemeral-storage limit."""
    cpu_limit = draw(st.integers(min_value=0, max_value=8000))
    memory_limit = draw(_MEMORY_LIMITS)
    return Resources(
        requests=ResourceList(
            cpu=draw(st.integers(min_value=0, max_value=cpu_limit or 8000)),
            memory=draw(st.integers(min_value=0, max_value=memory_limit or 2**34)),
            ephemeral_storage=draw(st.integers(min_value=0, max_value=2**40)),
        ),
        limits=ResourceList(cpu=cpu_limit, memory=memory_limit),
    )


_LABEL_KEYS = st.sampled_from(["app", "tier", "example.com/team", "app.kubernetes.io/name"])
_LABEL_VALUES = st.sampled_from(["", "web", "a.b-c_d", "v1"])


def pod_labels() -> st.SearchStrategy[dict[str, str]]:
    """Valid ``metadata.labels`` (a few typical keys)."""
    return st.dictionaries(_LABEL_KEYS, _LABEL_VALUES, max_size=3)


def _off_mounts(path: str, mounts: list[VolumeMount]) -> str:
    """``path``, or no termination-message file when a volume is mounted there."""
    return "" if any(m.mount_path == path for m in mounts) else path


@st.composite
def containers(
    draw: st.DrawFn,
    *,
    name: st.SearchStrategy[str] | None = None,
    volume_names: list[str] | None = None,
    host_ports: st.SearchStrategy[int] | None = None,
    max_ports: int = 3,
    minimal: bool = False,
    extras: bool = False,
) -> Container:
    """A ``Container``; its mounts name only ``volume_names`` (none when not given).

    The name is a DNS label other than ``net`` (reserved for the network container).
    With ``minimal``, only the name, image, ports and mounts are drawn and every other
    field keeps its default: several times faster, for properties that are about the
    pod's structure (names, ports, volumes) rather than the container's details.
    With ``extras``, the fields added for issue 13 are drawn too (``resources`` instead
    of the 2014 ``cpu``/``memory`` half the time, ``tty``, ``stdin``, ``stdin_once``);
    without, the draws are the ones the convergence properties were tuned with.
    """
    names = name if name is not None else dns_labels()
    text = st.text(_TEXT, max_size=8)
    mounts: list[VolumeMount] = []
    if volume_names:
        # Docker refuses two mounts on one path ("Duplicate mount point").
        mounts = draw(
            st.lists(volume_mounts(volume_names), max_size=2, unique_by=lambda m: m.mount_path)
        )
    container_name = draw(names.filter(lambda n: n != "net"))
    image = draw(images())
    container_ports = tuple(
        _unique_port_names(draw(st.lists(ports(host_ports=host_ports), max_size=max_ports)))
    )
    if minimal:
        return Container(
            name=container_name,
            image=image,
            ports=container_ports,
            volume_mounts=tuple(mounts),
        )
    limits = draw(st.one_of(st.none(), resources())) if extras else None
    container = Container(
        name=container_name,
        image=image,
        command=tuple(draw(st.lists(text, max_size=2))),
        args=tuple(draw(st.lists(text, max_size=2))),
        working_dir=draw(st.one_of(st.just(""), absolute_paths())),
        env=tuple(draw(st.lists(env_vars(), max_size=3))),
        ports=container_ports,
        volume_mounts=tuple(mounts),
        # The 2014 single values, or resources: one spelling per container.
        cpu=0 if limits is not None else draw(st.integers(min_value=0, max_value=8000)),
        memory=0 if limits is not None else draw(_MEMORY_LIMITS),
        image_pull_policy=draw(st.sampled_from(PullPolicy)),
        liveness_probe=draw(st.one_of(st.none(), probes())),
        lifecycle=draw(st.one_of(st.none(), lifecycles())),
        privileged=draw(st.booleans()),
        # Nor a volume's mount and the termination-message file on one path (the
        # loader refuses it). Dropped after the draw rather than filtered, so that the
        # draws - and the worlds the convergence properties were tuned with - stay.
        termination_message_path=_off_mounts(
            draw(st.one_of(st.just(""), absolute_paths())), mounts
        ),
    )
    if not extras:
        return container
    return attrs.evolve(
        container,
        resources=limits,
        tty=draw(st.booleans()),
        stdin=draw(st.booleans()),
        stdin_once=draw(st.booleans()),
    )


def _unpublish_repeats(items: list[Container]) -> list[Container]:
    # A pod may use each (host port, protocol) once (validation's checkHostPortConflicts):
    # later repeats become unpublished (host port 0) rather than being filtered away, so
    # shrinking stays effective.
    seen: set[tuple[int, PortProtocol]] = set()
    result = []
    for container in items:
        fixed = []
        for port in container.ports:
            key = (port.host_port, port.protocol)
            if port.host_port and key in seen:
                port = attrs.evolve(port, host_port=0)
            seen.add(key)
            fixed.append(port)
        result.append(attrs.evolve(container, ports=tuple(fixed)))
    return result


@st.composite
def pods(
    draw: st.DrawFn,
    *,
    max_containers: int = 3,
    host_ports: st.SearchStrategy[int] | None = None,
    uid: st.SearchStrategy[str] | None = None,
    minimal: bool = False,
    extras: bool = False,
) -> Pod:
    """A valid ``Pod``: unique container and volume names, mounts of its own volumes, and
    each host port and protocol published at most once.

    Args:
        max_containers: the most app containers (at least one is drawn).
        host_ports: the published host ports to draw from (see ``ports``).
        uid: the uid strategy; by default half the pods get a random UUID and half the
            uid ``derive_pod_uid`` gives them (as a pod file without a uid would).
        minimal: draw minimal containers (see ``containers``).
        extras: draw the fields added for issue 13 too (see ``containers``; the pod's
            labels, annotations, hostname, subdomain and host aliases).
    """
    pod_volumes = draw(st.lists(volumes(), max_size=3, unique_by=lambda v: v.name))
    volume_names = [v.name for v in pod_volumes]
    app_containers = draw(
        st.lists(
            containers(
                volume_names=volume_names, host_ports=host_ports, minimal=minimal, extras=extras
            ),
            min_size=1,
            max_size=max_containers,
            unique_by=lambda c: c.name,
        )
    )
    name = draw(dns_labels())
    namespace = draw(st.one_of(st.just("default"), dns_labels()))
    source = draw(pod_sources())
    if uid is not None:
        pod_uid = draw(uid)
    elif draw(st.booleans()):
        pod_uid = draw(pod_uids())
    else:
        pod_uid = derive_pod_uid(source, namespace, name)
    pod = Pod(
        name=name,
        containers=tuple(_unpublish_repeats(app_containers)),
        volumes=tuple(pod_volumes),
        namespace=namespace,
        source=source,
        restart_policy=draw(st.sampled_from(RestartPolicy)),
        dns_policy=draw(st.sampled_from(DNSPolicy)),
        uid=pod_uid,
        termination_grace_period_seconds=draw(st.none() | st.integers(0, 2**31 - 1)),
    )
    if not extras:
        return pod
    return attrs.evolve(
        pod,
        labels=draw(pod_labels()),
        annotations=draw(st.dictionaries(_LABEL_KEYS, st.text(_TEXT, max_size=8), max_size=2)),
        hostname=draw(st.one_of(st.just(""), dns_labels())),
        subdomain=draw(st.one_of(st.just(""), dns_labels())),
        host_aliases=tuple(
            draw(
                st.lists(
                    st.builds(
                        HostAlias,
                        ip=st.sampled_from(["10.0.0.1", "127.0.0.1", "fd00::1"]),
                        hostnames=st.lists(dns_labels(), max_size=2).map(tuple),
                    ),
                    max_size=2,
                )
            )
        ),
    )


#: The stop records podsync writes (``ObservedContainer.stopped_by_podsync``): the reasons
#: of its kills of app containers, and a failed postStart handler.
STOP_RECORDS = (
    "spec-changed",
    "pod-rebuild",
    "duplicate",
    "not-in-spec",
    "unhealthy",
    "post-start-failed",
    "network-lost",
)


@st.composite
def later_states(
    draw: st.DrawFn, container: ObservedContainer, *, since: float
) -> ObservedContainer:
    """``container``, a running instance podsync created, as a later observation may find
    it:

    * running on;
    * exited by itself with code 0, 1 or 137, a moment or a while after ``since``;
    * stopped by podsync, with its stop record, the process having exited 0 or 137;
    * created and never started (its start failed, or apply was interrupted between
      create and start);

    and, when it carries podsync's labels, with any restart count from 0 to 6, so that a
    crash-loop back-off may be in progress.
    """
    labels = dict(container.labels)
    if labels and draw(st.booleans()):
        labels[LABEL_RESTART_COUNT] = str(draw(st.integers(0, 6)))
    fate = draw(st.sampled_from(["running", "exited", "stopped", "created"]))
    if fate == "running":
        return attrs.evolve(container, labels=labels)
    if fate == "created":
        # Docker keeps the exit code of a failed start (127, 128) on a "created" container.
        return attrs.evolve(
            container,
            labels=labels,
            running=False,
            exit_code=draw(st.sampled_from([0, 127, 128])),
            finished_at=None,
        )
    finished_at = since + draw(st.sampled_from([0.5, 20.0]))
    if fate == "exited":
        return attrs.evolve(
            container,
            labels=labels,
            running=False,
            exit_code=draw(st.sampled_from([0, 1, 137])),
            finished_at=finished_at,
        )
    return attrs.evolve(
        container,
        labels=labels,
        running=False,
        exit_code=draw(st.sampled_from([0, 137])),
        finished_at=finished_at,
        stopped_by_podsync=draw(st.sampled_from(STOP_RECORDS)),
    )


# --- security settings -----------------------------------------------------------------

_PROFILES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            SecurityProfile(ProfileType.RUNTIME_DEFAULT),
            SecurityProfile(ProfileType.UNCONFINED),
            SecurityProfile(ProfileType.LOCALHOST, "profiles/a.json"),
        ]
    ),
)
_IDS = st.one_of(st.none(), st.integers(min_value=0, max_value=2**31 - 1))


def security_contexts() -> st.SearchStrategy[SecurityContext]:
    """A container ``SecurityContext``, any field set or not (for hashing and the JSON
    form; the planner may refuse or hold some of them)."""
    capability_names = st.lists(st.sampled_from(["ALL", "NET_ADMIN", "SYS_TIME", "CHOWN"]))
    return st.builds(
        SecurityContext,
        run_as_user=_IDS,
        run_as_group=_IDS,
        run_as_non_root=st.one_of(st.none(), st.booleans()),
        capabilities=st.one_of(
            st.none(),
            st.builds(Capabilities, capability_names.map(tuple), capability_names.map(tuple)),
        ),
        allow_privilege_escalation=st.one_of(st.none(), st.booleans()),
        read_only_root_filesystem=st.booleans(),
        seccomp_profile=_PROFILES,
        app_armor_profile=_PROFILES,
    )


def pod_security_contexts() -> st.SearchStrategy[PodSecurityContext]:
    """A ``PodSecurityContext``, any field set or not (see ``security_contexts``)."""
    sysctl = st.sampled_from(
        [
            Sysctl("kernel.shm_rmid_forced", "1"),
            Sysctl("net.ipv4.ip_local_port_range", "1024 65535"),
            Sysctl("net.ipv4.tcp_syncookies", "0"),
        ]
    )
    return st.builds(
        PodSecurityContext,
        run_as_user=_IDS,
        run_as_group=_IDS,
        run_as_non_root=st.one_of(st.none(), st.booleans()),
        seccomp_profile=_PROFILES,
        app_armor_profile=_PROFILES,
        supplemental_groups=st.lists(st.integers(0, 70000), max_size=2).map(tuple),
        fs_group=_IDS,
        sysctls=st.lists(sysctl, max_size=2, unique_by=lambda s: s.name).map(tuple),
        host_network=st.booleans(),
        host_pid=st.booleans(),
        host_ipc=st.booleans(),
        share_process_namespace=st.booleans(),
    )


@st.composite
def secured_pods(draw: st.DrawFn) -> Pod:
    """A ``pods()`` pod whose pod and containers may carry security contexts."""
    pod = draw(pods())
    return attrs.evolve(
        pod,
        containers=tuple(
            attrs.evolve(c, security_context=draw(st.one_of(st.none(), security_contexts())))
            for c in pod.containers
        ),
        security_context=draw(st.one_of(st.none(), pod_security_contexts())),
    )
