"""Publishing a host's pods to etcd: what the seed's scheduler did for its kubelets.

The seed's central components wrote each host's pods to ``/registry/hosts/<host>/kubelet``
(a list of manifests), and the host's kubelet watched that key. ``publish`` writes that
key from pod files, so that ``podsync run etcd://.../registry/hosts/<host>/kubelet`` on
the host runs them:

1. the sources are read and validated as ``plan`` reads them (``load_pods``' rules: a
   problem names its file and ``$.path``, and nothing is written);
2. the value is built: a JSON list of the sources' objects - pods (v1 Pods, the items of
   v1 Lists, v1beta1 manifests) and the ConfigMaps, Secrets and claims they use - in
   source order, which the etcd source reads back as the same pods (checked before
   writing);
3. the key is read, and the difference shown (pods and objects added, changed and
   removed: ``PublishResult``);
4. the value is written with a compare-and-swap on the key's revision as read (an etcd
   transaction comparing its ``mod_revision``): when another publisher wrote the key in
   between, nothing is written and ``PublishConflict`` says so. Publishing again
   reads that publisher's value and shows what this one changes in it: no update is ever
   lost silently. (Retrying the write blindly would be exactly that lost update.)
5. the host's heartbeat (``/registry/hosts/<host>/heartbeat``, ``podsync.report``) is
   looked at: without one, no ``podsync run`` reports from the host, and nothing may run
   the pods (``PublishResult.heartbeat_warning``).

Secrets among the sources are published with their values, as Kubernetes keeps them in
etcd: protect the key (etcd's TLS and authentication).
"""

from __future__ import annotations

import difflib
import json
import os
import secrets
from collections.abc import Callable, Iterator, Sequence

import attrs

from podsync.etcd._client import EtcdClient, KeyRead
from podsync.etcd._urls import EtcdOptions, host_key, parse_etcd_url
from podsync.exceptions import Problem, PublishConflict
from podsync.host._node import NodeInfo
from podsync.load._config import _read_streams, etcd_reader
from podsync.load._sources import DEFAULT_MAX_BYTES, _read_sources, _Unreadable, etcd_file
from podsync.load._streams import _load_stream, _objects_of, _Stream
from podsync.report._records import heartbeat_key

__all__ = ["PublishResult", "publish"]

_OBJECT_KINDS = ("ConfigMap", "Secret", "PersistentVolumeClaim")


@attrs.frozen
class PublishResult:
    """What ``publish`` did, or would do (``dry_run``).

    Attributes:
        url: the host's key, ``etcd://ENDPOINTS/registry/hosts/<host>/kubelet``.
        host: the host's name.
        added, changed, removed: the objects, ``pod default/web``, ``configmap
            default/greeting``, by their kind, namespace and name.
        diff: for each changed object, a unified diff of its JSON (a Secret's values
            are not shown), in order.
        read_revision: the key's revision when read (0: it did not exist).
        revision: the key's revision after the write; ``None`` when nothing was written
            (a dry run, or nothing changed).
        value: the value written (or that would be).
        live_heartbeat: whether the host had a live heartbeat when published to (a
            ``podsync run`` on it reports to this etcd: ``podsync.report``); ``None``
            when not looked at.
    """

    url: str
    host: str
    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    diff: tuple[str, ...]
    read_revision: int
    revision: int | None
    value: bytes = attrs.field(repr=False)
    live_heartbeat: bool | None = None

    @property
    def heartbeat_warning(self) -> str | None:
        """What to warn of when the host has no live heartbeat: nothing may run what is
        published to it. ``None`` when it has one (or it was not looked at)."""
        if self.live_heartbeat is not False:
            return None
        what = (
            "the pods are published but nothing may run them"
            if self.revision is not None
            else "nothing may run the pods published to it"
        )
        return (
            f"{self.host} has no live heartbeat: no podsync run reports from it, or it "
            f"stopped; {what}"
        )

    @property
    def has_changes(self) -> bool:
        """Whether the key's value differs (or differed) from what was published."""
        return bool(self.added or self.changed or self.removed)

    def render(self) -> str:
        """The difference, a line per object (``+`` added, ``~`` changed with its diff
        indented, ``-`` removed), and a summary line."""
        lines: list[str] = []
        diffs = dict(zip(self.changed, self.diff, strict=True))
        for name in self.added:
            lines.append(f"+ {name}")
        for name in self.changed:
            lines.append(f"~ {name}")
            lines.extend(f"    {line}" for line in diffs[name].splitlines())
        for name in self.removed:
            lines.append(f"- {name}")
        at = f"revision {self.read_revision}" if self.read_revision else "a new key"
        if not self.has_changes:
            lines.append(f"No changes: {self.url} ({at}) holds these pods.")
        else:
            lines.append(
                f"Publish: {len(self.added)} to add, {len(self.changed)} to change, "
                f"{len(self.removed)} to remove at {self.url} ({at})."
            )
        return "\n".join(lines)


