"""The per-pod planner (the seed's syncPod): the actions for one admitted pod.

``PodPlanner`` decides, for one pod and its owned containers, whether the network
container must be (re)built, what happens to each app container (kept, replaced,
restarted, waiting out its back-off, or left down by its restart policy), which strays
and duplicates stop, and which exited instances are collected; and it emits those
decisions as actions, in the order apply runs them. It inherits the init containers
(``InitPlanner``, ``_init``), the restart rules (``RestartPlanner``, ``_restarts``: when
a stopped container starts again, its back-off, the probe kills) and the create specs
(``CreateSpecs``, ``_create_specs``). ``PlanContext`` (``_context``) is the state one
plan shares between its pod planners: options, the clock reading, the present images,
probe results, and the pulls planned so far.

See ``_plan`` for the theory of operation. Contract: pure; reads only its arguments.

May import: the model and helpers, the vocabulary, options, ownership, spec comparison
(``_spec_change``), garbage collection (``_gc``), emptyDir storage (``_empty_dirs``) and
the planner modules it inherits from. Never ``_plan`` (which imports it), a runtime, or
anything that does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from podsync.actions._actions import FAILED_STOPS, Create, Kill, PodAction, Reason, Wait
from podsync.model._pod import Container, Handler, Pod, PullPolicy, RestartPolicy
from podsync.model._security import user_hold
from podsync.planner._context import PlanContext
from podsync.planner._create_specs import CreateSpecs, _next_attempt
from podsync.planner._empty_dirs import empty_dir_mode
from podsync.planner._gc import gc_candidates, label_pre_stop, remove_action
from podsync.planner._init import InitPlanner, _Decision, _numbered
from podsync.planner._restarts import RestartPlanner
from podsync.planner._spec_change import (
    older_network_spec,
    remembered_hash,
    remembered_network_hash,
    replanned,
    spec_change,
)
from podsync.planner._termination import pod_stop
from podsync.spec._hashing import SpecHash
from podsync.spec._naming import NETWORK_CONTAINER, container_name
from podsync.spec._ownership import Instance, newest_first

__all__: list[str] = []  # the planner's own


# How a create's message words it, by reason (any other reason replaces an instance).
# The summary line counts them all as "create" (``VERBS``).
_CREATE_VERBS = {
    Reason.MISSING: "create",
    Reason.NOT_STARTED: "create",
    Reason.NOT_REPLACED: "create",
    Reason.EXITED: "restart",
    Reason.POD_REBUILD: "recreate",
}


class PodPlanner(InitPlanner, RestartPlanner, CreateSpecs):
    """Plans one admitted pod (seed syncPod).

    ``InitPlanner`` comes first among its bases: the other two rely on two of its
    methods (``_policy``, ``_init_labels``), which their own placeholders must not
    hide."""

    def __init__(
        self,
        pod: Pod,
        instances: list[Instance],
        ctx: PlanContext,
        foreign: Sequence[Instance] = (),
    ) -> None:
        self.pod = pod
        self.ctx = ctx
        self.key = pod.key
        self.by_name: dict[str, list[Instance]] = {}
        for instance in instances:
            self.by_name.setdefault(instance.container, []).append(instance)
        # A 2014 kubelet's containers of this pod that are not taken over: never acted
        # on, but their names are taken, so new attempts are numbered past theirs.
        self.reserved: dict[str, list[Instance]] = {}
        for instance in foreign:
            self.reserved.setdefault(instance.container, []).append(instance)
        for name, group in self.by_name.items():
            if len(group) > 1:
                self.by_name[name] = newest_first(group)
        self.actions: list[PodAction] = []
        self.killed: set[str] = set()
        # Kills for a probe whose own terminationGracePeriodSeconds replaces the pod's
        # (container id -> seconds).
        self.probe_grace: dict[str, int] = {}
        # By container name: (spec hash, canonical text), computed once (_app_hash).
        self._hashes: dict[str, tuple[SpecHash, str]] = {}
        self._again = replanned(pod)  # remember texts only for a pod planned again
        # Init containers by name: their index in the pod's initContainers.
        self.init_index = {c.name: i for i, c in enumerate(pod.init_containers)}
        # Init instances removed because the pod is rebuilt (kubelet purgeInitContainers).
        self.purged: list[Instance] = []
        # Whether new containers mount emptyDirs as engine volumes (``empty_dir_mode``).
        self.engine_empty_dirs = True

    # -- helpers -------------------------------------------------------------------

    def _label(self, container: str) -> str:
        return f"{self.key}/{container}"

    @property
    def _grace(self) -> int:
        """The seconds a container of this pod gets to stop, preStop included: the
        pod's terminationGracePeriodSeconds (the kubelet's setTerminationGracePeriod,
        kuberuntime_container.go), else the ``stop_timeout`` option."""
        grace = self.pod.termination_grace_period_seconds
        return self.ctx.options.stop_timeout if grace is None else grace

    def _startup(self, container_id: str) -> bool | None:
        return self.ctx.startup.get(container_id)

    def _kill(self, instance: Instance, reason: Reason, why: str, pre_stop: Handler | None) -> None:
        self.killed.add(instance.observed.id)
        self.actions.append(
            Kill(
                pod=self.key,
                pod_uid=self.pod.uid,
                container=instance.container,
                id=instance.observed.id,
                name=instance.observed.name,
                timeout=self.probe_grace.get(instance.observed.id, self._grace),
                reason=reason,
                message=f"stop {self._label(instance.container)} ({instance.observed.name}): {why}",
                pre_stop=pre_stop,
                # A container of this pod that podsync stops did not end by itself: an
                # app container's restart policy must not judge it, and a network
                # container podsync stopped (to rebuild the pod) did not die - the pod
                # did not lose its network (``_own_network_stop``). The record lives under
                # the pod's directory, keyed by this pod's uid (a 2014 kubelet's blank
                # uid has none).
                record_stop=instance.pod_uid == self.pod.uid,
            )
        )

    def _stop_together(self, first: int) -> None:
        """Make the kills planned from ``first`` on a pod-wide stop (``pod_stop``)."""
        sidecars = [c.name for c in self.pod.sidecars]
        apps = {c.name for c in self.pod.containers}
        self.actions[first:] = pod_stop(self.actions[first:], apps, sidecars)

    # -- app containers ------------------------------------------------------------

    def _app_hash(self, c: Container, *, remember: bool = False) -> tuple[SpecHash, str]:
        """The spec hash of app container ``c`` and the canonical text it is the digest
        of: its spec, its pod's inputs and the options that shape it (the root directory
        behind its binds). Computed once per container and plan; with ``remember`` (a
        running container compared with it), kept with the Pod object for its next plan.
        """
        known = self._hashes.get(c.name)
        if known is None:
            known = self._hashes[c.name] = remembered_hash(
                self.pod, c, self.ctx.options.root_dir, remember
            )
        return known

    def _decide(self, c: Container, rebuild: tuple[Reason, str] | None) -> _Decision:
        """What happens to app container ``c`` (seed syncPod's per-container loop)."""
        decision = _Decision(c)
        pre_stop = _numbered(c.lifecycle.pre_stop if c.lifecycle else None, c)
        running = [i for i in self.by_name.get(c.name, ()) if i.running]
        keeper = running[0] if running else None
        for dup in running[1:]:
            assert keeper is not None
            decision.kills.append(
                (dup, Reason.DUPLICATE, f"duplicate of {keeper.observed.name}", pre_stop)
            )
        if keeper is not None and rebuild is not None and rebuild[0] is Reason.NETWORK_MISSING:
            # The network container died under a running container (the kubelet's
            # computePodActions: the sandbox is not ready, KillPod): the container is
            # killed, and that run failed - restarted (unless Never) through its
            # crash-loop back-off, so a network container that keeps dying backs off
            # with the containers it takes down (kubelet-modern.md §1.4, §2).
            why = f"network lost: {rebuild[1]}"
            decision.kills.append((keeper, Reason.NETWORK_LOST, why, pre_stop))
            digest, text = self._app_hash(c)
            change = (
                None
                if c.config_error
                else spec_change(keeper, digest, lambda: json.loads(text), c.image)
            )
            if change is not None and self._policy(c) is not RestartPolicy.NEVER:
                # Its spec changed too: the new container's back-off starts over (the
                # kubelet keys it on the spec hash, GetStableKey), so it starts with the
                # new network container, as the next plan would start it - not after the
                # old container's back-off.
                decision.start = (
                    Reason.SPEC_CHANGED,
                    f"{why}, and its spec changed ({change}): a new container",
                    0,
                )
            else:
                self._restart_after_failure(decision, keeper, Reason.NETWORK_LOST, why)
        elif keeper is not None and rebuild is not None:
            why = f"pod rebuilt: {rebuild[1]}"
            decision.kills.append((keeper, Reason.POD_REBUILD, why, pre_stop))
            # Not a crash: it starts again at once, and its restart count - its
            # crash-loop back-off - carries over unless its spec changed too (the
            # kubelet keys the back-off on the pod, the container and its spec hash,
            # GetStableKey, not on the sandbox).
            digest, text = self._app_hash(c)
            same = spec_change(keeper, digest, lambda: json.loads(text), c.image) is None
            decision.start = (Reason.POD_REBUILD, why, keeper.restart_count if same else 0)
        elif keeper is not None:
            digest, text = self._app_hash(c, remember=self._again)
            # A container whose config cannot be built now (a missing ConfigMap or Secret
            # key) keeps the instance that runs: the kubelet resolves env at a start
            # only, and a running container never learns of the change
            # (makeEnvironmentVariables; kubelet-modern.md §8).
            change = (
                None
                if c.config_error
                else spec_change(keeper, digest, lambda: json.loads(text), c.image)
            )
            if change is not None:
                why = f"spec changed ({change})"
                decision.kills.append((keeper, Reason.SPEC_CHANGED, f"replaced, {why}", pre_stop))
                # A running container whose spec changed is replaced whatever the restart
                # policy (computePodActions: Running and hash changed, kill and start) and
                # its back-off starts over (GetStableKey has the spec hash).
                decision.start = (Reason.SPEC_CHANGED, why, 0)
            elif (failed := self._unhealthy(c, keeper)) is not None:
                why, grace = failed
                if grace is not None:
                    # A probe kill uses the probe's own grace period when it has one
                    # (setTerminationGracePeriod, kuberuntime_container.go,
                    # kubelet-modern.md §1.3 and §11).
                    self.probe_grace[keeper.observed.id] = grace
                decision.kills.append((keeper, Reason.UNHEALTHY, why, pre_stop))
                self._restart_after_failure(decision, keeper, Reason.UNHEALTHY, why)
            else:
                decision.keep = True
        else:
            outcome = self._start_decision(c)
            if isinstance(outcome, Wait):
                decision.wait = outcome
            else:
                decision.start = outcome
        return self._checked(decision)

    def _restart_after_failure(
        self, decision: _Decision, keeper: Instance, reason: Reason, why: str
    ) -> None:
        """``decision``'s start (or wait) after running ``keeper`` is killed for a
        failure: unless the policy is Never (kubelet-modern.md §1.3), through the same
        crash-loop gate as an exit (§2). The killed instance ends now, so a container
        killed again and again backs off instead of being replaced on every sync; while
        it waits, the next plan sees the instance stopped with its stop record."""
        c = decision.container
        if self._policy(c) is RestartPolicy.NEVER:
            return
        ready = self._back_off(c, keeper, self.ctx.now, why)
        if isinstance(ready, Wait):
            decision.wait = ready
        else:
            decision.start = (reason, why, ready)

    def _pod_ran(self) -> bool:
        """Whether a container of the pod ran - the kubelet's "some container status
        exists" once the pod had a sandbox: one runs now, or one ended by itself, or
        podsync stopped it for a failure (``network-lost`` among them). A container
        that never started, or that podsync stopped for its own reasons (a rebuild whose
        network container could not be created), is no run: a pod of only such is
        rebuilt (podsync's stops are not runs)."""
        return any(
            i.running
            or (
                i.observed.finished_at is not None
                and (not i.stop_record or i.stop_record in FAILED_STOPS)
            )
            for c in (*self.pod.init_containers, *self.pod.containers)
            for i in self.by_name.get(c.name, ())
        )

    @staticmethod
    def _own_network_stop(nets: Sequence[Instance]) -> str:
        """The stop record of the newest network container that ran, when podsync
        stopped it for its own reasons (to rebuild the pod for a changed network spec,
        or because the pod completed); empty when it died by itself, or none ran.

        Only a network container that *died* is the kubelet's lost sandbox
        (``computePodActions``: a ``Never`` pod whose sandbox is gone after its
        containers ran is killed, not rebuilt). One podsync stopped is no more a loss
        than an app container podsync stopped is a run (docs/differences.md 17, 39):
        without this, a ``Never`` pod whose ports were edited, and whose new network
        container could not be created, was never rebuilt. Instances created and never
        started (a create that failed at its start) are not the network the pod had.
        ``nets`` are newest first (``newest_first``). podsync stops no network
        container for a failure (those stops are an app container's); a record that
        says so anyway (a failure's word, ``FAILED_STOPS``) is read as what it says, a
        failure: the network is lost, as one that died."""
        ran = [i for i in nets if i.observed.finished_at is not None]
        record = ran[0].stop_record if ran else ""
        return "" if record in FAILED_STOPS else record

    def _checked(self, decision: _Decision) -> _Decision:
        """``decision`` with its start held when the create cannot succeed yet: an absent
        image that may not be pulled, or a user the pod does not allow."""
        c = decision.container
        # Image pull policy Never with an absent image: the create would fail, so wait
        # (the modern kubelet's ErrImageNeverPull) instead of planning a doomed create.
        if (
            decision.start is not None
            and c.image_pull_policy is PullPolicy.NEVER
            and not self.ctx.image_present(c.image)
        ):
            decision.start = None
            decision.wait = Wait(
                pod=self.key,
                pod_uid=self.pod.uid,
                container=c.name,
                seconds=0.0,
                reason=Reason.IMAGE_NEVER_PULL,
                message=(
                    f"wait {self._label(c.name)}: image {c.image} is absent and its "
                    "pull policy is Never"
                ),
            )
        if decision.start is not None and c.config_error:
            # The kubelet's generateContainerConfig fails the start with
            # CreateContainerConfigError (makeEnvironmentVariables: a non-optional
            # ConfigMap or Secret key that is not there); the next sync tries again.
            decision.start = None
            decision.wait = Wait(
                self.key,
                self.pod.uid,
                c.name,
                0.0,
                Reason.CONFIG_MISSING,
                f"wait {self._label(c.name)}: {c.config_error}",
            )
        if decision.start is not None and (held := self._pull_held(c)) is not None:
            decision.start, decision.wait = None, held
        if decision.start is not None and (held := self._user_check(c)) is not None:
            decision.start, decision.wait = None, held
        return decision

    def _pull_held(self, c: Container) -> Wait | None:
        """A ``Wait`` (``image-pull-back-off``) when creating ``c`` needs a pull of its
        image, and a pull of it for this pod failed less than its back-off ago: the
        kubelet's ``ImagePullBackOff`` (``EnsureImageExists``, kubelet-modern.md §13).
        The container is created - and the image pulled - once the back-off is over."""
        return self._image_held(c.name, c.image, c.image_pull_policy)

    def _image_held(self, name: str, image: str, policy: PullPolicy | None) -> Wait | None:
        """``_pull_held`` for the pod container ``name`` (the network container too)
        whose create needs ``image`` under pull policy ``policy``."""
        held = self.ctx.pull_back_off(image, policy, self.pod.uid)
        if held is None:
            return None
        left, failure = held
        # The kubelet's words (ErrImagePullBackOff's message), then podsync's.
        return Wait(
            pod=self.key,
            pod_uid=self.pod.uid,
            container=name,
            seconds=left,
            reason=Reason.IMAGE_PULL_BACK_OFF,
            message=(
                f'wait {self._label(name)}: Back-off pulling image "{image}", '
                f"back-off {failure.back_off:.0f}s, {left:.0f}s left (the last pull "
                f"failed: {failure.message})"
            ),
        )

    def _user_check(self, c: Container) -> Wait | None:
        """A ``Wait`` when ``c`` may not be created for its user (``user_hold``: the
        kubelet's runAsNonRoot check); an image whose user is unknown is pulled first."""
        pod, ctx = self.pod, self.ctx
        image, present = ctx.image_user(c.image), ctx.image_present(c.image)
        hold = user_hold(c.security_context, pod.security_context, image, present)
        if hold is None:
            return None
        if not hold[0]:
            ctx.need_image(c.image, c.image_pull_policy, pod.uid)
        reason = Reason.RUN_AS_NON_ROOT if hold[0] else Reason.IMAGE_USER_UNKNOWN
        why = f"wait {self._label(c.name)}: {hold[1]} (image {c.image})"
        return Wait(self.key, pod.uid, c.name, 0.0, reason, why)

    def plan(self) -> list[PodAction]:
        pod, ctx = self.pod, self.ctx
        options = ctx.options
        net_inputs, net_key = ctx.network
        nets = self.by_name.get(NETWORK_CONTAINER, [])
        running_nets = [i for i in nets if i.running]
        net_keeper = running_nets[0] if running_nets else None
        net_digest, net_text = remembered_network_hash(
            pod,
            options.network_image,
            net_inputs,
            self._again and net_keeper is not None,
            key=net_key,
        )

        # 1. Does the network container need to be (re)created? (seed syncPod step 1,
        #    plus the hash comparison the seed never made for ``net``.)
        rebuild: tuple[Reason, str] | None = None
        if net_keeper is None and (own := self._own_network_stop(nets)):
            # podsync stopped it to rebuild the pod, and its replacement was not made
            # (its create failed): the rebuild goes on; the pod did not lose its network.
            why = f"network container stopped by podsync ({own}), not replaced yet"
            rebuild = (Reason.NETWORK_CHANGED, why)
        elif net_keeper is None:
            why = "network container exited" if nets else "network container missing"
            rebuild = (Reason.NETWORK_MISSING, why)
        else:
            change = spec_change(
                net_keeper,
                net_digest,
                lambda: json.loads(net_text),
                options.network_image,
                older_spec=older_network_spec(pod, options.root_dir),
            )
            if change is not None:
                rebuild = (Reason.NETWORK_CHANGED, f"network spec changed ({change})")

        # 2. Decide each app container; the network container's fate depends on it.
        #    Init containers come first, and may hold the app containers back.
        decisions = [self._decide(c, rebuild) for c in pod.containers]
        if (
            rebuild is not None
            and rebuild[0] is Reason.NETWORK_MISSING
            and pod.restart_policy is RestartPolicy.NEVER
            and self._pod_ran()
        ):
            # computePodActions, step B: a Never pod whose sandbox is gone after its
            # containers ran is killed and nothing is recreated - no new network
            # container, no re-initialisation; the pod has failed (kubelet-modern.md
            # §1.4). What still runs was killed above (``network-lost``).
            for d in decisions:
                d.start = d.wait = None
        inits = self._plan_init(decisions, rebuild) if pod.init_containers else []
        spec_names = {c.name for c in pod.containers}
        spec_names.update(self.init_index)
        strays = [
            instance
            for name, instances in sorted(self.by_name.items())
            if name != NETWORK_CONTAINER and name not in spec_names
            for instance in instances
            if instance.running
        ]
        starts = any(d.start is not None for d in (*inits, *decisions))
        stopped = [kill[0] for d in (*inits, *decisions) for kill in d.kills] + strays
        self.engine_empty_dirs, moving = empty_dir_mode(pod, self.by_name, stopped, starts)
        if rebuild is not None:
            net_needed = starts
        else:
            # Keep the network while anything runs, starts, or waits to restart; stop it
            # when the pod has completed (the modern kubelet's KillPod).
            net_needed = starts or any(d.keep or d.wait is not None for d in (*inits, *decisions))
        # The network image is pulled when absent (seed createNetworkContainer), by
        # podsync as the app images are; a pull of it that failed for this pod backs off
        # as theirs do (EnsureImageExists' back-off per pod and image, kubelet-modern.md
        # §13) instead of being tried every sync. (Upstream the CRI runtime pulls the
        # sandbox image when the kubelet asks for a sandbox, and the kubelet retries a
        # failed sandbox at the pod's next sync, itself backed off.)
        net_held = (
            self._image_held(NETWORK_CONTAINER, options.network_image, PullPolicy.IF_NOT_PRESENT)
            if rebuild is not None and net_needed
            else None
        )
        if net_held is not None and net_keeper is not None:
            # The old network container runs: the pod goes on as it is, nothing of it
            # is stopped for a network container that cannot be made yet.
            self.actions.append(net_held)
            self.purged.clear()
            self._collect_garbage(spec_names)
            return self.actions
        if net_held is not None:
            # Nothing can join a network container that is not there: what would start
            # waits with it (the kubelet's sandbox creation failed, and nothing starts).
            for d in (*inits, *decisions):
                d.start = None

        # 3. Emit, in the order apply runs them.
        net_name = net_keeper.observed.name if net_keeper else ""
        first = len(self.actions)
        if rebuild is not None:
            for d in decisions:
                for kill in d.kills:
                    self._kill(*kill)
            # Sidecars stop after the app containers, in reverse order (the kubelet's
            # newTerminationOrdering, kubelet-modern.md §3 rule 8).
            for d in reversed(inits):
                for kill in d.kills:
                    self._kill(*kill)
            for stray in strays:
                self._kill(
                    stray, Reason.NOT_IN_SPEC, "no longer in the pod spec", label_pre_stop(stray)
                )
            self._stop_together(first)  # a new sandbox: the kubelet's KillPod
            for old in running_nets:
                self._kill(old, rebuild[0], rebuild[1], None)
            self.actions.extend(self._purges())
            if net_held is not None:
                self.actions.append(net_held)
            elif net_needed:
                attempt = _next_attempt([*nets, *self.reserved.get(NETWORK_CONTAINER, ())])
                net_name = container_name(
                    NETWORK_CONTAINER, net_digest.name_hash, pod.full_name, pod.uid, attempt
                )
                ctx.need_image(options.network_image, PullPolicy.IF_NOT_PRESENT, pod.uid)
                self.actions.append(
                    Create(
                        pod=self.key,
                        pod_uid=self.pod.uid,
                        container=NETWORK_CONTAINER,
                        spec=self._network_spec(net_name, net_digest, net_text, attempt),
                        reason=rebuild[0],
                        message=f"create {self._label(NETWORK_CONTAINER)}: {rebuild[1]}",
                    )
                )
            for d in (*inits, *decisions):
                self._emit_start(d, net_name)
        else:
            # A pod ``moving`` its emptyDirs into engine volumes stops every container
            # first: what they wrote is all there when the host directories are copied.
            for d in (*inits, *decisions):
                for kill in d.kills:
                    self._kill(*kill)
                if not moving:
                    self._emit_start(d, net_name)
            for stray in strays:
                self._kill(
                    stray, Reason.NOT_IN_SPEC, "no longer in the pod spec", label_pre_stop(stray)
                )
            for d in (*inits, *decisions) if moving else ():
                self._emit_start(d, net_name)
            if net_keeper is not None and not net_needed:
                self._stop_together(first)  # the pod has completed: KillPod
            for dup in running_nets[1:]:
                self._kill(dup, Reason.DUPLICATE, f"duplicate of {net_name}", None)
            if net_keeper is not None and not net_needed:
                self._kill(
                    net_keeper,
                    Reason.POD_COMPLETED,
                    "no container of the pod runs or will run",
                    None,
                )
        self._collect_garbage(spec_names)
        return self.actions

    def _emit_start(self, d: _Decision, net_name: str) -> None:
        c = d.container
        if d.wait is not None:
            self.actions.append(d.wait)
        if d.start is None:
            return
        reason, why, restarts = d.start
        self.ctx.need_image(c.image, c.image_pull_policy, self.pod.uid)
        self.actions.append(
            Create(
                pod=self.key,
                pod_uid=self.pod.uid,
                container=c.name,
                spec=self._app_spec(c, net_name, self._app_hash(c)[0], restarts),
                reason=reason,
                message=f"{_CREATE_VERBS.get(reason, 'replace')} {self._label(c.name)}: {why}",
            )
        )

    def _collect_garbage(self, spec_names: set[str]) -> None:
        gc = self.ctx.options.gc
        for name, instances in sorted(self.by_name.items()):
            desired = name == NETWORK_CONTAINER or name in spec_names
            if desired:
                if gc.max_per_container is None:
                    continue
                keep = max(gc.max_per_container, 1)
            else:
                keep = 0
            if len(instances) <= keep:
                # Fewer instances than are kept: nothing to collect, and no message to
                # word (the steady state, once per container name of every pod).
                continue
            if desired:
                reason, why = Reason.GC_EXITED, f"exited, beyond the newest {keep} kept"
            else:
                reason, why = Reason.GC_NOT_DESIRED, "exited, no longer in the pod spec"
            purged = {i.observed.id for i in self.purged}
            for instance in gc_candidates(instances, self.killed, keep, self.ctx.now, gc.min_age):
                if instance.observed.id not in purged:
                    self.actions.append(
                        remove_action(self.key, self.pod.uid, instance, reason, why)
                    )
