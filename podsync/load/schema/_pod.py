"""The pod schema: private attrs classes that mirror the YAML, and the strict converter.

There is one schema class per YAML mapping, for Kubernetes ``v1`` (``Pod``, ``List`` /
``PodList``) and for the seed's v1beta1 ``ContainerManifest``. Attribute names are
snake_case; the YAML key is their camelCase spelling. The classes hold the shape only;
the rules that relate several values are ``convert._document``'s.

Contract: ``_structure(data, cls, path, out)`` turns plain data (from ``_yaml``) into a
schema object, through one private cattrs converter whose hooks are strict (no ``"80"``
for a port, no ``8080`` for a string, no unknown keys) and carry the checks of single
values (``_scalars``). The Kubernetes keys podsync knows but does not honour are
``_unsupported``'s tables, which each class's hook consults through ``_OBJECTS``: a
refused key is an error of its own, an ignored one lands in the class's ``ignored``
attribute. It returns ``None`` after appending every problem found, as ``(path,
message)`` pairs in the order found (``_collect`` flattens cattrs' error tree;
``_unknown_key`` suggests the key that was probably meant). It never raises for bad data.

Layering: above ``_yaml``, ``_scalars`` and ``_unsupported``, below ``convert._document``; it
imports podsync's model enums only, never the planner, and does no I/O. Its names keep
their leading underscore: they are shared among the loader's modules only; nothing here
is public API.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import UnionType
from typing import Any, NewType, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, override

from podsync.load.schema import _objects as _obj
from podsync.load.schema import _security as _sec
from podsync.load.schema import _volumes as _vol
from podsync.load.schema._pod_fields import (
    _DEFAULT_NAMESPACE,
    _INTERNAL,
    _NO_NAME,
    _AliasIP,
    _AsWritten,
    _HostAliasSchema,
    _ignored_keys,
    _LabelValue,
    _Name,
    _OptionalName,
    _QualifiedName,
    _Resources,
    _SchedulingGate,
    _Subdomain,
)
from podsync.load.schema._scalars import (
    _DNS_POLICIES,
    _LEGACY_PULL_POLICIES,
    _PROTOCOLS,
    _PULL_POLICIES,
    _RESTART_POLICIES,
    _UNSUPPORTED_DNS_POLICIES,
    _UNSUPPORTED_PROTOCOLS,
    _check_alias_ip,
    _check_api_version,
    _check_container_name,
    _check_count,
    _check_env_name,
    _check_exact,
    _check_grace_period,
    _check_header_name,
    _check_header_value,
    _check_host_ip,
    _check_image,
    _check_label,
    _check_label_value,
    _check_manifest_version,
    _check_path,
    _check_port_name,
    _check_port_ref,
    _check_probe_count,
    _check_qualified_name,
    _check_range,
    _check_scheme,
    _check_subdomain,
    _check_uid,
    _choose,
    _expect_bool,
    _expect_int,
    _expect_str,
    _milli_cpu,
    _raw_quantity,
    _remembered,
)
from podsync.load.schema._unsupported import (
    _IGNORED,
    _NOT_SUPPORTED,
    _RENAMED,
    _is_unset,
    _suggestion,
)
from podsync.load.schema._yaml import _describe, _Invalid
from podsync.model._pod import DNSPolicy, PortProtocol, PullPolicy, RestartPolicy

# Nothing here is public API: ``convert._document`` reads documents through ``_structure``.
__all__: list[str] = []

_T = TypeVar("_T")

# Checked scalars: each NewType has a hook below (``_make_converter``) that validates the
# value with its check from ``_scalars``, so its error carries the path of the field.
_ContainerName = NewType("_ContainerName", str)  # a DNS-1123 label, and not "net"
_PortName = NewType("_PortName", str)  # "" or a DNS-1123 label
_Uid = NewType("_Uid", str)
_Image = NewType("_Image", str)
_OptionalBindPath = NewType("_OptionalBindPath", str)  # "" or a _BindPath
_WorkingDir = NewType("_WorkingDir", str)  # "" or an absolute path
_EnvName = NewType("_EnvName", str)
_HostIP = NewType("_HostIP", str)
_Scheme = NewType("_Scheme", str)
_APIVersion = NewType("_APIVersion", str)
_PodKind = NewType("_PodKind", str)
_ManifestVersion = NewType("_ManifestVersion", str)
# "" (none given: the default follows the image's tag) or a PullPolicy value.
_PullPolicyText = NewType("_PullPolicyText", str)
_LegacyPullPolicy = NewType("_LegacyPullPolicy", str)  # the same, from a 2014 name
_ContainerPort = NewType("_ContainerPort", int)
_HostPort = NewType("_HostPort", int)
_Seconds = NewType("_Seconds", int)
_Count = NewType("_Count", int)  # a non-negative int64: v1beta1 memory bytes, milli-CPU
_GracePeriod = NewType("_GracePeriod", int)  # 0-MAX_GRACE_PERIOD seconds
_MilliCPU = NewType("_MilliCPU", int)  # a quantity (500m, 0.5, 2) in milli-CPU
_ProbeCount = NewType("_ProbeCount", int)  # 1 to int32's top: probe periods, timeouts, thresholds
_HeaderName = NewType("_HeaderName", str)  # an HTTP header name, as Kubernetes validates it
_HeaderValue = NewType("_HeaderValue", str)  # an HTTP header value: no line breaks


# ---------------------------------------------------------------------------------------
# Schema: attrs classes that mirror the YAML
# ---------------------------------------------------------------------------------------
# Attribute names are snake_case; the YAML key is the camelCase spelling (``_key``), or
# ``metadata["key"]`` where that differs (hostIP). ``metadata["hook"]`` replaces the
# structure hook of one field. The classes hold the shape only; rules that relate
# several values are checked when converting to the model.

_KEY = "key"
_HOOK = "hook"


def _key(attribute: attrs.Attribute[Any]) -> str:
    """The YAML key of a schema attribute: ``host_port`` is ``hostPort``, ``exec_`` is
    ``exec``, ``downward_api`` is ``downwardAPI`` (as Kubernetes spells API)."""
    explicit: str | None = attribute.metadata.get(_KEY)
    if explicit is not None:
        return explicit
    head, *rest = attribute.name.rstrip("_").split("_")
    return head + "".join("API" if part == "api" else part.capitalize() for part in rest)


def _simple(check: Callable[[object], Any]) -> Callable[[object, object], Any]:
    """A cattrs hook (value, type) from a one-argument check."""
    return lambda value, _: check(value)


@attrs.frozen(kw_only=True)
class _ObjectMeta:
    name: _Name
    namespace: _Name = _DEFAULT_NAMESPACE
    uid: _Uid | None = None
    # Their keys are checked by ``convert._document`` (it needs all of them to see collisions).
    labels: dict[str, _LabelValue] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    ignored: tuple[str, ...] = _ignored_keys()


@attrs.frozen(kw_only=True)
class _ExecAction:
    command: tuple[str, ...]


@attrs.frozen(kw_only=True)
class _HTTPGetV1Beta1:
    port: int | str = attrs.field(metadata={_HOOK: _check_port_ref})
    path: str = ""
    host: str = ""


@attrs.frozen(kw_only=True)
class _HTTPHeaderSchema:
    name: _HeaderName
    value: _HeaderValue


@attrs.frozen(kw_only=True)
class _HTTPGetV1(_HTTPGetV1Beta1):
    scheme: _Scheme = _Scheme("HTTP")
    http_headers: tuple[_HTTPHeaderSchema, ...] = ()


@attrs.frozen(kw_only=True)
class _TCPSocketV1Beta1:
    port: int | str = attrs.field(metadata={_HOOK: _check_port_ref})


@attrs.frozen(kw_only=True)
class _TCPSocketV1(_TCPSocketV1Beta1):
    host: str = ""


@attrs.frozen(kw_only=True)
class _HandlerV1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1 | None = None
    tcp_socket: _TCPSocketV1 | None = None


@attrs.frozen(kw_only=True)
class _HandlerV1Beta1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1Beta1 | None = None


def _any_value(value: object, _: object = None) -> object:
    # A field podsync refuses whatever it holds (a gRPC action): the converter says why,
    # so its content is not checked here.
    return value


@attrs.frozen(kw_only=True)
class _ProbeV1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1 | None = None
    tcp_socket: _TCPSocketV1 | None = None
    grpc: object = attrs.field(default=None, metadata={_HOOK: _any_value})
    initial_delay_seconds: _Seconds = _Seconds(0)
    # None: Kubernetes' default (SetDefaults_Probe), which the model holds.
    timeout_seconds: _ProbeCount | None = None
    period_seconds: _ProbeCount | None = None
    success_threshold: _ProbeCount | None = None
    failure_threshold: _ProbeCount | None = None
    termination_grace_period_seconds: _GracePeriod | None = None


@attrs.frozen(kw_only=True)
class _ProbeV1Beta1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1Beta1 | None = None
    tcp_socket: _TCPSocketV1Beta1 | None = None
    initial_delay_seconds: _Seconds = _Seconds(0)


@attrs.frozen(kw_only=True)
class _LifecycleV1:
    post_start: _HandlerV1 | None = None
    pre_stop: _HandlerV1 | None = None


@attrs.frozen(kw_only=True)
class _LifecycleV1Beta1:
    post_start: _HandlerV1Beta1 | None = None
    pre_stop: _HandlerV1Beta1 | None = None


@attrs.frozen(kw_only=True)
class _EnvVarSchema:
    name: _EnvName
    value: str = ""


@attrs.frozen(kw_only=True)
class _EnvVarSource:
    field_ref: _obj._FieldRef | None = None
    resource_field_ref: _obj._ResourceFieldRef | None = None
    config_map_key_ref: _obj._KeySelector | None = None
    secret_key_ref: _obj._KeySelector | None = None


@attrs.frozen(kw_only=True)
class _EnvVarV1(_EnvVarSchema):
    value_from: _EnvVarSource | None = None


@attrs.frozen(kw_only=True)
class _PortSchema:
    name: _PortName = _PortName("")
    container_port: _ContainerPort
    host_port: _HostPort = _HostPort(0)
    protocol: PortProtocol = PortProtocol.TCP
    host_ip: _HostIP = attrs.field(default=_HostIP(""), metadata={_KEY: "hostIP"})


@attrs.frozen(kw_only=True)
class _ContainerV1:
    name: _ContainerName
    image: _Image
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    working_dir: _WorkingDir = _WorkingDir("")
    env: tuple[_EnvVarV1, ...] = ()
    ports: tuple[_PortSchema, ...] = ()
    volume_mounts: tuple[_vol._VolumeMountV1, ...] = ()
    resources: _Resources | None = None
    image_pull_policy: _PullPolicyText = _PullPolicyText("")
    liveness_probe: _ProbeV1 | None = None
    lifecycle: _LifecycleV1 | None = None
    security_context: _sec._SecurityContext | None = None
    termination_message_path: _OptionalBindPath = _OptionalBindPath("")
    tty: bool = False
    stdin: bool = False
    stdin_once: bool = False
    readiness_probe: _ProbeV1 | None = None
    startup_probe: _ProbeV1 | None = None
    termination_message_policy: str = ""  # read by convert._document (_termination_message_policy)
    env_from: tuple[_obj._EnvFromSource, ...] = ()
    restart_policy: str = ""  # an init container's Always (a sidecar): convert._document checks


@attrs.frozen(kw_only=True)
class _PodDNSConfig:
    """``dnsConfig``: ``nameservers`` and ``searches`` are refused, ``options`` ignored."""

    ignored: tuple[str, ...] = _ignored_keys()


@attrs.frozen(kw_only=True)
class _PodSpecV1(_sec._PodSecurityFields):
    containers: tuple[_ContainerV1, ...]
    volumes: tuple[_vol._VolumeV1, ...] = ()
    restart_policy: RestartPolicy = RestartPolicy.ALWAYS
    dns_policy: DNSPolicy = DNSPolicy.CLUSTER_FIRST
    termination_grace_period_seconds: _GracePeriod | None = None
    node_name: str = ""
    service_account_name: str = ""
    service_account: str = ""  # the deprecated spelling of serviceAccountName
    dns_config: _PodDNSConfig | None = None
    ignored: tuple[str, ...] = _ignored_keys()
    hostname: _OptionalName = _NO_NAME
    subdomain: _OptionalName = _NO_NAME
    host_aliases: tuple[_HostAliasSchema, ...] = ()
    scheduling_gates: tuple[_SchedulingGate, ...] = ()
    # Pod-level resources: refused by ``convert._document`` (a pod cgroup podsync does not make).
    resources: _AsWritten | None = None
    init_containers: tuple[_ContainerV1, ...] = ()


@attrs.frozen(kw_only=True)
class _PodV1:
    api_version: _APIVersion
    kind: _PodKind
    metadata: _ObjectMeta
    spec: _PodSpecV1
    ignored: tuple[str, ...] = _ignored_keys()


@attrs.frozen(kw_only=True)
class _PodItemV1:
    """A pod inside a List or PodList, where apiVersion and kind may be left out."""

    api_version: _APIVersion = _APIVersion("v1")
    kind: _PodKind = _PodKind("Pod")
    metadata: _ObjectMeta
    spec: _PodSpecV1
    ignored: tuple[str, ...] = _ignored_keys()


@attrs.frozen(kw_only=True)
class _ListMeta:
    resource_version: str = ""
    self_link: str = ""


@attrs.frozen(kw_only=True)
class _ListV1:
    api_version: _APIVersion
    kind: str
    metadata: _ListMeta | None = None
    items: tuple[_PodItemV1, ...]


def _flag(value: object, _: object = None) -> _vol._Empty:
    # ``never: {}`` and ``never:`` (null) both set the member: Go would read the null
    # as "unset" and silently fall back to Always, the opposite of what was written.
    if value is None:
        return _vol._Empty()
    return _CONVERTER.structure(value, _vol._Empty)


@attrs.frozen(kw_only=True)
class _RestartPolicyV1Beta1:
    always: _vol._Empty | None = attrs.field(default=None, metadata={_HOOK: _flag})
    on_failure: _vol._Empty | None = attrs.field(default=None, metadata={_HOOK: _flag})
    never: _vol._Empty | None = attrs.field(default=None, metadata={_HOOK: _flag})


@attrs.frozen(kw_only=True)
class _ContainerV1Beta1:
    name: _ContainerName
    image: _Image
    command: tuple[str, ...] = ()
    working_dir: _WorkingDir = _WorkingDir("")
    ports: tuple[_PortSchema, ...] = ()
    env: tuple[_EnvVarSchema, ...] = ()
    memory: _Count = _Count(0)  # bytes
    cpu: _Count = _Count(0)  # milli-CPU
    volume_mounts: tuple[_vol._VolumeMountSchema, ...] = ()
    liveness_probe: _ProbeV1Beta1 | None = None
    lifecycle: _LifecycleV1Beta1 | None = None
    termination_message_path: _OptionalBindPath = _OptionalBindPath("")
    privileged: bool = False
    image_pull_policy: _LegacyPullPolicy = _LegacyPullPolicy("")


@attrs.frozen(kw_only=True)
class _ManifestV1Beta1:
    version: _ManifestVersion
    id: _Name | None = None  # derived from the file name when left out (convert._document)
    uuid: _Uid | None = None
    volumes: tuple[_vol._VolumeV1Beta1, ...] = ()
    containers: tuple[_ContainerV1Beta1, ...]
    restart_policy: _RestartPolicyV1Beta1 | None = None
    dns_policy: DNSPolicy = DNSPolicy.CLUSTER_FIRST


# Which Kubernetes object each schema class reads (the keys of ``_unsupported``'s tables).
_OBJECTS: Mapping[type, str] = {
    _PodV1: "Pod",
    _PodItemV1: "Pod",
    _ObjectMeta: "ObjectMeta",
    _PodSpecV1: "PodSpec",
    _PodDNSConfig: "PodDNSConfig",
    _ContainerV1: "Container",
    **_sec._SECURITY_OBJECTS,
    _EnvVarSource: "EnvVarSource",
    **_obj._OBJECT_CLASSES,
    **_vol._VOLUME_OBJECTS,
    _EnvVarV1: "EnvVar",
    _EnvVarSchema: "EnvVar (v1beta1)",
}


# ---------------------------------------------------------------------------------------
# The converter
# ---------------------------------------------------------------------------------------


class _Refused(_Invalid):
    """A key of ``_NOT_SUPPORTED`` that asks for something podsync cannot honour."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _structure_attrs_factory(cls: type[Any], converter: cattrs.BaseConverter) -> Callable[..., Any]:
    """Structure a schema class from a mapping with its camelCase keys, nothing else.

    The keys of ``_NOT_SUPPORTED`` and ``_IGNORED`` for the class are taken out first:
    a refused key that asks for something is an error of its own (next to every other
    error of the mapping), an ignored one is recorded in the ``ignored`` attribute. A
    field's key whose value is null is not given, as Go's decoder reads it (a template's
    ``annotations:`` left empty), unless the field has a hook of its own (``_flag``).
    """
    overrides: dict[str, Any] = {
        a.name: (
            override(omit=True)
            if a.metadata.get(_INTERNAL)
            else override(rename=_key(a), struct_hook=a.metadata.get(_HOOK))
        )
        for a in attrs.fields(cls)
    }
    structure = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True, **overrides)
    refusals = _NOT_SUPPORTED.get(_OBJECTS.get(cls, ""), {})
    ignoring = _IGNORED.get(_OBJECTS.get(cls, ""), {})
    special = frozenset(refusals) | frozenset(ignoring)
    nullable = frozenset(_key(a) for a in attrs.fields(cls) if _HOOK not in a.metadata)

    def hook(value: object, type_: object) -> Any:
        if not isinstance(value, dict):
            raise _Invalid(f"expected a mapping, got {_describe(value)}")
        if special.isdisjoint(value) and None not in value.values():
            return structure(value, type_)  # nothing to take out: no copy of the mapping
        kept: dict[str, object] = {}
        refused: list[Exception] = []
        ignored: list[str] = []
        for key, item in value.items():
            if item is None and key in nullable:
                continue
            if key in refusals:
                refusal = refusals[key]
                if not refusal.accepts(item) and refusal.unless not in value:
                    refused.append(_Refused(key, refusal.message(key, item)))
            elif key in ignoring:
                # false asks for nothing either: no token, no service links.
                if not _is_unset(item) and item is not False:
                    ignored.append(key)
            else:
                kept[key] = item
        try:
            result = structure(kept, type_)
        except Exception as exc:
            if refused:
                raise ClassValidationError(
                    f"While structuring {cls.__name__}", [*refused, exc], cls
                ) from None
            raise
        if refused:
            raise ClassValidationError(f"While structuring {cls.__name__}", refused, cls)
        return attrs.evolve(result, ignored=tuple(ignored)) if ignored else result

    return hook


