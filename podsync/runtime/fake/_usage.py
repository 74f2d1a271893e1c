"""``FakeRuntime``'s usage readings (``UsageRuntime``), with what a test scripts for them:
the cores and memory each container uses, and the host's.

Contract: ``UsageCalls`` is a mixin of ``FakeRuntime`` (``podsync.testing``), on the state
and internals of ``FakeEngine``; in memory, no I/O. A container uses what
``set_usage`` last said, from the moment it said it: its CPU seconds grow by
``cpu_cores`` for every second of the fake's clock, as a cgroup's counter does; a
container that does not run (created, exited, removed) is not read, as the engines
leave it out. A container never given a usage runs at 0 cores and 0 bytes. The host
(``node_usage``) is ``None`` until ``set_node_usage`` is called, as a remote engine's.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from podsync.model._usage import ContainerUsage
from podsync.runtime.fake._engine import FakeEngine

__all__ = ["UsageCalls", "UsageRate"]


@attrs.frozen
class UsageRate:
    """What a container (or the host) uses from ``since`` on: ``cores`` on average and
    ``memory`` bytes of working set, over ``cpu_seconds`` used before ``since``."""

    cores: float
    memory: int
    since: float
    cpu_seconds: float = 0.0

    def reading(self, at: float) -> ContainerUsage:
        used = self.cpu_seconds + self.cores * max(0.0, at - self.since)
        return ContainerUsage(used, self.memory, at)


def _check(cpu_cores: float, memory: int) -> None:
    if not (cpu_cores >= 0 and memory >= 0):
        raise ValueError(f"usage is 0 or more, got {cpu_cores!r} cores and {memory!r} bytes")


class UsageCalls(FakeEngine):
    """``FakeRuntime``'s ``container_usage`` and ``node_usage``, and their scripting."""

    # Set by FakeRuntime's constructor: the usage of containers by id, and of the host.
    _usage: dict[str, UsageRate]
    _node_usage: UsageRate | None

    def set_usage(self, ref: str, *, cpu_cores: float = 0.0, memory: int = 0) -> None:
        """Container ``ref`` uses ``cpu_cores`` cores and ``memory`` bytes from now on
        (the fake's clock; the CPU seconds it used so far are kept). No call recorded.

        Raises:
            KeyError: there is no such container.
            ValueError: a negative figure.
        """
        _check(cpu_cores, memory)
        with self._lock:
            container = self._get(ref)
            now = self.clock()
            before = self._usage.get(container.id)
            used = 0.0 if before is None else before.reading(now).cpu_seconds
            self._usage[container.id] = UsageRate(cpu_cores, memory, now, used)

    def set_node_usage(self, *, cpu_cores: float = 0.0, memory: int = 0) -> None:
        """The host uses ``cpu_cores`` and ``memory`` bytes from now on (``node_usage``
        is ``None`` before the first call). No call recorded.

        Raises:
            ValueError: a negative figure.
        """
        _check(cpu_cores, memory)
        with self._lock:
            now = self.clock()
            before = self._node_usage
            used = 0.0 if before is None else before.reading(now).cpu_seconds
            self._node_usage = UsageRate(cpu_cores, memory, now, used)

    def container_usage(self, container_ids: Sequence[str]) -> dict[str, ContainerUsage]:
        """``UsageRuntime.container_usage``: the running containers of ``container_ids``
        (by id or name, keyed as asked), at the clock's reading; recorded as ``usage``."""
        with self._lock:
            self._record("usage", tuple(container_ids))
            now = self.clock()
            readings = {}
            for ref in container_ids:
                container = self._find(ref)
                if container is None or not container.running:
                    continue
                rate = self._usage.get(container.id) or UsageRate(0.0, 0, container.created)
                readings[ref] = rate.reading(now)
        self._sleep()
        return readings

    def node_usage(self) -> ContainerUsage | None:
        """``UsageRuntime.node_usage``: what ``set_node_usage`` said, at the clock's
        reading; ``None`` before (a remote engine's answer). Recorded as ``node_usage``."""
        with self._lock:
            self._record("node_usage")
            rate = self._node_usage
            reading = None if rate is None else rate.reading(self.clock())
        self._sleep()
        return reading
