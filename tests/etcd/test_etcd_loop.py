"""The etcd source of the continuous loop (``podsync.Reconciler``), against a real etcd
(the ``etcd`` fixture) and FakeRuntime: watch-driven syncs, the last good state, etcd
going away and coming back, compacted revisions. The loop runs in its thread with the
real clock; the tests wait on what it reports, never on its periods (which are an
hour: only the watch can make it act)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import podsync
from podsync import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.etcd._urls import EtcdOptions
from podsync.exceptions import EtcdError
from podsync.host._node import NodeInfo
from podsync.load._etcd_watch import EtcdSource
from podsync.load._source_reads import SourceRead
from podsync.spec._labels import LABEL_CONTAINER
from podsync.testing import FakeRuntime
from tests.support.etcd_server import EtcdServer
from tests.unit.loop.test_reconciler import RecordingBoard

KEY = "/registry/hosts/node-1/kubelet"
NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)
IMAGES = ["busybox:1", "busybox:2", "pause:1"]
WAIT = 15.0  # seconds a test waits at most (never reached when it passes)
HOUR = 3600.0


def pods_value(*names: str, image: str = "busybox:1", restart: str = "Always") -> str:
    """A v1 List of pods, as a publisher writes it."""
    items = "".join(
        f"""\
  - apiVersion: v1
    kind: Pod
    metadata: {{name: {name}}}
    spec:
      restartPolicy: {restart}
      containers:
        - {{name: app, image: "{image}"}}
