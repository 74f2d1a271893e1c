"""sync and observe against FakeRuntime: the seed's scenarios as call sequences
(reference §4.1), convergence, fault isolation and liveness.

The seed's FakeDockerClient recorded ``list`` / ``inspect_container`` / ``create`` /
``start`` / ``stop``; podsync observes with one ``list`` call (everything the planner
needs is in the list and the labels) plus ``list_images`` when the plan creates
something (for the pull decision), so each expected sequence below is the seed's with
its lookups replaced by those. Where
podsync fixes the seed (#14, #15: only the changed container is replaced, the network
container stays), the docstring says so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

import podsync
from podsync import (
    Container,
    EventKind,
    Handler,
    Lifecycle,
    ObservedContainer,
    ObservedImage,
    Pod,
    Port,
    Probe,
    PullPolicy,
    RuntimeCallError,
    SyncResult,
    Volume,
    VolumeMount,
    observe,
    sync,
)
from podsync.actions._actions import Reason
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.spec._volumes import VolumeFileMount
from podsync.testing import MUTATING_CALL_NAMES, FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
BAR = Container("bar", "busybox")


class Clock:
    """Ticks one second per reading, starting a while before NOW."""

    def __init__(self, start: float = NOW - 500) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def foo_pod(*containers: Container, **kwargs: Any) -> Pod:
    """The seed's standard pod: foo in namespace new from source test, uid 12345678,
    under the seed's pull rule: a container that names no pull policy pulls only an
    absent image (the modern default is tests/unit/loop/test_pull_back_off.py's and
    tests/unit/planner/test_plan_pull_policy.py's subject)."""
    seeded = tuple(
        c if c.image_pull_policy else attrs.evolve(c, image_pull_policy=PullPolicy.IF_NOT_PRESENT)
        for c in containers or (BAR,)
    )
    return Pod("foo", seeded, namespace="new", source="test", uid="12345678", **kwargs)


def legacy(cid: str, name: str, *, image: str = "busybox", **kwargs: Any) -> ObservedContainer:
    """A running container as a 2014 kubelet left it: a k8s_ name and no labels."""
    kwargs.setdefault("running", True)
    return ObservedContainer(id=cid, name=name, image=image, **kwargs)


LEGACY_NET = legacy("9876", "k8s_net.0_foo.new.test_12345678_00000000", image=PAUSE)


def engine(
    *containers: ObservedContainer,
    images: Sequence[str | ObservedImage] = ("busybox", PAUSE),
    **kwargs: Any,
) -> FakeRuntime:
    return FakeRuntime(containers=containers, images=images, clock=Clock(), **kwargs)


@pytest.fixture
def root(tmp_path: Path) -> str:
    return str(tmp_path / "root")


def run(
    desired: Sequence[Pod], rt: FakeRuntime, root: str, *, now: float = NOW, **options: Any
) -> SyncResult:
    return sync(
        desired,
        rt,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=root, **options),
        now=now,
        clock=lambda: now,
    )


def mutations(rt: FakeRuntime) -> list[str]:
    return [name for name in rt.call_names() if name in MUTATING_CALL_NAMES]


def stopped(rt: FakeRuntime) -> set[str]:
    return {call.args[0] for call in rt.calls if call.name == "stop"}


# --- the seed's scenarios (reference §4.1) -------------------------------------------


def test_sync_pods_does_nothing(root):
    """#3 TestSyncPodsDoesNothing: a pod whose containers run unchanged costs one list
    call and nothing else (images are listed only when something is to be created)."""
    rt = engine(legacy("1234", "k8s_bar.2a1b3c4d_foo.new.test_12345678_00000000"), LEGACY_NET)

    result = run([foo_pod()], rt, root, adopt_2014_containers=True)

    assert ["list"] == rt.call_names()
    assert result.ok
    assert () == result.apply_result.results


