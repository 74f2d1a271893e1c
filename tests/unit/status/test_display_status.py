"""One status vocabulary (issue 29): a pod's phase, reason and message as Kubernetes
words them, ``display_status`` as ``kubectl get pods`` shows it (a port of kubectl's
``printPod``, ``podsync.status._kubectl``), and podsync's wait verdict ``state``
(``PodState``) - checked together, one row per case kubectl distinguishes.

Each row is a pod file synced on a FakeRuntime and then driven (containers exit, are
OOM-killed, pulls fail, time passes); its status is judged as ``podsync status`` judges
it: from the observation and the plan a sync makes without applying it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import pytest

import podsync
from podsync import ContainerState, ContainerStatus, PodPhase, PodStatus
from podsync.model._pulls import PullFailure
from podsync.status import PodState, orphaned_pod_statuses
from podsync.status._kubectl import kubectl_status
from podsync.testing import FakeClock, FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 5e9a7c20-27aa-4c1e-9b3e-1f2a3b4c5d6e}
spec:
  restartPolicy: %(policy)s
%(spec)s"""

ONE = """\
  containers:
  - name: app
    image: busybox:1
    command: [httpd, -f]
"""

# Two app containers: ``load`` finishes, ``serve`` keeps running.
TWO = """\
  containers:
  - name: load
    image: busybox:1
    command: [sh, -c, "load data"]
  - name: serve
    image: busybox:1
    command: [httpd, -f]
"""

# Two plain init containers before the app.
INIT = """\
  initContainers:
  - name: migrate
    image: busybox:1
    command: [migrate]
  - name: warm
    image: busybox:1
    command: [warm-cache]
"""

# A sidecar (an init container with restartPolicy Always) before the app.
SIDECAR = """\
  initContainers:
  - name: proxy
    image: busybox:1
    restartPolicy: Always
    command: [httpd, -f, -p, "8081"]
"""

# An image that is not present and may not be pulled.
NEVER_PULL = """\
  containers:
  - name: app
    image: busybox:2
    imagePullPolicy: Never
    command: [httpd, -f]
"""

# An image that is not present, pulled at every create (its pull fails in the row).
PULLED = """\
  containers:
  - name: app
    image: example.com/app:1
    command: [httpd, -f]
"""

# More CPU than the node has.
HUNGRY = """\
  containers:
  - name: app
    image: busybox:1
    command: [httpd, -f]
    resources: {requests: {cpu: "8"}}
"""

GATED = """\
  schedulingGates: [{name: example.com/quota}]
"""


@attrs.define
class World:
    """A FakeRuntime, its clock, and the pulls that failed, across the syncs of a row."""

    pod: podsync.Pod
    fake: FakeRuntime
    clock: FakeClock
    options: podsync.PlanOptions
    failures: dict[tuple[str, str], PullFailure] = attrs.Factory(dict)

    def sync(self) -> None:
        podsync.sync(
            [self.pod], self.fake, options=self.options, clock=self.clock,
            pull_failures=self.failures,
        )  # fmt: skip

    def exit(self, name: str, code: int, *, oom: bool = False) -> None:
        """The newest running instance of pod container ``name`` ends."""
        running = [
            c for c in self.fake.containers
            if c.running and c.labels.get("io.podsync.container.name") == name
        ]  # fmt: skip
        self.fake.exit(max(running, key=lambda c: c.created).id, code, oom=oom)

    def status(self) -> PodStatus:
        result = podsync.sync(
            [self.pod], self.fake, options=self.options, clock=self.clock,
            before_apply=lambda *_: False, record_probes=False,
            pull_failures=dict(self.failures),
        )  # fmt: skip
        return podsync.pod_status(
            self.pod,
            result.observation.containers,
            plan=result.plan,
            options=self.options,
            readiness=result.readiness,
            startup=result.startup,
            pull_failures=tuple(self.failures.values()),
        )


def _start(w: World) -> None:
    w.sync()


def _exit(name: str, code: int, *, oom: bool = False) -> Callable[[World], None]:
    def step(w: World) -> None:
        w.sync()
        w.exit(name, code, oom=oom)
        w.clock.advance(1)

    return step


