"""Durations on the command line (``podsync.cli._durations``): Go's form, as the kubelet
and kubectl write them."""

from __future__ import annotations

import argparse

import pytest

from podsync.cli._durations import duration, period


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10s", 10.0),
        ("5m", 300.0),
        ("1h", 3600.0),
        ("1h30m", 5400.0),
        ("1m30s", 90.0),
        ("250ms", 0.25),
        ("1.5s", 1.5),
        ("0s", 0.0),
    ],
)
def test_a_go_duration_in_seconds(text: str, seconds: float) -> None:
    assert seconds == pytest.approx(duration(text))


@pytest.mark.parametrize("text", ["", "10", "10x", "s", "-5s", "10s ", " 10s", "1h-2m", "1d"])
def test_anything_else_is_refused_with_examples(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a duration such as 10s"):
        duration(text)


@pytest.mark.parametrize(("text", "seconds"), [("2.5", 2.5), ("10s", 10.0), ("500ms", 0.5)])
def test_a_period_is_seconds_or_a_duration(text: str, seconds: float) -> None:
    assert seconds == period(text)


@pytest.mark.parametrize("text", ["0", "0s", "-1", "nan"])
def test_a_period_is_more_than_zero(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="must be more than 0"):
        period(text)
