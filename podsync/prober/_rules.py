"""The prober's rules, purely: one probe's state, what a result does to it, when it runs.

The modern kubelet runs one worker per container and probe
(``pkg/kubelet/prober/worker.go``, kubelet-modern.md §4). Its rules, ported here as
values and functions with an explicit clock, so that a one-shot ``podsync apply`` and a
continuous loop share them:

* A new container starts from the initial verdict of its kind (``doProbe``: readiness
  failure, liveness success, startup unknown). podsync keys states by container id, so
  a replaced container starts over, as the worker does when it sees a new id.
* No probe runs while the container has been up for less than ``initialDelaySeconds``
  (the worker compares whole seconds since the start).
* Until the container has started - its startup probe succeeded, or it has none - only
  the startup probe runs; once it has started the startup probe runs no more
  (``doProbe``'s "disable other probes until container has started").
* A verdict changes only after ``failureThreshold`` consecutive failures or
  ``successThreshold`` consecutive successes (``resultRun``).
* After a liveness or startup verdict of failure the probe goes on hold: the container
  is killed, and nothing probes it again (the worker waits for a new container id).
* A probe that could not be run (the runtime call failed, no address) changes nothing:
  the kubelet throws a prober error's result away.

The worker probes once per ``periodSeconds`` on a ticker. podsync probes when a probe is
due (see ``ProbeState.due``), which a loop can ask at every tick and a one-shot sync
once: there, a probe runs at most once per sync *and* at most once per period, and its
state is kept between syncs (the apply side stores it in the pod's directory), so
consecutive failures across syncs count toward the threshold.

Contract: pure (no I/O, no clock); every time is an argument.
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import attrs

from podsync.model._pod import Container, Probe

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["ProbeKind", "ProbeResult", "ProbeState"]


class ProbeKind(enum.StrEnum):
    """Which probe of a container (``livenessProbe``, ``readinessProbe``, ``startupProbe``)."""

    LIVENESS = "liveness"
    READINESS = "readiness"
    STARTUP = "startup"


class ProbeResult(enum.StrEnum):
    """A probe's outcome, and the verdict its thresholds make of the outcomes (the
    kubelet's ``results.Result``). ``UNKNOWN`` is only a verdict: startup's, before
    its first."""

    SUCCESS = "success"
    FAILURE = "failure"
    UNKNOWN = "unknown"


# The verdict of a new container, by kind (worker.go: initialValue).
_INITIAL = {
    ProbeKind.LIVENESS: ProbeResult.SUCCESS,
    ProbeKind.READINESS: ProbeResult.FAILURE,
    ProbeKind.STARTUP: ProbeResult.UNKNOWN,
}

# A sync that runs on a timer (cron, a loop with back-off) starts a little early or late:
# a probe whose period has passed give or take this much is due, so that a sync every
# ``periodSeconds`` probes at every sync rather than at every other one.
PERIOD_SLACK = 0.5


@attrs.frozen
class ProbeState:
    """One probe of one container instance: its verdict and how it got there.

    Attributes:
        kind: liveness, readiness or startup.
        verdict: what the probe says of the container now (after the thresholds).
        last_result: the outcome of its last run; ``None`` before the first.
        run: how many runs in a row ended as ``last_result`` (the worker's
            ``resultRun``; 0 again once a liveness or startup failure is decided).
        last_probe: when it last ran, seconds since the epoch; ``None`` before.
    """

    kind: ProbeKind
    verdict: ProbeResult
    last_result: ProbeResult | None = None
    run: int = 0
    last_probe: float | None = None

    @classmethod
    def initial(cls, kind: ProbeKind) -> ProbeState:
        """The state of a probe of a new container: no run yet, the kind's initial
        verdict (readiness failure, liveness success, startup unknown)."""
        return cls(kind, _INITIAL[kind])

    @property
    def on_hold(self) -> bool:
        """True when the probe runs no more for this container: a liveness or startup
        verdict of failure (the container is to be killed), or a startup probe that
        succeeded (the container has started)."""
        if self.kind is ProbeKind.READINESS:
            return False
        if self.verdict is ProbeResult.FAILURE:
            return True
        return self.kind is ProbeKind.STARTUP and self.verdict is ProbeResult.SUCCESS

    def due(self, probe: Probe, *, started_at: float, now: float) -> bool:
        """Whether ``probe`` runs at ``now`` for a container that started at
        ``started_at``: not on hold, up for ``initialDelaySeconds`` (in whole seconds,
        as the worker counts), and never run, or last run at least ``periodSeconds``
        ago (give or take ``PERIOD_SLACK``). The gate between the startup probe and the
        others is ``due_probes``'."""
        if self.on_hold:
            return False
        if math.floor(now - started_at) < probe.initial_delay_seconds:
            return False
        if self.last_probe is None:
            return True
        return now - self.last_probe >= probe.period_seconds - PERIOD_SLACK

    def after(self, probe: Probe, result: ProbeResult, *, now: float) -> ProbeState:
        """The state after a run of ``probe`` at ``now`` that gave ``result`` (success
        or failure): the verdict turns to ``result`` once ``failureThreshold``
        failures, or ``successThreshold`` successes, came in a row (worker.go,
        ``doProbe``).

        Raises:
            ValueError: ``result`` is ``UNKNOWN`` (a probe that could not be run
                changes no state: leave it as it is).
        """
        if result is ProbeResult.UNKNOWN:
            raise ValueError("a probe that could not be run changes no state")
        run = self.run + 1 if result is self.last_result else 1
        threshold = (
            probe.failure_threshold if result is ProbeResult.FAILURE else probe.success_threshold
        )
        verdict = self.verdict
        if run >= threshold:
            verdict = result
            if result is ProbeResult.FAILURE and self.kind is not ProbeKind.READINESS:
                run = 0  # on hold from now on; the worker resets its count
        return ProbeState(self.kind, verdict, result, run, now)


