"""The streams of the loader: one YAML stream each (a file, one file of a directory, a
URL's body, an etcd key, standard input), from its bytes to its pods.

``_load_stream`` reads a stream's YAML documents; ``_objects_of`` reads the ConfigMaps,
Secrets and claims of all streams first (a pod may use an object of any of them);
``_converted`` / ``_parse_documents`` convert one stream's pods with them
(``_convert_early`` converts a stream that reads no object as soon as it is read, and
drops its documents); ``_duplicates_in`` finds the pods defined twice, each at its later
definition; ``_warned`` hands the pods' warning lines on. ``_config`` wires them into
``load_pods`` and ``parse_pods``, ``_bad_files`` takes the good streams when some are
bad, and ``_source_set`` keeps each stream's last good state in the loop.

Layering: below ``_config``, ``_bad_files`` and ``_source_set``; above ``_sources`` (the
bytes) and ``schema`` / ``convert`` (imported where they are used: ``import podsync``
does not load PyYAML). No I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, cast

import attrs

from podsync.exceptions import ConfigError, Problem
from podsync.load._sources import FileKey
from podsync.model._pod import Pod

if TYPE_CHECKING:
    from podsync.load.convert._document import _Context
    from podsync.load.convert._objects import _Objects

__all__: list[str] = []

#: The host's key for Secret digests, or a function that reads it (``load_pods``).
SecretKey = bytes | Callable[[], bytes] | None


@attrs.frozen
class _Parsed:
    """One version of a parsed file: what it gave."""

    key: FileKey
    load_problems: tuple[Problem, ...]  # reading the stream as YAML
    object_items: tuple[tuple[str, str, object], ...]  # its ConfigMaps and Secrets
    found: tuple[_Found, ...]
    problems: tuple[Problem, ...]  # converting its pods


_LOGGER = logging.getLogger("podsync")


def _result(
    found: Sequence[_Found], problems: list[Problem], on_warning: Callable[[str], object] | None
) -> tuple[Pod, ...]:
    """The pods found, after their warnings; or every problem, duplicates included."""
    problems.extend(_duplicates(found))
    if problems:
        raise ConfigError(problems)
    return _warned(found, on_warning)


def _warned(found: Sequence[_Found], on_warning: Callable[[str], object] | None) -> tuple[Pod, ...]:
    """The pods found, after their warnings (to ``on_warning``, else the logger)."""
    for f in found:
        if f.warning:
            line = f"{f.source_name}: {f.warning}" if f.source_name else f.warning
            if on_warning is not None:
                on_warning(line)
            else:
                _LOGGER.warning("%s", line)
    return tuple(f.pod for f in found)


@attrs.frozen
class _Found:
    """A pod and where it was defined, for duplicate messages."""

    pod: Pod
    source_name: str
    name_path: str
    uid_path: str  # the name's path when the uid was derived
    warning: str = ""  # the fields ignored, "pod default/web: ignoring ..."

    def place(self, path: str) -> str:
        return f"{self.source_name}: {path}" if self.source_name else path


@attrs.define
class _Stream:
    """One source's YAML documents, with its context and the problems found in it.

    A stream the cache vouches for (``entry``) has no documents: its objects and its
    pods are the entry's."""

    source_name: str
    documents: list[object]
    context: _Context | None  # None: unreadable, or given by the cache
    problems: list[Problem]
    key: FileKey | None = None  # a regular file's version, for the cache
    entry: _Parsed | None = None  # what the cache holds for it, when it is unchanged
    # Converted as soon as it was read (``_convert_early``): its pods and problems, and
    # its ConfigMaps and Secrets (its documents are dropped).
    early: tuple[list[_Found], list[Problem]] | None = None
    object_items: tuple[tuple[str, str, object], ...] | None = None


class _ReadsObjects(Exception):
    """Stops a conversion that reads the ConfigMaps or Secrets before all are known."""


class _Unknown:
    """Stands for the ConfigMaps and Secrets while a stream is converted before every
    source is read: the first use of them marks it (``used``) and stops the conversion,
    since a later source may hold what it reads. A conversion that never touches them
    gives what it would give with all of them."""

    def __init__(self) -> None:
        self.used = False

    def __getattr__(self, name: str) -> object:
        self.used = True
        raise _ReadsObjects(name)


