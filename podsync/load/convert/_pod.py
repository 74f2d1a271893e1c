"""The loader's rules for the pod fields podsync honours beyond the 2014 ones: a
container's ``resources`` (what the modern kubelet passes to the runtime is honoured,
what needs a cluster is refused with why), and the pod's labels, annotations, hostname,
subdomain, host aliases and scheduling gates; and the rules of init containers.

Contract: like ``_document``'s functions (which call these): every problem is appended
to ``out`` as a ``(path, message)`` pair; nothing raises for bad data, nothing does I/O.
Nothing here is public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from podsync.host._node import NodeInfo
from podsync.load.schema._pod import _ContainerV1, _index, _PodItemV1, _PodV1
from podsync.load.schema._pod_fields import _Resources
from podsync.load.schema._scalars import _bytes, _milli_cpu, _qualified_name_problem
from podsync.load.schema._volumes import _EmptyDirV1
from podsync.load.schema._yaml import _describe, _Invalid
from podsync.model._pod import Container, HostAlias, ResourceList, Resources, RestartPolicy
from podsync.model._volume import MemoryMedium, Volume
from podsync.spec._labels import (
    ANNOTATION_LABEL_PREFIX,
    KUBERNETES_LABEL_PREFIX,
    PODSYNC_LABEL_PREFIX,
)

# Nothing here is public API: ``_document`` reads pods through these.
__all__: list[str] = []

# The resources of a container podsync honours, and the unit each is written in.
_RESOURCE_UNITS = {
    "cpu": (_milli_cpu, "milli-CPU"),
    "memory": (_bytes, "bytes"),
    "ephemeral-storage": (_bytes, "bytes"),
}
_EXTENDED_WHY = (
    "extended resources are counted by a cluster's scheduler and handed to the container "
    "by a device plugin; one Docker host has neither"
)
_HUGEPAGES_WHY = (
    "huge pages are limited through the kubelet's hugetlb cgroup, which the Docker Engine "
    "API cannot set, and need pages the host has set aside"
)
_EPHEMERAL_LIMIT_WHY = (
    "Docker cannot cap a container's writable layer and logs without a storage-driver "
    "quota, and the kubelet enforces this limit by evicting the pod, which podsync does "
    "not do (an ephemeral-storage request is accepted: it only informs scheduling)"
)
_POD_RESOURCES_WHY = (
    "pod-level resources size the pod's own cgroup, and podsync makes none (each "
    "container is a Docker container of its own): give each container its resources"
)
_CLAIMS_WHY = (
    "dynamic resource allocation needs a cluster's ResourceClaim objects and their drivers"
)


def _resource_list(
    values: Mapping[str, object] | None, kind: str, path: str, out: list[tuple[str, str]]
) -> ResourceList:
    """The amounts of one ``requests`` or ``limits`` mapping; a resource podsync cannot
    honour is refused with why (the modern kubelet passes only cpu and memory to the
    runtime: kubelet-modern.md §6)."""
    amounts: dict[str, int] = {}
    for key, raw in (values or {}).items():
        if key in _RESOURCE_UNITS and not (key == "ephemeral-storage" and kind == "limits"):
            # cpu, memory, a request of ephemeral-storage: the path only for a problem.
            convert, _ = _RESOURCE_UNITS[key]
            try:
                amounts[key.replace("-", "_")] = convert(raw)
            except _Invalid as exc:
                out.append((f"{path}{_index(key)}", str(exc)))
            continue
        at = f"{path}{_index(key)}"
        if key.startswith("hugepages-"):
            out.append((at, f"{key} is not supported by podsync: {_HUGEPAGES_WHY}"))
        elif "/" in key:
            out.append(
                (at, f"extended resource {key!r} is not supported by podsync: {_EXTENDED_WHY}")
            )
        elif key == "ephemeral-storage" and kind == "limits":
            why = _EPHEMERAL_LIMIT_WHY
            out.append((at, f"an ephemeral-storage limit is not supported by podsync: {why}"))
        else:
            out.append(
                (
                    at,
                    f"unknown resource {key!r}: a container's resources are cpu, memory, "
                    "ephemeral-storage, hugepages-<size> or extended resources "
                    "(example.com/name)",
                )
            )
    return ResourceList(**amounts)


# The resources of containers whose ``resources`` held no problem, by what it held: a
# fleet writes a few distinct ``limits`` / ``requests`` thousands of times (10,000 pods
# of 3 containers: 3 distinct ones), and each was read again, quantities parsed and
# ResourceLists built (issue 33). Bounded as ``_scalars._remembered`` is.
_KNOWN_RESOURCES: dict[object, Resources | None] = {}
_REMEMBERED_RESOURCES = 4096
_UNSEEN = object()


def _resources_key(resources: _Resources) -> object:
    """What a ``resources`` holds, as a key for ``_KNOWN_RESOURCES``; ``None`` when it
    cannot be one (claims given, an amount that is no plain scalar). The type of each
    amount is part of the key: ``1``, ``1.0`` and ``true`` are equal keys in Python,
    yet not the same amount to ``_resource_list`` (``true`` is refused)."""
    if resources.claims is not None:
        return None
    key: list[object] = []
    for amounts in (resources.requests, resources.limits):
        if amounts is None:
            key.append(None)
            continue
        for name, raw in amounts.items():
            kind: type = type(raw)
            if kind not in (str, int, float):
                return None
            key.append((name, kind, raw))
        key.append(len(amounts))  # where the requests end and the limits start
    return tuple(key)


def _resources(
    resources: _Resources | None, path: str, out: list[tuple[str, str]]
) -> Resources | None:
    """A v1 container's ``resources``; ``None`` when not given or when a problem was
    found (it is then in ``out``)."""
    if resources is None:
        return None
    key = _resources_key(resources)
    known = _KNOWN_RESOURCES.get(key, _UNSEEN) if key is not None else _UNSEEN
    if known is not _UNSEEN:
        return known  # type: ignore[return-value]
    before = len(out)
    result = _checked_resources(resources, path, out)
    if key is not None and len(out) == before:  # problems are worded, with their path, each time
        if len(_KNOWN_RESOURCES) >= _REMEMBERED_RESOURCES:
            _KNOWN_RESOURCES.clear()
        _KNOWN_RESOURCES[key] = result
    return result


def _checked_resources(
    resources: _Resources, path: str, out: list[tuple[str, str]]
) -> Resources | None:
    """``_resources`` without the memo."""
    at = f"{path}.resources"
    before = len(out)
    if resources.claims is not None:
        out.append((f"{at}.claims", f"resources.claims is not supported by podsync: {_CLAIMS_WHY}"))
    requests = _resource_list(resources.requests, "requests", f"{at}.requests", out)
    limits = _resource_list(resources.limits, "limits", f"{at}.limits", out)
    for name, unit in (("cpu", "milli-CPU"), ("memory", "bytes")):
        request, limit = getattr(requests, name), getattr(limits, name)
        if limit and request > limit:
            out.append(
                (
                    f"{at}.requests.{name}",
                    f"must not exceed the limit ({limit} {unit}), got {request} {unit}",
                )
            )
    if len(out) > before or requests == limits == ResourceList():
        return None  # ``resources: {}`` asks for nothing, as Go reads it
    return Resources(requests=requests, limits=limits)


def _metadata_maps(
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    path: str,
    out: list[tuple[str, str]],
) -> None:
    """The keys of ``metadata.labels`` and ``metadata.annotations``.

    Both become container labels (annotations as ``annotation.<key>``), beside
    podsync's own ``io.podsync.*`` record. A label under ``io.podsync.`` would overwrite
    that record, and one under ``io.kubernetes.`` would make the container look like a
    Kubernetes node's (which podsync never touches, ``_ownership``): both are refused,
    never silently dropped or renamed.
    """
    for key in labels:
        at = f"{path}.labels{_index(key)}"
        problem = _qualified_name_problem(key)
        if problem is not None:
            out.append((at, f"{key!r} is not a valid label key: {problem}"))
        elif key.startswith(PODSYNC_LABEL_PREFIX):
            out.append(
                (
                    at,
                    f"label key {key!r} is reserved: {PODSYNC_LABEL_PREFIX}* labels are "
                    "podsync's own record of the container",
                )
            )
        elif key.startswith(KUBERNETES_LABEL_PREFIX):
            out.append(
                (
                    at,
                    f"label key {key!r} is reserved: {KUBERNETES_LABEL_PREFIX}* labels mark "
                    "the containers of a Kubernetes node, which podsync leaves alone",
                )
            )
        elif key.startswith(ANNOTATION_LABEL_PREFIX) and (
            key[len(ANNOTATION_LABEL_PREFIX) :] in annotations
        ):
            out.append(
                (
                    at,
                    f"label key {key!r} collides with annotation "
                    f"{key[len(ANNOTATION_LABEL_PREFIX) :]!r}, which containers carry as "
                    f"label {key!r}",
                )
            )
    for key in annotations:
        problem = _qualified_name_problem(key)
        if problem is not None:
            out.append(
                (
                    f"{path}.annotations{_index(key)}",
                    f"{key!r} is not a valid annotation key: {problem}",
                )
            )


def _pod_fields(doc: _PodV1 | _PodItemV1, root: str, out: list[tuple[str, str]]) -> dict[str, Any]:
    """The pod-level fields of a v1 pod beyond the 2014 ones, as ``Pod`` keywords."""
    spec, spec_path = doc.spec, f"{root}.spec"
    _metadata_maps(doc.metadata.labels, doc.metadata.annotations, f"{root}.metadata", out)
    if spec.resources is not None:
        out.append(
            (
                f"{spec_path}.resources",
                f"spec.resources (pod-level resources) is not supported by podsync: "
                f"{_POD_RESOURCES_WHY}",
            )
        )
    gates: dict[str, str] = {}
    for i, gate in enumerate(spec.scheduling_gates):
        at = f"{spec_path}.schedulingGates[{i}].name"
        first = gates.setdefault(gate.name, at)
        if first != at:
            out.append((at, f"duplicate scheduling gate {gate.name!r} (first at {first})"))
    return {
        "labels": dict(doc.metadata.labels),
        "annotations": dict(doc.metadata.annotations),
        "hostname": spec.hostname,
        "subdomain": spec.subdomain,
        "host_aliases": tuple(
            HostAlias(ip=a.ip, hostnames=tuple(a.hostnames)) for a in spec.host_aliases
        ),
        "scheduling_gates": tuple(gates),
    }


# ---------------------------------------------------------------------------------------
# emptyDir in memory (issue 14)
# ---------------------------------------------------------------------------------------


def _check_empty_dir(empty: _EmptyDirV1, at: str, out: list[tuple[str, str]]) -> None:
    """A v1 emptyDir's ``medium`` ('' or Memory) and ``sizeLimit`` (Memory only)."""
    if empty.medium.startswith("HugePages"):
        out.append(
            (
                f"{at}.medium",
                f"medium: {_describe(empty.medium)} is not supported by podsync: huge "
                "pages are not implemented (only '' or 'Memory' is)",
            )
        )
    elif empty.medium not in ("", "Memory"):
        out.append((f"{at}.medium", f"must be '' or 'Memory', got {_describe(empty.medium)}"))
    elif empty.medium == "" and empty.size_limit is not None:
        out.append(
            (
                f"{at}.sizeLimit",
                "sizeLimit is not supported by podsync for an emptyDir on disk: podsync "
                "does not limit a directory's size (with medium: Memory it is the "
                "tmpfs's size)",
            )
        )


