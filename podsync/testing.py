"""Testing helpers: ``FakeRuntime``, an in-memory container engine, and ``FakeClock``.

Use them to test podsync, or your own orchestrator built on podsync, without an engine
and without the real clock::

    from podsync.testing import FakeClock, FakeRuntime

    clock = FakeClock(100.0, step=0)   # moves only when told to
    fake = FakeRuntime(images=["busybox", "registry.k8s.io/pause:3.10"], clock=clock)
    result = podsync.sync([pod], fake, options=options, clock=clock)
    assert ["list", "list_images", "create", "start", "create", "start"] == fake.call_names()
    fake.clear_calls()
    clock.advance(1)
    podsync.sync([pod], fake, options=options, clock=clock)
    assert ["list"] == fake.call_names()   # converged: one list call, nothing to do

``FakeRuntime`` follows Docker 20.10's rules, with its messages, by its own code, and
refuses what the engine refuses; ``Call`` is one recorded call, ``CALL_NAMES`` the
names calls are recorded under and ``MUTATING_CALL_NAMES`` those that change the
engine. This module is the public face of ``podsync/runtime/fake/``, where the fake
lives split by concern (``_runtime``'s docstring says what it models).
"""

from __future__ import annotations

from podsync.runtime.fake._calls import CALL_NAMES, MUTATING_CALL_NAMES, Call
from podsync.runtime.fake._clock import FakeClock
from podsync.runtime.fake._runtime import FakeRuntime

__all__ = ["CALL_NAMES", "MUTATING_CALL_NAMES", "Call", "FakeClock", "FakeRuntime"]