def test_sync_pods_with_termination_log(root):
    """#4 TestSyncPodsWithTerminationLog: net and bar are created and started; bar's
    termination-message file is written into the pod's state volume (made, labelled, at
    net's create, which mounts it) through net, empty and writable by any user, before
    bar's create binds it. Nothing is written under the root directory: the engine
    holds it all."""
    pod = foo_pod(Container("bar", "busybox", termination_message_path="/dev/somepath"))
    rt = engine()

    result = run([pod], rt, root)

    assert ["list", "list_images", "create", "start", "write_volume", "create", "start"] == (
        rt.call_names()
    )
    bar = rt.spec(rt.containers[0].id)
    assert bar is not None
    entry = f"termination/{bar.name}"
    mounted = VolumeFileMount(
        "podsync-state_12345678", entry, "/dev/somepath", image=PAUSE, through=bar.join
    )
    assert (mounted,) == bar.file_mounts
    written = rt.volume_files("podsync-state_12345678")[entry]
    assert (b"", 0o666) == (written.data, written.mode)
    assert "pod-state" == rt.volumes[0].labels["io.podsync.volume.kind"]
    assert not os.path.exists(root)
    assert result.ok


def test_sync_pods_creates_net_and_container(root):
    """#5 TestSyncPodsCreatesNetAndContainer: images present, so no pull; net runs the
    custom network image and both names have the seed's shape."""
    rt = engine(images=("busybox", "custom_image_name"))

    run([foo_pod()], rt, root, network_image="custom_image_name")

    assert ["list", "list_images", "create", "start", "write_volume", "create", "start"] == (
        rt.call_names()
    )
    net, bar = reversed(rt.containers)
    assert "custom_image_name" == net.image
    assert re.fullmatch(r"k8s_net\.[a-f0-9]+_foo\.new\.test_12345678_00000000", net.name)
    assert re.fullmatch(r"k8s_bar\.[a-f0-9]+_foo\.new\.test_12345678_00000000", bar.name)


def test_sync_pods_creates_net_and_container_pulls_image(root):
    """#6 TestSyncPodsCreatesNetAndContainerPullsImage: nothing present: both images
    are pulled (in parallel, so in any order) before any create."""
    rt = engine(images=())

    run([foo_pod()], rt, root, network_image="custom_image_name")

    pulls = ["pull", "pull"]
    assert [
        "list",
        "list_images",
        *pulls,
        "create",
        "start",
        "write_volume",
        "create",
        "start",
    ] == (rt.call_names())
    assert ["busybox", "custom_image_name"] == sorted(c.args[0] for c in rt.calls[2:4])


def test_sync_pods_with_net_creates_container(root):
    """#7 TestSyncPodsWithNetCreatesContainer: net runs: only bar is created, in it."""
    rt = engine(LEGACY_NET)

    run([foo_pod()], rt, root, adopt_2014_containers=True)

    # Beside a 2014 network container, bar's file goes into a state volume created for
    # it, through a container made for the write (the volume list is read first).
    helper = ["list_volumes", "create_volume", "write_volume"]
    assert ["list", "list_images", *helper, "create", "start"] == rt.call_names()
    bar = rt.calls[5].args[0]
    assert "k8s_net.0_foo.new.test_12345678_00000000" == bar.join


def test_sync_pods_deletes_with_no_net_container(root):
    """#9 TestSyncPodsDeletesWithNoNetContainer: bar runs without net: stop bar, create
    and start net, create and start bar."""
    rt = engine(legacy("1234", "k8s_bar.0_foo.new.test_12345678_00000000"))

    run([foo_pod()], rt, root, adopt_2014_containers=True)

    # (The stop is recorded first: a stop record in the engine, see podsync.spec._records.)
    assert [
        "list",
        "list_images",
        "remove_volume",
        "create_volume",
        "stop",
        "create",
        "start",
        "write_volume",
        "create",
        "start",
    ] == rt.call_names()
    assert {"1234"} == stopped(rt)


