"""``podsync.pod_status``: a pod's phase and its containers' states, purely, from what
was observed (and, when given, the plan made from it).

The phases follow the modern kubelet's ``getPhase`` (``pkg/kubelet/kubelet_pods.go``);
the engine is a FakeRuntime driven by ``podsync.sync``, so the observed containers are
the ones podsync really makes.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import attrs
import pytest

import podsync
from podsync import (
    Container,
    ContainerState,
    ObservedContainer,
    Pod,
    PodPhase,
    PodStatus,
    Port,
    RestartPolicy,
    plan,
    pod_status,
    sync,
)
from podsync.actions._options import PlanOptions
from podsync.spec._labels import LABEL_POD_UID
from podsync.testing import FakeClock, FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
OPTIONS = PlanOptions(root_dir="/nonexistent")


def job(restart: RestartPolicy = RestartPolicy.ALWAYS, *names: str, **kwargs: Any) -> Pod:
    """A pod of busybox containers (``app`` by default), as a pod file would give it."""
    containers = tuple(Container(n, "busybox") for n in names or ("app",))
    return Pod("job", containers, source="file", restart_policy=restart, **kwargs)


def synced(pod: Pod) -> FakeRuntime:
    """A FakeRuntime on which one sync started ``pod``."""
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW, step=0))
    assert sync([pod], fake, options=OPTIONS, clock=fake.clock).ok
    return fake


def app_of(fake: FakeRuntime, name: str = "app") -> ObservedContainer:
    return next(c for c in fake.containers if c.labels.get("io.podsync.container.name") == name)


def status_after(pod: Pod, fake: FakeRuntime, *, with_plan: bool = True) -> PodStatus:
    """The pod's status from the fake's containers, with the plan made from them."""
    seen = fake.containers
    the_plan = plan([pod], seen, now=NOW + 5, images=fake.images, options=OPTIONS)
    return pod_status(pod, seen, plan=the_plan if with_plan else None, options=OPTIONS)


def test_running_pod_is_running() -> None:
    """Every container runs: phase Running, each container running since it started."""
    pod = job()
    fake = synced(pod)

    status = status_after(pod, fake)

    app = app_of(fake)
    assert (PodPhase.RUNNING, "running") == (status.phase, status.state)
    (container,) = status.containers
    assert (ContainerState.RUNNING, app.created, app.id, 0) == (
        container.state,
        container.running_since,
        container.container_id,
        container.restart_count,
    )


@pytest.mark.parametrize(
    ("restart", "code", "phase", "state", "reason"),
    [
        # getPhase step 7: a stopped container under Always is restarted: Running.
        (RestartPolicy.ALWAYS, 0, PodPhase.RUNNING, ContainerState.TERMINATED, "Completed"),
        (RestartPolicy.ALWAYS, 1, PodPhase.RUNNING, ContainerState.TERMINATED, "Error"),
        # OnFailure: success completes the pod; a failure is restarted (Running).
        (RestartPolicy.ON_FAILURE, 0, PodPhase.SUCCEEDED, ContainerState.TERMINATED, "Completed"),
        (RestartPolicy.ON_FAILURE, 1, PodPhase.RUNNING, ContainerState.TERMINATED, "Error"),
        # Never: the run is the pod's outcome.
        (RestartPolicy.NEVER, 0, PodPhase.SUCCEEDED, ContainerState.TERMINATED, "Completed"),
        (RestartPolicy.NEVER, 3, PodPhase.FAILED, ContainerState.TERMINATED, "Error"),
    ],
)
def test_phase_of_an_exited_container_follows_the_restart_policy(
    restart: RestartPolicy, code: int, phase: PodPhase, state: ContainerState, reason: str
) -> None:
    """An exited container (its first run: a restart is due at once): the phase is the
    kubelet's for the restart policy; the container is terminated, with its run."""
    pod = job(restart)
    fake = synced(pod)
    fake.exit(app_of(fake).id, code)

    status = status_after(pod, fake)

    (container,) = status.containers
    finished = app_of(fake).finished_at
    last = "Completed" if code == 0 else "Error"
    assert (phase, state, reason, code, finished, last) == (
        status.phase,
        container.state,
        container.reason,
        container.exit_code,
        container.finished_at,
        container.exit_reason,
    )


