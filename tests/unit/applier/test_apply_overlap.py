"""A pod's app containers are created while its network container starts, on a runtime
whose calls are round trips worth overlapping (``overlapping_calls``, as
``DockerRuntime``; issue 16: a one-pod apply, process start to running).

Docker accepts the create of a container in network mode ``container:<x>`` while x is
created and not running yet, and refuses only its start until x runs (the conformance
suite's ``test_joining_a_network_container``); a create is made ahead only once x
exists. Everything else is as without the overlap: the events and results in plan
order, a failure skips the rest of the pod - and a container made ahead for a skipped
action is removed. A runtime without ``overlapping_calls`` (the ``FakeRuntime`` by
default) gets its calls one after the other, in plan order.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from podsync import Container, EventKind, Lifecycle, Pod, apply, observe
from podsync.actions._actions import Plan
from podsync.actions._options import PlanOptions
from podsync.model._pod import Handler
from podsync.planner._plan import plan
from podsync.testing import FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
WAIT = 5.0  # seconds a test waits for the other thread before it fails (never reached)


class _Overlapping(FakeRuntime):
    """A FakeRuntime whose network container's start returns only once the app's
    create has begun (or fails the test after ``WAIT``): without the overlap, the
    create would come after the start and the start would wait in vain."""

    overlapping_calls = True

    def __init__(self, **kwargs: object) -> None:
        super().__init__(images=["busybox:1", PAUSE], clock=lambda: NOW - 100, **kwargs)  # type: ignore[arg-type]
        self.app_create_began = threading.Event()
        self.waited: list[bool] = []

    def create_container(self, spec):  # type: ignore[no-untyped-def]
        if spec.join:
            self.app_create_began.set()
        return super().create_container(spec)

    def start_container(self, container_id: str) -> None:
        if "_net." in self._name_of(container_id):
            self.waited.append(self.app_create_began.wait(WAIT))
        super().start_container(container_id)

    def _name_of(self, container_id: str) -> str:
        return next(c.name for c in self.containers if c.id == container_id)


def _plan(desired: Sequence[Pod], rt: FakeRuntime, root: Path) -> Plan:
    obs = observe(rt, str(root))
    rt.clear_calls()
    return plan(
        desired,
        obs.containers,
        images=obs.images,
        pod_dirs=obs.pod_dirs,
        now=NOW,
        options=PlanOptions(root_dir=str(root), network_image=PAUSE),
    )


def _events(rt: FakeRuntime, the_plan: Plan) -> tuple[list[tuple[str, str]], bool]:
    seen: list[tuple[str, str]] = []
    result = apply(
        the_plan, rt, on_event=lambda e: seen.append((e.kind.value, e.container)), clock=rt.clock
    )
    return seen, result.ok


def test_the_app_is_created_while_the_network_container_starts(tmp_path: Path) -> None:
    """The app's create begins before the network container's start returned; the
    events and results stay in plan order, and both containers run."""
    rt = _Overlapping()
    the_plan = _plan([Pod("web", (Container("app", "busybox:1"),))], rt, tmp_path)

    events, ok = _events(rt, the_plan)

    assert ok
    assert [True] == rt.waited
    assert [
        ("created", "net"),
        ("started", "net"),
        ("created", "app"),
        ("started", "app"),
    ] == events
    assert 2 == sum(c.running for c in rt.containers)


def test_every_app_container_is_created_ahead_and_started_in_order(tmp_path: Path) -> None:
    """With several app containers, each is created while the network container
    starts; they start in the pod's order."""
    rt = _Overlapping()
    web = Pod("web", (Container("a", "busybox:1"), Container("b", "busybox:1")))
    the_plan = _plan([web], rt, tmp_path)

    events, ok = _events(rt, the_plan)

    assert ok
    assert [True] == rt.waited
    assert ["create"] * 3 + ["start"] * 3 + ["write_volume"] == sorted(rt.call_names())
    assert "create" == rt.calls[0].name
    # Both termination-message files at once, through the network container.
    (written,) = [c for c in rt.calls if c.name == "write_volume"]
    volume, entries, through = written.args
    net = rt.calls[0].args[0]
    assert (volume, through) == (net.volumes[0].volume, net.name)
    assert ["termination/" + c.args[0].name for c in rt.calls[1:] if c.name == "create"] == [
        e.path for e in entries
    ]
    # The app containers start last, in the pod's order.
    assert ["start", "start"] == rt.call_names()[-2:]
    assert [("started", "net"), ("started", "a"), ("started", "b")] == [
        e for e in events if e[0] == "started"
    ]
    assert 3 == sum(c.running for c in rt.containers)


