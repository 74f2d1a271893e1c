"""The HTTP endpoints of ``podsync run --listen`` (``podsync.loop._board.serve``): real HTTP on
the loopback interface, port 0 (the kernel picks a free port).

These tests do real I/O with timeouts of their own, so they are ``real_clock`` (the
board's clocks are still fake: no answer depends on how fast the machine is). The
address parser is pure and tested without a server.
"""

from __future__ import annotations

import http.client
import json
import socket
import struct
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from podsync.loop._board import LoopBoard, parse_listen_address, serve
from podsync.testing import FakeClock
from tests.unit.loop.test_board import statuses

# Never through a proxy of the environment (http_proxy): these requests go to loopback.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
TIMEOUT = 10.0


def get(url: str, method: str = "GET") -> tuple[int, dict[str, str], str]:
    """(status, headers, body) of a request, whatever the status."""
    request = urllib.request.Request(url, method=method)
    try:
        with OPENER.open(request, timeout=TIMEOUT) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read().decode()


def new_board() -> LoopBoard:
    return LoopBoard(10.0, clock=FakeClock(0.0, step=0), wall_clock=FakeClock(1e9, step=0))


@pytest.fixture
def board() -> LoopBoard:
    return new_board()


@pytest.fixture
def url(board: LoopBoard) -> Iterator[str]:
    handle = serve(board, "127.0.0.1:0")
    try:
        host, port = handle.address
        assert host == "127.0.0.1"
        yield f"http://127.0.0.1:{port}"
    finally:
        handle.close()


