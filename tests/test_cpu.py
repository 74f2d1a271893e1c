"""CPU shares: the seed's milliCPUToShares (reference §2.5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podsync import cpu_shares


@pytest.mark.parametrize(
    ("milli_cpu", "expected"),
    [
        # Unset: leave the engine's default.
        (0, 0),
        # Tiny requests are raised to the kernel's minimum of 2 shares.
        (1, 2),
        (2, 2),
        # From 3 on the formula is above the minimum: 3 * 1024 // 1000 == 3.
        (3, 3),
        # A tenth of a CPU: 102.4 rounded down.
        (100, 102),
        # Half a CPU.
        (500, 512),
        # One CPU is Docker's default weight.
        (1000, 1024),
        # Two CPUs.
        (2000, 2048),
    ],
)
def test_cpu_shares_table(milli_cpu, expected):
    """milli-CPU become shares at 1024 per CPU, rounded down, at least 2, 0 kept."""

    assert expected == cpu_shares(milli_cpu)


def test_cpu_shares_rejects_negative():
    """A negative request is a programming error."""

    with pytest.raises(ValueError, match="-1"):
        cpu_shares(-1)


@given(st.integers(min_value=0, max_value=10**7), st.integers(min_value=0, max_value=10**7))
def test_cpu_shares_monotonic(a, b):
    """More CPU never means fewer shares."""
    low, high = sorted((a, b))

    assert cpu_shares(low) <= cpu_shares(high)


@given(st.integers(min_value=1, max_value=10**7))
def test_cpu_shares_positive_at_least_two(milli_cpu):
    """Every positive request gets at least the kernel minimum, and the formula above it."""

    assert max(2, milli_cpu * 1024 // 1000) == cpu_shares(milli_cpu)