def publish(
    sources: Sequence[str | os.PathLike[str]],
    *,
    etcd: str,
    host: str,
    options: EtcdOptions | None = None,
    dry_run: bool = False,
    if_revision: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    http_timeout: float = 10.0,
    on_warning: Callable[[str], object] | None = None,
) -> PublishResult:
    """Write the pods of ``sources`` to ``host``'s key in etcd, with a compare-and-swap.

    Args:
        sources: pod files, directories, URLs and etcd keys, as for ``load_pods``
            (standard input too, ``-``).
        etcd: the endpoints, ``etcd://HOST:PORT[,HOST:PORT...]``, or etcdctl's
            ``https://HOST:PORT[,...]`` (TLS) or ``http://HOST:PORT[,...]``.
        host: the host's name: the key is ``/registry/hosts/<host>/kubelet``.
        options: TLS, user and password (``EtcdOptions``).
        dry_run: read and compare only; write nothing.
        if_revision: write only if the key is still at this revision (0: only if it
            does not exist), e.g. the one a dry run showed; else the revision read.
        max_bytes: as for ``load_pods``.
        http_timeout: as for ``load_pods``.
        on_warning: as for ``load_pods`` (fields podsync ignores).

    Returns:
        What was (or would be) added, changed and removed, and the revisions.

    Raises:
        ConfigError: a source is invalid (each problem names its file and ``$.path``);
            nothing was written.
        PublishConflict: the key changed since it was read (or is not at
            ``if_revision``); nothing was written.
        EtcdError: etcd cannot be reached or refused (nothing was written), or the
            ``etcd`` extra is missing.
        ValueError: ``etcd`` is not an etcd URL of endpoints, ``host`` is not a host
            name.
    """
    if isinstance(sources, (str, bytes, os.PathLike)):
        raise TypeError("sources must be a sequence of sources, not a single str or path")
    endpoints = parse_etcd_url(etcd, key=False)
    key = host_key(host)
    # The source that reads the key back (``podsync run``'s): always ``etcd://``, since
    # an ``https://`` source is an HTTP one; its TLS comes from the options there.
    url = attrs.evolve(endpoints, tls=None).url(key)
    node = attrs.evolve(NodeInfo.this_host(), name=host)
    items = _validated_items(sources, node, options, max_bytes, http_timeout, on_warning)
    value = (json.dumps(items, indent=2, ensure_ascii=False, default=str) + "\n").encode()
    _check_read_back(value, url, node)

    client = EtcdClient(attrs.evolve(endpoints, key=key), options)
    try:
        current = client.read()
        if if_revision is not None and current.mod_revision != if_revision:
            raise PublishConflict(url, if_revision, current.mod_revision)
        added, changed, removed, diff = _difference(current, items)
        # A host whose heartbeat is gone (its lease expired, or it never reported) may
        # run nothing of what is published: said, never refused (a host is often
        # published to before its podsync run starts).
        alive = client.read(heartbeat_key(host)).value is not None
        result = PublishResult(
            url, host, added, changed, removed, diff, current.mod_revision, None, value, alive
        )
        if dry_run or current.value == value:
            return result
        written, now = client.write_if(value, current.mod_revision)
        if not written:
            raise PublishConflict(url, current.mod_revision, now.mod_revision)
        return attrs.evolve(result, revision=now.mod_revision)
    finally:
        client.close()