def _structure_tuple_factory(type_: Any, converter: cattrs.BaseConverter) -> Callable[..., Any]:
    """``tuple[X, ...]`` from a YAML list only: cattrs would split ``"ls -l"`` into letters."""
    element = get_args(type_)[0]
    structure_element = converter.get_structure_hook(element)

    def hook(value: object, _: object) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise _Invalid(f"expected a list, got {_describe(value)}")
        # Nearly always all fine, with no bookkeeping: a bare try costs nothing in Python
        # 3.11, where ``contextlib.suppress`` made and entered an object for each of the
        # 110,000 lists of 10,000 pods (issue 33).
        try:
            return tuple([structure_element(item, element) for item in value])
        except Exception:  # worded below, item by item
            pass
        # One is wrong: all again, each wrong one named by its index (hooks keep no state).
        result = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                result.append(structure_element(item, element))
            except Exception as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", []),
                    IterableValidationNote(f"Structuring item @ index {index}", index, element),
                ]
                errors.append(exc)
        if errors:
            raise IterableValidationError("While structuring a list", errors, type_)
        return tuple(result)

    return hook


def _structure_dict_factory(type_: Any, converter: cattrs.BaseConverter) -> Callable[..., Any]:
    """``dict[str, X]`` from a YAML mapping with string keys."""
    value_type = get_args(type_)[1]
    structure_value = converter.get_structure_hook(value_type)

    def hook(value: object, _: object) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _Invalid(f"expected a mapping, got {_describe(value)}")
        result = {}
        errors: list[Exception] = []
        for key, item in value.items():
            try:
                result[_expect_str(key)] = structure_value(item, value_type)
            except Exception as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", []),
                    IterableValidationNote(f"Structuring value @ key {key!r}", key, value_type),
                ]
                errors.append(exc)
        if errors:
            raise IterableValidationError("While structuring a mapping", errors, type_)
        return result

    return hook


