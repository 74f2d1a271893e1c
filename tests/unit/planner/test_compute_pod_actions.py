"""The lifecycle of a pod's containers, case by case, in the manner of the kubelet's
``TestComputePodActions`` (``pkg/kubelet/kuberuntime/kuberuntime_manager_test.go``): each
row is a pod file, what the engine shows of it, and the actions (with their reasons) the
plan must hold. The rules are issue 27's:

* the restart policy is absolute: a container that must not run again (``Never``, or
  ``OnFailure`` after exit 0) never runs again for this pod - not after an edit of its
  spec, not after an edit of a ConfigMap its env reads (``ShouldContainerBeRestarted``;
  ``computePodActions`` replaces only a *running* container whose hash changed);
* ``computePodActions`` step B: a ``Never`` pod whose network container is gone after its
  containers ran is killed and nothing is recreated; otherwise the candidates for a new
  network container are the containers that may still run, and none means kill only. A
  network container podsync stopped itself (to rebuild the pod for an edit) is not
  gone: a rebuild whose new network container could not be created goes on;
* a container killed because its network container died failed, so it restarts through
  its crash-loop back-off - a network container that keeps dying is backed off with
  the containers it takes down - and a rebuild keeps the restart count (the back-off is
  keyed on the pod, the container and its spec, ``GetStableKey``);
* an init container that was OOM-killed failed, whatever its exit code
  (``isInitContainerFailed``);
* the pod phase (``getPhase``) agrees.

Each case starts from an engine on which podsync ran the pod (its init containers ran
to completion), then changes what the engine shows; the pod file may be edited too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs
import pytest

from podsync import Pod, PodPhase, parse_pods, pod_status
from podsync.actions._actions import Create, Plan, Pull, Wait
from podsync.actions._options import PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER, LABEL_RESTART_COUNT
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
STARTED = NOW - 300  # when podsync ran the pod (less than the 600 s that reset a back-off)
IMAGES = {"busybox:latest", "registry.k8s.io/pause:3.10"}

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: job-config}
data: {MODE: %s}
---
"""

JOB = """\
apiVersion: v1
kind: Pod
metadata: {name: job, uid: 7d1c6a0e-27aa-4c1e-9b3e-1f2a3b4c5d6e}
spec:
  restartPolicy: %s
  containers:
  - name: work
    image: busybox
    command: [sh, -c, "make report"]
    env:
    - name: MODE
      valueFrom: {configMapKeyRef: {name: job-config, key: MODE}}
"""

# Two containers: a step-B candidate list can be partly empty.
PAIR = """\
apiVersion: v1
kind: Pod
metadata: {name: pair, uid: 2b8e4f10-27aa-4c1e-9b3e-1f2a3b4c5d6e}
spec:
  restartPolicy: %s
  containers:
  - name: load
    image: busybox
    command: [sh, -c, "load data"]
  - name: serve
    image: busybox
    command: [httpd, -f]
"""

# Init containers: a plain one, then a sidecar declared after it.
INIT = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 5e9a7c20-27aa-4c1e-9b3e-1f2a3b4c5d6e}
spec:
  restartPolicy: %s
  initContainers:
  - name: setup
    image: busybox
    command: [sh, -c, "migrate"]
  - name: proxy
    image: busybox
    restartPolicy: Always
    args: [httpd, -f]
  containers:
  - name: app
    image: busybox
    command: [httpd, -f]
