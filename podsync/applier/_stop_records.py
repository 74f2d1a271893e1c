"""Stop records in the engine: what podsync writes when it stops a container, so that
the container's status can say why it stopped (``podsync.spec._records``: a labelled,
empty named volume per stopped container), and removes with the container.

Contract: the records need named volumes (``VolumeRuntime``); on a runtime without them
nothing is written or removed, and the status of a container podsync stopped is read
from its exit code alone, as for any other exit.
"""

from __future__ import annotations

from podsync.runtime._protocol import Runtime, VolumeRuntime
from podsync.spec._records import stop_record_labels, stop_record_volume

__all__ = ["remove_stop_record_volume", "write_stop_record"]


def write_stop_record(runtime: Runtime, pod_uid: str, container_id: str, reason: str) -> None:
    """Record in the engine that podsync stops ``container_id`` of pod ``pod_uid``, and
    why (``podsync.spec._records``): a record an earlier stop that failed left is replaced
    (remove, then create: two calls). A runtime without named volumes keeps no record
    (the status of the stopped container then says what its exit code says).

    Raises:
        ValueError: the id cannot name a record.
        RuntimeCallError: the engine failed.
    """
    if not isinstance(runtime, VolumeRuntime):
        return
    name = stop_record_volume(container_id)
    runtime.remove_volume(name)
    runtime.create_volume(name, stop_record_labels(pod_uid, container_id, reason))


def remove_stop_record_volume(runtime: Runtime, container_id: str) -> None:
    """Remove the stop record of ``container_id`` in the engine (one call; a missing
    record counts as removed); nothing on a runtime without named volumes.

    Raises:
        RuntimeCallError: the engine failed.
    """
    if isinstance(runtime, VolumeRuntime):
        runtime.remove_volume(stop_record_volume(container_id))
