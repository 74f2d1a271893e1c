"""What podman (4.3.1, its Docker-compatible service) records of a container otherwise
than Docker 20.10 does, and what podsync does otherwise there, for the engine tests that
read back what the engine got (``docker inspect``), what podsync reads of it or the
calls podsync makes: each function takes the engine the test runs on (the
``engine_name`` fixture) and what Docker records or gets, and gives that engine's.

Docker's side is never changed: on ``docker`` each function gives back what it was
given. Each podman difference is named below with why, measured on podman 4.3.1; the
ones podsync handles, or leaves, are in ``docs/engines.md``'s table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "PODMAN_ADDED_ENV",
    "PODMAN_CONFIG_OTHERWISE",
    "PODMAN_OOM_REASON",
    "PODMAN_RECORDS_OTHERWISE",
    "comparable_env",
    "one_pod_inspects_expected",
    "oom_reason",
    "recorded_binds",
    "recorded_config",
    "recorded_image",
    "recorded_ipc_mode",
    "recorded_keys",
    "recorded_ports",
    "recorded_seccomp",
    "recorded_sysctls",
    "sets_domain_names",
    "volumes_created_first",
]

_Ports = TypeVar("_Ports", dict[str, Any], set[str])

#: Docker Hub's registry part, as podman's compat API writes a name that has none.
_HUB = "docker.io/"

#: The reason a container that the kernel OOM-killed shows on podman: ``Error`` (exit
#: code 137). podman's inspect keeps ``State.OOMKilled`` false and sends no ``oom``
#: event where conmon cannot watch the container's cgroup (cgroup v1 here), so podsync
#: cannot tell the kill from any other SIGKILL (docs/engines.md: OOM kill, not handled).
PODMAN_OOM_REASON = "Error"


def recorded_image(engine: str, image: str) -> str:
    """``Config.Image`` of a container created with ``image`` (a name without a
    registry part, as the tests' images are).

    Docker keeps the name as given. podman's compat create normalizes it as Docker's
    reference parser would and keeps the full name: ``docker.io/`` before a name with a
    path (``podsync-test/pause:latest``), ``docker.io/library/`` before a name of one
    component - even for an image made on the machine, which podman itself lists as
    ``localhost/...``."""
    if engine != "podman":
        return image
    return _HUB + image if "/" in image else f"{_HUB}library/{image}"


def recorded_ports(engine: str, network_mode: str, recorded: _Ports) -> _Ports:
    """``HostConfig.PortBindings`` or ``Config.ExposedPorts`` of a container created
    with ``recorded`` in ``network_mode``: Docker records them in any mode; podman
    records neither in mode ``none``, where there is no network to publish on
    (podsync's admission reads the pods' specs, not the engine's records:
    docs/engines.md, host ports)."""
    return type(recorded)() if engine == "podman" and network_mode == "none" else recorded


def oom_reason(engine: str) -> str:
    """The reason podsync shows for a container the kernel OOM-killed: Docker's
    ``OOMKilled``, podman's :data:`PODMAN_OOM_REASON`."""
    return PODMAN_OOM_REASON if engine == "podman" else "OOMKilled"


def volumes_created_first(engine: str, labelled: int) -> int:
    """How many ``POST /volumes/create`` the runtime sends before the create of a
    container that mounts ``labelled`` new volumes with labels: none on Docker, which
    makes them at the container's create with the mount's labels; one each on podman,
    whose compat create drops those labels, so the runtime makes them first
    (docs/engines.md: labels of a volume made at a container's create)."""
    return labelled if engine == "podman" else 0


def recorded_ipc_mode(engine: str, ipc_mode: str) -> str:
    """``HostConfig.IpcMode`` of a container podsync created with ``ipc_mode``: Docker
    records it as given. podman 4.3.1 records the containers podsync makes with
    ``host`` as ``shareable`` (seen for a pod's network container and its app alike),
    while their IPC namespace is the host's all the same (measured: the same
    ``/proc/self/ns/ipc`` link inside and outside), so tests check the namespace too."""
    return "shareable" if engine == "podman" and ipc_mode == "host" else ipc_mode


def sets_domain_names(engine: str) -> bool:
    """Whether the engine can give a container a domain name (a pod's
    ``hostname.subdomain.ns.svc.<domain>``): Docker can (``Config.Domainname``); podman
    4.3 cannot (it drops ``Domainname``, refuses the sysctl ``kernel.domainname``), so
    podsync refuses such a pod's containers there (``domain_name_refusal`` of
    ``podsync/runtime/docker/_api.py``)."""
    return engine != "podman"


def recorded_binds(engine: str, binds: list[str], joins: dict[str, Any] | None = None) -> list[str]:
    """``HostConfig.Binds`` of a container created with ``binds`` (``src:dst[:opts]``)
    and, for a pod's app, ``joins`` (its network container, inspected): Docker records
    them as given, in order; podman 4.3.1 sorted, each with its options spelled out
    (a host path's ``rw`` unless ``ro``, then ``rprivate,rbind``; a named volume's
    after its own, with ``nosuid,nodev``), and an app has the
    network container's hosts file at ``/etc/hosts`` besides, which podsync binds there
    (``podman_joining`` of ``podsync/runtime/docker/_api.py``)."""
    if engine != "podman":
        return binds

    def spelled_out(bind: str) -> str:
        source, target, *rest = bind.split(":")
        options = rest[0].split(",") if rest else []
        mode = [] if {"ro", "rw"} & set(options) else ["rw"]
        if source.startswith("/"):  # a host path: the mode first
            return f"{source}:{target}:{','.join([*mode, *options, 'rprivate', 'rbind'])}"
        # a named volume: its options first, then nosuid and nodev too
        spelled = [*options, *mode, "rprivate", "nosuid", "nodev", "rbind"]
        return f"{source}:{target}:{','.join(spelled)}"

    hosts = [f"{joins['HostsPath']}:/etc/hosts"] if joins is not None else []
    return sorted(spelled_out(bind) for bind in [*binds, *hosts])


def recorded_sysctls(engine: str, sysctls: dict[str, str]) -> dict[str, str] | None:
    """``HostConfig.Sysctls`` of a container created with ``sysctls``: Docker records
    them; podman 4.3.1 records none (no ``Sysctls`` key), though it sets them - tests
    read them back in ``/proc/sys`` as well."""
    return None if engine == "podman" else sysctls


def recorded_seccomp(engine: str, profile: Path) -> str:
    """The ``seccomp=`` entry of ``HostConfig.SecurityOpt`` for the Localhost profile
    file ``profile``: Docker records the profile itself (podsync sends its JSON);
    podman the file's absolute path, which podsync sends there because podman opens
    the value as a path (containers/podman#27710)."""
    if engine == "podman":
        return f"seccomp={profile.resolve()}"
    return f"seccomp={profile.read_text()}"


#: The variables podman 4.3.1 puts in a container's environment besides what it is
#: given (libpod's defaults: PATH, TERM=xterm, container=podman; HOME and HOSTNAME too
#: in a pod's apps). Docker adds nothing, and the test images set no Env.
PODMAN_ADDED_ENV = ("PATH", "TERM", "container", "HOME", "HOSTNAME")


def comparable_env(engine: str, env: list[str]) -> list[str]:
    """``Config.Env`` (given or recorded) in the form the engine keeps: Docker keeps the
    list as given, in order; podman keeps a map - one entry per name, in no order -
    with :data:`PODMAN_ADDED_ENV`, so there it is the other entries, sorted."""
    if engine != "podman":
        return env
    return sorted(entry for entry in env if entry.split("=", 1)[0] not in PODMAN_ADDED_ENV)


#: ``HostConfig`` keys podman 4.3.1 records otherwise than as given, and what it records
#: instead: tests that compare the record leave them out there and check the process
#: itself (its capability sets in ``/proc/1/status``).
PODMAN_RECORDS_OTHERWISE = {
    "CapAdd": "the capabilities beyond podman's own default set, not those asked for",
    "CapDrop": "podman's default capabilities the container lacks, not those dropped",
}


def recorded_keys(engine: str, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The ``HostConfig`` keys among ``keys`` that the engine records as they were given:
    all on Docker; on podman, those not in :data:`PODMAN_RECORDS_OTHERWISE`."""
    if engine != "podman":
        return keys
    return tuple(key for key in keys if key not in PODMAN_RECORDS_OTHERWISE)


#: ``Config`` keys podman 4.3.1 records otherwise than as given: ``StdinOnce`` stays
#: false (docs/engines.md: stdinOnce, not handled - podsync attaches to no container).
PODMAN_CONFIG_OTHERWISE = {"StdinOnce": False}


def recorded_config(engine: str, key: str, given: Any) -> Any:
    """``Config[key]`` of a container created with ``given``: Docker records it; podman
    what :data:`PODMAN_CONFIG_OTHERWISE` says for the keys it names."""
    if engine == "podman" and key in PODMAN_CONFIG_OTHERWISE:
        return PODMAN_CONFIG_OTHERWISE[key]
    return given


def one_pod_inspects_expected(engine: str, count: int) -> bool:
    """Whether ``count`` container inspects are what the create and start of a pod with
    one app (network mode ``none``) send on the engine: none on Docker; on podman at
    least five - the network container's, for its hosts file, at the app's create
    (again while that container starts: ``_hosts_file`` of
    ``podsync/runtime/docker/_containers.py``), and podman's start checks
    (``_refuse_a_dead_namespace``, same module): each container before its start, and
    the app's join target for its network and for its IPC namespace."""
    return count >= 5 if engine == "podman" else count == 0