"""

# A third init container, after the sidecar.
INIT3 = INIT.replace(
    "  containers:\n",
    "  - name: warm\n    image: busybox\n    command: [warm-cache]\n  containers:\n",
)

# A second app container.
INIT2 = INIT.replace(
    "  containers:\n",
    "  containers:\n  - name: report\n    image: busybox\n    command: [report]\n",
)

# The edits of the pod file a case can make.
EDITS: Mapping[str, Callable[[str], str]] = {
    "": lambda text: text,
    "command": lambda text: text.replace("make report", "make report --full"),
    "configmap": lambda text: text.replace("MODE: full", "MODE: quick"),
    "init-command": lambda text: text.replace('"migrate"', '"migrate --all"'),
    # a host port for ``serve`` (PAIR) or ``app`` (INIT): the network container changes
    "ports": lambda text: text.replace(
        "    command: [httpd, -f]\n",
        "    command: [httpd, -f]\n    ports: [{containerPort: 80, hostPort: 8080}]\n",
    ),
    # probes are podsync's to run, not part of any hash: nothing is replaced for it
    "sidecar-startup-probe": lambda text: text.replace(
        "    args: [httpd, -f]\n",
        '    args: [httpd, -f]\n    startupProbe: {exec: {command: ["true"]}}\n',
    ),
}


def pod_file(template: str, policy: str, edit: str = "") -> Pod:
    """The pod of ``template`` under ``policy``, as ``podsync apply`` reads the file."""
    text = (CONFIG % "full") + (template % policy) if template is JOB else template % policy
    (pod,) = parse_pods(EDITS[edit](text), source_name="pods/job.yaml", source="file")
    return pod


def ran(pod: Pod) -> EngineModel:
    """An engine on which podsync ran ``pod`` at ``STARTED``: its init containers ran to
    completion (exit 0), a sidecar and the app containers run."""
    model = EngineModel(image_tags=set(IMAGES))
    for step in range(len(pod.init_containers) + 2):
        at = STARTED + step
        model.apply(
            plan(
                [pod], model.observed, images=model.images, volumes=model.observed_volumes, now=at
            ),
            at,
        )
        for c in pod.init_containers:
            if c.restart_policy is None:
                for o in instances(model, c.name):
                    if o.running:
                        model.exit(o.id, 0, at)
    return model


def instances(model: EngineModel, container: str) -> list[Any]:
    return [o for o in model.observed if o.labels.get(LABEL_CONTAINER) == container]


# --- what the engine shows -------------------------------------------------------------


@attrs.frozen
class Shown:
    """The newest instance of ``container`` as the engine shows it at ``NOW``: exited
    with ``code`` ``ago`` seconds ago (``running``: it still runs; ``gone``: removed;
    ``started=False``: created, never started), with podsync's stop ``record``, OOM-killed
    or not, and its restart count label."""

    container: str
    code: int = 0
    ago: float = 50.0
    running: bool = False
    gone: bool = False
    started: bool = True
    record: str = ""
    oom: bool = False
    restarts: int | None = None

    def apply(self, model: EngineModel) -> None:
        (o,) = [o for o in instances(model, self.container) if o.running] or instances(
            model, self.container
        )[-1:]
        if self.gone:
            del model.containers[o.id]
            return
        labels = dict(o.labels)
        if self.restarts is not None:
            labels[LABEL_RESTART_COUNT] = str(self.restarts)
        model.containers[o.id] = attrs.evolve(
            o,
            labels=labels,
            running=self.running,
            exit_code=self.code,
            finished_at=None if self.running or not self.started else NOW - self.ago,
            stopped_by_podsync=self.record,
            oom_killed=self.oom,
        )


def running(container: str, *, restarts: int | None = None) -> Shown:
    return Shown(container, running=True, restarts=restarts)


def exited(container: str, code: int = 0, **fields: Any) -> Shown:
    return Shown(container, code, **fields)


NET_DIED = exited("net", 137, ago=5)
# podsync stopped the network container to rebuild the pod (its ports were edited), and
# the new one's create failed: the pod was not rebuilt yet.
NET_STOPPED_FOR_EDIT = exited("net", 137, ago=5, record="network-changed")


@attrs.frozen
class Case:
    """One row: the pod (``template`` under ``policy``, the file maybe ``edit``-ed after
    it ran), what the engine shows, and the plan's actions as (kind, container, reason).
    ``restarts``: the restart count each listed create must carry."""

    id: str
    template: str
    policy: str
    shown: tuple[Shown, ...]
    expected: tuple[tuple[str, str, str], ...]
    edit: str = ""
    options: PlanOptions = attrs.Factory(PlanOptions)
    restarts: Mapping[str, int] = attrs.Factory(dict)
    phase: PodPhase | None = None


def world(case: Case) -> tuple[Pod, EngineModel]:
    model = ran(pod_file(case.template, case.policy))
    for shown in case.shown:
        shown.apply(model)
    return pod_file(case.template, case.policy, case.edit), model


def planned(case: Case) -> Plan:
    pod, model = world(case)
    return plan(
        [pod],
        model.observed,
        images=model.images,
        volumes=model.observed_volumes,
        now=NOW,
        options=case.options,
    )


def actions(p: Plan) -> list[tuple[str, str, str]]:
    """The pod's actions (pulls left out) as (kind, container, reason)."""
    return [(type(a).__name__, a.container, a.reason.value) for pod in p.pods for a in pod.actions]


KILL_NET = ("Kill", "net", "pod-completed")

# --- 1. the restart policy is absolute ----------------------------------------------

