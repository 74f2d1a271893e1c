"""The status board of the continuous loop (``podsync run``): what the loop reports, and
what its HTTP endpoints read.

The loop's threads write to a ``LoopBoard`` (a source was read or failed, a sync round
ended, an action ended, the latest pod statuses, the pods' latest usage); ``serve``
answers ``/healthz``, ``/pods`` and ``/metrics`` from it. The board is thread-safe:
every write and every read holds one lock, so a read never sees half a write; and no
read does more under it than copy - ``/metrics`` is rendered from a snapshot of plain
numbers after the lock is let go, so a slow or frequent scraper never holds up the loop.

Health is the kubelet's ``syncloop`` health check (``syncLoopHealthCheck``,
``pkg/kubelet/server/server.go``; ``Kubelet.SyncLoopHealthCheck`` in
``pkg/kubelet/kubelet.go`` today): it fails when the sync loop has not come round for two
resync intervals. podsync asks it of *successful* syncs - a loop that runs but cannot
reach the engine, or cannot read its pods, is not keeping the host in shape - without
the kubelet's floor of 5 minutes (issue 17: two sync periods), and before the first sync
it fails (the kubelet passes until its loop is first entered: "not yet" is not "ok" for
a supervisor that waits for the host to be in shape). One failed round within two
periods of a good one is not yet a failure.

Metrics are rendered by ``prometheus_client`` (the optional ``metrics`` extra:
``pip install 'podsync[metrics]'``) into a ``CollectorRegistry`` made for each scrape:
podsync registers nothing in the process-global default registry, so an embedder's
metrics and two boards in one process never mix. Without the extra the board keeps
everything else and ``metrics_text`` returns ``None``.

The pods' usage (``usage_seen``, every usage period) is exported under cAdvisor's names,
so that dashboards made for the kubelet's ``/metrics/cadvisor`` read it:
``container_cpu_usage_seconds_total`` (a counter: the CPU seconds the last reading
counted) and ``container_memory_working_set_bytes`` (a gauge), labelled ``namespace``,
``pod``, ``container`` and ``id`` (``_usage_report.usage_rows``: a pod's own row has
``container=""``, the host's ``id="/"``; the network container is ``container="net"``).
"""

from __future__ import annotations

import contextlib
import http.server
import ipaddress
import math
import socket
import socketserver
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from podsync.host._clock import Clock, system_monotonic, system_time
from podsync.loop._usage_report import USAGE_LABELS, usage_rows
from podsync.model._usage import PodUsage, UsageFigures
from podsync.status._json import statuses_to_json
from podsync.status._pod import PodPhase, PodStatus

__all__: list[str] = []

#: The results ``LoopBoard.action_done`` counts (``ActionStatus.DONE`` is ``ok``).
ACTION_RESULTS = ("ok", "failed", "skipped")

#: What ``/metrics`` says when the ``metrics`` extra is not installed.
METRICS_MISSING = (
    "podsync's metrics need the prometheus_client package: pip install 'podsync[metrics]'\n"
)

#: The buckets of the sync-duration histogram, in seconds: a round of a steady host takes
#: milliseconds (one list call), one that pulls images or waits for a grace period
#: seconds to minutes; prometheus_client's default buckets end at 10 s.
SYNC_DURATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@attrs.frozen
class Health:
    """What ``/healthz`` answers.

    Attributes:
        ok: the last successful sync completed within two sync periods.
        reason: ``ok``, or why not, for people: ``no sync has completed yet``,
            ``last sync failed: <message> (...)``, or ``last successful sync 25.0s ago,
            more than two sync periods (2 x 10s)``.
    """

    ok: bool
    reason: str


