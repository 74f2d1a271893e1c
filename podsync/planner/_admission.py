"""Admission (the planner's step 1): which desired pods are planned, and why the others
are rejected.

A pod is rejected, and nothing is done to it, when its contents cannot be passed to an
engine (no containers, NUL characters, a malformed image reference, a memory limit
below the engine's minimum, a grace period beyond the engine's, a volume mounted where
the termination-message file goes), it repeats an earlier pod's uid or full name, it
fails a check of the Pod Security level (``_pod_security``: privileged mode, hostPath,
capabilities, ..., each unless the option that opens it is given), its requests do not
fit in what the node has left (``_node_resources``), or it wants a host port that a
running pod holds or an earlier pod was given (pods that already run are admitted
first: ``HostPortAdmission``). Every check reads every container of the pod:
its app containers, its init containers and its sidecars.

What one pod's fields get wrong alone - names and uids that cannot be container-name
fields, two containers of one name, ports out of range, mounts of missing volumes - no
``Pod`` can hold: its validators refuse it when it is built
(``podsync.model._validators``). Admission re-checks what they do not see: what
the engine refuses although Kubernetes' validation lets it through, and what a pod's
mutable maps (labels, annotations) may have gained since.

A pod that has finished - it ran, and none of its containers runs or will run again, as
the per-pod planner's restart rules say - holds nothing: neither its host ports nor its
requests count against the others (the kubelet admits against ``filterOutInactivePods``,
``HandlePodAdditions`` in ``pkg/kubelet/kubelet.go``). It is still admitted: its plan
stops its network container and collects its exited containers.

Contract: pure; ``admit`` returns the admitted pods (the pods that may run, then the
finished ones, then the ones held by scheduling gates, each in the order of the desired
pods: the planner sorts its pod plans by key, so that order is never seen) and the
rejections in the order of the desired pods.

May import: the model and helpers, the vocabulary, options, ownership. Never the rest of
the planner, a runtime, or anything that does I/O.
"""

from __future__ import annotations

import operator
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from podsync.actions._actions import (
    Reason,
    Rejection,
)
from podsync.actions._options import PlanOptions
from podsync.model._pod import (
    Container,
    Pod,
    Port,
    PortProtocol,
    ResourceList,
    engine_resources,
)
from podsync.model._secrets import shown
from podsync.model._security import (
    ProfileType,
    SecurityProfile,
    capability_problem,
    profile_path_problem,
    sysctl_problem,
)
from podsync.planner._capabilities import runtime_capability_problem
from podsync.planner._host_ports import HostPortAdmission
from podsync.planner._node_resources import NodeResources, allocatable, pod_requests
from podsync.planner._pod_security import pod_security_message, pod_security_violations
from podsync.planner._spec_change import planned_before
from podsync.spec._environment import environment
from podsync.spec._images import image_reference_problem
from podsync.spec._labels import (
    KUBERNETES_LABEL_PREFIX,
    MAX_GRACE_PERIOD,
    PODSYNC_LABEL_PREFIX,
)
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import Identity, Instance
from podsync.spec._ports import network_ports

__all__: list[str] = []  # the planner's own

_T = TypeVar("_T")


class _Memo(dict[str, _T]):
    """``function(text)``, computed once per text for one admission: namespaces,
    sources, container names and images repeat across the pods of a fleet."""

    def __init__(self, function: Callable[[str], _T]) -> None:
        super().__init__()
        self._function = function

    def __missing__(self, text: str) -> _T:
        value = self[text] = self._function(text)
        return value


def _every(pod: Pod) -> tuple[Container, ...]:
    """Every container of ``pod``, in spec order: its init containers (sidecars
    among them), then its app containers. Each admission check reads them all: an init
    container reaches the engine as an app container does."""
    if not pod.init_containers:
        return pod.containers
    return (*pod.init_containers, *pod.containers)


def _grace_problem(pod: Pod) -> str | None:
    # The grace period becomes Docker's stop timeout: whole seconds that fit an int32.
    grace = pod.termination_grace_period_seconds
    if grace is not None and not 0 <= grace <= MAX_GRACE_PERIOD:
        return f"terminationGracePeriodSeconds must be 0-{MAX_GRACE_PERIOD}, got {grace}"
    return None


