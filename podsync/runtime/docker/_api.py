"""Between podsync's runtime-neutral values and the Docker Engine API's shapes, both ways.

Contract: pure functions; nothing here talks to an engine or imports the docker SDK.
``podsync.docker.DockerRuntime`` does the calls and uses these for what goes in and
comes out:

* ``docker_create_args``: a ``CreateSpec`` as the keyword arguments of the docker SDK's
  low-level ``APIClient.create_host_config`` and ``APIClient.create_container``;
* ``observed_from_list``, ``image_from_list``, ``timestamp``, ``address_of``: the
  engine's JSON (list entries, inspect fields) as ``ObservedContainer``,
  ``ObservedImage``, times and addresses;
* ``log_line``, ``engine_event``: a timestamped log entry and an event message as
  ``LogLine`` and ``EngineEvent``.

The create translation, field by field:

* ``join`` is network mode ``container:<name>`` (Docker resolves the name when the
  container starts); otherwise ``network`` is the network mode as it is (``none``,
  ``host``, ``bridge``, a named network), and ``""`` leaves the engine's default.
* ``ports`` are ``ExposedPorts`` keys (``"80/tcp"``) and ``PortBindings``
  (``{"80/tcp": [{"HostIp": "", "HostPort": "8080"}]}``), through the public helpers
  ``exposed_ports`` and ``port_bindings``.
* ``mounts`` are ``Binds`` strings (``"/host:/container:ro"``, ``binds``), followed by
  ``volumes``, named volumes, in the same spelling (``"<volume>:/container:ro"``: Docker
  reads a source that is not an absolute path as a volume name), with ``nocopy`` for a
  volume that is never filled from the image (``"<volume>:/container:ro,nocopy"``).
* ``milli_cpu`` is ``CpuShares`` (``cpu_shares``, the modern kubelet's
  MilliCPUToShares: the one conversion; always sent, as 0 milli-CPU is 2 shares),
  ``cpu_limit`` is ``CpuQuota`` per ``CpuPeriod`` (``cpu_quota``, ``CPU_PERIOD``: the
  modern kubelet's MilliCPUToQuota), ``memory`` is ``Memory`` in bytes,
  ``memory_swap`` ``MemorySwap``, ``oom_score_adj`` ``OomScoreAdj``.
* ``domainname`` is ``Domainname``; ``host_aliases`` are ``ExtraHosts``
  (``"name:ip"``, one per name, in order).
* ``tty``, ``stdin`` and ``stdin_once`` are ``Tty``, ``OpenStdin`` and ``StdinOnce``
  (the SDK sets ``StdinOnce`` with ``OpenStdin`` unless ``detach``: ``detach`` is
  set exactly when standard input stays open without ``stdin_once``).
* ``dns`` / ``dns_search`` are ``Dns`` / ``DnsSearch``; ``command`` / ``args``
  (Kubernetes' names) replace the image's ``Entrypoint`` / ``Cmd`` (Docker drops the
  image's ``Cmd`` when the entrypoint is overridden, as Kubernetes ``command`` without
  ``args`` expects).
* ``security`` (``ContainerSecurity``): ``user`` is ``User``; ``groups`` ``GroupAdd``;
  ``cap_add`` / ``cap_drop`` ``CapAdd`` / ``CapDrop`` (Docker reads Kubernetes'
  spelling); ``read_only_root_filesystem`` ``ReadonlyRootfs``; ``sysctls`` ``Sysctls``;
  ``host_pid`` / ``share_pid_with`` ``PidMode`` ``host`` / ``container:<name>``;
  ``host_ipc`` ``IpcMode`` ``host`` (else ``join_ipc`` ``container:<name>``, else
  ``ipc_shareable`` ``shareable``: the engine's default is ``private``); and
  ``SecurityOpt``: ``no-new-privileges``,
  ``seccomp=unconfined`` or ``seccomp=<the profile's JSON>`` (the Engine API takes the
  profile itself, as the docker CLI sends it: ``seccomp_profile``, which the runtime
  reads from the Localhost profile's file), ``apparmor=unconfined`` or
  ``apparmor=<profile>``. ``runtime/default`` profiles send nothing: the engine's
  default is its own profile (the runtime checks that the engine has it).

Unset values (empty, zero, ``None``) are left out (``None``), so the engine keeps its
own default; an empty ``Binds`` list and ``privileged=False`` are sent as they are.
"""