# --- the address ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:10255", ("127.0.0.1", 10255)),
        # no host: loopback, never every interface
        (":10255", ("127.0.0.1", 10255)),
        ("[::1]:10255", ("::1", 10255)),
        ("localhost:8080", ("localhost", 8080)),
        # every interface, when asked for in so many words
        ("0.0.0.0:10255", ("0.0.0.0", 10255)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        # a port alone: loopback too
        ("10255", ("127.0.0.1", 10255)),
    ],
)
def test_listen_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen_address(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("99999", "port"),
        ("127.0.0.1", "HOST:PORT"),
        ("127.0.0.1:", "port"),
        ("127.0.0.1:http", "port"),
        ("127.0.0.1:65536", "port"),
        ("127.0.0.1:-1", "port"),
        ("::1:10255", r"\[::1\]:PORT"),
        ("[::1]10255", "HOST:PORT"),
        ("[::1:10255", "HOST:PORT"),
        ("", "HOST:PORT"),
    ],
)
def test_bad_listen_addresses_are_refused_with_the_form_expected(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_listen_address(text)


# --- the endpoints -------------------------------------------------------------------------


@pytest.mark.real_clock
def test_healthz_is_503_with_the_reason_until_a_sync_succeeds(board: LoopBoard, url: str) -> None:
    before = get(f"{url}/healthz")
    board.sync_done(0.2, ok=True)
    after = get(f"{url}/healthz")

    assert (before[0], before[2]) == (503, "no sync has completed yet")
    assert before[1]["Content-Type"] == "text/plain; charset=utf-8"
    assert (after[0], after[2]) == (200, "ok")


@pytest.mark.real_clock
def test_healthz_ignores_a_query_string(board: LoopBoard, url: str) -> None:
    board.sync_done(0.2, ok=True)

    assert get(f"{url}/healthz?verbose=1")[0] == 200


@pytest.mark.real_clock
def test_pods_answer_the_status_json(board: LoopBoard, url: str) -> None:
    before = get(f"{url}/pods")
    board.pods_seen(statuses())
    status, headers, body = get(f"{url}/pods")

    assert before[0] == 503
    assert "not observed" in before[2]
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert [p["pod"] for p in json.loads(body)["pods"]] == ["default/web", "default/migrate"]


@pytest.mark.real_clock
def test_metrics_answer_the_prometheus_text_format(board: LoopBoard, url: str) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    board.sync_done(0.2, ok=True)
    board.action_done("create", "ok")
    status, headers, body = get(f"{url}/metrics")

    values = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert values[("podsync_sync_rounds_total", (("result", "ok"),))] == 1
    assert values[("podsync_actions_total", (("kind", "create"), ("result", "ok")))] == 1


@pytest.mark.real_clock
def test_without_the_metrics_extra_metrics_is_501_and_the_rest_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m.split(".")[0] == "prometheus_client"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # type: ignore[arg-type]
    board = new_board()
    board.sync_done(0.2, ok=True)
    board.pods_seen(statuses())
    handle = serve(board, "127.0.0.1:0")
    try:
        base = f"http://127.0.0.1:{handle.address[1]}"
        metrics = get(f"{base}/metrics")
        health = get(f"{base}/healthz")
        pods = get(f"{base}/pods")
    finally:
        handle.close()

    assert metrics[0] == 501
    assert "pip install 'podsync[metrics]'" in metrics[2]
    assert (health[0], pods[0]) == (200, 200)


@pytest.mark.real_clock
@pytest.mark.parametrize("path", ["/", "/healthz/", "/health", "/pods/default/web", "/metricsx"])
def test_other_paths_are_404(url: str, path: str) -> None:
    assert get(f"{url}{path}")[0] == 404


@pytest.mark.real_clock
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
def test_other_methods_are_405_with_allow_get(board: LoopBoard, url: str, method: str) -> None:
    board.sync_done(0.2, ok=True)

    status, headers, _ = get(f"{url}/healthz", method=method)

    assert status == 405
    assert headers["Allow"] == "GET"


@pytest.mark.real_clock
def test_requests_are_not_logged_to_stderr_by_default(
    board: LoopBoard, url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    get(f"{url}/healthz")
    get(f"{url}/nowhere")

    assert capfd.readouterr().err == ""


@pytest.mark.real_clock
def test_requests_are_logged_through_the_callback(
    board: LoopBoard, capfd: pytest.CaptureFixture[str]
) -> None:
    lines: list[str] = []
    handle = serve(board, "127.0.0.1:0", log=lines.append)
    try:
        get(f"http://127.0.0.1:{handle.address[1]}/healthz")
    finally:
        handle.close()

    assert len(lines) == 1
    assert lines[0].startswith("127.0.0.1 ")
    assert '"GET /healthz HTTP/1.1" 503' in lines[0]
    assert capfd.readouterr().err == ""


@pytest.mark.real_clock
def test_no_host_listens_on_loopback(board: LoopBoard) -> None:
    handle = serve(board, ":0")
    try:
        host, port = handle.address
        status, _, _ = get(f"http://127.0.0.1:{port}/healthz")
    finally:
        handle.close()

    assert host == "127.0.0.1"
    assert status == 503


@pytest.mark.real_clock
def test_ipv6_loopback(board: LoopBoard) -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    board.sync_done(0.2, ok=True)
    handle = serve(board, "[::1]:0")
    try:
        host, port = handle.address
        connection = http.client.HTTPConnection("::1", port, timeout=TIMEOUT)
        try:
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            answer = (response.status, response.read().decode())
        finally:
            connection.close()
    finally:
        handle.close()

    assert host == "::1"
    assert answer == (200, "ok")


@pytest.mark.real_clock
def test_close_stops_the_server_promptly(board: LoopBoard) -> None:
    import time

    handle = serve(board, "127.0.0.1:0")
    port = handle.address[1]
    assert get(f"http://127.0.0.1:{port}/healthz")[0] == 503

    started = time.monotonic()
    handle.close()
    took = time.monotonic() - started
    handle.close()  # a second close does nothing

    # The server polls for shutdown every 0.2 s; 2 s leaves room for a loaded machine.
    assert took < 2.0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT).close()


@pytest.mark.real_clock
def test_the_handle_is_a_context_manager(board: LoopBoard) -> None:
    with serve(board, "127.0.0.1:0") as handle:
        port = handle.address[1]
        assert get(f"http://127.0.0.1:{port}/healthz")[0] == 503

    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT).close()


