"""A remote engine for the tests: one extra ``dockerd`` (``tests/support/engines.py``)
reached the three ways the docker CLI reaches an engine on another machine, all on
loopback.

* ``unix://DIR/docker.sock``: its own socket, what the test itself uses to look;
* ``tcp://127.0.0.1:<port>`` with ``--tlsverify``: a certificate signed by a CA made
  for the test (:func:`make_ca`, with ``openssl``; throwaway, one day), and clients must
  show a certificate of the same CA;
* ``ssh://root@127.0.0.1:<port>``: a real ``sshd`` (Debian's ``openssh-server``) on its
  own port and configuration, key authentication only, a throwaway host key and user
  key, whose sessions have ``DOCKER_HOST`` set to the engine's socket, so that
  ``docker system dial-stdio`` (what the docker CLI and SDK run over ssh) reaches it.

The ssh client is the ``ssh`` command, which reads only the user's ``~/.ssh`` (from the
password database, not ``HOME``): :attr:`SSHServer.bin` holds an ``ssh`` that runs the
real one with ``-F`` a configuration of the test's (its key, its known hosts, batch
mode); put it first on ``PATH``.

Use it through the :func:`remote_engine` fixture (import it into the test module). It
depends on the session's ``engine`` fixture: its tests carry the ``engine`` marker; it
skips without ``dockerd``, ``openssl`` or ``sshd`` - or fails under
``PODSYNC_REQUIRE_ENGINE=1`` (``.ci/test`` installs ``openssh-server``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import docker
import pytest

from tests.support.engines import ExtraEngine, copy_images, free_port

__all__ = ["SSHD", "RemoteEngine", "SSHServer", "TestCA", "make_ca", "remote_engine"]

#: Debian's sshd (openssh-server); it must be started by its absolute path.
SSHD = "/usr/sbin/sshd"

_START_TIMEOUT = 60.0


def _run(*command: str | Path) -> None:
    subprocess.run(
        [str(c) for c in command], check=True, capture_output=True, timeout=60, text=True
    )


@attrs.frozen
class TestCA:
    """A certificate authority made for a test, and what it signed: the engine's
    certificate (for ``127.0.0.1``) and a client's, in ``directory``. ``client`` is a
    directory laid out as ``DOCKER_CERT_PATH`` wants it: ``ca.pem``, ``cert.pem``,
    ``key.pem``."""

    __test__ = False  # not a pytest test class

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def server_cert(self) -> Path:
        return self.directory / "server-cert.pem"

    @property
    def server_key(self) -> Path:
        return self.directory / "server-key.pem"

    @property
    def client(self) -> Path:
        return self.directory / "client"


def make_ca(directory: Path, name: str) -> TestCA:
    """A new CA named ``name`` in ``directory``, with a server certificate for
    ``IP:127.0.0.1`` and a client certificate (EC P-256 keys: fast to make)."""
    directory.mkdir(parents=True)
    ca = TestCA(directory)
    key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    ca_key = directory / "ca-key.pem"
    _run("openssl", "req", "-x509", *key, "-keyout", ca_key, "-out", ca.ca, "-days", "1",
         "-subj", f"/CN={name}")  # fmt: skip

    def sign(cert: Path, cert_key: Path, common_name: str, extensions: str) -> None:
        request = directory / f"{common_name}.csr"
        extfile = directory / f"{common_name}.ext"
        extfile.write_text(extensions)
        _run("openssl", "req", "-new", *key, "-keyout", cert_key, "-out", request,
             "-subj", f"/CN={common_name}")  # fmt: skip
        _run("openssl", "x509", "-req", "-in", request, "-CA", ca.ca, "-CAkey", ca_key,
             "-CAcreateserial", "-out", cert, "-days", "1", "-extfile", extfile)  # fmt: skip

    sign(ca.server_cert, ca.server_key, "127.0.0.1",
         "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")  # fmt: skip
    ca.client.mkdir()
    sign(ca.client / "cert.pem", ca.client / "key.pem", "client",
         "extendedKeyUsage=clientAuth\n")  # fmt: skip
    shutil.copy(ca.ca, ca.client / "ca.pem")
    return ca


@attrs.define
class SSHServer:
    """A real ``sshd`` on ``127.0.0.1:port`` whose sessions reach ``docker_host``; key
    authentication only (root, with the key ``user_key``)."""

    directory: Path
    port: int
    docker_host: str
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"ssh://root@127.0.0.1:{self.port}"

    @property
    def user_key(self) -> Path:
        return self.directory / "user_key"

    @property
    def bin(self) -> Path:
        """A directory with an ``ssh`` that uses the test's client configuration."""
        return self.directory / "bin"

    @property
    def log(self) -> Path:
        return self.directory / "sshd.log"

    def prepare(self) -> None:
        d = self.directory
        d.mkdir(parents=True)
        for key in ("host_key", "user_key", "stranger_key"):
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", key, "-f", d / key)
        (d / "authorized_keys").write_text((d / "user_key.pub").read_text())
        host_public = (d / "host_key.pub").read_text().split()
        (d / "known_hosts").write_text(
            f"[127.0.0.1]:{self.port} {host_public[0]} {host_public[1]}\n"
        )
        (d / "sshd_config").write_text(
            f"Port {self.port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {d / 'host_key'}\n"
            f"AuthorizedKeysFile {d / 'authorized_keys'}\n"
            f"PidFile {d / 'sshd.pid'}\n"
            "PubkeyAuthentication yes\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "PermitRootLogin prohibit-password\n"
            "UsePAM no\n"
            # The test's directory is under /tmp (world-writable, sticky).
            "StrictModes no\n"
            f"SetEnv DOCKER_HOST={self.docker_host}\n"
        )
        (d / "ssh_config").write_text(self.client_config(self.user_key))
        self.bin.mkdir()
        wrapper = self.bin / "ssh"
        ssh = shutil.which("ssh") or "/usr/bin/ssh"
        wrapper.write_text(f'#!/bin/sh\nexec {ssh} -F {d / "ssh_config"} "$@"\n')
        wrapper.chmod(0o755)

    def client_config(self, key: Path) -> str:
        """An ssh client configuration that logs in with ``key`` and trusts only this
        server's host key."""
        return (
            "Host *\n"
            f"  IdentityFile {key}\n"
            "  IdentitiesOnly yes\n"
            "  IdentityAgent none\n"
            f"  UserKnownHostsFile {self.directory / 'known_hosts'}\n"
            "  GlobalKnownHostsFile /dev/null\n"
            "  StrictHostKeyChecking yes\n"
            "  BatchMode yes\n"
            "  ConnectTimeout 10\n"
            "  LogLevel ERROR\n"
        )

    def use_key(self, key: Path) -> None:
        """Log in with ``key`` from now on (``stranger_key``: one sshd does not know)."""
        (self.directory / "ssh_config").write_text(self.client_config(key))

    def start(self) -> None:
        # sshd wants its privilege separation directory (made by its init script).
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.directory / "sshd_config")],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log.read_text(errors='replace')}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 2),
            ):
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"sshd did not listen: {self.log.read_text(errors='replace')}")
            time.sleep(0.05)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


