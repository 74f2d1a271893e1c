"""The schema of security settings: container and pod ``securityContext`` as attrs
classes that mirror the YAML, and the checks of their single values (capability names,
sysctl names, profile types), registered as hooks by ``_pod``'s converter.

A part of ``_pod`` (see its docstring for the conventions); ``convert._security``
turns these into the model. No I/O; nothing here is public API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NewType

import attrs

from podsync.load.schema._scalars import _check_range, _expect_str, _one_of
from podsync.load.schema._yaml import _describe, _Invalid
from podsync.model._security import SYSCTL_NAME, ProfileType, dotted_sysctl, normalize_capability

__all__: list[str] = []

_Id = NewType("_Id", int)  # a uid or gid: 0-2147483647, as Kubernetes validates them
_Capability = NewType("_Capability", str)  # normalized: NET_ADMIN, ALL
_SysctlName = NewType("_SysctlName", str)  # normalized to dots


@attrs.frozen(kw_only=True)
class _CapabilitiesSchema:
    add: tuple[_Capability, ...] = ()
    drop: tuple[_Capability, ...] = ()


@attrs.frozen(kw_only=True)
class _ProfileSchema:
    """``seccompProfile`` and ``appArmorProfile``."""

    type: ProfileType
    localhost_profile: str | None = None


@attrs.frozen(kw_only=True)
class _SecurityContext:
    privileged: bool = False
    run_as_user: _Id | None = None
    run_as_group: _Id | None = None
    run_as_non_root: bool | None = None
    capabilities: _CapabilitiesSchema | None = None
    allow_privilege_escalation: bool | None = None
    read_only_root_filesystem: bool = False
    seccomp_profile: _ProfileSchema | None = None
    app_armor_profile: _ProfileSchema | None = None


@attrs.frozen(kw_only=True)
class _SysctlSchema:
    name: _SysctlName
    value: str


@attrs.frozen(kw_only=True)
class _PodSecurityContext:
    run_as_user: _Id | None = None
    run_as_group: _Id | None = None
    run_as_non_root: bool | None = None
    supplemental_groups: tuple[_Id, ...] = ()
    fs_group: _Id | None = None
    sysctls: tuple[_SysctlSchema, ...] = ()
    seccomp_profile: _ProfileSchema | None = None
    app_armor_profile: _ProfileSchema | None = None


def _check_capability(value: object) -> str:
    name = _expect_str(value)
    normalized = normalize_capability(name)
    if normalized is None:
        raise _Invalid(
            f"unknown capability {name!r}: expected a Linux capability without the CAP_ "
            "prefix (NET_ADMIN, SYS_TIME, ...) or ALL"
        )
    return normalized


def _check_sysctl_name(value: object) -> str:
    name = _expect_str(value)
    if len(name) > 253 or not SYSCTL_NAME.fullmatch(name):
        raise _Invalid(
            f"{_describe(name)} is not a sysctl name (lower-case words separated by "
            "dots, such as net.ipv4.ip_local_port_range)"
        )
    return dotted_sysctl(name)


_PROFILE_TYPES = {t.value: t for t in ProfileType}


def _check_profile_type(value: object) -> ProfileType:
    text = _expect_str(value)
    if text not in _PROFILE_TYPES:
        raise _Invalid(f"must be {_one_of(list(_PROFILE_TYPES))}, got {_describe(text)}")
    return _PROFILE_TYPES[text]


#: The checks of this module's scalars, for ``_pod``'s converter.
_SECURITY_HOOKS: Mapping[Any, Callable[[object], Any]] = {
    _Id: lambda v: _check_range(v, 0, 2147483647),
    _Capability: _check_capability,
    _SysctlName: _check_sysctl_name,
    ProfileType: _check_profile_type,
}


@attrs.frozen(kw_only=True)
class _PodSecurityFields:
    """The security fields of ``PodSpec`` (``_pod._PodSpecV1`` derives from this)."""

    security_context: _PodSecurityContext | None = None
    host_network: bool = False
    # "key": the YAML key where it is not the camelCase spelling (``_pod._KEY``).
    host_pid: bool = attrs.field(default=False, metadata={"key": "hostPID"})
    host_ipc: bool = attrs.field(default=False, metadata={"key": "hostIPC"})
    share_process_namespace: bool = False


#: Which Kubernetes object each class reads (``_pod._OBJECTS``).
_SECURITY_OBJECTS: Mapping[type, str] = {
    _SecurityContext: "SecurityContext",
    _PodSecurityContext: "PodSecurityContext",
}
