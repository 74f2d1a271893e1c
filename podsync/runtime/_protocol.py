"""The runtime boundary: what podsync needs from a container engine.

``Runtime`` is a ``typing.Protocol``: any object with its methods is a runtime, with
no inheritance and no engine types in the signatures. podsync ships two:
``podsync.docker.DockerRuntime`` (the docker SDK) and ``podsync.testing.FakeRuntime``
(in memory, for tests); both have every capability (``FullRuntime``).

The protocol is split by what an engine offers together, so that an engine offering
less is still a runtime:

* ``Runtime``, the core every runtime has: containers (list, create, start, stop,
  remove), images (list, pull, remove) and ``close``. The CRI's ``RuntimeService`` and
  ``ImageService`` have these; a plain pod (no volumes of the engine's, no exec) syncs
  with them alone.
* Optional capabilities, each a small protocol podsync discovers with ``isinstance``
  (``capabilities(runtime)``), named by ``podsync.Capability``:
  ``VolumeRuntime`` (named volumes and the files in them: one API in Docker, which
  CRI leaves to the node), ``FileRuntime`` (read a container's file: Docker's archive
  API, which CRI lacks), ``ExecRuntime`` (exec, as Docker's and CRI's ``Exec``: the
  one-shot and the attached form go together), ``LogRuntime`` (logs), ``EventRuntime``
  (the event stream, which many engines do not have) and ``NodeRuntime`` (what the
  engine says of its host and of a container's network: ``docker info`` and
  ``inspect``, CRI's ``Status``).
* ``UsageRuntime``, the containers' and the host's CPU and memory usage (cAdvisor's,
  CRI's ``ContainerStats``), is discovered with ``isinstance`` alone: it is no
  ``Capability``, since no plan depends on it (a member would change which
  capabilities a saved plan lists); ``require_usage`` is its ``require``.

What podsync does without a capability is stated on its protocol: a pod that needs it
is rejected by the plan, naming it (``PlanOptions.capabilities``, filled by ``sync``
and ``observe``), what podsync adds by itself is left out, and an operating call
(``podsync logs``, ``exec``, ``events``) raises ``MissingCapability`` - never an
``AttributeError``.

Contract for implementations:

* Errors are ``podsync.exceptions.RuntimeCallError`` (``EngineUnavailable`` when the
  engine cannot be reached at all), never the engine library's own exceptions.
* Stopping a container that is not running, or stopping or removing one that is gone,
  succeeds: the plan's goal is reached either way (as CRI's idempotent calls). So do
  creating a named volume that exists (it is left as it is, labels included: Docker's
  answer) and removing one that is gone.
* Named volumes (``list_volumes``, ``create_volume``, ``remove_volume``) hold data that
  outlives containers (``persistentVolumeClaim`` volumes). A volume a container mounts
  (``CreateSpec.volumes``) that does not exist is created by the engine, unlabelled, as
  Docker does; a volume that a container uses, running or not, cannot be removed.
* Files in the engine (``write_volume``, ``read_volume_file``, ``read_container_file``)
  go through the engine, never through a path on the machine podsync runs on, so a
  remote engine works as a local one. They add and overwrite, never remove (Docker's
  archive API cannot remove a file). No image is named: the runtime finds its own way
  into a volume.
* ``list_containers`` is the whole observation of containers: one call per sync, and
  the labels podsync writes carry everything the planner needs.
* The operating calls (``container_logs``, ``exec_attached``, ``engine_events``) return
  what an operator needs after a sync, as the seed's ``GetKubeletContainerLogs``,
  ``RunInContainer`` and event stream did. Streams are ``Stream`` values: iterators the
  caller can ``close()`` from any thread, which ends the iteration.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Generic, Protocol, TypeVar, runtime_checkable

import attrs

from podsync.actions._actions import CreateSpec
from podsync.actions._options import Capability
from podsync.exceptions import MissingCapability
from podsync.model._engine_info import EngineInfo
from podsync.model._pod import ObservedContainer, ObservedImage, ObservedVolume, ResourceList
from podsync.model._usage import ContainerUsage
from podsync.model._volume_entries import VolumeEntry

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "Capability",
    "EngineEvent",
    "EventRuntime",
    "ExecResult",
    "ExecRuntime",
    "FileRuntime",
    "FullRuntime",
    "LogLine",
    "LogRuntime",
    "NodeRuntime",
    "Runtime",
    "Stream",
    "UsageRuntime",
    "VolumeRuntime",
    "capabilities",
    "missing",
    "require",
    "require_usage",
]

_T = TypeVar("_T")


@attrs.frozen
class ExecResult:
    """What a command run inside a container returned."""

    exit_code: int
    output: bytes = b""


@attrs.frozen
class LogLine:
    """One line a container wrote, as the engine kept it.

    Attributes:
        stream: ``"stdout"`` or ``"stderr"`` (a container with a TTY has one stream:
            ``"stdout"``).
        data: the line's bytes, with its newline when it had one (the engine splits
            lines longer than 16 KiB).
        time: when the engine received it, seconds since the epoch.
    """

    stream: str
    data: bytes
    time: float


@attrs.frozen
class EngineEvent:
    """Something that happened to a container on the engine (``docker events``).

    Attributes:
        time: when, seconds since the epoch.
        action: Docker's action: ``create``, ``start``, ``kill``, ``die``, ``oom``,
            ``stop``, ``destroy``, ``pause``, ``unpause``.
        container_id: the engine id of the container.
        name: its name, without a leading ``/``.
        labels: its labels (podsync's ownership labels among them).
        exit_code: for ``die``, the exit code; else ``None``.
        signal: for ``kill``, the signal number when the engine says it (Docker does;
            podman 4.3 does not); else ``None``.
    """

    time: float
    action: str
    container_id: str
    name: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    exit_code: int | None = None
    signal: int | None = None


#: The container actions runtimes report (``EventRuntime.engine_events``), Docker's names.
EVENT_ACTIONS = frozenset(
    {"create", "start", "kill", "die", "oom", "stop", "destroy", "pause", "unpause"}
)


class Stream(Generic[_T]):
    """An iterator of what an engine sends, that the caller can stop.

    ``close()`` may be called from any thread (a signal handler, a timer, another
    worker): the iteration then ends, without an error, as soon as the runtime notices
    (at once for a blocked read). Use it as a context manager to close it at the end.
    """

    def __init__(self, items: Iterator[_T], close: Callable[[], None] | None = None) -> None:
        self._items = items
        self._on_close = close
        self._lock = threading.Lock()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def __iter__(self) -> Stream[_T]:
        return self

    def __next__(self) -> _T:
        if self._closed:
            raise StopIteration
        try:
            return next(self._items)
        except StopIteration:
            raise
        except Exception:
            if self._closed:
                # A read interrupted by close(): the end the caller asked for.
                raise StopIteration from None
            raise

    def close(self) -> None:
        """Stop the stream; closing twice is harmless."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._on_close is not None:
            self._on_close()

    def __enter__(self) -> Stream[_T]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@runtime_checkable
class Runtime(Protocol):
    """**Protocol**: the core of a container engine, which every runtime has: list,
    create, start, stop and remove containers, list, pull and remove images. With it
    alone podsync syncs pods that need nothing more (no volumes of the engine's, no
    exec probes or handlers: see the optional capabilities below).

    A runtime may also say ``overlapping_calls = True`` (not a member of the protocol:
    ``False`` when absent): its calls are round trips to an engine, and ``apply``
    overlaps the ones that may overlap - a pod's app containers are created while its
    network container starts, so ``create_container`` of a container that joins
    another's network must accept that container being created and not yet started
    (as Docker does; only the start needs it running). ``DockerRuntime`` says so.
    """

    def list_containers(self) -> list[ObservedContainer]:
        """Every container on the engine, running and exited."""
        ...

    def list_images(self) -> list[ObservedImage]:
        """Every image on the engine."""
        ...

    def pull_image(self, image: str) -> None:
        """Pull ``image`` (an untagged reference pulls ``:latest``)."""
        ...

    def create_container(self, spec: CreateSpec) -> str:
        """Create (not start) a container from ``spec``; return its id.

        ``spec.directories`` and ``spec.files`` are created by the caller before this,
        and so are the files of ``spec.file_mounts`` (``write_volume``), each of which
        the runtime binds from where the engine keeps its volume.

        Raises:
            RuntimeCallError: among others, a volume of ``spec.file_mounts`` does not
                exist.
        """
        ...

    def start_container(self, container_id: str) -> None:
        """Start a created container."""
        ...

    def stop_container(self, container_id: str, timeout: int) -> None:
        """Stop a container: SIGTERM, then SIGKILL after ``timeout`` seconds."""
        ...

    def remove_container(self, container_id: str) -> None:
        """Remove a container that does not run."""
        ...

    def remove_image(self, image_id: str) -> None:
        """Remove an image by id."""
        ...

    def close(self) -> None:
        """Release what the runtime holds (connections, clients). Whoever made the
        runtime closes it: ``podsync.sync`` the one it builds when given none, the
        command line the one its factory made. Closing twice is harmless."""
        ...


@runtime_checkable
class VolumeRuntime(Protocol):
    """**Protocol**, optional: named volumes, and files in them written and read
    through the engine (Docker's volume and archive APIs; CRI has no volume of its
    own). Without it a pod's containers get no termination-message file, stops and
    probe outcomes are not recorded, and pods with volumes the engine keeps
    (``persistentVolumeClaim``, ``emptyDir`` on disk, ``configMap``, ``secret``,
    ``downwardAPI``) are rejected."""

    def list_volumes(self) -> list[ObservedVolume]:
        """Every named volume on the engine, with its labels."""
        ...

    def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create the named volume ``name`` with ``labels``. A volume of that name that
        exists already is left as it is (its labels too), and the call succeeds.

        Raises:
            RuntimeCallError: the engine refuses the name (Docker's local driver wants
                ``[a-zA-Z0-9][a-zA-Z0-9_.-]+``), or failed.
        """
        ...

    def remove_volume(self, name: str) -> None:
        """Remove the named volume ``name`` and its data; one that is gone counts as
        removed.

        Raises:
            RuntimeCallError: a container, running or not, uses it (Docker: "volume is
                in use"), or the engine failed.
        """
        ...

    def write_volume(
        self, volume: str, entries: Sequence[VolumeEntry], *, through: str = ""
    ) -> None:
        """Write ``entries``, in their order, into the named volume ``volume``.

        Through the engine alone, so that it works on a remote engine: the runtime
        finds its own way in (Docker: a short-lived container of an empty image the
        runtime imports once, created with the volume mounted and never started,
        receives the entries through the archive API and is removed). With
        ``through``, the container of that name or id (created or running) receives
        them instead - one archive upload, no container made: it must mount ``volume``
        at ``VOLUME_ACCESS_PATH`` (``/podsync-volume``), as a pod's network container
        mounts its state volume (else the entries land among that container's own
        files, not in the volume). Entries take their mode, uid and gid, the volume's
        root (``"."``) included (a symbolic link is 0777 whatever its mode: Linux has no
        mode for a link); an existing file or link is replaced, an existing directory
        keeps its other entries. A volume that does not exist is created unlabelled, as
        by a container that mounts it.

        Raises:
            RuntimeCallError: an entry's path is refused (``VolumeEntry``'s rules), the
                container ``through`` does not exist, or the engine failed.
        """
        ...

    def read_volume_file(self, volume: str, path: str, *, limit: int) -> bytes | None:
        """At most ``limit`` bytes of the regular file at ``path`` (relative to the
        volume's root) in the named volume ``volume``, through the engine as
        ``write_volume``; ``None`` when there is no such file or it is not a regular
        file (a directory, a link).

        Raises:
            RuntimeCallError: the path is refused, or the engine failed.
        """
        ...


@runtime_checkable
class FileRuntime(Protocol):
    """**Protocol**, optional: read a file of a container, running or exited
    (Docker's archive API). Without it the termination message comes from the logs
    (``FallbackToLogsOnError``) or is empty, and pods with ``configMap``, ``secret``
    or ``downwardAPI`` volumes are rejected."""

    def read_container_file(
        self, container_id: str, path: str, *, limit: int, tail: bool = False
    ) -> bytes | None:
        """At most ``limit`` bytes of the regular file at the absolute ``path`` in the
        container ``container_id`` - its first ones, or with ``tail`` its last ones -
        running or exited (Docker: the archive API, which sees the container's
        filesystem and the volumes and files mounted in it); ``None`` when
        there is no such file or it is not a regular file. A file on a ``tmpfs`` of
        an exited container is gone (Docker's ``/dev`` is one).

        Raises:
            RuntimeCallError: the container does not exist, or the engine failed.
        """
        ...


@runtime_checkable
class ExecRuntime(Protocol):
    """**Protocol**, optional: run a command in a running container (Docker's and
    CRI's exec). Without it pods with ``exec`` probes or lifecycle handlers are
    rejected, and ``podsync exec`` says so."""

    def exec_in_container(
        self, container_id: str, command: Sequence[str], timeout: float
    ) -> ExecResult:
        """Run ``command`` (an argument list, never a shell string) in a running
        container and wait at most ``timeout`` seconds for it."""
        ...

    def exec_attached(
        self,
        container_id: str,
        command: Sequence[str],
        *,
        output: Callable[[str, bytes], None],
        stdin: IO[bytes] | None = None,
        tty: bool = False,
    ) -> int:
        """Run ``command`` (an argument list, never a shell string) in a running
        container as ``docker exec [-i] [-t]`` does, until it ends; return its exit code.

        ``output(stream, data)`` receives what it writes as it writes it, ``stream``
        being ``"stdout"`` or ``"stderr"`` (with ``tty`` everything is ``"stdout"``).
        ``stdin``, when given, is read until its end and sent to the command, whose
        standard input then ends (a command reading it sees end-of-file).
        """
        ...


@runtime_checkable
class LogRuntime(Protocol):
    """**Protocol**, optional: what a container wrote (Docker's and CRI's logs).
    Without it ``podsync logs`` says so and a ``FallbackToLogsOnError`` container's
    message is empty."""

    def container_logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        since: float | None = None,
        follow: bool = False,
    ) -> Stream[LogLine]:
        """What the container wrote, line by line, oldest first, stdout and stderr
        apart (``LogLine.stream``) and each line with its time.

        ``tail``: only the last that many lines (``None``: all); ``since``: only lines
        written at or after that time (seconds since the epoch). With ``follow`` the
        stream goes on with new lines and ends when the container stops (or at once
        for one that does not run) or when the caller closes it.
        """
        ...


@runtime_checkable
class EventRuntime(Protocol):
    """**Protocol**, optional: the engine's stream of container events (Docker's
    ``/events``). Without it ``podsync events`` says so and the loop wakes on its
    period alone."""

    def engine_events(
        self, *, since: float | None = None, until: float | None = None
    ) -> Stream[EngineEvent]:
        """The engine's container events (``EVENT_ACTIONS``), oldest first.

        ``since``: from that time (the engine keeps a bounded history); ``None``: only
        new events. ``until``: up to that time, then the stream ends; ``None``: it
        follows new events until the caller closes it.
        """
        ...


@runtime_checkable
class NodeRuntime(Protocol):
    """**Protocol**, optional: what the engine says of its host and of a container's
    network (Docker's ``/info`` and ``/containers/{id}/json``; CRI's ``Status`` and
    ``PodSandboxStatus``). Without it no pod is checked against the host's CPUs and
    memory, and pods with httpGet or tcpSocket probes or handlers that name no host
    are rejected (there is no address to reach them at)."""

    def node_capacity(self) -> ResourceList:
        """The CPUs (``cpu``, in milli-CPU) and memory (``memory``, in bytes) the
        engine's host gives containers - Docker: ``docker info``'s ``NCPU`` and
        ``MemTotal`` - which admission checks the pods' requests against (the node's
        capacity, ``plan(..., capacity=...)``)."""
        ...

    def container_address(self, container_id: str) -> str | None:
        """The IP address of the container's network, or ``None`` when it has none
        (network mode ``none``): where httpGet and tcpSocket handlers connect when
        they name no host."""
        ...


@runtime_checkable
class UsageRuntime(Protocol):
    """**Protocol**, optional: the CPU and memory the containers and the host use, as
    the kernel's cgroups count them (the seed's cAdvisor ``GetContainerInfo`` and
    ``GetRootInfo``; CRI's ``ContainerStats``). Without it ``podsync top`` says so and
    the loop reports no usage. Not a ``Capability`` (no plan needs it): discovered with
    ``isinstance``, required with ``require_usage``."""

    def container_usage(self, container_ids: Sequence[str]) -> dict[str, ContainerUsage]:
        """One reading of each container of ``container_ids`` that runs and can be
        read, by id; a container that does not run, is gone or stopped meanwhile is
        left out (never an error).

        Raises:
            RuntimeCallError: the engine failed (``EngineUnavailable``: it cannot be
                reached).
        """
        ...

    def node_usage(self) -> ContainerUsage | None:
        """One reading of the whole host: the CPU seconds of all its CPUs together
        (since boot) and its memory working set (``MemTotal - MemAvailable``, or the
        root cgroup's); ``None`` when the runtime cannot read its host (a remote
        engine)."""
        ...


@runtime_checkable
class EngineInfoRuntime(Protocol):
    """**Protocol**, optional: what the engine says of itself (Docker's ``/version``;
    CRI's ``Version``), which a reporting host writes into its heartbeat. Not a
    ``Capability``: nothing is planned from it, and without it the heartbeat names the
    runtime's class instead."""

    def engine_info(self) -> EngineInfo:
        """The engine's kind (``docker``, ``podman``) and version."""
        ...


@runtime_checkable
class PodListRuntime(Protocol):
    """**Protocol**, optional: the containers of one pod, listed by the engine (CRI's
    ``ListContainers`` with a ``PodSandboxId`` filter; Docker's and podman's ``label``
    filter). ``podsync run`` syncs the pod of a container that died from this list
    alone - the kubelet's pod worker, fed by its event generator, syncs one pod and not
    the node (``pkg/kubelet/pod_workers.go``) - so a restart does not wait for a list
    of every container on the host. Without it every death syncs the whole host. Not
    a ``Capability``: no plan depends on it, and saved plans are the same."""

    def list_pod_containers(self, pod_uid: str) -> list[ObservedContainer]:
        """The containers labelled ``LABEL_POD_UID=<pod_uid>``, running and exited, each
        as ``list_containers`` reports it. A container of the pod without that label
        (a 2014 kubelet's, taken over by its name) is not among them.

        Raises:
            RuntimeCallError: the list call failed (``EngineUnavailable``: the engine
                cannot be reached).
        """
        ...


@runtime_checkable
class FullRuntime(
    Runtime,
    VolumeRuntime,
    FileRuntime,
    ExecRuntime,
    LogRuntime,
    EventRuntime,
    NodeRuntime,
    Protocol,
):
    """**Protocol**: a runtime with every optional capability, as ``DockerRuntime`` and
    ``FakeRuntime`` are."""


#: The protocol of each optional capability.
CAPABILITY_PROTOCOLS: Mapping[Capability, type] = {
    Capability.VOLUMES: VolumeRuntime,
    Capability.FILES: FileRuntime,
    Capability.EXEC: ExecRuntime,
    Capability.LOGS: LogRuntime,
    Capability.EVENTS: EventRuntime,
    Capability.NODE: NodeRuntime,
}


def capabilities(runtime: object) -> frozenset[Capability]:
    """The optional capabilities ``runtime`` has: those whose protocol's methods it
    has, all of them (``isinstance``, as ``runtime_checkable`` checks: by name)."""
    return frozenset(
        c for c, protocol in CAPABILITY_PROTOCOLS.items() if isinstance(runtime, protocol)
    )


def missing(capability: Capability, purpose: str) -> MissingCapability:
    """The error of ``purpose`` (``"podsync logs"``) needing ``capability`` on a runtime
    without it: it names the capability and the protocol that gives it."""
    protocol = CAPABILITY_PROTOCOLS[capability]
    methods = ", ".join(name for name in vars(protocol) if not name.startswith("_"))
    return MissingCapability(capability.value, purpose, f"{protocol.__name__}: {methods}")


def require_usage(runtime: object, purpose: str) -> UsageRuntime:
    """``runtime`` as a ``UsageRuntime``; ``MissingCapability`` (``usage``, naming the
    protocol and its methods, as ``require``) when it is not one.

    ``purpose`` says what needed it (``"podsync top"``), for the message.
    """
    if not isinstance(runtime, UsageRuntime):
        raise MissingCapability("usage", purpose, "UsageRuntime: container_usage, node_usage")
    return runtime


def require(runtime: object, capability: Capability, purpose: str) -> None:
    """Raise ``MissingCapability`` (``missing``) unless ``runtime`` has ``capability``.

    ``purpose`` says what needed it (``"podsync logs"``), for the message.
    """
    if not isinstance(runtime, CAPABILITY_PROTOCOLS[capability]):
        raise missing(capability, purpose)