@attrs.frozen
class RemoteEngine:
    """The engine, its TLS port and CA, another CA it does not trust, and its sshd."""

    engine: ExtraEngine
    tls_address: str
    ca: TestCA
    stranger_ca: TestCA
    ssh: SSHServer


@contextlib.contextmanager
def start_remote_engine(source: docker.DockerClient) -> Iterator[RemoteEngine]:
    """Start the engine (with the test images of ``source``) and its sshd; stop both and
    remove their files after."""
    for tool in ("dockerd", "openssl", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            raise FileNotFoundError(f"no {tool} on PATH")
    if not os.path.exists(SSHD):
        raise FileNotFoundError(f"no {SSHD} (Debian: apt-get install openssh-server)")
    root = Path(tempfile.mkdtemp(prefix="podsync-remote-", dir="/tmp"))
    ca = make_ca(root / "ca", "podsync test CA")
    stranger = make_ca(root / "stranger", "a CA nobody trusts")
    port = free_port()
    engine = ExtraEngine(
        "remote",
        f"unix://{root / 'e' / 'docker.sock'}",
        root / "e",
        extra_args=(
            "-H",
            f"tcp://127.0.0.1:{port}",
            "--tlsverify",
            "--tlscacert",
            str(ca.ca),
            "--tlscert",
            str(ca.server_cert),
            "--tlskey",
            str(ca.server_key),
        ),
    )
    ssh = SSHServer(root / "ssh", free_port(), engine.address)
    try:
        ssh.prepare()
        engine.start()
        copy_images(source, [engine])
        ssh.start()
        yield RemoteEngine(engine, f"tcp://127.0.0.1:{port}", ca, stranger, ssh)
    finally:
        ssh.stop()
        engine.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def remote_engine(engine: docker.DockerClient) -> Iterator[RemoteEngine]:
    """One engine at a socket, a ``--tlsverify`` port and an sshd; once per module."""
    try:
        started = start_remote_engine(engine)
        remote = started.__enter__()
    except (FileNotFoundError, RuntimeError, subprocess.CalledProcessError) as exc:
        if os.environ.get("PODSYNC_REQUIRE_ENGINE", "") not in ("", "0"):
            pytest.fail(f"cannot start the remote engine: {exc} (PODSYNC_REQUIRE_ENGINE=1)")
        pytest.skip(f"cannot start the remote engine: {exc}")
    try:
        yield remote
    finally:
        started.__exit__(None, None, None)
