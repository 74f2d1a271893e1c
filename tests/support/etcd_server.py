"""A real etcd for the tests: Debian's ``etcd`` (package ``etcd-server``) on 127.0.0.1.

Each ``EtcdServer`` has free ports, a data directory of its own under the test's
temporary directory, and is stopped after the test (the ``etcd`` fixture of
``tests/conftest.py``). It can be stopped and started again on the same data (the
"etcd goes away" scenarios), with TLS (``tls_files``: a throwaway CA and certificates
made with ``openssl``) and with a user and password (``enable_auth``).

The helpers that write and compact keys speak the v3 JSON gateway with ``requests``
directly, not through podsync: a test must not check podsync with podsync.

The network rule: only loopback.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import attrs
import requests

__all__ = ["ETCD_BINARY", "EtcdServer", "TLSFiles", "etcd_binary", "make_tls_files"]

ETCD_BINARY = "etcd"
_START_TIMEOUT = 30.0


def etcd_binary() -> str | None:
    """The etcd server's path, or ``None`` (Debian: ``apt-get install etcd-server``)."""
    found = shutil.which(ETCD_BINARY) or shutil.which(ETCD_BINARY, path="/usr/bin:/usr/sbin")
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


@attrs.frozen
class TLSFiles:
    """A throwaway CA, a server certificate for 127.0.0.1 and a client certificate."""

    ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str


def make_tls_files(directory: Path) -> TLSFiles:
    """Make a CA and two certificates it signs with ``openssl`` (FileNotFoundError
    when there is no ``openssl``)."""
    directory.mkdir(parents=True, exist_ok=True)

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-subj", "/CN=podsync test CA", "-keyout", "ca.key", "-out", "ca.crt")  # fmt: skip
    for name, extension in (
        # etcd's gateway dials etcd itself with the server's certificate as a client's.
        (
            "server",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth",
        ),
        ("client", "extendedKeyUsage=clientAuth"),
    ):
        (directory / f"{name}.ext").write_text(extension + "\n")
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.csr")  # fmt: skip
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext",
            "-out", f"{name}.crt")  # fmt: skip
    d = str(directory)
    return TLSFiles(
        f"{d}/ca.crt", f"{d}/server.crt", f"{d}/server.key", f"{d}/client.crt", f"{d}/client.key"
    )


