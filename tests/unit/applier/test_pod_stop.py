"""A pod-wide stop, applied: its kills at once, each in its turn, within one grace period
(the kubelet's killContainersWithSyncResult and waitForTurn; podsync.applier._stopping).

The containers' processes ignore SIGTERM, as busybox ``sleep`` as PID 1 does, so every
stop takes its whole timeout on the fake's clock (``FakeRuntime.stop_container``); the
network container's pause process exits on SIGTERM. ``overlap_stops`` makes the app
containers' stops overlap as stops that take time do on an engine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import attrs

from podsync import ApplyResult, Pod, apply, observe, parse_pods, plan_from_json
from podsync.actions._actions import Kill, Plan
from podsync.actions._json import _written_out
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.planner._plan import plan
from podsync.runtime import ExecResult
from podsync.testing import FakeClock, FakeRuntime

PAUSE = "registry.k8s.io/pause:3.10"
T0 = 1_000_000.0

THREE = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 7a1b2c3d-0001-4a5e-8e7a-5d6c2f1e9b00}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - {name: app, image: busybox, command: [sleep, "3600"]}
  - {name: cache, image: busybox, command: [sleep, "3600"]}
  - {name: worker, image: busybox, command: [sleep, "3600"]}
"""

SIDECARS = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 7a1b2c3d-0002-4a5e-8e7a-5d6c2f1e9b00}
spec:
  terminationGracePeriodSeconds: 10
  initContainers:
  - {name: logs, image: busybox, restartPolicy: Always, command: [sleep, "3600"]}
  - {name: proxy, image: busybox, restartPolicy: Always, command: [sleep, "3600"]}
  containers:
  - {name: app, image: busybox, command: [sleep, "3600"]}
  - {name: worker, image: busybox, command: [sleep, "3600"]}
