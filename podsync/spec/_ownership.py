"""Ownership: whose an observed container is, and the identity decoded from it.

``ownership`` is the one rule that says whether a container is podsync's and which pod
container it is; the planner, the fingerprint, the Docker runtime, the probes and the
command line all use it, and nothing else decodes podsync's labels or a 2014 kubelet's
names into an identity. ``Instance`` is the planner's view of one owned container
(identity plus the labels it reads); ``identify`` decodes one container, ``Identity``
is the key owned containers are grouped by.

Contract: pure; reads only the container given.

May import: the model, the label and naming helpers, ``attrs``. Never the planner, a
runtime, or anything that does I/O.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping

import attrs

from podsync.model._pod import ObservedContainer, ObservedVolume
from podsync.spec._labels import (
    KUBERNETES_LABEL_PREFIX,
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_UID,
    LABEL_RESTART_COUNT,
    LABEL_SCOPE,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
    LABEL_VOLUME_CLAIM,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    LABEL_VOLUME_NAMESPACE,
    VOLUME_KIND_CLAIM,
)
from podsync.spec._naming import parse_2014_container_name, parse_container_name

# Everything in __all__ gets re-exported as part of the podsync public API. ``Instance``,
# ``Identity``, ``identify``, ``newest_first``, ``end_order`` and ``last_to_end`` are
# podsync's own (the planner's and the fingerprint's), not public.
__all__ = ["Ownership", "VolumeOwnership", "ownership", "volume_ownership"]

#: (pod uid, pod full name): the identity owned containers are grouped by.
Identity = tuple[str, str]


class Instance:
    """One owned observed container, with its identity decoded.

    A plain slotted class rather than attrs: the planner makes one per observed
    container, tens of thousands per plan, and reads most fields lazily.
    """

    __slots__ = ("container", "full_name", "observed", "pod_key", "pod_source", "pod_uid")

    def __init__(
        self,
        observed: ObservedContainer,
        pod_uid: str,
        full_name: str,
        pod_key: str,
        pod_source: str,
        container: str,
    ) -> None:
        self.observed = observed
        self.pod_uid = pod_uid
        self.full_name = full_name
        self.pod_key = pod_key
        self.pod_source = pod_source
        self.container = container

    @property
    def labelled(self) -> bool:
        return LABEL_POD_UID in self.observed.labels

    @property
    def running(self) -> bool:
        return self.observed.running

    @property
    def scope(self) -> str:
        """The scope that made the container (``LABEL_SCOPE``); ``""`` for none."""
        return self.observed.labels.get(LABEL_SCOPE, "")

    @property
    def exited(self) -> bool:
        return not self.observed.running

    @property
    def attempt(self) -> int | None:
        if self.labelled:
            return _int_label(self.observed.labels, LABEL_ATTEMPT)
        return parse_container_name(self.observed.name).attempt

    @property
    def restart_count(self) -> int:
        return _int_label(self.observed.labels, LABEL_RESTART_COUNT) or 0

    @property
    def hash_text(self) -> str | None:
        return self.observed.labels.get(LABEL_SPEC_HASH)

    @property
    def spec_label(self) -> str | None:
        return self.observed.labels.get(LABEL_SPEC)

    @property
    def legacy_hash(self) -> int:
        return parse_container_name(self.observed.name).hash

    @property
    def stop_record(self) -> str:
        return self.observed.stopped_by_podsync

    @property
    def ended(self) -> float:
        """When a stopped instance stopped: its finish time, or, if it never started,
        its creation time."""
        o = self.observed
        return o.finished_at if o.finished_at is not None else o.created


@attrs.frozen
class Ownership:
    """Which pod an owned container belongs to (see ``ownership``).

    Attributes:
        scope: the scope whose sync made it (``LABEL_SCOPE``, ``PlanOptions.scope``);
            empty when none did: an unscoped sync's, the node scope's, an earlier
            podsync's or a 2014 kubelet's container.
    """

    pod_uid: str
    pod_full_name: str
    pod_key: str
    container: str
    scope: str = ""


def ownership(
    container: ObservedContainer, *, adopt_2014_containers: bool = False
) -> Ownership | None:
    """Whose ``container`` is, as the planner decides it; ``None`` for a foreign one.

    The one ownership rule, used by the planner, the runtime, the probes and the CLI:

    1. A container with any ``io.kubernetes.`` label is foreign: a Kubernetes node's
       runtime (Docker Desktop, cri-dockerd, dockershim) made it.
    2. A container with ``LABEL_POD_UID`` is podsync's, identified by its labels.
    3. With ``adopt_2014_containers``, a container without that label whose name is
       exactly the seed's format (``parse_2014_container_name``) is a 2014 kubelet's,
       identified by its name.
    4. Everything else is foreign.
    """
    instance = identify(container)
    if instance is None or not (adopt_2014_containers or instance.labelled):
        return None
    return Ownership(
        instance.pod_uid, instance.full_name, instance.pod_key, instance.container, instance.scope
    )


def _int_label(labels: Mapping[str, str], key: str) -> int | None:
    text = labels.get(key)
    if text is None or not text.isdigit():
        return None
    return int(text)


_is_kubernetes_key = operator.methodcaller("startswith", KUBERNETES_LABEL_PREFIX)


def identify(oc: ObservedContainer) -> Instance | None:
    """Decode ownership: an instance for a container with podsync's labels or a 2014
    kubelet's exact name (whether that one is taken over is the caller's choice, see
    ``ownership``); ``None`` for a foreign container."""
    labels = oc.labels
    # Once per observed container on every plan: the keys joined in one C call say
    # whether the prefix can be there at all (nearly never); only then is each key's
    # start tested, which alone decides.
    if KUBERNETES_LABEL_PREFIX in "".join(labels) and any(map(_is_kubernetes_key, labels)):
        return None
    uid = labels.get(LABEL_POD_UID)
    if uid is not None:
        name = labels.get(LABEL_POD_NAME, "")
        namespace = labels.get(LABEL_POD_NAMESPACE, "")
        source = labels.get(LABEL_POD_SOURCE, "")
        container = labels.get(LABEL_CONTAINER)
        if container is None:
            container = parse_container_name(oc.name).container
        return Instance(
            oc, uid, f"{name}.{namespace}.{source}", f"{namespace}/{name}", source, container
        )
    parsed = parse_2014_container_name(oc.name)
    if parsed is None:
        return None
    # A container a 2014 kubelet left behind: identified by its name only.
    name, namespace, source = parsed.pod_full_name.split(".")
    return Instance(
        oc, parsed.uid, parsed.pod_full_name, f"{namespace}/{name}", source, parsed.container
    )


def newest_first(instances: Iterable[Instance]) -> list[Instance]:
    # Docker lists newest-created first and the seed relied on it; podsync sorts
    # explicitly, with the id as a tie-breaker so the order is total.
    return sorted(
        instances,
        key=lambda i: (i.observed.created, i.attempt or 0, i.observed.id),
        reverse=True,
    )


def end_order(instance: Instance, ended: float | None = None) -> tuple[float, float, int, str]:
    """The sort key of stopped instances by how lately they stopped: when they ended
    (``Instance.ended``; ``ended`` instead, for a running instance that a plan stops -
    it ends then), then ``newest_first``'s order (created, attempt, id), so the order
    is total. The greatest is the instance the restart policy is judged on
    (``last_to_end``), and the one garbage collection always keeps."""
    o = instance.observed
    return (instance.ended if ended is None else ended, o.created, instance.attempt or 0, o.id)


def last_to_end(stopped: Iterable[Instance]) -> Instance:
    """The stopped instance a container's restart policy is judged on: the last to end
    (``end_order``). Not the newest created, as the kubelet's status has it
    (``containerStatusByCreated``): an instance created earlier can end later - a 2014
    kubelet's container that still runs beside a newer one podsync stopped - and its
    end is the container's latest news."""
    return max(stopped, key=end_order)


