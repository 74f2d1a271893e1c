"""Init containers and sidecars in the plan (the modern kubelet's
computeInitContainerActions, kuberuntime_container.go; kubelet-modern.md §3).

Each test drives the engine model through plans, as podsync apply would, with the
processes' exits scripted by the test.
"""

from __future__ import annotations

import attrs
import pytest

from podsync import Container, Pod, parse_pods
from podsync.actions._actions import Create, Kill, Plan, Reason, Wait
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_INIT_INDEX, LABEL_INIT_RESTART_POLICY
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 0e4c3d52-1111-4a5e-8e7a-5d6c2f1e9b00}
spec:
  restartPolicy: %s
  initContainers:
  - name: setup
    image: busybox:1.36
    command: [sh, -c, "echo setup > /work/order"]
  - name: migrate
    image: busybox:1.36
    command: [sh, -c, "echo migrate >> /work/order"]
  containers:
  - name: app
    image: busybox:1.36
"""


def web(policy: str = "Always", text: str = POD) -> Pod:
    (pod,) = parse_pods(text % policy, source="file")
    return pod


def engine() -> EngineModel:
    return EngineModel(image_tags={"busybox:1.36", "registry.k8s.io/pause:3.10"})


def step(pods: list[Pod], model: EngineModel, now: float, **kw) -> Plan:
    """Plan against the model and apply the plan, as ``podsync apply`` does."""
    p = plan(pods, model.observed, images=model.images, now=now, **kw)
    model.apply(p, now)
    return p


def lines(p: Plan) -> list[str]:
    return [f"{a.message} [{a.reason.value}]" for a in p.actions]


def running(model: EngineModel, container: str) -> list[str]:
    return [c.id for c in model.observed if c.running and f"_{container}." in c.name]


def instances(model: EngineModel, container: str) -> list:
    return [c for c in model.observed if f"k8s_{container}." in c.name]


def exit_(model: EngineModel, container: str, code: int, now: float) -> None:
    (cid,) = running(model, container)
    model.exit(cid, code, now)


def test_init_containers_run_in_order_before_the_app_container():
    pod, model = web(), engine()

    first = step([pod], model, NOW)

    assert [
        "create default/web/net: network container missing [network-missing]",
        "create default/web/setup: no container yet [missing]",
        "wait default/web/migrate: init container setup not finished [init-pending]",
        "wait default/web/app: init container setup not finished [init-pending]",
    ] == lines(first)
    assert "Plan: 2 to create, 2 to wait." == first.summary()

    # setup still runs: nothing more happens.
    assert [
        "wait default/web/migrate: init container setup not finished [init-pending]",
        "wait default/web/app: init container setup not finished [init-pending]",
    ] == lines(step([pod], model, NOW + 1))

    exit_(model, "setup", 0, NOW + 2)
    assert [
        "create default/web/migrate: no container yet [missing]",
        "wait default/web/app: init container migrate not finished [init-pending]",
    ] == lines(step([pod], model, NOW + 3))

    exit_(model, "migrate", 0, NOW + 4)
    assert ["create default/web/app: no container yet [missing]"] == lines(
        step([pod], model, NOW + 5)
    )
    # Converged: the completed init containers are kept, and not run again.
    again = step([pod], model, NOW + 6)
    assert [] == lines(again)
    assert 1 == len(instances(model, "setup"))
    assert 1 == len(instances(model, "migrate"))


def test_init_containers_do_not_run_again_while_the_app_runs_or_restarts():
    pod, model = web(), engine()
    for t in range(3):
        step([pod], model, NOW + t * 10)
        for name in ("setup", "migrate"):
            if running(model, name):
                exit_(model, name, 0, NOW + t * 10 + 1)
    assert running(model, "app")

    # The app crashes: it alone restarts (plain init containers never run again).
    exit_(model, "app", 1, NOW + 100)
    p = step([pod], model, NOW + 101)

    assert [("Create", "app")] == [(type(a).__name__, a.container) for a in p.actions]
    # A fresh podsync (same observation, no pod state) decides the same.
    assert [] == lines(plan([pod], model.observed, images=model.images, now=NOW + 102))


@pytest.mark.parametrize("policy", ["OnFailure", "Always"])
def test_a_failing_init_container_is_retried_with_back_off(policy):
    pod, model = web(policy), engine()
    step([pod], model, NOW)
    exit_(model, "setup", 1, NOW + 1)

    retry = step([pod], model, NOW + 2)
    assert [
        "restart default/web/setup: exited with code 1 (restart policy OnFailure, restart 1) "
        "[exited]",
        "wait default/web/migrate: init container setup not finished [init-pending]",
        "wait default/web/app: init container setup not finished [init-pending]",
    ] == lines(retry)

    exit_(model, "setup", 1, NOW + 3)
    backing_off = step([pod], model, NOW + 4)
    assert [
        "wait default/web/setup: exited with code 1, back-off 10s, 9s left [back-off]",
        "wait default/web/migrate: init container setup not finished [init-pending]",
        "wait default/web/app: init container setup not finished [init-pending]",
    ] == lines(backing_off)
    assert not instances(model, "app")


def test_a_failing_init_container_under_never_fails_the_pod():
    pod, model = web("Never"), engine()
    step([pod], model, NOW)
    exit_(model, "setup", 2, NOW + 1)

    failed = step([pod], model, NOW + 2)

    net = failed.actions[0].name
    assert [
        f"stop default/web/net ({net}): no container of the pod runs or will run [pod-completed]"
    ] == lines(failed)
    # Nothing more, ever: the network container is not rebuilt for a failed pod.
    assert [] == lines(step([pod], model, NOW + 100))
    assert not instances(model, "migrate")
    assert not instances(model, "app")


def test_an_init_container_that_exits_0_under_always_is_not_restarted():
    """Under a pod's Always, init containers run as OnFailure (Kubernetes)."""
    pod, model = web("Always"), engine()
    step([pod], model, NOW)
    exit_(model, "setup", 0, NOW + 1)

    p = step([pod], model, NOW + 2)

    assert ("Create", "migrate") == (type(p.actions[0]).__name__, p.actions[0].container)


