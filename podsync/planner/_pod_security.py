"""Pod Security admission: the checks of the Kubernetes Pod Security Standards, level by
level, as the PodSecurity admission controller runs them (``k8s.io/pod-security-admission``,
``policy/check_*.go``, one check per file; each function below names its file).

The modern kubelet enforces none of this itself: the API server's admission does, per
namespace, before a pod reaches a node. podsync reads pods from files, HTTP and etcd with
no API server in front of it, so its admission runs the checks itself, on every container
of the pod: app containers, init containers and sidecars alike.

The levels are cumulative (``PodSecurityLevel``): ``privileged`` checks nothing;
``baseline`` checks host namespaces, privileged, capabilities beyond the baseline set,
hostPath volumes, AppArmor, seccomp and sysctls; ``restricted`` adds privilege
escalation, running as non-root, ``runAsUser`` 0, the volume types, a required seccomp
profile and the capabilities drop/add rule. Where the restricted level has its own
version of a baseline check (capabilities, seccomp, volume types over hostPath), it
replaces the baseline one, as PodSecurity's ``overrides`` do.

Three checks of the standard are not here, because the loader already refuses what they
forbid, at every level: ``seLinuxOptions``, ``procMount`` and ``windowsOptions``
(HostProcess) are fields podsync does not take. One check is deliberately left out:
**host ports** (``check_hostPorts.go``) are allowed at every level. Publishing ports and
filtering their conflicts is podsync's own job, and a host port opens a port, not the node.

A failing pod fails with every violated check at once, in PodSecurity's order and words
(``privileged (container "setup" must not set securityContext.privileged=true)``), each
followed by the option that opens it (``allow with --allow-privileged``). The options open
their check by name, at any level: ``--allow-privileged``, ``--allow-host-namespaces``,
``--allowed-capabilities``, ``--allowed-host-paths``, ``--allow-unconfined``,
``--allowed-unsafe-sysctls``; what only the restricted level forbids is opened by
``--pod-security baseline``.

Contract: pure; ``pod_security_violations`` reads the pod and the options only.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence

import attrs

from podsync.actions._actions import Reason
from podsync.actions._options import AllowedHostPath, PlanOptions, PodSecurityLevel
from podsync.model._pod import Container, Pod
from podsync.model._security import (
    PodSecurityContext,
    ProfileType,
    SecurityContext,
    SecurityProfile,
    host_namespaces,
    sysctl_allowed,
    sysctl_namespace,
)

__all__: list[str] = []  # the planner's own

#: The capabilities a baseline container may add (``check_capabilities_baseline.go``):
#: the container engines' default set, less NET_RAW.
BASELINE_CAPABILITIES: frozenset[str] = frozenset(
    {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
        "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
    }
)  # fmt: skip

#: The one capability a restricted container may add (``check_capabilities_restricted.go``).
RESTRICTED_CAPABILITIES: frozenset[str] = frozenset({"NET_BIND_SERVICE"})

# The options that open a check, as the command line spells them (the library's
# ``PlanOptions`` field is named in the docstring of each).
_PRIVILEGED = "--allow-privileged"
_HOST_NAMESPACES = "--allow-host-namespaces"
_CAPABILITIES = "--allowed-capabilities"
_HOST_PATHS = "--allowed-host-paths"
_UNCONFINED = "--allow-unconfined"
_SYSCTLS = "--allowed-unsafe-sysctls"
_BASELINE = "--pod-security baseline"


@attrs.frozen
class Violation:
    """One failed check: its name as PodSecurity reports it, the rejection reason it
    maps to, the offending fields (``details``, in order) and the options that would
    open it (``opened_by``, every one needed, in order)."""

    check: str
    reason: Reason
    details: tuple[str, ...]
    opened_by: tuple[str, ...]

    def __str__(self) -> str:
        opened_by = " and ".join(self.opened_by)
        return f"{self.check} ({'; '.join(self.details)}; allow with {opened_by})"


class _Found:
    """The details of one check as they are found, each with the option that opens it."""

    def __init__(self) -> None:
        self.details: list[str] = []
        self.opened_by: list[str] = []

    def add(self, detail: str, opened_by: str) -> None:
        self.details.append(detail)
        if opened_by not in self.opened_by:
            self.opened_by.append(opened_by)

    def violation(self, check: str, reason: Reason = Reason.POD_SECURITY) -> Violation | None:
        if not self.details:
            return None
        return Violation(check, reason, tuple(self.details), tuple(self.opened_by))


def _containers(names: Sequence[str]) -> str:
    """``container "a"`` or ``containers "a", "b"``: PodSecurity's way of naming them."""
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"container {quoted}" if len(names) == 1 else f"containers {quoted}"


