"""The ConfigMaps and Secrets of the sources: validated, decoded, and found by name.

podman's ``kube play`` reads ``kind: ConfigMap`` and ``kind: Secret`` documents from the
same input as the pods; podsync does the same with every source given to ``load_pods``,
in any file or document of them, so that a pod may refer to an object defined in
another file or directory. Objects are namespaced like pods: a pod sees only the
objects of its own namespace.

Contract: ``_read_object(data, kind, root, out)`` structures one ``v1`` ConfigMap or
Secret document and checks it as the API server would (``ValidateConfigMap`` and
``ValidateSecret``, ``pkg/apis/core/validation/validation.go``): every key is a
config key (``IsConfigMapKey``: ``[-._a-zA-Z0-9]+``, at most 253 characters, not ``.``
or ``..`` nor starting with ``..``); a ConfigMap key is not both in ``data`` and
``binaryData``; ``binaryData`` and a Secret's ``data`` are base64 (standard alphabet,
padded, as Go's ``[]byte`` JSON decoding wants); the whole data of either is at most
1 MiB (``MaxSecretSize``, which ``ValidateConfigMap`` also applies); a Secret of a
well-known ``type`` has that type's keys. A Secret's ``stringData`` is merged into its
``data`` (a key in both takes ``stringData``'s value), as the API server's conversion
does. It returns ``None`` after appending every problem to ``out``; it never raises.

``_Objects`` holds what was read, keyed by namespace and name; ``_config`` reads every
source's objects before any pod so that the order of files does not matter.

A Secret's values are never shown: its ``repr`` leaves ``data`` out.

Layering: above ``schema._pod``, below ``_env`` and ``_document``; no I/O. Nothing
here is public API yet.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping

import attrs

from podsync.load.schema._objects import _ClaimV1, _ConfigMapV1, _SecretV1
from podsync.load.schema._pod import _structure
from podsync.load.schema._yaml import _describe, _kind

__all__: list[str] = []

#: Kubernetes' limit on the data of one ConfigMap or Secret (``MaxSecretSize``, 1 MiB).
MAX_OBJECT_BYTES = 1024 * 1024

_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")


@attrs.frozen
class _ConfigMap:
    """A ConfigMap of the sources: its text ``data`` and its ``binary_data``."""

    name: str
    namespace: str
    data: Mapping[str, str]
    binary_data: Mapping[str, bytes]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@attrs.frozen
class _Secret:
    """A Secret of the sources: its ``type`` and its decoded ``data`` (never shown)."""

    name: str
    namespace: str
    type: str
    data: Mapping[str, bytes] = attrs.field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@attrs.frozen
class _Claim:
    """A PersistentVolumeClaim of the sources: what it asks for. It is checked, not
    needed: a pod's claim without a document is a claim all the same."""

    name: str
    namespace: str
    access_modes: tuple[str, ...]
    storage: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@attrs.define
class _Objects:
    """The ConfigMaps, Secrets and PersistentVolumeClaims of all sources, by
    ``(namespace, name)``."""

    config_maps: dict[tuple[str, str], _ConfigMap] = attrs.field(factory=dict)
    secrets: dict[tuple[str, str], _Secret] = attrs.field(factory=dict)
    claims: dict[tuple[str, str], _Claim] = attrs.field(factory=dict)
    # The host's key for the digests of Secret values (podsync.model._secrets), read only
    # when the sources hold a Secret; part of equality, so that a cache of parsed files
    # parses again under another key.
    secret_key: bytes | None = attrs.field(default=None, repr=False)


def _config_key_problem(key: str) -> str | None:
    """Why ``key`` is not a config key (``IsConfigMapKey``), or ``None``."""
    if len(key) > 253:
        return f"{_describe(key[:20] + '...')} is longer than 253 characters"
    if not _CONFIG_KEY.fullmatch(key):
        return (
            f"{_describe(key)} is not a valid key: keys consist of letters, digits, "
            "'-', '_' and '.'"
        )
    if key in (".", ".."):
        return f"{_describe(key)} is not a valid key: it must not be '.' or '..'"
    if key.startswith(".."):
        return f"{_describe(key)} is not a valid key: it must not start with '..'"
    return None


