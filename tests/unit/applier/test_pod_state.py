"""What podsync keeps of a pod in the engine (issue 18), on FakeRuntime: the pod's
state volume (its containers' termination-message files) and its containers' records
(``podsync.spec._records``), and how they go with the pod - never anything under the root
directory, and never a volume podsync does not own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podsync import (
    Container,
    Handler,
    ObservedVolume,
    Pod,
    Probe,
    RemoveVolume,
    RestartPolicy,
    SyncResult,
    TerminationMessagePolicy,
    pod_status,
    sync,
)
from podsync.actions._actions import Reason
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.status import termination_inputs
from podsync.testing import FakeClock, FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"


def job(**fields: Any) -> Pod:
    """A run-to-completion pod whose container says why it ended."""
    return Pod(
        "job",
        (Container("work", "busybox", termination_message_path="/dev/termination-log", **fields),),
        namespace="default",
        source="file",
        uid="job-uid",
        restart_policy=RestartPolicy.NEVER,
    )


def probed() -> Pod:
    probe = Probe(Handler(exec_command=("alive",)), failure_threshold=3, period_seconds=10)
    return Pod(
        "web",
        (Container("app", "busybox", liveness_probe=probe),),
        namespace="default",
        source="file",
        uid="web-uid",
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "root"


@pytest.fixture
def fake() -> FakeRuntime:
    return FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW, step=0))


def run(pods: list[Pod], fake: FakeRuntime, root: Path, **options: Any) -> SyncResult:
    now = fake.clock()
    return sync(
        pods,
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(root), **options),
        now=now,
        clock=lambda: now,
    )


def app_of(fake: FakeRuntime, name: str) -> str:
    return next(c.id for c in fake.containers if f"k8s_{name}." in c.name)


def test_the_termination_message_is_read_through_the_engine(fake, root):
    """The message the process wrote into its termination-message file is read from
    the exited container - its last 4096 bytes, as the kubelet's - and is the
    container's message in the pod's status."""
    pod = job()
    assert run([pod], fake, root).ok
    work = app_of(fake, "work")
    fake.write_container_file(work, "/dev/termination-log", b"x" * 5000 + b"done: 3 rows")
    fake.exit(work, 0)

    messages, tails = termination_inputs(fake, [pod], fake.containers)

    assert ({work: "x" * (4096 - 12) + "done: 3 rows"}, {}) == (messages, tails)
    status = pod_status(pod, fake.containers, termination_messages=messages)
    assert messages[work] == status.containers[0].termination_message
    assert not root.exists()


def test_fallback_to_logs_reads_the_log_tail_when_the_file_is_empty(fake, root):
    """FallbackToLogsOnError: an empty file and a failure: the log's tail is the message."""
    pod = job(termination_message_policy=TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR)
    assert run([pod], fake, root).ok
    work = app_of(fake, "work")
    fake.write_log(work, "no database\n")
    fake.exit(work, 1)

    messages, tails = termination_inputs(fake, [pod], fake.containers)

    assert ({work: ""}, {work: "no database\n"}) == (messages, tails)


def test_a_pod_that_goes_takes_its_state_and_records_with_it(fake, root):
    """A pod with a termination message and a probe that podsync stopped (a probe
    record, a stop record, its state volume): once the pod is no longer desired and its
    containers are gone, its volumes are removed too - a volume someone else made, or a
    claim's, is left alone."""
    pods = [job(), probed()]
    assert run(pods, fake, root).ok
    fake.set_exec_result(["alive"], 1)
    fake.clock.advance(10)
    assert run(pods, fake, root).ok  # the probe's record
    fake.exit(app_of(fake, "work"), 0)
    fake.add_volume(ObservedVolume("theirs"))
    fake.add_volume(ObservedVolume("claim", {"io.podsync.volume.kind": "claim"}))
    kinds = {v.labels.get("io.podsync.volume.kind") for v in fake.volumes}
    assert {"pod-state", "probe-record", "claim", None} == kinds

    fake.clock.advance(10)
    gone = run([], fake, root, gc=GCPolicy(min_age=0))

    assert gone.ok
    removals = [a for a in gone.plan.actions if isinstance(a, RemoveVolume)]
    assert {Reason.ORPHANED_POD_VOLUME, Reason.ORPHANED_RECORD} == {a.reason for a in removals}
    assert [] == fake.containers
    assert ["claim", "theirs"] == [v.name for v in fake.volumes]
    assert not root.exists()


def test_the_state_volume_stays_while_a_container_of_the_pod_is_left(fake, root):
    """An exited container younger than --min-age is kept, and its message with it: the
    state volume is not removed before the last container of the pod is gone."""
    assert run([job()], fake, root).ok
    fake.exit(app_of(fake, "work"), 0)

    kept = run([], fake, root, gc=GCPolicy(min_age=3600))

    assert not [a for a in kept.plan.actions if isinstance(a, RemoveVolume)]
    assert ["podsync-state_job-uid"] == [v.name for v in fake.volumes]


def test_a_steady_sync_makes_one_call(fake, root):
    """Everything runs, no probes: one list call, nothing read for records."""
    pod = Pod("web", (Container("app", "busybox", termination_message_path="/t"),), uid="u1")
    assert run([pod], fake, root).ok
    fake.clear_calls()

    assert not run([pod], fake, root).plan.has_changes

    assert ["list"] == fake.call_names()
