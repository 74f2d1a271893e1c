"""Per-pod workers: the seed's ``podWorkers`` (reference §2.3), with a bound and a queue.

The seed ran each pod's ``syncPod`` on a goroutine of its own and *dropped* a request
for a pod whose worker was still busy; the next period's sync picked the change up, 10 s
later. Here a request for a busy pod is kept - once: while a pod's job runs, the latest
request waits behind it (``again``), and earlier waiting ones are replaced, so a pod is
never synced twice at once and never more than once behind. Pods run in parallel on at
most ``max_workers`` threads; one slow pod holds one thread, never the others.

Contract: a job is a callable with no arguments; an exception it raises is reported to
``on_error`` and the worker goes on. No clock is read here: waits are on conditions,
with the caller's timeouts.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Collection

import attrs

__all__: list[str] = []

Job = Callable[[], None]


@attrs.define
class _Key:
    queued: Job | None = None  # waiting for a thread, not started
    running: bool = False
    again: Job | None = None  # to run once the running job is done
    first: bool = False  # the waiting job goes before the others (``submit(first=)``)


class PodWorkers:
    """Jobs by key (a pod's uid), one at a time per key, on at most ``max_workers``
    threads (started as needed, daemon threads: a stuck engine call never keeps the
    process alive)."""

    def __init__(
        self,
        max_workers: int,
        *,
        on_error: Callable[[str, BaseException], None] | None = None,
        name: str = "podsync-pod",
    ) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers!r}")
        self._max = max_workers
        self._on_error = on_error
        self._name = name
        self._cond = threading.Condition()
        self._keys: dict[str, _Key] = {}
        self._ready: collections.deque[str] = collections.deque()
        self._threads: list[threading.Thread] = []
        self._idle_threads = 0
        self._closed = False

    def submit(self, key: str, job: Job, *, again: Job | None = None, first: bool = False) -> bool:
        """Run ``job`` for ``key``.

        When a job of ``key`` is waiting for a thread, ``job`` replaces it. When one is
        running, ``again`` (``job`` when not given) runs after it, replacing whatever
        was to run after it: a caller whose ``job`` was made from a state the running
        job is changing passes a fresh start as ``again``.

        ``first``: the job, or ``again``, waits for a thread before every other key's
        (the loop's sync of a pod whose container died: a restart does not queue behind
        the other pods' syncs, as each pod has a worker of its own in the kubelet,
        ``pkg/kubelet/pod_workers.go``); the others keep their order.

        Returns:
            False when the workers are closed (nothing is taken).
        """
        with self._cond:
            if self._closed:
                return False
            state = self._keys.get(key)
            if state is None:
                state = self._keys[key] = _Key()
            if state.running:
                state.again = again if again is not None else job
                state.first = first
            elif state.queued is not None:
                state.queued = job
                if first and not state.first:
                    state.first = True
                    self._ready.remove(key)
                    self._ready.appendleft(key)
            else:
                state.queued, state.first = job, first
                self._enqueue(key, first)
                self._wake_or_start()
            return True

    def running(self, key: str) -> bool:
        """Whether a job of ``key`` is running now."""
        with self._cond:
            state = self._keys.get(key)
            return state is not None and state.running

    def wait_idle(
        self, timeout: float | None = None, *, keys: Collection[str] | None = None
    ) -> bool:
        """Wait until no job of ``keys`` (of any key when ``None``) runs or waits, at
        most ``timeout`` seconds; return whether they are idle."""

        def idle() -> bool:
            if keys is None:
                return not self._keys
            return not any(k in self._keys for k in keys)

        with self._cond:
            return self._cond.wait_for(idle, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Take no more jobs, drop those not started, and wait at most ``timeout``
        seconds for the running ones; return whether they all finished. A job that
        outlives the bound goes on in its (daemon) thread."""
        with self._cond:
            self._closed = True
            self._ready.clear()
            for key in list(self._keys):
                state = self._keys[key]
                state.queued = state.again = None
                if not state.running:
                    del self._keys[key]
            self._cond.notify_all()
            return self._cond.wait_for(lambda: not self._keys, timeout)

    # -- the threads ------------------------------------------------------------------

    def _enqueue(self, key: str, first: bool) -> None:
        # Called with the lock held.
        if first:
            self._ready.appendleft(key)
        else:
            self._ready.append(key)

    def _wake_or_start(self) -> None:
        # Called with the lock held and a key just made ready.
        self._cond.notify_all()
        if self._idle_threads >= len(self._ready):
            return
        self._threads = [t for t in self._threads if t.is_alive()]
        if len(self._threads) < self._max:
            thread = threading.Thread(
                target=self._work, name=f"{self._name}-{len(self._threads) + 1}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _next(self) -> tuple[str, Job] | None:
        with self._cond:
            while True:
                if self._closed:
                    return None
                while self._ready:
                    key = self._ready.popleft()
                    state = self._keys.get(key)
                    if state is None or state.queued is None:
                        continue
                    job, state.queued, state.running = state.queued, None, True
                    state.first = False
                    return key, job
                self._idle_threads += 1
                try:
                    self._cond.wait()
                finally:
                    self._idle_threads -= 1

    def _done(self, key: str) -> None:
        with self._cond:
            state = self._keys[key]
            state.running = False
            if state.again is not None and not self._closed:
                state.queued, state.again = state.again, None
                self._enqueue(key, state.first)
            else:
                del self._keys[key]
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            taken = self._next()
            if taken is None:
                return
            key, job = taken
            try:
                job()
            except Exception as exc:  # a bug in a job must not end the worker
                if self._on_error is not None:
                    with contextlib.suppress(Exception):  # nowhere left to report it
                        self._on_error(key, exc)
            finally:
                self._done(key)