def _initialised(pod: Pod, model: EngineModel) -> None:
    for t in range(3):
        step([pod], model, NOW + t * 10)
        for name in ("setup", "migrate"):
            if running(model, name):
                exit_(model, name, 0, NOW + t * 10 + 1)


def test_a_changed_init_container_rebuilds_the_pod():
    pod, model = web(), engine()
    _initialised(pod, model)
    changed = web(text=POD.replace("echo setup", "echo setup v2"))

    p = step([changed], model, NOW + 100)

    assert [
        ("Kill", "app", Reason.POD_REBUILD),
        ("Kill", "net", Reason.NETWORK_CHANGED),
        ("Remove", "setup", Reason.INIT_PURGED),
        ("Remove", "migrate", Reason.INIT_PURGED),
        ("Create", "net", Reason.NETWORK_CHANGED),
        ("Create", "setup", Reason.POD_REBUILD),
        ("Wait", "migrate", Reason.INIT_PENDING),
        ("Wait", "app", Reason.INIT_PENDING),
    ] == [(type(a).__name__, a.container, a.reason) for a in p.actions]
    assert p.actions[1].message.endswith("network spec changed (init container setup changed)")
    # And initialisation runs again, in order.
    exit_(model, "setup", 0, NOW + 101)
    assert [("Create", "migrate")] == [
        (type(a).__name__, a.container)
        for a in step([changed], model, NOW + 102).actions
        if not isinstance(a, Wait)
    ]


def test_an_added_init_container_rebuilds_the_pod():
    pod, model = web(), engine()
    _initialised(pod, model)
    added = web(
        text=POD.replace("  containers:", "  - {name: seed, image: busybox:1.36}\n  containers:")
    )

    p = step([added], model, NOW + 100)

    kill_net = next(a for a in p.actions if isinstance(a, Kill) and a.container == "net")
    assert kill_net.message.endswith("network spec changed (init container seed added)")


def test_a_lost_network_container_initialises_the_pod_again():
    """A new sandbox re-initialises (kubelet-modern.md §1.4: after a reboot everything is
    exited): the old init instances are removed, init container 0 runs first."""
    pod, model = web(), engine()
    _initialised(pod, model)
    for name in ("net", "app"):
        exit_(model, name, 137, NOW + 50)

    p = step([pod], model, NOW + 100)

    assert [
        ("Remove", "setup"),
        ("Remove", "migrate"),
        ("Create", "net"),
        ("Create", "setup"),
        ("Wait", "migrate"),
        ("Wait", "app"),
    ] == [(type(a).__name__, a.container) for a in p.actions]


