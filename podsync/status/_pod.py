"""How a pod is doing: its phase and its containers' states, from what was observed.

``pod_status`` is pure (no I/O, no clock): it reads a pod, the containers an engine
reported and, when given, the plan made from them. It judges each container by the
instance the planner judges - the newest running one, else the newest to stop - so a
status never disagrees with the next plan:

* a container podsync stopped for its own reasons (to replace it, to rebuild the pod:
  a stop record outside the planner's ``FAILED_STOPS``) or one that was created and
  never started is *not a run*: it waits to be started again, it neither completed nor
  failed;
* a container podsync killed for a failure (liveness probe, postStart handler) failed,
  whatever its exit code.

The phase is the modern kubelet's (``getPhase``, ``pkg/kubelet/kubelet_pods.go``; see
``_phase``), the container states and reasons its API's
(``convertToAPIContainerStatuses``). ``PodStatus.state`` (``PodState``) is podsync's
verdict, what ``podsync apply --wait`` waits for: ``running`` or ``completed`` (up),
``failed`` or ``rejected`` (will not come up), ``pending`` (keep waiting).
``PodStatus.display_status`` is what ``kubectl get pods`` shows in its STATUS column
(``CrashLoopBackOff``, ``Init:1/2``, ``Completed``: ``podsync.status._kubectl``, a port
of kubectl's ``printPod``).

Beside the phase, a status carries the kubelet's conditions (``Initialized``,
``ContainersReady``, ``Ready``: ``pkg/kubelet/status/generate.go``), each container's
started and ready flags (from the startup and readiness verdicts given, keyed by
container id), its image and termination message. What only I/O can give - the
termination-message files, the log tails for ``FallbackToLogsOnError`` - is read by
the caller and passed in as data (``podsync.status._operate`` does it for the command line),
so this stays pure.
``orphaned_pod_statuses`` judges the pods podsync runs that are not desired.

One container's status - its state, the run it shows, that run's termination message -
is ``podsync.status._container``'s (shared by app and init containers); this module
re-exports its public types. The init containers' statuses, and what they say of the
pod, are ``podsync.status._init``'s.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import attrs

from podsync.actions._actions import FAILED_STOPS, Action, Plan, PodPlan, Reason, Wait
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.model._pod import ObservedContainer, Pod, RestartPolicy
from podsync.model._pulls import PullFailure
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import identify, ownership
from podsync.status._container import (
    ContainerState,
    ContainerStatus,
    _ended,
    _Inputs,
    _last_run,
    _pull_errors,
    _ran,
    _running,
    _with_run,
    image_waiting,
    run_message,
)
from podsync.status._init import _Init
from podsync.status._kubectl import kubectl_status

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "ContainerState",
    "ContainerStatus",
    "PodCondition",
    "PodPhase",
    "PodState",
    "PodStatus",
    "orphaned_pod_statuses",
    "pod_status",
]

# The waiting reason of a container whose last run ended and whose start a ``Wait``
# holds, and the run becomes its last state (convertToAPIContainerStatuses with the
# reason cache's last start error).
_WAITING_REASONS = {
    Reason.BACK_OFF: "CrashLoopBackOff",
    Reason.CONFIG_MISSING: "CreateContainerConfigError",
}


class PodPhase(enum.StrEnum):
    """Kubernetes' pod phases (``v1.PodPhase``). podsync never reports ``UNKNOWN`` (the
    kubelet does not either: it is the node controller's, for a node that went away)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


class PodState(enum.StrEnum):
    """podsync's verdict on a pod: what ``podsync apply --wait`` waits for. Not a
    Kubernetes field (the phase, reason and ``display_status`` are what Kubernetes and
    kubectl show); a ``str``, so ``status.state == "running"`` holds as before.

    ``RUNNING`` and ``COMPLETED`` are up (``PodStatus.ok``); ``FAILED`` and ``REJECTED``
    will not come up; ``PENDING`` is not there yet: waiting longer can change it (the
    plan still has something to do for the pod, a container waits for its back-off or
    its image, or it was seen running too briefly to count).
    """

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    REJECTED = "rejected"
    PENDING = "pending"


