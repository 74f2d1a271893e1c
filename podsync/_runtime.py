"""The runtime boundary: what podsync needs from a container engine.

``Runtime`` is a ``typing.Protocol``: any object with these methods is a runtime, with
no inheritance and no engine types in the signatures. podsync ships two:
``podsync.docker.DockerRuntime`` (the docker SDK) and ``podsync.testing.FakeRuntime``
(in memory, for tests).

Contract for implementations:

* Errors are ``podsync.exceptions.RuntimeCallError`` (``EngineUnavailable`` when the
  engine cannot be reached at all), never the engine library's own exceptions.
* Stopping a container that is not running, or stopping or removing one that is gone,
  succeeds: the plan's goal is reached either way (as CRI's idempotent calls).
* ``list_containers`` is the whole observation of containers: one call per sync, and
  the labels podsync writes carry everything the planner needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs

from podsync._actions import CreateSpec
from podsync._models import ObservedContainer, ObservedImage

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["ExecResult", "Runtime"]


@attrs.frozen
class ExecResult:
    """What a command run inside a container returned."""

    exit_code: int
    output: bytes = b""


class Runtime(Protocol):
    """**Protocol**: a container engine, as podsync uses it."""

    def list_containers(self) -> list[ObservedContainer]:
        """Every container on the engine, running and exited."""
        ...

    def list_images(self) -> list[ObservedImage]:
        """Every image on the engine."""
        ...

    def pull_image(self, image: str) -> None:
        """Pull ``image`` (an untagged reference pulls ``:latest``)."""
        ...

    def create_container(self, spec: CreateSpec) -> str:
        """Create (not start) a container from ``spec``; return its id.

        ``spec.directories`` and ``spec.files`` are created by the caller before this.
        """
        ...

    def start_container(self, container_id: str) -> None:
        """Start a created container."""
        ...

    def stop_container(self, container_id: str, timeout: int) -> None:
        """Stop a container: SIGTERM, then SIGKILL after ``timeout`` seconds."""
        ...

    def remove_container(self, container_id: str) -> None:
        """Remove a container that does not run."""
        ...

    def exec_in_container(
        self, container_id: str, command: Sequence[str], timeout: float
    ) -> ExecResult:
        """Run ``command`` (an argument list, never a shell string) in a running
        container and wait at most ``timeout`` seconds for it."""
        ...

    def container_address(self, container_id: str) -> str | None:
        """The IP address of the container's network, or ``None`` when it has none
        (network mode ``none``): where httpGet and tcpSocket handlers connect when
        they name no host."""
        ...

    def remove_image(self, image_id: str) -> None:
        """Remove an image by id."""
        ...

    def close(self) -> None:
        """Release what the runtime holds (connections, clients). Whoever made the
        runtime closes it: ``podsync.sync`` the one it builds when given none, the
        command line the one its factory made. Closing twice is harmless."""
        ...
