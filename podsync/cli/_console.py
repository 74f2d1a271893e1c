"""The command line's console: what ``podsync`` writes, and where.

Results (the plan, the apply summary, the ``--wait`` report) go to standard output;
progress (one line per apply event, or a bar on a terminal), warnings and errors go to
standard error - as text, or with ``--log-format json`` as one JSON object per line.
Nothing here decides anything: the commands (``podsync.cli``) say what to write, this
module says how it looks.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from podsync.actions._actions import Plan, Wait, shorten_ids
from podsync.actions._options import PlanOptions
from podsync.applier._results import ActionStatus, ApplyResult, Event, EventKind
from podsync.exceptions import PodsyncError, RuntimeCallError
from podsync.host._clock import Clock, clocks
from podsync.model._pod import Pod

# The command line's own helpers: none of them is part of the podsync API.
__all__: list[str] = []


class Console:
    """Where a command writes: results to stdout; progress, warnings and errors to
    stderr, as text or as JSON lines (``--log-format json``). It carries the command's
    clocks (``main``'s ``clock``), which stamp its lines and time its plans and waits."""

    def __init__(self, log_format: str = "text", clock: Clock | None = None) -> None:
        self.json = log_format == "json"
        self.lock = threading.Lock()
        self.clocks = clocks(clock)

    @property
    def out(self) -> IO[str]:
        return sys.stdout

    @property
    def err(self) -> IO[str]:
        return sys.stderr

    def print(self, text: str = "") -> None:
        """A result, on stdout."""
        with self.lock:
            print(text, file=self.out, flush=True)

    def print_chunks(self, chunks: Iterable[str]) -> None:
        """A result written in pieces as they come (a large plan's JSON), on stdout."""
        with self.lock:
            out = self.out
            for chunk in chunks:
                out.write(chunk)
            out.flush()

    def record(self, kind: str, message: str = "", **fields: Any) -> None:
        """One JSON line on stderr (JSON log format only)."""
        data: dict[str, Any] = {"time": round(self.clocks.now(), 6), "kind": kind}
        data.update(fields)
        data["message"] = message
        line = json.dumps(data, ensure_ascii=False)
        with self.lock:
            print(line, file=self.err, flush=True)

    def _text(self, prefix: str, message: str) -> None:
        with self.lock:
            for line in message.splitlines() or [""]:
                print(f"{prefix}{line}", file=self.err, flush=True)

    def error(self, message: str, **fields: Any) -> None:
        """``message`` on stderr; under ``--log-format json`` with ``fields`` too."""
        if self.json:
            self.record("error", message, **fields)
        else:
            self._text("podsync: error: ", message)

    def internal_error(self, message: str) -> None:
        if self.json:
            self.record("internal-error", message)
        else:
            self._text("podsync: internal error: ", message)

    @contextlib.contextmanager
    def library_warnings(self) -> Iterator[None]:
        """While in the block, what the library logs as a warning or worse on the
        ``podsync`` logger (a runtime's one-time notice: an engine that cannot lower OOM
        scores) is this console's warning - a JSON line under ``--log-format json`` -
        rather than a bare line from Python's last-resort handler."""
        logger = logging.getLogger("podsync")
        handler = _ToConsole(self)
        logger.addHandler(handler)
        propagate, logger.propagate = logger.propagate, False
        try:
            yield
        finally:
            logger.removeHandler(handler)
            logger.propagate = propagate

    def warning(self, message: str, **fields: Any) -> None:
        if self.json:
            self.record("warning", message, **fields)
        else:
            self._text("podsync: warning: ", message)

    def note(self, message: str, **fields: Any) -> None:
        """Progress that is not an apply event (waiting, re-syncing)."""
        if self.json:
            self.record("info", message, **fields)
        else:
            self._text("", message)


def _target(event: Event) -> str:
    if event.pod and event.container:
        return f"{event.pod}/{event.container}"
    return event.pod


def event_record(event: Event) -> dict[str, Any]:
    """An apply event as the JSON object ``--log-format json`` writes."""
    return {
        "time": round(event.time, 6),
        "kind": event.kind.value,
        "pod": event.pod,
        "pod_uid": event.pod_uid,
        "container": event.container,
        "container_id": event.container_id,
        "reason": event.reason.value if event.reason is not None else None,
        "message": event.message,
    }


# apply's kill and removal messages name the container in full ("stop default/web/app
# (k8s_...): why"); the line already names the pod container, so the CLI keeps the why.
# Ids are never read from messages: the event carries the container's id.
_BECAUSE = re.compile(r"^\S+ \S+ \(\S+\): (.+)$")


def event_text(event: Event) -> str:
    """An event's message for a progress line (after its pod/container): short ids,
    and no repeated container name."""
    kind = event.kind
    if kind in (EventKind.CREATED, EventKind.STARTED, EventKind.ADOPTED) and event.container_id:
        return f"{kind.value} ({shorten_ids(event.container_id)})"
    if kind in (EventKind.STOPPING, EventKind.REMOVED):
        match = _BECAUSE.match(event.message)
        if match:
            return f"{kind.value}: {shorten_ids(match.group(1))}"
    elif kind is EventKind.FAILED:
        return f"failed: {shorten_ids(event.message)}"
    return shorten_ids(event.message)


# The events that end an action, for the progress bar's count: a pull, a create (its
# start, or the adoption of a racing apply's container), a stop (counted when it
# begins), a removal, a teardown, a failure, a volume's create, a volume's files.
_ENDS_ACTION = frozenset(
    {
        EventKind.PULLED,
        EventKind.STARTED,
        EventKind.ADOPTED,
        EventKind.STOPPING,
        EventKind.REMOVED,
        EventKind.POD_DIR_REMOVED,
        EventKind.IMAGE_REMOVED,
        EventKind.FAILED,
        EventKind.VOLUME_CREATED,
        EventKind.VOLUME_WRITTEN,
        EventKind.VOLUME_REMOVED,
    }
)


class Progress:
    """Reports apply events on stderr while a plan is applied.

    * ``--log-format json``: every event as one JSON line;
    * a terminal: one line, redrawn in place - a bar, the count of actions done and the
      latest event - with failures kept above it;
    * otherwise (a pipe, a CI log): one line per event, with the seconds since the start.

    ``apply`` calls it from its worker threads, one call at a time.
    """

    def __init__(self, console: Console, total: int, *, terminal: bool | None = None) -> None:
        self.console = console
        self.total = total
        self.done = 0
        self.started = console.clocks.elapsed()
        if terminal is None:
            terminal = is_terminal(console.err)
        self.bar = terminal and not console.json
        self.drawn = False
        # After a failed postStart handler apply reports hook-failed, killing and
        # failed for the same action: count that action once.
        self.hook_failed: set[tuple[str, str, str]] = set()

    def __call__(self, event: Event) -> None:
        if self.console.json:
            line = json.dumps(event_record(event), ensure_ascii=False)
            with self.console.lock:
                print(line, file=self.console.err, flush=True)
            return
        self._count(event)
        text = self._line(event)
        if not self.bar:
            elapsed = self.console.clocks.elapsed() - self.started
            with self.console.lock:
                print(f"[{elapsed:5.1f}s] {text}", file=self.console.err, flush=True)
            return
        if event.kind in (EventKind.FAILED, EventKind.HOOK_FAILED):
            self._clear()
            with self.console.lock:
                print(text, file=self.console.err, flush=True)
        self._draw(text)

    def _count(self, event: Event) -> None:
        key = (event.pod_uid, event.pod, event.container)
        if event.kind is EventKind.HOOK_FAILED and event.message.startswith("postStart"):
            self.hook_failed.add(key)
            return
        if key in self.hook_failed and event.kind in (EventKind.STOPPING, EventKind.FAILED):
            if event.kind is EventKind.FAILED:
                self.hook_failed.discard(key)
            return
        if event.kind in _ENDS_ACTION:
            self.done = min(self.done + 1, self.total)

    @staticmethod
    def _line(event: Event) -> str:
        target = _target(event)
        message = event_text(event)
        return f"{target}: {message}" if target else message

    def _draw(self, text: str) -> None:
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        filled = (10 * self.done) // self.total if self.total else 10
        line = f"[{'#' * filled}{'.' * (10 - filled)}] {self.done}/{self.total} {text}"
        with self.console.lock:
            self.console.err.write("\r" + line[:width] + "\x1b[K")
            self.console.err.flush()
        self.drawn = True

    def _clear(self) -> None:
        if self.drawn:
            with self.console.lock:
                self.console.err.write("\r\x1b[K")
                self.console.err.flush()
            self.drawn = False

    def close(self) -> None:
        """Remove the bar (a terminal); the summary follows on stdout."""
        self._clear()


def is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


def changes(the_plan: Plan) -> int:
    """The actions of ``the_plan`` that change something (waits do not)."""
    return sum(not isinstance(a, Wait) for a in the_plan.actions)


def report_apply(console: Console, result: ApplyResult, *, verb: str, summary: bool = True) -> None:
    """The summary of an applied plan (stdout; not with ``summary`` false: ``-o``
    prints a document there instead), then its failures and the pods whose actions were
    skipped after a failure (stderr)."""
    counts = dict.fromkeys(ActionStatus, 0)
    for r in result.results:
        if not isinstance(r.action, Wait):
            counts[r.status] += 1
    done, failed, skipped = (
        counts[ActionStatus.DONE],
        counts[ActionStatus.FAILED],
        counts[ActionStatus.SKIPPED],
    )
    outcome = "complete!" if result.ok else "failed!"
    if summary:
        console.print(
            f"{verb} {outcome} {done} done, {failed} failed, {skipped} skipped "
            f"in {result.duration:.1f}s."
        )
    if console.json:
        console.record(
            "summary",
            f"{verb.lower()} {'complete' if result.ok else 'failed'}",
            done=done,
            failed=failed,
            skipped=skipped,
            duration=round(result.duration, 3),
        )
    for r in result.failures:
        # The text is ActionResult.error: the exception's, with the Secret values the
        # action holds masked (apply's rule); a JSON line adds what a program reads
        # instead of the text.
        error = r.error
        console.error(
            f"{shorten_ids(r.action.message)}: {shorten_ids(error)}", **_error_fields(r.exception)
        )
    skipped_pods = sorted({r.pod for r in result.results if r.status is ActionStatus.SKIPPED})
    if skipped_pods:
        console.warning(
            "actions skipped after a failure, for: "
            + ", ".join(p or "(engine)" for p in skipped_pods)
        )


def warn_rejected(console: Console, the_plan: Plan) -> None:
    """One warning per pod the plan rejected."""
    for r in the_plan.rejected:
        console.warning(
            f"pod {r.pod} is rejected and left alone: {r.message} [{r.reason.value}]",
            pod=r.pod,
            reason=r.reason.value,
        )


def warn_unpublished_ports(console: Console, pods: Sequence[Pod], options: PlanOptions) -> None:
    """In network mode none, a warning per pod with host ports: they are not published
    (a pod on the host's network is not in that mode: its ports are the host's own)."""
    if options.network_mode != "none":
        return
    for pod in pods:
        if pod.security_context is not None and pod.security_context.host_network:
            continue
        ports = sorted({p.host_port for c in pod.containers for p in c.ports if p.host_port})
        if ports:
            listed = ", ".join(str(p) for p in ports)
            console.warning(
                f"pod {pod.key}: host port(s) {listed} are recorded but not published "
                "in network mode none",
                pod=pod.key,
            )


class _ToConsole(logging.Handler):
    """A logging handler that hands each record to ``Console.warning``."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self._console = console

    def emit(self, record: logging.LogRecord) -> None:
        self._console.warning(record.getMessage())


def _error_fields(exception: PodsyncError | None) -> dict[str, Any]:
    """What a JSON error line says of a failed action's exception: its class, and a
    runtime call's operation, target and the engine's status code."""
    if exception is None:
        return {}
    fields: dict[str, Any] = {"error": type(exception).__name__}
    if isinstance(exception, RuntimeCallError):
        fields["operation"] = exception.operation
        fields["target"] = shorten_ids(exception.target)
        fields["status_code"] = exception.status_code
    return fields
