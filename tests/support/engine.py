"""Helpers for the tests that run against a real Docker engine.

No registry can be reached, so no test ever pulls: the images the tests use are built
here, locally, by ``docker import`` of a tarball made in memory from the host's static
busybox (Debian's ``busybox-static``). ``.ci/test`` and the ``engine`` fixture in
``tests/conftest.py`` both call :func:`ensure_test_images`.

The network rule for engine tests: containers use network mode ``none`` or
``container:<id>`` only, and no test connects to a container's address or to any
address off the loopback.

Every container a test creates carries ``TEST_LABEL`` with this run's :data:`RUN_ID` as
its value (:func:`run_labels`; a function not named ``test_*``, which pytest would collect
where it is imported), so that a run removes what it made - and only that:
several runs may share one engine (developers on one machine), and one run must not
remove another's containers while it runs. Leftovers of runs that died are removed by
:func:`remove_stale_test_containers`.

Run as a module (what ``.ci/test`` does): ``python -m tests.support.engine ping`` (exit 0 when an
engine answers), ``python -m tests.support.engine images`` (build the images when missing),
``python -m tests.support.engine cleanup`` (remove every test container of every run).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import os
import secrets
import socket
import struct
import sys
import tarfile
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import docker
import docker.errors
import requests

__all__ = [
    "APPLETS",
    "BUSYBOX_PATHS",
    "DEFAULT_DOCKER_HOST",
    "DEFAULT_PODMAN_HOST",
    "ENGINES_ENV",
    "ENGINE_NAMES",
    "PAUSE_IMAGE",
    "PODMAN_HOST_ENV",
    "RUN_ID",
    "TEST_IMAGE",
    "TEST_LABEL",
    "Cleanup",
    "EngineUnreachable",
    "ImageSpec",
    "configured_engines",
    "connect",
    "docker_host",
    "engine_address",
    "engine_docker_host",
    "ensure_test_images",
    "find_busybox",
    "free_host_port",
    "free_host_ports",
    "image_specs",
    "remove_all_test_containers",
    "remove_containers",
    "remove_run_containers",
    "remove_stale_test_containers",
    "remove_volumes",
    "rootfs_tarball",
    "run_labels",
    "tag_image",
]

TEST_IMAGE = "podsync-test/busybox:latest"
"""The app image: busybox and its applets under /bin; by default sleeps for an hour (as
PID 1 it ignores SIGTERM, so ``stop`` waits out its timeout and then kills it)."""

PAUSE_IMAGE = "podsync-test/pause:latest"
"""The pod network container's image: sleeps forever and exits 0 at once on SIGTERM or
SIGINT (a plain ``sleep`` as PID 1 would ignore them)."""

TEST_LABEL = "io.podsync.test"
"""The label every test container carries; its value is the run's :data:`RUN_ID`."""

RUN_ID = f"{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(3)}"
"""This process's run: ``<hostname>.<pid>.<random>``."""

DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"

BUSYBOX_PATHS = ("/usr/bin/busybox", "/bin/busybox")
"""Where Debian's busybox-static puts the binary (both, on a merged /usr)."""

# The applets linked under /bin in the test images (all of them run as ``busybox``).
APPLETS = (
    "[", "ash", "awk", "basename", "cat", "chmod", "cp", "cut", "date", "dirname", "du",
    "echo", "env", "expr", "false", "find", "grep", "head", "hostname", "httpd", "id",
    "kill", "ln", "ls", "mkdir", "mktemp", "mv", "nc", "pidof", "printf", "ps", "pwd",
    "readlink", "rm", "rmdir", "sed", "seq", "sh", "sleep", "sort", "stat", "sync", "tail",
    "tee", "test", "timeout", "touch", "tr", "true", "uname", "uniq", "usleep", "wc",
    "wget", "which", "xargs",
)  # fmt: skip

_PAUSE_SCRIPT = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"

# Each image also carries a tag naming its recipe (a hash of the root file system and the
# import changes), so that a changed recipe or busybox replaces an image built before.
_RECIPE_TAG_PREFIX = "recipe-"


