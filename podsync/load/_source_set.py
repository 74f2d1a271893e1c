"""The sources of the continuous loop: polled one by one, each file with its last good
state.

A loop must keep every pod in shape while one file is broken: the seed's ``syncLoop``
kept ``last[source]`` - what each source said last (reference §6, "syncLoop keeps
last[source]") - and the modern kubelet's file source runs the pods of the other files
of a directory when it cannot process one (``extractFromDir``,
``pkg/kubelet/config/file.go``). Here each *file* keeps its *last good* state (a file
source, one file of a directory, a URL's body, an etcd key: one stream each):

* ``poll`` reads one source (I/O: a file, a directory, a URL) through its reader
  (``_source_reads``), with the parse cache's rule: a regular file whose ``FileKey`` did
  not change is not read again, an HTTP body equal to the last one is not parsed again.
  A source that cannot be read is an error (it keeps all it had: never "no pods"); a
  file of a directory that cannot be read, or whose YAML does not load, is one bad
  file.
* ``update`` merges what the polls gave. The ConfigMaps and Secrets of *every* file
  are read first (as ``load_pods`` reads them: a pod may use an object of another
  source), then each file's pods are converted with them. A changed file with a
  problem is refused as a whole - it keeps the pods it had, and its objects do not
  count - and the merge is made again without it; the other files of its directory are
  taken. A file that did not change but whose pods no longer convert (a volume's
  ConfigMap was taken away elsewhere) keeps its last good pods too, and reports why. A
  file that left its directory takes its pods with it.
* A pod defined twice (the same ``namespace/name`` or uid in two places) is refused in
  the file that changed, so a running pod is never taken over by a new definition
  elsewhere; the rule and the message are ``load_pods``'s.
* A source never read successfully, or with a bad file that was never good (at the
  first start: the pods it may hold are unknown), is not ready:
  ``PlanOptions.ready_sources`` keeps pods of its kind from being deleted (the
  kubelet's per-source readiness), so a bad file never causes a deletion. Its errors
  are reported on every poll until it is fixed, renamed to start with a dot (not read,
  as the kubelet's file source) or removed.

An etcd source (``etcd://HOST:PORT/KEY``, ``_etcd_watch.EtcdSource``) is read the same
way by ``poll``; in the loop's ``run()`` it is followed instead (``follows``,
``follow``): a watch hands each change to the loop as it happens.

Standard input (``-``) is read once and cannot be polled: it is refused.

Pods given in memory (``Reconciler(pods=)``: a sequence, a callable, a ``PodSet``) are
one more source, ``<pods>``, of kind ``api`` (``_pod_set.MemoryReader``): its stream
holds pods rather than YAML documents, and merges, keeps its last good state and takes
part in the duplicate rule as a file does; a ``PodSet`` is followed as etcd is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.exceptions import Problem
from podsync.host._node import NodeInfo
from podsync.load._pod_set import POD_SOURCE_NAME, MemoryReader, PodsArgument
from podsync.load._source_reads import FileReader, SourceRead, source_kind
from podsync.load._sources import DEFAULT_MAX_BYTES, HttpOptions, shown_url
from podsync.load._streams import SecretKey, _Found, _objects_of, _once, _parse_documents, _Stream
from podsync.model._pod import Pod

if TYPE_CHECKING:
    import threading

    from podsync.etcd._urls import EtcdOptions
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


#: One stream of the loop: its source, and its name there (the file's path).
_Unit = tuple[str, str]


@attrs.define
class _State:
    """A source's last good state, file by file, and what is wrong with it now."""

    # By stream name, in order: each file's last good stream, or None for a bad file
    # that was never good. None: the source was never read successfully.
    streams: dict[str, _Stream | None] | None = None
    found: dict[str, tuple[_Found, ...]] = attrs.Factory(dict)  # by stream name
    read_error: str = ""  # the last poll could not read the source
    bad: dict[str, str] = attrs.Factory(dict)  # files not taken as they are now: why
    # The files refused for what their pods say (tried again at each merge: what they
    # clash with may have gone), and the unchanged ones whose pods no longer convert.
    refused: dict[str, _Stream] = attrs.Factory(dict)
    broken: dict[str, str] = attrs.Factory(dict)

    @property
    def error(self) -> str:
        return self.read_error or "; ".join([*self.bad.values(), *self.broken.values()])

    @property
    def ready(self) -> bool:
        """Read, and every file's pods known (each was good once)."""
        return self.streams is not None and None not in self.streams.values()


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
        http: HttpOptions | None = None,
        pods: PodsArgument | None = None,
    ) -> None:
        if isinstance(sources, str):
            raise TypeError("sources must be a sequence of sources, not a single str")
        given = tuple(os.fspath(s) for s in sources)
        if "-" in given:
            raise ValueError("standard input ('-') is read once and cannot be polled")
        # A source is known by its shown form (``shown_url``) in everything the loop
        # says of it - notices, status, metrics - so that a URL's credentials stay in its
        # reader alone.
        names = tuple(shown_url(s) for s in given)
        if len(set(names)) != len(names):
            raise ValueError("a source is given twice (URLs are compared without credentials)")
        the_node = node if node is not None else NodeInfo.this_host()
        if pods is not None:
            if POD_SOURCE_NAME in names:
                raise ValueError(f"{POD_SOURCE_NAME!r} names the pods given in memory")
            names += (POD_SOURCE_NAME,)
        self.names = names
        self._readers: dict[str, FileReader | EtcdSource | MemoryReader] = {}
        if pods is not None:
            self._readers[POD_SOURCE_NAME] = MemoryReader(pods)
        for s, name in zip(given, names[: len(given)], strict=True):
            if source_kind(s) == "etcd":
                from podsync.load._etcd_watch import EtcdSource

                self._readers[name] = EtcdSource(s, the_node, etcd, max_bytes)
            else:
                self._readers[name] = FileReader(s, the_node, max_bytes, http_timeout, http)
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
        """Whether ``source`` is followed (``follow``) rather than polled: etcd, and
        a ``PodSet``."""
        reader = self._readers[source]
        return reader.follows if isinstance(reader, MemoryReader) else reader.kind == "etcd"

    def read_at_every_tick(self, source: str) -> bool:
        """Whether ``source`` costs nothing to read - pods given in memory as a
        sequence or a ``PodSet``, not a function - so that ``tick()`` reads it at every
        call."""
        reader = self._readers[source]
        return isinstance(reader, MemoryReader) and not reader.calls

    @property
    def kinds(self) -> frozenset[str]:
        """The pod sources (``file``, ``http``, ``etcd``, ``api``) of the sources."""
        return frozenset(reader.kind for reader in self._readers.values())

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
        """The sources never read successfully, or with a bad file that was never good
        (the pods it may hold are unknown)."""
        return frozenset(s for s, state in self._states.items() if not state.ready)

    def kinds_not_ready(self) -> frozenset[str]:
        """The pod sources (``file``, ``http``, ``etcd``, ``api``) with a source not
        ready: pods of these may be that source's, and are not deleted."""
        return frozenset(self._readers[s].kind for s in self.not_ready)

    def update(self, reads: Mapping[str, SourceRead]) -> MergeResult:
        """Take what ``reads`` (polls of some of the sources) give, with the last good
        state of the others; ``desired`` becomes the merged pods.

        Returns:
            Whether the desired pods changed, and the errors of the polled sources
            and of those whose files the merge found broken (a source in error keeps
            its last good pods; a bad file keeps its own).
        """
        listings: dict[str, SourceRead] = {}
        for source, read in reads.items():
            state = self._states[source]
            state.read_error = read.error
            if not read.error and (read.changed or state.streams is None):
                listings[source] = read
        before = self.desired
        had = {s: state.error for s, state in self._states.items()}
        if listings or self._objects is None:
            self._merge(listings)
        # The polled sources in error (a bad file is reported on every poll until it is
        # fixed), and those the merge found broken.
        errors = {
            s: state.error
            for s, state in self._states.items()
            if state.error and (s in reads or state.error != had[s])
        }
        return MergeResult(self.desired != before, errors)

    def _merge(self, listings: Mapping[str, SourceRead]) -> None:
        # The files of each source from now on: a new listing's, else the last ones.
        names = {
            s: list(listings[s].names if s in listings else self._states[s].streams or ())
            for s in self.names
        }
        # The files proposed (changed, or refused before: a duplicate may have gone
        # elsewhere), and the bad ones with why.
        candidates: dict[_Unit, _Stream] = {}
        bad: dict[_Unit, str] = {}
        for source in self.names:
            state = self._states[source]
            last = state.streams or {}
            if source in listings:
                read = listings[source]
                for stream in read.streams:
                    if stream is not last.get(stream.source_name):
                        candidates[source, stream.source_name] = stream
                bad.update(((source, name), why) for name, why in read.bad.items())
            else:
                candidates.update(((source, n), stream) for n, stream in state.refused.items())
                bad.update(((source, n), w) for n, w in state.bad.items() if n not in state.refused)
        refused: dict[_Unit, _Stream] = {}
        while True:
            objects, found, problems = self._convert(names, candidates)
            now = [u for u in candidates if problems[u]]
            if not now:
                break
            # A changed file with a problem is refused whole, and its objects no longer
            # count: the merge is made again without it.
            for unit in now:
                bad[unit] = "; ".join(problems[unit])
                refused[unit] = candidates.pop(unit)
        warnings: list[str] = []
        for source in self.names:
            state = self._states[source]
            last = state.streams or {}
            if source in listings or state.streams is not None:
                state.streams = {n: candidates.get((source, n), last.get(n)) for n in names[source]}
            state.refused = {n: refused[source, n] for n in names[source] if (source, n) in refused}
            state.bad = {n: bad[source, n] for n in names[source] if (source, n) in bad}
            state.broken = {}
            for name in names[source]:
                unit = (source, name)
                if unit in bad:
                    continue  # keeps its last good pods
                if problems[unit]:
                    # Unchanged, but its pods no longer convert (an object it uses
                    # changed elsewhere): it keeps its last good pods.
                    state.broken[name] = "; ".join(problems[unit])
                    continue
                if unit in candidates:
                    warnings.extend(
                        f"{f.source_name}: {f.warning}" for f in found[unit] if f.warning
                    )
                state.found[name] = found[unit]
            for name in set(state.found) - set(names[source]):
                del state.found[name]  # left its directory: its pods go
        self._objects = objects
        self.desired = tuple(
            f.pod for s in self.names for n in names[s] for f in self._states[s].found.get(n, ())
        )
        if self._on_warning is not None:
            for line in warnings:
                self._on_warning(line)

    def _convert(
        self, names: Mapping[str, Sequence[str]], candidates: Mapping[_Unit, _Stream]
    ) -> tuple[_Objects, dict[_Unit, tuple[_Found, ...]], dict[_Unit, list[str]]]:
        """Every file's pods, with the candidates' streams in place of their last good
        ones: the objects, and the pods found and the problems by file."""
        active: dict[_Unit, _Stream] = {}
        for source in self.names:
            last = self._states[source].streams or {}
            for name in names[source]:
                stream = candidates.get((source, name), last.get(name))
                if stream is not None:
                    # Fresh problem lists: reading the objects appends to them.
                    active[source, name] = attrs.evolve(stream, problems=list(stream.problems))
        objects = _objects_of(list(active.values()), self._secret_key)
        found: dict[_Unit, tuple[_Found, ...]] = {}
        problems: dict[_Unit, list[str]] = {}
        for unit, stream in active.items():
            state = self._states[unit[0]]
            out: list[str] = [str(p) for p in stream.problems]
            known = state.found.get(unit[1])
            if (
                unit not in candidates
                and objects == self._objects
                and known is not None
                and unit[1] not in state.broken
            ):
                found[unit] = known  # nothing it reads changed
            elif stream.early is not None:
                found[unit] = tuple(stream.early[0])  # pods given in memory
            elif stream.context is None:
                found[unit] = ()
            else:
                context = attrs.evolve(stream.context, objects=objects)
                stream_found, stream_problems = _parse_documents(
                    stream.documents, stream.source_name, context
                )
                found[unit] = tuple(stream_found)
                out.extend(str(p) for p in stream_problems)
            problems[unit] = out
        for source in self.names:
            for name in names[source]:
                found.setdefault((source, name), ())
                problems.setdefault((source, name), [])
        self._blame_duplicates(found, candidates, problems)
        return objects, found, problems

    def _blame_duplicates(
        self,
        found: Mapping[_Unit, Iterable[_Found]],
        candidates: Mapping[_Unit, object],
        problems: dict[_Unit, list[str]],
    ) -> None:
        """A pod defined twice (one ``namespace/name`` or uid, as ``load_pods``'s
        rule) is the fault of the file that changed: the definition that was there
        keeps running. When both changed, the later one is refused."""
        by_key: dict[str, tuple[_Unit, _Found]] = {}
        by_uid: dict[str, tuple[_Unit, _Found]] = {}
        for unit, unit_found in found.items():
            for f in unit_found:
                first = by_key.setdefault(f.pod.key, (unit, f))
                what, path, other_path = f"pod {f.pod.key}", f.name_path, "name"
                if first[1] is f:
                    first = by_uid.setdefault(f.pod.uid, (unit, f))
                    if first[1] is f:
                        continue
                    what, path, other_path = f"uid {f.pod.uid!r}", f.uid_path, "uid"
                earlier, there = first
                there_path = there.name_path if other_path == "name" else there.uid_path
                if unit not in candidates and earlier in candidates:
                    message = f"duplicate {what} (also at {f.place(path)})"
                    problems[earlier].append(str(Problem(there.source_name, there_path, message)))
                else:
                    message = f"duplicate {what} (first at {there.place(there_path)})"
                    problems[unit].append(str(Problem(f.source_name, path, message)))
