"""A death syncs its pod alone (``podsync.loop._deaths``; issue 33), as the kubelet's
pod worker syncs the one pod its event generator names (``pkg/kubelet/pod_workers.go``):
from a list of the pod's own containers, never seeing - so never touching - another pod.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import podsync
from podsync import PlanOptions
from podsync.actions._options import NODE_SCOPE
from podsync.host._node import NodeInfo
from podsync.loop._deaths import alone_syncable
from podsync.model._pod import ObservedContainer, ResourceList
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_UID
from podsync.testing import FakeClock, FakeRuntime
from tests.support.polling import wait_for

WAIT = 10.0  # seconds a test waits for the workers at most (never reached when it passes)
NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)
CAPACITY = ResourceList(cpu=2000, memory=4 * 1024**3)

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: shop
spec:
  containers:
  - name: app
    image: busybox:1
    resources:
      requests:
        cpu: {cpu}
"""


def write_pods(directory: Path, **cpus: str) -> None:
    directory.mkdir(exist_ok=True)
    for name, cpu in cpus.items():
        (directory / f"{name}.yaml").write_text(POD.format(name=name, cpu=cpu))


def options(tmp_path: Path, **fields: object) -> PlanOptions:
    return PlanOptions(
        scope=NODE_SCOPE, network_image="pause:1", root_dir=str(tmp_path / "root"), **fields
    )


def a_2014_container(uid: str) -> ObservedContainer:
    """A container the seed kubelet left, of pod ``uid`` (no labels; its name says)."""
    return ObservedContainer(
        "5eed", f"k8s_app.1a2b3c4d_web.shop.file_{uid}_0badf00d", "busybox:1", {}, running=True
    )


@pytest.mark.parametrize(
    ("case", "cpus", "old_container", "alone"),
    [
        pytest.param("admitted, every container labelled", {"web": "100m"}, False, {"web"}),
        pytest.param("not admitted: the node's CPU", {"web": "100m", "big": "4"}, False, {"web"}),
        pytest.param("a 2014 kubelet's container of it", {"web": "100m"}, True, set()),
    ],
)
def test_which_pods_a_death_syncs_alone(
    tmp_path: Path, case: str, cpus: dict[str, str], old_container: bool, alone: set[str]
) -> None:
    write_pods(tmp_path / "pods", **cpus)
    desired = podsync.load_pods([str(tmp_path / "pods")])
    web = next(p for p in desired if p.name == "web")
    clock = FakeClock(1_000_000.0)
    fake = FakeRuntime(images=["busybox:1", "pause:1"], capacity=CAPACITY, clock=clock)
    if old_container:
        fake.add_container(a_2014_container(web.uid))
    result = podsync.sync(
        desired, fake, options=options(tmp_path, adopt_2014_containers=True), clock=clock
    )
    syncable = alone_syncable(desired, result.plan, result.observation)
    assert alone == {pod.name for pod in syncable.values()}, case


def loop_of(
    tmp_path: Path, fake: FakeRuntime, clock: FakeClock, board: object = None
) -> podsync.Reconciler:
    write_pods(tmp_path / "pods", web="100m", db="100m")
    return podsync.Reconciler(
        [str(tmp_path / "pods")],
        fake,
        options(tmp_path),
        board=board,  # type: ignore[arg-type]
        node=NODE,
        clock=clock,
        sync_period=3600,
        source_period=3600,
        gc_period=3600,
    )


def app_of(fake: FakeRuntime, pod: str) -> str:
    (found,) = [
        c.id
        for c in fake.containers
        if c.running
        and c.labels.get("io.podsync.pod.name") == pod
        and c.labels.get(LABEL_CONTAINER) == "app"
    ]
    return found


class Statuses:
    """A board: the statuses of each round."""

    def __init__(self) -> None:
        self.rounds = 0

    def pods_seen(self, statuses: object) -> None:
        self.rounds += 1

    def sync_done(self, seconds: float, ok: bool, error: str = "") -> None:
        pass

    def action_done(self, kind: str, result: str) -> None:
        pass


@pytest.mark.parametrize("board", [False, True], ids=["no board", "a board"])
def test_a_death_restarts_its_pod_from_the_pods_own_list(tmp_path: Path, board: bool) -> None:
    clock = FakeClock(1_000_000.0)
    fake = FakeRuntime(images=["busybox:1", "pause:1"], clock=clock, capacity=CAPACITY)
    statuses = Statuses()
    loop = loop_of(tmp_path, fake, clock, board=statuses if board else None)
    with loop:
        assert wait_for(lambda: "events" in fake.call_names() and has_app(fake, "db"))
        assert wait_for(lambda: has_app(fake, "web"))
        assert loop.wait_idle(WAIT)
        died, db = app_of(fake, "web"), app_of(fake, "db")
        uid = fake.container(died).labels[LABEL_POD_UID]
        fake.clear_calls()
        rounds, asked = statuses.rounds, []
        request_sync = loop.request_sync

        def counted() -> None:
            asked.append(1)
            request_sync()

        loop.request_sync = counted  # type: ignore[method-assign]
        fake.exit(died, 1)
        assert wait_for(lambda: has_app(fake, "web") and app_of(fake, "web") != died)
        assert loop.wait_idle(WAIT)
        # With a board the round that tells it the pods' statuses follows; without
        # one, the pod's own sync did all a round would, and none is asked for.
        if board:
            assert wait_for(lambda: statuses.rounds > rounds)
        else:
            assert [] == asked
    calls = fake.calls
    names = [c.name for c in calls]
    restarted = names.index("start")
    # Before the restart the engine was asked for the pod's containers alone: not the
    # whole list, which the round after it takes.
    assert "list" not in names[:restarted]
    listed = [(c.name, c.args) for c in calls[:restarted] if c.name in ("list", "list_pod")]
    assert [("list_pod", (uid,))] == listed
    assert app_of(fake, "db") == db  # the other pod untouched
    assert ("list" in names[restarted:]) is board