@attrs.frozen
class ImageSpec:
    """One test image: its ``repository:tag`` and the Dockerfile instructions
    (``docker import --change``) applied on import."""

    reference: str
    changes: tuple[str, ...]

    @property
    def repository(self) -> str:
        return self.reference.rpartition(":")[0]

    @property
    def tag(self) -> str:
        return self.reference.rpartition(":")[2]


def image_specs() -> tuple[ImageSpec, ...]:
    """The test images: the app image and the pause image, from the same root file system."""
    return (
        ImageSpec(TEST_IMAGE, (f"CMD {json.dumps(['/bin/sleep', '3600'])}",)),
        ImageSpec(PAUSE_IMAGE, (f"CMD {json.dumps(['/bin/sh', '-c', _PAUSE_SCRIPT])}",)),
    )


def run_labels(**extra: str) -> dict[str, str]:
    """The labels to give every container a test creates: ``TEST_LABEL=RUN_ID`` plus ``extra``."""
    return {TEST_LABEL: RUN_ID, **extra}


def docker_host() -> str:
    """The engine address the Docker SDK uses (``DOCKER_HOST``, else the default socket).

    During the engine tests of one engine, ``DOCKER_HOST`` is that engine's address (the
    ``engine_name`` fixture of ``tests/engine/conftest.py`` sets it)."""
    return os.environ.get("DOCKER_HOST") or DEFAULT_DOCKER_HOST


# --- the engines -----------------------------------------------------------------------

ENGINES_ENV = "PODSYNC_TEST_ENGINES"
"""The engines the engine tests run on, comma-separated (``docker,podman``; unset:
``docker``). Every engine test runs once per engine named."""

ENGINE_NAMES = ("docker", "podman")

PODMAN_HOST_ENV = "PODSYNC_PODMAN_HOST"
"""The podman service's address for the tests (default :data:`DEFAULT_PODMAN_HOST`,
where ``.ci/podman`` serves it)."""

DEFAULT_PODMAN_HOST = "unix:///run/podsync-podman/podman.sock"

# Read once, when the session starts: the podman tests set DOCKER_HOST to podman's
# address while they run, and the Docker tests after them must still find dockerd.
_SESSION_ENVIRON = {k: v for k, v in os.environ.items() if k in ("DOCKER_HOST", PODMAN_HOST_ENV)}