def _is_tuple(type_: Any) -> bool:
    return get_origin(type_) is tuple


def _is_dict(type_: Any) -> bool:
    return get_origin(type_) is dict


def _is_optional(type_: Any) -> bool:
    """``X | None`` of one type ``X`` (a schema field that may be left out)."""
    args = get_args(type_)
    return get_origin(type_) in (Union, UnionType) and len(args) == 2 and type(None) in args


def _structure_optional_factory(type_: Any, converter: cattrs.BaseConverter) -> Callable[..., Any]:
    """``X | None``: null, or what ``X``'s hook makes of the value. cattrs' own way looks
    ``X``'s hook up again on each of the 100,000 optional values of 10,000 pods; this one
    looks it up once (issue 33)."""
    inner = next(arg for arg in get_args(type_) if arg is not type(None))
    structure_inner = converter.get_structure_hook(inner)

    def hook(value: object, _: object) -> Any:
        return None if value is None else structure_inner(value, inner)

    return hook


def _given_policy(value: object, choices: Mapping[str, PullPolicy], *, fold_case: bool) -> str:
    """The ``PullPolicy`` value ``value`` names, or ``""`` when none is given (the API
    server's "unset"): only the model's default follows the image's tag, so an absent
    policy stays absent (``podsync.spec.default_pull_policy``)."""
    if not _expect_str(value):
        return ""
    return _choose(value, choices, PullPolicy.IF_NOT_PRESENT, fold_case=fold_case).value


