"""docs/library.md's "Threads and processes", shown: what may be shared between threads, that
planning is re-entrant (it remembers texts in the ``Pod`` objects it plans, and threads
planning the same objects at once get the plan one thread gets and lose nothing it
remembered), that ``FakeRuntime`` is thread-safe, that two ``sync`` calls at once on one
runtime fail as results and converge, and what crosses a process boundary (results,
plans and pods pickle; a pod unpickled is planned as a new object).

The engine's side of two syncs at once is ``tests/engine/test_threads_and_processes.py``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
import pytest

import podsync
from podsync import Container, Plan, PlanOptions, Pod, parse_pods, plan, pod_status
from podsync.actions._actions import CreateSpec
from podsync.exceptions import NameConflict
from podsync.labels import LABEL_CONTAINER, LABEL_POD_UID
from podsync.model._pod import ObservedContainer
from podsync.planner import _spec_change
from podsync.spec import _hashing
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.loop.test_reconciler import make_loop, pod_yaml, wait_for

NOW = 1_700_000_000.0
IMAGES = ["busybox:1.36", "registry.k8s.io/pause:3.10"]
THREADS = 8

PODS_YAML = "\n---\n".join(
    f"""\
apiVersion: v1
kind: Pod
metadata:
  name: web-{i}
  labels:
    app: web
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: ["sh", "-c"]
    args: ["sleep 3600"]
    env:
    - name: REPLICA
      value: "{i}"
  - name: logs
    image: busybox:1.36
    args: ["tail", "-f", "/dev/null"]
  - name: metrics
    image: busybox:1.36
    ports:
    - containerPort: 9100
"""
    for i in range(6)
)


def web_pods() -> tuple[Pod, ...]:
    """Six pods of three containers, new objects on every call (nothing remembered)."""
    return parse_pods(PODS_YAML, source="file")


@contextlib.contextmanager
def switching_often() -> Iterator[None]:
    """Threads switch every microsecond instead of every 5 ms: a read-modify-write that
    another thread can interleave is interleaved within a few rounds."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def at_once(work: Callable[[int], Any], threads: int = THREADS) -> list[Any]:
    """``work(n)`` for n in range(threads), each in a thread, all let go together;
    their results in order (the first exception is raised)."""
    barrier = threading.Barrier(threads)

    def one(n: int) -> Any:
        barrier.wait()
        return work(n)

    with ThreadPoolExecutor(threads) as pool:
        return [f.result() for f in [pool.submit(one, n) for n in range(threads)]]


@pytest.fixture
def texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The containers whose canonical spec text the planner computed (from any thread)."""
    made: list[str] = []
    compute = _hashing.canonical_spec_text

    def counting(c: Container, pod: Pod | None = None, *, root_dir: str) -> str:
        made.append(f"{pod.name if pod else ''}/{c.name}")  # list.append is atomic
        return compute(c, pod, root_dir=root_dir)

    monkeypatch.setattr(_spec_change, "canonical_spec_text", counting)
    return made


def running_fake(tmp_path: Path, pods: tuple[Pod, ...]) -> tuple[FakeRuntime, PlanOptions]:
    """A fake engine on which ``pods`` run (synced once), and the options they ran with."""
    clock = FakeClock(NOW, step=0)
    fake = FakeRuntime(images=IMAGES, clock=clock)
    options = PlanOptions(root_dir=str(tmp_path / "root"))
    assert podsync.sync(pods, fake, options=options, clock=clock).ok
    return fake, options


# --- what may be shared: frozen values ---------------------------------------------------


def _values(tmp_path: Path) -> dict[str, Any]:
    pods = web_pods()
    fake, options = running_fake(tmp_path, pods)
    result = podsync.sync(pods, fake, options=options, clock=fake.clock)
    return {
        "Pod": pods[0],
        "Container": pods[0].containers[0],
        "PlanOptions": options,
        "Plan": result.plan,
        "CreateSpec": CreateSpec("app", "busybox:1.36", command=("sh",)),
        "ObservedContainer": result.observation.containers[0],
        "Observation": result.observation,
        "SyncResult": result,
        "PodStatus": pod_status(pods[0], result.observation.containers),
    }


SHARED = [
    "Pod",
    "Container",
    "PlanOptions",
    "Plan",
    "CreateSpec",
    "ObservedContainer",
    "Observation",
    "SyncResult",
    "PodStatus",
]


@pytest.mark.parametrize("name", SHARED)
def test_the_values_threads_share_are_frozen(name: str, tmp_path: Path) -> None:
    """Pods, options, plans, observations and results refuse every assignment: a thread
    that holds one sees it as it was made."""
    value = _values(tmp_path)[name]
    field = attrs.fields(type(value))[0].name

    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(value, field, getattr(value, field))


# --- planning is re-entrant ----------------------------------------------------------------


def test_threads_planning_the_same_pod_objects_at_once_get_one_threads_plan(
    tmp_path: Path, texts: list[str]
) -> None:
    """Eight threads plan the same Pod objects at once, twice each (the second plan of
    a pod remembers its texts in it), round after round with new objects: every plan
    equals the plan one thread makes of equal pods, and what the threads remembered is
    whole - a later plan computes no text."""
    fake, options = running_fake(tmp_path, web_pods())
    observed, images = fake.list_containers(), fake.list_images()

    def plan_of(pods: tuple[Pod, ...]) -> Plan:
        return plan(pods, observed, images=images, now=NOW, options=options)

    alone = plan_of(web_pods())
    assert not alone.has_changes  # steady: the texts of running containers are compared
    with switching_often():
        for _ in range(10):
            pods = web_pods()

            def twice(_: int, pods: tuple[Pod, ...] = pods) -> list[Plan]:
                return [plan_of(pods), plan_of(pods)]

            plans = at_once(twice)
            assert all(p == alone for pair in plans for p in pair)
            texts.clear()
            assert alone == plan_of(pods)
            assert [] == texts


def test_texts_remembered_by_threads_at_once_are_all_kept(texts: list[str]) -> None:
    """Threads that remember texts in one pod at once (each its own: another root
    directory) lose none of them: each later finds its own without computing it."""
    roots = 16

    def remember(n: int) -> None:
        _spec_change.replanned(pod)
        for r in range(roots):
            _spec_change.remembered_hash(pod, pod.containers[0], f"/root/{n}/{r}", True)

    with switching_often():
        for _ in range(5):
            pod = web_pods()[0]
            at_once(remember)
            texts.clear()
            for n in range(THREADS):
                for r in range(roots):
                    _spec_change.remembered_hash(pod, pod.containers[0], f"/root/{n}/{r}", True)
            assert [] == texts


class PausingPod(Pod):
    """A pod whose first read of what planning remembered, in the thread ``pausing``,
    gives the value read and then waits until ``resume`` is set: another thread acts
    between that thread's check and what it does on it."""

    pausing: threading.Thread | None = None
    checked = threading.Event()
    resume = threading.Event()

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        cls = type(self)
        if name == "_planned" and threading.current_thread() is cls.pausing:
            cls.pausing = None
            cls.checked.set()
            assert cls.resume.wait(10)
        return value


