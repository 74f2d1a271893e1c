"""The etcd parts of the command line: ``podsync publish`` and the ``--etcd-*`` options
of the commands that read sources; ``podsync.cli.main`` in this process, with a real
etcd (the ``etcd`` fixture) and FakeRuntime for the engine."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from podsync import cli
from podsync.testing import FakeRuntime
from tests.support.etcd_server import EtcdServer, make_tls_files

KEY = "/registry/hosts/node-a/kubelet"
IMAGE = "podsync-test/busybox:latest"


@attrs.frozen
class Result:
    code: int
    out: str
    err: str


def pod(name: str, image: str = IMAGE) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: {image}
"""


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Callable[..., Result]:
    def runner(*argv: str, runtime: FakeRuntime | None = None) -> Result:
        args = list(argv)
        if args[0] in ("plan", "apply") and "--plan" not in args:
            args[1:1] = ["--root-dir", str(tmp_path / "root"), "--network-image", "pause:1"]

        def factory(host: str | None) -> FakeRuntime:
            assert runtime is not None, "the engine must not be contacted"
            return runtime

        code = cli.main(args, runtime_factory=factory)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return runner


@pytest.fixture
def pods(tmp_path: Path) -> Path:
    directory = tmp_path / "pods"
    directory.mkdir()
    (directory / "web.yaml").write_text(pod("web"))
    (directory / "db.yaml").write_text(pod("db"))
    return directory


def test_publish_then_plan_from_the_key(
    etcd: EtcdServer, pods: Path, run: Callable[..., Result]
) -> None:
    published = run("publish", "--etcd", f"etcd://{etcd.endpoint}", "--host", "node-a", str(pods))

    assert 0 == published.code, published.err
    assert "+ pod default/db\n+ pod default/web\n" in published.out
    assert f"Published revision 2 to {etcd.url(KEY)}." in published.out

    fake = FakeRuntime(images=[IMAGE, "pause:1"])
    applied = run("apply", etcd.url(KEY), runtime=fake)
    assert 0 == applied.code, applied.err
    assert {"db", "web"} == {c.labels["io.podsync.pod.name"] for c in fake.containers if c.running}


def test_publish_dry_run_writes_nothing(
    etcd: EtcdServer, pods: Path, run: Callable[..., Result]
) -> None:
    result = run(
        "publish", "--etcd", f"etcd://{etcd.endpoint}", "--host", "node-a", "--dry-run", str(pods)
    )

    assert 0 == result.code, result.err
    assert f"Publish: 2 to add, 0 to change, 0 to remove at {etcd.url(KEY)} (a new key)." in (
        result.out
    )
    assert "Dry run: nothing was written." in result.err
    assert etcd.get(KEY) is None


def test_publish_refuses_bad_pods_naming_the_file(
    etcd: EtcdServer, pods: Path, run: Callable[..., Result]
) -> None:
    (pods / "db.yaml").write_text(pod("db").replace("name: app", "name: App"))

    result = run("publish", "--etcd", f"etcd://{etcd.endpoint}", "--host", "node-a", str(pods))

    assert 1 == result.code
    assert f"podsync: error: {pods / 'db.yaml'}: $.spec.containers[0].name: " in result.err
    assert etcd.get(KEY) is None


def test_publish_refuses_a_lost_race(
    etcd: EtcdServer, pods: Path, run: Callable[..., Result]
) -> None:
    etcd.put(KEY, "[]")
    etcd.put(KEY, "[]")  # revision 3: a --dry-run at revision 2 is outdated

    result = run(
        "publish", "--etcd", f"etcd://{etcd.endpoint}", "--host", "node-a",
        "--if-revision", "2", str(pods),
    )  # fmt: skip

    assert 1 == result.code
    assert (
        f"podsync: error: {etcd.url(KEY)}: changed by another writer since it was read "
        "(revision 2, now 3): nothing was written" in result.err
    )
    assert b"[]" == etcd.get(KEY)


def test_etcd_options_user_and_password_file(
    etcd: EtcdServer, tmp_path: Path, run: Callable[..., Result]
) -> None:
    etcd.put(KEY, '[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, '
             f'"spec": {{"containers": [{{"name": "app", "image": "{IMAGE}"}}]}}}}]')  # fmt: skip
    etcd.enable_auth("node-a", "node-pw")
    password = tmp_path / "password"
    password.write_text("node-pw\n")
    fake = FakeRuntime(images=[IMAGE, "pause:1"])

    refused = run("plan", etcd.url(KEY), runtime=fake)
    result = run(
        "plan", "--etcd-user", "node-a", "--etcd-password-file", str(password), etcd.url(KEY),
        runtime=fake,
    )  # fmt: skip
    no_password = run("plan", "--etcd-user", "node-a", etcd.url(KEY), runtime=fake)

    assert 1 == refused.code
    assert "etcd wants a user and password" in refused.err
    assert 0 == result.code, result.err
    assert "default/web" in result.out
    assert 1 == no_password.code
    assert "--etcd-user node-a needs a password" in no_password.err


