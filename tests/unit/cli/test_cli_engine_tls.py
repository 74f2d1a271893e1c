"""The engine flags and environment, resolved as the docker CLI resolves them
(``podsync.cli._engine``: ``EngineTLS``, ``docker_factory``); nothing connects here.
The real thing (a ``dockerd --tlsverify``, an ``sshd``): ``tests/engine/test_remote_engines.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podsync.cli._args import _Failure, build_parser
from podsync.cli._engine import EngineTLS, docker_factory
from podsync.runtime.docker._runtime import DockerRuntime


def parse(*flags: str) -> Any:
    return build_parser().parse_args(["plan", *flags, "pod.yaml"])


def certificates(directory: Path, *names: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / name).write_text(f"-----BEGIN {name}-----\n")
    return directory


ALL = ("ca.pem", "cert.pem", "key.pem")

# id, flags, environment (CERTS: the directory with ca.pem, cert.pem and key.pem; EMPTY:
# one without them), files present in CERTS, expected (enabled, verify, ca, cert, key)
# with paths relative to CERTS or EMPTY.
RESOLVE = [
    ("nothing", [], {}, ALL, (False, False, None, None, None)),
    (
        "tls-verify-env",
        [],
        {"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": "CERTS"},
        ALL,
        (True, True, "CERTS/ca.pem", "CERTS/cert.pem", "CERTS/key.pem"),
    ),
    (
        "tls-verify-0-still-verifies",
        [],
        {"DOCKER_TLS_VERIFY": "0", "DOCKER_CERT_PATH": "CERTS"},
        ALL,
        (True, True, "CERTS/ca.pem", "CERTS/cert.pem", "CERTS/key.pem"),
    ),
    (
        "tls-verify-empty-is-off",
        [],
        {"DOCKER_TLS_VERIFY": "", "DOCKER_CERT_PATH": "CERTS"},
        ALL,
        (False, False, None, "CERTS/cert.pem", "CERTS/key.pem"),
    ),
    (
        "cert-path-alone-is-no-tls",
        [],
        {"DOCKER_CERT_PATH": "CERTS"},
        ALL,
        (False, False, None, "CERTS/cert.pem", "CERTS/key.pem"),
    ),
    (
        "tls-flag-does-not-verify",
        ["--tls"],
        {"DOCKER_CERT_PATH": "CERTS"},
        ALL,
        (True, False, None, "CERTS/cert.pem", "CERTS/key.pem"),
    ),
    (
        "docker-tls-env",
        [],
        {"DOCKER_TLS": "1", "DOCKER_CERT_PATH": "CERTS"},
        ("cert.pem",),
        (True, False, None, "CERTS/cert.pem", None),
    ),
    (
        "tlsverify-flag-reads-docker-config",
        ["--tlsverify"],
        {"DOCKER_CONFIG": "CERTS"},
        ALL,
        (True, True, "CERTS/ca.pem", "CERTS/cert.pem", "CERTS/key.pem"),
    ),
    (
        "tlsverify-flag-reads-home-docker",
        ["--tlsverify"],
        {"HOME": "HOME"},
        ALL,
        (True, True, "HOME/.docker/ca.pem", "HOME/.docker/cert.pem", "HOME/.docker/key.pem"),
    ),
    (
        "missing-default-ca-is-kept-missing-client-files-dropped",
        ["--tlsverify"],
        {"DOCKER_CERT_PATH": "EMPTY"},
        ALL,
        (True, True, "EMPTY/ca.pem", None, None),
    ),
    (
        "flags-win-over-the-directory",
        ["--tlsverify", "--tlscacert", "EMPTY/mine.pem", "--tlscert", "EMPTY/c.pem"],
        {"DOCKER_CERT_PATH": "CERTS"},
        ALL,
        (True, True, "EMPTY/mine.pem", "EMPTY/c.pem", "CERTS/key.pem"),
    ),
]


def _place(text: str | None, tmp_path: Path) -> str | None:
    if text is None:
        return None
    for name in ("CERTS", "EMPTY", "HOME"):
        text = text.replace(name, str(tmp_path / name.lower()))
    return text


@pytest.mark.parametrize(
    ("flags", "environ", "files", "expected"),
    [row[1:] for row in RESOLVE],
    ids=[row[0] for row in RESOLVE],
)
def test_tls_settings_resolve_as_the_docker_cli(
    flags: list[str],
    environ: dict[str, str],
    files: tuple[str, ...],
    expected: tuple[Any, ...],
    tmp_path: Path,
) -> None:
    certificates(tmp_path / "certs", *files)
    certificates(tmp_path / "home" / ".docker", *files)
    (tmp_path / "empty").mkdir()
    env = {k: str(_place(v, tmp_path)) for k, v in environ.items()}
    env.setdefault("HOME", str(tmp_path / "nohome"))
    tls = EngineTLS.resolve(parse(*(str(_place(f, tmp_path)) for f in flags)), env)
    enabled, verify, ca, cert, key = expected
    assert (tls.enabled, tls.verify, tls.ca, tls.cert, tls.key) == (
        enabled,
        verify,
        _place(ca, tmp_path),
        _place(cert, tmp_path),
        _place(key, tmp_path),
    )


# id, host, flags, environment, expected address (or the error), warning (or None)
FACTORY = [
    ("plain-tcp-remote-warns", "tcp://10.0.0.5:2375", [], {}, "tcp://10.0.0.5:2375", "plain HTTP"),
    ("plain-tcp-loopback", "tcp://127.0.0.1:2375", [], {}, "tcp://127.0.0.1:2375", None),
    ("plain-tcp-localhost-port-2375", "tcp://localhost", [], {}, "tcp://localhost:2375", None),
    ("tls-port-2376", "tcp://[::1]", ["--tlsverify"], {}, "tcp://[::1]:2376", None),
    ("tls-remote-no-warning", "tcp://node1:2376", ["--tlsverify"], {}, "tcp://node1:2376", None),
    ("tls-without-verify-warns", "tcp://node1:2376", ["--tls"], {}, "tcp://node1:2376", "without"),
    ("env-host", None, [], {"DOCKER_HOST": "tcp://node1"}, "tcp://node1:2375", "plain HTTP"),
    (
        "env-tls-ignored-for-a-socket",
        "unix:///run/x.sock",
        [],
        {"DOCKER_TLS_VERIFY": "1"},
        "unix:///run/x.sock",
        None,
    ),
    (
        "tls-flags-refused-for-a-socket",
        "unix:///run/x.sock",
        ["--tlsverify"],
        {},
        "error: --tlsverify: TLS is for tcp:// engines, and the engine is "
        "unix:///run/x.sock (--docker-host)",
        None,
    ),
    (
        "tls-flags-refused-for-ssh",
        "ssh://admin@node1",
        ["--tlscert", "CERTS/cert.pem"],
        {},
        "error: --tlscert: TLS is for tcp:// engines, and the engine is "
        "ssh://admin@node1 (--docker-host)",
        None,
    ),
    ("ssh", "ssh://admin@node1", [], {}, "ssh://admin@node1", None),
    # podman's CONTAINER_HOST: honoured when DOCKER_HOST is not set; DOCKER_HOST (the
    # Docker API's own variable) wins when both are; the flag wins over both.
    (
        "container-host",
        None,
        [],
        {"CONTAINER_HOST": "unix:///run/p.sock"},
        "unix:///run/p.sock",
        None,
    ),
    (
        "docker-host-wins-over-container-host",
        None,
        [],
        {"DOCKER_HOST": "unix:///run/d.sock", "CONTAINER_HOST": "unix:///run/p.sock"},
        "unix:///run/d.sock",
        None,
    ),
    (
        "flag-wins-over-both",
        "unix:///run/f.sock",
        [],
        {"DOCKER_HOST": "unix:///run/d.sock", "CONTAINER_HOST": "unix:///run/p.sock"},
        "unix:///run/f.sock",
        None,
    ),
    (
        "container-host-tcp-warns",
        None,
        [],
        {"CONTAINER_HOST": "tcp://node1:8888"},
        "tcp://node1:8888",
        "plain HTTP",
    ),
    (
        "container-host-ssh",
        None,
        [],
        {"CONTAINER_HOST": "ssh://core@node1"},
        "ssh://core@node1",
        None,
    ),
    (
        "container-host-ssh-to-a-socket-refused",
        None,
        [],
        {"CONTAINER_HOST": "ssh://core@node1/run/podman/podman.sock"},
        "error: CONTAINER_HOST=ssh://core@node1/run/podman/podman.sock: podman reaches the "
        "socket /run/podman/podman.sock over ssh itself, and podsync's ssh:// runs `docker "
        "system dial-stdio` on the host instead; forward the socket (ssh -L "
        "/tmp/podman.sock:/run/podman/podman.sock core@node1) and set "
        "DOCKER_HOST=unix:///tmp/podman.sock",
        None,
    ),
    (
        "container-host-invalid-named",
        None,
        [],
        {"CONTAINER_HOST": "tcp://node1:99999"},
        "error: invalid Docker host 'tcp://node1:99999' (CONTAINER_HOST): "
        "Port out of range 0-65535",
        None,
    ),
    (
        "missing-ca",
        "tcp://node1",
        ["--tlsverify", "--tlscacert", "EMPTY/ca.pem"],
        {},
        "error: cannot use TLS: the CA certificate EMPTY/ca.pem does not exist (set it with "
        "--tlscacert, or DOCKER_CERT_PATH to a directory with ca.pem, cert.pem and key.pem)",
        None,
    ),
    (
        "certificate-without-key",
        "tcp://node1",
        ["--tlsverify", "--tlscacert", "CERTS/ca.pem", "--tlscert", "CERTS/cert.pem"],
        {"DOCKER_CERT_PATH": "EMPTY"},
        "error: cannot use TLS: a client certificate needs its key and a key its certificate "
        "(--tlscert CERTS/cert.pem, --tlskey ?)",
        None,
    ),
    (
        "key-without-certificate",
        "tcp://node1",
        ["--tlsverify", "--tlscacert", "CERTS/ca.pem", "--tlskey", "CERTS/key.pem"],
        {"DOCKER_CERT_PATH": "EMPTY"},
        "error: cannot use TLS: a client certificate needs its key and a key its certificate "
        "(--tlscert ?, --tlskey CERTS/key.pem)",
        None,
    ),
]


@pytest.mark.parametrize(
    ("host", "flags", "environ", "expected", "warning"),
    [row[1:] for row in FACTORY],
    ids=[row[0] for row in FACTORY],
)
def test_the_factory_builds_the_runtime_the_flags_ask_for(
    host: str | None,
    flags: list[str],
    environ: dict[str, str],
    expected: str,
    warning: str | None,
    tmp_path: Path,
) -> None:
    certificates(tmp_path / "certs", *ALL)
    (tmp_path / "empty").mkdir()
    env = {"HOME": str(tmp_path / "certs-home"), "DOCKER_CERT_PATH": str(tmp_path / "certs")}
    env.update({k: str(_place(v, tmp_path)) for k, v in environ.items()})
    warnings: list[str] = []
    factory = docker_factory(
        parse(*(str(_place(f, tmp_path)) for f in flags)), warnings.append, env
    )
    if expected.startswith("error: "):
        with pytest.raises(_Failure) as failure:
            factory(host)
        assert failure.value.lines == (_place(expected.removeprefix("error: "), tmp_path),)
        return
    runtime = factory(host)
    assert isinstance(runtime, DockerRuntime)
    assert runtime.host == expected
    assert bool(runtime._tls) == ("--tls" in flags or "--tlsverify" in flags)
    assert runtime._use_ssh_client == expected.startswith("ssh://")
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) == 1
        assert warning in warnings[0]
        # Once per command, however many runtimes it makes.
        factory(host)
        assert len(warnings) == 1


def test_a_verifying_runtime_trusts_the_given_ca_only(tmp_path: Path) -> None:
    certs = certificates(tmp_path / "certs", *ALL)
    env = {"DOCKER_CERT_PATH": str(certs), "DOCKER_TLS_VERIFY": "1"}
    runtime = docker_factory(parse(), None, env)("tcp://node1")
    assert isinstance(runtime, DockerRuntime)
    tls: Any = runtime._tls
    assert tls.verify == str(certs / "ca.pem")
    assert tls.cert == (str(certs / "cert.pem"), str(certs / "key.pem"))
