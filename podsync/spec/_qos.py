"""A pod's QoS class, and the OOM score adjustment the kernel reads for each container.

Contract: ``qos_class(pod)`` is the pod's class - ``Guaranteed``, ``Burstable`` or
``BestEffort`` - from the CPU and memory requests and limits of all its containers;
``oom_score_adj(pod, container, memory_capacity)`` is the value for the container's
``oom_score_adj`` (Docker ``OomScoreAdj``): the higher, the sooner the kernel's OOM
killer picks the container when the host runs out of memory.

``qos_class`` ports ``GetPodQOS`` (pkg/apis/core/v1/helper/qos/qos.go), step by step:

1. Only CPU and memory count. A request not written is the limit (the API server's
   defaulting, ``SetDefaults_Pod``), and a request or limit of 0 is none.
2. Sum the requests and the limits over every container, init containers and
   sidecars included.
3. No request and no limit anywhere: ``BestEffort``.
4. Every container has a CPU and a memory limit, and the summed requests equal the
   summed limits: ``Guaranteed``.
5. Anything else: ``Burstable``.

A 2014 manifest's ``cpu`` and ``memory`` were limits (the v1beta1 conversion wrote them
into ``resources.limits``), so they count as limits with equal requests here.

``oom_score_adj`` ports ``GetContainerOOMScoreAdjust`` (pkg/kubelet/qos/policy.go;
kubelet-modern.md §6):

1. ``Guaranteed``: -997 (``guaranteedOOMScoreAdj``), killed last.
2. ``BestEffort``: 1000 (``besteffortOOMScoreAdj``), killed first.
3. ``Burstable``: ``1000 - 1000 * memory request // memory capacity``: a container that
   requested a tenth of the host's memory gets 900. A sidecar (an init container with
   ``restartPolicy: Always``) gets no more than the value of the smallest memory request
   among the pod's app containers, so it outlives them. The result is raised to 3
   (``1000 + guaranteedOOMScoreAdj``: never as safe as a Guaranteed container) and
   lowered from 1000 to 999 (always safer than a BestEffort one).

The memory capacity is the engine's host memory (``PlanOptions.memory_capacity``,
``docker info``'s ``MemTotal``). When it is not known (0), a Burstable container gets
999, the formula's value for a request that is a negligible part of the memory:
between the two other classes, as the kubelet's always is. The gates the kubelet
consults here (``PodLevelResources``, and node-critical priority classes) have no
counterpart in podsync's pod files.

``NETWORK_OOM_SCORE_ADJ`` is the network (pause) container's: -998, the kubelet's
``PodInfraOOMAdj`` of the dockershim days, so that the pod's network outlives its
containers.

Nothing here does I/O.
"""

from __future__ import annotations

import enum

from podsync.model._pod import Container, Pod, RestartPolicy

__all__: list[str] = []  # podsync's own: the planner's create specs read it

#: The OOM score adjustment of a pod's network container (``PodInfraOOMAdj``).
NETWORK_OOM_SCORE_ADJ = -998
# guaranteedOOMScoreAdj and besteffortOOMScoreAdj (pkg/kubelet/qos/policy.go).
_GUARANTEED = -997
_BEST_EFFORT = 1000


class QOSClass(enum.StrEnum):
    """A pod's quality-of-service class, in Kubernetes' spelling (``status.qosClass``)."""

    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def _requests_and_limits(c: Container) -> tuple[tuple[int, int], tuple[int, int]]:
    """((CPU request, memory request), (CPU limit, memory limit)) of ``c``, in milli-CPU
    and bytes, each request defaulted to its limit (``SetDefaults_Pod``)."""
    r = c.resources
    if r is None:
        # A 2014 manifest: its cpu and memory are limits.
        return (c.cpu, c.memory), (c.cpu, c.memory)
    limits = (r.limits.cpu, r.limits.memory)
    requests = (r.requests.cpu or r.limits.cpu, r.requests.memory or r.limits.memory)
    return requests, limits


def qos_class(pod: Pod) -> QOSClass:
    """The QoS class of ``pod`` (``GetPodQOS``; see the module docstring)."""
    requested = [0, 0]
    limited = [0, 0]
    guaranteed = True
    for c in (*pod.init_containers, *pod.containers):
        requests, limits = _requests_and_limits(c)
        for i in (0, 1):
            requested[i] += requests[i]
            limited[i] += limits[i]
        # Guaranteed needs both limits on every container.
        guaranteed = guaranteed and all(limits)
    if not any(requested) and not any(limited):
        return QOSClass.BEST_EFFORT
    if guaranteed and requested == limited:
        return QOSClass.GUARANTEED
    return QOSClass.BURSTABLE


def _memory_request(c: Container) -> int:
    return _requests_and_limits(c)[0][1]


def _burstable(memory_request: int, memory_capacity: int) -> int:
    if memory_capacity <= 0:
        return _BEST_EFFORT - 1
    return _BEST_EFFORT - _BEST_EFFORT * memory_request // memory_capacity


def oom_score_adj(pod: Pod, container: Container, memory_capacity: int) -> int:
    """The OOM score adjustment of ``container`` of ``pod`` on a host of
    ``memory_capacity`` bytes (0: not known) - ``GetContainerOOMScoreAdjust``.

    Returns:
        -997 in a Guaranteed pod, 1000 in a BestEffort pod, 3 to 999 in a Burstable one
        (see the module docstring).
    """
    qos = qos_class(pod)
    if qos is QOSClass.GUARANTEED:
        return _GUARANTEED
    if qos is QOSClass.BEST_EFFORT:
        return _BEST_EFFORT
    adjust = _burstable(_memory_request(container), memory_capacity)
    sidecar = container.restart_policy is RestartPolicy.ALWAYS and any(
        init.name == container.name for init in pod.init_containers
    )
    if sidecar and pod.containers:
        # A sidecar serves the app containers: it goes no sooner than the one with the
        # smallest memory request (minRegularContainerMemory).
        smallest = min(_memory_request(c) for c in pod.containers)
        adjust = min(adjust, _burstable(smallest, memory_capacity))
    # Never as safe as Guaranteed, always safer than BestEffort.
    if adjust < _BEST_EFFORT + _GUARANTEED:
        return _BEST_EFFORT + _GUARANTEED
    if adjust == _BEST_EFFORT:
        return _BEST_EFFORT - 1
    return adjust