@attrs.frozen
class PodCondition:
    """One of the pod's conditions (``v1.PodCondition``), as the kubelet generates them
    (``pkg/kubelet/status/generate.go``).

    Attributes:
        type: ``Initialized``, ``ContainersReady`` or ``Ready``.
        status: whether it holds.
        reason: why not (``ContainersNotReady``, ``PodCompleted``, ``PodFailed``), or
            ``PodCompleted`` for a completed pod's ``Initialized``; else empty.
        message: for people, e.g. ``containers with unready status: [app]``.
    """

    type: str
    status: bool
    reason: str = ""
    message: str = ""


@attrs.frozen
class PodStatus:
    """How one pod is doing.

    Four words say how it is doing, each for its reader: ``phase`` and ``reason``
    are Kubernetes' (``v1.PodStatus``), ``display_status`` is what ``kubectl get pods``
    shows (``CrashLoopBackOff``, ``Init:1/2``, ...), ``state`` is podsync's verdict for
    ``apply --wait``. During a crash loop, e.g.: phase ``Running``, reason empty (the
    kubelet sets none), ``display_status`` ``CrashLoopBackOff``, state ``pending``, and
    the container ``waiting`` with reason ``CrashLoopBackOff``.

    Attributes:
        pod: the pod key (``namespace/name``).
        state: podsync's verdict (``PodState``): ``running`` or ``completed`` (up),
            ``failed`` or ``rejected`` (will not come up), ``pending`` (not yet: keep
            waiting) - what ``apply --wait`` waits for. A pod is up only when the plan
            has nothing left to do for it.
        message: for people, e.g. ``running (2/2 containers)``; a rejected pod's is the
            kubelet's (``Pod was rejected: ...``).
        phase: the Kubernetes pod phase.
        reason: the Kubernetes pod-level reason: why a rejected pod failed (the
            rejection's code: ``OutOfcpu``, ``NodePorts``, ...); else empty, as the
            kubelet leaves it (a container's reason is in its status, and in
            ``display_status``).
        uid: the pod's uid.
        containers: the status of each pod container, in the pod's order.
        conditions: ``Initialized``, ``ContainersReady`` and ``Ready``, in that order.
        init_containers: the status of each init container, in the pod's order
            (Kubernetes' ``initContainerStatuses``): ``Completed`` once it exited 0,
            ``Error`` or ``CrashLoopBackOff`` after a failure, ``PodInitializing``
            before it ran; ``ErrImagePull``, ``ImagePullBackOff`` or
            ``ErrImageNeverPull`` while its image holds it, as an app container. While
            the pod initialises, ``message`` starts with what kubectl shows:
            ``Init:1/2``, ``Init:CrashLoopBackOff``, ``Init:Error``,
            ``Init:ImagePullBackOff``.
        orphaned: podsync runs the pod, but the desired pods do not include it (the
            next sync with deletions allowed stops it).
        scope: the scope that runs it: the ``io.podsync.scope`` label
            (``podsync.labels.LABEL_SCOPE``) of its newest container; ``None`` when it
            has none (an unscoped or node-scope sync made it) or no container yet.
    """

    pod: str
    # A string is taken too ("running"): a PodStatus made before PodState was.
    state: PodState = attrs.field(converter=PodState)
    message: str
    phase: PodPhase = PodPhase.PENDING
    reason: str = ""
    uid: str = ""
    containers: tuple[ContainerStatus, ...] = ()
    conditions: tuple[PodCondition, ...] = ()
    init_containers: tuple[ContainerStatus, ...] = ()
    orphaned: bool = False
    scope: str | None = None

    @property
    def ready(self) -> bool:
        """True when the pod's ``Ready`` condition holds."""
        return any(c.type == "Ready" and c.status for c in self.conditions)

    @property
    def ready_count(self) -> tuple[int, int]:
        """(ready containers, containers): ``kubectl get pods``' READY column. As
        kubectl's ``printPod`` counts them, a sidecar is one of the containers, ready
        once it started and its readiness holds."""
        sidecars = [c for c in self.init_containers if c.sidecar]
        ready = sum(c.ready and c.started for c in sidecars)
        return ready + sum(c.ready for c in self.containers), len(sidecars) + len(self.containers)

    @property
    def restarts(self) -> int:
        """The restarts of all its containers."""
        return sum(c.restart_count for c in (*self.init_containers, *self.containers))

    @property
    def final(self) -> bool:
        """True when waiting longer cannot change the state (up, failed or rejected)."""
        return self.state != PodState.PENDING

    @property
    def ok(self) -> bool:
        """True when the pod is up: running, or completed."""
        return self.state in (PodState.RUNNING, PodState.COMPLETED)

    @property
    def display_status(self) -> str:
        """What ``kubectl get pods`` shows in its STATUS column for this pod: a port of
        kubectl's ``printPod`` (``podsync.status._kubectl``, which states the rule). The
        phase or the pod's reason (``OutOfcpu``), the init containers' progress
        (``Init:1/2``, ``Init:CrashLoopBackOff``, ``Init:Error``), else the first app
        container's waiting or terminated reason (``CrashLoopBackOff``,
        ``ImagePullBackOff``, ``ContainerCreating``, ``Completed``, ``Error``), and
        ``Orphaned`` (podsync's word in place of kubectl's ``Terminating``) for a pod
        that is no longer desired and has not finished."""
        return kubectl_status(
            str(self.phase),
            self.reason,
            self.init_containers,
            self.containers,
            initialized=any(c.type == "Initialized" and c.status for c in self.conditions),
            ready=self.ready,
            orphaned=self.orphaned,
            rejected=self.state is PodState.REJECTED,
        )


