"""``podsync.aio``: the calls an async controller makes, on threads, with
``asyncio.run`` on ``FakeRuntime``: the same signatures and results as the synchronous
calls, a loop that goes on while a call runs, what cancelling does (the call runs to its
end, its result is dropped, ``asyncio.run`` waits for it), and the engine's events and
an apply's events as async iterators that close their stream when left or cancelled.

The real engine's side is ``tests/engine/test_aio.py``.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import podsync
import podsync.aio
from podsync import Event, PlanOptions, Pod, parse_pods
from podsync.actions._actions import CreateSpec
from podsync.exceptions import EngineUnavailable
from podsync.runtime import EngineEvent, Stream
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.loop.test_reconciler import wait_for

NOW = 1_700_000_000.0
IMAGES = ["busybox:1.36", "registry.k8s.io/pause:3.10"]
WAIT = 10.0  # seconds a test waits for a thread at most (never reached when it passes)

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: ["sh", "-c", "sleep 3600"]
  - name: logs
    image: busybox:1.36
"""


def web() -> tuple[Pod, ...]:
    return parse_pods(POD_YAML, source="file")


def fake() -> FakeRuntime:
    return FakeRuntime(images=IMAGES, clock=FakeClock(NOW, step=0))


def options(tmp_path: Path) -> PlanOptions:
    # The node scope: the apply of an empty plan stops what the sync made.
    return PlanOptions(root_dir=str(tmp_path / "root"), scope=podsync.NODE_SCOPE)


def reader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "podsync-aio-events"]


class Held(FakeRuntime):
    """A fake whose creates wait until ``release`` is set (``entered`` says one does)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entered = threading.Event()
        self.release = threading.Event()

    def create_container(self, spec: CreateSpec) -> str:
        self.entered.set()
        assert self.release.wait(WAIT)
        return super().create_container(spec)


# --- the same calls -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("awaitable", "function"),
    [
        (podsync.aio.sync, podsync.sync),
        (podsync.aio.observe, podsync.observe),
        (podsync.aio.apply, podsync.apply),
        (podsync.aio.load_pods, podsync.load_pods),
        (podsync.aio.down, podsync.down),
    ],
    ids=["sync", "observe", "apply", "load_pods", "down"],
)
def test_each_awaitable_has_its_functions_signature_and_documentation(
    awaitable: Callable[..., Any], function: Callable[..., Any]
) -> None:
    assert inspect.iscoroutinefunction(awaitable)
    assert inspect.signature(function) == inspect.signature(awaitable)
    assert awaitable.__doc__ is not None
    assert function.__doc__ is not None
    assert awaitable.__doc__.startswith(f"``podsync.{function.__name__}``, awaitable")
    assert awaitable.__doc__.endswith(function.__doc__)
    assert ("podsync.aio", function.__name__) == (awaitable.__module__, awaitable.__name__)


def test_awaited_calls_give_what_the_calls_give(tmp_path: Path) -> None:
    """Pods loaded, a sync, an observation and an apply, awaited on one fake and called
    on another: the same results, the same engine calls."""
    (tmp_path / "web.yaml").write_text(POD_YAML)
    mine, theirs = fake(), fake()

    async def awaited() -> list[Any]:
        pods = await podsync.aio.load_pods([tmp_path / "web.yaml"])
        synced = await podsync.aio.sync(pods, mine, options=options(tmp_path), clock=mine.clock)
        seen = await podsync.aio.observe(mine, str(tmp_path / "root"))
        gone = podsync.plan([], seen.containers, now=NOW, options=options(tmp_path))
        applied = await podsync.aio.apply(gone, mine, clock=mine.clock)
        return [pods, synced, seen, applied]

    pods = podsync.load_pods([tmp_path / "web.yaml"])
    synced = podsync.sync(pods, theirs, options=options(tmp_path), clock=theirs.clock)
    seen = podsync.observe(theirs, str(tmp_path / "root"))
    gone = podsync.plan([], seen.containers, now=NOW, options=options(tmp_path))
    applied = podsync.apply(gone, theirs, clock=theirs.clock)

    assert [pods, synced, seen, applied] == asyncio.run(awaited())
    assert theirs.call_names() == mine.call_names()
    assert any(not c.running for c in mine.list_containers())  # the apply stopped them


def test_the_event_loop_goes_on_while_a_call_runs(tmp_path: Path) -> None:
    """A sync whose creates wait for the event loop: the loop runs another task, which
    lets them go, while the sync runs in its thread."""
    held = Held(images=IMAGES, clock=FakeClock(NOW, step=0))

    async def main() -> podsync.SyncResult:
        syncing = asyncio.create_task(
            podsync.aio.sync(web(), held, options=options(tmp_path), clock=held.clock)
        )
        while not held.entered.is_set():
            await asyncio.sleep(0.001)
        held.release.set()  # from the loop's thread, while the sync waits in its own
        return await syncing

    assert asyncio.run(main()).ok


def test_a_cancelled_sync_finishes_in_its_thread_and_its_result_is_dropped(
    tmp_path: Path,
) -> None:
    """Cancelling the task that awaits a sync ends the await at once; the sync runs on
    to its end in its thread (every container made and started, nothing half done),
    and ``asyncio.run`` returns only once it has."""
    held = Held(images=IMAGES, clock=FakeClock(NOW, step=0))

    async def main() -> None:
        syncing = asyncio.create_task(
            podsync.aio.sync(web(), held, options=options(tmp_path), clock=held.clock)
        )
        while not held.entered.is_set():
            await asyncio.sleep(0.001)
        syncing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await syncing
        assert [] == [c for c in held.list_containers() if c.running]  # still held
        # Let the thread go only once this coroutine is done: asyncio.run waits for it.
        threading.Timer(0.05, held.release.set).start()

    asyncio.run(main())

    running = sorted(c.name.split(".")[0] for c in held.list_containers() if c.running)
    assert ["k8s_app", "k8s_logs", "k8s_net"] == running


# --- events ------------------------------------------------------------------------------


def test_the_engines_events_come_through_the_feed_until_it_is_left(tmp_path: Path) -> None:
    """The events of a pod's start arrive in the order the engine gives them; leaving
    the ``async with`` closes the engine's stream and ends its thread."""
    engine = fake()

    async def main() -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        async with podsync.aio.events(engine) as feed:
            await podsync.aio.sync(web(), engine, options=options(tmp_path), clock=engine.clock)
            async for event in feed:
                seen.append((event.action, event.name.split(".")[0]))
                if ("start", "k8s_logs") in seen:
                    break
        return seen

    seen = asyncio.run(main())

    assert [(e.action, e.name.split(".")[0]) for e in engine.events][: len(seen)] == seen
    assert {("start", "k8s_net"), ("start", "k8s_app")} <= set(seen)
    assert wait_for(lambda: not reader_threads())


