"""``FakeRuntime``, an in-memory container engine (with ``FakeClock``, ``podsync.testing``).

Use them to test podsync, or your own orchestrator built on podsync, without an engine
and without the real clock::

    from podsync.testing import FakeClock, FakeRuntime

    clock = FakeClock(100.0, step=0)   # moves only when told to
    fake = FakeRuntime(images=["busybox", "registry.k8s.io/pause:3.10"], clock=clock)
    result = podsync.sync([pod], fake, options=options, clock=clock)
    assert ["list", "list_images", "create", "start", "create", "start"] == fake.call_names()
    fake.clear_calls()
    clock.advance(1)
    podsync.sync([pod], fake, options=options, clock=clock)
    assert ["list"] == fake.call_names()   # converged: one list call, nothing to do

It is stateful, as the 2014 kubelet's ``FakeDockerClient`` was (reference §1.10):
create, start, stop and remove change what ``list_containers`` returns, so "apply,
observe again, plan again" works. It records every call in the seed's vocabulary
(``list``, ``list_images``, ``info``, ``pull``, ``create``, ``start``, ``stop``, ``remove``,
``exec``, ``remove_image``, ``address``; ``exec_attached``, ``logs``, ``events`` for the
operating calls; ``list_volumes``, ``create_volume``, ``remove_volume``,
``write_volume``, ``read_volume_file``, ``read_file`` for named volumes and the files in
them; ``usage``, ``node_usage`` for the usage readings: ``CALL_NAMES``).

It follows Docker 20.10's rules, with its messages, by its own code (not the planner's):
names match ``[a-zA-Z0-9][a-zA-Z0-9_.-]+`` and are unique, a memory limit is at least 6
MB and a swap limit needs a memory limit no larger, an OOM score adjustment is within
[-1000, 1000], a container that joins another's IPC namespace finds it at create and
starts only beside a running ``shareable`` one, a container that joins another's network
(``CreateSpec.join``) sets no hostname,
DNS servers or ports of its own, an image must be present to create a container from
it, a container can only join the network of a running container, a running or paused
container cannot be removed, a paused one cannot exec, and a host port (per protocol
and address) is published by one running container at a time. Named volumes follow the
local volume driver (``_volumes``): its names, a create of an existing volume that
leaves it as it is, a volume created unlabelled by the create of a container that
mounts it, and no removal of a volume a container uses.

A stop ends a process as Docker's does: with the process's own exit code when it
handles SIGTERM, 137 when it ignores SIGTERM and is killed (``stop_exit_code``,
``on_sigterm``). A stop takes the time Docker's does, on the fake's clock: none for a
process that exits on SIGTERM, the whole timeout for one that ignores it (it exits then,
and a ``FakeClock`` is moved on to that moment). Stops that overlap - several threads
stopping containers at once, as ``apply`` does for a pod-wide stop - end together:
``overlap_stops`` makes a test's stops overlap as real ones, which take time, do.

Image references are read by the fake's own implementation of Docker's reference format
(not podsync's ``normalize_image``), so a planner that misreads a reference meets an
engine that does not. One conformance suite (``tests/support/conformance.py``) runs
against the fake and the real engine.

Chosen calls can be made to fail (``fail``), a container's process can exit
(``exit``, OOM-killed too), write to its log (``write_log``), containers can be paused
(``pause``, ``unpause``), and exec results can be scripted (``set_exec_result``,
``set_exec_handler``). Docker's container events are recorded (``events``).

This module holds the engine's constructor, what a test sets up, inspects and scripts,
and the container and image calls; the rest is split by concern: ``_engine`` holds what
every call stands on (finding a container or an image, recording a call and raising the
fault scripted for it), ``_volumes`` the named volumes and their files, ``_operating``
exec, logs, attached exec and events, ``_usage`` the CPU and memory a test says each
container uses (``set_usage``, ``set_node_usage``).

The fake is thread-safe: ``podsync.apply`` calls it from several threads.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import attrs

from podsync.actions._actions import CreateSpec
from podsync.exceptions import Conflict, NameConflict, NotFound, RuntimeCallError
from podsync.model._engine_info import EngineInfo
from podsync.model._pod import ObservedContainer, ObservedImage, ObservedVolume, ResourceList
from podsync.model._secrets import revealed, spec_texts
from podsync.runtime.fake._calls import CALL_NAMES, MUTATING_CALL_NAMES, Call
from podsync.runtime.fake._calls import Fault as _Fault
from podsync.runtime.fake._clock import FakeClock
from podsync.runtime.fake._images import ImageCalls as _ImageCalls
from podsync.runtime.fake._operating import OperatingCalls as _OperatingCalls

# Docker's rules, under the fake's own names for them (see podsync.runtime.fake._rules).
from podsync.runtime.fake._rules import CONTAINER_NAME as _CONTAINER_NAME
from podsync.runtime.fake._rules import CONTAINER_NAME_CHARS as _CONTAINER_NAME_CHARS
from podsync.runtime.fake._rules import KILLED as _KILLED
from podsync.runtime.fake._rules import Reference as _Reference
from podsync.runtime.fake._rules import create_refusal as _create_refusal
from podsync.runtime.fake._rules import port_refusal as _port_refusal
from podsync.runtime.fake._rules import read_reference as _read_reference
from podsync.runtime.fake._rules import resource_refusal as _resource_refusal
from podsync.runtime.fake._rules import sysctl_start_error as _sysctl_start_error
from podsync.runtime.fake._state import FakeContainer as _Container
from podsync.runtime.fake._state import Journal as _Journal
from podsync.runtime.fake._state import listed_network_mode as _listed_network_mode
from podsync.runtime.fake._state import network_mode_conflict as _network_mode_conflict
from podsync.runtime.fake._state import published as _published
from podsync.runtime.fake._state import publishes as _publishes
from podsync.runtime.fake._state import removal_refusal as _removal_refusal
from podsync.runtime.fake._state import start_refusal as _start_refusal
from podsync.runtime.fake._usage import UsageCalls as _UsageCalls
from podsync.runtime.fake._volumes import VolumeCalls as _VolumeCalls
from podsync.spec._labels import (
    LABEL_POD_IPC,
    LABEL_POD_NAMESPACE,
    LABEL_POD_STATE,
    LABEL_POD_UID,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAMESPACE,
    POD_IPC_SHAREABLE,
    POD_STATE_MOUNTED,
    VOLUME_KIND_POD_STATE,
)
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import pod_state_volume_name

#: The version ``FakeRuntime.engine_info`` gives.
FAKE_ENGINE_VERSION = "1.0"

if TYPE_CHECKING:
    from podsync.runtime._protocol import Runtime

# Real seconds an overlapped stop waits for the others (overlap_stops) before it goes on
# alone: long enough for threads started together on a loaded machine.
_OVERLAP_WAIT = 5.0

__all__ = ["CALL_NAMES", "MUTATING_CALL_NAMES", "Call", "FakeClock", "FakeRuntime"]


class FakeRuntime(_ImageCalls, _VolumeCalls, _OperatingCalls, _UsageCalls):
    """An in-memory container engine that satisfies the ``Runtime`` protocol.

    Args:
        containers: containers the engine holds at the start (for example the seed's
            ``k8s_`` containers of a scenario).
        images: images present at the start: references (``"busybox"`` is stored as
            ``busybox:latest``, naming no user: root) or ``ObservedImage`` values.
        volumes: named volumes present at the start (``add_volume``).
        clock: where creation and exit times come from, seconds since the epoch; a
            ``FakeClock()`` of its own by default (never the real clock: every reading
            is one second after the one before, from ``FakeClock.DEFAULT_START``).
            Plan with the same clock (``now=fake.clock()``) for times that agree.
        stop_exit_code: what a container's process does on SIGTERM, unless
            ``on_sigterm`` says otherwise for it: exit with this code (0, the default:
            it handles SIGTERM and exits cleanly; 143 for a process that dies of the
            signal, which a PID 1 never does by default), or ``None``: it ignores
            SIGTERM (as busybox ``sh`` or ``sleep`` as PID 1) and a stop kills it after
            the timeout, with exit code 137.
        address: the network address every container reports (``container_address``);
            ``None`` (the default) means no network, so a handler without a host fails.
            Set ``"127.0.0.1"`` to point handlers at servers in your test.
        latency: seconds every call sleeps before it is handled (outside the lock),
            to measure parallelism. This is a real sleep: keep it 0 in tests that must
            not depend on the machine's speed.
        bridge: whether the engine has its default bridge network (Docker's default).
            Port bindings are published - and conflict - only on it or a named network;
            ``False`` is ``dockerd --bridge=none``, where nothing is published.
        apparmor: whether the engine's host has AppArmor (else its profiles are refused).
        seccomp: whether the engine's host has seccomp (else its profiles are refused).
        capacity: the CPUs (milli-CPU) and memory (bytes) its host gives containers
            (``node_capacity``): 8 CPUs and 16 GiB unless given.
        refuse_joined_removal: podman's rule (``True``): a container that others join
            (``container:<x>`` network or IPC) cannot be removed while they exist
            (podman's HTTP 500, read as 409 ``Conflict``). Docker allows it (``False``).

    Attributes:
        calls: every call, in the order they were made.
        exec_results: scripted ``exec`` outcomes by command; a command not listed
            exits 0 with no output.
    """

    def __init__(
        self,
        *,
        containers: Iterable[ObservedContainer] = (),
        images: Iterable[str | ObservedImage] = (),
        volumes: Iterable[ObservedVolume | str] = (),
        clock: Callable[[], float] | None = None,
        stop_exit_code: int | None = 0,
        address: str | None = None,
        latency: float = 0.0,
        bridge: bool = True,
        apparmor: bool = False,
        seccomp: bool = True,
        capacity: ResourceList | None = None,
        refuse_joined_removal: bool = False,
    ) -> None:
        self.calls = []
        self.exec_results = {}
        self._exec_seconds = {}
        self.clock = FakeClock() if clock is None else clock
        self.stop_exit_code = stop_exit_code
        self._on_sigterm: dict[str, int | None] = {}
        self.address = address
        self.latency = latency
        self.bridge = bridge
        self.apparmor, self.seccomp = apparmor, seccomp
        self.capacity = capacity or ResourceList(cpu=8000, memory=16 * 1024**3)
        self.refuse_joined_removal = refuse_joined_removal
        self._lock = threading.RLock()
        # Followers of logs and events wait on this (the same lock): see _state.
        self._changed = threading.Condition(self._lock)
        self._journal = _Journal(self._changed, lambda: self.clock())
        self._exec_handlers = {}
        self._containers = {}
        self._images = {}
        self._volumes = {}
        self._faults = []
        self._usage = {}  # set_usage, by container id
        self._node_usage = None  # set_node_usage
        self._counter = 0
        # The stops that wait for one another (overlap_stops).
        self._overlap: threading.Barrier | None = None
        self._overlapping = 0
        #: How many times ``close`` was called.
        self.closes = 0
        for oc in containers:
            self.add_container(oc)
        for image in images:
            self.add_image(image)
        for volume in volumes:
            self.add_volume(volume)

    def __repr__(self) -> str:
        return f"<FakeRuntime with {len(self._containers)} container(s), {len(self.calls)} call(s)>"

    # -- setting up and inspecting ---------------------------------------------------

    def add_container(
        self,
        container: ObservedContainer,
        *,
        ports: Iterable[PortMapping] = (),
        ipc_mode: str | None = None,
    ) -> None:
        """Put a container on the engine as it is (no call is recorded).

        ``ports`` (as ``CreateSpec.ports``) are the host ports it publishes while it
        runs, whatever its network mode. ``ipc_mode`` is its IPC mode in Docker's
        spelling (``private``, ``shareable``, ``host``, ``container:<id>``); by default
        ``shareable`` for a pod's network container as podsync makes them (labelled
        ``io.podsync.pod.ipc=shareable``: a list reports no IPC mode, and that label is
        how the container says it), else Docker's default, ``private``.

        Its ``stopped_by_podsync`` is kept and reported as given, as if podsync's stop
        record were there; the containers podsync stops through this fake get theirs
        from the records apply writes under the root directory, which
        ``podsync.observe`` reads (no engine can report it, and neither does the fake).

        A container labelled with the network container it joins (``LABEL_JOINS``)
        joins it, as podsync created it (no list reports a network mode).

        A pod's network container labelled as mounting the pod's state volume
        (``io.podsync.pod.state=mounted``) brings that volume, with its labels, when
        the engine has none of that name: Docker made it at the container's create and
        removes no volume a container mounts, so no engine holds one without the other.
        """
        with self._lock:
            volume = _state_volume(container)
            if volume is not None and volume.name not in self._volumes:
                self._volumes[volume.name] = volume
            self._containers[container.id] = _Container(
                id=container.id,
                name=container.name,
                image=container.image,
                labels=dict(container.labels),
                created=container.created,
                running=container.running,
                exit_code=container.exit_code,
                finished_at=container.finished_at,
                published=_published(ports),
                network_mode=_listed_network_mode(container),
                ipc_mode=ipc_mode or _listed_ipc_mode(container),
                stopped_by_podsync=container.stopped_by_podsync,
                oom_killed=container.oom_killed,
                started_at=container.started_at,
            )

    @property
    def containers(self) -> list[ObservedContainer]:
        """The containers, as ``list_containers`` would return them (no call recorded)."""
        with self._lock:
            return [c.observed() for c in self._sorted()]

    def container(self, ref: str) -> ObservedContainer:
        """The container with id or name ``ref``.

        Raises:
            KeyError: there is none.
        """
        with self._lock:
            found = self._get(ref)
            return found.observed()

    def spec(self, ref: str) -> CreateSpec | None:
        """The spec the container with id or name ``ref`` was created from; ``None`` for
        a container added with ``add_container``.

        Raises:
            KeyError: there is no such container.
        """
        with self._lock:
            found = self._get(ref)
            return found.spec

    def call_names(self) -> list[str]:
        """The names of the recorded calls, in order: what the seed's fake ``called``
        list held."""
        with self._lock:
            return [c.name for c in self.calls]

    def clear_calls(self) -> None:
        """Forget the recorded calls (the seed's ``ClearCalls``)."""
        with self._lock:
            self.calls.clear()

    # -- scripting -------------------------------------------------------------------

    def fail(
        self,
        call_name: str,
        *,
        times: int | None = None,
        match: str | Callable[[Call], bool] | None = None,
        error: str = "injected failure",
        unavailable: bool = False,
        status_code: int | None = None,
    ) -> None:
        """Make calls named ``call_name`` raise ``RuntimeCallError``.

        The failing call is recorded and changes nothing.

        Args:
            call_name: one of ``CALL_NAMES``.
            times: how many matching calls fail; ``None`` is every one until
                ``clear_faults``.
            match: which calls fail: a string fails the calls whose target contains
                it (the container's id or name, the created spec's name, the image);
                a function gets the ``Call`` and says; ``None`` fails them all.
            error: the error message.
            unavailable: raise ``EngineUnavailable`` (the engine cannot be reached).
            status_code: the engine's HTTP answer the failure stands for: 404 raises
                ``NotFound``, 409 ``Conflict``, others a ``RuntimeCallError`` with that
                ``status_code`` (``RuntimeCallError.from_status``).

        Raises:
            ValueError: ``call_name`` is not a call name, or ``times`` is below 1.
        """
        if call_name not in CALL_NAMES:
            raise ValueError(f"expected one of {sorted(CALL_NAMES)}, got {call_name!r}")
        if times is not None and times < 1:
            raise ValueError(f"times must be at least 1 or None, got {times!r}")
        with self._lock:
            fault = _Fault(call_name, times, match, error, unavailable, status_code)
            self._faults.append(fault)

    def clear_faults(self) -> None:
        """Stop failing calls."""
        with self._lock:
            self._faults.clear()

    def exit(self, container_id: str, code: int, *, oom: bool = False) -> None:
        """The container's process exits by itself with ``code`` (no call recorded);
        with ``oom`` the kernel's OOM killer ended it (Docker reports ``OOMKilled``
        and the events ``oom`` then ``die``; the code is then usually 137).

        Raises:
            KeyError: there is no such container.
        """
        with self._lock:
            found = self._get(container_id)
            found.running = found.paused = False
            found.exit_code = code
            found.oom_killed = oom
            found.finished_at = self._journal.saw(self.clock())
            if oom:
                self._journal.event(found, "oom")
            self._journal.event(found, "die", exit_code=code)

    def on_sigterm(self, ref: str, exit_code: int | None) -> None:
        """What the process of container ``ref`` (an id, or a name: a container may be
        named before it is created, and every container of that name then behaves so)
        does when it is stopped: exit with ``exit_code`` on SIGTERM, or, with ``None``,
        ignore SIGTERM and be killed after the stop's timeout (exit code 137, as
        Docker's SIGKILL). Overrides ``stop_exit_code`` for it."""
        with self._lock:
            self._on_sigterm[ref.removeprefix("/")] = exit_code

    def pause(self, ref: str) -> None:
        """Pause a running container (``docker pause``; no call recorded): it is still
        listed as running, exec, start and remove are refused, and a stop unpauses it
        and stops it as usual.

        Raises:
            KeyError: there is no such container.
            ValueError: it is not running (Docker: "Container <id> is not running").
        """
        with self._lock:
            found = self._get(ref)
            if not found.running:
                raise ValueError(f"Container {found.id} is not running")
            found.paused = True
            self._journal.event(found, "pause")

    def unpause(self, ref: str) -> None:
        """Unpause a paused container (no call recorded).

        Raises:
            KeyError: there is no such container.
            ValueError: it is not paused (Docker: "Container <id> is not paused").
        """
        with self._lock:
            found = self._get(ref)
            if not found.paused:
                raise ValueError(f"Container {found.id} is not paused")
            found.paused = False
            self._journal.event(found, "unpause")

    # -- the Runtime protocol ----------------------------------------------------------

    def list_containers(self) -> list[ObservedContainer]:
        """Every container, running and exited, newest first."""
        self._sleep()
        with self._lock:
            self._record("list")
            return [c.observed() for c in self._sorted()]

    def list_pod_containers(self, pod_uid: str) -> list[ObservedContainer]:
        """The containers labelled ``LABEL_POD_UID=<pod_uid>``, newest first (recorded
        as ``list_pod``): ``PodListRuntime``, as the engines' label filter."""
        self._sleep()
        with self._lock:
            self._record("list_pod", pod_uid)
            return [c.observed() for c in self._sorted() if c.labels.get(LABEL_POD_UID) == pod_uid]

    def node_capacity(self) -> ResourceList:
        """``capacity`` (recorded as ``info``)."""
        self._sleep()
        with self._lock:
            self._record("info")
            return self.capacity

    def engine_info(self) -> EngineInfo:
        """``fake`` and podsync's version of the fake (``FAKE_ENGINE_VERSION``); not a
        recorded call (it asks nothing of an engine's state)."""
        return EngineInfo("fake", FAKE_ENGINE_VERSION)

    def close(self) -> None:
        """Count the close (``closes``); nothing else: the fake stays usable, as a
        ``DockerRuntime`` does after ``close``. Not a recorded call."""
        with self._lock:
            self.closes += 1

    def create_container(self, spec: CreateSpec) -> str:
        """Create a container (not running) and return its id: ``c0001``, ``c0002``, ...

        Refuses what Docker 20.10 refuses, in its order and with its words: a published
        port outside 0-65535 ('invalid port specification: "70000"'), network
        options beside ``join=x`` (Docker's ``container:<x>``: hostname, DNS servers,
        extra hosts, published ports: "conflicting options: ..."), what
        ``_rules.resource_refusal`` refuses (a memory limit under 6 MB: "Minimum memory
        limit allowed is 6MB", a swap limit without a memory limit or under it, an OOM
        score adjustment outside [-1000, 1000]), what ``_rules.create_refusal``
        refuses (security settings; a tmpfs at a relative path, or two mounts at one
        path: "Duplicate mount point: /data"), a malformed or absent image ("No such
        image: busybox:latest"), a name outside ``[a-zA-Z0-9][a-zA-Z0-9_.-]+`` ("Invalid
        container name ..."), a name in use, a ``join_ipc`` container that does not
        exist ("No such container: <name>"), a volume name the local driver refuses or a
        file mount of a volume that does not exist (``_volumes``). The network container
        ``x`` need not exist yet: Docker looks for it at start.

        Raises:
            NameConflict: the name is in use (a ``RuntimeCallError``).
            RuntimeCallError: any other refusal above.
        """
        self._sleep()
        with self._lock:
            self._record("create", spec)
            if (refusal := _port_refusal(spec)) is not None:
                raise RuntimeCallError("create", spec.name, refusal, status_code=400)
            conflict = _network_mode_conflict(spec)
            # Docker answers 400 to a create it finds invalid, 404 for a missing image.
            if conflict is not None:
                raise RuntimeCallError("create", spec.name, conflict, status_code=400)
            if (refusal := _resource_refusal(spec)) is not None:
                raise RuntimeCallError("create", spec.name, refusal, status_code=400)
            if (refused := _create_refusal(spec, self.apparmor, self.seccomp)) is not None:
                raise RuntimeCallError.from_status("create", spec.name, *refused)
            try:
                ref: _Reference | None = _read_reference(spec.image)
            except ValueError as e:
                if spec.image not in self._images:
                    raise RuntimeCallError("create", spec.name, str(e), status_code=400) from None
                ref = None  # an image id
            if self._find_image(spec.image) is None:
                missing = ref.listed if ref is not None else spec.image
                raise NotFound("create", spec.name, f"No such image: {missing}", status_code=404)
            if spec.name and not _CONTAINER_NAME.fullmatch(spec.name):
                raise RuntimeCallError(
                    "create",
                    spec.name,
                    f"Invalid container name ({spec.name}), only {_CONTAINER_NAME_CHARS} "
                    "are allowed",
                    status_code=400,
                )
            name = spec.name.removeprefix("/")
            holder = next((c for c in self._containers.values() if c.name == name), None)
            if holder is not None:
                raise NameConflict(
                    "create",
                    spec.name,
                    f'Conflict. The container name "/{name}" is already in use by container '
                    f'"{holder.id}". You have to remove (or rename) that container to be able '
                    "to reuse that name.",
                    holder_id=holder.id,
                    holder_labels=holder.labels,
                )
            ipc_mode = self._ipc_mode(spec)
            if (refused := self._mount_volumes(spec)) is not None:
                raise RuntimeCallError.from_status("create", spec.name, *refused)
            self._counter += 1
            cid = f"c{self._counter:04d}"
            # Kept in Docker's spelling: the fake's rules below are Docker's.
            network_mode = f"container:{spec.join}" if spec.join else spec.network
            self._containers[cid] = _Container(
                id=cid,
                # Docker makes up a name when none is given.
                name=name or f"container_{cid}",
                image=spec.image,
                labels=dict(spec.labels),
                created=self._journal.saw(self.clock()),
                network_mode=network_mode,
                ipc_mode=ipc_mode,
                # What the engine holds: the Secret values themselves (docker inspect
                # shows them), asked for explicitly as the Docker runtime does.
                spec=_as_engine_holds(spec),
                published=_published(spec.ports) if _publishes(network_mode, self.bridge) else (),
            )
            self._journal.event(self._containers[cid], "create")
            return cid

    def start_container(self, container_id: str) -> None:
        """Start a container (starting a running one does nothing, as Docker).

        Raises:
            RuntimeCallError: no such container; it is paused ("cannot start a paused
                container, try unpause instead"); its network mode names a container
                that does not exist ("No such container: <x>") or does not run
                ("cannot join network of a non running container: <id>"); the
                container whose IPC namespace it joins is gone, does not run or is not
                shareable ("can't join IPC of container <id>: ..."); or a host
                port it publishes is published by a running container already (Docker
                20.10: "Bind for 0.0.0.0:80 failed: port is already allocated" for the
                same address, "address already in use" when one of the two is every
                address). The container stays created.
        """
        self._sleep()
        with self._lock:
            self._record("start", container_id)
            container = self._find(container_id)
            if container is None:
                raise NotFound(
                    "start", container_id, f"No such container: {container_id}", status_code=404
                )
            if container.running and not container.paused:
                return
            sysctl = _sysctl_start_error(container.spec)
            refusal = _start_refusal(container, self._find, self._containers.values(), sysctl)
            if refusal is not None:
                raise RuntimeCallError.from_status("start", container_id, *refusal)
            container.running = True
            container.oom_killed = False
            # Docker's State.StartedAt. Without a reading of the clock of its own (the
            # start is an event's time, see _state.Journal): a FakeClock is peeked at,
            # so a test that moved it on between create and start sees the gap.
            clock = self.clock
            at = clock.now if isinstance(clock, FakeClock) else self._journal.last
            container.started_at = max(at, container.created)
            container.finished_at = None
            container.stopped_by_podsync = ""
            self._journal.event(container, "start")

    def overlap_stops(self, count: int) -> None:
        """Make the next ``count`` stops overlap, as stops that take time do on an
        engine: each one, its signal sent, waits until all ``count`` have been sent
        before its container exits. So stops made at once all start at the clock's
        reading of that moment and end together; stops made one after the other cannot
        all be sent while the first waits, and each then goes on alone after 5 real
        seconds - slower, and ending one after the other on the clock, as on an engine.

        Raises:
            ValueError: ``count`` is below 2.
        """
        if count < 2:
            raise ValueError(f"stops overlap two or more at a time, got {count!r}")
        with self._lock:
            self._overlap = threading.Barrier(count)
            self._overlapping = count

    def stop_container(self, container_id: str, timeout: int) -> None:
        """Stop a container as Docker does: SIGTERM (a paused container is unpaused
        first), then SIGKILL after ``timeout`` seconds. It exits with the code its process
        gives on SIGTERM (``on_sigterm``, else ``stop_exit_code``), at once, or with 137
        after ``timeout`` seconds on the fake's clock when the process ignores SIGTERM
        (a ``FakeClock`` is moved on to that moment: ``FakeClock.advance_to``). Stopping
        a missing or exited container succeeds (the protocol's idempotent contract)."""
        self._sleep()
        with self._lock:
            self._record("stop", container_id, timeout)
            container = self._find(container_id)
            if container is None or not container.running:
                return
            on_term = self._sigterm_exit_code(container)
            signalled = self._journal.saw(self.clock())
            # Docker's events of a stop: the signal(s) sent, the exit, the stop.
            self._journal.event(container, "kill", signal=15)
            overlap = self._overlap
            if overlap is not None:
                self._overlapping -= 1
                if self._overlapping == 0:
                    self._overlap = None
        if overlap is not None:
            # When the others never come, the barrier breaks: this stop ends alone.
            with contextlib.suppress(threading.BrokenBarrierError):
                overlap.wait(_OVERLAP_WAIT)
        with self._lock:
            if not container.running:
                return  # another call stopped it meanwhile
            exits = signalled if on_term is not None else signalled + max(timeout, 0)
            if isinstance(self.clock, FakeClock):
                self.clock.advance_to(exits)
            container.running = container.paused = False
            container.exit_code = _KILLED if on_term is None else on_term
            container.finished_at = self._journal.saw(exits)
            if on_term is None:
                self._journal.event(container, "kill", signal=9, time=exits)
            self._journal.event(container, "die", exit_code=container.exit_code, time=exits)
            self._journal.event(container, "stop", time=exits)

    def _sigterm_exit_code(self, container: _Container) -> int | None:
        for key in (container.id, container.name):
            if key in self._on_sigterm:
                return self._on_sigterm[key]
        return self.stop_exit_code

    def remove_container(self, container_id: str) -> None:
        """Remove a container; removing a missing one succeeds.

        Raises:
            RuntimeCallError: the container is running or paused (Docker: "You cannot
                remove a running container <id>. ...").
        """
        self._sleep()
        with self._lock:
            self._record("remove", container_id)
            container = self._find(container_id)
            if container is None:
                return
            if container.running:
                state, procedure = "running", "Stop the container"
                if container.paused:
                    state, procedure = "paused", "Unpause and then stop the container"
                raise Conflict(
                    "remove",
                    container_id,
                    f"You cannot remove a {state} container {container.id}. {procedure} "
                    "before attempting removal or force remove",
                    status_code=409,
                )
            if self.refuse_joined_removal and (
                refused := _removal_refusal(container, self._find, self._containers.values())
            ):
                raise Conflict("remove", container_id, refused, status_code=409)
            del self._containers[container.id]
            self._journal.event(container, "destroy")

    def container_address(self, container_id: str) -> str | None:
        """The ``address`` given to the constructor, followed through a
        ``container:<name>`` network mode; ``None`` for network mode ``none``.

        Raises:
            RuntimeCallError: no such container.
        """
        self._sleep()
        with self._lock:
            self._record("address", container_id)
            container = self._find(container_id)
            seen: set[str] = set()
            while container is not None and container.network_mode.startswith("container:"):
                if container.id in seen:
                    break
                seen.add(container.id)
                container = self._find(container.network_mode.removeprefix("container:"))
            if container is None:
                raise NotFound(
                    "address", container_id, f"No such container: {container_id}", status_code=404
                )
            if container.network_mode == "none":
                return None
            return self.address


if TYPE_CHECKING:
    # mypy checks here that FakeRuntime satisfies the Runtime protocol.
    _conforms: Runtime = FakeRuntime()


def _state_volume(container: ObservedContainer) -> ObservedVolume | None:
    """The pod state volume a container put on the fake mounts, by its labels
    (``add_container``), or ``None``."""
    labels = container.labels
    uid = labels.get(LABEL_POD_UID)
    if labels.get(LABEL_POD_STATE) != POD_STATE_MOUNTED or not uid:
        return None
    return ObservedVolume(
        pod_state_volume_name(uid),
        {
            LABEL_VOLUME_KIND: VOLUME_KIND_POD_STATE,
            LABEL_VOLUME_NAMESPACE: labels.get(LABEL_POD_NAMESPACE, ""),
            LABEL_POD_UID: uid,
        },
    )


def _listed_ipc_mode(container: ObservedContainer) -> str:
    """The IPC mode of a container put on the fake as it is: ``shareable`` when podsync's
    label says so, else Docker's default."""
    shareable = container.labels.get(LABEL_POD_IPC) == POD_IPC_SHAREABLE
    return "shareable" if shareable else "private"


def _as_engine_holds(spec: CreateSpec) -> CreateSpec:
    """``spec`` with its Secret values revealed (``revealed``), as an engine keeps it."""
    if not spec_texts(spec):
        return spec
    return attrs.evolve(
        spec,
        env=tuple(revealed(spec.env)),
        command=tuple(revealed(spec.command)) if spec.command is not None else None,
        args=tuple(revealed(spec.args)) if spec.args is not None else None,
    )
