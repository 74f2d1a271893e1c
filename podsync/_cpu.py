"""CPU limits: milli-CPU to the engine's relative CPU shares.

Contract: ``cpu_shares(milli_cpu)`` turns a container's CPU request in milli-CPU
(``500m`` = 500) into the value for Docker's ``CpuShares`` (``docker run --cpu-shares``),
or 0 to leave it unset.

Ported from the seed's ``milliCPUToShares`` (reference §2.5), whose constants the seed
took from lmctfy's CPU controller. The rule, step by step:

1. 0 means "no CPU request": return 0, which Docker treats as "not set", so the
   container gets the default weight (1024 shares). The mid-2014 seed lacked this case
   and turned 0 into 2, the smallest weight there is.
2. Otherwise scale: one CPU is 1024 shares. 1024 is the default ``cpu.shares`` of a
   cgroup-v1 CPU cgroup (the kernel's ``NICE_0_LOAD``: one nice-0 task's weight) and the
   documented default of Docker's ``--cpu-shares``, so a container asking for one CPU
   weighs the same as one that asked for nothing. The product is
   taken before the division (``milli * 1024 // 1000``, not ``milli // 1000 * 1024``)
   so small requests keep their precision; the division rounds down.
3. Raise anything smaller than 2 to 2: the kernel's minimum ``cpu.shares``
   (``MIN_SHARES = 1UL << 1`` in ``kernel/sched/sched.h``) - it clamps smaller values
   itself, so asking for less would only misreport the weight.

There is no upper clamp: the kernel caps ``cpu.shares`` at ``MAX_SHARES = 1UL << 18``
(262144, i.e. 256 CPUs) and Docker clamps to that range on cgroup v1; on cgroup v2 the
runtime converts shares to ``cpu.weight``.

Nothing here does I/O.
"""

from __future__ import annotations

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "cpu_shares",
]

# One CPU in cgroup-v1 cpu.shares: the cgroup default, and Docker's --cpu-shares default.
_SHARES_PER_CPU = 1024
# The kernel's smallest cpu.shares value.
_MIN_SHARES = 2
_MILLI_CPU_PER_CPU = 1000


def cpu_shares(milli_cpu: int) -> int:
    """Docker ``CpuShares`` for a CPU request of ``milli_cpu`` milli-CPU.

    Args:
        milli_cpu: the request in thousandths of a CPU; 0 means unset.

    Returns:
        0 for 0 (leave the engine's default); otherwise ``milli_cpu * 1024 // 1000``,
        at least 2. For example 1 -> 2, 100 -> 102, 500 -> 512, 1000 -> 1024.

    Raises:
        ValueError: ``milli_cpu`` is negative.
    """
    if milli_cpu < 0:
        raise ValueError(f"milli_cpu must be 0 or more, got {milli_cpu!r}")
    if milli_cpu == 0:
        return 0
    shares = milli_cpu * _SHARES_PER_CPU // _MILLI_CPU_PER_CPU
    return max(shares, _MIN_SHARES)
