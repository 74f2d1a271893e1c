"""What Docker refuses when a container is created and podman (4.3) creates all the same:
the Docker runtime refuses it itself on podman, before the engine sees it, in Docker's
words, so that a setting the engine cannot honour is refused and never dropped.

Measured on podman 4.3.1's Docker-compatible service, which creates, where Docker 20.10
answers 400:

* a published port outside 0-65535 on the host's side (the container's side it
  refuses in its own words);
* a hostname, name servers or published ports beside ``container:<x>`` (it refuses
  extra hosts there, in its own words): a joiner has its network container's;
* a memory limit under Docker's 6 MiB (``linuxMinMemory``), an OOM score adjustment
  outside [-1000, 1000] (swap limits it checks, in its own words);
* a container name of one character, a volume name of one character (created, or
  mounted by a container, which would create it).

So a pod runs on podman with what Docker would have refused, and the setting is not
what the engine applies (a 1-byte memory limit, a hostname the network container's
hides). Docker's order is kept: the ports, the network options (hostname, DNS, extra
hosts, ports), the resources (memory, swap, then the OOM score), the name; the
image's existence, which Docker checks between the resources and the name, is left to
the engine.

Contract: pure; ``None`` when Docker would accept what is asked.
"""

from __future__ import annotations

import re

from podsync.actions._actions import CreateSpec

__all__ = ["unchecked_create_refusal", "unchecked_volume_refusal"]

# Docker 20.10's smallest memory limit (daemon/daemon_unix.go).
_SMALLEST_MEMORY = 6 * 1024 * 1024

# One character Docker's name patterns take ([a-zA-Z0-9]); it wants two or more.
_ONE_CHARACTER = re.compile(r"[a-zA-Z0-9]", re.ASCII)


def unchecked_create_refusal(spec: CreateSpec) -> str | None:
    """Docker's refusal of ``spec`` at create, in its words, for the checks podman does
    not make (this module's list), in Docker's order; ``None`` when none applies."""
    for port in spec.ports:
        for number in (port.container_port, port.host_port):
            if number < 0 or number > 65535:
                return f'invalid port specification: "{number}"'
    if spec.join:
        # runconfig's validateNetContainerMode, in its order.
        joined = (
            (spec.hostname, "hostname and the network mode"),
            (spec.dns, "dns and the network mode"),
            # An alias without names is no ExtraHosts line (_api): nothing to refuse.
            (
                [n for a in spec.host_aliases for n in a.hostnames],
                "custom host-to-IP mapping and the network mode",
            ),
            (spec.ports, "port publishing and the container type network mode"),
        )
        for value, what in joined:
            if value:
                return f"conflicting options: {what}"
    if 0 < spec.memory < _SMALLEST_MEMORY:
        return "Minimum memory limit allowed is 6MB"
    if spec.memory_swap > 0 and not spec.memory:
        return "You should always set the Memory limit when using Memoryswap limit, see usage"
    if spec.memory_swap > 0 and spec.memory_swap < spec.memory:
        return "Minimum memoryswap limit should be larger than memory limit, see usage"
    if abs(spec.oom_score_adj) > 1000:
        return f"Invalid value {spec.oom_score_adj}, range for oom score adj is [-1000, 1000]"
    name = spec.name.removeprefix("/")
    if _ONE_CHARACTER.fullmatch(name):
        return f"Invalid container name ({spec.name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed"
    for volume in spec.volumes:
        refusal = unchecked_volume_refusal(volume.volume)
        if refusal is not None:
            return refusal
    return None


def unchecked_volume_refusal(name: str) -> str | None:
    """Docker's local driver's refusal of a one-character volume name, which podman
    creates; ``None`` for any other name (podman checks the pattern itself)."""
    if _ONE_CHARACTER.fullmatch(name):
        return (
            f"create {name}: volume name is too short, names should be at least two "
            "alphanumeric characters"
        )
    return None