"""
        for name in names
    )
    return f"apiVersion: v1\nkind: List\nitems:\n{items}" if names else "[]\n"


def wait_for(condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g} s for {what}")
        time.sleep(0.02)


class LoopUnderTest:
    """A Reconciler on FakeRuntime, in its thread, with everything it reports."""

    def __init__(self, tmp_path: Path, source: str, **kwargs: object) -> None:
        self.fake = FakeRuntime(images=IMAGES)
        self.board = RecordingBoard()
        self.notices: list[podsync.LoopNotice] = []
        self.lock = threading.Lock()
        self.reconciler = podsync.Reconciler(
            [source],
            self.fake,
            # The node scope (``podsync run``'s): a pod that leaves etcd goes.
            PlanOptions(
                network_image="pause:1",
                root_dir=str(tmp_path / "root"),
                gc=GCPolicy(),
                scope=NODE_SCOPE,
            ),
            node=NODE,
            sync_period=HOUR,
            source_period=HOUR,
            gc_period=HOUR,
            board=self.board,
            on_notice=self._notice,
            follow_events=False,
            **kwargs,  # type: ignore[arg-type]
        )

    def _notice(self, notice: podsync.LoopNotice) -> None:
        with self.lock:
            self.notices.append(notice)

    def running_pods(self) -> list[str]:
        return sorted(
            {
                c.labels["io.podsync.pod.name"]
                for c in self.fake.containers
                if c.running and c.labels.get(LABEL_CONTAINER) == "app"
            }
        )

    def kinds(self, kind: str) -> list[podsync.LoopNotice]:
        with self.lock:
            return [n for n in self.notices if n.kind == kind]


def test_a_write_wakes_the_loop_at_once(etcd: EtcdServer, tmp_path: Path) -> None:
    etcd.put(KEY, pods_value("web"))
    loop = LoopUnderTest(tmp_path, etcd.url(KEY))
    with loop.reconciler:
        wait_for(lambda: loop.running_pods() == ["web"], "the first read to run web")
        assert {p.source for p in loop.reconciler.desired} == {"etcd"}

        written = time.monotonic()
        etcd.put(KEY, pods_value("web", "db"))
        wait_for(lambda: loop.running_pods() == ["db", "web"], "the watch to run db")
        # The periods are an hour: only the watch can have woken the loop.
        assert time.monotonic() - written < 5

        etcd.put(KEY, pods_value("db"))
        wait_for(lambda: loop.running_pods() == ["db"], "the watch to remove web")


def test_a_bad_value_keeps_the_last_good_pods_and_is_reported_at_each_read(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(KEY, pods_value("web"))
    loop = LoopUnderTest(tmp_path, etcd.url(KEY))
    with loop.reconciler:
        wait_for(lambda: loop.running_pods() == ["web"], "web to run")
        bad = pods_value("web", "db").replace('image: "busybox:1"', "image: 7", 1)
        etcd.put(KEY, bad)
        wait_for(lambda: loop.kinds("source-error"), "the bad value to be reported")
        etcd.put(KEY, bad)  # again: the same error is not reported again
        # Each put is awaited before the next: the loop merges the reads it has not taken
        # yet, so two quick puts may reach it as one.
        wait_for(lambda: len(loop.board.named("source_error")) >= 2, "the second read")
        etcd.put(KEY, "")  # an empty value is not "no pods"
        wait_for(
            lambda: any("no pods found" in n.message for n in loop.kinds("source-error")),
            "the empty value to be reported",
        )

        *errors, empty = loop.kinds("source-error")
        assert len(errors) >= 2  # the bad value, read twice
        assert len({(e.source, e.message) for e in errors}) == 1
        error = errors[0]
        assert error.source == etcd.url(KEY)
        assert error.message == (
            f"{etcd.url(KEY)}: $.items[0].spec.containers[0].image: expected a string, got 7 "
            "(put it in quotes: YAML reads it as a number)"
        )
        assert "no pods found" in empty.message
        assert ["web"] == loop.running_pods()
        assert ["web"] == [p.name for p in loop.reconciler.desired]

        etcd.put(KEY, pods_value("web", "db"))
        wait_for(lambda: loop.running_pods() == ["db", "web"], "the good value to be taken")
        assert loop.kinds("source-ok")


def test_a_deleted_key_keeps_the_pods(etcd: EtcdServer, tmp_path: Path) -> None:
    etcd.put(KEY, pods_value("web"))
    loop = LoopUnderTest(tmp_path, etcd.url(KEY))
    with loop.reconciler:
        wait_for(lambda: loop.running_pods() == ["web"], "web to run")
        etcd.delete(KEY)
        wait_for(lambda: loop.kinds("source-error"), "the deletion to be reported")
        assert "no such key" in loop.kinds("source-error")[0].message
        loop.reconciler.request_sync()
        wait_for(lambda: len(loop.board.named("sync_done")) >= 2, "a sync after it")
        assert ["web"] == loop.running_pods()


def test_etcd_stopped_keeps_the_pods_and_changes_made_meanwhile_are_applied(
    etcd: EtcdServer, tmp_path: Path
) -> None:
    etcd.put(KEY, pods_value("web"))
    loop = LoopUnderTest(tmp_path, etcd.url(KEY))
    with loop.reconciler:
        wait_for(lambda: loop.running_pods() == ["web"], "web to run")
        etcd.stop()
        wait_for(lambda: loop.kinds("source-error"), "etcd's absence to be reported")
        (error,) = loop.kinds("source-error")[:1]
        assert error.source == etcd.url(KEY)
        assert error.message.startswith(f"{etcd.url(KEY)}: ")
        assert any(m for _, m in loop.board.named("source_error"))
        syncs = len(loop.board.named("sync_done"))
        loop.reconciler.request_sync()
        wait_for(lambda: len(loop.board.named("sync_done")) > syncs, "a sync without etcd")
        assert ["web"] == loop.running_pods()  # etcd unreachable never deletes pods

        etcd.start()
        # Written at once: the loop's watch is still retrying (back-off), and resumes
        # from the revision it saw last.
        etcd.put(KEY, pods_value("db"))
        wait_for(lambda: loop.running_pods() == ["db"], "the change made meanwhile")
        wait_for(lambda: loop.kinds("source-ok"), "the source to be fine again")


def test_tick_reads_the_key_at_the_source_period(etcd: EtcdServer, tmp_path: Path) -> None:
    etcd.put(KEY, pods_value("web"))
    loop = LoopUnderTest(tmp_path, etcd.url(KEY))
    loop.reconciler.tick()
    assert loop.reconciler.wait_idle(WAIT)
    assert ["web"] == loop.running_pods()


def _follow(source: EtcdSource) -> tuple[list[SourceRead], list[str], threading.Thread]:
    reads: list[SourceRead] = []
    notes: list[str] = []
    stopped = threading.Event()
    thread = threading.Thread(
        target=source.follow, args=(reads.append, stopped, notes.append), daemon=True
    )
    thread.start()
    return reads, notes, thread


def _names(read: SourceRead) -> list[str]:
    return [
        str(item["metadata"]["name"])
        for stream in read.streams
        for document in stream.documents
        if isinstance(document, dict)
        for item in document.get("items", [])
    ]


def test_the_watch_resumes_after_the_revision_seen_last(etcd: EtcdServer) -> None:
    etcd.put(KEY, pods_value("web"))
    source = EtcdSource(etcd.url(KEY), NODE, None, 1 << 20)
    assert ["web"] == _names(source.poll())
    # Written while nobody watches: a watch from "now" would miss both.
    etcd.put(KEY, pods_value("a"))
    etcd.put(KEY, pods_value("b"))
    reads, notes, thread = _follow(source)
    try:
        wait_for(lambda: reads and _names(reads[-1]) == ["b"], "both changes")
        assert [] == notes  # replayed by the watch, not read again
        assert all(r.changed and not r.error for r in reads)
    finally:
        source.close()
        thread.join(WAIT)
    assert not thread.is_alive()


def test_a_quiet_watch_is_made_again_and_misses_nothing(etcd: EtcdServer) -> None:
    etcd.put(KEY, pods_value("web"))
    # The watch is made again after 0.3 s without a response (the seed's 30 s re-arm).
    source = EtcdSource(etcd.url(KEY), NODE, None, 1 << 20, idle=0.3)
    watches: list[int] = []
    watch = source._client.watch

    def counted(start_revision: int, **kwargs: object) -> object:
        watches.append(start_revision)
        return watch(start_revision, **kwargs)  # type: ignore[arg-type]

    source._client.watch = counted  # type: ignore[assignment,method-assign]
    reads, _, thread = _follow(source)
    try:
        wait_for(lambda: reads, "the first read")
        time.sleep(1.0)  # a few quiet periods
        etcd.put(KEY, pods_value("db"))
        wait_for(lambda: _names(reads[-1]) == ["db"], "the change after the re-arms")
        assert [["web"], ["db"]] == [_names(r) for r in reads]
        assert [] == [r.error for r in reads if r.error]
        assert len(watches) >= 3  # made again after each quiet 0.3 s
        assert len(set(watches)) == 1  # from the same revision: nothing happened between
    finally:
        source.close()
        thread.join(WAIT)


def test_a_compacted_revision_reads_the_key_again(etcd: EtcdServer) -> None:
    etcd.put(KEY, pods_value("web"))
    source = EtcdSource(etcd.url(KEY), NODE, None, 1 << 20)
    source.poll()
    etcd.put(KEY, pods_value("a"))
    etcd.put(KEY, pods_value("b"))
    compacted = etcd.compact()  # the revisions after the poll are gone
    reads, notes, thread = _follow(source)
    try:
        wait_for(lambda: notes, "the compaction to be noted")
        wait_for(lambda: reads and _names(reads[-1]) == ["b"], "the key read again")
        assert f"compacted (etcd keeps from revision {compacted} on)" in notes[0]
        assert "reading the key again" in notes[0]
    finally:
        source.close()
        thread.join(WAIT)


def test_user_and_password_in_the_loop(etcd: EtcdServer, tmp_path: Path) -> None:
    etcd.put(KEY, pods_value("web"))
    etcd.enable_auth("node-1", "node-pw")
    loop = LoopUnderTest(
        tmp_path, etcd.url(KEY), etcd=EtcdOptions(user="node-1", password="node-pw")
    )
    with loop.reconciler:
        wait_for(lambda: loop.running_pods() == ["web"], "web to run")
        etcd.put(KEY, pods_value("db"))
        wait_for(lambda: loop.running_pods() == ["db"], "the watch, authenticated")


def test_without_the_etcd_extra_the_loop_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "etcd3gw", None)

    with pytest.raises(EtcdError, match=r"pip install 'podsync\[etcd\]'"):
        podsync.Reconciler(["etcd://127.0.0.1:2379" + KEY], FakeRuntime())
