"""CPU requests and limits: milli-CPU to the engine's CPU shares and CFS quota.

Contract: ``cpu_shares(milli_cpu)`` turns a container's CPU request in milli-CPU
(``500m`` = 500) into the value for Docker's ``CpuShares`` (``docker run --cpu-shares``);
``cpu_quota(milli_cpu)`` turns its CPU limit into Docker's
``CpuQuota`` per ``CPU_PERIOD`` (``--cpu-quota``, ``--cpu-period``), or 0 for none.

Ported from the modern kubelet's ``MilliCPUToShares`` (pkg/kubelet/cm/helpers_linux.go,
kubelet-modern.md §6), which keeps the seed's formula (reference §2.5) and adds the
upper clamp. The rule, step by step:

1. 0 means "no CPU request nor limit" (a BestEffort container, as far as CPU goes):
   return 2, the smallest weight there is (the kubelet's ``MinShares``). Docker's
   default, 1024 for a container that asks for nothing, would make it outweigh a
   container that requested a quarter of a CPU (256 shares); the kubelet gives it 2 so
   that it only gets what the containers that asked for CPU leave idle.
2. Otherwise scale: one CPU is 1024 shares (``SharesPerCPU``). 1024 is the default
   ``cpu.shares`` of a cgroup-v1 CPU cgroup (the kernel's ``NICE_0_LOAD``: one nice-0
   task's weight), so a container asking for one CPU weighs what a process outside
   any container weighs. The product is taken before the division
   (``milli * 1024 // 1000``, not ``milli // 1000 * 1024``) so small requests keep
   their precision; the division rounds down.
3. Raise anything smaller than 2 to 2: the kernel's minimum ``cpu.shares``
   (``MIN_SHARES = 1UL << 1`` in ``kernel/sched/sched.h``) - it clamps smaller values
   itself, so asking for less would only misreport the weight.
4. Cap at 262144 (256 CPUs), the kernel's ``MAX_SHARES = 1UL << 18`` and the
   kubelet's ``MaxShares``: on cgroup v2 the runtime converts shares to
   ``cpu.weight`` and refuses a share count beyond it.

Up to podsync 0.2, step 1 returned 0 (leave Docker's default of 1024), as the late-2014
seed did (reference §2.5); the modern kubelet's rule replaces it (docs/differences.md,
"Differences from the 2014 kubelet").

The CFS quota is the modern kubelet's ``MilliCPUToQuota`` (same file): with the fixed
period of 100 ms (``QuotaPeriod``; the ``CPUCFSQuotaPeriod`` gate is not ported), the
quota is ``milli_cpu * 100000 // 1000`` microseconds, at least 1 ms
(``MinQuotaPeriod``), and 0 - no quota - for no limit.

Nothing here does I/O.
"""

from __future__ import annotations

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "CPU_PERIOD",
    "cpu_quota",
    "cpu_shares",
]

#: The CFS period of every container with a CPU limit, in microseconds (100 ms: the
#: kubelet's ``QuotaPeriod``, and the kernel's default ``cpu.cfs_period_us``).
CPU_PERIOD = 100_000
# The smallest quota the kubelet sets (``MinQuotaPeriod``): 1 ms per period.
_MIN_QUOTA = 1_000
# The kernel's (and the kubelet's) largest cpu.shares value.
_MAX_SHARES = 262_144

# One CPU in cgroup-v1 cpu.shares: the cgroup default, and Docker's --cpu-shares default.
_SHARES_PER_CPU = 1024
# The kernel's smallest cpu.shares value.
_MIN_SHARES = 2
_MILLI_CPU_PER_CPU = 1000


def cpu_shares(milli_cpu: int) -> int:
    """Docker ``CpuShares`` for a CPU request of ``milli_cpu`` milli-CPU.

    Args:
        milli_cpu: the request in thousandths of a CPU; 0 means none.

    Returns:
        2 for 0 (no CPU request nor limit: the smallest weight); otherwise
        ``milli_cpu * 1024 // 1000``, at least 2 and at most 262144. For example
        0 -> 2, 1 -> 2, 100 -> 102, 500 -> 512, 1000 -> 1024, 300000 -> 262144.

    Raises:
        ValueError: ``milli_cpu`` is negative.
    """
    if milli_cpu < 0:
        raise ValueError(f"milli_cpu must be 0 or more, got {milli_cpu!r}")
    shares = milli_cpu * _SHARES_PER_CPU // _MILLI_CPU_PER_CPU
    return min(max(shares, _MIN_SHARES), _MAX_SHARES)


def cpu_quota(milli_cpu: int) -> int:
    """Docker ``CpuQuota`` (microseconds per ``CPU_PERIOD``) for a CPU limit of
    ``milli_cpu`` milli-CPU.

    Args:
        milli_cpu: the limit in thousandths of a CPU; 0 means no limit.

    Returns:
        0 for 0 (no quota); otherwise ``milli_cpu * 100000 // 1000``, at least 1000.
        For example 5 -> 1000, 10 -> 1000, 250 -> 25000, 1500 -> 150000.

    Raises:
        ValueError: ``milli_cpu`` is negative.
    """
    if milli_cpu < 0:
        raise ValueError(f"milli_cpu must be 0 or more, got {milli_cpu!r}")
    if milli_cpu == 0:
        return 0
    return max(milli_cpu * CPU_PERIOD // _MILLI_CPU_PER_CPU, _MIN_QUOTA)