def pod_status(
    pod: Pod,
    observed: Sequence[ObservedContainer],
    *,
    plan: Plan | None = None,
    options: PlanOptions | None = None,
    settling: Collection[str] = (),
    readiness: Mapping[str, bool] | None = None,
    startup: Mapping[str, bool] | None = None,
    termination_messages: Mapping[str, str] | None = None,
    log_tails: Mapping[str, str] | None = None,
    pull_failures: Collection[PullFailure] = (),
) -> PodStatus:
    """The status of ``pod`` from the containers an engine reported.

    Args:
        pod: the desired pod.
        observed: the engine's containers, exited ones included, with their stop
            records (``podsync.observe``); containers that are not the pod's (another
            pod's, foreign ones) are left out by the planner's ``ownership`` rule.
        plan: the plan made from the same observation, if any. It says what is left to
            do (a pod with changes to make is ``pending``), why a container waits
            (back-off, an image that may not be pulled) and whether the pod was
            rejected. Without it, the status is the observation's alone.
        options: the planning options; ``adopt_2014_containers`` decides whether a
            2014 kubelet's containers are the pod's. ``PlanOptions()`` when ``None``.
        settling: ids of running containers seen running too briefly to count as up
            (``apply --wait`` waits a moment to catch a container that dies at once);
            such a container is ``starting`` and its pod ``pending``.
        readiness: readiness verdicts of running containers, by container id
            (``SyncResult.readiness``): True when the readiness probe's verdict is
            success. A container with a readiness probe and no verdict is not ready
            (the kubelet's initial readiness is failure).
        startup: startup verdicts, by container id (``SyncResult.startup``): True once
            the startup probe succeeded. A container with a startup probe and no
            verdict has not started, so it is not ready either.
        termination_messages: the termination-message file of each container (by id)
            that has one, as read (``podsync.status._operate.termination_inputs``).
        log_tails: the log tail of failed runs under ``FallbackToLogsOnError`` (by id).
            A run's message follows the policy its container records, as the kubelet
            reads it off the container that ran; ``pod``'s only for a container made
            before podsync recorded it (``podsync.status._container.message_settings``).
        pull_failures: the failed image pulls the plan was made with (``plan``'s): a
            container whose image ``plan`` pulls again after a failure for this pod
            waits with ``ErrImagePull`` and the engine's error; one held by the
            back-off (the plan's wait) with ``ImagePullBackOff`` - init containers as
            app containers. The pod's network container has no status of its own: the
            message of a pod whose network image holds it starts with
            ``network container ErrImagePull: ...`` or ``network container
            ImagePullBackOff: Back-off pulling image "..."``.

    Returns:
        The pod's status.
    """
    adopt = (options or PlanOptions()).adopt_2014_containers
    instances: dict[str, list[ObservedContainer]] = {}
    for oc in observed:
        owner = ownership(oc, adopt_2014_containers=adopt)
        if owner is not None and owner.pod_uid == pod.uid:
            instances.setdefault(owner.container, []).append(oc)
    scope = _scope(oc for group in instances.values() for oc in group)
    pod_plan: PodPlan | None = None
    if plan is not None:
        for rejection in plan.rejected:
            if rejection.uid == pod.uid:
                containers = tuple(
                    ContainerStatus(
                        c.name, ContainerState.WAITING, "ContainerCreating", image=c.image
                    )
                    for c in pod.containers
                )
                return PodStatus(
                    pod.key,
                    PodState.REJECTED,
                    # The kubelet's rejectPod: phase Failed, its reason, this message.
                    f"Pod was rejected: {rejection.message}",
                    PodPhase.FAILED,
                    rejection.reason.value,
                    pod.uid,
                    containers,
                    _conditions(PodPhase.FAILED, containers),
                    scope=scope,
                )
        pod_plan = next(
            (p for p in plan.pods if (p.uid, p.full_name) == (pod.uid, pod.full_name)), None
        )
    inputs = _Inputs(
        frozenset(settling),
        readiness or {},
        startup or {},
        termination_messages or {},
        log_tails or {},
        _pull_errors(pod, plan, pull_failures),
    )
    network_image = plan.options.network_image if plan is not None else ""
    return attrs.evolve(_judge(pod, instances, pod_plan, inputs, network_image), scope=scope)


