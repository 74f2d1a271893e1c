"""Security settings: the model's security contexts, what a create asks of a runtime
(``ContainerSecurity``), and the pure rules between the two.

The model values (``SecurityContext`` of a container, ``PodSecurityContext`` of a pod,
``Capabilities``, ``SecurityProfile``, ``Sysctl``) are Kubernetes' ``securityContext``
fields, with the pod's host namespaces (``hostNetwork``, ``hostPID``, ``hostIPC``) and
``shareProcessNamespace`` grouped with them: they are what a pod asks of the kernel's
isolation. The loader applies the deprecated annotations (AppArmor, seccomp) to these
fields, fields winning, so the model holds one answer per setting.

The rules are the modern kubelet's (kubelet-modern.md §7):

* the effective context of a container is its own fields over the pod's, for
  ``runAsUser``, ``runAsGroup``, ``runAsNonRoot`` (``DetermineEffectiveSecurityContext``,
  pkg/securitycontext/util.go), seccomp (container field, else pod field:
  ``getSeccompProfile``, pkg/kubelet/kuberuntime/helpers.go) and AppArmor
  (``GetProfile``, pkg/security/apparmor/helpers.go);
* groups: ``fsGroup`` first, then ``supplementalGroups`` (``determineEffectiveSecurityContext``,
  pkg/kubelet/kuberuntime/security_context.go);
* ``allowPrivilegeEscalation: false`` is no-new-privileges; unset is not;
* ``runAsNonRoot`` is checked against the image's user before the create
  (``verifyRunAsNonRoot``, pkg/kubelet/kuberuntime/security_context_others.go);
* sysctls: only namespaced ones (``NamespacedBy``, k8s.io/component-helpers/node/util/
  sysctl), the safe set unless more are allowed (pkg/kubelet/sysctl/safe_sysctls.go,
  allowlist.go).

Contract: frozen values and pure functions; nothing here does I/O. Resolving a
Localhost seccomp profile gives a path under the root directory; reading it, and
knowing whether the engine's host has AppArmor, is the runtime's business.
"""

from __future__ import annotations

import enum
import posixpath
import re
from collections.abc import Iterable, Sequence

import attrs

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "Capabilities",
    "ContainerSecurity",
    "PodSecurityContext",
    "ProfileType",
    "SecurityContext",
    "SecurityProfile",
    "Sysctl",
]


class ProfileType(enum.StrEnum):
    """The kind of a seccomp or AppArmor profile (Kubernetes ``type``)."""

    RUNTIME_DEFAULT = "RuntimeDefault"  # the engine's default profile
    UNCONFINED = "Unconfined"  # no profile
    LOCALHOST = "Localhost"  # a profile of the host, named by ``localhost_profile``


@attrs.frozen
class SecurityProfile:
    """A seccomp or AppArmor profile (Kubernetes ``seccompProfile`` / ``appArmorProfile``).

    ``localhost_profile`` is set exactly for ``LOCALHOST``: for seccomp a path relative to
    ``<root_dir>/seccomp`` (as the kubelet resolves it under its root directory), for
    AppArmor the name of a profile loaded on the host.
    """

    type: ProfileType
    localhost_profile: str = ""


@attrs.frozen
class Capabilities:
    """Capabilities added to and dropped from the engine's default set, in Kubernetes'
    spelling (``NET_ADMIN``, no ``CAP_`` prefix; ``ALL`` is every capability)."""

    add: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()


@attrs.frozen
class SecurityContext:
    """A container's ``securityContext`` (``privileged`` is ``Container.privileged``).

    ``None`` means "not set": the pod's value, then the image's or the engine's default.
    """

    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    capabilities: Capabilities | None = None
    allow_privilege_escalation: bool | None = None
    read_only_root_filesystem: bool = False
    seccomp_profile: SecurityProfile | None = None
    app_armor_profile: SecurityProfile | None = None


@attrs.frozen
class Sysctl:
    """A kernel parameter set in the pod's namespaces (dotted name, as the kubelet passes
    it to the runtime)."""

    name: str
    value: str