ABSOLUTE = [
    Case("never-exit-0-stays-down", JOB, "Never", (exited("work", 0),), (KILL_NET,)),
    Case("never-exit-1-stays-down", JOB, "Never", (exited("work", 1),), (KILL_NET,)),
    Case(
        "never-exit-0-command-edited-stays-down",
        JOB,
        "Never",
        (exited("work", 0),),
        (KILL_NET,),
        edit="command",
    ),
    Case(
        "never-exit-1-command-edited-stays-down",
        JOB,
        "Never",
        (exited("work", 1),),
        (KILL_NET,),
        edit="command",
    ),
    Case(
        "never-exit-0-configmap-edited-stays-down",
        JOB,
        "Never",
        (exited("work", 0),),
        (KILL_NET,),
        edit="configmap",
    ),
    Case(
        "never-killed-for-liveness-command-edited-stays-down",
        JOB,
        "Never",
        (exited("work", 0, record="unhealthy"),),
        (KILL_NET,),
        edit="command",
    ),
    Case(
        "on-failure-exit-0-command-edited-stays-down",
        JOB,
        "OnFailure",
        (exited("work", 0),),
        (KILL_NET,),
        edit="command",
    ),
    Case(
        "on-failure-exit-0-configmap-edited-stays-down",
        JOB,
        "OnFailure",
        (exited("work", 0),),
        (KILL_NET,),
        edit="configmap",
    ),
    Case(
        "on-failure-exit-1-command-edited-runs-at-once",
        JOB,
        "OnFailure",
        (exited("work", 1, ago=1, restarts=4),),
        (("Create", "work", "spec-changed"),),
        edit="command",
        restarts={"work": 0},
    ),
    Case(
        "on-failure-exit-1-backs-off",
        JOB,
        "OnFailure",
        (exited("work", 1, ago=1, restarts=4),),
        (("Wait", "work", "back-off"),),
    ),
    Case(
        "always-exit-0-configmap-edited-runs-at-once",
        JOB,
        "Always",
        (exited("work", 0, ago=1, restarts=2),),
        (("Create", "work", "spec-changed"),),
        edit="configmap",
        restarts={"work": 0},
    ),
    Case(
        "never-running-command-edited-is-replaced",
        JOB,
        "Never",
        (running("work"),),
        (("Kill", "work", "spec-changed"), ("Create", "work", "spec-changed")),
        edit="command",
    ),
    Case(
        "never-running-configmap-edited-is-replaced",
        JOB,
        "Never",
        (running("work"),),
        (("Kill", "work", "spec-changed"), ("Create", "work", "spec-changed")),
        edit="configmap",
    ),
    Case(
        "never-stopped-by-podsync-to-replace-it-runs",
        JOB,
        "Never",
        (exited("work", 0, record="spec-changed", restarts=1),),
        (("Create", "work", "not-replaced"),),
        restarts={"work": 1},
    ),
    Case(
        "never-stopped-by-podsync-then-edited-runs",
        JOB,
        "Never",
        (exited("work", 0, record="pod-rebuild"),),
        (("Create", "work", "spec-changed"),),
        edit="command",
    ),
    Case(
        "never-created-never-started-then-edited-runs",
        JOB,
        "Never",
        (exited("work", 0, started=False),),
        (("Create", "work", "spec-changed"),),
        edit="configmap",
    ),
]


@pytest.mark.parametrize("case", ABSOLUTE, ids=[c.id for c in ABSOLUTE])
def test_the_restart_policy_is_absolute(case: Case) -> None:
    """A run that its policy does not restart is never run again for the pod, whatever
    is edited; a running container whose spec changed is replaced whatever the policy;
    what podsync stopped for its own reasons, or what never started, is no run."""
    p = planned(case)

    assert list(case.expected) == actions(p)
    assert dict(case.restarts) == _restart_counts(p, case.restarts)


def _restart_counts(p: Plan, wanted: Mapping[str, int]) -> dict[str, int]:
    return {
        a.container: int(a.spec.labels[LABEL_RESTART_COUNT])
        for a in p.actions
        if isinstance(a, Create) and a.container in wanted
    }


# --- 2. the network container dies (computePodActions, step B) --------------------------

REBUILD_ALL = (
    ("Create", "net", "network-missing"),
    ("Create", "work", "network-lost"),
)

