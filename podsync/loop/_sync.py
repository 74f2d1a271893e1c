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
from podsync.applier._content_engine import read_content_records
from podsync.applier._host_empty_dirs import list_host_empty_dirs
from podsync.applier._results import ApplyResult, Event, EventKind
from podsync.host._clock import Clock, Clocks, clocks
from podsync.host._files import list_pod_dirs, read_stop_records
from podsync.model._observation import Observation as Observation
from podsync.model._pod import ObservedContainer, ObservedVolume, Pod, ResourceList
from podsync.model._pulls import PullFailure, pull_failed
from podsync.model._volume import Volume
from podsync.planner._node_resources import pod_requests
from podsync.planner._plan import plan
from podsync.prober._probing import ProbeRound
from podsync.prober._probing import probe as run_prober
from podsync.prober._probing import save as save_probe_records
from podsync.prober._rules import states_to_json
from podsync.runtime._protocol import NodeRuntime, Runtime, VolumeRuntime, capabilities
from podsync.spec._images import normalize_image
from podsync.spec._labels import VOLUME_KIND_PROBE_RECORD
from podsync.spec._ownership import ownership
from podsync.spec._records import probe_records, records_of, stop_records

# Everything in __all__ gets re-exported as part of the podsync public API.
# ``Observation`` lives in the pure ``podsync.model._observation`` (the planner takes it);
# this module imports it for the callers that know it from here.
__all__ = ["SyncResult", "observe", "sync"]


def observe(
    runtime: Runtime,
    root_dir: str | None = None,
    *,
    images: bool = True,
    volumes: bool | None = None,
    desired: Sequence[Pod] = (),
    probed: bool = True,
    capacity: bool | None = None,
    stop_records: MutableMapping[str, str] | None = None,
) -> Observation:
    """Observe ``runtime`` and the pod directories under ``root_dir``.

    Two runtime calls (``list_containers``, ``list_images``) and one directory listing;
    with ``images=False`` the image list is skipped (``Observation.images`` is empty).
    The named volumes are listed too (a third call) with ``volumes=True``, and by
    default (``None``) when a ``desired`` pod mounts a named engine volume (a
    ``persistentVolumeClaim``'s, an on-disk ``emptyDir``'s: a plan made without the list
    creates them again) - and whenever podsync's records in the engine
    (``podsync.spec._records``) can matter: when
    an owned container does not run (its stop record), or a ``desired`` pod has probes
    (their records) or configMap, secret or downwardAPI volumes (their records).
    Stopped containers get their stop records (see
    ``ObservedContainer.stopped_by_podsync``) from there, and, for pods that an earlier
    podsync kept a directory for, from that directory: podsync records the containers
    it stops, because no engine can report it. With the volumes, the emptyDir host
    directories an earlier podsync made for the ``desired`` pods are looked for
    (``Observation.empty_dirs``).

    Args:
        runtime: the engine.
        root_dir: the root directory of pod data; ``PlanOptions().root_dir`` when
            ``None``. A missing root directory holds no pod directories.
        desired: the pods about to be planned: the records of their configMap, secret
            and downwardAPI volumes are read from the volume list (listed whenever a
            desired pod has such a volume; ``podsync.spec._content_records``), through the
            engine where no record volume is believed (one archive read per such volume
            that a container of the pod mounts), and under the root directory for the
            host directories that running containers of an earlier podsync bind.
        probed: whether the ``desired`` pods' probes are about to run: their records
            are then read (False: a sync that does not probe).
        volumes: list the named volumes: True always; False only when podsync's
            records can matter; ``None`` (the default) also when a ``desired`` pod
            mounts a claim's or an on-disk emptyDir's volume.
        capacity: ask the engine's capacity (``NodeRuntime.node_capacity``, a fourth
            call): True always, False never; ``None`` (the default) when a ``desired``
            pod requests CPU or memory (admission checks it against the capacity).
        stop_records: where a caller that observes again and again keeps the stop
            records it read, by container id (``""``: none), between its observations
            (``podsync run`` does). An owned container that does not run and whose
            record is there does not make the records matter: it gets that record, and
            a steady state with stopped containers (a restarted container's earlier
            instance, a crash-looping one's) lists no volumes. Whenever the volumes are
            listed, the map is set to the records of every owned container that does
            not run, and the others are dropped. A stop record is written before the
            stop it is about, so a container's record is final once it does not run -
            except when podsync stops one that had already ended: the caller drops the
            ids of the containers podsync stops (``EventKind.STOPPING``) from the map.

    Returns:
        The observation, ready for ``plan(desired, obs, now=...)``: taken whole, so no
        field is left out. Pass the pods about to be planned as ``desired``: for other
        pods, the records of the files podsync wrote for their configMap, secret and
        downwardAPI volumes are not read (the plan writes them again), nor are their
        volumes or the capacity they need listed. (``sync`` observes less, and lists
        what its first plan turns out to need before planning again.)

    Raises:
        RuntimeCallError: a list call failed (``EngineUnavailable`` when the engine
            cannot be reached); nothing can be planned without the observation.
        OSError: the root directory exists but cannot be listed, or a stop record or
            a volume's record cannot be read.
    """
    root = root_dir if root_dir is not None else PlanOptions().root_dir
    containers = tuple(runtime.list_containers())
    listed = tuple(runtime.list_images()) if images else ()
    if volumes is None:
        volumes = any(_in_an_engine_volume(v) for pod in desired for v in pod.volumes)
    known: Mapping[str, str] = stop_records if stop_records is not None else {}
    volumes = volumes or _records_matter(containers, desired, probed=probed, known=known)
    named = _confirmed(runtime, containers, _list_volumes(runtime)) if volumes else ()
    in_engine = _stop_records_of(named)
    if stop_records is not None:
        if volumes:
            _remember_stops(stop_records, containers, in_engine)
        else:
            in_engine = {cid: record for cid, record in stop_records.items() if record}
    if capacity is None:
        capacity = any(pod_requests(pod) != (0, 0) for pod in desired)
    pod_dirs = list_pod_dirs(root)
    return Observation(
        _with_stop_records(containers, root, pod_dirs, in_engine),
        listed,
        frozenset(pod_dirs),
        named,
        read_content_records(
            runtime, root, desired, containers, pod_dirs, named if volumes else None
        ),
        volumes,
        _host_empty_dirs(root, desired, pod_dirs) if volumes else frozenset(),
        _capacity(runtime) if capacity else None,
    )