def configured_engines(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """The engines named by :data:`ENGINES_ENV` (``docker`` when it is unset or empty),
    in order, each once; a name podsync's tests do not know is a ``ValueError``."""
    raw = (os.environ if environ is None else environ).get(ENGINES_ENV, "") or "docker"
    names = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [name for name in names if name not in ENGINE_NAMES]
    if unknown or not names:
        raise ValueError(
            f"{ENGINES_ENV}={raw!r}: the engines are {', '.join(ENGINE_NAMES)}"
            f" (comma-separated), not {', '.join(unknown) or 'nothing'}"
        )
    return names


def engine_docker_host(name: str) -> str | None:
    """What ``DOCKER_HOST`` is while the tests of the engine ``name`` run: podman's
    address, or for Docker what it was when the session started (``None``: unset, so
    that a test may tell the default engine from a configured one)."""
    if name == "podman":
        return engine_address(name)
    return _SESSION_ENVIRON.get("DOCKER_HOST")


def engine_address(name: str) -> str:
    """The address of the engine ``name`` for this session: Docker's is ``DOCKER_HOST``
    (else the default socket), podman's :data:`PODMAN_HOST_ENV` (else
    :data:`DEFAULT_PODMAN_HOST`), both as they were when the session started."""
    if name == "podman":
        return _SESSION_ENVIRON.get(PODMAN_HOST_ENV) or DEFAULT_PODMAN_HOST
    return _SESSION_ENVIRON.get("DOCKER_HOST") or DEFAULT_DOCKER_HOST


class EngineUnreachable(RuntimeError):
    """No engine answers at the address asked for."""


def connect(timeout: int = 60, host: str | None = None) -> docker.DockerClient:
    """A client for the engine at ``host`` (``None``: ``DOCKER_HOST``), after a ping;
    raises :class:`EngineUnreachable` (with the SDK's reason) when none answers.

    The API version is negotiated (Debian 12's engine speaks 1.41). When the engine is
    missing, ``docker.from_env()`` raises from inside the client's constructor and leaves
    its socket to the garbage collector; that is collected here with its
    ``ResourceWarning`` silenced, since the suite turns warnings into errors.
    """
    problem = ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            if host is None:
                client = docker.from_env(timeout=timeout)
            else:
                client = docker.DockerClient(base_url=host, version="auto", timeout=timeout)
            try:
                client.ping()
            except BaseException:
                client.close()
                raise
        except (docker.errors.DockerException, requests.RequestException, OSError) as exc:
            problem = str(exc) or type(exc).__name__
        if problem:
            gc.collect()
    if problem:
        raise EngineUnreachable(f"no engine answers at {host or docker_host()}: {problem}")
    return client


# --- the images ------------------------------------------------------------------------


def find_busybox(paths: Iterable[str] = BUSYBOX_PATHS) -> Path:
    """The host's busybox binary; it must be static, since the images hold no libc."""
    for candidate in paths:
        path = Path(candidate)
        if path.is_file():
            try:
                static = _is_static_elf(path.read_bytes())
            except (ValueError, struct.error) as exc:
                raise RuntimeError(f"{path} is not a readable ELF binary: {exc}") from exc
            if not static:
                raise RuntimeError(
                    f"{path} is dynamically linked; the test images need a static busybox"
                    " (Debian: apt-get install busybox-static)"
                )
            return path
    raise FileNotFoundError(
        f"no busybox at {' or '.join(paths)}; the test images are built from it"
        " (Debian: apt-get install busybox-static)"
    )


def _is_static_elf(data: bytes) -> bool:
    """True for an ELF executable without a program interpreter (PT_INTERP)."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF binary")
    wide = data[4] == 2  # ELFCLASS64
    order = "<" if data[5] == 1 else ">"  # ELFDATA2LSB
    if wide:
        (phoff,) = struct.unpack_from(order + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x36)
    else:
        (phoff,) = struct.unpack_from(order + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x2A)
    pt_interp = 3
    for i in range(phnum):
        (p_type,) = struct.unpack_from(order + "I", data, phoff + i * phentsize)
        if p_type == pt_interp:
            return False
    return True


def rootfs_tarball(busybox: bytes) -> bytes:
    """The images' root file system as an uncompressed tarball, byte-for-byte reproducible:
    ``/bin/busybox``, a symlink per applet, /tmp, and an /etc/passwd with root and nobody."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:

        def add(name: str, kind: bytes, mode: int, data: bytes = b"", target: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime = kind, mode, 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.linkname = target
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

        for directory, mode in (
            ("bin", 0o755), ("dev", 0o755), ("etc", 0o755), ("proc", 0o555),
            ("root", 0o700), ("sys", 0o555), ("tmp", 0o1777), ("var", 0o755),
        ):  # fmt: skip
            add(directory, tarfile.DIRTYPE, mode)
        add("bin/busybox", tarfile.REGTYPE, 0o755, busybox)
        for applet in APPLETS:
            add(f"bin/{applet}", tarfile.SYMTYPE, 0o777, target="busybox")
        add(
            "etc/passwd",
            tarfile.REGTYPE,
            0o644,
            b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
        )
        add("etc/group", tarfile.REGTYPE, 0o644, b"root:x:0:\nnogroup:x:65534:\n")
    return buf.getvalue()


def _recipe_tag(rootfs: bytes, spec: ImageSpec) -> str:
    digest = hashlib.sha256(rootfs)
    digest.update(json.dumps(spec.changes).encode())
    return _RECIPE_TAG_PREFIX + digest.hexdigest()[:16]


def _image_id(client: docker.DockerClient, reference: str) -> str | None:
    try:
        return str(client.images.get(reference).id)
    except docker.errors.ImageNotFound:
        return None


def ensure_test_images(client: docker.DockerClient, busybox: Path | None = None) -> list[str]:
    """Import (or re-tag) the test images that are missing or out of date; return those
    updated.

    An image is up to date when its ``latest`` tag and the tag naming its recipe (a hash
    of the root file system and the import changes) are the same image, so the check is
    two inspects and a second call imports nothing.
    """
    rootfs = rootfs_tarball((busybox or find_busybox()).read_bytes())
    updated = []
    for spec in image_specs():
        recipe_ref = f"{spec.repository}:{_recipe_tag(rootfs, spec)}"
        built = _image_id(client, recipe_ref)
        current = _image_id(client, spec.reference)
        if built is not None and built == current:
            continue
        if built is None:
            # The tag rides in the repository (``repo:tag``), not in the ``tag``
            # parameter: podman's Docker-compatible import ignores that parameter and
            # tags ``latest``; Docker parses either.
            client.api.import_image_from_data(
                rootfs, repository=recipe_ref, changes=list(spec.changes)
            )
            if _image_id(client, recipe_ref) is None:
                raise RuntimeError(f"docker import of {spec.reference} produced no image")
        client.api.tag(recipe_ref, spec.repository, spec.tag)
        _remove_old_recipes(client, spec.repository, keep=recipe_ref)
        if current is not None:
            _remove_if_untagged(client, current)
        updated.append(spec.reference)
    return updated


def _remove_if_untagged(client: docker.DockerClient, image_id: str) -> None:
    """Remove a replaced image that no tag names any more (one still in use stays)."""
    try:
        if client.images.get(image_id).tags:
            return
        client.api.remove_image(image_id)
    except docker.errors.APIError:
        pass


def _remove_old_recipes(client: docker.DockerClient, repository: str, keep: str) -> None:
    for image in client.api.images(name=repository):
        for ref in image.get("RepoTags") or ():
            # By tag: podman lists ``docker.io/<repository>:<tag>`` (Docker lists
            # the name as it was given).
            tag = ref.rpartition(":")[2]
            if tag.startswith(_RECIPE_TAG_PREFIX) and tag != keep.rpartition(":")[2]:
                # An image still used by a container stays (until a later import).
                with contextlib.suppress(docker.errors.APIError):
                    client.api.remove_image(ref)


def tag_image(client: docker.DockerClient, source: str, reference: str) -> None:
    """Tag the image ``source`` as ``reference`` (``repo[:tag]``), given to the engine
    as its repository and its tag apart.

    Docker's ``POST /images/{name}/tag`` parses ``repo`` as a whole reference, tag
    included, and takes it either way; podman's (4.3) refuses a ``repo`` that holds a
    tag ("normalizing name for compat API: invalid reference format"). Only for valid
    references: one with an empty tag (``busybox:``) would become ``busybox``."""
    slash, colon = reference.rfind("/"), reference.rfind(":")
    if colon > slash:
        client.api.tag(source, reference[:colon], reference[colon + 1 :])
    else:
        client.api.tag(source, reference)


# --- host ports ------------------------------------------------------------------------


def free_host_ports(client: docker.DockerClient, count: int = 1) -> tuple[int, ...]:
    """``count`` distinct host ports that a test's pods may publish on the shared engine:
    free on this host for both TCP and UDP (on every address, so on 127.0.0.1 too), and
    recorded by no container on the engine (``HostConfig.PortBindings``).

    The engine is shared (issue 30): the quickstart's demo pod ``default/web`` holds
    127.0.0.1:18080, other runs hold ports of their own, and podsync's admission rejects a
    pod whose host port a running pod holds, even in network mode ``none``, where the
    engine only records the binding. So no test may use a fixed host port.

    Race-safe enough: the kernel picks each port from its ephemeral range (bind to port
    0) and hands out ports of that range in turn, so one it has just released is not
    handed to another caller until the range wraps around; the sockets are held until
    all ``count`` are chosen, so they differ; and a port some container on the engine
    records (a running pod's, which publishes nothing in network mode ``none`` and so
    holds no socket) is skipped. What is left - another process binding the port
    between this call and the test's use - fails that one test with a clear error, and
    the fixed ports users pick (18080) lie below the ephemeral range.
    """
    recorded = _recorded_host_ports(client)
    ports: list[int] = []
    with contextlib.ExitStack() as held:
        while len(ports) < count:
            tcp = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            tcp.bind(("", 0))
            port = int(tcp.getsockname()[1])
            udp = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
            try:
                udp.bind(("", port))
            except OSError:
                continue  # taken for UDP: try another
            if port not in recorded:
                ports.append(port)
    return tuple(ports)


def free_host_port(client: docker.DockerClient) -> int:
    """One port of :func:`free_host_ports`."""
    (port,) = free_host_ports(client, 1)
    return port


def _recorded_host_ports(client: docker.DockerClient) -> set[int]:
    """The host ports some container on the engine records, running or not."""
    recorded = set()
    for container in client.api.containers(all=True):
        try:
            host_config = client.api.inspect_container(container["Id"])["HostConfig"]
        except docker.errors.NotFound:
            continue  # removed meanwhile
        for pairs in (host_config.get("PortBindings") or {}).values():
            for pair in pairs or ():
                if str(pair.get("HostPort") or "").isdigit():
                    recorded.add(int(pair["HostPort"]))
    return recorded


# --- cleanup ---------------------------------------------------------------------------


@attrs.define
class Cleanup:
    """Containers to force-remove when a test ends, besides those labelled with
    :func:`run_labels` (the ``cleanup`` fixture's value): register them by id or name, or
    by a label filter (``key`` or ``key=value``)."""

    refs: list[str] = attrs.field(factory=list)
    label_filters: list[str] = attrs.field(factory=list)
    volumes: list[str] = attrs.field(factory=list)

    def add(self, ref: str) -> str:
        """Register a container id or name; returns it."""
        self.refs.append(ref)
        return ref

    def add_volume(self, name: str) -> str:
        """Register a named volume, removed after the containers; returns its name."""
        self.volumes.append(name)
        return name

    def add_label(self, label_filter: str) -> None:
        """Register every container matching a label filter."""
        self.label_filters.append(label_filter)

    def remove(self, client: docker.DockerClient) -> None:
        """Remove what was registered, and this run's labelled containers."""
        remove_containers(client, self.refs)
        remove_run_containers(client, label_filters=self.label_filters)
        # The volumes podsync made for the pods registered by label (their state
        # volumes and records carry the pod uid label too).
        labelled = [
            v["Name"]
            for label_filter in self.label_filters
            for v in client.api.volumes(filters={"label": label_filter}).get("Volumes") or ()
        ]
        remove_volumes(client, [*self.volumes, *labelled])


def volume_path(client: docker.DockerClient, name: str) -> Path:
    """Where the local driver keeps the named volume ``name`` on the engine's host (the
    tests run beside the engine): its ``Mountpoint``."""
    return Path(client.api.inspect_volume(name)["Mountpoint"])


def remove_volumes(client: docker.DockerClient, names: Iterable[str]) -> list[str]:
    """Remove each named volume in ``names`` that exists (no container may use it any
    more); return those removed."""
    removed = []
    for name in names:
        try:
            client.api.remove_volume(name)
        except docker.errors.NotFound:
            continue
        removed.append(name)
    return removed


def remove_containers(client: docker.DockerClient, refs: Iterable[str]) -> list[str]:
    """Force-remove (with anonymous volumes) each container named or id'd in ``refs``
    that exists; return those removed.

    podman refuses to remove a container that others join (``container:<id>``) while
    they exist ("has dependent containers which must be removed before it"); Docker
    does not. A refused container is tried again after the others, until a round
    removes nothing more; then the last refusal is raised."""
    removed: list[str] = []
    pending = list(dict.fromkeys(refs))
    while pending:
        refused: list[str] = []
        last: docker.errors.APIError | None = None
        for ref in pending:
            try:
                client.api.remove_container(ref, force=True, v=True)
            except docker.errors.NotFound:
                continue
            except docker.errors.APIError as exc:
                if exc.status_code == 409 and "in progress" in str(exc):
                    continue  # another remover got there first
                if "dependent containers" not in str(exc):
                    raise
                refused.append(ref)
                last = exc
                continue
            removed.append(ref)
        if last is not None and len(refused) == len(pending):
            raise last
        pending = refused
    return removed


def _labelled(client: docker.DockerClient, label_filter: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.api.containers(all=True, filters={"label": label_filter})
    return found


def remove_run_containers(
    client: docker.DockerClient,
    run_id: str = RUN_ID,
    label_filters: Iterable[str] = (),
) -> list[str]:
    """Force-remove this run's containers (``TEST_LABEL=run_id``), and every container
    matching one of ``label_filters`` (``key`` or ``key=value``); return their ids."""
    ids: dict[str, None] = {}
    for label_filter in (f"{TEST_LABEL}={run_id}", *label_filters):
        ids.update(dict.fromkeys(c["Id"] for c in _labelled(client, label_filter)))
    return remove_containers(client, ids)


def remove_stale_test_containers(client: docker.DockerClient) -> list[str]:
    """Force-remove the test containers of runs on this host whose process has gone."""
    host = socket.gethostname()
    stale = []
    for container in _labelled(client, TEST_LABEL):
        run = (container.get("Labels") or {}).get(TEST_LABEL, "")
        run_host, _, rest = run.rpartition(".")[0].rpartition(".")
        if run_host == host and rest.isdigit() and not _process_alive(int(rest)):
            stale.append(container["Id"])
    return remove_containers(client, stale)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_all_test_containers(client: docker.DockerClient) -> list[str]:
    """Force-remove every container carrying ``TEST_LABEL``, of every run."""
    return remove_containers(client, [c["Id"] for c in _labelled(client, TEST_LABEL)])


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "images"
    try:
        client = connect()
    except EngineUnreachable as exc:
        print(exc, file=sys.stderr)
        return 1
    try:
        return _run(client, command)
    except (docker.errors.DockerException, requests.RequestException, OSError, RuntimeError) as exc:
        print(f"python -m tests.support.engine {command}: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()


def _run(client: docker.DockerClient, command: str) -> int:
    if command == "ping":
        version = client.version()
        print(
            f"Docker engine {version.get('Version')} (API {version.get('ApiVersion')})"
            f" at {docker_host()}"
        )
    elif command == "images":
        imported = ensure_test_images(client)
        for spec in image_specs():
            state = "updated" if spec.reference in imported else "up to date"
            print(f"{spec.reference}: {state}")
    elif command == "cleanup":
        print(f"removed {len(remove_all_test_containers(client))} test container(s)")
    else:
        print(
            f"usage: python -m tests.support.engine [ping|images|cleanup], not {command!r}",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def apply_refused(client: docker.DockerClient, source: Path, root: Path) -> int:
    """``podsync apply SOURCE`` (network none, the test pause image, root dir ``root``),
    asserting that it changed nothing on the engine; its exit code.

    For the bad-input rule: a refused pod file is an error naming the file and its
    ``$.path`` (the caller reads stderr) and leaves the engine as it was."""
    import podsync.cli

    before = _containers_and_states(client)
    code = podsync.cli.main(
        [
            "apply",
            "--no-delete",
            "--network-mode",
            "none",
            "--network-image",
            PAUSE_IMAGE,
            "--root-dir",
            str(root),
            str(source),
        ]
    )
    assert before == _containers_and_states(client)
    return code


def _containers_and_states(client: docker.DockerClient) -> dict[str, str]:
    """Every container on the engine and its state (``running``, ``exited``...). Not the
    whole listing: the engine is shared, and its ``Status`` of a container someone else
    runs (the quickstart's demo pods) reads "Up 3 seconds", then "Up 4 seconds"."""
    return {c["Id"]: c["State"] for c in client.api.containers(all=True)}