@pytest.mark.parametrize(
    ("ready", "expected_calls"),
    [
        (False, ["list"]),
        (True, ["list", "stop", "stop"]),
    ],
)
def test_sync_pods_deletes_when_sources_are_ready(root, ready, expected_calls):
    """#10 TestSyncPodsDeletesWhenSourcesAreReady: containers of undesired pods are
    stopped only once deletions are allowed."""
    rt = engine(
        legacy("1234", "k8s_foo.0_bar.new.test_12345678_00000042"),
        legacy("9876", "k8s_net.0_foo.new.test_12345678_00000042"),
    )

    run([], rt, root, allow_deletions=ready, adopt_2014_containers=True)

    assert expected_calls == rt.call_names()
    assert ({"1234", "9876"} if ready else set()) == stopped(rt)


def test_sync_pods_deletes_when_container_source_ready(root):
    """#11 TestSyncPodsDeletesWhenContainerSourceReady (post-seed): only the pods of the
    ready source are stopped."""
    rt = engine(
        legacy("7492", "k8s_boo.0_bar.default.testsource_12345678_00000042"),
        legacy("3542", "k8s_net.0_bar.default.testsource_12345678_00000042"),
        legacy("1234", "k8s_foo.0_bar.default.othersource_12345678_00000042"),
        legacy("9876", "k8s_net.0_bar.default.othersource_12345678_00000042"),
    )

    run([], rt, root, ready_sources=frozenset({"testsource"}), adopt_2014_containers=True)

    assert ["list", "stop", "stop"] == rt.call_names()
    assert {"7492", "3542"} == stopped(rt)


def test_sync_pods_deletes(root):
    """#12 TestSyncPodsDeletes: owned containers of undesired pods are stopped; the
    foreign container named foo is untouched."""
    rt = engine(
        legacy("1234", "k8s_foo.0_bar.new.test_12345678_00000042"),
        legacy("9876", "k8s_net.0_foo.new.test_12345678_00000042"),
        legacy("4567", "foo"),
    )

    run([], rt, root, adopt_2014_containers=True)

    assert ["list", "stop", "stop"] == rt.call_names()
    assert {"1234", "9876"} == stopped(rt)
    assert rt.container("4567").running


def test_sync_pod_deletes_duplicate(root):
    """#13 TestSyncPodDeletesDuplicate: one of the two foo instances is stopped; the
    other pod's container is untouched."""
    pod = Pod("bar", (Container("foo", "busybox"),), namespace="new", source="test", uid="12345678")
    rt = engine(
        legacy("1234", "k8s_foo.0_bar.new.test_12345678_00001111"),
        legacy("9876", "k8s_net.0_bar.new.test_12345678_00002222"),
        legacy("4567", "k8s_foo.0_bar.new.test_12345678_00003333"),
        legacy("2304", "k8s_baz.0_fiz.new.test_6_00000042"),
    )

    run([pod], rt, root, allow_deletions=False, adopt_2014_containers=True)

    assert ["list", "remove_volume", "create_volume", "stop"] == rt.call_names()
    assert 1 == len(stopped(rt) & {"1234", "4567"})
    assert rt.container("2304").running


def test_sync_pod_bad_hash(root):
    """#14 TestSyncPodBadHash, fixed: a changed spec replaces that container only - stop
    bar, create bar, start bar; the network container keeps running (the seed stopped
    it too: ["list","stop","stop","list","create","start"])."""
    rt = engine(images=("busybox", "busybox:2", PAUSE))
    run([foo_pod()], rt, root)
    net = next(c for c in rt.containers if "_net." in c.name)
    old_bar = next(c for c in rt.containers if "_bar." in c.name)
    rt.clear_calls()

    run([foo_pod(Container("bar", "busybox:2"))], rt, root, now=NOW + 10)

    recorded = ["remove_volume", "create_volume"]  # the stop record, before the stop
    assert ["list", "list_images", *recorded, "stop", "write_volume", "create", "start"] == (
        rt.call_names()
    )
    assert {old_bar.id} == stopped(rt)
    assert rt.container(net.id).running
    assert net.name == rt.calls[6].args[0].join