@attrs.define
class _Counts:
    """The board's metrics as plain numbers: written under the board's lock, copied under
    it (``copy``), and rendered from the copy outside it (``_render``), so that a scrape
    never holds the lock the loop's threads write under while it formats text and reads
    ``/proc``.

    Attributes:
        durations: how many sync rounds took at most each of ``SYNC_DURATION_BUCKETS``
            and more than the last (not cumulative: one count per bucket, then ``+Inf``).
        duration_sum: the seconds of every sync round.
        rounds: sync rounds by result (``ok``, ``failed``).
        actions: actions by (kind, result).
        pods: pods by phase, as the last round saw them.
        source_errors: failed reads by source label.
        source_up: 1 or 0 by source label.
        last_success: the Unix time of the last successful round (0: none yet).
        usage: the rows of the usage metrics (``usage_rows``) of the last
            ``usage_seen``; empty before.
    """

    durations: list[int] = attrs.Factory(lambda: [0] * (len(SYNC_DURATION_BUCKETS) + 1))
    duration_sum: float = 0.0
    # Every series that exists from the start is exported from the start, at 0, so that
    # rate() and "== 0" alerts work before the first event.
    rounds: dict[str, int] = attrs.Factory(lambda: {"ok": 0, "failed": 0})
    actions: dict[tuple[str, str], int] = attrs.Factory(dict)
    pods: dict[str, int] = attrs.Factory(lambda: {phase.value: 0 for phase in PodPhase})
    source_errors: dict[str, int] = attrs.Factory(dict)
    source_up: dict[str, int] = attrs.Factory(dict)
    last_success: float = 0.0
    usage: tuple[tuple[tuple[str, str, str, str], UsageFigures], ...] = ()

    def observe(self, duration: float) -> None:
        index = next(
            (i for i, bound in enumerate(SYNC_DURATION_BUCKETS) if duration <= bound),
            len(SYNC_DURATION_BUCKETS),
        )
        self.durations[index] += 1
        self.duration_sum += duration

    def copy(self) -> _Counts:
        return attrs.evolve(
            self,
            durations=list(self.durations),
            rounds=dict(self.rounds),
            actions=dict(self.actions),
            pods=dict(self.pods),
            source_errors=dict(self.source_errors),
            source_up=dict(self.source_up),
        )


def _render(counts: _Counts) -> str:
    """``counts`` in the Prometheus text format, through ``prometheus_client``, in a
    registry made for this one scrape (podsync registers nothing in the process-global
    one), with the process's own CPU time, memory and open files (read from ``/proc``
    now: what the loop costs at idle)."""
    import prometheus_client as pc
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
    )
    from prometheus_client.utils import floatToGoString

    def families() -> Iterator[Any]:
        cumulative, buckets = 0, []
        for bound, count in zip((*SYNC_DURATION_BUCKETS, math.inf), counts.durations, strict=True):
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))  # type: ignore[no-untyped-call]
        yield HistogramMetricFamily(
            "podsync_sync_duration_seconds",
            "Duration of podsync's sync rounds (observe, plan, apply).",
            buckets=buckets,
            sum_value=counts.duration_sum,
        )
        for name, doc, labels, values, family in (
            ("podsync_sync_rounds", "Sync rounds, by result (ok or failed).", ["result"],
             {(k,): v for k, v in counts.rounds.items()}, CounterMetricFamily),
            ("podsync_actions", "Actions applied to the engine, by kind (pull, create, "
             "kill, ...) and result (ok, failed or skipped).", ["kind", "result"],
             counts.actions, CounterMetricFamily),
            ("podsync_pods", "Pods, by phase, as the last sync round saw them.", ["phase"],
             {(k,): v for k, v in counts.pods.items()}, GaugeMetricFamily),
            ("podsync_source_errors", "Failed reads of a pod source (the source keeps its "
             "last good pods), by source.", ["source"],
             {(k,): v for k, v in counts.source_errors.items()}, CounterMetricFamily),
            ("podsync_source_up", "1 when the last read of the source succeeded, 0 when "
             "it failed.", ["source"],
             {(k,): v for k, v in counts.source_up.items()}, GaugeMetricFamily),
        ):  # fmt: skip
            metric = family(name, doc, labels=labels)
            for key, value in values.items():
                metric.add_metric(list(key), value)
            yield metric
        yield GaugeMetricFamily(
            "podsync_last_successful_sync_timestamp_seconds",
            "Unix time the last successful sync round completed (0: none yet).",
            value=counts.last_success,
        )
        cpu = CounterMetricFamily(
            "container_cpu_usage_seconds_total",
            "Cumulative CPU time consumed in seconds (cAdvisor's name), as the last usage "
            "reading of the loop counted it.",
            labels=USAGE_LABELS,
        )
        memory = GaugeMetricFamily(
            "container_memory_working_set_bytes",
            "Current working set in bytes: usage minus inactive file cache (cAdvisor's "
            "name), as the last usage reading of the loop saw it.",
            labels=USAGE_LABELS,
        )
        for row, figures in counts.usage:
            if figures.cpu_seconds is not None:
                cpu.add_metric(list(row), figures.cpu_seconds)
            memory.add_metric(list(row), figures.memory_working_set)
        yield cpu
        yield memory

    class _Snapshot:
        def collect(self) -> Iterator[Any]:
            return families()

    registry = pc.CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot())
    pc.ProcessCollector(registry=registry)
    # Typed here: without the extra installed, mypy sees prometheus_client as Any.
    exposition: bytes = pc.generate_latest(registry)
    return exposition.decode("utf-8")


