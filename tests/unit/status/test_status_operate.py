"""``podsync.pod_status`` for operators: conditions, readiness, OOM kills, termination
messages, orphaned pods and the JSON form (``podsync status --json``).

Pure: the engine is a FakeRuntime driven by ``podsync.sync``, and messages and log
tails are given as data (the shell that reads them is ``podsync.status._operate``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from podsync import (
    ConfigError,
    Container,
    ContainerState,
    Handler,
    Pod,
    PodPhase,
    Probe,
    RestartPolicy,
    TerminationMessagePolicy,
    parse_pods,
    plan,
    pod_status,
    sync,
)
from podsync.actions._options import PlanOptions
from podsync.status._container import termination_message
from podsync.status._json import STATUS_FORMAT_VERSION, statuses_to_json
from podsync.status._pod import PodCondition, orphaned_pod_statuses
from podsync.testing import FakeClock, FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
OPTIONS = PlanOptions(root_dir="/nonexistent")


def job(restart: RestartPolicy = RestartPolicy.ALWAYS, *containers: Container) -> Pod:
    return Pod(
        "job",
        containers or (Container("app", "busybox"),),
        source="file",
        restart_policy=restart,
    )


def synced(*pods: Pod) -> FakeRuntime:
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW, step=0))
    assert sync(list(pods), fake, options=OPTIONS, clock=fake.clock).ok
    return fake


def app_id(fake: FakeRuntime, name: str = "app") -> str:
    return next(c.id for c in fake.containers if c.labels.get("io.podsync.container.name") == name)


def conditions(status: Any) -> list[tuple[str, bool, str]]:
    return [(c.type, c.status, c.reason) for c in status.conditions]


# --- conditions and readiness ---------------------------------------------------------


def test_a_running_pod_is_ready() -> None:
    """Every container runs: each ready, with its image; the pod Initialized,
    ContainersReady and Ready (pkg/kubelet/status/generate.go)."""
    pod = job()
    fake = synced(pod)

    status = pod_status(pod, fake.containers, options=OPTIONS)

    (app,) = status.containers
    assert (True, "busybox") == (app.ready, app.image)
    assert [
        ("Initialized", True, ""),
        ("ContainersReady", True, ""),
        ("Ready", True, ""),
    ] == conditions(status)


def test_a_container_not_ready_by_its_readiness_result() -> None:
    """A running container whose readiness verdict is a failure is not ready, and the
    pod's ContainersReady and Ready say which container."""
    probe = Probe(Handler(exec_command=("true",)))
    app = Container("app", "busybox", readiness_probe=probe)
    pod = job(RestartPolicy.ALWAYS, app, Container("side", "busybox"))
    fake = synced(pod)

    status = pod_status(pod, fake.containers, options=OPTIONS, readiness={app_id(fake): False})

    assert [False, True] == [c.ready for c in status.containers]
    ready = {c.type: c for c in status.conditions}
    assert (
        PodCondition(
            "ContainersReady", False, "ContainersNotReady", "containers with unready status: [app]"
        )
        == ready["ContainersReady"]
    )
    assert (False, "ContainersNotReady") == (ready["Ready"].status, ready["Ready"].reason)
    assert PodPhase.RUNNING == status.phase


def test_a_completed_pod_is_not_ready() -> None:
    """Succeeded: Initialized (PodCompleted), ContainersReady and Ready False
    (PodCompleted)."""
    pod = job(RestartPolicy.NEVER)
    fake = synced(pod)
    fake.exit(app_id(fake), 0)

    status = pod_status(pod, fake.containers, options=OPTIONS)

    assert PodPhase.SUCCEEDED == status.phase
    assert [
        ("Initialized", True, "PodCompleted"),
        ("ContainersReady", False, "PodCompleted"),
        ("Ready", False, "PodCompleted"),
    ] == conditions(status)