def _convert_early(stream: _Stream) -> _Stream:
    """The stream, its pods converted now when they read no ConfigMap or Secret (then
    its documents are dropped: only its objects are kept); otherwise unchanged, to be
    converted by ``_read_streams`` once every source's objects are known."""
    if stream.context is None or stream.entry is not None:
        return stream
    unknown = _Unknown()
    context = attrs.evolve(stream.context, objects=cast("_Objects", unknown))
    try:
        early = _parse_documents(stream.documents, stream.source_name, context)
    except _ReadsObjects:
        return stream
    if unknown.used:  # something caught the stop: the result cannot be trusted
        return stream
    stream.object_items = _object_items(stream)
    stream.early = early
    stream.documents = []
    return stream


def _load_stream(data: str | bytes, source_name: str, context: _Context) -> _Stream:
    """The YAML documents of one stream, or none and its problem."""
    # Imported on the first stream: ``import podsync`` does not load PyYAML.
    import yaml

    from podsync.load.schema._yaml import _decode, _Invalid, _load_documents, _yaml_message

    try:
        text = _decode(data) if isinstance(data, bytes) else data
        documents = _load_documents(text)
    except _Invalid as exc:
        return _Stream(source_name, [], None, [Problem(source_name, "", str(exc))])
    except yaml.YAMLError as exc:
        # The stream's structure cannot be trusted past a YAML error: report it alone.
        return _Stream(source_name, [], None, [Problem(source_name, "", _yaml_message(exc))])
    if all(document is None for document in documents):
        problem = Problem(source_name, "", "no pods found (the source is empty)")
        return _Stream(source_name, [], None, [problem])
    return _Stream(source_name, list(documents), context, [])


def _items(documents: Sequence[object]) -> Iterator[tuple[str, str, object]]:
    """(document prefix, root path, item) for each item of each non-empty document."""
    for number, document in enumerate(documents, start=1):
        if document is None:  # an empty document between two "---"
            continue
        prefix = f"document {number}: " if len(documents) > 1 else ""
        items = document if isinstance(document, list) else [document]
        for i, item in enumerate(items):
            yield prefix, (f"$[{i}]" if isinstance(document, list) else "$"), item


def _object_items(stream: _Stream) -> tuple[tuple[str, str, object], ...]:
    """The stream's ConfigMaps and Secrets, as ``_items`` gives them."""
    if stream.entry is not None:
        return stream.entry.object_items
    if stream.object_items is not None:
        return stream.object_items
    return tuple(i for i in _items(stream.documents) if _object_kind(i[2]) is not None)


def _objects_of(streams: Sequence[_Stream], secret_key: SecretKey = None) -> _Objects:
    """The ConfigMaps and Secrets of all streams (their problems go to their streams),
    with the host's digest key when there is a Secret among them.

    They are read before any pod, so that a pod may refer to an object of any file or
    document, before or after it."""
    from podsync.load.convert._objects import _Claim, _ConfigMap, _Objects, _read_object

    objects = _Objects()
    placed: dict[tuple[str, str, str], str] = {}  # (kind, namespace, name) -> where
    for stream in streams:
        for prefix, root, item in _object_items(stream):
            kind = _object_kind(item)
            assert kind is not None
            out: list[tuple[str, str]] = []
            obj = _read_object(item, kind, root, out)
            stream.problems.extend(Problem(stream.source_name, prefix + p, m) for p, m in out)
            if obj is None:
                continue
            where = f"{stream.source_name}: " if stream.source_name else ""
            here = f"{where}{prefix}{root}.metadata.name"
            first = placed.setdefault((kind, obj.namespace, obj.name), here)
            if first != here:
                stream.problems.append(
                    Problem(
                        stream.source_name,
                        f"{prefix}{root}.metadata.name",
                        f"duplicate {kind} {obj.key} (first at {first})",
                    )
                )
            elif isinstance(obj, _ConfigMap):
                objects.config_maps[obj.namespace, obj.name] = obj
            elif isinstance(obj, _Claim):
                objects.claims[obj.namespace, obj.name] = obj
            else:
                objects.secrets[obj.namespace, obj.name] = obj
    if objects.secrets and secret_key is not None:
        # Only then: no pod can use a Secret's value without a Secret in the sources, and
        # the command line makes the key file on first use.
        objects.secret_key = secret_key() if callable(secret_key) else secret_key
    return objects


