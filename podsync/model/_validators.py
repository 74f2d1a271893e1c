"""The model's validators: what one value of a field can get wrong, refused when a model
object is built (in code, by the loader, by ``attrs.evolve``), as attrs' own validators
refuse it - a ``ValueError`` or ``TypeError`` whose message starts with the field's name.

The rules are the loader's (``podsync.load.schema``), which checks the same values
first and says what is wrong with the file and the ``$.path``: a pod file never reaches
these with a value they refuse. They are Kubernetes' API validation of the same fields
(``ValidatePodSpec``, ``validateContainerPorts``, ``ValidateVolumeMounts``,
``validateEnv``), in the 2014 kubelet's spelling where it had one.

Contract: pure; no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import attrs

from podsync.model._names import (
    ENV_NAME,
    NETWORK_CONTAINER,
    UID_MAX,
    dns_label_problem,
    is_safe_uid,
)

__all__ = [
    "absolute_path",
    "container_name",
    "dns_label",
    "env_name",
    "host_ip",
    "optional_dns_label",
    "pod_spec_problem",
    "port_number",
    "safe_uid",
    "strings",
]


class _Named(Protocol):
    """What ``pod_spec_problem`` reads of a volume, a port or a mount: its name."""

    @property
    def name(self) -> str: ...


class _Mount(_Named, Protocol):
    @property
    def mount_path(self) -> str: ...


class _Container(_Named, Protocol):
    """What ``pod_spec_problem`` reads of a container (``Container``: the model's
    modules import this one, never the reverse)."""

    @property
    def ports(self) -> Sequence[_Named]: ...

    @property
    def volume_mounts(self) -> Sequence[_Mount]: ...


# Names repeat across the pods a loop builds (namespaces, sources, container and volume
# names): each is judged once, in a bounded cache.
_label_problem = functools.lru_cache(maxsize=4096)(dns_label_problem)


def dns_label(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    """A DNS-1123 label: a pod, namespace, source or volume name."""
    if not isinstance(value, str):
        raise TypeError(f"{attribute.name} must be a str, got {value!r}")
    problem = _label_problem(value)
    if problem is not None:
        raise ValueError(f"{attribute.name} {value!r} is not a valid DNS-1123 label: {problem}")


def optional_dns_label(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    """Empty, or a DNS-1123 label (a port's name)."""
    if value != "":
        dns_label(instance, attribute, value)


def container_name(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    """A DNS-1123 label other than the network container's name."""
    dns_label(instance, attribute, value)
    if value == NETWORK_CONTAINER:
        raise ValueError(f"{attribute.name} {value!r} is reserved for the pod's network container")


@functools.lru_cache(maxsize=4096)
def _is_env_name(value: str) -> bool:
    return ENV_NAME.fullmatch(value) is not None


def env_name(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    """An environment variable name: a C identifier (the engine gets ``NAME=value``)."""
    if not isinstance(value, str) or not _is_env_name(value):
        raise ValueError(
            f"{attribute.name} {value!r} is not a valid environment variable name "
            "(letters, digits and '_', not starting with a digit)"
        )


def port_number(low: int) -> Callable[[Any, attrs.Attribute[int], int], None]:
    """A port number from ``low`` to 65535 (``validateContainerPorts``: a containerPort
    is 1-65535, a hostPort 0-65535 where 0 publishes nothing)."""

    def check(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{attribute.name} must be an int, got {value!r}")
        if not low <= value <= 65535:
            raise ValueError(f"{attribute.name} must be {low}-65535, got {value}")

    return check


def host_ip(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    """Empty (every address), or an IPv4 or IPv6 address."""
    if value == "":
        return
    # Imported here: most ports name no address, and the model is imported by everyone.
    import ipaddress

    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{attribute.name} {value!r} is not an IP address") from None


def absolute_path(
    *, optional: bool, bind: bool
) -> Callable[[Any, attrs.Attribute[str], str], None]:
    """An absolute path inside the container (empty allowed when ``optional``); with
    ``bind``, without ``:``, which Docker's binds use as their separator."""

    def check(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"{attribute.name} must be a str, got {value!r}")
        if value == "" and optional:
            return
        if not value.startswith("/"):
            raise ValueError(f"{attribute.name} must be an absolute path, got {value!r}")
        if bind and ":" in value:
            raise ValueError(f"{attribute.name} must not contain ':', got {value!r}")

    return check


def strings(value: Iterable[str], field: str) -> tuple[str, ...]:
    """For a converter: the sequence of strings given for ``field`` (an argv: a
    command, its arguments), as a tuple. One string is refused rather than split into
    characters (``command="sleep 10"`` would be ``('s', 'l', 'e', ...)``): Kubernetes'
    ``command`` and ``args`` are lists, and the process gets each item as one argument.

    Raises:
        TypeError: ``value`` is a string, or not a sequence of strings.
    """
    if isinstance(value, tuple) and all(type(item) is str for item in value):
        return value  # the common case, for every pod a loop builds again
    if isinstance(value, str):
        raise TypeError(
            f"{field} must be a list of strings, one per argument, not one string: "
            f"a list: {value.split()!r}"
        )
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"{field} must be a list of strings, got {value!r}") from None
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{field}[{i}] must be a str, got {item!r}")
    return items


def safe_uid(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    """A pod uid that can be a container-name field and a directory name
    (``is_safe_uid``)."""
    if not isinstance(value, str) or not is_safe_uid(value):
        raise ValueError(
            f"{attribute.name} {value!r} cannot be used in container names and paths "
            "(letters, digits, '.' and '-', starting with a letter or digit, at most "
            f"{UID_MAX} characters)"
        )


def pod_spec_problem(
    containers: Sequence[_Container],
    init_containers: Sequence[_Container],
    volumes: Sequence[_Named],
) -> str | None:
    """What Kubernetes' validation of a pod spec (``ValidatePodSpec``) refuses across its
    fields, in the loader's order (``_check_pod``), for a pod built in code; ``None``
    when nothing. Init and app containers share one namespace of names, as Kubernetes
    validates them (``validateInitContainers``). One host port published twice is not
    refused here but by admission (``HostPortAdmission``, ``host-port-conflict``): a
    running pod edited so keeps running, as the kubelet keeps a pod it admitted."""
    volume_names: set[str] = set()
    for volume in volumes:
        if volume.name in volume_names:
            return f"volumes: duplicate volume name {volume.name!r}"
        volume_names.add(volume.name)
    names: set[str] = set()
    for container in (*init_containers, *containers):
        if container.name in names:
            return f"containers: duplicate container name {container.name!r}"
        names.add(container.name)
        port_names: set[str] = set()
        for port in container.ports:
            if port.name:
                if port.name in port_names:
                    return f"container {container.name}: duplicate port name {port.name!r}"
                port_names.add(port.name)
        mount_paths: set[str] = set()
        for mount in container.volume_mounts:
            if mount.name not in volume_names:
                # The seed silently skipped such mounts (makeBinds).
                return f"container {container.name}: no volume named {mount.name!r} in this pod"
            if mount.mount_path in mount_paths:
                return f"container {container.name}: duplicate mount path {mount.mount_path!r}"
            mount_paths.add(mount.mount_path)
    return None