from __future__ import annotations

import datetime
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import attrs

from podsync.actions._actions import CreateSpec
from podsync.model._pod import ObservedContainer, ObservedImage, ObservedVolume
from podsync.model._secrets import revealed
from podsync.model._security import ContainerSecurity
from podsync.runtime._protocol import EVENT_ACTIONS, EngineEvent, LogLine
from podsync.spec._cpu import CPU_PERIOD, cpu_quota, cpu_shares
from podsync.spec._ports import exposed_ports, port_bindings
from podsync.spec._volumes import NamedVolumeMount, binds

__all__ = [
    "EVENT_FILTER",
    "FINISHED_STATES",
    "STATUS_AGE",
    "DockerCreateArgs",
    "Outcome",
    "address_of",
    "as_int",
    "docker_create_args",
    "domain_name_refusal",
    "engine_event",
    "familiar_image",
    "image_from_list",
    "log_line",
    "observed_from_list",
    "podman_joining",
    "qualified_by_podman",
    "timestamp",
    "volume_from_list",
]


@attrs.frozen
class DockerCreateArgs:
    """The docker SDK's arguments for one create.

    Attributes:
        host_config: keyword arguments of ``APIClient.create_host_config``.
        container: keyword arguments of ``APIClient.create_container`` besides the
            image (its first argument, ``CreateSpec.image``) and ``host_config``.
    """

    host_config: dict[str, Any]
    container: dict[str, Any]


def _security_opt(security: ContainerSecurity, seccomp_profile: str | None) -> list[str]:
    options = []
    if security.no_new_privileges:
        options.append("no-new-privileges")
    if security.seccomp == "unconfined":
        options.append("seccomp=unconfined")
    elif security.seccomp.startswith("localhost/"):
        if seccomp_profile is None:
            raise ValueError(f"{security.seccomp} needs the profile's content")
        options.append(f"seccomp={seccomp_profile}")
    if security.apparmor == "unconfined":
        options.append("apparmor=unconfined")
    elif security.apparmor.startswith("localhost/"):
        options.append("apparmor=" + security.apparmor.removeprefix("localhost/"))
    return options


def _pid_mode(security: ContainerSecurity) -> str | None:
    if security.host_pid:
        return "host"
    if security.share_pid_with:
        return f"container:{security.share_pid_with}"
    return None


def _ipc_mode(spec: CreateSpec) -> str | None:
    if spec.security.host_ipc:
        return "host"
    if spec.join_ipc:
        return f"container:{spec.join_ipc}"
    return "shareable" if spec.ipc_shareable else None


