"""podsync's stop records, on FakeRuntime: apply records the containers it stops, observe
reports them, and the next sync (a new process, as the next ``podsync apply`` is) does
not mistake them for runs that ended by themselves.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
import pytest

from podsync import (
    ActionStatus,
    Container,
    Create,
    Handler,
    Kill,
    Lifecycle,
    ObservedContainer,
    Pod,
    Probe,
    Reason,
    Remove,
    RestartPolicy,
    SyncResult,
    Wait,
    observe,
    plan,
    sync,
)
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.applier._apply import write_stop_record
from podsync.host._files import write_stop_record as write_host_record
from podsync.spec._records import records_of, stop_records
from podsync.testing import FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
UID = "12345678"


class Clock:
    """A settable clock for the fake engine."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def foo_pod(*containers: Container, **kwargs: Any) -> Pod:
    return Pod(
        "foo",
        containers or (Container("bar", "busybox:1"),),
        namespace="new",
        source="test",
        uid=UID,
        **kwargs,
    )


@pytest.fixture
def root(tmp_path: Path) -> str:
    return str(tmp_path / "root")


def run(pods: list[Pod], fake: FakeRuntime, root: str, now: float, **options: Any) -> SyncResult:
    return sync(
        pods,
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=root, **options),
        now=now,
        clock=lambda: now,
    )


def engine_records(fake: FakeRuntime) -> dict[str, str]:
    """The stop records in the engine, by container id."""
    return stop_records(records_of(fake.volumes))


def observed(fake: FakeRuntime, root: str, container: str) -> list[ObservedContainer]:
    """The instances of one app container of the pod, as ``observe`` reports them."""
    seen = observe(fake, root).containers
    return [c for c in seen if c.labels.get("io.podsync.container.name") == container]


def test_replacement_whose_create_failed_runs_on_the_next_sync(root):
    """Never pod, rebuilt because its network image changed; the app container's
    replacement cannot be created. The old instance, which podsync stopped (and which
    exited 0 on SIGTERM), is reported as stopped by podsync, and the next sync creates
    the container instead of declaring the pod completed and stopping its network."""
    clock = Clock()
    fake = FakeRuntime(images=["busybox:1", PAUSE, "pause:2"], clock=clock)
    pod = foo_pod(restart_policy=RestartPolicy.NEVER)
    assert run([pod], fake, root, NOW).ok
    fake.fail("create", match="k8s_bar", times=1)
    clock.now = NOW + 10

    rebuild = run([pod], fake, root, NOW + 10, network_image="pause:2")

    assert [ActionStatus.DONE] * 3 + [ActionStatus.FAILED] == [
        r.status for r in rebuild.apply_result.results
    ]
    (old,) = observed(fake, root, "bar")
    assert (False, 0, "pod-rebuild") == (old.running, old.exit_code, old.stopped_by_podsync)

    after = run([pod], fake, root, NOW + 20, network_image="pause:2")

    assert after.ok
    (create,) = after.plan.pods[0].actions
    assert isinstance(create, Create)
    assert ("bar", Reason.NOT_REPLACED) == (create.container, create.reason)
    running = [c.labels["io.podsync.container.name"] for c in fake.containers if c.running]
    assert ["bar", "net"] == sorted(running)


def test_post_start_failure_is_not_a_success(root):
    """OnFailure: a container stopped because its postStart handler failed exits 0 on
    that stop, and is still restarted: the stop is recorded as a failure."""
    hook = Lifecycle(post_start=Handler(exec_command=("warm-up",)))
    pod = foo_pod(
        Container("bar", "busybox:1", lifecycle=hook), restart_policy=RestartPolicy.ON_FAILURE
    )
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=Clock(), stop_exit_code=0)
    fake.set_exec_result(["warm-up"], 1)

    first = run([pod], fake, root, NOW)

    assert not first.ok
    (old,) = observed(fake, root, "bar")
    assert (0, "post-start-failed") == (old.exit_code, old.stopped_by_podsync)

    second = run([pod], fake, root, NOW + 1)

    (create,) = second.plan.pods[0].actions
    assert isinstance(create, Create)
    assert (Reason.EXITED, "1") == (create.reason, create.spec.labels["io.podsync.restart-count"])
    assert "stopped by podsync: postStart handler failed" in create.message