def _in_memory(
    volumes: Sequence[Volume],
    sources: Sequence[_EmptyDirV1 | None],
    resources: Sequence[Resources | None],
    node: NodeInfo,
) -> list[Volume]:
    """``volumes`` with their ``medium: Memory`` sizes, as the kubelet's
    ``calculateEmptyDirMemorySize`` (``pkg/volume/emptydir/empty_dir.go``): the node's
    allocatable memory; the pod's memory limit instead when every container has one and
    it is not larger; the volume's ``sizeLimit`` instead when given and not larger."""
    limits = [r.limits.memory if r is not None else 0 for r in resources]
    pod_limit = sum(limits) if limits and all(limits) else 0
    result = []
    for volume, source in zip(volumes, sources, strict=True):
        if source is None or source.medium != "Memory" or not volume.is_empty_dir:
            # Not an emptyDir in memory; or one given with another source, a problem
            # of the file already reported, whose volume keeps that one source (a
            # ``Volume`` has at most one).
            result.append(volume)
            continue
        size = node.memory
        if 0 < pod_limit <= size:
            size = pod_limit
        if source.size_limit is not None and 0 < source.size_limit <= size:
            size = source.size_limit
        result.append(attrs.evolve(volume, memory=MemoryMedium(size)))
    return result


def _check_memory_mounts(
    containers: Sequence[Container],
    volumes: Sequence[Volume],
    spec_path: str,
    out: list[tuple[str, str]],
) -> None:
    """A memory emptyDir has one user: Docker's tmpfs is the container's own."""
    in_memory = {v.name for v in volumes if v.memory is not None}
    first_mount: dict[str, str] = {}
    for i, container in enumerate(containers):
        for j, mount in enumerate(container.volume_mounts):
            at = f"{spec_path}.containers[{i}].volumeMounts[{j}]"
            if mount.name in in_memory:
                first = first_mount.setdefault(mount.name, at)
                if first != at:
                    out.append(
                        (
                            f"{at}.name",
                            f"the memory volume {mount.name!r} is already mounted by {first}: "
                            "podsync makes a tmpfs per container, so a memory volume cannot "
                            "be shared yet",
                        )
                    )