def _confirmed(
    runtime: Runtime, containers: Sequence[ObservedContainer], volumes: Sequence[ObservedVolume]
) -> tuple[ObservedVolume, ...]:
    """``volumes``, listed after ``containers``, without the records
    (``podsync.spec._records``) of containers that were made in between.

    The plan removes the records of containers it does not see (``orphaned-record``:
    gone, removed by hand), and a container another podsync on the engine (the loop's
    worker of a pod, a ``podsync apply`` beside ``podsync run``) created and stopped
    between the two lists is not in ``containers`` while its stop record is in
    ``volumes``. So when a record names a container ``containers`` lacks, the containers
    are listed again - after the volumes, so every container a listed record is about is
    in that list unless it is gone - and the records of the ones found are left out:
    they are about no container this observation holds. One more call, only when such a
    record is listed (in practice: the sync that removes it).

    Raises:
        RuntimeCallError: the second list failed.
    """
    listed = tuple(volumes)
    known = {c.id for c in containers}
    missing = {r.container_id for r in records_of(listed) if r.container_id not in known}
    if not missing:
        return listed
    late = missing.intersection(c.id for c in runtime.list_containers())
    if not late:
        return listed
    young = {r.volume for r in records_of(listed) if r.container_id in late}
    return tuple(v for v in listed if v.name not in young)


def _host_empty_dirs(
    root_dir: str, desired: Sequence[Pod], pod_dirs: Collection[str]
) -> frozenset[tuple[str, str]]:
    """The emptyDir host directories of the desired pods that have a pod directory."""
    pods = [
        (pod.uid, [v.name for v in pod.volumes if v.on_disk])
        for pod in desired
        if pod.uid in pod_dirs and any(v.on_disk for v in pod.volumes)
    ]
    return frozenset(list_host_empty_dirs(root_dir, pods)) if pods else frozenset()


def _stop_records_of(volumes: Sequence[ObservedVolume]) -> dict[str, str]:
    return stop_records(records_of(volumes))


def _remember_stops(
    known: MutableMapping[str, str],
    containers: Sequence[ObservedContainer],
    in_engine: Mapping[str, str],
) -> None:
    """Set ``known`` (``observe``'s ``stop_records``) from a volume list: the record of
    every owned container that does not run, ``""`` for none; the rest dropped."""
    stopped = {
        c.id
        for c in containers
        if not c.running and ownership(c, adopt_2014_containers=True) is not None
    }
    for cid in [cid for cid in known if cid not in stopped]:
        del known[cid]
    for cid in stopped:
        known[cid] = in_engine.get(cid, "")