def _probe_of(container: Container, kind: ProbeKind) -> Probe | None:
    if kind is ProbeKind.LIVENESS:
        return container.liveness_probe
    if kind is ProbeKind.READINESS:
        return container.readiness_probe
    return container.startup_probe


def probes_of(container: Container) -> dict[ProbeKind, Probe]:
    """The probes ``container`` has, by kind, in the order startup, liveness, readiness."""
    found = {
        kind: _probe_of(container, kind)
        for kind in (ProbeKind.STARTUP, ProbeKind.LIVENESS, ProbeKind.READINESS)
    }
    return {kind: probe for kind, probe in found.items() if probe is not None}


def states_for(
    container: Container, known: dict[ProbeKind, ProbeState] | None = None
) -> dict[ProbeKind, ProbeState]:
    """The states of ``container``'s probes: ``known`` ones (a record), the initial
    state for the others; states of probes the container no longer has are dropped."""
    known = known or {}
    states: dict[ProbeKind, ProbeState] = {}
    for kind in probes_of(container):
        state = known.get(kind)
        fresh = state is None or state.kind is not kind
        states[kind] = ProbeState.initial(kind) if fresh or state is None else state
    return states


def started(container: Container, states: dict[ProbeKind, ProbeState]) -> bool:
    """Whether a running container has started: it has no startup probe, or that
    probe's verdict is success (``UpdatePodStatus``, ``prober_manager.go``)."""
    if container.startup_probe is None:
        return True
    state = states.get(ProbeKind.STARTUP)
    return state is not None and state.verdict is ProbeResult.SUCCESS


def ready(container: Container, states: dict[ProbeKind, ProbeState]) -> bool:
    """Whether a running container is ready: it has started, and it has no readiness
    probe or that probe's verdict is success (``UpdatePodStatus``)."""
    if not started(container, states):
        return False
    if container.readiness_probe is None:
        return True
    state = states.get(ProbeKind.READINESS)
    return state is not None and state.verdict is ProbeResult.SUCCESS


def due_probes(
    container: Container,
    states: dict[ProbeKind, ProbeState],
    *,
    started_at: float,
    now: float,
) -> tuple[ProbeKind, ...]:
    """The probes of a running ``container`` that run at ``now``: the startup probe
    until it succeeds, then the liveness and readiness probes, each when it is due."""
    has_started = started(container, states)
    due: list[ProbeKind] = []
    for kind, probe in probes_of(container).items():
        if (kind is ProbeKind.STARTUP) == has_started:
            continue  # startup runs only before the start, the others only after it
        state = states.get(kind) or ProbeState.initial(kind)
        if state.due(probe, started_at=started_at, now=now):
            due.append(kind)
    return tuple(due)


# ---------------------------------------------------------------------------------------
# The stored form of a container's probe states (the apply side writes it in the pod's
# directory): JSON, one object per kind.


def states_to_json(states: dict[ProbeKind, ProbeState]) -> str:
    """The stored form of one container's probe states: canonical JSON."""
    data = {
        kind.value: {
            "verdict": s.verdict.value,
            "last_result": s.last_result.value if s.last_result is not None else None,
            "run": s.run,
            "last_probe": s.last_probe,
        }
        for kind, s in states.items()
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def states_from_json(text: str) -> dict[ProbeKind, ProbeState] | None:
    """The probe states ``states_to_json`` wrote, or ``None`` when ``text`` is not such
    a record (damaged, or written by something else): the caller starts over from the
    initial states, which never kills a container sooner than a record would."""
    try:
        data: Any = json.loads(text)
        if not isinstance(data, dict):
            return None
        states: dict[ProbeKind, ProbeState] = {}
        for key, item in data.items():
            kind = ProbeKind(key)
            last = item["last_result"]
            run, when = item["run"], item["last_probe"]
            if isinstance(run, bool) or not isinstance(run, int) or run < 0:
                return None
            if when is not None and (isinstance(when, bool) or not isinstance(when, int | float)):
                return None
            states[kind] = ProbeState(
                kind,
                ProbeResult(item["verdict"]),
                ProbeResult(last) if last is not None else None,
                run,
                float(when) if when is not None else None,
            )
    except (ValueError, TypeError, KeyError):
        return None
    return states
