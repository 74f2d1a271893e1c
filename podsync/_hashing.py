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
``_compare`` in ``_plan.py``).

Nothing here does I/O.
"""

from __future__ import annotations

import functools
import hashlib
import json
import posixpath
import re
from typing import Any

import attrs

from podsync._models import Container, EnvVar, Pod, Port, Volume, VolumeMount, engine_resources
from podsync._naming import NETWORK_CONTAINER
from podsync._resolv import ResolvConf, pod_host_name, uses_cluster_dns
from podsync._security import network_security_fields, security_fields
from podsync._volumes import DEFAULT_ROOT_DIR

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "SPEC_HASH_VERSION",
    "SpecHash",
    "canonical_json",
    "canonical_spec",
    "network_spec",
    "network_spec_hash",
    "spec_hash",
]

#: The version of the canonical form. Bump it whenever ``canonical_spec`` or
#: ``network_spec`` changes shape, so that old labels are recognisably from another
#: scheme rather than silently "different". Version 2 added the option fields
#: (``_ADDED_FIELDS``).
SPEC_HASH_VERSION: int = 2

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
        }
    ),
}

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
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _port(port: Port) -> dict[str, Any]:
    # The port's ``name`` is left out: it only lets probes and hooks refer to the port,
    # and those run in podsync, not in the container.
    return {
        "container_port": port.container_port,
        "host_port": port.host_port,
        "protocol": port.protocol.value,
        "host_ip": port.host_ip,
    }


def _volume(volume: Volume) -> dict[str, Any]:
    # ``host_path`` None is an emptyDir; its directory is derived from the pod uid, which
    # is part of the container name already, so the kind is all that needs hashing.
    # A memory emptyDir adds its tmpfs size (issue 14), so a disk one hashes as before.
    if volume.memory is not None:
        return {"name": volume.name, "host_path": None, "memory": volume.memory.size}
    return {"name": volume.name, "host_path": volume.host_path}


def _pod_labels(pod: Pod) -> dict[str, Any]:
    # The pod's labels and annotations become labels of every container it has: each
    # only when not empty (so pods without them hash as before).
    fields: dict[str, Any] = {}
    if pod.labels:
        fields["labels"] = dict(pod.labels)
    if pod.annotations:
        fields["annotations"] = dict(pod.annotations)
    return fields


def added_fields(version: int) -> frozenset[str]:
    """The canonical-form fields that spec hash versions after ``version`` added: a
    label of ``version`` does not record them."""
    return frozenset().union(*(f for v, f in _ADDED_FIELDS.items() if v > version))


def _root_dir_field(container: Container, pod: Pod | None, root_dir: str) -> str | None:
    # The root directory shapes a container only through its binds: the termination-
    # message file and the emptyDir volumes it mounts live under it. Normalised, so
    # that "/srv/podsync/" and "/srv/podsync" (the same binds) are one value; None at
    # the default, so that the form stays version 1's (and, the common case, without
    # looking at the container).
    recorded = _recorded_root_dir(root_dir)
    if recorded is None:
        return None
    if container.termination_message_path:
        return recorded
    if pod is not None and container.volume_mounts:
        empty = {v.name for v in pod.volumes if v.on_disk}
        if any(m.name in empty for m in container.volume_mounts):
            return recorded
    return None


@functools.lru_cache(maxsize=16)
def _recorded_root_dir(root_dir: str) -> str | None:
    # Cached: a plan asks this for every container, always with the same root.
    normalized = posixpath.normpath(root_dir)
    return None if normalized == DEFAULT_ROOT_DIR else normalized


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
      change there is another pod, not a changed container.

    Resources are written as what reaches the engine: ``cpu`` is the milli-CPU of the
    CPU weight (the request, else the limit, else the 2014 ``cpu``), ``memory`` the
    memory limit (never a request), ``cpu_limit`` the CPU limit behind the CFS quota,
    only when set. So a 2014 container and a v1 one with the same weight and limit
    hash alike, and a memory or ephemeral-storage request changes nothing. ``tty``,
    ``stdin`` and ``stdin_once`` appear only when true, the pod's ``labels`` and
    ``annotations`` (container labels) only when not empty.
    """
    weight, limit, memory = engine_resources(container)
    spec: dict[str, Any] = {
        "name": container.name,
        "image": container.image,
        "command": list(container.command),
        "args": list(container.args),
        "working_dir": container.working_dir,
        # A list, in order: Docker applies ``Env`` in order, so with a repeated name the
        # later entry wins and reordering changes the container.
        # An entry names the object its value came from only when it came from one
        # (issue 14), so the entries of older containers keep their form.
        "env": [_env(e) for e in container.env],
        "ports": [_port(p) for p in container.ports],
        "volume_mounts": [
            {"name": m.name, "mount_path": m.mount_path, "read_only": m.read_only}
            for m in container.volume_mounts
        ],
        "cpu": weight,
        "memory": memory,
        "privileged": container.privileged,
        "termination_message_path": container.termination_message_path,
    }
    if limit:
        spec["cpu_limit"] = limit
    for flag in ("tty", "stdin", "stdin_once"):
        if getattr(container, flag):
            spec[flag] = True
    if pod is not None:
        mounted = {m.name for m in container.volume_mounts}
        spec["pod"] = {
            "name": pod.name,
            "dns_policy": pod.dns_policy.value,
            "volumes": [_volume(v) for v in pod.volumes if v.name in mounted],
            **_pod_labels(pod),
        }
    root = _root_dir_field(container, pod, root_dir)
    if root is not None:
        spec["root_dir"] = root
    security = _security_field(container, pod)
    if security:
        spec["security"] = security
    return spec


