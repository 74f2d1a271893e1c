"""The rules of Docker 20.10 that ``FakeRuntime`` enforces by its own code: the image
reference format and how the engine lists a reference, the container name pattern, the
resource settings (the smallest memory limit, the swap limit, the OOM score range), the
exit code of a killed process, and the security rules
(unknown capabilities at create, node-level sysctls at start, and what ``DockerRuntime``
refuses before the engine: profiles of a feature the host lacks, unreadable profiles).

They are the fake's own reading of Docker, written from Docker's sources and not from
podsync's (``_images``, ``_naming``): a planner that misreads a reference or writes a bad
name meets an engine that does not. ``tests/support/conformance.py``
holds the fake to the real engine. The network-mode and port-publishing rules stay with the fake's
``create_container``, which reads them from the ``CreateSpec``.
"""

from __future__ import annotations

import hashlib
import re

import attrs

from podsync.actions._actions import CreateSpec

__all__ = [
    "CONTAINER_NAME",
    "CONTAINER_NAME_CHARS",
    "KILLED",
    "MIN_MEMORY",
    "Reference",
    "capability_error",
    "create_refusal",
    "image_id",
    "port_refusal",
    "profile_refusal",
    "read_reference",
    "resource_refusal",
    "security_refusal",
    "sysctl_start_error",
    "tmpfs_refusal",
    "volume_name_refusal",
]


def image_id(reference: str) -> str:
    """The id the fake gives the image it holds as ``reference``: a digest of it."""
    return "sha256:" + hashlib.sha256(reference.encode()).hexdigest()


# -- Docker's reference format, the fake's own reading ----------------------------------
#
# One anchored expression for the whole grammar, as distribution/reference's
# ``ReferenceRegexp`` (regexp.go): [domain "/"] path ["/" path]* [":" tag] ["@" digest].
# A domain is recognised here by the same expression that admits it, then checked against
# Docker Hub's rules (``splitDockerDomain``, normalize.go): only a first component with a
# ".", a ":", an upper-case letter or the name "localhost" names a registry.

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|-+)"
_PATH = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"(?P<name>(?:(?P<host>{_HOST})/)?{_PATH}(?:/{_PATH})*)"
    r"(?::(?P<tag>\w[\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?",
    re.ASCII,
)
_HUB = "docker.io"


@attrs.frozen
class Reference:
    """A reference as the engine holds it: the canonical repository
    (``docker.io/library/busybox``) and a tag or a digest."""

    repository: str
    tag: str
    digest: str

    @property
    def familiar(self) -> str:
        """The repository as the engine lists it (``busybox``, ``team/app``)."""
        if not self.repository.startswith(_HUB + "/"):
            return self.repository
        path = self.repository[len(_HUB) + 1 :]
        official = path.removeprefix("library/")
        return official if official != path and "/" not in official else path

    @property
    def listed(self) -> str:
        """``familiar:tag`` or ``familiar@digest``: an entry of ``RepoTags`` or
        ``RepoDigests``."""
        if self.digest:
            return f"{self.familiar}@{self.digest}"
        return f"{self.familiar}:{self.tag}"


def read_reference(text: str) -> Reference:
    """Docker's reading of ``text``.

    Raises:
        ValueError: the engine's ``invalid reference format`` error.
    """
    match = _REFERENCE.fullmatch(text)
    if match is None or re.fullmatch(r"[a-f0-9]{64}", text):
        lowered = _REFERENCE.fullmatch(text.lower())
        if lowered is not None and text.lower() != text:
            raise ValueError("invalid reference format: repository name must be lowercase")
        raise ValueError("invalid reference format")
    name, host, tag, digest = match["name"], match["host"], match["tag"], match["digest"]
    if digest and digest.startswith("sha256:") and not re.fullmatch(r"sha256:[a-f0-9]{64}", digest):
        raise ValueError("invalid reference format")
    if host is not None and not (
        any(ch in host for ch in ".:") or host == "localhost" or host != host.lower()
    ):
        host = None  # "team/app": a Docker Hub namespace, not a registry
    path = name if host is None else name[len(host) + 1 :]
    if host in (None, "index.docker.io", _HUB):
        host = _HUB
        if "/" not in path:
            path = "library/" + path
    return Reference(f"{host}/{path}", "" if digest else tag or "latest", digest or "")


