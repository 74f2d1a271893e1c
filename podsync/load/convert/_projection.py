"""The files of ``configMap``, ``secret``, ``downwardAPI`` and ``projected`` volumes,
projected from the sources' objects and the pod.

Contract: ``_project_volume(volume, facts, path, out)`` is a pure function of one v1
volume of a pod and what the loader knows of the pod and the sources (``_PodFacts``:
the pod's metadata, its containers' resources, the ConfigMaps and Secrets of the
sources). It returns the volume's ``VolumeContent`` - every file with its bytes and its
mode, and a digest of each source it read - or ``None`` when the volume is of another
kind (hostPath, emptyDir); a problem is appended to ``out`` with its ``$.path``, and
the volume then has no content. Writing the files is not its business (``_volume_writer``
does it on the host, under the root directory), so the same projection can be written
elsewhere (an engine volume) by another writer.

The kubelet's rules, ported:

* configMap and secret volumes (``MakePayload``, ``pkg/volume/configmap/configmap.go``
  and ``pkg/volume/secret/secret.go``): without ``items`` every key is a file named
  after it (a ConfigMap's ``data`` and ``binaryData``); with ``items`` only those keys,
  each at its ``path``. ``mode`` is the file's, else ``defaultMode``, else 0644
  (``SetDefaults_ConfigMapVolumeSource``, ``SetDefaults_SecretVolumeSource``: a
  Secret's files too, so that a container of any user reads them, issue 27). An
  object that is not in the sources is an error unless ``optional`` (the volume is
  then empty); a key that is not in the object is an error unless ``optional`` (the
  item is then left out).
* downwardAPI volumes (``CollectData``, ``pkg/volume/downwardapi/downwardapi.go``):
  ``fieldRef`` of ``metadata.name``, ``metadata.namespace``, ``metadata.uid``,
  ``metadata.labels``, ``metadata.annotations`` and the ``['key']`` forms of the last
  two (``validVolumeDownwardAPIFieldPathExpressions``); whole labels or annotations are
  written as ``fieldpath.FormatMap`` writes them (``key="value"`` lines sorted by key,
  the value quoted as Go's ``%q``, no newline at the end); ``resourceFieldRef`` with a
  ``containerName`` (required in a volume) is the env's resource arithmetic
  (``_env._resource_value``).
* projected volumes (``collectData``, ``pkg/volume/projected/projected.go``): the files
  of each of its ``sources`` in order - a configMap, secret or downwardAPI source with
  that kind's rules - in one directory; the volume's ``defaultMode`` is every file's
  mode unless its item has one (0644 unless given, ``SetDefaults_ProjectedVolumeSource``,
  a Secret's files too). Its ``sources`` record names each
  object (and each downward API source) with a digest of what it contributed, so a plan
  says which changed. Two files at one path are refused (see ``_projected``). A
  ``serviceAccountToken`` source is refused with what to do - for the volume a cluster
  adds to every pod (``kube-api-access-*``) in a pod exported from a cluster, the
  advice to delete it and its mounts; ``clusterTrustBundle`` and ``podCertificate``
  are refused by ``_unsupported``.
* Item paths are checked as the API server checks them (``validateLocalNonReservedPath``,
  ``pkg/apis/core/validation/validation.go``): relative, no ``..`` element, not starting
  with ``..``; and as the kubelet's atomic writer does (``validatePath``): at most 4096
  characters, elements of at most 255. podsync also refuses two items at one path, or a
  file where another item needs a directory (the kubelet would let the last one win, or
  fail to write the volume when the pod starts).

Layering: above ``_env`` (whose ``_PodFacts`` and resource arithmetic it uses),
``_objects`` and ``schema._pod``, below ``_document``; no I/O. Nothing here is public API.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Mapping, Sequence

import attrs

from podsync.load.convert._env import _field_value, _no_object, _PodFacts, _resource_value
from podsync.load.convert._objects import _Secret
from podsync.load.schema._objects import (
    _ConfigMapVolumeSource,
    _DownwardAPIVolumeFile,
    _DownwardAPIVolumeSource,
    _KeyToPath,
    _ProjectedVolumeSource,
    _SecretVolumeSource,
)
from podsync.load.schema._volumes import _VolumeV1
from podsync.load.schema._yaml import _describe
from podsync.model._secrets import SecretPart, secret_digest
from podsync.model._volume import VolumeContent, VolumeFile, VolumeKind

# Nothing here is public API: ``_document`` projects each v1 volume here.
__all__: list[str] = []

#: The mode of a configMap, secret, downwardAPI or projected volume's files unless the
#: pod says otherwise: Kubernetes' ``SetDefaults_ConfigMapVolumeSource``,
#: ``SetDefaults_SecretVolumeSource``, ``SetDefaults_DownwardAPIVolumeSource`` and
#: ``SetDefaults_ProjectedVolumeSource`` all give 0644. A Secret's files were 0400 before
#: issue 27 (owner-only): a container of another user could not read them. A volume
#: written with 0400 is rewritten in place at the first sync after an upgrade (its
#: content digest holds the modes), and no container restarts for it.
DEFAULT_MODE = 0o644

# The atomic writer's limits (validatePath, pkg/volume/util/atomic_writer.go).
_MAX_PATH = 4096
_MAX_NAME = 255

# What a source contributes when it is not in the sources (an optional object).
_MISSING = "missing"


def _project_volume(
    volume: _VolumeV1, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> VolumeContent | None:
    """The content of ``volume`` (at ``path``, ``$.spec.volumes[i]``), or ``None``: a
    volume of another kind, or one with problems (appended to ``out``)."""
    before = len(out)
    content: VolumeContent | None
    if volume.config_map is not None:
        content = _config_map(volume.config_map, facts, f"{path}.configMap", out)
    elif volume.secret is not None:
        content = _secret(volume.secret, facts, f"{path}.secret", out)
    elif volume.downward_api is not None:
        content = _downward_api(volume.downward_api, facts, f"{path}.downwardAPI", out)
    elif volume.projected is not None:
        content = _projected(volume.name, volume.projected, facts, f"{path}.projected", out)
    else:
        return None
    return content if len(out) == before else None


# ---------------------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------------------


def _path_problem(text: str) -> str | None:
    """Why ``text`` cannot be an item's path, or ``None``."""
    if not text:
        return "must not be empty"
    if text.startswith("/"):
        return f"{_describe(text)} must be a relative path"
    parts = text.split("/")
    if ".." in parts:
        return f"{_describe(text)} must not contain '..'"
    if text.startswith(".."):
        return f"{_describe(text)} must not start with '..'"
    if "\0" in text:
        return "must not contain a NUL character"
    if len(text) > _MAX_PATH:
        return f"must be at most {_MAX_PATH} characters, got {len(text)}"
    if any(len(part.encode()) > _MAX_NAME for part in parts):
        return f"{_describe(text)} has a name longer than {_MAX_NAME} bytes"
    if posixpath.normpath(text) == ".":
        return f"{_describe(text)} names the volume itself, not a file in it"
    return None


