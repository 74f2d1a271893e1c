"""Security settings from pod files to the model: container and pod
``securityContext``, the host namespaces, and the deprecated AppArmor and seccomp
annotations (v1 only: v1beta1 had ``privileged`` alone).

Contract: ``_with_security(doc, containers, root, out)`` gives the containers their
``SecurityContext`` and returns the pod's ``PodSecurityContext`` (``None`` when a pod
or a container sets nothing); every problem is appended to ``out`` as a ``(path,
message)`` pair, as ``_document`` does. Annotations are applied as the kubelet did
before the fields existed, fields winning; the checks are Kubernetes' validation's.

Layering: a part of ``_document`` (which calls it), on ``schema._pod`` and the model; no I/O.
Nothing here is public API.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from podsync.load.schema._pod import _PodItemV1, _PodV1
from podsync.load.schema._security import _PodSecurityContext, _ProfileSchema, _SecurityContext
from podsync.model._pod import Container
from podsync.model._security import (
    Capabilities,
    PodSecurityContext,
    ProfileType,
    SecurityContext,
    SecurityProfile,
    Sysctl,
    profile_path_problem,
    sysctl_namespace,
)

__all__: list[str] = []

# The deprecated annotations, applied as the kubelet did before the fields existed, the
# fields winning (kubelet-modern.md §7: ``getSeccompProfile``, kuberuntime/helpers.go, and
# ``GetProfile``, pkg/security/apparmor/helpers.go). Their values use the old string form.
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"
_SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/"


def _profile(
    profile: _ProfileSchema | None, seccomp: bool, path: str, out: list[tuple[str, str]]
) -> SecurityProfile | None:
    if profile is None:
        return None
    name = profile.localhost_profile
    if profile.type is ProfileType.LOCALHOST:
        at = f"{path}.localhostProfile"
        if name is None:
            out.append((at, "required when type is Localhost"))
            return None
        problem = profile_path_problem(name) if seccomp else _apparmor_name_problem(name)
        if problem is not None:
            out.append((at, problem))
            return None
        return SecurityProfile(ProfileType.LOCALHOST, name)
    if name is not None:
        out.append((f"{path}.localhostProfile", "may only be set when type is Localhost"))
        return None
    return SecurityProfile(profile.type)


def _apparmor_name_problem(name: str) -> str | None:
    if not name or name != name.strip() or any(ch in name for ch in "\0\n"):
        return f"must be the name of an AppArmor profile loaded on the host, got {name!r}"
    return None


def _annotation_profile(
    value: str, seccomp: bool, path: str, out: list[tuple[str, str]]
) -> SecurityProfile | None:
    """A profile in the annotations' string form: ``runtime/default``, ``unconfined``,
    ``localhost/<name>`` (and seccomp's older ``docker/default``)."""
    if value == "runtime/default" or (seccomp and value == "docker/default"):
        return SecurityProfile(ProfileType.RUNTIME_DEFAULT)
    if value == "unconfined":
        return SecurityProfile(ProfileType.UNCONFINED)
    if value.startswith("localhost/"):
        name = value.removeprefix("localhost/")
        problem = profile_path_problem(name) if seccomp else _apparmor_name_problem(name)
        if problem is not None:
            out.append((path, f"localhost/<name>: the name {problem}"))
            return None
        return SecurityProfile(ProfileType.LOCALHOST, name)
    expected = "runtime/default, unconfined or localhost/<profile>"
    out.append((path, f"must be {expected}, got {value!r}"))
    return None


def _annotations(
    annotations: dict[str, str],
    containers: Sequence[Container],
    meta_path: str,
    out: list[tuple[str, str]],
) -> tuple[SecurityProfile | None, dict[str, SecurityProfile], dict[str, SecurityProfile]]:
    """The pod's seccomp annotation, and the containers' seccomp and AppArmor
    annotations by container name. An annotation naming no container of the pod is an
    error, as Kubernetes' validation makes it."""
    names = {c.name for c in containers}
    pod_seccomp: SecurityProfile | None = None
    seccomp: dict[str, SecurityProfile] = {}
    apparmor: dict[str, SecurityProfile] = {}
    for key, value in annotations.items():
        at = f"{meta_path}.annotations[{key!r}]"
        if key == _SECCOMP_POD_ANNOTATION:
            pod_seccomp = _annotation_profile(value, True, at, out)
            continue
        for prefix, is_seccomp, found in (
            (_SECCOMP_ANNOTATION, True, seccomp),
            (_APPARMOR_ANNOTATION, False, apparmor),
        ):
            if not key.startswith(prefix):
                continue
            container = key.removeprefix(prefix)
            if container not in names:
                out.append((at, f"no container named {container!r} in this pod"))
                continue
            profile = _annotation_profile(value, is_seccomp, at, out)
            if profile is not None:
                found[container] = profile
    return pod_seccomp, seccomp, apparmor


def _container_security(
    sc: _SecurityContext | None,
    seccomp_annotation: SecurityProfile | None,
    apparmor_annotation: SecurityProfile | None,
    path: str,
    out: list[tuple[str, str]],
) -> SecurityContext | None:
    at = f"{path}.securityContext"
    given = sc or _SecurityContext()
    caps = given.capabilities
    if given.allow_privilege_escalation is False:
        # Kubernetes' ValidateSecurityContext: escalation cannot be prevented for a
        # process that has every privilege anyway.
        if given.privileged:
            out.append(
                (
                    f"{at}.allowPrivilegeEscalation",
                    "cannot be false when privileged is true",
                )
            )
        elif caps is not None and "SYS_ADMIN" in caps.add:
            out.append(
                (
                    f"{at}.allowPrivilegeEscalation",
                    "cannot be false when capabilities.add has SYS_ADMIN",
                )
            )
    seccomp = _profile(given.seccomp_profile, True, f"{at}.seccompProfile", out)
    apparmor = _profile(given.app_armor_profile, False, f"{at}.appArmorProfile", out)
    context = SecurityContext(
        run_as_user=given.run_as_user,
        run_as_group=given.run_as_group,
        run_as_non_root=given.run_as_non_root,
        capabilities=Capabilities(add=caps.add, drop=caps.drop) if caps is not None else None,
        allow_privilege_escalation=given.allow_privilege_escalation,
        read_only_root_filesystem=given.read_only_root_filesystem,
        seccomp_profile=seccomp if given.seccomp_profile is not None else seccomp_annotation,
        app_armor_profile=(
            apparmor if given.app_armor_profile is not None else apparmor_annotation
        ),
    )
    return None if context == SecurityContext() else context


def _pod_security(
    doc: _PodV1 | _PodItemV1,
    seccomp_annotation: SecurityProfile | None,
    spec_path: str,
    out: list[tuple[str, str]],
) -> PodSecurityContext | None:
    spec = doc.spec
    at = f"{spec_path}.securityContext"
    given = spec.security_context or _PodSecurityContext()
    if spec.share_process_namespace and spec.host_pid:
        out.append(
            (
                f"{spec_path}.shareProcessNamespace",
                "cannot be true when hostPID is true: the pod would share the host's "
                "process namespace",
            )
        )
    sysctls: list[Sysctl] = []
    first: dict[str, str] = {}
    for i, sysctl in enumerate(given.sysctls):
        sysctl_at = f"{at}.sysctls[{i}]"
        earlier = first.setdefault(sysctl.name, sysctl_at)
        if earlier != sysctl_at:
            out.append(
                (f"{sysctl_at}.name", f"duplicate sysctl {sysctl.name!r} (first at {earlier})")
            )
        namespace = sysctl_namespace(sysctl.name)
        # Kubernetes' validateSysctls: a namespaced sysctl of a namespace the pod shares
        # with the host would change the host.
        if namespace == "net" and spec.host_network:
            out.append((f"{sysctl_at}.name", "a net.* sysctl cannot be set with hostNetwork"))
        if namespace == "ipc" and spec.host_ipc:
            out.append((f"{sysctl_at}.name", f"{sysctl.name} cannot be set with hostIPC"))
        sysctls.append(Sysctl(sysctl.name, sysctl.value))
    seccomp = _profile(given.seccomp_profile, True, f"{at}.seccompProfile", out)
    apparmor = _profile(given.app_armor_profile, False, f"{at}.appArmorProfile", out)
    context = PodSecurityContext(
        run_as_user=given.run_as_user,
        run_as_group=given.run_as_group,
        run_as_non_root=given.run_as_non_root,
        seccomp_profile=seccomp if given.seccomp_profile is not None else seccomp_annotation,
        app_armor_profile=apparmor,
        supplemental_groups=given.supplemental_groups,
        fs_group=given.fs_group,
        sysctls=tuple(sysctls),
        host_network=spec.host_network,
        host_pid=spec.host_pid,
        host_ipc=spec.host_ipc,
        share_process_namespace=spec.share_process_namespace,
    )
    return None if context == PodSecurityContext() else context


def _with_security(
    doc: _PodV1 | _PodItemV1,
    containers: Sequence[Container],
    root: str,
    out: list[tuple[str, str]],
    init_containers: Sequence[Container] = (),
) -> tuple[list[Container], PodSecurityContext | None, list[Container]]:
    """The containers with their security contexts, the pod's (annotations applied),
    and the init containers with theirs (annotations may name them too)."""
    spec_path = f"{root}.spec"
    pod_seccomp, seccomp, apparmor = _annotations(
        doc.metadata.annotations, [*init_containers, *containers], f"{root}.metadata", out
    )
    pod_context = _pod_security(doc, pod_seccomp, spec_path, out)
    init_result = [
        attrs.evolve(
            _host_network_ports(
                container,
                doc.spec.host_network and container.restart_policy is not None,
                f"{spec_path}.initContainers[{i}]",
                out,
            ),
            security_context=_container_security(
                schema.security_context,
                seccomp.get(container.name),
                apparmor.get(container.name),
                f"{spec_path}.initContainers[{i}]",
                out,
            ),
        )
        for i, (schema, container) in enumerate(
            zip(doc.spec.init_containers, init_containers, strict=True)
        )
    ]
    result = []
    for i, (schema, container) in enumerate(zip(doc.spec.containers, containers, strict=True)):
        context = _container_security(
            schema.security_context,
            seccomp.get(container.name),
            apparmor.get(container.name),
            f"{spec_path}.containers[{i}]",
            out,
        )
        container = _host_network_ports(
            container, doc.spec.host_network, f"{spec_path}.containers[{i}]", out
        )
        if context is not None or container.security_context is not None:
            container = attrs.evolve(container, security_context=context)
        result.append(container)
    return result, pod_context, init_result


def _host_network_ports(
    container: Container, host_network: bool, at: str, out: list[tuple[str, str]]
) -> Container:
    """``container`` (at ``at``) with its host ports defaulted when ``host_network``
    says the pod is on the host's network (an app container, or a sidecar: both publish
    what they listen on). There a container port is a host port: Kubernetes defaults
    the host port to it (``SetDefaults_Pod``, ``defaultHostNetworkPorts``, for the
    containers and the init containers alike) and refuses another one."""
    if not host_network or not container.ports:
        return container
    ports = []
    for j, port in enumerate(container.ports):
        if port.host_port not in (0, port.container_port):
            out.append(
                (
                    f"{at}.ports[{j}].hostPort",
                    f"must be {port.container_port} (the containerPort) or unset with hostNetwork",
                )
            )
        ports.append(attrs.evolve(port, host_port=port.container_port))
    return attrs.evolve(container, ports=tuple(ports))