def _key_path(path: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def _check_keys(keys: Mapping[str, object], path: str, out: list[tuple[str, str]]) -> bool:
    ok = True
    for key in keys:
        problem = _config_key_problem(key)
        if problem is not None:
            out.append((_key_path(path, key), problem))
            ok = False
    return ok


def _secret_values(raw: object, path: str, out: list[tuple[str, str]]) -> dict[str, str]:
    """A Secret's ``data`` or ``stringData`` mapping (``raw``), checked: the one place
    where a problem of a Secret's values is made, so that none can print one.

    Each message is built from the path, the key and the *kind* of what was given (a
    number, a list), never from a value: a Secret's values must not reach an error
    message (a terminal, a CI log). A null mapping is none, as Go's decoder reads it.
    Keys are names, not values, and are shown (``_check_keys`` checks them)."""
    if raw is None:
        return {}
    hidden = "(the value is not shown: it is a Secret's)"
    if not isinstance(raw, dict):
        out.append((path, f"expected a mapping, got {_kind(raw)} {hidden}"))
        return {}
    values: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            out.append((path, f"a key must be a string, got {_describe(key)}"))
        elif not isinstance(value, str):
            out.append((_key_path(path, key), f"expected a string, got {_kind(value)} {hidden}"))
        elif "\0" in value:
            # YAML's "\0" escapes put a NUL in a string (a raw NUL byte is refused as
            # binary data): no engine can pass it on (_expect_str's rule, without the value).
            out.append(
                (
                    _key_path(path, key),
                    f"contains a NUL character, which no engine can pass on {hidden}",
                )
            )
        else:
            values[key] = value
    return values


def _decode_base64(
    values: Mapping[str, str], path: str, out: list[tuple[str, str]]
) -> dict[str, bytes]:
    decoded: dict[str, bytes] = {}
    for key, text in values.items():
        try:
            # Go's encoding/json decodes []byte with StdEncoding: padded, no newlines.
            decoded[key] = base64.b64decode(text.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            out.append((_key_path(path, key), "is not valid base64"))
    return decoded


def _check_size(kind: str, size: int, root: str, out: list[tuple[str, str]]) -> bool:
    if size > MAX_OBJECT_BYTES:
        out.append(
            (
                root,
                f"the {kind}'s data is {size} bytes, more than Kubernetes' limit of "
                f"{MAX_OBJECT_BYTES} bytes (1 MiB)",
            )
        )
        return False
    return True


# The keys a Secret of a well-known type must have (ValidateSecret).
_TYPE_KEYS: Mapping[str, tuple[str, ...]] = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")


def _read_claim(data: object, root: str, out: list[tuple[str, str]]) -> _Claim | None:
    """A PersistentVolumeClaim document, checked as ``ValidatePersistentVolumeClaimSpec``
    does (an access mode and a storage request are required) and against what a Docker
    local volume is (``volumeMode: Block`` and ``ReadWriteOncePod`` are refused, the
    fields that bind a claim to a cluster's volumes by ``_unsupported``)."""
    before = len(out)
    claim = _structure(data, _ClaimV1, root, out)
    if claim is None:
        return None
    spec, at = claim.spec, f"{root}.spec"
    if not spec.access_modes:
        out.append(
            (
                f"{at}.accessModes",
                f"at least one access mode is required ({', '.join(_ACCESS_MODES[:-1])} or "
                f"{_ACCESS_MODES[-1]})",
            )
        )
    for i, mode in enumerate(spec.access_modes):
        if mode == "ReadWriteOncePod":
            out.append(
                (
                    f"{at}.accessModes[{i}]",
                    "accessModes: 'ReadWriteOncePod' is not supported by podsync: podsync "
                    "does not keep a second pod off a claim (ReadWriteOnce, ReadOnlyMany and "
                    "ReadWriteMany are: every pod on one host may mount the volume)",
                )
            )
        elif mode not in _ACCESS_MODES:
            out.append(
                (
                    f"{at}.accessModes[{i}]",
                    f"must be {', '.join(_ACCESS_MODES)} or ReadWriteOncePod, got {mode!r}",
                )
            )
    if spec.volume_mode == "Block":
        out.append(
            (
                f"{at}.volumeMode",
                "volumeMode: 'Block' is not supported by podsync: a claim is a Docker volume, "
                "a directory; raw block devices are not implemented (only 'Filesystem', the "
                "default, is)",
            )
        )
    elif spec.volume_mode != "Filesystem":
        out.append((f"{at}.volumeMode", f"must be Filesystem or Block, got {spec.volume_mode!r}"))
    requests = spec.resources.requests if spec.resources is not None else None
    storage = requests.storage if requests is not None else None
    if storage is None:
        # Required by Kubernetes' validation; a Docker volume has no size, so the
        # request is the claim's only statement of what it holds.
        out.append(
            (
                f"{at}.resources.requests.storage",
                "is required: the size the claim asks for (10Gi)",
            )
        )
    if len(out) > before or storage is None:
        return None
    meta = claim.metadata
    return _Claim(meta.name, meta.namespace, spec.access_modes, storage)


def _read_object(
    data: object, kind: str, root: str, out: list[tuple[str, str]]
) -> _ConfigMap | _Secret | _Claim | None:
    """A ConfigMap, Secret or PersistentVolumeClaim document (``kind`` says which), or
    ``None`` with problems."""
    before = len(out)
    if kind == "PersistentVolumeClaim":
        return _read_claim(data, root, out)
    if kind == "ConfigMap":
        cm = _structure(data, _ConfigMapV1, root, out)
        if cm is None:
            return None
        _check_keys(cm.data, f"{root}.data", out)
        _check_keys(cm.binary_data, f"{root}.binaryData", out)
        for key in cm.data:
            if key in cm.binary_data:
                out.append(
                    (
                        _key_path(f"{root}.binaryData", key),
                        f"duplicate of key {key!r} in data",
                    )
                )
        binary = _decode_base64(cm.binary_data, f"{root}.binaryData", out)
        size = sum(len(k) + len(v.encode("utf-8")) for k, v in cm.data.items())
        size += sum(len(k) + len(v) for k, v in binary.items())
        _check_size("ConfigMap", size, root, out)
        if len(out) > before:
            return None
        return _ConfigMap(cm.metadata.name, cm.metadata.namespace, dict(cm.data), binary)
    # data and stringData are checked by _secret_values, not by the schema's hooks,
    # whose messages show what they were given.
    values: dict[str, object] = {}
    if isinstance(data, dict):
        values = {k: data[k] for k in ("data", "stringData") if k in data}
        data = {k: v for k, v in data.items() if k not in values}
    secret = _structure(data, _SecretV1, root, out)
    if secret is None:
        return None
    secret = attrs.evolve(
        secret,
        data=_secret_values(values.get("data"), f"{root}.data", out),
        string_data=_secret_values(values.get("stringData"), f"{root}.stringData", out),
    )
    _check_keys(secret.data, f"{root}.data", out)
    _check_keys(secret.string_data, f"{root}.stringData", out)
    merged = _decode_base64(secret.data, f"{root}.data", out)
    # stringData is write-only: the API server merges it into data, its value winning.
    merged.update({k: v.encode("utf-8") for k, v in secret.string_data.items()})
    if not secret.type:
        out.append((f"{root}.type", "must not be empty (the default is 'Opaque')"))
    for needed in _TYPE_KEYS.get(secret.type, ()):
        if needed not in merged:
            out.append(
                (f"{root}.data", f"a Secret of type {secret.type!r} needs the key {needed!r}")
            )
    if secret.type == "kubernetes.io/basic-auth" and not (
        "username" in merged or "password" in merged
    ):
        out.append(
            (
                f"{root}.data",
                "a Secret of type 'kubernetes.io/basic-auth' needs the key 'username' "
                "or 'password'",
            )
        )
    _check_size("Secret", sum(len(k) + len(v) for k, v in merged.items()), root, out)
    if len(out) > before:
        return None
    return _Secret(secret.metadata.name, secret.metadata.namespace, secret.type, merged)