@attrs.frozen
class PodSecurityContext:
    """A pod's ``securityContext``, with the pod's host namespaces.

    Attributes:
        run_as_user, run_as_group, run_as_non_root, seccomp_profile, app_armor_profile:
            defaults for every container; a container's own value wins.
        supplemental_groups: groups every container's process gets, after ``fs_group``.
        fs_group: a group every container's process gets, and the group that owns the
            pod's emptyDir directories (setgid, group-writable).
        sysctls: namespaced kernel parameters of the pod.
        host_network, host_pid, host_ipc: run in the host's network, PID or IPC namespace
            (Kubernetes ``spec.hostNetwork`` ...); allowed only when
            ``PlanOptions.allow_host_namespaces`` says so.
        share_process_namespace: the pod's containers share one PID namespace, the
            network container's (Kubernetes ``spec.shareProcessNamespace``).
    """

    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    seccomp_profile: SecurityProfile | None = None
    app_armor_profile: SecurityProfile | None = None
    supplemental_groups: tuple[int, ...] = ()
    fs_group: int | None = None
    sysctls: tuple[Sysctl, ...] = ()
    host_network: bool = False
    host_pid: bool = False
    host_ipc: bool = False
    share_process_namespace: bool = False


@attrs.frozen
class ContainerSecurity:
    """What a create asks of the runtime about isolation and identity (``CreateSpec.security``).

    Runtime-neutral; empty, zero and ``False`` mean "the engine's default".

    Attributes:
        user: the process's user, ``uid``, ``uid:gid`` or ``name:gid``; empty: the image's.
        groups: supplementary group ids, in order.
        cap_add, cap_drop: capability names without ``CAP_`` (``ALL`` for all).
        no_new_privileges: the process cannot gain privileges (setuid, file caps).
        read_only_root_filesystem: the root filesystem is mounted read-only.
        seccomp: ``""`` the engine's default, ``runtime/default`` (the same, asked for
            explicitly: the runtime refuses when the engine has no seccomp),
            ``unconfined``, or ``localhost/<absolute path>`` of a profile file the
            runtime reads.
        apparmor: ``""`` nothing asked, ``runtime/default``, ``unconfined`` or
            ``localhost/<profile name>``; the runtime refuses a profile other than
            ``unconfined`` when the engine's host has no AppArmor.
        sysctls: kernel parameters, ``(name, value)`` pairs in order.
        host_pid, host_ipc: the host's PID / IPC namespace.
        share_pid_with: the name of the container whose PID namespace this one joins.
        fs_group: the group the apply side gives the create's ``directories`` (setgid,
            group-writable) before the create; ``None`` leaves them as they are.
    """

    user: str = ""
    groups: tuple[int, ...] = ()
    cap_add: tuple[str, ...] = ()
    cap_drop: tuple[str, ...] = ()
    no_new_privileges: bool = False
    read_only_root_filesystem: bool = False
    seccomp: str = ""
    apparmor: str = ""
    sysctls: tuple[tuple[str, str], ...] = ()
    host_pid: bool = False
    host_ipc: bool = False
    share_pid_with: str = ""
    fs_group: int | None = None


# ---------------------------------------------------------------------------------------
# Capabilities

#: The Linux capabilities Docker 20.10 knows (linux/capability.h up to 5.9), without
#: ``CAP_``: an unknown name is refused by the engine at every create, so podsync
#: refuses it when loading.
KNOWN_CAPABILITIES: frozenset[str] = frozenset(
    {
        "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID",
        "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST",
        "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO",
        "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
        "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE",
        "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM",
        "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
    }
)  # fmt: skip


def normalize_capability(name: str) -> str | None:
    """``name`` in Kubernetes' spelling (upper case, no ``CAP_``), or ``None`` when it
    names no capability. Docker reads names the same way (``NormalizeLegacyCapabilities``:
    upper-cased, ``CAP_`` optional), so ``net_admin`` and ``CAP_NET_ADMIN`` are accepted."""
    upper = name.upper()
    if upper == "ALL":
        return upper
    bare = upper.removeprefix("CAP_")
    return bare if bare in KNOWN_CAPABILITIES else None


# ---------------------------------------------------------------------------------------
# Sysctls

# The kubelet's safe set (pkg/kubelet/sysctl/safe_sysctls.go), with the kernel-gated
# entries (podsync's engines run kernels newer than 4.15).
SAFE_SYSCTLS: frozenset[str] = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)

