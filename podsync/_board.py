"""The status board of the continuous loop (``podsync run``): what the loop reports, and
what its HTTP endpoints read.

The loop's threads write to a ``LoopBoard`` (a source was read or failed, a sync round
ended, an action ended, the latest pod statuses); ``serve`` answers ``/healthz``,
``/pods`` and ``/metrics`` from it. The board is thread-safe: every write and every read
holds one lock, so a read never sees half a write.

Health is the kubelet's ``syncLoop`` health check (``pkg/kubelet/kubelet.go``,
``syncLoopHealthCheck``: the loop is healthy while its last sync is recent, with a
threshold of two sync periods before it fails), asked of *successful* syncs: a loop that
runs but cannot reach the engine, or cannot read its pods, is not keeping the host in
shape. One failed round within two periods of a good one is not yet a failure.

Metrics go through ``prometheus_client`` (the optional ``metrics`` extra:
``pip install 'podsync[metrics]'``) into a ``CollectorRegistry`` of the board's own:
podsync registers nothing in the process-global default registry, so an embedder's
metrics and two boards in one process never mix. Without the extra the board keeps
everything else and ``metrics_text`` returns ``None``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import attrs

from podsync._clock import Clock, system_monotonic, system_time
from podsync._status import PodPhase, PodStatus
from podsync._status_json import statuses_to_json

__all__: list[str] = []

#: The results ``LoopBoard.action_done`` counts (``ActionStatus.DONE`` is ``ok``).
ACTION_RESULTS = ("ok", "failed", "skipped")

#: What ``/metrics`` says when the ``metrics`` extra is not installed.
METRICS_MISSING = (
    "podsync's metrics need the prometheus_client package: pip install 'podsync[metrics]'\n"
)

#: The buckets of the sync-duration histogram, in seconds: a round of a steady host takes
#: milliseconds (one list call), one that pulls images or waits for a grace period
#: seconds to minutes; prometheus_client's default buckets end at 10 s.
SYNC_DURATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@attrs.frozen
class Health:
    """What ``/healthz`` answers.

    Attributes:
        ok: the last successful sync completed within two sync periods.
        reason: ``ok``, or why not, for people: ``no sync has completed yet``,
            ``last sync failed: <message> (...)``, or ``last successful sync 25.0s ago,
            more than two sync periods (2 x 10s)``.
    """

    ok: bool
    reason: str


class _Metrics:
    """The board's metrics, in a registry of their own (see the module docstring)."""

    def __init__(self) -> None:
        import prometheus_client as pc

        self.registry = pc.CollectorRegistry(auto_describe=True)
        r = self.registry
        self.sync_duration = pc.Histogram(
            "podsync_sync_duration_seconds",
            "Duration of podsync's sync rounds (observe, plan, apply).",
            buckets=SYNC_DURATION_BUCKETS,
            registry=r,
        )
        self.sync_rounds = pc.Counter(
            "podsync_sync_rounds",
            "Sync rounds, by result (ok or failed).",
            ["result"],
            registry=r,
        )
        self.actions = pc.Counter(
            "podsync_actions",
            "Actions applied to the engine, by kind (Create, Kill, ...) and result "
            "(ok, failed or skipped).",
            ["kind", "result"],
            registry=r,
        )
        self.pods = pc.Gauge(
            "podsync_pods",
            "Pods, by phase, as the last sync round saw them.",
            ["phase"],
            registry=r,
        )
        self.source_errors = pc.Counter(
            "podsync_source_errors",
            "Failed reads of a pod source (the source keeps its last good pods), by source.",
            ["source"],
            registry=r,
        )
        self.source_up = pc.Gauge(
            "podsync_source_up",
            "1 when the last read of the source succeeded, 0 when it failed.",
            ["source"],
            registry=r,
        )
        self.last_success = pc.Gauge(
            "podsync_last_successful_sync_timestamp_seconds",
            "Unix time the last successful sync round completed (0: none yet).",
            registry=r,
        )
        # Every series that exists from the start is exported from the start, at 0, so
        # that rate() and "== 0" alerts work before the first event.
        for result in ("ok", "failed"):
            self.sync_rounds.labels(result)
        for phase in PodPhase:
            self.pods.labels(phase.value).set(0)
        self._generate = pc.generate_latest

    def text(self) -> str:
        return self._generate(self.registry).decode("utf-8")


def _load_metrics() -> _Metrics | None:
    try:
        return _Metrics()
    except ImportError:  # the ``metrics`` extra is not installed
        return None