#: Docker's container names (daemon/names.go, ``validContainerNamePattern``): one
#: leading "/" is allowed and dropped.
CONTAINER_NAME = re.compile(r"/?[a-zA-Z0-9][a-zA-Z0-9_.-]+", re.ASCII)
#: The pattern as Docker's error message spells it.
CONTAINER_NAME_CHARS = "[a-zA-Z0-9][a-zA-Z0-9_.-]"

#: Docker 20.10's smallest memory limit (daemon/daemon_unix.go, ``linuxMinMemory``).
MIN_MEMORY = 6 * 1024 * 1024


def resource_refusal(spec: CreateSpec) -> str | None:
    """Docker 20.10's refusal at create of ``spec``'s memory and swap limits
    (daemon/daemon_unix.go, ``verifyPlatformContainerResources``), then of its OOM score
    adjustment (``verifyPlatformContainerSettings``, after the resources), in its order
    and words, or ``None``."""
    if spec.memory != 0 and spec.memory < MIN_MEMORY:
        return "Minimum memory limit allowed is 6MB"
    # MemorySwap -1 is "unlimited swap": allowed with or without a memory limit.
    if spec.memory_swap > 0 and spec.memory == 0:
        return "You should always set the Memory limit when using Memoryswap limit, see usage"
    if spec.memory_swap > 0 and spec.memory_swap < spec.memory:
        return "Minimum memoryswap limit should be larger than memory limit, see usage"
    if not -1000 <= spec.oom_score_adj <= 1000:
        return f"Invalid value {spec.oom_score_adj}, range for oom score adj is [-1000, 1000]"
    return None


#: The exit code of a process killed by SIGKILL: 128 + 9.
KILLED = 137


# -- security settings --------------------------------------------------------------------

# The capabilities Docker 20.10 knows (its ``caps`` package: gocapability's list, up to
# CAP_CHECKPOINT_RESTORE), in the spelling it stores after normalizing.
_CAPABILITIES = frozenset(
    "CAP_" + name
    for name in [
        "CHOWN",
        "DAC_OVERRIDE",
        "DAC_READ_SEARCH",
        "FOWNER",
        "FSETID",
        "KILL",
        "SETGID",
        "SETUID",
        "SETPCAP",
        "LINUX_IMMUTABLE",
        "NET_BIND_SERVICE",
        "NET_BROADCAST",
        "NET_ADMIN",
        "NET_RAW",
        "IPC_LOCK",
        "IPC_OWNER",
        "SYS_MODULE",
        "SYS_RAWIO",
        "SYS_CHROOT",
        "SYS_PTRACE",
        "SYS_PACCT",
        "SYS_ADMIN",
        "SYS_BOOT",
        "SYS_NICE",
        "SYS_RESOURCE",
        "SYS_TIME",
        "SYS_TTY_CONFIG",
        "MKNOD",
        "LEASE",
        "AUDIT_WRITE",
        "AUDIT_CONTROL",
        "SETFCAP",
        "MAC_OVERRIDE",
        "MAC_ADMIN",
        "SYSLOG",
        "WAKE_ALARM",
        "BLOCK_SUSPEND",
        "AUDIT_READ",
        "PERFMON",
        "BPF",
        "CHECKPOINT_RESTORE",
    ]
)


def capability_error(cap_add: tuple[str, ...], cap_drop: tuple[str, ...]) -> str | None:
    """Docker's refusal of an unknown capability at create (``NormalizeLegacyCapabilities``:
    upper case, ``CAP_`` added when missing, ``ALL`` special), or ``None``."""
    for field, names in (("CapAdd", cap_add), ("CapDrop", cap_drop)):
        for name in names:
            upper = name.upper()
            if upper == "ALL":
                continue
            full = upper if upper.startswith("CAP_") else "CAP_" + upper
            if full not in _CAPABILITIES:
                return f'invalid {field}: unknown capability: "{full}"'
    return None


def sysctl_start_error(spec: CreateSpec | None) -> str | None:
    """runc's refusal, at start, of a sysctl that no namespace of the container holds
    (its ``sysctl`` validator: the IPC ones, ``net.*``), or ``None``."""
    names = [name for name, _ in spec.security.sysctls] if spec is not None else []
    ipc = {"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem", "kernel.shmall"}
    ipc |= {"kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced"}
    for name in names:
        if name in ipc or name.startswith(("fs.mqueue.", "net.")):
            continue
        return (
            "failed to create shim task: OCI runtime create failed: runc create failed: "
            f'sysctl "{name}" is not in a separate kernel namespace: unknown'
        )
    return None


