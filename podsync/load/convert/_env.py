"""Environment values resolved when a pod file is read: the downward API and ``$(VAR)``.

A v1 container's ``env`` may take values from the pod (``valueFrom.fieldRef``), from
the resources of a container of the pod (``valueFrom.resourceFieldRef``), and from the
entries before it (``$(VAR)`` in ``value``); its ``command`` and ``args`` may refer to
any entry. The kubelet resolves these when it starts a container
(``makeEnvironmentVariables`` and ``ExpandContainerCommandAndArgs``,
``pkg/kubelet/kubelet_pods.go``); podsync resolves them when it reads the pod, so that
the resolved values are part of the container's spec (and of its spec hash) and a plan
stays a pure function of its inputs. The one input that changes while the pod exists,
its labels and annotations, is hashed by reference (``PodFieldText``,
``podsync.model._pod_fields``): as the kubelet's, a label edit restarts nothing, and a
container started later gets the new value.

What one host knows, and what it does not:

* ``metadata.name``, ``metadata.namespace``, ``metadata.uid`` (the derived one when the
  file has none), ``metadata.labels['k']`` and ``metadata.annotations['k']`` (empty when
  the pod has no such key, as the kubelet's ``ExtractFieldPathAsString``),
  ``spec.serviceAccountName`` (as written; empty when not), ``spec.nodeName`` (this
  node's name: a static pod's ``nodeName`` is its kubelet's, whatever the file says).
* ``status.podIP`` / ``status.podIPs`` and ``status.hostIP`` / ``status.hostIPs`` are
  refused: the pod's address exists only once its network container runs, and the
  node's is not podsync's to know when it reads a file.
* ``resourceFieldRef``: ``limits.cpu``, ``limits.memory``, ``requests.cpu``,
  ``requests.memory`` with Kubernetes' divisors; ``ceil(value / divisor)``; a limit not
  set (or 0) is the node's allocatable (``MergeContainerResourceLimits``,
  ``pkg/api/v1/resource/helpers.go``); a request not set is the limit written
  (``SetDefaults_Pod``), else 0. ``ephemeral-storage`` and ``hugepages-*`` are refused:
  podsync sets neither limit.

Expansion is Kubernetes' ``third_party/forked/golang/expansion/expand.go``, ported rule
for rule: ``$(NAME)`` is the value of NAME when known and stays as written when not,
``$$`` is ``$``, and any other ``$`` (an unterminated ``$(``, ``$x``, a trailing ``$``)
is copied as it is. An ``env`` value sees only the entries before it; ``command`` and
``args`` see all of them (a later entry of the same name wins). Values from
``valueFrom`` are never expanded.

A ConfigMap or Secret, or a key of one, that ``env`` or ``envFrom`` reads without
``optional: true`` and the sources do not hold fails that container, not the file: the
container is read with its ``config_error`` (the object and key, never a value), which
holds its creation, as the kubelet's ``CreateContainerConfigError`` holds the start
(``makeEnvironmentVariables``, ``generateContainerConfig``); the other pods and
containers run. With ``optional: true`` the variable is left out.

Secret values (``secretKeyRef``, ``envFrom.secretRef``) are ``SecretText`` s
(``podsync.model._secrets``): the value for the engine, and the Secret's reference with a
digest keyed with the host's key (``_Objects.secret_key``) for everything that writes
it down. Expansion keeps them so: a value, command or args item that ``$(VAR)``
expanded with a Secret's value holds its pieces, so its digest covers what the
Secret's value flowed into. (Go walks bytes, so a ``$`` before a multi-byte
character garbles it there; here the character is kept whole.)

Layering: above ``schema._pod`` (whose env classes it reads) and ``_node``, below
``_document``; no I/O. Its names keep their leading underscore: shared among the loader's
modules only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import attrs

from podsync.host._node import NodeInfo
from podsync.load.convert._objects import _Objects, _Secret
from podsync.load.schema._objects import _EnvFromSource, _FieldRef, _KeySelector, _ResourceFieldRef
from podsync.load.schema._pod import _EnvVarV1
from podsync.load.schema._yaml import _describe
from podsync.model._names import ENV_NAME
from podsync.model._pod import EnvVar, Resources
from podsync.model._pod_fields import PodFieldRef, PodFieldText, join_values
from podsync.model._secrets import SecretPart, SecretText, secret_digest

# Nothing here is public API: ``_document`` resolves each v1 container's env here.
__all__: list[str] = []


@attrs.frozen
class _PodFacts:
    """What the downward API reads from the pod and its node."""

    name: str
    namespace: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    service_account: str
    node: NodeInfo
    # The resources of each container, by name (resourceFieldRef's containerName).
    resources: Mapping[str, Resources | None]
    # The ConfigMaps and Secrets of the sources (configMapKeyRef, envFrom).
    objects: _Objects = attrs.field(factory=_Objects)
    # Filled while resolving: the envFrom keys skipped as no variable names, for the
    # pod's warning line ("containers[0].envFrom[1]: a.b (ConfigMap default/cfg)").
    skipped: list[str] = attrs.field(factory=list)
    # Filled while resolving: (path, message) of each ConfigMap or Secret, or key of one,
    # that env or envFrom reads without ``optional: true`` and the sources do not hold.
    # Not a problem of the file: it fails the start of that container only (the
    # kubelet's CreateContainerConfigError), see ``_container_v1``.
    missing: list[tuple[str, str]] = attrs.field(factory=list)
    # A pod exported from a cluster (it has fields only the API server writes): the
    # volumeMounts of each volume, by volume name, as ("containers[0] 'app'", mountPath)
    # pairs - what a refusal of the volume the cluster added tells the user to delete.
    # None for a pod written by hand (and not computed for it).
    exported_mounts: Mapping[str, tuple[tuple[str, str], ...]] | None = None


# ---------------------------------------------------------------------------------------
# $(VAR) expansion
# ---------------------------------------------------------------------------------------


def _expand(text: str, mapping: Mapping[str, str]) -> str:
    """``text`` with ``$(NAME)`` references replaced, as Kubernetes' ``expansion.Expand``
    with ``MappingFuncFor(mapping)``."""
    if "$" not in text:
        return text
    # Pieces: a Secret's value stays a SecretText until joined, a label's a PodFieldText.
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            following = text[cursor + 1]
            if following == "$":  # an escaped operator
                out.append("$")
                advance = 1
            elif following == "(":
                closer = text.find(")", cursor + 2)
                if closer < 0:  # an incomplete reference is copied
                    out.append("$(")
                    advance = 1
                else:
                    name = text[cursor + 2 : closer]
                    out.append(mapping.get(name, f"$({name})"))
                    advance = closer - cursor
            else:  # an operator that begins no expression
                out.append("$" + following)
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(text[checkpoint:])
    return join_values(out)


def _expand_all(values: Sequence[str], env: Sequence[EnvVar]) -> tuple[str, ...]:
    """``command`` or ``args`` expanded against the container's whole environment."""
    mapping = {e.name: e.value for e in env}
    return tuple(_expand(value, mapping) for value in values)


