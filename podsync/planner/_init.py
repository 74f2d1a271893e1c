"""The init containers of one pod, for the per-pod planner (``PodPlanner`` inherits
``InitPlanner``): the modern kubelet's computeInitContainerActions
(``pkg/kubelet/kuberuntime/kuberuntime_container.go``, kubelet-modern.md §3) as decisions
like the app containers' (``_Decision``), made before the app containers start.

Contract: pure; reads only the planner's state.

Also ``_numbered``, the hooks' named ports as numbers, shared with ``_pod`` and
``_create_specs``.

May import: the model and helpers, the vocabulary, ownership, garbage collection
(``remove_action``). Never ``_pod`` (which imports it), ``_plan``, a runtime,
or anything that does I/O.
"""

from __future__ import annotations

import attrs

from podsync.actions._actions import FAILED_STOPS, Reason, Remove, Wait
from podsync.model._pod import Container, Handler, Pod, RestartPolicy
from podsync.planner._gc import remove_action
from podsync.spec._labels import LABEL_INIT_INDEX, LABEL_INIT_RESTART_POLICY
from podsync.spec._ownership import Instance, last_to_end

__all__: list[str] = []  # the planner's own


class _Decision:
    """The outcome for one pod container: what to stop, and whether it starts or waits."""

    __slots__ = ("container", "keep", "kills", "start", "wait")

    def __init__(self, container: Container) -> None:
        self.container = container
        self.kills: list[tuple[Instance, Reason, str, Handler | None]] = []
        self.start: tuple[Reason, str, int] | None = None  # (reason, why, restart count)
        self.wait: Wait | None = None
        self.keep = False


def _numbered(handler: Handler | None, container: Container) -> Handler | None:
    """``handler`` with a named port replaced by its number (seed: named ports resolve
    through the container's ports), so a plan's hooks need no spec to run. A name the
    container does not declare is left as it is, and the hook fails when it runs."""
    if handler is None:
        return None
    by_name = {p.name: p.container_port for p in container.ports if p.name}
    h, t = handler.http_get, handler.tcp_socket
    if h is not None and isinstance(h.port, str) and h.port in by_name:
        return attrs.evolve(handler, http_get=attrs.evolve(h, port=by_name[h.port]))
    if t is not None and isinstance(t.port, str) and t.port in by_name:
        return attrs.evolve(handler, tcp_socket=attrs.evolve(t, port=by_name[t.port]))
    return handler


