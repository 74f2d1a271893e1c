"""Resource usage: what a container (or the whole host) used, as the engine counts it.

The seed kubelet served each container's CPU and memory, and the machine's, from
cAdvisor (``GetContainerInfo``, ``GetRootInfo``). podsync reads the same two figures
through the runtime (``podsync.runtime.UsageRuntime``):

* ``ContainerUsage`` is one cumulative reading: the CPU seconds a container's cgroup has
  used since it started and its memory working set, at a time. A CPU rate needs two
  readings of the same container (``podsync.status.pod_usage`` makes them).
* ``UsageFigures`` is what reports show: cores used on average between two readings
  (``None`` after the first reading) and the working set of the last one.
* ``PodUsage`` is a pod's figures: its containers summed, and each container's.

The working set is cAdvisor's (``container/libcontainer/handler.go``,
``setMemoryStats``): the cgroup's memory usage minus its inactive file cache (cgroup v1
``total_inactive_file``, v2 ``inactive_file``), 0 when the cache is the larger - the
memory the kernel cannot take back without swapping, which the kubelet evicts on and
``kubectl top`` shows.

Contract: frozen values; nothing here reads anything.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["ContainerUsage", "PodUsage", "UsageFigures"]


@attrs.frozen
class ContainerUsage:
    """One cumulative reading of a container's (or the host's) usage.

    Attributes:
        cpu_seconds: CPU time used (user and system, every CPU together) since the
            container started; for the host, since it booted.
        memory_working_set: bytes: the memory usage minus the inactive file cache
            (cAdvisor's working set), never below 0.
        at: when it was read, seconds since the epoch.
    """

    cpu_seconds: float
    memory_working_set: int
    at: float


@attrs.frozen
class UsageFigures:
    """What reports show of a container, a pod or the host.

    Attributes:
        cpu_cores: the cores used on average over the window since the previous
            reading (0.5: half a core); ``None`` when there is no previous reading yet.
        memory_working_set: bytes, as the last reading said.
        cpu_seconds: the CPU seconds the last reading counted (cumulative: what a
            Prometheus counter exports, ``container_cpu_usage_seconds_total``); ``None``
            when not known.
    """

    cpu_cores: float | None
    memory_working_set: int
    cpu_seconds: float | None = None


@attrs.frozen
class PodUsage:
    """A pod's usage: its containers summed, and each of them.

    Attributes:
        pod: the pod key (``<namespace>/<name>``), as ``PodStatus.pod`` gives it.
        uid: the pod's uid.
        total: the pod's containers summed: app containers, sidecars, init containers
            that run, and the network container. Its ``cpu_cores`` sums the containers
            that have a rate, and is ``None`` when none has one yet (the first reading);
            a container read for the first time adds its memory only.
        containers: each running container's figures, by container name; the network
            container under ``"net"`` (``podsync.NETWORK_CONTAINER``: the name its
            engine container and its labels carry, which no container of a pod may
            have).
    """

    pod: str
    uid: str
    total: UsageFigures
    containers: Mapping[str, UsageFigures] = attrs.field(factory=dict, hash=False)
