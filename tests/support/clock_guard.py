"""The clock guard: a test not marked ``engine`` never reads the real clock through
podsync.

A pure test whose outcome depends on how fast the machine is can fail on a loaded one.
So for every test that is not an engine test, ``tests/conftest.py`` installs this guard:
podsync's modules see a ``time`` module whose clock readers (``time``, ``monotonic``,
``perf_counter``, ``sleep``, ...) raise ``ClockRead``, and so do module globals and
function defaults in podsync that hold one of those functions. pytest, Hypothesis and
threading keep the real clock: only what podsync's own modules (and the test's own
module) see is replaced.

``ClockRead`` is a ``BaseException``, so that podsync's handlers for failed runtime calls
(``except Exception``) cannot turn it into a failed result; and every read is recorded,
so that a read swallowed anyway still fails the test when it ends.

A test that does real I/O with timeouts of its own (an HTTP server on loopback) and is
not an engine test is marked ``real_clock``.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
import types
from collections.abc import Callable, Iterable
from typing import Any

import pytest

import podsync

#: The functions of ``time`` that read (or wait on) the clock.
READERS = (
    "time",
    "time_ns",
    "monotonic",
    "monotonic_ns",
    "perf_counter",
    "perf_counter_ns",
    "sleep",
)

HOW_TO_PASS_A_CLOCK = (
    "pure tests never read the real clock: pass one - "
    "FakeRuntime(clock=podsync.testing.FakeClock(...)), plan(..., now=...), "
    "sync(..., now=..., clock=...), apply(..., clock=...), "
    "podsync.cli.main(..., clock=..., sleep=...) - or mark the test engine "
    "(real I/O with timeouts of its own: real_clock)"
)


class ClockRead(BaseException):
    """podsync read the real clock in a test that is not marked ``engine``."""


class Guard:
    """The reads of one test (``reads``: ``time.<name>`` per read, in order)."""

    def __init__(self) -> None:
        self.reads: list[str] = []

    def reader(self, name: str) -> Callable[..., Any]:
        def read(*args: Any, **kwargs: Any) -> Any:
            self.reads.append(f"time.{name}")
            raise ClockRead(f"podsync read the real clock (time.{name}()): {HOW_TO_PASS_A_CLOCK}")

        read.__name__ = name
        return read


def podsync_modules() -> list[types.ModuleType]:
    """podsync and every module of it (imported here, so that a module a test imports
    lazily - ``podsync.docker`` - is guarded too)."""
    modules = [podsync]
    for info in pkgutil.walk_packages(podsync.__path__, "podsync."):
        if info.name != "podsync.__main__":
            modules.append(importlib.import_module(info.name))
    return modules


def _functions(module: types.ModuleType) -> Iterable[types.FunctionType]:
    """The functions and methods defined in ``module``."""
    for value in list(vars(module).values()):
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            yield value
        elif isinstance(value, type) and value.__module__ == module.__name__:
            for member in vars(value).values():
                member = getattr(member, "__func__", member)  # static and class methods
                if isinstance(member, types.FunctionType):
                    yield member


def install(
    monkeypatch: pytest.MonkeyPatch, guard: Guard, modules: Iterable[types.ModuleType]
) -> None:
    """Make the clock readers, as ``modules`` see them, raise ``ClockRead`` (undone by
    ``monkeypatch``)."""
    real = {id(getattr(time, name)): name for name in READERS}
    guarded_time = types.ModuleType("time", "The time module, with its clock readers guarded.")
    guarded_time.__dict__.update(
        {k: v for k, v in vars(time).items() if k not in ("__name__", "__doc__")}
    )
    readers = {name: guard.reader(name) for name in READERS}
    for name, read in readers.items():
        setattr(guarded_time, name, read)

    def guarded(value: Any) -> Any:
        """The guarded stand-in for ``value``, or ``value`` itself."""
        name = real.get(id(value))
        if name is not None and value is getattr(time, name):
            return readers[name]
        return value

    for module in modules:
        for attr, value in list(vars(module).items()):
            if value is time:
                monkeypatch.setattr(module, attr, guarded_time)
            elif guarded(value) is not value:
                monkeypatch.setattr(module, attr, guarded(value))
        # Defaults bound when the function was defined (``clock=time.time``).
        for function in _functions(module):
            if function.__defaults__ and any(guarded(v) is not v for v in function.__defaults__):
                monkeypatch.setattr(
                    function, "__defaults__", tuple(guarded(v) for v in function.__defaults__)
                )
            if function.__kwdefaults__ and any(
                guarded(v) is not v for v in function.__kwdefaults__.values()
            ):
                monkeypatch.setattr(
                    function,
                    "__kwdefaults__",
                    {k: guarded(v) for k, v in function.__kwdefaults__.items()},
                )