def test_a_failed_pod_is_not_ready() -> None:
    pod = job(RestartPolicy.NEVER)
    fake = synced(pod)
    fake.exit(app_id(fake), 2)

    status = pod_status(pod, fake.containers, options=OPTIONS)

    assert PodPhase.FAILED == status.phase
    assert ("ContainersReady", False, "PodFailed") == conditions(status)[1]


def test_a_pod_never_started_is_pending_and_not_ready() -> None:
    """No container yet: waiting ContainerCreating, not ready, the pod Pending."""
    pod = job()

    status = pod_status(pod, [], options=OPTIONS)

    (app,) = status.containers
    assert (ContainerState.WAITING, "ContainerCreating", False) == (
        app.state,
        app.reason,
        app.ready,
    )
    assert ("ContainersReady", False, "ContainersNotReady") == conditions(status)[1]
    assert PodPhase.PENDING == status.phase


# --- OOM kills -------------------------------------------------------------------------


def test_an_oom_killed_container_is_terminated_oom_killed() -> None:
    """Exit 137 with the OOM flag: reason OOMKilled (the flag first, then the code, as
    the kubelet reads Docker), and the pod Failed under Never."""
    pod = job(RestartPolicy.NEVER)
    fake = synced(pod)
    fake.exit(app_id(fake), 137, oom=True)

    status = pod_status(pod, fake.containers, options=OPTIONS)

    (app,) = status.containers
    assert (ContainerState.TERMINATED, "OOMKilled", 137, "OOMKilled") == (
        app.state,
        app.reason,
        app.exit_code,
        app.exit_reason,
    )
    assert PodPhase.FAILED == status.phase


def test_a_crash_looping_oom_kill_keeps_its_reason_as_the_last_run() -> None:
    """OOM-killed, restarted, OOM-killed again: waiting CrashLoopBackOff with the last
    run OOMKilled."""
    pod = job()
    fake = synced(pod)
    fake.exit(app_id(fake), 137, oom=True)
    assert sync([pod], fake, options=OPTIONS, clock=fake.clock).ok
    second = next(c for c in fake.containers if c.running and "app" in c.name)
    fake.exit(second.id, 137, oom=True)
    the_plan = plan([pod], fake.containers, now=NOW + 1, images=fake.images, options=OPTIONS)

    status = pod_status(pod, fake.containers, plan=the_plan, options=OPTIONS)

    (app,) = status.containers
    assert (ContainerState.WAITING, "CrashLoopBackOff", "OOMKilled", 1) == (
        app.state,
        app.reason,
        app.exit_reason,
        app.restart_count,
    )


# --- termination messages --------------------------------------------------------------


def test_termination_message_comes_from_the_file() -> None:
    pod = job(RestartPolicy.NEVER)
    fake = synced(pod)
    fake.exit(app_id(fake), 1)

    status = pod_status(
        pod, fake.containers, options=OPTIONS, termination_messages={app_id(fake): "disk full\n"}
    )

    assert "disk full\n" == status.containers[0].termination_message


@pytest.mark.parametrize(
    ("policy", "code", "file_text", "expected"),
    [
        (TerminationMessagePolicy.FILE, 1, "", ""),
        (TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR, 1, "", "last words\n"),
        (TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR, 1, "file\n", "file\n"),
        # Only on error: a run that exited 0 gets no log tail.
        (TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR, 0, "", ""),
    ],
)
def test_fallback_to_logs_on_error(
    policy: TerminationMessagePolicy, code: int, file_text: str, expected: str
) -> None:
    """FallbackToLogsOnError: the log tail when the file is empty and the run failed
    (getTerminationMessage, pkg/kubelet/kuberuntime/kuberuntime_container.go)."""
    container = Container("app", "busybox", termination_message_policy=policy)
    pod = job(RestartPolicy.NEVER, container)
    fake = synced(pod)
    cid = app_id(fake)
    fake.exit(cid, code)

    status = pod_status(
        pod,
        fake.containers,
        options=OPTIONS,
        termination_messages={cid: file_text},
        log_tails={cid: "last words\n"},
    )

    assert expected == status.containers[0].termination_message