# The fields Kubernetes' validation forbids on an init container that is not a sidecar
# (validateInitContainers, pkg/apis/core/validation/validation.go): it runs once to
# completion, so there is nothing to probe and no hook to run around a stop.
_NOT_FOR_INIT = (
    ("lifecycle", "lifecycle"),
    ("livenessProbe", "liveness_probe"),
    ("readinessProbe", "readiness_probe"),
    ("startupProbe", "startup_probe"),
)


def _init_rules(
    c: _ContainerV1, container: Container, path: str, out: list[tuple[str, str]]
) -> Container:
    """Init container ``container``, read from ``c`` as an app container is, with
    Kubernetes' rules for init containers: ``restartPolicy`` may only be ``Always`` (a
    sidecar), and an init container that is not a sidecar may have no lifecycle hooks
    and no probes. Host ports are refused on an init container that is not a sidecar
    (it runs to completion before the app containers: there is nothing to publish); a
    sidecar's are published with the app containers' (``network_ports``)."""
    sidecar = c.restart_policy == RestartPolicy.ALWAYS.value
    if c.restart_policy and not sidecar:
        out.append(
            (
                f"{path}.restartPolicy",
                f"must be 'Always' (a sidecar) or unset, got {c.restart_policy!r}",
            )
        )
    if not sidecar:
        for key, attribute in _NOT_FOR_INIT:
            if getattr(c, attribute) is not None:
                out.append(
                    (
                        f"{path}.{key}",
                        "must not be set on an init container: only a sidecar "
                        "(restartPolicy: Always) has probes and lifecycle hooks",
                    )
                )
    for j, port in enumerate(c.ports):
        if port.host_port and not sidecar:
            out.append(
                (
                    f"{path}.ports[{j}].hostPort",
                    "hostPort is not supported by podsync on an init container that is not "
                    "a sidecar: the pod's network container publishes the host ports of the "
                    "app containers and sidecars",
                )
            )
    return attrs.evolve(container, restart_policy=RestartPolicy.ALWAYS if sidecar else None)


def _app_restart_policies(
    containers: Sequence[_ContainerV1], spec_path: str, out: list[tuple[str, str]]
) -> None:
    """An app container's ``restartPolicy`` is refused, as Kubernetes' validation does:
    only an init container may have one (``Always``: a sidecar)."""
    for i, c in enumerate(containers):
        if c.restart_policy:
            out.append(
                (
                    f"{spec_path}.containers[{i}].restartPolicy",
                    "may only be set on an init container (a sidecar): an app container "
                    "follows the pod's restartPolicy",
                )
            )