class LoopBoard:
    """The loop's status board (thread-safe): the loop writes, the HTTP server reads.

    Args:
        sync_period: the loop's sync period in seconds; health fails when the last
            successful sync is more than two periods old.
        clock: a monotonic clock, read for the age of the last sync (the system's
            monotonic clock by default, so a step of the wall clock changes no age).
        wall_clock: seconds since the epoch, read once per successful sync for the
            ``podsync_last_successful_sync_timestamp_seconds`` metric (the system's
            clock by default).

    Raises:
        ValueError: ``sync_period`` is not a positive, finite number of seconds.
    """

    def __init__(
        self,
        sync_period: float,
        *,
        clock: Clock | None = None,
        wall_clock: Clock | None = None,
    ) -> None:
        if not (sync_period > 0 and math.isfinite(sync_period)):
            raise ValueError(
                f"the sync period must be a positive number of seconds, got {sync_period!r}"
            )
        self._period = float(sync_period)
        self._clock = clock or system_monotonic
        self._wall_clock = wall_clock or system_time
        self._lock = threading.Lock()
        self._last_success: float | None = None  # monotonic
        self._last_failure: str | None = None  # the message of the last round, if it failed
        self._statuses: tuple[PodStatus, ...] | None = None
        self._metrics = _load_metrics()

    # --- the loop's side ------------------------------------------------------------

    def source_ok(self, source: str) -> None:
        """``source`` was read (its pods are current)."""
        with self._lock:
            if self._metrics is not None:
                self._metrics.source_up.labels(source).set(1)

    def source_error(self, source: str, message: str) -> None:
        """``source`` could not be read or parsed (``message`` says why); the loop keeps
        its last good pods."""
        del message  # logged by the loop; a metric label must not carry free text
        with self._lock:
            if self._metrics is not None:
                self._metrics.source_errors.labels(source).inc()
                self._metrics.source_up.labels(source).set(0)

    def sync_done(self, duration: float, ok: bool, message: str = "") -> None:
        """A sync round ended, after ``duration`` seconds; ``ok`` False when it failed
        (``message`` says why: shown by ``/healthz``).

        Raises:
            ValueError: ``duration`` is negative or not a number.
        """
        if not duration >= 0:
            raise ValueError(f"a sync duration is 0 or more seconds, got {duration!r}")
        with self._lock:
            if ok:
                self._last_success = self._clock()
                self._last_failure = None
            else:
                self._last_failure = message or "(no message)"
            if self._metrics is not None:
                self._metrics.sync_duration.observe(duration)
                self._metrics.sync_rounds.labels("ok" if ok else "failed").inc()
                if ok:
                    self._metrics.last_success.set(self._wall_clock())

    def action_done(self, kind: str, result: str) -> None:
        """An action of ``kind`` (its class name: ``Create``, ``Kill``, ...) ended with
        ``result``: ``ok``, ``failed`` or ``skipped``.

        Raises:
            ValueError: ``result`` is none of those.
        """
        if result not in ACTION_RESULTS:
            raise ValueError(
                f"an action result is one of {', '.join(ACTION_RESULTS)}, got {result!r}"
            )
        with self._lock:
            if self._metrics is not None:
                self._metrics.actions.labels(kind, result).inc()

    def pods_seen(self, statuses: Sequence[PodStatus]) -> None:
        """The latest statuses of the pods (replacing the previous ones)."""
        kept = tuple(statuses)
        with self._lock:
            self._statuses = kept
            if self._metrics is not None:
                counts = dict.fromkeys(PodPhase, 0)
                for status in kept:
                    counts[status.phase] += 1
                for phase, count in counts.items():
                    self._metrics.pods.labels(phase.value).set(count)

    # --- the server's side -----------------------------------------------------------

    def health(self) -> Health:
        """Whether the last successful sync completed within two sync periods, and why
        not."""
        with self._lock:
            last_success, failure = self._last_success, self._last_failure
            now = self._clock()
        if last_success is not None and now - last_success <= 2 * self._period:
            return Health(True, "ok")
        since = (
            "no successful sync yet"
            if last_success is None
            else f"last successful sync {now - last_success:.1f}s ago"
        )
        if failure is not None:
            return Health(False, f"last sync failed: {failure} ({since})")
        if last_success is None:
            return Health(False, "no sync has completed yet")
        return Health(False, f"{since}, more than two sync periods (2 x {self._period:g}s)")

    def pods_json(self) -> str | None:
        """The latest pod statuses in their JSON form (``podsync status --json``'s:
        ``statuses_to_json``), or ``None`` before the loop has seen any - an empty
        list would say that no pods run."""
        with self._lock:
            kept = self._statuses
        return None if kept is None else statuses_to_json(kept)

    def metrics_text(self) -> str | None:
        """The metrics in the Prometheus text format, or ``None`` without the
        ``metrics`` extra (``prometheus_client``)."""
        if self._metrics is None:
            return None
        with self._lock:
            return self._metrics.text()
