"""The runtime boundary: what podsync needs from a container engine, and what a runtime
author implements.

``_protocol`` holds ``Runtime``, a ``typing.Protocol`` with no engine types in its
signatures, and the values it returns. Each engine is a folder beside it: ``docker``
(the docker SDK) and ``fake`` (an in-memory engine for tests).

This package is the public face of the boundary for whoever writes a runtime: the
protocol, what a ``CreateSpec`` carries (``PortMapping``, ``Mount``, ``TmpfsMount``,
``NamedVolumeMount``, ``VolumeFileMount``, ``ContainerSecurity``), what a runtime
returns (``ExecResult``, ``LogLine``, ``EngineEvent``, ``Stream``) and what it writes
into a volume (``VolumeEntry``). ``podsync.Runtime`` and ``podsync.CreateSpec`` are the
same objects.

May import: model, spec, actions.
"""

from __future__ import annotations

from podsync.actions._actions import CreateSpec
from podsync.model._security import ContainerSecurity
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.runtime._protocol import EngineEvent, ExecResult, LogLine, Runtime, Stream
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import Mount, NamedVolumeMount, TmpfsMount, VolumeFileMount

__all__ = [
    "ContainerSecurity",
    "CreateSpec",
    "EngineEvent",
    "EntryKind",
    "ExecResult",
    "LogLine",
    "Mount",
    "NamedVolumeMount",
    "PortMapping",
    "Runtime",
    "Stream",
    "TmpfsMount",
    "VolumeEntry",
    "VolumeFileMount",
]
