"""The continuous loop (``podsync.Reconciler``) on FakeRuntime with a fake clock.

Most tests drive the loop with ``tick()`` - what is due at the fake clock's time is
done, then the test waits for the pod workers - so the periods are checked without
waiting for them. The last tests run the loop in its thread (``with Reconciler(...)``)
and wait on events, never on the clock."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

import podsync
from podsync import BackOffPolicy, GCPolicy, PlanOptions, PodStatus
from podsync.actions._options import NODE_SCOPE
from podsync.host._node import NodeInfo
from podsync.spec._labels import LABEL_CONTAINER
from podsync.testing import FakeClock, FakeRuntime
from tests.support.polling import wait_for

WAIT = 10.0  # seconds a test waits for a thread at most (never reached when it passes)
NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)
IMAGES = ["busybox:1", "busybox:2", "pause:1"]


def pod_yaml(name: str, image: str = "busybox:1", *, sidecar: str = "", policy: str = "") -> str:
    text = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
{f"  restartPolicy: {policy}" if policy else ""}
  containers:
  - name: app
    image: {image}
"""
    if sidecar:
        text += f"  - name: side\n    image: {sidecar}\n"
    return text


class RecordingBoard:
    """A stand-in for ``podsync.loop._board.LoopBoard``: records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.lock = threading.Lock()
        self.synced = threading.Event()

    def _add(self, name: str, *args: Any) -> None:
        with self.lock:
            self.calls.append((name, args))

    def source_ok(self, source: str) -> None:
        self._add("source_ok", source)

    def source_error(self, source: str, message: str) -> None:
        self._add("source_error", source, message)

    def sync_done(self, duration: float, ok: bool, message: str = "") -> None:
        self._add("sync_done", ok, message)
        self.synced.set()

    def action_done(self, kind: str, result: str) -> None:
        self._add("action_done", kind, result)

    def pods_seen(self, statuses: Sequence[PodStatus]) -> None:
        self._add("pods_seen", tuple(statuses))

    def named(self, name: str) -> list[tuple[Any, ...]]:
        with self.lock:
            return [args for n, args in self.calls if n == name]


@attrs.define
class Loop:
    reconciler: podsync.Reconciler
    fake: FakeRuntime
    clock: FakeClock
    board: RecordingBoard
    notices: list[podsync.LoopNotice]

    def tick(self) -> float:
        wait = self.reconciler.tick()
        assert self.reconciler.wait_idle(WAIT)
        return wait

    def advance(self, seconds: float) -> float:
        self.clock.advance(seconds)
        return self.tick()

    def running(self) -> list[tuple[str, str]]:
        """(pod, container) of each running container, sorted."""
        out = []
        for c in self.fake.containers:
            if c.running:
                out.append((c.labels["io.podsync.pod.name"], c.labels[LABEL_CONTAINER]))
        return sorted(out)

    def kinds(self, kind: str) -> list[podsync.LoopNotice]:
        return [n for n in self.notices if n.kind == kind]


def make_loop(
    tmp_path: Path,
    sources: Sequence[str],
    *,
    fake: FakeRuntime | None = None,
    options: PlanOptions | None = None,
    step: float = 0,
    **kwargs: Any,
) -> Loop:
    clock = FakeClock(1_000_000.0, step=step)
    runtime = fake if fake is not None else FakeRuntime(images=IMAGES, clock=clock)
    if fake is not None:
        runtime.clock = clock
    board = RecordingBoard()
    notices: list[podsync.LoopNotice] = []
    lock = threading.Lock()

    def on_notice(notice: podsync.LoopNotice) -> None:
        with lock:
            notices.append(notice)

    the_options = options or PlanOptions(
        scope=NODE_SCOPE,
        network_image="pause:1",
        root_dir=str(tmp_path / "root"),
        gc=GCPolicy(min_age=0),
    )
    reconciler = podsync.Reconciler(
        sources,
        runtime,
        the_options,
        node=NODE,
        board=board,
        on_notice=on_notice,
        clock=clock,
        **kwargs,
    )
    return Loop(reconciler, runtime, clock, board, notices)


def test_the_first_tick_reads_the_sources_and_runs_the_pods(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    (pods / "db.yaml").write_text(pod_yaml("db"))
    loop = make_loop(tmp_path, [str(pods)])
    loop.tick()
    assert loop.running() == [("db", "app"), ("db", "net"), ("web", "app"), ("web", "net")]
    assert loop.board.named("source_ok") == [(str(pods),)]
    assert loop.board.named("sync_done") == [(True, "")]
    assert sorted(loop.board.named("action_done")) == [("create", "ok")] * 4
    (statuses,) = loop.board.named("pods_seen")[-1:]
    assert sorted(s.pod for s in statuses[0]) == ["default/db", "default/web"]


def test_at_steady_state_a_sync_period_costs_one_list_call(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop = make_loop(tmp_path, [str(pods)], sync_period=10, source_period=20)
    loop.tick()
    loop.fake.clear_calls()
    assert loop.advance(10) == pytest.approx(10)  # the source is due at 20, the sync at 20
    assert loop.fake.call_names() == ["list"]


def test_a_changed_source_is_picked_up_at_its_period_and_synced_at_once(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    loop = make_loop(tmp_path, [str(pods)], sync_period=10, source_period=3)
    loop.tick()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop.advance(2)
    assert loop.running() == []
    loop.advance(1)
    assert loop.running() == [("web", "app"), ("web", "net")]


def test_an_edit_replaces_only_the_changed_container(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web", sidecar="busybox:1"))
    loop = make_loop(tmp_path, [str(pods)], source_period=1)
    loop.tick()
    before = {c.labels[LABEL_CONTAINER]: c.id for c in loop.fake.containers if c.running}
    (pods / "web.yaml").write_text(pod_yaml("web", sidecar="busybox:2"))
    loop.advance(1)
    after = {c.labels[LABEL_CONTAINER]: c.id for c in loop.fake.containers if c.running}
    assert after["net"] == before["net"]
    assert after["app"] == before["app"]
    assert after["side"] != before["side"]


def test_a_broken_source_keeps_its_pods_and_reports_the_error(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop = make_loop(tmp_path, [str(pods)], source_period=1)
    loop.tick()
    (pods / "web.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: [\n")
    loop.fake.clear_calls()
    loop.advance(1)
    assert "stop" not in loop.fake.call_names()
    assert loop.running() == [("web", "app"), ("web", "net")]
    (error,) = loop.kinds("source-error")
    assert error.source == str(pods)
    assert "web.yaml" in error.message
    assert loop.board.named("source_error")[-1][0] == str(pods)
    # Still broken: reported to the board and logged again at each poll.
    loop.advance(1)
    assert len(loop.kinds("source-error")) == 2
    assert len(loop.board.named("source_error")) == 2
    # Fixed: back in sync.
    (pods / "web.yaml").write_text(pod_yaml("web", image="busybox:2"))
    loop.advance(1)
    assert [n.source for n in loop.kinds("source-ok")] == [str(pods)]
    images = {c.image for c in loop.fake.containers if c.running}
    assert "busybox:2" in images
    assert "busybox:1" not in images


def test_a_file_removed_from_a_directory_stops_its_pod(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    (pods / "db.yaml").write_text(pod_yaml("db"))
    loop = make_loop(tmp_path, [str(pods)], source_period=1)
    loop.tick()
    (pods / "web.yaml").unlink()
    loop.advance(1)
    assert loop.running() == [("db", "app"), ("db", "net")]


def test_pods_of_a_source_never_read_are_not_deleted(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    first = make_loop(tmp_path, [str(pods)])
    first.tick()
    # A new loop (podsync restarted) whose source is broken from the start.
    (pods / "web.yaml").write_text("kind: [")
    loop = make_loop(tmp_path, [str(pods)], fake=first.fake)
    loop.fake.clear_calls()
    loop.tick()
    # Observed only (the first round collects garbage: it lists the volumes too).
    assert loop.fake.call_names() == ["list", "list_volumes"]
    assert loop.running() == [("web", "app"), ("web", "net")]


def test_the_engine_going_away_is_retried_with_back_off_and_reported(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop = make_loop(tmp_path, [str(pods)], sync_period=10, source_period=100)
    loop.fake.fail("list", times=3, unavailable=True, error="engine is down")
    assert loop.tick() == pytest.approx(1)
    assert loop.advance(1) == pytest.approx(2)
    assert loop.advance(2) == pytest.approx(4)
    assert loop.running() == []
    assert [ok for ok, _ in loop.board.named("sync_done")] == [False, False, False]
    assert len(loop.kinds("sync-error")) == 3
    assert "engine is down" in loop.kinds("sync-error")[0].message
    loop.advance(4)
    assert loop.running() == [("web", "app"), ("web", "net")]
    assert len(loop.kinds("engine-back")) == 1


def test_a_failed_action_is_reported_and_retried_at_the_next_sync(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop = make_loop(tmp_path, [str(pods)], sync_period=10, source_period=100)
    loop.fake.fail("create", times=1, match="app")
    loop.tick()
    assert ("create", "failed") in loop.board.named("action_done")
    assert loop.running() == [("web", "net")]
    loop.advance(10)
    assert loop.running() == [("web", "app"), ("web", "net")]


def test_a_restart_waits_for_its_back_off_and_happens_when_it_ends(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    options = PlanOptions(
        scope=NODE_SCOPE,
        network_image="pause:1",
        root_dir=str(tmp_path / "root"),
        back_off=BackOffPolicy(initial=4, maximum=8),
    )
    loop = make_loop(tmp_path, [str(pods)], options=options, sync_period=60, source_period=100)
    loop.tick()
    app = next(c.id for c in loop.fake.containers if c.labels[LABEL_CONTAINER] == "app")
    # First exit: restarted at the next sync (here asked for, as an engine event does).
    loop.fake.exit(app, 1)
    loop.reconciler.request_sync()
    loop.tick()
    assert loop.running() == [("web", "app"), ("web", "net")]
    second = next(
        c.id for c in loop.fake.containers if c.running and c.labels[LABEL_CONTAINER] == "app"
    )
    loop.fake.exit(second, 1)
    loop.reconciler.request_sync()
    wait = loop.tick()
    assert loop.running() == [("web", "net")]
    assert wait == pytest.approx(4, abs=0.5)  # woken when the back-off ends, not at 60
    loop.advance(wait)
    assert loop.running() == [("web", "app"), ("web", "net")]


def test_garbage_collection_runs_on_its_own_period(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    options = PlanOptions(
        scope=NODE_SCOPE,
        network_image="pause:1",
        root_dir=str(tmp_path / "root"),
        gc=GCPolicy(max_per_container=1, min_age=0),
        back_off=BackOffPolicy(initial=1, maximum=1),
    )
    loop = make_loop(
        tmp_path, [str(pods)], options=options, sync_period=5, source_period=100, gc_period=60
    )
    loop.tick()
    for _ in range(3):
        app = next(
            c.id for c in loop.fake.containers if c.running and c.labels[LABEL_CONTAINER] == "app"
        )
        loop.fake.exit(app, 1)
        loop.advance(5)
    exited = [c for c in loop.fake.containers if not c.running]
    assert len(exited) == 3
    assert "remove" not in loop.fake.call_names()
    loop.advance(60 - 15)
    assert len([c for c in loop.fake.containers if not c.running]) == 1


def test_a_gc_round_removes_the_volume_a_gone_pod_left(tmp_path: Path) -> None:
    """An emptyDir volume podsync made for a pod that is gone, with no container left
    (its removal failed once), is removed by the next garbage collection round; a
    round without collection lists no volume."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    fake = FakeRuntime(images=IMAGES)
    left = podsync.ObservedVolume(
        "podsync-emptydir_gone-uid_cache",
        {
            "io.podsync.volume.kind": "empty-dir",
            "io.podsync.pod.uid": "gone-uid",
            "io.podsync.volume.name": "cache",
        },
    )
    fake.add_volume(left)
    fake.add_volume("handmade")
    loop = make_loop(
        tmp_path, [str(pods)], fake=fake, sync_period=5, source_period=100, gc_period=60
    )
    loop.tick()
    # (web runs: its state volume, made at its network container's create, stays.)
    kinds = {v.name: v.labels.get("io.podsync.volume.kind") for v in fake.volumes}
    assert {"handmade": None} == {n: k for n, k in kinds.items() if k != "pod-state"}
    fake.clear_calls()
    loop.advance(5)
    assert "list_volumes" not in fake.call_names()


