"""What the continuous loop reports (``Reconciler`` inherits ``Reporter``), and to whom.

Two audiences. The log, through ``on_notice``: a ``LoopNotice`` of a ``NoticeKind`` for
what happens to the loop itself (a source in error and fine again, a failed round and
the engine back, a rejected pod, the event stream broken, a bug caught, stopping),
beside apply's ``Event``s, one line each. And a status board (``Board``, which
``podsync.loop._board.LoopBoard`` is), told of each source read, each round and how
long it took, each action's kind (``action_kind``) and result, and after each round the
statuses of the desired pods and of the orphans - and, every usage period, the pods'
CPU and memory when the board has ``usage_seen`` (``_usage_report``).

The loop reports to any number of boards (``Reconciler(board=...)`` takes one or a
sequence: the status board of ``--listen`` and a ``podsync.HostReporter`` side by
side), each told the same, in order. Besides ``Board``'s methods, a board may have the
optional ones of ``OPTIONAL_BOARD_METHODS`` - ``event_seen(event)`` (each apply
``Event``, beside ``on_event``), ``notice_seen(notice)`` (each ``LoopNotice``, beside
``on_notice``) and ``desired_seen(pods)`` (the desired pods of each round, before its
``pods_seen``: what a reporter scrubs Secret values with) - called on the boards that
have them; ``usage_seen`` is a board's own (the resource usage scraper calls it).

Contract: ``on_notice`` (and ``on_event``) get one call at a time, from any of the
loop's threads; a board's methods are called from those threads as they report, and a
board that raises is reported, never fatal to the loop (a ``notice_seen`` that raises
is reported to ``on_notice`` alone: no board is told of its own failure in a circle).
"""

from __future__ import annotations

import enum
import re
import threading
from collections.abc import Callable, Collection, Sequence
from typing import Protocol

import attrs

from podsync.actions._actions import Action, Plan
from podsync.actions._options import PlanOptions
from podsync.applier._results import ActionStatus, Event
from podsync.loop._sync import SyncResult
from podsync.loop._usage_report import UsageBoard, UsageReader
from podsync.model._pod import Pod
from podsync.model._pulls import PullFailure
from podsync.runtime._protocol import UsageRuntime
from podsync.status._pod import PodStatus, orphaned_pod_statuses, pod_status

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["LoopNotice", "NoticeKind"]


class NoticeKind(enum.StrEnum):
    """What a ``LoopNotice`` says."""

    SOURCE_ERROR = "source-error"  # a source cannot be used as it is: it keeps its pods
    SOURCE_OK = "source-ok"  # a source in error is fine again
    SYNC_ERROR = "sync-error"  # a round failed (engine away, root directory): retried
    ENGINE_BACK = "engine-back"  # a round succeeded after failures
    REJECTED = "rejected"  # a desired pod is not admitted (reported when it changes)
    EVENTS_ERROR = "events-error"  # the engine's event stream broke: followed again
    INTERNAL_ERROR = "internal-error"  # a bug in the loop or a job: reported, loop goes on
    STOPPING = "stopping"  # stop() was called
    STOPPED = "stopped"  # the loop ended (``message`` says what was left running)
    SOURCE_REREAD = "source-reread"  # an etcd watch's revision was compacted: read again
    USAGE_ERROR = "usage-error"  # the pods' usage could not be read: tried next period


@attrs.frozen
class LoopNotice:
    """Something the loop reports besides apply events (``on_notice``; a log line).

    Attributes:
        kind: what happened.
        message: for people.
        source: the source it is about, or "".
        pod: the pod key it is about, or "".
    """

    kind: NoticeKind
    message: str
    source: str = ""
    pod: str = ""


class Board(Protocol):
    """What the loop reports to a status board (``podsync.loop._board.LoopBoard``); each
    method is called from the loop's threads and must be thread-safe and quick.

    A board may also have ``usage_seen(pods, node)`` (``UsageBoard``: not a member, so
    a board without it is still one): the pods' ``PodUsage`` and the host's
    ``UsageFigures`` every usage period, after a round's ``pods_seen``, when the runtime
    is a ``UsageRuntime``.
    """

    def source_ok(self, source: str) -> None: ...

    def source_error(self, source: str, message: str) -> None: ...

    def sync_done(self, duration: float, ok: bool, message: str = "") -> None: ...

    def action_done(self, kind: str, result: str) -> None: ...

    def pods_seen(self, statuses: Sequence[PodStatus]) -> None: ...


#: The methods a board may lack: each is called on the boards that have it.
#: ``event_seen(event: Event)``, ``notice_seen(notice: LoopNotice)``,
#: ``desired_seen(pods: Sequence[Pod])``.
OPTIONAL_BOARD_METHODS = frozenset({"event_seen", "notice_seen", "desired_seen", "usage_seen"})


