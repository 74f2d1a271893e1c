"""``Observation``: what was seen on an engine and under the root directory at one
moment, the value ``podsync.observe`` returns and ``podsync.plan`` takes whole.

Pure: a frozen value with no behaviour beyond holding what was seen. It lives beside the
observed values it holds (``ObservedContainer``, ``ObservedImage``, ``ObservedVolume``,
``WrittenVolume``) so that the planner, which may import no I/O, can take it; the loop
(``podsync.loop._sync.observe``) fills it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import attrs

from podsync.model._pod import ObservedContainer, ObservedImage, ObservedVolume, ResourceList
from podsync.model._volume import WrittenVolume

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["Observation"]


@attrs.frozen
class Observation:
    """What runs on an engine and what lies under the root directory: the planner's
    input besides the desired pods (``plan(desired, observation, now=...)``).

    Everything in it was *seen* - listed from the engine or the host at one moment.
    What a caller *decides* or *remembers* across syncs (probe verdicts, the pulls that
    failed and their back-off, the time, the options) is not: those are ``plan``'s
    keywords.

    Attributes:
        containers: every container, running and exited (``Runtime.list_containers``).
        images: every image (``Runtime.list_images``).
        pod_dirs: the pod uids with a podsync pod directory under the root directory.
        volumes: the named volumes (``VolumeRuntime.list_volumes``), when they were listed:
            a sync lists them when podsync's records in them can matter (see
            ``observe``: a desired pod's configMap, secret or downwardAPI volumes, its
            probes, a stopped container) or its plan creates a container that mounts
            a named volume. Without the records of containers made after
            ``containers`` was listed (``podsync.loop._sync._confirmed``): every record
            left is about a container in ``containers``, or one that is gone.
        volume_files: the records of the volume files podsync wrote for the desired pods
            (configMap, secret and downwardAPI volumes; see ``observe``).
        volumes_listed: whether ``volumes`` is the engine's list (else it is empty
            because the volumes were not listed).
        empty_dirs: the emptyDir host directories an earlier podsync made for the
            desired pods, as (pod uid, volume name): looked for when the volumes are
            listed, and moved into engine volumes by the plan.
        capacity: the engine's CPUs and memory (``NodeRuntime.node_capacity``), when they
            were asked for: a sync asks when its plan admits a pod that requests CPU or
            memory and does not run yet; ``None`` otherwise (no requests are checked).

    A container podsync stopped carries its stop record in
    ``ObservedContainer.stopped_by_podsync``, whatever the runtime.
    """

    containers: tuple[ObservedContainer, ...] = ()
    images: tuple[ObservedImage, ...] = ()
    pod_dirs: frozenset[str] = frozenset()
    volumes: tuple[ObservedVolume, ...] = ()
    volume_files: tuple[WrittenVolume, ...] = ()
    volumes_listed: bool = False
    empty_dirs: frozenset[tuple[str, str]] = frozenset()
    capacity: ResourceList | None = None


def field_by_field(
    observed: Observation | Sequence[ObservedContainer],
    *,
    images: Sequence[ObservedImage] | None,
    pod_dirs: Collection[str] | None,
    volumes: Sequence[ObservedVolume] | None,
    volume_files: Sequence[WrittenVolume] | None,
    empty_dirs: Collection[tuple[str, str]] | None,
    capacity: ResourceList | None,
) -> Observation:
    """The one place where what ``plan`` (``podsync.planner._plan``) was given as seen
    becomes an ``Observation``: ``observed`` itself, or the containers and the keywords
    field by field (a keyword not given: nothing seen). An ``Observation`` with any of
    these keywords is refused.

    Raises:
        TypeError: ``observed`` is an ``Observation`` and a keyword it holds was given.
    """
    fields = {
        "images": images,
        "pod_dirs": pod_dirs,
        "volumes": volumes,
        "volume_files": volume_files,
        "empty_dirs": empty_dirs,
        "capacity": capacity,
    }
    if isinstance(observed, Observation):
        given = [name for name, value in fields.items() if value is not None]
        if given:
            names = ", ".join(f"{name}=" for name in given)
            raise TypeError(
                f"plan() got an Observation and {names}: the observation holds "
                f"{'them' if len(given) > 1 else 'it'} (Observation.{given[0]}); pass "
                "either the Observation whole or the containers field by field"
            )
        return observed
    return Observation(
        containers=tuple(observed),
        images=tuple(images or ()),
        pod_dirs=frozenset(pod_dirs or ()),
        volumes=tuple(volumes or ()),
        volume_files=tuple(volume_files or ()),
        empty_dirs=frozenset(empty_dirs or ()),
        capacity=capacity,
    )
