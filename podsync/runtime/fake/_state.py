"""What ``FakeRuntime`` holds per container, and what it writes down as things happen:
the containers' log lines and the engine's events, in Docker's shapes.

Contract: in memory, no I/O, no clock of its own (times come from the fake's clock);
thread-safe through the fake's lock, which is the ``threading.Condition``'s lock given
here, so a follower waiting for a line or an event is woken by the call that adds it.
A follower never waits with a timeout: it ends when its container stops, when the
events' ``until`` time passes on the fake's clock (checked at every new event and at
``wake``), or when the caller closes its stream.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator

import attrs

from podsync.actions._actions import CreateSpec
from podsync.model._pod import ObservedContainer
from podsync.runtime._protocol import EngineEvent, LogLine, Stream
from podsync.spec._labels import LABEL_JOINS
from podsync.spec._ports import PortMapping

__all__ = [
    "FakeContainer",
    "Journal",
    "exec_refusal",
    "listed_network_mode",
    "network_mode_conflict",
    "port_clash",
    "published",
    "publishes",
    "removal_refusal",
    "start_refusal",
]


@attrs.define
class FakeContainer:
    """One container of the fake engine (its state, as Docker's ``State``)."""

    id: str
    name: str
    image: str
    labels: dict[str, str]
    created: float
    running: bool = False
    exit_code: int = 0
    finished_at: float | None = None
    network_mode: str = ""
    # Docker's HostConfig.IpcMode: "private" (the engine's default), "shareable",
    # "host" or "container:<id>".
    ipc_mode: str = "private"
    spec: CreateSpec | None = None
    # What the engine publishes while the container runs: ((port, protocol, host IP), ...).
    published: tuple[tuple[int, str, str], ...] = ()
    stopped_by_podsync: str = ""
    # Paused (``FakeRuntime.pause``): still running, as Docker's State.Running.
    paused: bool = False
    # The kernel's OOM killer ended its last run (Docker's State.OOMKilled).
    oom_killed: bool = False
    # When its current or last run started (Docker's State.StartedAt).
    started_at: float | None = None
    # What it wrote, oldest first.
    logs: list[LogLine] = attrs.field(factory=list)
    # Files its process wrote outside volumes, by absolute path
    # (``FakeRuntime.write_container_file``).
    files: dict[str, bytes] = attrs.field(factory=dict)

    def observed(self) -> ObservedContainer:
        return ObservedContainer(
            id=self.id,
            name=self.name,
            image=self.image,
            labels=dict(self.labels),
            created=self.created,
            running=self.running,
            exit_code=self.exit_code,
            finished_at=self.finished_at,
            stopped_by_podsync=self.stopped_by_podsync,
            oom_killed=self.oom_killed,
            started_at=self.started_at,
        )


def network_mode_conflict(spec: CreateSpec) -> str | None:
    """Docker's refusal of ``spec``'s network options, or None: what belongs to the
    network container cannot be set on a container that joins it. Docker 20.10
    (runconfig/hostconfig_unix.go, ``validateNetContainerMode``) checks these when it
    decodes the request, before anything else, in this order (published ports are
    exposed too, so the publishing refusal is the one met)."""
    if not spec.join:
        return None
    if spec.hostname:
        return "conflicting options: hostname and the network mode"
    if spec.dns:
        return "conflicting options: dns and the network mode"
    if any(alias.hostnames for alias in spec.host_aliases):  # ExtraHosts
        return "conflicting options: custom host-to-IP mapping and the network mode"
    if spec.ports:
        return "conflicting options: port publishing and the container type network mode"
    return None


def publishes(network_mode: str, bridge: bool) -> bool:
    """Whether Docker publishes a container's port bindings in ``network_mode``: on the
    default bridge network (when the engine has one) or a named network; never for
    ``none``, ``host`` (bindings are ignored) or ``container:<id>`` (the ports belong to
    that container)."""
    if network_mode in ("none", "host") or network_mode.startswith("container:"):
        return False
    if network_mode in ("", "default", "bridge"):
        return bridge
    return True


def published(ports: Iterable[PortMapping]) -> tuple[tuple[int, str, str], ...]:
    return tuple((p.host_port, p.protocol.value.lower(), p.host_ip) for p in ports if p.host_port)


_ALL_ADDRESSES = frozenset({"", "0.0.0.0", "::"})


def port_clash(container: FakeContainer, containers: Iterable[FakeContainer]) -> str | None:
    """Docker's complaint when ``container`` cannot publish its ports because one of
    ``containers`` that runs publishes them, or None."""
    others = [c for c in containers if c.running and c.id != container.id]
    for port, protocol, ip in container.published:
        for other in others:
            for held_port, held_protocol, held_ip in other.published:
                if (held_port, held_protocol) != (port, protocol):
                    continue
                mine, theirs = ip or "0.0.0.0", held_ip or "0.0.0.0"
                if mine == theirs:
                    # Docker's port allocator, keyed by (address, protocol, port).
                    return f"Bind for {mine}:{port} failed: port is already allocated"
                if mine in _ALL_ADDRESSES or theirs in _ALL_ADDRESSES:
                    # Different allocator keys; the bind itself fails.
                    return (
                        f"Error starting userland proxy: listen {protocol}4 "
                        f"{mine}:{port}: bind: address already in use"
                    )
    return None


def exec_refusal(container: FakeContainer | None, ref: str) -> str | None:
    """Docker's refusal of an exec in ``container`` (named ``ref``), or None."""
    if container is None:
        return f"No such container: {ref}"
    if not container.running:
        return f"Container {container.id} is not running"
    if container.paused:
        return f"Container {ref} is paused, unpause the container before exec"
    return None


def listed_network_mode(container: ObservedContainer) -> str:
    """The network mode of a container put on the fake as it is (no list reports one):
    ``container:<name>`` of the network container its ``LABEL_JOINS`` label names, as
    podsync created it; else unknown (``""``)."""
    joins = container.labels.get(LABEL_JOINS)
    return f"container:{joins}" if joins else ""


def removal_refusal(
    container: FakeContainer,
    find: Callable[[str], FakeContainer | None],
    containers: Iterable[FakeContainer],
) -> str | None:
    """podman's refusal to remove ``container`` while another container joins its
    network or IPC namespace (``container:<name or id>``), in podman's words (libpod's
    ``ErrDepExists``, answered with HTTP 500); None when nothing joins it. Docker makes
    no such check."""
    dependents = [
        other.id
        for other in containers
        if other.id != container.id
        and any(
            mode.startswith("container:") and find(mode.removeprefix("container:")) is container
            for mode in (other.network_mode, other.ipc_mode)
        )
    ]
    if not dependents:
        return None
    return (
        f"container {container.id} has dependent containers which must be removed "
        f"before it: {','.join(sorted(dependents))}: container already exists"
    )


def start_refusal(
    container: FakeContainer,
    find: Callable[[str], FakeContainer | None],
    containers: Iterable[FakeContainer],
    runtime_refusal: str | None = None,
) -> tuple[str, int] | None:
    """Docker's refusal to start ``container`` (not running, or paused) and the HTTP
    status it answers with (409 for a state that refuses, 404 for a missing network
    container, 500 for what fails as the process is made), or None, in
    Docker's order: a paused container; a network container (``container:<x>``) that
    does not exist or does not run; an IPC namespace's container (``container:<id>``)
    that does not exist, does not run or is not ``shareable``; ``runtime_refusal`` (what
    runc refuses as it creates the process: a sysctl no namespace holds); a host port
    that a running container publishes already."""
    if container.paused:
        return "cannot start a paused container, try unpause instead", 409
    if container.network_mode.startswith("container:"):
        ref = container.network_mode.removeprefix("container:")
        network = find(ref)
        if network is None:
            return f"No such container: {ref}", 404
        if not network.running:
            return f"cannot join network of a non running container: {network.id}", 409
    refusal = _process_refusal(container, find, containers, runtime_refusal)
    return None if refusal is None else (refusal, 500)


def _process_refusal(
    container: FakeContainer,
    find: Callable[[str], FakeContainer | None],
    containers: Iterable[FakeContainer],
    runtime_refusal: str | None,
) -> str | None:
    """What fails as Docker makes ``container``'s process (an answer of 500): the IPC
    namespace to join, ``runtime_refusal``, a host port in use."""
    if container.ipc_mode.startswith("container:"):
        ref = container.ipc_mode.removeprefix("container:")
        donor = find(ref)
        # Docker's getIpcContainer, its checks and words.
        if donor is None:
            return f"can't join IPC of container {ref}: No such container: {ref}"
        if not donor.running:
            return f"can't join IPC of container {ref}: container {ref} is not running"
        if donor.ipc_mode != "shareable":
            return (
                f"can't join IPC of container {ref}: non-shareable IPC (hint: use "
                "IpcMode:shareable for the donor container)"
            )
    if runtime_refusal is not None:
        return runtime_refusal
    clash = port_clash(container, containers)
    if clash is not None:
        return (
            f"driver failed programming external connectivity on endpoint "
            f"{container.name} ({container.id}): {clash}"
        )
    return None


class Journal:
    """The fake engine's events, and the followers of logs and events.

    Every method but the streams' iteration is called with ``condition``'s lock held.
    """

    def __init__(self, condition: threading.Condition, clock: Callable[[], float]) -> None:
        self._condition = condition
        self._clock = clock
        self.events: list[EngineEvent] = []
        # The latest time the fake read from its clock: the time of what happens without
        # a reading of its own (a start), so that events never move the clock.
        self.last = 0.0

    def saw(self, time: float) -> float:
        """Note a reading of the fake's clock; returns it."""
        self.last = max(self.last, time)
        return time

    def event(
        self,
        container: FakeContainer,
        action: str,
        *,
        exit_code: int | None = None,
        signal: int | None = None,
        time: float | None = None,
    ) -> None:
        """Record that ``action`` happened to ``container`` at ``time`` (else at the
        latest reading of the clock; Docker's events carry the container's labels and
        name), and wake the followers."""
        self.events.append(
            EngineEvent(
                self.last if time is None else self.saw(time),
                action,
                container.id,
                container.name,
                dict(container.labels),
                exit_code,
                signal,
            )
        )
        self._condition.notify_all()

    def write(self, container: FakeContainer, stream: str, data: bytes) -> None:
        """``container`` writes ``data`` to ``stream``: one ``LogLine`` per line, as
        Docker's log drivers keep them."""
        now = self.saw(self._clock())
        for line in data.splitlines(keepends=True):
            container.logs.append(LogLine(stream, line, now))
        self._condition.notify_all()

    def wake(self) -> None:
        """Wake the followers (a container stopped, the clock moved)."""
        self._condition.notify_all()

    def logs(
        self,
        container: FakeContainer,
        *,
        tail: int | None,
        since: float | None,
        follow: bool,
    ) -> Stream[LogLine]:
        """A stream of ``container``'s lines (see ``LogRuntime.container_logs``)."""
        lines = [line for line in container.logs if since is None or line.time >= since]
        if tail is not None:
            lines = lines[len(lines) - tail :] if tail else []
        start = len(container.logs)
        closed = threading.Event()

        def items() -> Iterator[LogLine]:
            yield from lines
            if not follow:
                return
            seen = start
            while True:
                with self._condition:
                    while seen >= len(container.logs) and container.running and not closed.is_set():
                        self._condition.wait()
                    new = container.logs[seen:]
                    seen = len(container.logs)
                    ended = not container.running or closed.is_set()
                yield from new
                if ended:
                    return

        return Stream(items(), self._closer(closed))

    def follow_events(self, *, since: float | None, until: float | None) -> Stream[EngineEvent]:
        """A stream of the events (see ``EventRuntime.engine_events``). An ``until`` not
        later than the clock's time now gives the events so far and ends; a later one
        follows until an event past it (or a ``wake`` once the fake's time passed it)."""
        start = len(self.events) if since is None else 0
        closed = threading.Event()
        if until is not None and until <= self.saw(self._clock()):
            past = [
                e
                for e in self.events[start:]
                if e.time <= until and (since is None or e.time >= since)
            ]
            return Stream(iter(past), self._closer(closed))

        def items() -> Iterator[EngineEvent]:
            seen = start
            while True:
                with self._condition:
                    while (
                        seen >= len(self.events)
                        and not closed.is_set()
                        and (until is None or self.last < until)
                    ):
                        self._condition.wait()
                    new = self.events[seen:]
                    seen = len(self.events)
                    over = closed.is_set() or (until is not None and self.last >= until)
                for event in new:
                    if until is not None and event.time > until:
                        return
                    if since is None or event.time >= since:
                        yield event
                if over:
                    return

        return Stream(items(), self._closer(closed))

    def _closer(self, closed: threading.Event) -> Callable[[], None]:
        def close() -> None:
            closed.set()
            with self._condition:
                self._condition.notify_all()

        return close
