"""The spec hash: a versioned, stable digest of what shapes a running container.

Contract: ``spec_hash(container, pod)`` is a pure function of the *values* in the
desired spec. Two equal specs give the same hash in every process, on every machine and
in every Python version; the hash changes when, and only when, something that podsync
passes to the engine when it creates the container changes.

Ported from the seed's ``dockertools.HashContainer`` (reference §1.3), and fixed. The
seed fed Go's ``%#v`` rendering of the ``api.Container`` struct to adler32. ``%#v``
prints pointer fields (``LivenessProbe``, ``Lifecycle``) as their *addresses*, and every
config update deep-copied the pods, so any container with a probe or a hook got a new
hash - and a restart - whenever any pod was added or removed (kubernetes issue #3041,
fixed upstream by PR #3229). Here the hash is computed the way docker-compose v1 did its
config hash (``json_hash`` in ``compose/utils.py``): sha256 over canonical JSON of plain
data, with a version number so the canonical form can change deliberately later.

Two outputs, for two places:

* ``str(h)`` (``"1:<64 hex digits>"``) is the full record, meant for a container label.
* ``h.name_hash`` (the first 32 bits) goes into the container name after the ``.``,
  where the seed wrote its adler32 value, so names keep the seed's format.

Version 2 added what podsync's own options put into a container: the root directory
behind an app container's binds (``--root-dir``), and the network container's network
mode (``--network-mode``) and DNS settings (``--cluster-dns``, ``--cluster-domain`` and
the host resolv.conf content they are merged with). These fields are written only when
they are not at their default - as the older kubelets hashed their JSON with empty
fields omitted - so with the default options the canonical form is version 1's byte for
byte. The planner relies on that when it compares a container of version 1 (see
``spec_change`` in ``podsync/planner/_spec_change.py``).

Version 3 took the pod's ``labels`` and ``annotations`` out (issue 27): as the kubelet's
``HashContainer`` (``pkg/kubelet/container/helpers.go``) covers the container's spec
only, an edit of a pod's labels or annotations replaces no container and re-runs no init
container. The containers still carry them as Docker labels, as they were when each was
created (Docker cannot relabel a container). An env value read from one of them
(``fieldRef: metadata.labels['k']``), or expanded from one, is written by its reference
(``podsync.model._pod_fields``). Without labels, annotations or such values, the form is
version 2's byte for byte; a container of version 2 is compared without its recorded
labels and annotations (``removed_pod_fields``, ``older_init_record``).

Nothing here does I/O.
"""

from __future__ import annotations

import functools
import hashlib
import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from podsync.model._pod import Container, Pod, engine_resources
from podsync.model._pod_fields import PodFieldText, field_record
from podsync.model._secrets import SecretText, sealed_record
from podsync.model._security import network_security_fields, security_fields
from podsync.model._volume import Volume
from podsync.spec._canonical_forms import (
    _BOOL,
    _ENUM,
    _INT,
    _LIST,
    _NULLABLE_STR,
    _OBJECT,
    _STR,
    _STRS,
    _UNSET,
    _Field,
    _Kind,
    _Record,
    _string,
)
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ports import network_ports
from podsync.spec._resolv import ResolvConf, pod_host_name, uses_cluster_dns
from podsync.spec._volumes import DEFAULT_ROOT_DIR

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "SPEC_HASH_VERSION",
    "SpecHash",
    "canonical_json",
    "canonical_spec",
    "canonical_spec_text",
    "network_spec",
    "network_spec_hash",
    "network_spec_text",
    "older_init_record",
    "removed_pod_fields",
    "spec_digest",
    "spec_hash",
]

#: The version of the canonical form. Bump it whenever ``canonical_spec`` or
#: ``network_spec`` changes shape, so that old labels are recognisably from another
#: scheme rather than silently "different". Version 2 added the option fields
#: (``_ADDED_FIELDS``); version 3 took the pod's labels and annotations out
#: (``_REMOVED_POD_FIELDS``).
SPEC_HASH_VERSION: int = 3

