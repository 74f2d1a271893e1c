"""The planner: desired pods + observed state -> an explained, deterministic plan.

Rule 1: everything that decides an action lives in the planner: this module (``plan``:
indexing what is observed, pods no longer desired, pod directories, dangling images),
scopes (``_scope``), what pods that are gone leave behind (``_leftovers``),
admission (``_admission``), the per-pod planner (``_pod``, with ``_init`` and
``_restarts``), spec comparison (``_spec_change``) and garbage collection (``_gc``). The
apply side executes a plan and decides nothing; the helpers (naming, hashing, ports,
...) compute values; the plan's vocabulary (``_actions``), options (``_options``) and
the ownership rule (``_ownership``) are shared with the runtime side, which never
imports the planner.

May import: the model and helpers, the vocabulary, options, ownership, the fingerprint
and the other planner modules. Never a runtime or anything that does I/O
(tests/unit/test_layering.py checks it).

Theory of operation
===================

The seed's ``SyncPods`` / ``syncPod`` / ``GarbageCollect*`` (reference §2.3-§2.6)
decided and acted in one pass, talking to Docker as they went. ``plan`` is the deciding
half, pure: it reads only its arguments (no I/O, no clock, no randomness, no
environment), so equal inputs give an equal ``Plan``, and a plan can be shown, saved,
tested and applied later.

1. *Admission.* Pods are taken in order. A pod that repeats an earlier pod's uid or full
   name, has an image reference the engine would refuse, fails a check of the Pod
   Security level (privileged containers - the seed's capabilities check -, host
   namespaces, hostPath, capabilities, ...: ``_pod_security``), requests
   more CPU or memory than the node has left (``capacity`` less the system's reserve
   and what the pods admitted before it request), or wants a host port that a running
   pod holds or an earlier pod was given (pods that already run are admitted first) is
   rejected: it appears in ``Plan.rejected`` and nothing is done to it or to its
   containers. A pod that has finished (its per-pod plan, below, starts nothing and
   waits for nothing: none of its containers runs or will run again) holds neither
   host ports nor resources (``_admission``).
2. *Ownership* (``ownership``, the one rule every part of podsync uses). A container
   with any ``io.kubernetes.`` label is a Kubernetes node's (Docker Desktop, cri-dockerd,
   dockershim name theirs ``k8s_<c>_<pod>_<ns>_<uid>_<n>``) and never podsync's. Else it
   is podsync's when it carries ``LABEL_POD_UID``, or - only with
   ``PlanOptions.adopt_2014_containers`` - when it has no podsync label and its name is
   exactly the seed's format (``parse_2014_container_name``): a container a 2014
   kubelet left behind. Everything else is foreign and never appears in a plan. An
   owned container belongs to a desired pod when uid and full name match.
3. *Per desired pod* (seed syncPod, with the fixes in docs/differences.md):
   a. The network container ``net`` must run, with the current network spec hash (its
      image, hostname, DNS policy and every port of the pod, and the options that shape
      it: network mode, cluster DNS and the host resolv.conf content merged with it).
      If it does not, the pod is rebuilt: its running containers are stopped, ``net``
      is created, then the app containers. A ``net`` that died under running
      containers fails them (``network-lost``: restarted through their back-off); a
      ``Never`` pod is then killed and not rebuilt (the kubelet's computePodActions).
      A ``net`` podsync stopped itself (its stop record: a rebuild whose new ``net``
      could not be created) did not die: the rebuild goes on.
   b. Each app container in spec order: the newest running instance is kept when its
      spec is unchanged and its liveness probe has not failed; otherwise it is
      replaced - only that container, never the network container (the seed stopped
      ``net`` too and joined the new container to a dead namespace). Other running
      instances are duplicates and are stopped.
   c. A container with no running instance is judged on its newest stopped instance
      (the modern kubelet's ShouldContainerBeRestarted, kubelet-modern.md §1.1, with
      podsync's stop records): it starts when it never ran; when the instance is not a
      run - created but never started, or stopped by podsync for anything but a
      failure - whatever the restart policy; and otherwise when the restart policy
      allows (Always; OnFailure after a failure; never for Never, whatever its spec
      now: the restart policy is absolute), after an exponential back-off (10 s
      doubling to 5 min, as the modern kubelet) - at once, with a fresh back-off, when
      its spec changed. A container podsync killed for a failure (liveness probe,
      postStart handler, a network container that died under it) failed, whatever its
      exit code.
   d. Running containers whose name is no longer in the spec are stopped (the seed's
      duplicate sweep). When no app container runs or will run, ``net`` is stopped too.
4. *Pods no longer desired*: their running containers are stopped, their exited ones
   removed, and their pod directory torn down - only when deletions are allowed (the
   seed's ``sourcesReady``), and only the pods of the plan's scope (``_scope``: every
   pod for the node scope, as the kubelet; the pods labelled with a named scope's name;
   none but a desired pod's stale instances without a scope). A desired pod of another
   scope is rejected (``scope-conflict``) unless the scope is the node's. A whole
   pod's stop - here, on a rebuild (3a), and once a pod has completed (3d) - is the
   kubelet's KillPod: its kills run at once, sidecars in their turn, the network
   container last (``_termination``). The records podsync keeps of a container
   (``_records``) whose container is gone - removed by hand - are removed whatever the
   pod, if it is in the plan's scope (``_leftovers``).
5. *Garbage collection*, as actions: exited containers beyond ``max_per_container``
   per pod container and older than ``min_age`` are removed, the last to end kept -
   the instance the restart policy is judged on, also when this plan stops it (the
   seed meant to group per pod container but parsed the container ID, so everything
   fell in one bucket); an optional global cap, which keeps it too; dangling images
   when asked. A network container is removed only after every container that joins
   it, and stays while one is left (``_joins``: the kubelet's evictSandboxes keeps a
   sandbox that has containers; podman refuses the removal).
6. *Pulls* are plan-level actions that come before every pod's actions, one per image
   as the engine names it (``normalize_image``: ``busybox`` and
   ``docker.io/library/busybox`` are one pull). A container without a pull policy gets
   the kubelet's default from its tag (Always for ``:latest`` or none); a pull that
   failed for a pod is not tried again for it before its back-off ends (10 s doubling
   to 300 s, ``pull_failures``): its container waits (``ImagePullBackOff``). The
   network image too: ``net`` then waits, nothing that would join it starts, and a pod
   that runs on its old ``net`` runs on.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping, Sequence

import attrs

from podsync.actions._actions import (
    Create,
    CreateVolume,
    Plan,
    PodAction,
    PodPlan,
    Reason,
    RemoveImage,
    RemovePodDir,
    Wait,
    WriteVolume,
)
from podsync.actions._fingerprint import scoped_fingerprint
from podsync.actions._options import PlanOptions
from podsync.model._observation import Observation, field_by_field
from podsync.model._pod import (
    ObservedContainer,
    ObservedImage,
    ObservedVolume,
    Pod,
    PullPolicy,
    ResourceList,
)
from podsync.model._pulls import PullFailure
from podsync.model._volume import WrittenVolume
from podsync.planner._admission import admit
from podsync.planner._claims import claim_of, claim_setup
from podsync.planner._context import PlanContext, by_pod_and_image
from podsync.planner._empty_dirs import empty_dir_of, empty_dir_setup, not_the_pods
from podsync.planner._gc import apply_global_cap, plan_orphan
from podsync.planner._joins import order_network_removals
from podsync.planner._leftovers import remove_gone_records, remove_pod_volumes
from podsync.planner._pod import PodPlanner
from podsync.planner._scope import ScopeRule, in_input_order, scope_conflicts
from podsync.planner._terminal import finished
from podsync.planner._volumes import record_upkeep, volume_writes
from podsync.spec._content_records import PodVolume, RecordChoice, record_choices
from podsync.spec._images import normalize_image
from podsync.spec._labels import (
    LABEL_EMPTY_DIRS,
)
from podsync.spec._naming import is_safe_uid
from podsync.spec._ownership import Identity, Instance, identify
from podsync.spec._resolv import (
    ResolvConf,
    parse_resolv_conf,
    without_loopback,
)
from podsync.spec._volumes import (
    pod_state_volume_labels,
    pod_state_volume_name,
)

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["plan"]


def plan(
    desired: Sequence[Pod],
    observed: Observation | Sequence[ObservedContainer] = (),
    *,
    now: float,
    images: Sequence[ObservedImage] | None = None,
    pod_dirs: Collection[str] | None = None,
    liveness: Mapping[str, bool] | None = None,
    options: PlanOptions | None = None,
    startup: Mapping[str, bool] | None = None,
    volumes: Sequence[ObservedVolume] | None = None,
    volume_files: Sequence[WrittenVolume] | None = None,
    empty_dirs: Collection[tuple[str, str]] | None = None,
    pull_failures: Collection[PullFailure] = (),
    capacity: ResourceList | None = None,
) -> Plan:
    """Compute what to do to make the observed state match the desired pods.

    Pure: reads nothing but its arguments; equal arguments give an equal plan. The
    desired pods are ``Pod`` objects, built in Python or read from files alike::

        web = Pod("web", (Container("app", "nginx:1.27"),))
        plan([web], observed=[], now=0.0).describe()  # pull the images, create net and app

    What was seen and what was decided. The second argument is what was *seen*: an
    ``Observation`` (``podsync.observe``'s, taken whole: ``plan(pods, obs, now=...)``),
    or, field by field, the containers alone with the other things seen as the
    keywords ``images``, ``pod_dirs``, ``volumes``, ``volume_files``, ``empty_dirs`` and
    ``capacity`` - the fields of an ``Observation``, each empty (``capacity``: unknown)
    when not given. Given an ``Observation``, these keywords are refused
    (``TypeError``): the observation already holds them, and two values of one fact
    would disagree. The node's capacity is seen (``Runtime.node_capacity``), so it is
    the observation's. The other keywords are what the *caller* decided or remembers
    from one sync to the next, never seen in one look at the engine: ``now``,
    ``options``, the probe verdicts ``liveness`` and ``startup`` (decided by the
    prober over rounds, against thresholds) and ``pull_failures`` (remembered across
    syncs, with their back-off); they are given with either form.

    Field by field, a fact left out is a fact not seen: a plan made without the
    volume list creates the pods' claim and emptyDir volumes again (beside a network
    container made before issue 27, their state volume: ``create volume
    podsync-state_...``) and removes no volume, and one made without ``volume_files``
    writes their configMap, secret and downwardAPI files again. ``observe(runtime,
    root_dir, desired=pods)`` lists what the plan of those pods needs, so its
    ``Observation`` passed whole leaves nothing out.

    Args:
        desired: the pods that should run, in priority order: a pod that already runs
            keeps its host ports, then earlier pods win host-port conflicts.
        observed: an ``Observation``, or every container on the engine, exited ones
            included; foreign containers are ignored.
        now: the current time, seconds since the Unix epoch (for ages, back-off and
            liveness grace periods).
        images: the images present on the engine (``Observation.images``).
        pod_dirs: the pod uids that have a directory under ``options.root_dir``
            (``Observation.pod_dirs``).
        liveness: liveness verdicts of running containers by container id: False
            means the probe failed (failureThreshold times in a row, when ``sync``
            probes). A container with no verdict is considered healthy.
        options: everything else (see ``PlanOptions``).
        startup: startup verdicts of running containers by container id: True once
            the startup probe succeeded, False when it failed. A container whose
            startup probe has not succeeded has not started: its liveness verdict does
            not count yet (the kubelet runs no liveness probe before the start); False
            kills it as a liveness failure does.
        volumes: the named volumes on the engine (``Observation.volumes``). A
            ``persistentVolumeClaim``'s volume that is not among them is created
            (``CreateVolume``) before the first container that mounts it; one that
            is, but was not made by podsync, is used as it is (the create says so). An
            on-disk ``emptyDir``'s volume (``empty_dir_volume_name``) is created, and
            set up, before the first container that mounts it when it is not among
            them; the volumes podsync
            made for a pod that is no longer desired are removed once none of its
            containers is left (``RemoveVolume``), when deletions are allowed and the
            pod is in the plan's scope. The stop and probe records of a container that
            is not in ``observed`` (removed by hand: ``observed`` is every container, so
            it is gone) are removed whatever the pod of the plan's scope, deletions
            allowed or not (``orphaned-record``).
            Creating a volume that exists changes nothing, so a plan made without the
            list is safe, only less informed (it removes no volume).
        volume_files: the records of the volume files podsync wrote under the root
            directory (configMap, secret and downwardAPI volumes;
            ``Observation.volume_files``); a volume whose files differ from its content,
            or have no record, is written (``WriteVolume``).
        empty_dirs: the host directories of ``emptyDir`` volumes that an earlier
            podsync made (``<root>/<pod uid>/volumes/empty/<volume>``), as (pod uid,
            volume name) pairs (``Observation.empty_dirs``). A pod whose containers all
            stopped binding them moves to engine volumes: such a directory is copied
            into its volume, and then removed, before the first container that mounts
            the volume (``CreateVolume`` with ``copy_from``).
        pull_failures: the image pulls that failed, per pod and image, with their
            back-off (``PullFailure``, kept by whoever runs the syncs: ``sync``'s
            ``pull_failures``). A container whose create would pull an image that
            failed for its pod less than the back-off ago waits
            (``image-pull-back-off``, the kubelet's ``ImagePullBackOff``) instead of
            being created, and the image is not pulled for it.
        capacity: the node's CPUs (milli-CPU) and memory (bytes), as the engine reports
            them (``NodeRuntime.node_capacity``, ``Observation.capacity``): a pod that is
            not running yet is admitted only when its requests fit in it, less
            ``options.system_reserved`` and what the pods admitted before it request
            (``OutOfcpu``, ``OutOfmemory``); its memory is also the host's memory of the
            OOM scores when ``options.memory_capacity`` is 0. ``None`` (unknown) checks
            no requests.

    Returns:
        The plan; ``plan.has_changes`` is False when there is nothing to do.

    Raises:
        TypeError: an ``Observation`` given with one of the keywords it holds.
    """
    seen = field_by_field(
        observed,
        images=images,
        pod_dirs=pod_dirs,
        volumes=volumes,
        volume_files=volume_files,
        empty_dirs=empty_dirs,
        capacity=capacity,
    )
    # Nothing process-wide is touched (it once paused the cyclic garbage collector,
    # which every other thread felt): the plan is kept fast by doing less work - each
    # container hashed once, a few long-lived objects per observed container.
    return _plan(
        desired,
        seen.containers,
        now=now,
        images=seen.images,
        pod_dirs=seen.pod_dirs,
        liveness=liveness,
        startup=startup,
        options=options or PlanOptions(),
        volumes=seen.volumes,
        volume_files=seen.volume_files,
        empty_dirs=seen.empty_dirs,
        pull_failures=pull_failures,
        capacity=seen.capacity,
    )


def _plan(
    desired: Sequence[Pod],
    observed: Sequence[ObservedContainer],
    *,
    now: float,
    images: Sequence[ObservedImage],
    pod_dirs: Collection[str],
    liveness: Mapping[str, bool] | None,
    options: PlanOptions,
    startup: Mapping[str, bool] | None = None,
    volumes: Sequence[ObservedVolume] = (),
    volume_files: Sequence[WrittenVolume] = (),
    empty_dirs: Collection[tuple[str, str]] = (),
    pull_failures: Collection[PullFailure] = (),
    capacity: ResourceList | None = None,
) -> Plan:
    present: set[str] = set()
    users: dict[str, str] = {}
    for image in images:
        names = [image.id, *map(normalize_image, image.tags), *map(normalize_image, image.digests)]
        present.update(names)
        if image.user is not None:
            users.update(dict.fromkeys(names, image.user))
    if capacity is not None and options.memory_capacity == 0:
        # The OOM score of a Burstable container is its memory request's share of the
        # host's memory (GetContainerOOMScoreAdjust): the capacity admission reads.
        options = attrs.evolve(options, memory_capacity=capacity.memory)
    ctx = PlanContext(
        options=options,
        now=now,
        present_images=frozenset(present),
        liveness=liveness or {},
        startup=startup or {},
        host_resolv=_host_resolv(options),
        image_users=users,
        pull_failures=by_pod_and_image(pull_failures),
    )
    # Index owned containers by pod identity (one pass: the seed scanned the whole list
    # for every lookup, which is quadratic). A 2014 kubelet's container that is not taken
    # over is set aside: only the fingerprint sees it (see plan_fingerprint).
    by_identity: dict[Identity, list[Instance]] = {}
    not_adopted: dict[Identity, list[Instance]] = {}
    adopt = options.adopt_2014_containers
    for oc in observed:
        instance = identify(oc)
        if instance is None:
            continue
        identity = (instance.pod_uid, instance.full_name)
        index = by_identity if adopt or instance.labelled else not_adopted
        group = index.get(identity)
        if group is None:
            group = index[identity] = []
        group.append(instance)

    # The plans of the finished pods, made to find them finished (``_terminal``).
    finished_plans: dict[str, list[PodAction]] = {}
    # Another scope's pods are not this plan's to run (``_scope``).
    candidates, theirs = scope_conflicts(options.scope, desired, by_identity)
    accepted, rejected = admit(
        candidates,
        options,
        by_identity,
        capacity=capacity,
        finished=lambda pod: finished(pod, by_identity, not_adopted, ctx, finished_plans),
    )
    if theirs:
        rejected = in_input_order(desired, [*theirs, *rejected])
    scope = ScopeRule(options.scope, by_identity, volumes, {p.uid for p in accepted})
    # The records of what podsync wrote: read from the engine volumes, and (for
    # containers of earlier podsync versions) under the root directory.
    written: dict[str, dict[str, WrittenVolume]] | None = None
    host_written: dict[str, dict[str, WrittenVolume]] = {}
    if any(v.content is not None for pod in accepted for v in pod.volumes):
        written = {}
        for record in volume_files:
            into = written if record.volume else host_written
            into.setdefault(record.pod_uid, {})[record.name] = record

    # Each pod plan with actions is a group; ``owner`` says which group an observed
    # identity's actions go to.
    groups: dict[Identity, tuple[str, list[PodAction]]] = {}
    owner: dict[Identity, Identity] = {}
    # The record volumes of content volumes, by pod volume, and the volumes by name:
    # made once, for the first pod with such volumes.
    content_choices: dict[PodVolume, RecordChoice] | None = None
    listed: dict[str, ObservedVolume] = {}
    for pod in accepted:
        identity = (pod.uid, pod.full_name)
        owner[identity] = identity
        if pod.scheduling_gates:
            groups[identity] = (pod.key, _gated(pod))
            continue
        instances = list(by_identity.get(identity, ()))
        actions = finished_plans.get(pod.uid)
        if actions is None:
            actions = PodPlanner(pod, instances, ctx, not_adopted.get(identity, ())).plan()
        if written is not None and any(v.content is not None for v in pod.volumes):
            # The volume files first: they exist before any container that mounts them
            # is created, and change in place under the ones that run. The helper
            # containers that write them run the pod's network image, which the pod
            # needs anyway (pulled when absent).
            writes = volume_writes(
                pod,
                host=host_written.get(pod.uid, {}),
                engine=written.get(pod.uid, {}),
                instances=instances,
                actions=actions,
                volumes=volumes,
                image=options.network_image,
                root_dir=options.root_dir,
            )
            if any(isinstance(a, WriteVolume) and a.engine_volume for a in writes):
                ctx.need_image(options.network_image, PullPolicy.IF_NOT_PRESENT, pod.uid)
            if content_choices is None:
                listed = {v.name: v for v in volumes}
                content_choices = record_choices(volumes)
            upkeep = record_upkeep(
                pod,
                engine=written.get(pod.uid, {}),
                writes=writes,
                present=listed,
                records=content_choices,
            )
            actions[:0] = writes
            actions.extend(upkeep)
        if actions and (
            any(v.claim is not None or v.on_disk for v in pod.volumes)
            or any(isinstance(a, Create) and _uses_pod_state(pod, a) for a in actions)
        ):
            mounted = any(LABEL_EMPTY_DIRS in i.observed.labels for i in instances)
            actions = _with_volumes(pod, actions, volumes, empty_dirs, ctx, used=mounted)
        if actions:
            # A pod with nothing to do holds nothing past its planning (the steady
            # state: 10,000 pods, no groups).
            groups[identity] = (pod.key, scope.labelled(actions))

    # Pods that are not desired, only when deletions are allowed, and only those of the
    # plan's scope (``_scope``). Rejected pods are left alone: they were not admitted,
    # but nobody asked for them to go away either. An identity with a desired uid but
    # another full name is a stale instance of that pod and goes, in every scope (the
    # seed skipped such containers in SyncPods and left them running).
    rejected_uids = {r.uid for r in rejected}
    if options.allow_deletions:
        by_uid: dict[str, Identity] = {}
        for identity in sorted(by_identity):
            if identity in owner or identity[0] in rejected_uids:
                continue
            instances = by_identity[identity]
            if not scope.owns_pod(identity, instances):
                continue
            ready = options.ready_sources
            if ready is not None and instances[0].pod_source not in ready:
                continue
            key = instances[0].pod_key
            owner[identity] = identity
            groups[identity] = (key, plan_orphan(key, identity[0], instances, options, now))
            by_uid.setdefault(identity[0], identity)
        keep_dirs = {p.uid for p in accepted} | rejected_uids
        for uid in sorted(pod_dirs):
            if uid in keep_dirs or not is_safe_uid(uid):
                # Not a name podsync gives a pod directory; and a path is never built
                # from a name that could leave the root directory.
                continue
            if options.ready_sources is not None and uid not in by_uid:
                # Without containers the directory's source is unknown: keep it until
                # every source is ready.
                continue
            if uid not in by_uid and not scope.owns_uid(uid):
                # A pod directory names no scope: without containers it is the
                # plan's when a volume of its pod carries the plan's scope.
                continue
            path = posixpath.join(options.root_dir, uid)
            teardown = RemovePodDir(
                pod_uid=uid,
                path=path,
                reason=Reason.ORPHANED_POD_DIR,
                message=f"tear down {path}: pod is no longer desired",
            )
            identity = by_uid.get(uid, (uid, ""))
            groups.setdefault(identity, ("", []))[1].append(teardown)

    # Of the plan's scope only (``ScopeRule.counted``).
    apply_global_cap(groups, owner, scope.counted(by_identity, owner), options.gc.max_total, now)
    # A network container goes after every container that joins it, and stays while one
    # is left (``_joins``): every identified container counts, taken over or not.
    order_network_removals(
        groups, [i for index in (by_identity, not_adopted) for g in index.values() for i in g]
    )
    if options.allow_deletions and volumes:
        remove_pod_volumes(
            groups,
            volumes,
            by_identity,
            {p.uid for p in accepted} | rejected_uids,
            options,
            scope,
        )
    if volumes:
        remove_gone_records(groups, volumes, observed, by_identity, accepted, rejected_uids, scope)
    pod_plans = [
        PodPlan(key, identity[0], identity[1], tuple(actions))
        for identity, (key, actions) in groups.items()
        if actions
    ]
    pod_plans.sort(key=lambda p: (p.pod, p.uid, p.full_name))

    cleanup: list[RemoveImage] = []
    if options.gc.remove_dangling_images:
        used = {oc.image for oc in observed}
        for image in sorted(images, key=lambda i: i.id):
            if not image.tags and image.id not in used:
                cleanup.append(
                    RemoveImage(
                        image.id,
                        Reason.DANGLING_IMAGE,
                        f"remove image {image.id}: dangling (untagged and unused)",
                    )
                )

    made = Plan(
        pulls=ctx.pull_actions(),
        pods=tuple(pod_plans),
        cleanup=tuple(cleanup),
        rejected=tuple(rejected),
        options=options,
    )
    if not_adopted:
        for identity, instances in not_adopted.items():
            by_identity[identity] = [*by_identity.get(identity, ()), *instances]
    fingerprint = scoped_fingerprint(made, by_identity, images, pod_dirs, volume_files)
    return attrs.evolve(made, fingerprint=fingerprint)


def _with_volumes(
    pod: Pod,
    actions: list[PodAction],
    volumes: Sequence[ObservedVolume],
    empty_dirs: Collection[tuple[str, str]],
    ctx: PlanContext,
    *,
    used: bool = False,
) -> list[PodAction]:
    """``actions`` with a ``CreateVolume`` before the first create that mounts each
    claim or ``emptyDir`` volume the engine does not have (and each ``emptyDir`` whose
    host directory an earlier podsync left), a claim's root set up for the pod's fsGroup
    (``claim_setup``), and the creates that mount a volume podsync did not make saying
    so.

    podman's ``kube play`` makes a claim's volume when it is missing and uses one that
    exists, whoever made it; podsync does the same, but creates the volume itself, with
    its labels, rather than letting the engine make it unlabelled at the container's
    create (Docker does), so that the volume is known as podsync's. A volume of the
    claim's name that is not podsync's was provisioned by someone else: it is used as
    it is, never created or relabelled, and the plan says so."""
    present = {v.name: v for v in volumes}
    created: set[str] = set()
    out: list[PodAction] = []
    for action in actions:
        if isinstance(action, Create) and _uses_pod_state(pod, action):
            state = _pod_state_volume(pod, action, present, created)
            if state is not None:
                out.append(state)
        if isinstance(action, Create) and action.spec.volumes:
            foreign: list[str] = []
            for mounted in action.spec.volumes:
                name = mounted.volume
                if name in created:
                    continue
                empty = empty_dir_of(pod, name)
                if empty is not None:
                    created.add(name)
                    observed = present.get(name)
                    setup = empty_dir_setup(
                        pod, empty, observed, empty_dirs, ctx.options, used=used
                    )
                    if setup is not None:
                        # The helper container that sets the volume up runs the pod's
                        # network image: pulled when absent.
                        ctx.need_image(setup.image, PullPolicy.IF_NOT_PRESENT, pod.uid)
                        out.append(setup)
                    elif not_the_pods(observed, pod.uid, empty):
                        foreign.append(
                            f"volume {name} exists and was not made by podsync: used as it is"
                        )
                    continue
                claim = claim_of(pod, name)
                if claim is None:
                    continue
                created.add(name)
                claim_create, note = claim_setup(pod, claim, present.get(name), ctx.options)
                if claim_create is not None:
                    if claim_create.image:  # the fsGroup's set-up: a helper container
                        ctx.need_image(claim_create.image, PullPolicy.IF_NOT_PRESENT, pod.uid)
                    out.append(claim_create)
                if note:
                    foreign.append(note)
            if foreign:
                action = attrs.evolve(action, message=f"{action.message} ({'; '.join(foreign)})")
        out.append(action)
    return out


def _uses_pod_state(pod: Pod, action: Create) -> bool:
    """Whether ``action`` binds a file of ``pod``'s state volume that is written through
    a container made for it: beside a network container made before issue 27, which
    does not mount the volume. The network container of this version mounts it with its
    labels (``pod_state_mount``): the engine creates it at that create, and it exists
    while that container does (Docker removes no volume a container mounts), so a file
    written through it needs no create, whether the volume list is known or not."""
    name = pod_state_volume_name(pod.uid)
    return any(m.volume == name and not m.through for m in action.spec.file_mounts)


def _pod_state_volume(
    pod: Pod, action: Create, present: Mapping[str, ObservedVolume], created: set[str]
) -> CreateVolume | None:
    """The ``CreateVolume`` of ``pod``'s state volume before ``action``, the first create
    that binds a file of it written through a container made for it (beside a network
    container made before issue 27), when the engine does not have it. A plan made
    without the volume list creates it every time: a create of an existing volume
    changes nothing."""
    name = pod_state_volume_name(pod.uid)
    if name in created or name in present:
        return None
    created.add(name)
    return CreateVolume(
        pod=pod.key,
        pod_uid=pod.uid,
        volume=name,
        labels=pod_state_volume_labels(pod),
        reason=Reason.POD_STATE_FIRST_USE,
        message=f"create volume {name}: the pod's termination messages: first use",
    )


def _gated(pod: Pod) -> list[PodAction]:
    """The plan of a pod with scheduling gates: it is not ready to run (a cluster would
    not schedule it, kubelet-modern.md: PodScheduled False, SchedulingGated), so each
    container waits, saying why, and nothing is pulled, created or stopped - what runs
    of it already (a gate added to a running pod) is left as it is."""
    gates = ", ".join(pod.scheduling_gates)
    return [
        Wait(
            pod=pod.key,
            pod_uid=pod.uid,
            container=c.name,
            seconds=0.0,
            reason=Reason.SCHEDULING_GATED,
            message=(
                f"wait {pod.key}/{c.name}: the pod has scheduling gates ({gates}): not ready to run"
            ),
        )
        for c in pod.containers
    ]


def _host_resolv(options: PlanOptions) -> ResolvConf:
    """The host's DNS settings as pods can use them: a loopback name server (the
    systemd-resolved stub ``127.0.0.53``, a local dnsmasq) answers only on the host's
    own loopback, so it is left out unless pods share the host's network, as Docker's
    resolv.conf filter (libnetwork ``FilterResolvDNS``) and the kubelet's advice for
    systemd-resolved hosts (kubelet-modern.md §12) do."""
    host = parse_resolv_conf(options.host_resolv_conf)
    return host if options.network_mode == "host" else without_loopback(host)
