"""The restart rules of a pod's containers, for the per-pod planner (``PodPlanner``
inherits ``RestartPlanner``): whether a container with no instance to keep starts again
(the modern kubelet's ShouldContainerBeRestarted, kubelet-modern.md §1.1), the
crash-loop back-off that gates every restart (§2), and the probe verdicts that kill a
running container (the kubelet's computePodActions, §1.4). The same rules serve the
init containers and sidecars (``_init``), which the per-pod planner decides like the app
containers.

Contract: pure; reads only the planner's state.

May import: the model, the vocabulary, ownership, the plan's shared state
(``_context``) and spec comparison (``_spec_change``). Never ``_pod`` (which imports
it), ``_plan``, a runtime, or anything that does I/O.
"""

from __future__ import annotations

import json

from podsync.actions._actions import FAILED_STOPS, Reason, Wait
from podsync.model._pod import Container, Pod, RestartPolicy
from podsync.planner._context import PlanContext
from podsync.planner._spec_change import spec_change
from podsync.spec._hashing import SpecHash
from podsync.spec._ownership import Instance, last_to_end

__all__: list[str] = []  # the planner's own

# The reason of a restart after a stop podsync made for a failure (else ``exited``).
_RESTART_REASONS = {
    Reason.UNHEALTHY.value: Reason.UNHEALTHY,
    Reason.NETWORK_LOST.value: Reason.NETWORK_LOST,
}


