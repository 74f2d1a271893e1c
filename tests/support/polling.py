"""Waiting in tests for what other threads do, without reading the clock (the pure
tests guard it: ``tests.support.clock_guard``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

WAIT = 10.0  # seconds at most (never reached when the condition comes true)


def wait_for(condition: Callable[[], object], timeout: float = WAIT) -> bool:
    """Poll ``condition`` every 10 ms for at most ``timeout`` seconds
    (``threading.Event.wait``); whether it came true."""
    pause = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if condition():
            return True
        pause.wait(0.01)
    return bool(condition())