def test_repeated_liveness_kills_back_off_and_count_as_failures(root):
    """OnFailure, a liveness probe that keeps failing, a process that exits 0 on SIGTERM:
    the first kill restarts at once; the second stops the container and waits out the
    back-off; after it the container is restarted (the kill was a failure, not a
    success). The older killed instance, once collected, takes its record with it."""
    probe = Probe(Handler(exec_command=("alive",)), failure_threshold=1)
    pod = foo_pod(
        Container("bar", "busybox:1", liveness_probe=probe), restart_policy=RestartPolicy.ON_FAILURE
    )
    clock = Clock()
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=clock, stop_exit_code=0)
    gc = GCPolicy(max_per_container=1, min_age=0)
    assert run([pod], fake, root, NOW, gc=gc).ok
    fake.set_exec_result(["alive"], 1)

    clock.now = NOW + 100
    first = run([pod], fake, root, NOW + 100, gc=gc)
    clock.now = NOW + 200
    second = run([pod], fake, root, NOW + 200, gc=gc)

    assert [("Kill", Reason.UNHEALTHY), ("Create", Reason.UNHEALTHY)] == [
        (type(a).__name__, a.reason) for a in first.plan.pods[0].actions
    ]
    kill, wait, remove = second.plan.pods[0].actions
    assert isinstance(kill, Kill)
    assert isinstance(wait, Wait)
    assert (Reason.BACK_OFF, 10.0) == (wait.reason, wait.seconds)
    assert isinstance(remove, Remove)
    stopped = [c for c in observed(fake, root, "bar") if not c.running]
    assert [(kill.id, "unhealthy", 0)] == [
        (c.id, c.stopped_by_podsync, c.exit_code) for c in stopped
    ]
    # The record is in the engine (a labelled volume), the root directory untouched.
    assert {kill.id: "unhealthy"} == engine_records(fake)
    assert not os.path.exists(root)

    fake.set_exec_result(["alive"], 0)
    third = run([pod], fake, root, NOW + 211, gc=gc)

    assert third.ok
    (create,) = third.plan.pods[0].actions
    assert (Reason.UNHEALTHY, "2") == (
        create.reason,
        create.spec.labels["io.podsync.restart-count"],
    )


def test_a_stop_that_cannot_be_recorded_is_not_made(root):
    """When the stop record cannot be written, the kill fails and the container keeps
    running: a stop without its record could leave the pod down for good."""
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=Clock())
    pod = foo_pod()
    assert run([pod], fake, root, NOW).ok
    (old,) = observed(fake, root, "bar")
    fake.fail("create_volume", match="podsync-stopped_")
    fake.clear_calls()

    result = run([foo_pod(Container("bar", "busybox:2"))], fake, root, NOW + 1)

    kill = result.apply_result.results[1]
    assert isinstance(kill.action, Kill)
    assert ActionStatus.FAILED == kill.status
    assert "stop record" in kill.error, kill.error
    assert "stop" not in fake.call_names()
    assert fake.container(old.id).running


def test_observe_reports_records_of_stopped_owned_containers_only(root):
    """observe reports a record for an owned container that does not run; a record of a
    running container, or of a container that is gone, changes nothing. A record an
    earlier podsync wrote under the root directory is still read."""
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=Clock())
    pod = foo_pod(Container("bar", "busybox:1"), Container("baz", "busybox:1"))
    assert run([pod], fake, root, NOW).ok
    (bar,) = observed(fake, root, "bar")
    (baz,) = observed(fake, root, "baz")
    write_stop_record(fake, UID, bar.id, "spec-changed")
    write_stop_record(fake, UID, "gone", "spec-changed")
    write_host_record(root, UID, baz.id, "pod-rebuild")

    assert [""] == [c.stopped_by_podsync for c in observed(fake, root, "bar")]

    fake.exit(bar.id, 0)
    fake.exit(baz.id, 0)

    assert ["spec-changed"] == [c.stopped_by_podsync for c in observed(fake, root, "bar")]
    assert ["pod-rebuild"] == [c.stopped_by_podsync for c in observed(fake, root, "baz")]


