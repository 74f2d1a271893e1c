"""The status board of ``podsync run`` (``podsync.loop._board.LoopBoard``): what the loop
reports into it, and what ``/healthz``, ``/pods`` and ``/metrics`` read from it.

Pure: the board's clocks are fake (``FakeClock(step=0)``, moved by ``advance``), the pod
statuses come from a FakeRuntime driven by ``podsync.sync``, and the metrics text is read
back with ``prometheus_client``'s own parser. The HTTP server is tested in
tests/unit/loop/test_board_http.py.
"""

from __future__ import annotations

import json
import sys
import threading

import pytest

from podsync import PodPhase, PodStatus, parse_pods, pod_status, sync
from podsync.actions._options import PlanOptions
from podsync.loop._board import LoopBoard
from podsync.status._json import statuses_to_json
from podsync.testing import FakeClock, FakeRuntime

PAUSE = "registry.k8s.io/pause:3.10"
OPTIONS = PlanOptions(root_dir="/nonexistent")
WALL = 1_700_000_000.0

POD_FILES = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: busybox
    command: ["httpd", "-f"]
---
apiVersion: v1
kind: Pod
metadata:
  name: migrate
spec:
  restartPolicy: Never
  containers:
  - name: job
    image: busybox
    command: ["true"]
"""


class Clocks:
    """The board's two clocks, moved together: a monotonic one (from 0) and a wall one."""

    def __init__(self) -> None:
        self.monotonic = FakeClock(0.0, step=0)
        self.wall = FakeClock(WALL, step=0)

    def advance(self, seconds: float) -> None:
        self.monotonic.advance(seconds)
        self.wall.advance(seconds)


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()


def board_of(clocks: Clocks, period: float = 10.0) -> LoopBoard:
    return LoopBoard(period, clock=clocks.monotonic, wall_clock=clocks.wall)


def statuses() -> list[PodStatus]:
    """The statuses of two pods from a pod file after a sync on a FakeRuntime: ``web``
    running, ``migrate`` (restart policy Never) run and exited 0."""
    pods = parse_pods(POD_FILES, source="file")
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(WALL, step=0))
    assert sync(pods, fake, options=OPTIONS, clock=fake.clock).ok
    job = next(c for c in fake.containers if c.labels.get("io.podsync.container.name") == "job")
    fake.exit(job.id, 0)
    observed = fake.list_containers()
    return [pod_status(p, observed, options=OPTIONS) for p in pods]


# --- health ------------------------------------------------------------------------------


def test_health_before_any_sync_is_not_ok(clocks: Clocks) -> None:
    board = board_of(clocks)

    health = board.health()

    assert (health.ok, health.reason) == (False, "no sync has completed yet")


def test_health_is_ok_after_a_successful_sync(clocks: Clocks) -> None:
    board = board_of(clocks)
    board.sync_done(0.25, ok=True)

    health = board.health()

    assert (health.ok, health.reason) == (True, "ok")


def test_health_stays_ok_up_to_two_sync_periods_then_goes_stale(clocks: Clocks) -> None:
    board = board_of(clocks, period=10.0)
    board.sync_done(0.25, ok=True)

    clocks.advance(20.0)
    at_two_periods = board.health()
    clocks.advance(0.5)
    after = board.health()

    assert at_two_periods.ok
    assert not after.ok
    assert after.reason == ("last successful sync 20.5s ago, more than two sync periods (2 x 10s)")


def test_a_failed_sync_after_a_recent_success_is_still_healthy(clocks: Clocks) -> None:
    """Health asks whether the host was brought in shape recently: one failed round
    within two periods of a good one is not yet a reason to page anyone."""
    board = board_of(clocks, period=10.0)
    board.sync_done(0.25, ok=True)
    clocks.advance(10.0)
    board.sync_done(0.5, ok=False, message="the Docker engine is unavailable")

    assert board.health().ok


