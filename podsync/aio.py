"""podsync for asyncio: the calls an async controller makes, awaitable, on threads.

Usage::

    import podsync, podsync.aio
    from podsync.docker import DockerRuntime

    async def controller(pods, options):
        runtime = DockerRuntime()
        async with podsync.aio.events(runtime) as events:      # the engine's events
            await podsync.aio.sync(pods, runtime, options=options)
            async for event in events:
                if event.action == "die":
                    await podsync.aio.sync(pods, runtime, options=options)

    async def apply_with_progress(plan, runtime):
        run = podsync.aio.with_events(podsync.apply, plan, runtime)
        async for event in run:                                 # each Event as it happens
            print(event.kind, event.message)
        return await run                                        # the ApplyResult

``sync``, ``observe``, ``apply``, ``load_pods`` and ``down`` take exactly the arguments
of ``podsync.sync``, ``podsync.observe``, ``podsync.apply``, ``podsync.load_pods`` and
``podsync.down`` and give the same result. ``plan`` and ``pod_status`` are pure and
quick (no I/O): call them as they are.

Threads, not an async engine client: the docker SDK is synchronous, so each call runs
in a worker thread of the event loop's default executor (``asyncio.to_thread``), and
the loop goes on meanwhile; a sync's apply uses its own pool besides (``workers``).
What "Threads and processes" in docs/library.md says of the calls holds for these.

Cancellation: a thread cannot be stopped in the middle of a call. Cancelling a task
that awaits ``sync`` or ``apply`` ends the await at once (``CancelledError``), while
the call runs on to its end in its thread - an apply started is finished, never left
half done - and its result is dropped (the next ``sync`` observes what it did).
``asyncio.run`` waits for such a call before it returns (it shuts the default
executor down). ``events`` and ``with_events`` hand over what a thread reads; closing
one, leaving its ``async with`` or cancelling the task that iterates it, closes the
engine's stream, which ends that thread (a ``with_events`` call still runs to its end,
as above).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable, Coroutine, Generator, Iterator
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

from podsync.applier._apply import apply as _apply
from podsync.load._config import load_pods as _load_pods
from podsync.loop._down import down as _down
from podsync.loop._observe import observe as _observe
from podsync.loop._sync import sync as _sync
from podsync.runtime._protocol import Capability, EventRuntime, missing

if TYPE_CHECKING:
    from podsync.applier._results import Event
    from podsync.runtime._protocol import EngineEvent, Runtime, Stream

__all__ = [
    "Feed",
    "Running",
    "apply",
    "down",
    "events",
    "load_pods",
    "observe",
    "sync",
    "with_events",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")


def _in_a_thread(
    function: Callable[_P, _R],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """``function`` as a coroutine function that runs it in a worker thread: the same
    parameters (checked as the function's own), the same result, its docstring after a
    line that says so."""

    @functools.wraps(function)
    async def awaitable(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await asyncio.to_thread(function, *args, **kwargs)

    awaitable.__module__ = __name__
    awaitable.__qualname__ = function.__name__
    awaitable.__doc__ = (
        f"``podsync.{function.__name__}``, awaitable: run in a worker thread of the event "
        "loop's default executor (``asyncio.to_thread``; see ``podsync.aio`` for what\n"
        "cancelling it does). Its own documentation follows.\n\n" + (function.__doc__ or "")
    )
    return awaitable


sync = _in_a_thread(_sync)
observe = _in_a_thread(_observe)
apply = _in_a_thread(_apply)
load_pods = _in_a_thread(_load_pods)
down = _in_a_thread(_down)


class _End:
    """What a feed's thread hands over last: the end, or the error that ended it."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class Feed(Generic[_T]):
    """What a thread reads from a blocking source, as an async iterator on the event
    loop that made it (``events``, ``with_events``).

    Iterate it with ``async for``; use it as an async context manager (or call
    ``aclose()``) to stop early: the source is closed and the thread ends. Entering the
    ``async with`` waits until the thread has opened its source (for ``events``: the
    engine's stream, so that nothing that happens inside the block is missed). An error
    of the source comes out of the iteration, in the iterating task.
    """

    def __init__(self, close: Callable[[], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[_T | _End] = asyncio.Queue()
        self._close = close
        self._ended = False
        self._opened: asyncio.Future[None] = self._loop.create_future()

    # -- the thread's side ---------------------------------------------------------------

    def _hand_over(self, item: _T | _End) -> None:
        """Put ``item`` in the queue, from the feeding thread; a loop that has closed
        takes nothing more, and the source is closed."""
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed: nobody will read on
            self._close()

    def _mark_opened(self) -> None:
        """Say (from the feeding thread) that the source is open, or never will be."""
        # A closed event loop raises RuntimeError: nobody waits any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._set_opened)

    def _set_opened(self) -> None:
        if not self._opened.done():
            self._opened.set_result(None)

    def _feed(self, items: Iterator[_T]) -> None:
        """Hand over every item of ``items``, then the end (in the feeding thread)."""
        try:
            for item in items:
                self._hand_over(item)
        except BaseException as exc:  # handed to the iterating task, raised there
            self._hand_over(_End(exc))
        else:
            self._hand_over(_End())
        finally:
            self._mark_opened()

    # -- the event loop's side -----------------------------------------------------------

    def __aiter__(self) -> Feed[_T]:
        return self

    async def __anext__(self) -> _T:
        if self._ended:
            raise StopAsyncIteration
        try:
            item = await self._queue.get()
        except asyncio.CancelledError:
            await self.aclose()
            raise
        if isinstance(item, _End):
            self._ended = True
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        return item

    async def aclose(self) -> None:
        """Stop reading: close the source (the thread ends) and end the iteration."""
        self._ended = True
        self._close()

    async def __aenter__(self) -> Feed[_T]:
        await asyncio.shield(self._opened)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _start(feed: Feed[_T], items: Iterator[_T], name: str) -> None:
    thread = threading.Thread(target=feed._feed, args=(items,), name=name, daemon=True)
    thread.start()


def events(
    runtime: Runtime, *, since: float | None = None, until: float | None = None
) -> Feed[EngineEvent]:
    """The engine's container events (``EventRuntime.engine_events``, with its ``since`` and
    ``until``), as they come, read in a thread of their own.

    Without ``until`` the feed follows the engine until it is closed: iterate it in an
    ``async with`` block (or ``contextlib.aclosing``), or cancel the task that iterates
    it - a ``break`` alone leaves its thread reading. Must be called with an event loop
    running (in a coroutine).

    Raises:
        MissingCapability: at once, when ``runtime`` has no events (``EventRuntime``).
        EngineUnavailable, RuntimeCallError: from the iteration, as
            ``EventRuntime.engine_events``.
    """
    if not isinstance(runtime, EventRuntime):
        raise missing(Capability.EVENTS, "podsync.aio.events")
    stream: list[Stream[EngineEvent]] = []
    closed = threading.Event()

    def close() -> None:
        closed.set()
        if stream:
            stream[0].close()

    feed: Feed[EngineEvent] = Feed(close)

    def read() -> Iterator[EngineEvent]:
        opened = runtime.engine_events(since=since, until=until)
        stream.append(opened)
        feed._mark_opened()
        if closed.is_set():  # closed while the stream was being opened
            opened.close()
        with opened:
            yield from opened

    _start(feed, read(), "podsync-aio-events")
    return feed


class Running(Feed["Event"], Generic[_R]):
    """A call of ``podsync.sync`` or ``podsync.apply`` (or any call that takes
    ``on_event``) running in a thread: ``async for`` gives its ``Event`` s as they
    happen, ``await`` its result once it returned (raising what it raised)."""

    def __init__(self) -> None:
        super().__init__(self._stop_feeding)
        self._result: asyncio.Future[_R] = self._loop.create_future()
        self._feeding = True
        self._opened.set_result(None)  # its events are handed over from the start

    def _stop_feeding(self) -> None:
        # The call cannot be stopped: its later events are dropped.
        self._feeding = False

    def _on_event(self, event: Event) -> None:
        if self._feeding:
            self._hand_over(event)

    def _settle(self, result: _R | None, error: BaseException | None) -> None:
        """Set the result (in the loop's thread) unless someone cancelled it."""
        if self._result.done():
            return
        if error is not None:
            self._result.set_exception(error)
        else:
            self._result.set_result(result)  # type: ignore[arg-type]

    def _run(self, call: Callable[[], _R]) -> None:
        """Make the call (in a worker thread), then hand over the end and the result."""
        try:
            result = call()
        except BaseException as exc:  # handed to the awaiting task, raised there
            self._hand_over(_End())
            self._call_in_loop(self._settle, None, exc)
            return
        self._hand_over(_End())
        self._call_in_loop(self._settle, result, None)

    def _call_in_loop(self, function: Callable[..., None], *args: Any) -> None:
        # A closed event loop raises RuntimeError: nobody awaits the result any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(function, *args)

    def __await__(self) -> Generator[Any, None, _R]:
        return self._result.__await__()


def with_events(function: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> Running[_R]:
    """Start ``function(*args, **kwargs, on_event=...)`` - ``podsync.sync``,
    ``podsync.apply`` - in a thread now, its events handed to the event loop: iterate
    the ``Running`` for them, await it for the result. ``kwargs`` holds no ``on_event``
    of its own: the ``Running`` is the one. Must be called with an event loop running.

    Raises:
        TypeError: ``kwargs`` has an ``on_event``.
    """
    if "on_event" in kwargs:
        raise TypeError("with_events passes on_event itself: iterate the Running instead")
    running: Running[_R] = Running()
    # ``on_event`` is one of the function's parameters that _P leaves to the caller.
    untyped: Callable[..., _R] = function
    call = functools.partial(untyped, *args, **kwargs, on_event=running._on_event)
    # In the default executor, as the awaitable calls: asyncio.run waits for it.
    running._loop.run_in_executor(None, running._run, call)
    return running
