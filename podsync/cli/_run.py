"""``podsync run``: the continuous loop (``podsync.Reconciler``) on the command line.

The loop runs in its thread; the command's thread blocks SIGTERM and SIGINT and waits
for one of them (``signal.sigwait``), so that no signal handler ever interrupts a thread
holding a lock. Then the loop stops - no new work, the syncs in progress get
``--shutdown-timeout`` to finish their engine calls - and the command exits 0: the
pods keep running, as the kubelet leaves them when it exits.

Logs go to standard error, one line per apply event (as ``apply``'s progress, JSON
with ``--log-format json``) and per loop notice: a source error (once per error: a
source that stays broken is not logged again at every poll), a failed sync, the
engine back, a rejected pod, the stop.

Reporting (``podsync.HostReporter``): a run whose source is an etcd host key
(``etcd://EP/registry/hosts/<host>/kubelet``) reports to that host's prefix
(``etcd://EP/registry/hosts/<host>``) with the same ``--etcd-*`` options; ``--report-to``
gives the prefix for any run (or another one), ``--no-report`` turns it off. The
reporter is a second board of the loop beside ``--listen``'s; it is closed after the
loop stopped, so that the loop's last events are written before the heartbeat's lease
is revoked (the host is NotReady at once on a clean stop).
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
from collections.abc import Callable
from typing import Protocol

from podsync.applier._results import Event
from podsync.cli._args import EXIT_OK, _Failure
from podsync.cli._console import Console, event_record, event_text
from podsync.cli._etcd import etcd_options
from podsync.cli._planning import _given, _host_key, _plan_options, _root_dir
from podsync.cli._source_args import http_options
from podsync.exceptions import EtcdError
from podsync.load._sources import shown_url
from podsync.loop._reconciler import Reconciler
from podsync.loop._reporting import Board, LoopNotice, NoticeKind
from podsync.report._reporter import HostReporter, report_target, report_target_of_source
from podsync.runtime._protocol import Runtime

__all__: list[str] = []

# The notices that are errors (the rest are information).
_ERRORS = frozenset({NoticeKind.SOURCE_ERROR, NoticeKind.SYNC_ERROR, NoticeKind.INTERNAL_ERROR})
_WARNINGS = frozenset({NoticeKind.REJECTED, NoticeKind.EVENTS_ERROR, NoticeKind.USAGE_ERROR})
_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})


def cmd_run(
    args: argparse.Namespace, console: Console, factory: Callable[[str | None], Runtime]
) -> int:
    """Run the loop until SIGTERM or SIGINT; 0 once it stopped."""
    options = _plan_options(args, console)
    board, server = _listen(args, console)

    def on_event(event: Event) -> None:
        if console.json:
            line = json.dumps(event_record(event), ensure_ascii=False)
            with console.lock:
                print(line, file=console.err, flush=True)
            return
        target = f"{event.pod}/{event.container}" if event.pod and event.container else event.pod
        text = event_text(event)
        console.note(f"{target}: {text}" if target else text)

    def on_notice(notice: LoopNotice) -> None:
        fields = {"loop": notice.kind.value, "source": notice.source, "pod": notice.pod}
        if notice.kind in _ERRORS:
            if console.json:
                console.record("error", notice.message, **fields)
            else:
                console.error(notice.message)
        elif notice.kind in _WARNINGS:
            message = f"{notice.pod}: {notice.message}" if notice.pod else notice.message
            console.warning(message, **fields)
        elif console.json:
            console.record(notice.kind.value, notice.message, **fields)
        else:
            console.note(f"podsync: {notice.message}")

    def on_warning(line: str) -> None:
        console.warning(line)

    etcd = etcd_options(args, console.warning)
    report_to, said_as = _report_to(args)
    runtime = factory(args.docker_host)
    reporter: HostReporter | None = None
    boards: list[Board] = [board] if board is not None else []
    if report_to is not None:
        try:
            reporter = HostReporter(
                report_to,
                etcd=etcd,
                runtime=runtime,
                lease_ttl=args.report_ttl,
                event_ttl=max(1, round(args.event_ttl)),
                on_warning=on_warning,
                wall_clock=console.clocks.now,
            )
        except (ValueError, EtcdError) as exc:
            runtime.close()
            raise _Failure(f"{said_as}: {exc}") from None
        boards.append(reporter)
    try:
        reconciler = Reconciler(
            args.sources,
            runtime,
            options,
            sync_period=args.sync_period,
            source_period=args.source_period,
            gc_period=args.gc_period,
            workers=args.workers,
            probe=not _given(args, "no_probe", False),
            hook_timeout=args.hook_timeout,
            max_bytes=args.max_bytes if args.max_bytes is not None else _default_max_bytes(),
            on_warning=on_warning,
            board=boards,
            on_event=on_event,
            on_notice=on_notice,
            clock=console.clocks.given,
            shutdown_timeout=args.shutdown_timeout,
            usage_period=args.usage_period,
            # Secret values are digested under the host's key, as plan and apply do.
            secret_key=_host_key(_root_dir(args)),
            etcd=etcd,
            http=http_options(args),
        )
    except (ValueError, EtcdError) as exc:
        runtime.close()
        if reporter is not None:
            reporter.close()
        raise _Failure(str(exc)) from None
    # Blocked before the loop's threads start: they inherit the mask, so the signal
    # goes to this thread's sigwait and nowhere else.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        if reporter is not None:
            reporter.start()
        with reconciler:
            signal.sigwait(_SIGNALS)
    finally:
        # A second SIGTERM or Ctrl-C while the loop stopped: already done as asked.
        while signal.sigpending() & _SIGNALS:
            signal.sigwait(_SIGNALS)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if reporter is not None:
            reporter.close()
        runtime.close()
        if server is not None:
            server.close()
    return EXIT_OK


def _report_to(args: argparse.Namespace) -> tuple[str | None, str]:
    """Where the run reports - ``--report-to``, else the host prefix of its etcd host-key
    source (the first), else nowhere; nowhere with ``--no-report`` - and what an error
    of it names (the flag, or the source).

    Raises:
        _Failure: a bad ``--report-to`` (named), or ``--report-to`` with ``--no-report``.
    """
    given = getattr(args, "report_to", None)
    if getattr(args, "report_ttl", 2) < 2:
        raise _Failure(f"--report-ttl must be at least 2 seconds, got {args.report_ttl}")
    if getattr(args, "no_report", False):
        if given is not None:
            raise _Failure("--report-to and --no-report: give one")
        return None, ""
    if given is not None:
        try:
            report_target(given)
        except ValueError as exc:
            raise _Failure(f"--report-to: {exc}") from None
        return str(given), "--report-to"
    for source in args.sources:
        implied = report_target_of_source(source)
        if implied is not None:
            return implied, shown_url(source)
    return None, ""


def _default_max_bytes() -> int:
    from podsync.load._sources import DEFAULT_MAX_BYTES

    return DEFAULT_MAX_BYTES


class _Server(Protocol):
    def close(self) -> None: ...


def _listen(args: argparse.Namespace, console: Console) -> tuple[Board | None, _Server | None]:
    """The status board and its HTTP server, with ``--listen``; else neither."""
    if not args.listen:
        return None, None
    try:
        # By name: the board is another module's (issue 17's status board).
        _board = importlib.import_module("podsync.loop._board")
    except ImportError:
        raise _Failure(
            "--listen needs the status board (podsync.loop._board), which this build lacks"
        ) from None
    board: Board = _board.LoopBoard(
        sync_period=args.sync_period, clock=console.clocks.elapsed, wall_clock=console.clocks.now
    )
    try:
        server: _Server = _board.serve(board, args.listen, on_warning=console.warning)
    except (OSError, ValueError) as exc:
        raise _Failure(f"cannot listen on {args.listen}: {exc}") from None
    return board, server
