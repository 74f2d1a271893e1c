"""The prober's rules with explicit clocks: thresholds, periods, delays, the startup gate.

Every rule is the modern kubelet's worker (pkg/kubelet/prober/worker.go, doProbe); a
probe's state is fed one result after another, at times the test chooses.
"""

from __future__ import annotations

import pytest

from podsync import Container, Handler, Probe
from podsync.prober import ProbeKind, ProbeResult, ProbeState
from podsync.prober._rules import (
    due_probes,
    ready,
    started,
    states_for,
    states_from_json,
    states_to_json,
)

OK, FAIL = ProbeResult.SUCCESS, ProbeResult.FAILURE
CHECK = Handler(exec_command=("check",))


def feed(kind: ProbeKind, probe: Probe, results: str, *, start: float = 100.0) -> list[str]:
    """The verdict after each of ``results`` ('+' success, '-' failure), one per period."""
    state = ProbeState.initial(kind)
    verdicts = []
    for i, r in enumerate(results):
        state = state.after(probe, OK if r == "+" else FAIL, now=start + i * probe.period_seconds)
        verdicts.append(state.verdict.value[0])  # s(uccess), f(ailure), u(nknown)
    return verdicts


@pytest.mark.parametrize(
    ("kind", "initial"),
    [
        (ProbeKind.LIVENESS, ProbeResult.SUCCESS),
        (ProbeKind.READINESS, ProbeResult.FAILURE),
        (ProbeKind.STARTUP, ProbeResult.UNKNOWN),
    ],
)
def test_a_new_container_starts_from_its_kinds_initial_verdict(kind, initial):
    """worker.go's initialValue: readiness Failure, liveness Success, startup Unknown."""
    assert ProbeState(kind, initial) == ProbeState.initial(kind)


@pytest.mark.parametrize(
    ("results", "verdicts"),
    [
        ("---", "ssf"),  # the third failure in a row decides (failureThreshold 3)
        ("--+--", "sssss"),  # a success in between starts the count over
        ("--+---", "sssssf"),
        ("+++", "sss"),
    ],
)
def test_liveness_fails_after_failure_threshold_failures_in_a_row(results, verdicts):
    assert list(verdicts) == feed(ProbeKind.LIVENESS, Probe(CHECK), results)


def test_a_liveness_failure_puts_the_probe_on_hold():
    """Once failure is decided the container is to be killed: the probe runs no more
    for it, and its count is reset (worker.go: onHold, resultRun = 0)."""
    probe = Probe(CHECK, failure_threshold=1, period_seconds=10)
    state = ProbeState.initial(ProbeKind.LIVENESS).after(probe, FAIL, now=100.0)

    assert (ProbeResult.FAILURE, 0, True) == (state.verdict, state.run, state.on_hold)
    assert not state.due(probe, started_at=0.0, now=1000.0)


@pytest.mark.parametrize(
    ("results", "verdicts"),
    [
        ("+", "s"),  # successThreshold 1: the first success makes it ready
        ("-", "f"),
        ("+---", "sssf"),
        ("+---+", "sssfs"),
    ],
)
def test_readiness_follows_both_thresholds(results, verdicts):
    assert list(verdicts) == feed(ProbeKind.READINESS, Probe(CHECK), results)


def test_readiness_with_a_success_threshold():
    """successThreshold 2: two successes in a row before the container is ready again."""
    probe = Probe(CHECK, success_threshold=2, failure_threshold=1)

    assert list("ffffsf") == feed(ProbeKind.READINESS, probe, "-+-++-")


def test_readiness_never_goes_on_hold():
    """A readiness failure never stops the container, so the probe keeps running."""
    probe = Probe(CHECK, failure_threshold=1)
    state = ProbeState.initial(ProbeKind.READINESS).after(probe, FAIL, now=100.0)

    assert not state.on_hold
    assert state.due(probe, started_at=0.0, now=110.0)


@pytest.mark.parametrize(
    ("results", "verdicts"),
    [
        ("+", "s"),
        ("-" * 29, "u" * 29),  # failureThreshold 30: still undecided
        ("-" * 30, "u" * 29 + "f"),
        ("-" * 29 + "+", "u" * 29 + "s"),
    ],
)
def test_startup_decides_once(results, verdicts):
    """The documentation's slow start: failureThreshold 30, periodSeconds 10."""
    probe = Probe(CHECK, failure_threshold=30, period_seconds=10)

    assert list(verdicts) == feed(ProbeKind.STARTUP, probe, results)


@pytest.mark.parametrize("verdict", [ProbeResult.SUCCESS, ProbeResult.FAILURE])
def test_a_decided_startup_probe_runs_no_more(verdict):
    state = ProbeState(ProbeKind.STARTUP, verdict, verdict, 1, 100.0)

    assert state.on_hold
    assert not state.due(Probe(CHECK), started_at=0.0, now=1000.0)


def test_a_result_that_is_no_result_is_refused():
    """A probe that could not be run changes nothing; feeding UNKNOWN is a bug."""
    with pytest.raises(ValueError, match="changes no state"):
        ProbeState.initial(ProbeKind.LIVENESS).after(Probe(CHECK), ProbeResult.UNKNOWN, now=1.0)