NETWORK = [
    Case(
        "never-network-died-under-running-container-kill-only",
        JOB,
        "Never",
        (NET_DIED, running("work")),
        (("Kill", "work", "network-lost"),),
        phase=PodPhase.RUNNING,
    ),
    Case(
        "never-network-removed-under-running-container-kill-only",
        JOB,
        "Never",
        (Shown("net", gone=True), running("work")),
        (("Kill", "work", "network-lost"),),
    ),
    Case(
        "never-killed-for-lost-network-stays-down",
        JOB,
        "Never",
        (NET_DIED, exited("work", 0, ago=4, record="network-lost")),
        (),
        phase=PodPhase.FAILED,
    ),
    Case(
        "never-killed-for-lost-network-stays-down-after-an-edit",
        JOB,
        "Never",
        (NET_DIED, exited("work", 0, ago=4, record="network-lost")),
        (),
        edit="configmap",
        phase=PodPhase.FAILED,
    ),
    Case(
        "never-everything-exited-at-once-stays-down",
        JOB,
        "Never",
        (NET_DIED, exited("work", 143, ago=5)),
        (),
        phase=PodPhase.FAILED,
    ),
    Case(
        "never-one-container-killed-other-never-created-kill-only",
        PAIR,
        "Never",
        (NET_DIED, running("serve"), Shown("load", started=False)),
        (("Kill", "serve", "network-lost"),),
    ),
    Case(
        "never-network-gone-after-a-run-new-container-not-created",
        PAIR,
        "Never",
        (NET_DIED, exited("load", 0, ago=60), Shown("serve", gone=True)),
        (),
    ),
    Case(
        "never-rebuild-whose-network-create-failed-runs-again",
        JOB,
        "Never",
        (NET_DIED, exited("work", 0, ago=5, record="pod-rebuild")),
        (("Create", "net", "network-missing"), ("Create", "work", "not-replaced")),
    ),
    Case(
        "never-ports-edited-network-create-failed-rebuilds",
        PAIR,
        "Never",
        (
            NET_STOPPED_FOR_EDIT,
            exited("load", 0, ago=60),
            exited("serve", 137, ago=6, record="pod-rebuild", restarts=2),
        ),
        (("Create", "net", "network-changed"), ("Create", "serve", "spec-changed")),
        edit="ports",
        phase=PodPhase.PENDING,
    ),
    Case(
        "never-network-stopped-for-an-edit-rebuilds-unedited-too",
        PAIR,
        "Never",
        (
            NET_STOPPED_FOR_EDIT,
            exited("load", 1, ago=60),
            exited("serve", 137, ago=6, record="pod-rebuild"),
        ),
        (("Create", "net", "network-changed"), ("Create", "serve", "not-replaced")),
        phase=PodPhase.PENDING,
    ),
    Case(
        "never-network-stopped-for-an-edit-nothing-left-to-run",
        PAIR,
        "Never",
        (NET_STOPPED_FOR_EDIT, exited("load", 0, ago=60), exited("serve", 1, ago=60)),
        (),
        phase=PodPhase.FAILED,
    ),
    Case(
        "never-completed-pod-network-stopped-by-podsync-stays-down",
        JOB,
        "Never",
        (exited("net", 137, ago=5, record="pod-completed"), exited("work", 0, ago=6)),
        (),
        edit="command",
        phase=PodPhase.SUCCEEDED,
    ),
    Case(
        "never-network-died-without-a-record-is-lost",
        PAIR,
        "Never",
        (NET_DIED, exited("load", 0, ago=60), running("serve")),
        (("Kill", "serve", "network-lost"),),
    ),
    Case(
        # podsync stops no network container for a failure; a record that says so
        # anyway is read as what it says: the network is lost, as one that died.
        "never-network-with-a-failure-record-is-lost",
        PAIR,
        "Never",
        (
            exited("net", 137, ago=5, record="post-start-failed"),
            exited("load", 0, ago=60),
            running("serve"),
        ),
        (("Kill", "serve", "network-lost"),),
    ),
    Case(
        "on-failure-network-died-under-running-container-rebuilds",
        JOB,
        "OnFailure",
        (NET_DIED, running("work")),
        (("Kill", "work", "network-lost"), *REBUILD_ALL),
        restarts={"work": 1},
    ),
    Case(
        # A container that crashed before backs off when the lost network kills it
        # (its restart count carries its crash-loop back-off)...
        "always-network-died-under-a-crash-looping-container-backs-off",
        JOB,
        "Always",
        (NET_DIED, running("work", restarts=3)),
        (("Kill", "work", "network-lost"), ("Wait", "work", "back-off")),
    ),
    Case(
        # ...but its new spec starts over (GetStableKey has the spec hash): it starts
        # with the new network container, as the plan after the kill would start it.
        "always-network-died-under-an-edited-container-starts-the-new-spec",
        JOB,
        "Always",
        (NET_DIED, running("work", restarts=3)),
        (
            ("Kill", "work", "network-lost"),
            ("Create", "net", "network-missing"),
            ("Create", "work", "spec-changed"),
        ),
        edit="command",
        restarts={"work": 0},
    ),
    Case(
        "on-failure-network-died-after-success-kill-only",
        JOB,
        "OnFailure",
        (NET_DIED, exited("work", 0, ago=6)),
        (),
        phase=PodPhase.SUCCEEDED,
    ),
    Case(
        "on-failure-network-died-candidates-without-the-succeeded",
        PAIR,
        "OnFailure",
        (NET_DIED, exited("load", 0, ago=60), running("serve")),
        (
            ("Kill", "serve", "network-lost"),
            ("Create", "net", "network-missing"),
            ("Create", "serve", "network-lost"),
        ),
    ),
    Case(
        "always-network-died-under-running-container-rebuilds",
        JOB,
        "Always",
        (NET_DIED, running("work")),
        (("Kill", "work", "network-lost"), *REBUILD_ALL),
        restarts={"work": 1},
    ),
    Case(
        "always-network-keeps-dying-backs-off",
        JOB,
        "Always",
        (NET_DIED, running("work", restarts=3)),
        (("Kill", "work", "network-lost"), ("Wait", "work", "back-off")),
    ),
    Case(
        "always-network-died-waits-out-the-back-off",
        JOB,
        "Always",
        (NET_DIED, exited("work", 0, ago=5, record="network-lost", restarts=3)),
        (("Wait", "work", "back-off"),),
    ),
    Case(
        "always-network-died-after-the-back-off-rebuilds",
        JOB,
        "Always",
        (NET_DIED, exited("work", 0, ago=41, record="network-lost", restarts=3)),
        REBUILD_ALL,
        restarts={"work": 4},
    ),
    Case(
        "always-network-edited-keeps-the-restart-count",
        JOB,
        "Always",
        (running("work", restarts=3),),
        (
            ("Kill", "work", "pod-rebuild"),
            ("Kill", "net", "network-changed"),
            ("Create", "net", "network-changed"),
            ("Create", "work", "pod-rebuild"),
        ),
        options=PlanOptions(network_image="registry.k8s.io/pause:3.10-1"),
        restarts={"work": 3},
    ),
    Case(
        "always-network-and-container-edited-starts-over",
        JOB,
        "Always",
        (running("work", restarts=3),),
        (
            ("Kill", "work", "pod-rebuild"),
            ("Kill", "net", "network-changed"),
            ("Create", "net", "network-changed"),
            ("Create", "work", "pod-rebuild"),
        ),
        edit="command",
        options=PlanOptions(network_image="registry.k8s.io/pause:3.10-1"),
        restarts={"work": 0},
    ),
]


