"""Probes through ``sync`` on FakeRuntime, one sync after another with an explicit clock:
thresholds count across syncs (kept in the pod's directory), a probe runs at most once
per period, the startup probe gates the others, readiness never restarts, the probe's
own timeout and grace period are used, and a dry run counts nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from podsync import (
    Event,
    EventKind,
    Pod,
    parse_pods,
    pod_status,
    sync,
)
from podsync.actions._actions import Kill, Reason
from podsync.actions._options import PlanOptions
from podsync.exceptions import RuntimeCallError
from podsync.host._files import PROBE_RECORDS_DIR
from podsync.spec._records import by_container, probe_records, records_of
from podsync.testing import FakeClock, FakeRuntime

START = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"


def pod_file(text: str) -> Pod:
    (pod,) = parse_pods(text, source_name="pods/web.yaml", source="file")
    return pod


WEB = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  terminationGracePeriodSeconds: 20
  containers:
  - name: app
    image: busybox
    command: [httpd, -f]
    livenessProbe:
      exec: {command: [check-alive]}
      periodSeconds: 10
      timeoutSeconds: 4
      terminationGracePeriodSeconds: 3
    readinessProbe:
      exec: {command: [check-ready]}
      periodSeconds: 5
"""
)

SLOW = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: slow
spec:
  containers:
  - name: app
    image: busybox
    livenessProbe:
      exec: {command: [check-alive]}
    readinessProbe:
      exec: {command: [check-ready]}
    startupProbe:
      exec: {command: [check-started]}
      failureThreshold: 2
      periodSeconds: 10
"""
)


class Host:
    """A fake engine, a clock that moves only when told, and a root directory."""

    def __init__(self, root: Path) -> None:
        self.clock = FakeClock(START, step=0)
        self.fake = FakeRuntime(images=["busybox", PAUSE], clock=self.clock)
        self.options = PlanOptions(root_dir=str(root))
        self.root = root
        self.events: list[Event] = []

    def sync(self, pod: Pod, *, after: float = 0.0, **kwargs):
        self.clock.advance(after)
        self.fake.clear_calls()
        return sync(
            [pod],
            self.fake,
            options=self.options,
            clock=self.clock,
            on_event=self.events.append,
            **kwargs,
        )

    def execs(self) -> list[tuple[str, ...]]:
        return [c.args[1] for c in self.fake.calls if c.name == "exec"]

    def app(self) -> str:
        return next(c.id for c in self.fake.containers if c.running and "_app." in c.name)

    def probe_events(self) -> list[tuple[str, str, Reason | None]]:
        return [
            (e.kind.value, e.message.split(": ", 1)[0], e.reason)
            for e in self.events
            if e.kind in (EventKind.UNHEALTHY, EventKind.PROBE_ERROR)
        ]


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


def test_liveness_kills_after_three_failing_syncs(host):
    """failureThreshold 3 (the default), one probe per sync: the third failure in a row
    kills the container, with the probe's own grace period; the events count."""
    assert host.sync(WEB).ok
    first = host.app()
    host.fake.set_exec_result(["check-alive"], 1, b"down")

    verdicts = []
    for _ in range(3):
        result = host.sync(WEB, after=10)
        verdicts.append(result.liveness.get(first))

    kills = [a for a in result.plan.actions if isinstance(a, Kill)]
    assert [True, True, False] == verdicts
    assert [(first, Reason.UNHEALTHY, 3)] == [(k.id, k.reason, k.timeout) for k in kills]
    assert first != host.app()
    assert [
        ("unhealthy", "liveness probe failed (1/3)", None),
        ("unhealthy", "liveness probe failed (2/3)", None),
        ("unhealthy", "liveness probe failed (3/3)", Reason.UNHEALTHY),
    ] == host.probe_events()


def test_a_success_in_between_starts_the_count_over(host):
    assert host.sync(WEB).ok
    app = host.app()
    for exit_code in (1, 1, 0, 1, 1):
        host.fake.set_exec_result(["check-alive"], exit_code)
        result = host.sync(WEB, after=10)

    assert result.liveness[app]
    assert not result.plan.has_changes
    assert app == host.app()


def test_a_probe_runs_at_most_once_per_period(host):
    """Syncs closer together than periodSeconds do not probe again: the liveness probe
    (period 10) runs on the first and the third sync, readiness (period 5) on each."""
    assert host.sync(WEB).ok
    runs = []
    for after in (0, 6, 5):
        host.sync(WEB, after=after)
        runs.append(host.execs())

    assert [
        [("check-alive",), ("check-ready",)],
        [("check-ready",)],
        [("check-alive",), ("check-ready",)],
    ] == runs