def test_a_pods_own_sync_never_removes_another_pod(tmp_path: Path) -> None:
    # In the node's scope a round removes every pod it does not desire; a sync of one
    # pod alone sees no other pod, so it removes none, even one that is not desired.
    write_pods(tmp_path / "pods", web="100m", gone="100m")
    both = podsync.load_pods([str(tmp_path / "pods")])
    clock = FakeClock(1_000_000.0)
    fake = FakeRuntime(images=["busybox:1", "pause:1"], capacity=CAPACITY, clock=clock)
    podsync.sync(both, fake, options=options(tmp_path), clock=clock)
    web = next(p for p in both if p.name == "web")
    gone_uid = next(p.uid for p in both if p.name == "gone")
    fake.exit(app_of(fake, "web"), 1)
    fake.clear_calls()

    result = podsync.sync([web], fake, options=options(tmp_path), pods_only=True, clock=clock)

    assert {web.uid} == {c.labels[LABEL_POD_UID] for c in result.observation.containers}
    assert gone_uid not in result.observation.pod_dirs
    assert all(a.pod_uid == web.uid for a in result.plan.actions)
    assert has_app(fake, "gone")
    assert has_app(fake, "web")
    assert "list" not in fake.call_names()


def test_pods_only_needs_a_pod_list(tmp_path: Path) -> None:
    class Bare:
        """A core runtime: no ``list_pod_containers``."""

        def __init__(self, fake: FakeRuntime) -> None:
            self.list_containers = fake.list_containers
            self.list_images = fake.list_images

    with pytest.raises(TypeError, match="PodListRuntime"):
        podsync.observe(Bare(FakeRuntime()), str(tmp_path), pods_only=True)  # type: ignore[arg-type]


def has_app(fake: FakeRuntime, pod: str) -> bool:
    return any(
        c.running
        and c.labels.get("io.podsync.pod.name") == pod
        and c.labels.get(LABEL_CONTAINER) == "app"
        for c in fake.containers
    )


def test_a_crash_loops_back_off_wakes_a_round_when_it_ends(tmp_path: Path) -> None:
    # A crash-looping pod's death plans a wait, not a restart: no round is asked for
    # then (under churn they ran back to back), and the loop wakes when it ends. The
    # events thread's call (``_died_in``) is made here; ``tick()`` drives the loop.
    clock = FakeClock(1_000_000.0)
    fake = FakeRuntime(images=["busybox:1", "pause:1"], clock=clock, capacity=CAPACITY)
    loop = loop_of(tmp_path, fake, clock)
    loop.tick()
    assert loop.wait_idle(WAIT)
    uid = fake.container(app_of(fake, "web")).labels[LABEL_POD_UID]
    for _ in range(2):  # the first death restarts at once, the second waits
        fake.exit(app_of(fake, "web"), 1)
        loop._died_in(uid)
        assert loop.wait_idle(WAIT)
    assert not has_app(fake, "web")
    fake.clear_calls()
    due = loop.tick()
    assert 0 < due <= 20  # the back-off's end, not the 3600 s periods
    assert [] == fake.call_names()  # and no round now
    clock.advance(due)
    loop.tick()
    assert loop.wait_idle(WAIT)
    assert fake.call_names()[0] == "list"  # the round at the back-off's end
    assert has_app(fake, "web")


@pytest.mark.parametrize(
    ("case", "news", "began", "same_pod", "superseded"),
    [
        pytest.param("nothing of its own", None, None, True, False, id="none"),
        pytest.param("own sync began after, same pod", None, 7, True, True, id="after"),
        pytest.param("own sync began after, pod changed", None, 7, False, False, id="changed"),
        pytest.param("own sync began before", None, 3, True, False, id="before"),
        pytest.param("a death after, its sync not begun", 6, 3, True, True, id="pending"),
        pytest.param("a death after, its sync began", 6, 7, True, True, id="began"),
        pytest.param("a death before", 4, None, True, False, id="old-news"),
    ],
)
def test_when_a_pods_own_sync_supersedes_a_rounds_plan(
    tmp_path: Path,
    case: str,
    news: int | None,
    began: int | None,
    same_pod: bool,
    superseded: bool,
) -> None:
    # The round observed as number 5; the pod's own syncs and deaths are numbered in
    # the same order (``_dispatch``: a superseded plan asks for no fresh round).
    clock = FakeClock(1_000_000.0)
    loop = loop_of(tmp_path, FakeRuntime(images=["busybox:1", "pause:1"], clock=clock), clock)
    web, db = podsync.load_pods([str(tmp_path / "pods")])
    if news is not None:
        loop._news[web.uid] = news
    if began is not None:
        loop._alone_began[web.uid] = (began, web if same_pod else db)
    with loop._cond:
        assert loop._superseded(web.uid, web, 5) is superseded, case