@pytest.mark.parametrize(
    ("delay", "up_for", "due"),
    [
        (0, 0.0, True),
        (5, 4.999, False),  # whole seconds since the start, as the worker counts
        (5, 5.0, True),
        (5, 5.7, True),
    ],
)
def test_the_initial_delay(delay, up_for, due):
    probe = Probe(CHECK, initial_delay_seconds=delay)

    assert due == ProbeState.initial(ProbeKind.LIVENESS).due(
        probe, started_at=100.0, now=100.0 + up_for
    )


@pytest.mark.parametrize(
    ("since_last", "due"),
    [
        (0.0, False),  # a second sync right away does not probe again
        (9.0, False),
        (9.5, True),  # a sync on a 10 s timer that fires a little early still probes
        (10.0, True),
        (3600.0, True),  # a sync an hour later probes once, not 360 times
    ],
)
def test_a_probe_runs_at_most_once_per_period(since_last, due):
    probe = Probe(CHECK, period_seconds=10)
    state = ProbeState.initial(ProbeKind.READINESS).after(probe, FAIL, now=1000.0)

    assert due == state.due(probe, started_at=0.0, now=1000.0 + since_last)


def test_one_shot_syncs_count_failures_across_syncs():
    """A sync every 10 s: the liveness probe fails at each, and the third decides."""
    probe = Probe(CHECK, period_seconds=10)  # failureThreshold 3
    state = ProbeState.initial(ProbeKind.LIVENESS)
    verdicts = []
    for now in (100.0, 110.2, 119.9, 130.0):
        if state.due(probe, started_at=90.0, now=now):
            state = state.after(probe, FAIL, now=now)
        verdicts.append(state.verdict)

    assert [OK, OK, FAIL, FAIL] == verdicts


# --- a container's probes together ---------------------------------------------------


def slow_app(**kwargs) -> Container:
    return Container(
        "app",
        "busybox",
        liveness_probe=Probe(CHECK, period_seconds=10),
        readiness_probe=Probe(Handler(exec_command=("ready",)), period_seconds=5),
        startup_probe=Probe(Handler(exec_command=("up",)), failure_threshold=30),
        **kwargs,
    )


def test_until_started_only_the_startup_probe_runs():
    """All other probes are disabled until the startup probe succeeds."""
    app = slow_app()
    states = states_for(app)

    assert (ProbeKind.STARTUP,) == due_probes(app, states, started_at=0.0, now=100.0)
    assert (False, False) == (started(app, states), ready(app, states))


def test_once_started_liveness_and_readiness_run_and_startup_does_not():
    app = slow_app()
    states = states_for(app)
    states[ProbeKind.STARTUP] = states[ProbeKind.STARTUP].after(app.startup_probe, OK, now=100.0)

    assert (ProbeKind.LIVENESS, ProbeKind.READINESS) == due_probes(
        app, states, started_at=0.0, now=100.0
    )
    assert (True, False) == (started(app, states), ready(app, states))
    states[ProbeKind.READINESS] = states[ProbeKind.READINESS].after(
        app.readiness_probe, OK, now=100.0
    )
    assert ready(app, states)


def test_a_container_without_probes_is_started_and_ready():
    bare = Container("app", "busybox")

    assert ({}, (), True, True) == (
        states_for(bare),
        due_probes(bare, {}, started_at=0.0, now=1.0),
        started(bare, {}),
        ready(bare, {}),
    )


def test_states_follow_the_spec():
    """A probe removed from the spec loses its state; a new one starts fresh."""
    app = Container("app", "busybox", readiness_probe=Probe(CHECK))
    old = {ProbeKind.LIVENESS: ProbeState(ProbeKind.LIVENESS, FAIL, FAIL, 0, 5.0)}

    assert {ProbeKind.READINESS: ProbeState.initial(ProbeKind.READINESS)} == states_for(app, old)


def test_stored_states_round_trip():
    states = {
        ProbeKind.LIVENESS: ProbeState(ProbeKind.LIVENESS, OK, FAIL, 2, 1234.5),
        ProbeKind.STARTUP: ProbeState.initial(ProbeKind.STARTUP),
    }
    text = states_to_json(states)

    assert states == states_from_json(text)
    assert (
        '{"liveness":{"last_probe":1234.5,"last_result":"failure","run":2,"verdict":"success"},'
        '"startup":{"last_probe":null,"last_result":null,"run":0,"verdict":"unknown"}}'
    ) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "{",
        '{"sideways":{}}',
        '{"liveness":{"verdict":"maybe","last_result":null,"run":0,"last_probe":null}}',
        '{"liveness":{"verdict":"success","last_result":null,"run":-1,"last_probe":null}}',
        '{"liveness":{"verdict":"success","last_result":null,"run":true,"last_probe":null}}',
        '{"liveness":{"verdict":"success","last_result":null,"run":0,"last_probe":"x"}}',
        '{"liveness":{"verdict":"success"}}',
    ],
)
def test_a_damaged_record_is_no_record(text):
    assert states_from_json(text) is None
