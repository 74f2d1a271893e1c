"""How a whole pod stops, in the plan (kubelet-modern.md §3 rule 8 and §11).

The kubelet's KillPod (killPodWithSyncResult, kuberuntime_manager.go) kills every
running container at once (killContainersWithSyncResult), sidecars in their turn
(newTerminationOrdering, kuberuntime_termination_order.go: after the app containers and
the next sidecar), each within the pod's grace period (terminationGracePeriodSeconds,
30 s by default), and stops the sandbox last. A kill of one container for its own reason
(SyncPod's ContainersToKill) is not concurrent.

One table, in the manner of the kubelet's TestComputePodActions: a pod file, what
happened on the engine since it ran, and the kills the plan makes - container,
concurrent, what it waits for, its grace - in plan order.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from podsync import Pod, parse_pods
from podsync.actions._actions import Kill, Plan
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.planner._plan import plan
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0

THREE = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 0e4c3d52-2222-4a5e-8e7a-5d6c2f1e9b00}
spec:
  %s
  containers:
  - {name: app, image: busybox}
  - {name: cache, image: busybox}
  - {name: worker, image: busybox}
"""

SIDECARS = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 0e4c3d52-3333-4a5e-8e7a-5d6c2f1e9b00}
spec:
  %s
  initContainers:
  - {name: logs, image: busybox, restartPolicy: Always}
  - {name: setup, image: busybox}
  - {name: proxy, image: busybox, restartPolicy: Always}
  containers:
  - {name: app, image: busybox}
  - {name: worker, image: busybox}
"""


def pod_file(text: str, spec: str = "restartPolicy: Always") -> Pod:
    (pod,) = parse_pods(text % spec, source_name="pods/web.yaml", source="file")
    return pod


#: A pod that is gone stops as the node scope removes it.
NODE = PlanOptions(scope=NODE_SCOPE)


def running(pod: Pod) -> EngineModel:
    """An engine on which podsync started ``pod``, its plain init containers done."""
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})
    for t in range(6):
        model.apply(plan([pod], model.observed, images=model.images, now=NOW + t), NOW + t)
        for c in list(model.observed):
            if c.running and "_setup." in c.name:
                model.exit(c.id, 0, NOW + t)
    assert not plan([pod], model.observed, images=model.images, now=NOW + 9).has_changes
    return model


def _exit(model: EngineModel, *names: str) -> None:
    for c in list(model.observed):
        if c.running and any(f"_{name}." in c.name for name in names):
            model.exit(c.id, 0, NOW + 10)


def _lose_network(model: EngineModel) -> None:
    _exit(model, "net")


# What happens before the plan: the pod file, the engine, the desired pods.
Scenario = Callable[[Pod, EngineModel], list[Pod]]


def gone(pod: Pod, model: EngineModel) -> list[Pod]:
    """The pod file was removed: its labels alone say the roles."""
    return []


def network_lost(pod: Pod, model: EngineModel) -> list[Pod]:
    """The network container died: a new sandbox, the pod is rebuilt."""
    _lose_network(model)
    return [pod]


def apps_done(pod: Pod, model: EngineModel) -> list[Pod]:
    """Every app container exited 0 under OnFailure: the pod has completed."""
    _exit(model, "app", "worker", "cache")
    return [pod]


def proxy_exited_and_apps_done(pod: Pod, model: EngineModel) -> list[Pod]:
    """The last sidecar is down too: the one before it waits for nobody but apps."""
    _exit(model, "app", "worker", "proxy")
    return [pod]


def app_changed(pod: Pod, model: EngineModel) -> list[Pod]:
    """One container's image changed: SyncPod replaces it alone."""
    app = attrs.evolve(pod.containers[0], image="busybox:1.36")
    return [attrs.evolve(pod, containers=(app, *pod.containers[1:]))]


def renamed(pod: Pod, model: EngineModel) -> list[Pod]:
    """``worker`` left the spec while the network died: a stray in the pod-wide stop."""
    _lose_network(model)
    return [attrs.evolve(pod, containers=pod.containers[:1])]


