"""The loop's usage reports (``Reconciler(usage_period=)``, ``Board.usage_seen``) on a
FakeRuntime whose containers use what the test says (``set_usage``), with a fake clock,
and what ``LoopBoard`` exports of them on ``/metrics``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from podsync import Container, NoticeKind, PlanOptions, Pod, PodUsage, UsageFigures, sync
from podsync.actions._options import NODE_SCOPE
from podsync.loop._board import LoopBoard
from podsync.loop._usage_report import UsageReader
from podsync.spec._labels import LABEL_CONTAINER
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.loop.test_reconciler import RecordingBoard, make_loop, pod_yaml

MiB = 1024 * 1024


class UsageRecordingBoard(RecordingBoard):
    """A recording board that also wants the pods' usage."""

    def usage_seen(self, pods: Sequence[PodUsage], node: UsageFigures | None) -> None:
        self._add("usage_seen", tuple(pods), node)


def _pods_dir(tmp_path: Path, *names: str) -> Path:
    pods = tmp_path / "pods"
    pods.mkdir()
    for name in names:
        (pods / f"{name}.yaml").write_text(pod_yaml(name))
    return pods


def test_usage_is_reported_once_per_usage_period_after_the_rounds_statuses(
    tmp_path: Path,
) -> None:
    pods = _pods_dir(tmp_path, "web")
    loop = make_loop(tmp_path, [str(pods)], sync_period=10, source_period=100, usage_period=15)
    board = UsageRecordingBoard()
    loop.reconciler._boards = (board,)  # the same loop, with a board that wants usage
    loop.tick()
    # The first round observed the engine before its workers created the pod: no usage
    # yet, and the host's is not known (the fake's, until set).
    assert [((), None)] == board.named("usage_seen")
    names = [n for n, _ in board.calls if n != "action_done"]  # the workers' own
    assert names[-2:] == ["pods_seen", "usage_seen"]

    app = next(c for c in loop.fake.containers if c.labels[LABEL_CONTAINER] == "app")
    loop.fake.set_usage(app.id, cpu_cores=0.5, memory=20 * MiB)
    loop.fake.set_node_usage(cpu_cores=1.5, memory=900 * MiB)
    loop.fake.clear_calls()
    loop.advance(10)  # a sync round, but the usage period has not passed
    assert len(board.named("usage_seen")) == 1
    assert "usage" not in loop.fake.call_names()
    loop.advance(10)  # 20 s: a round, and the usage is due
    assert ["list", "list", "usage", "node_usage"] == loop.fake.call_names()
    (web,), node = board.named("usage_seen")[-1]
    assert web.pod == "default/web"
    # The first reading of each container: memory, the seconds so far, no rate yet.
    assert web.containers["app"] == UsageFigures(None, 20 * MiB, pytest.approx(10.0))
    assert web.total.cpu_cores is None
    assert node is not None
    assert node.cpu_cores is None
    loop.advance(10)
    assert len(board.named("usage_seen")) == 2  # 30 s: before 20 + 15
    loop.advance(10)
    (web,), node = board.named("usage_seen")[-1]
    assert web.containers["app"].cpu_cores == pytest.approx(0.5)
    assert web.total == UsageFigures(pytest.approx(0.5), 20 * MiB, pytest.approx(20.0))
    assert node == UsageFigures(pytest.approx(1.5), 900 * MiB, pytest.approx(60.0))


def test_a_failed_usage_read_is_a_notice_and_the_loop_goes_on(tmp_path: Path) -> None:
    pods = _pods_dir(tmp_path, "web")
    loop = make_loop(tmp_path, [str(pods)], sync_period=10, usage_period=10)
    board = UsageRecordingBoard()
    loop.reconciler._boards = (board,)
    loop.fake.fail("usage", times=1, error="cgroup gone")
    loop.tick()
    loop.advance(10)  # the first round saw no container: nothing to ask for
    assert [(True, "")] * 2 == board.named("sync_done")
    assert [((), None)] == board.named("usage_seen")
    (notice,) = loop.kinds(NoticeKind.USAGE_ERROR)
    assert "cgroup gone" in notice.message
    loop.advance(10)
    assert len(board.named("usage_seen")) == 2


