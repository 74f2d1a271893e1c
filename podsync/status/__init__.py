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
