"""Pods written back as Kubernetes YAML: ``dump_pods``, the loader's reverse.

``parse_pods`` turns a pod file into ``Pod`` objects; ``dump_pods`` turns ``Pod`` objects
into a pod file that ``parse_pods`` reads back as equal pods (with the ``source`` the
pods have: ``Pod.source`` is where a pod came from, not a field of the file). It is a
serializer of the model, field by field, the reverse of ``podsync.load.convert``: a
``Pod`` becomes an ``apiVersion: v1`` ``kind: Pod`` document, a default value is left
out (as ``kubectl`` users write pods), and what the model holds resolved is written as
a reference the loader resolves to the same value again:

* ``$`` in ``env`` values, ``command`` and ``args`` is written ``$$``: the loader
  expands ``$(VAR)`` there (the kubelet's ``expand``, ``third_party/forked/golang/expansion``),
  and ``$$`` is its escape for one ``$``.
* A value read from a label or annotation (``valueFrom.fieldRef``, held as a
  ``PodFieldText``) is written as that ``fieldRef`` again; one that a ``$(VAR)``
  expansion built from one is written as its text (equal as a value).
* **Secrets stay secret.** A Secret's value (a ``SecretText`` in ``env``, a secret
  volume's file) is never written: the model keeps its reference (``SecretPart``:
  the Secret's namespace, name and key), so it is written as that reference -
  ``valueFrom.secretKeyRef``, a ``secret`` volume's or a projected ``secret`` source's
  ``items`` - and the file reads back the same pod next to the same Secret (the value
  is read from the Secret again, and its keyed digest checked by the loader). A value
  that mixes a Secret's value with other text (a ``$(VAR)`` expansion) is written as
  ``$(VAR)`` when a variable of the container holds exactly that value, and refused
  otherwise: the model does not say which variable it expanded.
* A ConfigMap's values (``configMapKeyRef``, ``envFrom``, a ``configMap`` volume's
  files) are held as values, and the model keeps the ConfigMap's name but not its keys:
  ``dump_pods`` writes, after the pods, one ``kind: ConfigMap`` document per ConfigMap
  the pods read, with the values they hold (its keys are the variable names and file
  paths where those are valid keys, else named after their content), and the pods'
  references to it. A ConfigMap's values are configuration, not secrets.
* A ``downwardAPI`` volume's files are written as the ``fieldRef`` whose value each
  file holds (``metadata.name``, ``.namespace``, ``.uid``, the labels and annotations).
* A pod of the 2014 ``cpu``/``memory`` values is written as the v1beta1 manifest it
  came from (``_dump_fields._manifest``): a v1 Pod cannot hold them.

A file reads back the model in the loader's form: where two values of the model are
one in a file - ``resources`` or a ``securityContext`` that sets nothing, and none;
the host ports of a pod on the host's network, and its container ports - the read-back
pod holds the loader's. A volume's files are told apart by source (a ConfigMap's, a
Secret's, a downward API field's) by the digest each source has in
``VolumeContent.sources``: the grouping whose every digest fits is written.

What the model holds but no pod file can give is refused with ``ValueError`` naming the
pod and the field (the file would read back as another pod): a container that cannot
be created for a missing object (``config_error``), the 2014 ``cpu``/``memory`` values
beside fields a manifest cannot hold (write ``resources``), a file or value known only
by its digest (a plan read back from JSON), a ``downwardAPI`` file of a container's
resources, files whose sources no grouping fits.

Layering: load (impure folder); this module reads the model and the loader's value of a
pod's labels (``_format_map``); no I/O. PyYAML is imported on first use.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from podsync.load._dump_fields import (
    _container_security,
    _lifecycle,
    _manifest,
    _mount,
    _pod_security,
    _port,
    _probe,
    _refuse,
    _resources,
)
from podsync.model._pod import (
    Container,
    DNSPolicy,
    EnvVar,
    Pod,
    RestartPolicy,
    TerminationMessagePolicy,
    derive_pod_uid,
)
from podsync.model._pod_fields import PodFieldRef, PodFieldText
from podsync.model._secrets import SecretText
from podsync.model._volume import Volume, VolumeContent, VolumeFile, VolumeKind

__all__ = ["dump_pods"]

# Kubernetes' ConfigMap key (IsConfigMapKey: validation.go): what a file path or a
# variable name may be used as, as it is.
_CONFIG_MAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_MISSING = "missing"  # a source that was optional and not there (``_projection``)
# The groupings of a volume's files by source tried at most (each file that more than
# one source could have given doubles them).
_MAX_GROUPINGS = 4096


def dump_pods(pods: Iterable[Pod]) -> str:
    """Kubernetes YAML for ``pods``: a stream of ``kind: Pod`` documents (and the
    ``kind: ConfigMap`` documents whose values they hold), which ``parse_pods(text,
    source=...)`` reads back as pods equal to these (with the same ``source``; a pod
    built in Python is of source ``api``, ``parse_pods``' default), in the loader's
    form (see the module's docstring). Defaults are left out; no pods give ``""``.

    Secret values are never written: a pod keeps the reference of each (the Secret's
    name and key), and is written with it; the file then reads back the same pod where
    the same Secret is in the sources. See the module's docstring for how each resolved
    value is written.

    Example::

        text = podsync.dump_pods([podsync.Pod("web", (podsync.Container("app", "nginx"),))])
        assert podsync.parse_pods(text) == (podsync.Pod("web", ...),)

    Raises:
        TypeError: an element is not a ``Pod``.
        ValueError: a pod holds what no pod file can give (the message names the pod
            and its field): a container's ``config_error``, the 2014 ``cpu`` /
            ``memory``, a value known only by its digest, a mixed Secret value.
    """
    import yaml

    writer = _Writer()
    documents = [writer.pod(pod) for pod in pods]
    documents.extend(writer.config_maps())
    return yaml.dump_all(
        documents, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100
    )


@functools.cache
def _dumper() -> type[Any]:
    """PyYAML's safe dumper, with a multi-line string as a literal block (a script
    reads as one). A ``SecretText`` has no representer: it cannot be written."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    Dumper.add_representer(str, text)
    return Dumper


class _ConfigMapValues:
    """The values the pods hold of one ConfigMap, by key."""

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace = namespace
        self.name = name
        self.values: dict[str, bytes] = {}

    def key_for(self, preferred: str, value: bytes) -> str:
        """The key that holds ``value``: ``preferred`` when it is a ConfigMap key free
        or holding the same value, else one named after the value."""
        if _CONFIG_MAP_KEY.fullmatch(preferred) and self.values.get(preferred, value) == value:
            self.values[preferred] = value
            return preferred
        key = "value-" + hashlib.sha256(value).hexdigest()[:16]
        self.values[key] = value
        return key

    def document(self) -> dict[str, Any]:
        import base64

        data: dict[str, str] = {}
        binary: dict[str, str] = {}
        for key, value in sorted(self.values.items()):
            try:
                data[key] = value.decode("utf-8")
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(value).decode("ascii")
        document: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": self.name, "namespace": self.namespace},
        }
        if data:
            document["data"] = data
        if binary:
            document["binaryData"] = binary
        return document