# ---------------------------------------------------------------------------------------
# env: value, fieldRef, resourceFieldRef
# ---------------------------------------------------------------------------------------


def _resolve_env(
    env: Sequence[_EnvVarV1],
    container: str,
    facts: _PodFacts,
    path: str,
    out: list[tuple[str, str]],
    env_from: Sequence[_EnvFromSource] = (),
) -> tuple[EnvVar, ...]:
    """The env of ``container`` with every value resolved: the ``envFrom`` variables
    first (in source order, a later source winning), then ``env`` in spec order (an
    ``env`` entry replaces an ``envFrom`` variable of its name), as the kubelet's
    ``makeEnvironmentVariables`` builds them."""
    from_objects = _env_from(env_from, facts, path, out)
    seen = {e.name: e.value for e in from_objects}
    # Kept only where env does not set the name again.
    set_by_env = {entry.name for entry in env}
    result = [e for e in from_objects if e.name not in set_by_env]
    for i, entry in enumerate(env):
        at = f"{path}.env[{i}]"
        if entry.value_from is None:
            value: str | None = _expand(entry.value, seen)
        elif entry.value:
            out.append((at, "needs value or valueFrom, not both"))
            value = None
        else:
            value = _value_from(entry, container, facts, f"{at}.valueFrom", out)
        if value is not None:
            seen[entry.name] = value
            result.append(EnvVar(name=entry.name, value=value, source=_source(entry, facts)))
    return tuple(result)