def docker_create_args(
    spec: CreateSpec,
    seccomp_profile: str | None = None,
    mountpoints: Mapping[str, str] | None = None,
) -> DockerCreateArgs:
    """The docker SDK's create arguments for ``spec`` (see the module docstring).

    ``seccomp_profile`` is the content of the Localhost seccomp profile that
    ``spec.security.seccomp`` names (``localhost/<path>``); the caller reads it.
    ``mountpoints``: where the engine keeps each volume of ``spec.file_mounts``
    (``docker volume inspect``'s ``Mountpoint``, a path on the engine's host): each file
    mount is a bind of ``<Mountpoint>/<path>``, after the other binds.

    Raises:
        ValueError: ``spec`` names a Localhost seccomp profile and its content is not
            given, or a volume of its file mounts has no mountpoint in ``mountpoints``.
    """
    known = mountpoints or {}
    missing = sorted({m.volume for m in spec.file_mounts} - set(known))
    if missing:
        raise ValueError(f"no mountpoint known for volume(s) {', '.join(missing)}")
    file_binds = [
        f"{posixpath.join(known[m.volume], m.path)}:{m.container_path}"
        + (":ro" if m.read_only else "")
        for m in spec.file_mounts
    ]
    security = spec.security
    network_mode = f"container:{spec.join}" if spec.join else spec.network or None
    bindings = {
        key: [{"HostIp": ip, "HostPort": str(port)} for ip, port in pairs]
        for key, pairs in port_bindings(spec.ports).items()
    }
    host_config: dict[str, Any] = {
        "binds": binds(spec.mounts)
        + [_volume_bind(v) for v in spec.volumes if not v.labels]
        + file_binds,
        # The Engine API's own PortMap shape: the SDK passes dictionaries through.
        "port_bindings": bindings,
        "network_mode": network_mode,
        "cpu_shares": cpu_shares(spec.milli_cpu),
        "mem_limit": spec.memory or None,
        "memswap_limit": spec.memory_swap or None,
        "oom_score_adj": spec.oom_score_adj or None,
        "cpu_period": CPU_PERIOD if spec.cpu_limit else None,
        "cpu_quota": cpu_quota(spec.cpu_limit) or None,
        "extra_hosts": [f"{name}:{a.ip}" for a in spec.host_aliases for name in a.hostnames]
        or None,
        "privileged": spec.privileged,
        "dns": list(spec.dns) or None,
        "dns_search": list(spec.dns_search) or None,
        "group_add": [str(g) for g in security.groups] or None,
        "cap_add": list(security.cap_add) or None,
        "cap_drop": list(security.cap_drop) or None,
        "read_only": security.read_only_root_filesystem or None,
        "security_opt": _security_opt(security, seccomp_profile) or None,
        "sysctls": dict(security.sysctls) or None,
        "pid_mode": _pid_mode(security),
        "ipc_mode": _ipc_mode(spec),
    }
    container: dict[str, Any] = {
        "name": spec.name,
        # The engine boundary: the one place Secret values leave their SecretTexts.
        "entrypoint": revealed(spec.command or ()) or None,
        "command": revealed(spec.args or ()) or None,
        "environment": revealed(spec.env),
        "labels": dict(spec.labels),
        "working_dir": spec.working_dir or None,
        "hostname": spec.hostname or None,
        # A mapping goes to ExposedPorts as it is; a list would get "/tcp" appended to
        # every item by the SDK ("80/tcp" -> "80/tcp/tcp").
        "ports": {key: {} for key in exposed_ports(spec.ports)} or None,
        "domainname": spec.domainname or None,
        "tty": spec.tty,
        "stdin_open": spec.stdin,
        "user": security.user or None,
    }
    labelled = [_volume_mount(v) for v in spec.volumes if v.labels]
    if labelled:
        host_config["mounts"] = labelled
    if spec.tmpfs:
        # HostConfig.Tmpfs, path -> mount options ("size=N"): emptyDir in memory.
        host_config["tmpfs"] = {t.container_path: t.options for t in spec.tmpfs}
    if spec.stdin and not spec.stdin_once:
        # The SDK sets StdinOnce with OpenStdin unless the container is "detached" (its
        # model of ``docker run -i``); the kubelet passes stdinOnce as it is written.
        container["detach"] = True
    return DockerCreateArgs(host_config=host_config, container=container)


# ---------------------------------------------------------------------------------------
# From the engine's JSON to podsync's values

# States whose container has exited: its exit code and finish time are final.
# podman's Docker-compatible list passes its own states through (podman 4.3): "stopped"
# is a container whose process has exited and whose cleanup has not run yet (its
# Status reads "Exited (0) ...", and inspect has its exit code and FinishedAt already);
# it becomes "exited" a moment later. Read as anything else, an app that exits at once
# looks never started, and is created again.
FINISHED_STATES = frozenset({"exited", "dead", "removing", "stopped"})
# States in which Docker's State.Running is true; podman's "stopping" (a stop has
# sent its signal, the process has not ended yet) is still running, as on Docker.
_RUNNING_STATES = frozenset({"running", "paused", "restarting", "stopping"})


@attrs.frozen
class Outcome:
    """How an exited container ended: ``State.ExitCode`` and ``State.FinishedAt``, and
    when that run started (``State.StartedAt``)."""

    exit_code: int
    finished_at: float | None
    oom_killed: bool = False
    started_at: float | None = None


# "Exited (137) 5 minutes ago", "Restarting (1) 2 seconds ago"
_STATUS_EXIT_CODE = re.compile(r"^\s*(?:Exited|Restarting)\s*\((-?\d+)\)")
# The clock in a Status: "5 minutes ago", "Less than a second ago", "About an hour ago".
STATUS_AGE = re.compile(r"\s+[^()]*\bago\s*$")