def test_without_the_extra_an_etcd_source_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, run: Callable[..., Result]
) -> None:
    monkeypatch.setitem(sys.modules, "etcd3gw", None)

    result = run("plan", "etcd://127.0.0.1:2379" + KEY)
    loop = run("run", "etcd://127.0.0.1:2379" + KEY, runtime=FakeRuntime())

    assert 1 == result.code
    assert (
        f"podsync: error: etcd://127.0.0.1:2379{KEY}: etcd needs the etcd3gw package: "
        "pip install 'podsync[etcd]'"
    ) in result.err
    assert 1 == loop.code
    assert (
        f"podsync: error: etcd://127.0.0.1:2379{KEY}: etcd needs the etcd3gw package: "
        "pip install 'podsync[etcd]'"
    ) in loop.err


def test_publish_bad_arguments(run: Callable[..., Result], tmp_path: Path) -> None:
    keyed = run("publish", "--etcd", "etcd://127.0.0.1:2379/x", "--host", "a", str(tmp_path))
    no_port = run("publish", "--etcd", "etcd://localhost", "--host", "a", str(tmp_path))
    bad_host = run("publish", "--etcd", "etcd://127.0.0.1:2379", "--host", "A/B", str(tmp_path))

    assert 1 == keyed.code
    assert "podsync: error: --etcd etcd://127.0.0.1:2379/x: give the endpoints only" in keyed.err
    assert "'localhost' is not HOST:PORT" in no_port.err
    assert "podsync: error: --host: host name 'A/B' is not a lower-case DNS name" in bad_host.err


SECRET_POD = f"""\
apiVersion: v1
kind: Secret
metadata:
  name: db-creds
stringData:
  password: hunter2
---
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: {IMAGE}
    env:
    - name: DB_PASSWORD
      valueFrom:
        secretKeyRef: {{name: db-creds, key: password}}
"""


def test_a_saved_plan_reads_its_secrets_again_from_etcd_with_the_options(
    etcd: EtcdServer, tmp_path: Path, run: Callable[..., Result]
) -> None:
    source = tmp_path / "web.yaml"
    source.write_text(SECRET_POD)
    etcd.enable_auth("node-a", "node-pw")
    password = tmp_path / "password"
    password.write_text("node-pw\n")
    auth = ["--etcd-user", "node-a", "--etcd-password-file", str(password)]
    endpoint = f"etcd://{etcd.endpoint}"
    assert 0 == run("publish", *auth, "--etcd", endpoint, "--host", "node-a", str(source)).code
    fake = FakeRuntime(images=[IMAGE, "pause:1"])
    saved = tmp_path / "plan.json"

    planned = run("plan", *auth, "--out", str(saved), etcd.url(KEY), runtime=fake)
    applied = run(
        "apply", *auth, "--root-dir", str(tmp_path / "root"), "--plan", str(saved), runtime=fake
    )

    assert 0 == planned.code, planned.err
    assert "hunter2" not in saved.read_text()
    assert 0 == applied.code, applied.err
    assert {"web"} == {c.labels["io.podsync.pod.name"] for c in fake.containers if c.running}


def test_apply_hosts_reads_an_etcd_source_with_the_options(
    etcd: EtcdServer, tmp_path: Path, run: Callable[..., Result]
) -> None:
    """``apply --hosts`` takes the ``--etcd-*`` options as ``apply`` does: a source that
    needs a user is refused without them (nothing applied) and applied with them."""
    spec = {"nodeName": "node-a", "containers": [{"name": "app", "image": IMAGE}]}
    etcd.put(
        KEY,
        json.dumps(
            [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec}]
        ),
    )
    etcd.enable_auth("node-a", "node-pw")
    password = tmp_path / "password"
    password.write_text("node-pw\n")
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("hosts:\n  node-a: unix:///run/podsync-test/node-a.sock\n")
    fake = FakeRuntime(images=[IMAGE, "pause:1"])

    refused = run("apply", "--hosts", str(hosts), etcd.url(KEY), runtime=fake)
    created_before = [c for c in fake.calls if c.name == "create"]
    applied = run(
        "apply", "--hosts", str(hosts), "--etcd-user", "node-a",
        "--etcd-password-file", str(password), etcd.url(KEY), runtime=fake,
    )  # fmt: skip

    assert (1, []) == (refused.code, created_before)
    assert "etcd wants a user and password" in refused.err
    assert 0 == applied.code, applied.err
    assert ["web"] == sorted(
        c.args[0].labels["io.podsync.pod.name"]
        for c in fake.calls
        if c.name == "create" and c.args[0].labels.get("io.podsync.container.name") == "app"
    )


# --- TLS and credentials in transit (issue 28) --------------------------------------------


def _tls_server(tmp_path: Path, *, client_cert_auth: bool = True) -> EtcdServer:
    try:
        files = make_tls_files(tmp_path / "tls")
    except FileNotFoundError:
        pytest.skip("no openssl to make a throwaway CA")
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"openssl failed: {exc.stderr!r}")
    server = EtcdServer(tmp_path / "etcd-tls", tls=files, client_cert_auth=client_cert_auth)
    server.start()
    return server


