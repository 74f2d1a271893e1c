"""``FakeRuntime``'s calls into running containers and its streams: exec (for probes and
hooks), and the operating calls - logs, attached exec, events - with what a test
scripts for them: exec results and handlers, log lines, and the events so far.

Contract: ``OperatingCalls`` is a mixin of ``FakeRuntime`` (``podsync.testing``), on the
state and internals of ``FakeEngine``; in memory, no I/O. Docker's rules, by the fake's
own code: no exec in a container that does not exist, does not run or is paused
(``_state.exec_refusal``), no logs of a container that does not exist; the log lines and
the events are kept, and followed, by ``_state.Journal``. An exec takes no time: one
scripted to take longer than its timeout gives ``ExecResult(-1)`` at once, as
``DockerRuntime``'s exec does when it stops waiting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO

from podsync.exceptions import NotFound, RuntimeCallError
from podsync.runtime._protocol import EngineEvent, ExecResult, LogLine, Stream
from podsync.runtime.fake._engine import FakeEngine
from podsync.runtime.fake._state import Journal as _Journal
from podsync.runtime.fake._state import exec_refusal as _exec_refusal

__all__ = ["OperatingCalls"]

#: ``FakeRuntime.set_exec_handler``'s handlers: (stdin, output) -> exit code.
_ExecHandler = Callable[[bytes, Callable[[str, bytes], None]], int]


class OperatingCalls(FakeEngine):
    """``FakeRuntime``'s exec, and its operating calls: logs, attached exec, events."""

    # Set by FakeRuntime's constructor.
    exec_results: dict[tuple[str, ...], ExecResult]
    _exec_seconds: dict[tuple[str, ...], float]
    _exec_handlers: dict[tuple[str, ...], _ExecHandler]
    _journal: _Journal

    # -- scripting -------------------------------------------------------------------

    def write_log(self, ref: str, data: bytes | str, stream: str = "stdout") -> None:
        """The process of container ``ref`` writes ``data`` to ``stream`` (``stdout`` or
        ``stderr``; with a TTY both are the terminal: ``stdout``), kept line by line
        with the clock's time (no call recorded).

        Raises:
            KeyError: there is no such container.
            ValueError: ``stream`` is neither stream.
        """
        if stream not in ("stdout", "stderr"):
            raise ValueError(f"expected stdout or stderr, got {stream!r}")
        with self._lock:
            found = self._get(ref)
            if found.spec is not None and found.spec.tty:
                stream = "stdout"
            self._journal.write(found, stream, data.encode() if isinstance(data, str) else data)

    @property
    def events(self) -> list[EngineEvent]:
        """Every engine event so far, oldest first (no call recorded)."""
        with self._lock:
            return list(self._journal.events)

    def set_exec_result(
        self, command: Sequence[str], exit_code: int, output: bytes = b"", *, seconds: float = 0.0
    ) -> None:
        """Script what ``exec`` of ``command`` (in any container) returns, and how long
        it takes: a command that takes longer than the exec's timeout gives
        ``ExecResult(-1)``, as ``DockerRuntime``'s exec does when it stops waiting (no
        time passes: the fake never sleeps)."""
        with self._lock:
            self.exec_results[tuple(command)] = ExecResult(exit_code, output)
            self._exec_seconds[tuple(command)] = seconds

    def set_exec_handler(self, command: Sequence[str], handler: _ExecHandler) -> None:
        """Script what ``exec_attached`` of ``command`` does: ``handler(stdin, output)``
        gets all of its standard input and the ``output(stream, data)`` to write to, and
        returns the exit code. Without one, ``exec_attached`` gives ``exec_results``'s."""
        with self._lock:
            self._exec_handlers[tuple(command)] = handler

    # -- the Runtime protocol ----------------------------------------------------------

    def exec_in_container(
        self, container_id: str, command: Sequence[str], timeout: float
    ) -> ExecResult:
        """The scripted result of ``command`` (``exec_results``), exit 0 by default;
        ``ExecResult(-1)`` when it is scripted to take longer than ``timeout``.

        Raises:
            RuntimeCallError: no such container, or it is not running, or it is paused
                (Docker's words: "Container <id> is not running", "Container <ref> is
                paused, unpause the container before exec").
        """
        self._sleep()
        with self._lock:
            self._record("exec", container_id, tuple(command), timeout)
            self._runnable_exec(container_id, "exec")
            if self._exec_seconds.get(tuple(command), 0.0) > timeout:
                return ExecResult(-1)  # DockerRuntime's "did not finish in time"
            return self.exec_results.get(tuple(command), ExecResult(0))

    def _runnable_exec(self, container_id: str, call: str) -> None:
        container = self._find(container_id)
        refusal = _exec_refusal(container, container_id)
        if refusal is not None:
            # Docker: 404 for no such container, 409 for one that does not run.
            status = 404 if container is None else 409
            raise RuntimeCallError.from_status(call, container_id, refusal, status)

    def exec_attached(
        self,
        container_id: str,
        command: Sequence[str],
        *,
        output: Callable[[str, bytes], None],
        stdin: IO[bytes] | None = None,
        tty: bool = False,
    ) -> int:
        """What ``set_exec_handler`` scripted for ``command``, else the ``exec_results``
        entry (its output written to stdout)."""
        data = stdin.read() if stdin is not None else b""
        self._sleep()
        with self._lock:
            self._record("exec_attached", container_id, tuple(command), tty)
            self._runnable_exec(container_id, "exec_attached")
            handler = self._exec_handlers.get(tuple(command))
            scripted = self.exec_results.get(tuple(command), ExecResult(0))
        if handler is not None:
            return handler(data, output)
        if scripted.output:
            output("stdout", scripted.output)
        return scripted.exit_code

    def container_logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        since: float | None = None,
        follow: bool = False,
    ) -> Stream[LogLine]:
        """What ``write_log`` wrote (see ``LogRuntime.container_logs``); a follower ends
        when the container stops or the stream is closed.

        Raises:
            RuntimeCallError: no such container ("No such container: <id>").
        """
        self._sleep()
        with self._lock:
            self._record("logs", container_id, tail, since, follow)
            container = self._find(container_id)
            if container is None:
                raise NotFound(
                    "logs", container_id, f"No such container: {container_id}", status_code=404
                )
            return self._journal.logs(container, tail=tail, since=since, follow=follow)

    def engine_events(
        self, *, since: float | None = None, until: float | None = None
    ) -> Stream[EngineEvent]:
        """The fake's container events in Docker's order (a stop: ``kill`` 15, ``kill`` 9
        if SIGTERM is ignored, ``die``, ``stop``; an OOM exit: ``oom``, ``die``), with the
        fake clock's times (see ``EventRuntime.engine_events``)."""
        self._sleep()
        with self._lock:
            self._record("events", since, until)
            return self._journal.follow_events(since=since, until=until)