def _scope(containers: Iterable[ObservedContainer]) -> str | None:
    """The pod's scope: its newest container's (``LABEL_SCOPE``: a scoped sync labels
    every container it makes), ``None`` without one."""
    newest = max(containers, key=lambda oc: (oc.created, oc.id), default=None)
    instance = identify(newest) if newest is not None else None
    return (instance.scope or None) if instance is not None else None


def _judge(
    pod: Pod,
    instances: dict[str, list[ObservedContainer]],
    pod_plan: PodPlan | None,
    inputs: _Inputs,
    network_image: str,
) -> PodStatus:
    settling = inputs.settling
    actions = pod_plan.actions if pod_plan is not None else ()
    waits = {a.container: a for a in actions if isinstance(a, Wait)}
    pending = [a for a in actions if not isinstance(a, Wait)]
    statuses: list[ContainerStatus] = []
    running = completed = 0
    # getPhase's counts (see _phase): containers running, stopped (a run ended),
    # succeeded (ended with 0, not to be restarted) and waiting (no run to judge).
    counts = {"running": 0, "stopped": 0, "succeeded": 0, "waiting": 0}
    problems: list[str] = []
    failures: list[str] = []
    for c in pod.containers:
        mine = instances.get(c.name, [])
        wait = waits.get(c.name)
        restarts = max(sum(_ran(oc) for oc in mine) - 1, 0)
        last_run = _last_run(mine)
        said = functools.partial(inputs.message, c.termination_message_policy)
        live = [oc for oc in mine if oc.running]
        if live:
            newest = max(live, key=lambda oc: (oc.created, oc.id))
            counts["running"] += 1
            if newest.id in settling:
                problems.append(f"{c.name} starting")
            else:
                running += 1
            statuses.append(
                _with_run(
                    _running(
                        c.name,
                        newest,
                        restarts,
                        started=inputs.started(c, newest.id),
                        ready=inputs.ready(c, newest.id),
                    ),
                    last_run,
                    said,
                )
            )
            continue
        held = image_waiting(c.name, c.image, wait, inputs.pull_errors.get(c.name))
        if not mine:
            if held is not None:
                reason, text = held
            elif wait is not None and wait.reason is Reason.SCHEDULING_GATED:
                # The kubelet never sees such a pod; its PodScheduled condition says
                # SchedulingGated, which is what keeps it from running.
                text = f"{c.name}: the pod has scheduling gates, not ready to run"
                reason = "SchedulingGated"
            elif wait is not None and wait.reason is Reason.CONFIG_MISSING:
                # generateContainerConfig's failure: the object and key, never a value.
                text = f"{c.name}: {c.config_error}"
                reason = "CreateContainerConfigError"
            elif wait is not None and wait.reason is Reason.RUN_AS_NON_ROOT:
                # The kubelet's verifyRunAsNonRoot failure (generateContainerConfig).
                text = f"{c.name}: {wait.message.partition(': ')[2]}"
                reason = "CreateContainerConfigError"
            else:
                # While a pod has init containers, the kubelet's default waiting reason
                # is PodInitializing (convertToAPIContainerStatuses).
                text = f"{c.name} not started yet"
                reason = "PodInitializing" if pod.init_containers else "ContainerCreating"
            problems.append(text)
            counts["waiting"] += 1
            statuses.append(ContainerStatus(c.name, ContainerState.WAITING, reason, text))
            continue
        # The instance the planner judges: the newest to stop (one that never started
        # stopped when it was created).
        last = max(mine, key=lambda oc: (_ended(oc), oc.created))
        code = last.exit_code
        stop = last.stopped_by_podsync
        failure = FAILED_STOPS.get(stop)
        waiting = ContainerStatus(
            c.name,
            ContainerState.WAITING,
            _WAITING_REASONS.get(wait.reason, "ContainerCreating")
            if wait is not None
            else "ContainerCreating",
            container_id=last.id,
            restart_count=restarts,
        )
        if last.finished_at is None:
            # Created and never started: not a run; the plan starts it again.
            ended = f"{c.name} did not start"
        elif failure is not None:
            ended = f"{c.name} stopped by podsync: {failure}"
        elif stop:
            # podsync stopped it (to replace it, ...): not a run, it is started again.
            text = f"{c.name} stopped by podsync ({stop}), to be started again"
            problems.append(text)
            counts["waiting"] += 1
            statuses.append(_with_run(attrs.evolve(waiting, message=text), last_run, said))
            continue
        else:
            ended = f"{c.name} exited with code {code}"
        succeeded = last.finished_at is not None and failure is None and code == 0
        if succeeded and pod.restart_policy is not RestartPolicy.ALWAYS:
            completed += 1
            text = ended
        elif (
            last.finished_at is not None
            and not succeeded
            and pod.restart_policy is RestartPolicy.NEVER
        ):
            text = f"{ended} (restart policy Never)"
            failures.append(text)
        elif wait is not None and wait.reason is Reason.BACK_OFF:
            text = f"{ended}, back-off: restart in {wait.seconds:.0f}s"
            problems.append(text)
        elif wait is not None and wait.reason is Reason.CONFIG_MISSING:
            text = f"{ended}, cannot start again: {c.config_error}"
            problems.append(text)
        elif held is not None:
            waiting = attrs.evolve(waiting, reason=held[0])
            text = f"{ended}: {held[1]}"
            problems.append(text)
        else:
            text = f"{ended}, restarting"
            problems.append(text)
        if last.finished_at is None:
            counts["waiting"] += 1
        else:
            counts["stopped"] += 1
            counts["succeeded"] += succeeded
        if (
            last.finished_at is not None
            and held is None
            and (wait is None or wait.reason not in _WAITING_REASONS)
        ):
            # A run that ended, with no back-off holding its restart: terminated. (In
            # back-off the kubelet shows Waiting CrashLoopBackOff, the run as its last
            # state: the else branch; the same with the start error of a config it
            # cannot build, CreateContainerConfigError.)
            ended_status = ContainerStatus(
                c.name, ContainerState.TERMINATED, message=text, restart_count=restarts
            )
            statuses.append(_with_run(ended_status, last, said, reason=True))
        else:
            statuses.append(_with_run(attrs.evolve(waiting, message=text), last_run, said))
    total = len(pod.containers)
    phase = _phase(pod.restart_policy, **counts)
    containers = tuple(
        attrs.evolve(s, image=c.image) for s, c in zip(statuses, pod.containers, strict=True)
    )
    init = _Init(pod, instances, waits, inputs) if pod.init_containers else None
    app_started = counts["running"] + counts["stopped"] > 0
    if init is not None:
        if init.failed and pod.restart_policy is RestartPolicy.NEVER:
            # getPhase: a failed init container under Never fails the pod.
            phase = PodPhase.FAILED
            failures.insert(0, f"{init.kubectl}: {init.failed}")
        elif not init.done and not app_started:
            phase = PodPhase.PENDING
            problems.insert(0, f"{init.kubectl}: {init.blocking}")
    network = image_waiting(
        NETWORK_CONTAINER,
        network_image,
        waits.get(NETWORK_CONTAINER),
        inputs.pull_errors.get(NETWORK_CONTAINER),
    )
    if network is not None:
        # The pod's network container cannot be made for its image (the kubelet's sandbox
        # creation failed; the pod's containers wait for it): said first.
        problems.insert(0, f"network container {network[0]}: {network[1]}")
    if init is None:
        conditions = _conditions(phase, containers)
    else:
        # ContainersReady: every app container and every sidecar (generate.go).
        sidecars = [
            s
            for s, c in zip(init.statuses, pod.init_containers, strict=True)
            if c.restart_policy is not None
        ]
        conditions = _conditions(phase, (*sidecars, *containers))
        conditions = (_initialized(init, phase, app_started), *conditions[1:])
    init_statuses = init.statuses if init is not None else ()

    def status(state: PodState, message: str) -> PodStatus:
        return PodStatus(
            pod.key, state, message, phase, "", pod.uid, containers, conditions, init_statuses
        )

    if failures:
        return status(PodState.FAILED, "failed: " + "; ".join(failures))
    if not problems and not pending:
        if completed == total and total:
            return status(PodState.COMPLETED, f"completed ({total}/{total} containers exited 0)")
        if completed:
            return status(PodState.RUNNING, f"running ({running} running, {completed} completed)")
        return status(PodState.RUNNING, f"running ({running}/{total} containers)")
    if not problems:
        state = "completed" if completed == total else "running"
        return status(
            PodState.PENDING,
            f"{state}, {len(pending)} change(s) to make: {_change_words(pending[0])}",
        )
    return status(
        PodState.PENDING, f"not running ({running}/{total} containers): " + "; ".join(problems)
    )