@pytest.mark.real_clock
def test_an_address_in_use_is_an_oserror(board: LoopBoard) -> None:
    with serve(board, "127.0.0.1:0") as handle, pytest.raises(OSError, match="in use"):
        serve(board, f"127.0.0.1:{handle.address[1]}")


@pytest.mark.real_clock
def test_requests_from_many_threads_while_the_loop_writes(board: LoopBoard, url: str) -> None:
    import concurrent.futures

    seen = statuses()

    def ask(n: int) -> int:
        board.pods_seen(seen[: n % 3])
        board.sync_done(0.01, ok=True)
        return get(f"{url}/{['healthz', 'pods', 'metrics'][n % 3]}")[0]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(ask, range(60)))

    assert set(codes) == {200}


class BrokenBoard(LoopBoard):
    """A board whose pods cannot be rendered (a bug, say): the server must answer, and
    say nothing on stderr."""

    def pods_json(self) -> str | None:
        raise RuntimeError("cannot render the pods")


@pytest.mark.real_clock
def test_an_error_while_answering_is_a_500_logged_through_the_callback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    board = BrokenBoard(10.0, clock=FakeClock(0.0, step=0), wall_clock=FakeClock(1e9, step=0))
    lines: list[str] = []
    with serve(board, "127.0.0.1:0", log=lines.append) as handle:
        status, _, body = get(f"http://127.0.0.1:{handle.address[1]}/pods")
        health = get(f"http://127.0.0.1:{handle.address[1]}/healthz")[0]

    assert (status, body) == (500, "internal error: cannot render the pods")
    assert health == 503  # the server goes on
    assert any("cannot render the pods" in line for line in lines)
    assert capfd.readouterr().err == ""


@pytest.mark.real_clock
def test_a_client_that_goes_away_leaves_nothing_on_stderr(
    board: LoopBoard, capfd: pytest.CaptureFixture[str]
) -> None:
    """A client that resets its connection before the answer: writing it fails in the
    handler's thread, which socketserver would report on stderr."""
    import time

    board.pods_seen(statuses() * 200)  # an answer that takes a moment to render
    linger_zero = struct.pack("ii", 1, 0)  # close() sends a reset, not a polite FIN
    with serve(board, "127.0.0.1:0") as handle:
        for _ in range(5):
            client = socket.create_connection(("127.0.0.1", handle.address[1]), timeout=TIMEOUT)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger_zero)
            client.sendall(b"GET /pods HTTP/1.1\r\nHost: x\r\n\r\n")
            client.close()
        # the handlers' threads are daemons: wait for them, or their errors come later
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and any(
            "process_request_thread" in t.name for t in threading.enumerate()
        ):
            time.sleep(0.05)
        assert get(f"http://127.0.0.1:{handle.address[1]}/healthz")[0] == 503

    assert capfd.readouterr().err == ""


# --- the cap on connections, the deadline, the warning (issue 28) --------------------------


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    return sock


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.real_clock
def test_beyond_the_cap_a_connection_is_503_and_the_others_are_still_answered(
    board: LoopBoard,
) -> None:
    board.sync_done(0.2, ok=True)
    handle = serve(board, "127.0.0.1:0", max_connections=2, deadline=30)
    port = handle.address[1]
    held = [_connect(port), _connect(port)]  # say nothing: each holds a slot
    try:
        # Each held connection has its thread (and slot) once the server accepted it:
        # a third is accepted after them, and finds none free.
        for sock in held:
            sock.sendall(b"GET /healthz HTTP/1.0\r\n")  # an unfinished request
        with _connect(port) as third:
            busy = _answer(third)
        held[0].sendall(b"\r\n")  # one finishes: its slot is free again
        first = _answer(held[0])
        after = get(f"http://127.0.0.1:{port}/healthz")
    finally:
        for sock in held:
            sock.close()
        handle.close()

    assert busy.startswith(b"HTTP/1.0 503 Service Unavailable\r\n")
    assert busy.endswith(b"\r\n\r\ntoo many connections: try again\n")
    assert first.startswith(b"HTTP/1.0 200 OK\r\n")
    assert after[0] == 200


