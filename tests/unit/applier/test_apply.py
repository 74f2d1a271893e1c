"""apply: order, per-action results, failure isolation, events and parallelism, against
FakeRuntime."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from podsync import (
    DEFAULT_WORKERS,
    ActionStatus,
    ApplyResult,
    Container,
    Event,
    EventKind,
    ObservedContainer,
    Pod,
    apply,
    observe,
)
from podsync.actions._actions import Create, CreateSpec, Plan, PodPlan, Reason, Wait
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_UID, LABEL_SPEC_HASH
from podsync.testing import FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"


def pod(name: str, image: str = "busybox:1") -> Pod:
    return Pod(name, (Container("c", image),))


def engine(**kwargs: Any) -> FakeRuntime:
    kwargs.setdefault("images", ["busybox:1", PAUSE])
    kwargs.setdefault("clock", lambda: NOW - 100)
    return FakeRuntime(**kwargs)


def plan_for(desired: Sequence[Pod], rt: FakeRuntime, root: Path, **options: Any) -> Plan:
    """Observe ``rt`` and plan ``desired``, without recording the observation calls."""
    obs = observe(rt, str(root))
    rt.clear_calls()
    return plan(
        desired,
        obs.containers,
        images=obs.images,
        pod_dirs=obs.pod_dirs,
        now=NOW,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(root), **options),
    )


def statuses(result: ApplyResult) -> list[tuple[str, str, str]]:
    return [
        (r.pod, getattr(r.action, "container", type(r.action).__name__), r.status.value)
        for r in result.results
    ]


def test_results_are_in_plan_order(tmp_path):
    """One result per action, in plan order, each with its pod and a duration."""
    rt = engine()
    the_plan = plan_for([pod("b"), pod("a")], rt, tmp_path)

    result = apply(the_plan, rt, clock=rt.clock)

    assert list(the_plan.actions) == [r.action for r in result.results]
    assert [
        ("default/a", "net", "done"),
        ("default/a", "c", "done"),
        ("default/b", "net", "done"),
        ("default/b", "c", "done"),
    ] == statuses(result)
    assert all(r.duration >= 0 for r in result.results)
    assert result.ok
    assert () == result.failed_pods
    assert result.summary().startswith("4 done, 0 failed, 0 skipped in ")


def test_empty_plan():
    """An empty plan makes no call and is ok."""
    rt = engine()

    result = apply(Plan(), rt, clock=rt.clock)

    assert () == result.results
    assert result.ok
    assert [] == rt.calls


def test_wait_is_done_at_once():
    """Wait actions are informational: done, without a runtime call."""
    wait = Wait("default/a", "u", "c", 10.0, Reason.BACK_OFF, "wait default/a/c")
    rt = engine()

    result = apply(
        Plan(pods=(PodPlan("default/a", "u", "a.default.api", (wait,)),)), rt, clock=rt.clock
    )

    assert [("default/a", "c", "done")] == statuses(result)
    assert [] == rt.calls


def test_failure_skips_the_rest_of_the_pod_only(tmp_path):
    """A failed action stops its pod - the rest is skipped, saying why - while the other
    pods go on."""
    rt = engine()
    rt.fail("start", match="_a.default.api_")
    the_plan = plan_for([pod("a"), pod("b")], rt, tmp_path)

    result = apply(the_plan, rt, clock=rt.clock)

    assert [
        ("default/a", "net", "failed"),
        ("default/a", "c", "skipped"),
        ("default/b", "net", "done"),
        ("default/b", "c", "done"),
    ] == statuses(result)
    failed, skipped = result.results[:2]
    assert failed.error.startswith("start c0001: injected failure")
    assert skipped.error.startswith("not run: an earlier action failed (create default/a/net: ")
    assert not result.ok
    assert ("default/a",) == result.failed_pods
    assert 1 == len(result.failures)


def test_failed_pull_skips_the_pods_that_need_the_image(tmp_path):
    """A failed pull skips every pod that needs the image; the others go on."""
    rt = engine()
    rt.fail("pull", match="redis", error="manifest unknown")
    the_plan = plan_for([pod("a", "redis"), pod("b"), pod("c", "redis")], rt, tmp_path)

    result = apply(the_plan, rt, clock=rt.clock)

    assert [
        ("", "Pull", "failed"),
        ("default/a", "net", "skipped"),
        ("default/a", "c", "skipped"),
        ("default/b", "net", "done"),
        ("default/b", "c", "done"),
        ("default/c", "net", "skipped"),
        ("default/c", "c", "skipped"),
    ] == statuses(result)
    assert "pull of redis failed" == result.results[1].error
    assert ("default/a", "default/c") == result.failed_pods
    assert [] == [
        c.args[0].name for c in rt.calls if c.name == "create" and "_a." in c.args[0].name
    ]
    summary = result.summary().splitlines()
    assert "2 done, 1 failed, 4 skipped in" in summary[0]
    assert "failed: pull redis: not present: pull redis: manifest unknown" == summary[1]
    assert "skipped actions of: default/a, default/c" == summary[2]


def test_a_buggy_runtime_does_not_kill_the_worker(tmp_path):
    """A runtime that raises something else than RuntimeCallError (a bug in it) gets a
    failed result with the exception's type and text; the apply completes."""

    class Buggy(FakeRuntime):
        def start_container(self, container_id: str) -> None:
            raise KeyError(container_id)

    rt = Buggy(images=["busybox:1", PAUSE])
    the_plan = plan_for([pod("a")], rt, tmp_path)

    result = apply(the_plan, rt, clock=rt.clock)

    assert "start c0001: KeyError: 'c0001'" == result.results[0].error
    assert ActionStatus.SKIPPED == result.results[1].status


