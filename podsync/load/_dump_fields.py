"""The model's own fields as Kubernetes YAML, for ``_dump`` (``dump_pods``): ports,
mounts, resources, handlers and probes, security contexts, and the pods of the 2014
``cpu``/``memory`` values as the v1beta1 ``ContainerManifest`` they come from.

Each function is the reverse of the loader's reading of the same field
(``podsync.load.convert``: ``_container``, ``_pod``, ``_security``, ``_document``'s
``_pod_from_v1beta1``), and leaves a default value out. No I/O; nothing here is public
API.
"""

from __future__ import annotations

from typing import Any

import attrs

from podsync.model._pod import (
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HTTPGetAction,
    Lifecycle,
    Pod,
    Port,
    PortProtocol,
    Probe,
    ResourceList,
    Resources,
    TCPSocketAction,
    derive_pod_uid,
)
from podsync.model._security import PodSecurityContext, SecurityContext, SecurityProfile
from podsync.model._volume import Volume, VolumeMount

__all__: list[str] = []


class _Refused(ValueError):
    pass


def _refuse(pod: Pod, path: str, why: str) -> _Refused:
    return _Refused(f"pod {pod.key}: {path}: {why}")


def _mount(m: VolumeMount) -> dict[str, Any]:
    out: dict[str, Any] = {"name": m.name, "mountPath": m.mount_path}
    if m.read_only:
        out["readOnly"] = True
    return out


def _port(p: Port) -> dict[str, Any]:
    out: dict[str, Any] = {"containerPort": p.container_port}
    if p.name:
        out["name"] = p.name
    if p.host_port:
        out["hostPort"] = p.host_port
    if p.host_ip:
        out["hostIP"] = p.host_ip
    if p.protocol is not PortProtocol.TCP:
        out["protocol"] = p.protocol.value
    return out


def _quantities(values: ResourceList) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if values.cpu:
        out["cpu"] = f"{values.cpu}m"
    if values.memory:
        out["memory"] = values.memory
    if values.ephemeral_storage:
        out["ephemeral-storage"] = values.ephemeral_storage
    return out


def _resources(r: Resources) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, values in (("limits", r.limits), ("requests", r.requests)):
        amounts = _quantities(values)
        if amounts:
            out[key] = amounts
    return out


def _handler(h: Handler) -> dict[str, Any]:
    if h.exec_command is not None:
        return {"exec": {"command": list(h.exec_command)}}
    if h.http_get is not None:
        g = h.http_get
        get: dict[str, Any] = {"port": g.port}
        if g.path:
            get["path"] = g.path
        if g.host:
            get["host"] = g.host
        if g.scheme != "HTTP":
            get["scheme"] = g.scheme
        if g.http_headers:
            get["httpHeaders"] = [{"name": x.name, "value": x.value} for x in g.http_headers]
        return {"httpGet": get}
    assert h.tcp_socket is not None  # a Handler has exactly one action
    tcp: dict[str, Any] = {"port": h.tcp_socket.port}
    if h.tcp_socket.host:
        tcp["host"] = h.tcp_socket.host
    return {"tcpSocket": tcp}


_PROBE_DEFAULTS = attrs.asdict(Probe(Handler(exec_command=("true",))), recurse=False)


def _probe(p: Probe) -> dict[str, Any]:
    out = _handler(p.handler)
    for field, key in (
        ("initial_delay_seconds", "initialDelaySeconds"),
        ("period_seconds", "periodSeconds"),
        ("timeout_seconds", "timeoutSeconds"),
        ("success_threshold", "successThreshold"),
        ("failure_threshold", "failureThreshold"),
        ("termination_grace_period_seconds", "terminationGracePeriodSeconds"),
    ):
        value = getattr(p, field)
        if value != _PROBE_DEFAULTS[field]:
            out[key] = value
    return out


def _lifecycle(lifecycle: Lifecycle) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if lifecycle.post_start is not None:
        out["postStart"] = _handler(lifecycle.post_start)
    if lifecycle.pre_stop is not None:
        out["preStop"] = _handler(lifecycle.pre_stop)
    return out


def _profile(p: SecurityProfile) -> dict[str, str]:
    out = {"type": p.type.value}
    if p.localhost_profile:
        out["localhostProfile"] = p.localhost_profile
    return out


def _identity(sc: SecurityContext | PodSecurityContext) -> dict[str, Any]:
    """The fields a pod's and a container's security contexts share."""
    out: dict[str, Any] = {}
    if sc.run_as_user is not None:
        out["runAsUser"] = sc.run_as_user
    if sc.run_as_group is not None:
        out["runAsGroup"] = sc.run_as_group
    if sc.run_as_non_root is not None:
        out["runAsNonRoot"] = sc.run_as_non_root
    if sc.seccomp_profile is not None:
        out["seccompProfile"] = _profile(sc.seccomp_profile)
    if sc.app_armor_profile is not None:
        out["appArmorProfile"] = _profile(sc.app_armor_profile)
    return out