# A sysctl name as Kubernetes validates it (``IsValidSysctlName``), dots or slashes.
SYSCTL_NAME = re.compile(r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?")


def sysctl_namespace(name: str) -> str | None:
    """``"ipc"`` or ``"net"``: the namespace a sysctl lives in; ``None`` for a node-level
    one, which would change the whole host (``NamespacedBy``)."""
    if name == "kernel.sem" or name.startswith(("kernel.shm", "kernel.msg", "fs.mqueue.")):
        return "ipc"
    if name.startswith("net."):
        return "net"
    return None


def dotted_sysctl(name: str) -> str:
    """A sysctl name with dots as separators: ``kernel/shm_rmid_forced`` is
    ``kernel.shm_rmid_forced``; when the first separator is a slash, dots and slashes
    swap, as the kubelet converts (``ConvertSysctlVariableToDotsSeparator``), so
    ``net/ipv4/conf/eth0.100/forwarding`` keeps its interface name."""
    first = re.search(r"[./]", name)
    if first is None or first.group() == ".":
        return name
    return name.translate(str.maketrans("./", "/."))


def sysctl_allowed(name: str, allowed_unsafe: Sequence[str]) -> bool:
    """Whether a namespaced sysctl may be set: the safe set, or a name or ``prefix*``
    pattern of ``allowed_unsafe`` (the kubelet's ``--allowed-unsafe-sysctls``)."""
    if name in SAFE_SYSCTLS:
        return True
    for pattern in allowed_unsafe:
        if pattern.endswith("*"):
            if name.startswith(pattern[:-1]):
                return True
        elif name == pattern:
            return True
    return False


# ---------------------------------------------------------------------------------------
# Profiles

#: Where Localhost seccomp profiles live, under the root directory (the kubelet's
#: ``<root-dir>/seccomp``).
SECCOMP_DIR = "seccomp"


def profile_path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a Localhost seccomp profile under the seccomp directory
    (Kubernetes' ``validateLocalDescendingPath``), or ``None``."""
    if not path:
        return "must not be empty"
    if path.startswith("/"):
        return f"must be a path relative to <root-dir>/{SECCOMP_DIR}, got {path!r}"
    if ".." in path.split("/"):
        return f"must not contain '..', got {path!r}"
    if "\0" in path:
        return "must not contain a NUL character"
    return None


def _seccomp_text(profile: SecurityProfile | None, root_dir: str) -> str:
    if profile is None:
        return ""
    if profile.type is ProfileType.LOCALHOST:
        return "localhost/" + posixpath.join(root_dir, SECCOMP_DIR, profile.localhost_profile)
    return "unconfined" if profile.type is ProfileType.UNCONFINED else "runtime/default"


def _apparmor_text(profile: SecurityProfile | None) -> str:
    if profile is None:
        return ""
    if profile.type is ProfileType.LOCALHOST:
        return "localhost/" + profile.localhost_profile
    return "unconfined" if profile.type is ProfileType.UNCONFINED else "runtime/default"


def _profile_fields(profile: SecurityProfile | None) -> dict[str, str] | None:
    if profile is None:
        return None
    fields = {"type": profile.type.value}
    if profile.localhost_profile:
        fields["localhost_profile"] = profile.localhost_profile
    return fields


# ---------------------------------------------------------------------------------------
# The effective settings of a container


@attrs.frozen
class Effective:
    """A container's security settings after the pod's defaults are applied."""

    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool = False
    seccomp: SecurityProfile | None = None
    apparmor: SecurityProfile | None = None


def _first(*values: object) -> object:
    for value in values:
        if value is not None:
            return value
    return None


def effective(context: SecurityContext | None, pod_context: PodSecurityContext | None) -> Effective:
    """The container's own settings over the pod's (``DetermineEffectiveSecurityContext``)."""
    c = context or SecurityContext()
    p = pod_context or PodSecurityContext()
    user = _first(c.run_as_user, p.run_as_user)
    group = _first(c.run_as_group, p.run_as_group)
    non_root = _first(c.run_as_non_root, p.run_as_non_root)
    seccomp = c.seccomp_profile or p.seccomp_profile
    apparmor = c.app_armor_profile or p.app_armor_profile
    return Effective(
        run_as_user=user if isinstance(user, int) else None,
        run_as_group=group if isinstance(group, int) else None,
        run_as_non_root=non_root is True,
        seccomp=seccomp,
        apparmor=apparmor,
    )


def _user_part(image_user: str) -> str:
    """The user of an image's ``User`` (``uid``, ``uid:gid``, ``name``, ``name:group``)."""
    return image_user.split(":", 1)[0]


def needs_image_user(
    context: SecurityContext | None, pod_context: PodSecurityContext | None
) -> bool:
    """Whether creating the container needs the image's configured user: to verify
    ``runAsNonRoot`` when no ``runAsUser`` is given, or to put a ``runAsGroup`` beside
    the image's user."""
    eff = effective(context, pod_context)
    return eff.run_as_user is None and (eff.run_as_non_root or eff.run_as_group is not None)


def run_as_non_root_problem(
    context: SecurityContext | None, pod_context: PodSecurityContext | None, image_user: str
) -> str | None:
    """Why the container breaks its ``runAsNonRoot`` policy, in the kubelet's words
    (``verifyRunAsNonRoot``), or ``None``.

    ``image_user`` is the image's configured user (``Config.User``); empty means none,
    which is root. A ``runAsUser`` decides alone; otherwise the image's uid 0 breaks the
    policy, and a user given by name cannot be verified, which breaks it too.
    """
    eff = effective(context, pod_context)
    if not eff.run_as_non_root:
        return None
    if eff.run_as_user is not None:
        return "container's runAsUser breaks non-root policy" if eff.run_as_user == 0 else None
    user = _user_part(image_user)
    if user in ("", "0"):
        return "container has runAsNonRoot and image will run as root"
    if not user.isdigit():
        return (
            f"container has runAsNonRoot and image has non-numeric user ({user}), "
            "cannot verify user is non-root"
        )
    return None


def user_hold(
    context: SecurityContext | None,
    pod_context: PodSecurityContext | None,
    image_user: str | None,
    image_present: bool,
) -> tuple[bool, str] | None:
    """Why the container may not be created now because of its user, or ``None``.

    ``(True, why)``: it breaks its ``runAsNonRoot`` policy (``run_as_non_root_problem``).
    ``(False, why)``: the image's user decides (``needs_image_user``) and is not known
    (``image_user`` ``None``): the image is absent, or its runtime does not report it.
    """
    if context is None and pod_context is None:
        return None  # the common case, on every create of every plan
    user = ""
    if needs_image_user(context, pod_context):
        if image_user is None:
            what = (
                "runAsNonRoot"
                if effective(context, pod_context).run_as_non_root
                else "runAsGroup without runAsUser"
            )
            why = "the runtime does not report its user" if image_present else "it is absent"
            return False, f"{what} needs the image's user, and {why}"
        user = image_user
    problem = run_as_non_root_problem(context, pod_context, user)
    return None if problem is None else (True, problem)


def container_user(eff: Effective, image_user: str | None) -> str:
    """The process user to ask for: ``uid[:gid]`` from the effective context; with a
    ``runAsGroup`` but no ``runAsUser``, the image's user with that group (root when
    the image names none), as the kubelet passes the image's user on."""
    if eff.run_as_user is not None:
        if eff.run_as_group is not None:
            return f"{eff.run_as_user}:{eff.run_as_group}"
        return str(eff.run_as_user)
    if eff.run_as_group is not None:
        return f"{_user_part(image_user or '') or '0'}:{eff.run_as_group}"
    return ""


def _sysctls(pod_context: PodSecurityContext | None, namespace: str) -> tuple[Sysctl, ...]:
    if pod_context is None:
        return ()
    return tuple(s for s in pod_context.sysctls if sysctl_namespace(s.name) == namespace)


def app_security(
    context: SecurityContext | None,
    pod_context: PodSecurityContext | None,
    root_dir: str,
    network_container: str,
    image_user: str | None = None,
) -> ContainerSecurity:
    """The ``ContainerSecurity`` of an app container: its own ``context`` over its
    pod's ``pod_context``; ``root_dir`` holds the Localhost seccomp profiles.

    ``network_container`` is the name of the pod's network container, whose PID
    namespace the container joins when the pod shares one. The pod's IPC sysctls are
    set in each app container (each has its IPC namespace); its net sysctls are the
    network container's (``network_security``).
    """
    if context is None and pod_context is None:
        # Most containers: nothing set, so nothing to ask of the engine (one object for
        # all of them, instead of working that out anew for each).
        return _NOTHING_SET
    c = context or SecurityContext()
    p = pod_context or PodSecurityContext()
    eff = effective(context, pod_context)
    caps = c.capabilities or Capabilities()
    groups = ((p.fs_group,) if p.fs_group is not None else ()) + p.supplemental_groups
    return ContainerSecurity(
        user=container_user(eff, image_user),
        groups=groups,
        cap_add=caps.add,
        cap_drop=caps.drop,
        no_new_privileges=c.allow_privilege_escalation is False,
        read_only_root_filesystem=c.read_only_root_filesystem,
        seccomp=_seccomp_text(eff.seccomp, root_dir),
        apparmor=_apparmor_text(eff.apparmor),
        sysctls=tuple((s.name, s.value) for s in _sysctls(pod_context, "ipc")),
        host_pid=p.host_pid,
        host_ipc=p.host_ipc,
        share_pid_with=network_container if p.share_process_namespace and not p.host_pid else "",
        fs_group=p.fs_group,
    )


_NOTHING_SET = ContainerSecurity()


def network_security(pod_context: PodSecurityContext | None) -> ContainerSecurity:
    """The ``ContainerSecurity`` of a pod's network container: the pod's host PID and
    IPC namespaces and its net sysctls (it holds the pod's network namespace)."""
    if pod_context is None:
        return _NOTHING_SET
    p = pod_context
    return ContainerSecurity(
        sysctls=tuple((s.name, s.value) for s in _sysctls(pod_context, "net")),
        host_pid=p.host_pid,
        host_ipc=p.host_ipc,
    )


# ---------------------------------------------------------------------------------------
# The canonical (hashed) form


def _drop_defaults(fields: dict[str, object], keep_false: Iterable[str] = ()) -> dict[str, object]:
    # Identity for None and False: a uid 0 is a setting (0 == False in Python); a
    # ``False`` of a field whose unset is ``None`` is a setting too.
    kept = set(keep_false)
    return {
        k: v
        for k, v in fields.items()
        if not (v is None or v == [] or (v is False and k not in kept))
    }


def security_fields(
    context: SecurityContext | None, pod_context: PodSecurityContext | None
) -> dict[str, object]:
    """The canonical form of what shapes an app container's isolation and identity:
    the effective settings (so moving a setting between the pod and the container
    changes nothing), each only when not at its default; empty when all are."""
    if context is None and pod_context is None:
        return {}
    c = context or SecurityContext()
    p = pod_context or PodSecurityContext()
    eff = effective(context, pod_context)
    caps = c.capabilities or Capabilities()
    return _drop_defaults(
        {
            "run_as_user": eff.run_as_user,
            "run_as_group": eff.run_as_group,
            "run_as_non_root": eff.run_as_non_root,
            "cap_add": list(caps.add),
            "cap_drop": list(caps.drop),
            "allow_privilege_escalation": c.allow_privilege_escalation,
            "read_only_root_filesystem": c.read_only_root_filesystem,
            "seccomp_profile": _profile_fields(eff.seccomp),
            "app_armor_profile": _profile_fields(eff.apparmor),
            "supplemental_groups": list(p.supplemental_groups),
            "fs_group": p.fs_group,
            "sysctls": [[s.name, s.value] for s in _sysctls(pod_context, "ipc")],
            "host_pid": p.host_pid,
            "host_ipc": p.host_ipc,
            "share_process_namespace": p.share_process_namespace,
        },
        keep_false=("allow_privilege_escalation",),
    )


def network_security_fields(pod_context: PodSecurityContext | None) -> dict[str, object]:
    """The canonical form of what shapes a pod's network container beyond its network:
    host namespaces and net sysctls, each only when set; empty when none is."""
    if pod_context is None:
        return {}
    return _drop_defaults(
        {
            "host_network": pod_context.host_network,
            "host_pid": pod_context.host_pid,
            "host_ipc": pod_context.host_ipc,
            "sysctls": [[s.name, s.value] for s in _sysctls(pod_context, "net")],
        }
    )


def host_namespaces(pod_context: PodSecurityContext | None) -> list[str]:
    """The host namespaces a pod asks for, in Kubernetes' field names."""
    if pod_context is None:
        return []
    return [
        name
        for name, wanted in (
            ("hostNetwork", pod_context.host_network),
            ("hostPID", pod_context.host_pid),
            ("hostIPC", pod_context.host_ipc),
        )
        if wanted
    ]


def sysctl_problem(
    pod_context: PodSecurityContext | None, allowed_unsafe: Sequence[str]
) -> str | None:
    """Why a pod's sysctls cannot be set, or ``None``: a node-level sysctl (never), or a
    namespaced one outside the safe set that ``allowed_unsafe`` does not allow (the
    kubelet's ``SysctlForbidden``)."""
    if pod_context is None:
        return None
    for sysctl in pod_context.sysctls:
        if sysctl_namespace(sysctl.name) is None:
            return (
                f"sysctl {sysctl.name} is not namespaced: setting it would change the whole "
                "host, which podsync never does"
            )
        if not sysctl_allowed(sysctl.name, allowed_unsafe):
            return (
                f"sysctl {sysctl.name} is not in the safe set and not allowed by "
                "--allowed-unsafe-sysctls (PlanOptions.allowed_unsafe_sysctls)"
            )
    return None


def capability_problem(names: Iterable[str]) -> str | None:
    """The first of ``names`` that is not a capability in Kubernetes' spelling."""
    for name in names:
        if normalize_capability(name) != name:
            return f"{name!r} is not a capability name (NET_ADMIN, SYS_TIME, ..., or ALL)"
    return None