class RestartPlanner:
    """The restart half of ``PodPlanner``: when a stopped container starts again, how
    long it waits first, and when a probe kills a running one. The methods it relies on
    are ``PodPlanner``'s, and ``InitPlanner``'s (``_policy``: ``PodPlanner`` lists
    ``InitPlanner`` first)."""

    pod: Pod
    key: str
    ctx: PlanContext
    by_name: dict[str, list[Instance]]
    init_index: dict[str, int]

    def _label(self, container: str) -> str:
        """``<pod key>/<container>``, as a message names a container."""
        raise NotImplementedError

    def _app_hash(self, c: Container) -> tuple[SpecHash, str]:
        """``c``'s spec hash and the canonical text it is the digest of."""
        raise NotImplementedError

    def _policy(self, c: Container) -> RestartPolicy:
        """The restart policy ``c`` follows (``InitPlanner._policy``)."""
        raise NotImplementedError

    def _start_decision(self, c: Container) -> tuple[Reason, str, int] | Wait | None:
        """Whether container ``c``, which has no instance to keep, starts now.

        Judged on its newest stopped instance, row by row (the modern kubelet's
        ShouldContainerBeRestarted, pkg/kubelet/container/helpers.go, kubelet-modern.md
        §1.1, and the crash-loop gate of §2; the first matching row wins):

        1. no instance: start (``missing``);
        2. the instance was a run (it started, and it ended by itself or podsync killed it
           for a failure) and the policy says it must not run again - ``Never``, or
           ``OnFailure`` after a success: it stays down, for good. Not even a changed
           spec (an edit of the container, of a ConfigMap or Secret its env reads) runs
           it again: the kubelet's computePodActions replaces only a *running* container
           whose hash changed, and judges an exited one by ShouldContainerBeRestarted
           alone. Only a new pod (a new uid) runs it again;
        3. the instance's spec differs from the desired one: start at once, a new
           container with a fresh back-off (``spec-changed``; the kubelet keys its
           back-off on the spec hash, GetStableKey);
        4. podsync stopped it, not for a failure (to replace it, to rebuild the pod, as a
           duplicate ...): not a run, start at once whatever the policy
           (``not-replaced``; beyond the kubelet, which forgets its kills, see below);
        5. it was created but never started (its start failed, or apply was interrupted
           between create and start): not a run, start whatever the policy (the
           kubelet's row 4, Created), after the back-off, so that a start that keeps
           failing does not make a container every sync (``not-started``);
        6. otherwise restart after the back-off (``exited``; ``unhealthy`` when podsync
           killed it for its liveness probe, ``network-lost`` when it was stopped because
           its pod's network container died).

        A run failed when it exited non-zero, or when podsync killed it for a failure
        (liveness probe, postStart handler, a network container that died under it)
        whatever its exit code: a process stopped by podsync may well exit 0 on SIGTERM,
        and that is not a success. An init container's run also failed when the kernel's
        OOM killer ended it (the kubelet's isInitContainerFailed), whatever its code.

        Returns (reason, why, restart count) for a create, a ``Wait``, or ``None`` when
        the restart policy says it stays down.
        """
        stopped = [i for i in self.by_name.get(c.name, ()) if i.exited]
        if not stopped:
            return Reason.MISSING, "no container yet", 0
        newest = last_to_end(stopped)
        started = newest.observed.finished_at is not None
        record = newest.stop_record
        code = newest.observed.exit_code
        failed_stop = FAILED_STOPS.get(record) if started else None
        if not started:
            what = "did not start"
        elif failed_stop is not None:
            what = f"stopped by podsync: {failed_stop}"
        elif record:
            what = f"stopped by podsync ({record})"
        elif self._oom_failed(c, newest):
            what = f"exited with code {code}, OOM-killed"
        else:
            what = f"exited with code {code}"
        policy = self._policy(c)
        if started and (not record or failed_stop is not None):
            # A run: the restart policy is absolute (row 2).
            failed = failed_stop is not None or code != 0 or self._oom_failed(c, newest)
            if policy is RestartPolicy.NEVER:
                return None
            if policy is RestartPolicy.ON_FAILURE and not failed:
                return None
        digest, text = self._app_hash(c)
        change = spec_change(newest, digest, lambda: json.loads(text), c.image)
        if change is not None:
            return (
                Reason.SPEC_CHANGED,
                f"{what}, and its spec changed ({change}): a new container",
                0,
            )
        if started and record and failed_stop is None:
            # Upstream forgets that it killed an instance, so a Never container whose
            # replacement fails to start after a spec-change kill never runs again
            # (kubelet-modern.md §1.3); podsync's stop record says it did not end by
            # itself. Its restart count carries over: it did not crash.
            return (
                Reason.NOT_REPLACED,
                f"podsync stopped its last instance ({record}) and nothing replaced it; "
                "that was not a run",
                newest.restart_count,
            )
        ready = self._back_off(c, newest, newest.ended, what)
        if isinstance(ready, Wait):
            return ready
        if not started:
            return (
                Reason.NOT_STARTED,
                f"its last instance was created but never started; that was not a run "
                f"(restart {ready})",
                ready,
            )
        reason = _RESTART_REASONS.get(record, Reason.EXITED)
        return reason, f"{what} (restart policy {policy.value}, restart {ready})", ready

    def _oom_failed(self, c: Container, instance: Instance) -> bool:
        """Whether ``instance`` of init container ``c`` failed for being OOM-killed,
        whatever its exit code (the kubelet's isInitContainerFailed; an app container's
        run is judged on its exit code alone, as ShouldContainerBeRestarted does)."""
        return instance.observed.oom_killed and c.name in self.init_index

    def _back_off(self, c: Container, instance: Instance, ended: float, what: str) -> Wait | int:
        """The crash-loop gate for a restart after ``instance``, which stopped (or stops)
        at ``ended``: a ``Wait`` while the back-off lasts, else the new restart count.

        The delay grows with the instance's restart count, and starts over when the
        instance ran for ``reset_after`` seconds (kubelet-modern.md §2, rule 4).
        """
        back_off = self.ctx.options.back_off
        restarts = instance.restart_count
        if ended - instance.observed.created >= back_off.reset_after:
            restarts = 0
        delay = back_off.delay(restarts)
        ready_at = ended + delay
        if self.ctx.now < ready_at:
            left = ready_at - self.ctx.now
            return Wait(
                pod=self.key,
                pod_uid=self.pod.uid,
                container=c.name,
                seconds=left,
                reason=Reason.BACK_OFF,
                message=(
                    f"wait {self._label(c.name)}: {what}, back-off {delay:.0f}s, {left:.0f}s left"
                ),
            )
        return restarts + 1

    def _unhealthy(self, c: Container, instance: Instance) -> tuple[str, int | None] | None:
        """Why running ``instance`` of ``c`` is killed for a probe, and the grace period
        of that probe when it has its own; ``None`` when no probe says so.

        The kubelet's computePodActions (kubelet-modern.md §1.4): a liveness verdict of
        failure kills, and so does a startup verdict of failure. Its prober runs no
        liveness probe before the startup probe succeeded (worker.go), so a liveness
        verdict of a container that has not started does not count here either.
        Seed healthy(): no probe means healthy; within initialDelaySeconds of its start
        it counts as healthy (strict <). podsync takes verdicts as input: only an
        explicit failure counts; a container not probed yet is healthy.
        """
        oid = instance.observed.id
        if c.startup_probe is not None:
            verdict = self.ctx.startup.get(oid)
            if verdict is False:
                return "startup probe failed", c.startup_probe.termination_grace_period_seconds
            if verdict is not True:
                return None  # not started: liveness does not run yet
        probe = c.liveness_probe
        if probe is None:
            return None
        # From the container's start (worker.go), not its creation.
        if self.ctx.now - instance.observed.start_time < probe.initial_delay_seconds:
            return None
        if self.ctx.liveness.get(oid, True) is False:
            return "liveness probe failed", probe.termination_grace_period_seconds
        return None
