"""Which events a reporting host writes, in the kubelet's words: apply's ``Event``s, the
loop's notices and the containers' back-offs as ``EventRecord``s with the kubelet's
reasons and types.

The reasons are the modern kubelet's (``pkg/kubelet/events/event.go``): ``Pulled``,
``Created``, ``Started``, ``Killing``, ``Failed`` (Warning), ``BackOff`` (Warning for a
crash loop, Normal for "Back-off pulling image"), ``Unhealthy`` (Warning),
``FailedPostStartHook`` and ``FailedPreStopHook`` (Warning), ``FailedSync`` (Warning:
a sync round failed), ``Starting`` (the kubelet starting). What the kubelet has no
reason for is podsync's own, in the same CamelCase: a source in error and fine again
(``SourceError``, ``SourceOK``), the engine back (``EngineBack``), a pod rejected at
admission (``Rejected``), the engine's event stream broken (``EngineEventsError``),
a bug caught (``InternalError``), the loop stopping and stopped (``Stopping``,
``Stopped``), an etcd source read again (``SourceReread``).

Housekeeping is not written (a container or an image removed, a volume written,
created or removed, a pod directory removed): the kubelet sends no event for them,
and a host's events are for an operator asking why a pod does not run.

Contract: no I/O and no clock (times are given).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from podsync.applier._results import Event, EventKind
from podsync.loop._reporting import LoopNotice, NoticeKind
from podsync.report._records import EventRecord

if TYPE_CHECKING:
    from collections.abc import Callable

__all__: list[str] = []

NORMAL = "Normal"
WARNING = "Warning"

# apply's events: (reason, type); the kinds left out are housekeeping.
_EVENT_REASONS: Mapping[EventKind, tuple[str, str]] = {
    EventKind.PULLED: ("Pulled", NORMAL),
    EventKind.CREATED: ("Created", NORMAL),
    EventKind.ADOPTED: ("Created", NORMAL),
    EventKind.STARTED: ("Started", NORMAL),
    EventKind.STOPPING: ("Killing", NORMAL),
    EventKind.FAILED: ("Failed", WARNING),
    EventKind.UNHEALTHY: ("Unhealthy", WARNING),
    EventKind.PROBE_ERROR: ("Unhealthy", WARNING),
}

# The loop's notices: (reason, type).
_NOTICE_REASONS: Mapping[NoticeKind, tuple[str, str]] = {
    NoticeKind.SOURCE_ERROR: ("SourceError", WARNING),
    NoticeKind.SOURCE_OK: ("SourceOK", NORMAL),
    NoticeKind.SYNC_ERROR: ("FailedSync", WARNING),
    NoticeKind.ENGINE_BACK: ("EngineBack", NORMAL),
    NoticeKind.REJECTED: ("Rejected", WARNING),
    NoticeKind.EVENTS_ERROR: ("EngineEventsError", WARNING),
    NoticeKind.INTERNAL_ERROR: ("InternalError", WARNING),
    NoticeKind.STOPPING: ("Stopping", NORMAL),
    NoticeKind.STOPPED: ("Stopped", NORMAL),
    NoticeKind.SOURCE_REREAD: ("SourceReread", NORMAL),
}

# A container's waiting reason that the kubelet announces with a ``BackOff`` event
# when it begins: (type, what the message starts with).
_BACK_OFFS: Mapping[str, tuple[str, str]] = {
    "CrashLoopBackOff": (WARNING, "Back-off restarting failed container"),
    "ImagePullBackOff": (NORMAL, "Back-off pulling image"),
}


def rfc3339(seconds: float) -> str:
    """``seconds`` since the epoch as RFC 3339 in UTC, to the microsecond (the
    Kubernetes API's ``MicroTime``, which events carry)."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def pod_object(pod: str, container: str = "") -> str:
    """An event's object: ``pod/<ns>/<name>``, with ``/<container>`` for a container's."""
    return f"pod/{pod}/{container}" if container else f"pod/{pod}"


def event_record(event: Event, host: str, scrub: Callable[[str], str] = str) -> EventRecord | None:
    """The record of an apply ``Event``; ``None`` for housekeeping. ``scrub`` masks
    Secret values in the message."""
    if event.kind is EventKind.HOOK_FAILED:
        hook = "PreStop" if event.message.startswith("preStop") else "PostStart"
        reason, kind = f"Failed{hook}Hook", WARNING
    elif event.kind in _EVENT_REASONS:
        reason, kind = _EVENT_REASONS[event.kind]
    else:
        return None
    # An image pull or removal is the host's.
    target = pod_object(event.pod, event.container) if event.pod else f"host/{host}"
    return EventRecord(rfc3339(event.time), kind, reason, target, scrub(event.message), host)


def notice_record(
    notice: LoopNotice, host: str, time: float, scrub: Callable[[str], str] = str
) -> EventRecord:
    """The record of a loop notice: about the pod it names, else the host."""
    reason, kind = _NOTICE_REASONS.get(notice.kind, ("Notice", NORMAL))
    target = pod_object(notice.pod) if notice.pod else f"host/{host}"
    message = scrub(notice.message)
    if notice.source and notice.source not in message:
        message = f"{notice.source}: {message}"
    return EventRecord(rfc3339(time), kind, reason, target, message, host)


def starting_record(host: str, time: float, version: str) -> EventRecord:
    """The host's first event: the kubelet's ``Starting`` ("Starting kubelet.")."""
    return EventRecord(
        rfc3339(time), NORMAL, "Starting", f"host/{host}", f"Starting podsync {version}.", host
    )


def back_off_records(
    before: Mapping[str, Mapping[str, Any]],
    after: Sequence[Mapping[str, Any]],
    host: str,
    time: float,
) -> list[EventRecord]:
    """A ``BackOff`` event for each container whose waiting reason became a back-off
    (``CrashLoopBackOff``, ``ImagePullBackOff``) between two rounds' pod records
    (``before`` by pod key, ``after`` the new ones), as the kubelet sends one when
    ``doBackOff`` refuses a restart or a pull waits."""
    records: list[EventRecord] = []
    for pod in after:
        key = str(pod.get("pod", ""))
        old = _waiting_reasons(before.get(key))
        for name, reason, message in _containers(pod):
            if reason in _BACK_OFFS and old.get(name) != reason:
                kind, text = _BACK_OFFS[reason]
                records.append(
                    EventRecord(
                        rfc3339(time),
                        kind,
                        "BackOff",
                        pod_object(key, name),
                        message or text,
                        host,
                    )
                )
    return records


def _containers(record: Mapping[str, Any] | None) -> list[tuple[str, str, str]]:
    if record is None:
        return []
    found: list[tuple[str, str, str]] = []
    for field in ("init_containers", "containers"):
        for container in record.get(field) or ():
            if isinstance(container, Mapping):
                found.append(
                    (
                        str(container.get("name", "")),
                        str(container.get("reason", "")),
                        str(container.get("message", "")),
                    )
                )
    return found


def _waiting_reasons(record: Mapping[str, Any] | None) -> dict[str, str]:
    return {name: reason for name, reason, _ in _containers(record)}