def observed_from_list(entry: Mapping[str, Any]) -> ObservedContainer:
    """An ``ObservedContainer`` from one entry of ``GET /containers/json``.

    The list gives no finish time (``finished_at`` is ``None``) and the exit code only in
    the ``Status`` text; ``list_containers`` completes both for the containers podsync
    owns. podman's list names the image fully (``docker.io/library/busybox:latest``,
    ``localhost/app:1``) where Docker repeats the reference the container was created
    with (``busybox:latest``); ``list_containers`` gives it in Docker's short form
    (``familiar_image``) on podman, as the pod names it.
    """
    state = str(entry.get("State") or "")
    return ObservedContainer(
        id=str(entry["Id"]),
        name=_name(entry.get("Names") or ()),
        image=str(entry.get("Image") or ""),
        labels={str(k): str(v) for k, v in (entry.get("Labels") or {}).items()},
        created=float(entry.get("Created") or 0),
        running=state in _RUNNING_STATES,
        exit_code=_exit_code(str(entry.get("Status") or "")),
    )


# The prefixes podman's answers qualify a name with, longest first: Docker Hub's, and
# podman's registry part for images made on the machine (not "localhost:<port>/").
_HUB = "docker.io/"
_HUB_LIBRARY = "docker.io/library/"
_PODMAN_QUALIFIERS = (_HUB_LIBRARY, _HUB, "localhost/")


def qualified_by_podman(reference: str) -> bool:
    """Whether a name of an engine's answer may be one podman qualified (Docker lists
    ``docker.io/`` and ``localhost/`` names too, for what was created so; the runtime
    asks the engine before it reads them as podman's)."""
    return reference.startswith(_PODMAN_QUALIFIERS)


def familiar_image(reference: str) -> str:
    """A reference podman qualified, in Docker's short ("familiar") form: without
    ``docker.io/`` (and its ``library/``: ``docker.io/library/x`` is ``x``,
    ``docker.io/team/x`` is ``team/x``), and without ``localhost/`` (podman's images
    made on the machine); any other registry (``localhost:5000/``, ``quay.io/``)
    stays. As Docker, ``library/`` goes only in front of a single component:
    ``docker.io/library/team/x`` is ``library/team/x`` (``team/x`` is another image)."""
    for prefix in _PODMAN_QUALIFIERS:
        if reference.startswith(prefix):
            rest = reference.removeprefix(prefix)
            if prefix == _HUB_LIBRARY and "/" in rest.split("@")[0]:
                return reference.removeprefix(_HUB)
            return rest
    return reference


def _name(names: Sequence[str]) -> str:
    """The container's own name: ``Names`` also holds legacy link aliases
    (``/web/db``), which have a second ``/``."""
    stripped = [n[1:] if n.startswith("/") else n for n in names]
    for name in stripped:
        if "/" not in name:
            return name
    return stripped[0] if stripped else ""


def _exit_code(status: str) -> int:
    """The exit code in a list ``Status`` (``Exited (137) 5 minutes ago``); 0 when there
    is none (``Up 2 hours``, ``Created``, ``Dead``)."""
    match = _STATUS_EXIT_CODE.match(status)
    return int(match.group(1)) if match else 0


def timestamp(text: object) -> float | None:
    """Seconds since the epoch of an RFC 3339 time from the engine; ``None`` for
    Docker's zero time (``0001-01-01T00:00:00Z``: never happened) or anything
    unreadable. Nanoseconds are cut to microseconds."""
    if not isinstance(text, str) or not text or text.startswith("0001-"):
        return None
    # Go prints up to 9 fractional digits and a "Z"; Python (>= 3.11) reads both,
    # cutting the digits to microseconds.
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def as_int(value: object) -> int:
    """``value`` as an int; 0 when it is none (a missing or malformed field)."""
    try:
        return int(cast(Any, value))
    except (TypeError, ValueError):
        return 0