#: The fields each version added to the canonical forms, by version. A label of an
#: older version did not record them; the planner takes them as at their default
#: (absent), which is what the older canonical form was equal to.
_ADDED_FIELDS: dict[int, frozenset[str]] = {
    2: frozenset(
        {
            "cluster_dns",
            "cluster_domain",
            "host_resolv_conf",
            "network_mode",
            "root_dir",
            # resources, terminals and pod fields (issue 13): each written only when
            # not at its default, so older labels of containers without them match.
            "cpu_limit",
            "tty",
            "stdin",
            "stdin_once",
            "labels",
            "annotations",
            "hostname",
            "domainname",
            "host_aliases",
            "security",
            # init containers (issue 14): an init container's role, and the network
            # container's record of the pod's init containers.
            "init_container",
            "restart_policy",
            "init_containers",
        }
    ),
}

#: The fields of the ``pod`` object (of an app and of a network container) that each
#: version stopped writing, by version. A label of an older version records them; the
#: planner leaves them out of what it compares (``removed_pod_fields``).
_REMOVED_POD_FIELDS: dict[int, frozenset[str]] = {3: frozenset({"labels", "annotations"})}

# "<version>:<sha256 hex>"; the version has no sign and no leading zeros, the digest is
# lowercase, as ``str(SpecHash)`` writes them, so parse(str(h)) == h exactly.
_SPEC_HASH_TEXT = re.compile(r"([1-9][0-9]{0,8}):([0-9a-f]{64})")


