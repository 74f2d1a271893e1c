"""Deaths: the engine's events that ``Reconciler`` follows, and the pod syncs they start.

The seed noticed a dead container at the next sync period. The loop follows the
engine's events (``docker events``; the modern kubelet's PLEG relists every second,
``pkg/kubelet/pleg/generic.go``) and, when a container of one of its pods dies or is
OOM-killed, syncs at once. How much it syncs is the kubelet's choice too: the PLEG
hands the event to the pod's own worker (``pkg/kubelet/pod_workers.go``,
``UpdatePod``), which syncs that pod alone from the runtime's view of that pod
(``GetPodStatus``, a list filtered by the pod's sandbox) - not a relist of the node.
So here a death syncs its pod alone, on its pod's worker, from a list of that pod's
containers (``PodListRuntime``, a label filter; ``sync(pods_only=True)``): a restart
does not wait for a round of the whole host in progress, nor for a list of every
container on it (issue 33: at 110 pods and 10 crash-looping ones, a round lists about
400 containers). A round follows the pod's sync only for what a round does and a pod's
sync does not (``_round_follows``): the statuses a board is told, the wake at the end of
a back-off, another look at a container said dead but listed running.

A pod's own sync and the rounds stay out of each other's way: both run on the pod's
worker, one at a time; a round's plan for a pod whose container died after the round's
observation is dropped (the pod's own sync handles the death); a round's plan that a
pod's own sync begun after its observation already carried out is dropped too
(``_superseded``); and a pod whose round plan came while its sync ran, or was made
before that sync ended, is synced again alone once its worker is free (``_resync``), as
the kubelet's pod worker runs a pod's pending update after its sync - not a fresh round
of the whole host, which under churn ran back to back (issue 33).

A pod is synced alone only when the last round admitted it and saw every container of
it labelled with its uid (``alone_syncable``): a pod the round rejected stays rejected
(admission weighs the pods against each other, which one pod's sync cannot), and a
2014 kubelet's container of the pod, taken over by its name, is not in the pod's list.
Any other death asks for a round, as before; so does every death on a runtime that is
no ``PodListRuntime``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.actions._actions import Plan, Reason, Wait
from podsync.actions._options import GCPolicy, PlanOptions
from podsync.applier._results import ApplyResult, Event, EventKind
from podsync.loop._reporting import _RESULTS, NoticeKind, Reporter, action_kind
from podsync.loop._sync import Observation, remember_pull_failures, sync
from podsync.loop._workers import PodWorkers
from podsync.model._pod import Pod
from podsync.model._pulls import PullFailure
from podsync.planner._scope import another_scopes
from podsync.runtime._protocol import (
    Capability,
    EngineEvent,
    EventRuntime,
    PodListRuntime,
    Runtime,
    Stream,
    missing,
)
from podsync.spec._backoff import Backoff
from podsync.spec._labels import LABEL_POD_UID
from podsync.spec._ownership import identify

if TYPE_CHECKING:
    from podsync.host._clock import Clocks

__all__: list[str] = []

# Engine events that mean a container of a pod needs a sync now.
_EXIT_ACTIONS = frozenset({"die", "oom"})
# Docker logs ``die`` before its container list shows the container stopped (the
# daemon's exit handler emits the event, then records the state): a round that still
# sees a died container running looks again after this long, doubling, for this long.
_DIED_RECHECK = 0.05
_DIED_PATIENCE = 5.0

# The waits that end at a time the plan knows: a round is due then.
BACK_OFFS = frozenset({Reason.BACK_OFF, Reason.IMAGE_PULL_BACK_OFF})

# A pod's own sync collects nothing by count and removes no image: the rounds do.
_NO_GC = GCPolicy(max_per_container=None, max_total=None, remove_dangling_images=False)


def alone_syncable(desired: Sequence[Pod], plan: Plan, observation: Observation) -> dict[str, Pod]:
    """The pods of a round that a death may sync alone, by uid: those the round's
    ``plan`` did not reject, none of whose containers in ``observation`` lacks the
    label of its pod's uid (a 2014 kubelet's container, known by its name)."""
    unlabelled = set()
    for container in observation.containers:
        instance = identify(container)
        if instance is not None and not instance.labelled:
            unlabelled.add(instance.pod_uid)
    rejected = {r.uid for r in plan.rejected}
    return {
        pod.uid: pod for pod in desired if pod.uid not in rejected and pod.uid not in unlabelled
    }


class DeathWatch(Reporter):
    """The engine-events half of ``Reconciler``: the events thread, apply's
    ``on_event``, the recheck of containers said dead but listed running, and the pod
    syncs a death starts. The state is ``Reconciler``'s (made in its ``__init__``)."""

    _stop: threading.Event
    _cond: threading.Condition
    _clocks: Clocks
    _options: PlanOptions
    _sync_period: float
    _hook_timeout: float
    _workers: PodWorkers
    _events: Stream[EngineEvent] | None
    _died: dict[str, tuple[float, float]]
    _own_stops: dict[str, float]
    _stopped_since: set[str]
    _stop_records: dict[str, str]
    _pull_failures: dict[tuple[str, str], PullFailure]
    _done_count: int
    _done_at: dict[str, int]
    _wake_asked: float | None  # a round due then, taken by the coordinator
    # The order in which observations and pods' own syncs begin, and by pod uid the
    # last death heard of and the last own sync begun (its number and its pod).
    _seq: int
    _news: dict[str, int]
    _alone_began: dict[str, tuple[int, Pod]]
    # The pods the last round lets a death sync alone (``alone_syncable``), by uid;
    # replaced whole by each round, read by the events thread.
    _alone: dict[str, Pod]

    # Reconciler's own: the engine (made on first use), and a round asked for.
    _engine: Callable[[], Runtime]
    request_sync: Callable[[], None]
    _options_now: Callable[[bool], PlanOptions]

    def _event_loop(self) -> None:
        backoff, first = Backoff(1.0, self._sync_period), True
        while not self._stop.is_set():
            try:
                engine = self._engine()
                if not isinstance(engine, EventRuntime):
                    # Said once: the loop then syncs on its period alone.
                    lack = missing(Capability.EVENTS, "following engine events")
                    self._notice(NoticeKind.EVENTS_ERROR, f"{lack}: syncing on the period alone")
                    return
                stream = engine.engine_events()
            except Exception as exc:
                self._notice(NoticeKind.EVENTS_ERROR, f"cannot follow engine events: {exc}")
                self._stop.wait(backoff.next())
                continue
            with self._cond:
                self._events = stream
            if self._stop.is_set():
                stream.close()
                return
            if not first:
                # Events were missed while the stream was down: look at everything.
                self.request_sync()
            first = False
            backoff.reset()
            try:
                for event in stream:
                    if (
                        event.action in _EXIT_ACTIONS
                        and LABEL_POD_UID in event.labels
                        # Another scope's pod dies: nothing for this loop to do.
                        and not another_scopes(event.labels, self._options.scope)
                    ):
                        with self._cond:
                            if event.container_id in self._own_stops:
                                if event.action == "die":
                                    del self._own_stops[event.container_id]
                                continue
                            self._died.setdefault(
                                event.container_id, (self._clocks.elapsed(), _DIED_RECHECK)
                            )
                        self._died_in(event.labels[LABEL_POD_UID])
            except Exception as exc:
                if not self._stop.is_set():
                    self._notice(NoticeKind.EVENTS_ERROR, f"engine events ended: {exc}")
            self._stop.wait(backoff.delay)

    def _died_in(self, uid: str) -> None:
        """A container of pod ``uid`` died: sync the pod alone on its worker when it may
        be (``alone_syncable``, on a ``PodListRuntime``), else ask for a round. A pod
        whose worker is busy syncs alone again once it is free."""
        if self._alone_allowed(uid):
            with self._cond:
                # A round observed before it no longer plans this pod (``_dispatch``).
                self._seq += 1
                self._news[uid] = self._seq
            if self._resync(uid, first=True):
                return
        self.request_sync()

    def _sync_alone(self, uid: str) -> None:
        """A pod's worker job: sync pod ``uid`` alone (``sync(pods_only=True)``) as the
        last round knew it, with deletions off (nothing of another pod is seen anyway),
        no collection by count, no probes (the rounds run them) and copies of the
        loop's stop records and failed pulls; then a round when one must follow
        (``_round_follows``). A pod the last round no longer lets sync alone is left to
        the round."""
        pod = self._alone.get(uid)
        if pod is None:
            self.request_sync()
            return
        options = attrs.evolve(self._options_now(False), allow_deletions=False, gc=_NO_GC)
        with self._cond:
            pull_failures = dict(self._pull_failures)
            stop_records = dict(self._stop_records)
            self._seq += 1
            self._alone_began[uid] = (self._seq, pod)
        result: ApplyResult | None = None
        # Whether a round must follow: unless the pod's sync did all a round would.
        follow = True
        try:
            done = sync(
                [pod],
                self._engine(),
                options=options,
                workers=1,
                on_event=self._event,
                probe=False,
                hook_timeout=self._hook_timeout,
                clock=self._clocks.given,
                pull_failures=pull_failures,
                stop_records=stop_records,
                pods_only=True,
            )
            result = done.apply_result
            follow = self._round_follows(done.plan, done.observation)
        except Exception as exc:  # the engine away, a bug: the round looks again
            key = f"{pod.namespace}/{pod.name}"
            self._notice(
                NoticeKind.SYNC_ERROR,
                f"sync of pod {key} failed: {type(exc).__name__}: {exc}",
                pod=key,
            )
        finally:
            self._applied((uid,), result)
            if follow:
                self.request_sync()

    def _superseded(self, uid: str, pod: Pod | None, observed_seq: int) -> bool:
        """Whether pod ``uid``'s own sync alone does what a round's plan for it, made
        from the observation numbered ``observed_seq``, would: one began after that
        observation with the same ``pod`` (the round's), or one is due after a death
        heard of since and will take the latest pod when it begins. Then the round's
        plan is dropped for the pod and no fresh round is needed for it: under churn,
        each crash-looping pod's own sync made the round in progress stale, and the
        rounds it asked for ran back to back (issue 33). Called with ``_cond`` held."""
        began = self._alone_began.get(uid)
        if began is not None and began[0] > observed_seq and began[1] is pod:
            return True
        news = self._news.get(uid, -1)
        return news > observed_seq and (began is None or began[0] < news)

    def _resync_unless_superseded(self, uid: str, pod: Pod | None, observed_seq: int) -> None:
        """A worker job of pod ``uid``, after the pod's job that a round's plan found
        running: the pod synced again alone (a fresh round when it may not be), unless
        its own sync alone already did what the plan would."""
        with self._cond:
            superseded = self._superseded(uid, pod, observed_seq)
        if superseded:
            return
        if self._alone_allowed(uid):
            self._sync_alone(uid)  # on the pod's worker already
        else:
            self.request_sync()

    def _resync(self, uid: str, *, first: bool = False) -> bool:
        """Sync pod ``uid`` alone once its worker is free (``first``: before the other
        pods' syncs waiting for a worker); False, and nothing done, when it may not be
        (``alone_syncable``, ``PodListRuntime``) or the workers are closed."""
        if not self._alone_allowed(uid):
            return False
        job = functools.partial(self._sync_alone, uid)
        return self._workers.submit(uid, job, again=job, first=first)

    def _alone_allowed(self, uid: str) -> bool:
        return uid in self._alone and isinstance(self._engine(), PodListRuntime)

    def _round_follows(self, plan: Plan, observation: Observation) -> bool:
        """Whether a round must follow a pod's own sync that made ``plan`` from
        ``observation`` at once: when a board is told the pods' statuses (a round
        reports them all), when the plan waits for something other than a back-off's
        end, and when a container said dead is still listed running (the round looks
        again, ``_recheck_died``). A back-off's wait asks for a round when it ends
        (``_wake_asked``: the restart is due then, as ``_wake_after`` wakes a round's).
        Otherwise the pod's sync did all a round would for it, and the next round is
        the period's: under churn, a round after every death (a crash-looping pod's
        too) kept rounds running back to back, each listing the whole host, and the
        pods' own syncs waited for the interpreter behind them (issue 33,
        ``bench_host --trace``)."""
        waits = [a for a in plan.actions if isinstance(a, Wait)]
        ends = [a.seconds for a in waits if a.reason in BACK_OFFS and a.seconds > 0]
        if ends:
            with self._cond:
                at = self._clocks.elapsed() + min(ends)
                asked = self._wake_asked
                self._wake_asked = at if asked is None else min(asked, at)
                self._cond.notify_all()
        if self._boards or len(ends) < len(waits):
            return True
        with self._cond:
            died = set(self._died)
        return any(c.running and c.id in died for c in observation.containers)

    def _applied(self, uids: Collection[str], result: ApplyResult | None) -> None:
        """The bookkeeping after a pod job (``result``: what it applied; ``None``: it
        failed before applying): the pods' syncs are counted done, so a plan observed
        before is stale for them; their failed pulls are kept; the actions reported."""
        with self._cond:
            for uid in uids:
                self._done_at[uid] = self._done_count
            self._done_count += 1
            if result is not None:
                # The pull's failure is this pod's: another pod's worker tries on its own.
                remember_pull_failures(self._pull_failures, result, self._clocks.now(), uids)
        if result is not None:
            for r in result.results:
                self._report("action_done", action_kind(r.action), _RESULTS[r.status])

    def _recheck_died(self, observation: Observation, now: float) -> float | None:
        """When to look again at containers the engine said died but listed running."""
        running = {c.id for c in observation.containers if c.running}
        soonest: float | None = None
        with self._cond:
            for cid, since in list(self._own_stops.items()):
                if cid not in running and now - since > _DIED_PATIENCE:
                    del self._own_stops[cid]  # its die event was missed
            for cid, (since, delay) in list(self._died.items()):
                if cid not in running or now - since > _DIED_PATIENCE:
                    del self._died[cid]
                    continue
                self._died[cid] = (since, delay * 2)
                soonest = now + delay if soonest is None else min(soonest, now + delay)
        return soonest

    def _event(self, event: Event) -> None:
        """Apply's ``on_event``: a stop podsync itself begins is noted first (the
        engine's ``die`` for it asks for no sync), then the event goes to ``on_event``,
        one call at a time."""
        if event.kind is EventKind.STOPPING and event.container_id:
            with self._cond:
                self._own_stops[event.container_id] = self._clocks.elapsed()
                self._stopped_since.add(event.container_id)
        if self._on_event is not None:
            with self._report_lock:
                self._on_event(event)
        self._report("event_seen", event)
