"""A fleet seen from one place: what a host reports to etcd (its heartbeat, its pod
statuses, its events) and what anyone reads back from there.

``_records`` (the keys under ``/registry/hosts/<host>/`` and their JSON records),
``_reporter`` (``HostReporter``: a ``podsync run`` writing them, a board of the loop),
``_events`` (apply's events and the loop's notices in the kubelet's reasons; Secret
values masked by ``podsync.model._scrub``) and ``_fleet`` (reading them
back: ``fleet_hosts`` → ``HostView``, ``fleet_statuses`` → ``FleetPodStatus``,
``fleet_events`` → ``EventRecord``).

This package is the public face of reading a fleet; ``EventRecord`` and ``HostRecord``
are the records as the hosts write them.

May import: model, status, runtime, host, applier, loop, etcd, exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# The names are imported when first used (``__getattr__`` below, issue 33): a module of
# the folder that imports another of it does not load the rest of the folder with
# them. Type checkers and the API reference read the imports here.
if _TYPE_CHECKING:
    from podsync.report._fleet import (
        FleetPodStatus,
        HostView,
        fleet_events,
        fleet_hosts,
        fleet_statuses,
    )
    from podsync.report._records import EventRecord, HostRecord, SourceState

#: The modules the names are imported from on first use (the ``_TYPE_CHECKING`` block
#: above lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.report._fleet": (
        "FleetPodStatus",
        "HostView",
        "fleet_events",
        "fleet_hosts",
        "fleet_statuses",
    ),
    "podsync.report._records": ("EventRecord", "HostRecord", "SourceState"),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

__all__ = [
    "EventRecord",
    "FleetPodStatus",
    "HostRecord",
    "HostView",
    "SourceState",
    "fleet_events",
    "fleet_hosts",
    "fleet_statuses",
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