class InitPlanner:
    """The init-container half of ``PodPlanner``: what the pod's init containers do,
    and what they hold back. The methods it relies on are ``PodPlanner``'s."""

    pod: Pod
    key: str
    by_name: dict[str, list[Instance]]
    init_index: dict[str, int]
    purged: list[Instance]

    def _decide(self, c: Container, rebuild: tuple[Reason, str] | None) -> _Decision:
        raise NotImplementedError

    def _checked(self, decision: _Decision) -> _Decision:
        raise NotImplementedError

    def _label(self, container: str) -> str:
        raise NotImplementedError

    def _startup(self, container_id: str) -> bool | None:
        """The startup verdict of a running container, by id (``None``: none yet)."""
        raise NotImplementedError

    def _pre_stop(self, c: Container) -> Handler | None:
        """``c``'s preStop handler, with a named port replaced by its number."""
        return _numbered(c.lifecycle.pre_stop if c.lifecycle else None, c)

    def _policy(self, c: Container) -> RestartPolicy:
        """The restart policy ``c`` follows: a sidecar's own (Always); an init container
        under a pod's Always is restarted only after a failure, as Kubernetes runs init
        containers (OnFailure); everyone else, the pod's."""
        if c.restart_policy is not None:
            return c.restart_policy
        policy = self.pod.restart_policy
        if c.name in self.init_index and policy is RestartPolicy.ALWAYS:
            return RestartPolicy.ON_FAILURE
        return policy

    def _init_labels(self, c: Container) -> dict[str, str]:
        """The labels that mark an init container (its index) and a sidecar: an
        observation alone tells init containers, their order and sidecars."""
        index = self.init_index.get(c.name)
        if index is None:
            return {}
        labels = {LABEL_INIT_INDEX: str(index)}
        if c.restart_policy is not None:
            labels[LABEL_INIT_RESTART_POLICY] = c.restart_policy.value
        return labels

    def _purges(self) -> list[Remove]:
        """The removals of the init instances of a rebuilt pod (``purged``)."""
        why = "an init container's run before the pod was rebuilt; init runs again"
        return [
            remove_action(self.key, self.pod.uid, i, Reason.INIT_PURGED, why) for i in self.purged
        ]

    def _plan_init(
        self, apps: list[_Decision], rebuild: tuple[Reason, str] | None
    ) -> list[_Decision]:
        """The decisions for the pod's init containers, in spec order; holds the app
        containers' starts (``apps``, changed in place) while initialisation is not done.

        The modern kubelet's computeInitContainerActions (kuberuntime_container.go,
        kubelet-modern.md §3), on one host:

        * a rebuilt pod (a new network container: the kubelet's new sandbox) initialises
          again: its init instances are removed (purgeInitContainers) and init container
          0 starts, when any app container is to start; the app containers wait;
        * the pod is initialised once an app container was created (rule 1); from then
          on plain init containers never run again (rule 3), only sidecars are managed,
          like app containers but always restarted (rule 5);
        * before that, init containers run in order: the first one not finished holds
          the ones after it and every app container (each gets a ``Wait``,
          ``init-pending``). A plain one is finished when it exited 0; one that failed is
          restarted through the crash-loop back-off, except under ``Never``, where the
          pod has failed and nothing else starts (rule 5). A sidecar is finished once it
          runs and its startup probe, when it has one, succeeded (rule 4);
        * when no app container runs or will run, sidecars are stopped, not restarted
          (rule 7).
        """
        pod = self.pod
        init = pod.init_containers
        if rebuild is not None:
            return self._reinitialise(apps, rebuild)
        active = any(d.start is not None or d.wait is not None or d.keep for d in apps)
        if not active:
            # Every app container is done: stop the sidecars (the kubelet's KillPod).
            return [
                self._stopped(c, Reason.POD_COMPLETED, "no app container runs or will run")
                for c in init
            ]
        created = any(
            i.running or i.observed.finished_at is None
            for c in pod.containers
            for i in self.by_name.get(c.name, ())
        )
        decisions: list[_Decision] = []
        blocker: Container | None = None
        for c in init:
            sidecar = c.restart_policy is not None
            if blocker is not None:
                decisions.append(self._held(_Decision(c), blocker))
                continue
            if not sidecar and created:
                continue  # initialised: a plain init container never runs again
            d = self._decide(c, None)
            decisions.append(d)
            if sidecar:
                if not created and not self._sidecar_started(c, d):
                    blocker = c
            elif d.keep or d.start is not None or d.wait is not None:
                blocker = c  # running, starting, or waiting to restart
            elif self._init_failed(c):
                # Never: the pod failed; nothing else starts, sidecars stop.
                why = f"init container {c.name} failed (restart policy Never)"
                for d2 in apps:
                    d2.start, d2.wait = None, None
                # The plain init containers before it are done (one still running
                # would have held this one): only the sidecars have anything to stop.
                return [
                    self._stopped(c2, Reason.INIT_FAILED, why)
                    for c2 in init
                    if c2.restart_policy is not None
                ]
        if blocker is not None:
            for d in apps:
                if d.start is not None or d.wait is not None:
                    d.start = None
                    self._held(d, blocker)
        return decisions

    def _reinitialise(self, apps: list[_Decision], rebuild: tuple[Reason, str]) -> list[_Decision]:
        """``_plan_init`` for a pod whose network container is rebuilt: every running
        init instance stops; when an app container is to start (and, under ``Never``, no
        init container has failed), the old init instances are removed and init
        container 0 starts, and the app containers wait for initialisation."""
        pod = self.pod
        why = f"pod rebuilt: {rebuild[1]}"
        # An init container that ran when the network container died failed (as an app
        # container does, ``PodPlanner._decide``); one stopped for a rebuild did not.
        lost = rebuild[0] is Reason.NETWORK_MISSING
        kill = Reason.NETWORK_LOST if lost else Reason.POD_REBUILD
        kill_why = f"network lost: {rebuild[1]}" if lost else why
        decisions = [self._stopped(c, kill, kill_why) for c in pod.init_containers]
        if not any(d.start is not None for d in apps):
            return decisions
        if pod.restart_policy is RestartPolicy.NEVER and any(
            self._init_failed(c) for c in pod.init_containers
        ):
            for d in apps:
                d.start = d.wait = None
            return decisions
        first = pod.init_containers[0]
        for c in pod.init_containers:
            self.purged.extend(self.by_name.get(c.name, ()))
        if self.by_name.get(first.name):
            decisions[0].start = (Reason.POD_REBUILD, why, 0)
        else:
            decisions[0].start = (Reason.MISSING, "no container yet", 0)
        self._checked(decisions[0])
        for d in decisions[1:]:
            self._held(d, first)
        for d in apps:
            if d.start is not None or d.wait is not None:
                d.start = None
                self._held(d, first)
        return decisions

    def _held(self, d: _Decision, blocker: Container) -> _Decision:
        """``d`` waiting for init container ``blocker`` (``init-pending``)."""
        c = d.container
        state = "started" if blocker.restart_policy is not None else "finished"
        d.wait = Wait(
            pod=self.key,
            pod_uid=self.pod.uid,
            container=c.name,
            seconds=0.0,
            reason=Reason.INIT_PENDING,
            message=f"wait {self._label(c.name)}: init container {blocker.name} not {state}",
        )
        return d

    def _stopped(self, c: Container, reason: Reason, why: str) -> _Decision:
        """A decision that stops every running instance of init container ``c``."""
        d = _Decision(c)
        pre_stop = self._pre_stop(c)
        for instance in self.by_name.get(c.name, ()):
            if instance.running:
                d.kills.append((instance, reason, why, pre_stop))
        return d

    def _sidecar_started(self, c: Container, d: _Decision) -> bool:
        """Whether sidecar ``c`` has started: it runs and is kept, and its startup probe,
        when it has one, succeeded (kubelet-modern.md §3 rule 4)."""
        if not d.keep:
            return False
        keeper = next(i for i in self.by_name[c.name] if i.running)
        return c.startup_probe is None or self._startup(keeper.observed.id) is True

    def _init_failed(self, c: Container) -> bool:
        """Whether plain init container ``c``'s last run failed (the kubelet's
        isInitContainerFailed): it exited non-zero, the OOM killer ended it (whatever its
        exit code), or podsync stopped it for a failure. Whatever its spec now: under
        ``Never`` a failed init container fails the pod for good, and an edit does not
        run it again (only a new pod does)."""
        stopped = [i for i in self.by_name.get(c.name, ()) if i.exited]
        if not stopped:
            return False
        newest = last_to_end(stopped)
        if newest.observed.finished_at is None:
            return False
        record = newest.stop_record
        if record:
            # podsync stopped it: for a failure, or for its own reasons (not a run).
            return record in FAILED_STOPS
        return newest.observed.exit_code != 0 or newest.observed.oom_killed
