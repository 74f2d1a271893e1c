"""The Docker runtime: podsync's ``Runtime`` protocol on the docker SDK.

Usage (``podsync.docker`` is its public face)::

    from podsync.docker import DockerRuntime

    with DockerRuntime() as runtime:    # DOCKER_HOST, else CONTAINER_HOST, else the local socket
        containers = runtime.list_containers()

    DockerRuntime(host="ssh://admin@node1")            # any host the SDK accepts
    DockerRuntime(host="tcp://node1:2376", tls=docker.tls.TLSConfig(...))

This module holds the constructor, which reads where the engine is. The calls are split
by concern into mixins on one base, as the kubelet's ``kuberuntime`` is split into
files: ``_connection`` (``EngineConnection``: the pool of clients, the API version, the
translation of errors), ``_containers`` (list, inspect, create, start, stop, remove),
``_images`` (list, pull, remove), ``_volumes`` (named volumes, and files written and
read through the archive API, by helper containers of an empty image it imports itself),
``_operating`` (exec, logs, attached exec, events) and ``_usage`` (CPU and memory usage:
the cgroup files of a local engine's containers, else the stats API).

Theory of operation
===================

* *Observation is one list call* (``_containers``). ``list_containers`` is one
  ``GET /containers/json``. The list has no ``FinishedAt`` and gives the exit code only
  inside the human ``Status`` text, so an exited container that podsync owns is
  inspected once for its exact ``State.ExitCode`` and ``State.FinishedAt``, and the
  answer is cached by container id (and ``Status`` without its clock): podsync never
  restarts a container (it creates a new one), so an exited container never changes
  again. Running and foreign containers are never inspected, and the cache holds only
  what the last list showed exited. In the steady state a sync therefore costs exactly
  one engine call.
* *Errors are translated at this edge* by one context manager, ``_translate``
  (``_connection``): an engine that cannot be reached is ``EngineUnavailable`` (one line
  naming the host), everything else the SDK raises is ``RuntimeCallError``
  (``NameConflict`` when ``create`` finds the name taken). Nothing from ``docker``,
  ``requests`` or ``urllib3`` escapes.
* *Idempotent stops and removals*, as the protocol asks (``_containers``): stopping a
  stopped container (HTTP 304) or a missing one (404), and removing a missing one,
  succeed.
* *Threads* (``_connection``). The apply side calls one runtime from several worker
  threads. The SDK does not document ``APIClient`` (a ``requests.Session``) as
  thread-safe, and requests does not promise it either (psf/requests#2766,
  docker/docker-py#3229), so a runtime that builds its own clients keeps a small pool
  of them and lends each to one call at a time; the pool grows to the number of
  concurrent callers and is reused across syncs. A client passed in by the caller is
  used as it is, by every thread.
* *Lazy connection* (``_connection``). Nothing is sent to the engine until the first
  call, which negotiates the API version once, from the ``API-Version`` header of
  ``GET /_ping`` as the docker CLI does (later clients reuse the answer). ``ping()``
  checks the connection explicitly.
* *Exec* (``_operating``) reads the command's output itself, on a helper thread: the SDK
  has no exec timeout, and under load it loses the output of quick commands (see
  ``_streams.StreamReader``). Logs, attached exec and events are read there too: the
  SDK joins stdout and stderr.
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from podsync.exceptions import EngineUnavailable, RuntimeCallError
from podsync.model._engine_info import EngineInfo
from podsync.model._pod import ResourceList
from podsync.runtime.docker._containers import ContainerCalls
from podsync.runtime.docker._images import ImageCalls
from podsync.runtime.docker._operating import OperatingCalls
from podsync.runtime.docker._usage import UsageCalls
from podsync.runtime.docker._volumes import VolumeCalls

if TYPE_CHECKING:
    import docker
    import docker.tls

__all__ = ["DEFAULT_HOST", "DEFAULT_TIMEOUT", "DockerRuntime", "environment_host"]

#: Where the docker SDK (and the docker CLI) look when ``DOCKER_HOST`` is not set.
DEFAULT_HOST = "unix:///var/run/docker.sock"

#: Seconds to wait for the engine to answer one call (the docker SDK's default). A
#: stop waits this long *plus* its grace period; pulls are never cut short.
DEFAULT_TIMEOUT = 60


def _import_docker() -> None:
    """Import the docker SDK, with a hint when it is missing. Methods import it again
    locally (free once loaded): the module is imported only when a runtime is built."""
    try:
        import docker  # noqa: F401
    except ImportError as exc:  # pragma: no cover - docker is a dependency of podsync
        raise ImportError(
            "podsync.docker needs the docker SDK for Python: pip install 'docker>=7'"
        ) from exc


class DockerRuntime(ContainerCalls, ImageCalls, VolumeCalls, OperatingCalls, UsageCalls):
    """A ``podsync.Runtime`` on a Docker engine, through the docker SDK's low-level
    ``APIClient``.

    Args:
        client: a ``docker.DockerClient`` to use as it is (its ``.api``). The caller
            keeps it: ``close()`` does not close it, and it is shared by every thread
            that calls this runtime.
        host: the engine's address, in any form the docker SDK accepts:
            ``unix:///var/run/docker.sock``, ``tcp://host:2376``, ``ssh://user@host``.
            ``None`` (and no ``client``) reads ``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``
            and ``DOCKER_CERT_PATH`` as ``docker.from_env()`` does; without
            ``DOCKER_HOST``, podman's ``CONTAINER_HOST`` (``environment_host``).
        tls: with ``host``: ``True``, or a ``docker.tls.TLSConfig`` for client
            certificates and verification.
        timeout: seconds to wait for an answer to each call.
        use_ssh_client: with an ``ssh://`` host, run the ``ssh`` command instead of
            paramiko.

    Raises:
        ValueError: ``client`` was given together with ``host`` or ``tls``.
        EngineUnavailable: the ``DOCKER_*`` environment is unusable (for instance
            ``DOCKER_TLS_VERIFY`` without the certificates it names), or
            ``CONTAINER_HOST`` is an address podsync cannot reach as podman does.

    Nothing connects here: the first call does (see ``ping``).
    """

    @property
    def overlapping_calls(self) -> bool:
        """Each call is a round trip to the engine: ``apply`` overlaps the ones that may
        (a pod's app containers are created while its network container starts) - on
        Docker. Not on podman, where a container that joins the network container gets
        that one's hosts file, which podman writes only as it starts (``_hosts_file``);
        nor when the engine cannot be asked which it is."""
        try:
            return not self._is_libpod()
        except RuntimeCallError:
            return False

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
        self._idle = []  # clients no call is using now
        self._generation = 0  # bumped by close(): clients lent before are closed on return
        self._api_version = None  # negotiated once, by the first client
        self._finished = {}  # see list_containers
        self._image_users = {}  # image id -> Config.User, see list_images
        self._security_options = None  # see _check_security
        self._usage_lock = threading.Lock()  # see _usage: the cgroups of local containers
        self._cgroups = {}
        self._not_local = {}
        self._base_url = None
        self._tls = False
        if client is not None:
            self._host = _describe_client(client.api)
        elif host is not None:
            self._base_url, self._tls, self._host = host, tls, host
        else:
            # docker.from_env()'s reading of DOCKER_HOST, DOCKER_TLS_VERIFY and
            # DOCKER_CERT_PATH, done once here; nothing connects yet.
            try:
                self._host, _ = environment_host(os.environ)
                params = docker.utils.kwargs_from_env(
                    environment={**os.environ, "DOCKER_HOST": self._host}
                )
            except ValueError as exc:
                raise EngineUnavailable("connect", "", str(exc)) from exc
            except docker.errors.DockerException as exc:
                raise EngineUnavailable(
                    "connect", "", f"cannot use the Docker engine at {self._host}: {exc}"
                ) from exc
            self._base_url = params.get("base_url")
            self._tls = params.get("tls", False)

    def __repr__(self) -> str:
        return f"<DockerRuntime {self._host}>"

    def node_capacity(self) -> ResourceList:
        """The CPUs and memory of the engine's host, as ``docker info`` reports them
        (``NCPU``, ``MemTotal``): what a kubelet's node reports as its capacity. Asked
        each time (a host's CPUs can go online and offline).

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the call failed.
        """
        with self._call("info", "") as api:
            info = api.info()
        return ResourceList(
            cpu=int(info.get("NCPU") or 0) * 1000, memory=int(info.get("MemTotal") or 0)
        )

    def engine_info(self) -> EngineInfo:
        """The engine's kind and version from its ``/version`` (``engine_info_of``).

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the call failed.
        """
        with self._call("version", "") as api:
            document = api.version()
        return engine_info_of(document)

    def __enter__(self) -> DockerRuntime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def engine_info_of(document: Mapping[str, Any]) -> EngineInfo:
    """An engine's kind and version from its ``/version`` answer. podman answers
    Docker's API too, and says which it is in ``Components`` (a ``Podman Engine``
    component, 4.x) or ``Platform.Name`` (``linux/amd64/debian-12`` there; ``Docker
    Engine - Community`` for Docker's own builds): podman when either names it, else
    docker. The version is the engine component's, else the top-level ``Version``."""
    components = document.get("Components") or ()
    names = [str(c.get("Name", "")) for c in components if isinstance(c, Mapping)]
    platform = document.get("Platform") or {}
    platform_name = str(platform.get("Name", "")) if isinstance(platform, Mapping) else ""
    podman = any("podman" in n.lower() for n in (*names, platform_name))
    version = str(document.get("Version") or "")
    for component in components:
        if isinstance(component, Mapping) and str(component.get("Name", "")) in (
            "Engine",
            "Podman Engine",
        ):
            version = str(component.get("Version") or version)
    return EngineInfo("podman" if podman else "docker", version)


# ---------------------------------------------------------------------------------------
# The engine's address


#: podman's variable for its engine's address (podman-remote(1): ``--url`` overrides
#: it). The docker CLI does not read it, and podman does not read ``DOCKER_HOST``.
CONTAINER_HOST = "CONTAINER_HOST"


def environment_host(environ: Mapping[str, str]) -> tuple[str, str]:
    """The engine's address from the environment, and the variable it came from.

    ``DOCKER_HOST`` first, then ``CONTAINER_HOST``, then ``DEFAULT_HOST`` (reported as
    coming from ``DOCKER_HOST``). Each tool reads its own variable: the docker CLI
    ``DOCKER_HOST``, podman ``CONTAINER_HOST``. podsync speaks the Docker API, and
    podman's own guide for Docker-API tools is to set ``DOCKER_HOST`` to podman's
    socket, so ``DOCKER_HOST`` wins when both are set (a shell that points the docker
    CLI at one engine and podman at another gets the docker CLI's); ``CONTAINER_HOST``
    alone is honoured, so a podman user needs nothing more.

    Raises:
        ValueError: ``CONTAINER_HOST`` is podman's ``ssh://user@host/path/podman.sock``:
            podman tunnels to that socket, while the docker SDK's ssh runs ``docker
            system dial-stdio`` on the host, which reaches another engine (or none). The
            message says what to use instead.
    """
    docker_host = environ.get("DOCKER_HOST", "")
    if docker_host:
        return docker_host, "DOCKER_HOST"
    container_host = environ.get(CONTAINER_HOST, "")
    if not container_host:
        return DEFAULT_HOST, "DOCKER_HOST"
    parts = urllib.parse.urlsplit(container_host)
    if parts.scheme == "ssh" and parts.path not in ("", "/"):
        raise ValueError(
            f"CONTAINER_HOST={container_host}: podman reaches the socket {parts.path} over ssh "
            "itself, and podsync's ssh:// runs `docker system dial-stdio` on the host instead; "
            f"forward the socket (ssh -L /tmp/podman.sock:{parts.path} {parts.netloc}) and "
            "set DOCKER_HOST=unix:///tmp/podman.sock"
        )
    return container_host, CONTAINER_HOST


def _describe_client(api: Any) -> str:
    """A readable address for a caller's client (the SDK rewrites a unix socket's URL to
    ``http+docker://localhost``; the socket path stays on the adapter)."""
    socket_path = getattr(getattr(api, "_custom_adapter", None), "socket_path", None)
    if isinstance(socket_path, str):
        return f"unix://{socket_path}"
    return str(getattr(api, "base_url", "") or "the docker client's host")