def volume_from_list(entry: Mapping[str, Any]) -> ObservedVolume:
    """An entry of ``GET /volumes``' ``Volumes`` (whose ``Labels`` is ``null`` for a
    volume made without labels) as an ``ObservedVolume``, with its ``CreatedAt``."""
    labels = entry.get("Labels") or {}
    return ObservedVolume(
        str(entry.get("Name") or ""),
        {str(k): str(v) for k, v in labels.items()},
        str(entry.get("CreatedAt") or ""),
    )


def image_from_list(entry: Mapping[str, Any], *, libpod: bool = False) -> ObservedImage:
    """An ``ObservedImage`` from one entry of ``GET /images/json``; the placeholders
    ``<none>:<none>`` and ``<none>@<none>`` of a dangling image are dropped.

    ``libpod``: the engine is podman. ``podman import``, ``podman build`` and ``podman
    tag`` name a local image ``localhost/<name>``, and podman finds it by ``<name>``
    alone (its short-name resolution tries ``localhost/`` first): a pod naming
    ``app:1`` runs the ``localhost/app:1`` it has. So such a tag is listed under both
    names, and podsync sees the image the pod names as present, as podman does. Not on
    Docker, where ``localhost/app:1`` is an image of the registry at ``localhost`` and
    ``app:1`` is another image. podman's ``docker.io/`` names are given in Docker's
    short form (``familiar_image``), as Docker lists them.
    """
    tags = tuple(t for t in entry.get("RepoTags") or () if t != "<none>:<none>")
    if libpod:
        local = tuple(t for t in tags if t.startswith(_PODMAN_LOCAL))
        tags = tuple(dict.fromkeys(t if t in local else familiar_image(t) for t in tags))
        tags += tuple(familiar_image(t) for t in local)
    digests = tuple(d for d in entry.get("RepoDigests") or () if d != "<none>@<none>")
    return ObservedImage(id=str(entry["Id"]), tags=tags, digests=digests)


# podman's registry part for images made on the machine (not "localhost:<port>/").
_PODMAN_LOCAL = "localhost/"


def address_of(settings: Mapping[str, Any]) -> str | None:
    """The first IPv4 address in ``NetworkSettings``: the default bridge's top-level
    ``IPAddress``, else the first network that gave one (``none`` gives ``""``)."""
    if settings.get("IPAddress"):
        return str(settings["IPAddress"])
    for network in (settings.get("Networks") or {}).values():
        if isinstance(network, Mapping) and network.get("IPAddress"):
            return str(network["IPAddress"])
    return None


def log_line(stream: str, entry: bytes) -> LogLine:
    """A ``LogLine`` from one log entry the engine sent with ``timestamps=1``: its
    RFC 3339 time, a space, the line. An entry without a readable time keeps its bytes
    whole, with time 0."""
    stamp, sep, data = entry.partition(b" ")
    moment = timestamp(stamp.decode("ascii", "replace")) if sep else None
    if moment is None:
        return LogLine(stream, entry, 0.0)
    return LogLine(stream, data, moment)


# Attributes of a container event that are not the container's labels.
_EVENT_ATTRIBUTES = frozenset({"name", "image", "exitCode", "signal"})


# podman's words for Docker's container actions (podman 4.3, libpod/events): its
# "remove" is Docker's "destroy" (the container is gone), and its "died" is Docker's
# "die". podman's compat events handler already *sends* "die" but *filters* on libpod's
# own word: a filter event=die matches nothing there, event=died its deaths (seen on
# podman 4.3.1; Docker ignores a word it never sends). podman sends "kill" without the
# signal, no "stop" (the loop needs neither: it wakes on "die" and "oom"), no "oom"
# (its inspect's State.OOMKilled, from conmon, stays false where conmon cannot watch
# the cgroup), and "init" and "cleanup" that Docker does not: those are left as they
# come (they are not EVENT_ACTIONS).
_PODMAN_ACTIONS = {"remove": "destroy", "died": "die"}

#: The ``event`` filter of ``GET /events``: Docker's ``EVENT_ACTIONS`` and podman's own
#: words for them, so that either engine sends every one.
EVENT_FILTER = tuple(sorted(EVENT_ACTIONS | _PODMAN_ACTIONS.keys()))


