"""The planner: desired pods + observed state -> an explained, deterministic plan.

Rule 1: everything that decides an action lives in this file. The apply side executes a
plan and decides nothing; the helpers (naming, hashing, ports, ...) compute values.

Theory of operation
===================

The seed's ``SyncPods`` / ``syncPod`` / ``GarbageCollect*`` (reference §2.3-§2.6)
decided and acted in one pass, talking to Docker as they went. ``plan`` is the deciding
half, pure: it reads only its arguments (no I/O, no clock, no randomness, no
environment), so equal inputs give an equal ``Plan``, and a plan can be shown, saved,
tested and applied later.

1. *Admission.* Pods are taken in order. A pod that repeats an earlier pod's uid or full
   name, has an image reference the engine would refuse, asks for a privileged container
   when privileged containers are not allowed (the seed's capabilities check), or wants
   a host port that a running pod holds or an earlier pod was given
   (``filter_host_port_conflicts``: pods that already run are admitted first) is
   rejected: it appears in ``Plan.rejected`` and nothing is done to it or to its
   containers.
2. *Ownership* (``ownership``, the one rule every part of podsync uses). A container
   with any ``io.kubernetes.`` label is a Kubernetes node's (Docker Desktop, cri-dockerd,
   dockershim name theirs ``k8s_<c>_<pod>_<ns>_<uid>_<n>``) and never podsync's. Else it
   is podsync's when it carries ``LABEL_POD_UID``, or - only with
   ``PlanOptions.adopt_2014_containers`` - when it has no podsync label and its name is
   exactly the seed's format (``parse_2014_container_name``): a container a 2014
   kubelet left behind. Everything else is foreign and never appears in a plan. An
   owned container belongs to a desired pod when uid and full name match.
3. *Per desired pod* (seed syncPod, with the fixes listed in the README):
   a. The network container ``net`` must run, with the current network spec hash (its
      image, hostname, DNS policy and every port of the pod, and the options that shape
      it: network mode, cluster DNS and the host resolv.conf content merged with it).
      If it does not, the pod is rebuilt: its running containers are stopped, ``net``
      is created, then the app containers.
   b. Each app container in spec order: the newest running instance is kept when its
      spec is unchanged and its liveness probe has not failed; otherwise it is
      replaced - only that container, never the network container (the seed stopped
      ``net`` too and joined the new container to a dead namespace). Other running
      instances are duplicates and are stopped.
   c. A container with no running instance is judged on its newest stopped instance
      (the modern kubelet's ShouldContainerBeRestarted, kubelet-modern.md §1.1, with
      podsync's stop records): it starts when it never ran; when that instance's spec
      differs from the desired one (a changed spec always takes effect, with a fresh
      back-off); when the instance is not a run - created but never started, or
      stopped by podsync for anything but a failure - whatever the restart policy; and
      otherwise when the restart policy allows (Always; OnFailure after a failure;
      never for Never), after an exponential back-off (10 s doubling to 5 min, as the
      modern kubelet). A container podsync killed for a failure (liveness probe,
      postStart handler) failed, whatever its exit code.
   d. Running containers whose name is no longer in the spec are stopped (the seed's
      duplicate sweep). When no app container runs or will run, ``net`` is stopped too.
4. *Pods no longer desired*: their running containers are stopped, their exited ones
   removed, and their pod directory torn down - only when deletions are allowed (the
   seed's ``sourcesReady``).
5. *Garbage collection*, as actions: exited containers beyond ``max_per_container``
   per pod container and older than ``min_age`` are removed, newest kept (the seed
   meant to group per pod container but parsed the container ID, so everything fell in
   one bucket); an optional global cap; dangling images when asked.
6. *Pulls* are plan-level actions that come before every pod's actions, one per image
   as the engine names it (``normalize_image``: ``busybox`` and
   ``docker.io/library/busybox`` are one pull).
"""

from __future__ import annotations

import contextlib
import gc
import json
import posixpath
import re
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import attrs

from podsync._actions import (
    FAILED_STOPS,
    Create,
    CreateSpec,
    Kill,
    Plan,
    PodAction,
    PodPlan,
    Pull,
    Reason,
    Rejection,
    Remove,
    RemoveImage,
    RemovePodDir,
    Wait,
)
from podsync._cpu import cpu_shares
from podsync._environment import environment
from podsync._fingerprint import scoped_fingerprint
from podsync._hashing import (
    SpecHash,
    added_fields,
    canonical_json,
    canonical_spec,
    network_spec,
    network_spec_hash,
    spec_hash,
)
from podsync._host_ports import filter_host_port_conflicts
from podsync._images import has_latest_tag, image_reference_problem, normalize_image, should_pull
from podsync._labels import (
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_GRACE_PERIOD,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_UID,
    LABEL_PRE_STOP,
    LABEL_RESTART_COUNT,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
    MAX_GRACE_PERIOD,
    decode_grace_period,
    decode_handler,
    encode_handler,
)
from podsync._models import (
    Container,
    Handler,
    ObservedContainer,
    ObservedImage,
    Pod,
    Port,
    PortProtocol,
    PullPolicy,
    RestartPolicy,
)
from podsync._naming import (
    NETWORK_CONTAINER,
    container_name,
    is_dns_label,
    is_safe_uid,
)
from podsync._options import PlanOptions
from podsync._ownership import Identity, Instance, identify, newest_first
from podsync._ports import exposed_ports, port_bindings
from podsync._resolv import (
    ResolvConf,
    cluster_dns,
    parse_resolv_conf,
    uses_cluster_dns,
    without_loopback,
)
from podsync._volumes import (
    DEFAULT_ROOT_DIR,
    binds,
    termination_message_file,
    volume_host_paths,
)

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["plan"]