def test_health_names_the_failure_when_the_last_sync_failed(clocks: Clocks) -> None:
    board = board_of(clocks, period=10.0)
    board.sync_done(0.25, ok=True)
    for _ in range(3):
        clocks.advance(10.0)
        board.sync_done(0.5, ok=False, message="the Docker engine is unavailable")

    health = board.health()

    assert not health.ok
    assert health.reason == (
        "last sync failed: the Docker engine is unavailable (last successful sync 30.0s ago)"
    )


def test_health_when_no_sync_ever_succeeded(clocks: Clocks) -> None:
    board = board_of(clocks)
    board.sync_done(1.0, ok=False, message="pods: bad.yaml: line 3: mapping values")

    health = board.health()

    assert not health.ok
    assert health.reason == (
        "last sync failed: pods: bad.yaml: line 3: mapping values (no successful sync yet)"
    )


def test_a_success_after_failures_makes_it_healthy_again(clocks: Clocks) -> None:
    board = board_of(clocks, period=10.0)
    board.sync_done(0.5, ok=False, message="boom")
    clocks.advance(100.0)
    board.sync_done(0.5, ok=True)

    assert board.health().ok


def test_a_failed_sync_without_a_message_says_so(clocks: Clocks) -> None:
    board = board_of(clocks)
    board.sync_done(0.5, ok=False)

    assert board.health().reason == "last sync failed: (no message) (no successful sync yet)"


@pytest.mark.parametrize("period", [0.0, -1.0, float("nan"), float("inf")])
def test_the_sync_period_must_be_positive_and_finite(clocks: Clocks, period: float) -> None:
    with pytest.raises(ValueError, match="sync period"):
        board_of(clocks, period=period)


@pytest.mark.parametrize("duration", [-0.1, float("nan")])
def test_a_sync_duration_must_be_zero_or_more(clocks: Clocks, duration: float) -> None:
    board = board_of(clocks)

    with pytest.raises(ValueError, match="duration"):
        board.sync_done(duration, ok=True)


def test_an_action_result_must_be_ok_failed_or_skipped(clocks: Clocks) -> None:
    board = board_of(clocks)

    with pytest.raises(ValueError, match="'done'"):
        board.action_done("create", "done")


# --- pods --------------------------------------------------------------------------------


def test_pods_before_any_observation_are_unknown_not_empty(clocks: Clocks) -> None:
    """Before the loop has observed the engine, there is no list of pods to give: an
    empty one would say "no pods run here"."""
    board = board_of(clocks)

    assert board.pods_json() is None


def test_pods_json_is_the_status_json_of_the_latest_statuses(clocks: Clocks) -> None:
    board = board_of(clocks)
    first = statuses()
    board.pods_seen(first)
    board.pods_seen(first[:1])

    text = board.pods_json()

    assert text == statuses_to_json(first[:1])
    document = json.loads(text)
    assert [(p["pod"], p["phase"], p["state"]) for p in document["pods"]] == [
        ("default/web", "Running", "running")
    ]


def test_pods_json_round_trips_the_statuses(clocks: Clocks) -> None:
    board = board_of(clocks)
    seen = statuses()
    board.pods_seen(seen)

    text = board.pods_json()

    assert text is not None
    document = json.loads(text)
    assert document["format_version"] == 1
    assert [(p["pod"], p["uid"], p["phase"], p["state"]) for p in document["pods"]] == [
        (s.pod, s.uid, s.phase.value, s.state) for s in seen
    ]
    assert [
        [(c["name"], c["state"], c["exit_code"]) for c in p["containers"]] for p in document["pods"]
    ] == [[("nginx", "running", None)], [("job", "terminated", 0)]]


def test_the_board_keeps_its_own_copy_of_the_statuses(clocks: Clocks) -> None:
    board = board_of(clocks)
    seen = statuses()
    board.pods_seen(seen)
    expected = statuses_to_json(seen)

    seen.clear()

    assert board.pods_json() == expected


# --- metrics -----------------------------------------------------------------------------