def _mount_problem(pod: Pod) -> str | None:
    """A volume mounted where the container's termination-message file is bound: the
    engine refuses two mounts at one path ("Duplicate mount point", at every create,
    the kubelet's ``CreateContainerError``); Kubernetes' validation lets it through. The
    loader refuses the file (``_check_pod``); pods built in code get the rule here."""
    for c in _every(pod):
        if not c.volume_mounts:
            continue
        path = posixpath.normpath(c.message_path)
        for m in c.volume_mounts:
            if posixpath.normpath(m.mount_path) == path:
                return (
                    f"container {c.name}: volume {m.name} is mounted at {m.mount_path!r}, "
                    "where the termination-message file is bound; the engine refuses two "
                    "mounts at one path"
                )
    return None


_env_name = operator.attrgetter("name")
_env_value = operator.attrgetter("value")


def _content_problem(pod: Pod) -> str | None:
    """What the loader refuses in a pod's contents, for pods built in code: no
    containers (the pod would be a lone network container), and NUL characters in what
    becomes a process's argv or environment (C strings: the engine cannot pass them)."""
    if not pod.containers:
        return "a pod needs at least one container"
    # The common case, on every plan of every pod: no NUL anywhere, found by one C-level
    # join of all the pod's texts, without building the messages' values.
    texts: list[str] = []
    for c in _every(pod):
        texts += c.command
        texts += c.args
        texts += map(_env_name, c.env)
        texts += map(_env_value, c.env)
    if "\0" not in "".join(texts):
        return None
    for c in _every(pod):
        for what, values in (
            ("command", c.command),
            ("args", c.args),
            ("env", environment(c.env)),
        ):
            for i, value in enumerate(values):
                if "\0" in value:
                    # A Secret's value is shown by reference (podsync.model._secrets).
                    return (
                        f"container {c.name}: {what}[{i}] {shown(value)!r} contains a NUL "
                        "character, which no engine can pass on"
                    )
    return None


def _image_problem(pod: Pod, reference_problem: Mapping[str, str | None]) -> str | None:
    # The engine refuses a malformed reference at pull and at create, on every sync; the
    # modern kubelet reports it as InvalidImageName (pkg/kubelet/images/image_manager.go,
    # ParseImageName). podsync refuses the pod before anything is done to it, as the
    # loader refuses the file (pods built in code get the same rule here).
    for c in _every(pod):
        problem = reference_problem[c.image]
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
    for c in _every(pod):
        _, _, limit = engine_resources(c)
        if 0 < limit < _MIN_MEMORY_LIMIT:
            return (
                f"container {c.name}: memory limit {limit} bytes is below the container "
                f"engine's minimum of 6MB ({_MIN_MEMORY_LIMIT} bytes)"
            )
    return None


def _label_problem(pod: Pod) -> str | None:
    # The pod's labels go onto its containers beside podsync's own record: a key under
    # io.podsync. would overwrite that record, one under io.kubernetes. would make the
    # container a Kubernetes node's to ``ownership``. The loader refuses such files; pods
    # built in code get the same rule here.
    for key in pod.labels:
        if key.startswith((PODSYNC_LABEL_PREFIX, KUBERNETES_LABEL_PREFIX)):
            return f"label {key!r} is reserved for podsync's and Kubernetes' own records"
    return None


def _profiles(pod: Pod) -> list[tuple[str, SecurityProfile | None, bool]]:
    context = pod.security_context
    found: list[tuple[str, SecurityProfile | None, bool]] = []
    if context is not None:
        found.append(("pod", context.seccomp_profile, True))
        found.append(("pod", context.app_armor_profile, False))
    for c in _every(pod):
        if c.security_context is not None:
            found.append((f"container {c.name}", c.security_context.seccomp_profile, True))
            found.append((f"container {c.name}", c.security_context.app_armor_profile, False))
    return found