class SlowStart(FakeRuntime):
    """Starting a container of a pod named ``slow`` waits until ``release`` is set."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = threading.Event()
        self.holding = threading.Event()

    def start_container(self, container_id: str) -> None:
        if "_slow." in self.container(container_id).name:
            self.holding.set()
            self.release.wait(WAIT)
        super().start_container(container_id)


def test_a_slow_pod_does_not_hold_the_others_and_is_synced_once_more(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "slow.yaml").write_text(pod_yaml("slow"))
    fake = SlowStart(images=IMAGES)
    loop = make_loop(tmp_path, [str(pods)], fake=fake, source_period=1)
    loop.reconciler.tick()
    assert fake.holding.wait(WAIT)
    try:
        (pods / "web.yaml").write_text(pod_yaml("web"))
        loop.clock.advance(1)
        loop.reconciler.tick()
        assert loop.reconciler.wait_idle(
            WAIT, pods=[podsync.derive_pod_uid("file", "default", "web")]
        )
        assert ("web", "app") in loop.running()
        # The slow pod was planned again while its sync ran: nothing of it was
        # started twice; it is synced again once its worker is free - alone, from its
        # own list, as the kubelet's pod worker runs a pending update.
        fake.clear_calls()
        loop.reconciler.request_sync()
        loop.reconciler.tick()
    finally:
        fake.release.set()
    assert loop.reconciler.wait_idle(WAIT)
    slow = podsync.derive_pod_uid("file", "default", "slow")
    assert [(slow,)] == [c.args for c in fake.calls if c.name == "list_pod"]
    loop.tick()
    assert loop.running() == [("slow", "app"), ("slow", "net"), ("web", "app"), ("web", "net")]
    created = [c.args[0].name for c in fake.calls if c.name == "create"]
    assert created == [n for n in created if "_slow." in n]
    assert len(created) <= 1


def test_a_rejected_pod_is_reported_once(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(
        pod_yaml("web").replace(
            "    image: busybox:1\n",
            "    image: busybox:1\n    securityContext:\n      privileged: true\n",
        )
    )
    loop = make_loop(tmp_path, [str(pods)], sync_period=10)
    loop.tick()
    loop.advance(10)
    (rejected,) = loop.kinds("rejected")
    assert rejected.pod == "default/web"
    assert "privileged" in rejected.message


# --- in its own thread -----------------------------------------------------------------


def test_the_context_manager_runs_the_loop_in_a_thread_and_stops_it(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop = make_loop(tmp_path, [str(pods)])
    with loop.reconciler as reconciler:
        assert reconciler is loop.reconciler
        assert wait_for(lambda: loop.running() == [("web", "app"), ("web", "net")])
    # Stopped: the pods keep running, nothing was stopped.
    assert loop.running() == [("web", "app"), ("web", "net")]
    assert "stop" not in loop.fake.call_names()
    assert [n.kind for n in loop.notices][-1] == "stopped"


def test_an_engine_event_restarts_a_container_without_waiting_for_the_period(
    tmp_path: Path,
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop = make_loop(tmp_path, [str(pods)], sync_period=3600, source_period=3600)
    with loop.reconciler:
        assert wait_for(lambda: loop.running() == [("web", "app"), ("web", "net")])
        assert wait_for(lambda: "events" in loop.fake.call_names())
        app = next(c.id for c in loop.fake.containers if c.labels[LABEL_CONTAINER] == "app")
        loop.fake.exit(app, 137, oom=True)
        assert wait_for(
            lambda: any(
                c.running and c.labels[LABEL_CONTAINER] == "app" and c.id != app
                for c in loop.fake.containers
            )
        )


def test_run_can_be_stopped_from_another_thread(tmp_path: Path) -> None:
    loop = make_loop(tmp_path, [str(tmp_path)])
    timer = threading.Timer(0.05, loop.reconciler.stop)
    timer.start()
    loop.reconciler.run()  # returns once stopped
    timer.join()
    assert loop.kinds("stopped")


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    fake = FakeRuntime()
    with pytest.raises(ValueError, match="sync_period"):
        podsync.Reconciler([str(tmp_path)], fake, sync_period=0)
    with pytest.raises(ValueError, match="standard input"):
        podsync.Reconciler(["-"], fake)


class LaggingList(FakeRuntime):
    """Docker logs ``die`` before its container list shows the container stopped: the
    first list after an exit still shows it running."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lagging: set[str] = set()

    def exit(self, container_id: str, code: int, *, oom: bool = False) -> None:
        self.lagging.add(container_id)
        super().exit(container_id, code, oom=oom)

    def list_containers(self) -> list[podsync.ObservedContainer]:
        listed = super().list_containers()
        stale = self.lagging
        self.lagging = set()
        return [attrs.evolve(c, running=True) if c.id in stale else c for c in listed]