def samples(board: LoopBoard) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The board's metrics text, parsed back: (sample name, sorted labels) → value."""
    from prometheus_client.parser import text_string_to_metric_families

    text = board.metrics_text()
    assert text is not None
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_the_metrics_start_at_zero(clocks: Clocks) -> None:
    values = samples(board_of(clocks))

    assert values[("podsync_sync_rounds_total", (("result", "ok"),))] == 0
    assert values[("podsync_sync_rounds_total", (("result", "failed"),))] == 0
    assert values[("podsync_sync_duration_seconds_count", ())] == 0
    assert values[("podsync_last_successful_sync_timestamp_seconds", ())] == 0
    assert {
        phase.value: values[("podsync_pods", (("phase", phase.value),))] for phase in PodPhase
    } == {phase.value: 0 for phase in PodPhase}


def test_sync_rounds_are_counted_by_result_and_timed(clocks: Clocks) -> None:
    board = board_of(clocks)
    board.sync_done(0.25, ok=True)
    clocks.advance(10.0)
    board.sync_done(3.0, ok=False, message="engine unavailable")
    clocks.advance(10.0)
    board.sync_done(0.5, ok=True)

    values = samples(board)

    assert values[("podsync_sync_rounds_total", (("result", "ok"),))] == 2
    assert values[("podsync_sync_rounds_total", (("result", "failed"),))] == 1
    assert values[("podsync_sync_duration_seconds_count", ())] == 3
    assert values[("podsync_sync_duration_seconds_sum", ())] == pytest.approx(3.75)
    assert values[("podsync_sync_duration_seconds_bucket", (("le", "0.5"),))] == 2
    assert values[("podsync_sync_duration_seconds_bucket", (("le", "+Inf"),))] == 3
    # the wall-clock time of the last good round, for alerts on time() - it
    assert values[("podsync_last_successful_sync_timestamp_seconds", ())] == WALL + 20.0


def test_actions_are_counted_by_kind_and_result(clocks: Clocks) -> None:
    board = board_of(clocks)
    for kind, result in [
        ("pull", "ok"),
        ("create", "ok"),
        ("create", "ok"),
        ("create", "failed"),
        ("kill", "skipped"),
    ]:
        board.action_done(kind, result)

    values = samples(board)
    actions = {
        labels: value for (name, labels), value in values.items() if name == "podsync_actions_total"
    }

    assert actions == {
        (("kind", "pull"), ("result", "ok")): 1,
        (("kind", "create"), ("result", "ok")): 2,
        (("kind", "create"), ("result", "failed")): 1,
        (("kind", "kill"), ("result", "skipped")): 1,
    }


def test_pods_are_counted_by_phase_and_a_phase_left_goes_to_zero(clocks: Clocks) -> None:
    board = board_of(clocks)
    seen = statuses()
    board.pods_seen(seen)
    before = samples(board)
    board.pods_seen([s for s in seen if s.phase is PodPhase.SUCCEEDED])
    after = samples(board)

    def phases(values: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> dict[str, float]:
        return {
            dict(labels)["phase"]: value
            for (name, labels), value in values.items()
            if name == "podsync_pods"
        }

    assert phases(before) == {"Pending": 0, "Running": 1, "Succeeded": 1, "Failed": 0, "Unknown": 0}
    assert phases(after) == {"Pending": 0, "Running": 0, "Succeeded": 1, "Failed": 0, "Unknown": 0}


def test_source_errors_are_counted_by_source_and_sources_report_up(clocks: Clocks) -> None:
    board = board_of(clocks)
    board.source_ok("/etc/podsync/pods")
    board.source_error("http://config.example/pods", "HTTP 500")
    board.source_error("http://config.example/pods", "timed out")
    board.source_ok("http://config.example/pods")
    board.source_error("/etc/podsync/pods", "bad.yaml: line 3")

    values = samples(board)

    assert values[("podsync_source_errors_total", (("source", "http://config.example/pods"),))] == 2
    assert values[("podsync_source_errors_total", (("source", "/etc/podsync/pods"),))] == 1
    assert values[("podsync_source_up", (("source", "http://config.example/pods"),))] == 1
    assert values[("podsync_source_up", (("source", "/etc/podsync/pods"),))] == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="read from /proc")
def test_the_process_metrics_are_there(clocks: Clocks) -> None:
    values = samples(board_of(clocks))

    assert values[("process_cpu_seconds_total", ())] > 0
    assert values[("process_resident_memory_bytes", ())] > 0


