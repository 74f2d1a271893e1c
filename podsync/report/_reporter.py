"""``HostReporter``: a ``podsync run`` reporting to etcd - its heartbeat, its pods'
statuses and its events under ``/registry/hosts/<host>/`` (the keys and records of
``_records``).

It is a board of the loop (``Reconciler(board=[..., reporter])``): the loop's calls only
record the latest state under a lock and wake the reporter's own thread
(``podsync-report``), which does every etcd call. The loop never waits for etcd.

The thread, as the modern kubelet's node lease controller and status manager split it:

* **Lease.** It grants the host's lease (``lease_ttl``, 40 s: ``nodeLeaseDurationSeconds``)
  and renews it every ``lease_ttl / 4`` (the kubelet renews its 40 s Lease every 10 s).
  A keepalive changes no revision: at steady state it is the only call.
* **One transaction per sync.** After a sync it writes what changed, in one transaction
  (split only past ``MAX_TXN_OPS``): the heartbeat (bound to the lease) and the ``node``
  copy when ``HostRecord.without_times()`` changed or ``REPORT_FREQUENCY`` passed
  (``nodeStatusReportFrequency``); a pod's record when ``pod_record_changed`` (its usage
  alone is refreshed every ``REPORT_FREQUENCY``); a delete for each pod no longer
  reported; the pending events.
* **Events** are bound to an events lease of TTL ``event_ttl + event_window``, one lease
  for every event of a window (``event_window``, 1 hour): an event written at time
  ``t`` of a window granted at ``g`` (``g <= t < g + window``) expires at
  ``g + event_ttl + window``, so it lives at least ``event_ttl`` and at most
  ``event_ttl + window``. The events lease is never kept alive, nor revoked.
* **Start.** It reads the host's ``pods/`` prefix: a pod that a previous run reported and
  this one does not is deleted after the first sync, and a record that says what this
  run would write is not written again.
* **etcd away.** An etcd call that fails changes nothing of the loop (the pods run,
  nothing is deleted): the reporter keeps what it has not written - the latest
  statuses, and the events in a bounded queue (``max_events``; the oldest are dropped
  and counted, ``dropped_events``) - and tries again with a back-off (1 s doubling to
  ``lease_ttl / 4``). Back, it writes what changed meanwhile; a lease that expired
  meanwhile (``keep_alive`` gives 0) is granted again and the heartbeat rewritten. The
  trouble is said once (``on_warning``), and its end once.
* **Stop.** ``close()`` writes what is pending (one try), then revokes the heartbeat's
  lease: a host stopped cleanly is NotReady at once, not ``lease_ttl`` later (a killed
  one is NotReady when its lease expires). The events lease is left to expire.

No Secret value is written: every string of a pod record and every event message is
scrubbed with the desired pods' Secret values (``_scrub``; the loop's ``desired_seen``).

Contract: thread-safe; the Board methods never block on I/O. Raises nothing from the
Board methods; etcd errors are retried, never raised.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from podsync.applier._results import Event
from podsync.etcd._client import EtcdClient
from podsync.etcd._kv import MAX_TXN_OPS, Delete, Put
from podsync.etcd._urls import EtcdOptions, EtcdURL, parse_etcd_url
from podsync.exceptions import EtcdError
from podsync.host._version import package_version
from podsync.loop._reporting import LoopNotice, NoticeKind
from podsync.model._pod import Pod
from podsync.model._scrub import Scrubber
from podsync.report._events import (
    back_off_records,
    event_record,
    notice_record,
    rfc3339,
    starting_record,
)
from podsync.report._records import (
    DEFAULT_EVENT_TTL,
    DEFAULT_LEASE_TTL,
    HOSTS_PREFIX,
    REPORT_FREQUENCY,
    EventRecord,
    HostRecord,
    SourceState,
    event_key,
    event_record_json,
    heartbeat_key,
    host_record_json,
    node_key,
    parse_pod_record,
    pod_key,
    pod_record_changed,
    pod_record_json,
    pods_prefix,
)
from podsync.runtime._protocol import EngineInfoRuntime, NodeRuntime
from podsync.status._json import status_record
from podsync.status._pod import PodStatus

if TYPE_CHECKING:
    from podsync.model._usage import PodUsage, UsageFigures

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["HostReporter"]

#: How long one window's events share a lease (see the module's docstring).
DEFAULT_EVENT_WINDOW = 3600

#: The most events kept while etcd cannot be written; the oldest go first.
DEFAULT_MAX_EVENTS = 1000

# A burst of calls (a round's statuses, the events of its actions) is gathered this
# long before writing, so that it goes in one transaction.
_GATHER = 0.05


def report_target(url: str) -> tuple[EtcdURL, str]:
    """The endpoints and host of a ``--report-to`` URL,
    ``etcd://HOST:PORT[,...]/registry/hosts/<host>``.

    Raises:
        ValueError: not such a URL (the message says what is wrong, without the URL).
    """
    parsed = parse_etcd_url(url)
    key = parsed.key.rstrip("/")
    host = key[len(HOSTS_PREFIX) :] if key.startswith(HOSTS_PREFIX) else ""
    if not host or "/" in host:
        raise ValueError(
            f"names no host's prefix: give etcd://HOST:PORT{HOSTS_PREFIX}<host>, not {key!r}"
        )
    return attrs.evolve(parsed, key=f"{HOSTS_PREFIX}{host}"), host


def report_target_of_source(source: str) -> str | None:
    """The ``--report-to`` URL a source implies: ``etcd://EP/registry/hosts/<host>`` for
    ``etcd://EP/registry/hosts/<host>/kubelet``; ``None`` for any other source."""
    suffix = "/kubelet"
    if not source.lower().startswith(("etcd://", "http://", "https://")):
        return None
    if not source.endswith(suffix):
        return None
    try:
        parsed = parse_etcd_url(source)
    except ValueError:
        return None
    host = parsed.key[len(HOSTS_PREFIX) : -len(suffix)]
    if not parsed.key.startswith(HOSTS_PREFIX) or not host or "/" in host:
        return None
    return source[: -len(suffix)]


