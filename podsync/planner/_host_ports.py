"""Host-port conflicts between pods: running pods keep their ports, then first come,
first served.

Contract: ``filter_host_port_conflicts(pods, running=..., held_elsewhere=...)`` splits
``pods`` into the pods that may run and the pods that may not, keeping the input order
in both. Pods that already run (``running``, by uid) are admitted first, in input order,
then the others, in input order: a newcomer that wants a port a running pod holds is the
one rejected, wherever it stands in the input (the modern kubelet admits each new pod
against the pods already admitted and active, ``HandlePodAdditions`` in
``pkg/kubelet/kubelet.go``, so older pods win conflicts). A pod is rejected when one of
its published host ports (``host_port != 0``) conflicts with a port reserved by a pod
admitted before it, with a port that running containers of pods outside ``pods`` publish
(``held_elsewhere``: they keep running, so the port stays taken), or with another port
of its own. A rejected pod gets a ``Rejection`` (``Reason.HOST_PORT_CONFLICT``, as in
``Plan.rejected``) whose message says why, instead of the seed's log line. Candidates
are told apart by uid: the planner admits at most one pod per uid.

A running pod reserves the ports it asks for *and* those it still publishes: until the
pod is rebuilt with its new ports, the old ones are taken (a newcomer is admitted by the
next sync, once they are free).

Two ports conflict as in ``HostPortInfo.CheckConflict``
(``pkg/scheduler/framework/types.go``): same host port and protocol, and overlapping
addresses - the same address, or either one is every address (``""``, ``0.0.0.0`` or
``::``). Docker agrees: it refuses a second binding of one address ("port is already
allocated") and of every address next to a specific one ("address already in use"), and
binds 127.0.0.1:80 and 127.0.0.2:80 side by side.

Ported from the seed's ``filterHostPortConflicts`` (reference §2.2), which ran the pods
through ``validation.AccumulateUniquePorts`` with one shared ``map[int]bool``. Fixed here:

* The seed recorded each non-conflicting port *as it went*, so a rejected pod still
  reserved the ports it listed before the conflicting one (pod B with host ports
  [81, 80] after A=[80] was dropped, yet 81 stayed taken and a later C=[81] was dropped
  too). Here a pod's ports are reserved only once the whole pod is accepted.
* The seed keyed on the port number alone, so 80/TCP and 80/UDP "conflicted". They are
  different sockets, and Docker publishes both.
* The seed admitted in input order only, so a new pod listed earlier took the port of a
  running pod, which was then rejected and kept running: the new pod could never start.

Nothing here does I/O. May import: the model and the plan's vocabulary (``_actions``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podsync.actions._actions import Reason, Rejection
from podsync.model._pod import Pod, Port, PortProtocol
from podsync.spec._ports import network_ports

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "HostPortAdmission",
    "RejectedPod",
    "filter_host_port_conflicts",
]

_EVERY_ADDRESS = frozenset({"", "0.0.0.0", "::"})


#: The old name of what ``filter_host_port_conflicts`` rejects, kept for the public API:
#: a rejected pod is a ``Rejection``, as in ``Plan.rejected`` (one type for both).
RejectedPod = Rejection


def _overlap(a: str, b: str) -> bool:
    return a == b or a in _EVERY_ADDRESS or b in _EVERY_ADDRESS


def _spelled(port: Port) -> str:
    where = "" if port.host_ip in _EVERY_ADDRESS else f"{port.host_ip}:"
    return f"{where}{port.host_port}/{port.protocol.value}"


class _Reservations:
    """Host ports taken so far: by (port, protocol), the addresses and who holds them."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[int, PortProtocol], list[tuple[str, str]]] = {}

    def holder(self, port: Port) -> str | None:
        for address, holder in self._by_key.get((port.host_port, port.protocol), ()):
            if _overlap(address, port.host_ip):
                return holder
        return None

    def add(self, port: Port, holder: str) -> None:
        self._by_key.setdefault((port.host_port, port.protocol), []).append((port.host_ip, holder))


def _published(pod: Pod) -> list[Port]:
    # Not published: nothing to conflict on (the seed skipped host port 0 as well). A
    # sidecar's host ports are the pod's too (``network_ports``).
    return [p for p in network_ports(pod) if p.host_port != 0]


class _Held:
    """What the running pods publish now, indexed by (port, protocol): who publishes an
    overlapping address, in input order. One lookup per port, so admission stays linear
    in the number of pods."""

    def __init__(self, held: Sequence[tuple[int, Pod, Sequence[Port]]]) -> None:
        self._by_key: dict[tuple[int, PortProtocol], list[tuple[str, int, str]]] = {}
        self._mine: dict[int, Sequence[Port]] = {}
        for index, pod, ports in held:
            self._mine[index] = ports
            for port in ports:
                entry = (port.host_ip, index, pod.key)
                self._by_key.setdefault((port.host_port, port.protocol), []).append(entry)

    def publishes(self, index: int, port: Port) -> bool:
        """Whether the pod at ``index`` publishes ``port`` itself."""
        return any(
            p.host_port == port.host_port
            and p.protocol == port.protocol
            and _overlap(p.host_ip, port.host_ip)
            for p in self._mine.get(index, ())
        )

    def other_holder(self, index: int, port: Port) -> str | None:
        """The first other running pod that publishes ``port`` (an overlapping address)."""
        for address, other, key in self._by_key.get((port.host_port, port.protocol), ()):
            if other != index and _overlap(address, port.host_ip):
                return f"held by running pod {key}"
        return None