def _once(secret_key: SecretKey) -> SecretKey:
    """``secret_key``, a function of it called at most once."""
    if not callable(secret_key):
        return secret_key
    key = secret_key
    known: list[bytes] = []

    def read() -> bytes:
        if not known:
            known.append(key())
        return known[0]

    return read


def _converted(
    stream: _Stream, objects: _Objects
) -> tuple[_Parsed | None, Sequence[_Found], Sequence[Problem]]:
    """The pods of one stream and the problems of converting them, given the objects
    of all streams; with the cache's entry for it (a regular file), new or the one that
    vouched for it."""
    entry = stream.entry
    if entry is not None:
        return entry, entry.found, entry.problems
    stream_found: Sequence[_Found] = ()
    stream_problems: Sequence[Problem] = ()
    if stream.early is not None:
        stream_found, stream_problems = stream.early
    elif stream.context is not None:
        stream_found, stream_problems = _parse_documents(
            stream.documents,
            stream.source_name,
            attrs.evolve(stream.context, objects=objects),
        )
    if stream.key is not None:
        entry = _Parsed(
            stream.key,
            tuple(p for p in stream.problems if p.path == ""),
            _object_items(stream),
            tuple(stream_found),
            tuple(stream_problems),
        )
    return entry, stream_found, stream_problems


def _object_kind(item: object) -> str | None:
    """``ConfigMap``, ``Secret`` or ``PersistentVolumeClaim`` for a document of that kind,
    else ``None``."""
    if isinstance(item, dict):
        kind = item.get("kind")
        if kind in ("ConfigMap", "Secret", "PersistentVolumeClaim"):
            return str(kind)
    return None


def _parse_documents(
    documents: Sequence[object], source_name: str, context: _Context
) -> tuple[list[_Found], list[Problem]]:
    """The pods of one stream's documents and the problems found in them (its
    ConfigMaps and Secrets are skipped: ``_read_streams`` read them first)."""
    from podsync.load.convert._document import _read_document

    found: list[_Found] = []
    problems: list[Problem] = []
    for prefix, root, item in _items(documents):
        if _object_kind(item) is not None:
            continue
        out: list[tuple[str, str]] = []
        for read in _read_document(item, root, context, out):
            found.append(
                _Found(
                    read.pod,
                    source_name,
                    prefix + read.name_path,
                    prefix + read.uid_path,
                    read.warning,
                )
            )
        problems.extend(Problem(source_name, prefix + path, message) for path, message in out)
    return found, problems


def _duplicates(found: Sequence[_Found]) -> list[Problem]:
    """Pods defined twice: the same namespace/name, or the same uid (both places named)."""
    return [problem for _, problem in _duplicates_in((0, f) for f in found)]


def _duplicates_in(found: Iterable[tuple[int, _Found]]) -> list[tuple[int, Problem]]:
    """Pods defined twice, each problem with the number its later definition came with
    (its stream): the first definition is the one that counts."""
    problems: list[tuple[int, Problem]] = []
    by_key: dict[str, _Found] = {}
    by_uid: dict[str, _Found] = {}
    for number, f in found:
        first = by_key.setdefault(f.pod.key, f)
        if first is not f:
            message = f"duplicate pod {f.pod.key} (first at {first.place(first.name_path)})"
            problems.append((number, Problem(f.source_name, f.name_path, message)))
            continue
        first = by_uid.setdefault(f.pod.uid, f)
        if first is not f:
            message = (
                f"duplicate uid {f.pod.uid!r}: already used by pod {first.pod.key} "
                f"(at {first.place(first.uid_path)})"
            )
            problems.append((number, Problem(f.source_name, f.uid_path, message)))
    return problems
