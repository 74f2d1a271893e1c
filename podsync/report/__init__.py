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

from podsync.report._fleet import (
    FleetPodStatus,
    HostView,
    fleet_events,
    fleet_hosts,
    fleet_statuses,
)
from podsync.report._records import EventRecord, HostRecord, SourceState

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