def test_events_of_a_create_and_a_kill(tmp_path):
    """A create reports created then started; a stop reports stopping; a removal removed;
    each event has the time apply's clock gave."""
    rt = engine()
    events: list[Event] = []
    apply(
        plan_for([pod("a")], rt, tmp_path),
        rt,
        on_event=events.append,
        clock=rt.clock,
    )
    created = [(e.kind, e.pod, e.container) for e in events]
    events.clear()

    apply(
        plan_for([], rt, tmp_path, gc=GCPolicy(min_age=0)),
        rt,
        on_event=events.append,
        clock=lambda: NOW + 5,
    )

    assert [
        (EventKind.CREATED, "default/a", "net"),
        (EventKind.STARTED, "default/a", "net"),
        (EventKind.CREATED, "default/a", "c"),
        (EventKind.STARTED, "default/a", "c"),
    ] == created
    assert [
        (EventKind.STOPPING, "c"),
        (EventKind.STOPPING, "net"),
        (EventKind.REMOVED, "c"),
        (EventKind.REMOVED, "net"),
    ] == [(e.kind, e.container) for e in events]
    assert "stopping" == events[0].kind  # the kinds are strings too
    # One verb for a Kill: its message, the summary line and its event say "stop".
    assert events[0].message.startswith("stop default/a/c ")
    assert {NOW + 5} == {e.time for e in events}


def test_events_of_failures(tmp_path):
    """A failed action reports failed, with the error as the message."""
    rt = engine()
    rt.fail("pull", error="no such image")
    events: list[Event] = []

    apply(plan_for([pod("a", "redis")], rt, tmp_path), rt, on_event=events.append, clock=rt.clock)

    assert [(EventKind.FAILED, "", "", "pull redis: no such image")] == [
        (e.kind, e.pod, e.container, e.message) for e in events
    ]


class MeetingRuntime(FakeRuntime):
    """A FakeRuntime whose creates wait until ``meeting`` creates are under way at once
    (a barrier): they return only when that many workers run in parallel, and fail
    (``threading.BrokenBarrierError``, after a generous timeout) when apply runs fewer.
    Once the barrier has let one group through, later creates pass at once."""

    def __init__(self, meeting: int, **kwargs: Any) -> None:
        kwargs.setdefault("images", ["busybox:1", PAUSE])
        kwargs.setdefault("clock", lambda: NOW - 100)
        super().__init__(**kwargs)
        self.barrier = threading.Barrier(meeting, timeout=30)
        self.met = threading.Event()

    def create_container(self, spec: CreateSpec) -> str:
        if not self.met.is_set():
            self.barrier.wait()
            self.met.set()
        return super().create_container(spec)


def test_callback_calls_are_serialized(tmp_path):
    """The callback is called from worker threads, but never by two at once: with 8
    workers creating at the same moment, no event enters the callback while another is
    in it (which yields the processor, to let one try)."""
    rt = MeetingRuntime(8)
    inside = threading.Lock()
    overlaps = []
    threads = set()

    def callback(event: Event) -> None:
        if not inside.acquire(blocking=False):
            overlaps.append(event)
            return
        threads.add(threading.current_thread().name)
        for _ in range(20):
            os.sched_yield()
        inside.release()

    apply(
        plan_for([pod(f"p{i}") for i in range(8)], rt, tmp_path),
        rt,
        on_event=callback,
        clock=rt.clock,
    )

    assert [] == overlaps
    assert len(threads) > 1