def _initialized(init: _Init, phase: PodPhase, app_started: bool) -> PodCondition:
    """``Initialized`` (``GeneratePodInitializedCondition``, generate.go): true once
    every init container is done, an app container started, or the pod succeeded."""
    if init.done or app_started or phase is PodPhase.SUCCEEDED:
        return PodCondition("Initialized", True)
    # Go's %s of a []string: [a b]
    names = " ".join(init.incomplete)
    return PodCondition(
        "Initialized",
        False,
        "ContainersNotInitialized",
        f"containers with incomplete status: [{names}]",
    )


def _phase(
    restart: RestartPolicy, *, running: int, stopped: int, succeeded: int, waiting: int
) -> PodPhase:
    """The pod phase from its containers' states, as the modern kubelet's ``getPhase``
    (``pkg/kubelet/kubelet_pods.go``) decides it for a pod without init containers:

    1. each container: running → running; terminated → stopped (and succeeded with exit
       code 0); waiting after a run (a restart pending) → stopped; waiting without a
       run → waiting. A container without any instance is waiting too: the kubelet
       gives it the default Waiting ``ContainerCreating`` status.
    2. waiting > 0 → Pending.
    3. running > 0 → Running.
    4. stopped > 0: Always → Running; all succeeded → Succeeded; Never → Failed;
       OnFailure → Running.
    5. otherwise (no containers) → Pending.

    podsync's own rule comes first: an instance podsync stopped for its own reasons, or
    one that never started, is not a run (the next sync starts it), so its container
    is waiting without a run, even when an older instance ran.
    """
    if waiting:
        return PodPhase.PENDING
    if running:
        return PodPhase.RUNNING
    if stopped:
        if restart is RestartPolicy.ALWAYS:
            return PodPhase.RUNNING
        if stopped == succeeded:
            return PodPhase.SUCCEEDED
        if restart is RestartPolicy.NEVER:
            return PodPhase.FAILED
        return PodPhase.RUNNING
    return PodPhase.PENDING


