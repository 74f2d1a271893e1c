"""``Reconciler(pods=...)``: Pod objects held in memory as a source of the loop - a
sequence, a function, a ``PodSet`` - on FakeRuntime with a fake clock (``tick()``), and
a ``PodSet`` changed while ``run()`` runs in its thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import podsync
from podsync import Container, Pod, PodSet
from podsync.spec._labels import LABEL_CONTAINER
from tests.unit.loop.test_reconciler import WAIT, make_loop, pod_yaml


def pod(name: str, image: str = "busybox:1", **kwargs: object) -> Pod:
    return Pod(name, (Container("app", image),), **kwargs)  # type: ignore[arg-type]


def test_a_sequence_of_pods_is_run_at_the_first_tick(tmp_path: Path) -> None:
    loop = make_loop(tmp_path, [], pods=[pod("web"), pod("db")])
    loop.tick()
    assert loop.running() == [("db", "app"), ("db", "net"), ("web", "app"), ("web", "net")]
    assert [p.source for p in loop.reconciler.desired] == ["api", "api"]
    assert loop.board.named("source_ok") == [("<pods>",)]


def test_a_pod_set_change_is_read_at_the_next_tick_without_waiting_for_a_period(
    tmp_path: Path,
) -> None:
    desired = PodSet([pod("web")])
    loop = make_loop(tmp_path, [], pods=desired, source_period=20, sync_period=10)
    loop.tick()
    desired.add(pod("db"))
    loop.tick()  # no time passed: the set is read at every tick
    assert ("db", "app") in loop.running()
    before = {c.labels[LABEL_CONTAINER]: c.id for c in loop.fake.containers if c.running}
    desired.add(pod("db", "busybox:2"))  # an edit: the pod of the same key is replaced
    loop.tick()
    db_app = [
        c
        for c in loop.fake.containers
        if c.running
        and c.labels["io.podsync.pod.name"] == "db"
        and c.labels[LABEL_CONTAINER] == "app"
    ]
    assert [c.image for c in db_app] == ["busybox:2"]
    assert db_app[0].id != before["app"]
    assert desired.remove("default/web")
    loop.tick()
    assert loop.running() == [("db", "app"), ("db", "net")]


def test_a_function_is_called_at_each_source_period(tmp_path: Path) -> None:
    calls: list[int] = []
    wanted = [pod("web")]

    def desired() -> list[Pod]:
        calls.append(1)
        return list(wanted)

    loop = make_loop(tmp_path, [], pods=desired, source_period=5, sync_period=10)
    loop.tick()
    assert len(calls) == 1
    wanted.append(pod("db"))
    loop.advance(4)
    assert len(calls) == 1  # not before its period
    assert ("db", "app") not in loop.running()
    loop.advance(1)
    assert len(calls) == 2
    assert ("db", "app") in loop.running()


def test_a_function_that_raises_keeps_the_last_good_pods_and_is_reported(tmp_path: Path) -> None:
    state: dict[str, object] = {"pods": [pod("web")]}

    def desired() -> list[Pod]:
        if isinstance(state["pods"], Exception):
            raise state["pods"]
        return state["pods"]  # type: ignore[return-value]

    loop = make_loop(tmp_path, [], pods=desired, source_period=1)
    loop.tick()
    state["pods"] = ConnectionError("the database went away")
    loop.advance(1)
    assert loop.running() == [("web", "app"), ("web", "net")]  # never "no pods"
    (notice,) = loop.kinds("source-error")
    assert notice.source == "<pods>"
    assert "ConnectionError: the database went away" in notice.message
    state["pods"] = []
    loop.advance(1)
    assert loop.running() == []  # an empty answer that is read well is "no pods"
    assert [n.source for n in loop.kinds("source-ok")] == ["<pods>"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([pod("web"), "web"], "pods[1] must be a podsync.Pod, got str"),
        ([pod("web"), pod("web")], "pods[1]: pod default/web is given twice"),
        ([pod("web", source="file")], "a pod given in memory is of source 'api'"),
        (pod("web"), "pods must be an iterable of podsync.Pod"),
    ],
    ids=["not-a-pod", "twice", "another-source", "one-pod-not-a-list"],
)
def test_pods_that_cannot_be_taken_are_refused_when_the_loop_is_made(
    tmp_path: Path, given: object, message: str
) -> None:
    with pytest.raises((TypeError, ValueError), match=message.replace("[", r"\[")):
        make_loop(tmp_path, [], pods=given)
    with pytest.raises((TypeError, ValueError), match=message.replace("[", r"\[")):
        PodSet(given)  # type: ignore[arg-type]


def test_a_function_returning_bad_pods_is_a_source_error(tmp_path: Path) -> None:
    answers: list[object] = [[pod("web")], [pod("web"), pod("web", "busybox:2")]]
    loop = make_loop(tmp_path, [], pods=lambda: answers[0], source_period=1)
    loop.tick()
    answers.pop(0)
    loop.advance(1)
    (notice,) = loop.kinds("source-error")
    assert "pods[1]: pod default/web is given twice" in notice.message
    assert [c.image for c in loop.fake.containers if c.running and "app" in c.name] == ["busybox:1"]


def test_memory_and_files_mix_and_a_pod_defined_in_both_is_refused_where_it_changed(
    tmp_path: Path,
) -> None:
    files = tmp_path / "pods"
    files.mkdir()
    (files / "web.yaml").write_text(pod_yaml("web"))
    desired = PodSet([pod("db")])
    loop = make_loop(tmp_path, [str(files)], pods=desired, source_period=1)
    loop.tick()
    assert loop.running() == [("db", "app"), ("db", "net"), ("web", "app"), ("web", "net")]
    desired.add(pod("web", "busybox:2"))  # the file's pod, defined again in memory
    loop.tick()
    (notice,) = loop.kinds("source-error")
    assert notice.source == "<pods>"
    assert "<pods>: $[1].metadata.name: duplicate pod default/web" in notice.message
    assert f"first at {files / 'web.yaml'}: $.metadata.name" in notice.message
    web = [c for c in loop.fake.containers if c.running and "web" in c.name and "app" in c.name]
    assert [(c.image, c.name.split("_")[2]) for c in web] == [("busybox:1", "web.default.file")]
    desired.remove("default/web")
    loop.tick()
    assert [n.source for n in loop.kinds("source-ok")] == ["<pods>"]


def test_pods_of_source_api_are_deleted_while_a_file_source_is_not_ready(tmp_path: Path) -> None:
    """The in-memory source is ready once read: its pods go when removed, even while a
    file source has a bad file that was never good (which keeps file pods)."""
    files = tmp_path / "pods"
    files.mkdir()
    (files / "bad.yaml").write_text("kind: Pod\nmetadata: {name: [\n")
    desired = PodSet([pod("web")])
    loop = make_loop(tmp_path, [str(files)], pods=desired, source_period=1)
    loop.tick()
    assert loop.running() == [("web", "app"), ("web", "net")]
    desired.remove("default/web")
    loop.tick()
    assert loop.running() == []


def test_a_function_that_fails_at_first_deletes_no_api_pod(tmp_path: Path) -> None:
    first = make_loop(tmp_path, [], pods=[pod("web")])
    first.tick()

    def broken() -> list[Pod]:
        raise RuntimeError("not yet")

    loop = make_loop(tmp_path, [], fake=first.fake, pods=broken, source_period=1)
    loop.advance(1)
    assert loop.running() == [("web", "app"), ("web", "net")]
    assert loop.kinds("source-error")


def test_the_pods_source_may_have_a_period_of_its_own(tmp_path: Path) -> None:
    calls: list[int] = []

    def desired() -> list[Pod]:
        calls.append(1)
        return []

    loop = make_loop(tmp_path, [], pods=desired, source_periods={"<pods>": 2}, source_period=9)
    loop.tick()
    loop.advance(2)
    assert len(calls) == 2
    with pytest.raises(ValueError, match="'<pods>' is not a source"):
        make_loop(tmp_path, [str(tmp_path)], source_periods={"<pods>": 2})


def test_a_loop_without_sources_or_pods_is_refused(tmp_path: Path) -> None:
    """It would stop every pod: an empty desired set must be asked for (``pods=[]``)."""
    with pytest.raises(ValueError, match="give the loop its desired pods: sources, pods"):
        make_loop(tmp_path, [])
    loop = make_loop(tmp_path, [], pods=[])
    loop.tick()
    assert loop.running() == []


def test_a_pod_set_changed_while_the_loop_runs_wakes_it_at_once(tmp_path: Path) -> None:
    desired = PodSet()
    # Periods far longer than the test: only the set's change can wake the loop.
    loop = make_loop(tmp_path, [], pods=desired, sync_period=3600, source_period=3600)
    created, stopped = threading.Event(), threading.Event()

    def on_event(event: podsync.Event) -> None:
        if event.kind is podsync.EventKind.STARTED:
            created.set()
        if event.kind is podsync.EventKind.STOPPING:
            stopped.set()

    loop.reconciler._on_event = on_event
    with loop.reconciler:
        assert loop.board.synced.wait(WAIT)
        desired.set([pod("web")])
        assert created.wait(WAIT)
        assert loop.reconciler.wait_idle(WAIT)
        assert loop.running() == [("web", "app"), ("web", "net")]
        desired.remove("default/web")  # a removal wakes the loop too
        assert stopped.wait(WAIT)
        assert loop.reconciler.wait_idle(WAIT)
    assert loop.running() == []


def test_a_pod_set_is_safe_to_change_from_many_threads() -> None:
    desired = PodSet()
    seen: list[int] = []
    stop = desired._listen(lambda: seen.append(1))

    def add_many(prefix: str) -> None:
        for i in range(50):
            desired.add(pod(f"{prefix}-{i}"))

    threads = [threading.Thread(target=add_many, args=(p,)) for p in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop()
    desired.remove("default/a-0")
    assert len(desired) == 199
    assert len(seen) == 200  # one wake per change; none after the listener stopped
    assert "default/b-49" in desired
    assert desired.get("default/a-0") is None
    assert desired.get("default/c-3") == pod("c-3")
    assert [p.name for p in desired][:2] == [p.name for p in desired.pods()][:2]


def test_a_pod_set_in_a_named_scope_stops_what_leaves_it_and_nothing_else(
    tmp_path: Path,
) -> None:
    """The in-memory loop of docs/library.md: a pod that leaves the set is stopped because
    the loop's scope made it; another scope's pod on the same engine is left running."""
    other = make_loop(tmp_path / "other", [], pods=[pod("db")], scope="team-b")
    other.tick()
    desired = PodSet([pod("web")])
    loop = make_loop(tmp_path, [], fake=other.fake, pods=desired, scope="my-app")
    loop.tick()
    assert [("db", "app"), ("db", "net"), ("web", "app"), ("web", "net")] == loop.running()
    desired.remove("default/web")
    loop.tick()
    assert [("db", "app"), ("db", "net")] == loop.running()