"""


def _plan(desired: list[Pod], rt: FakeRuntime, root: Path, clock: FakeClock) -> Plan:
    obs = observe(rt, str(root))
    return plan(
        desired,
        obs.containers,
        images=obs.images,
        now=clock.now,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(root), network_image=PAUSE),
    )


def running(text: str, root: Path) -> tuple[FakeRuntime, FakeClock]:
    """A fake engine on which the pod of ``text`` runs, at ``T0`` on a still clock."""
    (pod,) = parse_pods(text, source="file")
    clock = FakeClock(T0 - 100, step=0)
    rt = FakeRuntime(images=["busybox", PAUSE], clock=clock, stop_exit_code=None)
    for _ in range(4):
        assert apply(_plan([pod], rt, root, clock), rt, clock=clock).ok
    assert not _plan([pod], rt, root, clock).has_changes, "the pod should run"
    rt.on_sigterm(next(c.name for c in rt.containers if "_net." in c.name), 0)
    clock.advance_to(T0)
    rt.clear_calls()
    return rt, clock


def stopped_at(rt: FakeRuntime) -> dict[str, float | None]:
    """When each container of the pod exited, by container name (``net`` included)."""
    return {c.name.split(".")[0].removeprefix("k8s_"): c.finished_at for c in rt.containers}


def stop_timeouts(rt: FakeRuntime) -> dict[str, int]:
    names = {c.id: c.name.split(".")[0].removeprefix("k8s_") for c in rt.containers}
    return {names[call.args[0]]: call.args[1] for call in rt.calls if call.name == "stop"}


def test_three_containers_that_ignore_sigterm_stop_in_one_grace_period(tmp_path: Path) -> None:
    """Three app containers with 30 s of grace stop in 30 s, not 90 s: their stops
    overlap, each with the whole grace period, and the network container goes last."""
    rt, clock = running(THREE, tmp_path)
    gone = _plan([], rt, tmp_path, clock)
    rt.overlap_stops(3)

    result = apply(gone, rt, clock=clock)

    assert result.ok
    assert {"app": 30, "cache": 30, "worker": 30, "net": 30} == stop_timeouts(rt)
    assert {
        "app": T0 + 30,
        "cache": T0 + 30,
        "worker": T0 + 30,
        "net": T0 + 30,
    } == stopped_at(rt)
    assert 30 == result.duration


def _one_after_the_other(p: Plan) -> Plan:
    """``p`` with its kills made as before the pod-wide stop: one after the other."""
    pods = tuple(
        attrs.evolve(
            pod,
            actions=tuple(
                attrs.evolve(a, concurrent=False) if isinstance(a, Kill) else a for a in pod.actions
            ),
        )
        for pod in p.pods
    )
    return attrs.evolve(p, pods=pods)


def test_kills_one_after_the_other_would_take_a_grace_period_each(tmp_path: Path) -> None:
    """The fake's clock tells the two apart: the same kills, not concurrent, take
    three grace periods."""
    rt, clock = running(THREE, tmp_path)
    gone = _one_after_the_other(_plan([], rt, tmp_path, clock))

    result: ApplyResult = apply(gone, rt, clock=clock)

    assert result.ok
    assert [T0 + 30, T0 + 60, T0 + 90] == sorted(
        t for name, t in stopped_at(rt).items() if name != "net" and t is not None
    )
    assert 90 == result.duration


def test_sidecars_stop_after_the_app_containers_last_one_first(tmp_path: Path) -> None:
    """The sidecars get their stop signal only once the app containers have stopped,
    the last sidecar in the spec first; the wait comes out of their grace period. Here
    the app containers exit on SIGTERM: ``proxy`` gets the whole 10 s, and ``logs``,
    which waited those 10 s for it, the 2 s minimum (minimumGracePeriodInSeconds)."""
    rt, clock = running(SIDECARS, tmp_path)
    for c in rt.containers:
        if "_app." in c.name or "_worker." in c.name:
            rt.on_sigterm(c.name, 0)
    gone = _plan([], rt, tmp_path, clock)

    result = apply(gone, rt, clock=clock)

    assert result.ok
    assert {"app": 10, "worker": 10, "proxy": 10, "logs": 2, "net": 10} == stop_timeouts(rt)
    assert {
        "app": T0,
        "worker": T0,
        "proxy": T0 + 10,
        "logs": T0 + 12,
        "net": T0 + 12,
    } == stopped_at(rt)


def test_sidecars_get_the_minimum_when_the_apps_used_up_the_grace(tmp_path: Path) -> None:
    """App containers that take the whole grace period leave the sidecars none: the
    wait for their turn ends with it (waitForTurn's timer), and each gets 2 s."""
    rt, clock = running(SIDECARS, tmp_path)
    gone = _plan([], rt, tmp_path, clock)
    rt.overlap_stops(2)

    result = apply(gone, rt, clock=clock)

    assert result.ok
    assert {"app": 10, "worker": 10, "proxy": 2, "logs": 2, "net": 10} == stop_timeouts(rt)
    ended = stopped_at(rt)
    assert (T0 + 10, T0 + 10, T0 + 12) == (ended["app"], ended["worker"], ended["proxy"])


def test_a_failed_stop_lets_the_sidecars_go_on_and_holds_the_network_container(
    tmp_path: Path,
) -> None:
    """Every kill of a pod-wide stop runs whatever the others do (the kubelet marks a
    container terminated whether its stop failed or not); the actions after the group
    are skipped, as after any failure, so the network container keeps running."""
    rt, clock = running(SIDECARS, tmp_path)
    gone = _plan([], rt, tmp_path, clock)
    rt.fail("stop", match="_app.")

    result = apply(gone, rt, clock=clock)

    statuses = {
        a.action.container: a.status.value for a in result.results if isinstance(a.action, Kill)
    }
    assert {
        "app": "failed",
        "worker": "done",
        "proxy": "done",
        "logs": "done",
        "net": "skipped",
    } == statuses
    assert None is stopped_at(rt)["net"]


def test_a_single_concurrent_kill_runs_as_any_other(tmp_path: Path) -> None:
    """A pod-wide stop of one container (the others have exited) is a plain kill."""
    rt, clock = running(THREE, tmp_path)
    for c in rt.containers:
        if "_app." in c.name or "_cache." in c.name:
            rt.exit(c.id, 0)
    gone = _plan([], rt, tmp_path, clock)
    kills = [a for a in gone.pods[0].actions if isinstance(a, Kill)]
    assert [("worker", True), ("net", False)] == [(k.container, k.concurrent) for k in kills]

    result = apply(gone, rt, clock=clock)

    assert result.ok
    assert T0 + 30 == stopped_at(rt)["worker"]


DRAINING = SIDECARS.replace(
    '  - {name: proxy, image: busybox, restartPolicy: Always, command: [sleep, "3600"]}\n',
    "  - name: proxy\n"
    "    image: busybox\n"
    "    restartPolicy: Always\n"
    '    command: [sleep, "3600"]\n'
    "    lifecycle: {preStop: {exec: {command: [drain]}}}\n",
)


def test_a_sidecars_pre_stop_handler_and_its_wait_share_its_grace_period(
    tmp_path: Path,
) -> None:
    """killContainer's order: the preStop handler first (here 4 s of the 10), then the
    turn, then the stop with what is left - so ``proxy`` stops with 6 s; ``logs``,
    which waited 10 s for it, with the 2 s minimum. The app containers exit on SIGTERM."""
    rt, clock = running(DRAINING, tmp_path)
    for c in rt.containers:
        if "_app." in c.name or "_worker." in c.name:
            rt.on_sigterm(c.name, 0)
    drain = rt.exec_in_container

    def slow_drain(container_id: str, command: Sequence[str], timeout: float) -> ExecResult:
        clock.advance(4)
        return drain(container_id, command, timeout)

    rt.exec_in_container = slow_drain  # type: ignore[method-assign]
    gone = _plan([], rt, tmp_path, clock)

    result = apply(gone, rt, clock=clock)

    assert result.ok
    assert {"app": 10, "worker": 10, "proxy": 6, "logs": 2, "net": 10} == stop_timeouts(rt)
    ended = stopped_at(rt)
    assert (T0 + 10, T0 + 12) == (ended["proxy"], ended["logs"])


def test_a_format_7_plan_stops_one_container_after_the_other(tmp_path: Path) -> None:
    """A plan saved by the podsync before pod-wide stops (format 7: no ``concurrent``,
    no ``after``) is still read, and its kills run as it was made to run them."""
    rt, clock = running(SIDECARS, tmp_path)
    data = _written_out(_plan([], rt, tmp_path, clock))
    data["format_version"] = "7"
    for pod in data["pods"]:
        for action in pod["actions"]:
            action.pop("concurrent", None)
            action.pop("after", None)

    old = plan_from_json(json.dumps(data))

    kills = [a for a in old.actions if isinstance(a, Kill)]
    assert 5 == len(kills)
    assert {(False, ())} == {(k.concurrent, k.after) for k in kills}