@pytest.mark.parametrize("restart", [RestartPolicy.ALWAYS, RestartPolicy.ON_FAILURE])
def test_crash_loop_waits_in_back_off(restart: RestartPolicy) -> None:
    """A container that failed again waits in CrashLoopBackOff (the plan's back-off),
    its last run kept; the pod is Running (getPhase: waiting after a run is stopped)."""
    pod = job(restart)
    fake = synced(pod)
    fake.exit(app_of(fake).id, 1)
    assert sync([pod], fake, options=OPTIONS, clock=fake.clock).ok
    second = max((c for c in fake.containers if c.running), key=lambda c: c.created)
    fake.exit(second.id, 2)

    status = status_after(pod, fake)

    (container,) = status.containers
    assert (PodPhase.RUNNING, ContainerState.WAITING, "CrashLoopBackOff", 2, "Error", 1) == (
        status.phase,
        container.state,
        container.reason,
        container.exit_code,
        container.exit_reason,
        container.restart_count,
    )
    assert "pending" == status.state
    assert "app exited with code 2, back-off: restart in" in status.message


def test_without_a_plan_an_exited_container_is_terminated() -> None:
    """Without the plan nothing says a restart is waiting: the container is terminated
    with its exit code, and an Always pod is still Running (getPhase step 7)."""
    pod = job()
    fake = synced(pod)
    fake.exit(app_of(fake).id, 2)

    status = status_after(pod, fake, with_plan=False)

    (container,) = status.containers
    assert (PodPhase.RUNNING, ContainerState.TERMINATED, "Error", 2) == (
        status.phase,
        container.state,
        container.reason,
        container.exit_code,
    )


def test_restarts_are_counted() -> None:
    """Each instance that ran after the first is a restart."""
    pod = job()
    fake = synced(pod)
    fake.exit(app_of(fake).id, 1)
    fake.clock.advance(60)
    assert sync([pod], fake, options=OPTIONS, clock=fake.clock).ok

    status = pod_status(pod, fake.containers, options=OPTIONS)

    (container,) = status.containers
    assert (ContainerState.RUNNING, 1, PodPhase.RUNNING) == (
        container.state,
        container.restart_count,
        status.phase,
    )


def test_pod_without_containers_yet_is_pending() -> None:
    """Nothing created yet: Pending, each container waiting in ContainerCreating."""
    pod = job(RestartPolicy.ALWAYS, "app", "sidecar")

    status = pod_status(pod, [], options=OPTIONS)

    assert PodPhase.PENDING == status.phase
    assert [("app", ContainerState.WAITING, "ContainerCreating")] * 1 + [
        ("sidecar", ContainerState.WAITING, "ContainerCreating")
    ] == [(c.name, c.state, c.reason) for c in status.containers]
    assert (
        "pending",
        "not running (0/2 containers): app not started yet; sidecar not started yet",
    ) == (
        status.state,
        status.message,
    )


def test_image_never_pulled_waits_with_its_reason() -> None:
    """Pull policy Never and no image: the plan waits, the container is waiting in
    ErrImageNeverPull (the kubelet's reason)."""
    pod = Pod(
        "job",
        (Container("app", "busybox", image_pull_policy=podsync.PullPolicy.NEVER),),
        source="file",
    )
    the_plan = plan([pod], [], now=NOW, images=[], options=OPTIONS)

    status = pod_status(pod, [], plan=the_plan, options=OPTIONS)

    (container,) = status.containers
    assert (PodPhase.PENDING, ContainerState.WAITING, "ErrImageNeverPull") == (
        status.phase,
        container.state,
        container.reason,
    )