class EtcdServer:
    """One etcd member on 127.0.0.1, started by ``start()`` and stopped by ``stop()``."""

    def __init__(
        self,
        directory: Path,
        *,
        tls: TLSFiles | None = None,
        extra_args: tuple[str, ...] = (),
        client_cert_auth: bool = True,
    ) -> None:
        binary = etcd_binary()
        if binary is None:
            raise FileNotFoundError("no etcd (Debian: apt-get install etcd-server)")
        self.binary = binary
        self.directory = directory
        self.data_dir = directory / "data"
        self.tls = tls
        self.port = _free_port()
        self.peer_port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = directory / "etcd.log"
        self.auth: tuple[str, str] | None = None
        self._token: str | None = None
        self.extra_args = extra_args
        # With TLS, whether etcd asks clients for a certificate (its gateway refuses a
        # user's token from a client that sends one).
        self.client_cert_auth = client_cert_auth

    # -- addresses -----------------------------------------------------------------------

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, key: str) -> str:
        """The podsync source of ``key`` on this server."""
        return f"etcd://{self.endpoint}{key}"

    # -- the process ---------------------------------------------------------------------

    def start(self) -> None:
        """Start etcd (on its data directory, kept across restarts) and wait until it
        answers."""
        assert self.process is None, "already running"
        client = f"{self.scheme}://{self.endpoint}"
        peer = f"http://127.0.0.1:{self.peer_port}"
        args = [
            self.binary,
            "--name", "podsync-test",
            "--data-dir", str(self.data_dir),
            "--listen-client-urls", client,
            "--advertise-client-urls", client,
            "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"podsync-test={peer}",
            "--log-outputs", "stderr",
        ]  # fmt: skip
        if self.tls is not None:
            args += [
                "--cert-file", self.tls.server_cert,
                "--key-file", self.tls.server_key,
            ]  # fmt: skip
            if self.client_cert_auth:
                # etcd asks for a client certificate as soon as it has a CA to check it.
                args += ["--trusted-ca-file", self.tls.ca, "--client-cert-auth"]
        args += self.extra_args
        self.directory.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child holds it
        try:
            self.process = subprocess.Popen(
                args, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
            )
        finally:
            log.close()
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:]
                self.process = None
                raise RuntimeError(f"etcd exited at start:\n{tail}")
            try:
                self._session().get(f"{client}/version", timeout=1).raise_for_status()
                return
            except requests.RequestException:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"etcd did not answer within {_START_TIMEOUT:g} s") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop etcd (SIGTERM, then SIGKILL after 10 s)."""
        process, self.process = self.process, None
        if process is None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # -- the keys, through the gateway ---------------------------------------------------

    def _session(self) -> requests.Session:
        session = requests.Session()
        session.trust_env = False  # loopback: no proxy
        if self.tls is not None:
            session.verify = self.tls.ca
            session.cert = (self.tls.client_cert, self.tls.client_key)
        return session

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        session = self._session()
        headers = {}
        if self.auth is not None:
            if self._token is None:
                response = session.post(
                    f"{self.scheme}://{self.endpoint}/v3/auth/authenticate",
                    json={"name": self.auth[0], "password": self.auth[1]},
                    timeout=10,
                )
                response.raise_for_status()
                self._token = str(response.json()["token"])
            headers["Authorization"] = self._token
        response = session.post(
            f"{self.scheme}://{self.endpoint}/v3{path}", json=body, headers=headers, timeout=10
        )
        if response.status_code != 200:
            raise RuntimeError(f"etcd {path}: HTTP {response.status_code}: {response.text}")
        result: dict[str, Any] = response.json()
        return result

    def put(self, key: str, value: str | bytes) -> int:
        """Write a key; the store's revision after the write."""
        body = self._post("/kv/put", {"key": _b64(key), "value": _b64(value)})
        return int(body["header"]["revision"])

    def get(self, key: str) -> bytes | None:
        body = self._post("/kv/range", {"key": _b64(key)})
        kvs = body.get("kvs") or []
        return base64.b64decode(kvs[0].get("value", "")) if kvs else None

    def delete(self, key: str) -> int:
        body = self._post("/kv/deleterange", {"key": _b64(key)})
        return int(body["header"]["revision"])

    def revision(self) -> int:
        body = self._post("/kv/range", {"key": _b64("/")})
        return int(body["header"]["revision"])

    def compact(self, revision: int | None = None) -> int:
        """Compact the history up to ``revision`` (the current one when ``None``)."""
        at = self.revision() if revision is None else revision
        self._post("/kv/compaction", {"revision": at, "physical": True})
        return at

    def enable_auth(self, user: str, password: str, *, prefix: str = "/registry/") -> None:
        """Turn on authentication: ``root`` (password ``root-pw``) and ``user`` with
        read-write access to ``prefix``; this helper then speaks as ``root``."""
        self._post("/auth/user/add", {"name": "root", "password": "root-pw"})
        self._post("/auth/user/grant", {"user": "root", "role": "root"})
        self._post("/auth/role/add", {"name": "pods"})
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        permission = {"permType": "READWRITE", "key": _b64(prefix), "range_end": _b64(end)}
        self._post("/auth/role/grant", {"name": "pods", "perm": permission})
        self._post("/auth/user/add", {"name": user, "password": password})
        self._post("/auth/user/grant", {"user": user, "role": "pods"})
        self._post("/auth/enable", {})
        self.auth = ("root", "root-pw")
        self._token = None


def env_without_proxy() -> dict[str, str]:
    """The environment without proxy variables (loopback only)."""
    return {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