def _conditions(phase: PodPhase, containers: Sequence[ContainerStatus]) -> tuple[PodCondition, ...]:
    """The kubelet's conditions (``pkg/kubelet/status/generate.go``) for a pod without
    init containers or readiness gates: ``Initialized`` holds (``PodCompleted`` once
    Succeeded); ``ContainersReady`` holds when every container is ready (a completed pod
    is ``PodCompleted``, a failed one ``PodFailed``, else ``ContainersNotReady`` naming
    the containers); ``Ready`` is ``ContainersReady``."""
    initialized = PodCondition(
        "Initialized", True, "PodCompleted" if phase is PodPhase.SUCCEEDED else ""
    )
    unready = [c.name for c in containers if not c.ready]
    if phase is PodPhase.SUCCEEDED:
        ready = PodCondition("ContainersReady", False, "PodCompleted")
    elif phase is PodPhase.FAILED:
        ready = PodCondition("ContainersReady", False, "PodFailed")
    elif unready:
        ready = PodCondition(
            "ContainersReady",
            False,
            "ContainersNotReady",
            f"containers with unready status: [{' '.join(unready)}]",
        )
    else:
        ready = PodCondition("ContainersReady", True)
    return initialized, ready, attrs.evolve(ready, type="Ready")


def _change_words(action: Action) -> str:
    """``stop default/job/net`` from ``stop default/job/net (k8s_...): why`` (a pod
    action's message names the pod container before any engine name or id)."""
    return action.message.split(" (", 1)[0].split(": ", 1)[0]