@pytest.mark.parametrize("case", NETWORK, ids=[c.id for c in NETWORK])
def test_a_dead_network_container(case: Case) -> None:
    """computePodActions, step B: a Never pod whose network container is gone after its
    containers ran is killed and not rebuilt; otherwise the containers that may still run
    are the candidates, each through its crash-loop back-off. A network container that
    podsync stopped (its stop record) did not die: the rebuild goes on."""
    p = planned(case)

    assert list(case.expected) == actions(p)
    assert dict(case.restarts) == _restart_counts(p, case.restarts)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            "network-changed",
            (("Create", "net", "network-changed"), ("Create", "serve", "not-replaced")),
        ),
        ("", ()),
    ],
    ids=["stopped-by-podsync-rebuilds", "died-stays-down"],
)
def test_a_network_container_that_never_started_is_not_the_pods_network(
    record: str, expected: tuple[tuple[str, str, str], ...]
) -> None:
    """Never pod, rebuilt for an edit: the new network container was created but its
    start failed (Docker leaves it created). The network the pod had is the one that
    ran before it: stopped by podsync, the rebuild goes on; died, the pod has failed."""
    case = Case(
        "x",
        PAIR,
        "Never",
        (
            exited("net", 137, ago=5, record=record),
            exited("load", 0, ago=60),
            exited("serve", 137, ago=6, record="pod-rebuild"),
        ),
        (),
    )
    pod, model = world(case)
    (old,) = instances(model, "net")
    model.add(
        attrs.evolve(
            old,
            id="never-started-net",
            name=old.name.replace("_00000000", "_00000001"),
            created=NOW - 4,
            running=False,
            finished_at=None,
            stopped_by_podsync="",
        )
    )

    p = plan([pod], model.observed, images=model.images, now=NOW)

    assert list(expected) == [
        (kind, c, reason) for kind, c, reason in actions(p) if kind != "Remove"
    ]


