"""The clock guard of ``tests/support/clock_guard.py`` is off in engine tests: they allow
for a loaded machine, and read the real clock through podsync."""

from __future__ import annotations

from podsync import Event, EventKind
from tests.support.clock_guard import Guard


def test_engine_tests_keep_the_real_clock(clock_guard: Guard) -> None:
    """An engine test is not guarded: podsync reads the real clock there."""
    event = Event(EventKind.PULLED, "", "", "pulled image busybox")

    assert event.time > 1_000_000_000
    assert [] == clock_guard.reads
