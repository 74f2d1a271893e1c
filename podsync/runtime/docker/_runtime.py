"""The Docker runtime: podsync's ``Runtime`` protocol on the docker SDK.

Usage (``podsync.docker`` is its public face)::

    from podsync.docker import DockerRuntime

    with DockerRuntime() as runtime:                    # DOCKER_HOST, or the local socket
        containers = runtime.list_containers()

    DockerRuntime(host="ssh://admin@node1")            # any host the SDK accepts
    DockerRuntime(host="tcp://node1:2376", tls=docker.tls.TLSConfig(...))

Theory of operation
===================

* *Observation is one list call.* ``list_containers`` is one ``GET /containers/json``.
  The list has no ``FinishedAt`` and gives the exit code only inside the human
  ``Status`` text, so an exited container that podsync owns is inspected once for its
  exact ``State.ExitCode`` and ``State.FinishedAt``, and the answer is cached by
  container id (and ``Status`` without its clock): podsync never restarts a container
  (it creates a new one), so an exited container never changes again. Running and
  foreign containers are never inspected, and the cache holds only what the last list
  showed exited. In the steady state a sync therefore costs exactly one engine call.
* *Errors are translated at this edge* by one context manager, ``_translate``: an engine
  that cannot be reached is ``EngineUnavailable`` (one line naming the host), everything
  else the SDK raises is ``RuntimeCallError`` (``NameConflict`` when ``create`` finds
  the name taken). Nothing from ``docker``, ``requests`` or ``urllib3`` escapes.
* *Idempotent stops and removals*, as the protocol asks: stopping a stopped container
  (HTTP 304) or a missing one (404), and removing a missing one, succeed.
* *Threads.* The apply side calls one runtime from several worker threads. The SDK does
  not document ``APIClient`` (a ``requests.Session``) as thread-safe, and requests does
  not promise it either (psf/requests#2766, docker/docker-py#3229), so a runtime that
  builds its own clients keeps a small pool of them and lends each to one call at a
  time; the pool grows to the number of concurrent callers and is reused across syncs.
  A client passed in by the caller is used as it is, by every thread.
* *Lazy connection.* Nothing is sent to the engine until the first call, which
  negotiates the API version once, from the ``API-Version`` header of ``GET /_ping``
  as the docker CLI does (later clients reuse the answer). ``ping()`` checks the
  connection explicitly.
* *Exec* reads the command's output itself, on a helper thread: the SDK has no exec
  timeout, and under load it loses the output of quick commands (see
  ``_streams.StreamReader``). Logs, attached exec and events are read there too: the
  SDK joins stdout and stderr.
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, cast

import attrs

from podsync.actions._actions import CreateSpec
from podsync.exceptions import EngineUnavailable, NameConflict, RuntimeCallError
from podsync.model._pod import ObservedContainer, ObservedImage, ObservedVolume
from podsync.model._volume_entries import VolumeEntry, entry_path_refusal
from podsync.runtime._protocol import EngineEvent, ExecResult, LogLine, Stream
from podsync.runtime.docker._api import (
    FINISHED_STATES,
    STATUS_AGE,
    Outcome,
    address_of,
    as_int,
    docker_create_args,
    image_from_list,
    observed_from_list,
    timestamp,
    volume_from_list,
)
from podsync.runtime.docker._archive import first_file, tar_of
from podsync.runtime.docker._streams import Opened, StreamReader
from podsync.spec._backoff import Backoff
from podsync.spec._images import pull_reference
from podsync.spec._labels import LABEL_HELPER
from podsync.spec._ownership import ownership

if TYPE_CHECKING:
    import docker
    import docker.tls

__all__ = ["DEFAULT_HOST", "DEFAULT_TIMEOUT", "DockerRuntime"]

#: Where the docker SDK (and the docker CLI) look when ``DOCKER_HOST`` is not set.
DEFAULT_HOST = "unix:///var/run/docker.sock"

#: Seconds to wait for the engine to answer one call (the docker SDK's default). A
#: stop waits this long *plus* its grace period; pulls are never cut short.
DEFAULT_TIMEOUT = 60

# How often exec_in_container asks whether an exec finished after its output ended.
_EXEC_POLL_INTERVAL = 0.02

# The exit code exec_in_container reports for a command that did not finish in time.
_EXEC_TIMED_OUT = -1


def _import_docker() -> None:
    """Import the docker SDK, with a hint when it is missing. Methods import it again
    locally (free once loaded): the module is imported only when a runtime is built."""
    try:
        import docker  # noqa: F401
    except ImportError as exc:  # pragma: no cover - docker is a dependency of podsync
        raise ImportError(
            "podsync.docker needs the docker SDK for Python: pip install 'docker>=7'"
        ) from exc


# Where a volume helper container (``DockerRuntime._volume_helper``) mounts its volume.
_HELPER_MOUNT = "/podsync-volume"

# Seconds a create that met a name conflict waits for the container holding the name
# to become visible (see ``DockerRuntime._holder``).
_HOLDER_WAIT = 5.0


class DockerRuntime:
    """A ``podsync.Runtime`` on a Docker engine, through the docker SDK's low-level
    ``APIClient``.

    Args:
        client: a ``docker.DockerClient`` to use as it is (its ``.api``). The caller
            keeps it: ``close()`` does not close it, and it is shared by every thread
            that calls this runtime.
        host: the engine's address, in any form the docker SDK accepts:
            ``unix:///var/run/docker.sock``, ``tcp://host:2376``, ``ssh://user@host``.
            ``None`` (and no ``client``) reads ``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``
            and ``DOCKER_CERT_PATH`` as ``docker.from_env()`` does.
        tls: with ``host``: ``True``, or a ``docker.tls.TLSConfig`` for client
            certificates and verification.
        timeout: seconds to wait for an answer to each call.
        use_ssh_client: with an ``ssh://`` host, run the ``ssh`` command instead of
            paramiko.

    Raises:
        ValueError: ``client`` was given together with ``host`` or ``tls``.
        EngineUnavailable: the ``DOCKER_*`` environment is unusable (for instance
            ``DOCKER_TLS_VERIFY`` without the certificates it names).

    Nothing connects here: the first call does (see ``ping``).
    """

    #: Each call is a round trip to the engine: ``apply`` overlaps the ones that may
    #: (a pod's app containers are created while its network container starts).
    overlapping_calls = True

    def __init__(
        self,
        client: docker.DockerClient | None = None,
        *,
        host: str | None = None,
        tls: bool | docker.tls.TLSConfig = False,
        timeout: int = DEFAULT_TIMEOUT,
        use_ssh_client: bool = False,
    ) -> None:
        _import_docker()
        import docker.errors
        import docker.utils

        if client is not None and (host is not None or tls):
            raise ValueError("give DockerRuntime a client or a host, not both")
        self._timeout = timeout
        self._use_ssh_client = use_ssh_client
        self._shared = client.api if client is not None else None
        self._lock = threading.Lock()
        self._idle: list[docker.APIClient] = []  # clients no call is using now
        self._generation = 0  # bumped by close(): clients lent before are closed on return
        self._api_version: str | None = None  # negotiated once, by the first client
        self._finished: dict[tuple[str, str], Outcome] = {}  # see list_containers
        self._image_users: dict[str, str] = {}  # image id -> Config.User, see list_images
        self._security_options: frozenset[str] | None = None  # see _check_security
        self._base_url: str | None = None
        self._tls: bool | docker.tls.TLSConfig = False
        if client is not None:
            self._host = _describe_client(client.api)
        elif host is not None:
            self._base_url, self._tls, self._host = host, tls, host
        else:
            # docker.from_env()'s reading of DOCKER_HOST, DOCKER_TLS_VERIFY and
            # DOCKER_CERT_PATH, done once here; nothing connects yet.
            self._host = _environment_host()
            try:
                params = docker.utils.kwargs_from_env()
            except docker.errors.DockerException as exc:
                raise EngineUnavailable(
                    "connect", "", f"cannot use the Docker engine at {self._host}: {exc}"
                ) from exc
            self._base_url = params.get("base_url")
            self._tls = params.get("tls", False)

    # -- the connection ------------------------------------------------------------

    @property
    def host(self) -> str:
        """The engine's address, as given (``DOCKER_HOST``, or the default socket)."""
        return self._host

    def __repr__(self) -> str:
        return f"<DockerRuntime {self._host}>"

    def __enter__(self) -> DockerRuntime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections this runtime opened; a client passed in stays open.

        A runtime is still usable after ``close()``: a later call connects again.
        """
        with self._lock:
            self._generation += 1
            idle, self._idle = self._idle, []
        for api in idle:
            api.close()

    def ping(self) -> None:
        """Check that the engine answers.

        Raises:
            EngineUnavailable: it does not (wrong address, daemon down, no permission on
                the socket); the message names the host and the reason.
            RuntimeCallError: it answers, but not as an engine should.
        """
        with self._call("ping", "") as api:
            api.ping()

    @contextlib.contextmanager
    def _call(self, operation: str, target: str) -> Iterator[docker.APIClient]:
        """Lend an ``APIClient`` for one call, translating every error it raises."""
        with self._translate(operation, target), self._lease() as api:
            yield api

    @contextlib.contextmanager
    def _lease(self) -> Iterator[docker.APIClient]:
        """A client that no other thread uses until the ``with`` block ends."""
        if self._shared is not None:
            yield self._shared
            return
        with self._lock:
            api = self._idle.pop() if self._idle else None
            generation = self._generation
        if api is None:
            api = self._new_client()
        try:
            yield api
        finally:
            with self._lock:
                keep = generation == self._generation
                if keep:
                    self._idle.append(api)
            if not keep:
                api.close()

    def _new_client(self) -> docker.APIClient:
        import docker
        import docker.constants

        def build(version: str) -> docker.APIClient:
            try:
                return docker.APIClient(
                    base_url=self._base_url,
                    version=version,
                    timeout=self._timeout,
                    tls=self._tls,
                    use_ssh_client=self._use_ssh_client,
                )
            except ValueError as exc:
                # The SDK checks the address only here, with a bare ValueError
                # ("Port out of range", an unknown scheme): a bad host is a podsync error.
                raise EngineUnavailable(
                    "connect", "", f"cannot use the Docker engine at {self._host}: {exc}"
                ) from exc

        if self._api_version is None:
            # The API version is negotiated once (Debian 12's engine speaks 1.41, older
            # than the SDK's default), on a client of our own: the SDK's "auto" asks
            # from inside the constructor and, when that fails, leaves the half-built
            # client's connections to the garbage collector.
            probe = build(docker.constants.DEFAULT_DOCKER_API_VERSION)
            try:
                self._api_version = self._engine_api_version(probe)
            finally:
                probe.close()
        return build(self._api_version)

    def _engine_api_version(self, probe: docker.APIClient) -> str:
        """The engine's API version, from the ``API-Version`` header of ``GET /_ping``
        (as the docker CLI negotiates); ``GET /version`` only for an engine that sends
        no such header (before API 1.25). ``/version`` is not cheap: the engine runs
        ``runc --version`` and ``docker-init --version`` to answer it, about 10 ms
        that every one-shot command would pay before its first real call."""
        # The client is a requests Session with the engine's transport (unix socket,
        # TLS, ssh) mounted on its base URL; /_ping is not versioned.
        response = probe.get(f"{probe.base_url}/_ping", timeout=self._timeout)
        try:
            response.raise_for_status()
            version = response.headers.get("API-Version")
        finally:
            response.close()
        if version:
            return str(version)
        return str(probe.version(api_version=False)["ApiVersion"])

    @contextlib.contextmanager
    def _translate(self, operation: str, target: str) -> Iterator[None]:
        """Turn whatever the SDK, requests or the socket raise into podsync errors.

        The one place exceptions cross this edge (as httpx's ``map_httpcore_exceptions``):

        ================================================  ===========================
        raised inside                                     raised to the caller
        ================================================  ===========================
        ``APIError`` 409 during ``create``                ``NameConflict``
        ``APIError`` (any other HTTP error)               ``RuntimeCallError`` with
                                                          the engine's explanation
        no connection (``ConnectionError``, missing or    ``EngineUnavailable``: "cannot
        forbidden socket, ssh failure)                    reach the Docker engine at
                                                          <host>: <reason>"
        no answer in time (read timeout)                  ``RuntimeCallError``
        any other SDK / requests / urllib3 / OS error     ``RuntimeCallError``
        ================================================  ===========================
        """
        import docker.errors

        try:
            yield
        except RuntimeCallError:
            raise
        except docker.errors.APIError as exc:
            if exc.response is not None:
                # The SDK raises for a streamed call (pull) without closing its response.
                exc.response.close()
            explanation = exc.explanation or str(exc)
            if operation == "create" and exc.status_code == 409:
                # 'Conflict. The container name "/x" is already in use by container ...'
                raise NameConflict(operation, target, explanation) from exc
            raise RuntimeCallError(operation, target, explanation) from exc
        except Exception as exc:
            if _unreachable(exc):
                _close_abandoned_sockets(exc)
                raise EngineUnavailable(
                    operation,
                    target,
                    f"cannot reach the Docker engine at {self._host}: {_reason(exc)}",
                ) from exc
            if _timed_out(exc):
                raise RuntimeCallError(
                    operation,
                    target,
                    f"the Docker engine at {self._host} did not answer within {self._timeout} s",
                ) from exc
            if _from_transport(exc):
                raise RuntimeCallError(operation, target, _reason(exc)) from exc
            raise

    # -- observation ---------------------------------------------------------------

    def list_containers(self) -> list[ObservedContainer]:
        """Every container on the engine, running and exited, in the engine's order.

        One list call; in addition each exited container that a plan may own and that
        this runtime has not seen exited before is inspected once, for its exact exit
        code and finish time. "May own" is ``ownership`` with 2014 containers taken over:
        the runtime does not know the plan's options, and reading the exit of a 2014
        kubelet's container a plan then leaves alone changes nothing. A Kubernetes
        node's container (``io.kubernetes.*`` labels) is never inspected.
        A container in state ``created`` (never started, or its start failed) has
        ``running=False`` and ``finished_at=None``; ``paused`` and ``restarting``
        containers run (Docker's ``State.Running`` is true for both).

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the list call, or an inspect, failed.
        """
        with self._call("list", "") as api:
            listed = cast(list[dict[str, Any]], api.containers(all=True))
        observed: list[ObservedContainer] = []
        seen: dict[tuple[str, str], Outcome] = {}
        for entry in listed:
            container = observed_from_list(entry)
            if (
                str(entry.get("State", "")) in FINISHED_STATES
                and ownership(container, adopt_2014_containers=True) is not None
            ):
                # The cache key carries the Status text without its clock ("Exited
                # (137)"), so a container someone restarted by hand and that exited
                # differently is inspected again.
                key = (container.id, STATUS_AGE.sub("", str(entry.get("Status") or "")))
                outcome = self._outcome(key)
                if outcome is None:
                    continue  # removed between the list and the inspect: it is gone
                seen[key] = outcome
                container = attrs.evolve(
                    container,
                    exit_code=outcome.exit_code,
                    finished_at=outcome.finished_at,
                    oom_killed=outcome.oom_killed,
                )
            observed.append(container)
        with self._lock:
            # Keep what this list saw exited, and nothing else: the cache never grows
            # past the engine's exited containers.
            self._finished = seen
        return observed

    def _outcome(self, key: tuple[str, str]) -> Outcome | None:
        """How an exited container ended, from the cache or one inspect; ``None`` when
        the container no longer exists."""
        with self._lock:
            cached = self._finished.get(key)
        if cached is not None:
            return cached
        import docker.errors

        container_id = key[0]
        with self._call("inspect", container_id) as api:
            try:
                inspected = cast(dict[str, Any], api.inspect_container(container_id))
            except docker.errors.NotFound:
                return None
        state = inspected.get("State") or {}
        outcome = Outcome(
            as_int(state.get("ExitCode")),
            timestamp(state.get("FinishedAt")),
            bool(state.get("OOMKilled")),
        )
        with self._lock:
            self._finished[key] = outcome
        return outcome

    def list_images(self) -> list[ObservedImage]:
        """Every (top-level) image on the engine, with the user it runs as.

        One list call; the list has no ``Config.User``, so each image this runtime has
        not seen before is inspected once for it (an image id names immutable content,
        so the answer is cached by id for the runtime's life).

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: a call failed.
        """
        import docker.errors

        with self._call("list images", "") as api:
            listed = cast(list[dict[str, Any]], api.images())
        images = []
        for entry in listed:
            image = image_from_list(entry)
            with self._lock:
                user = self._image_users.get(image.id)
            if user is None:
                with self._call("inspect image", image.id) as api:
                    try:
                        inspected = cast(
                            dict[str, Any],
                            api.inspect_image(image.id),  # type: ignore[no-untyped-call]
                        )
                    except docker.errors.NotFound:
                        continue  # removed between the list and the inspect: it is gone
                user = str((inspected.get("Config") or {}).get("User") or "")
                with self._lock:
                    self._image_users[image.id] = user
            images.append(attrs.evolve(image, user=user))
        return images

    def container_address(self, container_id: str) -> str | None:
        """The container's IP address; ``None`` when its network has none.

        A container in network mode ``container:<x>`` (every app container of a pod)
        shares the network of ``x``, so the address is ``x``'s.

        Raises:
            RuntimeCallError: the container (or the one whose network it shares) does
                not exist, or the engine failed.
        """
        target = container_id
        for _ in range(4):  # container:<x> chains are one step long in practice
            with self._call("inspect", target) as api:
                inspected = cast(dict[str, Any], api.inspect_container(target))
            mode = str((inspected.get("HostConfig") or {}).get("NetworkMode") or "")
            if not mode.startswith("container:"):
                return address_of(inspected.get("NetworkSettings") or {})
            target = mode.removeprefix("container:")
        raise RuntimeCallError(
            "inspect", container_id, f"network mode chain too long at {target!r}"
        )

    # -- images --------------------------------------------------------------------

    def pull_image(self, image: str) -> None:
        """Pull ``image``; an untagged reference pulls ``:latest``, a digest reference
        pulls that digest.

        The engine reports some failures as an HTTP error and others (a layer that
        fails to download) as an ``error`` message inside the progress stream that
        follows a ``200 OK``; both raise.

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the pull failed (no such image, registry unreachable,
                access denied ...); the message is the engine's.
        """
        repository, tag = pull_reference(image)
        with self._call("pull", image) as api:
            for message in api.pull(repository, tag=tag, stream=True, decode=True):
                if isinstance(message, Mapping) and (
                    "error" in message or "errorDetail" in message
                ):
                    detail = message.get("errorDetail")
                    text = message.get("error") or (
                        detail.get("message") if isinstance(detail, Mapping) else None
                    )
                    raise RuntimeCallError("pull", image, str(text or message))

    def remove_image(self, image_id: str) -> None:
        """Remove an image by id; an image that is gone already counts as removed.

        Raises:
            RuntimeCallError: the engine refused (the image is in use by a container,
                or has several tags and was named by id).
        """
        import docker.errors

        with (
            self._call("remove image", image_id) as api,
            contextlib.suppress(docker.errors.NotFound),
        ):
            api.remove_image(image_id)

    # -- named volumes -------------------------------------------------------------

    def list_volumes(self) -> list[ObservedVolume]:
        """Every named volume on the engine (one ``GET /volumes``), with its labels.

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the call failed.
        """
        with self._call("list volumes", "") as api:
            listed = api.volumes()
        # "Volumes" is null on an engine without any.
        return [volume_from_list(entry) for entry in listed.get("Volumes") or ()]

    def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create the named volume ``name`` (local driver) with ``labels``; the engine
        answers a create of an existing volume with that volume, unchanged.

        Raises:
            RuntimeCallError: the engine refused the name, or failed.
        """
        with self._call("create volume", name) as api:
            api.create_volume(name, labels=dict(labels))

    def remove_volume(self, name: str) -> None:
        """Remove the named volume ``name``; one that is gone counts as removed.

        Raises:
            RuntimeCallError: a container uses it (HTTP 409, "volume is in use"; nothing
                is forced), or the engine failed.
        """
        import docker.errors

        with (
            self._call("remove volume", name) as api,
            contextlib.suppress(docker.errors.NotFound),
        ):
            api.remove_volume(name)

    # -- files in the engine -------------------------------------------------------

    def write_volume(self, volume: str, entries: Sequence[VolumeEntry], *, image: str) -> None:
        """Write ``entries`` into the named volume ``volume`` through a container of
        ``image`` that mounts it and never starts (one create, one ``PUT .../archive``,
        one remove): nothing is read or written on this machine.

        Raises:
            RuntimeCallError: the image is missing, a path is refused, or the engine
                failed.
        """
        try:
            archive = tar_of(entries, under=_HELPER_MOUNT.removeprefix("/"))
        except ValueError as exc:
            raise RuntimeCallError("write volume", volume, str(exc)) from exc
        with (
            self._volume_helper(volume, image, "write volume") as helper,
            self._call("write volume", volume) as api,
        ):
            # Extracted at "/": the volume's root is the entry "podsync-volume", whose
            # mode and owner Docker sets (see tar_of).
            api.put_archive(helper, "/", archive)

    def read_volume_file(self, volume: str, path: str, *, image: str, limit: int) -> bytes | None:
        """At most ``limit`` bytes of the regular file ``path`` in the named volume,
        through a container of ``image`` as ``write_volume``; ``None`` when absent.

        Raises:
            RuntimeCallError: the image is missing, the path is refused, or the engine
                failed.
        """
        refusal = entry_path_refusal(path)
        if refusal is not None:
            raise RuntimeCallError("read volume", volume, f"cannot read {path!r}: {refusal}")
        with self._volume_helper(volume, image, "read volume") as helper:
            return self._read_file(helper, posixpath.join(_HELPER_MOUNT, path), limit, volume)

    def read_container_file(
        self, container_id: str, path: str, *, limit: int, tail: bool = False
    ) -> bytes | None:
        """At most ``limit`` bytes of the regular file ``path`` in the container - its
        first ones, or its last ones with ``tail`` - (``GET /containers/{id}/archive``:
        Docker mounts an exited container's volumes and binds for it); ``None`` when
        absent or not a regular file.

        Raises:
            RuntimeCallError: the container does not exist, or the engine failed.
        """
        return self._read_file(container_id, path, limit, container_id, tail=tail)

    def _read_file(
        self, container_id: str, path: str, limit: int, target: str, *, tail: bool = False
    ) -> bytes | None:
        import docker.errors

        with self._call("read file", target) as api:
            try:
                chunks, _ = api.get_archive(container_id, path)
            except docker.errors.NotFound as exc:
                # 404 is both "no such container" and "no such path": only the second
                # is an answer.
                if "no such container" in (exc.explanation or "").lower():
                    raise
                return None
            except docker.errors.APIError as exc:
                # A parent that is a file: the engine's lstat answers ENOTDIR (HTTP
                # 500), which for a reader means the same as a missing path.
                if (exc.explanation or "").endswith(": not a directory"):
                    return None
                raise
            try:
                return first_file(chunks, limit=limit, tail=tail)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()

    @contextlib.contextmanager
    def _volume_helper(self, volume: str, image: str, operation: str) -> Iterator[str]:
        """A created (never started) container of ``image`` with ``volume`` mounted at
        ``_HELPER_MOUNT``, removed when the block ends, whatever happened in it."""
        with self._call(operation, volume) as api:
            created = api.create_container(
                image,
                # Never run: a command is needed only because an image may have none.
                command=["/podsync-volume-helper"],
                labels={LABEL_HELPER: "volume"},
                network_disabled=True,
                host_config=api.create_host_config(
                    binds=[f"{volume}:{_HELPER_MOUNT}"], network_mode="none"
                ),
            )
        helper: str = created["Id"]
        try:
            yield helper
        finally:
            with self._call(operation, volume) as api:
                api.remove_container(helper, force=True)

    # -- containers ----------------------------------------------------------------

    def create_container(self, spec: CreateSpec) -> str:
        """Create (not start) the container ``spec`` describes; return its id.

        The spec is translated by ``podsync.runtime.docker._api.docker_create_args``:
        ``join`` is network mode ``container:<name>``, ports are ``PortBindings`` and
        ``ExposedPorts``, mounts ``Binds``, milli-CPU ``CpuShares``. Empty strings and
        zeros mean "unset"; ``entrypoint`` / ``command`` of ``None`` or ``()`` keep the
        image's.

        Raises:
            NameConflict: a container named ``spec.name`` exists already (HTTP 409);
                it names that container and its labels when one inspect can tell.
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the engine refused: no such image (nothing is pulled
                here), conflicting options (hostname, DNS servers or ports
                beside ``join``), a bad bind ...
        """
        try:
            return self._create(spec)
        except NameConflict as exc:
            holder = self._holder(spec.name)
            if holder is None:
                raise
            raise NameConflict(
                exc.operation,
                exc.target,
                exc.message,
                holder_id=holder[0],
                holder_labels=holder[1],
            ) from exc

    def _holder(self, name: str) -> tuple[str, dict[str, str]] | None:
        """The id and labels of the container named ``name``; ``None`` when it cannot
        be inspected in time: the conflict then stands as it is.

        Docker reserves a name before the container it is creating exists: a create
        racing another one for the name gets its 409 while an inspect of the name
        still answers 404. So a 404 is asked again, briefly, until the other create
        has registered its container (or has failed, releasing the name).
        """
        import docker.errors

        deadline = time.monotonic() + _HOLDER_WAIT
        backoff = Backoff(0.02, 0.5)
        while True:
            try:
                with self._call("inspect", name) as api:
                    inspected = cast(dict[str, Any], api.inspect_container(name))
                break
            except RuntimeCallError as exc:
                gone = isinstance(exc.__cause__, docker.errors.NotFound)
                if not gone or time.monotonic() + backoff.delay > deadline:
                    return None
            time.sleep(backoff.next())
        labels = (inspected.get("Config") or {}).get("Labels") or {}
        return str(inspected.get("Id") or ""), {str(k): str(v) for k, v in labels.items()}

    def _create(self, spec: CreateSpec) -> str:
        seccomp = self._check_security(spec)
        args = docker_create_args(spec, seccomp, self._mountpoints(spec))
        with self._call("create", spec.name) as api:
            host_config = api.create_host_config(**args.host_config)
            created = api.create_container(spec.image, host_config=host_config, **args.container)
        return str(cast(dict[str, Any], created)["Id"])

    def _mountpoints(self, spec: CreateSpec) -> dict[str, str]:
        """Where the engine keeps each volume of ``spec.file_mounts`` (one ``GET
        /volumes/{name}`` per volume): the engine's own path, on the engine's host,
        which is where it resolves binds - never a path of this machine.

        Raises:
            RuntimeCallError: a volume does not exist ("no such volume"), or the engine
                reports no mountpoint for it (a driver that keeps volumes elsewhere).
        """
        found: dict[str, str] = {}
        for volume in dict.fromkeys(m.volume for m in spec.file_mounts):
            with self._call("inspect volume", volume) as api:
                inspected = api.inspect_volume(volume)
            mountpoint = str(inspected.get("Mountpoint") or "")
            if not mountpoint.startswith("/"):
                raise RuntimeCallError(
                    "inspect volume", volume, f"the engine reports no mountpoint for {volume}"
                )
            found[volume] = mountpoint
        return found

    def _check_security(self, spec: CreateSpec) -> str | None:
        """Refuse, before the engine sees it, a profile the engine would not apply; return
        the content of the Localhost seccomp profile ``spec`` names, if any.

        Docker applies no AppArmor profile on a host without AppArmor - not even one
        asked for by name - and runs the container unconfined without a word
        (``apparmor.HostSupports``, which reads ``/sys/module/apparmor/parameters/
        enabled``). Its answer is in ``docker info``'s ``SecurityOptions``
        (``name=apparmor``, ``name=seccomp``), read once per runtime: a profile other
        than ``unconfined`` on an engine without the feature is refused here.

        Raises:
            RuntimeCallError: the engine has no AppArmor (or no seccomp) for a profile
                that needs it, or the Localhost seccomp profile cannot be read.
        """
        security = spec.security
        wanted = [
            (feature, profile)
            for feature, profile in (("AppArmor", security.apparmor), ("seccomp", security.seccomp))
            if profile not in ("", "unconfined")
        ]
        if wanted:
            supported = self._engine_security_options()
            for feature, profile in wanted:
                if feature.lower() not in supported:
                    raise RuntimeCallError(
                        "create",
                        spec.name,
                        f"{feature} profile {profile} asked for, but {feature} is not "
                        f"enabled on the Docker engine's host: podsync does not run the "
                        "container without it",
                    )
        if not security.seccomp.startswith("localhost/"):
            return None
        path = security.seccomp.removeprefix("localhost/")
        try:
            with open(path, encoding="utf-8") as file:
                return file.read()
        except FileNotFoundError:
            raise RuntimeCallError(
                "create", spec.name, f"seccomp profile {path} does not exist"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RuntimeCallError(
                "create", spec.name, f"cannot read seccomp profile {path}: {exc}"
            ) from None

    def _engine_security_options(self) -> frozenset[str]:
        """The security features of the engine's host (``docker info``), lower case."""
        with self._lock:
            known = self._security_options
        if known is not None:
            return known
        with self._call("info", "") as api:
            info = api.info()
        names = set()
        for option in info.get("SecurityOptions") or ():
            # "name=seccomp,profile=default"; engines before 1.13 listed bare names.
            fields = dict(part.partition("=")[::2] for part in str(option).split(","))
            names.add((fields.get("name") or str(option)).lower())
        found = frozenset(names)
        with self._lock:
            self._security_options = found
        return found

    def start_container(self, container_id: str) -> None:
        """Start a created container (starting a running one is a no-op: HTTP 304).

        Raises:
            RuntimeCallError: no such container, or the engine could not start it (its
                entrypoint does not exist, the network container is not running ...).
        """
        with self._call("start", container_id) as api:
            api.start(container_id)

    def stop_container(self, container_id: str, timeout: int) -> None:
        """Stop a container: SIGTERM (or its image's stop signal), SIGKILL after
        ``timeout`` seconds. A container that is not running (HTTP 304) or does not
        exist (404) counts as stopped.

        Raises:
            RuntimeCallError: the engine failed to stop it.
        """
        import docker.errors

        # The SDK waits the call timeout *plus* ``timeout`` for the answer.
        with self._call("stop", container_id) as api, contextlib.suppress(docker.errors.NotFound):
            api.stop(container_id, timeout=timeout)

    def remove_container(self, container_id: str) -> None:
        """Remove a container that does not run, with its anonymous volumes (as the
        kubelet's dockershim did: ``RemoveVolumes: true``; binds and named volumes
        stay). A container that does not exist counts as removed.

        Raises:
            RuntimeCallError: the container runs (HTTP 409; nothing is forced), or the
                engine failed.
        """
        import docker.errors

        with self._call("remove", container_id) as api, contextlib.suppress(docker.errors.NotFound):
            api.remove_container(container_id, v=True)

    def exec_in_container(
        self, container_id: str, command: Sequence[str], timeout: float
    ) -> ExecResult:
        """Run ``command`` (an argument list; no shell) in a running container.

        Returns:
            The exit code and stdout and stderr interleaved as the engine sent them.
            When the command does not finish within ``timeout`` seconds the call
            returns ``ExecResult(-1, <output so far>)`` - a failed probe or hook, not an
            engine error - and the command is left running: the Engine API cannot kill
            an exec (Kubernetes' exec probes had the same limit on Docker).

        Raises:
            RuntimeCallError: the container does not exist or does not run, or the
                engine failed.
        """
        deadline = time.monotonic() + timeout
        with self._call("exec", container_id) as api:
            created = api.exec_create(container_id, list(command))
            exec_id = str(created["Id"])
            stream = api.exec_start(exec_id, stream=True)
            reader = StreamReader(stream)
            reader.start()
            reader.join(max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                reader.cancel()
                return ExecResult(_EXEC_TIMED_OUT, reader.output())
            reader.raise_error()
            # The output ends when the command closes its stdout and stderr; the engine
            # records the exit code a moment later (or never, for a command that
            # closed them and went on running).
            while True:
                state = api.exec_inspect(exec_id)
                if not state.get("Running") and state.get("ExitCode") is not None:
                    return ExecResult(as_int(state["ExitCode"]), reader.output())
                if time.monotonic() >= deadline:
                    return ExecResult(_EXEC_TIMED_OUT, reader.output())
                time.sleep(_EXEC_POLL_INTERVAL)

    # -- operating: logs, attached exec, events (see podsync.runtime.docker._streams) -----------

    def container_logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        since: float | None = None,
        follow: bool = False,
    ) -> Stream[LogLine]:
        """``Runtime.container_logs``, from the engine's log driver (``json-file`` and
        ``local`` keep logs); ``RuntimeCallError`` for no such container."""
        from podsync.runtime.docker import _streams as _docker_streams

        opened = functools.partial(
            _docker_streams.logs, container_id=container_id, tail=tail, since=since, follow=follow
        )
        return self._stream("logs", container_id, opened)

    def engine_events(
        self, *, since: float | None = None, until: float | None = None
    ) -> Stream[EngineEvent]:
        """``Runtime.engine_events`` (the engine keeps its last 256 events for
        ``since``)."""
        from podsync.runtime.docker import _streams as _docker_streams

        opened = functools.partial(_docker_streams.events, since=since, until=until)
        return self._stream("events", "", opened)

    def exec_attached(
        self,
        container_id: str,
        command: Sequence[str],
        *,
        output: Callable[[str, bytes], None],
        stdin: IO[bytes] | None = None,
        tty: bool = False,
    ) -> int:
        """``Runtime.exec_attached``, as ``docker exec [-i] [-t]``: no timeout; a
        ``RuntimeCallError`` when the container does not exist or does not run."""
        from podsync.runtime.docker import _streams as _docker_streams

        with self._call("exec", container_id) as api:
            return _docker_streams.exec_attached(
                api, container_id, list(command), output=output, stdin=stdin, tty=tty
            )

    def _stream(
        self, operation: str, target: str, open_stream: Callable[[docker.APIClient], Opened]
    ) -> Stream[Any]:
        """A ``Stream`` on a client leased until the stream ends or is closed."""
        lease = self._lease()
        api = lease.__enter__()
        released = threading.Event()

        def release() -> None:
            if not released.is_set():
                released.set()
                lease.__exit__(None, None, None)

        try:
            with self._translate(operation, target):
                items, cancel = open_stream(api)
        except BaseException:
            release()
            raise

        def translated() -> Iterator[Any]:
            try:
                with self._translate(operation, target):
                    yield from items
            finally:
                release()

        def close() -> None:
            cancel()
            release()

        return Stream(translated(), close)


# ---------------------------------------------------------------------------------------
# Errors


def _environment_host() -> str:
    return os.environ.get("DOCKER_HOST") or DEFAULT_HOST


def _describe_client(api: Any) -> str:
    """A readable address for a caller's client (the SDK rewrites a unix socket's URL to
    ``http+docker://localhost``; the socket path stays on the adapter)."""
    socket_path = getattr(getattr(api, "_custom_adapter", None), "socket_path", None)
    if isinstance(socket_path, str):
        return f"unix://{socket_path}"
    return str(getattr(api, "base_url", "") or "the docker client's host")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and everything behind it: causes, contexts, and the ``reason`` / first
    argument that urllib3 and requests wrap their own causes in."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for nested in (
            current.__cause__,
            current.__context__,
            getattr(current, "reason", None),
            *current.args,
        ):
            if isinstance(nested, BaseException):
                todo.append(nested)


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` means that no engine answered at the address at all."""
    import requests.exceptions

    for item in _chain(exc):
        if isinstance(item, requests.exceptions.ConnectionError | ConnectionError):
            return True
        if isinstance(item, FileNotFoundError | PermissionError):  # the unix socket
            return True
        if type(item).__module__.startswith("paramiko"):  # ssh:// without ssh -> engine
            return True
        if type(item).__name__ == "NewConnectionError":  # urllib3
            return True
    return False


def _close_abandoned_sockets(exc: BaseException) -> None:
    """Close the sockets a failed connect left in the traceback's frames.

    The SDK's ``UnixHTTPConnection.connect`` does not close its socket when
    ``connect()`` fails (a missing or forbidden socket file); the socket would live as
    long as the exception, and then warn (``ResourceWarning``) wherever the caller drops
    the exception. ``tests/support/engine.py`` meets the same leak in ``docker.from_env()``.
    """
    for item in _chain(exc):
        tb = item.__traceback__
        while tb is not None:
            for value in tb.tb_frame.f_locals.values():
                if isinstance(value, socket.socket) and value.fileno() != -1:
                    value.close()
            tb = tb.tb_next


def _timed_out(exc: BaseException) -> bool:
    import requests.exceptions

    return any(isinstance(item, requests.exceptions.Timeout | TimeoutError) for item in _chain(exc))


def _from_transport(exc: BaseException) -> bool:
    """Errors of the docker SDK and of the HTTP stack under it (what else a call can
    raise is a bug, and propagates)."""
    import docker.errors
    import requests.exceptions

    return isinstance(
        exc,
        docker.errors.DockerException | requests.exceptions.RequestException | OSError,
    ) or type(exc).__module__.split(".")[0] in {"docker", "requests", "urllib3"}


def _reason(exc: BaseException) -> str:
    """The innermost human reason: ``Connection refused`` rather than requests'
    ``HTTPConnectionPool(host=...): Max retries exceeded ... (Caused by ...)``."""
    for item in reversed(list(_chain(exc))):
        if isinstance(item, OSError) and item.strerror:
            return item.strerror
    return str(exc) or type(exc).__name__
