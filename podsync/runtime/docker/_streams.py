"""The Docker runtime's operating calls: container logs, attached exec and engine
events, on one leased ``docker.APIClient`` each.

Contract: ``podsync.docker.DockerRuntime`` leases the client and translates errors; the
functions here make the Engine API requests and read what comes back. The docker SDK's
own ``logs`` and ``exec_start`` join stdout and stderr into one stream, so the
requests are made here and the engine's "stream format" frames are read directly:
an 8-byte header (the stream: 1 stdout, 2 stderr; three zero bytes; the payload size,
big-endian) and the payload. A container or exec with a TTY sends raw bytes, all of
them stdout. Nothing is imported from the SDK at module level: the SDK is loaded only
when a runtime is built.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

from podsync.runtime._protocol import EngineEvent, LogLine
from podsync.runtime.docker._api import EVENT_FILTER, as_int, engine_event, log_line

if TYPE_CHECKING:
    from docker.types.daemon import CancellableStream

__all__ = ["STREAMS", "Opened", "StreamReader", "events", "exec_attached", "logs"]

#: The engine's stream numbers (the frame header's first byte).
STREAMS = {0: "stdin", 1: "stdout", 2: "stderr"}

# How often an attached exec asks whether its command finished after its output ended.
_POLL = 0.02

# How often a follow on podman reads the lines written since its last read (_polled).
_FOLLOW_POLL = 0.25

# How far before the newest line read each read of such a follow goes back (_polled).
_FOLLOW_OVERLAP = 1.0

# How far ahead of now podman is asked for events until (see events): long enough for
# the request to reach it before that moment passes.
_UNTIL_AHEAD = 0.5

#: What opening a stream gives: the items, and how to cancel the reading from any thread.
Opened = tuple[Iterator[Any], Callable[[], None]]


def logs(
    api: Any,
    container_id: str,
    *,
    tail: int | None,
    since: float | None,
    follow: bool,
    libpod: bool = False,
) -> tuple[Iterator[LogLine], Callable[[], None]]:
    """``GET /containers/{id}/logs`` with timestamps, both streams kept apart.

    ``libpod``: the engine is podman, whose follow (4.3) sends nothing - not even the
    answer's headers - until the container writes a line, so a follow of a quiet
    container could neither be read nor closed: there a follow is reads without it
    (``_polled``)."""
    if follow and libpod:
        return _polled(api, container_id, tail=tail, since=since)
    from docker.types.daemon import CancellableStream

    tty = bool((api.inspect_container(container_id).get("Config") or {}).get("Tty"))
    params: dict[str, Any] = {
        "stdout": 1,
        "stderr": 1,
        "timestamps": 1,
        "follow": int(follow),
        "tail": "all" if tail is None else str(max(tail, 0)),
    }
    if since is not None:
        # Docker reads "seconds.nanoseconds"; 0 would mean "unset".
        params["since"] = f"{max(since, 1e-9):.9f}"
    response = api._get(api._url("/containers/{0}/logs", container_id), params=params, stream=True)
    api._raise_for_status(response)
    if follow:
        api._disable_socket_timeout(api._get_raw_response_socket(response))
    raw = response.raw
    frames = _raw_frames(raw) if tty else _frames(raw.read)
    cancel = CancellableStream(iter(()), response)

    def lines() -> Iterator[LogLine]:
        try:
            for stream, payload in frames:
                yield log_line(STREAMS.get(stream, "stdout"), payload)
        finally:
            response.close()

    def close() -> None:
        with contextlib.suppress(Exception):
            cancel.close()
        # A stream closed before its first line never runs lines()'s finally.
        response.close()

    if libpod and tail is not None and not follow:
        return _last(lines(), max(tail, 0)), _quietly(close)
    return lines(), _quietly(close)


def _last(lines: Iterator[LogLine], count: int) -> Iterator[LogLine]:
    """The last ``count`` of ``lines`` by time, both streams together: podman (4.3)
    answers a ``tail`` of n with up to n lines of each stream (seen in CI: ``--tail 1``
    gave an older stderr line beside the last stdout line), Docker with the last n of
    the log."""
    kept = sorted(lines, key=lambda line: line.time)
    return iter(kept[len(kept) - count :] if count else [])


def _polled(
    api: Any, container_id: str, *, tail: int | None, since: float | None
) -> tuple[Iterator[LogLine], Callable[[], None]]:
    """A follow made of reads: the log as asked (``tail``, ``since``), then every
    ``_FOLLOW_POLL`` seconds the lines written since, until the container does not run
    (one more read, then the end, as a follow ends when the container exits) or is
    gone, or the follow is closed.

    Each read goes back ``_FOLLOW_OVERLAP`` seconds before the newest line read, and a
    line read before (its time, stream and bytes) is not given again: podman stamps its
    two streams apart, so a stderr line may come in a later read with a time before a
    stdout line already given (seen in CI: ``err1`` lost from ``echo out1; echo err1
    >&2``). Lines are given in time order within a read."""
    import docker.errors

    closed = threading.Event()

    def lines() -> Iterator[LogLine]:
        newest: float | None = None  # the newest line given
        floor = since  # after the first read, nothing older is given
        given: set[tuple[float, str, bytes]] = set()
        started = time.time()
        first = True
        while not closed.is_set():
            try:
                state = api.inspect_container(container_id).get("State") or {}
            except docker.errors.NotFound:
                return
            asked_since = floor
            if not first and newest is not None:
                back = newest - _FOLLOW_OVERLAP
                asked_since = back if floor is None else max(floor, back)
            batch, _ = logs(
                api,
                container_id,
                tail=tail if first else None,
                since=asked_since,
                follow=False,
                libpod=True,
            )
            for line in sorted(batch, key=lambda line: line.time):
                key = (line.time, line.stream, line.data)
                if key in given or (floor is not None and line.time < floor):
                    continue
                given.add(key)
                newest = line.time if newest is None else max(newest, line.time)
                yield line
            if first and tail is not None:
                # A tail's first read gave the last lines: what is older is not new.
                floor = started if newest is None else newest
            if newest is not None:
                given = {k for k in given if k[0] >= newest - _FOLLOW_OVERLAP}
            first = False
            if not state.get("Running"):
                return
            closed.wait(_FOLLOW_POLL)

    return lines(), closed.set


def _frames(read: Callable[[int], bytes]) -> Iterator[tuple[int, bytes]]:
    """The engine's frames from a reader that returns exactly what is asked for (or
    less at the end)."""
    while True:
        header = read(8)
        if len(header) < 8:
            return
        size = int.from_bytes(header[4:8], "big")
        payload = read(size) if size else b""
        if len(payload) < size:
            return
        yield header[0], payload


def _raw_frames(raw: Any) -> Iterator[tuple[int, bytes]]:
    """A TTY container's log: one line per log entry, as stdout (each begins with its
    timestamp, as the framed entries do)."""
    pending = b""
    while True:
        data = raw.read1(65536) if hasattr(raw, "read1") else raw.read(65536)
        if not data:
            if pending:
                yield 1, pending
            return
        pending += data
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield 1, line + b"\n"


def events(
    api: Any, *, since: float | None, until: float | None, libpod: bool = False
) -> tuple[Iterator[EngineEvent], Callable[[], None]]:
    """``GET /events`` for containers and the actions podsync reports (``EVENT_FILTER``:
    in Docker's words and podman's).

    ``libpod``: the engine is podman, whose ``/events`` (4.3) answers nothing at all
    when ``until`` has passed (measured: an ``until`` one second ago, none of the
    events before it). So podman is asked until a moment from now (``_UNTIL_AHEAD``)
    and the events after ``until`` are dropped here."""
    params: dict[str, Any] = {
        "filters": {"type": ["container"], "event": list(EVENT_FILTER)},
    }
    if since is not None:
        params["since"] = f"{max(since, 1e-9):.9f}"
    if until is not None:
        asked = max(until, time.time() + _UNTIL_AHEAD) if libpod else until
        params["until"] = f"{max(asked, 1e-9):.9f}"
    stream = api.events(decode=True, **params)
    cutoff = until if libpod else None  # Docker stops at until itself

    def items() -> Iterator[EngineEvent]:
        for message in stream:
            if isinstance(message, Mapping):
                event = engine_event(message)
                if event is not None and (cutoff is None or event.time <= cutoff):
                    yield event

    def close() -> None:
        with contextlib.suppress(Exception):
            stream.close()
        stream._response.close()

    return items(), _quietly(close)


def exec_attached(
    api: Any,
    container_id: str,
    command: list[str],
    *,
    output: Callable[[str, bytes], None],
    stdin: IO[bytes] | None,
    tty: bool,
) -> int:
    """``docker exec [-i] [-t]``: create the exec, start it on a hijacked connection,
    send ``stdin`` (then half-close: the command reads end-of-file), pass the output on
    as it comes, and return the exit code once the engine has recorded it."""
    created = api.exec_create(container_id, command, stdin=stdin is not None, tty=tty)
    exec_id = str(created["Id"])
    response = api._post_json(
        api._url("/exec/{0}/start", exec_id),
        headers={"Connection": "Upgrade", "Upgrade": "tcp"},
        data={"Tty": tty, "Detach": False},
        stream=True,
    )
    api._raise_for_status(response)
    # Read through the buffered reader the response headers came through: bytes the
    # engine sent with the headers are there (see ``StreamReader``).
    buffered = response.raw._fp.fp
    sock = api._get_raw_response_socket(response)
    api._disable_socket_timeout(sock)
    writer: threading.Thread | None = None
    if stdin is not None:
        writer = threading.Thread(
            target=_send, args=(stdin, _socket_of(sock)), name="podsync-exec-stdin", daemon=True
        )
        writer.start()
    try:
        if tty:
            while data := buffered.read1(65536):
                output("stdout", data)
        else:
            for stream, payload in _frames(_exact(buffered)):
                output(STREAMS.get(stream, "stdout"), payload)
    finally:
        # The hijacked socket outlives the response: close it as the SDK's
        # CancellableStream does (the stdin writer, if still reading, then stops).
        real = _socket_of(sock)
        with contextlib.suppress(OSError):
            real.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            real.close()
        response.close()
        if writer is not None:
            writer.join(0.1)
    while True:
        state = api.exec_inspect(exec_id)
        if not state.get("Running") and state.get("ExitCode") is not None:
            return as_int(state["ExitCode"])
        time.sleep(_POLL)


def _exact(buffered: Any) -> Callable[[int], bytes]:
    """``read(n)``: exactly ``n`` bytes, or fewer at the end of the stream."""

    def read(size: int) -> bytes:
        chunks = b""
        while len(chunks) < size:
            data = buffered.read1(size - len(chunks))
            if not data:
                break
            chunks += data
        return chunks

    return read


def _socket_of(sock: Any) -> Any:
    return getattr(sock, "_sock", sock)


def _send(stdin: IO[bytes], sock: Any) -> None:
    """Copy ``stdin`` to the exec until its end, then half-close the connection."""
    read = getattr(stdin, "read1", None) or stdin.read
    with contextlib.suppress(OSError, ValueError):
        while data := read(65536):
            sock.sendall(data)
        if hasattr(sock, "shutdown_write"):  # paramiko, over ssh://
            sock.shutdown_write()
        else:
            sock.shutdown(socket.SHUT_WR)


def _quietly(close: Callable[[], object]) -> Callable[[], None]:
    """``close``, ignoring what a connection that is gone already raises."""

    def run() -> None:
        with contextlib.suppress(Exception):
            close()

    return run


class StreamReader(threading.Thread):
    """Reads an exec's output on its own thread, so that the caller can stop waiting.

    The docker SDK has no exec timeout, but its stream can be closed from another thread
    (``CancellableStream.close`` shuts the socket down), which ends the read.

    The output frames are read here rather than by the SDK: the SDK reads the hijacked
    socket itself (``response.raw._fp.fp.raw``), behind the buffered reader http.client
    read the response headers through, so bytes the engine sent together with the
    headers - the whole output of a quick command, on a loaded machine - are lost
    (docker/docker-py#2042 and #3332; here, under load, 5 to 17 of 192 concurrent
    ``echo`` execs came back empty, and none with this reader). Reading the buffered
    reader (``_fp.fp``: the SDK's own path, one step short) returns those bytes first.
    Over ``ssh://`` there is no buffered reader, and the SDK's reading is used.
    """

    def __init__(self, stream: CancellableStream[bytes]) -> None:
        super().__init__(name="podsync-exec-reader", daemon=True)
        self._stream = stream
        response = getattr(stream, "_response", None)  # internals, as the SDK's own
        buffered = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
        self._response = response
        self._buffered = buffered if hasattr(buffered, "read1") else None
        self._chunks: list[bytes] = []
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            if self._buffered is not None:
                self._read_frames(self._buffered)
            else:
                for chunk in self._stream:
                    self._chunks.append(bytes(chunk))
        except (OSError, ValueError):
            # The socket was shut down (cancel), timed out (the client's timeout: a
            # command silent that long), or closed: the output ends here, and the exec's
            # state says how the command ended.
            pass
        except BaseException as exc:  # re-raised on the caller's thread
            self._error = exc
        finally:
            self._close()

    def _read_frames(self, source: Any) -> None:
        # Engine API "stream format" (no TTY): frames of an 8-byte header - the stream
        # (0 stdin, 1 stdout, 2 stderr), three zero bytes, the payload size as a
        # big-endian uint32 - and the payload. stdout and stderr are kept interleaved.
        pending = b""
        while True:
            data = source.read1(65536)
            if not data:
                return
            pending += data
            while len(pending) >= 8:
                size = int.from_bytes(pending[4:8], "big")
                if len(pending) < 8 + size:
                    break
                self._chunks.append(pending[8 : 8 + size])
                pending = pending[8 + size :]

    def output(self) -> bytes:
        return b"".join(list(self._chunks))

    def raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def cancel(self) -> None:
        self._close()
        self.join(1.0)

    def _close(self) -> None:
        # close() shuts the socket down (over ssh:// the SDK cannot, and raises
        # DockerException: the reader then ends when the command does). It skips a
        # response urllib3 saw end, whose hijacked connection stays open: closing the
        # response closes that (the SDK's non-streaming exec_start does the same).
        with contextlib.suppress(Exception):
            self._stream.close()
        if self._response is not None:
            with contextlib.suppress(Exception):
                self._response.close()
