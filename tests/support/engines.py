"""Extra Docker engines for the tests that need more than one: a "fleet" on one machine.

Each extra engine is a real ``dockerd`` started here, with a data root, an exec root
(where it runs its own containerd), a pid file and an address of its own, so that
several run beside the session's engine (``DOCKER_HOST``) without sharing anything::

    dockerd --bridge=none --iptables=false --ip-masq=false -H <address>
            --data-root DIR/data --exec-root DIR/exec --pidfile DIR/dockerd.pid
            --shutdown-timeout=2

The address is ``unix://DIR/docker.sock``, or ``tcp://127.0.0.1:<a free port>`` (loopback
only: the network rule of the engine tests holds for the engines too). No bridge, no
iptables: their containers get network mode ``none`` or ``container:<id>`` only.

Images are never pulled: the session engine's test images are copied into each new
engine as ``docker save | docker load`` does (:func:`copy_images`).

Use them through the fixtures below (import them into the test module: ``from
tests.support.engines import unix_engines``), which start the engines once per test module and
stop them after; or :func:`start_engines` / :func:`stop_engines` directly. The fixtures
depend on the session's ``engine`` fixture, so their tests carry the ``engine`` marker:
they skip without an engine, and fail under ``PODSYNC_REQUIRE_ENGINE=1`` - as they do
when ``dockerd`` itself is missing or an engine does not come up.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import docker
import docker.errors
import pytest
import requests

from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE

__all__ = [
    "DEFAULT_ENGINES",
    "ExtraEngine",
    "copy_images",
    "free_port",
    "start_engines",
    "stop_engines",
    "tcp_engines",
    "unix_engines",
]

#: How many engines the fixtures start: three "hosts".
DEFAULT_ENGINES = 3

# dockerd answers within a second or two on an idle machine; a loaded CI machine with
# two CPUs shared by several test runs needs more.
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 30.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@attrs.define
class ExtraEngine:
    """One extra ``dockerd``: its name, its address (``-H``) and its directory.

    ``start()`` starts it (again: its images and containers are kept in its data root),
    ``stop()`` stops it; ``client()`` is a new client for it (the caller closes it)."""

    name: str
    address: str
    directory: Path
    process: subprocess.Popen[bytes] | None = None
    #: More dockerd arguments: another ``-H`` (a TLS port beside the socket), ``--tls*``.
    extra_args: tuple[str, ...] = ()

    @property
    def log(self) -> Path:
        return self.directory / "dockerd.log"

    def command(self) -> list[str]:
        d = self.directory
        return [
            "dockerd",
            "--bridge=none",
            "--iptables=false",
            "--ip-masq=false",
            "-H",
            self.address,
            "--data-root",
            str(d / "data"),
            "--exec-root",
            str(d / "exec"),
            "--pidfile",
            str(d / "dockerd.pid"),
            # Containers that ignore SIGTERM (busybox sleep as PID 1) are killed after
            # 2 s when the engine stops, not the default 15 s.
            "--shutdown-timeout=2",
            *self.extra_args,
        ]

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = _START_TIMEOUT) -> None:
        """Start the engine and wait until it answers a ping.

        Raises:
            RuntimeError: ``dockerd`` exited, or did not answer within ``timeout``
                seconds (the message holds the end of its log).
        """
        if self.running:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            # A session of its own: the engine's containerd is in its process group,
            # which stop() signals as a whole if the engine does not stop in time.
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"dockerd {self.name} exited with code {self.process.returncode}: "
                    f"{self._log_tail()}"
                )
            if self._answers():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"dockerd {self.name} did not answer at {self.address} within "
                    f"{timeout:g}s: {self._log_tail()}"
                )
            time.sleep(0.05)

    def _listening(self) -> bool:
        """Something accepts connections at the address (checked with a socket of our
        own: the SDK's unix transport leaves a socket unclosed when connect fails)."""
        try:
            if self.address.startswith("unix://"):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    probe.settimeout(5)
                    probe.connect(self.address.removeprefix("unix://"))
            else:
                host, _, port = self.address.removeprefix("tcp://").rpartition(":")
                with socket.create_connection((host, int(port)), timeout=5):
                    pass
        except OSError:
            return False
        return True

    def _answers(self) -> bool:
        if not self._listening():
            return False
        # A fixed (old) API version: "auto" would connect in the constructor, and leave
        # its socket to the garbage collector when the engine is not there yet.
        client = docker.APIClient(base_url=self.address, timeout=5, version="1.24")
        try:
            return bool(client.ping())
        except (docker.errors.DockerException, requests.RequestException, OSError):
            return False
        finally:
            client.close()

    def _log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError as exc:
            return f"(no log: {exc})"
        return " | ".join(text.strip().splitlines()[-lines:])

    def stop(self, timeout: float = _STOP_TIMEOUT) -> None:
        """Stop the engine (SIGTERM: it stops its containers' tasks and its containerd
        first); after ``timeout`` seconds its whole process group is killed."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        self.process = None

    def client(self) -> docker.DockerClient:
        """A new client for this engine (API version negotiated)."""
        return docker.DockerClient(base_url=self.address, timeout=60, version="auto")

    def remove_all_containers(self) -> None:
        """Force-remove every container: the engine is the tests' own, whatever runs
        on it was made by a test."""
        with contextlib.closing(self.client()) as client:
            for found in client.api.containers(all=True):
                with contextlib.suppress(docker.errors.NotFound):
                    client.api.remove_container(found["Id"], force=True, v=True)


def copy_images(
    source: docker.DockerClient,
    targets: Iterable[ExtraEngine],
    references: Iterable[str] = (TEST_IMAGE, PAUSE_IMAGE),
) -> None:
    """``docker save REF | docker load`` from ``source`` into every target engine, for
    each reference (tags included). Nothing is pulled."""
    saved = [b"".join(source.api.get_image(ref)) for ref in references]
    for target in targets:
        with contextlib.closing(target.client()) as client:
            for archive in saved:
                client.api.load_image(archive)


def start_engines(
    count: int = DEFAULT_ENGINES,
    *,
    transport: str = "unix",
    source: docker.DockerClient | None = None,
    base: Path | None = None,
) -> list[ExtraEngine]:
    """Start ``count`` extra engines (named ``host-0``, ``host-1``, ...) at ``unix://``
    sockets or ``tcp://127.0.0.1`` ports (``transport``), concurrently, each with the
    test images of ``source`` loaded. On any failure the engines started are stopped and
    their directories removed before the error is raised.

    Raises:
        FileNotFoundError: no ``dockerd`` on ``PATH``.
        RuntimeError: an engine did not come up.
    """
    if transport not in ("unix", "tcp"):
        raise ValueError(f"transport must be 'unix' or 'tcp', not {transport!r}")
    if shutil.which("dockerd") is None:
        raise FileNotFoundError("no dockerd on PATH (Debian: apt-get install docker.io)")
    # Short paths: a unix socket's path must fit in 108 bytes.
    root = Path(tempfile.mkdtemp(prefix="podsync-engines-", dir=base or "/tmp"))
    engines = []
    for i in range(count):
        directory = root / f"e{i}"
        if transport == "unix":
            address = f"unix://{directory / 'docker.sock'}"
        else:
            address = f"tcp://127.0.0.1:{free_port()}"
        engines.append(ExtraEngine(f"host-{i}", address, directory))
    try:
        problems: list[BaseException] = []

        def begin(engine: ExtraEngine) -> None:
            try:
                engine.start()
            except BaseException as exc:  # reported below, after every start ended
                problems.append(exc)

        threads = [threading.Thread(target=begin, args=(e,)) for e in engines]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if problems:
            raise problems[0]
        if source is not None:
            copy_images(source, engines)
    except BaseException:
        stop_engines(engines)
        raise
    return engines


def stop_engines(engines: Iterable[ExtraEngine]) -> None:
    """Stop the engines and remove their directories (and the directory above, made by
    ``start_engines``, once it is empty)."""
    engines = list(engines)
    # Signalled all at once: each takes a second or two to stop its containerd.
    for engine in engines:
        if engine.running:
            assert engine.process is not None
            engine.process.send_signal(signal.SIGTERM)
    for engine in engines:
        engine.stop()
    parents = {engine.directory.parent for engine in engines}
    for engine in engines:
        shutil.rmtree(engine.directory, ignore_errors=True)
    for parent in parents:
        with contextlib.suppress(OSError):
            parent.rmdir()


def _required() -> bool:
    return os.environ.get("PODSYNC_REQUIRE_ENGINE", "") not in ("", "0")


@contextlib.contextmanager
def _fleet(engine: docker.DockerClient, transport: str) -> Iterator[list[ExtraEngine]]:
    try:
        engines = start_engines(transport=transport, source=engine)
    except (FileNotFoundError, RuntimeError, docker.errors.DockerException) as exc:
        if _required():
            pytest.fail(f"cannot start the extra engines: {exc} (PODSYNC_REQUIRE_ENGINE=1)")
        pytest.skip(f"cannot start the extra engines: {exc}")
    try:
        yield engines
    finally:
        stop_engines(engines)


@pytest.fixture(scope="module")
def unix_engines(engine: docker.DockerClient) -> Iterator[list[ExtraEngine]]:
    """Three extra engines at ``unix://`` sockets, with the test images; started once
    per test module."""
    with _fleet(engine, "unix") as engines:
        yield engines


@pytest.fixture(scope="module")
def tcp_engines(engine: docker.DockerClient) -> Iterator[list[ExtraEngine]]:
    """Three extra engines at ``tcp://127.0.0.1:<port>``, with the test images; started
    once per test module."""
    with _fleet(engine, "tcp") as engines:
        yield engines
