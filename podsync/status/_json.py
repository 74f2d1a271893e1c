"""The JSON form of pod statuses (``podsync status --json``), versioned.

Contract: pure. ``statuses_to_json`` is canonical (sorted keys, ``\\n`` at the end):
equal statuses give equal text. ``STATUS_FORMAT_VERSION`` changes when a field changes
meaning or goes away; a new field does not change it (readers ignore what they do not
know, as Kubernetes clients do).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import attrs

from podsync.status._pod import ContainerStatus, PodStatus

__all__ = ["STATUS_FORMAT_VERSION", "status_record", "statuses_to_json"]

#: The version of ``statuses_to_json``'s document.
STATUS_FORMAT_VERSION = 1


def _container(status: ContainerStatus) -> dict[str, Any]:
    record = attrs.asdict(status, recurse=False)
    record["state"] = status.state.value
    return record


def status_record(status: PodStatus) -> dict[str, Any]:
    """One pod's status as a JSON-able mapping (the field names of ``PodStatus``, its
    ``display_status`` - kubectl's STATUS column - among them; ``scope`` is ``null``
    for a pod no named scope runs)."""
    return {
        "pod": status.pod,
        "uid": status.uid,
        "phase": status.phase.value,
        "state": status.state.value,
        "message": status.message,
        "reason": status.reason,
        "display_status": status.display_status,
        "orphaned": status.orphaned,
        "scope": status.scope,
        "ready": list(status.ready_count),
        "restarts": status.restarts,
        "conditions": [attrs.asdict(c) for c in status.conditions],
        "init_containers": [_container(c) for c in status.init_containers],
        "containers": [_container(c) for c in status.containers],
    }


def statuses_to_json(statuses: Iterable[PodStatus]) -> str:
    """``{"format_version": 1, "pods": [...]}``, one record per status, in order."""
    document = {
        "format_version": STATUS_FORMAT_VERSION,
        "pods": [status_record(s) for s in statuses],
    }
    return json.dumps(document, sort_keys=True, indent=2) + "\n"