def orphaned_pod_statuses(
    observed: Sequence[ObservedContainer],
    desired: Iterable[Pod] | None = None,
    *,
    options: PlanOptions | None = None,
    termination_messages: Mapping[str, str] | None = None,
    log_tails: Mapping[str, str] | None = None,
) -> list[PodStatus]:
    """The status of each pod podsync runs on the engine that ``desired`` does not
    hold (by uid), judged from its containers alone, in pod-key order.

    ``termination_messages`` and ``log_tails`` are ``termination_inputs``' (as for
    ``pod_status``): each run's message follows the policy its container records
    (``File`` for one that records none).

    With ``desired`` of ``None`` every pod podsync runs is judged this way (``podsync
    status`` without sources), and none is marked ``orphaned``. Without the pod spec the
    restart policy is unknown: a pod is judged as one that will not be restarted (the
    kubelet's rule for a terminal pod, ``getPhase`` step 7): Running while something
    runs, else Succeeded when every container exited 0, Failed when one did not,
    Pending when none ran. Containers are listed by name; the network container is left
    out. A named scope (``options.scope``) finds orphaned only its own pods (those whose
    containers carry its label): another scope's pod is not its to remove.
    """
    options = options or PlanOptions()
    adopt, scope = options.adopt_2014_containers, options.scope
    wanted = None if desired is None else {p.uid for p in desired}
    pods: dict[str, tuple[str, dict[str, list[ObservedContainer]]]] = {}
    # Every container of each pod, the network container's included: its scope's.
    mine: dict[str, list[ObservedContainer]] = {}
    # The pods of the named scope that looks (``podsync.planner._scope``).
    scoped: set[str] = set()
    for oc in observed:
        owner = ownership(oc, adopt_2014_containers=adopt)
        if owner is None or (wanted is not None and owner.pod_uid in wanted):
            continue
        instance = identify(oc)
        if scope is not None and instance is not None and instance.scope == scope:
            scoped.add(owner.pod_uid)
        mine.setdefault(owner.pod_uid, []).append(oc)
        _, groups = pods.setdefault(owner.pod_uid, (owner.pod_key, {}))
        if owner.container != NETWORK_CONTAINER:
            groups.setdefault(owner.container, []).append(oc)
    messages, tails = termination_messages or {}, log_tails or {}
    statuses = [
        attrs.evolve(
            _observed_pod(
                uid,
                key,
                groups,
                orphaned=wanted is not None and (scope in (None, NODE_SCOPE) or uid in scoped),
                said=lambda run: run_message(run, None, messages, tails),
            ),
            scope=_scope(mine[uid]),
        )
        for uid, (key, groups) in pods.items()
    ]
    return sorted(statuses, key=lambda s: (s.pod, s.uid))