def security_refusal(spec: CreateSpec, apparmor: bool, seccomp: bool) -> str | None:
    """Why a create's security settings are refused: a profile of a feature the engine's
    host lacks (``apparmor``, ``seccomp``: whether it has them), or a Localhost seccomp
    profile that cannot be read - in ``DockerRuntime``'s words, which refuses these
    before the engine sees them - or an unknown capability, in Docker's."""
    security = spec.security
    refusal = profile_refusal(spec, apparmor, seccomp)
    return refusal or capability_error(security.cap_add, security.cap_drop)


def profile_refusal(spec: CreateSpec, apparmor: bool, seccomp: bool) -> str | None:
    """What ``DockerRuntime`` refuses before the engine sees it (``security_refusal``'s
    profiles), or ``None``."""
    security = spec.security
    for feature, profile, present in (
        ("AppArmor", security.apparmor, apparmor),
        ("seccomp", security.seccomp, seccomp),
    ):
        if profile not in ("", "unconfined") and not present:
            return (
                f"{feature} profile {profile} asked for, but {feature} is not enabled on "
                "the Docker engine's host: podsync does not run the container without it"
            )
    if security.seccomp.startswith("localhost/"):
        path = security.seccomp.removeprefix("localhost/")
        try:
            with open(path, encoding="utf-8") as file:
                file.read()
        except FileNotFoundError:
            return f"seccomp profile {path} does not exist"
        except (OSError, UnicodeDecodeError) as exc:
            return f"cannot read seccomp profile {path}: {exc}"
    return None


def port_refusal(spec: CreateSpec) -> str | None:
    """Docker's refusal of a published port outside 0-65535, container side first
    (``nat.ParsePortSpecs``, before any other check of the create: an answer of 400)."""
    for port in spec.ports:
        for number in (port.container_port, port.host_port):
            if not 0 <= number <= 65535:
                return f'invalid port specification: "{number}"'
    return None


def tmpfs_refusal(spec: CreateSpec) -> str | None:
    """Docker's refusal of ``spec.tmpfs``: a relative path, or one a bind also uses; and
    of two binds (host paths, named volumes, or a volume's file: ``file_mounts`` are
    binds too) at one place."""
    binds: set[str] = set()
    paths = [m.container_path for m in spec.mounts] + [v.container_path for v in spec.volumes]
    for path in paths + [f.container_path for f in spec.file_mounts]:
        if path in binds:
            return f"Duplicate mount point: {path}"
        binds.add(path)
    for t in spec.tmpfs:
        if not t.container_path.startswith("/"):
            return f"invalid mount path: '{t.container_path}' mount path must be absolute"
        if t.container_path in binds:
            return f"Duplicate mount point: {t.container_path}"
    return None


#: Docker's local volume driver's names (volume/local/local.go, ``validName``), as its
#: error message spells the pattern.
_VOLUME_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]*", re.ASCII)
_VOLUME_NAME_CHARS = "[a-zA-Z0-9][a-zA-Z0-9_.-]"


def volume_name_refusal(name: str) -> str | None:
    """The local volume driver's refusal of ``name`` (``validateName``: one character
    is too short, then the pattern), in its words, or ``None``. Docker says it when the
    volume is created, by ``docker volume create`` or by a container that mounts it."""
    if len(name) == 1:
        return (
            f"create {name}: volume name is too short, names should be at least two "
            "alphanumeric characters"
        )
    if not _VOLUME_NAME.fullmatch(name):
        return (
            f'create {name}: "{name}" includes invalid characters for a local volume name, '
            f'only "{_VOLUME_NAME_CHARS}" are allowed. If you intended to pass a host '
            "directory, use absolute path"
        )
    return None


def create_refusal(
    spec: CreateSpec, apparmor: bool, seccomp: bool
) -> tuple[str, int | None] | None:
    """Docker's refusal at create of ``spec``'s security settings (``security_refusal``)
    or of its tmpfs mounts (``tmpfs_refusal``), in that order, with the engine's HTTP
    status (400; ``None`` for a profile ``DockerRuntime`` refuses before the engine
    answers); ``None`` when neither."""
    refusal = profile_refusal(spec, apparmor, seccomp)
    if refusal is not None:
        return refusal, None
    security = spec.security
    refusal = capability_error(security.cap_add, security.cap_drop) or tmpfs_refusal(spec)
    return None if refusal is None else (refusal, 400)