@pytest.mark.parametrize(
    ("source", "label"),
    [
        ("/etc/podsync/pods", "/etc/podsync/pods"),
        ("http://config.example/pods.yaml", "http://config.example/pods.yaml"),
        # a password or a token in the URL never reaches /metrics
        ("https://ops:s3cret@config.example/pods", "https://ops:***@config.example/pods"),
        ("https://config.example/pods?token=s3cret&v", "https://config.example/pods?token=***&v"),
        ("https://ops@config.example/pods", "https://ops@config.example/pods"),
    ],
)
def test_a_source_label_carries_no_credentials(clocks: Clocks, source: str, label: str) -> None:
    board = board_of(clocks)
    board.source_error(source, "HTTP 500")
    board.source_ok(source)

    values = samples(board)

    assert values[("podsync_source_errors_total", (("source", label),))] == 1
    assert values[("podsync_source_up", (("source", label),))] == 1
    assert "s3cret" not in (board.metrics_text() or "")


def test_each_board_has_its_own_registry(clocks: Clocks) -> None:
    """podsync touches no process-global state: two boards count apart, and the default
    registry of prometheus_client gets none of podsync's metrics."""
    from prometheus_client import REGISTRY, generate_latest

    one, two = board_of(clocks), board_of(clocks)
    one.sync_done(0.1, ok=True)

    assert samples(one)[("podsync_sync_rounds_total", (("result", "ok"),))] == 1
    assert samples(two)[("podsync_sync_rounds_total", (("result", "ok"),))] == 0
    assert b"podsync_" not in generate_latest(REGISTRY)


@pytest.fixture
def without_prometheus_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import prometheus_client`` fails, as where the ``metrics`` extra is not
    installed (a ``None`` in ``sys.modules`` makes the import raise ImportError)."""
    for name in [
        m for m in sys.modules if m == "prometheus_client" or m.startswith("prometheus_client.")
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # type: ignore[arg-type]
    return


@pytest.mark.usefixtures("without_prometheus_client")
def test_without_the_metrics_extra_the_board_works_and_has_no_metrics(clocks: Clocks) -> None:
    board = board_of(clocks)
    board.sync_done(0.25, ok=True)
    board.action_done("create", "ok")
    board.source_error("/etc/podsync/pods", "bad.yaml")
    board.pods_seen(statuses())

    assert board.metrics_text() is None
    assert board.health().ok
    assert board.pods_json() is not None


# --- threads -----------------------------------------------------------------------------


def test_writes_from_threads_while_reading(clocks: Clocks) -> None:
    """The loop's workers report from their threads while the server reads: no update is
    lost, and every read is whole (a pods document parses, metrics parse)."""
    from prometheus_client.parser import text_string_to_metric_families

    board = board_of(clocks)
    seen = statuses()
    writers, rounds = 4, 200
    start = threading.Barrier(writers + 1)
    problems: list[BaseException] = []

    def write(n: int) -> None:
        start.wait()
        for i in range(rounds):
            board.action_done("create", "ok")
            board.sync_done(0.01, ok=True)
            board.source_error(f"source-{n}", f"error {i}")
            board.pods_seen(seen[: i % 3])

    def read() -> None:
        start.wait()
        try:
            for _ in range(rounds):
                board.health()
                text = board.pods_json()
                if text is not None:
                    assert len(json.loads(text)["pods"]) in (0, 1, 2)
                metrics = board.metrics_text()
                assert metrics is not None
                list(text_string_to_metric_families(metrics))
        except BaseException as exc:  # reported in the main thread
            problems.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    reader = threading.Thread(target=read)
    for t in [*threads, reader]:
        t.start()
    for t in [*threads, reader]:
        t.join()

    assert problems == []
    values = samples(board)
    assert (
        values[("podsync_actions_total", (("kind", "create"), ("result", "ok")))]
        == writers * rounds
    )
    assert values[("podsync_sync_rounds_total", (("result", "ok"),))] == writers * rounds
    assert all(
        values[("podsync_source_errors_total", (("source", f"source-{n}"),))] == rounds
        for n in range(writers)
    )