def test_sync_pod_bad_hash_legacy_container(root):
    """#14 on a 2014 kubelet's container (hash 0x1234 in its name): the image decides."""
    rt = engine(
        legacy("1234", "k8s_bar.1234_foo.new.test_12345678_00000042", image="busybox:old"),
        LEGACY_NET,
    )

    run([foo_pod()], rt, root, adopt_2014_containers=True)

    recorded = ["remove_volume", "create_volume"]  # the stop record, before the stop
    # Beside a 2014 network container: bar's state volume, then its file through a helper.
    state = ["create_volume", "write_volume"]
    assert [
        "list",
        "list_images",
        "list_volumes",
        *recorded,
        "stop",
        *state,
        "create",
        "start",
    ] == (rt.call_names())
    assert {"1234"} == stopped(rt)


def test_sync_pod_unhealthy(root):
    """#15 TestSyncPodUnhealthy, fixed: the liveness probe (exec) fails, so bar is
    replaced - and only bar (the seed also stopped net)."""
    probe = Probe(Handler(exec_command=("true",)), failure_threshold=1)
    pod = foo_pod(Container("bar", "busybox", liveness_probe=probe))
    rt = engine(legacy("1234", "k8s_bar.0_foo.new.test_12345678_00000042", created=0.0), LEGACY_NET)
    rt.set_exec_result(["true"], 1)

    result = run([pod], rt, root, adopt_2014_containers=True)

    # The probe records are listed and the probe runs first; the plan then creates, so
    # the images are listed too; the probe's new record, then the stop's, are written.
    assert [
        "list",
        "list_volumes",
        "exec",
        "list_images",
        "create_volume",
        "remove_volume",
        "create_volume",
        "stop",
        "create_volume",
        "write_volume",
        "create",
        "start",
    ] == rt.call_names()
    assert {"1234"} == stopped(rt)
    assert {"1234": False} == result.liveness


def test_sync_pods_with_pull_policy(root):
    """#17 TestSyncPodsWithPullPolicy: Always pulls, IfNotPresent pulls when absent (an
    explicit IfNotPresent on a present :latest is honoured: the modern kubelet's rule),
    Never never pulls; the Never container whose image is absent waits (fix: the seed
    created it and the engine refused)."""
    pod = foo_pod(
        Container("bar", "pull_always_image", image_pull_policy=PullPolicy.ALWAYS),
        Container("bar1", "pull_never_image", image_pull_policy=PullPolicy.NEVER),
        Container("bar2", "pull_if_not_present_image", image_pull_policy=PullPolicy.IF_NOT_PRESENT),
        Container("bar3", "existing_one", image_pull_policy=PullPolicy.IF_NOT_PRESENT),
        Container("bar4", "want:latest", image_pull_policy=PullPolicy.IF_NOT_PRESENT),
    )
    rt = engine(images=("existing_one", "want:latest"))

    result = run([pod], rt, root, network_image="custom_image_name")

    pulled = sorted(c.args[0] for c in rt.calls if c.name == "pull")
    assert [
        "custom_image_name",
        "pull_always_image",
        "pull_if_not_present_image",
    ] == pulled
    created = [
        c.args[0].labels["io.podsync.container.name"] for c in rt.calls if c.name == "create"
    ]
    assert ["net", "bar", "bar2", "bar3", "bar4"] == created
    assert result.ok


# --- podsync's own guarantees ----------------------------------------------------------