def test_init_labels_record_the_index_and_the_sidecar():
    pod = web(
        text=POD.replace(
            '    image: busybox:1.36\n    command: [sh, -c, "echo setup',
            (
                "    image: busybox:1.36\n    restartPolicy: Always\n"
                '    command: [sh, -c, "echo setup'
            ),
        )
    )
    p = plan([pod], [], images=engine().images, now=NOW)

    (setup,) = [a for a in p.actions if isinstance(a, Create) and a.container == "setup"]
    assert "0" == setup.spec.labels[LABEL_INIT_INDEX]
    assert "Always" == setup.spec.labels[LABEL_INIT_RESTART_POLICY]
    model = engine()
    _initialised(web(), model)
    labels = {c.labels.get("io.podsync.container.name"): c.labels for c in model.observed}
    assert "1" == labels["migrate"][LABEL_INIT_INDEX]
    assert LABEL_INIT_RESTART_POLICY not in labels["migrate"]
    assert LABEL_INIT_INDEX not in labels["app"]
    assert LABEL_INIT_INDEX not in labels["net"]


# --- sidecars ----------------------------------------------------------------------------

SIDECAR = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 0e4c3d52-1111-4a5e-8e7a-5d6c2f1e9b00}
spec:
  restartPolicy: %s
  initContainers:
  - name: proxy
    image: busybox:1.36
    restartPolicy: Always
    args: [httpd, -f]
  - name: setup
    image: busybox:1.36
  containers:
  - name: app
    image: busybox:1.36
