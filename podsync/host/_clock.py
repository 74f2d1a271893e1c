"""Where podsync reads the time.

The planner is pure: it is given ``now``. The shell around it reads the time for a few
things - a plan's ``now`` when none is given, event and log-line times, the durations of
actions, the share of a grace period a preStop handler used, ``apply --wait``'s
deadline and its pauses - and each of these takes a clock from its caller
(``apply(clock=...)``, ``sync(clock=...)``, ``podsync.cli.main(clock=..., sleep=...)``,
``FakeRuntime(clock=...)``), so that a test runs without the real one.

A clock is a function returning seconds since the Unix epoch. podsync reads the system
clock only here, and only where no clock was given: the wall clock for times, and a
monotonic clock for durations and deadlines, so that a step of the system clock (NTP,
a suspended laptop) neither stretches nor shortens them. A given clock is read for both.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

__all__: list[str] = []

#: A clock: each call returns the time, in seconds since the Unix epoch.
Clock = Callable[[], float]


def system_time() -> float:
    """The system's wall clock, seconds since the epoch (``time.time``)."""
    return time.time()


def system_monotonic() -> float:
    """The system's monotonic clock (``time.monotonic``): for durations only."""
    return time.monotonic()


def system_sleep(seconds: float) -> None:
    """Wait ``seconds`` on the system clock (``time.sleep``)."""
    time.sleep(seconds)


@attrs.frozen
class Clocks:
    """The clocks of one call.

    Attributes:
        now: the time, seconds since the epoch (a plan's ``now``, event and log times).
        elapsed: read twice, the difference is a duration (actions, deadlines).
        given: the clock the caller gave, to hand on to the calls it makes; ``None``
            when it gave none (they use the system's clocks too).
    """

    now: Clock
    elapsed: Clock
    given: Clock | None


def clocks(clock: Clock | None) -> Clocks:
    """The clocks to read: ``clock`` for everything, or the system's when ``None``.

    Raises:
        TypeError: ``clock`` is not callable.
    """
    if clock is None:
        return Clocks(system_time, system_monotonic, None)
    if not callable(clock):
        raise TypeError(f"clock must be a function returning seconds, got {clock!r}")
    return Clocks(clock, clock, clock)
