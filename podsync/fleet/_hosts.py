"""A fleet's hosts file: which engine each host name stands for.

``podsync apply --hosts HOSTS.yaml SOURCE...`` syncs the pods of the sources onto several
engines at once, each pod onto the host its ``spec.nodeName`` names, as the 2014
scheduler bound a pod to a host and that host's kubelet ran it. The file::

    hosts:
      node-a: unix:///run/podsync/node-a.sock      # an engine address, as -H takes it
      node-b:
        engine: tcp://10.0.0.2:2376
        tls:                                      # optional, tcp:// only; relative
          ca: /etc/podsync/ca.pem                 # paths are the hosts file's
          cert: /etc/podsync/node-b-cert.pem      # client certificate and key
          key: /etc/podsync/node-b-key.pem
        cpu: "4"                                   # optional: the node's capacity, for
        memory: 8Gi                                # the downward API (default: this machine)

Host names are Kubernetes node names (DNS-1123 subdomains). The file is read as strictly
as a pod file - the hardened YAML loader, unknown keys refused, every problem with the
file and its ``$.path``, all of them at once - and nothing is applied when it is bad.

``load_host_pods`` reads a fleet's pods through the loader (``_config``), each for the
node of the host it names.

Layering: the loader's side (``_config``, ``_yaml``, ``_scalars``, ``_node``); it reads
one file and checks that the TLS files exist; it contacts no engine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import attrs

from podsync.exceptions import ConfigError, Problem
from podsync.host._node import NodeInfo
from podsync.load._config import _load_pods
from podsync.load._sources import DEFAULT_MAX_BYTES
from podsync.load._streams import SecretKey
from podsync.model._pod import Pod

if TYPE_CHECKING:
    from podsync.etcd._urls import EtcdOptions

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["Host", "HostTLS", "host_root_dir", "load_host_pods", "load_hosts", "parse_hosts"]

# Kubernetes node names are DNS-1123 subdomains (ValidateNodeName).
_NODE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NODE_NAME_MAX = 253
_SCHEMES = ("unix://", "tcp://", "ssh://")
_HOST_KEYS = ("engine", "tls", "cpu", "memory")
_TLS_KEYS = ("ca", "cert", "key")


@attrs.frozen
class HostTLS:
    """A host's TLS settings (``tcp://`` engines), as the docker CLI's ``--tlscacert``,
    ``--tlscert`` and ``--tlskey``.

    Attributes:
        ca: the CA the engine's certificate must chain to; ``""``: the system's CAs.
        cert: the client certificate (with ``key``), or ``""`` for none.
        key: the client certificate's key.
    """

    ca: str = ""
    cert: str = ""
    key: str = ""


@attrs.frozen
class Host:
    """One host of a fleet.

    Attributes:
        name: the node name pods name in ``spec.nodeName``.
        engine: its engine's address: ``unix://``, ``tcp://`` or ``ssh://``.
        node: what the pods of this host are loaded for (``load_host_pods``): its name,
            and the CPU and memory the downward API gives a container without limits.
        tls: TLS settings for a ``tcp://`` engine, or ``None``.
    """

    name: str
    engine: str
    node: NodeInfo
    tls: HostTLS | None = None


def host_root_dir(root_dir: str, name: str) -> str:
    """The root directory of host ``name``'s pod directories in a fleet driven from one
    ``root_dir``: ``<root_dir>/hosts/<name>``. Each host has its own, so that one host's
    garbage collection (which removes the pod directories of pods not desired there)
    never sees another host's pods."""
    return os.path.join(root_dir, "hosts", name)