# ---------------------------------------------------------------------------------------
# Spec comparison


# The canonical-spec fields that come from options rather than from the pod, and how a
# message names them: the option, so that people know what they changed.
_OPTION_NAMES = {
    "cluster_dns": "--cluster-dns",
    "cluster_domain": "--cluster-domain",
    "host_resolv_conf": "host resolv.conf",
    "network_mode": "--network-mode",
    "root_dir": "--root-dir",
}
# What an absent option field means (it is written only when not at its default).
_OPTION_DEFAULTS = {"network_mode": "(engine default)", "root_dir": DEFAULT_ROOT_DIR}


def _show_option(key: str, value: Any) -> str:
    if value is None:
        return _OPTION_DEFAULTS.get(key, "(none)")
    if isinstance(value, dict):  # host_resolv_conf
        parts = []
        if value.get("nameservers"):
            parts.append("nameserver " + " ".join(map(str, value["nameservers"])))
        if value.get("searches"):
            parts.append("search " + " ".join(map(str, value["searches"])))
        return ", ".join(parts) or "(none)"
    return _show(value)


def _spec_difference(old: Any, new: Any, unrecorded: Collection[str] = ()) -> str:
    """A short, readable list of what differs between two canonical specs.

    ``unrecorded`` are fields the old spec's version did not record: their absence
    there is shown as "(not recorded)" rather than as the default.
    """
    if not isinstance(old, dict) or not isinstance(new, dict):
        return "spec differs"
    parts: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        scalar = (str, int, float, bool, type(None))
        option = _OPTION_NAMES.get(key)
        if option is not None:
            before = (
                "(not recorded)" if key in unrecorded and key not in old else _show_option(key, a)
            )
            parts.append(f"{option} {before} -> {_show_option(key, b)}")
        elif isinstance(a, scalar) and isinstance(b, scalar):
            parts.append(f"{key} {_show(a)} -> {_show(b)}")
        else:
            parts.append(f"{key} changed")
    if not parts:
        return "spec differs"
    if len(parts) > 3:
        parts = [*parts[:3], f"{len(parts) - 3} more"]
    return ", ".join(parts)