def rich_pod() -> Pod:
    return Pod(
        "web",
        (
            Container(
                "app",
                "busybox",
                image_pull_policy=PullPolicy.IF_NOT_PRESENT,
                ports=(Port(80, 8080, name="http"),),
                volume_mounts=(VolumeMount("scratch", "/scratch"),),
                termination_message_path="/dev/termination-log",
            ),
            Container(
                "sidecar",
                "busybox",
                image_pull_policy=PullPolicy.IF_NOT_PRESENT,
                command=("sleep", "1000"),
            ),
        ),
        volumes=(Volume("scratch"),),
    )


def test_sync_converges(root):
    """A second sync right after the first makes no mutating call."""
    rt = engine()
    first = run([rich_pod(), foo_pod()], rt, root)
    rt.clear_calls()

    second = run([rich_pod(), foo_pod()], rt, root, now=NOW + 1)

    assert first.ok
    # rich_pod has an emptyDir: its volume first (its state volume, where the
    # termination-message files are, is made at its network container's create).
    assert 6 == len(first.apply_result.results)
    assert [] == mutations(rt)
    assert not second.plan.has_changes


def test_fault_in_one_pod_does_not_stop_the_others(root):
    """A failing create fails its pod (the rest of it is skipped); the other pod is
    done; once the fault is gone the next sync converges."""
    alpha = Pod("alpha", (Container("c", "busybox", image_pull_policy=PullPolicy.IF_NOT_PRESENT),))
    beta = Pod("beta", (Container("c", "busybox", image_pull_policy=PullPolicy.IF_NOT_PRESENT),))
    rt = engine()
    rt.fail("create", match="alpha")

    first = run([alpha, beta], rt, root)
    rt.clear_faults()
    second = run([alpha, beta], rt, root, now=NOW + 1)
    rt.clear_calls()
    third = run([alpha, beta], rt, root, now=NOW + 2)

    assert ("default/alpha",) == first.apply_result.failed_pods
    assert [("failed", "net"), ("skipped", "c"), ("done", "net"), ("done", "c")] == [
        (r.status.value, r.action.container)  # type: ignore[union-attr]
        for r in first.apply_result.results
    ]
    assert second.ok
    assert 2 == len(second.apply_result.results)
    assert third.ok
    assert [] == mutations(rt)


def test_undesired_pod_is_stopped_removed_and_its_volume_removed(root, tmp_path):
    """A pod that leaves the desired state goes entirely: containers stopped and
    removed, then its emptyDir volume; nothing of it is under the root directory."""
    pod = Pod(
        "web",
        (Container("app", "busybox", volume_mounts=(VolumeMount("v", "/v"),)),),
        volumes=(Volume("v"),),
    )
    rt = engine()
    run([pod], rt, root)
    assert frozenset() == observe(rt, root).pod_dirs
    assert 2 == len(rt.volumes)  # its emptyDir's and its state volume
    rt.clear_calls()

    result = run([], rt, root, gc=GCPolicy(min_age=0))

    # Each removal takes its container's stop record with it (one call, whether there
    # is one or not); the volumes are listed for the pod's engine state, and its
    # emptyDir's volume and its state volume go last.
    assert [
        "list",
        "list_volumes",
        "stop",
        "stop",
        "remove",
        "remove_volume",
        "remove",
        "remove_volume",
        "remove_volume",
        "remove_volume",
    ] == rt.call_names()
    assert result.ok
    assert [] == rt.containers
    assert [] == rt.volumes


def test_observe():
    """observe makes the two list calls and reads the pod directories."""
    rt = engine(LEGACY_NET, images=(ObservedImage("sha256:1", ("busybox:latest",)),))

    obs = observe(rt, "/nonexistent/podsync-root")

    assert (LEGACY_NET,) == obs.containers
    assert (ObservedImage("sha256:1", ("busybox:latest",)),) == obs.images
    assert frozenset() == obs.pod_dirs
    assert ["list", "list_images"] == rt.call_names()


def test_observation_failure_raises_and_changes_nothing(root):
    """Without an observation there is no plan: sync raises the runtime's error."""
    rt = engine()
    rt.fail("list_images", error="engine on fire")

    with pytest.raises(RuntimeCallError, match="engine on fire"):
        run([foo_pod()], rt, root)

    assert [] == mutations(rt)


