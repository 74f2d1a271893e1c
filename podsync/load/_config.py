"""Reading desired pods from YAML: files, directories, HTTP(S) URLs and standard input.

This ports the config sources of the older seed kubelet (reference §6):
``extractFromFile`` / ``extractFromDir`` (one file, or every non-dot file of a directory
in name order) and ``extractFromHTTP`` (a body holding one manifest or a list of them),
together with the v1beta1 ``ContainerManifest`` document they read. Kubernetes ``v1``
``Pod``, ``List`` and ``PodList`` documents are read as well.

Deliberate differences from the seed:

* All or nothing by default. The seed logged a bad file and went on with the rest; here
  every problem of every source is collected and raised as one ``ConfigError``, so a
  half-read desired state is never used. A caller that wants the seed's (and the
  modern kubelet's ``extractFromDir``) one-bad-file-is-one-bad-file passes
  ``on_bad_file`` (``_bad_files``): each file is then taken or refused whole, and
  reported.
* Strict. Unknown keys, wrong types (``"80"`` for a port, ``8080`` for a string) and
  values the kubelet would have mis-handled later (a ``_`` in a name, which would
  break the container-name format; an unknown pull policy, which the seed silently
  treated as "never pull") are errors with their ``$.path``.
* Explicit. The seed's Go decoding dropped whatever it did not know; here a Kubernetes
  field podsync cannot honour is refused with its reason, and one that means nothing on
  one host (scheduling, service accounts, status) is ignored with one warning per pod
  (``on_warning``); the tables are ``_unsupported.py``'s.
* Bounded. Streams (HTTP bodies, standard input, pipes) larger than ``max_bytes``,
  HTTP servers slower than the timeout,
  YAML that nests too deeply or expands through aliases (a "billion laughs" bomb) are
  refused before anything large is built.

This module holds the two public entry points and wires the loader's modules, one
concept each, layered bottom to top (each imports only those below it; none imports the
planner or talks to an engine, and only ``_sources`` does file or network I/O):

* ``_sources.py``: reading sources (files, directories, URLs, standard input) within
  the size and time limits; ``DEFAULT_MAX_BYTES``;
* ``schema/_yaml.py``: the hardened YAML loader (decoding, guards, libyaml or pure
  Python);
* ``schema/_scalars.py``: the checks of single values (labels, uids, paths, quantities
  ...);
* ``schema/_pod.py``: the schema classes and the strict cattrs converter with its paths;
* ``schema/_unsupported.py``: the Kubernetes fields refused or ignored, and
  did-you-mean;
* ``podsync/host/_node.py``: ``NodeInfo``, the node the pods are read for (its name, CPU,
  memory);
* ``convert/_env.py``: env values from the downward API, and ``$(VAR)`` expansion;
* ``convert/_document.py``: documents to ``Pod`` s, with the rules that relate several
  values;
* ``convert/_container.py``: one container to a ``Container`` (probes, hooks, ports,
  mounts, env), for ``convert/_document.py``;
* ``convert/_objects.py``: the ConfigMaps and Secrets of the sources, which pods refer
  to;
* ``_streams.py``: the streams (documents numbered, problems prefixed), the objects of
  all of them, and the pods defined twice across all sources;
* ``_bad_files.py``: the good streams' pods when some are bad (``on_bad_file``).

How one YAML stream is read (``parse_pods``):

1. Bytes to text: a NUL byte (binary data) or invalid UTF-8 is refused, naming the
   byte offset.
2. Text to YAML nodes: PyYAML's safe loading with a guarded composer (depth limit,
   alias-expansion budget, duplicate keys). Timestamps are not resolved, so a date
   stays a string.
3. Nodes to plain data, then data to private schema classes (attrs classes that mirror
   the YAML, one per mapping) through one private cattrs converter whose hooks are
   strict and carry the checks of single values (ranges, DNS labels, quantities,
   enumerations); every failure keeps its path.
4. Schema to model: the rules that involve several values (duplicate names, mounts
   that name no volume, host ports used twice, handlers with more than one action)
   and the conversion into ``Pod`` / ``Container``.

A problem reads ``<source>: <path>: <message>``, e.g.
``pods/web.yaml: $.spec.containers[1].ports[0].containerPort: must be 1-65535, got 70000``.
In a stream of several YAML documents the path starts with the document's 1-based
number: ``pods/all.yaml: document 2: $.spec.containers[0].name: ...``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from podsync.exceptions import ConfigError, EtcdError, Problem
from podsync.host._node import NodeInfo
from podsync.load._sources import (
    DEFAULT_MAX_BYTES,
    EtcdReader,
    FileKey,
    HttpOptions,
    _read_sources,
    _Unreadable,
)
from podsync.load._streams import (
    SecretKey,
    _convert_early,
    _converted,
    _Found,
    _load_stream,
    _objects_of,
    _once,
    _Parsed,
    _result,
    _Stream,
)
from podsync.model._pod import Pod

if TYPE_CHECKING:
    # The loader's lower layers (PyYAML, cattrs, the schema) are imported by the first
    # load, not with podsync: a program that only plans never reads YAML.
    from podsync.etcd._urls import EtcdOptions
    from podsync.load.convert._document import _Fleet
    from podsync.load.convert._objects import _Objects


# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "DEFAULT_MAX_BYTES",
    "NodeInfo",
    "PodFileCache",
    "load_pods",
    "parse_pods",
]


class PodFileCache:
    """What ``load_pods`` parsed from regular files, by path: for a caller that loads
    the same sources again and again (a loop that re-reads them every few seconds),
    so that an unchanged file costs a ``stat`` rather than a parse.

    A file is unchanged while its size, modification time (in nanoseconds), inode and
    device are the same (``FileKey``); a file rewritten in place within one tick of the
    file system's clock to the same size is not noticed. Its problems are kept as well
    as its pods. Standard input, pipes and URLs are never cached; a load for another
    node (``load_pods(node=...)``) starts over. The pods of a file depend on the
    ConfigMaps and Secrets of every source: when any of them changed, each cached file
    is read and parsed again.

    The caller owns it and passes the same object to each ``load_pods`` call: nothing
    in podsync keeps one behind the caller's back. It holds the files of the most recent
    call only (files no longer read are forgotten), and is not meant to be shared by
    threads that load at the same time.
    """

    def __init__(self) -> None:
        self._files: dict[str, _Parsed] = {}
        self._node: NodeInfo | None = None  # what the files were read for
        self._objects: _Objects | None = None  # the ConfigMaps and Secrets they saw

    def __len__(self) -> int:
        """How many files it holds."""
        return len(self._files)

    def _knows(self, path: str, key: FileKey) -> bool:
        parsed = self._files.get(path)
        return parsed is not None and parsed.key == key


def load_pods(
    sources: Sequence[str | os.PathLike[str]],
    *,
    stdin: IO[bytes] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    http_timeout: float = 10.0,
    node: NodeInfo | None = None,
    on_warning: Callable[[str], object] | None = None,
    cache: PodFileCache | None = None,
    secret_key: SecretKey = None,
    etcd: EtcdOptions | None = None,
    on_bad_file: Callable[[ConfigError], object] | None = None,
    http: HttpOptions | None = None,
) -> tuple[Pod, ...]:
    """Read the desired pods from files, directories, URLs, etcd and standard input.

    Each source is one of:

    * a file: one YAML stream (see ``parse_pods`` for what it may contain);
    * a directory: every entry whose name does not start with ``.``, in name order,
      as the seed's ``extractFromDir``. Subdirectories are skipped (there is no
      recursion); an entry that is neither a file nor a directory is an error. An empty
      directory contributes no pods;
    * an ``http://`` or ``https://`` URL (the seed's ``extractFromHTTP``): the body is
      one YAML stream, and a top-level list of documents is accepted as the seed did.
      Redirects are followed and the usual proxy environment variables apply;
    * an ``etcd://HOST:PORT[,HOST:PORT...]/KEY`` URL (the seed's etcd source): the
      key's value is one YAML or JSON stream, as a file's (the seed's key was
      ``/registry/hosts/<hostname>/kubelet``, a list of manifests). The endpoints are
      tried in order; a key that does not exist is an error, not "no pods". Needs the
      ``etcd`` extra (``pip install 'podsync[etcd]'``);
    * ``-`` (the string, not a path object): standard input, read once.

    Pods from files, directories and standard input get the source ``file``, pods from
    URLs get ``http``, pods from etcd ``etcd``. Sources are read in order and their
    pods concatenated.

    Args:
        sources: the sources, in order.
        stdin: where ``-`` reads from; ``sys.stdin.buffer`` when not given.
        max_bytes: the largest HTTP body, standard input, pipe or device accepted, in
            bytes; a larger one is refused without reading all of it. Regular files
            (named, or in a named directory) are read whatever their size.
        http_timeout: seconds allowed for connecting, for each read, and for the whole
            transfer of one URL.
        node: the node the pods run on, for the environment values resolved from it
            (``spec.nodeName``, the CPU and memory of a container without limits) and
            for the warning about a pod bound to another node; ``NodeInfo.this_host()``
            when not given.
        on_warning: called once per pod that loads with fields podsync ignores (fields
            that mean nothing on one host), with one line naming the source, the pod
            and the fields; only when the whole load succeeds. When not given, the
            lines go to the ``podsync`` logger at level WARNING.
        cache: files parsed by earlier calls with the same cache; an unchanged file is
            not read or parsed again (see ``PodFileCache``). Updated by this call.
        secret_key: this host's key for the digests of Secret values (``bytes``, or a
            function that gives them, called only when the sources hold a Secret): a
            value read from a Secret (``secretKeyRef``, ``envFrom.secretRef``) is held
            as a ``SecretText`` whose labels, plan text and saved plans show a reference
            and this keyed digest, never the value (see ``host_secret_key``). Without
            it, a pod that uses a Secret's value is an error.
        etcd: how etcd sources are reached: TLS files, user and password, timeout
            (``podsync.EtcdOptions``); plain http without credentials when not given.
        http: how URLs are fetched beyond their address: headers to send and the CA
            file of ``https`` sources (``podsync.HttpOptions``). A URL's
            ``user:password@`` is sent as Basic authentication (refused over plain
            http to a host that is not loopback). Every message names a URL by
            ``shown_url``: without its password, query values and fragment.
        on_bad_file: when given, one bad file does not fail the others (the modern
            kubelet's ``extractFromDir``, ``kubectl apply -f DIR``): a stream (a file,
            one file of a directory, a URL, an etcd key, standard input) with any
            problem gives none of its pods, its ConfigMaps and Secrets do not count,
            and ``on_bad_file`` is called with its problems (one ``ConfigError`` per
            stream, in source order); the pods of the other streams are returned. Of
            a pod defined twice, the later definition's stream is the bad one.

    A ConfigMap or Secret, or a key of one, that a container's ``env`` or ``envFrom``
    reads without ``optional: true`` and the sources do not hold is no problem of the
    file: the pod is read, and that container carries the reason
    (``Container.config_error``; the kubelet's ``CreateContainerConfigError``): it is
    not created while the sources do not hold it.

    Returns:
        The pods of all sources (with ``on_bad_file``: of the good streams), in source
        order and then document order.

    Raises:
        ConfigError: anything was wrong with any source: it could not be read, it is
            too large, it is not valid YAML, a document is invalid, or two pods share a
            ``namespace/name`` or a uid. Every problem found is listed and no pods are
            returned. Never raised for such problems when ``on_bad_file`` is given.
        TypeError: ``sources`` is a single string or path instead of a sequence.
        ValueError: ``max_bytes`` is negative or ``http_timeout`` is not positive.
    """
    return _load_pods(
        sources,
        stdin,
        max_bytes,
        http_timeout,
        node,
        on_warning,
        cache,
        secret_key,
        None,
        etcd,
        on_bad_file=on_bad_file,
        http=http,
    )


def _load_pods(
    sources: Sequence[str | os.PathLike[str]],
    stdin: IO[bytes] | None,
    max_bytes: int,
    http_timeout: float,
    node: NodeInfo | None,
    on_warning: Callable[[str], object] | None,
    cache: PodFileCache | None,
    secret_key: SecretKey,
    fleet: _Fleet | None,
    etcd: EtcdOptions | None = None,
    *,
    on_bad_file: Callable[[ConfigError], object] | None = None,
    http: HttpOptions | None = None,
) -> tuple[Pod, ...]:
    from podsync.load.convert._document import _Context

    if isinstance(sources, (str, bytes, os.PathLike)):
        raise TypeError("sources must be a sequence of sources, not a single str or path")
    if max_bytes < 0:
        raise ValueError(f"max_bytes must not be negative, got {max_bytes!r}")
    if not http_timeout > 0:
        raise ValueError(f"http_timeout must be positive, got {http_timeout!r}")
    the_node = node if node is not None else NodeInfo.this_host()
    if cache is not None and cache._node != the_node:
        # The pods' environment is resolved against the node: another node, other pods.
        cache._files, cache._node, cache._objects = {}, the_node, None
    known = cache._files if cache is not None else {}
    shared: dict[Any, Any] = {}  # the equal parts of all pods (``_Context.shared``)

    def read(names: Sequence[str | os.PathLike[str]], knows: bool) -> Iterator[_Stream]:
        for source_name, data, pod_source, file, key in _read_sources(
            names,
            stdin,
            max_bytes,
            http_timeout,
            cache._knows if knows and cache else None,
            etcd_reader(etcd),
            http,
        ):
            if data is None:  # unchanged since the cache parsed it
                entry = known[source_name]
                yield _Stream(source_name, [], None, list(entry.load_problems), key, entry)
            elif isinstance(data, _Unreadable):
                yield _Stream(source_name, [], None, [Problem(source_name, "", data.message)])
            else:
                stream = _load_stream(
                    data,
                    source_name,
                    _Context(pod_source, the_node, file, shared=shared, fleet=fleet),
                )
                stream.key = key
                yield stream

    secret_key = _once(secret_key)
    # Each stream's pods are converted as soon as it is read, and its YAML data dropped
    # (``_convert_early``): holding every file's data until the last one was read cost
    # the memory of all of it, and garbage-collector passes over all of it while the
    # pods were built.
    streams = [_convert_early(stream) for stream in read(sources, True)]
    objects = _objects_of(streams, secret_key)
    if cache is not None and cache._objects is not None and cache._objects != objects:
        # A ConfigMap or Secret changed: the pods of unchanged files may read it.
        fresh = {s.source_name for s in streams if s.entry is not None}
        again = {s.source_name: s for s in read(sorted(fresh), False)}
        streams = [again.get(s.source_name, s) if s.entry is not None else s for s in streams]
        objects = _objects_of(streams, secret_key)
    if on_bad_file is not None:
        from podsync.load._bad_files import _good_pods

        pods, parsed, objects = _good_pods(
            streams,
            objects,
            secret_key,
            on_warning,
            on_bad_file,
            lambda names: list(read(names, False)),
        )
        if cache is not None:
            cache._files, cache._objects = parsed, objects
        return pods
    pods = _read_streams(streams, objects, on_warning, cache)
    return pods


def etcd_reader(options: EtcdOptions | None) -> EtcdReader:
    """Reads an etcd source once (``podsync.etcd._client``, imported on the first read): the
    key's value, or why not - a bad URL, etcd unreachable or refusing, the ``etcd``
    extra missing, no such key."""

    def read(url: str) -> bytes | _Unreadable:
        from podsync.etcd import _client, _urls

        try:
            client = _client.EtcdClient(_urls.parse_etcd_url(url), options)
        except (ValueError, EtcdError) as exc:
            return _Unreadable(str(exc))
        try:
            got = client.read()
        except EtcdError as exc:
            return _Unreadable(str(exc))
        finally:
            client.close()
        if got.value is None:
            return _Unreadable(_urls.NO_SUCH_KEY)
        return got.value

    return read


def _read_secrets(
    sources: Sequence[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    http_timeout: float = 10.0,
    etcd: EtcdOptions | None = None,
    http: HttpOptions | None = None,
) -> dict[tuple[str, str], Mapping[str, bytes]]:
    """The data of the Secrets of ``sources``, by namespace and name: for ``apply
    --plan``, which puts a saved plan's Secret values back (``podsync.model._secrets``). The
    pods of the sources are not read: the plan already says what to do.

    Raises:
        ConfigError: a source cannot be read, is not YAML, or holds an invalid object.
    """
    from podsync.load.convert._document import _Context

    node = NodeInfo.this_host()
    streams: list[_Stream] = []
    for source_name, data, pod_source, file, _ in _read_sources(
        sources, None, max_bytes, http_timeout, None, etcd_reader(etcd), http
    ):
        if isinstance(data, _Unreadable):
            streams.append(_Stream(source_name, [], None, [Problem(source_name, "", data.message)]))
        elif data is not None:
            streams.append(_load_stream(data, source_name, _Context(pod_source, node, file)))
    objects = _objects_of(streams)
    problems = [p for stream in streams for p in stream.problems]
    if problems:
        raise ConfigError(problems)
    return {key: secret.data for key, secret in objects.secrets.items()}


def _read_streams(
    streams: Sequence[_Stream],
    objects: _Objects,
    on_warning: Callable[[str], object] | None,
    cache: PodFileCache | None,
) -> tuple[Pod, ...]:
    """The pods of all streams, given the objects of all of them (``_objects_of``).

    Problems are listed stream by stream, in source order. With a ``cache``, a stream
    it vouches for gives the pods the cache holds, and the cache is left holding the
    regular files of these streams."""
    found: list[_Found] = []
    problems: list[Problem] = []
    parsed: dict[str, _Parsed] = {}
    for stream in streams:
        problems.extend(stream.problems)
        entry, stream_found, stream_problems = _converted(stream, objects)
        found.extend(stream_found)
        problems.extend(stream_problems)
        if entry is not None:
            parsed[stream.source_name] = entry
    if cache is not None:
        cache._files, cache._objects = parsed, objects
    return _result(found, problems, on_warning)


_SOURCE = re.compile(r"[a-z0-9]+")


def parse_pods(
    text: str | bytes,
    *,
    source_name: str = "",
    source: str = "api",
    node: NodeInfo | None = None,
    on_warning: Callable[[str], object] | None = None,
    secret_key: SecretKey = None,
) -> tuple[Pod, ...]:
    """Parse the pods of one YAML stream; no I/O (but ``NodeInfo.this_host()`` when no
    ``node`` is given: the host name, CPU count and memory size).

    The stream holds one or more YAML documents (separated by ``---``; empty documents
    are skipped, but a stream with no document at all is an error, "no pods found").
    Each document is one of:

    * a Kubernetes ``apiVersion: v1`` ``kind: Pod``, in block YAML, flow style (KYAML)
      or JSON;
    * a ``kind: List`` or ``kind: PodList`` with ``items``, each a Pod (whose
      ``apiVersion`` and ``kind`` may be left out); an empty ``items`` is zero pods;
    * a v1beta1 ``ContainerManifest`` (``version: v1beta1`` or ``v1beta2``, read alike;
      ``id`` is the pod name, ``uuid`` its uid, the namespace is ``default``). Without
      ``id`` the pod is named after its file as the file source of late 2014 did
      (``source_name`` here; an error when that is empty);
    * a list of the above (the seed's HTTP source accepted a list of manifests).

    The v1beta1 keys are the 2014 ones: ``imagePullPolicy`` is ``PullAlways``,
    ``PullNever`` or ``PullIfNotPresent`` in any case, ``memory`` is bytes and ``cpu``
    milli-CPU (integers), lifecycle handlers have ``exec`` or ``httpGet`` (probes also
    ``tcpSocket``), and the fields deprecated before the seed (``VolumeMount.path`` and
    ``mountType``, ``EnvVar.key``) are unknown keys whose message names the field that
    replaced them.

    A Kubernetes field podsync cannot honour is refused with its reason
    (``$.spec.ephemeralContainers: ephemeralContainers is not supported by podsync: ...``);
    one that means nothing on one host (``nodeSelector``, ``tolerations``, ``status``
    ...) is accepted, ignored, and named in the pod's one warning (``on_warning``). A
    key Kubernetes does not know is an "unknown key", with a suggestion only for a
    near-misspelling. ``env`` values from ``valueFrom.fieldRef`` and
    ``resourceFieldRef``, and ``$(VAR)`` references in ``env``, ``command`` and
    ``args``, are resolved here, as the kubelet resolves them when it starts a
    container (see ``convert._env``).

    Pods without a uid get ``derive_pod_uid(source, namespace, name)``. Quantities round
    up to whole milli-CPU and bytes; a container's CPU and memory are its
    ``resources.limits``, or its ``requests`` for a resource without a limit. Empty
    policy strings mean the default (``Always``, ``ClusterFirst``, ``IfNotPresent``).
    Within a document, problems are listed field by field; the rules that relate
    several fields (duplicates, references) are checked once the shapes are right.

    Args:
        text: the YAML, as text or as UTF-8 bytes (a UTF-8 byte-order mark is allowed).
        source_name: names the stream in error messages, e.g. ``pods/web.yaml``.
        source: the pods' source (``file``, ``http``, ``api``); part of each pod's full
            name and of derived uids.
        node: as for ``load_pods``.
        on_warning: as for ``load_pods``.
        secret_key: as for ``load_pods``.

    Returns:
        The pods, in document order.

    Raises:
        ConfigError: the stream is not valid YAML (the problem gives the line and
            column), is refused for its shape (too deep, alias bomb), or any document is
            invalid; every problem found is listed. Two pods with the same
            ``namespace/name`` or uid are an error too.
        ValueError: ``source`` is not a lowercase word (it becomes part of container
            names).
    """
    from podsync.load.convert._document import _Context

    if not _SOURCE.fullmatch(source):
        raise ValueError(f"source must be lowercase letters and digits, got {source!r}")
    the_node = node if node is not None else NodeInfo.this_host()
    stream = _load_stream(text, source_name, _Context(source, the_node, source_name or None))
    return _read_streams([stream], _objects_of([stream], secret_key), on_warning, None)