@attrs.frozen
class SpecHash:
    """A versioned spec digest.

    Attributes:
        version: the ``SPEC_HASH_VERSION`` it was computed with.
        digest: the sha256 of the canonical JSON, 64 lowercase hex digits.
    """

    version: int
    digest: str

    @property
    def name_hash(self) -> int:
        """The first 32 bits of the digest: the number written into the container name.

        The seed's rule "hash 0 in the name means do not compare" still applies to names,
        so callers that need certainty compare ``str(h)`` with the label instead.
        """
        return int(self.digest[:8], 16)

    def __str__(self) -> str:
        return f"{self.version}:{self.digest}"

    @classmethod
    def parse(cls, text: str) -> SpecHash | None:
        """Read back what ``str()`` wrote; ``None`` for anything else. Never raises."""
        if not isinstance(text, str):
            return None
        match = _SPEC_HASH_TEXT.fullmatch(text)
        if match is None:
            return None
        return cls(version=int(match.group(1)), digest=match.group(2))


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no whitespace, UTF-8 kept.

    Dict key order never changes the text; list order always does.

    Raises:
        TypeError: ``value`` holds something JSON cannot represent.
        ValueError: ``value`` holds a NaN or an infinity (they have no JSON spelling).
    """
    return _canonical_encode(value)


# What json.dumps with these settings builds on every call, built once (it holds only
# the settings; every call keeps its own state).
_canonical_encode = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
).encode


def added_fields(version: int) -> frozenset[str]:
    """The canonical-form fields that spec hash versions after ``version`` added: a
    label of ``version`` does not record them."""
    return frozenset().union(*(f for v, f in _ADDED_FIELDS.items() if v > version))


def removed_pod_fields(version: int) -> frozenset[str]:
    """The fields of the canonical form's ``pod`` object that a label of ``version``
    records and later versions do not write (version 3: ``labels``, ``annotations``)."""
    return frozenset().union(*(f for v, f in _REMOVED_POD_FIELDS.items() if v > version))


# ---------------------------------------------------------------------------------------
# The one definition of the canonical forms (declared with ``_canonical_forms``)
#
# To add a field that shapes the container (a model field podsync passes to the
# engine): add a ``_Field`` to ``_APP`` (or ``_NETWORK``) with ``default=`` the value
# it has when unset - the field is then written only when its value differs, so a
# container made by an older podsync keeps its hash - and add its key to the current
# version's set in ``_ADDED_FIELDS`` (tests/unit/spec/test_hashing.py checks that every added field
# has a default). A field that holds a small attrs class of its own gets a ``_Record``
# of that class's fields, used as ``_OBJECT(record)``; a tuple of them ``_LIST(record)``.


def _text(value: str) -> str:
    # A value that holds a Secret's (``podsync.model._secrets``) is written as its pieces with
    # the Secret's reference and keyed digest, never as itself: the canonical text is the
    # spec label, which anyone who can list containers reads. The digest still changes
    # with the value, so the hash does. One that holds a label's or an annotation's value
    # (``podsync.model._pod_fields``) is written with the reference in place of the value:
    # the kubelet's hash covers the spec only, and a label edit restarts nothing.
    if type(value) is SecretText:
        return canonical_json(sealed_record(value))
    if type(value) is PodFieldText:
        return canonical_json(field_record(value))
    return _string(value)


def _texts(items: Sequence[str]) -> str:
    return "[" + ",".join(map(_text, items)) + "]" if items else "[]"


def _text_v2(value: str) -> str:
    # Version 2's spelling: a label's value as itself (_text otherwise).
    if type(value) is PodFieldText:
        return _string(value)
    return _text(value)


def _texts_v2(items: Sequence[str]) -> str:
    return "[" + ",".join(map(_text_v2, items)) + "]" if items else "[]"


# A string that may hold a Secret's value or a label's (env values, command and args,
# which $(VAR) expands): a plain one is spelt as _STR's; see _text.
_TEXT = _Kind("{_text({value})}", {"_text": _text})
_TEXTS = _Kind("{_texts({value})}", {"_texts": _texts})
_TEXT_V2 = _Kind("{_text_v2({value})}", {"_text_v2": _text_v2})
_TEXTS_V2 = _Kind("{_texts_v2({value})}", {"_texts_v2": _texts_v2})
# Plain data (a dict of settings, a mapping of labels): canonical_json's text.
_JSON = _Kind("{_canonical_json({value})}", {"_canonical_json": canonical_json})


# The port's ``name`` is left out: it only lets probes and hooks refer to the port, and
# those run in podsync, not in the container.
_PORT = _Record(
    "p",
    _Field("container_port", "p.container_port", _INT),
    _Field("host_port", "p.host_port", _INT),
    _Field("protocol", "p.protocol", _ENUM),
    _Field("host_ip", "p.host_ip", _STR),
)


# An entry names the object its value came from (a ConfigMap, issue 14) only when it
# came from one, so the entries of older containers keep their form. (Fields nested in a
# list are not top-level keys: ``_ADDED_FIELDS`` does not list them; left out at their
# default, they need no entry there.)
def _env_record(text: _Kind) -> _Record:
    return _Record(
        "e",
        _Field("name", "e.name", _STR),
        _Field("value", "e.value", text),
        _Field("source", "e.source", _STR, default=_UNSET),
    )


_ENV = _env_record(_TEXT)
_MOUNT = _Record(
    "m",
    _Field("name", "m.name", _STR),
    _Field("mount_path", "m.mount_path", _STR),
    _Field("read_only", "m.read_only", _BOOL),
)
# ``host_path`` None is an emptyDir; its directory is derived from the pod uid, which is
# part of the container name already, so the kind is all that needs hashing. A memory
# emptyDir (issue 14) adds its tmpfs size, so a disk one hashes as before; so does a
# claim (issue 14) its claim name and whether it is read-only (its volume's name is the
# claim's and the namespace's, which the container name holds).
_VOLUME = _Record(
    "v",
    _Field("name", "v.name", _STR),
    _Field("host_path", "v.host_path", _NULLABLE_STR),
    _Field("memory", "None if v.memory is None else v.memory.size", _INT, default=None),
    _Field("claim", "None if v.claim is None else v.claim.claim_name", _NULLABLE_STR, default=None),
    _Field("claim_read_only", "v.claim is not None and v.claim.read_only", _BOOL, default=_UNSET),
    # A volume whose files podsync writes (configMap, secret, downwardAPI: issue 14) by
    # its kind only: the files change in place (the kubelet's ..data swap), so an edited
    # ConfigMap does not replace the containers that mount it.
    _Field("content", "None if v.content is None else v.content.kind.value", _STR, default=None),
)


def _mounted_volumes(c: Container, pod: Pod) -> list[Volume]:
    # The definitions of the pod volumes the container mounts, in the pod's order.
    if not c.volume_mounts or not pod.volumes:
        return []
    mounted = {m.name for m in c.volume_mounts}
    return [v for v in pod.volumes if v.name in mounted]


# The pod-level inputs of an app container: the pod name (its hostname), the DNS policy
# and the definitions of the pod volumes it mounts.
_APP_POD_FIELDS = (
    _Field("name", "pod.name", _STR),
    _Field("dns_policy", "pod.dns_policy", _ENUM),
    _Field("volumes", "_mounted_volumes(c, pod)", _LIST(_VOLUME)),
)
_APP_POD = _Record("c, pod", *_APP_POD_FIELDS, helpers={"_mounted_volumes": _mounted_volumes})
# Version 2 wrote the pod's labels and annotations too (they are labels of every
# container it has), from the arguments: the values an older label recorded.
_APP_POD_V2 = _Record(
    "c, pod, labels, annotations",
    *_APP_POD_FIELDS,
    _Field("labels", "labels", _JSON, default=_UNSET),
    _Field("annotations", "annotations", _JSON, default=_UNSET),
    helpers={"_mounted_volumes": _mounted_volumes},
)


def _root_dir_field(container: Container, pod: Pod | None, root_dir: str) -> str | None:
    # The root directory shapes a container only through its binds: the termination-
    # message file and the emptyDir and content volumes it mounts live under it. Normalised, so
    # that "/srv/podsync/" and "/srv/podsync" (the same binds) are one value; None at
    # the default, so that the form stays version 1's (and, the common case, without
    # looking at the container).
    recorded = _recorded_root_dir(root_dir)
    if recorded is None:
        return None
    if container.termination_message_path:
        return recorded
    if pod is not None and container.volume_mounts:
        empty = {v.name for v in pod.volumes if v.on_disk or v.content is not None}
        if any(m.name in empty for m in container.volume_mounts):
            return recorded
    return None


@functools.lru_cache(maxsize=16)
def _recorded_root_dir(root_dir: str) -> str | None:
    # Cached: a plan asks this for every container, always with the same root.
    normalized = posixpath.normpath(root_dir)
    return None if normalized == DEFAULT_ROOT_DIR else normalized


def _security_field(container: Container, pod: Pod | None) -> dict[str, Any]:
    # The effective security settings (the container's over the pod's), only when some
    # is not at its default: a container without any keeps the older canonical form.
    pod_context = pod.security_context if pod is not None else None
    if container.security_context is None and pod_context is None:
        return {}
    return security_fields(container.security_context, pod_context)


def _init_role(container: Container, pod: Pod | None) -> tuple[bool, str]:
    # An init container's role is part of what it is: the same container moved between
    # initContainers and containers, or turned into a sidecar, is another container (a
    # completed init instance must never count as a run of an app container). Written
    # only for init containers, so app containers keep their older form.
    if pod is None or not pod.init_containers:
        return False, ""
    for init in pod.init_containers:
        if init.name == container.name:
            policy = init.restart_policy
            return True, policy.value if policy is not None else ""
    return False, ""


def _app_record(params: str, texts: _Kind, env: _Record, pod: _Kind) -> _Record:
    """The app container's form, its value texts (``texts``, ``env``) and its ``pod``
    object spelt as a version does."""
    return _Record(
        params,
        _Field("name", "c.name", _STR),
        _Field("image", "c.image", _STR),
        _Field("command", "c.command", texts),
        _Field("args", "c.args", texts),
        _Field("working_dir", "c.working_dir", _STR),
        # A list, in order: Docker applies ``Env`` in order, so with a repeated name the
        # later entry wins and reordering changes the container.
        _Field("env", "c.env", _LIST(env)),
        _Field("ports", "c.ports", _LIST(_PORT)),
        _Field("volume_mounts", "c.volume_mounts", _LIST(_MOUNT)),
        # What reaches the engine: the CPU weight (the request, else the limit, else the
        # 2014 ``cpu``) and the memory limit.
        _Field("cpu", "res[0]", _INT),
        _Field("memory", "res[2]", _INT),
        _Field("privileged", "c.privileged", _BOOL),
        _Field("termination_message_path", "c.termination_message_path", _STR),
        # Written when there is a pod; read from the container too (its mounts).
        _Field("pod", "pod", pod, default=None),
        # Version 2.
        _Field("root_dir", "_root_dir_field(c, pod, root_dir)", _STR, default=None),
        _Field("cpu_limit", "res[1]", _INT, default=_UNSET),
        _Field("tty", "c.tty", _BOOL, default=_UNSET),
        _Field("stdin", "c.stdin", _BOOL, default=_UNSET),
        _Field("stdin_once", "c.stdin_once", _BOOL, default=_UNSET),
        _Field("security", "_security_field(c, pod)", _JSON, default=_UNSET),
        # An init container's role (issue 14), only for init containers.
        _Field("init_container", "_init_role(c, pod)[0]", _BOOL, default=_UNSET),
        _Field("restart_policy", "_init_role(c, pod)[1]", _STR, default=_UNSET),
        helpers={
            "_root_dir_field": _root_dir_field,
            "_security_field": _security_field,
            "_init_role": _init_role,
        },
    )


#: The canonical form of an app container (see ``canonical_spec``): ``c`` the
#: container, ``pod`` its pod or None, ``root_dir`` the root directory option, ``res``
#: what ``engine_resources(c)`` gives (CPU weight, CPU limit, memory limit).
_APP = _app_record("c, pod, root_dir, res", _TEXTS, _ENV, _OBJECT(_APP_POD, "c, {value}"))
#: Version 2's form, for the init containers an older network container records
#: (``older_init_record``): the pod's labels and annotations as the arguments give them.
_APP_V2 = _app_record(
    "c, pod, root_dir, res, labels, annotations",
    _TEXTS_V2,
    _env_record(_TEXT_V2),
    _OBJECT(_APP_POD_V2, "c, {value}, labels, annotations"),
)


def canonical_spec_text(
    container: Container, pod: Pod | None = None, *, root_dir: str = DEFAULT_ROOT_DIR
) -> str:
    """The canonical JSON text of ``canonical_spec(container, pod, root_dir=root_dir)``:
    what ``spec_hash`` digests and what the spec label records."""
    return _APP.text(container, pod, root_dir, engine_resources(container))


def canonical_spec(
    container: Container, pod: Pod | None = None, *, root_dir: str = DEFAULT_ROOT_DIR
) -> dict[str, Any]:
    """The JSON-able form of everything that shapes ``container`` when it runs.

    Keys are snake_case, after the model's attribute names; enums appear as their
    string values. With ``pod``, the pod-level inputs of the container are included:
    the pod name (the container's hostname), the DNS policy, and the definitions of the
    pod volumes that the container mounts, in the pod's volume order.

    ``root_dir`` (``PlanOptions.root_dir``) is the source of the container's binds of
    emptyDir volumes and of its termination-message file: it appears as ``root_dir``,
    normalised, when the container has such a bind and it is not ``DEFAULT_ROOT_DIR``.

    Left out on purpose:

    * ``image_pull_policy`` decides whether podsync pulls, not what runs;
    * the probes (``liveness_probe``, ``readiness_probe``, ``startup_probe``) and
      ``lifecycle`` are run by podsync against the container.
      Changing a probe or a hook must not restart the container (the seed restarted
      such containers on every config copy, reference §1.3; the modern kubelet also
      narrowed its hash for this reason);
    * the pod's namespace, source and uid: they are in the container name already, so a
      change there is another pod, not a changed container;
    * the pod's labels and annotations (version 3): the kubelet's ``HashContainer``
      covers the container's spec only, so an edit of them restarts nothing. An env
      value, command or args item that holds one's value (``PodFieldText``) is written
      as its pieces with the reference in place of the value.

    Resources are written as what reaches the engine: ``cpu`` is the milli-CPU of the
    CPU weight (the request, else the limit, else the 2014 ``cpu``), ``memory`` the
    memory limit (never a request), ``cpu_limit`` the CPU limit behind the CFS quota,
    only when set. So a 2014 container and a v1 one with the same weight and limit
    hash alike, and a memory or ephemeral-storage request changes nothing. ``tty``,
    ``stdin`` and ``stdin_once`` appear only when true, ``security`` (the effective
    security settings) only when some is set.

    It is ``canonical_spec_text`` read back as JSON (``_APP`` is the one definition).
    """
    spec: dict[str, Any] = json.loads(canonical_spec_text(container, pod, root_dir=root_dir))
    return spec


def _digest(text: str) -> SpecHash:
    # UTF-8; "surrogatepass" only matters for a str holding a lone surrogate (which no
    # UTF-8 input can produce): it is hashed instead of raising UnicodeEncodeError.
    data = text.encode("utf-8", "surrogatepass")
    return SpecHash(SPEC_HASH_VERSION, hashlib.sha256(data).hexdigest())


def spec_digest(text: str) -> SpecHash:
    """The ``SpecHash`` of a canonical text (``canonical_spec_text``): for a caller that
    needs the text too (the spec label), so that it is written once."""
    return _digest(text)


def spec_hash(
    container: Container, pod: Pod | None = None, *, root_dir: str = DEFAULT_ROOT_DIR
) -> SpecHash:
    """The ``SpecHash`` of ``canonical_spec(container, pod, root_dir=root_dir)``."""
    return _digest(canonical_spec_text(container, pod, root_dir=root_dir))


# --- the network container ---------------------------------------------------------


_RESOLV = _Record(
    "r", _Field("nameservers", "r.nameservers", _STRS), _Field("searches", "r.searches", _STRS)
)

_ALIAS = _Record("a", _Field("ip", "a.ip", _STR), _Field("hostnames", "a.hostnames", _STRS))

# Version 3 left out the pod's labels and annotations (``_REMOVED_POD_FIELDS``).
_NETWORK_POD = _Record(
    "pod",
    _Field("name", "pod.name", _STR),
    _Field("dns_policy", "pod.dns_policy", _ENUM),
)


def _init_record(pod: Pod, root_dir: str) -> list[dict[str, str]]:
    """The pod's init containers that run to completion (not the sidecars), each by name
    and spec hash, in order: the network container is the pod's sandbox, and its
    initialisation belongs to it. So a change to these - one added, removed, reordered
    or edited - changes the network container's spec, and the pod is rebuilt and
    initialised again (the kubelet cannot see such a change: the API makes init
    containers immutable). Even when the completed init instances were removed, the
    record remains. Sidecars are replaced on their own, as app containers are."""
    if not pod.init_containers:
        return []
    return [
        {"name": c.name, "spec_hash": spec_hash(c, pod, root_dir=root_dir).digest}
        for c in pod.init_containers
        if c.restart_policy is None
    ]


def older_init_record(
    pod: Pod,
    root_dir: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
) -> list[dict[str, str]]:
    """The network container's record of ``pod``'s init containers (``_init_record``) as
    version 2 wrote it, had the pod had ``labels`` and ``annotations`` (those an older
    network container's spec label recorded): each spec hash over version 2's form,
    which held them, and an env value read from one of them (``PodFieldText``) as its
    value. So a network container of version 1 or 2 whose pod's init containers are
    unchanged matches, whatever its labels are now; with the default options version
    1's form is version 2's."""
    if not pod.init_containers:
        return []
    return [
        {
            "name": c.name,
            "spec_hash": _digest(
                _APP_V2.text(c, pod, root_dir, engine_resources(c), labels, annotations)
            ).digest,
        }
        for c in pod.init_containers
        if c.restart_policy is None
    ]


#: The canonical form of a network container (see ``network_spec``): ``pod``, the
#: network ``image``, the option fields, each at its default when it does not reach
#: the container, and the pod's ``domainname`` (from its subdomain and the cluster
#: domain).
_NETWORK = _Record(
    "pod, image, network_mode, cluster_dns, cluster_domain, host_resolv_conf, domainname, root_dir",
    _Field("name", "_name", _STR),
    _Field("image", "image", _STR),
    _Field("pod", "pod", _OBJECT(_NETWORK_POD)),
    _Field("ports", "_ports(pod)", _LIST(_PORT)),
    # Version 2: the options that shape it, each only when not at its default.
    _Field("network_mode", "network_mode", _STR, default=""),
    _Field("cluster_dns", "cluster_dns", _STR, default=""),
    _Field("cluster_domain", "cluster_domain", _STR, default=""),
    _Field("host_resolv_conf", "host_resolv_conf", _OBJECT(_RESOLV), default=None),
    # The pod's host identity beyond its name, each only when set.
    _Field("hostname", "pod.hostname", _STR, default=_UNSET),
    _Field("domainname", "domainname", _STR, default=_UNSET),
    _Field("host_aliases", "pod.host_aliases", _LIST(_ALIAS), default=_UNSET),
    # Host namespaces and net sysctls, only when set.
    _Field("security", "_security(pod.security_context)", _JSON, default=_UNSET),
    # The init containers that run to completion (issue 14), only when there are some.
    _Field("init_containers", "_init_record(pod, root_dir)", _JSON, default=_UNSET),
    helpers={
        "_name": NETWORK_CONTAINER,
        "_security": network_security_fields,
        "_init_record": _init_record,
        "_ports": network_ports,
    },
)


def network_spec_text(
    pod: Pod,
    image: str,
    *,
    network_mode: str = "",
    cluster_dns: str = "",
    cluster_domain: str = "",
    host_dns: ResolvConf | None = None,
    root_dir: str = DEFAULT_ROOT_DIR,
) -> str:
    """The canonical JSON text of ``network_spec`` with the same arguments."""
    _, domain = pod_host_name(pod.name, pod.hostname, pod.subdomain, pod.namespace, cluster_domain)
    host_network = pod.security_context is not None and pod.security_context.host_network
    # The host's network: the network mode option does not reach it; nor do the
    # cluster's DNS settings, but for ClusterFirstWithHostNet (the kubelet's ClusterFirst
    # falls back to Default there).
    mode = "" if host_network else network_mode
    # The DNS inputs count only when the pod gets the cluster's DNS settings: otherwise
    # the engine gives it the host's, and none of them reaches the container.
    if uses_cluster_dns(
        pod.dns_policy, server=cluster_dns, domain=cluster_domain, host_network=host_network
    ):
        if host_dns is not None and not (host_dns.nameservers or host_dns.searches):
            host_dns = None
        return _NETWORK.text(
            pod, image, mode, cluster_dns, cluster_domain, host_dns, domain, root_dir
        )
    return _NETWORK.text(pod, image, mode, "", "", None, domain, root_dir)


def network_spec(
    pod: Pod,
    image: str,
    *,
    network_mode: str = "",
    cluster_dns: str = "",
    cluster_domain: str = "",
    host_dns: ResolvConf | None = None,
    root_dir: str = DEFAULT_ROOT_DIR,
) -> dict[str, Any]:
    """The canonical spec of the pod's network container (``net``).

    The network container holds the pod's network namespace, so it carries every
    published port of the pod (seed createNetworkContainer gave it the ports of all
    the spec containers), the hostname and the DNS settings. All ports of all
    containers are listed in container order: changing any port changes this hash, and
    the planner then rebuilds the whole pod, which is the only way to re-publish ports.

    The options that shape it (``PlanOptions``) are fields too, each only when it is
    not at its default: ``network_mode`` (not on the host's network); and, for a pod
    that gets the cluster's DNS settings (``uses_cluster_dns``: ``ClusterFirst`` off
    the host's network or ``ClusterFirstWithHostNet``, with a cluster DNS server or
    domain), ``cluster_dns``, ``cluster_domain`` and ``host_resolv_conf`` - the name
    servers and search domains of the host (``host_dns``) that follow the cluster's, as
    the pod gets them (the planner leaves loopback name servers out unless the network
    mode is ``host``: ``without_loopback``).

    It is ``network_spec_text`` read back as JSON (``_NETWORK`` is the one definition).
    """
    text = network_spec_text(
        pod,
        image,
        network_mode=network_mode,
        cluster_dns=cluster_dns,
        cluster_domain=cluster_domain,
        host_dns=host_dns,
        root_dir=root_dir,
    )
    spec: dict[str, Any] = json.loads(text)
    return spec


def network_spec_hash(
    pod: Pod,
    image: str,
    *,
    network_mode: str = "",
    cluster_dns: str = "",
    cluster_domain: str = "",
    host_dns: ResolvConf | None = None,
    root_dir: str = DEFAULT_ROOT_DIR,
) -> SpecHash:
    """The ``SpecHash`` of ``network_spec`` with the same arguments."""
    return _digest(
        network_spec_text(
            pod,
            image,
            network_mode=network_mode,
            cluster_dns=cluster_dns,
            cluster_domain=cluster_domain,
            host_dns=host_dns,
            root_dir=root_dir,
        )
    )