def _make_converter() -> cattrs.Converter:
    # A private converter: hooks registered here affect nobody else (never the global
    # cattrs converter).
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    hooks: dict[Any, Callable[[object], Any]] = {
        str: _expect_str,
        int: _expect_int,
        bool: _expect_bool,
        _Name: _check_label,
        _ContainerName: _check_container_name,
        _PortName: _check_port_name,
        _Uid: _check_uid,
        _Image: _check_image,
        _OptionalBindPath: lambda v: _check_path(v, optional=True, bind=True),
        _WorkingDir: lambda v: _check_path(v, optional=True, bind=False),
        _EnvName: _check_env_name,
        _HostIP: _check_host_ip,
        _Scheme: _check_scheme,
        _APIVersion: _check_api_version,
        _PodKind: lambda v: _check_exact(v, "Pod"),
        _ManifestVersion: _check_manifest_version,
        _ContainerPort: lambda v: _check_range(v, 1, 65535),
        _HostPort: lambda v: _check_range(v, 0, 65535),  # 0: not published
        _Seconds: _check_count,
        _Count: _check_count,
        _GracePeriod: _check_grace_period,
        _MilliCPU: _milli_cpu,
        _AsWritten: _raw_quantity,
        _OptionalName: lambda v: _expect_str(v) and _check_label(v),
        _LabelValue: _check_label_value,
        _QualifiedName: _check_qualified_name,
        _AliasIP: _check_alias_ip,
        _Subdomain: _check_subdomain,
        **_sec._SECURITY_HOOKS,
        **_obj._OBJECT_HOOKS,
        **_vol._VOLUME_HOOKS,
        _ProbeCount: _check_probe_count,
        _HeaderName: _check_header_name,
        _HeaderValue: _check_header_value,
        PortProtocol: lambda v: _choose(
            v,
            _PROTOCOLS,
            PortProtocol.TCP,
            fold_case=True,
            unsupported=_UNSUPPORTED_PROTOCOLS,
            field="protocol",
        ),
        RestartPolicy: lambda v: _choose(
            v, _RESTART_POLICIES, RestartPolicy.ALWAYS, fold_case=False
        ),
        DNSPolicy: lambda v: _choose(
            v,
            _DNS_POLICIES,
            DNSPolicy.CLUSTER_FIRST,
            fold_case=False,
            unsupported=_UNSUPPORTED_DNS_POLICIES,
            field="dnsPolicy",
        ),
        _PullPolicyText: lambda v: _given_policy(v, _PULL_POLICIES, fold_case=False),
        _LegacyPullPolicy: lambda v: _given_policy(v, _LEGACY_PULL_POLICIES, fold_case=True),
    }
    # Checks of the text alone, with an immutable result: remembered per text.
    by_text: set[object] = {_Name, _ContainerName, _PortName, _Image, _EnvName, _LabelValue}
    by_text |= {_vol._BindPath, _OptionalBindPath, _WorkingDir, _OptionalName, _QualifiedName}
    by_text |= {PortProtocol, RestartPolicy, DNSPolicy, _PullPolicyText}
    for type_, check in hooks.items():
        hook = _remembered(check) if type_ in by_text else _simple(check)
        converter.register_structure_hook(type_, hook)
    converter.register_structure_hook_factory(_is_tuple, _structure_tuple_factory)
    converter.register_structure_hook_factory(_is_dict, _structure_dict_factory)
    converter.register_structure_hook_factory(_is_optional, _structure_optional_factory)
    converter.register_structure_hook_factory(attrs.has, _structure_attrs_factory)
    return converter


