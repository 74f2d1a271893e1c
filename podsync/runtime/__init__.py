"""The runtime boundary: what podsync needs from a container engine, and what a runtime
author implements.

``_protocol`` holds the protocols, with no engine types in their signatures, and the
values they return. Each engine is a folder beside it: ``docker`` (the docker SDK) and
``fake`` (an in-memory engine for tests).

This package is the public face of the boundary for whoever writes a runtime: every
type a protocol method takes or returns is here (a test walks their annotations).

What a third-party runtime implements:

* ``Runtime``, the core, always: ``list_containers``, ``list_images``, ``pull_image``,
  ``create_container``, ``start_container``, ``stop_container``,
  ``remove_container``, ``remove_image`` and ``close``. ``isinstance(x, Runtime)`` is
  true of any object with these methods.
* Any of the optional capabilities (``Capability``), each a protocol of its own:
  ``VolumeRuntime``, ``FileRuntime``, ``ExecRuntime``, ``LogRuntime``,
  ``EventRuntime``, ``NodeRuntime``. podsync discovers them (``capabilities``), plans
  for what is there (a pod that needs a missing one is rejected, naming it) and raises
  ``MissingCapability`` for an operating call that needs one
  (``require``). ``FullRuntime`` is all of them.
* ``UsageRuntime``, optional too but no ``Capability`` (no plan depends on it):
  ``container_usage`` and ``node_usage``, each container's and the host's CPU and
  memory (``ContainerUsage``); ``require_usage`` raises ``MissingCapability`` without
  it (``podsync top``), and the loop reports no usage.
* ``PodListRuntime``, optional and no ``Capability`` either: ``list_pod_containers``,
  the containers of one pod (a label filter). With it ``podsync run`` syncs the pod of
  a container that died from that list alone, not the whole host.

A core runtime::

    class Engine:
        def list_containers(self) -> list[ObservedContainer]: ...
        def list_images(self) -> list[ObservedImage]: ...
        def pull_image(self, image: str) -> None: ...
        def create_container(self, spec: CreateSpec) -> str: ...
        def start_container(self, container_id: str) -> None: ...
        def stop_container(self, container_id: str, timeout: int) -> None: ...
        def remove_container(self, container_id: str) -> None: ...
        def remove_image(self, image_id: str) -> None: ...
        def close(self) -> None: ...

    assert isinstance(Engine(), Runtime)
    assert capabilities(Engine()) == frozenset()
    podsync.sync(pods, Engine())  # pods without volumes or exec run on it

What a ``CreateSpec`` carries: ``PortMapping``, ``Mount``, ``TmpfsMount``,
``NamedVolumeMount``, ``VolumeFileMount``, ``ContainerSecurity``; what a runtime returns:
``ObservedContainer``, ``ObservedImage``, ``ObservedVolume``, ``ResourceList``,
``ExecResult``, ``LogLine``, ``EngineEvent``, ``Stream``, ``ContainerUsage``; what it
writes into a volume: ``VolumeEntry`` (of an ``EntryKind``). ``podsync.Runtime`` and
``podsync.CreateSpec`` are the same objects.

May import: model, spec, actions, exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# The names are imported when first used (``__getattr__`` below, issue 33): a module of
# the folder that imports another of it does not load the rest of the folder with
# them. Type checkers and the API reference read the imports here.
if _TYPE_CHECKING:
    from podsync.actions._actions import CreateSpec
    from podsync.actions._options import Capability
    from podsync.exceptions import MissingCapability
    from podsync.model._pod import ObservedContainer, ObservedImage, ObservedVolume, ResourceList
    from podsync.model._security import ContainerSecurity
    from podsync.model._usage import ContainerUsage
    from podsync.model._volume_entries import EntryKind, VolumeEntry
    from podsync.runtime._protocol import (
        EngineEvent,
        EventRuntime,
        ExecResult,
        ExecRuntime,
        FileRuntime,
        FullRuntime,
        LogLine,
        LogRuntime,
        NodeRuntime,
        PodListRuntime,
        Runtime,
        Stream,
        UsageRuntime,
        VolumeRuntime,
        capabilities,
        require,
        require_usage,
    )
    from podsync.spec._ports import PortMapping
    from podsync.spec._volumes import Mount, NamedVolumeMount, TmpfsMount, VolumeFileMount

#: The modules the names are imported from on first use (the ``_TYPE_CHECKING`` block
#: above lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.actions._actions": ("CreateSpec",),
    "podsync.actions._options": ("Capability",),
    "podsync.exceptions": ("MissingCapability",),
    "podsync.model._pod": ("ObservedContainer", "ObservedImage", "ObservedVolume", "ResourceList"),
    "podsync.model._security": ("ContainerSecurity",),
    "podsync.model._usage": ("ContainerUsage",),
    "podsync.model._volume_entries": ("EntryKind", "VolumeEntry"),
    "podsync.runtime._protocol": (
        "EngineEvent",
        "EventRuntime",
        "ExecResult",
        "ExecRuntime",
        "FileRuntime",
        "FullRuntime",
        "LogLine",
        "LogRuntime",
        "NodeRuntime",
        "PodListRuntime",
        "Runtime",
        "Stream",
        "UsageRuntime",
        "VolumeRuntime",
        "capabilities",
        "require",
        "require_usage",
    ),
    "podsync.spec._ports": ("PortMapping",),
    "podsync.spec._volumes": ("Mount", "NamedVolumeMount", "TmpfsMount", "VolumeFileMount"),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

__all__ = [
    "Capability",
    "ContainerSecurity",
    "ContainerUsage",
    "CreateSpec",
    "EngineEvent",
    "EntryKind",
    "EventRuntime",
    "ExecResult",
    "ExecRuntime",
    "FileRuntime",
    "FullRuntime",
    "LogLine",
    "LogRuntime",
    "MissingCapability",
    "Mount",
    "NamedVolumeMount",
    "NodeRuntime",
    "ObservedContainer",
    "ObservedImage",
    "ObservedVolume",
    "PodListRuntime",
    "PortMapping",
    "ResourceList",
    "Runtime",
    "Stream",
    "TmpfsMount",
    "UsageRuntime",
    "VolumeEntry",
    "VolumeFileMount",
    "VolumeRuntime",
    "capabilities",
    "require",
    "require_usage",
]


# Hidden from type checkers, as on ``podsync`` itself: a misspelt name must not type-check.
if not _TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A name of the face, imported on first use (and kept, so it is imported once)."""
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = globals()[name] = getattr(importlib.import_module(module), name)
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})