def _have_metrics() -> bool:
    try:
        import prometheus_client  # noqa: F401
    except ImportError:  # the ``metrics`` extra is not installed
        return False
    return True


def _source_label(source: str) -> str:
    """``source`` as a metric label: an HTTP(S) URL without its credentials - the
    password of ``user:password@`` and the values of its query (``?token=...``) are
    replaced by ``***`` - since ``/metrics`` is read by whoever scrapes it."""
    parts = urllib.parse.urlsplit(source)
    if parts.scheme.lower() not in ("http", "https"):
        return source
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:***@{host}" if ":" in user else netloc
    query = "&".join(
        f"{key}=***" if sep else key
        for key, sep, _ in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))


class LoopBoard:
    """The loop's status board (thread-safe): the loop writes, the HTTP server reads.

    Args:
        sync_period: the loop's sync period in seconds; health fails when the last
            successful sync is more than two periods old.
        clock: a monotonic clock, read for the age of the last sync (the system's
            monotonic clock by default, so a step of the wall clock changes no age).
        wall_clock: seconds since the epoch, read once per successful sync for the
            ``podsync_last_successful_sync_timestamp_seconds`` metric (the system's
            clock by default).

    Raises:
        ValueError: ``sync_period`` is not a positive, finite number of seconds.
    """

    def __init__(
        self,
        sync_period: float,
        *,
        clock: Clock | None = None,
        wall_clock: Clock | None = None,
    ) -> None:
        if not (sync_period > 0 and math.isfinite(sync_period)):
            raise ValueError(
                f"the sync period must be a positive number of seconds, got {sync_period!r}"
            )
        self._period = float(sync_period)
        self._clock = clock or system_monotonic
        self._wall_clock = wall_clock or system_time
        self._lock = threading.Lock()
        self._last_success: float | None = None  # monotonic
        self._last_failure: str | None = None  # the message of the last round, if it failed
        self._statuses: tuple[PodStatus, ...] | None = None
        self._counts = _Counts()
        self._metrics = _have_metrics()

    # --- the loop's side ------------------------------------------------------------

    def source_ok(self, source: str) -> None:
        """``source`` was read (its pods are current)."""
        label = _source_label(source)
        with self._lock:
            self._counts.source_up[label] = 1

    def source_error(self, source: str, message: str) -> None:
        """``source`` could not be read or parsed (``message`` says why); the loop keeps
        its last good pods."""
        del message  # logged by the loop; a metric label must not carry free text
        label = _source_label(source)
        with self._lock:
            counts = self._counts
            counts.source_errors[label] = counts.source_errors.get(label, 0) + 1
            counts.source_up[label] = 0

    def sync_done(self, duration: float, ok: bool, message: str = "") -> None:
        """A sync round ended, after ``duration`` seconds; ``ok`` False when it failed
        (``message`` says why: shown by ``/healthz``).

        Raises:
            ValueError: ``duration`` is negative or not a number.
        """
        if not duration >= 0:
            raise ValueError(f"a sync duration is 0 or more seconds, got {duration!r}")
        with self._lock:
            if ok:
                self._last_success = self._clock()
                self._last_failure = None
                self._counts.last_success = self._wall_clock()
            else:
                self._last_failure = message or "(no message)"
            self._counts.observe(duration)
            self._counts.rounds["ok" if ok else "failed"] += 1

    def action_done(self, kind: str, result: str) -> None:
        """An action of ``kind`` (the loop's name for it: ``pull``, ``create``, ``kill``,
        ...: a label, taken as given) ended with ``result``: ``ok``, ``failed`` or
        ``skipped``.

        Raises:
            ValueError: ``result`` is none of those.
        """
        if result not in ACTION_RESULTS:
            raise ValueError(
                f"an action result is one of {', '.join(ACTION_RESULTS)}, got {result!r}"
            )
        with self._lock:
            actions = self._counts.actions
            actions[kind, result] = actions.get((kind, result), 0) + 1

    def pods_seen(self, statuses: Sequence[PodStatus]) -> None:
        """The latest statuses of the pods (replacing the previous ones)."""
        kept = tuple(statuses)
        counts = {phase.value: 0 for phase in PodPhase}
        for status in kept:
            counts[status.phase.value] += 1
        with self._lock:
            self._statuses = kept
            self._counts.pods = counts

    def usage_seen(self, pods: Sequence[PodUsage], node: UsageFigures | None) -> None:
        """The pods' latest usage and the host's (``None``: not known), replacing the
        previous: ``/metrics``' ``container_*`` rows."""
        rows = tuple(usage_rows(pods, node))
        with self._lock:
            self._counts.usage = rows

    # --- the server's side -----------------------------------------------------------

    def health(self) -> Health:
        """Whether the last successful sync completed within two sync periods, and why
        not."""
        with self._lock:
            last_success, failure = self._last_success, self._last_failure
            now = self._clock()
        if last_success is not None and now - last_success <= 2 * self._period:
            return Health(True, "ok")
        since = (
            "no successful sync yet"
            if last_success is None
            else f"last successful sync {now - last_success:.1f}s ago"
        )
        if failure is not None:
            return Health(False, f"last sync failed: {failure} ({since})")
        if last_success is None:
            return Health(False, "no sync has completed yet")
        return Health(False, f"{since}, more than two sync periods (2 x {self._period:g}s)")

    def pods_json(self) -> str | None:
        """The latest pod statuses in their JSON form (``podsync status --json``'s:
        ``statuses_to_json``), or ``None`` before the loop has seen any - an empty
        list would say that no pods run."""
        with self._lock:
            kept = self._statuses
        return None if kept is None else statuses_to_json(kept)

    def metrics_text(self) -> str | None:
        """The metrics in the Prometheus text format, or ``None`` without the
        ``metrics`` extra (``prometheus_client``)."""
        if not self._metrics:
            return None
        with self._lock:
            snapshot = self._counts.copy()
        return _render(snapshot)  # outside the lock: the loop's writes never wait for it


