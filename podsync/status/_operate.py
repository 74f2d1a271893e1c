"""Operating pods podsync runs: finding a pod on the engine, its containers' instances,
what its status needs from outside the engine's list (termination messages, log tails),
and the engine's events mapped to pods.

Contract: the I/O shell around the pure ``pod_status``: it reads the runtime (logs,
events, termination-message files: through the engine, never a path of this machine),
never changes anything. Ownership is ``podsync.ownership``'s rule, as everywhere: foreign containers
are never looked at.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence

import attrs

from podsync.exceptions import RuntimeCallError
from podsync.model._pod import ObservedContainer, Pod
from podsync.runtime._protocol import (
    Capability,
    EngineEvent,
    EventRuntime,
    FileRuntime,
    LogRuntime,
    Runtime,
    Stream,
    missing,
)
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import Ownership, identify, ownership
from podsync.status._container import (
    MAX_LOG_MESSAGE_LINES,
    MAX_MESSAGE_BYTES,
    message_settings,
    wants_log_tail,
)

# Everything in __all__ gets re-exported as part of the podsync public API, but
# ``PodRef``, ``find_pods``, ``pod_refs`` and ``instances`` (the command line's).
__all__ = ["PodEngineEvent", "pod_events", "previous_instance", "termination_inputs"]


@attrs.frozen
class PodRef:
    """A pod podsync runs on the engine, as its containers' labels name it."""

    uid: str
    key: str  # namespace/name
    full_name: str  # name.namespace.source

    @property
    def name(self) -> str:
        return self.key.split("/", 1)[1]

    @property
    def namespace(self) -> str:
        return self.key.split("/", 1)[0]


def pod_refs(
    observed: Iterable[ObservedContainer], *, adopt_2014_containers: bool = False
) -> list[PodRef]:
    """Every pod podsync runs (or ran: exited containers count), in key order."""
    found: dict[str, PodRef] = {}
    for oc in observed:
        owner = ownership(oc, adopt_2014_containers=adopt_2014_containers)
        if owner is not None:
            found.setdefault(
                owner.pod_uid, PodRef(owner.pod_uid, owner.pod_key, owner.pod_full_name)
            )
    return sorted(found.values(), key=lambda r: (r.key, r.full_name, r.uid))


def find_pods(refs: Sequence[PodRef], query: str) -> list[PodRef]:
    """The pods ``query`` names: a full name (``name.namespace.source``), a
    ``namespace/name``, a uid, or a bare name (any namespace); the most exact match
    wins, so a full name or uid never also matches by name."""
    for matches in (
        [r for r in refs if query in (r.full_name, r.uid)],
        [r for r in refs if r.key == query],
        [r for r in refs if "/" not in query and r.name == query],
    ):
        if matches:
            return matches
    return []


def instances(
    observed: Iterable[ObservedContainer],
    pod_uid: str,
    *,
    adopt_2014_containers: bool = False,
) -> dict[str, list[ObservedContainer]]:
    """The instances of each pod container of the pod (the network container under
    ``NETWORK_CONTAINER``), newest first."""
    found: dict[str, list[ObservedContainer]] = {}
    for oc in observed:
        owner = ownership(oc, adopt_2014_containers=adopt_2014_containers)
        if owner is not None and owner.pod_uid == pod_uid:
            found.setdefault(owner.container, []).append(oc)
    for group in found.values():
        group.sort(key=_age, reverse=True)
    return found


def _age(oc: ObservedContainer) -> tuple[float, int, str]:
    """Newer sorts higher: creation time, then the attempt number podsync gave it (the
    engine's list has whole seconds, and a crash loop makes several instances in one),
    then the id - the planner's order (``_ownership.newest_first``)."""
    instance = identify(oc)
    attempt = instance.attempt if instance is not None else None
    return oc.created, attempt or 0, oc.id


def current_instance(group: Sequence[ObservedContainer]) -> ObservedContainer | None:
    """The instance a pod container is now: the newest running one, else the newest."""
    running = [oc for oc in group if oc.running]
    pool = running or list(group)
    return max(pool, key=_age) if pool else None


def previous_instance(group: Sequence[ObservedContainer]) -> ObservedContainer | None:
    """The instance before the current one (``kubectl logs --previous``): the newest
    instance that has exited and is not the current one (``current_instance``)."""
    current = current_instance(group)
    ended = [oc for oc in group if oc is not current and oc.finished_at is not None]
    ended = [oc for oc in ended if current is None or _age(oc) < _age(current)]
    return max(ended, key=_age) if ended else None