"""


def test_a_sidecar_starts_first_and_keeps_running_beside_the_app():
    pod, model = web("Never", SIDECAR), engine()

    assert [
        "create default/web/net: network container missing [network-missing]",
        "create default/web/proxy: no container yet [missing]",
        "wait default/web/setup: init container proxy not started [init-pending]",
        "wait default/web/app: init container proxy not started [init-pending]",
    ] == lines(step([pod], model, NOW))

    # The sidecar runs: the next init container starts without waiting for its exit.
    assert [
        "create default/web/setup: no container yet [missing]",
        "wait default/web/app: init container setup not finished [init-pending]",
    ] == lines(step([pod], model, NOW + 1))
    exit_(model, "setup", 0, NOW + 2)
    assert ["create default/web/app: no container yet [missing]"] == lines(
        step([pod], model, NOW + 3)
    )
    assert running(model, "proxy")

    # It exits: restarted whatever the pod's policy (Never here).
    exit_(model, "proxy", 0, NOW + 4)
    assert [
        "restart default/web/proxy: exited with code 0 (restart policy Always, restart 1) [exited]"
    ] == lines(step([pod], model, NOW + 5))


def test_a_sidecar_with_a_startup_probe_holds_the_next_init_container_until_it_started():
    text = SIDECAR.replace(
        "    args: [httpd, -f]\n",
        ('    args: [httpd, -f]\n    startupProbe: {exec: {command: ["true"]}}\n'),
    )
    pod, model = web("Always", text), engine()
    step([pod], model, NOW)
    (proxy,) = running(model, "proxy")

    held = step([pod], model, NOW + 1, startup={})
    assert [
        "wait default/web/setup: init container proxy not started [init-pending]",
        "wait default/web/app: init container proxy not started [init-pending]",
    ] == lines(held)

    started = step([pod], model, NOW + 2, startup={proxy: True})
    assert ("Create", "setup") == (type(started.actions[0]).__name__, started.actions[0].container)


def test_sidecars_stop_when_the_app_containers_completed():
    pod, model = web("OnFailure", SIDECAR), engine()
    step([pod], model, NOW)
    step([pod], model, NOW + 1)
    exit_(model, "setup", 0, NOW + 2)
    step([pod], model, NOW + 3)
    exit_(model, "app", 0, NOW + 4)

    done = step([pod], model, NOW + 5)

    assert [("Kill", "proxy", Reason.POD_COMPLETED), ("Kill", "net", Reason.POD_COMPLETED)] == [
        (type(a).__name__, a.container, a.reason) for a in done.actions
    ]
    assert [] == lines(step([pod], model, NOW + 6))


def test_a_failed_init_container_under_never_stops_the_sidecars():
    pod, model = web("Never", SIDECAR), engine()
    step([pod], model, NOW)
    step([pod], model, NOW + 1)
    exit_(model, "setup", 1, NOW + 2)

    failed = step([pod], model, NOW + 3)

    assert [
        ("Kill", "proxy", Reason.INIT_FAILED),
        ("Kill", "net", Reason.POD_COMPLETED),
    ] == [(type(a).__name__, a.container, a.reason) for a in failed.actions]
    assert "init container setup failed (restart policy Never)" in failed.actions[0].message


def test_a_changed_sidecar_is_replaced_alone():
    pod, model = web("Always", SIDECAR), engine()
    for t in range(3):
        step([pod], model, NOW + t)
        if running(model, "setup"):
            exit_(model, "setup", 0, NOW + t)
    changed = web("Always", SIDECAR.replace("args: [httpd, -f]", "args: [httpd, -f, -v]"))

    p = step([changed], model, NOW + 10)

    assert [("Kill", "proxy", Reason.SPEC_CHANGED), ("Create", "proxy", Reason.SPEC_CHANGED)] == [
        (type(a).__name__, a.container, a.reason) for a in p.actions
    ]


def test_pods_without_init_containers_plan_as_before():
    pod = Pod("web", (Container("app", "busybox:1.36"),))
    with_init = attrs.evolve(pod, init_containers=(Container("setup", "busybox:1.36"),))

    assert [("Create", "net"), ("Create", "app")] == [
        (type(a).__name__, a.container)
        for a in plan([pod], [], images=engine().images, now=NOW).actions
    ]
    assert [("Create", "net"), ("Create", "setup"), ("Wait", "app")] == [
        (type(a).__name__, a.container)
        for a in plan([with_init], [], images=engine().images, now=NOW).actions
    ]


# --- status ------------------------------------------------------------------------------


def _status(pod: Pod, model: EngineModel, now: float):
    from podsync import pod_status

    p = plan([pod], model.observed, images=model.images, now=now)
    return pod_status(pod, model.observed, plan=p)


def test_status_while_initialising():
    from podsync import ContainerState, PodCondition, PodPhase

    pod, model = web(), engine()
    step([pod], model, NOW)
    exit_(model, "setup", 0, NOW + 1)
    step([pod], model, NOW + 2)

    status = _status(pod, model, NOW + 3)

    assert PodPhase.PENDING == status.phase
    assert "pending" == status.state
    assert status.message.startswith(
        "not running (0/1 containers): Init:1/2: init container migrate running"
    )
    assert [
        ("setup", ContainerState.TERMINATED, "Completed", True),
        (
            "migrate",
            ContainerState.RUNNING,
            "",
            False,
        ),
    ] == [(s.name, s.state, s.reason, s.ready) for s in status.init_containers]
    (app,) = status.containers
    assert (ContainerState.WAITING, "PodInitializing") == (app.state, app.reason)
    assert (
        PodCondition(
            "Initialized",
            False,
            "ContainersNotInitialized",
            "containers with incomplete status: [migrate]",
        )
        == status.conditions[0]
    )


def test_status_of_an_initialised_pod():
    from podsync import PodCondition, PodPhase

    pod, model = web(), engine()
    _initialised(pod, model)

    status = _status(pod, model, NOW + 100)

    assert (PodPhase.RUNNING, "running") == (status.phase, status.state)
    assert PodCondition("Initialized", True) == status.conditions[0]
    assert ["Completed", "Completed"] == [s.reason for s in status.init_containers]


def test_status_of_an_init_container_in_back_off():
    pod, model = web("OnFailure"), engine()
    step([pod], model, NOW)
    exit_(model, "setup", 1, NOW + 1)
    step([pod], model, NOW + 2)
    exit_(model, "setup", 1, NOW + 3)

    status = _status(pod, model, NOW + 4)

    assert "pending" == status.state
    assert "Init:CrashLoopBackOff: init container setup exited with code 1" in status.message
    assert "CrashLoopBackOff" == status.init_containers[0].reason
    assert 1 == status.init_containers[0].exit_code


def test_status_of_a_failed_init_container_under_never():
    from podsync import PodPhase

    pod, model = web("Never"), engine()
    step([pod], model, NOW)
    exit_(model, "setup", 2, NOW + 1)

    status = _status(pod, model, NOW + 2)

    assert (PodPhase.FAILED, "failed") == (status.phase, status.state)
    assert (
        "failed: Init:Error: init container setup exited with code 2 (restart policy Never)"
        == status.message
    )
    assert ("Error", 2) == (status.init_containers[0].reason, status.init_containers[0].exit_code)
    assert "PodInitializing" == status.init_containers[1].reason


def test_a_pod_no_longer_desired_stops_sidecars_after_its_app_containers():
    """Read from the labels alone: the pod file is gone."""
    text = SIDECAR.replace(
        "  - name: setup\n    image: busybox:1.36\n",
        "  - name: setup\n    image: busybox:1.36\n  - name: logs\n    image: busybox:1.36\n"
        "    restartPolicy: Always\n",
    )
    pod, model = web("Always", text), engine()
    for t in range(4):
        step([pod], model, NOW + t)
        if running(model, "setup"):
            exit_(model, "setup", 0, NOW + t)
    assert running(model, "app")
    assert running(model, "logs")

    # The pod's file is gone: the node scope removes it.
    gone = step([], model, NOW + 10, options=PlanOptions(scope=NODE_SCOPE))

    assert ["app", "logs", "proxy", "net"] == [
        a.container for a in gone.actions if isinstance(a, Kill)
    ]


def test_a_sidecar_that_is_not_ready_keeps_the_pod_unready():
    """ContainersReady needs every app container and every sidecar ready
    (generate.go, kubelet-modern.md §5)."""
    from podsync import PodCondition, pod_status

    text = SIDECAR.replace(
        "    args: [httpd, -f]\n",
        '    args: [httpd, -f]\n    readinessProbe: {exec: {command: ["true"]}}\n',
    )
    pod, model = web("Always", text), engine()
    for t in range(3):
        step([pod], model, NOW + t)
        if running(model, "setup"):
            exit_(model, "setup", 0, NOW + t)
    (proxy,) = running(model, "proxy")

    p = plan([pod], model.observed, images=model.images, now=NOW + 10)
    unready = pod_status(pod, model.observed, plan=p, readiness={proxy: False})
    ready = pod_status(pod, model.observed, plan=p, readiness={proxy: True})

    assert (
        PodCondition(
            "ContainersReady",
            False,
            "ContainersNotReady",
            "containers with unready status: [proxy]",
        )
        == unready.conditions[1]
    )
    assert ready.ready


# --- found by mutation testing (tools/mutation.sh planner/_init) ---------------------------


def test_an_init_container_that_failed_then_succeeded_lets_the_next_one_start():
    """The newest run of an init container is the one judged: setup failed once, then
    exited 0 on its retry, so migrate starts."""
    pod, model = web("OnFailure"), engine()
    step([pod], model, NOW)
    exit_(model, "setup", 1, NOW + 1)
    step([pod], model, NOW + 2)
    exit_(model, "setup", 0, NOW + 3)

    p = step([pod], model, NOW + 4)

    assert [
        "create default/web/migrate: no container yet [missing]",
        "wait default/web/app: init container migrate not finished [init-pending]",
    ] == lines(p)
    assert 2 == len(instances(model, "setup"))


def test_a_sidecar_that_exited_before_initialisation_holds_the_next_init_container():
    """A sidecar that is restarted has not started: the init containers after it wait
    (the kubelet's computeInitContainerActions, rule 4)."""
    pod, model = web("Always", SIDECAR), engine()
    step([pod], model, NOW)
    exit_(model, "proxy", 1, NOW + 1)

    p = step([pod], model, NOW + 2)

    assert [
        "restart default/web/proxy: exited with code 1 (restart policy Always, restart 1) [exited]",
        "wait default/web/setup: init container proxy not started [init-pending]",
        "wait default/web/app: init container proxy not started [init-pending]",
    ] == lines(p)