def test_a_network_container_that_keeps_dying_is_backed_off() -> None:
    """Each death of the network container under a running pod waits longer before the
    pod is rebuilt: 0, 10, 20, 40 s ... up to 300 s (the crash-loop back-off of the
    containers it takes down), and a pod that then ran for 600 s starts over."""
    pod = pod_file(JOB, "Always")
    model = ran(pod)
    now, waits = NOW, []
    for _ in range(7):
        (net,) = [o for o in instances(model, "net") if o.running]
        model.exit(net.id, 137, now)
        while True:
            p = plan(
                [pod], model.observed, images=model.images, volumes=model.observed_volumes, now=now
            )
            model.apply(p, now)
            wait = next((a for a in p.actions if isinstance(a, Wait)), None)
            if wait is None:
                break
            waits.append(round(wait.seconds))
            now += wait.seconds
        now += 5  # runs for 5 s, then its network container dies again

    assert [10, 20, 40, 80, 160, 300] == waits
    (net,) = [o for o in instances(model, "net") if o.running]
    model.exit(net.id, 137, now + 600)
    p = plan(
        [pod], model.observed, images=model.images, volumes=model.observed_volumes, now=now + 600
    )
    assert REBUILD_ALL == tuple(actions(p))[1:]


# --- 3. init containers ------------------------------------------------------------------

# The init container ``setup`` has run, nothing after it yet.
NOT_INITIALISED = (Shown("app", gone=True), Shown("proxy", gone=True))

# A new network container, and initialisation from the first init container.
REINITIALISED = (
    ("Remove", "setup", "init-purged"),
    ("Create", "net", "network-missing"),
    ("Create", "setup", "pod-rebuild"),
    ("Wait", "proxy", "init-pending"),
    ("Wait", "app", "init-pending"),
)

