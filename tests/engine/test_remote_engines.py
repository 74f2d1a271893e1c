"""``podsync plan`` and ``apply`` on a remote engine, the ways the docker CLI reaches one
(``tests/support/remote.py``): a ``dockerd --tlsverify`` on a loopback port, with a CA
made for the test, through ``--tls*`` flags or ``DOCKER_TLS_VERIFY`` and
``DOCKER_CERT_PATH``; and a real ``sshd`` on loopback in front of the engine's socket,
through ``ssh://`` and the ``ssh`` command. Bad credentials are one podsync error line,
no traceback, and nothing changes on the engine."""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from podsync import cli
from podsync.labels import LABEL_POD_NAME
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE
from tests.support.remote import RemoteEngine, remote_engine

__all__ = ["remote_engine"]

pytestmark = [
    pytest.mark.engine,
    pytest.mark.docker_only(
        reason="starts a dockerd --tlsverify of its own, and sshd sessions that run the docker CLI"
    ),
]

# Exits at once on SIGTERM (busybox sleep as PID 1 would ignore it).
COMMAND = ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]


def write_pod(directory: Path, name: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: {json.dumps(COMMAND)}
""")
    return path


def podsync(
    capsys: pytest.CaptureFixture[str], root: Path, *argv: str | Path
) -> tuple[int, str, str]:
    """``podsync VERB ARGS...`` in this process, on the test's root directory and with
    no network; never a traceback."""
    verb, *rest = (str(a) for a in argv)
    code = cli.main(
        [
            verb,
            "--root-dir",
            str(root),
            "--network-mode",
            "none",
            "--network-image",
            PAUSE_IMAGE,
            *rest,
        ]
    )
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def pods_on(remote: RemoteEngine) -> list[str]:
    """The pods on the engine, as its own socket shows them (every container)."""
    with contextlib.closing(remote.engine.client()) as client:
        return sorted(c["Labels"].get(LABEL_POD_NAME, "?") for c in client.api.containers(all=True))


@pytest.fixture
def remote(remote_engine: RemoteEngine) -> Iterator[RemoteEngine]:
    """The remote engine, emptied after the test (it is the tests' own)."""
    yield remote_engine
    remote_engine.ssh.use_key(remote_engine.ssh.user_key)
    remote_engine.engine.remove_all_containers()


def tls_flags(remote: RemoteEngine) -> list[str]:
    client = remote.ca.client
    return [
        "-H",
        remote.tls_address,
        "--tlsverify",
        "--tlscacert",
        str(client / "ca.pem"),
        "--tlscert",
        str(client / "cert.pem"),
        "--tlskey",
        str(client / "key.pem"),
    ]


# ---------------------------------------------------------------------------------------
# TLS


def test_tlsverify_flags_plan_and_apply_on_the_tls_port(
    remote: RemoteEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = write_pod(tmp_path, "over-tls")
    code, out, err = podsync(capsys, tmp_path / "root", "plan", *tls_flags(remote), pod)
    assert code == 0, err
    assert "Plan: 2 to create." in out
    assert pods_on(remote) == []
    code, out, err = podsync(capsys, tmp_path / "root", "apply", *tls_flags(remote), pod)
    assert code == 0, err
    assert pods_on(remote) == ["over-tls", "over-tls"]
    code, out, err = podsync(capsys, tmp_path / "root", "plan", *tls_flags(remote), pod)
    assert code == 0, err
    assert "No changes." in out
    assert err == ""  # a verified engine on loopback: no warning


def test_tls_without_verification_warns_once(
    remote: RemoteEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = remote.ca.client
    flags = ["-H", remote.tls_address, "--tls"]
    flags += ["--tlscert", str(client / "cert.pem"), "--tlskey", str(client / "key.pem")]
    pod = write_pod(tmp_path, "unverified")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # urllib3's InsecureRequestWarning on every call
        code, out, err = podsync(capsys, tmp_path / "root", "plan", *flags, pod)
    assert code == 0, err
    assert "Plan: 2 to create." in out
    assert err == (
        f"podsync: warning: the Docker engine at {remote.tls_address} is spoken to in TLS "
        "without verifying its certificate (--tls, not --tlsverify): whatever is on the way "
        "can pose as it\n"
    )


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"])
def test_the_ca_given_wins_over_requests_ca_bundle(
    variable: str,
    remote: RemoteEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # requests would verify the engine against this bundle (psf/requests#3829): a CA
    # that did not sign the engine's certificate.
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.setenv(variable, str(remote.stranger_ca.ca))
    pod = write_pod(tmp_path, "bundle")
    code, out, err = podsync(capsys, tmp_path / "root", "plan", *tls_flags(remote), pod)
    assert code == 0, err
    assert "Plan: 2 to create." in out


def test_docker_tls_verify_and_docker_cert_path_are_the_docker_cli_s(
    remote: RemoteEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The docker CLI's reading: any non-empty DOCKER_TLS_VERIFY, even "0", verifies.
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "0")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(remote.ca.client))
    monkeypatch.setenv("DOCKER_HOST", remote.tls_address)
    pod = write_pod(tmp_path, "from-env")
    code, _, err = podsync(capsys, tmp_path / "root", "apply", pod)
    assert code == 0, err
    assert pods_on(remote) == ["from-env", "from-env"]


def test_the_default_certificate_directory_is_docker_config(
    remote: RemoteEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DOCKER_CERT_PATH", raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(remote.ca.client))
    pod = write_pod(tmp_path, "config-dir")
    code, out, err = podsync(
        capsys, tmp_path / "root", "plan", "-H", remote.tls_address, "--tlsverify", pod
    )
    assert code == 0, err
    assert "Plan: 2 to create." in out


def _bad_tls(remote: RemoteEngine, case: str) -> list[str]:
    """The engine flags of one bad case: where the CA, certificate and key come from
    (``good``: the engine's CA; ``stranger``: another CA's; ``None``: not given)."""
    dirs = {"good": remote.ca.client, "stranger": remote.stranger_ca.client}
    ca, cert, key = {
        "plain-http": (None, None, None),
        "stranger-ca": ("stranger", "good", "good"),
        "stranger-client-certificate": ("good", "stranger", "stranger"),
        "no-client-certificate": ("good", None, None),
        "key-of-another-certificate": ("good", "good", "stranger"),
        "missing-ca": ("missing", None, None),
    }[case]
    flags = ["-H", remote.tls_address]
    if ca is not None:
        ca_file = dirs["good"] / "missing.pem" if ca == "missing" else dirs[ca] / "ca.pem"
        flags += ["--tlsverify", "--tlscacert", str(ca_file)]
    if cert is not None:
        flags += ["--tlscert", str(dirs[cert] / "cert.pem")]
    if key is not None:
        flags += ["--tlskey", str(dirs[key] / "key.pem")]
    return flags


BAD_TLS = [
    ("plain-http", "speaks TLS, and was spoken to in plain HTTP"),
    ("stranger-ca", "CERTIFICATE_VERIFY_FAILED"),
    ("stranger-client-certificate", "cannot reach the Docker engine at tcp://127.0.0.1:"),
    ("no-client-certificate", "cannot reach the Docker engine at tcp://127.0.0.1:"),
    ("key-of-another-certificate", "cannot reach the Docker engine at tcp://127.0.0.1:"),
    ("missing-ca", "missing.pem does not exist (set it with --tlscacert"),
]


@pytest.mark.parametrize(("case", "message"), BAD_TLS, ids=[c for c, _ in BAD_TLS])
def test_bad_tls_credentials_are_one_error_and_change_nothing(
    case: str,
    message: str,
    remote: RemoteEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("DOCKER_TLS_VERIFY", "DOCKER_TLS", "DOCKER_CERT_PATH", "DOCKER_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-docker-config"))
    pod = write_pod(tmp_path, "refused")
    code, _, err = podsync(capsys, tmp_path / "root", "apply", *_bad_tls(remote, case), pod)
    assert code == 1
    assert err.startswith("podsync: error: "), err
    assert len(err.splitlines()) == 1, err
    assert message in err
    assert pods_on(remote) == []


# ---------------------------------------------------------------------------------------
# ssh


@pytest.fixture
def ssh_path(remote: RemoteEngine, monkeypatch: pytest.MonkeyPatch) -> RemoteEngine:
    """The test's ``ssh`` first on ``PATH`` (its key, its known hosts)."""
    import os

    monkeypatch.setenv("PATH", f"{remote.ssh.bin}{os.pathsep}{os.environ['PATH']}")
    return remote


def test_ssh_engine_plans_and_applies_through_sshd(
    ssh_path: RemoteEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("paramiko", reason="the ssh extra (paramiko) is not installed")
    remote = ssh_path
    pod = write_pod(tmp_path, "over-ssh")
    host = ["-H", remote.ssh.address]
    code, out, err = podsync(capsys, tmp_path / "root", "plan", *host, pod)
    assert code == 0, err
    assert "Plan: 2 to create." in out
    code, out, err = podsync(capsys, tmp_path / "root", "apply", *host, pod)
    assert code == 0, err
    assert pods_on(remote) == ["over-ssh", "over-ssh"]
    code = cli.main(["down", "--root-dir", str(tmp_path / "root"), *host, str(pod)])
    assert code == 0, capsys.readouterr().err
    assert pods_on(remote) == []


def test_ssh_with_a_key_sshd_does_not_know_is_one_error_and_changes_nothing(
    ssh_path: RemoteEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("paramiko", reason="the ssh extra (paramiko) is not installed")
    remote = ssh_path
    remote.ssh.use_key(remote.ssh.directory / "stranger_key")
    pod = write_pod(tmp_path, "refused")
    code, _, err = podsync(capsys, tmp_path / "root", "apply", "-H", remote.ssh.address, pod)
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("podsync: ")]
    assert len(lines) == 1, err
    assert lines[0].startswith(
        f"podsync: error: cannot reach the Docker engine at {remote.ssh.address}"
    ), err
    assert pods_on(remote) == []


def test_ssh_without_the_ssh_extra_names_the_extra(
    ssh_path: RemoteEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # paramiko absent, as in an installation without podsync[ssh].
    monkeypatch.setitem(sys.modules, "paramiko", None)
    pod = write_pod(tmp_path, "no-extra")
    code, _, err = podsync(capsys, tmp_path / "root", "apply", "-H", ssh_path.ssh.address, pod)
    assert code == 1
    assert err == (
        f"podsync: error: cannot use the Docker engine at {ssh_path.ssh.address}: ssh:// "
        "engines need the ssh extra (pip install 'podsync[ssh]', which brings paramiko)\n"
    )
    assert pods_on(ssh_path) == []
