"""What the Docker runtime refuses itself on podman (``runtime/docker/_unchecked.py``):
Docker's create-time refusals that podman (4.3) does not make, in Docker's words and
order. The engine tests check the same on both engines (``tests/support/conformance.py``,
``test_refused_at_create``); these pin the rules on any machine."""

from __future__ import annotations

from typing import Any

import pytest

from podsync.actions._actions import CreateSpec
from podsync.model._pod import HostAlias
from podsync.runtime.docker._unchecked import unchecked_create_refusal, unchecked_volume_refusal
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import NamedVolumeMount

MIB = 1024 * 1024


def _spec(**fields: Any) -> CreateSpec:
    fields.setdefault("name", "app")
    if not fields.get("join"):
        fields.setdefault("network", "none")
    return CreateSpec(image="busybox", **fields)


@pytest.mark.parametrize(
    ("fields", "refusal"),
    [
        ({"memory": 6 * MIB - 1}, "Minimum memory limit allowed is 6MB"),
        ({"join": "net", "hostname": "web"}, "conflicting options: hostname and the network mode"),
        ({"join": "net", "dns": ("10.0.0.10",)}, "conflicting options: dns and the network mode"),
        (
            {"join": "net", "host_aliases": (HostAlias("10.1.2.3", ("db",)),)},
            "conflicting options: custom host-to-IP mapping and the network mode",
        ),
        (
            {"join": "net", "ports": (PortMapping(80, 8080),)},
            "conflicting options: port publishing and the container type network mode",
        ),
        ({"ports": (PortMapping(80, 70000),)}, 'invalid port specification: "70000"'),
        ({"ports": (PortMapping(80, -1),)}, 'invalid port specification: "-1"'),
        (
            {"oom_score_adj": -1001},
            "Invalid value -1001, range for oom score adj is [-1000, 1000]",
        ),
        (
            {"memory_swap": 50 * MIB},
            "You should always set the Memory limit when using Memoryswap limit, see usage",
        ),
        (
            {"name": "a"},
            "Invalid container name (a), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed",
        ),
        (
            {"volumes": (NamedVolumeMount("v", "/data"),)},
            "create v: volume name is too short, names should be at least two alphanumeric "
            "characters",
        ),
        # Docker's order: the ports, the network options, the resources, the name.
        (
            {"name": "a", "memory": 1, "ports": (PortMapping(70000, 80),)},
            'invalid port specification: "70000"',
        ),
        (
            {"join": "net", "hostname": "web", "memory": 1},
            "conflicting options: hostname and the network mode",
        ),
        ({"oom_score_adj": 1001, "memory": 1}, "Minimum memory limit allowed is 6MB"),
        ({"name": "a", "memory": 1}, "Minimum memory limit allowed is 6MB"),
    ],
)
def test_what_docker_refuses_and_podman_creates(fields: dict[str, Any], refusal: str) -> None:
    assert refusal == unchecked_create_refusal(_spec(**fields))


@pytest.mark.parametrize(
    "fields",
    [
        {"memory": 6 * MIB},
        {"join": "net", "dns_search": ("example.com",)},
        # An alias without names is no hosts line: nothing Docker refuses.
        {"join": "net", "host_aliases": (HostAlias("10.1.2.3"),)},
        {"ports": (PortMapping(80, 8080),)},
        {"oom_score_adj": -1000},
        {"name": "/ab"},
        # Names podman refuses itself, in its own words, are left to it.
        {"name": "bad name"},
    ],
)
def test_what_both_accept_or_podman_refuses_itself_passes(fields: dict[str, Any]) -> None:
    assert None is unchecked_create_refusal(_spec(**fields))


def test_a_one_character_volume_name_is_refused() -> None:
    assert unchecked_volume_refusal("v") is not None
    assert None is unchecked_volume_refusal("vv")
    assert None is unchecked_volume_refusal("_")  # podman refuses it in its words
