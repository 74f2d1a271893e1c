"""Testing helpers: ``FakeRuntime``, an in-memory container engine.

Use it to test podsync, or your own orchestrator built on podsync, without an engine::

    from podsync.testing import FakeRuntime

    fake = FakeRuntime(images=["busybox", "registry.k8s.io/pause:3.10"], clock=lambda: 100.0)
    result = podsync.sync([pod], fake, options=options, now=100.0)
    assert ["list", "list_images", "create", "start", "create", "start"] == fake.call_names()
    fake.clear_calls()
    podsync.sync([pod], fake, options=options, now=101.0)
    assert ["list"] == fake.call_names()   # converged: one list call, nothing to do

It is stateful, as the 2014 kubelet's ``FakeDockerClient`` was (reference §1.10):
create, start, stop and remove change what ``list_containers`` returns, so "apply,
observe again, plan again" works. It records every call in the seed's vocabulary
(``list``, ``list_images``, ``pull``, ``create``, ``start``, ``stop``, ``remove``,
``exec``, ``remove_image``, ``address``) and follows an engine's rules: names are
unique, an image must be present to create a container from it, a container can only
join the network of a running container, a running container cannot be removed.
Chosen calls can be made to fail (``fail``), a container's process can exit
(``exit``), and exec results can be scripted (``set_exec_result``) for hooks and
probes.

The fake is thread-safe: ``podsync.apply`` calls it from several threads.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from podsync._images import normalize_image
from podsync._models import ObservedContainer, ObservedImage
from podsync._plan import CreateSpec
from podsync._runtime import ExecResult
from podsync.exceptions import EngineUnavailable, NameConflict, RuntimeCallError

if TYPE_CHECKING:
    from podsync._runtime import Runtime

__all__ = ["CALL_NAMES", "MUTATING_CALL_NAMES", "Call", "FakeRuntime"]

#: Every call name ``FakeRuntime`` records, one per ``Runtime`` method.
CALL_NAMES = frozenset(
    {
        "list",  # list_containers()
        "list_images",  # list_images()
        "pull",  # pull_image(image)
        "create",  # create_container(spec)
        "start",  # start_container(id)
        "stop",  # stop_container(id, timeout)
        "remove",  # remove_container(id)
        "exec",  # exec_in_container(id, command, timeout)
        "address",  # container_address(id)
        "remove_image",  # remove_image(image_id)
    }
)

#: The calls that change the engine (the others only look).
MUTATING_CALL_NAMES = frozenset({"pull", "create", "start", "stop", "remove", "remove_image"})


@attrs.frozen
class Call:
    """One recorded runtime call.

    Attributes:
        name: the call, in the seed's vocabulary (see ``CALL_NAMES``).
        args: its arguments as passed: ``create`` has ``(spec,)``, ``stop`` has
            ``(container_id, timeout)``, ``exec`` has ``(container_id, command,
            timeout)`` with the command as a tuple, ``list`` has ``()``.
    """

    name: str
    args: tuple[Any, ...] = ()


@attrs.define
class _Container:
    id: str
    name: str
    image: str
    labels: dict[str, str]
    created: float
    running: bool = False
    exit_code: int = 0
    finished_at: float | None = None
    network_mode: str = ""
    spec: CreateSpec | None = None

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
        )


@attrs.define
class _Fault:
    name: str
    times: int | None
    match: str | Callable[[Call], bool] | None
    error: str
    unavailable: bool


def _image_id(reference: str) -> str:
    return "sha256:" + hashlib.sha256(reference.encode()).hexdigest()


class FakeRuntime:
    """An in-memory container engine that satisfies the ``Runtime`` protocol.

    Args:
        containers: containers the engine holds at the start (for example the seed's
            ``k8s_`` containers of a scenario).
        images: images present at the start: references (``"busybox"`` is stored as
            ``busybox:latest``) or ``ObservedImage`` values.
        clock: where creation, start and exit times come from; pass a fixed or
            counting function for deterministic tests (default ``time.time``).
        stop_exit_code: the exit code a stopped container reports: 0 for a process
            that handles SIGTERM (the default), 137 for one that has to be killed.
        address: the network address every container reports (``container_address``);
            ``None`` (the default) means no network, so a handler without a host fails.
            Set ``"127.0.0.1"`` to point handlers at servers in your test.
        latency: seconds every call sleeps before it is handled (outside the lock),
            to measure parallelism.

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
        clock: Callable[[], float] = time.time,
        stop_exit_code: int = 0,
        address: str | None = None,
        latency: float = 0.0,
    ) -> None:
        self.calls: list[Call] = []
        self.exec_results: dict[tuple[str, ...], ExecResult] = {}
        self.clock = clock
        self.stop_exit_code = stop_exit_code
        self.address = address
        self.latency = latency
        self._lock = threading.RLock()
        self._containers: dict[str, _Container] = {}
        self._images: dict[str, ObservedImage] = {}
        self._faults: list[_Fault] = []
        self._counter = 0
        for oc in containers:
            self.add_container(oc)
        for image in images:
            self.add_image(image)

    def __repr__(self) -> str:
        return f"<FakeRuntime with {len(self._containers)} container(s), {len(self.calls)} call(s)>"

    # -- setting up and inspecting ---------------------------------------------------

    def add_container(self, container: ObservedContainer) -> None:
        """Put a container on the engine as it is (no call is recorded)."""
        with self._lock:
            self._containers[container.id] = _Container(
                id=container.id,
                name=container.name,
                image=container.image,
                labels=dict(container.labels),
                created=container.created,
                running=container.running,
                exit_code=container.exit_code,
                finished_at=container.finished_at,
            )

    def add_image(self, image: str | ObservedImage) -> None:
        """Make an image present (no call is recorded)."""
        with self._lock:
            if isinstance(image, str):
                reference = normalize_image(image)
                image = ObservedImage(_image_id(reference), (reference,))
            self._images[image.id] = image

    @property
    def containers(self) -> list[ObservedContainer]:
        """The containers, as ``list_containers`` would return them (no call recorded)."""
        with self._lock:
            return [c.observed() for c in self._sorted()]

    @property
    def images(self) -> list[ObservedImage]:
        """The images, as ``list_images`` would return them (no call recorded)."""
        with self._lock:
            return sorted(self._images.values(), key=lambda i: i.id)

    def container(self, ref: str) -> ObservedContainer:
        """The container with id or name ``ref``.

        Raises:
            KeyError: there is none.
        """
        with self._lock:
            found = self._find(ref)
            if found is None:
                raise KeyError(ref)
            return found.observed()

    def spec(self, ref: str) -> CreateSpec | None:
        """The spec the container with id or name ``ref`` was created from; ``None`` for
        a container added with ``add_container``.

        Raises:
            KeyError: there is no such container.
        """
        with self._lock:
            found = self._find(ref)
            if found is None:
                raise KeyError(ref)
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

        Raises:
            ValueError: ``call_name`` is not a call name, or ``times`` is below 1.
        """
        if call_name not in CALL_NAMES:
            raise ValueError(f"expected one of {sorted(CALL_NAMES)}, got {call_name!r}")
        if times is not None and times < 1:
            raise ValueError(f"times must be at least 1 or None, got {times!r}")
        with self._lock:
            self._faults.append(_Fault(call_name, times, match, error, unavailable))

    def clear_faults(self) -> None:
        """Stop failing calls."""
        with self._lock:
            self._faults.clear()

    def exit(self, container_id: str, code: int) -> None:
        """The container's process exits by itself with ``code`` (no call recorded).

        Raises:
            KeyError: there is no such container.
        """
        with self._lock:
            found = self._find(container_id)
            if found is None:
                raise KeyError(container_id)
            found.running = False
            found.exit_code = code
            found.finished_at = self.clock()

    def set_exec_result(self, command: Sequence[str], exit_code: int, output: bytes = b"") -> None:
        """Script what ``exec`` of ``command`` (in any container) returns."""
        with self._lock:
            self.exec_results[tuple(command)] = ExecResult(exit_code, output)

    # -- internals ---------------------------------------------------------------------

    def _sorted(self) -> list[_Container]:
        # Newest first, as the Docker API lists containers.
        return sorted(self._containers.values(), key=lambda c: (c.created, c.id), reverse=True)

    def _find(self, ref: str) -> _Container | None:
        found = self._containers.get(ref)
        if found is not None:
            return found
        name = ref.removeprefix("/")
        return next((c for c in self._containers.values() if c.name == name), None)

    def _targets(self, call: Call) -> list[str]:
        if call.name == "create":
            spec = call.args[0]
            return [spec.name, spec.image]
        if call.name in ("start", "stop", "remove", "exec", "address"):
            container = self._find(call.args[0])
            return [call.args[0]] + ([container.name] if container is not None else [])
        return [str(a) for a in call.args]

    def _record(self, name: str, *args: Any) -> None:
        """Record the call, then raise the first fault that matches it."""
        call = Call(name, args)
        self.calls.append(call)
        for fault in self._faults:
            if fault.name != name:
                continue
            if isinstance(fault.match, str):
                if not any(fault.match in target for target in self._targets(call)):
                    continue
            elif fault.match is not None and not fault.match(call):
                continue
            if fault.times is not None:
                fault.times -= 1
                if fault.times == 0:
                    self._faults.remove(fault)
            target = " ".join(self._targets(call)[:1])
            if fault.unavailable:
                raise EngineUnavailable(name, target, fault.error)
            raise RuntimeCallError(name, target, fault.error)

    # -- the Runtime protocol ----------------------------------------------------------

    def list_containers(self) -> list[ObservedContainer]:
        """Every container, running and exited, newest first."""
        self._sleep()
        with self._lock:
            self._record("list")
            return [c.observed() for c in self._sorted()]

    def list_images(self) -> list[ObservedImage]:
        """Every image."""
        self._sleep()
        with self._lock:
            self._record("list_images")
            return sorted(self._images.values(), key=lambda i: i.id)

    def pull_image(self, image: str) -> None:
        """Make ``image`` present (recorded as ``pull``)."""
        self._sleep()
        with self._lock:
            self._record("pull", image)
            reference = normalize_image(image)
            if not self._image_present(image):
                self._images[_image_id(reference)] = ObservedImage(
                    _image_id(reference), (reference,)
                )

    def _image_present(self, image: str) -> bool:
        reference = normalize_image(image)
        return any(
            reference in i.tags or image in i.digests or image == i.id
            for i in self._images.values()
        )

    def create_container(self, spec: CreateSpec) -> str:
        """Create a container (not running) and return its id: ``c0001``, ``c0002``, ...

        Raises:
            NameConflict: the name is in use (a ``RuntimeCallError``).
            RuntimeCallError: the image is absent, or the network mode names a
                container that does not exist.
        """
        self._sleep()
        with self._lock:
            self._record("create", spec)
            holder = self._find(spec.name)
            if holder is not None:
                raise NameConflict(
                    "create",
                    spec.name,
                    f"name already in use by container {holder.id}",
                    holder_id=holder.id,
                    holder_labels=holder.labels,
                )
            if not self._image_present(spec.image):
                raise RuntimeCallError("create", spec.name, f"No such image: {spec.image}")
            if spec.network_mode.startswith("container:"):
                ref = spec.network_mode.removeprefix("container:")
                if self._find(ref) is None:
                    raise RuntimeCallError("create", spec.name, f"No such container: {ref}")
            self._counter += 1
            cid = f"c{self._counter:04d}"
            self._containers[cid] = _Container(
                id=cid,
                name=spec.name,
                image=spec.image,
                labels=dict(spec.labels),
                created=self.clock(),
                network_mode=spec.network_mode,
                spec=spec,
            )
            return cid

    def start_container(self, container_id: str) -> None:
        """Start a container (starting a running one does nothing, as Docker).

        Raises:
            RuntimeCallError: no such container, or its network mode names a container
                that does not run (Docker: "cannot join network of a non running
                container").
        """
        self._sleep()
        with self._lock:
            self._record("start", container_id)
            container = self._find(container_id)
            if container is None:
                raise RuntimeCallError("start", container_id, "No such container")
            if container.running:
                return
            if container.network_mode.startswith("container:"):
                ref = container.network_mode.removeprefix("container:")
                network = self._find(ref)
                if network is None or not network.running:
                    raise RuntimeCallError(
                        "start",
                        container_id,
                        f"cannot join network of a non running container: {ref}",
                    )
            container.running = True
            container.finished_at = None

    def stop_container(self, container_id: str, timeout: int) -> None:
        """Stop a container: it exits with ``stop_exit_code``. Stopping a missing or
        exited container succeeds (the protocol's idempotent contract)."""
        self._sleep()
        with self._lock:
            self._record("stop", container_id, timeout)
            container = self._find(container_id)
            if container is None or not container.running:
                return
            container.running = False
            container.exit_code = self.stop_exit_code
            container.finished_at = self.clock()

    def remove_container(self, container_id: str) -> None:
        """Remove a container; removing a missing one succeeds.

        Raises:
            RuntimeCallError: the container is running.
        """
        self._sleep()
        with self._lock:
            self._record("remove", container_id)
            container = self._find(container_id)
            if container is None:
                return
            if container.running:
                raise RuntimeCallError(
                    "remove", container_id, "cannot remove a running container; stop it first"
                )
            del self._containers[container.id]

    def exec_in_container(
        self, container_id: str, command: Sequence[str], timeout: float
    ) -> ExecResult:
        """The scripted result of ``command`` (``exec_results``), exit 0 by default.

        Raises:
            RuntimeCallError: no such container, or it is not running.
        """
        self._sleep()
        with self._lock:
            self._record("exec", container_id, tuple(command), timeout)
            container = self._find(container_id)
            if container is None:
                raise RuntimeCallError("exec", container_id, "No such container")
            if not container.running:
                raise RuntimeCallError("exec", container_id, "container is not running")
            return self.exec_results.get(tuple(command), ExecResult(0))

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
                raise RuntimeCallError("address", container_id, "No such container")
            if container.network_mode == "none":
                return None
            return self.address

    def remove_image(self, image_id: str) -> None:
        """Remove an image by id (or reference); removing a missing one succeeds (as
        ``DockerRuntime`` does).

        Raises:
            RuntimeCallError: a container was created from it.
        """
        self._sleep()
        with self._lock:
            self._record("remove_image", image_id)
            image = self._images.get(image_id) or next(
                (
                    i
                    for i in self._images.values()
                    if normalize_image(image_id) in i.tags or image_id in i.digests
                ),
                None,
            )
            if image is None:
                return
            for c in self._containers.values():
                if c.image == image.id or normalize_image(c.image) in image.tags:
                    raise RuntimeCallError(
                        "remove_image", image_id, f"image is being used by container {c.id}"
                    )
            del self._images[image.id]

    def _sleep(self) -> None:
        # Outside the lock, so that concurrent calls overlap as they would on an engine.
        if self.latency:
            time.sleep(self.latency)


if TYPE_CHECKING:
    # mypy checks here that FakeRuntime satisfies the Runtime protocol.
    _conforms: Runtime = FakeRuntime()
