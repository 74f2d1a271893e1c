"""The continuous loop: ``Reconciler``, the seed's ``Run`` / ``syncLoop`` / ``podWorkers``.

The seed kubelet (reference §2.2-§2.6) merged what each source said into one desired
set, called ``SyncPods`` on every change and every sync period (10 s), ran each pod's
``syncPod`` on a worker of its own and collected garbage every minute. ``Reconciler``
does the same with podsync's one-shot steps (``sync``'s observe, probe and plan;
``apply``), and better where the seed was weak:

* **Sources** (``podsync.load._source_set``): each polled on its own period (seed:
  20 s), in its own thread (a hanging URL holds nobody else), with the parse cache's
  rule. A source that fails keeps its *last good* pods, and a bad file of a directory
  its own while the others are taken (the kubelet's ``extractFromDir``); the error is
  reported at each poll - never "no pods" - and deletions of a source's kind wait until
  every source of that kind was read once with no file that was never good
  (``PlanOptions.ready_sources``, the kubelet's per-source readiness).
* **etcd** (``podsync.load._etcd_watch``): an ``etcd://`` source is read once and then
  watched from the revision after the last one seen (no change is missed across
  reconnects; a compacted revision reads the key again); each change wakes the loop at
  once. etcd unreachable is a source error: its pods are kept.
* **Triggers**: a sync round when a source changed, every sync period, when a
  crash-loop back-off ends (the seed waited for the next period), when a probe is due
  (probes run on their own periods, not the sync's: kubelet-modern.md §4, the prober's
  per-probe workers), and at once when the engine reports that one of podsync's
  containers died or was OOM-killed (``docker events``; the seed noticed at the next
  period). The plan still decides: a restart respects the crash-loop back-off. Such a
  death syncs its pod alone, from the pod's own list (``_deaths``: the kubelet's pod
  worker, fed by its event generator), and a round follows only when needed.
* **Per-pod workers** (``_workers``): a round observes once (one list call) and plans
  every pod (pure); each pod's part of the plan runs on its pod's worker, in parallel
  within the worker bound. A pod whose previous sync still runs is not planned on a
  state it is changing: it gets one fresh round after its sync ends (the seed dropped
  such requests).
* **Garbage collection** on its own period (seed: 1 min): the rounds in between plan
  with count-based collection and image removal off. Orphans are removed in every
  round (they are deletions, not collection).
* **Resilience**: an engine that cannot be reached, a runtime error or a bug of the
  loop fails that round only - reported, retried with back-off (1 s doubling to the
  sync period) - and the next round re-observes everything. The loop never ends on
  its own.
* **Shutdown**: ``stop()`` (SIGTERM, SIGINT in ``podsync run``) ends the loop: no new
  work is taken, the syncs in progress get ``shutdown_timeout`` seconds to finish
  their engine calls, and the pods keep running (the kubelet does not stop pods when
  it exits).

Contract: the loop's own scheduling reads the clock it is given (``clock``; a
``FakeClock`` in tests, with ``tick()`` instead of ``run()``); waiting is on a
condition. Everything is reported (``_reporting``) to ``board`` (the status board and
its HTTP endpoints) and as ``LoopNotice``s and apply ``Event``s (the log lines).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.actions._actions import (
    Plan,
    Wait,
)
from podsync.actions._options import (
    DEFAULT_GC_PERIOD,
    DEFAULT_SHUTDOWN_TIMEOUT,
    DEFAULT_SOURCE_PERIOD,
    DEFAULT_SYNC_PERIOD,
    DEFAULT_USAGE_PERIOD,
    GCPolicy,
    PlanOptions,
    with_scope,
)
from podsync.applier._apply import (
    DEFAULT_HOOK_TIMEOUT,
    DEFAULT_WORKERS,
    _check_settings,
    apply,
)
from podsync.applier._results import ApplyResult, Event
from podsync.exceptions import RuntimeCallError
from podsync.host._clock import Clock, clocks
from podsync.host._node import NodeInfo
from podsync.load._pod_set import POD_SOURCE_NAME, PodsArgument
from podsync.load._source_reads import SourceRead
from podsync.load._source_set import SourceSet
from podsync.load._sources import DEFAULT_MAX_BYTES, HttpOptions, shown_url
from podsync.load._streams import SecretKey
from podsync.loop._deaths import BACK_OFFS, DeathWatch, alone_syncable
from podsync.loop._reporting import (
    Board,
    LoopNotice,
    NoticeKind,
    _statuses,
    boards_of,
)
from podsync.loop._sync import Observation, _default_runtime, sync
from podsync.loop._usage_report import UsageReader
from podsync.loop._workers import PodWorkers
from podsync.model._pod import Pod
from podsync.model._pulls import PullFailure
from podsync.prober._rules import probes_of
from podsync.runtime._protocol import (
    EngineEvent,
    Runtime,
    Stream,
)
from podsync.spec._backoff import doubling

if TYPE_CHECKING:
    from podsync.etcd._urls import EtcdOptions

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["Reconciler"]


# The rounds between garbage collections: nothing is collected by count, no image is
# removed (orphans still go: they are deletions).
_NO_GC = GCPolicy(max_per_container=None, max_total=None, remove_dangling_images=False)


# The worker key of engine-wide cleanup (image removals); no pod uid looks like it.
_CLEANUP_KEY = "<images>"


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not value > 0:
        raise ValueError(f"{name} must be positive seconds, got {value!r}")
    return float(value)


class Reconciler(DeathWatch):
    """Keep an engine running what the sources say, continuously.

    Pod objects are a first-class input, beside files or in their place::

        desired = podsync.PodSet([podsync.Pod("web", (podsync.Container("app", "nginx"),))])
        with podsync.Reconciler(pods=desired, runtime=runtime):
            desired.remove("default/web")  # the loop wakes and stops it

    Args:
        sources: files, directories, http(s) URLs and etcd URLs, as for
            ``load_pods`` (not ``-``: standard input cannot be polled). An etcd source
            is watched in ``run()`` (its changes wake the loop at once) and read every
            source period in ``tick()``.
        pods: desired pods held in memory, of source ``api`` (``Pod.source``): a
            sequence of ``Pod``; a function that returns them, called each time the
            loop reads its sources (every source period; when it raises, the loop
            keeps the pods it gave last and reports a ``source-error`` notice, never
            "no pods"); or a ``PodSet``, which the program changes while the loop
            runs: each change wakes ``run()`` at once (``tick()`` reads it at every
            call). The loop names this source ``<pods>``; it is ready once read
            (pods of source ``api`` are deleted once it was read well). Mixed with
            ``sources``, a pod defined in both is refused where it changed.
        runtime: the engine; a ``podsync.docker.DockerRuntime()`` when ``None``,
            closed when the loop ends.
        options: planning options. Deletions are further limited to the pods of the
            kinds of source (``file``, ``http``) whose every source was read once
            (within ``ready_sources`` when it is given); ``gc`` applies every
            ``gc_period``, the rounds in between collect nothing. Its ``scope`` says
            which pods the loop owns (``PlanOptions.scope``): without one, a pod that
            leaves the sources is left running - give the loop a scope name, or
            ``NODE_SCOPE`` as ``podsync run`` does, to have such pods removed.
        sync_period: seconds between full syncs (seed: 10).
        source_period: seconds between two polls of a source (seed: 20).
        source_periods: a period of its own for some sources, by source. The loop
            names each source by ``shown_url`` (a URL without its credentials) in its
            notices, status and metrics.
        gc_period: seconds between garbage collections (seed: 60).
        workers: pods synced at the same time, at most.
        probe: run the pods' probes (each on its own period).
        hook_timeout: as for ``sync``.
        probe_timeout: as for ``sync``.
        max_bytes: as for ``load_pods``.
        http_timeout: as for ``load_pods``.
        node: as for ``load_pods``.
        on_warning: as for ``load_pods``.
        secret_key: as for ``load_pods`` (without ``secret_key`` a pod that uses a Secret's
            value is refused).
        etcd: as for ``load_pods``.
        http: as for ``load_pods``.
        board: the status board the loop reports to (see ``Board``), or a sequence of
            boards, each told the same (a board that raises is reported, never fatal:
            the others are still told).
        usage_period: seconds between two reports of the pods' CPU and memory to a
            board that has ``usage_seen`` (15: the metrics server's resolution), when
            the runtime is a ``UsageRuntime``.
        on_event: called with each apply ``Event`` (one per action, and failed probes),
            from the workers, one call at a time.
        on_notice: called with each ``LoopNotice``, from the loop's threads, one call
            at a time.
        clock: where the loop reads the time (its periods, the plans' ``now``); the
            system's clocks when ``None``.
        shutdown_timeout: seconds the syncs in progress get to finish when the loop
            stops.
        follow_events: follow the engine's events in ``run()`` to restart exited
            containers at once.
        scope: when given, the loop's scope in place of ``options.scope``.

    Raises:
        ValueError: neither ``sources`` nor ``pods`` is given, a period or timeout is
            not positive, ``workers`` is below 1, a source is ``-`` or given twice, an
            etcd URL is not one.
        TypeError, ValueError: ``pods`` is a sequence with an element that is not a
            ``Pod``, a pod of another source than ``api``, or a key given twice.
        EtcdError: an etcd source, without the ``etcd`` extra installed.
    """

    def __init__(
        self,
        sources: Sequence[str] = (),
        runtime: Runtime | None = None,
        options: PlanOptions | None = None,
        *,
        sync_period: float = DEFAULT_SYNC_PERIOD,
        source_period: float = DEFAULT_SOURCE_PERIOD,
        source_periods: Mapping[str, float] | None = None,
        gc_period: float = DEFAULT_GC_PERIOD,
        workers: int = DEFAULT_WORKERS,
        probe: bool = True,
        hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
        probe_timeout: float | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        http_timeout: float = 10.0,
        node: NodeInfo | None = None,
        on_warning: Callable[[str], object] | None = None,
        board: Board | Sequence[Board] | None = None,
        on_event: Callable[[Event], None] | None = None,
        on_notice: Callable[[LoopNotice], None] | None = None,
        clock: Clock | None = None,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        follow_events: bool = True,
        secret_key: SecretKey = None,
        etcd: EtcdOptions | None = None,
        http: HttpOptions | None = None,
        pods: PodsArgument | None = None,
        scope: str | None = None,
        usage_period: float = DEFAULT_USAGE_PERIOD,
    ) -> None:
        if not sources and pods is None:
            # The loop deletes every pod it does not desire: an empty desired set by
            # omission would stop them all.
            raise ValueError("give the loop its desired pods: sources, pods, or both")
        self._sync_period = _positive("sync_period", sync_period)
        self._source_period = _positive("source_period", source_period)
        # By the sources' shown names (shown_url), as the SourceSet knows them.
        periods = {shown_url(k): v for k, v in (source_periods or {}).items()}
        for name, period in periods.items():
            if name not in map(shown_url, sources) and (pods is None or name != POD_SOURCE_NAME):
                raise ValueError(f"source_periods: {name!r} is not a source")
            _positive(f"the period of {name}", period)
        self._gc_period = _positive("gc_period", gc_period)
        self._usage = UsageReader(_positive("usage_period", usage_period))
        self._shutdown_timeout = _positive("shutdown_timeout", shutdown_timeout)
        _positive("http_timeout", http_timeout)
        _check_settings(workers, hook_timeout)
        if probe_timeout is not None:
            _positive("probe_timeout", probe_timeout)
        self._sources = SourceSet(
            sources,
            node=node,
            max_bytes=max_bytes,
            http_timeout=http_timeout,
            on_warning=on_warning,
            secret_key=secret_key,
            etcd=etcd,
            http=http,
            pods=pods,
        )
        self._periods = {s: float(periods.get(s, self._source_period)) for s in self._sources.names}
        self._owns_runtime = runtime is None
        self._runtime: Runtime | None = runtime
        self._options = with_scope(options, scope)
        self._probe = probe
        self._hook_timeout = hook_timeout
        self._probe_timeout = probe_timeout
        self._boards = boards_of(board)
        self._on_event = on_event
        self._on_notice = on_notice
        self._clocks = clocks(clock)
        self._follow_events = follow_events

        self._lock = threading.Lock()  # the fields below that other threads touch
        self._cond = threading.Condition(self._lock)
        self._report_lock = threading.Lock()  # one callback at a time
        self._engine_lock = threading.Lock()
        self._stop = threading.Event()
        self._wanted = False  # a round asked for (request_sync, a worker, an event)
        self._reads: dict[str, SourceRead] = {}  # polls not merged yet (threaded sources)
        self._threaded = False
        self._threads: list[threading.Thread] = []
        self._events: Stream[EngineEvent] | None = None
        # Pod syncs finished, counted: a plan made from an observation taken before a
        # pod's sync ended is stale for that pod.
        self._done_count = 0
        self._done_at: dict[str, int] = {}
        # Containers the engine said died, by id: when it said so, and the next delay.
        self._died: dict[str, tuple[float, float]] = {}
        # Containers podsync's own workers are stopping, by id (when): their death is
        # no news, and asks for no sync.
        self._own_stops: dict[str, float] = {}
        # The stop records read, by container id (``observe``'s ``stop_records``; the
        # rounds' own), and the containers podsync stopped since the last round began:
        # their records may have been written after they were listed as stopped.
        self._stop_records: dict[str, str] = {}
        self._stopped_since: set[str] = set()
        self._alone: dict[str, Pod] = {}  # the pods a death may sync alone (_deaths)
        self._wake_asked: float | None = None  # a round due then (_deaths), for tick()
        # Observations and pods' own syncs, numbered in the order they begin; each
        # pod's last death news and last own sync begun, by uid (``_superseded``).
        self._seq = 0
        self._news: dict[str, int] = {}
        self._alone_began: dict[str, tuple[int, Pod]] = {}
        self._workers = PodWorkers(workers, on_error=self._job_failed)

        # The coordinator's own state (tick(): one thread at a time).
        self._tick_lock = threading.Lock()
        start = self._clocks.elapsed()
        self._started = start
        self._polled: set[str] = set()  # the sources read at least once (well or not)
        self._next_poll = dict.fromkeys(self._sources.names, start)
        self._next_sync = start
        self._next_gc = start
        self._next_wake: float | None = None  # a back-off that ends, a probe due
        # A back-off that a pod's own sync saw begin (``_deaths``): a round is due then.
        self._later: float | None = None
        # The probes' states between rounds, by container id (``sync(probe_states=)``).
        self._probe_states: dict[str, str] = {}
        # The failed image pulls, by (pod uid, image), for their back-off (the kubelet's
        # ImagePullBackOff): the pod workers add to it (under ``_cond``), rounds read it.
        self._pull_failures: dict[tuple[str, str], PullFailure] = {}
        self._retry_at: float | None = None  # after a failed round
        self._failures = 0
        self._source_errors: dict[str, str] = {}
        self._rejected: dict[str, str] = {}

    # -- the public controls -------------------------------------------------------------

    @property
    def desired(self) -> tuple[Pod, ...]:
        """The desired pods as last merged from the sources (``pods=`` included)."""
        return self._sources.desired

    def request_sync(self) -> None:
        """Ask for a sync round now (from any thread): the loop wakes and syncs."""
        with self._cond:
            self._wanted = True
            self._cond.notify_all()

    def stop(self) -> None:
        """End ``run()`` (from any thread; not from a signal handler, which may
        interrupt a thread holding the loop's locks): no new work is taken;
        ``run()`` returns once the syncs in progress finished, or after
        ``shutdown_timeout``. The pods keep running."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._notice(NoticeKind.STOPPING, "stopping: no new work is taken")
        with self._cond:
            self._cond.notify_all()
        self._sources.close()
        events = self._events
        if events is not None:
            events.close()

    def wait_idle(self, timeout: float | None = None, *, pods: Sequence[str] | None = None) -> bool:
        """Wait until no pod sync runs or waits (only those of the pod uids ``pods``
        when given), at most ``timeout`` seconds; return whether they are idle."""
        return self._workers.wait_idle(timeout, keys=pods)

    def run(self) -> None:
        """Run the loop in this thread until ``stop()``. Sources are polled in threads
        of their own, and the engine's events followed in another. A reconciler runs
        once: after ``stop()`` make a new one.

        Raises:
            RuntimeError: it ran, or runs, already.
        """
        with self._cond:
            if self._threaded:
                raise RuntimeError("a Reconciler runs once: make a new one")
            self._threaded = True
        try:
            for name in self._sources.names:
                loop = self._follow_loop if self._sources.follows(name) else self._poll_loop
                self._start_thread(f"podsync-source-{len(self._threads)}", loop, name)
            if self._follow_events:
                self._start_thread("podsync-events", self._event_loop)
            while not self._stop.is_set():
                try:
                    wait = self.tick()
                except Exception as exc:  # a bug of the loop: reported, and the loop goes on
                    self._notice(NoticeKind.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
                    wait = min(1.0, self._sync_period)
                with self._cond:
                    if not self._wanted and not self._reads and not self._stop.is_set():
                        self._cond.wait(wait)
        finally:
            self._shut_down()

    def __enter__(self) -> Reconciler:
        thread = threading.Thread(target=self.run, name="podsync-loop", daemon=True)
        self._loop_thread = thread
        thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        self._loop_thread.join()

    def tick(self) -> float:
        """Do what is due now - poll the sources whose period has come (with
        ``run()``: merge what their threads read), sync when a source changed, a sync
        was asked for, or a period or back-off ended - and return the seconds until
        something is due next. For an embedder that runs its own loop (``run()`` calls
        it); the pods' syncs go on in the workers after it returns."""
        with self._tick_lock:
            now = self._clocks.elapsed()
            changed = self._take_sources(now)
            with self._cond:
                wanted, self._wanted = self._wanted, False
                later, self._wake_asked = self._wake_asked, None
            if later is not None:
                self._later = later if self._later is None else min(self._later, later)
            if self._sources_heard(now) and self._round_due(now, wanted or changed):
                self._round(now)
            now = self._clocks.elapsed()
            if not self._sources_heard(now):
                # Woken by the sources' threads as they report; at the latest then.
                return max(0.0, self._started + self._first_poll_bound() - now)
            return max(0.0, self._next_due() - now)

    # -- sources ------------------------------------------------------------------------

    def _sources_heard(self, now: float) -> bool:
        """Whether every source was read once, or a source period passed: before,
        a round would sync a desired state that is still being read (a source thread
        may not have reported yet; a hanging URL gets one period)."""
        if len(self._polled) == len(self._sources.names):
            return True
        return now - self._started >= self._first_poll_bound()

    def _first_poll_bound(self) -> float:
        return max(self._periods.values(), default=self._source_period)

    def _take_sources(self, now: float) -> bool:
        """Merge the sources' new polls; whether the desired pods changed."""
        if self._threaded:
            with self._cond:
                reads, self._reads = self._reads, {}
        else:
            reads = {}
            for name in self._sources.names:
                if now >= self._next_poll[name] or self._sources.read_at_every_tick(name):
                    reads[name] = self._sources.poll(name)
                    self._next_poll[name] = now + self._periods[name]
        if not reads:
            return False
        self._polled.update(reads)
        result = self._sources.update(reads)
        for name in self._sources.names:
            message = result.errors.get(name)
            if message is not None:
                # Said again at each poll until fixed, as the kubelet's file source logs
                # a file it cannot process at each pass (extractFromDir): a bad file
                # runs nothing new and deletes nothing, and must not go unnoticed.
                self._notice(NoticeKind.SOURCE_ERROR, message, source=name)
                self._source_errors[name] = message
                self._report("source_error", name, message)
            elif name in reads:
                if self._source_errors.pop(name, None) is not None:
                    self._notice(NoticeKind.SOURCE_OK, f"{name}: read again", source=name)
                self._report("source_ok", name)
        return result.desired_changed

    def _poll_loop(self, name: str) -> None:
        while not self._stop.is_set():
            try:
                read = self._sources.poll(name)
            except Exception as exc:  # a bug: the source is in error, the thread goes on
                read = SourceRead((), False, f"{name}: cannot read: {type(exc).__name__}: {exc}")
            self._deliver(name, read)
            self._stop.wait(self._periods[name])

    def _follow_loop(self, name: str) -> None:
        """A watched source (etcd): each change is delivered as it happens."""

        def note(message: str) -> None:
            self._notice(NoticeKind.SOURCE_REREAD, message, source=name)

        while not self._stop.is_set():
            try:
                self._sources.follow(name, functools.partial(self._deliver, name), self._stop, note)
            except Exception as exc:  # a bug: the source is in error, followed again
                self._deliver(
                    name, SourceRead((), False, f"{name}: cannot read: {type(exc).__name__}: {exc}")
                )
                self._stop.wait(1.0)
            else:
                return

    def _deliver(self, name: str, read: SourceRead) -> None:
        """Hand a source's read to the loop (from the source's thread) and wake it."""
        with self._cond:
            earlier = self._reads.get(name)
            if earlier is not None and earlier.changed and not read.error:
                # Not merged yet: the change it saw must not be lost.
                read = attrs.evolve(read, changed=True)
            self._reads[name] = read
            self._cond.notify_all()

    # -- rounds -------------------------------------------------------------------------

    def _round_due(self, now: float, asked: bool) -> bool:
        if self._retry_at is not None:
            # After a failed round, the engine gets its back-off whatever is asked.
            return now >= self._retry_at
        if asked or now >= self._next_sync or now >= self._next_gc:
            return True
        wakes = (self._next_wake, self._later)
        return any(wake is not None and now >= wake for wake in wakes)

    def _next_due(self) -> float:
        if self._retry_at is not None:
            due = self._retry_at
        else:
            due = min(self._next_sync, self._next_gc)
            for wake in (self._next_wake, self._later):
                if wake is not None:
                    due = min(due, wake)
        if not self._threaded:
            due = min(due, *self._next_poll.values())
        return due

    def _options_now(self, gc: bool) -> PlanOptions:
        """The options of a round: deletions only for the kinds of source whose every
        source was read once (within the caller's ``ready_sources``, when given), and
        collection only in a GC round."""
        not_ready = self._sources.kinds_not_ready()
        ready = self._options.ready_sources
        if ready is not None:
            ready = ready - not_ready
        elif not_ready:
            # Pods of source ``api`` wait too while none is given in memory (a program's
            # own, which this loop does not know); with ``pods=`` they are this loop's.
            kinds = {"file", "http", "etcd"} | (self._sources.kinds & {"api"})
            ready = frozenset(kinds) - not_ready
        return attrs.evolve(
            self._options, ready_sources=ready, gc=self._options.gc if gc else _NO_GC
        )

    def _round(self, now: float) -> None:
        if self._later is not None and self._later <= now:
            self._later = None  # this round is the one it asked for
        gc = now >= self._next_gc
        options = self._options_now(gc)
        desired = self._sources.desired
        started = self._clocks.elapsed()
        with self._cond:
            observed_at = self._done_count
            self._seq += 1
            observed_seq = self._seq
            pull_failures = dict(self._pull_failures)
            stopped, self._stopped_since = self._stopped_since, set()
        for cid in stopped:
            self._stop_records.pop(cid, None)
        try:
            result = sync(
                desired,
                self._engine(),
                options=options,
                workers=1,
                on_event=self._event,
                probe=self._probe,
                hook_timeout=self._hook_timeout,
                probe_timeout=self._probe_timeout,
                clock=self._clocks.given,
                before_apply=_keep_plan,
                # In memory, as the kubelet's prober keeps them: no record per probe.
                probe_states=self._probe_states,
                # A collection round also removes the emptyDir volumes that pods
                # gone earlier left behind (a removal that failed).
                volumes=gc,
                # A copy: the round applies nothing, the workers record the failures.
                pull_failures=pull_failures,
                # A steady state with stopped containers lists no volumes each round.
                stop_records=self._stop_records,
            )
        except (RuntimeCallError, OSError) as exc:
            self._round_failed(now, started, " ".join(str(exc).split()))
            return
        except Exception as exc:  # a bug of the loop: reported, and retried
            self._round_failed(now, started, f"{type(exc).__name__}: {exc}", internal=True)
            return
        if self._failures:
            self._notice(
                NoticeKind.ENGINE_BACK, f"sync works again after {self._failures} failed round(s)"
            )
        self._failures, self._retry_at = 0, None
        self._next_sync = now + self._sync_period
        if gc:
            self._next_gc = now + self._gc_period
        self._alone = alone_syncable(desired, result.plan, result.observation)
        self._dispatch(result.plan, observed_at, observed_seq, {p.uid: p for p in desired})
        self._next_wake = self._wake_after(result.plan, desired, now)
        recheck = self._recheck_died(result.observation, now)
        if recheck is not None:
            self._next_wake = recheck if self._next_wake is None else min(self._next_wake, recheck)
        self._report_rejections(result.plan)
        self._report("sync_done", self._clocks.elapsed() - started, True)
        if self._boards:
            self._report("desired_seen", desired)
            failed = tuple(pull_failures.values())
            self._report("pods_seen", _statuses(desired, result, options, failed))
            self._report_usage(self._engine(), result, options, now)

    def _round_failed(
        self, now: float, started: float, message: str, *, internal: bool = False
    ) -> None:
        self._failures += 1
        delay = doubling(1.0, self._sync_period, self._failures)
        self._retry_at = now + delay
        kind = NoticeKind.INTERNAL_ERROR if internal else NoticeKind.SYNC_ERROR
        self._notice(kind, f"sync failed: {message} (retrying in {delay:g}s)")
        self._report("sync_done", self._clocks.elapsed() - started, False, message)

    def _engine(self) -> Runtime:
        """The runtime; the default one is made on first use (from any thread)."""
        with self._engine_lock:
            if self._runtime is None:
                self._runtime = _default_runtime()
            return self._runtime

    def _dispatch(
        self, plan: Plan, observed_at: int, observed_seq: int, desired: Mapping[str, Pod]
    ) -> None:
        """Each pod's part of ``plan`` to the pod's worker. A pod whose sync runs, or
        ended after the observation the plan was made from, or whose container died
        after it, is not given this plan (it would act on what that sync changed, or
        miss the death): it is synced again alone once its worker is free, as the
        kubelet's pod worker runs a pod's pending update after its sync
        (``_resync``; a fresh round when it may not be) - unless its own sync alone,
        begun after the observation with the same pod, has done or will do what the
        plan would (``_superseded``)."""
        if self._stop.is_set():
            return  # stopping: no new work
        stale = False
        for pod_plan in plan.pods:
            if all(isinstance(a, Wait) for a in pod_plan.actions):
                continue
            uid, pod = pod_plan.uid, desired.get(pod_plan.uid)
            with self._cond:
                news = self._news.get(uid, -1) > observed_seq
                again = news or self._done_at.get(uid, -1) >= observed_at
                if again and self._superseded(uid, pod, observed_seq):
                    continue
            if again:
                stale = not self._resync(uid) or stale
                continue
            part = Plan(
                pulls=tuple(p for p in plan.pulls if uid in p.pods),
                pods=(pod_plan,),
                options=plan.options,
            )
            after = functools.partial(self._resync_unless_superseded, uid, pod, observed_seq)
            self._workers.submit(uid, functools.partial(self._apply, part), again=after)
        if plan.cleanup:
            part = Plan(cleanup=plan.cleanup, options=plan.options)
            self._workers.submit(
                _CLEANUP_KEY, functools.partial(self._apply, part), again=self.request_sync
            )
        if stale:
            self.request_sync()

    def _apply(self, part: Plan) -> None:
        result: ApplyResult | None = None
        try:
            result = apply(
                part,
                self._engine(),
                workers=1,
                on_event=self._event,
                hook_timeout=self._hook_timeout,
                clock=self._clocks.given,
            )
        finally:
            self._applied([pod_plan.uid for pod_plan in part.pods], result)

    def _wake_after(self, plan: Plan, desired: Sequence[Pod], now: float) -> float | None:
        """When to sync again before the period: when a crash-loop back-off or an image
        pull's back-off ends (the restart or the pull is due then, not at the next
        period), and when the shortest probe period has passed (probes run on their own
        periods)."""
        waits = [
            a.seconds
            for a in plan.actions
            if isinstance(a, Wait) and a.reason in BACK_OFFS and a.seconds > 0
        ]
        if self._probe:
            waits.extend(
                float(probe.period_seconds)
                for pod in desired
                for container in (*pod.init_containers, *pod.containers)
                for probe in probes_of(container).values()
            )
        return now + min(waits) if waits else None

    # -- threads and shutdown -----------------------------------------------------------

    def _start_thread(self, name: str, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _shut_down(self) -> None:
        self._stop.set()
        self._sources.close()
        with self._cond:
            events = self._events
        if events is not None:
            events.close()
        finished = self._workers.close(self._shutdown_timeout)
        left = (
            "" if finished else f"; syncs still running after {self._shutdown_timeout:g}s were left"
        )
        if self._owns_runtime and self._runtime is not None and finished:
            self._runtime.close()
        self._notice(NoticeKind.STOPPED, f"stopped; the pods keep running{left}")


def _keep_plan(plan: Plan, observation: Observation) -> bool:
    """``sync``'s ``before_apply``: the loop applies the plan pod by pod itself."""
    return False
