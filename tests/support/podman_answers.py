"""What podman (4.3.1, its Docker-compatible service) answers where Docker 20.10 answers
otherwise, for the conformance suite (``tests/support/conformance.py``): each case says
Docker's HTTP status and words, and :func:`answer` turns them into podman's.

Two tables, both measured here on podman 4.3.1:

* :data:`REFUSED_BY_PODSYNC`: what Docker refuses and podman would create or accept;
  ``DockerRuntime`` refuses it itself on podman (``podsync/runtime/docker/_unchecked.py``),
  in Docker's words, before the engine sees it - so with no HTTP status.
* :data:`PODMAN_WORDS`: what both refuse, podman in its own words (libpod's errors,
  ``libpod/define/errors.go``) and mostly with HTTP 500, where Docker answers 400; the
  runtime passes the words through (``docs/engines.md``: error wording) and reads the
  500s that are Docker's 404 and 409 as those (``_PODMAN_500S`` of
  ``podsync/runtime/docker/_connection.py``).

Docker's answer is never changed: on Docker and on the fake :func:`answer` is the
identity, and on podman an answer no table names is Docker's.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "DOMAIN_NAME_REFUSED",
    "IPC_SHAREABLE",
    "JOIN_CHECKED_AT_CREATE",
    "NO_ENTRYPOINT",
    "PODMAN_WORDS",
    "REFUSED_BY_PODSYNC",
    "SAME_SECOND_ORDER_UNFIXED",
    "SYSCTLS_CHECKED_AT_CREATE",
    "answer",
    "events_of_a_stop",
    "listed_image",
    "recorded_ports",
    "set_env",
]

_NAMES = "[a-zA-Z0-9][a-zA-Z0-9_.-]*"

#: Docker's refusals (regular expressions, whole message) that podsync makes itself on
#: podman, where the engine would create the container (or the volume).
REFUSED_BY_PODSYNC: tuple[str, ...] = (
    # A host port outside 0-65535 (podman refuses the container's side, not the host's;
    # podsync checks both, in Docker's order).
    r'invalid port specification: "-?\d+"',
    # Options of the network container given to a joiner: podman takes a hostname, name
    # servers and ports beside container:<x>, and refuses extra hosts in its own words.
    r"conflicting options: .* network mode",
    # Memory under 6 MiB, and an OOM score outside [-1000, 1000]; the swap checks too,
    # which podman makes, so that Docker's order holds.
    r"Minimum memory limit allowed is 6MB",
    r"You should always set the Memory limit when using Memoryswap limit, see usage",
    r"Minimum memoryswap limit should be larger than memory limit, see usage",
    r"Invalid value -?\d+, range for oom score adj is \[-1000, 1000\]",
    # A one-character name: podman takes it.
    r"Invalid container name \([a-zA-Z0-9]\), only .* are allowed",
    r"create [a-zA-Z0-9]: volume name is too short, .*",
)

#: (Docker's words as a regular expression, podman's status, podman's words as a
#: template of the expression's groups, ``<container>`` standing for the container the
#: call names, and the call it is podman's answer to: ``""`` any, ``create`` a
#: container's create, ``mount`` a container's create that mounts the volume named)
#: for refusals podman makes in its own words. The first row that matches applies.
PODMAN_WORDS: tuple[tuple[str, int | None, str, str], ...] = (
    # The network container a create joins, missing (JOIN_CHECKED_AT_CREATE).
    (
        r"No such container: (.*)",
        404,
        "container create: looking up container to share uts namespace with: no container"
        r' with name or ID "\1" found: no such container',
        "join",
    ),
    # A bad volume name in a container's mount: the create of the volume, named.
    (
        r'create .*: ".*" includes invalid characters for a local volume name, .*',
        500,
        r'container create: creating named volume "<volume>": running volume create option:'
        f" names must match {_NAMES}: invalid argument",
        "mount",
    ),
    # The container whose IPC namespace a create joins, missing (Docker: 400; podman's
    # 500 says "no such container", read as 404).
    (
        r"No such container: (.*)",
        404,
        "container create: looking up container to share ipc namespace with: no container"
        r' with name or ID "\1" found: no such container',
        "create",
    ),
    # libpod's ErrCtrStateInvalid (read as Docker's 409).
    (
        r"cannot start a paused container, try unpause instead",
        409,
        "container <container> must be in Created or Stopped state to be started: container"
        " state improper",
        "",
    ),
    # Container and volume names that are not Docker's pattern (libpod's
    # define.ErrInvalidArg, 500).
    (
        r"Invalid container name \(.*\), only .* are allowed",
        500,
        f"container create: running container create option: names must match {_NAMES}:"
        " invalid argument",
        "",
    ),
    (
        r'create .*: ".*" includes invalid characters for a local volume name, .*',
        500,
        f"running volume create option: names must match {_NAMES}: invalid argument",
        "",
    ),
    # A missing image: still 404, podman names it fully qualified, without the tag.
    (
        r"No such image: ([^/:]+/[^:]+):latest",
        404,
        r"no such image: docker.io/\1: image not known",
        "",
    ),
    (
        r'invalid Cap(?:Add|Drop): unknown capability: "(.*)"',
        500,
        r'container create: "\1": unknown capability',
        "",
    ),
    (
        r"invalid mount path: '(.*)' mount path must be absolute",
        500,
        r'fill out specgen: invalid container path "\1", must be an absolute path',
        "",
    ),
    (r"Duplicate mount point: (.*)", 500, r"fill out specgen: \1: duplicate mount destination", ""),
    # libpod's ErrNoSuchCtr (podsync reads its 500 as Docker's 404).
    (
        r"No such container: (.*)",
        404,
        r'no container with name or ID "\1" found: no such container',
        "",
    ),
    # libpod's ErrCtrStateInvalid, "container state improper" (read as Docker's 409).
    (
        r"Container (\w+) is not running",
        409,
        "can only create exec sessions on running containers: container state improper",
        "",
    ),
    (
        r"You cannot remove a running container (\w+)\. .*",
        409,
        r"cannot remove container \1 as it is running - running or paused containers cannot"
        " be removed without force: container state improper",
        "",
    ),
    (
        r"You cannot remove a paused container (\w+)\. .*",
        409,
        r"cannot remove container \1 as it is paused - running or paused containers cannot"
        " be removed without force: container state improper",
        "",
    ),
    (
        r"Container (\w+) is paused, unpause the container before exec",
        409,
        r"cannot create exec session as container \1 is paused",
        "",
    ),
    # libpod's ErrCtrExists (read as Docker's 409, a NameConflict).
    (
        r'Conflict\. The container name "/(.*)" is already in use by container "(\w+)"\..*',
        409,
        r'container create: creating container storage: the container name "\1" is already'
        r" in use by \2. You have to remove that container to be able to reuse that name:"
        " that name is already in use",
        "",
    ),
    # libpod's ErrVolumeBeingUsed (read as Docker's 409).
    (
        r"remove (.*): volume is in use - \[(\w+)\]",
        409,
        r"volume \1 is being used by the following container(s): \2: volume is being used",
        "",
    ),
)


#: The engines that look for the container whose network a container joins when it is
#: created (podman: "looking up container to share uts namespace with": podsync joins
#: its UTS namespace too there), where Docker 20.10 creates the joiner and refuses its
#: start.
JOIN_CHECKED_AT_CREATE = frozenset({"podman"})

#: The engines that cannot give a container a domain name (podman 4.3 drops
#: ``Domainname`` and refuses the sysctl ``kernel.domainname``): ``DockerRuntime``
#: refuses such a create itself, before the engine sees it
#: (``podsync/runtime/docker/_api.py``, ``domain_name_refusal``).
DOMAIN_NAME_REFUSED = frozenset({"podman"})

#: The engines that list containers created in the same (whole) second in no fixed
#: order (podman sorts its list by ``Created``, whole seconds): docs/engines.md, list
#: order, not handled. Docker lists the newer first.
SAME_SECOND_ORDER_UNFIXED = frozenset({"podman"})

#: The engines that refuse a sysctl no namespace of the container holds when it is
#: created (podman: "sysctl 'kernel.panic' is not allowed", HTTP 500), where Docker
#: creates it and runc refuses its start.
SYSCTLS_CHECKED_AT_CREATE = frozenset({"podman"})

#: The engines whose containers' IPC namespaces all may be joined: podman's default IPC
#: mode is shareable (containers.conf ``ipcns``), Docker's is ``private``, which no one
#: joins. podsync makes the namespaces it joins shareable on both (``ipc_shareable``).
IPC_SHAREABLE = frozenset({"podman"})


def answer(
    engine: str,
    status: int | None,
    message: str,
    *,
    during: str = "",
    container: str = "",
    volume: str = "",
) -> tuple[int | None, str]:
    """What ``engine`` (``docker``, ``podman``, or ``fake``/``""`` for the fake) answers
    where Docker answers ``status`` with ``message``: the status the runtime reports
    (``None``: refused before the engine) and the words. ``during``: the call, as
    :data:`PODMAN_WORDS` names it; ``container``, ``volume``: what the call names."""
    if engine != "podman":
        return status, message
    if any(re.fullmatch(pattern, message) for pattern in REFUSED_BY_PODSYNC):
        return None, message
    for pattern, podman_status, template, call in PODMAN_WORDS:
        found = re.fullmatch(pattern, message)
        if found is not None and call in ("", during):
            words = found.expand(template)
            return podman_status, words.replace("<container>", container).replace(
                "<volume>", volume
            )
    return status, message


def listed_image(engine: str, image: str) -> str:
    """The image the runtime observes of a container created from ``image``: on Docker
    (and the fake) the name as the create gave it; on podman, which lists the image's
    fully qualified name, its Docker short form (``familiar_image``) with the tag podman
    resolved (``:latest`` for an untagged name)."""
    if engine != "podman" or "@" in image:
        return image
    slash, colon = image.rfind("/"), image.rfind(":")
    return image if colon > slash else f"{image}:latest"


# --- what an inspect records ----------------------------------------------------------

#: ``Config.Entrypoint`` of a container created without one (the image's is kept): Docker
#: records null, podman an empty list.
NO_ENTRYPOINT: dict[str, list[str] | None] = {"docker": None, "podman": []}


#: The variables podman (4.3) adds to every container's ``Config.Env``, Docker none:
#: ``container=podman``, a default ``PATH`` and ``TERM=xterm``, and ``HOME`` and
#: ``HOSTNAME`` for a container whose user or hostname gives them.
PODMAN_ENV = frozenset({"container", "PATH", "TERM", "HOME", "HOSTNAME"})


def set_env(engine: str, env: list[str]) -> list[str]:
    """The variables of a ``Config.Env`` that a create set, comparable on ``engine``:
    on Docker as they are, in order; on podman without :data:`PODMAN_ENV` (a test that
    compares sets none of those) and sorted, as podman keeps them in a map and records
    them in no fixed order."""
    if engine != "podman":
        return env
    return sorted(e for e in env if e.partition("=")[0] not in PODMAN_ENV)


def recorded_ports(engine: str, bindings: dict[str, Any]) -> dict[str, Any]:
    """``HostConfig.PortBindings`` (or ``Config.ExposedPorts``) as ``engine`` records
    those Docker records as ``bindings`` for a container in network mode ``none``:
    podman drops them (there is no network to publish on; ``docs/engines.md``)."""
    return {} if engine == "podman" else bindings


#: The events Docker reports for a stop that podman (4.3) does not, or not always: the
#: stop's signals (``kill``: podman reports one only for the kill API, without the
#: signal), and ``stop`` itself, which it reports in some runs and not in others
#: (measured: one run in five; ``docs/engines.md``: events).
PODMAN_SILENT_ON_STOP = frozenset({"kill", "stop"})


def events_of_a_stop(
    engine: str, events: list[tuple[str, int | None, int | None]]
) -> list[tuple[str, int | None, int | None]]:
    """The (action, exit code, signal) events of a container stopped through the stop
    API, comparable on ``engine``: on Docker all of them; on podman without
    :data:`PODMAN_SILENT_ON_STOP` (applied to what Docker reports and to what podman
    did)."""
    if engine != "podman":
        return events
    return [e for e in events if e[0] not in PODMAN_SILENT_ON_STOP]