def test_no_usage_is_read_for_a_board_without_usage_seen(tmp_path: Path) -> None:
    pods = _pods_dir(tmp_path, "web")
    loop = make_loop(tmp_path, [str(pods)], usage_period=1)
    loop.tick()
    loop.advance(5)
    assert "usage" not in loop.fake.call_names()


def test_the_usage_period_is_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="usage_period"):
        make_loop(tmp_path, [str(tmp_path)], usage_period=0)


def test_metrics_have_cadvisors_names_and_labels() -> None:
    pytest.importorskip("prometheus_client")
    board = LoopBoard(10, clock=FakeClock(0.0, step=0))
    web = PodUsage(
        "prod/web",
        "uid-1",
        UsageFigures(0.75, 30 * MiB, 12.5),
        {"app": UsageFigures(0.5, 20 * MiB, 10.0), "net": UsageFigures(0.25, 10 * MiB, 2.5)},
    )
    board.usage_seen([web], UsageFigures(1.5, 900 * MiB, 1234.0))
    text = board.metrics_text() or ""
    assert "# TYPE container_cpu_usage_seconds_total counter" in text
    assert "# TYPE container_memory_working_set_bytes gauge" in text
    assert (
        'container_cpu_usage_seconds_total{container="app",id="",namespace="prod",pod="web"} 10.0'
        in text
    )
    assert (
        'container_memory_working_set_bytes{container="",id="",namespace="prod",pod="web"} '
        "3.145728e+07" in text
    )
    assert 'container_cpu_usage_seconds_total{container="",id="/",namespace="",pod=""} 1234.0' in (
        text
    )
    # A later report replaces the rows: a pod gone is gone from /metrics.
    board.usage_seen([], None)
    assert "pod=" not in (board.metrics_text() or "")


def test_a_named_scope_reads_its_own_pods_only() -> None:
    fake = FakeRuntime(images=["busybox", "pause:1"], clock=FakeClock(0.0, step=0))
    for scope in ("a", "b"):
        pod = Pod(f"web-{scope}", (Container("app", "busybox"),), source="file")
        options = PlanOptions(root_dir="/nonexistent", network_image="pause:1", scope=scope)
        assert sync([pod], fake, options=options, clock=fake.clock).ok
    seen = fake.list_containers()
    for scope, pods in (("a", ["default/web-a"]), (None, ["default/web-a", "default/web-b"])):
        usage, _ = UsageReader(15).read(fake, seen, scope=scope)
        assert pods == [u.pod for u in usage]
    usage, _ = UsageReader(15).read(fake, seen, scope=NODE_SCOPE)
    assert 2 == len(usage)


def test_usage_is_read_for_the_boards_that_want_it_among_several(tmp_path: Path) -> None:
    """A status board without ``usage_seen`` beside one with it (``board=[a, b]``, as
    ``podsync run --listen`` with a reporting host has): the usage is read, and told to
    the board that wants it only."""
    pods = _pods_dir(tmp_path, "web")
    loop = make_loop(tmp_path, [str(pods)], sync_period=10, usage_period=10)
    plain, wanting = RecordingBoard(), UsageRecordingBoard()
    loop.reconciler._boards = (plain, wanting)
    loop.tick()
    app = next(c for c in loop.fake.containers if c.labels[LABEL_CONTAINER] == "app")
    loop.fake.set_usage(app.id, cpu_cores=0.25, memory=8 * MiB)
    loop.advance(10)

    (web,), _ = wanting.named("usage_seen")[-1]
    assert web.containers["app"].memory_working_set == 8 * MiB
    assert [] == plain.named("usage_seen")
    assert plain.named("pods_seen")  # told the rest all the same