# --- the HTTP server -------------------------------------------------------------------

#: The media type of ``prometheus_client.generate_latest``'s output: the Prometheus text
#: format 0.0.4 (what ``prometheus_client``'s own servers send with it).
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Seconds between the server's checks for ``close()``: the most ``close`` waits.
_POLL_INTERVAL = 0.2

#: Seconds a connection may wait for each read of its request: a client that connects
#: and says nothing does not hold a thread for ever.
_REQUEST_TIMEOUT = 10.0

#: Seconds a whole connection may last, its request read and its answer written: a
#: client that sends a byte now and then (slow loris), or reads its answer as slowly,
#: is cut off then, whatever the per-read timeout.
REQUEST_DEADLINE = 10.0

#: Connections answered at once; one more is answered ``503`` and closed at once, so
#: that clients that hold connections open cannot take a thread (and memory) each
#: without end.
MAX_CONNECTIONS = 16

#: Said once (``serve``'s ``on_warning``) when the address is not a loopback one.
NO_AUTH_WARNING = (
    "--listen {address}: not a loopback address; /healthz, /pods and /metrics have no "
    "authentication, and show pod names, images and error messages to whoever reaches it"
)

_BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 32\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    b"too many connections: try again\n"
)


def parse_listen_address(text: str) -> tuple[str, int]:
    """``(host, port)`` of a ``--listen`` address: ``HOST:PORT``, ``[IPV6]:PORT``, or
    ``:PORT`` or ``PORT`` alone (the IPv4 loopback ``127.0.0.1``, never every
    interface). Port 0 asks the kernel for a free port.

    Raises:
        ValueError: not one of those forms, or the port is not 0-65535; the message
            says which form was expected.
    """
    form = "expected HOST:PORT, [IPV6]:PORT, :PORT or PORT"
    if text.isascii() and text.isdigit():
        text = f":{text}"  # a port alone: loopback, as ``:PORT``
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1 : end + 2] != ":":
            raise ValueError(f"bad listen address {text!r}: {form}")
        host, port = text[1:end], text[end + 2 :]
    else:
        host, colon, port = text.rpartition(":")
        if not colon:
            raise ValueError(f"bad listen address {text!r}: {form}")
        if ":" in host:
            raise ValueError(
                f"bad listen address {text!r}: an IPv6 address goes in brackets, e.g. [::1]:PORT"
            )
    if not (port.isascii() and port.isdigit() and int(port) <= 65535):
        raise ValueError(f"bad listen address {text!r}: the port is a number from 0 to 65535")
    return host or "127.0.0.1", int(port)


