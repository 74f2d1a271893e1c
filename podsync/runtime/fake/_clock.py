"""``FakeClock``: a deterministic clock for tests (see ``podsync.testing``)."""

from __future__ import annotations

import threading

__all__ = ["FakeClock"]


class FakeClock:
    """A deterministic clock for tests, to pass wherever podsync takes one
    (``FakeRuntime(clock=...)``, ``apply``, ``sync``, ``podsync.cli.main``).

    Each reading returns the clock's time and then moves it ``step`` seconds on. With
    the default step of 1 every reading is later than the one before, as an engine's
    creation times are; with ``step=0`` the clock moves only when ``advance`` is called
    (pass ``clock.advance`` where podsync takes a ``sleep``). Thread-safe.

    Args:
        start: the first reading, seconds since the epoch.
        step: seconds each reading moves the clock on (0 or more).

    Attributes:
        now: the time the next reading returns.

    Raises:
        ValueError: ``step`` is negative (a clock does not go back).
    """

    #: The default start: 2001-09-09 01:46:40 UTC, a fixed and recognisable moment.
    DEFAULT_START = 1_000_000_000.0

    def __init__(self, start: float = DEFAULT_START, step: float = 1.0) -> None:
        if not step >= 0:
            raise ValueError(f"step must be 0 or more seconds, got {step!r}")
        self.now = float(start)
        self.step = float(step)
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            now = self.now
            self.now += self.step
            return now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` on (a sleep that takes no time).

        Raises:
            ValueError: ``seconds`` is negative.
        """
        if not seconds >= 0:
            raise ValueError(f"cannot go back in time: {seconds!r} seconds")
        with self._lock:
            self.now += seconds

    def advance_to(self, moment: float) -> None:
        """Move the clock on to ``moment``, if it is not there yet (never back): the end
        of something that took time from an earlier reading, such as a stop
        (``FakeRuntime.stop_container``). Stops that overlapped end at the latest of
        their ends, not at their sum."""
        with self._lock:
            self.now = max(self.now, float(moment))

    def __repr__(self) -> str:
        return f"<FakeClock at {self.now:g}, step {self.step:g}>"
