"""``Reconciler(board=[...])``: several boards told the same, the optional board methods
(``event_seen``, ``notice_seen``, ``desired_seen``) called on the boards that have them,
and a board that raises reported without stopping the loop or the other boards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import podsync
from podsync import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.loop.test_reconciler import IMAGES, NODE, RecordingBoard, pod_yaml


class SeeingBoard(RecordingBoard):
    """A board with the optional methods too."""

    def event_seen(self, event: podsync.Event) -> None:
        self._add("event_seen", event)

    def notice_seen(self, notice: podsync.LoopNotice) -> None:
        self._add("notice_seen", notice)

    def desired_seen(self, pods: Any) -> None:
        self._add("desired_seen", tuple(pods))


class BrokenBoard(SeeingBoard):
    """Raises from every method."""

    def _add(self, name: str, *args: Any) -> None:
        raise RuntimeError(f"broken {name}")


def _loop(tmp_path: Path, boards: Any, notices: list[podsync.LoopNotice]) -> podsync.Reconciler:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    clock = FakeClock(1_000_000.0)
    return podsync.Reconciler(
        [str(pods)],
        FakeRuntime(images=IMAGES, clock=clock),
        PlanOptions(
            scope=NODE_SCOPE,
            network_image="pause:1",
            root_dir=str(tmp_path / "root"),
            gc=GCPolicy(),
        ),
        node=NODE,
        board=boards,
        on_notice=notices.append,
        clock=clock,
    )


def test_every_board_is_told_the_same_and_the_optional_methods_where_they_are(
    tmp_path: Path,
) -> None:
    plain, seeing = RecordingBoard(), SeeingBoard()
    notices: list[podsync.LoopNotice] = []
    loop = _loop(tmp_path, [plain, seeing], notices)
    loop.tick()
    assert loop.wait_idle(10)
    loop.tick()
    for name in ("source_ok", "sync_done", "pods_seen", "action_done"):
        assert plain.named(name) == seeing.named(name), name
    (desired,) = seeing.named("desired_seen")[:1]
    assert [p.name for p in desired[0]] == ["web"]
    started = [e for (e,) in seeing.named("event_seen") if e.kind is podsync.EventKind.STARTED]
    assert {e.container for e in started} == {"net", "app"}
    assert not plain.named("event_seen")  # a board without it is not asked
    loop.stop()
    assert [n.kind for (n,) in seeing.named("notice_seen")][-1] == podsync.NoticeKind.STOPPING
    assert notices[-1].kind == podsync.NoticeKind.STOPPING


def test_a_board_that_raises_is_reported_and_the_others_are_still_told(tmp_path: Path) -> None:
    broken, seeing = BrokenBoard(), SeeingBoard()
    notices: list[podsync.LoopNotice] = []
    loop = _loop(tmp_path, (broken, seeing), notices)
    loop.tick()
    assert loop.wait_idle(10)
    assert seeing.named("pods_seen")
    errors = [n.message for n in notices if n.kind == podsync.NoticeKind.INTERNAL_ERROR]
    assert "board.pods_seen failed: broken pods_seen" in errors
    assert "board.notice_seen failed: broken notice_seen" in errors
    # The other board is told of the first board's failures, not in a circle.
    told = [n.message for (n,) in seeing.named("notice_seen")]
    assert "board.pods_seen failed: broken pods_seen" in told
    assert "board.notice_seen failed: broken notice_seen" not in told


def test_one_board_is_still_a_board(tmp_path: Path) -> None:
    seeing = SeeingBoard()
    loop = _loop(tmp_path, seeing, [])
    loop.tick()
    assert seeing.named("sync_done")