def _container_security(sc: SecurityContext | None, privileged: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if privileged:
        out["privileged"] = True
    if sc is None:
        return out
    out.update(_identity(sc))
    if sc.capabilities is not None:
        caps: dict[str, Any] = {}
        if sc.capabilities.add:
            caps["add"] = list(sc.capabilities.add)
        if sc.capabilities.drop:
            caps["drop"] = list(sc.capabilities.drop)
        out["capabilities"] = caps
    if sc.allow_privilege_escalation is not None:
        out["allowPrivilegeEscalation"] = sc.allow_privilege_escalation
    if sc.read_only_root_filesystem:
        out["readOnlyRootFilesystem"] = True
    return out


def _pod_security(sc: PodSecurityContext | None) -> dict[str, Any]:
    """The pod spec's ``securityContext`` and host-namespace fields."""
    if sc is None:
        return {}
    out: dict[str, Any] = {}
    for key, flag in (
        ("hostNetwork", sc.host_network),
        ("hostPID", sc.host_pid),
        ("hostIPC", sc.host_ipc),
        ("shareProcessNamespace", sc.share_process_namespace),
    ):
        if flag:
            out[key] = True
    context = _identity(sc)
    if sc.supplemental_groups:
        context["supplementalGroups"] = list(sc.supplemental_groups)
    if sc.fs_group is not None:
        context["fsGroup"] = sc.fs_group
    if sc.sysctls:
        context["sysctls"] = [{"name": s.name, "value": s.value} for s in sc.sysctls]
    if context:
        out["securityContext"] = context
    return out


# ---------------------------------------------------------------------------------------
# v1beta1 manifests: the pods of the 2014 cpu/memory values
# ---------------------------------------------------------------------------------------

_LEGACY_PULL = {"Always": "PullAlways", "Never": "PullNever", "IfNotPresent": "PullIfNotPresent"}
_LEGACY_RESTART = {"Always": "always", "OnFailure": "onFailure", "Never": "never"}


def _manifest(pod: Pod) -> dict[str, Any]:
    """A pod with the 2014 ``cpu``/``memory`` values as the v1beta1 ``ContainerManifest``
    it came from (a v1 Pod cannot hold them; ``_container_v1beta1`` reads them back);
    refused when it holds what a manifest cannot."""
    manifest: dict[str, Any] = {"version": "v1beta1", "id": pod.name}
    if pod.uid != derive_pod_uid(pod.source, pod.namespace, pod.name):
        manifest["uuid"] = pod.uid
    manifest["restartPolicy"] = {_LEGACY_RESTART[pod.restart_policy.value]: {}}
    if pod.dns_policy is not DNSPolicy.CLUSTER_FIRST:
        manifest["dnsPolicy"] = pod.dns_policy.value
    if pod.volumes:
        manifest["volumes"] = [
            {
                "name": v.name,
                "source": {"hostDir": {"path": v.host_path}}
                if v.host_path is not None
                else {"emptyDir": {}},
            }
            for v in pod.volumes
        ]
    manifest["containers"] = [_legacy_container(c) for c in pod.containers]
    # What the manifest says, as the loader reads it: anything else the pod holds would
    # be lost.
    said = Pod(
        pod.name,
        tuple(_legacy_part(c) for c in pod.containers),
        tuple(Volume(v.name, host_path=v.host_path) for v in pod.volumes),
        source=pod.source,
        uid=pod.uid,
        restart_policy=pod.restart_policy,
        dns_policy=pod.dns_policy,
    )
    if said != pod:
        lost = [f.name for f in attrs.fields(Pod) if getattr(said, f.name) != getattr(pod, f.name)]
        raise _refuse(
            pod,
            "$",
            "it has the 2014 cpu/memory values, which only a v1beta1 manifest holds, and "
            f"fields a manifest cannot hold ({', '.join(lost)}): give resources instead",
        )
    return manifest


def _legacy_part(c: Container) -> Container:
    """What of ``c`` a v1beta1 container holds."""

    def handler(h: Handler | None, probe: bool) -> Handler | None:
        if h is None or h.exec_command is not None:
            return h
        if h.http_get is not None:
            g = h.http_get
            return Handler(http_get=HTTPGetAction(g.port, g.path, g.host))
        assert h.tcp_socket is not None  # a Handler has exactly one action
        return Handler(tcp_socket=TCPSocketAction(h.tcp_socket.port)) if probe else None

    probe = c.liveness_probe
    lifecycle = c.lifecycle
    return Container(
        c.name,
        c.image,
        args=c.args,
        working_dir=c.working_dir,
        env=tuple(EnvVar(e.name, e.value) for e in c.env),
        ports=c.ports,
        volume_mounts=c.volume_mounts,
        cpu=c.cpu,
        memory=c.memory,
        image_pull_policy=c.image_pull_policy,
        liveness_probe=None
        if probe is None
        else Probe(handler(probe.handler, True), probe.initial_delay_seconds),  # type: ignore[arg-type]
        lifecycle=None
        if lifecycle is None
        else Lifecycle(handler(lifecycle.post_start, False), handler(lifecycle.pre_stop, False)),
        privileged=c.privileged,
        termination_message_path=c.termination_message_path,
    )


def _legacy_container(c: Container) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name, "image": c.image}
    if c.args:
        out["command"] = list(c.args)  # v1beta1's command is the model's args
    if c.working_dir:
        out["workingDir"] = c.working_dir
    if c.ports:
        out["ports"] = [_port(p) for p in c.ports]
    if c.env:
        out["env"] = [{"name": e.name, "value": str.__str__(e.value)} for e in c.env]
    if c.cpu:
        out["cpu"] = c.cpu
    if c.memory:
        out["memory"] = c.memory
    if c.volume_mounts:
        out["volumeMounts"] = [_mount(m) for m in c.volume_mounts]
    if c.liveness_probe is not None:
        probe = _handler(c.liveness_probe.handler)
        if c.liveness_probe.initial_delay_seconds:
            probe["initialDelaySeconds"] = c.liveness_probe.initial_delay_seconds
        out["livenessProbe"] = probe
    if c.lifecycle is not None:
        out["lifecycle"] = _lifecycle(c.lifecycle)
    if c.termination_message_path:
        out["terminationMessagePath"] = c.termination_message_path
    if c.privileged:
        out["privileged"] = True
    if c.image_pull_policy is not None:
        out["imagePullPolicy"] = _LEGACY_PULL[c.image_pull_policy.value]
    return out