class _Server(http.server.ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` of the address's family (IPv4 or IPv6), that does not
    look its own name up in DNS when it binds (``HTTPServer.server_bind`` calls
    ``getfqdn``, which can hang on a host without working DNS)."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        family: socket.AddressFamily,
        board: LoopBoard,
        log: Callable[[str], None] | None,
        *,
        max_connections: int = MAX_CONNECTIONS,
        deadline: float = REQUEST_DEADLINE,
    ) -> None:
        self.address_family = family
        self.board = board
        self.log = log
        self.deadline = deadline
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Answer in a thread of its own while fewer than ``max_connections`` are being
        answered; else ``503`` at once (a write of one small packet to a socket buffer
        that is empty: it does not block) and close."""
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(0)
                request.send(_BUSY)
            self.shutdown_request(request)
            if self.log is not None:
                self.log(f"{client_address[0]} refused: too many connections")
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """socketserver's own, but the slot is free again *before* the connection is
        closed: a client that sees the end of its answer and connects at once must find
        the slot it just left (socketserver closes first, so it could find none)."""
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self._slots.release()
            self.shutdown_request(request)

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: object, client_address: Any) -> None:
        """A request that failed outside the handler's answer (a client that reset its
        connection, say): to ``log``, never to stderr (socketserver's default prints a
        traceback there)."""
        del request
        error = sys.exc_info()[1]
        if self.log is not None:
            self.log(f"{client_address[0]} error: {type(error).__name__}: {error}")


class _Handler(http.server.BaseHTTPRequestHandler):
    """``GET /healthz``, ``/pods`` and ``/metrics``; 404 elsewhere, 405 for other methods
    on those paths."""

    server: _Server
    server_version = "podsync"
    sys_version = ""
    timeout = _REQUEST_TIMEOUT
    _PATHS = ("/healthz", "/pods", "/metrics")

    def setup(self) -> None:
        # The whole connection's deadline: when it passes, the socket is shut down,
        # which wakes the read or write this thread is blocked in (it then ends).
        self._deadline = threading.Timer(self.server.deadline, self._expire)
        self._deadline.daemon = True
        self._deadline.start()
        super().setup()

    def _expire(self) -> None:
        if self.server.log is not None:
            self.server.log(f"{self.client_address[0]} cut off: over {self.server.deadline:g}s")
        with contextlib.suppress(OSError):
            self.request.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        self._deadline.cancel()
        with contextlib.suppress(OSError):  # the deadline shut the socket down
            super().finish()

    def do_GET(self) -> None:
        try:
            self._get()
        except (ConnectionError, TimeoutError):
            raise  # the client went away: nothing to answer (``handle_error`` logs it)
        except Exception as error:  # a bug: answer it, and keep serving
            self.log_message("error answering %s: %s", self.path, error)
            self._reply(500, f"internal error: {error}")

    def _get(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        board = self.server.board
        if path == "/healthz":
            health = board.health()
            self._reply(200 if health.ok else 503, health.reason)
        elif path == "/pods":
            pods = board.pods_json()
            if pods is None:
                self._reply(503, "no pod statuses yet: the loop has not observed the engine")
            else:
                self._reply(200, pods, "application/json")
        elif path == "/metrics":
            metrics = board.metrics_text()
            if metrics is None:
                self._reply(501, METRICS_MISSING)
            else:
                self._reply(200, metrics, METRICS_CONTENT_TYPE)
        else:
            self._reply(404, f"not found: {path} (try /healthz, /pods or /metrics)")

    def _other_method(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        if path in self._PATHS:
            self._reply(405, f"method {self.command} not allowed: only GET", allow=True)
        else:
            self._reply(404, f"not found: {path} (try /healthz, /pods or /metrics)")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _other_method

    def _reply(
        self,
        code: int,
        body: str,
        content_type: str = "text/plain; charset=utf-8",
        *,
        allow: bool = False,
    ) -> None:
        data = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        if allow:
            self.send_header("Allow", "GET")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """To the server's ``log`` callback, not to stderr (the base class's default)."""
        if self.server.log is not None:
            self.server.log(f"{self.address_string()} {format % args}")


class BoardServer:
    """A running ``serve``: ``address`` is where it listens, ``close()`` stops it.

    A context manager: leaving the ``with`` block closes it.
    """

    def __init__(self, server: _Server) -> None:
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": _POLL_INTERVAL},
            name="podsync-http",
            daemon=True,
        )
        self._closed = False
        self._close_lock = threading.Lock()
        host, port = server.server_address[:2]
        #: ``(host, port)`` the server listens on (the port the kernel chose for 0).
        self.address: tuple[str, int] = (str(host), int(port))
        self._thread.start()

    def close(self) -> None:
        """Stop taking requests and close the socket, within about 0.2 s; requests
        being answered end on their own (their threads are daemons). A second call
        does nothing."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> BoardServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def serve(
    board: LoopBoard,
    address: str,
    *,
    log: Callable[[str], None] | None = None,
    on_warning: Callable[[str], object] | None = None,
    max_connections: int = MAX_CONNECTIONS,
    deadline: float = REQUEST_DEADLINE,
) -> BoardServer:
    """Answer ``GET /healthz``, ``/pods`` and ``/metrics`` from ``board`` on ``address``,
    from a daemon thread, until the handle's ``close()``.

    * ``/healthz``: 200 ``ok``, or 503 with the reason (``LoopBoard.health``);
    * ``/pods``: 200 with the latest pod statuses as JSON (``podsync status --json``'s
      document), or 503 before the loop has observed the engine;
    * ``/metrics``: 200 in the Prometheus text format, or 501 saying what to install
      when the ``metrics`` extra is not;
    * 404 for any other path; 405 (``Allow: GET``) for another method on those paths.

    The endpoints have no authentication: they show pod names, images and error
    messages. Listen on a loopback address (``127.0.0.1``, ``[::1]``; ``:PORT`` and
    ``PORT`` mean ``127.0.0.1``) unless the network that reaches the address is
    trusted; another address, or ``0.0.0.0``, is taken as given, and ``on_warning`` is
    told that it has no authentication.

    Args:
        board: what to answer from.
        address: ``HOST:PORT``, ``[IPV6]:PORT``, ``:PORT`` or ``PORT``
            (``parse_listen_address``).
        log: called with one line per request (client, request line, status) and per
            error; ``None`` (the default) logs nothing - never to stderr.
        on_warning: told once (``NO_AUTH_WARNING``) when the address is not a loopback
            one (``0.0.0.0`` and ``[::]`` included).
        max_connections: connections answered at once; one more is answered ``503``
            and closed.
        deadline: seconds a whole connection may last (request read, answer written);
            then it is cut off (slow-loris safe).

    Raises:
        ValueError: a malformed address.
        OSError: the address cannot be listened on (in use, not the host's, ...).
    """
    host, port = parse_listen_address(address)
    family, _, _, _, sockaddr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    if max_connections < 1 or not deadline > 0:
        raise ValueError("max_connections must be 1 or more, and deadline positive seconds")
    if on_warning is not None and not ipaddress.ip_address(str(sockaddr[0])).is_loopback:
        on_warning(NO_AUTH_WARNING.format(address=address))
    server = _Server(
        (str(sockaddr[0]), port),
        family,
        board,
        log,
        max_connections=max_connections,
        deadline=deadline,
    )
    return BoardServer(server)
