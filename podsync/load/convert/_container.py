"""Schema to model for one container: a v1 or v1beta1 container becomes a ``Container``,
with its probes, lifecycle hooks, ports, mounts and environment, and the rule that a
port a probe or hook names is one of the container's named ports.

Contract: like ``_document``'s functions (which call these): every problem is appended
to ``out`` as a ``(path, message)`` pair; nothing raises for bad data, nothing does I/O.
The conversions between the two schemas and the model are here: v1beta1 ``command`` is
the model's ``args``, its ``cpu`` and ``memory`` the model's 2014 values; a v1 env is
resolved by ``_env`` and a v1 container's ``resources`` come from
``_pod`` (through the caller).

Layering: a part of ``_document`` (which calls it), on ``schema._pod``, ``_scalars``,
``_env``, ``_yaml`` and the model; never the planner, no I/O. Nothing here is
public API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from podsync.load.convert._env import _expand_all, _PodFacts, _resolve_env
from podsync.load.schema._pod import (
    _ContainerV1,
    _ContainerV1Beta1,
    _EnvVarSchema,
    _ExecAction,
    _HandlerV1,
    _HTTPGetV1,
    _HTTPGetV1Beta1,
    _LifecycleV1,
    _LifecycleV1Beta1,
    _PortSchema,
    _ProbeV1,
    _ProbeV1Beta1,
    _TCPSocketV1,
    _TCPSocketV1Beta1,
)
from podsync.load.schema._scalars import _TERMINATION_MESSAGE_POLICIES, _choose, _one_of
from podsync.load.schema._volumes import _VolumeMountSchema
from podsync.load.schema._yaml import _Invalid
from podsync.model._pod import (
    Container,
    EnvVar,
    Handler,
    HTTPGetAction,
    HTTPHeader,
    Lifecycle,
    Port,
    Probe,
    PullPolicy,
    Resources,
    TCPSocketAction,
    TerminationMessagePolicy,
)
from podsync.model._volume import VolumeMount

# Nothing here is public API: ``_document`` converts each pod's containers through these.
__all__: list[str] = []


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
    image_pull_policy: str,
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
        # An absent policy stays absent: its default follows the tag (default_pull_policy).
        image_pull_policy=PullPolicy(image_pull_policy) if image_pull_policy else None,
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
    # the file is read (see _env).
    before = len(facts.missing)
    env = _resolve_env(c.env, c.name, facts, path, out, c.env_from)
    # Each object or key once, in the order the env reads them.
    missing = dict.fromkeys(message for _, message in facts.missing[before:])
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
        config_error="; ".join(missing),
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
        image_pull_policy=c.image_pull_policy,
        privileged=c.privileged,
    )


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