def test_each_probe_gets_its_own_timeout(host):
    assert host.sync(WEB).ok

    host.sync(WEB, after=1)

    assert [(("check-alive",), 4.0), (("check-ready",), 1.0)] == [
        (c.args[1], c.args[2]) for c in host.fake.calls if c.name == "exec"
    ]


def test_probe_timeout_overrides_every_probe(host):
    assert host.sync(WEB).ok

    host.sync(WEB, after=1, probe_timeout=30.0)

    assert [30.0, 30.0] == [c.args[2] for c in host.fake.calls if c.name == "exec"]


def probe_record_volumes(host: Host) -> dict[str, list[str]]:
    """The probe records in the engine: container id -> its record volumes."""
    return {
        cid: [r.volume for r in found]
        for cid, found in by_container(
            r for r in records_of(host.fake.volumes) if r.kind == "probe-record"
        ).items()
    }


def test_the_count_lives_in_the_engine(host):
    """Every sync is a new process for ``podsync apply``: the states are a record in the
    engine (a labelled volume per running container, replaced when they change), and a
    new container starts afresh (its predecessor's record is removed). Nothing is
    written under the root directory."""
    assert host.sync(WEB).ok
    first = host.app()
    host.fake.set_exec_result(["check-alive"], 1)
    host.sync(WEB, after=10)

    assert [first] == list(probe_record_volumes(host))
    assert 1 == len(probe_record_volumes(host)[first])
    assert (
        '"liveness":{"last_probe":1000010.0,"last_result":"failure","run":1'
        in (probe_records(records_of(host.fake.volumes))[first])
    )
    host.sync(WEB, after=10)
    assert 1 == len(probe_record_volumes(host)[first])  # replaced, not added
    host.sync(WEB, after=10)  # killed and replaced
    host.fake.set_exec_result(["check-alive"], 0)
    host.sync(WEB, after=1)
    assert [host.app()] == list(probe_record_volumes(host))
    assert [] == os.listdir(host.root)


def test_a_count_an_earlier_podsync_kept_on_the_host_counts_on(host):
    """A probe record under <root>/<pod uid>/.podsync-probes/<container id>, where an
    earlier podsync kept it, is read while the engine has none: two failures there and
    one now make three, and the container is killed."""
    assert host.sync(WEB).ok
    app = host.app()
    records = host.root / WEB.uid / PROBE_RECORDS_DIR
    records.mkdir(parents=True)
    (host.root / WEB.uid / ".podsync-pod").touch()
    earlier = (
        '{"liveness":{"last_probe":1000000.0,"last_result":"failure","run":2,"verdict":"success"}}'
    )
    (records / app).write_text(earlier)
    host.fake.set_exec_result(["check-alive"], 1)

    result = host.sync(WEB, after=10)

    assert {app: False} == result.liveness


def test_a_dry_run_counts_nothing(host):
    """``podsync plan --probe`` (``record_probes=False``) runs the probes but writes no
    record: three dry runs never reach the threshold of the next sync."""
    assert host.sync(WEB).ok
    app = host.app()
    host.fake.set_exec_result(["check-alive"], 1)
    for _ in range(3):
        assert not host.sync(WEB, after=10, record_probes=False).plan.has_changes

    result = host.sync(WEB, after=10)

    assert result.liveness[app]
    assert app == host.app()


def test_a_probe_that_cannot_run_changes_nothing(host):
    """The runtime call fails: no result (the kubelet throws a prober error away), an
    event saying so, and the count is where it was."""
    assert host.sync(WEB).ok
    app = host.app()
    host.fake.set_exec_result(["check-alive"], 1)
    host.sync(WEB, after=10)
    host.sync(WEB, after=10)
    host.fake.fail("exec", times=2)
    host.sync(WEB, after=10)
    result = host.sync(WEB, after=10)

    assert not result.liveness[app]
    assert ("probe-error", "liveness probe could not be run", None) in host.probe_events()


# --- startup -----------------------------------------------------------------------


def test_until_started_only_the_startup_probe_runs(host):
    assert host.sync(SLOW).ok
    host.fake.set_exec_result(["check-started"], 1)

    result = host.sync(SLOW, after=10)

    assert [("check-started",)] == host.execs()
    app = host.app()
    assert ({}, {}, {app: False}) == (result.startup, result.liveness, result.readiness)
    status = pod_status(SLOW, host.fake.containers, startup=result.startup)
    assert (False, False) == (status.containers[0].started, status.containers[0].ready)


def test_the_start_lets_liveness_and_readiness_run_in_the_same_sync(host):
    """When the startup probe succeeds, the liveness and readiness probes run at once:
    one sync sees the container started and ready."""
    assert host.sync(SLOW).ok
    app = host.app()

    result = host.sync(SLOW, after=1)

    assert [("check-started",), ("check-alive",), ("check-ready",)] == host.execs()
    assert ({app: True}, {app: True}, {app: True}) == (
        result.startup,
        result.liveness,
        result.readiness,
    )
    host.sync(SLOW, after=10)
    assert [("check-alive",), ("check-ready",)] == host.execs()  # startup: no more


