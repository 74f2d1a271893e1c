"""The planner and pod status with probe verdicts: what a liveness, startup or readiness
verdict makes of a running container (kubelet-modern.md §1.4, §4, §5).

The planner takes verdicts, not single results: the thresholds are the prober's
(``tests/unit/prober/test_prober.py``), and a sync feeds the plan what they decided
(``tests/unit/loop/test_sync_probes.py``).
"""

from __future__ import annotations

import attrs
import pytest

from podsync import Pod, PodCondition, parse_pods, pod_status
from podsync.actions._actions import Kill, Plan, Reason
from podsync.planner._plan import plan
from podsync.spec._naming import NETWORK_CONTAINER
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
IMAGES = {"busybox:1.36", "registry.k8s.io/pause:3.10"}


def pod_file(text: str) -> Pod:
    (pod,) = parse_pods(text, source_name="pods/test.yaml", source="file")
    return pod


SLOW = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: slow
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: busybox:1.36
      command: ["sh", "-c", "sleep 60; serve"]
      livenessProbe:
        exec: {command: ["cat", "/tmp/alive"]}
        terminationGracePeriodSeconds: 5
      readinessProbe:
        exec: {command: ["cat", "/tmp/ready"]}
      startupProbe:
        exec: {command: ["cat", "/tmp/started"]}
        failureThreshold: 30
        terminationGracePeriodSeconds: 7
    - name: sidecar
      image: busybox:1.36
      command: ["sh", "-c", "sleep 3600"]
"""
)

PLAIN = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: plain
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: busybox:1.36
      command: ["httpd", "-f"]
      livenessProbe:
        httpGet: {port: 80, path: /healthz}
"""
)


def run(desired: list[Pod], model: EngineModel, **kwargs) -> Plan:
    return plan(
        desired,
        model.observed,
        images=model.images,
        pod_dirs=model.pod_dirs,
        now=NOW,
        **kwargs,
    )


def running(pod: Pod) -> EngineModel:
    model = EngineModel(image_tags=set(IMAGES))
    model.apply(plan([pod], [], images=model.images, now=NOW - 1000), NOW - 1000)
    assert not run([pod], model).has_changes
    return model


def app_id(model: EngineModel) -> str:
    return next(c.id for c in model.observed if c.running and "_app." in c.name)


def kinds(p: Plan) -> list[tuple[str, str]]:
    return [(type(a).__name__, getattr(a, "container", "")) for a in p.actions]


def test_a_liveness_failure_kills_with_the_probes_grace_period():
    """The probe's own terminationGracePeriodSeconds replaces the pod's for the kill it
    makes (setTerminationGracePeriod, kuberuntime_container.go)."""
    model = running(SLOW)
    app = app_id(model)

    p = run([SLOW], model, liveness={app: False}, startup={app: True})

    kill = p.actions[0]
    assert [("Kill", "app"), ("Create", "app")] == kinds(p)
    assert isinstance(kill, Kill)
    assert (Reason.UNHEALTHY, 5, "liveness probe failed") == (
        kill.reason,
        kill.timeout,
        kill.message.rsplit(": ", 1)[1],
    )


def test_without_a_probe_grace_period_the_pods_applies():
    model = running(PLAIN)
    app = app_id(model)

    kill = run([PLAIN], model, liveness={app: False}).actions[0]

    assert isinstance(kill, Kill)
    assert (Reason.UNHEALTHY, 30) == (kill.reason, kill.timeout)


def test_a_startup_failure_kills_like_liveness():
    """A startup verdict of failure kills the container and restarts it per policy, with
    the startup probe's grace period."""
    model = running(SLOW)
    app = app_id(model)

    p = run([SLOW], model, startup={app: False})

    kill, create = p.actions[0], p.actions[1]
    assert [("Kill", "app"), ("Create", "app")] == kinds(p)
    assert isinstance(kill, Kill)
    assert (Reason.UNHEALTHY, 7) == (kill.reason, kill.timeout)
    assert "startup probe failed" in kill.message
    assert "startup probe failed" in create.message


