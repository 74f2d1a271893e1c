"""``podsync apply --wait``: after the apply, sync again with back-off until every pod is
up, then report per pod.

As the seed's run-once (reference §5), ``--wait`` syncs again, with back-off, until
every pod is up - running, or for a run-to-completion pod completed - or will not come
up (a failed ``restartPolicy: Never`` pod), or ``--timeout`` has passed. Each sync
judges the pods (``pod_statuses``: ``podsync.pod_status``, judging the instance the
planner judges) from the observation its plan is made from, and applies the plan while a
pod is pending and time is left. The report is a line per pod on standard output, then
errors naming the pods that did not come up; the exit code is 0 when every pod is up in
time and no failed action is left (a failed action that a later plan no longer needs is
mended), 1 otherwise.

``podsync apply`` imports this module only with ``--wait``, and this module imports pod
status only when it judges: ``podsync apply SOURCE`` pays for neither.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from podsync.actions._actions import Plan
from podsync.actions._options import PlanOptions
from podsync.cli._args import EXIT_ERROR, EXIT_OK
from podsync.cli._console import Console
from podsync.cli._engine import _sync_pods
from podsync.loop._sync import Observation
from podsync.model._pod import ObservedContainer, Pod
from podsync.model._pulls import PullFailure
from podsync.runtime._protocol import Runtime
from podsync.spec._backoff import Backoff

if TYPE_CHECKING:
    from podsync.status._pod import PodStatus

__all__: list[str] = []

# The seed's run-once retried after 1 s, doubling (reference §5); here the delay is
# capped so that a long --timeout still notices a pod that comes up late.
_WAIT_FIRST_DELAY = 1.0
_WAIT_MAX_DELAY = 10.0
# A container counts as running once it has been seen running for this long: one that
# crashes right after its start is not reported as up (the Docker engine reports a
# started container as running before its process had a chance to fail).
_STABLE_SECONDS = 1.0


def pod_statuses(
    pods: Sequence[Pod],
    containers: Sequence[ObservedContainer],
    the_plan: Plan,
    first_seen: dict[str, float],
    now: float,
    *,
    adopt_2014_containers: bool = False,
) -> list[PodStatus]:
    """The status of each pod (``podsync.pod_status``), from an observation and the
    plan made from it, for ``--wait``.

    A running container counts as up once it was seen running for ``_STABLE_SECONDS``:
    ``first_seen`` remembers, by container id, when each was first seen running, in the
    clock of ``now``; until then it is "starting". A 2014 kubelet's containers count
    only with ``adopt_2014_containers`` (the plan's option).
    """
    from podsync.status._pod import pod_status

    settling = set()
    for oc in containers:
        if oc.running and now - first_seen.setdefault(oc.id, now) < _STABLE_SECONDS:
            settling.add(oc.id)
    options = PlanOptions(adopt_2014_containers=adopt_2014_containers)
    return [
        pod_status(pod, containers, plan=the_plan, options=options, settling=settling)
        for pod in pods
    ]


def _wait(
    console: Console,
    runtime: Runtime,
    pods: Sequence[Pod],
    options: PlanOptions,
    args: argparse.Namespace,
    sleep: Callable[[float], None],
    last_apply_ok: bool,
    before: Observation,
    pull_failures: dict[tuple[str, str], PullFailure] | None = None,
    report: Callable[[Sequence[PodStatus]], None] | None = None,
) -> int:
    """Wait until every pod is up, syncing again with back-off (the seed's run-once,
    reference §5); report per pod on stdout - or, with ``report`` (``apply -o``), hand
    it the pods' last statuses and print nothing on stdout. 0 when every pod is up in
    time.

    ``before`` is the observation the first plan was made from: a container that was
    running then has been running for as long as podsync knows, and counts as running
    at once. ``pull_failures`` are the failed pulls of the syncs so far: a pull that
    failed is not tried again before its back-off ends (ImagePullBackOff)."""
    elapsed = console.clocks.elapsed
    deadline = elapsed() + args.timeout
    backoff = Backoff(_WAIT_FIRST_DELAY, _WAIT_MAX_DELAY)
    first_seen = {oc.id: float("-inf") for oc in before.containers if oc.running}
    console.note(f"Waiting up to {args.timeout:g}s for {len(pods)} pod(s)...")
    while True:
        give_up = False
        statuses: list[PodStatus] = []

        def judge(the_plan: Plan, observation: Observation) -> bool:
            nonlocal give_up, statuses
            statuses = pod_statuses(
                pods,
                observation.containers,
                the_plan,
                first_seen,
                elapsed(),
                adopt_2014_containers=options.adopt_2014_containers,
            )
            if all(s.final for s in statuses) or deadline - elapsed() <= 0:
                give_up = True
                return False
            for status in statuses:
                if not status.final:
                    console.note(f"  {status.pod}: {status.message}", pod=status.pod)
            if the_plan.has_changes:
                console.note(f"Syncing again: {the_plan.summary()}")
            return the_plan.has_changes

        result = _sync_pods(
            console,
            runtime,
            pods,
            options,
            args,
            verb="Sync",
            before_apply=judge,
            pull_failures=pull_failures,
            summary=report is None,
        )
        the_plan = result.plan
        if give_up:
            break
        if result.applied:
            last_apply_ok = result.ok
        pause = min(backoff.next(), max(deadline - elapsed(), 0.0))
        console.note(f"Checking again in {pause:.1f}s.")
        sleep(pause)
    # A failed action of an earlier sync that a later plan no longer needs is mended.
    last_apply_ok = last_apply_ok or not the_plan.has_changes
    up = sum(s.ok for s in statuses)
    for status in statuses:
        if report is None:
            console.print(f"{status.pod}: {status.message}")
        if console.json:
            console.record("pod-status", status.message, pod=status.pod, state=status.state)
    if report is not None:
        report(statuses)
    if up == len(statuses) and last_apply_ok:
        if report is None:
            console.print(f"All {len(statuses)} pod(s) are up.")
        return EXIT_OK
    pending = [s.pod for s in statuses if not s.final]
    if pending:
        console.error(f"timed out after {args.timeout:g}s: not running: {', '.join(pending)}")
    bad = [s.pod for s in statuses if s.final and not s.ok]
    if bad:
        console.error(f"will not come up: {', '.join(bad)}")
    if up == len(statuses):
        console.error("the pods are up, but the last sync had failed actions")
    return EXIT_ERROR
