"""The etcd parts of the command line: ``podsync publish`` and the ``--etcd-*`` options
of the commands that read sources; ``podsync.cli.main`` in this process, with a real
etcd (the ``etcd`` fixture) and FakeRuntime for the engine."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from podsync import cli
from podsync.testing import FakeRuntime
from tests.support.etcd_server import EtcdServer

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

    planned = run("plan", *auth, "-o", str(saved), etcd.url(KEY), runtime=fake)
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
