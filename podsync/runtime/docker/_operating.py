"""The Docker runtime's calls into running containers and the engine's streams: exec
(for probes and hooks), and the operating calls - logs, attached exec, events.

Contract: ``OperatingCalls`` is a mixin of ``DockerRuntime``, on the clients and error
translation of ``EngineConnection``. ``_streams`` makes the requests and reads the
frames; a stream keeps its leased client until it ends or is closed. Exec reads the
command's output on a helper thread (``_streams.StreamReader``): the SDK has no exec
timeout, and under load it loses the output of quick commands.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from podsync.runtime._protocol import EngineEvent, ExecResult, LogLine, Stream
from podsync.runtime.docker._api import as_int
from podsync.runtime.docker._connection import EngineConnection

# The streams (logs, events, exec's output: sockets, a reader thread) are imported by the
# calls that open one: a one-shot command that only syncs never does (issue 33).
if TYPE_CHECKING:
    import docker

    from podsync.runtime.docker._streams import Opened

__all__ = ["OperatingCalls"]

# How often exec_in_container asks whether an exec finished after its output ended.
_EXEC_POLL_INTERVAL = 0.02

# The exit code exec_in_container reports for a command that did not finish in time.
_EXEC_TIMED_OUT = -1


class OperatingCalls(EngineConnection):
    """``DockerRuntime``'s exec, and its operating calls: logs, attached exec, events."""

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
        from podsync.runtime.docker import _streams as _docker_streams

        deadline = time.monotonic() + timeout
        with self._call("exec", container_id) as api:
            created = api.exec_create(container_id, list(command))
            exec_id = str(created["Id"])
            stream = api.exec_start(exec_id, stream=True)
            reader = _docker_streams.StreamReader(stream)
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

    # -- operating: logs, attached exec, events (see podsync.runtime.docker._streams) ----

    def container_logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        since: float | None = None,
        follow: bool = False,
    ) -> Stream[LogLine]:
        """``LogRuntime.container_logs``, from the engine's log driver (``json-file`` and
        ``local`` keep logs); ``RuntimeCallError`` for no such container."""
        from podsync.runtime.docker import _streams as _docker_streams

        opened = functools.partial(
            _docker_streams.logs,
            container_id=container_id,
            tail=tail,
            since=since,
            follow=follow,
            libpod=(follow or tail is not None) and self._is_libpod(),
        )
        return self._stream("logs", container_id, opened)

    def engine_events(
        self, *, since: float | None = None, until: float | None = None
    ) -> Stream[EngineEvent]:
        """``EventRuntime.engine_events`` (the engine keeps its last 256 events for
        ``since``)."""
        from podsync.runtime.docker import _streams as _docker_streams

        opened = functools.partial(
            _docker_streams.events, since=since, until=until, libpod=self._is_libpod()
        )
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
        """``ExecRuntime.exec_attached``, as ``docker exec [-i] [-t]``: no timeout; a
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