def _checked_files(
    files: Sequence[tuple[str, bytes, int, str]],
    out: list[tuple[str, str]],
    described: Mapping[str, str] | None = None,
) -> tuple[VolumeFile, ...]:
    """``(path, data, mode, at)`` entries as ``VolumeFile`` s sorted by path; two at one
    path, or one where another needs a directory, is a problem at the later entry.
    ``described`` names the object behind an ``at`` where the path alone does not
    (a projected volume's source that writes every key of its object)."""
    seen: dict[str, str] = {}
    result: list[VolumeFile] = []

    def place(at: str) -> str:
        what = described.get(at) if described is not None else None
        return at if what is None else f"{at} ({what})"

    for name, data, mode, at in files:
        normal = posixpath.normpath(name)
        first = seen.get(normal)
        if first is not None:
            out.append((at, f"{_describe(name)} is also the path of {place(first)}"))
            continue
        parents = [posixpath.dirname(normal)]
        while parents[-1]:
            parents.append(posixpath.dirname(parents[-1]))
        clash = next((seen[p] for p in parents if p in seen), None)
        if clash is None:
            clash = next((w for p, w in seen.items() if p.startswith(normal + "/")), None)
        if clash is not None:
            out.append(
                (at, f"{_describe(name)} and the path of {place(clash)} cannot both be files")
            )
            continue
        seen[normal] = at
        result.append(VolumeFile(normal, data, mode))
    return tuple(sorted(result, key=lambda f: f.path))


