"""Port publishing: the seed's TestMakePortsAndBindings and the Engine API's shape
(reference §2.5, §4.1 #19)."""

from __future__ import annotations

from typing import Any

import pytest
from docker.utils import convert_port_bindings
from hypothesis import given
from hypothesis import strategies as st

from podsync import Port, PortProtocol, exposed_ports, port_bindings
from tests.support.strategies import ports

# The seed's four ports. Its fourth had protocol "foobar", which the seed mapped to TCP
# with a warning; podsync's loader rejects unknown protocols, so here it is plain TCP.
SEED_PORTS = [
    Port(container_port=80, host_port=8080, host_ip="127.0.0.1"),
    Port(container_port=443, host_port=443, protocol=PortProtocol.TCP),
    Port(container_port=444, host_port=444, protocol=PortProtocol.UDP),
    Port(container_port=445, host_port=445),
]


def test_make_ports_and_bindings_seed_case():
    """TestMakePortsAndBindings: four published ports, four keys, one binding each."""
    expected = {
        "80/tcp": [("127.0.0.1", 8080)],
        "443/tcp": [("", 443)],
        "444/udp": [("", 444)],
        "445/tcp": [("", 445)],
    }

    assert expected == port_bindings(SEED_PORTS)


def test_exposed_ports_seed_case():
    """The same four ports are exposed, sorted by number."""
    expected = ["80/tcp", "443/tcp", "444/udp", "445/tcp"]

    assert expected == exposed_ports(SEED_PORTS)


@pytest.mark.parametrize(
    ("given_ports", "bindings", "exposed"),
    [
        # Host port 0: neither bound nor exposed (seed: no binding without a host port).
        ([Port(80)], {}, []),
        # Nothing at all.
        ([], {}, []),
        # UDP keys are lower case.
        ([Port(53, 5353, PortProtocol.UDP)], {"53/udp": [("", 5353)]}, ["53/udp"]),
        # One container port on two host ports: two bindings (the seed kept the last).
        (
            [Port(80, 8080), Port(80, 8081)],
            {"80/tcp": [("", 8080), ("", 8081)]},
            ["80/tcp"],
        ),
        # One container port on two addresses.
        (
            [Port(80, 80, host_ip="127.0.0.1"), Port(80, 80, host_ip="10.0.0.1")],
            {"80/tcp": [("127.0.0.1", 80), ("10.0.0.1", 80)]},
            ["80/tcp"],
        ),
        # TCP and UDP on the same number are separate keys.
        (
            [Port(53, 53, PortProtocol.UDP), Port(53, 53)],
            {"53/udp": [("", 53)], "53/tcp": [("", 53)]},
            ["53/tcp", "53/udp"],
        ),
        # An exact repeat is bound once.
        ([Port(80, 8080), Port(80, 8080, name="again")], {"80/tcp": [("", 8080)]}, ["80/tcp"]),
        # Numeric, not text, order: 9 before 10.
        (
            [Port(10, 10), Port(9, 9)],
            {"10/tcp": [("", 10)], "9/tcp": [("", 9)]},
            ["9/tcp", "10/tcp"],
        ),
    ],
)
def test_port_bindings_cases(given_ports, bindings, exposed):
    """Bindings and exposed ports for the corner cases."""

    assert (bindings, exposed) == (port_bindings(given_ports), exposed_ports(given_ports))


def test_port_bindings_shape_is_what_the_docker_sdk_takes():
    """The docker SDK turns the bindings into the Engine API's PortMap unchanged in
    meaning (HostIp/HostPort strings, one entry per binding)."""
    expected = {
        "80/tcp": [
            {"HostIp": "127.0.0.1", "HostPort": "8080"},
            {"HostIp": "", "HostPort": "8081"},
        ],
        "444/udp": [{"HostIp": "", "HostPort": "444"}],
    }
    given_ports = [
        Port(80, 8080, host_ip="127.0.0.1"),
        Port(80, 8081),
        Port(444, 444, PortProtocol.UDP),
        Port(9000),
    ]

    # types-docker types this argument narrower than the SDK accepts (no lists of (ip, port)
    # tuples); APIClient.create_host_config(port_bindings=...) is typed Mapping[..., Any].
    bindings: Any = port_bindings(given_ports)

    assert expected == convert_port_bindings(bindings)


@given(st.lists(ports(), max_size=6))
def test_exposed_ports_are_the_binding_keys(given_ports):
    """The exposed ports are exactly the keys that have bindings, each once."""
    exposed = exposed_ports(given_ports)

    assert (sorted(port_bindings(given_ports)), len(set(exposed))) == (
        sorted(exposed),
        len(exposed),
    )