_ALL = ("app", "worker")
CASES = [
    # id, pod file, its spec line, scenario, kills: (container, concurrent, after, grace)
    (
        "three app containers stop at once within the default grace",
        THREE,
        "restartPolicy: Always",
        gone,
        [
            # A pod that is gone is read from the engine, newest container first.
            ("worker", True, (), 30),
            ("cache", True, (), 30),
            ("app", True, (), 30),
            ("net", False, (), 30),
        ],
    ),
    (
        "the pod's terminationGracePeriodSeconds is the budget of every kill",
        THREE,
        "terminationGracePeriodSeconds: 3",
        gone,
        [
            ("worker", True, (), 3),
            ("cache", True, (), 3),
            ("app", True, (), 3),
            ("net", False, (), 3),
        ],
    ),
    (
        "a pod that is gone: sidecars after the apps, in reverse spec order",
        SIDECARS,
        "restartPolicy: Always",
        gone,
        [
            ("worker", True, (), 30),
            ("app", True, (), 30),
            ("proxy", True, _ALL, 30),
            ("logs", True, (*_ALL, "proxy"), 30),
            ("net", False, (), 30),
        ],
    ),
    (
        "a lost network container rebuilds the pod with the same turns",
        SIDECARS,
        "terminationGracePeriodSeconds: 12",
        network_lost,
        [
            ("app", True, (), 12),
            ("worker", True, (), 12),
            ("proxy", True, _ALL, 12),
            ("logs", True, (*_ALL, "proxy"), 12),
        ],
    ),
    (
        "a completed pod stops its sidecars last first, then the network container",
        SIDECARS,
        "restartPolicy: OnFailure",
        apps_done,
        [
            ("proxy", True, (), 30),
            ("logs", True, ("proxy",), 30),
            ("net", False, (), 30),
        ],
    ),
    (
        "a sidecar whose later sidecar is down waits for nobody",
        SIDECARS,
        "restartPolicy: Never",
        proxy_exited_and_apps_done,
        [
            ("logs", True, (), 30),
            ("net", False, (), 30),
        ],
    ),
    (
        "a container replaced for its spec stops alone, not as a pod-wide stop",
        THREE,
        "restartPolicy: Always",
        app_changed,
        [("app", False, (), 30)],
    ),
    (
        "sidecars wait for the app containers, not for one that left the spec",
        SIDECARS,
        "restartPolicy: Always",
        renamed,
        [
            ("app", True, (), 30),
            ("worker", True, (), 30),
            ("proxy", True, ("app",), 30),
            ("logs", True, ("app", "proxy"), 30),
        ],
    ),
    (
        "a container no longer in the spec stops at once and nobody waits for it",
        THREE,
        "restartPolicy: Always",
        renamed,
        [
            ("app", True, (), 30),
            ("cache", True, (), 30),
            ("worker", True, (), 30),
        ],
    ),
]


def _kills(p: Plan) -> list[tuple[str, bool, tuple[str, ...], int]]:
    return [
        (a.container, a.concurrent, a.after, a.timeout) for a in p.actions if isinstance(a, Kill)
    ]


@pytest.mark.parametrize(
    ("text", "spec", "scenario", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_how_a_pod_stops(text: str, spec: str, scenario: Scenario, expected: list) -> None:
    """The kills of a pod-wide stop are concurrent, sidecars in their turn, the network
    container alone and last; each has the pod's grace period."""
    pod = pod_file(text, spec)
    model = running(pod)
    desired = scenario(pod, model)

    p = plan(desired, model.observed, images=model.images, now=NOW + 20, options=NODE)

    assert expected == _kills(p)


def test_a_waiting_sidecar_says_what_it_waits_for() -> None:
    """The plan says the order for people too: a sidecar's kill names the containers
    whose stop it waits for."""
    pod = pod_file(SIDECARS)
    model = running(pod)

    p = plan([], model.observed, images=model.images, now=NOW + 20, options=NODE)

    assert {
        "app": "",
        "worker": "",
        "proxy": " (once app, worker stopped)",
        "logs": " (once app, worker, proxy stopped)",
        "net": "",
    } == {
        a.container: a.message[a.message.index("desired") + len("desired") :]
        for a in p.actions
        if isinstance(a, Kill)
    }