@pytest.mark.real_clock
@pytest.mark.parametrize(
    ("case", "deadline", "cut"),
    [("slow-loris-cut-off", 0.5, True), ("in-time-answered", 5.0, False)],
    ids=["slow-loris-cut-off", "in-time-answered"],
)
def test_a_whole_request_has_a_deadline_however_often_bytes_come(
    board: LoopBoard, case: str, deadline: float, cut: bool
) -> None:
    """A client that sends one byte every 0.1 s never meets the per-read timeout; the
    whole connection's deadline cuts it off all the same."""
    del case
    board.sync_done(0.2, ok=True)
    handle = serve(board, "127.0.0.1:0", deadline=deadline)
    sent = 0
    try:
        with _connect(handle.address[1]) as sock:
            request = b"GET /healthz HTTP/1.0\r\nX-Pad: " + b"a" * 12 + b"\r\n\r\n"
            ended = threading.Event()
            try:
                for byte in request:
                    sock.sendall(bytes([byte]))
                    sent += 1
                    if ended.wait(0.1):
                        break
            except OSError:
                pass  # the server shut the connection down
            answer = _answer(sock)
    finally:
        handle.close()

    if cut:
        # 0.5 s at 10 bytes a second: cut off well before the 39 bytes are in.
        assert answer == b""
        assert sent < 20
    else:
        assert answer.startswith(b"HTTP/1.0 200 OK\r\n")
        assert sent == len(request)


@pytest.mark.real_clock
@pytest.mark.parametrize(
    ("address", "warned"),
    [("127.0.0.1:0", False), ("0", False), ("[::1]:0", False), ("0.0.0.0:0", True)],
    ids=["loopback-v4", "port-alone", "loopback-v6", "every-interface"],
)
def test_listening_off_loopback_warns_there_is_no_authentication(
    board: LoopBoard, address: str, warned: bool
) -> None:
    warnings: list[str] = []
    try:
        handle = serve(board, address, on_warning=warnings.append)
    except OSError as exc:  # no IPv6 on this host
        pytest.skip(f"cannot listen on {address}: {exc}")
    handle.close()

    if warned:
        assert warnings == [
            f"--listen {address}: not a loopback address; /healthz, /pods and /metrics have "
            "no authentication, and show pod names, images and error messages to whoever "
            "reaches it"
        ]
    else:
        assert warnings == []


@pytest.mark.real_clock
def test_metrics_are_rendered_outside_the_boards_lock(
    board: LoopBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a scrape renders (held here), the loop's writes go on; the scrape shows the
    snapshot taken before them."""
    import podsync.loop._board as module

    rendering, release = threading.Event(), threading.Event()
    real_render = module._render

    def slow_render(counts: object) -> str:
        rendering.set()
        assert release.wait(TIMEOUT)
        return real_render(counts)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "_render", slow_render)
    board.sync_done(0.2, ok=True)
    scraped: list[str | None] = []
    scrape = threading.Thread(target=lambda: scraped.append(board.metrics_text()))
    scrape.start()
    assert rendering.wait(TIMEOUT)
    writer = threading.Thread(target=lambda: board.sync_done(0.2, ok=False, message="x"))
    writer.start()
    writer.join(TIMEOUT)
    written = not writer.is_alive()
    release.set()
    scrape.join(TIMEOUT)

    assert written  # the write did not wait for the scrape
    assert scraped[0] is not None
    assert 'podsync_sync_rounds_total{result="failed"} 0.0' in scraped[0]
    assert 'podsync_sync_rounds_total{result="failed"} 1.0' in (board.metrics_text() or "")