def test_callback_error_is_raised_after_the_plan_is_applied(tmp_path):
    """A callback that raises does not stop the apply: the plan is applied, then the
    first exception is raised."""
    rt = engine()

    def callback(event: Event) -> None:
        raise RuntimeError(f"bad callback: {event.kind}")

    with pytest.raises(RuntimeError, match="bad callback"):
        apply(plan_for([pod("a"), pod("b")], rt, tmp_path), rt, on_event=callback, clock=rt.clock)

    assert [True] * 4 == [c.running for c in rt.containers]


def test_pods_run_in_parallel(tmp_path):
    """8 pods on 8 workers run at once: their first creates are all under way at the
    same moment (a create that waits for 7 others returns; run one by one, it would
    wait in vain)."""
    rt = MeetingRuntime(8)
    eight = plan_for([pod(f"p{i}") for i in range(8)], rt, tmp_path)

    result = apply(eight, rt, workers=8, clock=rt.clock)

    assert result.ok, result.summary()
    assert 16 == len(rt.containers)


@pytest.mark.parametrize(
    "kwargs",
    [{"workers": 0}, {"workers": 1.5}, {"workers": True}, {"hook_timeout": 0}],
)
def test_bad_settings(kwargs):
    """Bad workers or hook timeouts are programming errors."""
    with pytest.raises(ValueError, match="must be"):
        apply(Plan(), engine(), **kwargs)


def test_unknown_action_is_a_programming_error():
    """Anything that is not an action is refused with TypeError."""
    the_plan = Plan(pods=(PodPlan("default/a", "u", "a.default.api", ("nonsense",)),))  # type: ignore[arg-type]

    with pytest.raises(TypeError, match="expected a plan action"):
        apply(the_plan, engine())


def test_default_workers():
    """The default pool is small and bounded."""
    assert 8 == DEFAULT_WORKERS


def test_one_pool_even_with_few_workers(tmp_path):
    """One worker is enough for any plan: nothing waits on the pool from inside it."""
    rt = engine()
    the_plan = plan_for([pod("a", "redis"), pod("b")], rt, tmp_path)

    result = apply(the_plan, rt, workers=1, clock=rt.clock)

    assert result.ok
    assert 5 == len(result.results)


def test_interrupt_starts_no_further_pods(tmp_path: Path) -> None:
    """An interrupt (Ctrl-C) during apply stops it from starting the pods still queued:
    the calls under way finish, nothing else is called, and the interrupt propagates."""
    pods = [Pod(f"p{i}", (Container("c", "busybox:1"),)) for i in range(6)]
    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path))
    fake = FakeRuntime(images=["busybox:1", "registry.k8s.io/pause:3.10"], clock=lambda: 1.0)
    the_plan = plan(pods, [], images=fake.images, now=1.0, options=options)

    def interrupt(event: Event) -> None:
        if event.kind == "created":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        apply(the_plan, fake, workers=1, on_event=interrupt, clock=fake.clock)

    assert ["create"] == [n for n in fake.call_names() if n == "create"]


def test_a_failed_pull_skips_only_the_pod_of_that_uid(tmp_path):
    """Two sources can hold pods of one namespace/name: a failed pull for ``web`` from
    http skips that pod only, never ``web`` from a file (apply keys pods by uid)."""
    rt = engine()
    rt.fail("pull", match="redis", error="manifest unknown")
    from_http = Pod("web", (Container("c", "redis"),), source="http")
    from_file = Pod("web", (Container("c", "busybox:1"),), source="file")
    the_plan = plan_for([from_http, from_file], rt, tmp_path)
    assert (from_http.uid,) == the_plan.pulls[0].pods

    result = apply(the_plan, rt, clock=rt.clock)

    by_uid = {
        uid: sorted({r.status.value for r in result.results if r.pod_uid == uid})
        for uid in (from_http.uid, from_file.uid)
    }
    assert {from_http.uid: ["skipped"], from_file.uid: ["done"]} == by_uid
    assert {"default/web"} == {r.pod for r in result.results if r.pod}
    assert (from_http.uid,) == result.failed_pod_uids
    assert [True, True] == [c.running for c in rt.containers]