def test_a_startup_failure_kills_after_its_threshold(host):
    """failureThreshold 2: the second failing startup probe kills the container, and it
    is restarted (restartPolicy Always) with a fresh startup probe."""
    assert host.sync(SLOW).ok
    first = host.app()
    host.fake.set_exec_result(["check-started"], 1)
    host.fake.set_exec_result(["check-alive"], 1)

    host.sync(SLOW, after=10)
    result = host.sync(SLOW, after=10)

    assert [Reason.UNHEALTHY] == [a.reason for a in result.plan.actions if isinstance(a, Kill)]
    assert "startup probe failed" in result.plan.describe()
    assert first != host.app()
    assert ("unhealthy", "startup probe failed (2/2)", Reason.UNHEALTHY) == (
        host.probe_events()[-1]
    )
    assert ("check-alive",) not in host.execs()


# --- readiness -----------------------------------------------------------------------


def test_readiness_flips_and_never_restarts(host):
    """Ready after one success; not ready after three failures in a row; the
    container runs on throughout."""
    assert host.sync(WEB).ok
    app = host.app()
    seen = []
    for exit_code in (0, 1, 1, 1, 0):
        host.fake.set_exec_result(["check-ready"], exit_code)
        result = host.sync(WEB, after=5)
        status = pod_status(WEB, host.fake.containers, readiness=result.readiness)
        seen.append((result.readiness[app], status.ready, result.plan.has_changes))

    assert [
        (True, True, False),
        (True, True, False),
        (True, True, False),
        (False, False, False),
        (True, True, False),
    ] == seen
    assert app == host.app()
    assert "readiness probe failed (3/3)" in [m for _, m, _ in host.probe_events()]


def test_a_count_that_cannot_be_kept_stops_the_sync_before_anything_is_applied(host):
    """The probe record cannot be written (the engine refuses the volume): the sync
    fails before it applies anything, rather than forget the count."""
    assert host.sync(WEB).ok
    first = host.app()
    host.fake.fail("create_volume", match="podsync-probes_")
    host.fake.set_exec_result(["check-alive"], 1)

    with pytest.raises(RuntimeCallError):
        host.sync(WEB, after=10)

    reads = ("list", "list_volumes", "exec", "create_volume")
    assert [] == [c.name for c in host.fake.calls if c.name not in reads]
    assert first == host.app()


def test_an_exec_probe_that_outlasts_its_timeout_fails(host):
    """timeoutSeconds 4, and the check takes 5 s: a failure (ExecProbeTimeout), with a
    message that says so."""
    assert host.sync(WEB).ok
    host.fake.set_exec_result(["check-alive"], 0, seconds=5.0)

    result = host.sync(WEB, after=10)

    assert ("unhealthy", "liveness probe failed (1/3)", None) == host.probe_events()[0]
    (event,) = [e for e in host.events if e.kind is EventKind.UNHEALTHY]
    assert "exec ['check-alive'] did not finish within 4s" in event.message
    assert result.liveness[host.app()]  # one failure decides nothing yet


def test_a_plan_that_is_not_applied_still_counts(host):
    """Whether the plan is applied is not what counts: a sync whose plan has nothing to
    do (the command line then applies nothing) ran its probes, and they count."""
    assert host.sync(WEB).ok
    app = host.app()
    host.fake.set_exec_result(["check-alive"], 1)
    decline = lambda plan, obs: plan.has_changes  # noqa: E731 - what podsync apply does

    first = host.sync(WEB, after=10, before_apply=decline)
    second = host.sync(WEB, after=10, before_apply=decline)
    third = host.sync(WEB, after=10, before_apply=decline)

    assert (False, False, True) == (first.applied, second.applied, third.applied)
    assert not third.liveness[app]
    assert app != host.app()


SIDECAR = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: mesh
spec:
  initContainers:
  - name: proxy
    image: busybox
    restartPolicy: Always
    startupProbe:
      exec: {command: [check-started]}
  containers:
  - name: app
    image: busybox
"""
)


def test_a_sidecars_startup_probe_runs_and_lets_the_app_start(host):
    """A sidecar's probes run like an app container's; its startup verdict is what the
    next container waits for (kubelet-modern.md §3 rule 4)."""
    assert host.sync(SIDECAR).ok
    assert not any("_app." in c.name for c in host.fake.containers)

    host.fake.set_exec_result(["check-started"], 0)
    result = host.sync(SIDECAR, after=10)

    assert [("check-started",)] == host.execs()
    assert [True] == list(result.startup.values())
    assert any(c.running and "_app." in c.name for c in host.fake.containers)