def load_hosts(
    path: str | os.PathLike[str], *, this_host: NodeInfo | None = None
) -> tuple[Host, ...]:
    """The hosts of a hosts file (see the module documentation), in file order.

    Args:
        path: the file.
        this_host: the capacity a host that gives no ``cpu`` or ``memory`` gets;
            ``NodeInfo.this_host()`` when not given.

    Raises:
        ConfigError: the file cannot be read, is not valid YAML, or anything in it is
            wrong; every problem names the file and its ``$.path``.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as stream:
            data = stream.read()
    except OSError as exc:
        raise ConfigError([Problem(name, "", f"cannot read: {exc.strerror or exc}")]) from None
    return parse_hosts(data, source_name=name, this_host=this_host)


def parse_hosts(
    text: str | bytes, *, source_name: str = "", this_host: NodeInfo | None = None
) -> tuple[Host, ...]:
    """The hosts of a hosts file's content (``load_hosts``, without the reading).

    Raises:
        ConfigError: as ``load_hosts``.
    """
    import yaml

    from podsync.load.schema._yaml import _decode, _Invalid, _load_documents, _yaml_message

    try:
        documents = _load_documents(_decode(text) if isinstance(text, bytes) else text)
    except _Invalid as exc:
        raise ConfigError([Problem(source_name, "", str(exc))]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([Problem(source_name, "", _yaml_message(exc))]) from None
    documents = [d for d in documents if d is not None]
    if len(documents) != 1:
        found = "nothing" if not documents else f"{len(documents)} documents"
        raise ConfigError(
            [Problem(source_name, "", f"expected one document with 'hosts:', found {found}")]
        )
    out: list[tuple[str, str]] = []
    base = os.path.dirname(os.path.abspath(source_name)) if source_name else os.getcwd()
    hosts = _read(documents[0], this_host, base, out)
    if out:
        raise ConfigError([Problem(source_name, path, message) for path, message in out])
    return hosts


def _describe(value: object) -> str:
    from podsync.load.schema._yaml import _describe as describe

    return describe(value)


def _read(
    document: object, this_host: NodeInfo | None, base: str, out: list[tuple[str, str]]
) -> tuple[Host, ...]:
    if not isinstance(document, dict):
        out.append(("$", f"expected a mapping with 'hosts:', got {_describe(document)}"))
        return ()
    for key in document:
        if key != "hosts":
            out.append((f"$.{key}", "unknown key (expected only 'hosts')"))
    listed = document.get("hosts")
    if not isinstance(listed, dict) or not listed:
        got = "nothing" if listed is None else _describe(listed)
        out.append(("$.hosts", f"expected a mapping of host names to engines, got {got}"))
        return ()
    here = this_host
    hosts = []
    for name, value in listed.items():
        path = f"$.hosts.{name}"
        if (
            not isinstance(name, str)
            or len(name) > _NODE_NAME_MAX
            or not _NODE_NAME.fullmatch(name)
        ):
            out.append(
                (
                    path,
                    f"{_describe(name)} is not a valid node name: a DNS-1123 subdomain "
                    "(lowercase letters, digits, '-' and '.', at most 253 characters)",
                )
            )
            continue
        if here is None:
            here = NodeInfo.this_host()
        host = _host(name, value, path, here, base, out)
        if host is not None:
            hosts.append(host)
    return tuple(hosts)


def _host(
    name: str, value: object, path: str, here: NodeInfo, base: str, out: list[tuple[str, str]]
) -> Host | None:
    before = len(out)
    fields: Mapping[str, Any]
    if isinstance(value, str):
        fields = {"engine": value}
        engine_path = path
    elif isinstance(value, dict):
        fields = value
        engine_path = f"{path}.engine"
        for key in value:
            if key not in _HOST_KEYS:
                out.append((f"{path}.{key}", f"unknown key (expected {', '.join(_HOST_KEYS)})"))
    else:
        out.append((path, f"expected an engine address or a mapping, got {_describe(value)}"))
        return None
    engine = fields.get("engine")
    if not isinstance(engine, str):
        got = "nothing" if engine is None else _describe(engine)
        out.append(
            (engine_path, f"expected an engine address (unix://, tcp://, ssh://), got {got}")
        )
    else:
        problem = _engine_problem(engine)
        if problem:
            out.append((engine_path, problem))
    engine_text = engine if isinstance(engine, str) else ""
    tls = _tls(fields.get("tls"), f"{path}.tls", engine_text, base, out)
    node = NodeInfo(
        name=name,
        milli_cpu=_capacity(fields, "cpu", path, here.milli_cpu, out),
        memory=_capacity(fields, "memory", path, here.memory, out),
    )
    if len(out) > before:
        return None
    assert isinstance(engine, str)
    return Host(name, engine, node, tls)


def _engine_problem(engine: str) -> str:
    """Why ``engine`` is not an address ``-H`` takes, or ``""``."""
    if not engine.startswith(_SCHEMES):
        return f"{_describe(engine)} is not an engine address: expected unix://, tcp:// or ssh://"
    import docker.errors
    import docker.utils

    try:
        docker.utils.parse_host(engine)
    except (docker.errors.DockerException, ValueError) as exc:
        return f"{_describe(engine)} is not an engine address: {exc}"
    return ""


def _tls(
    value: object, path: str, engine: str, base: str, out: list[tuple[str, str]]
) -> HostTLS | None:
    """The TLS files, relative ones taken from the hosts file's directory (as a
    kubeconfig's are)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        out.append((path, f"expected a mapping with ca, cert, key; got {_describe(value)}"))
        return None
    if engine and not engine.startswith("tcp://"):
        out.append((path, f"TLS is for tcp:// engines, not {_describe(engine)}"))
    files: dict[str, str] = {}
    for key, item in value.items():
        if key not in _TLS_KEYS:
            out.append((f"{path}.{key}", f"unknown key (expected {', '.join(_TLS_KEYS)})"))
        elif not isinstance(item, str) or not item:
            out.append((f"{path}.{key}", f"expected a file name, got {_describe(item)}"))
        elif not os.path.isfile(os.path.join(base, item)):
            out.append((f"{path}.{key}", f"no such file: {os.path.join(base, item)}"))
        else:
            files[key] = os.path.join(base, item)
    if ("cert" in value) != ("key" in value):
        out.append((path, "give cert and key together (the client certificate and its key)"))
    return HostTLS(files.get("ca", ""), files.get("cert", ""), files.get("key", ""))


