"""The clock guard (``tests/support/clock_guard.py``, installed by ``tests/conftest.py``): in a
test not marked ``engine``, podsync reading the real clock fails the test, saying how
to pass a clock instead."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from podsync import Event, EventKind, Plan, PlanOptions, apply, cli, sync
from podsync.testing import FakeRuntime
from tests.support.clock_guard import ClockRead, Guard, install

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: app, image: "app:1"}]
"""


def test_sync_without_a_clock_is_caught(tmp_path: Path, clock_guard: Guard) -> None:
    """sync with neither now nor clock would plan for the real time: ClockRead, with
    how to pass a clock."""
    with pytest.raises(ClockRead, match=r"time\.time\(\).*pass one - .*sync\(\.\.\., now="):
        sync([], FakeRuntime(), options=PlanOptions(root_dir=str(tmp_path)))

    assert ["time.time"] == clock_guard.reads
    clock_guard.reads.clear()


def test_apply_without_a_clock_is_caught(clock_guard: Guard) -> None:
    """apply times its actions: without a clock it would read the real monotonic one."""
    with pytest.raises(ClockRead):
        apply(Plan(), FakeRuntime())

    assert ["time.monotonic"] == clock_guard.reads
    clock_guard.reads.clear()


def test_an_event_without_a_time_is_caught(clock_guard: Guard) -> None:
    """An Event made without a time takes the real one (its default factory)."""
    with pytest.raises(ClockRead):
        Event(EventKind.PULLED, "", "", "pulled image busybox")

    assert ["time.time"] == clock_guard.reads
    clock_guard.reads.clear()


def test_the_command_line_without_a_clock_is_caught(tmp_path: Path, clock_guard: Guard) -> None:
    """podsync.cli.main turns every Exception into an error line; ClockRead is not one,
    so the read is not hidden behind "internal error"."""
    source = tmp_path / "web.yaml"
    source.write_text(POD)
    argv = ["plan", "--root-dir", str(tmp_path / "root"), "--network-mode", "none", str(source)]

    with pytest.raises(ClockRead):
        cli.main(argv, runtime_factory=lambda host: FakeRuntime(images=["app:1"]))

    assert ["time.time"] == clock_guard.reads
    clock_guard.reads.clear()


def test_defaults_and_aliases_bound_at_definition_are_guarded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A clock function kept in a default argument or a module global (read before the
    guard could patch ``time``) is replaced too."""
    module = types.ModuleType("podsync_clock_guard_example")
    source = "import time\ndef now(clock=time.time):\n    return clock()\n_tick = time.monotonic\n"
    exec(compile(source, "<example>", "exec"), module.__dict__)
    guard = Guard()
    install(monkeypatch, guard, [module])

    with pytest.raises(ClockRead):
        module.now()
    with pytest.raises(ClockRead):
        module._tick()
    with pytest.raises(ClockRead):
        module.time.sleep(0)

    assert ["time.time", "time.monotonic", "time.sleep"] == guard.reads
