"""The per-pod planner (the seed's syncPod): the actions for one admitted pod.

``PodPlanner`` decides, for one pod and its owned containers, whether the network
container must be (re)built, what happens to each app container (kept, replaced,
restarted, waiting out its back-off, or left down by its restart policy), which strays
and duplicates stop, and which exited instances are collected. ``PlanContext`` is the
state one plan shares between its pod planners: options, the clock reading, the
present images, probe results, and the pulls planned so far (one per image as the
engine names it).

See ``_plan`` for the theory of operation. Contract: pure; reads only its arguments.

May import: the model and helpers, the vocabulary, options, ownership, spec comparison
(``_spec_change``) and garbage collection (``_gc``). Never ``_plan`` (which imports
it), a runtime, or anything that does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from podsync.actions._actions import (
    FAILED_STOPS,
    Create,
    CreateSpec,
    Kill,
    PodAction,
    Pull,
    Reason,
    Wait,
)
from podsync.actions._options import PlanOptions
from podsync.model._pod import Container, Handler, Pod, PullPolicy, RestartPolicy, engine_resources
from podsync.model._security import app_security, network_security, user_hold
from podsync.planner._empty_dirs import container_storage, empty_dir_mode
from podsync.planner._gc import gc_candidates, label_pre_stop, remove_action
from podsync.planner._init import InitPlanner, _Decision, _numbered
from podsync.planner._spec_change import (
    network_inputs,
    remembered_hash,
    remembered_network_hash,
    replanned,
    spec_change,
)
from podsync.spec._environment import environment
from podsync.spec._hashing import SpecHash
from podsync.spec._images import has_latest_tag, normalize_image, should_pull
from podsync.spec._labels import (
    ANNOTATION_LABEL_PREFIX,
    EMPTY_DIRS_ENGINE,
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_EMPTY_DIRS,
    LABEL_GRACE_PERIOD,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_UID,
    LABEL_PRE_STOP,
    LABEL_RESTART_COUNT,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
    encode_handler,
)
from podsync.spec._naming import NETWORK_CONTAINER, container_name
from podsync.spec._ownership import Instance, newest_first
from podsync.spec._ports import port_mappings
from podsync.spec._resolv import (
    ResolvConf,
    cluster_dns,
    pod_host_name,
    uses_cluster_dns,
)
from podsync.spec._volumes import (
    VolumeFileMount,
    container_tmpfs,
    content_labels,
    termination_file_mount,
)

__all__: list[str] = []  # the planner's own


@attrs.define
class _PullNeed:
    """A planned pull while the plan is made: the uids of the pods that need it, in
    order, as a dict (an ordered set), so that adding the 10,000th pod costs what adding
    the first did."""

    image: str
    reason: Reason
    pods: dict[str, None]

    def action(self) -> Pull:
        why = {
            Reason.IMAGE_ABSENT: "not present",
            Reason.IMAGE_LATEST: "explicit :latest tag, always pulled",
            Reason.PULL_ALWAYS: "pull policy Always",
        }[self.reason]
        return Pull(self.image, self.reason, f"pull {self.image}: {why}", tuple(self.pods))


@attrs.define
class PlanContext:
    """Per-plan state shared by the per-pod planners (mutable, private to one call)."""

    options: PlanOptions
    now: float
    present_images: frozenset[str]
    liveness: Mapping[str, bool]
    host_resolv: ResolvConf
    startup: Mapping[str, bool] = attrs.Factory(dict)
    # Keyed by the normalized reference: "busybox", "busybox:latest" and
    # "docker.io/library/busybox" are one image to the engine, hence one pull.
    pulls: dict[str, _PullNeed] = attrs.Factory(dict)
    normalized: dict[str, str] = attrs.Factory(dict)
    # ``ObservedImage.user`` of each present image that has one, by reference and id.
    image_users: Mapping[str, str] = attrs.Factory(dict)
    # The network container's option inputs and their memo key: once per plan.
    network: tuple[dict[str, Any], str] = attrs.field(
        default=attrs.Factory(lambda c: network_inputs(c.options, c.host_resolv), takes_self=True)
    )

    def normalize(self, image: str) -> str:
        """``normalize_image``, computed once per spelling and plan."""
        found = self.normalized.get(image)
        if found is None:
            found = self.normalized[image] = normalize_image(image)
        return found

    def need_image(self, image: str, policy: PullPolicy | None, pod_uid: str) -> None:
        """Record that a create needs ``image``; plan a pull when the policy says so.

        ``policy`` None is the network container: pulled only when absent (seed
        createNetworkContainer). The pull keeps the spelling and the reason of the first
        container that needed it, and lists every pod that needs it.
        """
        key = self.normalize(image)
        present = key in self.present_images
        if policy is None:
            pull, reason = not present, Reason.IMAGE_ABSENT
        else:
            pull = should_pull(policy, image, present)
            if not pull:
                reason = Reason.IMAGE_ABSENT
            elif policy is PullPolicy.ALWAYS:
                reason = Reason.PULL_ALWAYS
            elif present and has_latest_tag(image):
                reason = Reason.IMAGE_LATEST
            else:
                reason = Reason.IMAGE_ABSENT
        if not pull:
            return
        known = self.pulls.get(key)
        if known is None:
            self.pulls[key] = _PullNeed(image, reason, {pod_uid: None})
        else:
            known.pods[pod_uid] = None

    def image_present(self, image: str) -> bool:
        return self.normalize(image) in self.present_images

    def image_user(self, image: str) -> str | None:
        """The user ``image`` runs as (``""``: root); ``None`` when absent or unknown."""
        return self.image_users.get(self.normalize(image))

    def pull_actions(self) -> tuple[Pull, ...]:
        """The planned pulls, ordered by normalized reference."""
        return tuple(self.pulls[key].action() for key in sorted(self.pulls))


def _next_attempt(instances: Sequence[Instance]) -> int:
    used = {i.attempt for i in instances if i.attempt is not None}
    if not used:
        return 0
    candidate = max(used) + 1
    if candidate <= 0xFFFFFFFF:
        return candidate
    # A 2014 kubelet wrote random suffixes; should they reach the top, take a free one.
    return next(n for n in range(len(used) + 1) if n not in used)


# How a create's message words it, by reason (any other reason replaces an instance).
# The summary line counts them all as "create" (``VERBS``).
_CREATE_VERBS = {
    Reason.MISSING: "create",
    Reason.NOT_STARTED: "create",
    Reason.NOT_REPLACED: "create",
    Reason.EXITED: "restart",
    Reason.POD_REBUILD: "recreate",
}


class PodPlanner(InitPlanner):
    """Plans one admitted pod (seed syncPod)."""

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
                # An app container of this pod that podsync stops did not end by itself:
                # its restart policy must not judge it. The record lives under the pod's
                # directory, keyed by this pod's uid (a 2014 kubelet's blank uid has
                # none). The network container has no restart policy to mislead.
                record_stop=(
                    instance.container != NETWORK_CONTAINER and instance.pod_uid == self.pod.uid
                ),
            )
        )

    def _labels(
        self, container: str, attempt: int, digest: SpecHash, spec: str, restarts: int
    ) -> dict[str, str]:
        pod = self.pod
        labels = {
            LABEL_POD_NAME: pod.name,
            LABEL_POD_NAMESPACE: pod.namespace,
            LABEL_POD_SOURCE: pod.source,
            LABEL_POD_UID: pod.uid,
            LABEL_CONTAINER: container,
            LABEL_ATTEMPT: str(attempt),
            LABEL_SPEC_HASH: str(digest),
            LABEL_SPEC: spec,
            LABEL_RESTART_COUNT: str(restarts),
        }
        if pod.termination_grace_period_seconds is not None:
            labels[LABEL_GRACE_PERIOD] = str(pod.termination_grace_period_seconds)
        if pod.labels or pod.annotations:
            # The pod's own labels as they are, its annotations as dockershim stored
            # them; podsync's record over them, so that nothing can overwrite it (the
            # loader and admission refuse such label keys anyway).
            annotations = {ANNOTATION_LABEL_PREFIX + k: v for k, v in pod.annotations.items()}
            labels = {**pod.labels, **annotations, **labels}
        return labels

    # -- the network container -------------------------------------------------------

    def _network_spec(self, name: str, digest: SpecHash, spec: str, attempt: int) -> CreateSpec:
        pod, options = self.pod, self.ctx.options
        host_network = pod.security_context is not None and pod.security_context.host_network
        all_ports = [port for c in pod.containers for port in c.ports]
        dns: tuple[str, ...] = ()
        search: tuple[str, ...] = ()
        if host_network:  # the host's ports and name (its resolv.conf: uses_cluster_dns)
            all_ports = []
        cluster = {"server": options.cluster_dns, "domain": options.cluster_domain}
        if uses_cluster_dns(pod.dns_policy, host_network=host_network, **cluster):
            merged = cluster_dns(
                self.ctx.host_resolv,
                namespace=pod.namespace,
                server=options.cluster_dns,
                domain=options.cluster_domain,
            )
            dns, search = merged.nameservers, merged.searches
        hostname, domain = pod_host_name(
            pod.name, pod.hostname, pod.subdomain, pod.namespace, options.cluster_domain
        )
        return CreateSpec(
            name=name,
            image=options.network_image,
            labels=self._labels(NETWORK_CONTAINER, attempt, digest, spec, 0),
            hostname="" if host_network else hostname,
            network="host" if host_network else options.network_mode,
            ports=tuple(port_mappings(all_ports)),
            dns=dns,
            dns_search=search,
            domainname="" if host_network else domain,
            host_aliases=pod.host_aliases,
            security=network_security(pod.security_context),
        )

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

    def _app_spec(self, c: Container, net_name: str, digest: SpecHash, restarts: int) -> CreateSpec:
        pod, options, user = self.pod, self.ctx.options, self.ctx.image_user(c.image)
        attempt = _next_attempt([*self.by_name.get(c.name, ()), *self.reserved.get(c.name, ())])
        name = container_name(c.name, digest.name_hash, pod.full_name, pod.uid, attempt)
        volume_mounts, directories, volumes = container_storage(
            pod, c, options.root_dir, engine=self.engine_empty_dirs
        )
        file_mounts: tuple[VolumeFileMount, ...] = ()
        if c.termination_message_path:
            # Its file is written by a container of the network image.
            self.ctx.need_image(options.network_image, None, pod.uid)
            file_mounts = (termination_file_mount(pod.uid, c, name, options.network_image),)
        labels = self._labels(c.name, attempt, digest, self._app_hash(c)[1], restarts)
        pre_stop = _numbered(c.lifecycle.pre_stop if c.lifecycle else None, c)
        if pre_stop is not None:
            labels[LABEL_PRE_STOP] = encode_handler(pre_stop)
        labels.update(self._init_labels(c))
        labels.update(content_labels(c.volume_mounts, pod))
        if any(v.no_copy for v in volumes):  # an emptyDir's engine volume
            labels[LABEL_EMPTY_DIRS] = EMPTY_DIRS_ENGINE
        # Requests and limits as the modern kubelet passes them (calculateLinuxResources,
        # kuberuntime_container_linux.go; kubelet-modern.md §6): the weight from the CPU
        # request (else the limit), the quota from the CPU limit, the memory limit from
        # the memory limit only. A memory request reaches no engine.
        weight, cpu_limit, memory = engine_resources(c)
        return CreateSpec(
            name=name,
            image=c.image,
            labels=labels,
            entrypoint=c.command or None,
            command=c.args or None,
            env=tuple(environment(c.env)),
            working_dir=c.working_dir,
            join=net_name,
            mounts=tuple(volume_mounts),
            tmpfs=tuple(container_tmpfs(c.volume_mounts, pod)),
            milli_cpu=weight,
            memory=memory,
            privileged=c.privileged,
            directories=directories,
            post_start=_numbered(c.lifecycle.post_start if c.lifecycle else None, c),
            pre_stop=pre_stop,
            stop_timeout=self._grace,
            cpu_limit=cpu_limit,
            tty=c.tty,
            stdin=c.stdin,
            stdin_once=c.stdin_once,
            security=app_security(
                c.security_context, pod.security_context, options.root_dir, net_name, user
            ),
            volumes=volumes,
            file_mounts=file_mounts,
        )

    def _start_decision(self, c: Container) -> tuple[Reason, str, int] | Wait | None:
        """Whether container ``c``, which has no instance to keep, starts now.

        Judged on its newest stopped instance, row by row (the modern kubelet's
        ShouldContainerBeRestarted, pkg/kubelet/container/helpers.go, kubelet-modern.md
        §1.1, and the crash-loop gate of §2; the first matching row wins):

        1. no instance: start (``missing``);
        2. the instance's spec differs from the desired one: start at once, a new
           container with a fresh back-off, whatever the restart policy
           (``spec-changed``; the kubelet keys its back-off on the spec hash);
        3. podsync stopped it, not for a failure (to replace it, to rebuild the pod, as a
           duplicate ...): not a run, start at once whatever the policy
           (``not-replaced``; beyond the kubelet, which forgets its kills, see below);
        4. it was created but never started (its start failed, or apply was interrupted
           between create and start): not a run, start whatever the policy (the
           kubelet's row 4, Created), after the back-off, so that a start that keeps
           failing does not make a container every sync (``not-started``);
        5. ``Never``, or ``OnFailure`` after a success: stays down;
        6. otherwise restart after the back-off (``exited``; ``unhealthy`` when podsync
           killed it for its liveness probe).

        A run failed when it exited non-zero, or when podsync killed it for a failure
        (liveness probe, postStart handler) whatever its exit code: a process stopped by
        podsync may well exit 0 on SIGTERM, and that is not a success.

        Returns (reason, why, restart count) for a create, a ``Wait``, or ``None`` when
        the restart policy says it stays down.
        """
        stopped = [i for i in self.by_name.get(c.name, ()) if i.exited]
        if not stopped:
            return Reason.MISSING, "no container yet", 0
        newest = max(stopped, key=lambda i: (i.ended, i.observed.created))
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
        else:
            what = f"exited with code {code}"
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
        policy = self._policy(c)
        if started:
            failed = failed_stop is not None or code != 0
            if policy is RestartPolicy.NEVER:
                return None
            if policy is RestartPolicy.ON_FAILURE and not failed:
                return None
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
        reason = Reason.UNHEALTHY if record == Reason.UNHEALTHY.value else Reason.EXITED
        return reason, f"{what} (restart policy {policy.value}, restart {ready})", ready

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
        if keeper is not None and rebuild is not None:
            decision.kills.append(
                (keeper, Reason.POD_REBUILD, f"pod rebuilt: {rebuild[1]}", pre_stop)
            )
            decision.start = (Reason.POD_REBUILD, f"pod rebuilt: {rebuild[1]}", 0)
        elif keeper is not None:
            digest, text = self._app_hash(c, remember=self._again)
            change = spec_change(keeper, digest, lambda: json.loads(text), c.image)
            if change is not None:
                why = f"spec changed ({change})"
                decision.kills.append((keeper, Reason.SPEC_CHANGED, f"replaced, {why}", pre_stop))
                # A changed spec is a new container: it starts whatever the restart policy
                # (the modern kubelet does the same) and its back-off starts over.
                decision.start = (Reason.SPEC_CHANGED, why, 0)
            elif (failed := self._unhealthy(c, keeper)) is not None:
                why, grace = failed
                if grace is not None:
                    # A probe kill uses the probe's own grace period when it has one
                    # (setTerminationGracePeriod, kuberuntime_container.go,
                    # kubelet-modern.md §1.3 and §11).
                    self.probe_grace[keeper.observed.id] = grace
                decision.kills.append((keeper, Reason.UNHEALTHY, why, pre_stop))
                # A probe kill restarts unless the policy is Never (kubelet-modern.md
                # §1.3), through the same crash-loop gate as an exit (§2): the killed
                # instance ends now, so a container killed again and again backs off
                # instead of being replaced on every sync. While it waits, the next plan
                # sees the instance stopped with its "unhealthy" stop record.
                if self._policy(c) is not RestartPolicy.NEVER:
                    ready = self._back_off(c, keeper, self.ctx.now, why)
                    if isinstance(ready, Wait):
                        decision.wait = ready
                    else:
                        decision.start = (Reason.UNHEALTHY, why, ready)
            else:
                decision.keep = True
        else:
            outcome = self._start_decision(c)
            if isinstance(outcome, Wait):
                decision.wait = outcome
            else:
                decision.start = outcome
        return self._checked(decision)

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
        if decision.start is not None and (held := self._user_check(c)) is not None:
            decision.start, decision.wait = None, held
        return decision

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
        if net_keeper is None:
            why = "network container exited" if nets else "network container missing"
            rebuild = (Reason.NETWORK_MISSING, why)
        else:
            change = spec_change(
                net_keeper,
                net_digest,
                lambda: json.loads(net_text),
                options.network_image,
            )
            if change is not None:
                rebuild = (Reason.NETWORK_CHANGED, f"network spec changed ({change})")

        # 2. Decide each app container; the network container's fate depends on it.
        #    Init containers come first, and may hold the app containers back.
        decisions = [self._decide(c, rebuild) for c in pod.containers]
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

        # 3. Emit, in the order apply runs them.
        net_name = net_keeper.observed.name if net_keeper else ""
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
            for old in running_nets:
                self._kill(old, rebuild[0], rebuild[1], None)
            self.actions.extend(self._purges())
            if net_needed:
                attempt = _next_attempt([*nets, *self.reserved.get(NETWORK_CONTAINER, ())])
                net_name = container_name(
                    NETWORK_CONTAINER, net_digest.name_hash, pod.full_name, pod.uid, attempt
                )
                ctx.need_image(options.network_image, None, pod.uid)
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

    def _unhealthy(self, c: Container, instance: Instance) -> tuple[str, int | None] | None:
        """Why running ``instance`` of ``c`` is killed for a probe, and the grace period
        of that probe when it has its own; ``None`` when no probe says so.

        The kubelet's computePodActions (kubelet-modern.md §1.4): a liveness verdict of
        failure kills, and so does a startup verdict of failure. Its prober runs no
        liveness probe before the startup probe succeeded (worker.go), so a liveness
        verdict of a container that has not started does not count here either.
        Seed healthy(): no probe means healthy; within initialDelaySeconds of creation
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
        if self.ctx.now - instance.observed.created < probe.initial_delay_seconds:
            return None
        if self.ctx.liveness.get(oid, True) is False:
            return "liveness probe failed", probe.termination_grace_period_seconds
        return None

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