def _security_problem(pod: Pod) -> str | None:
    """What the loader refuses in a pod's security settings, for pods built in code:
    capability names not in Kubernetes' spelling, and profiles that name no file under
    the seccomp directory (or no AppArmor profile)."""
    for c in _every(pod):
        caps = c.security_context.capabilities if c.security_context else None
        if caps is not None:
            problem = capability_problem((*caps.add, *caps.drop))
            if problem is not None:
                return f"container {c.name}: {problem}"
    for owner, profile, seccomp in _profiles(pod):
        if profile is None:
            continue
        kind = "seccomp" if seccomp else "AppArmor"
        local = profile.type is ProfileType.LOCALHOST
        if local != bool(profile.localhost_profile):
            return f"{owner}: a {kind} profile names a local profile exactly when it is Localhost"
        if local and seccomp:
            problem = profile_path_problem(profile.localhost_profile)
            if problem is not None:
                return f"{owner}: seccomp localhost profile {problem}"
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
    ports: list[Port] = []
    for ip, port, protocol in _RECORDED_HOST_PORT.findall(text):
        try:
            ports.append(Port(int(port), int(port), PortProtocol(protocol), host_ip=ip))
        except ValueError:
            # A record no podsync wrote (a port beyond 65535, an address that is none):
            # the engine publishes no such port, so it holds nothing.
            continue
    return ports


# The ports of a running pod that publishes none (never appended to).
_NOTHING: list[Port] = []


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
        for instance in instances:
            if not instance.running:
                continue
            if pod is not None and pod.uid not in running:
                # Shared while it publishes nothing: one list less per running pod.
                running[pod.uid] = _NOTHING
            if instance.container != NETWORK_CONTAINER:
                continue
            recorded = _recorded_host_ports(instance)
            if pod is not None:
                if recorded is None:
                    recorded = [p for p in network_ports(pod) if p.host_port]
                if recorded:
                    # A new list: _NOTHING is shared.
                    running[pod.uid] = [*running[pod.uid], *recorded]
            elif recorded:
                elsewhere.extend((instance.pod_key, port) for port in recorded)
    # The engine lists containers in any order; the plan must not depend on it. Sorted
    # by pod key alone: a conflict's message names the first pod that holds the port,
    # and one pod's ports all name that pod, so their order is never seen.
    elsewhere.sort(key=operator.itemgetter(0))
    return running, elsewhere


