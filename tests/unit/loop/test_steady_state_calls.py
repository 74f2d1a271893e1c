"""What a sync period costs the engine once stopped containers are about (issue 33).

A restarted container's earlier instance, and a crash-looping one, stay on the engine
until garbage collection; their stop records (``podsync.spec._records``) are read once,
kept by the loop (``observe``'s ``stop_records``), and the periods after that cost one
list call, as a steady state without them."""

from __future__ import annotations

import threading
from pathlib import Path

import podsync
from podsync import GCPolicy, PlanOptions
from podsync.actions._options import NODE_SCOPE
from podsync.applier._stop_records import write_stop_record
from podsync.host._node import NodeInfo
from podsync.model._pod import ObservedContainer
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_UID, LABEL_SCOPE
from podsync.testing import FakeClock, FakeRuntime
from tests.support.polling import wait_for

WAIT = 10.0  # seconds a test waits for the workers at most (never reached when it passes)
NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox:1
"""


def app_of(fake: FakeRuntime, pod: str, *, running: bool = True) -> str:
    (found,) = [
        c.id
        for c in fake.containers
        if c.labels.get("io.podsync.pod.name") == pod
        and c.labels.get(LABEL_CONTAINER) == "app"
        and c.running is running
    ]
    return found


def make_loop(tmp_path: Path, fake: FakeRuntime, clock: FakeClock) -> podsync.Reconciler:
    pods = tmp_path / "pods"
    pods.mkdir()
    for name in ("web", "db"):
        (pods / f"{name}.yaml").write_text(POD.format(name=name))
    options = PlanOptions(
        scope=NODE_SCOPE,
        network_image="pause:1",
        root_dir=str(tmp_path / "root"),
        # Nothing collected by count in these few minutes: the stopped instance stays.
        gc=GCPolicy(min_age=3600),
    )
    return podsync.Reconciler(
        [str(pods)],
        fake,
        options,
        node=NODE,
        clock=clock,
        sync_period=10,
        source_period=20,
        gc_period=600,
    )


def tick(loop: podsync.Reconciler) -> None:
    loop.tick()
    assert loop.wait_idle(WAIT)


def test_a_restarted_containers_stopped_instance_lists_volumes_once(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    fake = FakeRuntime(images=["busybox:1", "pause:1"], clock=clock)
    loop = make_loop(tmp_path, fake, clock)
    tick(loop)
    died = app_of(fake, "web")
    fake.exit(died, 1)
    fake.clear_calls()
    clock.advance(10)
    tick(loop)
    # The round that first sees it stopped reads its record (none: it exited by
    # itself), and the plan restarts it.
    assert fake.call_names().count("list_volumes") == 1
    assert app_of(fake, "web") != died
    assert app_of(fake, "web", running=False) == died
    for _ in range(5):
        fake.clear_calls()
        clock.advance(10)
        tick(loop)
        # The stopped instance is still there: its record is known, nothing is listed
        # but the containers (before: a volume list each period, for ever).
        assert fake.call_names() == ["list"]


def test_the_garbage_collection_round_reads_the_records_again(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    fake = FakeRuntime(images=["busybox:1", "pause:1"], clock=clock)
    loop = make_loop(tmp_path, fake, clock)
    tick(loop)
    fake.exit(app_of(fake, "db"), 0)
    clock.advance(10)
    tick(loop)
    listed = 0
    for _ in range(60):  # ten minutes: one GC round
        fake.clear_calls()
        clock.advance(10)
        tick(loop)
        listed += fake.call_names().count("list_volumes")
    assert listed == 1


def test_a_known_stop_record_is_used_without_a_list_and_dropped_ids_are_read_again(
    tmp_path: Path,
) -> None:
    fake = FakeRuntime(images=["busybox:1", "pause:1"])
    loop = make_loop(tmp_path, fake, FakeClock(1_000_000.0))
    tick(loop)
    root = str(tmp_path / "root")
    cid = app_of(fake, "web")
    fake.exit(cid, 0)
    known: dict[str, str] = {}
    observed = podsync.observe(fake, root, images=False, stop_records=known)
    assert observed.volumes_listed
    assert known == {cid: ""}
    # podsync's stop of a container that had already ended writes its record after
    # the list: what a caller knows is then stale until it drops the id, as the loop
    # does for every stop it begins.
    uid = fake.container(cid).labels[LABEL_POD_UID]
    write_stop_record(fake, uid, cid, "spec-changed")
    fake.clear_calls()
    again = podsync.observe(fake, root, images=False, stop_records=known)
    assert fake.call_names() == ["list"]
    assert [c.stopped_by_podsync for c in again.containers if c.id == cid] == [""]
    del known[cid]
    fresh = podsync.observe(fake, root, images=False, stop_records=known)
    assert fake.call_names() == ["list", "list", "list_volumes"]
    assert [c.stopped_by_podsync for c in fresh.containers if c.id == cid] == ["spec-changed"]
    assert known == {cid: "spec-changed"}
    # A container that is gone is forgotten at the next list.
    fake.remove_container(cid)
    podsync.observe(fake, root, images=False, volumes=True, stop_records=known)
    assert known == {}


def test_a_known_record_stands_for_the_volume_list_in_the_plan(tmp_path: Path) -> None:
    fake = FakeRuntime(images=["busybox:1", "pause:1"])
    loop = make_loop(tmp_path, fake, FakeClock(1_000_000.0))
    tick(loop)
    cid = app_of(fake, "web")
    fake.exit(cid, 0)
    observed = podsync.observe(
        fake, str(tmp_path / "root"), images=False, stop_records={cid: "unhealthy"}
    )
    assert not observed.volumes_listed
    assert [c.stopped_by_podsync for c in observed.containers if c.id == cid] == ["unhealthy"]


def test_another_scopes_container_dying_asks_the_loop_for_no_round(tmp_path: Path) -> None:
    # A shared engine: another podsync's pods (another scope) die and are restarted all
    # the time; a loop that synced on each of their deaths ran a full round for nothing.
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(POD.format(name="web"))
    clock = FakeClock(1_000_000.0)
    fake = FakeRuntime(images=["busybox:1", "pause:1"], clock=clock)
    theirs = ObservedContainer(
        "c0ffee",
        "theirs",
        "busybox:1",
        {LABEL_POD_UID: "uid-of-theirs", LABEL_CONTAINER: "app", LABEL_SCOPE: "other"},
        running=True,
    )
    fake.add_container(theirs)
    loop = podsync.Reconciler(
        [str(pods)],
        fake,
        PlanOptions(scope="mine", network_image="pause:1", root_dir=str(tmp_path / "root")),
        node=NODE,
        clock=clock,
        sync_period=3600,
        source_period=3600,
    )
    asked: list[str] = []
    request_sync = loop.request_sync

    def counted() -> None:
        asked.append(threading.current_thread().name)
        request_sync()

    loop.request_sync = counted  # type: ignore[method-assign]
    with loop:
        assert wait_for(lambda: "events" in fake.call_names() and bool(running_apps(fake)))
        mine = running_apps(fake)[0]
        fake.exit(theirs.id, 1)
        fake.exit(mine, 1)
        # The events are taken in order: once ours was acted on, theirs was seen.
        assert wait_for(lambda: running_apps(fake) not in ([], [mine]))
        assert loop.wait_idle(WAIT)
    # Ours was synced alone on its pod's worker (``podsync.loop._deaths``), which did
    # all a round would (no board, no back-off); theirs asked for nothing.
    assert [] == asked
    assert 1 == fake.call_names().count("list_pod")
    assert not fake.container(theirs.id).running  # and never touched


def running_apps(fake: FakeRuntime) -> list[str]:
    return [
        c.id
        for c in fake.containers
        if c.running and c.labels.get(LABEL_CONTAINER) == "app" and c.id != "c0ffee"
    ]