def _digest(files: Sequence[VolumeFile]) -> str:
    """A digest of ``files``; a Secret's file by its keyed digest, never its bytes."""
    total = hashlib.sha256()
    for f in files:
        total.update(f"{f.path}\0{f.mode:o}\0".encode())
        if f.secret is not None:
            total.update(f"secret\0{f.secret.digest}\0".encode())
        else:
            total.update(f"{len(f.data)}\0".encode())
            total.update(f.data)
    return total.hexdigest()


# ---------------------------------------------------------------------------------------
# configMap and secret volumes
# ---------------------------------------------------------------------------------------


def _key_files(
    what: str,
    values: Mapping[str, bytes] | None,
    items: Sequence[_KeyToPath],
    mode: int,
    optional: bool,
    path: str,
    out: list[tuple[str, str]],
    whole: str = "",
) -> list[tuple[str, bytes, int, str]]:
    """MakePayload: the files of the keys (``values``; ``None`` when it is not in the
    sources) of the object ``what`` (``ConfigMap default/settings``). Without items
    each file's place is ``whole`` (default: ``<path>.name``)."""
    if values is None:
        return []
    if not items:
        at = whole or f"{path}.name"
        return [(key, data, mode, at) for key, data in sorted(values.items())]
    files: list[tuple[str, bytes, int, str]] = []
    for i, item in enumerate(items):
        at = f"{path}.items[{i}]"
        if not item.key:
            out.append((f"{at}.key", "must not be empty"))
            continue
        problem = _path_problem(item.path)
        if problem is not None:
            out.append((f"{at}.path", problem))
            continue
        if item.key not in values:
            if not optional:
                keys = ", ".join(sorted(values)) or "none"
                out.append((f"{at}.key", f"{what} has no key {item.key!r} (keys: {keys})"))
            continue  # optional: the item is left out (MakePayload)
        files.append((item.path, values[item.key], mode if item.mode is None else item.mode, at))
    return files


def _config_map_values(
    name: str, optional: bool, facts: _PodFacts, at: str, out: list[tuple[str, str]]
) -> tuple[str, dict[str, bytes] | None]:
    """The ConfigMap ``name`` as ``what`` it is called and its keys' bytes (``data`` and
    ``binaryData``), or ``None`` when it is not in the sources (a problem at ``at``
    unless ``optional``)."""
    what = f"ConfigMap {facts.namespace}/{name}"
    found = facts.objects.config_maps.get((facts.namespace, name))
    if found is None:
        if not optional:
            out.append((at, _no_object("ConfigMap", name, facts)))
        return what, None
    values = {k: v.encode("utf-8") for k, v in found.data.items()}
    values.update(found.binary_data)
    return what, values