def _check(pod: Pod, taken: _Reservations, held: _Held, index: int) -> Rejection | None:
    # The first problem found, in container and port order, names the rejection.
    # ``held``: what each running pod publishes now. Another running pod's port is
    # taken unless ``pod`` publishes it too (with no bridge, recorded ports are not
    # really published, and then input order decides, through ``taken``).
    own = _Reservations()
    for port in _published(pod):
        if own.holder(port) is not None:
            return Rejection(
                pod.key,
                pod.uid,
                Reason.HOST_PORT_CONFLICT,
                f"host port {_spelled(port)} is used twice in the pod",
            )
        holder = taken.holder(port)
        if holder is None and not held.publishes(index, port):
            holder = held.other_holder(index, port)
        if holder is not None:
            return Rejection(
                pod.key,
                pod.uid,
                Reason.HOST_PORT_CONFLICT,
                f"host port {_spelled(port)} is {holder}",
            )
        own.add(port, "")
    return None


class HostPortAdmission:
    """Host-port admission of ``pods``, one pod at a time, for a caller that runs other
    checks between them (``podsync.planner._admission``: resources first, as the
    kubelet's ``AdmissionCheck`` orders them): ``order`` says in which order the pods are
    judged, ``check`` judges one, and ``accept`` or ``reject`` records the verdict - the
    caller's, which may be a rejection of its own - before the next pod is judged.

    Args: as ``filter_host_port_conflicts``'s.
    """

    def __init__(
        self,
        pods: Sequence[Pod],
        *,
        running: Mapping[str, Sequence[Port]] | None = None,
        held_elsewhere: Sequence[tuple[str, Port]] = (),
    ) -> None:
        self._pods = pods
        self._running = running or {}
        self._taken = _Reservations()
        for key, port in held_elsewhere:
            if port.host_port != 0:
                self._taken.add(port, f"held by running pod {key}")
        # A port a running pod publishes is its own whatever the input order: a running
        # pod that does not publish it (its network container is gone, say) does not get
        # it, or its new network container could not start while the other one runs.
        self._held = _Held(
            [
                (i, pods[i], ports)
                for i in self.incumbents()
                if (ports := [p for p in self._running[pods[i].uid] if p.host_port != 0])
            ]
        )

    def incumbents(self) -> list[int]:
        """The indexes of the pods that already run, in input order."""
        return [i for i, pod in enumerate(self._pods) if pod.uid in self._running]

    def order(self) -> list[int]:
        """The indexes of ``pods`` in the order they are admitted: the running pods
        first, then the others, each in input order."""
        newcomers = [i for i, pod in enumerate(self._pods) if pod.uid not in self._running]
        return self.incumbents() + newcomers

    def check(self, index: int) -> Rejection | None:
        """Why the pod at ``index`` may not have its host ports, or ``None``."""
        return _check(self._pods[index], self._taken, self._held, index)

    def accept(self, index: int) -> None:
        """The pod at ``index`` is admitted: it reserves the ports it asks for and those
        it still publishes."""
        pod = self._pods[index]
        for port in (*_published(pod), *self._running.get(pod.uid, ())):
            if port.host_port != 0:
                self._taken.add(port, f"already used by pod {pod.key}")

    def reject(self, index: int) -> None:
        """The pod at ``index`` is rejected: nothing of it is reserved (the seed leaked
        its earlier ports), but what it publishes while it runs stays taken, as it keeps
        running."""
        pod = self._pods[index]
        for port in self._running.get(pod.uid, ()):
            if port.host_port != 0:
                self._taken.add(port, f"held by running pod {pod.key}")


def filter_host_port_conflicts(
    pods: Sequence[Pod],
    *,
    running: Mapping[str, Sequence[Port]] | None = None,
    held_elsewhere: Sequence[tuple[str, Port]] = (),
) -> tuple[tuple[Pod, ...], tuple[Rejection, ...]]:
    """Admit running pods first, then the rest, unless they clash on a host port; return
    (accepted, rejected).

    Args:
        pods: the candidate pods, in priority order.
        running: by pod uid, the pods of ``pods`` that already run, each with the host
            ports its running containers publish now (possibly none). They are admitted
            before the others and reserve those ports besides the ones they ask for;
            a port one of them publishes is never given to another pod, running or
            not, unless that pod publishes it too.
        held_elsewhere: ``(pod key, port)`` for host ports that running containers of
            pods *not* in ``pods`` publish; no pod may take them.

    Both tuples keep the input order, and together they hold every input pod exactly
    once. Host port 0 never conflicts (see the module docstring for the rule).
    """
    admission = HostPortAdmission(pods, running=running, held_elsewhere=held_elsewhere)
    verdicts: dict[int, Rejection | None] = {}
    for index in admission.order():
        verdicts[index] = problem = admission.check(index)
        if problem is None:
            admission.accept(index)
        else:
            admission.reject(index)
    accepted = tuple(pod for i, pod in enumerate(pods) if verdicts[i] is None)
    rejected = tuple(v for i in range(len(pods)) if (v := verdicts[i]) is not None)
    return accepted, rejected
