"""The sources of the continuous loop: polled one by one, each with its last good state.

``load_pods`` is all or nothing: one bad file fails the whole load, which is right for a
one-shot ``apply`` (nothing half-read is used) and wrong for a loop, where one broken
file would stop every pod from being kept in shape. The seed's ``syncLoop`` kept
``last[source]`` - what each source said last (reference §6, "syncLoop keeps
last[source]") - and here each source keeps its *last good* state:

* ``poll`` reads one source (I/O: a file, a directory, a URL) through its reader
  (``_source_reads``), with the parse cache's rule: a regular file whose ``FileKey`` did
  not change is not read again, an HTTP body equal to the last one is not parsed again.
  A source that cannot be read, or whose YAML does not load, is an error: never "no
  pods".
* ``update`` merges what the polls gave. The ConfigMaps and Secrets of *every* source
  are read first (as ``load_pods`` reads them: a pod may use an object of another
  source), then each source's pods are converted with them. A changed source with a
  problem is refused as a whole - it keeps the pods it had, and its objects do not
  count - and the merge is made again without it. A source that did not change but
  whose pods no longer convert (a ConfigMap it uses was taken away elsewhere) keeps its
  last good pods too, and reports why.
* A pod defined twice (the same ``namespace/name`` or uid in two places) is refused in
  the source that changed, so a running pod is never taken over by a new definition
  elsewhere; the rule and the message are ``load_pods``'s.
* A source never read successfully is not ready: ``PlanOptions.ready_sources`` keeps
  pods of its kind from being deleted (the kubelet's per-source readiness).

An etcd source (``etcd://HOST:PORT/KEY``, ``_etcd_watch.EtcdSource``) is read the same
way by ``poll``; in the loop's ``run()`` it is followed instead (``follows``,
``follow``): a watch hands each change to the loop as it happens.

Standard input (``-``) is read once and cannot be polled: it is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.exceptions import Problem
from podsync.host._node import NodeInfo
from podsync.load._config import SecretKey, _Found, _objects_of, _once, _parse_documents, _Stream
from podsync.load._source_reads import FileReader, SourceRead, source_kind
from podsync.load._sources import DEFAULT_MAX_BYTES
from podsync.model._pod import Pod

if TYPE_CHECKING:
    import threading

    from podsync.load._etcd import EtcdOptions
    from podsync.load._etcd_watch import EtcdSource
    from podsync.load.convert._objects import _Objects

__all__: list[str] = []


@attrs.frozen
class MergeResult:
    """What ``SourceSet.update`` did.

    Attributes:
        desired_changed: the desired pods are not what they were.
        errors: by source, why it was not taken as it is now (it keeps its last
            good pods).
    """

    desired_changed: bool
    errors: Mapping[str, str]


@attrs.define
class _State:
    """A source's last good state, and what is wrong with it now."""

    streams: tuple[_Stream, ...] | None = None  # None: never read successfully
    found: tuple[_Found, ...] = ()
    read_error: str = ""  # the last poll could not read it (or load its YAML)
    content_error: str = ""  # what it holds now is not taken (its last good pods are)

    @property
    def error(self) -> str:
        return self.read_error or self.content_error


