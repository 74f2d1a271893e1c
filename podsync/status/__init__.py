"""How a pod is doing, and what the operating commands read off the engine for it.

``_pod`` (``pod_status``: phase, conditions, container states, podsync's verdict
``PodState``), ``_container`` (one container's state, last run and termination
message), ``_init`` (the init containers' statuses), ``_kubectl`` (kubectl's STATUS
column, ``PodStatus.display_status``: its ``printPod``), ``_json`` (the versioned JSON
form) and ``_usage`` (pods' CPU and memory from two readings: ``pod_usage``) are
pure: they read what was observed. ``_operate`` does the I/O around them: finding a
pod's containers on an engine, termination messages and log tails, and the engine's
events mapped to pods.

This package is the public face of pod status and of operating pods: ``pod_status``
and its values (also at the top of ``podsync``), the statuses of pods no longer desired
(``orphaned_pod_statuses``), the JSON form (``statuses_to_json``,
``STATUS_FORMAT_VERSION``), and what ``podsync status``, ``logs`` and ``events`` read
off an engine (``termination_inputs``, ``previous_instance``, ``pod_events`` and its
``PodEngineEvent``), and the pods' usage (``pod_usage``, ``usage_figures``).

May import: model, spec, actions, runtime, exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# The names are imported when first used (``__getattr__`` below, issue 33): a module of
# the folder that imports another of it does not load the rest of the folder with
# them. Type checkers and the API reference read the imports here.
if _TYPE_CHECKING:
    from podsync.status._json import STATUS_FORMAT_VERSION, statuses_to_json
    from podsync.status._operate import (
        PodEngineEvent,
        pod_events,
        previous_instance,
        termination_inputs,
    )
    from podsync.status._pod import (
        ContainerState,
        ContainerStatus,
        PodCondition,
        PodPhase,
        PodState,
        PodStatus,
        orphaned_pod_statuses,
        pod_status,
    )
    from podsync.status._usage import pod_usage, usage_figures

#: The modules the names are imported from on first use (the ``_TYPE_CHECKING`` block
#: above lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.status._json": ("STATUS_FORMAT_VERSION", "statuses_to_json"),
    "podsync.status._operate": (
        "PodEngineEvent",
        "pod_events",
        "previous_instance",
        "termination_inputs",
    ),
    "podsync.status._pod": (
        "ContainerState",
        "ContainerStatus",
        "PodCondition",
        "PodPhase",
        "PodState",
        "PodStatus",
        "orphaned_pod_statuses",
        "pod_status",
    ),
    "podsync.status._usage": ("pod_usage", "usage_figures"),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

__all__ = [
    "STATUS_FORMAT_VERSION",
    "ContainerState",
    "ContainerStatus",
    "PodCondition",
    "PodEngineEvent",
    "PodPhase",
    "PodState",
    "PodStatus",
    "orphaned_pod_statuses",
    "pod_events",
    "pod_status",
    "pod_usage",
    "previous_instance",
    "statuses_to_json",
    "termination_inputs",
    "usage_figures",
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
