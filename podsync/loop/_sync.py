"""Observe, plan, apply: one sync, in one call.

The seed's ``SyncPods`` observed Docker, decided and acted in one pass (reference
§2.3); ``sync`` does the same in three visible steps - ``observe``, ``plan``, ``apply``
- with the prober in between (its verdicts feed the plan, as the seed's health checks
fed ``syncPod``; its states are kept in the engine between syncs, see ``_probing``
and ``_records``). ``observe`` is public on its own so that a CLI or an
orchestrator can plan without applying.

For the seed's ``--runonce`` (reference §5), call ``sync`` in a loop until the pods run
or a retry budget is spent; ``sync`` itself is one pass and never sleeps.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, MutableMapping, Sequence

import attrs

from podsync.actions._actions import (
    Action,
    Create,
    CreateVolume,
    Plan,
    Pull,
    Reason,
    Remove,
    RemovePodDir,
    Wait,
)
from podsync.actions._options import PlanOptions, with_scope
from podsync.applier._apply import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS, _check_settings, apply
from podsync.applier._results import ApplyResult, Event, EventKind
from podsync.host._clock import Clock, Clocks, clocks
from podsync.loop._observe import (
    _capacity,
    _confirmed,
    _host_empty_dirs,
    _in_an_engine_volume,
    _list_volumes,
    observe,
)
from podsync.model._observation import Observation as Observation
from podsync.model._pod import ObservedContainer, Pod
from podsync.model._pulls import PullFailure, pull_failed
from podsync.planner._node_resources import pod_requests
from podsync.planner._plan import plan
from podsync.prober._probing import ProbeRound
from podsync.prober._probing import probe as run_prober
from podsync.prober._probing import save as save_probe_records
from podsync.prober._rules import states_to_json
from podsync.runtime._protocol import NodeRuntime, Runtime, VolumeRuntime, capabilities
from podsync.spec._images import normalize_image
from podsync.spec._labels import VOLUME_KIND_PROBE_RECORD
from podsync.spec._records import probe_records, records_of

# Everything in __all__ gets re-exported as part of the podsync public API.
# ``Observation`` lives in the pure ``podsync.model._observation`` (the planner takes it);
# this module imports it for the callers that know it from here.
__all__ = ["SyncResult", "observe", "sync"]


@attrs.frozen
class SyncResult:
    """What one ``sync`` planned and what applying the plan did.

    Attributes:
        plan: the plan, with its rejected pods (``plan.rejected``).
        apply_result: the outcome of every action (no results when the plan was not
            applied).
        liveness: the liveness verdicts the plan was made with, by container id: False
            for a container whose liveness probe failed failureThreshold times in a row.
        observation: what the plan was made from. Its ``images`` are empty when the
            plan needed no image list (it creates nothing and collects no images).
        applied: False when ``before_apply`` declined the plan.
        readiness: the readiness verdicts of the running containers with a readiness
            probe, by container id (for ``pod_status(..., readiness=...)``).
        startup: the decided startup verdicts, by container id: True once the
            startup probe succeeded, False when it failed failureThreshold times (the
            plan kills the container as for liveness).
    """

    plan: Plan
    apply_result: ApplyResult
    liveness: dict[str, bool] = attrs.field(factory=dict, hash=False)
    observation: Observation = attrs.field(factory=Observation, eq=False, repr=False)
    applied: bool = True
    readiness: dict[str, bool] = attrs.field(factory=dict, hash=False)
    startup: dict[str, bool] = attrs.field(factory=dict, hash=False)

    @property
    def ok(self) -> bool:
        """True when every action of the plan was done (rejected pods aside)."""
        return self.apply_result.ok


def _default_runtime() -> Runtime:
    # Imported here, not at the top: the docker SDK is only needed when podsync talks
    # to Docker, and tests with FakeRuntime never load it.
    from podsync.runtime.docker._runtime import DockerRuntime

    return DockerRuntime()


def sync(
    desired: Sequence[Pod],
    runtime: Runtime | None = None,
    *,
    options: PlanOptions | None = None,
    workers: int = DEFAULT_WORKERS,
    on_event: Callable[[Event], None] | None = None,
    probe: bool = True,
    now: float | None = None,
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
    probe_timeout: float | None = None,
    clock: Clock | None = None,
    before_apply: Callable[[Plan, Observation], bool] | None = None,
    record_probes: bool = True,
    probe_states: MutableMapping[str, str] | None = None,
    volumes: bool = False,
    pull_failures: MutableMapping[tuple[str, str], PullFailure] | None = None,
    scope: str | None = None,
    stop_records: MutableMapping[str, str] | None = None,
    pods_only: bool = False,
) -> SyncResult:
    """Make the engine run ``desired``: observe, probe, plan, apply (seed SyncPods +
    syncPod, in one pass). The desired pods are ``Pod`` objects, built in Python or
    read from files alike::

        sync([Pod("web", (Container("app", "nginx:1.27"),))], DockerRuntime())

    Args:
        desired: the pods that should run, in priority order.
        runtime: the engine; a ``podsync.docker.DockerRuntime()`` (``docker.from_env()``)
            when ``None``, closed again before ``sync`` returns.
        options: planning options (``PlanOptions()`` when ``None``); its ``root_dir`` is
            where pod directories are observed, created and torn down. Its ``scope``
            says what the sync may remove: by default only the stale instances of the
            pods given - nothing of a pod it was not given (``PlanOptions.scope``).
        workers: threads of the apply pool.
        on_event: called with each ``Event``, from worker threads, one call at a time
            (see ``apply``); failed probes are reported as ``unhealthy`` events,
            probes that could not be run as ``probe-error`` events.
        probe: run the due probes of running containers first (startup, liveness,
            readiness; see ``podsync.ProbeState`` for when a probe is due and how its
            thresholds count). A container whose liveness or startup verdict is
            failure is killed by the plan. The probes' states are kept in the engine
            (``podsync.spec._records``), so consecutive failures count across syncs and
            processes (see ``record_probes``).
        now: the time the plan is made for, seconds since the epoch; read from
            ``clock`` after the engine was observed when ``None``.
        hook_timeout: seconds a postStart handler may take (a preStop handler may take
            the grace period of its container, see ``apply``).
        probe_timeout: seconds every probe may take; ``None``: each probe's own
            ``timeoutSeconds``.
        clock: where sync reads the time, in seconds since the epoch: ``now`` when it
            is not given, the times of the events, and what ``apply`` measures with it
            (see ``apply``). The system clock when ``None``.
        before_apply: called with the plan and the observation it was made from, before
            anything is applied (to show the plan, to ask for a confirmation, to judge
            the pods); when it returns False the plan is not applied
            (``SyncResult.applied`` is False) and the engine is left as it was.
        record_probes: keep the probes' new states in the engine (the default). False
            makes the probing a dry run (``podsync plan --probe``): the results feed
            this plan, and the next sync counts as if it had not run.
        probe_states: where a long-running caller keeps the probes' states between its
            syncs instead of the engine, by container id (the loop keeps them in
            memory, as the kubelet's prober does, and writes no record per probe run).
            A container it has no states for starts from its record in the engine (an
            earlier ``apply``'s), which is then removed: the states move into the map.
        volumes: list the named volumes whatever the plan needs (one call), so that
            the emptyDir volumes of pods that are no longer desired and have no
            container left (a removal that failed) are removed too; ``podsync run``'s
            garbage collection rounds do. Without it, they are listed only when the
            plan creates a volume or removes what is left of a pod.
        pull_failures: where a caller that syncs again and again keeps the failed
            image pulls between its syncs, by (pod uid, image as the engine names it):
            the plan reads them (a container whose image failed to pull for its pod
            waits out the back-off, ``ImagePullBackOff``, instead of pulling again every
            sync) and the pulls that fail in this sync's apply are added
            (``remember_pull_failures``). ``None``: every sync starts without any.
        scope: when given, the sync's scope in place of ``options.scope``: a name
            (compose's project), or ``NODE_SCOPE`` (every podsync pod on the engine).
        stop_records: where a caller that syncs again and again keeps the stop records
            read, so that stopped containers whose record is known need no volume list
            (``observe``'s ``stop_records``, which says what the caller must do).
        pods_only: see and sync the ``desired`` pods alone, from lists of their own
            containers and volumes (``observe``'s ``pods_only``: the runtime must be a
            ``PodListRuntime``): nothing of another pod is seen, so nothing of one is
            removed, whatever the scope.

    Returns:
        The plan and the outcome of applying it. Failed runtime calls are failed
        results in it, not exceptions.

    Raises:
        RuntimeCallError: observing the engine failed, or a probe record could not be
            written there; nothing was changed.
        OSError: the root directory exists but cannot be listed, or an earlier
            podsync's probe record under it cannot be read; nothing was changed.
        ValueError: bad ``workers`` or timeouts.
        TypeError: ``clock`` is not callable, or ``pods_only`` on a runtime that is
            no ``PodListRuntime``.
    """
    the_clocks = clocks(clock)
    owned = runtime is None
    engine = _default_runtime() if runtime is None else runtime
    try:
        return _sync(
            desired,
            engine,
            options=with_scope(options, scope),
            workers=workers,
            on_event=on_event,
            with_probes=probe,
            now=now,
            hook_timeout=hook_timeout,
            probe_timeout=probe_timeout,
            clocks=the_clocks,
            before_apply=before_apply,
            record_probes=record_probes,
            probe_states=probe_states,
            collect_volumes=volumes,
            pull_failures=pull_failures,
            stop_records=stop_records,
            pods_only=pods_only,
        )
    finally:
        if owned:
            engine.close()


def _needs_images(action: Action) -> bool:
    # Without the image list every image looks absent: creates plan pulls, and a
    # container with pull policy Never waits for its image. Both must be decided again
    # with the real list.
    if isinstance(action, Create | Pull):
        return True
    # A container held for its image's user (runAsNonRoot) is decided on the image too,
    # and so is one held by a pull's back-off (only a pull that is needed waits).
    return isinstance(action, Wait) and action.reason in (
        Reason.IMAGE_NEVER_PULL,
        Reason.IMAGE_PULL_BACK_OFF,
        Reason.IMAGE_USER_UNKNOWN,
        Reason.RUN_AS_NON_ROOT,
    )


def _probe_records(
    observation: Observation, probe_states: Mapping[str, str] | None
) -> dict[str, str]:
    """The probe records the prober starts from: the caller's states where it has them,
    else the engine's records."""
    records = probe_records(records_of(observation.volumes))
    if probe_states is not None:
        records.update(probe_states)
    return records


def _keep_probe_states(
    probing: ProbeRound,
    probe_states: MutableMapping[str, str],
    runtime: Runtime,
    observation: Observation,
) -> None:
    """Keep the round's states in ``probe_states`` (the probed containers' only: a
    container that stopped starts afresh), and remove the engine records of the
    containers they now stand for, so that a later one-shot sync never counts on a
    record that fell behind.

    Raises:
        RuntimeCallError: an engine record could not be removed.
    """
    for cid in [cid for cid in probe_states if cid not in probing.states]:
        del probe_states[cid]
    for cid, (_, states) in probing.states.items():
        probe_states[cid] = states_to_json(states)
    if not isinstance(runtime, VolumeRuntime):
        return  # no named volumes: no records either
    for record in records_of(observation.volumes):
        if record.kind == VOLUME_KIND_PROBE_RECORD and record.container_id in probe_states:
            runtime.remove_volume(record.volume)


def _needs_volumes(action: Action) -> bool:
    # A volume to create (a claim's, a pod's state volume), or the removal of what is
    # left of a pod that is no longer desired, whose state volume and records go with
    # it (stopping its containers needs no volume).
    if isinstance(action, CreateVolume | RemovePodDir):
        return True
    return isinstance(action, Remove) and action.reason in (
        Reason.POD_NOT_DESIRED,
        Reason.GC_NOT_DESIRED,
    )


def _with_volumes(
    observation: Observation,
    runtime: Runtime,
    root_dir: str,
    desired: Sequence[Pod],
    pods_only: bool,
) -> Observation:
    """``observation`` with the engine's named volumes (``pods_only``: the desired
    pods' and those of no pod), and the desired pods' emptyDir host directories."""
    only = frozenset(pod.uid for pod in desired) if pods_only else None
    return attrs.evolve(
        observation,
        volumes=_confirmed(runtime, observation.containers, _list_volumes(runtime, only)),
        volumes_listed=True,
        empty_dirs=_host_empty_dirs(root_dir, desired, observation.pod_dirs),
    )


def _creates_with_requests(the_plan: Plan, desired: Sequence[Pod], images_listed: bool) -> bool:
    """Whether ``the_plan`` creates a container of a pod that requests CPU or memory:
    such a pod may have been admitted only because the capacity was not known. Made
    without the image list (``images_listed`` false), a create may show as a wait for
    its image (``_needs_images``; a pull comes with its create): those count too, or a
    pod whose pull policy is ``Never`` would be admitted unchecked on an engine where
    other pods run (more containers observed than desired, so the images come late)."""
    created = {
        a.pod_uid
        for a in the_plan.actions
        if isinstance(a, Create) or (not images_listed and isinstance(a, Wait) and _needs_images(a))
    }
    return any(pod.uid in created and pod_requests(pod) != (0, 0) for pod in desired)


def _likely_creates(desired: Sequence[Pod], observed: Sequence[ObservedContainer]) -> bool:
    """True when fewer containers are observed than ``desired`` wants running (each
    pod's app containers and its network container): then the plan creates something
    and needs the image list. A guess, never a decision: a wrong guess costs one list
    call or a second plan, not a different plan."""
    wanted = 0
    for pod in desired:
        wanted += len(pod.containers) + 1
        if wanted > len(observed):
            return True
    return False


def _sync(
    desired: Sequence[Pod],
    runtime: Runtime,
    *,
    options: PlanOptions,
    workers: int,
    on_event: Callable[[Event], None] | None,
    with_probes: bool,
    now: float | None,
    hook_timeout: float,
    probe_timeout: float | None,
    clocks: Clocks,
    before_apply: Callable[[Plan, Observation], bool] | None,
    record_probes: bool,
    probe_states: MutableMapping[str, str] | None = None,
    collect_volumes: bool = False,
    pull_failures: MutableMapping[tuple[str, str], PullFailure] | None = None,
    stop_records: MutableMapping[str, str] | None = None,
    pods_only: bool = False,
) -> SyncResult:
    _check_settings(workers, hook_timeout)
    # The plan is made for what the runtime can do: a pod that needs a capability it
    # lacks is rejected, naming it (PlanOptions.capabilities).
    options = attrs.evolve(options, capabilities=options.capabilities & capabilities(runtime))
    if probe_timeout is not None and not probe_timeout > 0:
        raise ValueError(f"probe_timeout must be positive, got {probe_timeout!r}")
    # Images matter to a plan only when it creates a container (the pull decision) or
    # collects dangling images. So the first plan is made without them, and the image
    # list is fetched only when that plan creates something: in the steady state a sync
    # observes the engine with one list call.
    # The least that can do: the volumes and the capacity are asked for below, only
    # when the plan needs them.
    observation = observe(
        runtime,
        options.root_dir,
        images=False,
        volumes=False,
        desired=desired,
        probed=with_probes,
        capacity=False,
        stop_records=stop_records,
        pods_only=pods_only,
    )
    # The plan is for the time after the observation: a container that exited while
    # the engine was listed has not ended in the plan's future.
    at = clocks.now() if now is None else now
    probing = ProbeRound()
    if with_probes:
        probing = run_prober(
            desired,
            observation.containers,
            runtime,
            root_dir=options.root_dir,
            records=_probe_records(observation, probe_states),
            now=at,
            timeout=probe_timeout,
            adopt_2014_containers=options.adopt_2014_containers,
        )
        if on_event is not None:
            for outcome in probing.outcomes:
                if outcome.healthy is True:
                    continue
                target, kind = outcome.target, outcome.target.kind.value
                if outcome.healthy is False:
                    failures, threshold = probing.failures(outcome)
                    what = f"{kind} probe failed ({failures}/{threshold})"
                else:
                    what = f"{kind} probe could not be run"
                on_event(
                    Event(
                        EventKind.UNHEALTHY if outcome.healthy is False else EventKind.PROBE_ERROR,
                        target.pod,
                        target.container,
                        f"{what}: {outcome.message}",
                        clocks.now(),
                        pod_uid=target.pod_uid,
                        container_id=target.container_id,
                        # The failure that decided a kill is why the plan replaces the
                        # container; any other failure, or a probe that could not run,
                        # changes nothing yet.
                        reason=Reason.UNHEALTHY if probing.decided_kill(outcome) else None,
                    )
                )
    liveness = probing.liveness

    def make_plan() -> Plan:
        # The observation whole: what was seen; the rest is what this sync decided.
        return plan(
            desired,
            observation,
            now=at,
            liveness=liveness,
            startup=probing.startup,
            options=options,
            pull_failures=tuple(pull_failures.values()) if pull_failures else (),
        )

    # The plan is the costly step at fleet scale, so it is made once wherever the
    # observation already says the images will be needed: when dangling images are
    # collected, or when fewer containers are observed than the pods want (something
    # will be created). Otherwise (the steady state) the plan is made without them and,
    # only if it turns out to need them after all, made again with the list.
    fetched = options.gc.remove_dangling_images or _likely_creates(desired, observation.containers)
    # The named volumes (and the emptyDir host directories of earlier podsync versions)
    # matter to a create that mounts a claim's or an emptyDir's volume: listed with the
    # images when creates are likely and a pod has such volumes, else only when the plan
    # turns out to create such a container (a plan made without the list creates every
    # volume it mounts) or to remove what is left of a pod - at most one list call, none
    # for pods without them. ``collect_volumes`` lists them whatever the plan. (A new
    # pod's state volume, where its termination messages are, is made by the engine at
    # its network container's create: nothing to list for it.)
    claims = collect_volumes or (
        fetched and any(any(map(_in_an_engine_volume, pod.volumes)) for pod in desired)
    )
    if fetched:
        observation = attrs.evolve(observation, images=tuple(runtime.list_images()))
        # A pod to create that requests resources is admitted against the engine's
        # capacity: asked for up front too, with the images.
        if any(pod_requests(pod) != (0, 0) for pod in desired):
            observation = attrs.evolve(observation, capacity=_capacity(runtime))
    if claims and not observation.volumes_listed:
        observation = _with_volumes(observation, runtime, options.root_dir, desired, pods_only)
    the_plan = make_plan()
    again = False
    if (
        observation.capacity is None
        and isinstance(runtime, NodeRuntime)
        and _creates_with_requests(the_plan, desired, images_listed=fetched)
    ):
        # Admitted without the capacity (None checks no requests): made again with it.
        # A pod that runs, or has finished, is never checked, so a steady state asks
        # for nothing.
        observation = attrs.evolve(observation, capacity=_capacity(runtime))
        again = True
    if not fetched and any(_needs_images(a) for a in the_plan.actions):
        observation = attrs.evolve(observation, images=tuple(runtime.list_images()))
        again = True
        # Without the images a container may have waited for its image instead of being
        # created: the volumes its pod mounts are listed now, for the one plan again.
        waiting = {a.pod_uid for a in the_plan.actions if isinstance(a, Wait)}
        if not observation.volumes_listed and any(
            _in_an_engine_volume(v) for pod in desired if pod.uid in waiting for v in pod.volumes
        ):
            observation = _with_volumes(observation, runtime, options.root_dir, desired, pods_only)
    if not observation.volumes_listed and any(_needs_volumes(a) for a in the_plan.actions):
        observation = _with_volumes(observation, runtime, options.root_dir, desired, pods_only)
        again = True
    if again:
        the_plan = make_plan()
    if record_probes:
        # Before anything is applied: a kill the plan makes for a verdict must not be
        # followed by a sync that forgot the count. Whether the plan is then applied
        # does not matter (a plan with nothing to do is not), the probes ran.
        if probe_states is None:
            save_probe_records(
                probing, options.root_dir, runtime, records_of(observation.volumes), at=at
            )
        else:
            _keep_probe_states(probing, probe_states, runtime, observation)
    if before_apply is not None and not before_apply(the_plan, observation):
        return SyncResult(
            the_plan,
            ApplyResult(),
            liveness,
            observation,
            applied=False,
            readiness=probing.readiness,
            startup=probing.startup,
        )
    result = apply(
        the_plan,
        runtime,
        workers=workers,
        on_event=on_event,
        hook_timeout=hook_timeout,
        clock=clocks.given,
    )
    if pull_failures is not None:
        remember_pull_failures(pull_failures, result, clocks.now())
    return SyncResult(
        the_plan,
        result,
        liveness,
        observation,
        readiness=probing.readiness,
        startup=probing.startup,
    )


def remember_pull_failures(
    failures: MutableMapping[tuple[str, str], PullFailure],
    result: ApplyResult,
    now: float,
    pods: Collection[str] | None = None,
) -> None:
    """Add the pulls that failed in ``result`` to ``failures``, one entry per pod that
    needed the image (``pull_failed``: the back-off doubles from the pod's previous
    entry, up to 300 s), and forget the entries without a failure for 600 s (the
    kubelet's image back-off, kubelet-modern.md §13). ``pods``, when given, limits the
    new entries to those pods: the loop applies one pod's part of a plan at a time, and
    another pod's own attempt at the same image is its own."""
    for done in result.failed_pulls:
        pull = done.action
        assert isinstance(pull, Pull)
        image = normalize_image(pull.image)
        for uid in pull.pods:
            if pods is not None and uid not in pods:
                continue
            key = (uid, image)
            failures[key] = pull_failed(failures.get(key), uid, image, now, done.error)
    for key in [key for key, failure in failures.items() if failure.expired(now)]:
        del failures[key]
