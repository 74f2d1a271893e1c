"""The Docker runtime's connection to its engine: a pool of clients (the docker SDK's
``APIClient``), each lent to one call at a time, the API version negotiated once, and the
one place where errors cross the edge.

Contract: ``EngineConnection`` is the base of ``DockerRuntime``'s concerns
(``_containers``, ``_images``, ``_volumes``, ``_operating``). A call borrows a client with
``_call`` (a stream: ``_lease`` and ``_translate``) and gives it back when it ends;
whatever the docker SDK, requests, urllib3 or the socket raise comes out as
``EngineUnavailable`` or ``RuntimeCallError`` (``_translate``). ``DockerRuntime``'s
constructor (``podsync.runtime.docker._runtime``) sets the state; that module's theory of
operation says why there is a pool ("Threads") and when it first connects ("Lazy
connection"). Nothing is imported from the SDK at module level: the SDK is loaded only
when a runtime is built.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from podsync.exceptions import EngineUnavailable, NameConflict, RuntimeCallError

if TYPE_CHECKING:
    import docker
    import docker.tls

__all__ = ["EngineConnection"]


class EngineConnection:
    """The connection of a ``DockerRuntime`` to its engine, the base of the runtime's
    concerns: clients lent one call at a time, and errors translated."""

    # Set by DockerRuntime's constructor.
    _host: str
    _timeout: int
    _use_ssh_client: bool
    _shared: docker.APIClient | None  # the caller's client, used as it is
    _lock: threading.Lock
    _idle: list[docker.APIClient]  # clients no call is using now
    _generation: int  # bumped by close(): clients lent before are closed on return
    _api_version: str | None  # negotiated once, by the first client
    # Whether the engine is podman's Docker-compatible service (its /_ping answers with
    # a Libpod-API-Version header); None until a ping said (see _is_libpod).
    _libpod: bool | None = None
    _base_url: str | None
    _tls: bool | docker.tls.TLSConfig

    @property
    def host(self) -> str:
        """The engine's address, as given (``DOCKER_HOST``, or the default socket)."""
        return self._host

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

        if (self._base_url or "").startswith("ssh://"):
            _require_ssh_support(self._host)
            _drop_ended_ssh_connections()
            if self._use_ssh_client:
                _reap_ssh_commands()

        def build(version: str) -> docker.APIClient:
            try:
                return _verifying_as_configured(
                    docker.APIClient(
                        base_url=self._base_url,
                        version=version,
                        timeout=self._timeout,
                        tls=self._tls,
                        use_ssh_client=self._use_ssh_client,
                    )
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
        import requests.exceptions

        # The client is a requests Session with the engine's transport (unix socket,
        # TLS, ssh) mounted on its base URL; /_ping is not versioned.
        response = probe.get(f"{probe.base_url}/_ping", timeout=self._timeout)
        try:
            try:
                response.raise_for_status()
            except requests.exceptions.HTTPError:
                if b"HTTPS server" not in response.content:
                    raise
                # dockerd --tls answers plain HTTP with 400 "Client sent an HTTP request
                # to an HTTPS server." (Go's net/http).
                raise EngineUnavailable(
                    "connect",
                    "",
                    f"the Docker engine at {self._host} speaks TLS, and was spoken to in "
                    "plain HTTP (the command line: --tlsverify with its CA and a client "
                    "certificate, or DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH)",
                ) from None
            version = response.headers.get("API-Version")
            self._libpod = "Libpod-API-Version" in response.headers
        finally:
            response.close()
        if version:
            return str(version)
        return str(probe.version(api_version=False)["ApiVersion"])

    def _is_libpod(self) -> bool:
        """Whether the engine is podman (``Libpod-API-Version`` in the headers of its
        ``/_ping``): known from the API version's negotiation, else (a client passed
        in) asked once, here: a create and a volume's create ask (podman's unchecked
        settings, its volume options), the list only when an answer of the engine
        looks like podman's (a ``localhost/`` or ``docker.io/`` name)."""
        if self._libpod is None:
            with self._call("ping", "") as api:
                response = api.get(f"{api.base_url}/_ping", timeout=self._timeout)
                try:
                    self._libpod = "Libpod-API-Version" in response.headers
                finally:
                    response.close()
        return self._libpod

    def _volume_options(self) -> dict[str, str] | None:
        """The driver options of a volume podsync creates: none on Docker; on podman
        ``o=uid=0,gid=0``, which makes libpod keep the volume's root as it is.

        Without them podman (4.3, libpod's ``fixVolumePermissions``) changes the root of
        a new volume when the first container that mounts it starts: to that
        container's user (the pod's ``runAsUser``, where Docker leaves it root's 0755),
        then to the owner and mode of the image's directory at the mount path, even
        through ``nocopy``. That undoes the mode and group podsync wrote (an fsGroup's
        2775, an emptyDir's 0777) and lets the first container's user own a volume its
        pod shares. A volume made with a uid or gid option is never changed so
        (measured on podman 4.3.1); its root is root's, as on Docker.
        """
        return {"o": "uid=0,gid=0"} if self._is_libpod() else None

    def _make_volume(self, api: Any, name: str, labels: Mapping[str, str]) -> None:
        """Create the named volume ``name`` with ``labels`` and podsync's options
        (``_volume_options``) through ``api``; one that exists is left as it is.

        Docker answers a create of an existing volume with that volume. podman (4.3)
        does too, except when two creates of the name overlap: the later one fails
        with "volume already exists" (libpod's ``ErrVolumeExists``, seen when two
        syncs of one pod race), and that one counts as made, as Docker would answer."""
        import docker.errors

        try:
            api.create_volume(name, labels=dict(labels), driver_opts=self._volume_options())
        except docker.errors.APIError as exc:
            made_meanwhile = "volume already exists" in str(exc.explanation or "")
            if not (made_meanwhile and self._is_libpod()):
                raise

    @contextlib.contextmanager
    def _translate(self, operation: str, target: str) -> Iterator[None]:
        """Turn whatever the SDK, requests or the socket raise into podsync errors.

        The one place exceptions cross this edge (as httpx's ``map_httpcore_exceptions``):

        ================================================  ===========================
        raised inside                                     raised to the caller
        ================================================  ===========================
        ``APIError`` 409 during ``create``                ``NameConflict``
        ``APIError`` 404 (``NotFound``,                   ``NotFound``
        ``ImageNotFound``)
        ``APIError`` 409 (any other call)                 ``Conflict``
        ``APIError`` (any other HTTP error)               ``RuntimeCallError``
        ================================================  ===========================

        Each with the engine's explanation as its message and the HTTP status as its
        ``status_code``; what follows has no status code:

        ================================================  ===========================
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
            status = exc.status_code
            if status == 500 and isinstance(explanation, str):
                status = _docker_status(explanation)
            if operation == "create" and status == 409:
                # 'Conflict. The container name "/x" is already in use by container ...'
                raise NameConflict(operation, target, explanation, status_code=status) from exc
            raise RuntimeCallError.from_status(operation, target, explanation, status) from exc
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


#: podman's Docker-compatible service answers 500 where Docker answers 409 Conflict (or
#: 404); its libpod error, at the explanation's end, says so (libpod/define/errors.go).
_PODMAN_500S = (
    # a container in the wrong state: remove of a running one without force, an exec
    # in a stopped one, a start of a running one (Docker: 409 Conflict)
    (": container state improper", 409),
    # a volume in use, a container others depend on (Docker: 409 Conflict)
    (": volume is being used", 409),
    ("has dependent containers which must be removed before it", 409),
    # a create with a name another container has (Docker: 409, a NameConflict)
    (": that name is already in use", 409),
    # a container that is gone, or is being removed ("container <id> does not exist
    # in database: no such container", libpod's ErrNoSuchCtr; Docker: 404)
    (": no such container", 404),
)


def _docker_status(explanation: str) -> int:
    """The status Docker answers for what podman answered with 500 and ``explanation``;
    500 when it is a server error on both."""
    for ending, status in _PODMAN_500S:
        if ending in explanation:
            return status
    return 500


# ---------------------------------------------------------------------------------------
# TLS and ssh:// engines


def _verifying_as_configured(api: docker.APIClient) -> docker.APIClient:
    """``api``, made to verify the engine with the CA its ``TLSConfig`` set.

    The SDK puts the CA (or ``False``, for ``--tls`` without verification) on the
    session (``session.verify``), and every call passes ``verify=None``; requests then
    replaces ``None`` with ``REQUESTS_CA_BUNDLE`` or ``CURL_CA_BUNDLE`` when either is
    set (``Session.merge_environment_settings``, psf/requests#3829), and the engine's
    certificate, signed by the engine's own CA, fails to verify against the system's
    CAs. The docker CLI trusts the CA it is given and no other: here a call that names
    no ``verify`` gets the session's. Proxies and the rest of the environment still
    apply.
    """
    merge = api.merge_environment_settings

    def merge_keeping_verify(
        url: str | bytes | None,
        proxies: Any,
        stream: Any,
        verify: Any,
        cert: Any,
    ) -> Any:
        return merge(url, proxies, stream, api.verify if verify is None else verify, cert)

    api.merge_environment_settings = merge_keeping_verify  # type: ignore[method-assign]
    return api


def _require_ssh_support(host: str) -> None:
    """Check that the docker SDK can speak to an ``ssh://`` engine.

    The SDK's ssh transport (``docker.transport.sshconn``) imports paramiko when it is
    loaded, even to run the ``ssh`` command (``use_ssh_client``), and without it fails
    with "Install paramiko package"; podsync's ``ssh`` extra brings it.

    Raises:
        EngineUnavailable: paramiko is missing; the message names the extra.
    """
    try:
        import paramiko  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        raise EngineUnavailable(
            "connect",
            "",
            f"cannot use the Docker engine at {host}: ssh:// engines need the ssh extra "
            "(pip install 'podsync[ssh]', which brings paramiko)",
        ) from None


def _drop_ended_ssh_connections() -> None:
    """Make the SDK's ``ssh://`` connection pools check a connection before reusing it.

    urllib3 drops a pooled connection whose peer hung up before it sends a request on
    it; the SDK's ``SSHConnectionPool._get_conn`` skips that check (it calls
    ``fileno()``, which makes a pipe per paramiko channel), so a connection whose
    ``docker system dial-stdio`` had ended was reused, and the call failed with "I/O
    operation on closed file" or "Socket is closed" - read as an engine that cannot be
    reached (a flaky CI run of ``test_ssh_engine_plans_and_applies_through_sshd``). The
    SDK module's pool class is replaced, once, by a subclass that closes and skips such
    a connection (``_ssh_connection_ended``) and takes the next, or a new one.
    """
    from docker.transport import sshconn

    if getattr(sshconn.SSHConnectionPool, "podsync_checks", False):
        return

    class CheckingSSHConnectionPool(sshconn.SSHConnectionPool):
        podsync_checks = True

        def _get_conn(self, timeout: float | None = None) -> Any:
            while True:
                conn = super()._get_conn(timeout)
                if not _ssh_connection_ended(getattr(conn, "sock", None)):
                    return conn
                conn.close()

    sshconn.SSHConnectionPool = CheckingSSHConnectionPool  # type: ignore[misc]


def _ssh_connection_ended(sock: object) -> bool:
    """Whether an ``ssh://`` connection's transport ended: a paramiko channel that is
    closed, got its end of file or whose command exited; an ``ssh`` command
    (``use_ssh_client``) that exited. ``None`` (not connected yet) has not ended."""
    if sock is None:
        return False
    process = getattr(sock, "proc", None)
    if process is not None:
        return process.poll() is not None
    if getattr(sock, "closed", False) or getattr(sock, "eof_received", False):
        return True
    ready = getattr(sock, "exit_status_ready", None)
    return bool(ready()) if callable(ready) else False


def _reap_ssh_commands() -> None:
    """Make the SDK's ``ssh`` command connections end their process when closed.

    With ``use_ssh_client`` each connection is an ``ssh HOST docker system dial-stdio``
    process behind a ``socket.socket`` subclass (``docker.transport.sshconn.SSHSocket``)
    whose ``close()`` signals the process but never waits for it, and never closes the
    socket it inherits: every connection closed left a zombie process and an open file
    descriptor (both ``ResourceWarning``), which a long ``podsync run`` accumulates, and
    writing its goodbye to an ``ssh`` that already exited (a refused key) raised
    ``BrokenPipeError`` out of ``close()``. The SDK module's class is replaced, once, by
    a subclass that does the same and then waits (killing after 5 s) and closes.
    """
    import subprocess

    from docker.transport import sshconn

    if getattr(sshconn.SSHSocket, "podsync_reaps", False):
        return

    class ReapingSSHSocket(sshconn.SSHSocket):
        podsync_reaps = True

        def close(self) -> None:
            process = self.proc
            with contextlib.suppress(OSError):
                super().close()
            if process is not None:
                for stream in (process.stdin, process.stdout):
                    if stream is not None:
                        with contextlib.suppress(OSError):
                            stream.close()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            socket.socket.close(self)

    sshconn.SSHSocket = ReapingSSHSocket  # type: ignore[misc]


# ---------------------------------------------------------------------------------------
# Errors


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
    the exception. ``tests/support/engine.py`` meets the same leak in
    ``docker.from_env()``.
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
