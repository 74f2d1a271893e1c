"""The back-off rule every retry of podsync waits by (``podsync.spec._backoff``)."""

from __future__ import annotations

import pytest

from podsync.actions._options import BackOffPolicy
from podsync.spec._backoff import Backoff, doubling


@pytest.mark.parametrize(
    ("failures", "expected"),
    [
        (-1, 0.0),
        (0, 0.0),  # no failure yet: no wait
        (1, 10.0),  # the first wait is ``first``
        (2, 20.0),
        (3, 40.0),
        (5, 160.0),
        (6, 300.0),  # 320 capped at the maximum
        (10_000, 300.0),  # an absurd count stays finite
    ],
)
def test_doubling(failures: int, expected: float) -> None:
    assert expected == doubling(10.0, 300.0, failures)


def test_a_backoff_doubles_after_each_failure_and_starts_over_after_a_success() -> None:
    backoff = Backoff(0.2, 1.0)
    assert 0.2 == backoff.delay  # nothing counted yet

    waits = [backoff.next() for _ in range(5)]

    assert [0.2, 0.4, 0.8, 1.0, 1.0] == waits
    assert 1.0 == backoff.delay
    backoff.reset()
    assert [0.2, 0.4] == [backoff.next(), backoff.next()]


def test_delay_does_not_count_a_failure() -> None:
    backoff = Backoff(1.0, 8.0)
    assert [1.0, 1.0] == [backoff.delay, backoff.delay]
    assert 0 == backoff.failures


def test_crash_loop_back_off_is_the_same_rule() -> None:
    # The kubelet's crash-loop back-off: 10 s, doubling, at most 5 min.
    policy = BackOffPolicy()
    assert [0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0] == [
        policy.delay(restarts) for restarts in range(8)
    ]
