"""Pods' resource usage from two readings of their containers: what ``podsync top``, the
loop's ``/metrics`` and the reports show.

A runtime reads cumulative counters (``podsync.runtime.UsageRuntime``:
``ContainerUsage``, the CPU seconds since a container started); a rate needs two
readings of the same container. cAdvisor and the metrics server do the same: the CPU
``usageNanoCores`` of the kubelet's summary API is the difference of two cumulative
readings over the time between them (cAdvisor's ``InstCpuStats``), and ``kubectl top``
shows it.

* ``usage_figures``: one container's (or the host's) ``UsageFigures`` from its previous
  and current readings - average cores over the window, working set now.
* ``pod_usage``: each pod's ``PodUsage``, grouping the read containers by the pod
  podsync's labels say they belong to (``podsync.ownership``); foreign containers are
  left out.

Contract: pure; the readings and the containers are given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podsync.model._pod import ObservedContainer
from podsync.model._usage import ContainerUsage, PodUsage, UsageFigures
from podsync.spec._ownership import ownership

__all__ = ["pod_usage", "usage_figures"]


def usage_figures(previous: ContainerUsage | None, current: ContainerUsage) -> UsageFigures:
    """The figures of ``current`` against the ``previous`` reading of the same
    container (or of the host).

    ``cpu_cores`` is the CPU seconds used between the two readings divided by the
    seconds between them; ``None`` without a previous reading, or when ``current`` is
    not later than it (no window to average over). A counter that went back (the
    container restarted in between, under the same id) gives 0, never a negative rate.
    ``memory_working_set`` and ``cpu_seconds`` are the current ones.
    """
    cores: float | None = None
    if previous is not None and current.at > previous.at:
        used = max(0.0, current.cpu_seconds - previous.cpu_seconds)
        cores = used / (current.at - previous.at)
    return UsageFigures(cores, current.memory_working_set, current.cpu_seconds)


def _summed(figures: Sequence[UsageFigures]) -> UsageFigures:
    """Figures added up: cores of those that have a rate (``None`` when none has),
    memory and CPU seconds of all (``None`` seconds when one's are not known)."""
    rates = [f.cpu_cores for f in figures if f.cpu_cores is not None]
    seconds = [f.cpu_seconds for f in figures]
    return UsageFigures(
        sum(rates) if rates else None,
        sum(f.memory_working_set for f in figures),
        None if None in seconds else sum(s for s in seconds if s is not None),
    )


def pod_usage(
    previous: Mapping[str, ContainerUsage],
    current: Mapping[str, ContainerUsage],
    containers: Sequence[ObservedContainer],
    *,
    adopt_2014_containers: bool = False,
) -> list[PodUsage]:
    """The usage of each pod podsync runs among ``containers`` that has a container in
    ``current``, in pod-key order.

    Args:
        previous: the readings before, by container id (``{}``: none; every rate is
            then ``None``).
        current: the readings now, by container id (``UsageRuntime.container_usage``).
        containers: the engine's containers (``list_containers``), which say whose
            each id is: podsync's labels (``ownership``; with
            ``adopt_2014_containers`` also a 2014 kubelet's by its name). An id of
            ``current`` not among them, or of a foreign container, is left out.
        adopt_2014_containers: as ``PlanOptions.adopt_2014_containers``.

    Each pod's ``containers`` holds its read containers by name (the network container
    as ``"net"``); two instances of one name read together (an old one still
    stopping) are added up. ``total`` sums them all (``UsageFigures`` of ``None`` cores
    while none has a rate).
    """
    pods: dict[str, tuple[str, dict[str, list[UsageFigures]]]] = {}
    for oc in containers:
        reading = current.get(oc.id)
        if reading is None:
            continue
        owner = ownership(oc, adopt_2014_containers=adopt_2014_containers)
        if owner is None:
            continue
        _, by_name = pods.setdefault(owner.pod_uid, (owner.pod_key, {}))
        by_name.setdefault(owner.container, []).append(usage_figures(previous.get(oc.id), reading))
    usage = []
    for uid, (key, by_name) in pods.items():
        named = {name: _summed(figures) for name, figures in sorted(by_name.items())}
        usage.append(PodUsage(key, uid, _summed(list(named.values())), named))
    return sorted(usage, key=lambda u: (u.pod, u.uid))