def _observed_pod(
    uid: str,
    key: str,
    groups: Mapping[str, Sequence[ObservedContainer]],
    *,
    orphaned: bool,
    said: Callable[[ObservedContainer], str],
) -> PodStatus:
    statuses: list[ContainerStatus] = []
    for name in sorted(groups):
        mine = groups[name]
        restarts = max(sum(_ran(oc) for oc in mine) - 1, 0)
        image = max(mine, key=lambda oc: (oc.created, oc.id)).image
        live = [oc for oc in mine if oc.running]
        if live:
            newest = max(live, key=lambda oc: (oc.created, oc.id))
            running = ContainerStatus(
                name,
                ContainerState.RUNNING,
                message=f"{name} running",
                container_id=newest.id,
                running_since=newest.created,
                restart_count=restarts,
                image=image,
                started=True,
                ready=True,
            )
            statuses.append(_with_run(running, _last_run(mine), said))
            continue
        last = _last_run(mine)
        if last is None:
            newest = max(mine, key=lambda oc: (oc.created, oc.id))
            statuses.append(
                ContainerStatus(
                    name,
                    ContainerState.WAITING,
                    "ContainerCreating",
                    f"{name} not running",
                    newest.id,
                    image=image,
                )
            )
            continue
        ended = ContainerStatus(
            name,
            ContainerState.TERMINATED,
            message=f"{name} exited with code {last.exit_code}",
            restart_count=restarts,
            image=image,
        )
        statuses.append(_with_run(ended, last, said, reason=True))
    states = [s.state for s in statuses]
    if ContainerState.RUNNING in states:
        phase = PodPhase.RUNNING
    elif ContainerState.TERMINATED in states:
        good = all(s.exit_reason == "Completed" for s in statuses if s.exit_code is not None)
        phase = PodPhase.SUCCEEDED if good else PodPhase.FAILED
    else:
        phase = PodPhase.PENDING
    state = {
        PodPhase.RUNNING: PodState.RUNNING,
        PodPhase.SUCCEEDED: PodState.COMPLETED,
        PodPhase.FAILED: PodState.FAILED,
    }.get(phase, PodState.PENDING)
    summary = f"{states.count(ContainerState.RUNNING)}/{len(statuses)} containers running"
    message = f"orphaned: not desired ({summary})" if orphaned else f"{state} ({summary})"
    containers = tuple(statuses)
    return PodStatus(
        key,
        state,
        message,
        phase,
        "",
        uid,
        containers,
        _conditions(phase, containers),
        orphaned=orphaned,
    )