class HostReporter:
    """Report a host's heartbeat, pod statuses and events to etcd (see the module's
    docstring for what is written when); a board of ``Reconciler``::

        with podsync.HostReporter("etcd://10.0.0.1:2379/registry/hosts/node-a",
                                  runtime=runtime) as reporter:
            with podsync.Reconciler(sources, runtime, board=reporter):
                ...

    Args:
        url: ``etcd://HOST:PORT[,...]/registry/hosts/<host>``: the host's prefix.
        etcd: TLS, user and password (``--etcd-*``).
        runtime: the engine, asked for its kind and version (``EngineInfoRuntime``) and
            its CPUs and memory (``NodeRuntime``), from the reporter's thread; ``None``:
            the heartbeat leaves them empty.
        lease_ttl: the heartbeat lease's TTL, in whole seconds (at least 2).
        event_ttl: seconds an event is kept at least.
        event_window: seconds the events of one window share a lease.
        report_frequency: the longest the host record goes unwritten.
        max_events: the most events kept while etcd cannot be written.
        on_warning: told once when etcd cannot be written, and once when it can again.
        wall_clock: the time written into records (seconds since the epoch).

    Raises:
        ValueError: a bad URL or setting.
        EtcdError: the ``etcd`` extra is not installed.
    """

    def __init__(
        self,
        url: str,
        *,
        etcd: EtcdOptions | None = None,
        runtime: object | None = None,
        lease_ttl: int = DEFAULT_LEASE_TTL,
        event_ttl: int = DEFAULT_EVENT_TTL,
        event_window: int = DEFAULT_EVENT_WINDOW,
        report_frequency: float = REPORT_FREQUENCY,
        max_events: int = DEFAULT_MAX_EVENTS,
        on_warning: Callable[[str], object] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        target, self.host = report_target(url)
        if isinstance(lease_ttl, bool) or int(lease_ttl) != lease_ttl or lease_ttl < 2:
            raise ValueError(f"the report TTL must be whole seconds, at least 2: {lease_ttl!r}")
        for name, value in (("event TTL", event_ttl), ("event window", event_window)):
            if isinstance(value, bool) or not value >= 1:
                raise ValueError(f"the {name} must be at least 1 second: {value!r}")
        if max_events < 1:
            raise ValueError(f"max_events must be at least 1: {max_events!r}")
        self.lease_ttl = int(lease_ttl)
        self._event_ttl = int(event_ttl)
        self._event_window = int(event_window)
        self._frequency = float(report_frequency)
        self._client = EtcdClient(target, etcd)
        self._runtime = runtime
        self._on_warning = on_warning
        self._wall = wall_clock

        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._stop = False
        self._thread: threading.Thread | None = None
        # What the loop said last (under the lock).
        self._sources: dict[str, SourceState] = {}
        self._last_sync = ("", True, "")
        self._statuses: list[dict[str, Any]] | None = None  # None: no round yet
        self._scrub = Scrubber()
        self._desired: frozenset[str] | None = None  # uids; None: not told
        self._events: collections.deque[tuple[str, EventRecord]] = collections.deque(
            maxlen=max_events
        )
        self._dropped = 0
        self._pod_usage: dict[str, Any] = {}
        self._node_usage: tuple[float | None, int | None] = (None, None)
        self._dirty = True
        self._repeats: dict[tuple[str, str], str] = {}  # source errors said already
        # What the thread wrote (the thread's own).
        self._lease = 0
        self._events_lease = 0
        self._events_lease_until = 0.0
        self._written_pods: dict[str, dict[str, Any]] | None = None  # None: not read
        self._pod_written_at: dict[str, float] = {}
        self._written_host: HostRecord | None = None
        self._host_written_at = 0.0
        self._keepalive_at = 0.0
        self._engine: tuple[str, str] | None = None
        self._capacity: tuple[float, int] | None = None
        self._facts_at = -float("inf")
        self._trouble = ""
        self._sequence = 0
        self.transactions = 0  # write transactions made (for tests and benchmarks)
        self._version = package_version()
        self._check_events_lease = False
        self._dropped_said = 0  # the dropped events said already
        self._queue(starting_record(self.host, wall_clock(), self._version))

    # -- lifetime ------------------------------------------------------------------------

    def start(self) -> HostReporter:
        """Start the reporter's thread (once)."""
        with self._lock:
            if self._thread is not None:
                raise RuntimeError("a HostReporter starts once")
            self._thread = threading.Thread(target=self._run, name="podsync-report", daemon=True)
            self._thread.start()
        return self

    def close(self, timeout: float | None = None) -> None:
        """Write what is pending (one try), revoke the heartbeat's lease (the host is
        NotReady at once) and end the thread; ``timeout`` bounds the wait (default:
        twice the etcd timeout, plus a second)."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout if timeout is not None else 2 * self._client.options.timeout + 1)
        else:
            self._client.close()

    def __enter__(self) -> HostReporter:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def dropped_events(self) -> int:
        """Events dropped because etcd could not be written for too long."""
        with self._lock:
            return self._dropped

    # -- the Board methods (the loop's threads) ------------------------------------------

    def source_ok(self, source: str) -> None:
        with self._cond:
            self._sources[source] = SourceState(source, True)
            self._repeats.pop(("source", source), None)
            self._wake()

    def source_error(self, source: str, message: str) -> None:
        with self._cond:
            self._sources[source] = SourceState(source, False, self._scrub(message))
            self._wake()

    def sync_done(self, duration: float, ok: bool, message: str = "") -> None:
        with self._cond:
            self._last_sync = (rfc3339(self._wall()), ok, self._scrub(message))
            self._wake()

    def action_done(self, kind: str, result: str) -> None:
        """Counted by the status board; nothing to report here."""

    def desired_seen(self, pods: Sequence[Pod]) -> None:
        scrub = Scrubber.of_pods(pods)
        with self._cond:
            self._scrub = scrub
            self._desired = frozenset(p.uid for p in pods)

    def pods_seen(self, statuses: Sequence[PodStatus]) -> None:
        """The host's pods: the desired ones and the loop's orphans - not the pods of
        another scope on the same engine (another loop's: it reports them)."""
        with self._cond:
            scrub, desired = self._scrub, self._desired
        records: list[dict[str, Any]] = []
        seen: set[str] = set()
        for status in statuses:
            theirs = desired is not None and status.uid not in desired and not status.orphaned
            if status.pod in seen or theirs:
                continue  # a desired pod first, then an orphan of the same key
            seen.add(status.pod)
            record = scrub.record(status_record(status))
            record["host"] = self.host
            records.append(record)
        with self._cond:
            self._statuses = records
            self._wake()

    def event_seen(self, event: Event) -> None:
        with self._cond:
            record = event_record(event, self.host, self._scrub)
            if record is not None:
                self._queue(record)
                self._wake()

    def notice_seen(self, notice: LoopNotice) -> None:
        with self._cond:
            if notice.kind in (NoticeKind.SOURCE_ERROR, NoticeKind.REJECTED):
                # Said again at each poll by the loop's log; an event once per change.
                place = ("source", notice.source) if notice.source else ("pod", notice.pod)
                if self._repeats.get(place) == notice.message:
                    return
                self._repeats[place] = notice.message
            self._queue(notice_record(notice, self.host, self._wall(), self._scrub))
            self._wake()

    def usage_seen(self, pods: Sequence[PodUsage], node: UsageFigures | None) -> None:
        """The resource usage of the pods and of the host (the usage scraper's): into
        the pod records (``usage``, refreshed every ``REPORT_FREQUENCY``) and the
        heartbeat."""
        usage = {
            p.pod: {
                **_figures(p.total),
                "containers": {name: _figures(f) for name, f in sorted(p.containers.items())},
            }
            for p in pods
        }
        with self._cond:
            self._pod_usage = usage
            if node is not None:
                self._node_usage = (node.cpu_cores, node.memory_working_set)

    def _queue(self, record: EventRecord) -> None:
        """Queue an event under its key (given now: a write tried again is the same
        key, never a second copy)."""
        if len(self._events) == self._events.maxlen:
            self._dropped += 1
        self._sequence = (self._sequence + 1) % 1_000_000
        key = event_key(self.host, int(self._wall() * 1e9), self._sequence)
        self._events.append((key, record))

    def _wake(self) -> None:
        self._dirty = True
        self._cond.notify_all()

    # -- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        retry = 1.0
        while True:
            with self._cond:
                stopping = self._stop
            try:
                self._step()
            except Exception as exc:  # etcd's errors, and a bug: never the thread's end
                known = isinstance(exc, EtcdError | ValueError)
                self._troubled(str(exc) if known else f"{type(exc).__name__}: {exc}")
                # Whatever failed, the leases are checked before the next writes: one
                # may have expired while etcd was away.
                self._keepalive_at = 0.0
                self._check_events_lease = True
                if stopping:
                    break
                self._sleep(retry, wake_on_change=False)
                retry = min(retry * 2, self.lease_ttl / 4)
                continue
            if self._trouble:
                self._untroubled()
            retry = 1.0
            if stopping:
                break
            self._sleep(max(0.0, self._next_due() - time.monotonic()), wake_on_change=True)
        try:
            if self._lease:
                self._client.revoke_lease(self._lease)
        except EtcdError as exc:
            self._troubled(str(exc))
        finally:
            self._client.close()

    def _sleep(self, seconds: float, *, wake_on_change: bool) -> None:
        """Wait ``seconds``, or until the loop reports something (``wake_on_change``),
        or until ``close()``."""
        deadline = time.monotonic() + seconds
        with self._cond:
            while not self._stop and not (wake_on_change and self._dirty):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            if wake_on_change and self._dirty and not self._stop:
                # Gather the rest of a burst (a round's statuses and its events).
                self._cond.wait(_GATHER)

    def _next_due(self) -> float:
        due = self._keepalive_at
        if self._written_host is not None:
            due = min(due, self._host_written_at + self._frequency)
        return due

    def _step(self) -> None:
        """Renew or grant the lease, read what a previous run wrote, and write what
        changed; raises the etcd error that stopped it."""
        now = time.monotonic()
        if not self._lease:
            self._lease = self._client.grant_lease(self.lease_ttl)
            self._keepalive_at = now + self.lease_ttl / 4
            self._written_host = None  # bound to the new lease: written again
        elif now >= self._keepalive_at:
            if self._client.keep_alive(self._lease) == 0:
                self._lease = 0  # expired while etcd was away: granted again now
                return self._step()
            self._keepalive_at = now + self.lease_ttl / 4
        if self._written_pods is None:
            self._written_pods = self._read_pods()
            self._pod_written_at = dict.fromkeys(self._written_pods, now)
        self._engine_facts(now)
        with self._cond:
            self._dirty = False
            statuses = self._statuses
            events = list(self._events)
            host = self._host_record()
            usage = dict(self._pod_usage)
        ops, pods_now = self._pod_ops(statuses, usage, now)
        host_due = self._written_host is None or now >= self._host_written_at + self._frequency
        write_host = host_due or host.without_times() != self._written_host
        stamped = attrs.evolve(host, written=rfc3339(self._wall()))
        if write_host:
            data = host_record_json(stamped)
            ops[:0] = [
                Put(heartbeat_key(self.host), data, self._lease),
                Put(node_key(self.host), data),
            ]
        if events:
            lease = self._events_lease_for(now)
            ops.extend(Put(key, event_record_json(e), lease) for key, e in events)
        if not ops:
            return
        for start in range(0, len(ops), MAX_TXN_OPS):
            self._client.commit(ops[start : start + MAX_TXN_OPS])
            self.transactions += 1
        # Written: what etcd now holds.
        if write_host:
            self._written_host = host.without_times()
            self._host_written_at = now
        if statuses is not None:
            self._record_written(statuses, pods_now, now)
        with self._cond:
            # Only those written: the queue may have dropped some of them meanwhile.
            written = {key for key, _ in events}
            while self._events and self._events[0][0] in written:
                self._events.popleft()

    def _pod_ops(
        self, statuses: list[dict[str, Any]] | None, usage: dict[str, Any], now: float
    ) -> tuple[list[Put | Delete], dict[str, dict[str, Any]]]:
        """The puts of the pod records that changed (or whose usage is due) and the
        deletes of the pods no longer reported; nothing before the first round."""
        ops: list[Put | Delete] = []
        records: dict[str, dict[str, Any]] = {}
        if statuses is None:
            return ops, records
        written = self._written_pods or {}
        for status in statuses:
            key = str(status["pod"])
            record = dict(status)
            if key in usage:
                record["usage"] = usage[key]
            old = written.get(key)
            due = now >= self._pod_written_at.get(key, 0.0) + self._frequency
            usage_changed = old is not None and old.get("usage") != record.get("usage")
            if pod_record_changed(old, record) or (usage_changed and due):
                record["written"] = rfc3339(self._wall())
                ops.append(Put(pod_key(self.host, key), pod_record_json(record)))
                records[key] = record
        for key in written:
            if key not in {str(s["pod"]) for s in statuses}:
                ops.append(Delete(pod_key(self.host, key)))
        return ops, records

    def _record_written(
        self, statuses: list[dict[str, Any]], records: dict[str, dict[str, Any]], now: float
    ) -> None:
        reported = {str(s["pod"]) for s in statuses}
        written = self._written_pods if self._written_pods is not None else {}
        before = dict(written)
        for key in list(written):
            if key not in reported:
                del written[key]
                self._pod_written_at.pop(key, None)
        for key, record in records.items():
            written[key] = record
            self._pod_written_at[key] = now
        backs = back_off_records(before, list(records.values()), self.host, self._wall())
        if backs:
            with self._cond:
                for back in backs:
                    self._queue(back)
                self._wake()

    def _read_pods(self) -> dict[str, dict[str, Any]]:
        """The pod records a previous run left (one it cannot read is rewritten)."""
        found, _ = self._client.range_prefix(pods_prefix(self.host))
        records: dict[str, dict[str, Any]] = {}
        prefix = pods_prefix(self.host)
        for kv in found:
            key = kv.key[len(prefix) :]
            try:
                records[key] = parse_pod_record(kv.value)
            except ValueError:
                records[key] = {}
        return records

    def _events_lease_for(self, now: float) -> int:
        checked = self._events_lease and self._check_events_lease
        if checked and self._client.lease_ttl(self._events_lease) is None:
            self._events_lease = 0  # expired while etcd was away
        self._check_events_lease = False
        if not self._events_lease or now >= self._events_lease_until:
            self._events_lease = self._client.grant_lease(self._event_ttl + self._event_window)
            self._events_lease_until = now + self._event_window
        return self._events_lease

    def _engine_facts(self, now: float) -> None:
        """The engine's kind, version, CPUs and memory, asked until known (at most every
        tenth of the report frequency); an engine away leaves them empty meanwhile."""
        if self._runtime is None or (self._engine is not None and self._capacity is not None):
            return
        if now < self._facts_at + self._frequency / 10:
            return
        self._facts_at = now
        runtime = self._runtime
        try:
            if self._engine is None and isinstance(runtime, EngineInfoRuntime):
                info = runtime.engine_info()
                self._engine = (info.kind, info.version)
            elif self._engine is None:
                self._engine = (type(runtime).__name__, "")
            if self._capacity is None and isinstance(runtime, NodeRuntime):
                capacity = runtime.node_capacity()
                self._capacity = (capacity.cpu / 1000, capacity.memory)
        except Exception:
            return

    def _host_record(self) -> HostRecord:
        """The host record from what the loop said (under the lock)."""
        statuses = self._statuses or []
        desired = [s for s in statuses if not s.get("orphaned")]
        kind, version = self._engine or ("", "")
        cpus, memory = self._capacity or (0.0, 0)
        last_sync, ok, message = self._last_sync
        return HostRecord(
            host=self.host,
            engine_kind=kind,
            engine_version=version,
            cpus=cpus,
            memory=memory,
            podsync_version=self._version,
            last_sync=last_sync,
            last_sync_ok=ok,
            last_sync_message=message,
            sources=tuple(self._sources[k] for k in sorted(self._sources)),
            pods_desired=len(desired),
            pods_running=sum(1 for s in desired if s.get("phase") == "Running"),
            cpu_cores=self._node_usage[0],
            memory_working_set=self._node_usage[1],
            lease=self._lease,
            lease_ttl=self.lease_ttl,
        )

    # -- trouble -------------------------------------------------------------------------

    def _troubled(self, message: str) -> None:
        if not self._trouble and self._on_warning is not None:
            self._on_warning(
                f"reporting to etcd at {self._client.where} failed: {message} "
                "(the loop goes on; retrying)"
            )
        self._trouble = message or "error"

    def _untroubled(self) -> None:
        self._trouble = ""
        dropped = self.dropped_events - self._dropped_said
        self._dropped_said += dropped
        if self._on_warning is not None:
            lost = f"; {dropped} event(s) dropped meanwhile" if dropped else ""
            self._on_warning(f"reporting to etcd at {self._client.where} works again{lost}")


def _figures(figures: UsageFigures) -> dict[str, Any]:
    """One row of usage as a record holds it: cores (``None`` before a second reading)
    and the memory working set in bytes."""
    return {"cpu_cores": figures.cpu_cores, "memory_working_set": figures.memory_working_set}