def _finish(name: str, code: int) -> Callable[[World], None]:
    """``name`` exits with ``code``, and a sync does what that asks (the pod's network
    container stops once nothing else will run)."""

    def step(w: World) -> None:
        _exit(name, code)(w)
        w.sync()

    return step


def _twice(w: World) -> None:
    """Two syncs: a sidecar started in the first, the app containers in the second."""
    w.sync()
    w.sync()


def _crash_twice(name: str) -> Callable[[World], None]:
    """Started, failed, restarted at once after 10 s of back-off, failed again: the
    second restart waits 20 s - the crash loop."""

    def step(w: World) -> None:
        w.sync()
        w.exit(name, 1)
        w.clock.advance(11)
        w.sync()
        w.exit(name, 1)
        w.clock.advance(1)

    return step


def _init_done(w: World) -> None:
    """The first init container finished; the second is started."""
    w.sync()
    w.exit("migrate", 0)
    w.clock.advance(1)
    w.sync()


def _pull_failed(w: World) -> None:
    """The image's pull failed: the next plan waits out its back-off."""
    w.fake.fail("pull", error="manifest unknown")
    w.sync()
    w.clock.advance(1)


def _nothing(w: World) -> None:
    pass


@attrs.frozen
class Case:
    id: str
    policy: str
    spec: str
    steps: Callable[[World], None]
    phase: PodPhase
    reason: str
    display_status: str
    state: PodState
    # The start of the pod's message (podsync's words for people).
    message: str


