"""A failed action carries the exception it failed with (``ActionResult.exception``),
from podsync's hierarchy, with the operation, the target and the engine's status code;
results and events keep it through ``pickle``, as a process pool sends them back."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from podsync import (
    ActionStatus,
    Container,
    EngineUnavailable,
    Event,
    EventKind,
    Pod,
    PodsyncError,
    sync,
)
from podsync.actions._actions import CreateSpec
from podsync.actions._options import PlanOptions
from podsync.exceptions import Conflict, NotFound, RuntimeCallError
from podsync.testing import FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"


def web() -> Pod:
    return Pod("web", (Container("app", "busybox:1"),))


def engine(**kwargs: Any) -> FakeRuntime:
    return FakeRuntime(images=["busybox:1", PAUSE], clock=lambda: NOW - 100, **kwargs)


def failed_sync(rt: FakeRuntime, root: Path, pods: list[Pod] | None = None) -> Any:
    return sync(
        pods or [web()],
        rt,
        options=PlanOptions(root_dir=str(root)),
        now=NOW,
        clock=rt.clock,
        probe=False,
    )


FAULTS = [
    # (id, the call that fails, FakeRuntime.fail's arguments, class, operation, status)
    ("engine-gone", "create", {"unavailable": True}, EngineUnavailable, "create", None),
    ("no-such-container", "start", {"status_code": 404}, NotFound, "start", 404),
    ("state-refuses", "start", {"status_code": 409}, Conflict, "start", 409),
    ("create-refused", "create", {"status_code": 400}, RuntimeCallError, "create", 400),
    ("engine-error", "create", {"status_code": 500}, RuntimeCallError, "create", 500),
    ("no-status", "create", {}, RuntimeCallError, "create", None),
]


@pytest.mark.parametrize(
    ("call", "fault", "kind", "operation", "status_code"),
    [row[1:] for row in FAULTS],
    ids=[row[0] for row in FAULTS],
)
def test_a_failed_action_carries_its_exception(
    tmp_path: Path,
    call: str,
    fault: dict[str, Any],
    kind: type,
    operation: str,
    status_code: int | None,
) -> None:
    """The first failed action (the network container's create or start) has the
    exception of the class the engine's answer names, its fields, and ``error`` is its
    text; the pod's later actions are skipped without one."""
    rt = engine()
    rt.fail(call, error="refused", **fault)

    result = failed_sync(rt, tmp_path)

    failed = result.apply_result.failures[0]
    exc = failed.exception
    assert kind is type(exc)
    assert isinstance(exc, RuntimeCallError)
    assert (operation, status_code, "refused") == (exc.operation, exc.status_code, exc.message)
    target = [c.args[0] for c in rt.calls if c.name == call][-1]  # the failed call's
    assert getattr(target, "name", target) == exc.target
    assert str(exc) == failed.error
    skipped = [r for r in result.apply_result.results if r.status is ActionStatus.SKIPPED]
    assert skipped
    assert all(r.exception is None for r in skipped)


class BrokenRuntime(FakeRuntime):
    """A runtime with a bug: its create raises what no runtime should."""

    def create_container(self, spec: CreateSpec) -> str:
        raise KeyError(spec.name)


def test_an_unexpected_runtime_exception_is_wrapped(tmp_path: Path) -> None:
    """A runtime's own bug (a ``KeyError``) becomes a ``RuntimeCallError`` that names
    its type: the result still holds a podsync exception, and it pickles."""
    rt = BrokenRuntime(images=["busybox:1", PAUSE], clock=lambda: NOW - 100)

    result = failed_sync(rt, tmp_path)

    exc = result.apply_result.failures[0].exception
    assert RuntimeCallError is type(exc)
    assert isinstance(exc.__cause__, KeyError)
    assert exc.message.startswith("KeyError: ")
    again = pickle.loads(pickle.dumps(exc))
    assert (type(exc), str(exc), None) == (type(again), str(again), again.__cause__)


def test_results_pickle_with_their_exceptions(tmp_path: Path) -> None:
    """A ``SyncResult`` sent back from a worker process keeps each failed action's
    exception: its class, fields and text."""
    rt = engine()
    rt.fail("start", error="No such container: x", status_code=404)
    result = failed_sync(rt, tmp_path)

    again = pickle.loads(pickle.dumps(result))

    before = result.apply_result.failures
    after = again.apply_result.failures
    assert [type(r.exception) for r in before] == [type(r.exception) for r in after]
    assert [str(r.exception) for r in before] == [str(r.exception) for r in after]
    assert [r.error for r in before] == [r.error for r in after]
    assert [NotFound] == [type(r.exception) for r in after]
    assert [404] == [r.exception.status_code for r in after]  # type: ignore[union-attr]
    assert result.apply_result == again.apply_result


def test_a_failed_event_carries_the_same_exception(tmp_path: Path) -> None:
    """The ``failed`` event of an action holds the exception its result holds; other
    events hold none."""
    rt = engine()
    rt.fail("create", error="refused", status_code=400, match="app")
    events: list[Event] = []

    result = sync(
        [web()],
        rt,
        options=PlanOptions(root_dir=str(tmp_path)),
        now=NOW,
        clock=rt.clock,
        probe=False,
        on_event=events.append,
    )

    failed = [e for e in events if e.kind is EventKind.FAILED]
    assert [result.apply_result.failures[0].exception] == [e.exception for e in failed]
    assert isinstance(failed[0].exception, PodsyncError)
    assert all(e.exception is None for e in events if e.kind is not EventKind.FAILED)
    assert pickle.loads(pickle.dumps(failed[0])).exception.status_code == 400