def test_failed_probe_is_an_event(root):
    """sync reports a failed liveness probe as an ``unhealthy`` event, and a probe it
    could not run as ``probe-error`` (that container is kept)."""
    probe = Probe(Handler(exec_command=("check",)), failure_threshold=1)
    pod = foo_pod(Container("bar", "busybox", liveness_probe=probe))
    rt = engine()
    run([pod], rt, root)
    events: list[podsync.Event] = []
    rt.set_exec_result(["check"], 2, b"down")

    run_events = sync(
        [pod],
        rt,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=root),
        on_event=events.append,
        clock=lambda: NOW + 1,
    )
    rt.fail("exec")
    kept = sync(
        [pod],
        rt,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=root),
        on_event=events.append,
        clock=lambda: NOW + 2,
    )

    assert [
        (EventKind.UNHEALTHY, "new/foo", "bar"),
        (EventKind.STOPPING, "new/foo", "bar"),
        (EventKind.CREATED, "new/foo", "bar"),
        (EventKind.STARTED, "new/foo", "bar"),
        (EventKind.PROBE_ERROR, "new/foo", "bar"),
    ] == [(e.kind, e.pod, e.container) for e in events]
    assert "liveness probe failed (1/1): exec ['check'] exited with code 2: down" == (
        events[0].message
    )
    assert [NOW + 1] * 4 + [NOW + 2] == [e.time for e in events]
    unhealthy, stopping, probe_error = events[0], events[1], events[4]
    assert (pod.uid, stopping.container_id, Reason.UNHEALTHY) == (
        unhealthy.pod_uid,
        unhealthy.container_id,
        unhealthy.reason,
    )
    assert (pod.uid, events[3].container_id, None) == (
        probe_error.pod_uid,
        probe_error.container_id,
        probe_error.reason,
    )
    assert run_events.ok
    assert not kept.plan.has_changes


def test_probe_false_skips_probes(root):
    """probe=False makes no exec call and leaves every running container as it is."""
    pod = foo_pod(Container("bar", "busybox", liveness_probe=Probe(Handler(exec_command=("x",)))))
    rt = engine()
    run([pod], rt, root)
    rt.set_exec_result(["x"], 1)
    rt.clear_calls()

    sync(
        [pod],
        rt,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=root),
        now=NOW + 1,
        probe=False,
        clock=rt.clock,
    )

    assert ["list"] == rt.call_names()


def test_default_runtime_is_docker_built_lazily_and_closed(root, monkeypatch):
    """Without a runtime, sync builds podsync.docker.DockerRuntime() and closes it."""
    closed = []

    class Stub(FakeRuntime):
        def close(self) -> None:
            closed.append(True)

    monkeypatch.setattr(
        "podsync.runtime.docker._runtime.DockerRuntime", lambda: Stub(images=["busybox", PAUSE])
    )

    result = sync(
        [foo_pod()], options=PlanOptions(scope=NODE_SCOPE, root_dir=root), clock=lambda: NOW
    )

    assert result.ok
    assert [True] == closed


def test_the_runtime_sync_built_is_closed_when_observing_fails(root, monkeypatch):
    """sync closes the runtime it built even when the engine fails the sync."""
    built = FakeRuntime()
    built.fail("list", error="engine on fire")
    monkeypatch.setattr("podsync.runtime.docker._runtime.DockerRuntime", lambda: built)

    with pytest.raises(RuntimeCallError, match="engine on fire"):
        sync([foo_pod()], options=PlanOptions(scope=NODE_SCOPE, root_dir=root), clock=lambda: NOW)

    assert 1 == built.closes


