"""Host-port conflicts between pods: first come, first served.

Contract: ``filter_host_port_conflicts(pods)`` splits ``pods`` into the pods that may run
and the pods that may not, keeping the input order in both. A pod is rejected when one
of its published host ports (``host_port != 0``) is already taken by an earlier accepted
pod, or when it publishes the same host port twice itself. A rejected pod gets a
``RejectedPod`` that says why, instead of the seed's log line.

Ported from the seed's ``filterHostPortConflicts`` (reference §2.2), which ran the pods
through ``validation.AccumulateUniquePorts`` with one shared ``map[int]bool``. Fixed here:

* The seed recorded each non-conflicting port *as it went*, so a rejected pod still
  reserved the ports it listed before the conflicting one (pod B with host ports
  [81, 80] after A=[80] was dropped, yet 81 stayed taken and a later C=[81] was dropped
  too). Here a pod's ports are reserved only once the whole pod is accepted.
* The seed keyed on the port number alone, so 80/TCP and 80/UDP "conflicted". They are
  different sockets, and Docker publishes both; here the key is (port, protocol).

The host IP is deliberately *not* part of the key: a port bound on every address
(``0.0.0.0``, the empty host IP) overlaps a binding of the same port on ``127.0.0.1``, and
Docker refuses the second one. Treating any two uses of one port and protocol as a
conflict, whatever the addresses, is the simple rule that never lets such a pod through;
it is stricter than needed only for two distinct specific addresses.

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from podsync._models import Pod, PortProtocol

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "RejectedPod",
    "filter_host_port_conflicts",
]

_HostPort = tuple[int, PortProtocol]


@attrs.frozen
class RejectedPod:
    """A pod that was not accepted, and why.

    Attributes:
        pod: the pod, as given.
        reason: a machine-readable code: ``"host-port-conflict"`` when an earlier pod
            already uses one of its host ports, ``"duplicate-host-port"`` when the pod
            itself publishes a host port twice.
        message: one line for people, naming the port and the other pod, e.g.
            ``host port 80/TCP is already used by pod default/web``.
    """

    pod: Pod
    reason: str
    message: str


def _check(pod: Pod, taken: dict[_HostPort, Pod]) -> RejectedPod | None:
    # The first problem found, in container and port order, names the rejection.
    own: set[_HostPort] = set()
    for container in pod.containers:
        for port in container.ports:
            if port.host_port == 0:
                # Not published: nothing to conflict on (the seed skipped 0 as well).
                continue
            key = (port.host_port, port.protocol)
            spelled = f"{port.host_port}/{port.protocol.value}"
            if key in own:
                return RejectedPod(
                    pod, "duplicate-host-port", f"host port {spelled} is used twice in the pod"
                )
            holder = taken.get(key)
            if holder is not None:
                return RejectedPod(
                    pod,
                    "host-port-conflict",
                    f"host port {spelled} is already used by pod {holder.key}",
                )
            own.add(key)
    return None


def filter_host_port_conflicts(
    pods: Sequence[Pod],
) -> tuple[tuple[Pod, ...], tuple[RejectedPod, ...]]:
    """Accept pods in order unless they clash on a host port; return (accepted, rejected).

    Both tuples keep the input order, and together they hold every input pod exactly
    once. Host port 0 never conflicts. The key is (host port, protocol), whatever the
    host IP (see the module docstring).
    """
    taken: dict[_HostPort, Pod] = {}
    accepted: list[Pod] = []
    rejected: list[RejectedPod] = []
    for pod in pods:
        problem = _check(pod, taken)
        if problem is not None:
            # Nothing of a rejected pod is reserved (the seed leaked its earlier ports).
            rejected.append(problem)
            continue
        for container in pod.containers:
            for port in container.ports:
                if port.host_port != 0:
                    taken[(port.host_port, port.protocol)] = pod
        accepted.append(pod)
    return tuple(accepted), tuple(rejected)