INIT_CASES = [
    Case(
        "on-failure-init-oom-killed-exit-0-failed",
        INIT,
        "OnFailure",
        (*NOT_INITIALISED, exited("setup", 0, ago=1, oom=True)),
        (
            ("Create", "setup", "exited"),
            ("Wait", "proxy", "init-pending"),
            ("Wait", "app", "init-pending"),
        ),
    ),
    Case(
        "always-init-oom-killed-exit-0-failed",
        INIT,
        "Always",
        (*NOT_INITIALISED, exited("setup", 0, ago=1, oom=True)),
        (
            ("Create", "setup", "exited"),
            ("Wait", "proxy", "init-pending"),
            ("Wait", "app", "init-pending"),
        ),
    ),
    Case(
        "never-init-oom-killed-exit-0-fails-the-pod",
        INIT,
        "Never",
        (*NOT_INITIALISED, exited("setup", 0, ago=1, oom=True)),
        (("Kill", "net", "pod-completed"),),
        phase=PodPhase.FAILED,
    ),
    Case(
        "never-init-failed-then-edited-stays-failed",
        INIT,
        "Never",
        (*NOT_INITIALISED, exited("setup", 1, ago=1)),
        (("Kill", "net", "network-changed"),),
        edit="init-command",
        phase=PodPhase.FAILED,
    ),
    Case(
        "initialised-sidecar-after-plain-init-is-restarted",
        INIT,
        "Never",
        (exited("proxy", 0, ago=1),),
        (("Create", "proxy", "exited"),),
    ),
    Case(
        "initialised-by-an-app-container-that-never-started",
        INIT,
        "Always",
        (exited("app", 0, started=False),),
        (("Create", "app", "not-started"),),
        edit="sidecar-startup-probe",
    ),
    Case(
        "initialised-plain-init-oom-killed-never-runs-again",
        INIT,
        "OnFailure",
        (exited("setup", 0, ago=250, oom=True),),
        (),
        phase=PodPhase.RUNNING,
    ),
    Case(
        "running-init-container-holds-every-one-after-it",
        INIT3,
        "Always",
        (*NOT_INITIALISED, Shown("warm", gone=True), running("setup")),
        (
            ("Wait", "proxy", "init-pending"),
            ("Wait", "warm", "init-pending"),
            ("Wait", "app", "init-pending"),
        ),
    ),
    Case(
        "restarting-sidecar-holds-only-what-would-start",
        INIT2,
        "OnFailure",
        (exited("report", 0, ago=100), exited("app", 1, ago=100), exited("proxy", 0, ago=1)),
        (("Create", "proxy", "exited"), ("Wait", "app", "init-pending")),
    ),
    Case(
        "on-failure-network-died-a-succeeded-container-does-not-wait",
        INIT2,
        "OnFailure",
        (NET_DIED, exited("report", 0, ago=100), running("app")),
        (
            ("Kill", "app", "network-lost"),
            ("Kill", "proxy", "network-lost"),
            ("Remove", "setup", "init-purged"),
            ("Remove", "proxy", "init-purged"),
            ("Create", "net", "network-missing"),
            ("Create", "setup", "pod-rebuild"),
            ("Wait", "proxy", "init-pending"),
            ("Wait", "app", "init-pending"),
        ),
    ),
    Case(
        "network-edited-rebuilds-and-initialises-again",
        INIT,
        "Always",
        (),
        (
            ("Kill", "app", "pod-rebuild"),
            ("Kill", "proxy", "pod-rebuild"),
            ("Kill", "net", "network-changed"),
            ("Remove", "setup", "init-purged"),
            ("Remove", "proxy", "init-purged"),
            ("Create", "net", "network-changed"),
            ("Create", "setup", "pod-rebuild"),
            ("Wait", "proxy", "init-pending"),
            ("Wait", "app", "init-pending"),
        ),
        options=PlanOptions(network_image="registry.k8s.io/pause:3.10-1"),
        restarts={"setup": 0},
    ),
    Case(
        "never-network-gone-init-never-started-initialises-again",
        INIT,
        "Never",
        (NET_DIED, *NOT_INITIALISED, exited("setup", 0, started=False)),
        REINITIALISED,
    ),
    Case(
        "never-network-gone-init-stopped-by-podsync-initialises-again",
        INIT,
        "Never",
        (NET_DIED, *NOT_INITIALISED, exited("setup", 137, ago=6, record="pod-rebuild")),
        REINITIALISED,
    ),
    Case(
        "never-network-died-init-not-run-again",
        INIT,
        "Never",
        (NET_DIED, running("app")),
        (("Kill", "app", "network-lost"), ("Kill", "proxy", "network-lost")),
    ),
    Case(
        "on-failure-network-died-initialises-again",
        INIT,
        "OnFailure",
        (NET_DIED, running("app")),
        (
            ("Kill", "app", "network-lost"),
            ("Kill", "proxy", "network-lost"),
            ("Remove", "setup", "init-purged"),
            ("Remove", "proxy", "init-purged"),
            ("Create", "net", "network-missing"),
            ("Create", "setup", "pod-rebuild"),
            ("Wait", "proxy", "init-pending"),
            ("Wait", "app", "init-pending"),
        ),
    ),
]


@pytest.mark.parametrize("case", INIT_CASES, ids=[c.id for c in INIT_CASES])
def test_init_containers(case: Case) -> None:
    """isInitContainerFailed (an OOM kill fails whatever the code), a failed Never pod
    that an edit does not revive, sidecars managed after initialisation, and a new
    network container that initialises the pod again - unless it is a Never pod's."""
    p = planned(case)

    assert list(case.expected) == actions(p)
    assert dict(case.restarts) == _restart_counts(p, case.restarts)


def test_what_an_edited_network_container_says() -> None:
    """A rebuild for an edit stops the running init containers for it, not as failures."""
    case = Case(
        "x", INIT, "Always", (), (), options=PlanOptions(network_image="registry.k8s.io/pause:9")
    )
    p = planned(case)

    (kill,) = [
        a
        for pod in p.pods
        for a in pod.actions
        if (type(a).__name__, a.container) == ("Kill", "proxy")
    ]
    assert "pod-rebuild" == kill.reason.value
    assert kill.message.endswith(
        "): pod rebuilt: network spec changed (image registry.k8s.io/pause:3.10 -> "
        "registry.k8s.io/pause:9) (once app stopped)"  # a sidecar stops after the apps
    ), kill.message


# --- 4. the phase agrees ----------------------------------------------------------------

PHASED = [c for c in (*ABSOLUTE, *NETWORK, *INIT_CASES) if c.phase is not None]