def test_a_runtime_passed_in_is_not_closed(root):
    """sync closes only the runtime it built."""
    closed = []

    class Stub(FakeRuntime):
        def close(self) -> None:
            closed.append(True)

    sync([], Stub(), options=PlanOptions(scope=NODE_SCOPE, root_dir=root), clock=lambda: NOW)

    assert [] == closed


@pytest.mark.parametrize("kwargs", [{"workers": 0}, {"hook_timeout": 0.0}, {"probe_timeout": -1.0}])
def test_bad_settings_are_refused_before_anything_happens(root, kwargs):
    """Bad workers or timeouts are programming errors: ValueError, no call made."""
    rt = engine()

    with pytest.raises(ValueError, match="must be"):
        sync(
            [foo_pod()], rt, options=PlanOptions(scope=NODE_SCOPE, root_dir=root), now=NOW, **kwargs
        )

    assert [] == rt.calls


def test_rejected_pods_are_in_the_plan(root):
    """A pod that is not admitted is reported in the plan; the sync is otherwise ok."""
    web = Pod("web", (Container("a", "busybox", ports=(Port(80, 80),)),))
    clash = Pod("clash", (Container("a", "busybox", ports=(Port(81, 80),)),))
    rt = engine()

    result = run([web, clash], rt, root)

    assert ["default/clash"] == [r.pod for r in result.plan.rejected]
    assert result.ok


def test_lifecycle_hooks_round_trip(root):
    """A container with both hooks is created with postStart run, and stopped with
    preStop run, in that order of calls."""
    hooks = Lifecycle(
        post_start=Handler(exec_command=("echo", "hi")),
        pre_stop=Handler(exec_command=("echo", "bye")),
    )
    pod = foo_pod(Container("bar", "busybox", lifecycle=hooks))
    rt = engine()

    run([pod], rt, root)
    run([], rt, root, now=NOW + 1)

    execs = [c.args[1] for c in rt.calls if c.name == "exec"]
    assert [("echo", "hi"), ("echo", "bye")] == execs


def test_never_pull_container_with_a_present_image_starts(root):
    """sync plans first without the image list; a container with pull policy Never whose
    image is present must still start (the image list is fetched for its decision)."""
    rt = FakeRuntime(images=["busybox:1.36", "registry.k8s.io/pause:3.10"], clock=lambda: 100.0)
    pod = Pod("web", (Container("app", "busybox:1.36", image_pull_policy=PullPolicy.NEVER),))

    result = sync(
        [pod], rt, options=PlanOptions(scope=NODE_SCOPE, root_dir=str(root)), clock=rt.clock
    )

    assert result.ok
    assert ["list", "list_images", "create", "start", "write_volume", "create", "start"] == (
        rt.call_names()
    )