def _quoted(values: Iterable[str]) -> str:
    return ", ".join(f'"{value}"' for value in values)


def _every(pod: Pod) -> tuple[Container, ...]:
    # Init containers (sidecars among them) first, as they are in the spec.
    return (*pod.init_containers, *pod.containers)


# ---------------------------------------------------------------------------------------
# Baseline


def _host_namespaces(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_hostNamespaces.go: hostNetwork, hostPID, hostIPC unset or false.
    found = _Found()
    if not options.allow_host_namespaces:
        wanted = host_namespaces(pod.security_context)
        if wanted:
            found.add(", ".join(f"{name}=true" for name in wanted), _HOST_NAMESPACES)
    return found.violation("host namespaces", Reason.HOST_NAMESPACE_NOT_ALLOWED)


def _privileged(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_privileged.go: securityContext.privileged unset or false, every container.
    found = _Found()
    if not options.allow_privileged:
        names = [c.name for c in _every(pod) if c.privileged]
        if names:
            found.add(
                f"{_containers(names)} must not set securityContext.privileged=true", _PRIVILEGED
            )
    return found.violation("privileged", Reason.PRIVILEGED_NOT_ALLOWED)


def _added_beyond(c: Container, allowed: frozenset[str], options: PlanOptions) -> list[str]:
    """The capabilities ``c`` adds beyond ``allowed`` and ``options.allowed_capabilities``
    (whose ``ALL`` allows every one)."""
    caps = c.security_context.capabilities if c.security_context else None
    if caps is None or "ALL" in options.allowed_capabilities:
        return []
    opened = options.allowed_capabilities
    return [name for name in caps.add if name not in allowed and name not in opened]


def _add_detail(c: Container, names: Sequence[str]) -> str:
    return (
        f'container "{c.name}" must not include {_quoted(names)} in '
        "securityContext.capabilities.add"
    )


def _capabilities_baseline(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_capabilities_baseline.go: add only the baseline set.
    found = _Found()
    for c in _every(pod):
        beyond = _added_beyond(c, BASELINE_CAPABILITIES, options)
        if beyond:
            found.add(_add_detail(c, beyond), _CAPABILITIES)
    return found.violation("non-default capabilities")


def allowed_host_path(path: str, allowed: Sequence[AllowedHostPath]) -> AllowedHostPath | None:
    """The entry of ``allowed`` that admits host path ``path`` (whole path components,
    after normalisation: ``/data`` admits ``/data/x``, not ``/database`` nor
    ``/data/../etc``), a writable one first; ``None`` when none does. PodSecurityPolicy's
    ``AllowsHostVolumePath``: a writable entry wins over a read-only one."""
    normal = posixpath.normpath(path)
    found = None
    for entry in allowed:
        prefix = entry.path_prefix
        if normal == prefix or normal.startswith(prefix.rstrip("/") + "/"):
            if not entry.read_only:
                return entry
            found = found or entry
    return found


def _allowed_paths(options: PlanOptions) -> tuple[AllowedHostPath, ...]:
    # The deprecated host_path_prefixes are writable entries (folded into the new option).
    old = tuple(AllowedHostPath(p) for p in options.host_path_prefixes or ())
    return options.allowed_host_paths + old


def _host_paths(pod: Pod, options: PlanOptions, found: _Found, restricted: bool) -> None:
    """The hostPath volumes of ``pod`` that ``--allowed-host-paths`` does not admit, and
    the writable mounts of those it admits read-only only."""
    allowed = _allowed_paths(options)
    for volume in pod.volumes:
        if volume.host_path is None:
            continue
        entry = allowed_host_path(volume.host_path, allowed)
        if entry is None:
            found.add(
                f'volume "{volume.name}" uses restricted volume type "hostPath"'
                if restricted
                else f'volume "{volume.name}" uses host path "{volume.host_path}"',
                _HOST_PATHS,
            )
        elif entry.read_only:
            writers = [
                c.name
                for c in _every(pod)
                if any(m.name == volume.name and not m.read_only for m in c.volume_mounts)
            ]
            if writers:
                found.add(
                    f'{_containers(writers)} must mount volume "{volume.name}" readOnly: '
                    f'host path "{entry.path_prefix}" is allowed read-only',
                    _HOST_PATHS,
                )


def _host_path_volumes(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_hostPathVolumes.go: no hostPath volume; podsync admits the ones under
    # --allowed-host-paths (PodSecurityPolicy's allowedHostPaths).
    found = _Found()
    _host_paths(pod, options, found, restricted=False)
    return found.violation("hostPath volumes", Reason.HOST_PATH_NOT_ALLOWED)


_Context = SecurityContext | PodSecurityContext | None


def _seccomp_of(context: _Context) -> SecurityProfile | None:
    return None if context is None else context.seccomp_profile


def _apparmor_of(context: _Context) -> SecurityProfile | None:
    return None if context is None else context.app_armor_profile


def _profiles(
    pod: Pod, which: Callable[[_Context], SecurityProfile | None]
) -> list[tuple[str, SecurityProfile | None]]:
    """``(owner, profile)`` for the pod's own setting, then each container's: the
    settings PodSecurity reads one by one (the pod's is a default, not a rule)."""
    found = [("pod", which(pod.security_context))]
    found += [(f'container "{c.name}"', which(c.security_context)) for c in _every(pod)]
    return found


def _unconfined(
    pod: Pod, options: PlanOptions, field: str, which: Callable[[_Context], SecurityProfile | None]
) -> _Found:
    found = _Found()
    if options.allow_unconfined:
        return found
    for owner, profile in _profiles(pod, which):
        if profile is not None and profile.type is ProfileType.UNCONFINED:
            found.add(
                f'{owner} must not set securityContext.{field}.type to "Unconfined"', _UNCONFINED
            )
    return found


def _apparmor(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_appArmorProfile.go: never Unconfined, pod or container (the loader has put
    # the legacy annotations into these fields).
    return _unconfined(pod, options, "appArmorProfile", _apparmor_of).violation(
        "forbidden AppArmor profile"
    )


def _seccomp_baseline(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_seccompProfile_baseline.go: never Unconfined, pod or container.
    return _unconfined(pod, options, "seccompProfile", _seccomp_of).violation("seccompProfile")


def _sysctls(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_sysctls.go: only the safe set (the kubelet's, model._security.SAFE_SYSCTLS),
    # and what --allowed-unsafe-sysctls adds. A sysctl no namespace holds is refused at
    # every level before this check (_admission: podsync never changes the whole host).
    context = pod.security_context
    found = _Found()
    if context is None:
        return None
    names = [
        s.name
        for s in context.sysctls
        if sysctl_namespace(s.name) is not None
        and not sysctl_allowed(s.name, options.allowed_unsafe_sysctls)
    ]
    if names:
        found.add(", ".join(names), _SYSCTLS)
    return found.violation("forbidden sysctls", Reason.SYSCTL_NOT_ALLOWED)


# ---------------------------------------------------------------------------------------
# Restricted


def _privilege_escalation(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_allowPrivilegeEscalation.go: every container sets it to false.
    found = _Found()
    names = [
        c.name
        for c in _every(pod)
        if c.security_context is None or c.security_context.allow_privilege_escalation is not False
    ]
    if names:
        found.add(
            f"{_containers(names)} must set securityContext.allowPrivilegeEscalation=false",
            _BASELINE,
        )
    return found.violation("allowPrivilegeEscalation != false")


def _capabilities_restricted(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_capabilities_restricted.go: drop ALL, add only NET_BIND_SERVICE.
    found = _Found()
    undropped = [
        c.name
        for c in _every(pod)
        if c.security_context is None
        or c.security_context.capabilities is None
        or "ALL" not in c.security_context.capabilities.drop
    ]
    if undropped:
        found.add(
            f'{_containers(undropped)} must set securityContext.capabilities.drop=["ALL"]',
            _BASELINE,
        )
    for c in _every(pod):
        beyond = _added_beyond(c, RESTRICTED_CAPABILITIES, options)
        if beyond:
            found.add(_add_detail(c, beyond), _CAPABILITIES)
    return found.violation("unrestricted capabilities")


def _volume_types(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_restrictedVolumes.go: only configMap, csi, downwardAPI, emptyDir, ephemeral,
    # persistentVolumeClaim, projected and secret. Of podsync's volumes, that leaves out
    # hostPath alone, which --allowed-host-paths opens here too.
    found = _Found()
    _host_paths(pod, options, found, restricted=True)
    return found.violation("restricted volume types", Reason.HOST_PATH_NOT_ALLOWED)


def _run_as_non_root(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_runAsNonRoot.go: true on the pod, or on every container; never false.
    found = _Found()
    pod_value = pod.security_context.run_as_non_root if pod.security_context else None
    if pod_value is False:
        found.add("pod must not set securityContext.runAsNonRoot=false", _BASELINE)
    explicit: list[str] = []
    implicit: list[str] = []
    for c in _every(pod):
        value = c.security_context.run_as_non_root if c.security_context else None
        if value is False:
            explicit.append(c.name)
        elif value is None and pod_value is not True:
            implicit.append(c.name)
    if explicit:
        found.add(
            f"{_containers(explicit)} must not set securityContext.runAsNonRoot=false", _BASELINE
        )
    if implicit:
        found.add(
            f"pod or {_containers(implicit)} must set securityContext.runAsNonRoot=true",
            _BASELINE,
        )
    return found.violation("runAsNonRoot != true")


def _run_as_user(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_runAsUser.go: never 0, pod or container.
    found = _Found()
    if pod.security_context is not None and pod.security_context.run_as_user == 0:
        found.add("pod must not set runAsUser=0", _BASELINE)
    names = [
        c.name
        for c in _every(pod)
        if c.security_context is not None and c.security_context.run_as_user == 0
    ]
    if names:
        found.add(f"{_containers(names)} must not set runAsUser=0", _BASELINE)
    return found.violation("runAsUser=0")


def _seccomp_restricted(pod: Pod, options: PlanOptions) -> Violation | None:
    # check_seccompProfile_restricted.go: RuntimeDefault or Localhost, set on the pod or
    # on every container; never Unconfined.
    found = _unconfined(pod, options, "seccompProfile", _seccomp_of)
    pod_profile = _seccomp_of(pod.security_context)
    unset = [c.name for c in _every(pod) if _seccomp_of(c.security_context) is None]
    if unset and pod_profile is None:
        found.add(
            f"pod or {_containers(unset)} must set securityContext.seccompProfile.type to "
            '"RuntimeDefault" or "Localhost"',
            _BASELINE,
        )
    return found.violation("seccompProfile")


_Check = Callable[[Pod, PlanOptions], "Violation | None"]

#: The checks of each level, in PodSecurity's order: the baseline checks, then the
#: restricted ones, each group by the check's id (``appArmorProfile``,
#: ``capabilities_baseline``, ``hostNamespaces``, ...). The restricted level's versions
#: of capabilities, hostPath and seccomp replace the baseline ones.
_CHECKS: dict[PodSecurityLevel, tuple[_Check, ...]] = {
    PodSecurityLevel.PRIVILEGED: (),
    PodSecurityLevel.BASELINE: (
        _apparmor,
        _capabilities_baseline,
        _host_namespaces,
        _host_path_volumes,
        _privileged,
        _seccomp_baseline,
        _sysctls,
    ),
    PodSecurityLevel.RESTRICTED: (
        _apparmor,
        _host_namespaces,
        _privileged,
        _sysctls,
        _privilege_escalation,
        _capabilities_restricted,
        _volume_types,
        _run_as_non_root,
        _run_as_user,
        _seccomp_restricted,
    ),
}


def pod_security_violations(pod: Pod, options: PlanOptions) -> list[Violation]:
    """Every check of ``options.pod_security`` that ``pod`` fails, in PodSecurity's
    order, with what the other options open taken out; empty when the pod passes."""
    if options.pod_security is PodSecurityLevel.BASELINE and _asks_nothing(pod):
        return []  # the common case, on every plan of every pod: nothing to look at
    found = (check(pod, options) for check in _CHECKS[options.pod_security])
    return [violation for violation in found if violation is not None]


def _asks_nothing(pod: Pod) -> bool:
    """Whether ``pod`` sets none of the fields a baseline check reads: no security
    context (the loader puts the AppArmor and seccomp annotations there), no privileged
    container, no hostPath volume."""
    if pod.security_context is not None:
        return False
    if any(volume.host_path is not None for volume in pod.volumes):
        return False
    return all(c.security_context is None and not c.privileged for c in _every(pod))


def pod_security_message(level: PodSecurityLevel, violations: Sequence[Violation]) -> str:
    """The rejection's message: the level, then every violation, as PodSecurity words it
    (``violates PodSecurity "baseline": privileged (...), hostPath volumes (...)``)."""
    return f'violates PodSecurity "{level.value}": ' + ", ".join(map(str, violations))