def _config_map(
    source: _ConfigMapVolumeSource, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> VolumeContent:
    what, values = _config_map_values(source.name, source.optional, facts, f"{path}.name", out)
    mode = DEFAULT_MODE if source.default_mode is None else source.default_mode
    entries = _key_files(what, values, source.items, mode, source.optional, path, out)
    files = _checked_files(entries, out)
    digest = _digest(files) if values is not None else _MISSING
    return VolumeContent(VolumeKind.CONFIG_MAP, files, {what: digest})


def _secret_object(
    name: str, optional: bool, facts: _PodFacts, at: str, out: list[tuple[str, str]]
) -> tuple[str, _Secret | None]:
    """The Secret ``name`` as ``what`` it is called, or ``None`` when it is not in the
    sources (a problem at ``at`` unless ``optional``) or there is no digest key to keep
    its values out of plans (always a problem)."""
    what = f"Secret {facts.namespace}/{name}"
    found = facts.objects.secrets.get((facts.namespace, name))
    if found is None:
        if not optional:
            out.append((at, _no_object("Secret", name, facts)))
        return what, None
    if not facts.objects.secret_key:
        out.append((at, _NO_KEY))
        return what, None
    return what, found


def _secret_files(
    files: Sequence[VolumeFile],
    keys: Mapping[str, tuple[_Secret, str]],
    secret_key: bytes | None,
) -> tuple[VolumeFile, ...]:
    """``files`` with each Secret file (``keys``: its normalised path -> its Secret and
    key) naming the key it holds with the keyed digest of its value: what a plan shows,
    and what a saved plan reads the value back by (podsync.model._secrets). Without the
    host's key no Secret was read (``_secret_object``), so ``keys`` is empty."""
    if not keys or not secret_key:
        return tuple(files)
    result = []
    for f in files:
        found = keys.get(f.path)
        if found is not None:
            secret, key = found
            digest = secret_digest(secret_key, secret.namespace, secret.name, key, f.data)
            f = attrs.evolve(f, secret=SecretPart(secret.namespace, secret.name, key, digest))
        result.append(f)
    return tuple(result)


def _secret(
    source: _SecretVolumeSource, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> VolumeContent:
    what, found = _secret_object(
        source.secret_name, source.optional, facts, f"{path}.secretName", out
    )
    values = found.data if found is not None else None
    mode = DEFAULT_MODE if source.default_mode is None else source.default_mode
    entries = _key_files(what, values, source.items, mode, source.optional, path, out)
    files = _checked_files(entries, out)
    if found is not None:
        keys = {p: (found, k) for p, k in _item_keys(source.items, found.data)}
        files = _secret_files(files, keys, facts.objects.secret_key)
    digest = _digest(files) if values is not None else _MISSING
    return VolumeContent(VolumeKind.SECRET, files, {what: digest})


_NO_KEY = (
    "a Secret's value needs the host's digest key to be kept out of plans: pass "
    "secret_key to load_pods (podsync.host_secret_key)"
)


def _item_keys(items: Sequence[_KeyToPath], data: Mapping[str, bytes]) -> list[tuple[str, str]]:
    """(normalised path, key) of each file of a Secret's volume: every key at its own
    name without ``items``, else each item's."""
    if not items:
        return [(key, key) for key in data]
    return [(posixpath.normpath(i.path), i.key) for i in items if i.key in data]


# ---------------------------------------------------------------------------------------
# downwardAPI volumes
# ---------------------------------------------------------------------------------------

_VOLUME_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.annotations",
    "metadata.labels['<key>']",
    "metadata.annotations['<key>']",
)


def _format_map(values: Mapping[str, str]) -> str:
    """``fieldpath.FormatMap``: ``key="value"`` lines sorted by key, each value quoted as
    Go's ``%q`` quotes it, joined by newlines (none at the end)."""
    return "\n".join(f"{key}={_go_quote(values[key])}" for key in sorted(values))


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def _go_quote(text: str) -> str:
    """``strconv.Quote``: printable characters as they are (Go's ``IsPrint``: letters,
    marks, numbers, punctuation, symbols and the ASCII space - Python's
    ``isprintable``), the C escapes, ``\\xNN`` for other control characters and DEL,
    ``\\uNNNN`` / ``\\UNNNNNNNN`` for other non-printable characters."""
    out = ['"']
    for char in text:
        escaped = _GO_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        elif 0xD800 <= ord(char) <= 0xDFFF:  # not a valid rune: Go writes U+FFFD
            out.append("\\ufffd")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def _downward_value(
    item: _DownwardAPIVolumeFile, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> tuple[str, str] | None:
    """An item's value and the source it reads (for the plan's reasons), or ``None``."""
    given = [
        key
        for key, value in (
            ("fieldRef", item.field_ref),
            ("resourceFieldRef", item.resource_field_ref),
        )
        if value is not None
    ]
    if len(given) != 1:
        got = " and ".join(given) if given else "none"
        out.append((path, f"needs exactly one of fieldRef or resourceFieldRef, got {got}"))
        return None
    pod = f"pod {facts.namespace}/{facts.name}"
    if item.resource_field_ref is not None:
        ref = item.resource_field_ref
        at = f"{path}.resourceFieldRef"
        if not ref.container_name:
            # validateContainerResourceFieldSelector: required in a volume (an env
            # entry has its own container).
            out.append((f"{at}.containerName", "is required in a downwardAPI volume"))
            return None
        value = _resource_value(ref, "", facts, at, out)
        if value is None:
            return None
        return (
            value,
            f"the resources of container {facts.namespace}/{facts.name}/{ref.container_name}",
        )
    ref_ = item.field_ref
    assert ref_ is not None
    at = f"{path}.fieldRef"
    field = ref_.field_path
    if field in ("metadata.labels", "metadata.annotations"):
        if ref_.api_version not in ("", "v1"):
            out.append((f"{at}.apiVersion", f"must be 'v1', got {_describe(ref_.api_version)}"))
            return None
        which = field.split(".")[1]
        values = facts.labels if which == "labels" else facts.annotations
        return _format_map(values), f"the {which} of {pod}"
    base = field.partition("['")[0]
    if field in _VOLUME_FIELD_PATHS[:3] or (
        base in ("metadata.labels", "metadata.annotations") and field.endswith("']")
    ):
        value = _field_value(ref_, facts, at, out)
        if value is None:
            return None
        if base in ("metadata.labels", "metadata.annotations"):
            return value, f"the {base.split('.')[1]} of {pod}"
        return value, pod
    names = ", ".join(_VOLUME_FIELD_PATHS[:-1]) + f" or {_VOLUME_FIELD_PATHS[-1]}"
    out.append(
        (
            f"{at}.fieldPath",
            f"must be one of {names} in a downwardAPI volume, got {_describe(field)}",
        )
    )
    return None


def _downward_entries(
    items: Sequence[_DownwardAPIVolumeFile],
    mode: int,
    facts: _PodFacts,
    path: str,
    out: list[tuple[str, str]],
) -> list[tuple[tuple[str, bytes, int, str], str]]:
    """CollectData: the ``(path, data, mode, at)`` entry of each item, with the source
    it reads (for the plan's reasons)."""
    entries: list[tuple[tuple[str, bytes, int, str], str]] = []
    for i, item in enumerate(items):
        at = f"{path}.items[{i}]"
        problem = _path_problem(item.path)
        if problem is not None:
            out.append((f"{at}.path", problem))
            continue
        found = _downward_value(item, facts, at, out)
        if found is None:
            continue
        value, what = found
        item_mode = mode if item.mode is None else item.mode
        entries.append(((item.path, value.encode("utf-8"), item_mode, at), what))
    return entries


def _by_source(
    files: Sequence[VolumeFile], read_from: Mapping[str, str], sources: dict[str, str]
) -> dict[str, str]:
    """``sources`` (each object's digest, or ``_MISSING``) with the digest of each
    group of ``files`` read from one source (``read_from``: normalised path -> source),
    sorted by name."""
    groups: dict[str, list[VolumeFile]] = {}
    for f in files:
        groups.setdefault(read_from[f.path], []).append(f)
    merged = dict(sources)
    merged.update((what, _digest(group)) for what, group in groups.items())
    return dict(sorted(merged.items()))


def _downward_api(
    source: _DownwardAPIVolumeSource, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> VolumeContent:
    mode = DEFAULT_MODE if source.default_mode is None else source.default_mode
    found = _downward_entries(source.items, mode, facts, path, out)
    files = _checked_files([entry for entry, _ in found], out)
    read_from = {posixpath.normpath(entry[0]): what for entry, what in found}
    return VolumeContent(VolumeKind.DOWNWARD_API, files, _by_source(files, read_from, {}))


# ---------------------------------------------------------------------------------------
# projected volumes
# ---------------------------------------------------------------------------------------

_PROJECTED_KINDS = "configMap, secret or downwardAPI"

_NO_TOKEN = (
    "serviceAccountToken is not supported by podsync: there is no API server to issue a token"
)

# The service-account volume the API server's ServiceAccount admission adds to every pod
# (plugin/pkg/admission/serviceaccount/admission.go: a projected volume named
# "kube-api-access-<random>" with a serviceAccountToken source, mounted read-only at
# /var/run/secrets/kubernetes.io/serviceaccount in every container).
_CLUSTER_TOKEN_VOLUME = "kube-api-access-"


def _projected(
    name: str,
    source: _ProjectedVolumeSource,
    facts: _PodFacts,
    path: str,
    out: list[tuple[str, str]],
) -> VolumeContent:
    """collectData (pkg/volume/projected/projected.go): the files of every source, in
    order, in one directory. Each source is a configMap, secret or downwardAPI one with
    that volume kind's rules; the volume's ``defaultMode`` is every file's mode unless
    its item has one (0644 unless given, SetDefaults_ProjectedVolumeSource, a Secret's
    files too: ``DEFAULT_MODE``).

    The API server refuses two items at one path (validateProjectionSources,
    pkg/apis/core/validation/validation.go: "conflicting duplicate paths"); collectData
    merges the sources' payloads into one map, so for keys no item names a later source
    would replace an earlier one's file. podsync refuses every two files at one path,
    naming both places. A source podsync cannot fill is refused with what to do, the
    service-account volume of a pod exported from a cluster with the advice to delete
    it."""
    token = next(
        (j for j, s in enumerate(source.sources) if s.service_account_token is not None), None
    )
    mounts = facts.exported_mounts
    if token is not None and mounts is not None and name.startswith(_CLUSTER_TOKEN_VOLUME):
        # Only this problem: the rest of the volume (the cluster's CA ConfigMap, the
        # namespace) is the cluster's too, and goes with it.
        at = f"{path}.sources[{token}].serviceAccountToken"
        out.append((at, _cluster_volume_advice(name, mounts.get(name, ()))))
        return VolumeContent(VolumeKind.PROJECTED)
    mode = DEFAULT_MODE if source.default_mode is None else source.default_mode
    entries: list[tuple[str, bytes, int, str]] = []
    read_from: dict[str, str] = {}  # normalised path -> the source it was read from
    secret_keys: dict[str, tuple[_Secret, str]] = {}  # normalised path -> Secret, key
    described: dict[str, str] = {}  # the place of a whole object's files -> the object
    sources: dict[str, str] = {}  # objects that gave no file: _MISSING or an empty digest

    def add(found: Sequence[tuple[str, bytes, int, str]], what: str) -> None:
        entries.extend(found)
        for entry in found:
            read_from.setdefault(posixpath.normpath(entry[0]), what)

    for j, projection in enumerate(source.sources):
        at = f"{path}.sources[{j}]"
        given = [
            key
            for key, value in (
                ("configMap", projection.config_map),
                ("secret", projection.secret),
                ("downwardAPI", projection.downward_api),
                ("serviceAccountToken", projection.service_account_token),
            )
            if value is not None
        ]
        if len(given) != 1:
            got = " and ".join(given) if given else "none"
            out.append((at, f"needs exactly one of {_PROJECTED_KINDS}, got {got}"))
            continue
        if projection.config_map is not None:
            cm = projection.config_map
            at = f"{at}.configMap"
            what, values = _config_map_values(cm.name, cm.optional, facts, f"{at}.name", out)
            described[at] = what
            found = _key_files(what, values, cm.items, mode, cm.optional, at, out, whole=at)
            sources[what] = _MISSING if values is None else _digest(())
            add(found, what)
        elif projection.secret is not None:
            sp = projection.secret
            at = f"{at}.secret"
            what, secret = _secret_object(sp.name, sp.optional, facts, f"{at}.name", out)
            described[at] = what
            data = secret.data if secret is not None else None
            found = _key_files(what, data, sp.items, mode, sp.optional, at, out, whole=at)
            sources[what] = _MISSING if secret is None else _digest(())
            add(found, what)
            if secret is not None:
                for file_path, key in _item_keys(sp.items, secret.data):
                    secret_keys.setdefault(file_path, (secret, key))
        elif projection.downward_api is not None:
            for entry, what in _downward_entries(
                projection.downward_api.items, mode, facts, f"{at}.downwardAPI", out
            ):
                add([entry], what)
        else:
            out.append((f"{at}.serviceAccountToken", f"{_NO_TOKEN}; {_TOKEN_INSTEAD}"))
    files = _checked_files(entries, out, described)
    files = _secret_files(files, secret_keys, facts.objects.secret_key)
    return VolumeContent(VolumeKind.PROJECTED, files, _by_source(files, read_from, sources))


_TOKEN_INSTEAD = "put a token in a Secret and project it with a secret source instead"


def _cluster_volume_advice(name: str, mounts: Sequence[tuple[str, str]]) -> str:
    """The refusal of the service-account volume a cluster added to an exported pod:
    what it is, and the lines to delete (the volume, and each container's mount)."""
    advice = (
        f"{_NO_TOKEN}. Volume {name!r} is the service-account volume the API server added "
        "to the pod when it was created in a cluster: delete it from spec.volumes"
    )
    if not mounts:
        return advice
    places = [f"{where} (mountPath {mount_path})" for where, mount_path in mounts]
    if len({mount_path for _, mount_path in mounts}) == 1:
        places = [where for where, _ in mounts]
        advice += f", and delete its volumeMounts entry (mountPath {mounts[0][1]}) from "
    else:
        advice += ", and delete its volumeMounts entry from "
    return advice + (", ".join(places[:-1]) + " and " if len(places) > 1 else "") + places[-1]