class SlowToOpen(FakeRuntime):
    """A fake whose event stream opens only once ``release`` is set."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = threading.Event()

    def engine_events(
        self, *, since: float | None = None, until: float | None = None
    ) -> Stream[EngineEvent]:
        assert self.release.wait(WAIT)
        return super().engine_events(since=since, until=until)


def test_entering_the_feed_waits_until_the_engines_stream_is_open(tmp_path: Path) -> None:
    """``async with`` returns once the stream is open, so a container started inside
    the block is never missed (the stream gives only what happens after it opened)."""
    engine = SlowToOpen(images=IMAGES, clock=FakeClock(NOW, step=0))

    async def main() -> tuple[bool, str]:
        entered = asyncio.Event()
        feed = podsync.aio.events(engine)

        async def enter() -> str:
            async with feed:
                entered.set()
                engine.create_container(CreateSpec("app", "busybox:1.36", network="none"))
                async for event in feed:
                    return event.action + " " + event.container_id
            return "no event"

        entering = asyncio.create_task(enter())
        await asyncio.sleep(0.05)
        waited = not entered.is_set()
        engine.release.set()
        return waited, await asyncio.wait_for(entering, WAIT)

    waited, first = asyncio.run(main())

    assert waited
    assert f"create {engine.container('app').id}" == first


def test_cancelling_the_task_that_reads_events_closes_the_stream() -> None:
    """A task waits for events that never come; cancelled, it closes the engine's
    stream (its thread ends) and raises ``CancelledError``."""
    engine = fake()

    async def main() -> None:
        async def read() -> list[EngineEvent]:
            return [event async for event in podsync.aio.events(engine)]

        reading = asyncio.create_task(read())
        await asyncio.sleep(0.01)
        assert reader_threads()
        reading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading

    asyncio.run(main())

    assert wait_for(lambda: not reader_threads())
    assert ["events"] == engine.call_names()


class Unreachable(FakeRuntime):
    def engine_events(
        self, *, since: float | None = None, until: float | None = None
    ) -> Stream[EngineEvent]:
        raise EngineUnavailable("events", "unix:///var/run/docker.sock", "connection refused")


def test_an_error_of_the_engine_comes_out_of_the_iteration() -> None:
    async def main() -> None:
        with pytest.raises(EngineUnavailable, match="connection refused"):
            async for _ in podsync.aio.events(Unreachable()):
                pass

    asyncio.run(main())


def test_events_until_a_time_past_end_by_themselves(tmp_path: Path) -> None:
    engine = fake()
    podsync.sync(web(), engine, options=options(tmp_path), clock=engine.clock)

    async def main() -> list[EngineEvent]:
        return [event async for event in podsync.aio.events(engine, since=0, until=NOW)]

    assert engine.events == asyncio.run(main())


# --- an apply's events ------------------------------------------------------------------


def test_an_apply_gives_its_events_then_its_result(tmp_path: Path) -> None:
    """``with_events(podsync.apply, ...)``: the events ``on_event`` would get, in order,
    then the result ``apply`` returns."""
    mine, theirs = fake(), fake()
    the_plan = podsync.plan(
        web(), [], images=mine.list_images(), now=NOW, options=options(tmp_path)
    )
    called: list[Event] = []
    expected = podsync.apply(the_plan, theirs, clock=theirs.clock, on_event=called.append)

    async def main() -> tuple[list[Event], podsync.ApplyResult]:
        run = podsync.aio.with_events(podsync.apply, the_plan, mine, clock=mine.clock)
        events = [event async for event in run]
        return events, await run

    events, result = asyncio.run(main())

    assert (called, expected) == (events, result)
    assert {"created", "started"} <= {e.kind for e in events}


def test_a_call_that_raises_ends_its_events_and_raises_when_awaited(tmp_path: Path) -> None:
    def fails(*, on_event: Callable[[Event], None] | None = None) -> None:
        raise ValueError("workers must be at least 1")

    async def main() -> list[Event]:
        run = podsync.aio.with_events(fails)
        events = [event async for event in run]
        with pytest.raises(ValueError, match="workers must be at least 1"):
            await run
        return events

    assert [] == asyncio.run(main())


def test_with_events_passes_on_event_itself(tmp_path: Path) -> None:
    async def main() -> None:
        with pytest.raises(TypeError, match="passes on_event itself"):
            podsync.aio.with_events(podsync.sync, web(), fake(), on_event=print)

    asyncio.run(main())


def test_events_of_a_runtime_without_events_is_refused_at_once() -> None:
    # A runtime of the core alone has no event stream: the feed is refused when asked
    # for, naming the capability, rather than failing later in its reading thread.
    from podsync.runtime import MissingCapability
    from tests.support.core_runtime import CoreRuntime

    async def main() -> None:
        with pytest.raises(MissingCapability, match="events"):
            podsync.aio.events(CoreRuntime(FakeRuntime()))

    asyncio.run(main())


def test_an_awaited_down_removes_what_down_removes(tmp_path: Path) -> None:
    """A scope's pods, removed by ``podsync.aio.down`` on one fake and ``podsync.down`` on
    another: the same result, the same engine calls, nothing of the scope left running."""
    mine, theirs = fake(), fake()
    scoped = PlanOptions(root_dir=str(tmp_path / "root"), scope="billing")
    for engine in (mine, theirs):
        podsync.sync(web(), engine, options=scoped, clock=engine.clock)
        engine.clear_calls()

    async def awaited() -> podsync.SyncResult:
        return await podsync.aio.down(
            runtime=mine, scope="billing", options=scoped, clock=mine.clock
        )

    result = asyncio.run(awaited())
    assert result == podsync.down(
        runtime=theirs, scope="billing", options=scoped, clock=theirs.clock
    )
    assert result.ok
    assert theirs.call_names() == mine.call_names()
    assert not any(c.running for c in mine.list_containers())