def test_a_first_plan_beside_another_threads_keeps_what_that_thread_remembered(
    texts: list[str],
) -> None:
    """One thread finds a pod never planned and, before it marks it planned, another
    thread plans it too and remembers a text in it: the first thread's mark keeps that
    text (a check-then-set would have replaced it with nothing)."""
    pod = PausingPod("web", (Container("app", "busybox:1.36"),))
    first = threading.Thread(target=_spec_change.replanned, args=(pod,))
    PausingPod.pausing = first
    first.start()
    assert PausingPod.checked.wait(10)  # it saw no mark, and waits

    assert not _spec_change.replanned(pod)  # this thread marks it first ...
    _spec_change.remembered_hash(pod, pod.containers[0], "/root", True)  # ... and keeps
    PausingPod.resume.set()
    first.join(10)
    texts.clear()
    _spec_change.remembered_hash(pod, pod.containers[0], "/root", True)

    assert [] == texts


# --- FakeRuntime is thread-safe ----------------------------------------------------------


def _spec(name: str) -> CreateSpec:
    return CreateSpec(name, "busybox:1.36", network="none", labels={"test": "threads"})


def test_a_fake_runtime_shared_by_threads_loses_nothing() -> None:
    """Eight threads create, start, list, stop and remove their own containers on one
    fake, and all try to create one name: each of their containers was made once and
    went through its whole life, and exactly one create of the shared name won."""
    fake = FakeRuntime(images=IMAGES, clock=FakeClock(NOW, step=0))
    per_thread = 20

    def work(n: int) -> tuple[list[str], int]:
        mine = []
        for i in range(per_thread):
            cid = fake.create_container(_spec(f"t{n}-{i}"))
            fake.start_container(cid)
            assert cid in {c.id for c in fake.list_containers() if c.running}
            mine.append(cid)
        for cid in mine[::2]:
            fake.stop_container(cid, 0)
            fake.remove_container(cid)
        try:
            fake.create_container(_spec("contested"))
        except NameConflict:
            return mine, 0
        return mine, 1

    with switching_often():
        done = at_once(work)

    kept = {cid for mine, _ in done for cid in mine[1::2]}
    listed = fake.list_containers()
    assert kept | {fake.container("contested").id} == {c.id for c in listed}
    assert all(c.running for c in listed if c.id in kept)
    assert 1 == sum(won for _, won in done)
    names = fake.call_names()
    assert THREADS * (per_thread + 1) == names.count("create")
    assert THREADS * per_thread == names.count("start")
    assert THREADS * per_thread // 2 == names.count("remove")


# --- two syncs at once -----------------------------------------------------------------


def _instances(fake: FakeRuntime) -> dict[tuple[str, str], int]:
    """How many running instances each pod container has."""
    counts: dict[tuple[str, str], int] = {}
    for c in fake.list_containers():
        if c.running:
            key = (c.labels[LABEL_POD_UID], c.labels[LABEL_CONTAINER])
            counts[key] = counts.get(key, 0) + 1
    return counts


