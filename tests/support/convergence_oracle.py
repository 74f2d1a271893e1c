"""What "converged" means, written from the pod spec and the world's history.

The convergence properties (``tests/unit/planner/test_plan_properties.py``,
``tests/unit/loop/test_convergence_faults.py``) plan and apply until the planner has nothing left
to do. "Nothing left to do" alone proves little: a planner that forgets a container
also has nothing left to do. This oracle says what must then hold, per desired admitted
pod and container, and it is written independently of the planner: it reads the
containers' labels and names itself, and decides from the pod spec and what the engine
held *before* the sync (the generated history) - never from ``podsync.planner._plan``'s
internals. It uses only the spec hashing (``spec_hash``, ``canonical_spec``,
``network_spec_hash``, ``network_spec``: what a container's labels are compared with)
and the label keys.

The rules (docs/library.md "Plans" and ``podsync.planner._plan``'s module docstring, as a user reads
them):

* A container **should run** when its history says so: it never had an instance; its
  newest instance never started, or was stopped by podsync for anything but a failure;
  the restart policy is ``Always``; or it is ``OnFailure`` and the newest run failed
  (exited non-zero, or podsync killed it for its liveness probe, its postStart handler
  or its pod's network container dying under it). Then it runs - exactly one instance,
  with the desired spec - or the final plan waits for it, with a reason that explains
  the wait (a back-off after a failed run or a start that never happened, an image it
  may not pull).
* A container that **completed** under its policy (``Never``; ``OnFailure`` after a
  success) stays down, whatever its spec now (docs/differences.md: the restart policy
  is absolute): nothing new is created for it, and its newest instance - the one the
  policy was judged on - is still the newest.
* A ``Never`` pod whose network container does not run after one of its containers ran
  (it runs, or it was a run) has failed: every container is down.
* The **network container** runs, with the desired network spec, when an app container
  of the pod runs; it does not run when nothing of the pod runs or waits to run.
* Nothing runs that belongs to a pod that is not desired, when deletions are allowed;
  without them, what such a pod ran still runs. No container whose name left a pod's
  spec runs.
* **Foreign** containers (a Kubernetes node's, unparseable names, 2014 kubelet's without
  the adopt option) are exactly as they were.
* **Admission**: a privileged pod is rejected unless privileged pods are allowed; a
  pod that publishes no host port and asks nothing it may not have is admitted; a pod
  rejected before and after the sync was not touched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from podsync import Container, ObservedContainer, Pod, PullPolicy, RestartPolicy, spec_hash
from podsync.actions._actions import Plan, Reason, Wait
from podsync.actions._options import PlanOptions
from podsync.planner._node_resources import pod_requests
from podsync.spec import network_spec_hash
from podsync.spec._hashing import SPEC_HASH_VERSION, SpecHash, canonical_spec, network_spec
from podsync.spec._labels import (
    LABEL_CONTAINER,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_UID,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
)
from podsync.spec._volumes import DEFAULT_ROOT_DIR

NET = "net"
#: The stop records that say a run failed (docs/library.md: "a container podsync killed for a
#: failure (liveness probe, postStart handler, its pod's network container dying under
#: it) failed, whatever its exit code").
FAILURE_RECORDS = frozenset({"unhealthy", "post-start-failed", "network-lost"})

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# The seed's BuildDockerName, exactly (docs/library.md "Ownership").
_NAME_2014 = re.compile(
    rf"/?k8s_(?P<container>{_LABEL})\.(?P<hash>[0-9a-f]{{1,8}})"
    rf"_(?P<full>{_LABEL}\.{_LABEL}\.{_LABEL})_(?P<uid>[A-Za-z0-9][A-Za-z0-9.-]*)"
    r"_[0-9a-f]{8}"
)

Verdict = Literal["run", "down", "either"]


@attrs.frozen
class Owner:
    pod_uid: str
    pod_full_name: str
    container: str
    labelled: bool


def owner(o: ObservedContainer, *, adopt: bool) -> Owner | None:
    """Whose container ``o`` is, read from its labels and name (docs/library.md "Ownership")."""
    if any(k.startswith("io.kubernetes.") for k in o.labels):
        return None
    labels = o.labels
    if LABEL_POD_UID in labels:
        full = ".".join(labels.get(k, "") for k in (LABEL_POD_NAME, LABEL_POD_NAMESPACE))
        full += "." + labels.get(LABEL_POD_SOURCE, "")
        container = labels.get(LABEL_CONTAINER) or o.name.lstrip("/").split("_")[1].split(".")[0]
        return Owner(labels[LABEL_POD_UID], full, container, True)
    m = _NAME_2014.fullmatch(o.name)
    if adopt and m is not None:
        return Owner(m["uid"], m["full"], m["container"], False)
    return None


def instances(
    containers: Iterable[ObservedContainer], pod: Pod, name: str, *, adopt: bool
) -> list[ObservedContainer]:
    """The instances of ``pod``'s container ``name`` (``net`` for the network's)."""
    result = []
    for o in containers:
        w = owner(o, adopt=adopt)
        if w and (w.pod_uid, w.pod_full_name, w.container) == (pod.uid, pod.full_name, name):
            result.append(o)
    return result


def newest(stopped: Sequence[ObservedContainer]) -> ObservedContainer:
    """The newest stopped instance: latest to end (a container that never started ends
    when it was created), then latest created."""
    return max(stopped, key=lambda o: (_ended(o), o.created, o.id))


def _ended(o: ObservedContainer) -> float:
    return o.finished_at if o.finished_at is not None else o.created


def matches(o: ObservedContainer, want: SpecHash, want_spec: dict[str, Any], image: str) -> bool:
    """Whether instance ``o`` has the desired spec (docs/differences.md item 2): the same
    hash; with a hash of another version, the same spec label (or, without one, the
    same image); a 2014 kubelet's container (no hash label) with name hash 0 is not
    compared, any other with its image."""
    text = o.labels.get(LABEL_SPEC_HASH) if LABEL_POD_UID in o.labels else None
    if text is not None:
        if text == str(want):
            return True
        if text.partition(":")[0] == str(SPEC_HASH_VERSION):
            return False
        if LABEL_SPEC not in o.labels:
            return o.image == image
        try:
            return bool(json.loads(o.labels[LABEL_SPEC]) == want_spec)
        except ValueError:
            return False
    m = _NAME_2014.fullmatch(o.name)
    if m is not None and int(m["hash"], 16) == 0:
        return True
    return o.image == image


def _app_matches(o: ObservedContainer, c: Container, pod: Pod, root_dir: str) -> bool:
    # The root directory shapes the spec (host paths of emptyDirs, termination files).
    return matches(
        o, spec_hash(c, pod, root_dir=root_dir), canonical_spec(c, pod, root_dir=root_dir), c.image
    )


def _started(o: ObservedContainer) -> bool:
    return o.finished_at is not None


def _a_run(o: ObservedContainer) -> bool:
    """Whether stopped instance ``o`` was a run the restart policy judges: it started,
    and it ended by itself or podsync killed it for a failure."""
    return _started(o) and (not o.stopped_by_podsync or o.stopped_by_podsync in FAILURE_RECORDS)


def _failed(o: ObservedContainer) -> bool:
    return o.exit_code != 0 or o.stopped_by_podsync in FAILURE_RECORDS


def _restarts(policy: RestartPolicy, o: ObservedContainer) -> bool:
    """Whether the policy restarts after run ``o``."""
    return policy is RestartPolicy.ALWAYS or (policy is RestartPolicy.ON_FAILURE and _failed(o))


def expected(
    pod: Pod,
    c: Container,
    before: Sequence[ObservedContainer],
    *,
    adopt: bool,
    now: float,
    liveness: Mapping[str, bool],
    post_start_may_fail: bool = False,
    root_dir: str = DEFAULT_ROOT_DIR,
) -> Verdict:
    """What the history ``before`` says of ``pod``'s container ``c``: ``run``, ``down``
    (it completed under its policy), or ``either`` (a liveness failure or an injected
    postStart failure may end its run, and ``Never`` keeps it down then)."""
    mine = instances(before, pod, c.name, adopt=adopt)
    never = pod.restart_policy is RestartPolicy.NEVER
    if never and _network_died(pod, before, adopt=adopt):
        return "down"
    hook = c.lifecycle.post_start if c.lifecycle else None
    if never and post_start_may_fail and hook is not None:
        return "either"
    running = [o for o in mine if o.running]
    if running:
        probe = c.liveness_probe
        unhealthy = probe is not None and any(
            liveness.get(o.id, True) is False and now - o.created >= probe.initial_delay_seconds
            for o in running
        )
        return "either" if never and unhealthy else "run"
    if not mine:
        return "run"
    last = newest(mine)
    if not _a_run(last):
        return "run"
    return "run" if _restarts(pod.restart_policy, last) else "down"


def _network_died(pod: Pod, before: Sequence[ObservedContainer], *, adopt: bool) -> bool:
    """Whether ``pod``'s network container does not run after a container of the pod ran:
    one runs, or one was a run (it started, and it ended by itself or podsync stopped it
    for a failure). A network container podsync stopped for its own reasons (the newest
    that ran has a stop record that is no failure's: a rebuild whose new network
    container was not made yet) did not die: the pod is rebuilt (docs/differences.md
    17, 39)."""
    nets = instances(before, pod, NET, adopt=adopt)
    if any(o.running for o in nets):
        return False
    ran = [o for o in nets if o.finished_at is not None]
    if ran:
        last = max(ran, key=lambda o: (o.created, o.id))
        if last.stopped_by_podsync and last.stopped_by_podsync not in FAILURE_RECORDS:
            return False
    return any(
        o.running or _a_run(o)
        for c in (*pod.init_containers, *pod.containers)
        for o in instances(before, pod, c.name, adopt=adopt)
    )


def convergence_problems(
    desired: Sequence[Pod],
    before: Sequence[ObservedContainer],
    after: Sequence[ObservedContainer],
    final: Plan,
    *,
    options: PlanOptions,
    now: float,
    liveness: Mapping[str, bool] | None = None,
    first: Plan | None = None,
    post_start_may_fail: bool = False,
) -> list[str]:
    """What contradicts "converged" (see the module docstring), given the engine's
    containers ``before`` the sync and ``after`` it, and ``final``, the plan made on
    ``after`` (which has nothing left to do but wait). ``first`` is the sync's first
    plan (for "a pod rejected throughout was not touched")."""
    adopt = options.adopt_2014_containers
    liveness = liveness or {}
    problems: list[str] = []
    rejected = {r.pod for r in final.rejected}
    reasons = {r.pod: r.reason for r in final.rejected}
    waits = {(a.pod, a.container): a for a in final.actions if isinstance(a, Wait)}
    after_by_id = {o.id: o for o in after}

    # Admission, checked as far as it follows from one pod alone.
    for pod in desired:
        privileged = any(c.privileged for c in pod.containers)
        ports = any(p.host_port for c in pod.containers for p in c.ports)
        if privileged and not options.allow_privileged and pod.key not in rejected:
            problems.append(f"{pod.key}: privileged, not allowed, yet admitted")
        # Requests fit or not depending on the other pods; a pod that requests nothing
        # always fits.
        for_requests = reasons.get(pod.key) in (Reason.OUT_OF_CPU, Reason.OUT_OF_MEMORY)
        if for_requests and pod_requests(pod) != (0, 0):
            continue
        if not ports and (options.allow_privileged or not privileged) and pod.key in rejected:
            problems.append(f"{pod.key}: rejected, though nothing stands in its way")

    for pod in desired:
        if pod.key in rejected:
            if first is not None and pod.key in {r.pod for r in first.rejected}:
                for o in before:
                    w = owner(o, adopt=adopt)
                    mine = w and (w.pod_uid, w.pod_full_name) == (pod.uid, pod.full_name)
                    if mine and after_by_id.get(o.id) != o:
                        problems.append(f"{pod.key}: rejected, yet {o.name} was touched")
            continue
        problems += _pod_problems(
            pod, before, after, waits, adopt, now, liveness, post_start_may_fail, options
        )

    # Pods that are not desired, and containers that left a pod's spec.
    wanted = {(p.uid, p.full_name): p for p in desired}
    for o in after:
        w = owner(o, adopt=adopt)
        if w is None or not o.running:
            continue
        pod = wanted.get((w.pod_uid, w.pod_full_name))
        if pod is None and options.allow_deletions:
            problems.append(f"{o.name} runs, and its pod is not desired")
        names = (
            {c.name for c in (*pod.init_containers, *pod.containers)} if pod is not None else set()
        )
        if pod is not None and pod.key not in rejected and w.container not in {NET, *names}:
            problems.append(f"{o.name} runs, and it is not in the spec of {pod.key}")
    if not options.allow_deletions:
        for o in before:
            w = owner(o, adopt=adopt)
            if w and o.running and (w.pod_uid, w.pod_full_name) not in wanted:
                now_o = after_by_id.get(o.id)
                if now_o is None or not now_o.running:
                    problems.append(f"{o.name} was stopped, though deletions are not allowed")

    # Foreign containers: exactly as they were.
    for o in before:
        if owner(o, adopt=adopt) is None and after_by_id.get(o.id) != o:
            problems.append(f"foreign {o.name} was touched")
    return problems


def _pod_problems(
    pod: Pod,
    before: Sequence[ObservedContainer],
    after: Sequence[ObservedContainer],
    waits: Mapping[tuple[str, str], Wait],
    adopt: bool,
    now: float,
    liveness: Mapping[str, bool],
    post_start_may_fail: bool,
    options: PlanOptions,
) -> list[str]:
    problems: list[str] = []
    policy = pod.restart_policy
    apps_run = False
    apps_wait = False
    for c in pod.containers:
        label = f"{pod.key}/{c.name}"
        mine = instances(after, pod, c.name, adopt=adopt)
        running = [o for o in mine if o.running]
        wait = waits.get((pod.key, c.name))
        apps_run |= bool(running)
        apps_wait |= wait is not None
        verdict = expected(
            pod,
            c,
            before,
            adopt=adopt,
            now=now,
            liveness=liveness,
            post_start_may_fail=post_start_may_fail,
            root_dir=options.root_dir,
        )
        if len(running) > 1:
            problems.append(f"{label}: {len(running)} instances run")
        for o in running:
            if not _app_matches(o, c, pod, options.root_dir):
                problems.append(f"{label}: {o.name} runs without the desired spec")
        if running:
            if wait is not None:
                problems.append(f"{label}: runs, yet the plan waits ({wait.message})")
            if verdict == "down":
                problems.append(f"{label}: completed under {policy.value}, yet runs again")
            continue
        if wait is not None and wait.reason is Reason.IMAGE_NEVER_PULL:
            if c.image_pull_policy is not PullPolicy.NEVER:
                problems.append(f"{label}: waits for an image it may pull")
            continue
        if wait is not None and wait.reason is Reason.INIT_PENDING:
            # Held by an init container that has not finished (or a sidecar that has
            # not started): only while the pod has some.
            if not pod.init_containers:
                problems.append(f"{label}: waits for init containers the pod does not have")
            continue
        if not mine:
            if verdict != "down":  # a failed Never pod creates nothing
                problems.append(f"{label}: no instance ({wait.message if wait else 'no wait'})")
            continue
        last = newest(mine)
        if wait is not None:
            # A back-off: after a failed run the policy restarts, or after a start that
            # never happened; a changed spec or podsync's own stop starts at once.
            if wait.reason is not Reason.BACK_OFF:
                problems.append(f"{label}: waits for {wait.reason.value}")
            elif _started(last) and not (_a_run(last) and _restarts(policy, last)):
                problems.append(f"{label}: backs off, yet {last.name} is no run to restart")
            elif not _app_matches(last, c, pod, options.root_dir):
                problems.append(f"{label}: backs off, yet its spec changed")
            if verdict == "down":
                problems.append(f"{label}: completed under {policy.value}, yet waits to run")
            continue
        # Down, with nothing to wait for: it completed under its policy (or its Never
        # pod failed). Its last run keeps the spec it ran with.
        if verdict != "down" and not _started(last):
            problems.append(f"{label}: {last.name} never started, and nothing starts it")
        elif verdict != "down" and not _a_run(last):
            problems.append(
                f"{label}: {last.name} was stopped by podsync ({last.stopped_by_podsync}) "
                "and not replaced"
            )
        elif verdict != "down" and _restarts(policy, last):
            problems.append(f"{label}: {last.name} ended, and {policy.value} restarts it")
        if verdict == "run":
            problems.append(f"{label}: should run, yet is down")
        if verdict == "down":
            old = instances(before, pod, c.name, adopt=adopt)
            if {o.id for o in mine} - {o.id for o in old}:
                problems.append(f"{label}: completed, yet a new instance was created")
            elif not any(o.running for o in old) and newest(old).id != last.id:
                problems.append(f"{label}: its newest instance changed")

    nets = [o for o in instances(after, pod, NET, adopt=adopt) if o.running]
    if len(nets) > 1:
        problems.append(f"{pod.key}: {len(nets)} network containers run")
    if apps_run and not nets:
        problems.append(f"{pod.key}: app containers run without a network container")
    if nets and not apps_run and not apps_wait:
        problems.append(f"{pod.key}: nothing of the pod runs or waits, yet its network runs")
    # The options that shape the network container; the worlds give no host resolv.conf.
    image = options.network_image
    inputs: dict[str, Any] = {
        "network_mode": options.network_mode,
        "cluster_dns": options.cluster_dns,
        "cluster_domain": options.cluster_domain,
    }
    for o in nets:
        want = network_spec_hash(pod, image, **inputs)
        if not matches(o, want, network_spec(pod, image, **inputs), image):
            problems.append(f"{pod.key}: network container {o.name} has another spec")
    return problems