def _security_field(container: Container, pod: Pod | None) -> dict[str, Any]:
    # The effective security settings (the container's over the pod's), only when some
    # is not at its default: a container without any keeps the older canonical form.
    pod_context = pod.security_context if pod is not None else None
    if container.security_context is None and pod_context is None:
        return {}
    return security_fields(container.security_context, pod_context)


def _digest(text: str) -> SpecHash:
    # UTF-8; "surrogatepass" only matters for a str holding a lone surrogate (which no
    # UTF-8 input can produce): it is hashed instead of raising UnicodeEncodeError.
    data = text.encode("utf-8", "surrogatepass")
    return SpecHash(SPEC_HASH_VERSION, hashlib.sha256(data).hexdigest())


def spec_hash(
    container: Container, pod: Pod | None = None, *, root_dir: str = DEFAULT_ROOT_DIR
) -> SpecHash:
    """The ``SpecHash`` of ``canonical_spec(container, pod, root_dir=root_dir)``."""
    return _digest(_canonical_spec_text(container, pod, root_dir))


# A faster spelling of ``canonical_json(canonical_spec(container, pod))``, written out
# field by field in sorted key order. The planner hashes every desired container on
# every plan (40,000 of them for 10,000 pods), and building the dict and then encoding
# it generically costs about three times as much. ``canonical_spec`` stays the
# definition; tests/test_hashing.py checks that the two agree on arbitrary containers.
_string = json.encoder.encode_basestring  # JSON string with ensure_ascii=False


def _strings(items: tuple[str, ...]) -> str:
    return "[" + ",".join(map(_string, items)) + "]" if items else "[]"


def _port_text(p: Port) -> str:
    return (
        f'{{"container_port":{p.container_port:d},"host_ip":{_string(p.host_ip)},'
        f'"host_port":{p.host_port:d},"protocol":"{p.protocol.value}"}}'
    )


def _env(e: EnvVar) -> dict[str, str]:
    if e.source:
        return {"name": e.name, "value": e.value, "source": e.source}
    return {"name": e.name, "value": e.value}


def _env_text(e: EnvVar) -> str:
    if e.source:
        return (
            f'{{"name":{_string(e.name)},"source":{_string(e.source)},"value":{_string(e.value)}}}'
        )
    return f'{{"name":{_string(e.name)},"value":{_string(e.value)}}}'


def _mount_text(m: VolumeMount) -> str:
    return (
        f'{{"mount_path":{_string(m.mount_path)},"name":{_string(m.name)},'
        f'"read_only":{"true" if m.read_only else "false"}}}'
    )


_TTY = '"tty":true,'