def test_two_syncs_at_once_on_one_runtime_fail_as_results_and_converge(tmp_path: Path) -> None:
    """Two threads sync the same pods on one shared runtime at once, round after round,
    while the pods change (a new image, then one pod goes): no exception escapes
    ``sync`` (a lost race is a failed result), and a following sync leaves exactly one
    running instance of every container, and nothing more to do."""
    clock = FakeClock(NOW, step=0)
    fake = FakeRuntime(images=[*IMAGES, "busybox:1.37"], clock=clock)
    # A named scope: the pod that leaves the set is the scope's, and goes.
    options = PlanOptions(root_dir=str(tmp_path / "root"), stop_timeout=0, scope="web")
    first = web_pods()
    changed = parse_pods(PODS_YAML.replace("busybox:1.36", "busybox:1.37"), source="file")
    rounds = [first, first, changed, changed[1:]]

    with switching_often():
        for pods in rounds:

            def one(_: int, pods: tuple[Pod, ...] = pods) -> podsync.SyncResult:
                return podsync.sync(pods, fake, options=options, clock=clock)

            results = at_once(one, 2)
            assert all(isinstance(r, podsync.SyncResult) for r in results)
            settled = podsync.sync(pods, fake, options=options, clock=clock)
            assert settled.ok, settled.apply_result.summary()
            want = {(p.uid, c): 1 for p in pods for c in ("net", "app", "logs", "metrics")}
            assert want == _instances(fake)
            again = podsync.sync(pods, fake, options=options, clock=clock)
            assert not again.plan.has_changes, again.plan.describe()


# --- processes ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Pod", "Plan", "SyncResult", "PodStatus"])
def test_results_plans_and_pods_round_trip_through_pickle(name: str, tmp_path: Path) -> None:
    """What a worker process sends back (a plan, a sync's result, a pod's status) and
    what it is sent (pods) pickles, and reads back equal."""
    value = _values(tmp_path)[name]

    assert value == pickle.loads(pickle.dumps(value))


def test_an_unpickled_pod_is_planned_as_a_new_object(tmp_path: Path, texts: list[str]) -> None:
    """What planning remembered in a pod is keyed by its container objects' identities,
    which do not cross ``pickle`` (another object could have them there): a pod read
    back from pickle is planned as the pod it was, and as a pod never planned - its
    first plan remembers nothing (as ``test_a_pod_planned_once_remembers_nothing``),
    its second computes its texts again and keeps them for the third."""
    pods = web_pods()
    fake, options = running_fake(tmp_path, pods)
    observed, images = fake.list_containers(), fake.list_images()
    first = plan(pods, observed, images=images, now=NOW, options=options)
    plan(pods, observed, images=images, now=NOW, options=options)
    copies = pickle.loads(pickle.dumps(pods))
    computed = []

    for _ in range(3):
        texts.clear()
        assert first == plan(copies, observed, images=images, now=NOW, options=options)
        computed.append(len(texts))

    assert [3 * len(pods), 3 * len(pods), 0] == computed


def _plan_in_a_worker(arguments: tuple[tuple[Pod, ...], list[ObservedContainer], Any]) -> Plan:
    pods, observed, options = arguments
    return plan(pods, observed, now=NOW, images=(), options=options)


def test_plans_made_in_other_processes_equal_this_ones(tmp_path: Path) -> None:
    """Pods and observations sent to worker processes (spawned: nothing shared but what
    is pickled) are planned there as here."""
    pods = web_pods()
    fake, options = running_fake(tmp_path, pods)
    observed = fake.list_containers()
    here = _plan_in_a_worker((pods, observed, options))
    changed = parse_pods(PODS_YAML.replace("busybox:1.36", "busybox:1.37"), source="file")
    work = [(pods, observed, options), (changed, observed, options)]

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        there = pool.map(_plan_in_a_worker, work)

    assert here == there[0]
    assert _plan_in_a_worker(work[1]) == there[1]
    assert there[1].has_changes


# --- the loop ------------------------------------------------------------------------------


def test_a_running_reconciler_is_asked_and_stopped_from_other_threads(tmp_path: Path) -> None:
    """While ``run()`` runs in its thread, other threads ask for syncs, read the desired
    pods and wait for idle, all at once; another stops it, and ``run()`` returns."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    loop = make_loop(tmp_path, [str(pods)])
    runner = threading.Thread(target=loop.reconciler.run)
    runner.start()
    try:
        assert wait_for(lambda: loop.running() == [("web", "app"), ("web", "net")])

        def ask(n: int) -> tuple[str, ...]:
            loop.reconciler.request_sync()
            assert loop.reconciler.wait_idle(10)
            return tuple(p.name for p in loop.reconciler.desired)

        assert [("web",)] * THREADS == at_once(ask)
    finally:
        threading.Thread(target=loop.reconciler.stop).start()
        runner.join(10)
    assert not runner.is_alive()
    assert loop.running() == [("web", "app"), ("web", "net")]
