"""What applying a plan did: each action's result, the whole apply's, and its events.

These types describe; they do nothing. ``podsync.applier._apply`` makes them as it runs a plan
(``ActionResult`` per action, ``ApplyResult`` for the plan, ``Event`` as things
happen), ``podsync.loop._sync`` reports its probes' failures as ``Event``s too, and the
command line, the loop and the fleet read them. Programs read the fields, never the
messages, which are for people.

Layering: the apply side (it reads the system clock for an ``Event`` made without a
time, through ``podsync.host._clock``); it imports the vocabulary (``podsync.actions._actions``),
never the planner, and nothing that runs a plan.
"""

from __future__ import annotations

import enum

import attrs

from podsync.actions._actions import (
    Action,
    Kill,
    Pull,
    Reason,
    Remove,
    RemoveImage,
    RemovePodDir,
    WriteVolume,
)
from podsync.exceptions import PodsyncError
from podsync.host._clock import system_time

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "ActionResult",
    "ActionStatus",
    "ApplyResult",
    "Event",
    "EventKind",
]


class ActionStatus(enum.StrEnum):
    """What became of an action."""

    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"  # not run: an earlier action of its pod, or a pull it needs, failed


class EventKind(enum.StrEnum):
    """The kinds of ``Event`` (the seed's event recorder reasons, lower-cased)."""

    PULLED = "pulled"  # an image was pulled
    CREATED = "created"  # a container was created
    ADOPTED = "adopted"  # a create found its container made already (a racing apply)
    STARTED = "started"  # a container was started
    STOPPING = "stopping"  # a container is about to be stopped (a ``Kill``: see ``VERBS``)
    # The old name of STOPPING (its value was "killing"), an alias kept for the public
    # API: a ``Kill`` stops a container gracefully, and its message says "stop".
    KILLING = "stopping"
    REMOVED = "removed"  # an exited container was removed
    POD_DIR_REMOVED = "pod-dir-removed"  # a pod directory was torn down
    VOLUME_WRITTEN = "volume-written"  # a volume's files were written (``WriteVolume``)
    IMAGE_REMOVED = "image-removed"  # an image was removed
    FAILED = "failed"  # an action failed (the message is the error)
    HOOK_FAILED = "hook-failed"  # a postStart or preStop handler failed
    UNHEALTHY = "unhealthy"  # a probe failed (sync)
    PROBE_ERROR = "probe-error"  # a probe could not be run (sync)
    VOLUME_CREATED = "volume-created"  # a named volume was created (a claim's, an emptyDir's)
    VOLUME_REMOVED = "volume-removed"  # a named volume of a pod was removed


@attrs.frozen
class Event:
    """Something that happened while applying, as the seed sent to its event recorder.

    The message is for people; programs read the fields (never parse the message).

    Attributes:
        kind: what happened.
        pod: the pod key (``namespace/name``), for people; the pod uid for a pod known
            only by its directory; empty for image pulls and removals.
        container: the pod container's name (``net`` for the network container); empty
            when the event is not about one container.
        message: the details, for people.
        time: when it happened, seconds since the epoch (read from ``apply``'s clock;
            the system clock when an event is made without one).
        pod_uid: the pod's identity (two sources can hold pods of one key); empty for
            image pulls and removals.
        container_id: the engine's id of the container; empty when the event is not
            about one container, or when a create failed before there was one.
        reason: the reason code of the plan action the event is about (``Reason``);
            ``None`` when the event is about no plan action.
        exception: for a ``FAILED`` event, the exception the action failed with (as
            ``ActionResult.exception``); ``None`` otherwise. Not compared: two events
            are equal whatever exception objects they carry.
    """

    kind: EventKind
    pod: str
    container: str
    message: str
    time: float = attrs.Factory(system_time)
    pod_uid: str = attrs.field(default="", kw_only=True)
    container_id: str = attrs.field(default="", kw_only=True)
    reason: Reason | None = attrs.field(default=None, kw_only=True)
    exception: PodsyncError | None = attrs.field(default=None, kw_only=True, eq=False)