class _Writer:
    """Writes pods one by one, gathering the ConfigMap values they hold."""

    def __init__(self) -> None:
        self._config_maps: dict[tuple[str, str], _ConfigMapValues] = {}
        self._missing: set[tuple[str, str]] = set()  # optional ConfigMaps seen missing

    def config_maps(self) -> list[dict[str, Any]]:
        both = self._missing & set(self._config_maps)
        if both:
            namespace, name = sorted(both)[0]
            raise ValueError(
                f"ConfigMap {namespace}/{name} is missing for one pod and holds values "
                "for another: no set of sources gives both"
            )
        return [self._config_maps[k].document() for k in sorted(self._config_maps)]

    def _config_map(self, what: str, pod: Pod, path: str) -> _ConfigMapValues:
        namespace, name = _object_name(what, "ConfigMap", pod, path)
        found = self._config_maps.get((namespace, name))
        if found is None:
            found = self._config_maps[namespace, name] = _ConfigMapValues(namespace, name)
        return found

    # -- the pod ---------------------------------------------------------------------

    def pod(self, pod: Pod) -> dict[str, Any]:
        if not isinstance(pod, Pod):
            raise TypeError(f"pods must be podsync.Pod objects, got {type(pod).__name__}")
        if any(c.cpu or c.memory for c in pod.containers):
            return _manifest(pod)
        metadata: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
        if pod.uid != derive_pod_uid(pod.source, pod.namespace, pod.name):
            metadata["uid"] = pod.uid
        if pod.labels:
            metadata["labels"] = dict(pod.labels)
        if pod.annotations:
            metadata["annotations"] = dict(pod.annotations)
        spec: dict[str, Any] = {}
        if pod.init_containers:
            spec["initContainers"] = [
                self._container(pod, c, f"$.spec.initContainers[{i}]")
                for i, c in enumerate(pod.init_containers)
            ]
        spec["containers"] = [
            self._container(pod, c, f"$.spec.containers[{i}]") for i, c in enumerate(pod.containers)
        ]
        if pod.volumes:
            spec["volumes"] = [
                self._volume(pod, v, f"$.spec.volumes[{i}]") for i, v in enumerate(pod.volumes)
            ]
        if pod.restart_policy is not RestartPolicy.ALWAYS:
            spec["restartPolicy"] = pod.restart_policy.value
        if pod.dns_policy is not DNSPolicy.CLUSTER_FIRST:
            spec["dnsPolicy"] = pod.dns_policy.value
        if pod.termination_grace_period_seconds is not None:
            spec["terminationGracePeriodSeconds"] = pod.termination_grace_period_seconds
        if pod.hostname:
            spec["hostname"] = pod.hostname
        if pod.subdomain:
            spec["subdomain"] = pod.subdomain
        if pod.host_aliases:
            spec["hostAliases"] = [
                {"ip": a.ip, "hostnames": list(a.hostnames)} for a in pod.host_aliases
            ]
        if pod.scheduling_gates:
            spec["schedulingGates"] = [{"name": g} for g in pod.scheduling_gates]
        spec.update(_pod_security(pod.security_context))
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}

    # -- containers ------------------------------------------------------------------

    def _container(self, pod: Pod, c: Container, at: str) -> dict[str, Any]:
        if c.config_error:
            raise _refuse(
                pod,
                at,
                f"container {c.name!r} cannot be created as it is ({c.config_error}): "
                "the reference it reads is not kept by the model",
            )
        if c.cpu or c.memory:
            raise _refuse(
                pod,
                at,
                f"init container {c.name!r} has the 2014 cpu/memory values, which a v1 Pod "
                "cannot hold: give resources (requests.cpu, limits.memory) instead",
            )
        out: dict[str, Any] = {"name": c.name, "image": c.image}
        if c.command:
            out["command"] = [self._expandable(pod, c, s, f"{at}.command") for s in c.command]
        if c.args:
            out["args"] = [self._expandable(pod, c, s, f"{at}.args") for s in c.args]
        if c.working_dir:
            out["workingDir"] = c.working_dir
        if c.ports:
            out["ports"] = [_port(p) for p in c.ports]
        if c.env:
            out["env"] = [self._env(pod, c, i, e, f"{at}.env[{i}]") for i, e in enumerate(c.env)]
        if c.resources is not None:
            out["resources"] = _resources(c.resources)
        if c.volume_mounts:
            out["volumeMounts"] = [_mount(m) for m in c.volume_mounts]
        for key, probe in (
            ("livenessProbe", c.liveness_probe),
            ("readinessProbe", c.readiness_probe),
            ("startupProbe", c.startup_probe),
        ):
            if probe is not None:
                out[key] = _probe(probe)
        if c.lifecycle is not None:
            out["lifecycle"] = _lifecycle(c.lifecycle)
        if c.termination_message_path:
            out["terminationMessagePath"] = c.termination_message_path
        if c.termination_message_policy is not TerminationMessagePolicy.FILE:
            out["terminationMessagePolicy"] = c.termination_message_policy.value
        if c.image_pull_policy is not None:
            out["imagePullPolicy"] = c.image_pull_policy.value
        security = _container_security(c.security_context, c.privileged)
        if security:
            out["securityContext"] = security
        for key, flag in (("stdin", c.stdin), ("stdinOnce", c.stdin_once), ("tty", c.tty)):
            if flag:
                out[key] = True
        if c.restart_policy is not None:
            out["restartPolicy"] = c.restart_policy.value
        return out

    def _expandable(self, pod: Pod, c: Container, text: str, at: str) -> str:
        """A ``command`` or ``args`` item: ``$`` escaped; a Secret's value as the
        ``$(VAR)`` of the variable that holds it."""
        if isinstance(text, SecretText):
            return self._secret_expansion(pod, c, text, len(c.env), at)
        return _escaped(str.__str__(text))

    def _secret_expansion(
        self, pod: Pod, c: Container, text: SecretText, before: int, at: str
    ) -> str:
        """``text`` with each Secret's piece as the ``$(VAR)`` of a variable among the
        first ``before`` of ``c`` that holds exactly it (the loader expands it back);
        refused when none does."""
        if not text.known:
            raise _refuse(pod, at, f"the value of {text.shown} is known only by its digest")
        holders = {
            e.value.parts[0]: e.name
            for e in reversed(c.env[:before])
            if isinstance(e.value, SecretText) and len(e.value.parts) == 1
        }
        pieces = []
        for part in text.parts:
            if isinstance(part, str):
                pieces.append(_escaped(part))
            elif part in holders:
                pieces.append(f"$({holders[part]})")
            else:
                raise _refuse(
                    pod,
                    at,
                    f"{text.shown} holds the value of {part}, which no variable before it "
                    f"in container {c.name!r} holds alone: the model keeps no $(VAR) it "
                    "was expanded from",
                )
        return "".join(pieces)

    def _env(self, pod: Pod, c: Container, index: int, e: EnvVar, at: str) -> dict[str, Any]:
        value = e.value
        if isinstance(value, SecretText):
            secrets = value.secrets
            if (
                len(value.parts) == 1
                and len(secrets) == 1
                and e.source == f"Secret {secrets[0].secret}"
            ):
                secret = secrets[0]
                _check_namespace(pod, secret.namespace, at)
                ref = {"name": secret.name, "key": secret.key}
                return {"name": e.name, "valueFrom": {"secretKeyRef": ref}}
            return {"name": e.name, "value": self._secret_expansion(pod, c, value, index, at)}
        if e.source.startswith("ConfigMap "):
            values = self._config_map(e.source, pod, f"{at}.source")
            key = values.key_for(e.name, str.__str__(value).encode("utf-8"))
            return {
                "name": e.name,
                "valueFrom": {"configMapKeyRef": {"name": values.name, "key": key}},
            }
        if e.source:
            raise _refuse(
                pod, f"{at}.source", f"an env value of {e.source!r} without its reference"
            )
        if isinstance(value, PodFieldText) and len(value.parts) == 1:
            (field,) = value.parts
            if isinstance(field, PodFieldRef):
                return {"name": e.name, "valueFrom": {"fieldRef": {"fieldPath": field.path}}}
        return {"name": e.name, "value": _escaped(str.__str__(value))}

    # -- volumes ---------------------------------------------------------------------

    def _volume(self, pod: Pod, v: Volume, at: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": v.name}
        if v.host_path is not None:
            out["hostPath"] = {"path": v.host_path}
        elif v.claim is not None:
            claim: dict[str, Any] = {"claimName": v.claim.claim_name}
            if v.claim.read_only:
                claim["readOnly"] = True
            out["persistentVolumeClaim"] = claim
        elif v.content is not None:
            out.update(self._content(pod, v.content, at))
        elif v.memory is not None:
            # The loader's size is the least of the node's memory, the pod's limit and
            # this (calculateEmptyDirMemorySize): this size, read on the same node.
            out["emptyDir"] = {"medium": "Memory", "sizeLimit": v.memory.size}
        else:
            out["emptyDir"] = {}
        return out

    def _content(self, pod: Pod, content: VolumeContent, at: str) -> dict[str, Any]:
        for f in content.files:
            if not f.known:
                raise _refuse(pod, at, f"the file {f.path!r} is known only by its digest")
        groups = self._groups(pod, content, at)
        sources: list[dict[str, Any]] = []
        for what, files in groups.items():
            if content.sources.get(what) == _MISSING:
                kind, (_, name) = what.split(" ", 1)[0], _object_name(what, None, pod, at)
                if kind == "ConfigMap":
                    self._missing.add(_object_name(what, "ConfigMap", pod, at))
                    sources.append({"configMap": {"name": name, "optional": True}})
                else:
                    sources.append({"secret": {"name": name, "optional": True}})
                continue
            sources.append(self._source(pod, what, files, at))
        if content.kind is VolumeKind.PROJECTED:
            return {"projected": {"sources": sources}}
        if len(sources) != 1 and content.kind is not VolumeKind.DOWNWARD_API:
            raise _refuse(pod, at, f"a {content.kind.value} volume of {len(sources)} sources")
        if content.kind is VolumeKind.DOWNWARD_API:
            items = [i for s in sources for i in s["downwardAPI"]["items"]]
            return {"downwardAPI": {"items": items}}
        (source,) = sources
        if content.kind is VolumeKind.SECRET:
            secret = source["secret"]
            return {"secret": {"secretName": secret.pop("name"), **secret}}
        return source

    def _groups(self, pod: Pod, content: VolumeContent, at: str) -> dict[str, list[VolumeFile]]:
        """The files of each source of ``content``: the grouping whose every group has
        the digest ``sources`` records for it (``_projection._by_source``). A Secret's
        file names its Secret; another file may be a ConfigMap's, or a downward API
        field's whose value it holds. Refused when no grouping (or more than
        ``_MAX_GROUPINGS`` to try) fits."""
        from podsync.load.convert._projection import _digest

        config_maps = [w for w in content.sources if w.startswith("ConfigMap ")]
        choices: list[list[str]] = []
        for f in content.files:
            if f.secret is not None:
                found = [f"Secret {f.secret.namespace}/{f.secret.name}"]
            else:
                fields = _downward_fields(pod, f.data)
                found = [*config_maps, *dict.fromkeys(_downward_source(pod, x) for x in fields)]
            found = [w for w in found if w in content.sources]
            if not found:
                raise _refuse(pod, at, f"the file {f.path!r} holds a value of no source")
            choices.append(found)
        if math.prod(len(c) for c in choices) > _MAX_GROUPINGS:
            raise _refuse(pod, at, "its files can come from too many sources to tell")
        for grouping in itertools.product(*choices):
            groups: dict[str, list[VolumeFile]] = {what: [] for what in content.sources}
            for f, what in zip(content.files, grouping, strict=True):
                groups[what].append(f)
            if all(
                content.sources[w] == _MISSING
                or _digest(sorted(fs, key=_path)) == content.sources[w]
                for w, fs in groups.items()
            ):
                return groups
        raise _refuse(pod, at, "its files cannot be told apart by the sources they come from")

    def _source(self, pod: Pod, what: str, files: Sequence[VolumeFile], at: str) -> dict[str, Any]:
        """One source of a volume's content: its items, each with its mode."""
        if what.startswith("Secret "):
            _, name = _object_name(what, "Secret", pod, at)
            items = [
                {"key": f.secret.key, "path": f.path, **_mode(f)}
                for f in files
                if f.secret is not None
            ]
            return {"secret": {"name": name, "items": items}}
        if what.startswith("ConfigMap "):
            values = self._config_map(what, pod, at)
            items = [
                {"key": values.key_for(f.path, f.data), "path": f.path, **_mode(f)} for f in files
            ]
            return {"configMap": {"name": values.name, "items": items}}
        items = [
            {"path": f.path, "fieldRef": {"fieldPath": field}, **_mode(f)}
            for f in files
            # Any field of this source that gives the file reads back the same file.
            for field in [
                x for x in _downward_fields(pod, f.data) if _downward_source(pod, x) == what
            ][:1]
        ]
        return {"downwardAPI": {"items": items}}


def _mode(f: VolumeFile) -> dict[str, int]:
    return {"mode": f.mode}


def _downward_fields(pod: Pod, data: bytes) -> list[str]:
    """The ``fieldRef`` s of a downwardAPI file that give ``data``: the pod's name,
    namespace and uid, its labels and annotations, whole or one key."""
    from podsync.load.convert._projection import _format_map

    candidates = [
        ("metadata.name", pod.name),
        ("metadata.namespace", pod.namespace),
        ("metadata.uid", pod.uid),
    ]
    for base, values in (("labels", pod.labels), ("annotations", pod.annotations)):
        if values:
            candidates.append((f"metadata.{base}", _format_map(values)))
        candidates.extend((f"metadata.{base}['{k}']", v) for k, v in values.items())
    return [field for field, value in candidates if value.encode("utf-8") == data]


def _path(f: VolumeFile) -> str:
    return f.path


def _downward_source(pod: Pod, field: str) -> str:
    """The ``sources`` name of a downwardAPI file (``_projection._downward_value``)."""
    whose = f"pod {pod.key}"
    for base in ("labels", "annotations"):
        if field.startswith(f"metadata.{base}"):
            return f"the {base} of {whose}"
    return whose


def _object_name(what: str, kind: str | None, pod: Pod, at: str) -> tuple[str, str]:
    """(namespace, name) of ``ConfigMap ns/name`` / ``Secret ns/name`` in the pod's
    namespace (a pod reads objects of its own namespace only)."""
    given_kind, _, key = what.partition(" ")
    namespace, _, name = key.partition("/")
    if (kind is not None and given_kind != kind) or not name:
        raise _refuse(pod, at, f"{what!r} names no {kind or 'object'}")
    _check_namespace(pod, namespace, at)
    return namespace, name


def _check_namespace(pod: Pod, namespace: str, at: str) -> None:
    if namespace != pod.namespace:
        raise _refuse(pod, at, f"an object of namespace {namespace!r}, not the pod's")


def _escaped(text: str) -> str:
    """``text`` as the loader's ``$(VAR)`` expansion gives it back: ``$`` as ``$$``."""
    return text.replace("$", "$$")