def test_a_network_container_that_fails_to_start_leaves_no_app_container(
    tmp_path: Path,
) -> None:
    """The network container's start fails: its action fails, the app's is skipped,
    and the app container made ahead is removed - the engine holds what it would have
    held without the overlap."""
    rt = _Overlapping()
    rt.fail("start", match="_net.", times=1, error="no more pids")
    rt.app_create_began.set()  # the failing start does not wait
    the_plan = _plan([Pod("web", (Container("app", "busybox:1"),))], rt, tmp_path)

    result = apply(the_plan, rt, clock=rt.clock)

    assert [("net", "failed"), ("app", "skipped")] == [
        (r.action.container, r.status.value)  # type: ignore[union-attr]
        for r in result.results
    ]
    assert "no more pids" in result.results[0].error
    assert "removed the container made ahead" in result.results[1].error
    assert ["net"] == [c.name.split(".")[0].removeprefix("k8s_") for c in rt.containers]
    assert "remove" in rt.call_names()


def test_an_app_create_that_fails_ahead_fails_its_own_action(tmp_path: Path) -> None:
    """The app's create, made ahead, fails: the network container still starts (its
    action is done) and the app's action fails with the engine's error."""
    rt = _Overlapping()
    rt.fail("create", match="_app.", times=1, error="no such image")
    the_plan = _plan([Pod("web", (Container("app", "busybox:1"),))], rt, tmp_path)

    result = apply(the_plan, rt, clock=rt.clock)

    assert [("net", "done"), ("app", "failed")] == [
        (r.action.container, r.status.value)  # type: ignore[union-attr]
        for r in result.results
    ]
    assert "no such image" in result.results[1].error
    assert 1 == sum(c.running for c in rt.containers)


def test_a_failed_post_start_removes_the_next_container_made_ahead(tmp_path: Path) -> None:
    """The first app container's postStart handler fails: it is stopped and its action
    fails; the second app container, made ahead, is removed, its action skipped."""
    rt = _Overlapping()
    hook = Lifecycle(post_start=Handler(exec_command=("/bin/false",)))
    web = Pod("web", (Container("a", "busybox:1", lifecycle=hook), Container("b", "busybox:1")))
    the_plan = _plan([web], rt, tmp_path)
    rt.set_exec_result(("/bin/false",), exit_code=1)

    result = apply(the_plan, rt, clock=rt.clock)

    assert ["done", "failed", "skipped"] == [r.status.value for r in result.results]
    assert "removed the container made ahead" in result.results[2].error
    assert {"net", "a"} == {c.name.split(".")[0].removeprefix("k8s_") for c in rt.containers}


def test_without_overlapping_calls_the_calls_come_in_plan_order(tmp_path: Path) -> None:
    """A runtime that does not say its calls overlap gets them one after the other."""
    rt = FakeRuntime(images=["busybox:1", PAUSE], clock=lambda: NOW - 100)
    web = Pod("web", (Container("a", "busybox:1"), Container("b", "busybox:1")))
    the_plan = _plan([web], rt, tmp_path)

    result = apply(the_plan, rt, clock=rt.clock)

    assert result.ok
    assert ["create", "start"] + ["write_volume", "create", "start"] * 2 == rt.call_names()
    assert EventKind.CREATED  # the kinds used above are the public ones
