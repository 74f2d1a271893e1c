"""Port publishing: which ports a pod publishes (``PortMapping``), and their Docker
spelling (the ``ExposedPorts`` keys and ``PortBindings`` of a container).

Contract: pure functions. ``port_mappings`` turns a pod's ``Port`` values into the
runtime-neutral ``PortMapping`` values a ``CreateSpec`` carries; ``port_bindings`` and
``exposed_ports`` turn either kind into the plain data the docker SDK takes (the Docker
runtime's translation uses them). A port is published only when its ``host_port`` is
non-zero; a port with host port 0 is left out of every result entirely, as in the seed.

Ported from the seed's ``makePortsAndBindings`` (reference §2.5, test §4.1 #19). The keys
are ``"<containerPort>/tcp"`` or ``"<containerPort>/udp"``, the Engine API's ``PortMap``
format. Two differences from the seed:

* The seed upper-cased the protocol and mapped anything unknown to TCP with a warning.
  podsync's ``PortProtocol`` only has TCP and UDP, and the loader rejects anything else,
  so there is nothing to default here.
* The seed *assigned* ``portBindings[key] = [binding]``, so two ports with the same
  container port and protocol but different host ports kept only the last binding. Here
  each key collects a list of every binding, which is what the Engine API's ``PortMap``
  is for (one container port published on several host ports or addresses).

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from podsync.model._pod import Pod, Port, PortProtocol

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "PortMapping",
    "exposed_ports",
    "port_bindings",
]


@attrs.frozen
class PortMapping:
    """A container port published on the host: traffic to ``host_ip:host_port`` (every
    host address when ``host_ip`` is empty) over ``protocol`` reaches ``container_port``
    in the container's network. ``host_port`` is 1 to 65535."""

    container_port: int
    host_port: int
    protocol: PortProtocol = PortProtocol.TCP
    host_ip: str = ""


def network_ports(pod: Pod) -> list[Port]:
    """The ports a pod's network container holds: every port of its app containers,
    then each port a sidecar publishes (host port non-zero), in spec order.

    A sidecar runs beside the app containers for the pod's whole life, so its host
    ports are published and admitted as theirs are (``SetDefaults_Pod`` defaults a
    sidecar's ports as an app container's, and the kubelet's host-port predicate
    holds them). A sidecar's port that publishes nothing is left out: it reaches no
    engine, and leaving it out keeps the network spec of a pod whose sidecar declares
    one what it was before sidecars could publish.
    """
    ports = [p for c in pod.containers for p in c.ports]
    if pod.init_containers:
        ports += [p for c in pod.sidecars for p in c.ports if p.host_port]
    return ports


def port_mappings(ports: Iterable[Port]) -> list[PortMapping]:
    """The published ports among ``ports`` (host port non-zero), in the order given; an
    exact repeat is kept once (an engine would refuse to bind one address and port
    twice)."""
    result: list[PortMapping] = []
    for port in ports:
        if port.host_port == 0:
            continue
        mapping = PortMapping(port.container_port, port.host_port, port.protocol, port.host_ip)
        if mapping not in result:
            result.append(mapping)
    return result


# The Engine API spells protocols in lower case in PortMap keys ("80/udp").
_PROTOCOL_SUFFIX = {PortProtocol.TCP: "tcp", PortProtocol.UDP: "udp"}


def _key(port: Port | PortMapping) -> str:
    return f"{port.container_port}/{_PROTOCOL_SUFFIX[port.protocol]}"


def port_bindings(ports: Iterable[Port | PortMapping]) -> dict[str, list[tuple[str, int]]]:
    """The host bindings of the published ports, keyed ``"<containerPort>/<tcp|udp>"``.

    Each value lists ``(host_ip, host_port)`` pairs in the order the ports are given; an
    empty ``host_ip`` means every host address. This is the shape the docker SDK's
    ``APIClient.create_host_config(port_bindings=...)`` accepts (a list of ``(ip, port)``
    tuples per key), and also the ``ports=`` mapping of ``containers.create``, which
    derives the exposed ports from the same keys. An exact repeat of a binding is kept
    once: the engine would refuse to bind the same address and port twice.
    """
    result: dict[str, list[tuple[str, int]]] = {}
    for port in ports:
        if port.host_port == 0:
            # Not published (seed: "No need to do port binding when HostPort is not
            # specified").
            continue
        binding = (port.host_ip, port.host_port)
        bindings = result.setdefault(_key(port), [])
        if binding not in bindings:
            bindings.append(binding)
    return result


def exposed_ports(ports: Iterable[Port | PortMapping]) -> list[str]:
    """The ``"<containerPort>/<tcp|udp>"`` keys of the published ports, each once.

    Sorted by port number, then protocol, so the result does not depend on how the
    ports were ordered. These are the Engine API's ``ExposedPorts`` keys. Note for
    callers of the low-level docker SDK: ``APIClient.create_container(ports=...)`` with
    a *list* appends ``/tcp`` to every plain item, so pass these keys as a mapping
    (``{key: {} for key in exposed_ports(...)}``, sent through unchanged) or as
    ``(port, protocol)`` tuples (``tuple(key.split("/"))``), never as a list of these
    strings.
    """
    published = {(p.container_port, _PROTOCOL_SUFFIX[p.protocol]) for p in ports if p.host_port}
    return [f"{number}/{protocol}" for number, protocol in sorted(published)]
