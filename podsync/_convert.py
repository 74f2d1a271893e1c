"""Schema to model: pod documents become ``Pod`` / ``Container``, with cross-field checks.

Contract: ``_read_document(data, root, context, out)`` takes one document of plain data
(from ``_yaml``), decides what it is (a v1 ``Pod``, a ``List`` / ``PodList``, a v1beta1
``ContainerManifest``), structures it through ``_schema`` and converts it into pods
(``_Read``), each with the paths of its name and uid (for ``_config``'s duplicate
messages) and its one warning line (the fields it sets that podsync ignores). Every
problem is appended to ``out`` as a ``(path, message)`` pair; a document with problems
gives no pod. It never raises for bad data.

Here live the rules that involve several values of one pod: handlers with exactly one
action, duplicate volume, container, port names and mount paths, mounts that name no
volume, ports named by a probe or hook that the container does not have, a host port
used twice, one v1beta1 restart policy; and the conversions between the two schemas
and the model (v1beta1 ``command`` is the model's ``args``, its ``cpu`` and ``memory``
the model's 2014 values; a v1 container's ``resources`` and the pod fields beyond the
2014 ones are ``_convert_pod``'s; a v1 env is resolved by ``_env_resolve``; a v1beta1
manifest without ``id`` is named after its file).

Layering: the top of the loader below ``_config``: it imports ``_schema``,
``_convert_pod``, ``_unsupported``, ``_env_resolve``, ``_scalars``, ``_yaml``, ``_node``
and the model,
never the planner, and does no I/O. Its names keep their
leading underscore: they are shared among the loader's modules only; nothing here is
public API.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Sequence
from typing import Any

import attrs

from podsync._convert_pod import (
    _app_restart_policies,
    _check_empty_dir,
    _check_memory_mounts,
    _in_memory,
    _init_rules,
    _pod_fields,
    _resources,
)
from podsync._convert_security import _with_security
from podsync._env_resolve import _expand_all, _PodFacts, _resolve_env
from podsync._models import (
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HTTPGetAction,
    HTTPHeader,
    Lifecycle,
    Pod,
    Port,
    PortProtocol,
    Probe,
    PullPolicy,
    Resources,
    RestartPolicy,
    TCPSocketAction,
    TerminationMessagePolicy,
    Volume,
    VolumeMount,
    derive_pod_uid,
)
from podsync._node import NodeInfo
from podsync._objects import _Objects
from podsync._scalars import _TERMINATION_MESSAGE_POLICIES, _choose, _one_of
from podsync._schema import (
    _ContainerV1,
    _ContainerV1Beta1,
    _Empty,
    _EmptyDirV1,
    _EnvVarSchema,
    _ExecAction,
    _HandlerV1,
    _HostPathSource,
    _HostPathV1,
    _HTTPGetV1,
    _HTTPGetV1Beta1,
    _LifecycleV1,
    _LifecycleV1Beta1,
    _ListV1,
    _ManifestV1Beta1,
    _PodItemV1,
    _PodV1,
    _PortSchema,
    _ProbeV1,
    _ProbeV1Beta1,
    _RestartPolicyV1Beta1,
    _structure,
    _TCPSocketV1,
    _TCPSocketV1Beta1,
    _VolumeMountSchema,
)
from podsync._security import PodSecurityContext
from podsync._unsupported import (
    _DNS_OPTIONS,
    _IGNORED,
    _SCHEDULING,
    _SERVICE_ACCOUNT,
    _WARNING_GROUPS,
    _WRITTEN_BY_SERVER,
)
from podsync._yaml import _describe, _Invalid

# Nothing here is public API: ``_config`` reads each document through ``_read_document``.
__all__: list[str] = []


@attrs.frozen
class _Context:
    """What a document is read with besides its data.

    Attributes:
        source: the pods' source (``file``, ``http``, ``api``).
        node: the node the pods run on (environment values, the ``nodeName`` warning).
        file: names the stream a 2014 manifest without ``id`` derives its name from
            (an absolute path, a URL, the ``source_name`` given to ``parse_pods``);
            ``None`` when there is none (standard input).
    """

    source: str
    node: NodeInfo
    file: str | None
    # The ConfigMaps and Secrets of all sources (env, envFrom).
    objects: _Objects = attrs.field(factory=_Objects)


@attrs.frozen
class _Read:
    """A pod read from a document, with where its name and uid are, and its warning."""

    pod: Pod
    name_path: str
    uid_path: str
    warning: str = ""


# ---------------------------------------------------------------------------------------
# Schema to model
# ---------------------------------------------------------------------------------------


def _handler(
    exec_: _ExecAction | None,
    http_get: _HTTPGetV1Beta1 | None,
    tcp_socket: _TCPSocketV1Beta1 | None,
    allowed: Sequence[str],
    path: str,
    out: list[tuple[str, str]],
) -> Handler | None:
    given = [
        key
        for key, action in (("exec", exec_), ("httpGet", http_get), ("tcpSocket", tcp_socket))
        if action is not None
    ]
    if len(given) != 1:
        got = " and ".join(given) if given else "none"
        out.append((path, f"needs exactly one of {_one_of(allowed)}, got {got}"))
        return None
    if exec_ is not None:
        if not exec_.command:
            out.append((f"{path}.exec.command", "must not be empty"))
            return None
        return Handler(exec_command=exec_.command)
    if http_get is not None:
        scheme = http_get.scheme if isinstance(http_get, _HTTPGetV1) else "HTTP"
        headers = tuple(
            HTTPHeader(h.name, h.value)
            for h in (http_get.http_headers if isinstance(http_get, _HTTPGetV1) else ())
        )
        return Handler(
            http_get=HTTPGetAction(
                port=http_get.port,
                path=http_get.path,
                host=http_get.host,
                scheme=scheme,
                http_headers=headers,
            )
        )
    assert tcp_socket is not None
    host = tcp_socket.host if isinstance(tcp_socket, _TCPSocketV1) else ""
    return Handler(tcp_socket=TCPSocketAction(port=tcp_socket.port, host=host))


_PROBE_ACTIONS = ("exec", "httpGet", "tcpSocket")

# Why a gRPC probe is refused rather than run: the kubelet's (pkg/probe/grpc/grpc.go)
# calls grpc.health.v1.Health/Check over HTTP/2 with protobuf messages, and podsync has
# neither a gRPC client nor an HTTP/2 one among its dependencies.
_GRPC_REFUSAL = (
    "grpc is not supported by podsync: a gRPC health check needs a gRPC client "
    "(HTTP/2 and protobuf), which podsync does not have; run a health-check program "
    "with an exec probe (e.g. grpc_health_probe -addr=:PORT) or use tcpSocket"
)


def _probe(
    probe: _ProbeV1 | _ProbeV1Beta1 | None,
    path: str,
    out: list[tuple[str, str]],
    *,
    kind: str = "liveness",
) -> Probe | None:
    """A probe of ``kind`` (liveness, readiness or startup) with Kubernetes' defaults
    for what it leaves out, and the API's rules for the kind (``validateProbe`` and
    its callers in ``pkg/apis/core/validation/validation.go``): a liveness or startup
    probe needs a success threshold of 1 (its verdict only ever turns to failure: the
    container is then killed); a readiness probe never kills, so it has no grace period
    of its own."""
    if probe is None:
        return None
    if isinstance(probe, _ProbeV1) and probe.grpc is not None:
        out.append((f"{path}.grpc", _GRPC_REFUSAL))
        return None
    before = len(out)
    handler = _handler(probe.exec_, probe.http_get, probe.tcp_socket, _PROBE_ACTIONS, path, out)
    if not isinstance(probe, _ProbeV1):  # v1beta1 had the initial delay only
        return None if handler is None else Probe(handler, probe.initial_delay_seconds)
    success = probe.success_threshold
    if kind != "readiness" and success is not None and success != 1:
        out.append((f"{path}.successThreshold", f"must be 1 for a {kind} probe, got {success}"))
    grace = probe.termination_grace_period_seconds
    if grace is not None:
        if kind == "readiness":
            out.append(
                (
                    f"{path}.terminationGracePeriodSeconds",
                    "must not be set for a readiness probe (it never stops the container)",
                )
            )
        elif grace < 1:
            at = f"{path}.terminationGracePeriodSeconds"
            out.append((at, f"must be at least 1, got {grace}"))
    if handler is None or len(out) > before:
        return None
    defaults = Probe(handler)
    return Probe(
        handler,
        initial_delay_seconds=probe.initial_delay_seconds,
        period_seconds=_or(probe.period_seconds, defaults.period_seconds),
        timeout_seconds=_or(probe.timeout_seconds, defaults.timeout_seconds),
        success_threshold=_or(success, defaults.success_threshold),
        failure_threshold=_or(probe.failure_threshold, defaults.failure_threshold),
        termination_grace_period_seconds=grace,
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _lifecycle(
    lifecycle: _LifecycleV1 | _LifecycleV1Beta1 | None, path: str, out: list[tuple[str, str]]
) -> Lifecycle | None:
    if lifecycle is None:
        return None
    hooks: list[Handler | None] = []
    for key, handler in (("postStart", lifecycle.post_start), ("preStop", lifecycle.pre_stop)):
        if handler is None:
            hooks.append(None)
        elif isinstance(handler, _HandlerV1):
            hooks.append(
                _handler(
                    handler.exec_,
                    handler.http_get,
                    handler.tcp_socket,
                    _PROBE_ACTIONS,
                    f"{path}.{key}",
                    out,
                )
            )
        else:  # v1beta1 handlers had exec and httpGet only
            hooks.append(
                _handler(
                    handler.exec_, handler.http_get, None, ("exec", "httpGet"), f"{path}.{key}", out
                )
            )
    return Lifecycle(post_start=hooks[0], pre_stop=hooks[1])


def _ports(ports: Sequence[_PortSchema]) -> tuple[Port, ...]:
    return tuple(
        Port(
            container_port=p.container_port,
            host_port=p.host_port,
            protocol=p.protocol,
            name=p.name,
            host_ip=p.host_ip,
        )
        for p in ports
    )


def _env(env: Sequence[_EnvVarSchema]) -> tuple[EnvVar, ...]:
    return tuple(EnvVar(name=e.name, value=e.value) for e in env)


def _mounts(mounts: Sequence[_VolumeMountSchema]) -> tuple[VolumeMount, ...]:
    return tuple(
        VolumeMount(name=m.name, mount_path=m.mount_path, read_only=m.read_only) for m in mounts
    )


def _container(
    c: _ContainerV1 | _ContainerV1Beta1,
    path: str,
    out: list[tuple[str, str]],
    *,
    command: tuple[str, ...],
    args: tuple[str, ...],
    cpu: int,
    memory: int,
    image_pull_policy: PullPolicy,
    privileged: bool,
    env: tuple[EnvVar, ...],
    termination_message_policy: TerminationMessagePolicy = TerminationMessagePolicy.FILE,
    **extra: Any,
) -> Container:
    """A container from the fields both schemas spell alike; the caller gives the rest."""
    return Container(
        name=c.name,
        image=c.image,
        command=command,
        args=args,
        working_dir=c.working_dir,
        env=env,
        ports=_ports(c.ports),
        volume_mounts=_mounts(c.volume_mounts),
        cpu=cpu,
        memory=memory,
        image_pull_policy=image_pull_policy,
        liveness_probe=_probe(c.liveness_probe, f"{path}.livenessProbe", out),
        lifecycle=_lifecycle(c.lifecycle, f"{path}.lifecycle", out),
        privileged=privileged,
        termination_message_path=c.termination_message_path,
        # v1beta1 had liveness probes only.
        readiness_probe=_probe(
            c.readiness_probe if isinstance(c, _ContainerV1) else None,
            f"{path}.readinessProbe",
            out,
            kind="readiness",
        ),
        startup_probe=_probe(
            c.startup_probe if isinstance(c, _ContainerV1) else None,
            f"{path}.startupProbe",
            out,
            kind="startup",
        ),
        termination_message_policy=termination_message_policy,
        **extra,
    )


def _container_v1(
    c: _ContainerV1,
    facts: _PodFacts,
    path: str,
    out: list[tuple[str, str]],
    resources: Resources | None,
) -> Container:
    # The kubelet's makeEnvironmentVariables and ExpandContainerCommandAndArgs, when
    # the file is read (see _env_resolve).
    env = _resolve_env(c.env, c.name, facts, path, out, c.env_from)
    return _container(
        c,
        path,
        out,
        env=env,
        command=_expand_all(c.command, env),
        args=_expand_all(c.args, env),
        # The v1 resources are the model's Resources; the 2014 single values stay 0.
        cpu=0,
        memory=0,
        image_pull_policy=c.image_pull_policy,
        privileged=c.security_context.privileged if c.security_context else False,
        resources=resources,
        tty=c.tty,
        stdin=c.stdin,
        stdin_once=c.stdin_once,
        termination_message_policy=_termination_message_policy(
            c.termination_message_policy, f"{path}.terminationMessagePolicy", out
        ),
    )


def _termination_message_policy(
    text: str, path: str, out: list[tuple[str, str]]
) -> TerminationMessagePolicy:
    """``File`` or ``FallbackToLogsOnError`` (read here rather than by a schema hook:
    the schema module is at its size limit)."""
    try:
        return _choose(
            text, _TERMINATION_MESSAGE_POLICIES, TerminationMessagePolicy.FILE, fold_case=False
        )
    except _Invalid as exc:
        out.append((path, str(exc)))
        return TerminationMessagePolicy.FILE


def _container_v1beta1(c: _ContainerV1Beta1, path: str, out: list[tuple[str, str]]) -> Container:
    return _container(
        c,
        path,
        out,
        # v1beta1's ``command`` replaced the image's CMD, not its ENTRYPOINT: the seed's
        # runContainer passed it as Docker's ``Cmd``. That is ``args`` in the v1 model.
        # No $(VAR) expansion: it came with v1.
        env=_env(c.env),
        command=(),
        args=c.command,
        cpu=c.cpu,
        memory=c.memory,
        image_pull_policy=PullPolicy(c.image_pull_policy),
        privileged=c.privileged,
    )


def _volume(
    name: str,
    host: _HostPathSource | _HostPathV1 | None,
    empty: _Empty | _EmptyDirV1 | None,
    keys: tuple[str, str],
    path: str,
    out: list[tuple[str, str]],
) -> Volume:
    if host is not None and empty is not None:
        out.append((path, f"needs at most one of {keys[0]} or {keys[1]}, got both"))
    if isinstance(empty, _EmptyDirV1):
        _check_empty_dir(empty, f"{path}.{keys[1]}", out)
    # No source at all means emptyDir (the 2014 validation default).
    return Volume(name=name, host_path=host.path if host is not None else None)


def _restart_v1beta1(
    policy: _RestartPolicyV1Beta1 | None, path: str, out: list[tuple[str, str]]
) -> RestartPolicy:
    if policy is None:
        return RestartPolicy.ALWAYS
    chosen = [
        (key, value)
        for key, flag, value in (
            ("always", policy.always, RestartPolicy.ALWAYS),
            ("onFailure", policy.on_failure, RestartPolicy.ON_FAILURE),
            ("never", policy.never, RestartPolicy.NEVER),
        )
        if flag is not None
    ]
    if len(chosen) > 1:
        got = " and ".join(key for key, _ in chosen)
        out.append((path, f"must set only one of always, onFailure or never, got {got}"))
    # None set means Always, as the 2014 validation defaulted it (and syncPod read it).
    return chosen[0][1] if chosen else RestartPolicy.ALWAYS


def _check_pod(
    containers: Sequence[Container],
    volumes: Sequence[Volume],
    spec_path: str,
    out: list[tuple[str, str]],
    init_containers: Sequence[Container] = (),
) -> None:
    """The rules that relate values across the pod (paths are the same in v1 and v1beta1);
    init containers share the app containers' names and rules (Kubernetes' validation)."""
    if not containers:
        out.append((f"{spec_path}.containers", "a pod needs at least one container"))
    volume_paths: dict[str, str] = {}
    for i, volume in enumerate(volumes):
        at = f"{spec_path}.volumes[{i}]"
        first = volume_paths.setdefault(volume.name, at)
        if first != at:
            out.append((f"{at}.name", f"duplicate volume name {volume.name!r} (first at {first})"))
    container_paths: dict[str, str] = {}
    host_ports: dict[tuple[int, PortProtocol], str] = {}
    every = [
        *((f"{spec_path}.initContainers[{i}]", c) for i, c in enumerate(init_containers)),
        *((f"{spec_path}.containers[{i}]", c) for i, c in enumerate(containers)),
    ]
    for at, container in every:
        first = container_paths.setdefault(container.name, at)
        if first != at:
            out.append(
                (f"{at}.name", f"duplicate container name {container.name!r} (first at {first})")
            )
        port_names: dict[str, str] = {}
        for j, port in enumerate(container.ports):
            port_at = f"{at}.ports[{j}]"
            if port.name:
                first = port_names.setdefault(port.name, port_at)
                if first != port_at:
                    out.append(
                        (f"{port_at}.name", f"duplicate port name {port.name!r} (first at {first})")
                    )
            if port.host_port:
                # One pod cannot publish the same host port twice (the seed's
                # checkHostPortConflicts). The seed keyed on the number alone; here
                # 53/TCP and 53/UDP are different ports, as they are to the kernel.
                key = (port.host_port, port.protocol)
                first = host_ports.setdefault(key, port_at)
                if first != port_at:
                    out.append(
                        (
                            f"{port_at}.hostPort",
                            f"host port {port.host_port}/{port.protocol.value} is already "
                            f"used by {first}",
                        )
                    )
        mount_paths: dict[str, str] = {}
        for j, mount in enumerate(container.volume_mounts):
            mount_at = f"{at}.volumeMounts[{j}]"
            if mount.name not in volume_paths:
                # The seed silently skipped such mounts (makeBinds).
                known = (
                    f"volumes: {', '.join(sorted(volume_paths))}"
                    if volume_paths
                    else "the pod has no volumes"
                )
                out.append(
                    (
                        f"{mount_at}.name",
                        f"no volume named {mount.name!r} in this pod ({known})",
                    )
                )
            first = mount_paths.setdefault(mount.mount_path, mount_at)
            if first != mount_at:
                out.append(
                    (
                        f"{mount_at}.mountPath",
                        f"duplicate mount path {mount.mount_path!r} (first at {first})",
                    )
                )
        _check_named_ports(container, at, out)


def _check_named_ports(container: Container, path: str, out: list[tuple[str, str]]) -> None:
    """A port given by name in a probe or hook must be a named port of the container."""
    names = {port.name for port in container.ports if port.name}
    handlers: list[tuple[str, Handler | None]] = []
    for key, probe in (
        ("livenessProbe", container.liveness_probe),
        ("readinessProbe", container.readiness_probe),
        ("startupProbe", container.startup_probe),
    ):
        if probe is not None:
            handlers.append((f"{path}.{key}", probe.handler))
    if container.lifecycle is not None:
        handlers.append((f"{path}.lifecycle.postStart", container.lifecycle.post_start))
        handlers.append((f"{path}.lifecycle.preStop", container.lifecycle.pre_stop))
    for at, handler in handlers:
        if handler is None:
            continue
        for key, action in (("httpGet", handler.http_get), ("tcpSocket", handler.tcp_socket)):
            if action is not None and isinstance(action.port, str) and action.port not in names:
                out.append((f"{at}.{key}.port", f"no port named {action.port!r} in this container"))


def _pod_from_v1(
    doc: _PodV1 | _PodItemV1, root: str, context: _Context, out: list[tuple[str, str]]
) -> _Read | None:
    spec_path = f"{root}.spec"
    before = len(out)
    extra = _pod_fields(doc, root, out)
    volumes = [
        _volume(
            v.name,
            v.host_path,
            v.empty_dir,
            ("hostPath", "emptyDir"),
            f"{spec_path}.volumes[{i}]",
            out,
        )
        for i, v in enumerate(doc.spec.volumes)
    ]
    meta = doc.metadata
    resources = [
        _resources(c.resources, f"{spec_path}.containers[{i}]", out)
        for i, c in enumerate(doc.spec.containers)
    ]
    inits = [
        (c, f"{spec_path}.initContainers[{i}]") for i, c in enumerate(doc.spec.init_containers)
    ]
    init_resources = [_resources(c.resources, at, out) for c, at in inits]
    everyone = [*doc.spec.init_containers, *doc.spec.containers]
    named = zip(everyone, [*init_resources, *resources], strict=True)
    facts = _PodFacts(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid or derive_pod_uid(context.source, meta.namespace, meta.name),
        labels=meta.labels,
        annotations=meta.annotations,
        # serviceAccount is the deprecated spelling; serviceAccountName wins.
        service_account=doc.spec.service_account_name or doc.spec.service_account,
        node=context.node,
        objects=context.objects,
        # Reversed: with a repeated name (an error of its own) the first one counts.
        resources={c.name: r for c, r in reversed(list(named))},
    )
    containers = [
        _container_v1(c, facts, f"{spec_path}.containers[{i}]", out, resources[i])
        for i, c in enumerate(doc.spec.containers)
    ]
    _app_restart_policies(doc.spec.containers, spec_path, out)
    init_containers = [
        _init_rules(c, _container_v1(c, facts, at, out, r), at, out)
        for (c, at), r in zip(inits, init_resources, strict=True)
    ]
    containers, pod_security, init_containers = _with_security(
        doc, containers, root, out, init_containers
    )
    volumes = _in_memory(volumes, [v.empty_dir for v in doc.spec.volumes], resources, context.node)
    _check_pod(containers, volumes, spec_path, out, init_containers)
    _check_memory_mounts(containers, volumes, spec_path, out)
    if len(out) > before:
        return None
    pod = _make_pod(
        meta.name,
        meta.namespace,
        meta.uid,
        context.source,
        containers,
        volumes,
        doc.spec.restart_policy,
        doc.spec.dns_policy,
        doc.spec.termination_grace_period_seconds,
        extra,
        pod_security,
        init_containers,
    )
    uid_path = f"{root}.metadata.uid" if meta.uid is not None else f"{root}.metadata.name"
    return _Read(pod, f"{root}.metadata.name", uid_path, _warning(doc, pod, context.node))


def _warning(doc: _PodV1 | _PodItemV1, pod: Pod, node: NodeInfo) -> str:
    """The pod's one warning line: the fields it sets that mean nothing on one host.

    ``pod default/web: ignoring scheduling fields: nodeSelector, tolerations; ...``,
    groups in ``_WARNING_GROUPS`` order, fields in document order; empty when none.
    """
    spec = doc.spec
    groups: dict[str, list[str]] = {group: [] for group in _WARNING_GROUPS}
    for key in spec.ignored:
        groups[_IGNORED["PodSpec"][key]].append(key)
    # An ephemeral-storage request only informs a cluster's scheduler: the kubelet makes
    # no cgroup of it (kubelet-modern.md §6), and podsync reserves no disk.
    groups[_SCHEDULING].extend(
        f"containers[{i}].resources.requests.ephemeral-storage"
        for i, c in enumerate(pod.containers)
        if c.resources is not None and c.resources.requests.ephemeral_storage
    )
    for key, name in (
        ("serviceAccountName", spec.service_account_name),
        ("serviceAccount", spec.service_account),
    ):
        if name:
            groups[_SERVICE_ACCOUNT].append(key)
    if spec.dns_config is not None:
        groups[_DNS_OPTIONS].extend(f"dnsConfig.{key}" for key in spec.dns_config.ignored)
    groups[_WRITTEN_BY_SERVER].extend(f"metadata.{key}" for key in doc.metadata.ignored)
    groups[_WRITTEN_BY_SERVER].extend(doc.ignored)
    clauses = [f"ignoring {group}: {', '.join(keys)}" for group, keys in groups.items() if keys]
    # A static pod runs on the node whose kubelet reads it: the kubelet sets nodeName to
    # its own name (pkg/kubelet/config/common.go, applyDefaults), so a file naming
    # another node still runs here - which its author may not expect.
    if spec.node_name and spec.node_name != node.name:
        clauses.append(
            f"nodeName {spec.node_name!r} is not this node ({node.name!r}): the pod runs here"
        )
    return f"pod {pod.key}: {'; '.join(clauses)}" if clauses else ""


def _pod_from_v1beta1(
    doc: _ManifestV1Beta1, root: str, context: _Context, out: list[tuple[str, str]]
) -> _Read | None:
    before = len(out)
    volumes = []
    for i, v in enumerate(doc.volumes):
        host = v.source.host_dir if v.source else None
        empty = v.source.empty_dir if v.source else None
        volumes.append(
            _volume(
                v.name, host, empty, ("hostDir", "emptyDir"), f"{root}.volumes[{i}].source", out
            )
        )
    containers = [
        _container_v1beta1(c, f"{root}.containers[{i}]", out) for i, c in enumerate(doc.containers)
    ]
    restart = _restart_v1beta1(doc.restart_policy, f"{root}.restartPolicy", out)
    _check_pod(containers, volumes, root, out)
    name: str | None = doc.id
    if name is None:
        if context.file is None:
            out.append(
                (
                    f"{root}.id",
                    "required field missing: standard input has no file name to derive "
                    "the pod's name from",
                )
            )
        else:
            name = _name_from_file(context.file)
    if len(out) > before or name is None:
        return None
    pod = _make_pod(
        name, "default", doc.uuid, context.source, containers, volumes, restart, doc.dns_policy
    )
    uid_path = f"{root}.uuid" if doc.uuid is not None else f"{root}.id"
    return _Read(pod, f"{root}.id", uid_path)


# The file source of late 2014 (pkg/kubelet/config/file.go, simpleSubdomainSafeHash)
# named a manifest's pod after its file: base32 with this alphabet, so the name is a
# DNS label.
_STANDARD_BASE32 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_SUBDOMAIN_SAFE_BASE32 = b"0123456789abcdefghijklmnopqrstuv"
_NOT_LABEL_CHARACTERS = re.compile(r"[^a-z0-9]+")


def _name_from_file(file: str) -> str:
    """The pod name of a 2014 manifest without ``id``, as the late-2014 file source made it.

    The first 15 characters of the file's lower-cased base name without anything but
    ``a-z`` and ``0-9``, then the first 30 characters of the SHA-1 of the whole name in
    base32 (``0-9a-v``): ``webserver`` + 30 characters for ``/etc/pods/web-server.yaml``.
    The same file always gives the same name; two files with the same base name in
    different directories give different ones.
    """
    base = _NOT_LABEL_CHARACTERS.sub("", os.path.basename(file).lower())
    digest = base64.b32encode(hashlib.sha1(file.encode("utf-8")).digest())
    safe = digest.translate(bytes.maketrans(_STANDARD_BASE32, _SUBDOMAIN_SAFE_BASE32))
    return f"{base[:15]}{safe.decode('ascii')[:30]}"


def _make_pod(
    name: str,
    namespace: str,
    uid: str | None,
    source: str,
    containers: Sequence[Container],
    volumes: Sequence[Volume],
    restart_policy: RestartPolicy,
    dns_policy: DNSPolicy,
    termination_grace_period_seconds: int | None = None,
    extra: dict[str, Any] | None = None,
    security_context: PodSecurityContext | None = None,
    init_containers: Sequence[Container] = (),
) -> Pod:
    fields: dict[str, Any] = {
        **(extra or {}),
        "name": name,
        "namespace": namespace,
        "source": source,
        "containers": tuple(containers),
        "volumes": tuple(volumes),
        "restart_policy": restart_policy,
        "dns_policy": dns_policy,
        "termination_grace_period_seconds": termination_grace_period_seconds,
        "security_context": security_context,
        "init_containers": tuple(init_containers),
    }
    if uid is not None:  # otherwise Pod derives it from source, namespace and name
        fields["uid"] = uid
    return Pod(**fields)


# ---------------------------------------------------------------------------------------
# Documents and streams
# ---------------------------------------------------------------------------------------

_KINDS = "Pod, List, PodList, ConfigMap or Secret"

_NOT_A_POD = (
    "expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or PodList of pods, "
    "or a v1beta1 ContainerManifest (version: v1beta1)"
)


def _read_document(
    data: object, root: str, context: _Context, out: list[tuple[str, str]]
) -> list[_Read]:
    """The pods of one document (or of one item of a top-level list)."""
    if not isinstance(data, dict):
        out.append((root, f"{_NOT_A_POD}, got {_describe(data)}"))
        return []
    results: list[_Read | None] = []
    if "kind" in data or "apiVersion" in data:
        kind = data.get("kind")
        if "kind" not in data:
            out.append((f"{root}.kind", "required field missing (Pod, List or PodList)"))
        elif not isinstance(kind, str):
            out.append((f"{root}.kind", f"expected a string, got {_describe(kind)}"))
        elif kind == "Pod":
            pod = _structure(data, _PodV1, root, out)
            if pod is not None:
                results.append(_pod_from_v1(pod, root, context, out))
        elif kind in ("List", "PodList"):
            pod_list = _structure(data, _ListV1, root, out)
            if pod_list is not None:
                results.extend(
                    _pod_from_v1(item, f"{root}.items[{i}]", context, out)
                    for i, item in enumerate(pod_list.items)
                )
        else:
            out.append((f"{root}.kind", f"unsupported kind {kind!r}: expected {_KINDS}"))
    elif "version" in data:
        manifest = _structure(data, _ManifestV1Beta1, root, out)
        if manifest is not None:
            results.append(_pod_from_v1beta1(manifest, root, context, out))
    else:
        out.append((root, f"not a pod: {_NOT_A_POD}"))
    return [r for r in results if r is not None]