def _show(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    return str(value)


def _compare(
    instance: Instance, expected: SpecHash, expected_spec: Callable[[], dict[str, Any]], image: str
) -> str | None:
    """Why the running ``instance`` differs from the desired spec, or ``None``.

    * Same hash version: the digests decide.
    * Another version (or a hash label podsync cannot read): the specs are compared field
      by field from the spec label, so a change of the hash function restarts nothing.
      A field that versions after the label's added (the option fields of version 2)
      is absent from its spec label, and is compared as absent - at its default, which
      the older form was equal to (the newer form writes these fields only when they
      are not at their default). So after an upgrade a container made with default
      options is kept, while one whose option is now set is rebuilt, once: nothing
      recorded that it has the setting, and keeping it would leave the option change
      unseen for as long as it runs. An older label whose digest equals the expected
      one needs no parsing: the two canonical forms are the same text.
    * No hash label (a 2014 kubelet's container): a name hash of 0 means "do not
      compare" (seed); any other value was computed by Go's ``%#v`` and cannot be
      reproduced, so the only field podsync can compare, the image, decides.

    ``expected_spec`` is only called when the digests alone do not decide.
    """
    text = instance.hash_text
    if text is not None:
        if text == str(expected):
            return None
        label = SpecHash.parse(text)
        if label is not None and label.version == expected.version:
            return _describe_change(instance, expected_spec())
        older = label is not None and label.version < expected.version
        if older and label is not None and label.digest == expected.digest:
            return None
        if instance.spec_label is None:
            return None if instance.observed.image == image else _image_change(instance, image)
        try:
            old = json.loads(instance.spec_label)
        except ValueError:
            return "spec label unreadable"
        new = expected_spec()
        if old == new:
            return None
        unrecorded = added_fields(label.version) if older and label is not None else ()
        return _spec_difference(old, new, unrecorded)
    if instance.legacy_hash == 0:
        return None
    return None if instance.observed.image == image else _image_change(instance, image)


def _describe_change(instance: Instance, expected_spec: dict[str, Any]) -> str:
    if instance.spec_label is not None:
        try:
            return _spec_difference(json.loads(instance.spec_label), expected_spec)
        except ValueError:
            pass
    return "spec hash differs"


def _image_change(instance: Instance, image: str) -> str:
    return f"image {_show(instance.observed.image)} -> {image}"


# ---------------------------------------------------------------------------------------
# The planner


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
class _Context:
    """Per-plan state shared by the per-pod planners (mutable, private to one call)."""

    options: PlanOptions
    now: float
    present_images: frozenset[str]
    liveness: Mapping[str, bool]
    host_resolv: ResolvConf
    # Keyed by the normalized reference: "busybox", "busybox:latest" and
    # "docker.io/library/busybox" are one image to the engine, hence one pull.
    pulls: dict[str, _PullNeed] = attrs.Factory(dict)
    normalized: dict[str, str] = attrs.Factory(dict)

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


class _Decision:
    """The outcome for one app container: what to stop, and whether it starts or waits."""

    __slots__ = ("container", "keep", "kills", "start", "wait")

    def __init__(self, container: Container) -> None:
        self.container = container
        self.kills: list[tuple[Instance, Reason, str, Handler | None]] = []
        self.start: tuple[Reason, str, int] | None = None  # (reason, why, restart count)
        self.wait: Wait | None = None
        self.keep = False


class _PodPlanner:
    """Plans one admitted pod (seed syncPod)."""

    def __init__(
        self,
        pod: Pod,
        instances: list[Instance],
        ctx: _Context,
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

    def _kill(self, instance: Instance, reason: Reason, why: str, pre_stop: Handler | None) -> None:
        self.killed.add(instance.observed.id)
        self.actions.append(
            Kill(
                pod=self.key,
                pod_uid=self.pod.uid,
                container=instance.container,
                id=instance.observed.id,
                name=instance.observed.name,
                timeout=self._grace,
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
        self, container: str, attempt: int, digest: SpecHash, spec: dict[str, Any], restarts: int
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
            LABEL_SPEC: canonical_json(spec),
            LABEL_RESTART_COUNT: str(restarts),
        }
        if pod.termination_grace_period_seconds is not None:
            labels[LABEL_GRACE_PERIOD] = str(pod.termination_grace_period_seconds)
        return labels

    # -- the network container -------------------------------------------------------

    def _network_inputs(self) -> dict[str, Any]:
        """The options that shape the network container, as ``network_spec`` takes them:
        what is hashed and compared is what ``_network_spec`` passes to the engine."""
        options = self.ctx.options
        return {
            "network_mode": options.network_mode,
            "cluster_dns": options.cluster_dns,
            "cluster_domain": options.cluster_domain,
            "host_dns": self.ctx.host_resolv,
        }

    def _network_spec(
        self, name: str, digest: SpecHash, spec: dict[str, Any], attempt: int
    ) -> CreateSpec:
        pod, options = self.pod, self.ctx.options
        all_ports = [port for c in pod.containers for port in c.ports]
        dns: tuple[str, ...] = ()
        search: tuple[str, ...] = ()
        if uses_cluster_dns(
            pod.dns_policy, server=options.cluster_dns, domain=options.cluster_domain
        ):
            merged = cluster_dns(
                self.ctx.host_resolv,
                namespace=pod.namespace,
                server=options.cluster_dns,
                domain=options.cluster_domain,
            )
            dns, search = merged.nameservers, merged.searches
        return CreateSpec(
            name=name,
            image=options.network_image,
            labels=self._labels(NETWORK_CONTAINER, attempt, digest, spec, 0),
            hostname=pod.name,
            network_mode=options.network_mode,
            exposed_ports=tuple(exposed_ports(all_ports)),
            port_bindings=port_bindings(all_ports),
            dns=dns,
            dns_search=search,
        )

    # -- app containers ------------------------------------------------------------

    def _app_hash(self, c: Container) -> SpecHash:
        """The spec hash of app container ``c``: its spec, its pod's inputs and the
        options that shape it (the root directory behind its binds)."""
        return spec_hash(c, self.pod, root_dir=self.ctx.options.root_dir)

    def _app_canonical(self, c: Container) -> dict[str, Any]:
        """The canonical spec ``_app_hash`` is the digest of."""
        return canonical_spec(c, self.pod, root_dir=self.ctx.options.root_dir)

    def _app_spec(self, c: Container, net_name: str, digest: SpecHash, restarts: int) -> CreateSpec:
        pod, options = self.pod, self.ctx.options
        attempt = _next_attempt([*self.by_name.get(c.name, ()), *self.reserved.get(c.name, ())])
        name = container_name(c.name, digest.name_hash, pod.full_name, pod.uid, attempt)
        host_paths = volume_host_paths(pod, options.root_dir)
        mounted = [m.name for m in c.volume_mounts]
        volume_binds = binds(c.volume_mounts, host_paths)
        directories = tuple(
            host_paths[v.name] for v in pod.volumes if v.is_empty_dir and v.name in mounted
        )
        files: tuple[str, ...] = ()
        if c.termination_message_path:
            path = termination_message_file(options.root_dir, pod.uid, c.name, name)
            files = (path,)
            volume_binds.append(f"{path}:{c.termination_message_path}")
        labels = self._labels(c.name, attempt, digest, self._app_canonical(c), restarts)
        pre_stop = _numbered(c.lifecycle.pre_stop if c.lifecycle else None, c)
        if pre_stop is not None:
            labels[LABEL_PRE_STOP] = encode_handler(pre_stop)
        return CreateSpec(
            name=name,
            image=c.image,
            labels=labels,
            entrypoint=c.command or None,
            command=c.args or None,
            env=tuple(environment(c.env)),
            working_dir=c.working_dir,
            network_mode=f"container:{net_name}",
            binds=tuple(volume_binds),
            cpu_shares=cpu_shares(c.cpu),
            memory=c.memory,
            privileged=c.privileged,
            directories=directories,
            files=files,
            post_start=_numbered(c.lifecycle.post_start if c.lifecycle else None, c),
            pre_stop=pre_stop,
            stop_timeout=self._grace,
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
        pod = self.pod
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
        change = _compare(newest, self._app_hash(c), lambda: self._app_canonical(c), c.image)
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
        policy = pod.restart_policy
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
        pod = self.pod
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
            change = _compare(keeper, self._app_hash(c), lambda: self._app_canonical(c), c.image)
            if change is not None:
                why = f"spec changed ({change})"
                decision.kills.append((keeper, Reason.SPEC_CHANGED, f"replaced, {why}", pre_stop))
                # A changed spec is a new container: it starts whatever the restart policy
                # (the modern kubelet does the same) and its back-off starts over.
                decision.start = (Reason.SPEC_CHANGED, why, 0)
            elif self._unhealthy(c, keeper):
                decision.kills.append((keeper, Reason.UNHEALTHY, "liveness probe failed", pre_stop))
                # A probe kill restarts unless the policy is Never (kubelet-modern.md
                # §1.3), through the same crash-loop gate as an exit (§2): the killed
                # instance ends now, so a container killed again and again backs off
                # instead of being replaced on every sync. While it waits, the next plan
                # sees the instance stopped with its "unhealthy" stop record.
                if pod.restart_policy is not RestartPolicy.NEVER:
                    ready = self._back_off(c, keeper, self.ctx.now, "liveness probe failed")
                    if isinstance(ready, Wait):
                        decision.wait = ready
                    else:
                        decision.start = (Reason.UNHEALTHY, "liveness probe failed", ready)
            else:
                decision.keep = True
        else:
            outcome = self._start_decision(c)
            if isinstance(outcome, Wait):
                decision.wait = outcome
            else:
                decision.start = outcome
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
        return decision

    def plan(self) -> list[PodAction]:
        pod, ctx = self.pod, self.ctx
        options = ctx.options
        net_inputs = self._network_inputs()
        net_digest = network_spec_hash(pod, options.network_image, **net_inputs)
        nets = self.by_name.get(NETWORK_CONTAINER, [])
        running_nets = [i for i in nets if i.running]
        net_keeper = running_nets[0] if running_nets else None

        # 1. Does the network container need to be (re)created? (seed syncPod step 1,
        #    plus the hash comparison the seed never made for ``net``.)
        rebuild: tuple[Reason, str] | None = None
        if net_keeper is None:
            why = "network container exited" if nets else "network container missing"
            rebuild = (Reason.NETWORK_MISSING, why)
        else:
            change = _compare(
                net_keeper,
                net_digest,
                lambda: network_spec(pod, options.network_image, **net_inputs),
                options.network_image,
            )
            if change is not None:
                rebuild = (Reason.NETWORK_CHANGED, f"network spec changed ({change})")

        # 2. Decide each app container; the network container's fate depends on it.
        decisions = [self._decide(c, rebuild) for c in pod.containers]
        spec_names = {c.name for c in pod.containers}
        strays = [
            instance
            for name, instances in sorted(self.by_name.items())
            if name != NETWORK_CONTAINER and name not in spec_names
            for instance in instances
            if instance.running
        ]
        starts = any(d.start is not None for d in decisions)
        if rebuild is not None:
            net_needed = starts
        else:
            # Keep the network while anything runs, starts, or waits to restart; stop it
            # when the pod has completed (the modern kubelet's KillPod).
            net_needed = starts or any(d.keep or d.wait is not None for d in decisions)

        # 3. Emit, in the order apply runs them.
        net_name = net_keeper.observed.name if net_keeper else ""
        if rebuild is not None:
            for d in decisions:
                for kill in d.kills:
                    self._kill(*kill)
            for stray in strays:
                self._kill(
                    stray, Reason.NOT_IN_SPEC, "no longer in the pod spec", _label_pre_stop(stray)
                )
            for old in running_nets:
                self._kill(old, rebuild[0], rebuild[1], None)
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
                        spec=self._network_spec(
                            net_name,
                            net_digest,
                            network_spec(pod, options.network_image, **net_inputs),
                            attempt,
                        ),
                        reason=rebuild[0],
                        message=f"create {self._label(NETWORK_CONTAINER)}: {rebuild[1]}",
                    )
                )
            for d in decisions:
                self._emit_start(d, net_name)
        else:
            for d in decisions:
                for kill in d.kills:
                    self._kill(*kill)
                self._emit_start(d, net_name)
            for stray in strays:
                self._kill(
                    stray, Reason.NOT_IN_SPEC, "no longer in the pod spec", _label_pre_stop(stray)
                )
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
        verb = {
            Reason.MISSING: "create",
            Reason.NOT_STARTED: "create",
            Reason.NOT_REPLACED: "create",
            Reason.EXITED: "restart",
            Reason.POD_REBUILD: "recreate",
        }
        self.actions.append(
            Create(
                pod=self.key,
                pod_uid=self.pod.uid,
                container=c.name,
                spec=self._app_spec(
                    c,
                    net_name,
                    self._app_hash(c),
                    restarts,
                ),
                reason=reason,
                message=f"{verb.get(reason, 'replace')} {self._label(c.name)}: {why}",
            )
        )

    def _unhealthy(self, c: Container, instance: Instance) -> bool:
        # Seed healthy(): no probe means healthy; within initialDelaySeconds of creation
        # it counts as healthy (strict <). podsync takes probe results as input: only an
        # explicit failure counts; a container not probed yet is healthy.
        if c.liveness_probe is None:
            return False
        if self.ctx.now - instance.observed.created < c.liveness_probe.initial_delay_seconds:
            return False
        return self.ctx.liveness.get(instance.observed.id, True) is False

    def _collect_garbage(self, spec_names: set[str]) -> None:
        gc = self.ctx.options.gc
        for name, instances in sorted(self.by_name.items()):
            desired = name == NETWORK_CONTAINER or name in spec_names
            if desired:
                if gc.max_per_container is None:
                    continue
                keep = max(gc.max_per_container, 1)
                reason, why = Reason.GC_EXITED, f"exited, beyond the newest {keep} kept"
            else:
                keep = 0
                reason, why = Reason.GC_NOT_DESIRED, "exited, no longer in the pod spec"
            if len(instances) <= keep:
                continue  # fewer instances than are kept: nothing to collect
            for instance in _gc_candidates(instances, self.killed, keep, self.ctx.now, gc.min_age):
                self.actions.append(_remove(self.key, self.pod.uid, instance, reason, why))


def _gc_candidates(
    instances: Sequence[Instance], killed: Collection[str], keep: int, now: float, min_age: float
) -> list[Instance]:
    """The exited instances to remove, seed purgeOldest-style: the exited ones (and the
    ones this plan stops, which exit now) that are older than ``min_age`` are candidates;
    the newest ``keep`` candidates stay."""
    candidates = []
    for instance in instances:  # newest first
        stopping = instance.observed.id in killed
        if instance.running and not stopping:
            continue
        exited_at = now if stopping else instance.ended
        if min_age == 0 or now - exited_at > min_age:
            candidates.append(instance)
    return candidates[keep:]


def _remove(pod_key: str, pod_uid: str, instance: Instance, reason: Reason, why: str) -> Remove:
    return Remove(
        pod=pod_key,
        pod_uid=pod_uid,
        container=instance.container,
        id=instance.observed.id,
        name=instance.observed.name,
        reason=reason,
        message=f"remove {pod_key}/{instance.container} ({instance.observed.name}): {why}",
    )


def _label_pre_stop(instance: Instance) -> Handler | None:
    """The preStop handler remembered in a container's label: what stops a container
    gracefully once its spec is gone (its pod left the desired state, or its name left
    the pod spec); ``None`` when there is none or the label is not podsync's."""
    text = instance.observed.labels.get(LABEL_PRE_STOP)
    return decode_handler(text) if text else None


def _label_grace(instance: Instance, default: int) -> int:
    """The grace period remembered in a container's label (its pod's
    terminationGracePeriodSeconds when it was created; the kubelet reads the same from
    its ``io.kubernetes.pod.terminationGracePeriod`` label when the pod is gone), else
    ``default``."""
    text = instance.observed.labels.get(LABEL_GRACE_PERIOD)
    grace = decode_grace_period(text) if text is not None else None
    return default if grace is None else grace


def _plan_orphan(key: str, uid: str, instances: list[Instance], ctx: _Context) -> list[PodAction]:
    """A pod that is no longer desired: stop what runs, remove what exited."""
    actions: list[PodAction] = []
    killed: set[str] = set()
    ordered = newest_first(instances)
    # Stop app containers before the network container they live in.
    for instance in sorted(ordered, key=lambda i: i.container == NETWORK_CONTAINER):
        if not instance.running:
            continue
        killed.add(instance.observed.id)
        actions.append(
            Kill(
                pod=key,
                pod_uid=uid,
                container=instance.container,
                id=instance.observed.id,
                name=instance.observed.name,
                timeout=_label_grace(instance, ctx.options.stop_timeout),
                reason=Reason.POD_NOT_DESIRED,
                message=(
                    f"stop {key}/{instance.container} ({instance.observed.name}): "
                    "pod is no longer desired"
                ),
                pre_stop=_label_pre_stop(instance),
            )
        )
    for instance in _gc_candidates(ordered, killed, 0, ctx.now, ctx.options.gc.min_age):
        actions.append(
            _remove(key, uid, instance, Reason.GC_NOT_DESIRED, "exited, pod is no longer desired")
        )
    return actions


def _name_problem(pod: Pod) -> str | None:
    # The loader validates all of this with paths; pods built in code get the same rules
    # here, because names and uids become container-name fields and directory names.
    if not is_dns_label(pod.name):
        return f"pod name {pod.name!r} is not a DNS-1123 label"
    if not is_dns_label(pod.namespace):
        return f"namespace {pod.namespace!r} is not a DNS-1123 label"
    if not is_dns_label(pod.source):
        return f"source {pod.source!r} is not a DNS-1123 label"
    if not is_safe_uid(pod.uid):
        return f"uid {pod.uid!r} cannot be used in container names and paths"
    names = [c.name for c in pod.containers]
    for name in names:
        if not is_dns_label(name) or name == NETWORK_CONTAINER:
            return f"container name {name!r} is not a DNS-1123 label other than 'net'"
    if len(set(names)) != len(names):
        return "two containers have the same name"
    grace = pod.termination_grace_period_seconds
    if grace is not None and not 0 <= grace <= MAX_GRACE_PERIOD:
        return f"terminationGracePeriodSeconds must be 0-{MAX_GRACE_PERIOD}, got {grace}"
    return _content_problem(pod)


def _content_problem(pod: Pod) -> str | None:
    """What the loader refuses in a pod's contents, for pods built in code: no
    containers (the pod would be a lone network container), and NUL characters in what
    becomes a process's argv or environment (C strings: the engine cannot pass them)."""
    if not pod.containers:
        return "a pod needs at least one container"
    for c in pod.containers:
        for what, values in (
            ("command", c.command),
            ("args", c.args),
            ("env", [f"{e.name}={e.value}" for e in c.env]),
        ):
            for i, value in enumerate(values):
                if "\0" in value:
                    return (
                        f"container {c.name}: {what}[{i}] {value!r} contains a NUL "
                        "character, which no engine can pass on"
                    )
    return None


def _image_problem(pod: Pod) -> str | None:
    # The engine refuses a malformed reference at pull and at create, on every sync; the
    # modern kubelet reports it as InvalidImageName (pkg/kubelet/images/image_manager.go,
    # ParseImageName). podsync refuses the pod before anything is done to it, as the
    # loader refuses the file (pods built in code get the same rule here).
    for c in pod.containers:
        problem = image_reference_problem(c.image)
        if problem is not None:
            return f"container {c.name}: image {c.image!r} is not a valid reference: {problem}"
    return None


# Docker's smallest memory limit (daemon/daemon_unix.go, ``linuxMinMemory``).
_MIN_MEMORY_LIMIT = 6 * 1024 * 1024


def _memory_problem(pod: Pod) -> str | None:
    # Docker refuses a smaller limit at every create ("Minimum memory limit allowed is
    # 6MB"); the modern kubelet would retry that create forever as CreateContainerError.
    # podsync cannot honour the limit, so it refuses the pod before anything is done to
    # it (as an invalid image), rather than drop or raise the limit.
    for c in pod.containers:
        if 0 < c.memory < _MIN_MEMORY_LIMIT:
            return (
                f"container {c.name}: memory limit {c.memory} bytes is below the container "
                f"engine's minimum of 6MB ({_MIN_MEMORY_LIMIT} bytes)"
            )
    return None


def _host_path_outside(pod: Pod, prefixes: tuple[str, ...] | None) -> str | None:
    """The first hostPath of ``pod`` outside ``prefixes`` (compared by whole path
    components after normalisation, so ``/data`` allows ``/data/x`` but not
    ``/database`` or ``/data/../etc``), or ``None``."""
    if prefixes is None:
        return None
    allowed = [posixpath.normpath(p) for p in prefixes]
    for volume in pod.volumes:
        if volume.host_path is None:
            continue
        path = posixpath.normpath(volume.host_path)
        if not any(path == a or path.startswith(a.rstrip("/") + "/") for a in allowed):
            return volume.host_path
    return None


# A published port in the canonical network spec a network container records in
# LABEL_SPEC (``_hashing._port``: sorted keys, no whitespace); host port 0 is not published.
# Read with a pattern rather than a JSON parse: it runs on every running network
# container of every plan.
_RECORDED_HOST_PORT = re.compile(
    r'"host_ip":"([^"\\]*)","host_port":([1-9][0-9]*),"protocol":"(TCP|UDP)"'
)


def _recorded_host_ports(net: Instance) -> list[Port] | None:
    """The host ports a running network container publishes, from its spec label; None
    when it has no readable record (a 2014 kubelet's container)."""
    text = net.spec_label
    if text is None:
        return None
    if text.count('"host_port":') == text.count('"host_port":0,'):
        return []  # nothing published: the common case, without the pattern
    return [
        Port(int(port), int(port), PortProtocol(protocol), host_ip=ip)
        for ip, port, protocol in _RECORDED_HOST_PORT.findall(text)
    ]


def _running_host_ports(
    candidates: Mapping[str, Pod], by_identity: Mapping[Identity, list[Instance]]
) -> tuple[dict[str, list[Port]], list[tuple[str, Port]]]:
    """Which candidates (by full name) already run, with the host ports they publish;
    and the host ports other pods' running network containers publish.

    A candidate runs when any container of its identity runs (or of a 2014 kubelet's
    identity with its full name and no uid). Ports live on the network container (the
    app containers join its namespace); one without a readable record is taken to
    publish what the candidate asks for. Containers podsync does not own are not seen:
    their ports are unknown. Runs on every plan, so it does no more than it must: one
    pass, and the label is searched only when it records a published port.
    """
    running: dict[str, list[Port]] = {}
    elsewhere: list[tuple[str, Port]] = []
    for (uid, full_name), instances in by_identity.items():
        pod = candidates.get(full_name)
        if pod is not None and uid and uid != pod.uid:
            pod = None
        ports: list[Port] | None = None
        for instance in instances:
            if not instance.running:
                continue
            if pod is not None and ports is None:
                ports = running.setdefault(pod.uid, [])
            if instance.container != NETWORK_CONTAINER:
                continue
            recorded = _recorded_host_ports(instance)
            if ports is not None and pod is not None:
                if recorded is None:
                    recorded = [p for c in pod.containers for p in c.ports if p.host_port]
                ports.extend(recorded)
            elif recorded:
                elsewhere.extend((instance.pod_key, port) for port in recorded)
    # The engine lists containers in any order; the plan must not depend on it.
    elsewhere.sort(
        key=lambda item: (item[0], item[1].host_port, item[1].protocol.value, item[1].host_ip)
    )
    return running, elsewhere


def _admit(
    desired: Sequence[Pod],
    options: PlanOptions,
    by_identity: Mapping[Identity, list[Instance]],
) -> tuple[list[Pod], list[Rejection]]:
    """Admission (theory step 1); rejections are reported in the order of ``desired``.

    Host ports are admitted against what runs (``_running_host_ports``): a running pod
    keeps its ports whatever the input order, and nobody gets a port that a pod outside
    the admitted set still publishes (not desired, or rejected for another reason, or
    being stopped by this very plan - a new pod waits one sync for it rather than race
    the stop).
    """
    rejected: dict[int, Rejection] = {}
    seen_uids: dict[str, Pod] = {}
    seen_names: dict[str, Pod] = {}
    candidates: list[Pod] = []
    position: dict[int, int] = {}
    for index, pod in enumerate(desired):
        problem = _name_problem(pod) or _image_problem(pod) or _memory_problem(pod)
        if problem is not None:
            rejected[index] = Rejection(pod.key, pod.uid, Reason.INVALID_POD, problem)
            continue
        earlier = seen_uids.get(pod.uid) or seen_names.get(pod.full_name)
        if earlier is not None:
            rejected[index] = Rejection(
                pod.key,
                pod.uid,
                Reason.DUPLICATE_POD,
                f"same uid or full name as pod {earlier.key}",
            )
            continue
        seen_uids[pod.uid] = pod
        seen_names[pod.full_name] = pod
        privileged = [c.name for c in pod.containers if c.privileged]
        if privileged and not options.allow_privileged:
            rejected[index] = Rejection(
                pod.key,
                pod.uid,
                Reason.PRIVILEGED_NOT_ALLOWED,
                f"container {privileged[0]} asks for privileged mode, which is not allowed",
            )
            continue
        outside = _host_path_outside(pod, options.host_path_prefixes)
        if outside is not None:
            rejected[index] = Rejection(
                pod.key,
                pod.uid,
                Reason.HOST_PATH_NOT_ALLOWED,
                f"hostPath {outside} is outside the allowed prefixes "
                f"{', '.join(options.host_path_prefixes or ())}",
            )
            continue
        position[id(pod)] = index
        candidates.append(pod)
    running, elsewhere = _running_host_ports(
        {pod.full_name: pod for pod in candidates}, by_identity
    )
    accepted, conflicts = filter_host_port_conflicts(
        candidates, running=running, held_elsewhere=elsewhere
    )
    for r in conflicts:
        rejected[position[id(r.pod)]] = Rejection(
            r.pod.key, r.pod.uid, Reason.HOST_PORT_CONFLICT, r.message
        )
    return list(accepted), [rejected[i] for i in sorted(rejected)]


def plan(
    desired: Sequence[Pod],
    observed: Sequence[ObservedContainer] = (),
    *,
    now: float,
    images: Sequence[ObservedImage] = (),
    pod_dirs: Collection[str] = (),
    liveness: Mapping[str, bool] | None = None,
    options: PlanOptions | None = None,
) -> Plan:
    """Compute what to do to make the observed state match the desired pods.

    Pure: reads nothing but its arguments; equal arguments give an equal plan.

    Args:
        desired: the pods that should run, in priority order: a pod that already runs
            keeps its host ports, then earlier pods win host-port conflicts.
        observed: every container on the engine, exited ones included; foreign
            containers are ignored.
        now: the current time, seconds since the Unix epoch (for ages, back-off and
            liveness grace periods).
        images: the images present on the engine.
        pod_dirs: the pod uids that have a directory under ``options.root_dir``.
        liveness: liveness probe results of running containers by container id: False
            means the probe failed. A container with no result is considered healthy.
        options: everything else (see ``PlanOptions``).

    Returns:
        The plan; ``plan.has_changes`` is False when there is nothing to do.
    """
    with _cyclic_gc_paused():
        return _plan(
            desired,
            observed,
            now=now,
            images=images,
            pod_dirs=pod_dirs,
            liveness=liveness,
            options=options or PlanOptions(),
        )


# Python's cyclic garbage collector runs whenever enough objects have been allocated,
# and each full pass walks every live object - the caller's tens of thousands of
# observed containers included. Planning allocates many small objects and creates no
# reference cycles, so the collector is paused while a plan is made (a third of the time
# of a 10,000-pod plan otherwise). Process-wide, hence the lock and the depth count:
# with plans made on several threads, the collector comes back when the last one ends.
_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


def _plan(
    desired: Sequence[Pod],
    observed: Sequence[ObservedContainer],
    *,
    now: float,
    images: Sequence[ObservedImage],
    pod_dirs: Collection[str],
    liveness: Mapping[str, bool] | None,
    options: PlanOptions,
) -> Plan:
    present: set[str] = set()
    for image in images:
        present.update(normalize_image(t) for t in image.tags)
        present.update(normalize_image(d) for d in image.digests)
        present.add(image.id)
    ctx = _Context(
        options=options,
        now=now,
        present_images=frozenset(present),
        liveness=liveness or {},
        host_resolv=_host_resolv(options),
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

    accepted, rejected = _admit(desired, options, by_identity)

    # Each pod plan is a group; ``owner`` says which group an observed identity's
    # actions go to.
    groups: dict[Identity, tuple[str, list[PodAction]]] = {}
    owner: dict[Identity, Identity] = {}
    for pod in accepted:
        identity = (pod.uid, pod.full_name)
        instances = list(by_identity.get(identity, ()))
        owner[identity] = identity
        planner = _PodPlanner(pod, instances, ctx, not_adopted.get(identity, ()))
        groups[identity] = (pod.key, planner.plan())

    # Pods that are not desired, only when deletions are allowed. Rejected pods are left
    # alone: they were not admitted, but nobody asked for them to go away either. An
    # identity with a desired uid but another full name is a stale instance of that pod
    # and goes (the seed skipped such containers in SyncPods and left them running).
    rejected_uids = {r.uid for r in rejected}
    if options.allow_deletions:
        by_uid: dict[str, Identity] = {}
        for identity in sorted(by_identity):
            if identity in owner or identity[0] in rejected_uids:
                continue
            instances = by_identity[identity]
            ready = options.ready_sources
            if ready is not None and instances[0].pod_source not in ready:
                continue
            key = instances[0].pod_key
            owner[identity] = identity
            groups[identity] = (key, _plan_orphan(key, identity[0], instances, ctx))
            by_uid.setdefault(identity[0], identity)
        keep_dirs = {p.uid for p in accepted} | rejected_uids
        for uid in sorted(pod_dirs):
            if uid in keep_dirs or not _safe_dir_name(uid):
                continue
            if options.ready_sources is not None and uid not in by_uid:
                # Without containers the directory's source is unknown: keep it until
                # every source is ready.
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

    _apply_global_cap(groups, owner, by_identity, ctx)
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
    return attrs.evolve(made, fingerprint=scoped_fingerprint(made, by_identity, images, pod_dirs))


def _host_resolv(options: PlanOptions) -> ResolvConf:
    """The host's DNS settings as pods can use them: a loopback name server (the
    systemd-resolved stub ``127.0.0.53``, a local dnsmasq) answers only on the host's
    own loopback, so it is left out unless pods share the host's network, as Docker's
    resolv.conf filter (libnetwork ``FilterResolvDNS``) and the kubelet's advice for
    systemd-resolved hosts (kubelet-modern.md §12) do."""
    host = parse_resolv_conf(options.host_resolv_conf)
    return host if options.network_mode == "host" else without_loopback(host)


def _safe_dir_name(uid: str) -> bool:
    # Never build a path from a name that could leave the root directory.
    return uid not in ("", ".", "..") and "/" not in uid and "\0" not in uid


def _apply_global_cap(
    groups: dict[Identity, tuple[str, list[PodAction]]],
    owner: Mapping[Identity, Identity],
    by_identity: Mapping[Identity, list[Instance]],
    ctx: _Context,
) -> None:
    """Remove the oldest exited containers beyond ``gc.max_total`` across all pods.

    Counted after this plan's own stops and removals. The newest exited instance of each
    pod container is protected: the restart policy is judged on it.
    """
    cap = ctx.options.gc.max_total
    if cap is None:
        return
    planned = [a for _, actions in groups.values() for a in actions]
    removed = {a.id for a in planned if isinstance(a, Remove)}
    killed = {a.id for a in planned if isinstance(a, Kill)}
    remaining: list[tuple[Identity, Instance]] = []
    protected: set[str] = set()
    for identity, instances in by_identity.items():
        newest: dict[str, str] = {}
        for instance in newest_first(instances):
            oid = instance.observed.id
            if (instance.running and oid not in killed) or oid in removed:
                continue
            remaining.append((identity, instance))
            newest.setdefault(instance.container, oid)
        protected.update(newest.values())
    excess = len(remaining) - cap
    if excess <= 0:
        return
    victims = sorted(
        (item for item in remaining if item[1].observed.id not in protected),
        key=lambda item: (item[1].observed.created, item[1].observed.id),
    )[:excess]
    for identity, instance in victims:
        if identity not in owner:
            # Not desired and deletions are off: not ours to remove now.
            continue
        group = owner[identity]
        key, actions = groups[group]
        actions.append(
            _remove(
                key,
                group[0],
                instance,
                Reason.GC_GLOBAL_CAP,
                f"exited, beyond the global cap of {cap}",
            )
        )