def test_a_sync_that_creates_plans_once(root, monkeypatch):
    """A sync whose pods are missing from the engine needs the image list; it is fetched
    before planning, so the plan (the costly step at fleet scale: 10k pods) is made once
    rather than once without the images and again with them."""
    import podsync.loop._sync as sync_module

    made: list[int] = []
    real_plan = sync_module.plan

    def counting_plan(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(sync_module, "plan", counting_plan)
    rt = engine()

    result = run([foo_pod()], rt, root)

    assert result.ok
    assert ["list", "list_images", "create", "start", "write_volume", "create", "start"] == (
        rt.call_names()
    )
    assert 1 == len(made)


def test_a_sync_that_creates_pods_with_termination_messages_plans_once(root, monkeypatch):
    """A new pod's termination messages live in its state volume, which the plan creates
    (``CreateVolume``) unless the engine lists it: when creates are likely the volumes
    are listed with the images, before planning, so the plan is made once - not once
    without the list and again with it (two plans of 10,000 pods alive at once: the
    CLI's peak memory)."""
    import podsync.loop._sync as sync_module

    made: list[int] = []
    real_plan = sync_module.plan

    def counting_plan(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(sync_module, "plan", counting_plan)
    rt = engine()
    pod = foo_pod(Container("bar", "busybox", termination_message_path="/dev/termination-log"))

    result = run([pod], rt, root)

    assert result.ok
    assert ["list", "list_images", "create"] == rt.call_names()[:3]
    assert 1 == len(made)


def test_a_steady_sync_plans_once_without_the_image_list(root, monkeypatch):
    """In the steady state the image list is not fetched and the plan is made once."""
    import podsync.loop._sync as sync_module

    rt = engine()
    run([foo_pod()], rt, root)
    rt.calls.clear()
    made: list[int] = []
    real_plan = sync_module.plan

    def counting_plan(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(sync_module, "plan", counting_plan)

    result = run([foo_pod()], rt, root)

    assert not result.plan.has_changes
    assert ["list"] == rt.call_names()
    assert 1 == len(made)


# --- admission against the capacity, whatever else runs on the engine -----------------


@pytest.mark.parametrize(
    ("others", "policy", "image", "fits", "expected"),
    [
        (0, PullPolicy.NEVER, "busybox", False, Reason.OUT_OF_CPU),
        (4, PullPolicy.NEVER, "busybox", False, Reason.OUT_OF_CPU),
        (4, PullPolicy.NEVER, "absent:1", False, Reason.OUT_OF_CPU),
        (4, PullPolicy.IF_NOT_PRESENT, "busybox", False, Reason.OUT_OF_CPU),
        (4, PullPolicy.ALWAYS, "busybox", False, Reason.OUT_OF_CPU),
        (1, PullPolicy.NEVER, "busybox", False, Reason.OUT_OF_CPU),
        (4, PullPolicy.NEVER, "busybox", True, None),
        (0, PullPolicy.NEVER, "busybox", True, None),
    ],
    ids=[
        "empty-engine-never",
        "crowded-engine-never-image-present",
        "crowded-engine-never-image-absent",
        "crowded-engine-if-not-present",
        "crowded-engine-always",
        "one-other-pod-never",
        "crowded-engine-fits",
        "empty-engine-fits",
    ],
)
def test_admission_checks_the_capacity_whatever_else_runs(
    root: str,
    others: int,
    policy: PullPolicy,
    image: str,
    fits: bool,
    expected: Reason | None,
) -> None:
    """A pod that requests more CPU than the engine has is rejected ``OutOfcpu``
    (``predicateAdmitHandler.Admit``) and nothing of it is created, whether the engine is
    empty or runs other pods - the quickstart's demo beside the engine tests (issue 30).
    With more containers observed than the pod wants, sync plans first without the image
    list, where a create with pull policy ``Never`` shows as a wait for its image: the
    capacity must still be asked for. A pod that fits is created. (Unscoped syncs: each
    owns only the pods it is given, as two programs sharing an engine.)"""
    rt = engine(capacity=podsync.ResourceList(cpu=1000, memory=1 << 30))
    options = PlanOptions(root_dir=root)
    for n in range(others):
        other = Pod(
            f"other-{n}",
            (Container("a", "busybox"), Container("b", "busybox"), Container("c", "busybox")),
            namespace="demo",
            source="demo",
            uid=f"other-{n}",
        )
        assert sync([other], rt, options=options, now=NOW, clock=lambda: NOW).ok
    cpu = 500 if fits else 2000
    pod = Pod(
        "big",
        (
            Container(
                "app",
                image,
                image_pull_policy=policy,
                resources=podsync.Resources(requests=podsync.ResourceList(cpu=cpu)),
            ),
        ),
        namespace="mine",
        source="mine",
        uid="big-uid",
    )

    result = sync([pod], rt, options=options, now=NOW, clock=lambda: NOW)

    assert ([] if expected is None else [(pod.key, expected)]) == [
        (r.pod, r.reason) for r in result.plan.rejected
    ]
    created = [c for c in rt.containers if c.labels.get("io.podsync.pod.uid") == pod.uid]
    assert (expected is None) == bool(created), result.plan.describe()