@attrs.frozen
class VolumeOwnership:
    """What podsync made an owned named volume for (see ``volume_ownership``).

    Attributes:
        kind: ``LABEL_VOLUME_KIND``'s value: ``claim`` for a claim's data.
        namespace: the namespace of its claim (or pod).
        claim: the claim name; empty for a volume of another kind.
        pod_uid: the pod a volume of one pod belongs to (``LABEL_POD_UID``: a volume
            that lives as long as its pod); empty for a claim's, which no pod owns.
        volume: the name of the pod volume whose data it holds (``LABEL_VOLUME_NAME``:
            an ``emptyDir``'s); empty for a claim's.
        scope: the scope whose sync made it (``LABEL_SCOPE``, ``PlanOptions.scope``);
            empty when none did: an unscoped sync's, the node scope's, an earlier
            podsync's, or a record apply wrote (records go with their container).
    """

    kind: str
    namespace: str
    claim: str
    pod_uid: str = ""
    volume: str = ""
    scope: str = ""

    @property
    def retained(self) -> bool:
        """True when podsync never removes the volume: a claim's data outlives every pod
        (the retain policy of a cluster's local volumes); only its owner removes it."""
        return self.kind == VOLUME_KIND_CLAIM


def volume_ownership(volume: ObservedVolume) -> VolumeOwnership | None:
    """Whose named ``volume`` is: podsync's when it carries ``LABEL_VOLUME_KIND`` (and
    no Kubernetes label), else ``None`` - a volume someone made by hand, another tool's,
    or one the engine made because a container mounted a name that did not exist."""
    labels = volume.labels
    kind = labels.get(LABEL_VOLUME_KIND)
    if not kind or any(map(_is_kubernetes_key, labels)):
        return None
    return VolumeOwnership(
        kind,
        labels.get(LABEL_VOLUME_NAMESPACE, ""),
        labels.get(LABEL_VOLUME_CLAIM, ""),
        labels.get(LABEL_POD_UID, ""),
        labels.get(LABEL_VOLUME_NAME, ""),
        labels.get(LABEL_SCOPE, ""),
    )
