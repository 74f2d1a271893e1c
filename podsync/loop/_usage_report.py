"""What the loop reports of its pods' resource usage: a reading of podsync's running
containers (and of the host) every ``usage_period``, to a board that wants it.

A board that has ``usage_seen(pods, node)`` (``UsageBoard``; ``LoopBoard`` has it) gets,
after a round's ``pods_seen``, each pod's ``PodUsage`` and the host's ``UsageFigures``
(``None`` when the runtime cannot read its host), when the runtime is a
``UsageRuntime`` - at most once per ``usage_period``. The default period, 15 s, is the
order the kubelet's usage figures move at: cAdvisor's housekeeping reads a container's
cgroup every 10 s under the kubelet (``cadvisor_linux.go``,
``defaultHousekeepingInterval``), and the metrics server, which ``kubectl top`` asks,
scrapes them every 15 s (its ``--metric-resolution`` default). A faster period buys no
truer figure and costs a read of every container.

CPU rates need two readings (``podsync.status.pod_usage``): the first report after the
loop starts has ``cpu_cores`` ``None``; a container read for the first time (a new one)
has no rate until the next reading.

Contract: the read happens in the round's thread, after the round's other reports: it
slows a round by the read alone. A read that fails (the engine away, a bug of the
runtime) is the caller's notice (``usage-error``), never fatal; the previous readings are
kept, and the next period tries again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from podsync.actions._options import NODE_SCOPE
from podsync.model._pod import ObservedContainer
from podsync.model._usage import ContainerUsage, PodUsage, UsageFigures
from podsync.runtime._protocol import UsageRuntime
from podsync.spec._ownership import ownership
from podsync.status._usage import pod_usage, usage_figures

__all__ = ["UsageBoard", "UsageReader"]


@runtime_checkable
class UsageBoard(Protocol):
    """The optional method of a ``Board``: told of the pods' usage every usage period."""

    def usage_seen(self, pods: Sequence[PodUsage], node: UsageFigures | None) -> None: ...


class UsageReader:
    """The readings between reports, and when the next is due (one loop's; used from the
    round's thread only)."""

    def __init__(self, period: float) -> None:
        self.period = period
        self._next: float | None = None  # monotonic; None: at the first round
        self._previous: dict[str, ContainerUsage] = {}
        self._node: ContainerUsage | None = None

    def due(self, now: float) -> bool:
        """Whether a reading is due at ``now`` (monotonic seconds); when it is, the next
        one is due a period later, whatever comes of this one."""
        if self._next is not None and now < self._next:
            return False
        self._next = now + self.period
        return True

    def read(
        self,
        runtime: UsageRuntime,
        containers: Sequence[ObservedContainer],
        *,
        adopt_2014_containers: bool = False,
        scope: str | None = None,
    ) -> tuple[list[PodUsage], UsageFigures | None]:
        """Read podsync's running containers among ``containers`` (and the host), and
        their figures against the previous reading. With a named ``scope`` (not
        ``None``, not ``NODE_SCOPE``), only the containers of that scope: the loop's
        own pods, not another scope's on the same engine.

        Raises:
            Exception: whatever the runtime raises; the previous readings are kept.
        """
        named = scope not in (None, NODE_SCOPE)
        mine = []
        for c in containers:
            owner = ownership(c, adopt_2014_containers=adopt_2014_containers)
            if c.running and owner is not None and (not named or owner.scope == scope):
                mine.append(c)
        current = runtime.container_usage([c.id for c in mine]) if mine else {}
        node = runtime.node_usage()
        pods = pod_usage(self._previous, current, mine, adopt_2014_containers=adopt_2014_containers)
        node_figures = None if node is None else usage_figures(self._node, node)
        self._previous, self._node = current, node
        return pods, node_figures


#: The labels of the usage metrics (cAdvisor's names): ``id`` is ``/`` on the host's row
#: (cAdvisor's root cgroup) and empty on the pods' and containers' rows; a pod's own row
#: (the sum of its containers, as cAdvisor's pod cgroup) has ``container=""``.
USAGE_LABELS = ("container", "id", "namespace", "pod")


def usage_rows(
    pods: Sequence[PodUsage], node: UsageFigures | None
) -> list[tuple[tuple[str, str, str, str], UsageFigures]]:
    """The rows of the usage metrics, by ``USAGE_LABELS``: each pod's, then its
    containers', then the host's."""
    rows = []
    for usage in pods:
        namespace, _, name = usage.pod.rpartition("/")
        rows.append((("", "", namespace, name), usage.total))
        rows.extend(
            ((container, "", namespace, name), figures)
            for container, figures in usage.containers.items()
        )
    if node is not None:
        rows.append((("", "/", "", ""), node))
    return rows
