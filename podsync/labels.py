"""The labels podsync writes on every container (and named volume) it creates: one
public namespace of keys.

Orchestrators filter containers by label - ``docker ps --filter
label=io.podsync.pod.uid``, or ``labels.get(LABEL_POD_UID)`` on what a runtime lists -
so the keys are public, here rather than at the top level of ``podsync``, where they
would crowd the functions and types::

    from podsync.labels import LABEL_POD_UID

    mine = [c for c in runtime.list_containers() if LABEL_POD_UID in c.labels]

A container carrying ``LABEL_POD_UID`` is podsync's; ``podsync.ownership`` is the whole
rule (it also knows a 2014 kubelet's containers and never takes a Kubernetes node's).
A named volume carrying ``LABEL_VOLUME_KIND`` is podsync's (``podsync.volume_ownership``).
The values are podsync's own record and may change shape between versions (the spec
hash is versioned); read them through podsync rather than parsing them.
"""

from __future__ import annotations

from podsync.spec._labels import (
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_CONTENT_VOLUMES,
    LABEL_EMPTY_DIRS,
    LABEL_GRACE_PERIOD,
    LABEL_INIT_INDEX,
    LABEL_INIT_RESTART_POLICY,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_UID,
    LABEL_PRE_STOP,
    LABEL_RESTART_COUNT,
    LABEL_SCOPE,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
    LABEL_VOLUME_CLAIM,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    LABEL_VOLUME_NAMESPACE,
)

__all__ = [
    "LABEL_ATTEMPT",
    "LABEL_CONTAINER",
    "LABEL_CONTENT_VOLUMES",
    "LABEL_EMPTY_DIRS",
    "LABEL_GRACE_PERIOD",
    "LABEL_INIT_INDEX",
    "LABEL_INIT_RESTART_POLICY",
    "LABEL_POD_NAME",
    "LABEL_POD_NAMESPACE",
    "LABEL_POD_SOURCE",
    "LABEL_POD_UID",
    "LABEL_PRE_STOP",
    "LABEL_RESTART_COUNT",
    "LABEL_SCOPE",
    "LABEL_SPEC",
    "LABEL_SPEC_HASH",
    "LABEL_VOLUME_CLAIM",
    "LABEL_VOLUME_KIND",
    "LABEL_VOLUME_NAME",
    "LABEL_VOLUME_NAMESPACE",
]