def _canonical_spec_text(c: Container, pod: Pod | None, root_dir: str) -> str:
    # Enum values ("TCP", "ClusterFirst" ...) are plain ASCII words and need no escaping.
    weight, limit, memory = engine_resources(c)
    limit_text = f'"cpu_limit":{limit:d},' if limit else ""
    stdin_text = ""
    if c.stdin or c.stdin_once:  # rare: no string building for the common container
        stdin_text = ('"stdin":true,' if c.stdin else "") + (
            '"stdin_once":true,' if c.stdin_once else ""
        )
    pod_text = ""
    if pod is not None:
        volumes = ""
        if c.volume_mounts and pod.volumes:
            mounted = {m.name for m in c.volume_mounts}
            volumes = ",".join(
                f'{{"host_path":{"null" if v.host_path is None else _string(v.host_path)},'
                + (f'"memory":{v.memory.size:d},' if v.memory is not None else "")
                + f'"name":{_string(v.name)}}}'
                for v in pod.volumes
                if v.name in mounted
            )
        annotations = labels = ""
        if pod.annotations:
            annotations = f'"annotations":{canonical_json(pod.annotations)},'
        if pod.labels:
            labels = f'"labels":{canonical_json(pod.labels)},'
        pod_text = (
            f'"pod":{{{annotations}"dns_policy":"{pod.dns_policy.value}",{labels}'
            f'"name":{_string(pod.name)},"volumes":[{volumes}]}},'
        )
    root = _root_dir_field(c, pod, root_dir)
    root_text = "" if root is None else f'"root_dir":{_string(root)},'
    security = _security_field(c, pod)
    if security:
        root_text += f'"security":{canonical_json(security)},'
    return (
        f'{{"args":{_strings(c.args)},"command":{_strings(c.command)},"cpu":{weight:d},{limit_text}'
        f'"env":[{",".join(map(_env_text, c.env)) if c.env else ""}],'
        f'"image":{_string(c.image)},"memory":{memory:d},'
        f'"name":{_string(c.name)},'
        f'{pod_text}"ports":[{",".join(map(_port_text, c.ports)) if c.ports else ""}],'
        f'"privileged":{"true" if c.privileged else "false"},{root_text}{stdin_text}'
        f'"termination_message_path":{_string(c.termination_message_path)},'
        f"{_TTY if c.tty else ''}"
        f'"volume_mounts":[{",".join(map(_mount_text, c.volume_mounts))}],'
        f'"working_dir":{_string(c.working_dir)}}}'
    )


def _network_options(
    pod: Pod,
    network_mode: str,
    cluster_dns: str,
    cluster_domain: str,
    host_dns: ResolvConf | None,
) -> dict[str, Any]:
    # The option fields of the network container, each only when it is not at its
    # default. The DNS inputs count only when the pod gets the cluster's DNS settings:
    # otherwise the engine gives it the host's, and none of them reaches the container.
    fields: dict[str, Any] = {}
    if _host_network(pod):
        # The host's network: neither the network mode option nor the cluster's DNS
        # settings reach it (the kubelet's ClusterFirst falls back to Default there).
        return fields
    if network_mode:
        fields["network_mode"] = network_mode
    if uses_cluster_dns(pod.dns_policy, server=cluster_dns, domain=cluster_domain):
        fields.update(_dns_fields(cluster_dns, cluster_domain, host_dns))
    return fields


def _host_network(pod: Pod) -> bool:
    return pod.security_context is not None and pod.security_context.host_network


def _dns_fields(
    cluster_dns: str, cluster_domain: str, host_dns: ResolvConf | None
) -> dict[str, Any]:
    """The DNS option fields of a network spec that gets the cluster's DNS settings,
    each only when it is set."""
    fields: dict[str, Any] = {}
    if cluster_dns:
        fields["cluster_dns"] = cluster_dns
    if cluster_domain:
        fields["cluster_domain"] = cluster_domain
    if host_dns is not None and (host_dns.nameservers or host_dns.searches):
        fields["host_resolv_conf"] = {
            "nameservers": list(host_dns.nameservers),
            "searches": list(host_dns.searches),
        }
    return fields


