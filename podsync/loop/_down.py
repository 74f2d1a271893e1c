"""``down``: remove pods from an engine - the ones named, or a scope's.

``podman kube down FILE`` removes the pods of a file, ``docker compose down`` a
project's containers; ``down`` is both. ``podsync down`` on the command line calls it.
Like ``sync`` it observes, plans and applies, and never decides anything of its own: the
plan is the planner's (``plan``) over the part of the engine to remove, with nothing
desired - the pods' containers stopped within their grace periods (preStop handlers
included), then removed, exited ones of any age; their pod directories torn down; the
volumes podsync made for them removed (never a claim's).

May import: the loop's ``observe``, the planner, the apply side, options, ownership.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from podsync.actions._actions import Plan
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions, scope_problem
from podsync.applier._apply import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS, _check_settings, apply
from podsync.applier._results import ApplyResult, Event
from podsync.host._clock import Clock, clocks
from podsync.loop._observe import observe
from podsync.loop._sync import Observation, SyncResult, _default_runtime
from podsync.model._pod import ObservedVolume, Pod
from podsync.planner._plan import plan
from podsync.planner._scope import scope_conflicts
from podsync.runtime._protocol import Runtime
from podsync.spec._ownership import Identity, Instance, identify, volume_ownership

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["down"]

#: How many times ``down`` observes and applies: a second pass removes what the first
#: could not see yet (a container that a concurrent sync created between the
#: observation and the stops).
_PASSES = 2


def down(
    pods: Sequence[Pod] = (),
    runtime: Runtime | None = None,
    *,
    scope: str | None = None,
    options: PlanOptions | None = None,
    workers: int = DEFAULT_WORKERS,
    on_event: Callable[[Event], None] | None = None,
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
    clock: Clock | None = None,
    before_apply: Callable[[Plan, Observation], bool] | None = None,
) -> SyncResult:
    """Remove ``pods``, or everything of ``scope``, from the engine: the containers
    (running ones stopped first, within their grace periods), their pod directories and
    the volumes podsync made for them. What ``podsync down`` does.

    * ``down(pods)``: exactly those pods, whatever their scope - the caller named them.
    * ``down(scope="x")``: every pod of scope ``x`` (``PlanOptions.scope``): its
      containers, the volumes labelled ``x`` or made for its pods, the pod directories
      they attribute to it; never another scope's, nor a pod without a scope label.
      ``down(scope=NODE_SCOPE)`` removes every podsync pod on the engine.
    * ``down(pods, scope="x")``: those pods, as far as they are not another scope's:
      a pod whose containers carry another scope's label is left, and listed in
      ``result.plan.rejected`` (``scope-conflict``).

    Args:
        pods: the pods to remove (only their uids matter).
        runtime: the engine; a ``podsync.docker.DockerRuntime()`` when ``None``, closed
            again before ``down`` returns.
        scope: the scope to remove, or to keep ``pods`` within.
        options: planning options (``PlanOptions()`` when ``None``): the root directory,
            the stop timeout of pods without a grace period, ``adopt_2014_containers``.
            Its scope, deletion and collection settings are ``down``'s own.
        workers: as for ``sync``.
        on_event: as for ``sync``.
        hook_timeout: as for ``sync``.
        clock: as for ``sync``.
        before_apply: called with the first pass's plan and the observation it was
            made from; when it returns False nothing is applied (``applied`` False).

    Returns:
        The first pass's plan and observation; ``apply_result`` holds the results of
        every pass (a second pass removes what a concurrent sync created meanwhile).

    Raises:
        ValueError: neither pods nor a scope, or a bad scope, workers or timeout.
        RuntimeCallError: observing the engine failed; nothing was changed.
        OSError: the root directory exists but cannot be listed; nothing was changed.
    """
    if not pods and scope is None:
        raise ValueError("down needs the pods to remove, a scope, or both")
    if scope is not None:
        problem = scope_problem(scope)
        if problem is not None:
            raise ValueError(problem)
    _check_settings(workers, hook_timeout)
    the_clocks = clocks(clock)
    options = attrs.evolve(
        options or PlanOptions(),
        allow_deletions=True,
        ready_sources=None,
        # Everything of these pods goes, exited instances of any age included.
        gc=GCPolicy(max_per_container=0, min_age=0.0),
        scope=NODE_SCOPE if pods else scope,
    )
    owned = runtime is None
    engine = _default_runtime() if runtime is None else runtime
    try:
        first: SyncResult | None = None
        results: list[ApplyResult] = []
        for _ in range(_PASSES):
            observation = observe(engine, options.root_dir, volumes=True)
            the_plan = _down_plan(pods, scope, observation, options, the_clocks.now())
            if first is None:
                first = SyncResult(the_plan, ApplyResult(), observation=observation)
                if before_apply is not None and not before_apply(the_plan, observation):
                    return attrs.evolve(first, applied=False)
            if not the_plan.has_changes:
                break
            done = apply(
                the_plan,
                engine,
                workers=workers,
                on_event=on_event,
                hook_timeout=hook_timeout,
                clock=clock,
            )
            results.append(done)
            if not done.ok:
                break
        assert first is not None
        return attrs.evolve(
            first,
            apply_result=ApplyResult(
                tuple(r for done in results for r in done.results),
                sum(done.duration for done in results),
            ),
        )
    finally:
        if owned:
            engine.close()


def _down_plan(
    pods: Sequence[Pod],
    scope: str | None,
    observation: Observation,
    options: PlanOptions,
    now: float,
) -> Plan:
    """The plan that removes what ``down`` removes of ``observation``: with nothing
    desired, in ``options.scope``, over the part of the engine that is the pods' (all
    of it, for a scope alone)."""
    if not pods:
        # A scope alone: the planner's scope rule says what is the scope's.
        return plan(
            [],
            observation.containers,
            now=now,
            images=observation.images,
            pod_dirs=observation.pod_dirs,
            options=options,
            volumes=observation.volumes,
        )
    by_identity: dict[Identity, list[Instance]] = {}
    for oc in observation.containers:
        instance = identify(oc)
        if instance is not None and (options.adopt_2014_containers or instance.labelled):
            by_identity.setdefault((instance.pod_uid, instance.full_name), []).append(instance)
    # Pods named without a scope are the caller's, whatever their scope label.
    kept, theirs = scope_conflicts(NODE_SCOPE if scope is None else scope, pods, by_identity)
    uids = {p.uid for p in kept}
    mine = [i.observed for (uid, _), found in by_identity.items() if uid in uids for i in found]
    made = plan(
        [],
        mine,
        now=now,
        images=observation.images,
        pod_dirs=observation.pod_dirs & uids,
        options=options,
        volumes=[v for v in observation.volumes if pod_of_volume(v) in uids],
    )
    return attrs.evolve(made, rejected=tuple(theirs)) if theirs else made


def pod_of_volume(volume: ObservedVolume) -> str:
    """The pod uid of a volume podsync made for one pod, else ``""``."""
    owner = volume_ownership(volume)
    return owner.pod_uid if owner is not None else ""