def test_events_carry_the_pod_uid_container_id_and_reason(tmp_path):
    """Besides its message, an event names the pod by uid and key, the container by
    name and engine id, and the plan's reason code, so nobody parses messages."""
    rt = engine()
    web = Pod("web", (Container("c", "busybox:1"),), source="file")
    events: list[Event] = []
    apply(
        plan_for([web], rt, tmp_path),
        rt,
        on_event=events.append,
        clock=rt.clock,
    )
    ids = {c.labels[LABEL_CONTAINER]: c.id for c in rt.containers}
    created = list(events)
    events.clear()
    rt.fail("remove", error="device busy")

    apply(
        plan_for([], rt, tmp_path, gc=GCPolicy(min_age=0)),
        rt,
        on_event=events.append,
        clock=rt.clock,
    )

    assert [
        (EventKind.CREATED, web.uid, "default/web", "net", ids["net"], Reason.NETWORK_MISSING),
        (EventKind.STARTED, web.uid, "default/web", "net", ids["net"], Reason.NETWORK_MISSING),
        (EventKind.CREATED, web.uid, "default/web", "c", ids["c"], Reason.MISSING),
        (EventKind.STARTED, web.uid, "default/web", "c", ids["c"], Reason.MISSING),
    ] == [(e.kind, e.pod_uid, e.pod, e.container, e.container_id, e.reason) for e in created]
    assert [
        (EventKind.STOPPING, web.uid, "c", ids["c"], Reason.POD_NOT_DESIRED),
        (EventKind.STOPPING, web.uid, "net", ids["net"], Reason.POD_NOT_DESIRED),
        (EventKind.FAILED, web.uid, "c", ids["c"], Reason.GC_NOT_DESIRED),
    ] == [(e.kind, e.pod_uid, e.container, e.container_id, e.reason) for e in events]


def test_pull_events_carry_the_reason_and_no_pod(tmp_path):
    """A pull is engine-wide: its event names no pod, but carries the reason code."""
    rt = engine()
    events: list[Event] = []

    apply(plan_for([pod("a", "redis")], rt, tmp_path), rt, on_event=events.append, clock=rt.clock)

    pulled = events[0]
    assert (EventKind.PULLED, "", "", "", Reason.IMAGE_ABSENT) == (
        pulled.kind,
        pulled.pod,
        pulled.pod_uid,
        pulled.container_id,
        pulled.reason,
    )


def test_a_create_that_loses_a_race_adopts_the_winners_container(tmp_path):
    """Two applies of one plan race: the loser's creates meet a name conflict with the
    containers the winner made - same pod uid, same spec hash - and adopt them as done,
    reporting ``adopted``, instead of failing."""
    rt = engine()
    the_plan = plan_for([pod("a"), pod("b")], rt, tmp_path)
    first = apply(the_plan, rt, clock=rt.clock)
    events: list[Event] = []
    before = len(rt.calls)

    second = apply(the_plan, rt, on_event=events.append, clock=rt.clock)

    assert first.ok
    assert second.ok, second.summary()
    assert 4 == len(rt.containers)
    ids = {(c.labels[LABEL_POD_UID], c.labels[LABEL_CONTAINER]): c.id for c in rt.containers}
    assert [(EventKind.ADOPTED, ids[(e.pod_uid, e.container)]) for e in events] == [
        (e.kind, e.container_id) for e in events
    ]
    assert 4 == len(events)
    # Nothing is started a second time (an app container's termination-message file is
    # written again, empty, before its create meets the conflict).
    assert ["create", "write_volume", "create"] * 2 == rt.call_names()[before:]


def test_a_name_conflict_with_another_spec_still_fails(tmp_path):
    """A container holding the name but recording another spec hash (or another pod)
    is not the instance the plan wants: the create fails, as before."""
    rt = engine()
    the_plan = plan_for([pod("a")], rt, tmp_path)
    net = the_plan.pods[0].actions[0]
    assert isinstance(net, Create)
    squatter = dict(net.spec.labels, **{LABEL_SPEC_HASH: "0" * 16})
    rt.add_container(ObservedContainer("x1", net.spec.name, PAUSE, squatter, running=True))

    result = apply(the_plan, rt, clock=rt.clock)

    assert [ActionStatus.FAILED, ActionStatus.SKIPPED] == [r.status for r in result.results]
    assert 'is already in use by container "x1"' in result.results[0].error