_CONVERTER = _make_converter()


def _index(index: object) -> str:
    if isinstance(index, int):
        return f"[{index}]"
    if isinstance(index, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", index):
        return f".{index}"
    return f"[{index!r}]"


def _unknown_key(key: object, cls: type[Any]) -> str:
    """``unknown key 'x'``: with the field that replaced it (a spelling from before
    v1beta1), or the key that was probably meant (``_suggestion``)."""
    message = f"unknown key {key!r}"
    if not isinstance(key, str):
        return message
    obj = _OBJECTS.get(cls, "")
    renamed = _RENAMED.get(obj, {})
    if key in renamed:
        return f"{message}: {renamed[key]}"
    known = [
        *(_key(a) for a in attrs.fields(cls) if not a.metadata.get(_INTERNAL)),
        *_NOT_SUPPORTED.get(obj, {}),
        *_IGNORED.get(obj, {}),
    ]
    close = _suggestion(key, known)
    return f"{message} (did you mean {close!r}?)" if close else message


_MISSING = "required field missing"
# The required field each old spelling stands for (no "required field missing" for it).
_REPLACED_BY = {
    "EnvVar (v1beta1)": {"key": "name"},
    "EnvVar": {"key": "name"},
    "VolumeMount (v1beta1)": {"path": "mountPath"},
    "VolumeMount": {"path": "mountPath"},
}


def _collect(exc: BaseException, path: str, out: list[tuple[str, str]]) -> None:
    """Flatten a cattrs error tree into (path, message) pairs, in the order found."""
    if isinstance(exc, ClassValidationError):
        keys = {a.name: _key(a) for a in attrs.fields(exc.cl)}
        with_notes, without = exc.group_exceptions()
        found: list[tuple[str, str]] = []
        for sub, note in with_notes:
            _collect(sub, f"{path}.{keys.get(note.name, note.name)}", found)
        for sub in without:
            _collect(sub, path, found)
        # An old spelling stands for its current field: "required field missing" for
        # that field would say the same thing twice.
        extra = {
            key for e in without if isinstance(e, ForbiddenExtraKeysError) for key in e.extra_fields
        }
        renamed = _REPLACED_BY.get(_OBJECTS.get(exc.cl, ""), {})
        replaced = {f"{path}.{renamed[key]}" for key in extra if key in renamed}
        out.extend(p for p in found if not (p[0] in replaced and p[1] == _MISSING))
    elif isinstance(exc, IterableValidationError):
        with_index, without_index = exc.group_exceptions()
        for sub, index_note in with_index:
            _collect(sub, path + _index(index_note.index), out)
        for sub in without_index:
            _collect(sub, path, out)
    elif isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields, key=str):
            out.append((path, _unknown_key(key, exc.cl)))
    elif isinstance(exc, _Refused):
        out.append((f"{path}{_index(exc.key)}", str(exc)))
    elif isinstance(exc, KeyError):  # the generated code's o['key'] for a missing key
        out.append((path, _MISSING))
    elif isinstance(exc, _Invalid):
        out.append((path, str(exc)))
    else:  # pragma: no cover - every hook raises _Invalid; kept so nothing escapes
        out.append((path, f"invalid value ({type(exc).__name__}: {exc})"))


def _structure(data: object, cls: type[_T], path: str, out: list[tuple[str, str]]) -> _T | None:
    try:
        return _CONVERTER.structure(data, cls)
    except Exception as exc:
        _collect(exc, path, out)
        return None