def engine_event(message: Mapping[str, Any]) -> EngineEvent | None:
    """An ``EngineEvent`` from one message of ``GET /events``; ``None`` for anything but
    a container's ``EVENT_ACTIONS`` (``exec_start: ...``, networks, images).

    Docker puts the container's labels among the actor's attributes, beside ``name``,
    ``image``, ``exitCode`` (``die``) and ``signal`` (``kill``)."""
    action = str(message.get("Action") or message.get("status") or "")
    action = _PODMAN_ACTIONS.get(action, action)
    if message.get("Type", "container") != "container" or action not in EVENT_ACTIONS:
        return None
    actor = message.get("Actor") or {}
    attributes = {str(k): str(v) for k, v in (actor.get("Attributes") or {}).items()}
    nanos = message.get("timeNano")
    when = int(nanos) / 1e9 if isinstance(nanos, int) else float(message.get("time") or 0)
    code, signal = attributes.get("exitCode"), attributes.get("signal")
    return EngineEvent(
        when,
        action,
        str(actor.get("ID") or message.get("id") or ""),
        attributes.get("name", "").removeprefix("/"),
        {k: v for k, v in attributes.items() if k not in _EVENT_ATTRIBUTES},
        as_int(code) if code is not None else None,
        as_int(signal) if signal is not None else None,
    )


def podman_joining(spec: CreateSpec, hosts_path: str) -> dict[str, Any]:
    """What ``HostConfig`` of ``spec``, a container that joins a pod's network container
    (``join``), gets on podman besides Docker's: the pod's UTS namespace and its hosts
    file (``hosts_path``: the network container's ``HostsPath``, on the engine's host).

    Docker gives a container that joins another's network that container's hostname
    and ``/etc/hosts`` (with the pod's ``hostAliases``): a pod's apps are named and
    resolve as the pod. podman does neither - their hostname is their own id, their
    hosts file their own, without the aliases (measured on podman 4.3.1), and it
    refuses extra hosts beside ``container:``. It takes ``UTSMode`` ``container:<x>``
    (Docker: ``host`` only), which puts the app in the network container's UTS
    namespace (one for the pod, as in Kubernetes), and the network container's hosts
    file bound at ``/etc/hosts``, as Docker shares it."""
    return {
        "UTSMode": f"container:{spec.join}",
        "Binds": [f"{hosts_path}:/etc/hosts"] if hosts_path else [],
    }


def domain_name_refusal(spec: CreateSpec) -> str | None:
    """Why podman cannot create ``spec`` as Docker would: it has a domain name (a pod's
    ``hostname.subdomain.ns.svc.<domain>``); ``None`` when it has none.

    Docker sets ``Config.Domainname`` in the container's UTS namespace. podman 4.3 has
    no domain name at all: its compat create drops ``Domainname`` (the container's
    stays ``(none)``), refuses the sysctl ``kernel.domainname`` that would set it
    ("sysctl 'kernel.domainname' is not allowed"), and has no option for it (measured
    on podman 4.3.1). A setting that cannot be honoured is refused, not dropped."""
    if not spec.domainname:
        return None
    return (
        f"the engine is podman, which cannot give a container a domain name "
        f"({spec.domainname}: it drops Domainname and refuses the sysctl "
        "kernel.domainname): podsync does not create the container without it"
    )


def _volume_mount(mount: NamedVolumeMount) -> dict[str, Any]:
    """The ``HostConfig.Mounts`` entry of a named volume with labels: a ``Binds`` string
    cannot carry them, a mount's ``VolumeOptions`` can - the engine creates a missing
    volume with them at the container's create (``daemon.registerMountPoints``)."""
    return {
        "Type": "volume",
        "Source": mount.volume,
        "Target": mount.container_path,
        "ReadOnly": mount.read_only,
        "VolumeOptions": {"NoCopy": mount.no_copy, "Labels": dict(mount.labels)},
    }


def _volume_bind(mount: NamedVolumeMount) -> str:
    """The ``Binds`` string of a named volume: ``<volume>:<path>``, then its options
    (``ro``, ``nocopy``: Docker takes them comma-separated)."""
    options = [*(["ro"] if mount.read_only else []), *(["nocopy"] if mount.no_copy else [])]
    return f"{mount.volume}:{mount.container_path}" + (":" + ",".join(options) if options else "")
