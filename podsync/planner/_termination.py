"""How a whole pod stops: its kills at once, sidecars last, within one grace period.

The modern kubelet stops a pod (KillPod: the pod is no longer wanted, its sandbox is
rebuilt, or it has completed) in killPodWithSyncResult
(pkg/kubelet/kuberuntime/kuberuntime_manager.go): killContainersWithSyncResult kills
every running container of the pod at the same time, one goroutine each, and then
stops the sandbox. Each kill is a killContainer (kuberuntime_container.go) with the
pod's grace period: its preStop handler, then - for a pod with sidecars - its turn
(newTerminationOrdering and waitForTurn, kuberuntime_termination_order.go), then the
stop with what is left of the grace, at least minimumGracePeriodInSeconds. So a pod of
three containers with 30 s of grace stops in about 30 s, not 90 s.

The turns (newTerminationOrdering):

1. an app container (``spec.containers``) waits for nothing;
2. a sidecar (an init container with ``restartPolicy: Always``) waits for every app
   container being stopped, and for the sidecar that follows it in ``initContainers``
   when that one is being stopped too: sidecars stop in reverse spec order, after the
   app containers;
3. any other container being stopped (a plain init container, a container whose name
   left the spec) waits for nothing, and nothing waits for it;
4. the sandbox - podsync's network container - stops after all of them (a kill of its
   own, after the concurrent ones in the pod's actions).

``pod_stop`` writes this into the plan (``Kill.concurrent``, ``Kill.after``); apply
executes it (``podsync.applier._apply``). A kill of one container for its own reasons
(a changed spec, a failed probe) is not a pod-wide stop: the kubelet's SyncPod kills
those one after the other, and so does podsync.

Contract: pure.

May import: the vocabulary. Never a runtime or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import attrs

from podsync.actions._actions import Kill, PodAction

__all__: list[str] = []  # the planner's own


def pod_stop(
    actions: Sequence[PodAction], apps: Collection[str], sidecars: Sequence[str]
) -> list[PodAction]:
    """The kills of a pod-wide stop, as the kubelet runs them (see the module docstring).

    Args:
        actions: the kills of the pod's containers that run (its network container's
            excepted), in any order; anything else keeps its place before them.
        apps: the names of the pod's app containers (``spec.containers``).
        sidecars: the names of its sidecars, in ``initContainers`` order.

    Returns:
        The same actions with every kill ``concurrent``: first those that wait for
        nothing, in the order given, then the sidecars' in reverse spec order, each one
        ``after`` the app containers being stopped (by name) and the next sidecar being
        stopped.
    """
    kills = [a for a in actions if isinstance(a, Kill)]
    stopping = {k.container for k in kills}
    waited_for = tuple(sorted({k.container for k in kills if k.container in apps}))
    out: list[PodAction] = [a for a in actions if not isinstance(a, Kill)]
    out.extend(
        attrs.evolve(k, concurrent=True, after=()) for k in kills if k.container not in sidecars
    )
    # Reverse spec order: a sidecar waits for the one after it (waitForTurn's prereqs);
    # one that is not being stopped holds nobody up (its channel starts closed).
    later = ""
    for name in reversed(sidecars):
        after = waited_for + ((later,) if later in stopping else ())
        out.extend(
            attrs.evolve(k, concurrent=True, after=after, message=_waiting(k, after))
            for k in kills
            if k.container == name
        )
        later = name
    return out


def _waiting(kill: Kill, after: tuple[str, ...]) -> str:
    """The kill's message, saying what it waits for."""
    if not after:
        return kill.message
    return f"{kill.message} (once {', '.join(after)} stopped)"