def test_termination_message_limits() -> None:
    """The file's last 4096 bytes; the log's last 80 lines, at most 2048 bytes
    (MaxContainerTerminationMessageLength, ...LogLines, ...LogLength)."""
    fallback = TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR
    lines = "".join(f"line {i}\n" for i in range(100))
    big = "x" * 5000 + "end"

    assert big[-4096:] == termination_message(fallback, 1, big, "")
    assert "".join(f"line {i}\n" for i in range(20, 100)) == termination_message(
        fallback, 1, "", lines
    )
    assert ("y" * 3000)[-2048:] == termination_message(fallback, 1, "", "y" * 3000)


def test_termination_message_policy_is_read_from_pod_files() -> None:
    (pod,) = parse_pods(
        """
apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  containers:
  - name: app
    image: busybox
    terminationMessagePolicy: FallbackToLogsOnError
""",
        source="file",
    )

    assert TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR == (
        pod.containers[0].termination_message_policy
    )


# --- orphaned pods ---------------------------------------------------------------------


def test_pods_no_longer_desired_are_orphaned() -> None:
    """A pod podsync runs that the desired pods do not name is reported as orphaned,
    judged from its containers alone (it will not be restarted: a terminal pod)."""
    web = Pod("web", (Container("app", "busybox"), Container("side", "busybox")), source="file")
    old = Pod("old", (Container("app", "busybox"),), source="file")
    fake = synced(web, old)
    side = next(c for c in fake.containers if "side" in c.name and "web" in c.name)
    fake.exit(side.id, 1)

    statuses = orphaned_pod_statuses(fake.containers, desired=[old], options=OPTIONS)

    (status,) = statuses
    assert (True, "default/web", PodPhase.RUNNING) == (status.orphaned, status.pod, status.phase)
    assert [("app", ContainerState.RUNNING), ("side", ContainerState.TERMINATED)] == [
        (c.name, c.state) for c in status.containers
    ]
    assert "orphaned" in status.message


def test_an_orphaned_pod_that_ended() -> None:
    """Nothing of it runs: Succeeded when every container exited 0, else Failed."""
    old = Pod("old", (Container("app", "busybox"),), source="file")
    fake = synced(old)
    fake.exit(app_id(fake), 3)

    (status,) = orphaned_pod_statuses(fake.containers, desired=[], options=OPTIONS)

    assert (PodPhase.FAILED, "Error") == (status.phase, status.containers[0].reason)


# --- JSON ------------------------------------------------------------------------------


def test_json_has_a_format_version_and_every_field() -> None:
    pod = job(RestartPolicy.NEVER)
    fake = synced(pod)
    fake.exit(app_id(fake), 137, oom=True)
    status = pod_status(pod, fake.containers, options=OPTIONS)

    document = json.loads(statuses_to_json([status]))

    assert STATUS_FORMAT_VERSION == document["format_version"] == 1
    (entry,) = document["pods"]
    assert {
        "pod": "default/job",
        "uid": pod.uid,
        "phase": "Failed",
        "state": "failed",
        "orphaned": False,
    }.items() <= entry.items()
    (app,) = entry["containers"]
    assert {
        "name": "app",
        "state": "terminated",
        "reason": "OOMKilled",
        "exit_code": 137,
        "ready": False,
        "restart_count": 0,
        "image": "busybox",
    }.items() <= app.items()
    assert ["Initialized", "ContainersReady", "Ready"] == [c["type"] for c in entry["conditions"]]
    assert [] == entry["init_containers"]


def test_an_unknown_termination_message_policy_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        parse_pods(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: job}\nspec:\n  containers:\n"
            "  - name: app\n    image: busybox\n    terminationMessagePolicy: Logs\n",
            source="file",
        )

    (problem,) = info.value.problems
    assert "$.spec.containers[0].terminationMessagePolicy" == problem.path
    assert "FallbackToLogsOnError" in problem.message
