"""A runtime with the core protocol alone (``podsync.runtime.Runtime``), over a full one
(``FakeRuntime``, or ``DockerRuntime`` on the engine): what a third-party engine that
offers no volumes, files, exec, logs, events or node information looks like to podsync.

It has exactly the nine core methods, written out (no ``__getattr__``), so that
``isinstance`` finds no optional capability on it.
"""

from __future__ import annotations

from podsync.actions._actions import CreateSpec
from podsync.model._pod import ObservedContainer, ObservedImage
from podsync.runtime._protocol import FullRuntime


class CoreRuntime:
    """The core of ``inner``: containers and images, nothing more."""

    def __init__(self, inner: FullRuntime) -> None:
        self.inner = inner

    def list_containers(self) -> list[ObservedContainer]:
        return self.inner.list_containers()

    def list_images(self) -> list[ObservedImage]:
        return self.inner.list_images()

    def pull_image(self, image: str) -> None:
        self.inner.pull_image(image)

    def create_container(self, spec: CreateSpec) -> str:
        return self.inner.create_container(spec)

    def start_container(self, container_id: str) -> None:
        self.inner.start_container(container_id)

    def stop_container(self, container_id: str, timeout: int) -> None:
        self.inner.stop_container(container_id, timeout)

    def remove_container(self, container_id: str) -> None:
        self.inner.remove_container(container_id)

    def remove_image(self, image_id: str) -> None:
        self.inner.remove_image(image_id)

    def close(self) -> None:
        self.inner.close()