def boards_of(board: Board | Sequence[Board] | None) -> tuple[Board, ...]:
    """``Reconciler``'s ``board=`` as a tuple: none, one, or the sequence given."""
    if board is None:
        return ()
    if isinstance(board, Sequence) and not isinstance(board, str):
        return tuple(board)
    return (board,)


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
# An action's result as the board counts it.
_RESULTS = {ActionStatus.DONE: "ok", ActionStatus.FAILED: "failed", ActionStatus.SKIPPED: "skipped"}


class Reporter:
    """The reporting half of ``Reconciler``: its notices, what it tells the board, and
    which rejections it said last. The state is ``Reconciler``'s (made in its
    ``__init__``)."""

    _boards: tuple[Board, ...]
    _on_notice: Callable[[LoopNotice], None] | None
    _on_event: Callable[[Event], None] | None
    _report_lock: threading.Lock  # one callback at a time
    _rejected: dict[str, str]  # the rejections said last, by pod uid
    _usage: UsageReader  # the usage readings between reports

    def _notice(self, kind: NoticeKind, message: str, *, source: str = "", pod: str = "") -> None:
        """A ``LoopNotice`` to ``on_notice``, one call at a time (from any thread), and
        to the boards' ``notice_seen``."""
        notice = LoopNotice(kind, message, source, pod)
        self._tell(notice)
        self._report("notice_seen", notice)

    def _tell(self, notice: LoopNotice) -> None:
        if self._on_notice is not None:
            with self._report_lock:
                self._on_notice(notice)

    def _report(self, method: str, *args: object) -> None:
        """``method`` of each board called with ``args`` (an optional method on the
        boards that have it); a board that raises is reported (``internal-error``),
        and the loop and the other boards go on."""
        for board in self._boards:
            handler = getattr(board, method, None)
            if handler is None and method in OPTIONAL_BOARD_METHODS:
                continue
            try:
                if handler is None:
                    raise AttributeError(f"{type(board).__name__} has no {method}")
                handler(*args)
            except Exception as exc:  # a board's bug must not stop the loop
                failed = f"board.{method} failed: {exc}"
                if method == "notice_seen":
                    self._tell(LoopNotice(NoticeKind.INTERNAL_ERROR, failed))
                else:
                    self._notice(NoticeKind.INTERNAL_ERROR, failed)

    def _report_usage(
        self, runtime: object, result: SyncResult, options: PlanOptions, now: float
    ) -> None:
        """``usage_seen`` of the boards that have it, with the usage of podsync's running containers
        that the round observed, when a board has it, the runtime can read usage
        and a usage period has passed by ``now`` (the loop's elapsed seconds); a read
        that fails is a ``usage-error`` notice."""
        wanted = any(isinstance(board, UsageBoard) for board in self._boards)
        if not wanted or not isinstance(runtime, UsageRuntime):
            return
        if not self._usage.due(now):
            return
        try:
            pods, node = self._usage.read(
                runtime,
                result.observation.containers,
                adopt_2014_containers=options.adopt_2014_containers,
                scope=options.scope,
            )
        except Exception as exc:  # the engine away, a runtime's bug: next period
            self._notice(NoticeKind.USAGE_ERROR, f"cannot read usage: {type(exc).__name__}: {exc}")
            return
        self._report("usage_seen", pods, node)

    def _job_failed(self, key: str, exc: BaseException) -> None:
        """The workers' ``on_error``: a job that raised (a pod's sync, the image
        cleanup) is reported (``internal-error``); the workers, and the loop, go on."""
        self._notice(
            NoticeKind.INTERNAL_ERROR, f"sync of {key} failed: {type(exc).__name__}: {exc}"
        )

    def _report_rejections(self, plan: Plan) -> None:
        """A ``rejected`` notice for each pod the round's ``plan`` rejects, when its
        rejection is new or says something else than the round before: said once, not
        every round."""
        now = {r.uid: f"{r.pod}: {r.message}" for r in plan.rejected}
        for r in plan.rejected:
            if self._rejected.get(r.uid) != now[r.uid]:
                self._notice(NoticeKind.REJECTED, r.message, pod=r.pod)
        self._rejected = now


def action_kind(action: Action) -> str:
    """An action's kind as the board counts it: its class name in kebab case
    (``pull``, ``create``, ``kill``, ``remove-pod-dir``, ``create-volume``)."""
    return _CAMEL.sub("-", type(action).__name__).lower()


def _statuses(
    desired: Sequence[Pod],
    result: SyncResult,
    options: PlanOptions,
    pull_failures: Collection[PullFailure] = (),
) -> list[PodStatus]:
    """The statuses of the desired pods and of the orphans, from the round's plan (and
    the failed pulls it was made with: ``ErrImagePull``)."""
    containers = result.observation.containers
    statuses = [
        pod_status(
            pod,
            containers,
            plan=result.plan,
            options=options,
            readiness=result.readiness,
            startup=result.startup,
            pull_failures=pull_failures,
        )
        for pod in desired
    ]
    statuses.extend(orphaned_pod_statuses(containers, desired, options=options))
    return statuses