@attrs.frozen
class ActionResult:
    """The outcome of one action.

    Attributes:
        action: the plan's action.
        status: done, failed or skipped.
        error: why it failed or was skipped, for people; empty when done. For a failed
            action it is ``str(exception)`` with every Secret value the action holds
            masked (``<secret ns/name key k>``): the engine's words may quote one. The
            exception itself is as raised: a program that shows it shows the value.
        duration: seconds it took (0 when skipped).
        pod: the pod it belongs to, for people: the pod key, the pod uid for a pod
            known only by its directory, empty for pulls and image removals.
        pod_uid: the pod it belongs to (``PodPlan.uid``): the identity, as two sources
            can hold pods of one key; empty for pulls and image removals.
        exception: what a failed action failed with, always from podsync's hierarchy
            (``podsync.exceptions``): a ``RuntimeCallError`` (or its ``NotFound``,
            ``Conflict``, ``NameConflict``, ``EngineUnavailable``) with the operation,
            the target and the engine's ``status_code``; an ``ActionError`` for a
            failure outside the runtime (host files, a postStart handler). An
            unexpected exception from a runtime arrives as a ``RuntimeCallError``
            naming its type. ``None`` when done or skipped. It survives ``pickle``
            (its ``__cause__`` and traceback do not), and is not compared: two results
            are equal whatever exception objects they carry.
    """

    action: Action
    status: ActionStatus
    error: str = ""
    duration: float = 0.0
    pod: str = ""
    pod_uid: str = ""
    exception: PodsyncError | None = attrs.field(default=None, kw_only=True, eq=False)


@attrs.frozen
class ApplyResult:
    """What applying a plan did.

    Attributes:
        results: one per action, in plan order (``Plan.actions``).
        duration: seconds the whole apply took.
    """

    results: tuple[ActionResult, ...] = ()
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        """True when every action was done (none failed or was skipped)."""
        return all(r.status is ActionStatus.DONE for r in self.results)

    @property
    def failures(self) -> tuple[ActionResult, ...]:
        """The failed actions (skipped ones are not failures of their own)."""
        return tuple(r for r in self.results if r.status is ActionStatus.FAILED)

    @property
    def failed_pulls(self) -> tuple[ActionResult, ...]:
        """The failed pulls (``Pull`` actions): each names its image, the pods that
        needed it (``Pull.pods``) and the engine's error - what the image pull back-off
        remembers (``podsync.sync``'s ``pull_failures``)."""
        return tuple(
            r
            for r in self.results
            if r.status is ActionStatus.FAILED and isinstance(r.action, Pull)
        )

    @property
    def failed_pods(self) -> tuple[str, ...]:
        """The pods with a failed or skipped action, by key (for people), sorted."""
        return tuple(
            sorted({r.pod for r in self.results if r.pod and r.status is not ActionStatus.DONE})
        )

    @property
    def failed_pod_uids(self) -> tuple[str, ...]:
        """The uids of the pods with a failed or skipped action, sorted (two pods of
        one key from two sources are told apart here)."""
        return tuple(
            sorted(
                {r.pod_uid for r in self.results if r.pod_uid and r.status is not ActionStatus.DONE}
            )
        )

    def summary(self) -> str:
        """For people: the counts, then one line per failed action."""
        counts = {status: 0 for status in ActionStatus}
        for r in self.results:
            counts[r.status] += 1
        lines = [
            f"{counts[ActionStatus.DONE]} done, {counts[ActionStatus.FAILED]} failed, "
            f"{counts[ActionStatus.SKIPPED]} skipped in {self.duration:.2f}s."
        ]
        for r in self.failures:
            lines.append(f"failed: {r.action.message}: {r.error}")
        skipped = sorted({r.pod for r in self.results if r.status is ActionStatus.SKIPPED})
        if skipped:
            lines.append(f"skipped actions of: {', '.join(p or '(engine)' for p in skipped)}")
        return "\n".join(lines)


def action_event(
    kind: EventKind,
    action: Action,
    message: str,
    time: float,
    *,
    container_id: str = "",
    exception: PodsyncError | None = None,
) -> Event:
    """The event ``kind`` about a plan's ``action``, at ``time``: its pod, container and
    reason code, and ``container_id`` when it is about one container (kills and
    removals name theirs when none is given; a create names the container it made);
    the ``exception`` a failed action failed with."""
    if isinstance(action, Kill | Remove) and not container_id:
        container_id = action.id
    return Event(
        kind,
        _event_pod(action),
        _container_of(action),
        message,
        time,
        pod_uid=_event_pod_uid(action),
        container_id=container_id,
        reason=action.reason,
        exception=exception,
    )


def _event_pod(action: Action) -> str:
    if isinstance(action, RemovePodDir):
        return action.pod_uid
    if isinstance(action, Pull | RemoveImage):
        return ""
    return action.pod


def _event_pod_uid(action: Action) -> str:
    if isinstance(action, Pull | RemoveImage):
        return ""
    return action.pod_uid


def _container_of(action: Action) -> str:
    if isinstance(action, Pull | RemoveImage | RemovePodDir | WriteVolume):
        return ""
    return action.container