def _validated_items(
    sources: Sequence[str | os.PathLike[str]],
    node: NodeInfo,
    options: EtcdOptions | None,
    max_bytes: int,
    http_timeout: float,
    on_warning: Callable[[str], object] | None,
) -> list[object]:
    """The sources' objects, one list item each, after checking them as ``load_pods``
    does (a ``ConfigError`` naming files and paths)."""
    from podsync.load.convert._document import _Context

    streams: list[_Stream] = []
    for name, data, pod_source, file, _ in _read_sources(
        sources, None, max_bytes, http_timeout, None, etcd_reader(options)
    ):
        if isinstance(data, _Unreadable):
            streams.append(_Stream(name, [], None, [Problem(name, "", data.message)]))
        elif data is not None:
            streams.append(_load_stream(data, name, _Context(pod_source, node, file)))
    # The digests of Secret values are never written anywhere: any key will do.
    objects = _objects_of(streams, secrets.token_bytes(32))
    _read_streams(streams, objects, on_warning, None)  # raises ConfigError
    return [item for stream in streams for item in _flatten(stream.documents)]


def _flatten(documents: Sequence[object]) -> Iterator[object]:
    """Each object of the documents: a top-level list's items, a v1 List's items (with
    the ``apiVersion`` and ``kind`` a List lets them leave out), the others as they are."""
    for document in documents:
        if document is None:
            continue
        if isinstance(document, list):
            yield from _flatten(document)
        elif isinstance(document, dict) and document.get("kind") in ("List", "PodList"):
            for item in document.get("items") or ():
                if isinstance(item, dict):
                    yield {"apiVersion": "v1", "kind": "Pod", **item}
                else:
                    yield item
        else:
            yield document


def _check_read_back(value: bytes, url: str, node: NodeInfo) -> None:
    """The value read as the etcd source will: the same pods, or a ``ConfigError``
    naming the key (two 2014 manifests without ``id`` get the same name there)."""
    from podsync.load.convert._document import _Context

    stream = _load_stream(value, url, _Context("etcd", node, etcd_file(url)))
    _read_streams([stream], _objects_of([stream], secrets.token_bytes(32)), lambda _: None, None)


def _name(item: object, index: int) -> str:
    """An object's kind, namespace and name: ``pod default/web``."""
    if not isinstance(item, dict):
        return f"item {index}"
    kind = item.get("kind")
    if "version" in item and "kind" not in item:  # a v1beta1 manifest
        name = item.get("id") or f"(no id, item {index})"
        return f"pod {item.get('namespace') or 'default'}/{name}"
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    namespace = metadata.get("namespace") or "default"
    label = str(kind).lower() if kind in _OBJECT_KINDS else "pod"
    return f"{label} {namespace}/{metadata.get('name')}"


def _by_name(items: Sequence[object]) -> dict[str, object]:
    return {_name(item, i): item for i, item in enumerate(items)}


def _difference(
    current: KeyRead, items: Sequence[object]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Added, changed and removed objects between the key's value and ``items``, and
    the diff of each changed one."""
    old: dict[str, object] = {}
    if current.value:
        import yaml

        from podsync.load.schema._yaml import _decode, _Invalid, _load_documents

        try:
            old = _by_name(list(_flatten(_load_documents(_decode(current.value)))))
        except (_Invalid, ValueError, yaml.YAMLError):  # not YAML: everything is new
            old = {}
    new = _by_name(items)
    added = tuple(n for n in new if n not in old)
    removed = tuple(n for n in old if n not in new)
    changed: list[str] = []
    diffs: list[str] = []
    for name, item in new.items():
        if name in old and _canonical(old[name]) != _canonical(item):
            changed.append(name)
            if name.startswith("secret "):
                diffs.append("(a Secret's values are not shown)")
                continue
            diffs.append(
                "\n".join(
                    difflib.unified_diff(
                        _pretty(old[name]).splitlines(),
                        _pretty(item).splitlines(),
                        "published",
                        "sources",
                        lineterm="",
                    )
                )
            )
    return added, tuple(changed), removed, tuple(diffs)


def _canonical(item: object) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def _pretty(item: object) -> str:
    return json.dumps(item, sort_keys=True, indent=2, ensure_ascii=False, default=str)
