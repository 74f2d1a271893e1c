"""Pods held in memory as a source of the continuous loop: ``PodSet`` (a mutable set a
controller changes while the loop runs) and the loop's reader of ``Reconciler(pods=)``.

The kubelet takes pods from three kinds of source and merges them (``PodConfig``,
``pkg/kubelet/config/config.go``): files, a URL, and the API server. A program that
embeds podsync holds its desired pods as ``Pod`` objects, as the API server's source
hands the kubelet pod objects rather than files; so a pod given in memory is a pod of
source ``api`` (``Pod.source``'s default, and part of its full name, ``pod_full_name``).

The reader (``MemoryReader``) is a source of the loop like a file (``_source_set``):

* ``poll`` reads what the caller gives - a fixed sequence, what a callable returns, or
  a ``PodSet``'s current pods - as one stream of pods, without YAML. What cannot be
  read (the callable raised, returned something that is not pods, or a pod of another
  source) is an error of the source: it keeps its last good pods and the loop reports
  why, never "no pods" (the kubelet's sources keep their last state when a read fails:
  ``syncLoop`` keeps ``last[source]``, reference §6).
* A ``PodSet`` is followed (``follows``): each change wakes the reader's thread, which
  hands the new pods to the loop at once, as an etcd watch does, rather than at the
  next source period.
* It is ready as soon as it was read once (the kubelet's per-source readiness,
  ``PodConfig.SeenAllSources``: the API server's source is seen once it sent its first
  update); a callable that fails at its first call leaves it not ready, and pods of
  source ``api`` are then not deleted.

A pod defined twice - twice in memory, or in memory and in a file - follows the loop's
one rule (``SourceSet._blame_duplicates``): the definition that changed is refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from podsync.load._streams import _Found, _Stream
from podsync.model._pod import Pod

if TYPE_CHECKING:
    from podsync.load._source_reads import SourceRead

__all__ = ["PodSet"]

#: The name the loop gives the in-memory source in its notices, status and metrics.
POD_SOURCE_NAME = "<pods>"

#: The pod source of pods given in memory (``Pod.source``).
MEMORY_KIND = "api"


class PodSet:
    """A desired set of pods held in memory, which a program changes while a
    ``Reconciler(pods=...)`` runs: each change wakes the loop, which syncs it at once.

    Pods are known by ``Pod.key`` (``namespace/name``): ``add`` replaces the pod of the
    same key. Every method may be called from any thread; a reader sees each change
    whole (``set`` replaces the set in one step).

    Example::

        desired = podsync.PodSet([web])
        with podsync.Reconciler(pods=desired, runtime=runtime):
            desired.add(attrs.evolve(web, containers=(new_app,)))  # synced at once
            desired.remove("default/web")  # stopped at once

    Args:
        pods: the pods at first.

    Raises:
        TypeError: an element is not a ``Pod``.
        ValueError: two pods have one key, or a pod's ``source`` is not ``api`` (pods
            given in memory are of the API's source; see ``Pod.source``).
    """

    def __init__(self, pods: Iterable[Pod] = ()) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, Pod] = _by_key(pods)
        self._version = 0
        self._listeners: list[Callable[[], None]] = []

    def set(self, pods: Iterable[Pod]) -> None:
        """Make ``pods`` the whole set (the same errors as the constructor; on an error
        the set is unchanged)."""
        by_key = _by_key(pods)
        with self._lock:
            self._pods = by_key
        self._changed()

    def add(self, pod: Pod) -> None:
        """Add ``pod``, or replace the pod of its key (the same errors as the
        constructor)."""
        _check_pod(pod, "pod")
        with self._lock:
            self._pods[pod.key] = pod
        self._changed()

    def remove(self, key: str) -> bool:
        """Remove the pod ``key`` (``namespace/name``); whether it was there."""
        with self._lock:
            gone = self._pods.pop(key, None) is not None
        if gone:
            self._changed()
        return gone

    def pods(self) -> tuple[Pod, ...]:
        """The pods now, in the order they were first added."""
        with self._lock:
            return tuple(self._pods.values())

    def get(self, key: str) -> Pod | None:
        """The pod ``key`` (``namespace/name``), or ``None``."""
        with self._lock:
            return self._pods.get(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)

    def __iter__(self) -> Iterator[Pod]:
        return iter(self.pods())

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._pods

    def __repr__(self) -> str:
        with self._lock:
            return f"PodSet({sorted(self._pods)!r})"

    def _snapshot(self) -> tuple[int, tuple[Pod, ...]]:
        with self._lock:
            return self._version, tuple(self._pods.values())

    def _listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after each change (from the changing thread); returns the
        function that stops it."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def _changed(self) -> None:
        with self._lock:
            self._version += 1
            listeners = list(self._listeners)
        for listener in listeners:
            listener()


def _check_pod(pod: object, what: str) -> Pod:
    if not isinstance(pod, Pod):
        raise TypeError(f"{what} must be a podsync.Pod, got {type(pod).__name__}")
    if pod.source != MEMORY_KIND:
        raise ValueError(
            f"{what} {pod.key}: a pod given in memory is of source {MEMORY_KIND!r}, got "
            f"source {pod.source!r} (give files as the loop's sources instead)"
        )
    return pod


def _by_key(pods: Iterable[Pod]) -> dict[str, Pod]:
    if isinstance(pods, (str, bytes, Pod)):
        raise TypeError(f"pods must be an iterable of podsync.Pod, got {type(pods).__name__}")
    by_key: dict[str, Pod] = {}
    for i, pod in enumerate(pods):
        _check_pod(pod, f"pods[{i}]")
        if pod.key in by_key:
            raise ValueError(f"pods[{i}]: pod {pod.key} is given twice")
        by_key[pod.key] = pod
    return by_key


#: What ``Reconciler(pods=...)`` takes: pods, a function that returns them, or a PodSet.
PodsArgument = Sequence[Pod] | Callable[[], Iterable[Pod]] | PodSet


class MemoryReader:
    """The loop's reader of pods given in memory (``Reconciler(pods=)``): one stream,
    ``POD_SOURCE_NAME``, of source kind ``api``."""

    kind = MEMORY_KIND

    def __init__(self, pods: PodsArgument) -> None:
        self._given: Callable[[], Iterable[Pod]]
        #: The pods are what a function of the caller returns (not read at no cost).
        self.calls = not isinstance(pods, PodSet) and callable(pods)
        if isinstance(pods, PodSet):
            self._given = pods.pods
        elif callable(pods):
            self._given = pods
        else:
            fixed = tuple(_by_key(pods).values())  # checked now: refused at construction
            self._given = lambda: fixed
        self.pod_set = pods if isinstance(pods, PodSet) else None
        self._last: tuple[Pod, ...] | None = None
        self._stream: _Stream | None = None
        self._wake = threading.Event()
        self._closed = False

    @property
    def follows(self) -> bool:
        """A ``PodSet`` is followed (each change is handed on at once)."""
        return self.pod_set is not None

    def poll(self) -> SourceRead:
        """The pods given now; an error (the last good pods are kept) when they cannot
        be read."""
        from podsync.load._source_reads import SourceRead

        try:
            pods = tuple(_by_key(self._given()).values())
        except Exception as exc:  # the caller's function: any failure is a source error
            message = f"{POD_SOURCE_NAME}: cannot read: {type(exc).__name__}: {exc}"
            return SourceRead((), False, message)
        changed = self._stream is None or pods != self._last
        if changed:
            found = [
                _Found(pod, POD_SOURCE_NAME, f"$[{i}].metadata.name", f"$[{i}].metadata.uid")
                for i, pod in enumerate(pods)
            ]
            self._stream = _Stream(POD_SOURCE_NAME, [], None, [], early=(found, []))
            self._last = pods
        assert self._stream is not None
        return SourceRead((self._stream,), changed)

    def follow(
        self,
        emit: Callable[[SourceRead], None],
        stopped: threading.Event,
        note: Callable[[str], None] | None = None,
    ) -> None:
        """Hand each change of the ``PodSet`` on (``emit``) as it happens, in this
        thread, until ``stopped`` or ``close()``; the first read at once."""
        assert self.pod_set is not None, "only a PodSet is followed"
        stop_listening = self.pod_set._listen(self._wake.set)
        try:
            while not (stopped.is_set() or self._closed):
                self._wake.clear()
                emit(self.poll())
                self._wake.wait()
        finally:
            stop_listening()

    def close(self) -> None:
        """End ``follow``."""
        self._closed = True
        self._wake.set()
