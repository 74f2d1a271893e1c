"""CPU shares and quota: the modern kubelet's MilliCPUToShares (the seed's formula,
reference §2.5, with the kubelet's 2 shares for no request and its upper clamp), and the
modern kubelet's MilliCPUToQuota (kubelet-modern.md §6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podsync import CPU_PERIOD, cpu_quota, cpu_shares


@pytest.mark.parametrize(
    ("milli_cpu", "expected"),
    [
        # No request nor limit (BestEffort): the smallest weight, as the kubelet's
        # MilliCPUToShares(0), not Docker's default of 1024.
        (0, 2),
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
        # 256 CPUs is the kernel's (and the kubelet's) largest weight ...
        (256000, 262144),
        # ... and more is capped there (cgroup v2 refuses more).
        (256001, 262144),
        (10**7, 262144),
    ],
)
def test_cpu_shares_table(milli_cpu, expected):
    """milli-CPU become shares at 1024 per CPU, rounded down, at least 2 (0 too)."""

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


@given(st.integers(min_value=0, max_value=10**7))
def test_cpu_shares_at_least_two(milli_cpu):
    """Every request, none included, gets at least the kernel minimum, the formula above
    it, and at most the kernel maximum."""

    assert min(max(2, milli_cpu * 1024 // 1000), 262144) == cpu_shares(milli_cpu)


@pytest.mark.parametrize(
    ("milli_cpu", "expected"),
    [
        # No limit: no quota.
        (0, 0),
        # Under 10m the quota would be under 1 ms per 100 ms: raised to 1 ms.
        (1, 1000),
        (5, 1000),
        (10, 1000),
        (11, 1100),
        # A quarter of a CPU: 25 ms per 100 ms.
        (250, 25000),
        (1000, 100000),
        # One and a half CPUs: 150 ms per 100 ms period (two cores busy 75 %).
        (1500, 150000),
    ],
)
def test_cpu_quota_table(milli_cpu, expected):
    """A limit becomes microseconds per 100 ms period, at least 1 ms (MilliCPUToQuota)."""

    assert 100_000 == CPU_PERIOD
    assert expected == cpu_quota(milli_cpu)


def test_cpu_quota_rejects_negative():
    """A negative limit is a programming error."""

    with pytest.raises(ValueError, match="-1"):
        cpu_quota(-1)
