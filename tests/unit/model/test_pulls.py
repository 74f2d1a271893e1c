"""The image pull back-off's arithmetic: client-go's ``flowcontrol.Backoff`` with the
kubelet's image settings (10 s, doubling, at most 300 s, forgotten after 600 s)."""

from __future__ import annotations

import pytest

from podsync import PullFailure
from podsync.model._pulls import pull_failed

NOW = 1_000_000.0


@pytest.mark.parametrize(
    ("previous", "expected"),
    [
        # The first failure: 10 s.
        (None, 10.0),
        # Another failure while the entry is remembered: twice the last back-off ...
        (PullFailure("uid", "myapp:1", NOW - 15, 10.0), 20.0),
        (PullFailure("uid", "myapp:1", NOW - 100, 160.0), 300.0),
        # ... never more than 300 s.
        (PullFailure("uid", "myapp:1", NOW - 400, 300.0), 300.0),
        # Exactly 600 s after the last failure it is still remembered ...
        (PullFailure("uid", "myapp:1", NOW - 600, 300.0), 300.0),
        # ... and forgotten after: the next failure starts over.
        (PullFailure("uid", "myapp:1", NOW - 601, 300.0), 10.0),
    ],
    ids=["first", "doubles", "capped-at-300", "stays-at-300", "remembered-at-600", "reset"],
)
def test_pull_failed(previous, expected):
    """Backoff.Next: the back-off after one more failure, now."""
    failure = pull_failed(previous, "uid", "myapp:1", NOW, "denied")

    assert PullFailure("uid", "myapp:1", NOW, expected, "denied") == failure


@pytest.mark.parametrize(
    ("ago", "back_off", "expected"),
    [
        (0.0, 10.0, 10.0),
        (3.0, 10.0, 7.0),
        # IsInBackOffSinceUpdate: in back-off while less than the back-off has passed.
        (10.0, 10.0, 0.0),
        (11.0, 10.0, 0.0),
        (299.0, 300.0, 1.0),
        # A clock that went back never waits longer than the back-off.
        (-50.0, 10.0, 10.0),
        # Forgotten entries hold nothing.
        (601.0, 900.0, 0.0),
    ],
    ids=["just-failed", "part-way", "over", "long-over", "nearly-over", "clock-back", "forgotten"],
)
def test_back_off_left(ago, back_off, expected):
    """The seconds until the image may be pulled again for the pod."""
    failure = PullFailure("uid", "myapp:1", NOW - ago, back_off, "denied")

    assert expected == failure.back_off_left(NOW)
