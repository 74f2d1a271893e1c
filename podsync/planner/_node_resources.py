"""Resource admission: whether a pod's requests fit in what the node has left, as the
kubelet's predicate admit handler decides it (``predicateAdmitHandler.Admit``,
``pkg/kubelet/lifecycle/predicate.go``, through the scheduler's resource fit,
``fitsRequest`` in ``pkg/scheduler/framework/plugins/noderesources/fit.go``;
kubelet-modern.md §10).

* A pod's request is the kubelet's effective request (``pod_requests``: ``PodRequests``
  and ``AggregateContainerRequests``, ``k8s.io/component-helpers/resource/helpers.go``):
  the sum over its app containers and sidecars, or, when larger, what the pod needs
  while an init container runs - that init container beside the sidecars declared
  before it.
* What the node has is its allocatable: the engine's CPUs and memory (its capacity,
  ``NodeRuntime.node_capacity``) less what the operator keeps for the system
  (``PlanOptions.system_reserved``, the kubelet's ``--system-reserved``).
* A pod fits when, for each resource it requests (a request of 0 always fits), its
  request is at most the allocatable less what the pods admitted before it request.
  The first resource that does not fit, CPU before memory, is the rejection: reason
  ``OutOfcpu`` or ``OutOfmemory``, message ``Node didn't have enough resource: <r>,
  requested: n, used: n, capacity: n`` (milli-CPU and bytes), the kubelet's words
  (``InsufficientResourceError``).

Contract: pure; ``NodeResources`` is mutable, private to one admission.

May import: the model and the plan's vocabulary. Never the rest of the planner, a
runtime, or anything that does I/O.
"""

from __future__ import annotations

from podsync.actions._actions import Reason, Rejection
from podsync.model._pod import Container, Pod, ResourceList

__all__: list[str] = []  # the planner's own


def _request(c: Container) -> tuple[int, int]:
    """(milli-CPU, bytes) container ``c`` requests: its requests, each defaulted to its
    limit when not given, as the API server defaults them (``SetDefaults_Pod``); the
    2014 fields are a CPU request and a memory limit."""
    r = c.resources
    if r is None:
        return c.cpu, c.memory
    return r.requests.cpu or r.limits.cpu, r.requests.memory or r.limits.memory


def pod_requests(pod: Pod) -> tuple[int, int]:
    """(milli-CPU, bytes) ``pod`` requests, as the kubelet counts it at admission
    (``PodRequests``, component-helpers ``resource/helpers.go``).

    The app containers run together, and each sidecar runs beside them for the pod's
    whole life: their requests add up. An init container runs alone, beside the
    sidecars declared before it (they started first and keep running): the pod needs
    the largest of those moments, if that is more than the sum.
    """
    cpu = memory = 0
    for c in pod.containers:
        c_cpu, c_memory = _request(c)
        cpu += c_cpu
        memory += c_memory
    # What the sidecars declared so far request, and the largest init-time need.
    side_cpu = side_memory = init_cpu = init_memory = 0
    for c in pod.init_containers:
        c_cpu, c_memory = _request(c)
        if c.restart_policy is not None:
            cpu += c_cpu
            memory += c_memory
            side_cpu += c_cpu
            side_memory += c_memory
            need = side_cpu, side_memory
        else:
            need = side_cpu + c_cpu, side_memory + c_memory
        init_cpu = max(init_cpu, need[0])
        init_memory = max(init_memory, need[1])
    return max(cpu, init_cpu), max(memory, init_memory)


def allocatable(capacity: ResourceList, reserved: ResourceList) -> tuple[int, int]:
    """(milli-CPU, bytes) the pods may request: ``capacity`` less ``reserved``, never
    below 0 (the kubelet's node allocatable, without eviction thresholds)."""
    return max(capacity.cpu - reserved.cpu, 0), max(capacity.memory - reserved.memory, 0)


class NodeResources:
    """What the pods admitted so far request, against the node's allocatable.

    Args:
        capacity: the node's allocatable (milli-CPU, bytes).
    """

    def __init__(self, capacity: tuple[int, int]) -> None:
        self._capacity = capacity
        self._used = [0, 0]

    def check(self, pod: Pod, requests: tuple[int, int]) -> Rejection | None:
        """Why ``pod``, which requests ``requests``, does not fit, or ``None``."""
        for name, reason, index in (
            ("cpu", Reason.OUT_OF_CPU, 0),
            ("memory", Reason.OUT_OF_MEMORY, 1),
        ):
            asked, used, capacity = requests[index], self._used[index], self._capacity[index]
            if asked > 0 and asked > capacity - used:
                return Rejection(
                    pod.key,
                    pod.uid,
                    reason,
                    f"Node didn't have enough resource: {name}, requested: {asked}, "
                    f"used: {used}, capacity: {capacity}",
                )
        return None

    def add(self, requests: tuple[int, int]) -> None:
        """Count a pod that requests ``requests`` as admitted."""
        self._used[0] += requests[0]
        self._used[1] += requests[1]