def _source(entry: _EnvVarV1, facts: _PodFacts) -> str:
    """The object an entry's value was read from, for the plan's reasons."""
    if entry.value_from is None:
        return ""
    if entry.value_from.config_map_key_ref is not None:
        return f"ConfigMap {facts.namespace}/{entry.value_from.config_map_key_ref.name}"
    if entry.value_from.secret_key_ref is not None:
        return f"Secret {facts.namespace}/{entry.value_from.secret_key_ref.name}"
    return ""


def _env_from(
    sources: Sequence[_EnvFromSource], facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> list[EnvVar]:
    """The variables of ``envFrom``: each ConfigMap's ``data`` or Secret's data, its
    keys prefixed.

    As the kubelet (``makeEnvironmentVariables``): a missing ConfigMap or Secret fails
    the container's start unless ``optional`` (``facts.missing``); a key that is not a
    valid variable name once prefixed is skipped (the kubelet skips it and records an
    event), a ConfigMap's ``binaryData`` is not used.
    """
    result: dict[str, EnvVar] = {}
    for i, source in enumerate(sources):
        at = f"{path}.envFrom[{i}]"
        if source.prefix and not ENV_NAME.fullmatch(source.prefix):
            out.append(
                (
                    f"{at}.prefix",
                    f"{_describe(source.prefix)} is not a valid environment variable name "
                    "(letters, digits and '_', not starting with a digit)",
                )
            )
            continue
        if source.config_map_ref is not None and source.secret_ref is not None:
            out.append((at, "needs configMapRef or secretRef, not both"))
            continue
        if source.secret_ref is not None:
            for name, value in _secret_variables(source, facts, at, out):
                result.pop(name, None)
                result[name] = EnvVar(
                    name, value, f"Secret {facts.namespace}/{source.secret_ref.name}"
                )
            continue
        ref = source.config_map_ref
        if ref is None:
            out.append((at, "needs configMapRef or secretRef"))
            continue
        config_map = facts.objects.config_maps.get((facts.namespace, ref.name))
        if config_map is None:
            if not ref.optional:
                facts.missing.append(
                    (f"{at}.configMapRef.name", _not_found("ConfigMap", ref.name, facts))
                )
            continue
        for key, value in config_map.data.items():
            name = source.prefix + key
            if ENV_NAME.fullmatch(name):
                result.pop(name, None)  # a later source's value, at its place
                result[name] = EnvVar(name, value, f"ConfigMap {config_map.key}")
        _note_skipped(config_map.data, source.prefix, f"ConfigMap {config_map.key}", at, facts)
    return list(result.values())


def _note_skipped(keys: Iterable[str], prefix: str, what: str, at: str, facts: _PodFacts) -> None:
    """Note the keys that are no variable names once prefixed, sorted, as the kubelet's
    InvalidEnvironmentVariableNames event names them (prefixed)."""
    bad = sorted(prefix + k for k in keys if not ENV_NAME.fullmatch(prefix + k))
    if bad:
        where = at.split(".spec.", 1)[-1]
        facts.skipped.append(f"{where}: {', '.join(bad)} ({what})")


def _secret_variables(
    source: _EnvFromSource, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The variables of one ``envFrom`` Secret: its keys (prefixed) that are variable
    names, in the Secret's key order, with their sealed values."""
    ref = source.secret_ref
    assert ref is not None
    secret = facts.objects.secrets.get((facts.namespace, ref.name))
    if secret is None:
        if not ref.optional:
            facts.missing.append((f"{path}.secretRef.name", _not_found("Secret", ref.name, facts)))
        return []
    _note_skipped(secret.data, source.prefix, f"Secret {secret.key}", path, facts)
    found: list[tuple[str, str]] = []
    for key in secret.data:
        name = source.prefix + key
        if ENV_NAME.fullmatch(name):
            value = _sealed(secret, key, facts, f"{path}.secretRef", out)
            if value is not None:
                found.append((name, value))
    return found


def _sealed(
    secret: _Secret, key: str, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> SecretText | None:
    """The value of ``key`` of ``secret`` for the environment: text, held with the
    Secret's reference and its digest under the host's key (``podsync.model._secrets``)."""
    host_key = facts.objects.secret_key
    if not host_key:
        out.append(
            (
                path,
                "a Secret's value needs the host's digest key to be kept out of labels and "
                "plans: pass secret_key to load_pods (podsync.host_secret_key)",
            )
        )
        return None
    data = secret.data[key]
    what = f"the value of Secret {secret.key} key {key}"
    hidden = "(the value is not shown: it is a Secret's)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # Go passes the bytes on, and the engine's JSON replaces what is not UTF-8:
        # the process would get another value. Refused rather than changed.
        out.append(
            (
                f"{path}.key",
                f"{what} is not UTF-8 text, which an environment variable cannot hold {hidden}",
            )
        )
        return None
    if "\0" in text:
        out.append(
            (
                f"{path}.key",
                f"{what} contains a NUL character, which no engine can pass on {hidden}",
            )
        )
        return None
    digest = secret_digest(host_key, secret.namespace, secret.name, key, data)
    return SecretText(text, (SecretPart(secret.namespace, secret.name, key, digest),))


def _secret_value(
    ref: _KeySelector, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> str | None:
    """The sealed value of a Secret key; ``None`` when optional and missing."""
    secret = facts.objects.secrets.get((facts.namespace, ref.name))
    if secret is None:
        if not ref.optional:
            facts.missing.append((f"{path}.name", _not_found("Secret", ref.name, facts)))
        return None
    if ref.key not in secret.data:
        if not ref.optional:
            facts.missing.append((f"{path}.key", _no_key("Secret", secret.key, ref.key)))
        return None
    return _sealed(secret, ref.key, facts, path, out)


def _not_found(kind: str, name: str, facts: _PodFacts) -> str:
    """Why a container cannot be created: the object its env reads is not there."""
    return f"{kind} {facts.namespace}/{name} not found (not optional)"


def _no_key(kind: str, obj: str, key: str) -> str:
    """Why a container cannot be created: the key its env reads is not in the object
    ``obj`` (``namespace/name``); the object's values are never shown."""
    return f"couldn't find key {key!r} in {kind} {obj} (not optional)"


def _no_object(kind: str, name: str, facts: _PodFacts) -> str:
    return (
        f"no {kind} {facts.namespace}/{name} in the sources (set optional: true "
        "if the pod may run without it)"
    )


def _config_map_value(
    ref: _KeySelector, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> str | None:
    """The value of a ConfigMap key, ``None`` when optional and missing (the variable
    is then not set, as the kubelet leaves it out)."""
    config_map = facts.objects.config_maps.get((facts.namespace, ref.name))
    if config_map is None:
        if not ref.optional:
            facts.missing.append((f"{path}.name", _not_found("ConfigMap", ref.name, facts)))
        return None
    if ref.key not in config_map.data:
        if not ref.optional:
            facts.missing.append((f"{path}.key", _no_key("ConfigMap", config_map.key, ref.key)))
        return None
    return config_map.data[ref.key]


_VALUE_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")


def _value_from(
    entry: _EnvVarV1, container: str, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> str | None:
    source = entry.value_from
    assert source is not None
    given = [
        key
        for key, value in zip(
            _VALUE_SOURCES,
            (
                source.field_ref,
                source.resource_field_ref,
                source.config_map_key_ref,
                source.secret_key_ref,
            ),
            strict=True,
        )
        if value is not None
    ]
    if len(given) != 1:
        got = " and ".join(given) if given else "none"
        names = ", ".join(_VALUE_SOURCES[:-1]) + f" or {_VALUE_SOURCES[-1]}"
        out.append((path, f"needs exactly one of {names}, got {got}"))
        return None
    if source.config_map_key_ref is not None:
        return _config_map_value(source.config_map_key_ref, facts, f"{path}.configMapKeyRef", out)
    if source.secret_key_ref is not None:
        return _secret_value(source.secret_key_ref, facts, f"{path}.secretKeyRef", out)
    if source.field_ref is not None:
        return _field_value(source.field_ref, facts, f"{path}.fieldRef", out)
    assert source.resource_field_ref is not None
    return _resource_value(
        source.resource_field_ref, container, facts, f"{path}.resourceFieldRef", out
    )


_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels['<key>']",
    "metadata.annotations['<key>']",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.podIP",
)
_NOT_KNOWN_HERE = {
    "status.podIP": "the pod's address is known only once its network container runs, "
    "and podsync fixes the environment when it reads the pod",
    "status.hostIP": "the node's address is not known when podsync reads the pod",
}
_NOT_KNOWN_HERE["status.podIPs"] = _NOT_KNOWN_HERE["status.podIP"]
_NOT_KNOWN_HERE["status.hostIPs"] = _NOT_KNOWN_HERE["status.hostIP"]

# A label or annotation key (IsQualifiedName): an optional DNS-subdomain prefix and "/",
# then a name of at most 63 characters.
_QUALIFIED_NAME = re.compile(
    r"(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
)


def _field_value(
    ref: _FieldRef, facts: _PodFacts, path: str, out: list[tuple[str, str]]
) -> str | None:
    if ref.api_version not in ("", "v1"):
        out.append((f"{path}.apiVersion", f"must be 'v1', got {_describe(ref.api_version)}"))
        return None
    field = ref.field_path
    at = f"{path}.fieldPath"
    simple = {
        "metadata.name": facts.name,
        "metadata.namespace": facts.namespace,
        "metadata.uid": facts.uid,
        "spec.nodeName": facts.node.name,
        "spec.serviceAccountName": facts.service_account,
    }
    if field in simple:
        return simple[field]
    if field in _NOT_KNOWN_HERE:
        out.append((at, f"{field} is not supported by podsync: {_NOT_KNOWN_HERE[field]}"))
        return None
    # fieldpath.SplitMaybeSubscriptedPath: "metadata.labels['key']".
    base, _, rest = field.partition("['")
    if rest.endswith("']") and base in ("metadata.labels", "metadata.annotations"):
        key = rest[:-2]
        if len(key) > 253 or not _QUALIFIED_NAME.fullmatch(key.lower()):
            out.append((at, f"{_describe(key)} is not a valid label or annotation key"))
            return None
        values = facts.labels if base == "metadata.labels" else facts.annotations
        # Read now, hashed by its reference: a label edit restarts nothing, as the
        # kubelet's (podsync.model._pod_fields).
        return PodFieldText(values.get(key, ""), (PodFieldRef(field),))
    hint = ""
    if field in ("metadata.labels", "metadata.annotations"):
        hint = f" (all {field.split('.')[1]} are for downwardAPI volumes)"
    names = ", ".join(_FIELD_PATHS[:-1]) + f" or {_FIELD_PATHS[-1]}"
    out.append((at, f"must be one of {names}, got {_describe(field)}{hint}"))
    return None


_CPU_DIVISORS = {Fraction(1, 1000): "1m", Fraction(1): "1"}
_MEMORY_DIVISORS = {
    Fraction(1): "1",
    **{Fraction(10) ** (3 * (i + 1)): f"1{s}" for i, s in enumerate("kMGTPE")},
    **{Fraction(2) ** (10 * (i + 1)): f"1{s}i" for i, s in enumerate("KMGTPE")},
}
_RESOURCES = ("limits.cpu", "limits.memory", "requests.cpu", "requests.memory")


def _resource_value(
    ref: _ResourceFieldRef,
    container: str,
    facts: _PodFacts,
    path: str,
    out: list[tuple[str, str]],
) -> str | None:
    """ExtractContainerResourceValue on the pod with node-allocatable limits merged in."""
    kind, _, resource = ref.resource.partition(".")
    if kind in ("limits", "requests") and (
        resource == "ephemeral-storage" or resource.startswith("hugepages-")
    ):
        what = "ephemeral-storage" if resource == "ephemeral-storage" else "huge-page"
        out.append(
            (
                f"{path}.resource",
                f"{ref.resource} is not supported by podsync: podsync sets no {what} limit",
            )
        )
        return None
    if ref.resource not in _RESOURCES:
        names = ", ".join(_RESOURCES[:-1]) + f" or {_RESOURCES[-1]}"
        out.append((f"{path}.resource", f"must be {names}, got {_describe(ref.resource)}"))
        return None
    allowed = _CPU_DIVISORS if resource == "cpu" else _MEMORY_DIVISORS
    divisor = ref.divisor or Fraction(1)  # 0 is unset: ExtractContainerResourceValue's 1
    if divisor not in allowed:
        names = ", ".join(list(allowed.values())[:-1]) + f" or {list(allowed.values())[-1]}"
        out.append(
            (
                f"{path}.divisor",
                f"must be {names} for {ref.resource}, got {_describe(_shown(divisor))}",
            )
        )
        return None
    name = ref.container_name or container
    if name not in facts.resources:
        out.append((f"{path}.containerName", f"no container named {name!r} in this pod"))
        return None
    amount = _amount(facts.resources[name], kind, resource, facts.node)
    if resource == "cpu":  # milli-CPU over the divisor's MilliValue
        return str(math.ceil(Fraction(amount) / math.ceil(divisor * 1000)))
    return str(math.ceil(Fraction(amount) / math.ceil(divisor)))


def _amount(resources: Resources | None, kind: str, resource: str, node: NodeInfo) -> int:
    """A container's limit or request of ``cpu`` (milli-CPU) or ``memory`` (bytes)."""
    limit: int = getattr(resources.limits, resource) if resources is not None else 0
    if kind == "requests":
        request: int = getattr(resources.requests, resource) if resources is not None else 0
        # SetDefaults_Pod: a request not given is the limit given (0 is "not given" in
        # the model, as a zero request is to the kubelet).
        return request or limit
    if not limit:  # MergeContainerResourceLimits: missing or zero is the node's
        return node.milli_cpu if resource == "cpu" else node.memory
    return limit


def _shown(value: Fraction) -> str:
    """A divisor as the file could have spelt it: ``2Mi``, ``500m``, ``3``."""
    binary = [(f"{s}i", 2 ** (10 * (i + 1))) for i, s in enumerate("KMGTPE")]
    for suffix, factor in reversed(binary):
        if value >= factor and value % factor == 0:
            return f"{value // factor}{suffix}"
    if value.denominator == 1:
        return str(value.numerator)
    milli = value * 1000
    return f"{milli.numerator}m" if milli.denominator == 1 else str(float(value))