@pytest.mark.parametrize("case", PHASED, ids=[c.id for c in PHASED])
def test_the_phase_agrees(case: Case) -> None:
    """getPhase on what the engine shows (kubelet-modern.md §5): a Never pod whose
    network container died under it ends Failed once its containers were stopped."""
    pod, model = world(case)
    p = plan(
        [pod],
        model.observed,
        images=model.images,
        volumes=model.observed_volumes,
        now=NOW,
        options=case.options,
    )

    status = pod_status(pod, model.observed, plan=p)

    assert case.phase == status.phase


@pytest.mark.parametrize(
    ("policy", "phase", "state"),
    [
        ("Never", PodPhase.FAILED, "failed"),
        ("OnFailure", PodPhase.RUNNING, "running"),
        ("Always", PodPhase.RUNNING, "running"),
    ],
    ids=["never", "on-failure", "always"],
)
def test_phase_after_the_network_container_died(policy, phase, state) -> None:
    """The plan applied: a Never pod is Failed for good (and says why); the others are
    rebuilt."""
    case = Case("x", JOB, policy, (NET_DIED, running("work")), ())
    pod, model = world(case)
    model.apply(
        plan([pod], model.observed, images=model.images, volumes=model.observed_volumes, now=NOW),
        NOW,
    )
    stopped = model.observed

    status = pod_status(pod, stopped, plan=plan([pod], stopped, images=model.images, now=NOW))

    assert (phase, state) == (status.phase, status.state)
    if policy == "Never":
        assert (
            "failed: work stopped by podsync: its pod's network container died "
            "(restart policy Never)" == status.message
        )


@pytest.mark.parametrize(
    ("handler", "port"),
    [
        ("httpGet: {path: /drain, port: admin}", 9901),
        ("tcpSocket: {port: admin}", 9901),
        ("httpGet: {path: /drain, port: 9902}", 9902),
        ("tcpSocket: {port: 9903}", 9903),
    ],
    ids=["http-named", "tcp-named", "http-number", "tcp-number"],
)
def test_a_sidecar_stops_with_its_pre_stop_hook_on_its_named_port(handler, port) -> None:
    """A sidecar stopped because the app containers completed runs its preStop hook,
    whose named port is resolved through the sidecar's own ports."""
    text = INIT.replace(
        "    args: [httpd, -f]\n",
        "    args: [httpd, -f]\n"
        "    ports: [{containerPort: 8080}, {name: admin, containerPort: 9901}]\n"
        f"    lifecycle: {{preStop: {{{handler}}}}}\n",
    )
    case = Case("x", text, "OnFailure", (exited("app", 0, ago=1),), ())
    p = planned(case)

    (kill,) = [a for a in p.actions if a.container == "proxy"]
    action = kill.pre_stop.http_get or kill.pre_stop.tcp_socket
    assert ("pod-completed", port) == (kill.reason.value, action.port)
    assert kill.message.endswith("): no app container runs or will run"), kill.message


def test_what_a_new_network_container_says() -> None:
    """The plan of a pod whose network container died under it, word for word: what is
    stopped and why, the init runs removed, what waits for what."""
    case = Case("x", INIT, "OnFailure", (NET_DIED, running("app")), ())
    pod, model = world(case)
    names = {o.labels[LABEL_CONTAINER]: o.name for o in model.observed if o.running}
    p = plan([pod], model.observed, images=model.images, volumes=model.observed_volumes, now=NOW)

    assert [
        f"stop default/web/app ({names['app']}): network lost: network container exited",
        f"stop default/web/proxy ({names['proxy']}): network lost: network container exited"
        " (once app stopped)",  # a sidecar stops after the app containers
        "remove default/web/setup ("
        + instances(model, "setup")[0].name
        + "): an init container's run before the pod was rebuilt; init runs again",
        "remove default/web/proxy ("
        + names["proxy"]
        + "): an init container's run before the pod was rebuilt; init runs again",
        "create default/web/net: network container exited",
        "recreate default/web/setup: pod rebuilt: network container exited",
        "wait default/web/proxy: init container setup not finished",
        "wait default/web/app: init container setup not finished",
    ] == [a.message for a in p.actions if not isinstance(a, Pull)]  # busybox: Always
    assert {(pod.key, pod.uid, 0.0)} == {
        (a.pod, a.pod_uid, a.seconds) for a in p.actions if isinstance(a, Wait)
    }
    assert {(pod.key, pod.uid)} == {
        (a.pod, a.pod_uid) for a in p.actions if not isinstance(a, Pull)
    }
