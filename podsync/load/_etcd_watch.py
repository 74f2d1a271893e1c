"""The etcd source of the continuous loop: one key, read once and then watched.

The seed kubelet read ``/registry/hosts/<hostname>/kubelet`` and watched it, re-arming
the watch every 30 s and reading the key again each time (reference, "Older seed
kubelet behaviour"). Its watch started from "now" (index 0), so a change made while the
watch was being re-armed was missed until the next change. Here:

* ``poll`` reads the key once (``tick()`` mode, and the first read of ``follow``);
* ``follow`` (a thread of the loop) watches the key from the revision after the last one
  seen, so that no change is missed across reconnects: etcd replays what happened
  meanwhile. A compacted revision (etcd no longer has it) is a full read of the key
  again. Each change is handed to the loop at once (``emit``): the loop syncs on it, not
  on the source period.
* A value that is not valid pods keeps the last good ones (the loop's rule for every
  source, ``SourceSet``); so does a key that was deleted (a typo in a key, or a key
  being rewritten, must not remove a host's pods: an empty list does).
* etcd unreachable is an error read (the source keeps its pods); ``follow`` retries with
  back-off (0.2 s doubling to 5 s), then resumes the watch where it was and reports the
  source fine again.

Contract: ``poll`` and ``follow`` are never called at the same time (the loop calls
one or the other); ``close`` may be called from any thread and ends ``follow``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from podsync.etcd._client import EtcdClient, EtcdCompacted
from podsync.etcd._urls import NO_SUCH_KEY, EtcdOptions, parse_etcd_url
from podsync.exceptions import EtcdError
from podsync.host._node import NodeInfo
from podsync.load._source_reads import SourceRead
from podsync.load._sources import etcd_file
from podsync.load._streams import _load_stream, _Stream
from podsync.spec._backoff import Backoff

__all__: list[str] = []

#: Seconds without a watch response after which the watch is made again (from the
#: revision seen last): the seed re-armed its watch every 30 s; a server that hangs is
#: noticed this way.
WATCH_IDLE = 30.0
_RETRY_FIRST = 0.2
_RETRY_MAX = 5.0


class EtcdSource:
    """Reads and watches one ``etcd://`` source.

    Raises:
        ValueError: the URL is not an etcd URL with a key (the message names it).
        EtcdError: the ``etcd`` extra is not installed.
    """

    kind = "etcd"

    def __init__(
        self,
        source: str,
        node: NodeInfo,
        options: EtcdOptions | None,
        max_bytes: int,
        *,
        idle: float = WATCH_IDLE,
    ) -> None:
        from podsync.load.convert._document import _Context

        try:
            url = parse_etcd_url(source)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
        self.source = source
        try:
            self._client = EtcdClient(url, options)
        except EtcdError as exc:  # the extra is missing: say which source needs it
            raise EtcdError(f"{source}: {exc}") from None
        self._context = _Context("etcd", node, etcd_file(source))
        self._max_bytes = max_bytes
        self._idle = idle
        self._value: bytes | None = None
        self._stream: _Stream | None = None
        self._revision = 0  # the store's revision seen last: a watch starts after it
        self._lock = threading.Lock()
        self._close_watch: Callable[[], None] | None = None
        self._following = False
        self._closed = threading.Event()

    # -- one read ------------------------------------------------------------------------

    def poll(self) -> SourceRead:
        """Read the key (I/O, within the etcd timeout)."""
        try:
            got = self._client.read()
        except EtcdError as exc:
            return SourceRead((), False, f"{self.source}: {exc}")
        self._revision = max(self._revision, got.revision)
        return self._take(got.value)

    def _take(self, value: bytes | None) -> SourceRead:
        """A read of ``value``, the key's value now (``None``: it does not exist)."""
        if value is None:
            return SourceRead((), False, f"{self.source}: {NO_SUCH_KEY}")
        if len(value) > self._max_bytes:
            limit = f"larger than the limit of {self._max_bytes} bytes"
            return SourceRead((), False, f"{self.source}: {limit} (raise it with --max-bytes)")
        changed = self._stream is None or value != self._value
        if changed:
            self._stream = _load_stream(value, self.source, self._context)
            self._value = value
        return self._current(changed)

    def _current(self, changed: bool) -> SourceRead:
        stream = self._stream
        if stream is None:
            return SourceRead((), False, f"{self.source}: not read yet")
        if stream.problems:
            return SourceRead((), changed, "; ".join(str(p) for p in stream.problems))
        return SourceRead((stream,), changed)

    # -- the watch -----------------------------------------------------------------------

    def follow(
        self,
        emit: Callable[[SourceRead], None],
        stopped: threading.Event,
        note: Callable[[str], None] | None = None,
    ) -> None:
        """Read the key (unless ``poll`` did), then watch it and ``emit`` a read for
        every change, until
        ``stopped`` is set or ``close()`` is called. etcd unreachable is emitted as an
        error read (once per attempt; the loop reports a message once), then retried
        with back-off; ``note`` is told when a compacted revision made it read the key
        again."""
        with self._lock:
            self._following = True
        try:
            self._follow(emit, stopped, note)
        finally:
            with self._lock:
                self._following = False
            self._client.close()

    def _follow(
        self,
        emit: Callable[[SourceRead], None],
        stopped: threading.Event,
        note: Callable[[str], None] | None,
    ) -> None:
        # A key read already (``poll``) is watched from the revision after that read.
        read_key = self._stream is None
        down = False
        backoff = Backoff(_RETRY_FIRST, _RETRY_MAX)

        def wait() -> bool:
            return stopped.wait(backoff.next()) or self._closed.is_set()

        while not (stopped.is_set() or self._closed.is_set()):
            if read_key:
                try:
                    got = self._client.read()
                except EtcdError as exc:
                    emit(SourceRead((), False, f"{self.source}: {exc}"))
                    if wait():
                        return
                    continue
                self._revision = got.revision
                emit(self._take(got.value))
                read_key, down = False, False
                backoff.reset()
            try:
                for batch in self._client.watch(
                    self._revision + 1, idle=self._idle, on_open=self._opened
                ):
                    if stopped.is_set():
                        return
                    if batch.progress:
                        self._revision = max(self._revision, batch.revision)
                        continue
                    if batch.events == 0:  # the watch is (again) in place
                        if down:
                            emit(self._current(False))  # fine again: the error clears
                        down = False
                        backoff.reset()
                        continue
                    self._revision = max(self._revision, batch.revision)
                    emit(self._take(batch.value))
            except EtcdCompacted as exc:
                # What happened since our revision is gone: read the key as it is now.
                if note is not None:
                    note(f"{self.source}: {exc}; reading the key again")
                read_key = True
            except EtcdError as exc:
                if stopped.is_set() or self._closed.is_set():
                    return
                emit(SourceRead((), False, f"{self.source}: {exc}"))
                down = True
                if wait():
                    return

    def _opened(self, close: Callable[[], None]) -> None:
        with self._lock:
            self._close_watch = close
        if self._closed.is_set():
            close()

    def close(self) -> None:
        """End ``follow`` (from any thread): its watch stream is shut, and the client
        refuses further calls."""
        self._closed.set()
        with self._lock:
            close = self._close_watch
            following = self._following
        if close is not None:
            with contextlib.suppress(Exception):
                close()
        if not following:
            self._client.close()