def test_a_running_container_is_recorded_before_it_is_stopped(root):
    """The record is written before the stop: when the stop then fails, the record is
    there, and harmless while the container runs. A later stop for another reason
    replaces it."""
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=Clock())
    assert run([foo_pod()], fake, root, NOW).ok
    (bar,) = observed(fake, root, "bar")
    fake.fail("stop", times=1)

    result = run([foo_pod(Container("bar", "busybox:2"))], fake, root, NOW + 1)

    assert not result.ok
    assert {bar.id: "spec-changed"} == engine_records(fake)
    assert [(True, "")] == [
        (c.running, c.stopped_by_podsync) for c in observed(fake, root, "bar") if c.id == bar.id
    ]
    write_stop_record(fake, UID, bar.id, "unhealthy")
    assert {bar.id: "unhealthy"} == engine_records(fake)


def test_a_removed_container_takes_its_record_with_it(root):
    """Removed, a container podsync stopped leaves no record behind: when its pod goes,
    nothing of it is left in the engine."""
    fake = FakeRuntime(images=["busybox:1", PAUSE, "busybox:2"], clock=Clock())
    assert run([foo_pod()], fake, root, NOW).ok
    (bar,) = observed(fake, root, "bar")
    assert run([foo_pod(Container("bar", "busybox:2"))], fake, root, NOW + 1).ok
    assert {bar.id: "spec-changed"} == engine_records(fake)

    assert run([], fake, root, NOW + 2, gc=GCPolicy(min_age=0)).ok

    assert ([], []) == (fake.containers, fake.volumes)


@pytest.mark.parametrize(
    ("exit_code", "stopped_by", "finished", "expected"),
    [
        # podsync stopped it to rebuild the pod; the process was killed (137): not a
        # failure of a Never pod, a replacement is coming.
        (137, "pod-rebuild", True, ("pending", "bar stopped by podsync (pod-rebuild)")),
        # ... and exited 0 on SIGTERM: not a completion either.
        (0, "spec-changed", True, ("pending", "bar stopped by podsync (spec-changed)")),
        # Killed for its liveness probe under Never: the pod has failed.
        (0, "unhealthy", True, ("failed", "bar stopped by podsync: liveness probe failed")),
        # Created, never started: not a run, it is started again.
        (127, "", False, ("pending", "bar did not start")),
    ],
)
def test_wait_judges_the_instance_the_planner_judges(exit_code, stopped_by, finished, expected):
    """``apply --wait`` reports a Never pod whose container podsync stopped, or whose
    container never started, as pending (the plan starts it again), not as failed or
    completed; a container killed for a failure fails the pod."""
    from podsync.cli import _wait

    pod = foo_pod(restart_policy=RestartPolicy.NEVER)
    fake = FakeRuntime(images=["busybox:1", PAUSE], clock=Clock())
    options = PlanOptions(scope=NODE_SCOPE, root_dir="/nonexistent")
    assert sync([pod], fake, options=options, now=NOW, clock=fake.clock).ok
    bar = next(c for c in fake.containers if c.labels["io.podsync.container.name"] == "bar")
    fake.add_container(
        attrs.evolve(
            bar,
            running=False,
            exit_code=exit_code,
            finished_at=NOW + 1 if finished else None,
            stopped_by_podsync=stopped_by,
        )
    )
    seen = fake.containers
    the_plan = plan([pod], seen, now=NOW + 2, images=fake.images)

    (status,) = _wait.pod_statuses([pod], seen, the_plan, {}, now=NOW + 2)

    assert expected[0] == status.state, status.message
    assert expected[1] in status.message, status.message
