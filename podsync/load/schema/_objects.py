"""The schema of the ConfigMaps, Secrets and PersistentVolumeClaims of the sources and
of the references to them (``configMapKeyRef``, ``envFrom``, a ``persistentVolumeClaim``
volume).

Contract: shapes only, as ``_pod``'s classes (whose converter structures these too:
``_OBJECT_HOOKS`` gives the checks of the ``NewType`` s here, ``_OBJECT_CLASSES`` the
Kubernetes object each class reads, for ``_unsupported``'s tables); ``_objects`` checks
keys, base64 and sizes, ``convert._env`` resolves the references. No I/O; nothing here
is public API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, NewType

import attrs

from podsync.load.schema._pod_fields import _ignored_keys, _LabelValue, _Subdomain
from podsync.load.schema._scalars import (
    _bytes,
    _check_api_version,
    _check_label,
    _divisor,
    _expect_int,
)
from podsync.load.schema._yaml import _Invalid

# Nothing here is public API: ``_pod`` uses these classes and types.
__all__: list[str] = []

_Namespace = NewType("_Namespace", str)  # a DNS-1123 label
_FileMode = NewType("_FileMode", int)  # permission bits, 0 to 0777
_ObjectAPIVersion = NewType("_ObjectAPIVersion", str)  # v1
_Storage = NewType("_Storage", int)  # a quantity of bytes (10Gi)


@attrs.frozen(kw_only=True)
class _KeySelector:
    """``configMapKeyRef`` / ``secretKeyRef``: a key of an object of the sources."""

    name: _Subdomain
    key: str
    optional: bool = False


@attrs.frozen(kw_only=True)
class _ObjectRef:
    """``envFrom[].configMapRef`` / ``secretRef``: a whole object of the sources."""

    name: _Subdomain
    optional: bool = False


@attrs.frozen(kw_only=True)
class _EnvFromSource:
    prefix: str = ""
    config_map_ref: _ObjectRef | None = None
    secret_ref: _ObjectRef | None = None


@attrs.frozen(kw_only=True)
class _KeyToPath:
    """An ``items`` entry of a configMap or secret volume: which key, at which path."""

    key: str
    path: str
    mode: _FileMode | None = None


@attrs.frozen(kw_only=True)
class _ConfigMapVolumeSource:
    """A ``configMap`` volume; its paths and keys are checked by ``_projection``."""

    name: _Subdomain
    items: tuple[_KeyToPath, ...] = ()
    default_mode: _FileMode | None = None
    optional: bool = False


@attrs.frozen(kw_only=True)
class _SecretVolumeSource:
    """A ``secret`` volume; its paths and keys are checked by ``_projection``."""

    secret_name: _Subdomain
    items: tuple[_KeyToPath, ...] = ()
    default_mode: _FileMode | None = None
    optional: bool = False


@attrs.frozen(kw_only=True)
class _FieldRef:
    field_path: str
    api_version: str = "v1"


@attrs.frozen(kw_only=True)
class _ResourceFieldRef:
    resource: str
    container_name: str = ""
    # The exact value: whether it suits the resource is convert._env's rule. 0 is unset.
    divisor: Fraction = attrs.field(
        default=Fraction(0), metadata={"hook": lambda value, _: _divisor(value)}
    )


@attrs.frozen(kw_only=True)
class _DownwardAPIVolumeFile:
    """An ``items`` entry of a ``downwardAPI`` volume; checked by ``_projection``."""

    path: str
    field_ref: _FieldRef | None = None
    resource_field_ref: _ResourceFieldRef | None = None
    mode: _FileMode | None = None


@attrs.frozen(kw_only=True)
class _DownwardAPIVolumeSource:
    items: tuple[_DownwardAPIVolumeFile, ...] = ()
    default_mode: _FileMode | None = None


@attrs.frozen(kw_only=True)
class _ConfigMapProjection:
    """A ``configMap`` source of a ``projected`` volume: a configMap volume's fields but
    ``defaultMode`` (the projected volume's is used)."""

    name: _Subdomain
    items: tuple[_KeyToPath, ...] = ()
    optional: bool = False


@attrs.frozen(kw_only=True)
class _SecretProjection:
    """A ``secret`` source of a ``projected`` volume: its object is ``name`` (a secret
    volume's ``secretName``); no ``defaultMode``."""

    name: _Subdomain
    items: tuple[_KeyToPath, ...] = ()
    optional: bool = False


@attrs.frozen(kw_only=True)
class _DownwardAPIProjection:
    """A ``downwardAPI`` source of a ``projected`` volume: its ``items`` only."""

    items: tuple[_DownwardAPIVolumeFile, ...] = ()


@attrs.frozen(kw_only=True)
class _ServiceAccountTokenProjection:
    """A ``serviceAccountToken`` source: read so that ``_projection`` can refuse it with
    what to do (there is no API server to issue a token)."""

    path: str = ""
    audience: str = ""
    expiration_seconds: int | None = None


@attrs.frozen(kw_only=True)
class _VolumeProjection:
    """One of a ``projected`` volume's ``sources``: one of these (``_projection``
    checks that); ``clusterTrustBundle`` and ``podCertificate`` are refused
    (``_unsupported``), ``serviceAccountToken`` by ``_projection``, which knows the
    volume and the pod."""

    config_map: _ConfigMapProjection | None = None
    secret: _SecretProjection | None = None
    downward_api: _DownwardAPIProjection | None = None
    service_account_token: _ServiceAccountTokenProjection | None = None


@attrs.frozen(kw_only=True)
class _ProjectedVolumeSource:
    """A ``projected`` volume: the files of its ``sources``, in one directory."""

    sources: tuple[_VolumeProjection, ...] = ()
    default_mode: _FileMode | None = None


@attrs.frozen(kw_only=True)
class _ObjectMetaV1:
    """The metadata of a ConfigMap, Secret or PersistentVolumeClaim: its name is a DNS
    subdomain."""

    name: _Subdomain
    namespace: _Namespace = _Namespace("default")
    labels: dict[str, _LabelValue] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    uid: str = ""
    ignored: tuple[str, ...] = _ignored_keys()


@attrs.frozen(kw_only=True)
class _ConfigMapV1:
    """A ``v1 ConfigMap``; its keys and size are checked by ``_objects``."""

    api_version: _ObjectAPIVersion
    kind: str
    metadata: _ObjectMetaV1
    data: dict[str, str] = attrs.field(factory=dict)
    binary_data: dict[str, str] = attrs.field(factory=dict)  # base64, decoded by _objects
    immutable: bool = False
    ignored: tuple[str, ...] = _ignored_keys()


@attrs.frozen(kw_only=True)
class _SecretV1:
    """A ``v1 Secret``; its keys, base64 and type's keys are checked by ``_objects``."""

    api_version: _ObjectAPIVersion
    kind: str
    metadata: _ObjectMetaV1
    data: dict[str, str] = attrs.field(factory=dict)  # base64, decoded by _objects
    string_data: dict[str, str] = attrs.field(factory=dict)
    type: str = "Opaque"
    immutable: bool = False
    ignored: tuple[str, ...] = _ignored_keys()


@attrs.frozen(kw_only=True)
class _ClaimSourceV1:
    """A ``persistentVolumeClaim`` volume: the claim's named engine volume
    (``convert._document``)."""

    claim_name: _Subdomain
    read_only: bool = False


@attrs.frozen(kw_only=True)
class _ClaimRequestsV1:
    """A claim's ``resources.requests``: the ``storage`` it asks for."""

    storage: _Storage | None = None


@attrs.frozen(kw_only=True)
class _ClaimResourcesV1:
    """A claim's ``resources`` (``limits`` is refused: ``_unsupported``)."""

    requests: _ClaimRequestsV1 | None = None


@attrs.frozen(kw_only=True)
class _ClaimSpecV1:
    """A claim's ``spec``; its access modes and volume mode are checked by ``_objects``,
    the fields that bind a claim to a cluster's volumes are refused (``_unsupported``)."""

    access_modes: tuple[str, ...] = ()
    resources: _ClaimResourcesV1 | None = None
    volume_mode: str = "Filesystem"


@attrs.frozen(kw_only=True)
class _ClaimV1:
    """A ``v1 PersistentVolumeClaim`` (its ``status``, the server's, is ignored)."""

    api_version: _ObjectAPIVersion
    kind: str
    metadata: _ObjectMetaV1
    spec: _ClaimSpecV1
    ignored: tuple[str, ...] = _ignored_keys()


def _check_file_mode(value: object) -> int:
    """Permission bits as Kubernetes takes them (validateConfigMapVolumeSource and the
    other volume sources): 0 to 0777. YAML 1.1 reads ``0644`` as octal, as Kubernetes'
    YAML does."""
    number = _expect_int(value)
    if not 0 <= number <= 0o777:
        octal = f" (0{number:o} in octal)" if number > 0 else ""
        raise _Invalid(
            f"must be a number between 0 and 0777 (octal), both inclusive, got {number}{octal}"
        )
    return number


# Which Kubernetes object each class reads (the keys of ``_unsupported``'s tables).
_OBJECT_CLASSES: Mapping[type, str] = {
    _EnvFromSource: "EnvFromSource",
    _KeyToPath: "KeyToPath",
    _ConfigMapVolumeSource: "ConfigMapVolumeSource",
    _SecretVolumeSource: "SecretVolumeSource",
    _DownwardAPIVolumeSource: "DownwardAPIVolumeSource",
    _DownwardAPIVolumeFile: "DownwardAPIVolumeFile",
    _ConfigMapProjection: "ConfigMapProjection",
    _SecretProjection: "SecretProjection",
    _DownwardAPIProjection: "DownwardAPIProjection",
    _ServiceAccountTokenProjection: "ServiceAccountTokenProjection",
    _VolumeProjection: "VolumeProjection",
    _ProjectedVolumeSource: "ProjectedVolumeSource",
    _ObjectMetaV1: "ObjectMeta",
    _ConfigMapV1: "ConfigMap",
    _SecretV1: "Secret",
    _ClaimSourceV1: "PersistentVolumeClaimVolumeSource",
    _ClaimV1: "PersistentVolumeClaim",
    _ClaimSpecV1: "PersistentVolumeClaimSpec",
    _ClaimResourcesV1: "VolumeResourceRequirements",
}

# The check of each NewType here, for ``_pod``'s converter.
_OBJECT_HOOKS: Mapping[Any, Callable[[object], Any]] = {
    _Namespace: _check_label,
    _ObjectAPIVersion: _check_api_version,
    _FileMode: _check_file_mode,
    _Storage: _bytes,
}