CASES = [
    Case("running", "Always", ONE, _start, PodPhase.RUNNING, "", "Running", PodState.RUNNING,
         "running (1/1"),
    Case("container-creating", "Always", ONE, _nothing, PodPhase.PENDING, "",
         "ContainerCreating", PodState.PENDING, "not running (0/1"),
    # The case: phase Running, no pod reason, and kubectl's CrashLoopBackOff.
    Case("crash-loop-back-off", "Always", ONE, _crash_twice("app"), PodPhase.RUNNING, "",
         "CrashLoopBackOff", PodState.PENDING, "not running (0/1 containers): app exited"),
    Case("err-image-never-pull", "Always", NEVER_PULL, _start, PodPhase.PENDING, "",
         "ErrImageNeverPull", PodState.PENDING, "not running (0/1"),
    Case("image-pull-back-off", "Always", PULLED, _pull_failed, PodPhase.PENDING, "",
         "ImagePullBackOff", PodState.PENDING, "not running (0/1"),
    Case("completed", "OnFailure", ONE, _finish("app", 0), PodPhase.SUCCEEDED, "", "Completed",
         PodState.COMPLETED, "completed (1/1"),
    Case("error", "Never", ONE, _exit("app", 2), PodPhase.FAILED, "", "Error",
         PodState.FAILED, "failed: app exited with code 2"),
    Case("oom-killed", "Never", ONE, _exit("app", 137, oom=True), PodPhase.FAILED, "",
         "OOMKilled", PodState.FAILED, "failed: app exited with code 137"),
    # A container completed while another runs: the pod is not Ready (a completed
    # container is not ready), so kubectl shows NotReady, not Completed.
    Case("completed-beside-running", "OnFailure", TWO, _exit("load", 0), PodPhase.RUNNING, "",
         "NotReady", PodState.RUNNING, "running (1 running, 1 completed)"),
    Case("init-0-of-2", "Always", INIT + ONE, _start, PodPhase.PENDING, "", "Init:0/2",
         PodState.PENDING, "not running (0/1 containers): Init:0/2: init container migrate"),
    Case("init-1-of-2", "Always", INIT + ONE, _init_done, PodPhase.PENDING, "", "Init:1/2",
         PodState.PENDING, "not running (0/1 containers): Init:1/2: init container warm"),
    Case("init-error", "Never", INIT + ONE, _exit("migrate", 3), PodPhase.FAILED, "",
         "Init:Error", PodState.FAILED, "failed: Init:Error"),
    Case("init-oom-killed", "Never", INIT + ONE, _exit("migrate", 137, oom=True),
         PodPhase.FAILED, "", "Init:OOMKilled", PodState.FAILED, "failed: Init:Error"),
    Case("init-crash-loop-back-off", "Always", INIT + ONE, _crash_twice("migrate"),
         PodPhase.PENDING, "", "Init:CrashLoopBackOff", PodState.PENDING,
         "not running (0/1 containers): Init:CrashLoopBackOff"),
    # A started sidecar is done for kubectl: the app container's state is shown.
    Case("sidecar-started", "Always", SIDECAR + ONE, _twice, PodPhase.RUNNING, "", "Running",
         PodState.RUNNING, "running (1/1"),
    Case("scheduling-gated", "Always", GATED + ONE, _start, PodPhase.PENDING, "",
         "SchedulingGated", PodState.PENDING, "not running (0/1"),
    # Not Init:0/2: a gated pod was never scheduled, so none of its containers has a
    # status at the kubelet.
    Case("scheduling-gated-with-init", "Always", GATED + INIT + ONE, _start, PodPhase.PENDING,
         "", "SchedulingGated", PodState.PENDING, "not running (0/1"),
    # The kubelet's rejectPod: phase Failed, the rejection's reason, its message (the
    # node has 2 CPUs).
    Case("rejected-out-of-cpu", "Always", HUNGRY, _start, PodPhase.FAILED, "OutOfcpu",
         "OutOfcpu", PodState.REJECTED, "Pod was rejected: "),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phase_reason_message_and_display_status(case: Case, tmp_path: Path) -> None:
    (pod,) = podsync.parse_pods(
        POD % {"policy": case.policy, "spec": case.spec}, source_name="pods/web.yaml"
    )
    clock = FakeClock(NOW, step=0)
    fake = FakeRuntime(
        images=["busybox:1", PAUSE],
        clock=clock,
        capacity=podsync.ResourceList(cpu=2000, memory=4 << 30),
    )
    world = World(pod, fake, clock, podsync.PlanOptions(root_dir=str(tmp_path)))
    case.steps(world)

    status = world.status()

    assert (status.phase, status.reason, status.display_status, status.state) == (
        case.phase,
        case.reason,
        case.display_status,
        case.state,
    ), status
    assert status.message.startswith(case.message), status.message


@pytest.mark.parametrize(
    ("spec", "steps", "ready"),
    [
        (ONE, _start, (1, 1)),
        (TWO, _exit("load", 0), (1, 2)),
        # printPod counts a sidecar as a container of the pod: ready once started
        (SIDECAR + ONE, _twice, (2, 2)),
        (SIDECAR + ONE, _nothing, (0, 2)),
        (INIT + ONE, _start, (0, 1)),
    ],
    ids=["running", "one-completed", "sidecar-started", "sidecar-not-started", "init"],
)
def test_ready_count_is_kubectls_ready_column(
    spec: str, steps: Callable[[World], None], ready: tuple[int, int], tmp_path: Path
) -> None:
    (pod,) = podsync.parse_pods(POD % {"policy": "OnFailure", "spec": spec}, source_name="w.yaml")
    clock = FakeClock(NOW, step=0)
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=clock)
    world = World(pod, fake, clock, podsync.PlanOptions(root_dir=str(tmp_path)))
    steps(world)

    assert world.status().ready_count == ready


def _orphaned(code: int | None) -> PodStatus:
    """The status of the pod of ``ONE`` when it is no longer desired: running, or
    after its container exited with ``code``."""
    (pod,) = podsync.parse_pods(POD % {"policy": "Never", "spec": ONE}, source_name="web.yaml")
    clock = FakeClock(NOW, step=0)
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=clock)
    world = World(pod, fake, clock, podsync.PlanOptions(root_dir="/nonexistent"))
    world.sync()
    if code is not None:
        world.exit("app", code)
    (status,) = orphaned_pod_statuses(fake.containers, desired=[])
    return status


@pytest.mark.parametrize(
    ("code", "phase", "display_status", "state"),
    [
        # podsync's word where kubectl would say Terminating (no deletion is under way)
        (None, PodPhase.RUNNING, "Orphaned", PodState.RUNNING),
        # a pod that has finished shows how (printPod: no Terminating once terminal)
        (0, PodPhase.SUCCEEDED, "Completed", PodState.COMPLETED),
        (1, PodPhase.FAILED, "Error", PodState.FAILED),
    ],
    ids=["orphaned-running", "orphaned-completed", "orphaned-error"],
)
def test_an_orphaned_pod(
    code: int | None, phase: PodPhase, display_status: str, state: PodState
) -> None:
    status = _orphaned(code)

    assert status.orphaned
    assert (status.phase, status.reason, status.display_status, status.state) == (
        phase,
        "",
        display_status,
        state,
    )