def test_a_died_container_still_listed_running_is_looked_at_again(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    fake = LaggingList(images=IMAGES)
    # A clock that moves as it is read: the second look is due a moment later.
    loop = make_loop(
        tmp_path, [str(pods)], fake=fake, sync_period=3600, source_period=3600, step=0.01
    )
    with loop.reconciler:
        assert wait_for(lambda: loop.running() == [("web", "app"), ("web", "net")])
        assert wait_for(lambda: "events" in fake.call_names())
        app = next(c.id for c in fake.containers if c.labels[LABEL_CONTAINER] == "app")
        fake.exit(app, 1)
        assert wait_for(
            lambda: any(
                c.running and c.labels[LABEL_CONTAINER] == "app" and c.id != app
                for c in fake.containers
            )
        )


def test_probes_run_on_their_own_period_not_the_syncs(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    probed = pod_yaml("web") + (
        "    livenessProbe:\n"
        "      exec: {command: [/bin/check]}\n"
        "      periodSeconds: 3\n"
        "      failureThreshold: 1\n"
    )
    (pods / "web.yaml").write_text(probed)
    loop = make_loop(tmp_path, [str(pods)], sync_period=60, source_period=600)
    loop.tick()
    loop.fake.clear_calls()
    assert loop.advance(3) <= 3
    assert loop.advance(3) <= 3
    execs = [c for c in loop.fake.calls if c.name == "exec"]
    assert [c.args[1] for c in execs] == [("/bin/check",)] * len(execs)
    assert execs
    # A failing probe is acted on at its period too.
    loop.fake.set_exec_result(["/bin/check"], 1)
    before = {c.id for c in loop.fake.containers if c.running}
    loop.advance(3)
    loop.advance(3)
    after = {c.id for c in loop.fake.containers if c.running}
    assert len(before - after) == 1


def test_no_round_before_the_sources_were_read(tmp_path: Path) -> None:
    loop = make_loop(tmp_path, [str(tmp_path)], sync_period=10, source_period=20)
    # In its thread a source may not have been read yet when the loop starts; the
    # loop waits for it (at most one source period) rather than sync an empty state.
    loop.reconciler._threaded = True
    loop.reconciler.tick()
    assert loop.fake.call_names() == []


def test_the_callers_ready_sources_still_limit_deletions(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    first = make_loop(tmp_path, [str(pods)])
    first.tick()
    (pods / "web.yaml").unlink()
    options = PlanOptions(
        scope=NODE_SCOPE,
        network_image="pause:1",
        root_dir=str(tmp_path / "root"),
        ready_sources=frozenset({"api"}),
    )
    loop = make_loop(tmp_path, [str(pods)], fake=first.fake, options=options)
    loop.tick()
    assert loop.running() == [("web", "app"), ("web", "net")]


def test_podsyncs_own_stops_do_not_trigger_another_sync(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web", sidecar="busybox:1"))
    loop = make_loop(tmp_path, [str(pods)], sync_period=3600, source_period=0.05)
    with loop.reconciler:
        assert wait_for(lambda: len(loop.running()) == 3)
        assert wait_for(lambda: "events" in loop.fake.call_names())
        old = {c.id for c in loop.fake.containers if c.running}
        loop.fake.clear_calls()
        (pods / "web.yaml").write_text(pod_yaml("web", sidecar="busybox:2"))
        assert wait_for(lambda: len({c.id for c in loop.fake.containers if c.running} - old) == 1)
        assert loop.reconciler.wait_idle(WAIT)
        threading.Event().wait(0.3)  # time for a sync the stop's die event would ask for
    # One sync for the change: the side container's stop (podsync's own) asked for none.
    assert loop.fake.call_names().count("list") == 1


def test_a_reconciler_runs_once(tmp_path: Path) -> None:
    loop = make_loop(tmp_path, [str(tmp_path)])
    with loop.reconciler:
        pass
    with pytest.raises(RuntimeError, match="runs once"):
        loop.reconciler.run()


def test_each_source_can_have_a_period_of_its_own(tmp_path: Path) -> None:
    fast = tmp_path / "fast"
    fast.mkdir()
    slow = tmp_path / "slow"
    slow.mkdir()
    loop = make_loop(
        tmp_path, [str(fast), str(slow)], source_period=30, source_periods={str(fast): 2}
    )
    loop.tick()
    (fast / "web.yaml").write_text(pod_yaml("web"))
    (slow / "db.yaml").write_text(pod_yaml("db"))
    loop.advance(2)
    assert loop.running() == [("web", "app"), ("web", "net")]
    loop.advance(28)
    assert loop.running() == [("db", "app"), ("db", "net"), ("web", "app"), ("web", "net")]
    with pytest.raises(ValueError, match="not a source"):
        podsync.Reconciler([str(fast)], FakeRuntime(), source_periods={str(slow): 1})


def test_action_kinds_as_the_board_counts_them() -> None:
    from podsync.actions._actions import CreateVolume, Reason, RemovePodDir, Wait
    from podsync.loop._reporting import action_kind

    assert action_kind(Wait("default/web", "u", "app", 1.0, Reason.BACK_OFF, "m")) == "wait"
    assert action_kind(RemovePodDir("u", "/r/u", Reason.ORPHANED_POD_DIR, "m")) == "remove-pod-dir"
    volume = CreateVolume("default/web", "u", "v", {}, Reason.MISSING, "m")
    assert action_kind(volume) == "create-volume"


SECRET_POD = """\
apiVersion: v1
kind: Secret
metadata:
  name: db-creds
stringData:
  password: {password}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1
    env:
    - name: DB_PASSWORD
      valueFrom:
        secretKeyRef: {{name: db-creds, key: password}}
"""


def _app_env(fake: FakeRuntime) -> list[str]:
    (app,) = [c for c in fake.containers if c.labels.get(LABEL_CONTAINER) == "app" and c.running]
    spec = fake.spec(app.id)
    assert spec is not None
    return list(spec.env)


def test_a_secret_value_reaches_the_container_and_a_rotated_one_replaces_it(
    tmp_path: Path,
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(SECRET_POD.format(password="s3cret-one"))
    loop = make_loop(tmp_path, [str(pods)], source_period=1, secret_key=b"k" * 32)
    loop.tick()
    assert "DB_PASSWORD=s3cret-one" in _app_env(loop.fake)
    for c in loop.fake.containers:
        assert not any("s3cret-one" in value for value in c.labels.values())
    (pods / "web.yaml").write_text(SECRET_POD.format(password="s3cret-two"))
    loop.advance(1)
    assert "DB_PASSWORD=s3cret-two" in _app_env(loop.fake)


def test_without_the_host_key_a_pod_that_uses_a_secret_is_a_source_error(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(SECRET_POD.format(password="s3cret-one"))
    loop = make_loop(tmp_path, [str(pods)], source_period=1)
    loop.tick()
    assert loop.running() == []
    ((source, message),) = loop.board.named("source_error")
    assert source == str(pods)
    assert "secret_key" in message
    assert "s3cret-one" not in message


def test_the_loop_keeps_probe_states_in_memory(tmp_path: Path) -> None:
    """The loop keeps its probes' states in memory, as the kubelet's prober does: a probe
    run writes no record into the engine (one-shot ``apply`` runs need those, a
    long-running loop does not), and the failures still count to the threshold."""
    pods = tmp_path / "pods"
    pods.mkdir()
    probed = pod_yaml("web") + (
        "    livenessProbe:\n"
        "      exec: {command: [/bin/check]}\n"
        "      periodSeconds: 3\n"
        "      failureThreshold: 2\n"
    )
    (pods / "web.yaml").write_text(probed)
    loop = make_loop(tmp_path, [str(pods)], sync_period=60, source_period=600)
    loop.tick()
    loop.fake.set_exec_result(["/bin/check"], 1)
    before = {c.id for c in loop.fake.containers if c.running}
    loop.fake.clear_calls()

    loop.advance(3)
    assert before == {c.id for c in loop.fake.containers if c.running}
    loop.advance(3)

    assert len(before - {c.id for c in loop.fake.containers if c.running}) == 1
    kinds = {v.labels.get("io.podsync.volume.kind") for v in loop.fake.volumes}
    assert "probe-record" not in kinds


def test_a_failed_pull_is_not_tried_again_before_its_back_off_ends(tmp_path: Path) -> None:
    """The loop remembers a failed pull (per pod and image): the next rounds do not
    pull, the loop wakes when the back-off ends (10 s, not the 60 s period) and pulls
    again; the back-off doubles; once the registry answers, the container runs."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web", image="registry.example.com/myapp:1"))
    loop = make_loop(tmp_path, [str(pods)], sync_period=60, source_period=100)
    loop.fake.fail("pull", match="myapp", error="pull access denied")

    def pulls() -> int:
        return sum(1 for c in loop.fake.calls if c.name == "pull")

    loop.tick()
    assert 1 == pulls()
    loop.reconciler.request_sync()
    wait = loop.tick()
    assert 1 == pulls()
    assert wait == pytest.approx(10, abs=0.5)  # woken when the back-off ends
    wait = loop.advance(wait)
    assert 2 == pulls()
    loop.reconciler.request_sync()
    wait = loop.tick()
    assert 2 == pulls()
    assert wait == pytest.approx(20, abs=0.5)  # doubled
    loop.fake.clear_faults()
    loop.advance(wait)
    assert 3 == pulls()
    assert loop.running() == [("web", "app"), ("web", "net")]