def termination_inputs(
    runtime: Runtime,
    pods: Iterable[Pod],
    observed: Iterable[ObservedContainer],
    root_dir: str | None = None,
    *,
    adopt_2014_containers: bool = False,
) -> tuple[dict[str, str], dict[str, str]]:
    """What ``pod_status`` and ``orphaned_pod_statuses`` need to give runs their
    termination messages: ``(termination_messages, log_tails)``, both by container id.

    For every exited instance of a pod container podsync runs (app, init and sidecar
    containers; not the network container), with or without its pod among ``pods``:
    the last 4096 bytes of its termination-message file, read through the engine from
    the exited container (``FileRuntime.read_container_file``: one engine call each); a
    missing or unreadable file is empty, as the kubelet reads it. And, for a run under
    ``FallbackToLogsOnError`` that failed with an empty file, the last 80 lines of its
    log (one engine call each; a log that cannot be read is empty).

    Where the file is and the policy are the container's own, as it records them
    (``message_settings``: the kubelet reads them off the container that ran); the
    ``pods``' spec fills in only what a container does not record (one made before
    podsync recorded the policy, or a 2014 kubelet's), and without it the kubelet's
    defaults, ``/dev/termination-log`` and ``File``, stand in.

    The file is the one bound there: in the pod's state volume, or the host file under
    the root directory that a container made by an earlier podsync binds - which the
    engine reads on its own host, so this works for remote engines too.

    ``root_dir`` is not used (messages were read from it before they were read through
    the engine); it is accepted so that earlier callers keep working.
    """
    del root_dir
    specs = {p.uid: {c.name: c for c in (*p.init_containers, *p.containers)} for p in pods}
    messages: dict[str, str] = {}
    tails: dict[str, str] = {}
    for oc in observed:
        if oc.running or oc.finished_at is None:
            continue
        owner = ownership(oc, adopt_2014_containers=adopt_2014_containers)
        if owner is None or owner.container == NETWORK_CONTAINER:
            continue
        path, policy = message_settings(oc, specs.get(owner.pod_uid, {}).get(owner.container))
        # Every container has the file (at /dev/termination-log by default); one made
        # before that default has none there, and says nothing.
        text = _read_message(runtime, oc.id, path)
        messages[oc.id] = text
        if wants_log_tail(policy, oc.exit_code, text):
            tails[oc.id] = _log_tail(runtime, oc.id)
    return messages, tails


def _read_message(runtime: Runtime, container_id: str, path: str) -> str:
    # The last MAX_MESSAGE_BYTES (the kubelet's MaxContainerTerminationMessageLength,
    # kubelet-modern.md §11); a file that cannot be read says nothing, as the kubelet's
    # getTerminationMessage reads an error. A runtime that reads no container file
    # (FileRuntime) has none to give: the message is then the log tail's, if the policy
    # falls back to it, else empty.
    if not isinstance(runtime, FileRuntime):
        return ""
    try:
        data = runtime.read_container_file(container_id, path, limit=MAX_MESSAGE_BYTES, tail=True)
    except RuntimeCallError:
        return ""
    return "" if data is None else data.decode("utf-8", "replace")


def _log_tail(runtime: Runtime, container_id: str) -> str:
    if not isinstance(runtime, LogRuntime):  # no logs: nothing to fall back to
        return ""
    with (
        contextlib.suppress(Exception),
        runtime.container_logs(container_id, tail=MAX_LOG_MESSAGE_LINES) as lines,
    ):
        return b"".join(line.data for line in lines).decode("utf-8", "replace")
    return ""


@attrs.frozen
class PodEngineEvent:
    """An engine event of a container podsync runs, with the pod it belongs to.

    Attributes:
        event: the engine's event (``EngineEvent``).
        pod_uid: the pod's uid.
        pod: the pod key (``namespace/name``).
        container: the pod container (``net`` for the network container).
    """

    event: EngineEvent
    pod_uid: str
    pod: str
    container: str

    @property
    def network(self) -> bool:
        """Whether the event is the pod's network container's."""
        return self.container == NETWORK_CONTAINER


def pod_events(
    runtime: Runtime,
    *,
    since: float | None = None,
    until: float | None = None,
    adopt_2014_containers: bool = False,
) -> Stream[PodEngineEvent]:
    """The engine's events (``EventRuntime.engine_events``) of the containers podsync runs,
    each with its pod; other containers' events are left out. Close the stream to stop
    following (``until=None``).

    Raises:
        MissingCapability: the runtime has no event stream (``EventRuntime``).
    """
    if not isinstance(runtime, EventRuntime):
        raise missing(Capability.EVENTS, "pod events")
    events = runtime.engine_events(since=since, until=until)

    def mapped() -> Iterator[PodEngineEvent]:
        for event in events:
            owner = _owner(event, adopt_2014_containers)
            if owner is not None:
                yield PodEngineEvent(event, owner.pod_uid, owner.pod_key, owner.container)

    return Stream(mapped(), events.close)


def _owner(event: EngineEvent, adopt: bool) -> Ownership | None:
    seen = ObservedContainer(event.container_id, event.name, labels=dict(event.labels))
    return ownership(seen, adopt_2014_containers=adopt)