def _c(state: ContainerState, reason: str = "", **kwargs: object) -> ContainerStatus:
    return ContainerStatus("c", state, reason, **kwargs)  # type: ignore[arg-type]


RUN = _c(ContainerState.RUNNING, started=True, ready=True)
UNREADY = _c(ContainerState.RUNNING, started=True)
DONE = _c(ContainerState.TERMINATED, "Completed", exit_code=0)


@pytest.mark.parametrize(
    ("init", "containers", "initialized", "ready", "expected"),
    [
        # printPod's ExitCode:<n>, for a terminated status without a reason
        ((), (_c(ContainerState.TERMINATED, exit_code=9),), True, False, "ExitCode:9"),
        ((_c(ContainerState.TERMINATED, exit_code=9),), (), False, False, "Init:ExitCode:9"),
        # the first app container in the pod's order wins
        ((), (_c(ContainerState.WAITING, "ErrImagePull"), DONE), True, False, "ErrImagePull"),
        ((), (DONE, _c(ContainerState.WAITING, "ErrImagePull")), True, False, "Completed"),
        # Completed beside a ready running container: Running, or NotReady
        ((), (DONE, RUN), True, True, "Running"),
        ((), (DONE, RUN), True, False, "NotReady"),
        # an unready running container does not count as running
        ((), (DONE, UNREADY), True, False, "Completed"),
        # a plain init container that runs is Init:<done>/<all>, not done
        ((DONE, _c(ContainerState.RUNNING, started=True)), (RUN,), False, False, "Init:1/2"),
        # an init container waiting to initialise counts, as one waiting without a reason
        ((DONE, _c(ContainerState.WAITING, "PodInitializing")), (), False, False, "Init:1/2"),
        ((_c(ContainerState.WAITING),), (), False, False, "Init:0/1"),
        # a waiting app container without a reason leaves the phase
        ((), (_c(ContainerState.WAITING),), True, False, "Running"),
        # a sidecar that started is done; one that has not is not
        ((attrs.evolve(UNREADY, sidecar=True),), (RUN,), True, True, "Running"),
        ((_c(ContainerState.RUNNING, sidecar=True),), (RUN,), False, False, "Init:0/1"),
        # Initialized holds: the app containers are read too, and a waiting one's reason
        # wins; one that runs changes nothing (printPod sets no reason for it)
        ((_c(ContainerState.WAITING, "CrashLoopBackOff"),), (RUN,), True, True,
         "Init:CrashLoopBackOff"),
        ((_c(ContainerState.WAITING, "CrashLoopBackOff"),),
         (_c(ContainerState.WAITING, "ContainerCreating"),), True, False, "ContainerCreating"),
    ],
    ids=[
        "exit-code", "init-exit-code", "first-wins", "first-wins-terminated",
        "completed-beside-ready", "completed-beside-not-ready", "completed-beside-unready",
        "init-running", "init-pod-initializing", "init-waiting-no-reason",
        "waiting-no-reason", "sidecar-started", "sidecar-not-started", "initialized-app-running",
        "initialized-app-waiting",
    ],
)  # fmt: skip
def test_kubectl_status_rules(
    init: Sequence[ContainerStatus],
    containers: Sequence[ContainerStatus],
    initialized: bool,
    ready: bool,
    expected: str,
) -> None:
    """printPod's rules that no pod of podsync shows on its own, on statuses built by
    hand (phase Running, no pod reason)."""
    shown = kubectl_status(
        "Running",
        "",
        init,
        containers,
        initialized=initialized,
        ready=ready,
        orphaned=False,
    )
    assert shown == expected


def test_a_string_state_is_a_pod_state() -> None:
    """``PodStatus.state`` is a ``PodState``; a string made status still compares."""
    status = PodStatus("default/web", "running", "running (1/1 containers)")
    assert status.state is PodState.RUNNING
    assert status.state == "running"
    assert status.ok
    assert status.final
    assert podsync.status.statuses_to_json([status]).count('"display_status": "Pending"') == 1