class SourceSet:
    """The sources of a loop, in order, each with its last good state.

    ``poll`` may be called from one thread per source; ``update`` and the properties
    from one thread (the loop's)."""

    def __init__(
        self,
        sources: Sequence[str],
        *,
        node: NodeInfo | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        http_timeout: float = 10.0,
        on_warning: Callable[[str], object] | None = None,
        secret_key: SecretKey = None,
        etcd: EtcdOptions | None = None,
    ) -> None:
        if isinstance(sources, str):
            raise TypeError("sources must be a sequence of sources, not a single str")
        names = tuple(os.fspath(s) for s in sources)
        if "-" in names:
            raise ValueError("standard input ('-') is read once and cannot be polled")
        if len(set(names)) != len(names):
            raise ValueError("a source is given twice")
        the_node = node if node is not None else NodeInfo.this_host()
        self.names = names
        self._readers: dict[str, FileReader | EtcdSource] = {}
        for s in names:
            if source_kind(s) == "etcd":
                from podsync.load._etcd_watch import EtcdSource

                self._readers[s] = EtcdSource(s, the_node, etcd, max_bytes)
            else:
                self._readers[s] = FileReader(s, the_node, max_bytes, http_timeout)
        self._states = {s: _State() for s in names}
        self._objects: _Objects | None = None
        self._on_warning = on_warning
        # The host's key for Secret digests (load_pods' secret_key), read at most once.
        self._secret_key = _once(secret_key)
        self.desired: tuple[Pod, ...] = ()

    def poll(self, source: str) -> SourceRead:
        """Read ``source`` (I/O; a URL within the HTTP time-out)."""
        return self._readers[source].poll()

    def follows(self, source: str) -> bool:
        """Whether ``source`` is followed (``follow``) rather than polled: etcd."""
        return self._readers[source].kind == "etcd"

    def follow(
        self,
        source: str,
        emit: Callable[[SourceRead], None],
        stopped: threading.Event,
        note: Callable[[str], None] | None = None,
    ) -> None:
        """Follow ``source`` (one that ``follows``) in this thread until ``stopped`` or
        ``close()``: each change is ``emit``-ted as a read (see ``EtcdSource.follow``)."""
        reader = self._readers[source]
        assert not isinstance(reader, FileReader), "a polled source is not followed"
        reader.follow(emit, stopped, note)

    def close(self) -> None:
        """End the ``follow`` calls and close the sources' connections."""
        for reader in self._readers.values():
            if not isinstance(reader, FileReader):
                reader.close()

    @property
    def not_ready(self) -> frozenset[str]:
        """The sources never read successfully."""
        return frozenset(s for s, state in self._states.items() if state.streams is None)

    def kinds_not_ready(self) -> frozenset[str]:
        """The pod sources (``file``, ``http``, ``etcd``) with a source never read successfully:
        pods of these may be that source's, and are not deleted."""
        return frozenset(self._readers[s].kind for s in self.not_ready)

    def update(self, reads: Mapping[str, SourceRead]) -> MergeResult:
        """Take what ``reads`` (polls of some of the sources) give, with the last good
        state of the others; ``desired`` becomes the merged pods.

        Returns:
            Whether the desired pods changed, and the errors of the polled sources
            (a source in error keeps its last good pods).
        """
        candidates: dict[str, tuple[_Stream, ...]] = {}
        for source, read in reads.items():
            state = self._states[source]
            state.read_error = read.error
            if not read.error and (read.changed or state.streams is None):
                candidates[source] = read.streams
        before = self.desired
        had = {s: state.content_error for s, state in self._states.items()}
        if candidates or self._objects is None:
            self._merge(candidates)
        # The polled sources in error, and those the merge found broken (an object
        # their pods use was taken away elsewhere).
        errors = {
            s: state.error
            for s, state in self._states.items()
            if state.error and (s in reads or state.content_error != had[s])
        }
        return MergeResult(self.desired != before, errors)

    def _merge(self, candidates: dict[str, tuple[_Stream, ...]]) -> None:
        refused_now: set[str] = set()
        while True:
            objects, found, problems = self._convert(candidates)
            refused = [s for s in candidates if problems[s]]
            if not refused:
                break
            # A changed source with a problem is refused whole, and its objects no
            # longer count: the merge is made again without it.
            for source in refused:
                self._states[source].content_error = "; ".join(problems[source])
                del candidates[source]
                refused_now.add(source)
        warnings: list[str] = []
        for source in self.names:
            state = self._states[source]
            if source in candidates:
                state.streams, state.found, state.content_error = (
                    candidates[source],
                    found[source],
                    "",
                )
                warnings.extend(f"{f.source_name}: {f.warning}" for f in found[source] if f.warning)
            elif source in refused_now:
                continue
            elif problems[source]:
                # Unchanged, but its pods no longer convert (an object it uses changed
                # elsewhere): it keeps its last good pods.
                state.content_error = "; ".join(problems[source])
            elif state.streams is not None:
                state.found, state.content_error = found[source], ""
        self._objects = objects
        self.desired = tuple(f.pod for s in self.names for f in self._states[s].found)
        if self._on_warning is not None:
            for line in warnings:
                self._on_warning(line)

    def _convert(
        self, candidates: Mapping[str, tuple[_Stream, ...]]
    ) -> tuple[_Objects, dict[str, tuple[_Found, ...]], dict[str, list[str]]]:
        """Every source's pods, with the candidates' streams in place of their last
        good ones: the objects, and the pods found and the problems by source."""
        active: dict[str, list[_Stream]] = {}
        for source in self.names:
            streams = candidates.get(source, self._states[source].streams)
            # Fresh problem lists: reading the objects appends to them.
            active[source] = [attrs.evolve(s, problems=list(s.problems)) for s in streams or ()]
        objects = _objects_of(
            [s for source in self.names for s in active[source]], self._secret_key
        )
        found: dict[str, tuple[_Found, ...]] = {}
        problems: dict[str, list[str]] = {}
        for source in self.names:
            state = self._states[source]
            out: list[str] = [str(p) for s in active[source] for p in s.problems]
            if (
                source not in candidates
                and objects == self._objects
                and state.streams is not None
                and not state.content_error
            ):
                found[source] = state.found  # nothing it reads changed
            else:
                items: list[_Found] = []
                for stream in active[source]:
                    if stream.context is None:
                        continue
                    context = attrs.evolve(stream.context, objects=objects)
                    stream_found, stream_problems = _parse_documents(
                        stream.documents, stream.source_name, context
                    )
                    items.extend(stream_found)
                    out.extend(str(p) for p in stream_problems)
                found[source] = tuple(items)
            problems[source] = out
        self._blame_duplicates(found, candidates, problems)
        return objects, found, problems

    def _blame_duplicates(
        self,
        found: Mapping[str, Iterable[_Found]],
        candidates: Mapping[str, object],
        problems: dict[str, list[str]],
    ) -> None:
        """A pod defined twice (one ``namespace/name`` or uid, as ``load_pods``'s
        rule) is the fault of the source that changed: the definition that was there
        keeps running. When both changed, the later one is refused."""
        by_key: dict[str, tuple[str, _Found]] = {}
        by_uid: dict[str, tuple[str, _Found]] = {}
        for source in self.names:
            for f in found[source]:
                first = by_key.setdefault(f.pod.key, (source, f))
                what, path, other_path = f"pod {f.pod.key}", f.name_path, "name"
                if first[1] is f:
                    first = by_uid.setdefault(f.pod.uid, (source, f))
                    if first[1] is f:
                        continue
                    what, path, other_path = f"uid {f.pod.uid!r}", f.uid_path, "uid"
                earlier, there = first
                there_path = there.name_path if other_path == "name" else there.uid_path
                if source not in candidates and earlier in candidates:
                    message = f"duplicate {what} (also at {f.place(path)})"
                    problems[earlier].append(str(Problem(there.source_name, there_path, message)))
                else:
                    message = f"duplicate {what} (first at {there.place(there_path)})"
                    problems[source].append(str(Problem(f.source_name, path, message)))
