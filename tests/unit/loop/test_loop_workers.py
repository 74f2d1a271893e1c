"""Per-pod workers (the seed's ``podWorkers``, reference §2.3): pods run in parallel
within a bound, one pod's jobs one at a time, and a pod whose job runs gets its next
job queued once, not twice. No clock: the jobs are held by events."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from podsync.loop._workers import PodWorkers

WAIT = 10.0  # seconds a test waits for a thread at most (never reached when it passes)


def hold(
    workers: PodWorkers, key: str, then: Callable[[], object] | None = None
) -> threading.Event:
    """Run a job of ``key`` that holds its thread until the returned event is set (then
    calls ``then``); return once it runs."""
    release, started = threading.Event(), threading.Event()

    def held() -> None:
        started.set()
        release.wait(WAIT)
        if then is not None:
            then()

    workers.submit(key, held)
    assert started.wait(WAIT)
    return release


def test_a_slow_pod_does_not_hold_the_others() -> None:
    workers = PodWorkers(2)
    release = threading.Event()
    done: list[str] = []
    lock = threading.Lock()

    def slow() -> None:
        release.wait(WAIT)
        with lock:
            done.append("slow")

    def quick(name: str) -> None:
        with lock:
            done.append(name)

    workers.submit("slow", slow)
    for name in ("a", "b", "c"):
        workers.submit(name, lambda name=name: quick(name))
    try:
        assert workers.wait_idle(WAIT, keys=("a", "b", "c"))
        assert sorted(done) == ["a", "b", "c"]
        assert workers.running("slow")
    finally:
        release.set()
    assert workers.wait_idle(WAIT)
    assert sorted(done) == ["a", "b", "c", "slow"]


def test_a_running_pod_gets_its_next_job_once() -> None:
    workers = PodWorkers(4)
    ran: list[str] = []
    release = hold(workers, "web", functools.partial(ran.append, "first"))
    # Three more requests while it runs: one follow-up, the latest.
    for name in ("second", "third", "fourth"):
        workers.submit("web", lambda name=name: ran.append(name))
    assert workers.running("web")
    release.set()
    assert workers.wait_idle(WAIT)
    assert ran == ["first", "fourth"]


def test_again_replaces_the_job_for_a_running_pod() -> None:
    workers = PodWorkers(1)
    ran: list[str] = []
    release = hold(workers, "web", functools.partial(ran.append, "first"))
    workers.submit("web", lambda: ran.append("stale plan"), again=lambda: ran.append("resync"))
    release.set()
    assert workers.wait_idle(WAIT)
    assert ran == ["first", "resync"]


def test_a_queued_job_that_has_not_started_is_replaced() -> None:
    workers = PodWorkers(1)
    ran: list[str] = []
    release = hold(workers, "other")
    workers.submit("web", lambda: ran.append("old"))
    workers.submit("web", lambda: ran.append("new"), again=lambda: ran.append("resync"))
    assert not workers.running("web")
    release.set()
    assert workers.wait_idle(WAIT)
    assert ran == ["new"]


def test_a_failing_job_is_reported_and_the_worker_goes_on() -> None:
    errors: list[tuple[str, str]] = []
    workers = PodWorkers(1, on_error=lambda key, exc: errors.append((key, str(exc))))

    def boom() -> None:
        raise RuntimeError("bug")

    ran: list[str] = []
    workers.submit("web", boom)
    workers.submit("db", lambda: ran.append("db"))
    assert workers.wait_idle(WAIT)
    assert errors == [("web", "bug")]
    assert ran == ["db"]


def test_close_drops_queued_work_and_waits_for_running_jobs() -> None:
    workers = PodWorkers(1)
    ran: list[str] = []
    release = hold(workers, "web", functools.partial(ran.append, "running"))
    workers.submit("db", lambda: ran.append("queued"))
    workers.submit("web", lambda: ran.append("follow-up"))
    threading.Timer(0.05, release.set).start()
    assert workers.close(WAIT)
    assert ran == ["running"]
    # Closed: nothing more is taken.
    assert not workers.submit("db", lambda: ran.append("late"))
    assert ran == ["running"]


def test_close_gives_up_after_its_bound() -> None:
    workers = PodWorkers(1)
    release = hold(workers, "web")
    try:
        assert not workers.close(0.01)
    finally:
        release.set()


def test_a_first_job_waits_before_the_others() -> None:
    # A death's sync of its pod does not queue behind the other pods' syncs; the
    # others keep their order, and so does a job made first while it waited.
    workers = PodWorkers(1)
    ran: list[str] = []
    release = hold(workers, "busy")
    for key in ("a", "b", "c"):
        workers.submit(key, functools.partial(ran.append, key))
    workers.submit("died", functools.partial(ran.append, "died"), first=True)
    workers.submit("c", functools.partial(ran.append, "c-died"), first=True)
    # The running pod's own next job, asked for first, goes first once it is done.
    again = functools.partial(ran.append, "busy-again")
    workers.submit("busy", functools.partial(ran.append, "unused"), again=again, first=True)
    release.set()
    assert workers.wait_idle(WAIT)
    assert ran == ["busy-again", "c-died", "died", "a", "b"]