def test_https_endpoints_are_verified_with_the_system_cas(
    tmp_path: Path, pods: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _tls_server(tmp_path)
    try:
        tls = server.tls
        assert tls is not None
        client_cert = ("--etcd-cert", tls.client_cert, "--etcd-key", tls.client_key)
        # The test CA stands in for the system's store; no --etcd-ca anywhere.
        monkeypatch.setenv("SSL_CERT_FILE", tls.ca)
        monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "no-such-dir"))
        published = run(
            "publish", "--etcd", f"https://{server.endpoint}", *client_cert,
            "--host", "node-a", str(pods),
        )  # fmt: skip
        fake = FakeRuntime(images=[IMAGE, "pause:1"])
        planned = run("plan", "--etcd-tls", *client_cert, server.url(KEY), runtime=fake)
        # Another store, which does not hold the test CA (a certificate it did not
        # sign): the same command fails.
        monkeypatch.setenv("SSL_CERT_FILE", tls.client_cert)
        untrusted = run("plan", "--etcd-tls", *client_cert, server.url(KEY), runtime=fake)
        plain = run("plan", *client_cert, server.url(KEY), runtime=fake)
    finally:
        server.stop()

    assert 0 == published.code, published.err
    # The source to give ``run`` is the etcd:// one: an https:// source is an HTTP one.
    assert f"Published revision 2 to {server.url(KEY)}." in published.out
    assert 0 == planned.code, planned.err
    assert "default/web" in planned.out
    assert 1 == untrusted.code
    assert "TLS certificate verify failed" in untrusted.err
    # A client certificate alone already means https; with an empty store it fails too.
    assert 1 == plain.code
    assert "TLS certificate verify failed" in plain.err


def test_a_user_over_https_with_the_system_cas(
    tmp_path: Path, pods: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _tls_server(tmp_path, client_cert_auth=False)
    try:
        tls = server.tls
        assert tls is not None
        server.enable_auth("node-a", "node-pw")
        monkeypatch.setenv("SSL_CERT_FILE", tls.ca)
        monkeypatch.setenv("PODSYNC_ETCD_PASSWORD", "node-pw")
        options = ("--etcd-user", "node-a")
        published = run(
            "publish", "--etcd", f"https://{server.endpoint}", *options, "--host", "node-a",
            str(pods),
        )  # fmt: skip
        refused = run(
            "publish", "--etcd", f"https://{server.endpoint}", "--host", "node-a", str(pods)
        )
    finally:
        server.stop()

    assert 0 == published.code, published.err
    assert f"Published revision 2 to {server.url(KEY)}." in published.out
    assert "--etcd-insecure" not in published.err  # no warning: nothing went in clear
    assert 1 == refused.code  # the user is what etcd let in


def _host_address() -> str:
    """An address of this host that is not loopback (the one its default route uses);
    skips when it has none. Nothing is sent anywhere: a UDP socket is only connected."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never answers, never sent to
        except OSError:
            pytest.skip("this host has no address but loopback")
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("this host has no address but loopback")
    return address


def test_a_user_is_refused_over_plain_http_off_loopback(
    tmp_path: Path, pods: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    address = _host_address()
    server = EtcdServer(tmp_path / "etcd")
    # etcd listens on this host's own address too (its packets stay on the host).
    port = server.port
    server.extra_args = (
        "--listen-client-urls", f"http://127.0.0.1:{port},http://{address}:{port}",
    )  # fmt: skip
    server.start()
    try:
        server.put(KEY, "[]")
        server.enable_auth("node-a", "node-pw")
        monkeypatch.setenv("PODSYNC_ETCD_PASSWORD", "node-pw")
        remote = f"http://{address}:{port}"
        user = ("--etcd-user", "node-a")
        refused = run("publish", "--etcd", remote, *user, "--host", "node-a", str(pods))
        fake = FakeRuntime(images=[IMAGE, "pause:1"])
        source = f"etcd://{address}:{port}{KEY}"
        plan_refused = run("plan", *user, source, runtime=fake)
        insecure = run(
            "publish", "--etcd", remote, *user, "--etcd-insecure", "--host", "node-a", str(pods)
        )
        loopback = run("plan", *user, server.url(KEY), runtime=fake)
        written = server.get(KEY)
    finally:
        server.stop()

    says = (
        f"--etcd-user: refusing to send the password and token over plain HTTP to "
        f"{address}:{port} (not a loopback address)"
    )
    assert 1 == refused.code
    assert f"podsync: error: --etcd {remote}: {says}" in refused.err
    assert 1 == plan_refused.code
    assert f"{source}: {says}" in plan_refused.err
    assert "node-pw" not in refused.err + plan_refused.err
    assert 0 == insecure.code, insecure.err
    assert 1 == insecure.err.count("--etcd-insecure: the --etcd-user's password and token")
    assert 0 == loopback.code, loopback.err  # loopback counts as safe
    assert written is not None
    assert b'"name": "web"' in written
