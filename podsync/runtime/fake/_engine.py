"""What every call of ``FakeRuntime`` stands on: the state its calls share, finding a
container or an image, recording a call (and raising the fault a test scripted for it),
and the latency a call sleeps.

Contract: ``FakeEngine`` is the base of ``FakeRuntime`` and of its mixins (``_volumes``,
``_operating``); ``FakeRuntime``'s constructor sets the state, and every method here but
``_sleep`` is called with the fake's lock held. In memory, no I/O but the latency's
real sleep.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from podsync.actions._actions import CreateSpec
from podsync.exceptions import EngineUnavailable, RuntimeCallError
from podsync.model._pod import ObservedImage
from podsync.runtime.fake._calls import Call
from podsync.runtime.fake._calls import Fault as _Fault
from podsync.runtime.fake._calls import triggered as _triggered
from podsync.runtime.fake._rules import read_reference as _read_reference
from podsync.runtime.fake._state import FakeContainer as _Container

__all__ = ["FakeEngine"]


class FakeEngine:
    """The state ``FakeRuntime``'s calls share, and the internals every call uses."""

    # Set by FakeRuntime's constructor.
    calls: list[Call]
    clock: Callable[[], float]
    latency: float
    _lock: threading.RLock
    _containers: dict[str, _Container]
    _images: dict[str, ObservedImage]
    _faults: list[_Fault]

    def _sorted(self) -> list[_Container]:
        # Newest first, as the Docker API lists containers.
        return sorted(self._containers.values(), key=lambda c: (c.created, c.id), reverse=True)

    def _find(self, ref: str) -> _Container | None:
        found = self._containers.get(ref)
        if found is not None:
            return found
        name = ref.removeprefix("/")
        return next((c for c in self._containers.values() if c.name == name), None)

    def _ipc_mode(self, spec: CreateSpec) -> str:
        """``spec``'s IPC mode in Docker's spelling, as the engine stores it at create:
        ``host``, ``container:<id>`` (the container ``join_ipc`` names, found now),
        ``shareable``, or the engine's default, ``private``.

        Raises:
            RuntimeCallError: the container ``join_ipc`` names does not exist (Docker
                resolves it at create: "No such container: <name>").
        """
        if spec.security.host_ipc:
            return "host"
        if spec.join_ipc:
            donor = self._find(spec.join_ipc)
            if donor is None:
                # Docker answers 400 here (a bad create), not 404.
                raise RuntimeCallError(
                    "create", spec.name, f"No such container: {spec.join_ipc}", status_code=400
                )
            return f"container:{donor.id}"
        return "shareable" if spec.ipc_shareable else "private"

    def _get(self, ref: str) -> _Container:
        """The container ``_find`` finds, for the methods a test calls: a ``ref`` that
        names none is the test's mistake.

        Raises:
            KeyError: there is no such container.
        """
        found = self._find(ref)
        if found is None:
            raise KeyError(ref)
        return found

    def _targets(self, call: Call) -> list[str]:
        if call.name == "create":
            return [call.args[0].name, call.args[0].image]
        if call.name in ("start", "stop", "remove", "exec", "address", "logs", "exec_attached"):
            container = self._find(call.args[0])
            return [call.args[0]] + ([container.name] if container is not None else [])
        return [str(a) for a in call.args]

    def _record(self, name: str, *args: Any) -> None:
        """Record the call, then raise the first fault that matches it."""
        call = Call(name, args)
        self.calls.append(call)
        fault = _triggered(self._faults, call, self._targets)
        if fault is not None:
            target = " ".join(self._targets(call)[:1])
            if fault.unavailable:
                raise EngineUnavailable(name, target, fault.error)
            raise RuntimeCallError.from_status(name, target, fault.error, fault.status_code)

    def _find_image(self, image: str) -> ObservedImage | None:
        """The image ``image`` names - an id, or a reference in any spelling - or None."""
        by_id = self._images.get(image)
        if by_id is not None:
            return by_id
        try:
            wanted = _read_reference(image)
        except ValueError:
            return None
        for candidate in self._images.values():
            for listed in (*candidate.tags, *candidate.digests):
                try:
                    if _read_reference(listed) == wanted:
                        return candidate
                except ValueError:
                    continue
        return None

    def _sleep(self) -> None:
        # Outside the lock, so that concurrent calls overlap as they would on an engine.
        if self.latency:
            time.sleep(self.latency)