def admit(
    desired: Sequence[Pod],
    options: PlanOptions,
    by_identity: Mapping[Identity, list[Instance]],
    *,
    capacity: ResourceList | None = None,
    finished: Callable[[Pod], bool] | None = None,
) -> tuple[list[Pod], list[Rejection]]:
    """Admission (theory step 1); rejections are reported in the order of ``desired``.

    The checks that read a pod alone come first, in input order: its fields, the
    operator's policy, then what the runtime can do (``runtime_capability_problem``).
    Then the pods that may run are admitted as the kubelet's ``HandlePodAdditions``
    does, each against the pods admitted before it and still active: the pods that
    already run first, then the others, each in input order (the kubelet's creation
    order: a running pod was there first). A running pod keeps what it holds: it is
    never rejected for resources (the kubelet admits a pod once), and its requests count
    against the others.

    Host ports are admitted against what runs (``_running_host_ports``): a running pod
    keeps its ports whatever the input order, and nobody gets a port that a pod outside
    the admitted set still publishes (not desired, or rejected for another reason, or
    being stopped by this very plan - a new pod waits one sync for it rather than race
    the stop).

    Args:
        desired: the pods, in priority order.
        options: the planning options (what is allowed; ``system_reserved``).
        by_identity: the owned containers, by pod identity.
        capacity: the node's CPUs and memory (``NodeRuntime.node_capacity``); ``None``
            (unknown) checks no requests.
        finished: whether a pod that passed the other checks has finished (it holds
            nothing, see the module docstring); ``None``: no pod has.
    """
    rejected: dict[int, Rejection] = {}
    seen_uids: dict[str, Pod] = {}
    seen_names: dict[str, Pod] = {}
    candidates: list[Pod] = []
    done: list[Pod] = []  # finished: admitted, holding nothing
    gated: list[Pod] = []  # not ready to run: they hold no host port
    position: dict[str, int] = {}  # candidate uid -> input index
    reference_problem = _Memo(image_reference_problem)
    for index, pod in enumerate(desired):
        problem = _pod_problem(pod, reference_problem)
        if problem is None:
            earlier = seen_uids.get(pod.uid) or seen_names.get(pod.full_name)
            if earlier is not None:
                problem = Rejection(
                    pod.key,
                    pod.uid,
                    Reason.DUPLICATE_POD,
                    f"same uid or full name as pod {earlier.key}",
                )
            seen_uids.setdefault(pod.uid, pod)
            seen_names.setdefault(pod.full_name, pod)
        if problem is None:
            problem = _policy_problem(pod, options)
        if problem is None:
            problem = runtime_capability_problem(pod, options.capabilities)
        if problem is not None:
            rejected[index] = problem
            continue
        position[pod.uid] = index
        if pod.scheduling_gates:
            gated.append(pod)
        elif finished is not None and finished(pod):
            done.append(pod)
        else:
            candidates.append(pod)
    running, elsewhere = _running_host_ports(
        {pod.full_name: pod for pod in candidates}, by_identity
    )
    ports = HostPortAdmission(candidates, running=running, held_elsewhere=elsewhere)
    resources = (
        None if capacity is None else NodeResources(allocatable(capacity, options.system_reserved))
    )
    incumbents = set(ports.incumbents())
    verdicts: dict[int, Rejection | None] = {}
    for index in ports.order():
        pod = candidates[index]
        # The kubelet checks resources before host ports, and reports the first failure
        # only (AdmissionCheck, pkg/scheduler/eventhandlers.go); a running pod is never
        # rejected for its resources.
        verdict = (
            None
            if resources is None or index in incumbents
            else resources.check(pod, pod_requests(pod))
        ) or ports.check(index)
        verdicts[index] = verdict
        if verdict is None:
            ports.accept(index)
        else:
            ports.reject(index)
            rejected[position[pod.uid]] = verdict
        if resources is not None and (verdict is None or index in incumbents):
            # A running pod holds its resources, admitted or not: it keeps running.
            resources.add(pod_requests(pod))
    accepted = [pod for i, pod in enumerate(candidates) if verdicts[i] is None]
    return [*accepted, *done, *gated], [rejected[i] for i in sorted(rejected)]


def _pod_problem(
    pod: Pod,
    reference_problem: Mapping[str, str | None],
) -> Rejection | None:
    """Why ``pod`` cannot be planned at all, read from the pod alone."""
    # These checks read the pod alone: a Pod object planned before passed them then
    # and, immutable, passes them again (a loop re-plans the same objects).
    if planned_before(pod):
        return None
    problem = (
        _grace_problem(pod)
        or _content_problem(pod)
        or _mount_problem(pod)
        or _image_problem(pod, reference_problem)
        or _memory_problem(pod)
        or _label_problem(pod)
        or _security_problem(pod)
    )
    if problem is None:
        return None
    return Rejection(pod.key, pod.uid, Reason.INVALID_POD, problem)


def _policy_problem(pod: Pod, options: PlanOptions) -> Rejection | None:
    """Why ``pod`` may not run here by the operator's policy: a sysctl no namespace
    holds (never: it would change the whole host), then the checks of the Pod Security
    level (``podsync.planner._pod_security``), every failed one named in one message.

    The rejection's reason is the first failed check's: the gates that had a reason of
    their own keep it (``privileged-not-allowed``, ``host-namespace-not-allowed``,
    ``host-path-not-allowed``, ``sysctl-not-allowed``), the others are ``pod-security``.
    """
    # The kubelet's sysctl admission (pkg/kubelet/sysctl/allowlist.go, reason
    # SysctlForbidden) for what no option opens: every namespaced name passes here,
    # the level's sysctls check judges those.
    problem = sysctl_problem(pod.security_context, _ANY_NAMESPACED)
    if problem is not None:
        return Rejection(pod.key, pod.uid, Reason.SYSCTL_NOT_ALLOWED, problem)
    violations = pod_security_violations(pod, options)
    if not violations:
        return None
    return Rejection(
        pod.key,
        pod.uid,
        violations[0].reason,
        pod_security_message(options.pod_security, violations),
    )


# A pattern of ``--allowed-unsafe-sysctls`` that allows every namespaced sysctl.
_ANY_NAMESPACED = ("*",)