def _records_matter(
    containers: Sequence[ObservedContainer],
    desired: Sequence[Pod],
    *,
    probed: bool,
    known: Mapping[str, str],
) -> bool:
    """Whether podsync's records in the engine can matter to a plan of ``desired``: an
    owned container that does not run may have a stop record (and may be removed, its
    record with it), and the probes of a desired pod count on their records. In the
    steady state of pods without probes (everything runs) there is nothing to read.
    The records of configMap, secret and downwardAPI volumes are record volumes too
    (``podsync.spec._content_records``): for a desired pod with one, the list call replaces
    an archive read per volume. ``probed``: whether the desired pods' probes are about
    to run (else their records do not matter). A stopped container whose record is
    ``known`` (``observe``'s ``stop_records``) needs no list."""
    for pod in desired:
        if any(v.content is not None for v in pod.volumes):
            return True
        if not probed:
            continue
        for c in (*pod.init_containers, *pod.containers):
            if c.liveness_probe or c.readiness_probe or c.startup_probe:
                return True
    return any(
        not c.running and c.id not in known and ownership(c, adopt_2014_containers=True) is not None
        for c in containers
    )


def _with_stop_records(
    containers: tuple[ObservedContainer, ...],
    root_dir: str,
    pod_dirs: Collection[str],
    in_engine: Mapping[str, str],
) -> tuple[ObservedContainer, ...]:
    """``containers``, with ``stopped_by_podsync`` set from podsync's stop records for
    each owned container that does not run (a running container's record is never read:
    it was not stopped, or it was started again): those in the engine (``in_engine``),
    and those an earlier podsync wrote in the pod directories of such containers (read
    only where a directory exists, so a steady state reads none)."""
    wanted: dict[str, set[str]] = {}
    for container in containers:
        if container.running or container.stopped_by_podsync:
            continue
        # Records exist only where podsync wrote them, so looking for those of every
        # container podsync might own (2014 kubelet names included) costs nothing.
        owner = ownership(container, adopt_2014_containers=True)
        if owner is not None and owner.pod_uid in pod_dirs:
            wanted.setdefault(owner.pod_uid, set()).add(container.id)
    records: dict[str, str] = {}
    for uid, ids in wanted.items():
        records.update(read_stop_records(root_dir, uid, ids))
    records.update(
        (c.id, in_engine[c.id]) for c in containers if not c.running and c.id in in_engine
    )
    if not records:
        return containers
    return tuple(
        attrs.evolve(c, stopped_by_podsync=records[c.id]) if c.id in records else c
        for c in containers
    )


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

    Returns:
        The plan and the outcome of applying it. Failed runtime calls are failed
        results in it, not exceptions.

    Raises:
        RuntimeCallError: observing the engine failed, or a probe record could not be
            written there; nothing was changed.
        OSError: the root directory exists but cannot be listed, or an earlier
            podsync's probe record under it cannot be read; nothing was changed.
        ValueError: bad ``workers`` or timeouts.
        TypeError: ``clock`` is not callable.
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


def _in_an_engine_volume(volume: Volume) -> bool:
    """Whether a pod volume's data is a named engine volume (a claim's, an emptyDir's
    on disk, a configMap's, secret's or downwardAPI's files): a create that mounts it
    needs the volume list."""
    return volume.claim is not None or volume.on_disk or volume.content is not None


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
    observation: Observation, runtime: Runtime, root_dir: str, desired: Sequence[Pod]
) -> Observation:
    """``observation`` with the engine's named volumes, and the desired pods' emptyDir
    host directories."""
    return attrs.evolve(
        observation,
        volumes=_confirmed(runtime, observation.containers, _list_volumes(runtime)),
        volumes_listed=True,
        empty_dirs=_host_empty_dirs(root_dir, desired, observation.pod_dirs),
    )


def _list_volumes(runtime: Runtime) -> list[ObservedVolume]:
    """The engine's named volumes; none on a runtime without them (``VolumeRuntime``),
    whose plans use none."""
    return runtime.list_volumes() if isinstance(runtime, VolumeRuntime) else []


def _capacity(runtime: Runtime) -> ResourceList | None:
    """The engine's capacity; ``None`` (unknown: no pod is checked against it) on a
    runtime that does not tell it (``NodeRuntime``)."""
    return runtime.node_capacity() if isinstance(runtime, NodeRuntime) else None


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
        observation = _with_volumes(observation, runtime, options.root_dir, desired)
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
            observation = _with_volumes(observation, runtime, options.root_dir, desired)
    if not observation.volumes_listed and any(_needs_volumes(a) for a in the_plan.actions):
        observation = _with_volumes(observation, runtime, options.root_dir, desired)
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