@pytest.mark.parametrize(
    ("stopped_by", "finished", "phase", "state"),
    [
        # podsync stopped it to replace it: not a run, so not Never's failure.
        ("spec-changed", True, PodPhase.PENDING, "pending"),
        ("pod-rebuild", True, PodPhase.PENDING, "pending"),
        # Created and never started: not a run either.
        ("", False, PodPhase.PENDING, "pending"),
        # Killed for a failed liveness probe: a failed run.
        ("unhealthy", True, PodPhase.FAILED, "failed"),
        ("post-start-failed", True, PodPhase.FAILED, "failed"),
    ],
)
def test_never_pod_judges_the_instance_the_planner_judges(
    stopped_by: str, finished: bool, phase: PodPhase, state: str
) -> None:
    """Under Never, a container podsync stopped for its own reasons, or one that never
    started, leaves the pod pending (the next sync starts it again: FAILED_STOPS in
    the planner); one podsync killed for a failure fails the pod."""
    pod = job(RestartPolicy.NEVER)
    fake = synced(pod)
    app = app_of(fake)
    fake.add_container(
        attrs.evolve(
            app,
            running=False,
            exit_code=137 if finished else 0,
            finished_at=NOW + 1 if finished else None,
            stopped_by_podsync=stopped_by,
        )
    )

    status = status_after(pod, fake)

    assert (phase, state) == (status.phase, status.state), status.message


def test_rejected_pod_has_failed() -> None:
    """A pod the plan rejects is Failed with the rejection's reason (the kubelet's
    rejectPod), and will not come up."""
    first = Pod("a", (Container("app", "busybox", ports=(Port(80, host_port=8080),)),), source="f")
    second = Pod("b", (Container("app", "busybox", ports=(Port(80, host_port=8080),)),), source="f")
    the_plan = plan([first, second], [], now=NOW, images=[], options=OPTIONS)

    status = pod_status(second, [], plan=the_plan, options=OPTIONS)

    assert (PodPhase.FAILED, "rejected", "host-port-conflict", True, False) == (
        status.phase,
        status.state,
        status.reason,
        status.final,
        status.ok,
    )


def test_other_containers_are_not_the_pods() -> None:
    """Foreign containers and other pods' containers do not count."""
    pod = job()
    other = ObservedContainer("x1", "k8s_app", running=True, labels={LABEL_POD_UID: "other"})
    foreign = ObservedContainer("x2", "web", running=True)

    status = pod_status(pod, [other, foreign], options=OPTIONS)

    assert PodPhase.PENDING == status.phase


def test_settling_containers_are_starting() -> None:
    """A running container named in ``settling`` is not counted as up yet."""
    pod = job()
    fake = synced(pod)

    status = pod_status(pod, fake.containers, options=OPTIONS, settling={app_of(fake).id})

    assert (PodPhase.RUNNING, "pending", "not running (0/1 containers): app starting") == (
        status.phase,
        status.state,
        status.message,
    )


def test_status_module_does_no_io() -> None:
    """The status modules are pure: they import only podsync's pure modules and typing
    helpers, never the runtime, the file system or the clock."""
    imported = set()
    for module in (
        "podsync/status/_pod.py",
        "podsync/status/_container.py",
        "podsync/status/_init.py",
        "podsync/status/_kubectl.py",
    ):
        source = (Path(podsync.__file__).parent.parent / module).read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    allowed = {
        "__future__",
        "collections.abc",
        "enum",
        "functools",
        "attrs",
        "podsync.spec._naming",
        "podsync.model._pod",
        "podsync.actions._actions",
        "podsync.status._container",
        "podsync.status._init",
        "podsync.status._kubectl",
        "podsync.actions._options",
        "podsync.spec._ownership",
        "podsync.model._pulls",
        "podsync.spec._images",
        "podsync.spec._labels",
    }

    assert set() == imported - allowed