def _capacity(
    fields: Mapping[str, Any], key: str, path: str, default: int, out: list[tuple[str, str]]
) -> int:
    if key not in fields:
        return default
    from podsync.load.schema._scalars import _bytes, _milli_cpu
    from podsync.load.schema._yaml import _Invalid

    try:
        amount = (_milli_cpu if key == "cpu" else _bytes)(fields[key])
    except _Invalid as exc:
        out.append((f"{path}.{key}", str(exc)))
        return default
    if amount == 0:
        out.append((f"{path}.{key}", f"must be more than 0, got {_describe(fields[key])}"))
    return amount


def load_host_pods(
    sources: Sequence[str | os.PathLike[str]],
    hosts: Sequence[Host],
    *,
    hosts_file: str = "the hosts file",
    stdin: IO[bytes] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    http_timeout: float = 10.0,
    on_warning: Callable[[str], object] | None = None,
    secret_key: SecretKey = None,
    etcd: EtcdOptions | None = None,
) -> dict[str, tuple[Pod, ...]]:
    """Read the desired pods of a fleet, and assign each to the host its
    ``spec.nodeName`` names (as the 2014 scheduler bound pods to hosts).

    The sources are read as ``load_pods`` reads them, each pod for its host's node
    (``Host.node``: the downward API's ``spec.nodeName`` and the capacity a container
    without limits gets). A pod without ``spec.nodeName``, or naming a host that is not
    in ``hosts``, is a problem at its ``$.spec.nodeName``, and so is a v1beta1 manifest
    (it names no host); as with every problem, no pods are returned for any host.

    Args:
        sources: as ``load_pods``.
        hosts: the fleet (``load_hosts``).
        hosts_file: names the hosts in messages (the hosts file's name).
        stdin: as ``load_pods``.
        max_bytes: as ``load_pods``.
        http_timeout: as ``load_pods``.
        on_warning: as ``load_pods``.
        secret_key: as ``load_pods``; one Secret digest key serves the whole fleet.
        etcd: as ``load_pods``.

    Returns:
        Every host's pods, by host name, in the order of ``hosts`` (a host no pod names
        has none: syncing it removes the pods podsync runs there).

    Raises:
        ConfigError: as ``load_pods``, and for pods that name no host of the fleet.
        TypeError, ValueError: as ``load_pods``.
    """
    from podsync.load.convert._document import _Fleet

    fleet = _Fleet({host.name: host.node for host in hosts}, hosts_file)
    pods = _load_pods(
        sources, stdin, max_bytes, http_timeout, None, on_warning, None, secret_key, fleet, etcd
    )
    by_host: dict[str, list[Pod]] = {host.name: [] for host in hosts}
    for pod in pods:
        by_host[fleet.assigned[pod.uid]].append(pod)
    return {name: tuple(found) for name, found in by_host.items()}