def network_spec(
    pod: Pod,
    image: str,
    *,
    network_mode: str = "",
    cluster_dns: str = "",
    cluster_domain: str = "",
    host_dns: ResolvConf | None = None,
) -> dict[str, Any]:
    """The canonical spec of the pod's network container (``net``).

    The network container holds the pod's network namespace, so it carries every
    published port of the pod (seed createNetworkContainer gave it the ports of all
    the spec containers), the hostname and the DNS settings. All ports of all
    containers are listed in container order: changing any port changes this hash, and
    the planner then rebuilds the whole pod, which is the only way to re-publish ports.

    The options that shape it (``PlanOptions``) are fields too, each only when it is
    not at its default: ``network_mode``; and, for a pod that gets the cluster's DNS
    settings (``ClusterFirst`` with a cluster DNS server or domain), ``cluster_dns``,
    ``cluster_domain`` and ``host_resolv_conf`` - the name servers and search domains
    of the host (``host_dns``) that follow the cluster's, as the pod gets them (the
    planner leaves loopback name servers out unless the network mode is ``host``:
    ``without_loopback``).
    """
    spec = {
        "name": NETWORK_CONTAINER,
        "image": image,
        "pod": {"name": pod.name, "dns_policy": pod.dns_policy.value, **_pod_labels(pod)},
        "ports": [_port(p) for c in pod.containers for p in c.ports],
        **_network_options(pod, network_mode, cluster_dns, cluster_domain, host_dns),
        **_host_fields(pod, cluster_domain),
    }
    security = network_security_fields(pod.security_context)
    if security:
        spec["security"] = security
    return spec


def _host_fields(pod: Pod, cluster_domain: str) -> dict[str, Any]:
    """The network container's host identity beyond the pod name, each field only when
    set: ``hostname`` (the pod's own), ``domainname`` (from its subdomain and the
    cluster domain) and ``host_aliases`` (its extra /etc/hosts entries)."""
    fields: dict[str, Any] = {}
    if pod.hostname:
        fields["hostname"] = pod.hostname
    _, domain = pod_host_name(pod.name, pod.hostname, pod.subdomain, pod.namespace, cluster_domain)
    if domain:
        fields["domainname"] = domain
    if pod.host_aliases:
        fields["host_aliases"] = [
            {"ip": a.ip, "hostnames": list(a.hostnames)} for a in pod.host_aliases
        ]
    return fields


# The network container's name as the canonical JSON writes it.
_NETWORK_NAME = _string(NETWORK_CONTAINER)


def network_spec_hash(
    pod: Pod,
    image: str,
    *,
    network_mode: str = "",
    cluster_dns: str = "",
    cluster_domain: str = "",
    host_dns: ResolvConf | None = None,
) -> SpecHash:
    """The ``SpecHash`` of ``network_spec`` with the same arguments."""
    if pod.labels or pod.annotations or pod.hostname or pod.subdomain or pod.host_aliases:
        # The pods that set these are few: the definition itself, rather than one more
        # hand-written text.
        spec = network_spec(
            pod,
            image,
            network_mode=network_mode,
            cluster_dns=cluster_dns,
            cluster_domain=cluster_domain,
            host_dns=host_dns,
        )
        return _digest(canonical_json(spec))
    # Written out like _canonical_spec_text, for the same reason.
    ports = ",".join(_port_text(p) for c in pod.containers for p in c.ports)
    applies = uses_cluster_dns(pod.dns_policy, server=cluster_dns, domain=cluster_domain)
    security = ""
    if pod.security_context is not None:
        if pod.security_context.host_network:
            network_mode, applies = "", False
        fields = network_security_fields(pod.security_context)
        if fields:
            security = f',"security":{canonical_json(fields)}'
    before, after = _network_options_text(
        network_mode, cluster_dns, cluster_domain, host_dns, applies
    )
    text = (
        f'{{{before}"image":{_string(image)},"name":{_NETWORK_NAME},{after}"pod":{{"dns_policy":'
        f'{_string(pod.dns_policy.value)},"name":{_string(pod.name)}}},"ports":[{ports}]'
        f"{security}}}"
    )
    return _digest(text)


@functools.lru_cache(maxsize=64)
def _network_options_text(
    network_mode: str,
    cluster_dns: str,
    cluster_domain: str,
    host_dns: ResolvConf | None,
    applies: bool,
) -> tuple[str, str]:
    # The option fields' canonical text, in the two places sorted keys put them:
    # cluster_* and host_* before "image", network_mode between "name" and "pod".
    # Cached: every pod of a plan has the same options, and whether the DNS fields
    # apply is the only thing about the pod they depend on.
    before = after = ""
    if network_mode:
        after = f'"network_mode":{_string(network_mode)},'
    if applies:
        fields = _dns_fields(cluster_dns, cluster_domain, host_dns)
        if fields:
            before = canonical_json(fields)[1:-1] + ","
    return before, after