@pytest.mark.parametrize("startup", [None, {}, {"another-container": True}])
def test_liveness_does_not_count_before_the_start(startup):
    """Until the startup probe succeeded no liveness probe runs (worker.go), so a
    liveness failure of a container that has not started kills nothing."""
    model = running(SLOW)
    app = app_id(model)

    assert not run([SLOW], model, liveness={app: False}, startup=startup).has_changes


def test_liveness_counts_once_started():
    model = running(SLOW)
    app = app_id(model)

    assert run([SLOW], model, liveness={app: False}, startup={app: True}).has_changes


def test_readiness_never_restarts():
    """Readiness verdicts are not the planner's input at all: the plan has no such
    argument, and a container that is not ready keeps running."""
    model = running(SLOW)
    app = app_id(model)

    assert not run([SLOW], model, liveness={app: True}, startup={app: True}).has_changes


def test_a_probe_kill_under_never_stops_for_good():
    never = pod_file(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: once}\nspec:\n  restartPolicy: Never\n"
        "  containers:\n  - name: app\n    image: busybox:1.36\n"
        "    startupProbe: {exec: {command: [check]}}\n"
    )
    model = running(never)
    app = app_id(model)

    assert [("Kill", "app"), ("Kill", NETWORK_CONTAINER)] == kinds(
        run([never], model, startup={app: False})
    )


# --- readiness in the pod's status ----------------------------------------------------


def conditions(ready: bool, message: str = "") -> tuple[PodCondition, ...]:
    reason = "" if ready else "ContainersNotReady"
    return (
        PodCondition("Initialized", True),
        PodCondition("ContainersReady", ready, reason, message),
        PodCondition("Ready", ready, reason, message),
    )


def test_status_before_the_start():
    """No verdicts yet: app has not started, so it is not ready; the sidecar (no
    probes) is started and ready as soon as it runs."""
    model = running(SLOW)

    status = pod_status(SLOW, model.observed)

    assert [("app", False, False), ("sidecar", True, True)] == [
        (c.name, c.started, c.ready) for c in status.containers
    ]
    assert conditions(False, "containers with unready status: [app]") == status.conditions
    assert not status.ready
    assert "running" == status.state  # running, not ready: the container runs


def test_status_started_but_not_ready():
    model = running(SLOW)
    app = app_id(model)

    status = pod_status(SLOW, model.observed, startup={app: True}, readiness={app: False})

    assert (True, False) == (status.containers[0].started, status.containers[0].ready)
    assert conditions(False, "containers with unready status: [app]") == status.conditions


def test_status_ready():
    model = running(SLOW)
    app = app_id(model)

    status = pod_status(SLOW, model.observed, startup={app: True}, readiness={app: True})

    assert [True, True] == [c.ready for c in status.containers]
    assert conditions(True) == status.conditions
    assert status.ready


def test_a_container_that_does_not_run_is_not_ready():
    model = running(PLAIN)
    app = app_id(model)
    model.containers[app] = attrs.evolve(
        model.containers[app], running=False, exit_code=1, finished_at=NOW - 1
    )

    status = pod_status(PLAIN, model.observed)

    assert (False, False) == (status.containers[0].started, status.containers[0].ready)
    assert conditions(False, "containers with unready status: [app]") == status.conditions


def test_a_completed_pod_is_not_ready_with_pod_completed():
    job = pod_file(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: job}\nspec:\n  restartPolicy: Never\n"
        "  containers:\n  - name: work\n    image: busybox:1.36\n"
    )
    model = running(job)
    for c in list(model.observed):
        if "_work." in c.name:
            model.containers[c.id] = attrs.evolve(
                c, running=False, exit_code=0, finished_at=NOW - 1
            )

    status = pod_status(job, model.observed)

    assert "Succeeded" == status.phase
    assert (
        PodCondition("Initialized", True, "PodCompleted"),
        PodCondition("ContainersReady", False, "PodCompleted"),
        PodCondition("Ready", False, "PodCompleted"),
    ) == status.conditions
