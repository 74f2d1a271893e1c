"""One pod container's status: its state, the run it shows and that run's termination
message - what ``pod_status`` and ``orphaned_pod_statuses`` (``podsync.status._pod``) share
for app and init containers alike.

Pure (no I/O, no clock). The rules of a run are the planner's: an instance podsync
stopped for its own reasons (a stop record outside ``FAILED_STOPS``) or one that was
created and never started is *not a run*; one podsync killed for a failure failed,
whatever its exit code. ``ContainerState`` and ``ContainerStatus`` are public through
``podsync.status._pod``, which re-exports them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Mapping, Sequence

import attrs

from podsync.actions._actions import FAILED_STOPS, Plan, Reason, Wait
from podsync.model._pod import (
    DEFAULT_TERMINATION_MESSAGE_PATH,
    Container,
    ObservedContainer,
    Pod,
    TerminationMessagePolicy,
)
from podsync.model._pulls import PullFailure
from podsync.spec._images import normalize_image
from podsync.spec._labels import recorded_message_path, recorded_message_policy
from podsync.spec._naming import NETWORK_CONTAINER

__all__ = [
    "MAX_LOG_MESSAGE_BYTES",
    "MAX_LOG_MESSAGE_LINES",
    "MAX_MESSAGE_BYTES",
    "ContainerState",
    "ContainerStatus",
    "image_waiting",
    "message_policy",
    "message_settings",
    "run_message",
    "termination_message",
    "wants_log_tail",
]

# The kubelet's limits on a termination message (pkg/kubelet/container/runtime.go:
# MaxContainerTerminationMessageLength, ...LogLength, ...LogLines).
MAX_MESSAGE_BYTES = 4096
MAX_LOG_MESSAGE_BYTES = 2048
MAX_LOG_MESSAGE_LINES = 80


class ContainerState(enum.StrEnum):
    """The state of one pod container (``v1.ContainerState``: exactly one of them)."""

    WAITING = "waiting"
    RUNNING = "running"
    TERMINATED = "terminated"


@attrs.frozen
class ContainerStatus:
    """One pod container, as its judged instance shows it.

    Attributes:
        name: the pod container's name.
        state: waiting, running or terminated.
        reason: why it waits (``ContainerCreating``, ``CrashLoopBackOff``,
            ``ErrImageNeverPull``, ``ErrImagePull``, ``ImagePullBackOff``) or how it
            ended (``Completed``: exit code 0, ``Error``), as the kubelet's API words
            them; empty while running.
        message: for people, e.g. ``app exited with code 1``.
        container_id: the engine id of the judged instance; empty when there is none.
        running_since: when the running instance was created (podsync starts a
            container right after creating it; the engine's start time is not
            observed), seconds since the epoch; ``None`` unless running.
        exit_code: the exit code of its last run (the current one when terminated, the
            previous one while waiting or running again); ``None`` if it never ended.
        exit_reason: ``Completed`` or ``Error`` for that run (``Error`` too when podsync
            killed it for a failure); empty when there is none.
        finished_at: when that run ended, seconds since the epoch; ``None`` if none.
        restart_count: the runs after the first among the instances the engine still
            holds (garbage collection removes older ones, so it may count fewer).
        started: running, and its startup probe succeeded or it has none.
        ready: started, and its readiness probe's verdict is success or it has none
            (the kubelet's ``UpdatePodStatus``, ``pkg/kubelet/prober/prober_manager.go``).
        image: the image of the pod container (the spec's).
        termination_message: of the run ``exit_code`` belongs to: the last 4096 bytes
            of its termination-message file, or, under ``FallbackToLogsOnError`` when
            that is empty and the run failed, the last 80 lines (at most 2048 bytes)
            of its log; empty when there is none.
        sidecar: an init container with restartPolicy Always, which runs beside the app
            containers (kubectl counts it done once started: ``display_status``).
    """

    name: str
    state: ContainerState
    reason: str = ""
    message: str = ""
    container_id: str = ""
    running_since: float | None = None
    exit_code: int | None = None
    exit_reason: str = ""
    finished_at: float | None = None
    restart_count: int = 0
    started: bool = False
    ready: bool = False
    image: str = ""
    termination_message: str = ""
    sidecar: bool = False


@attrs.frozen
class _Inputs:
    """What the caller observed beside the containers (see ``pod_status``)."""

    settling: frozenset[str]
    readiness: Mapping[str, bool]
    startup: Mapping[str, bool]
    messages: Mapping[str, str]
    log_tails: Mapping[str, str]
    # The engine's error of the last failed pull of a container's image, by container
    # name, for the containers whose pull the plan tries again (``pod_status``).
    pull_errors: Mapping[str, str] = attrs.Factory(dict)

    def started(self, c: Container, container_id: str) -> bool:
        # UpdatePodStatus (prober_manager.go): started once the startup probe
        # succeeded; without a startup probe, as soon as it runs.
        return c.startup_probe is None or self.startup.get(container_id) is True

    def ready(self, c: Container, container_id: str) -> bool:
        # Ready: started, and the readiness verdict is success (no verdict yet is the
        # worker's initial Failure); without a readiness probe, once started.
        if not self.started(c, container_id):
            return False
        return c.readiness_probe is None or self.readiness.get(container_id) is True

    def message(self, policy: TerminationMessagePolicy, run: ObservedContainer) -> str:
        # ``policy`` is the desired spec's: it counts only for a run that records none.
        return run_message(run, policy, self.messages, self.log_tails)


def image_waiting(
    name: str, image: str, wait: Wait | None, pull_error: str | None
) -> tuple[str, str] | None:
    """The waiting reason and message of a container held by its image, as the kubelet's
    image manager words them (``EnsureImageExists``, kubelet-modern.md §13); ``None``
    when its image holds nothing.

    ``ImagePullBackOff`` (``Back-off pulling image "x"``) while the plan waits out a
    failed pull's back-off; ``ErrImageNeverPull`` while it waits for an absent image it
    may not pull; ``ErrImagePull``, with the engine's error (``pull_error``), when the
    last pull failed and the plan tries it again.
    """
    if wait is not None and wait.reason is Reason.IMAGE_PULL_BACK_OFF:
        return "ImagePullBackOff", f'Back-off pulling image "{image}"'
    if wait is not None and wait.reason is Reason.IMAGE_NEVER_PULL:
        return "ErrImageNeverPull", f"{name}: image {image} is absent (pull policy Never)"
    if wait is None and pull_error is not None:
        return "ErrImagePull", pull_error
    return None


def _pull_errors(pod: Pod, plan: Plan | None, failures: Collection[PullFailure]) -> dict[str, str]:
    """The engine's error of the last failed pull, by container name, for the containers
    of ``pod`` - init containers too, whose statuses the kubelet builds the same way
    (``convertToAPIContainerStatuses``), and its network container - whose image
    ``plan`` pulls again for it after a failure."""
    if plan is None or not failures or not plan.pulls:
        return {}
    # Of two failures of one image (however spelled), the later one's error, as the
    # planner reads them.
    ordered = sorted((f for f in failures if f.pod_uid == pod.uid), key=lambda f: f.at)
    errors = {normalize_image(f.image): f.message for f in ordered}
    retried = {normalize_image(p.image) for p in plan.pulls if pod.uid in p.pods}
    found: dict[str, str] = {}
    # The network container's image is the plan's option; "net" is no pod container's
    # name (the loader refuses it).
    named = [(NETWORK_CONTAINER, plan.options.network_image)]
    named.extend((c.name, c.image) for c in (*pod.init_containers, *pod.containers))
    for name, reference in named:
        image = normalize_image(reference)
        if image in retried and image in errors:
            found[name] = errors[image]
    return found


def message_settings(
    run: ObservedContainer, desired: Container | None = None
) -> tuple[str, TerminationMessagePolicy]:
    """Where ``run``'s termination-message file is and its ``terminationMessagePolicy``,
    as the container records them (``recorded_message_path``,
    ``recorded_message_policy``), whatever the pod file says now.

    The kubelet reads both off the container that ran, never the desired spec: it
    records them as the container's annotations when it creates it
    (``newContainerAnnotations``) and reads them back
    (``getContainerInfoFromAnnotations`` in ``convertToKubeContainerStatus``,
    ``pkg/kubelet/kuberuntime/kuberuntime_container.go``) for ``getTerminationMessage``.
    The path is in the spec hash (another path is another container); the policy is
    not: an edited policy replaces no container, and a run keeps the one it was made
    with.

    What the container does not record is taken from ``desired``, the pod file's
    container of that name, when given: a container of a 2014 kubelet records no spec,
    and one made before podsync recorded the policy records only the path. Without
    either, the kubelet's defaults: ``/dev/termination-log`` (``SetDefaults_Container``)
    and ``File``.
    """
    path = recorded_message_path(run.labels)
    if path is None:
        path = desired.message_path if desired is not None else DEFAULT_TERMINATION_MESSAGE_PATH
    return path, message_policy(run, desired.termination_message_policy if desired else None)


def message_policy(
    run: ObservedContainer, desired: TerminationMessagePolicy | None = None
) -> TerminationMessagePolicy:
    """``run``'s ``terminationMessagePolicy``: the one it records, else ``desired`` (the
    pod file's), else ``File`` - ``message_settings``'s rule for the policy alone."""
    recorded = recorded_message_policy(run.labels)
    if recorded is not None:
        return recorded
    return desired if desired is not None else TerminationMessagePolicy.FILE


def run_message(
    run: ObservedContainer,
    desired: TerminationMessagePolicy | None,
    messages: Mapping[str, str],
    log_tails: Mapping[str, str],
) -> str:
    """``run``'s termination message (``termination_message``) from its file's text
    and its log tail as read (``messages``, ``log_tails``: by container id), under the
    policy it ran with (``message_policy``; ``desired``, the pod file's, when it records
    none)."""
    return termination_message(
        message_policy(run, desired),
        run.exit_code,
        messages.get(run.id, ""),
        log_tails.get(run.id, ""),
    )


def termination_message(
    policy: TerminationMessagePolicy, exit_code: int, file_text: str, log_tail: str
) -> str:
    """A run's termination message, as the kubelet's ``getTerminationMessage``
    (``pkg/kubelet/kuberuntime/kuberuntime_container.go``): the last 4096 bytes of the
    file; when that is empty, the policy is ``FallbackToLogsOnError`` and the run
    failed (exit code not 0), the last 80 lines of the log, at most its last 2048
    bytes."""
    if file_text:
        return _last_bytes(file_text, MAX_MESSAGE_BYTES)
    if policy is not TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR or exit_code == 0:
        return ""
    lines = log_tail.splitlines(keepends=True)[-MAX_LOG_MESSAGE_LINES:]
    return _last_bytes("".join(lines), MAX_LOG_MESSAGE_BYTES)


def wants_log_tail(policy: TerminationMessagePolicy, exit_code: int, file_text: str) -> bool:
    """Whether ``termination_message`` would read a log tail: what the caller checks
    before it asks the engine for one."""
    return (
        not file_text
        and policy is TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR
        and exit_code != 0
    )


def _last_bytes(text: str, limit: int) -> str:
    data = text.encode("utf-8", "surrogateescape")
    if len(data) <= limit:
        return text
    return data[-limit:].decode("utf-8", "replace")


def _ended(oc: ObservedContainer) -> float:
    return oc.finished_at if oc.finished_at is not None else oc.created


def _ran(oc: ObservedContainer) -> bool:
    """Whether ``oc`` is (or was) a run: running, or ended by itself or by a failure -
    not created and never started, not stopped by podsync to be replaced."""
    if oc.running:
        return True
    if oc.finished_at is None:
        return False
    return not oc.stopped_by_podsync or oc.stopped_by_podsync in FAILED_STOPS


def _last_run(instances: Sequence[ObservedContainer]) -> ObservedContainer | None:
    """The newest instance whose run ended, if any."""
    ended = [oc for oc in instances if not oc.running and _ran(oc)]
    return max(ended, key=lambda oc: (_ended(oc), oc.created)) if ended else None


def _running(
    name: str, newest: ObservedContainer, restarts: int, *, started: bool, ready: bool
) -> ContainerStatus:
    """The status of container ``name`` while ``newest``, its instance, runs: an app
    container's, an init container's or a sidecar's alike."""
    return ContainerStatus(
        name,
        ContainerState.RUNNING,
        message=f"{name} running",
        container_id=newest.id,
        running_since=newest.created,
        restart_count=restarts,
        started=started,
        ready=ready,
    )


def _with_run(
    status: ContainerStatus,
    run: ObservedContainer | None,
    said: Callable[[ObservedContainer], str],
    *,
    reason: bool = False,
) -> ContainerStatus:
    """``status`` with the exit code, reason, end and termination message (``said``)
    of ``run`` (and, with ``reason``, that reason as the status's own: a terminated
    container)."""
    if run is None:
        return status
    failed = run.exit_code != 0 or run.stopped_by_podsync in FAILED_STOPS
    # The runtime's terminated reasons (containerd internal/cri/server/helpers.go;
    # Docker: State.OOMKilled first, then the exit code): OOMKilled, Completed for 0,
    # Error otherwise - and Error for a container podsync killed for a failure,
    # whatever its code.
    exit_reason = "OOMKilled" if run.oom_killed else "Error" if failed else "Completed"
    return attrs.evolve(
        status,
        reason=exit_reason if reason else status.reason,
        container_id=status.container_id or run.id,
        exit_code=run.exit_code,
        exit_reason=exit_reason,
        finished_at=run.finished_at,
        termination_message=said(run),
    )
