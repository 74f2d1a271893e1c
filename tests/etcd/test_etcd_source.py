"""The etcd source of the one-shot commands: ``etcd://HOST:PORT[,...]/KEY`` read once,
against a real etcd (the ``etcd`` fixture), with TLS and with a user and password."""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from pathlib import Path

import pytest

import podsync
from podsync.etcd._client import EtcdClient
from podsync.etcd._urls import EtcdOptions, parse_etcd_url
from podsync.exceptions import ConfigError
from tests.support.etcd_server import EtcdServer, make_tls_files

KEY = "/registry/hosts/node-a/kubelet"

WEB = """\
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers:
        - {name: app, image: podsync-test/busybox:latest, command: [sleep, "3600"]}
  - apiVersion: v1
    kind: Pod
    metadata: {name: job}
    spec:
      restartPolicy: OnFailure
      containers:
        - {name: main, image: podsync-test/busybox:latest, command: ["true"]}
"""

# What the seed's key held: a list of v1beta1 manifests (JSON, as its apiserver wrote it).
SEED_VALUE = json.dumps(
    [
        {
            "version": "v1beta1",
            "id": "seed",
            "containers": [{"name": "hello", "image": "podsync-test/busybox:latest"}],
        }
    ]
)


def test_reads_the_pods_of_a_key_as_the_etcd_source(etcd: EtcdServer) -> None:
    etcd.put(KEY, WEB)

    pods = podsync.load_pods([etcd.url(KEY)])

    assert ["web", "job"] == [p.name for p in pods]
    assert {"etcd"} == {p.source for p in pods}
    assert "web.default.etcd" == pods[0].full_name


def test_reads_the_seeds_v1beta1_manifests_and_json(etcd: EtcdServer) -> None:
    etcd.put(KEY, SEED_VALUE)

    (pod,) = podsync.load_pods([etcd.url(KEY)])

    assert ("seed", "etcd") == (pod.name, pod.source)


def test_several_endpoints_the_first_down(etcd: EtcdServer) -> None:
    etcd.put(KEY, WEB)
    # Port 1 on loopback: nothing listens there.
    source = f"etcd://127.0.0.1:1,{etcd.endpoint}{KEY}"

    assert 2 == len(podsync.load_pods([source]))


def test_a_bad_value_names_the_source_and_the_path(etcd: EtcdServer) -> None:
    etcd.put(KEY, WEB.replace('"3600"]}', '"3600"], ports: [{containerPort: 70000}]}', 1))

    with pytest.raises(ConfigError) as caught:
        podsync.load_pods([etcd.url(KEY)])

    assert [
        f"{etcd.url(KEY)}: $.items[0].spec.containers[0].ports[0].containerPort: "
        "must be 1-65535, got 70000"
    ] == [str(p) for p in caught.value.problems]


def test_a_missing_key_is_an_error_not_no_pods(etcd: EtcdServer) -> None:
    with pytest.raises(ConfigError) as caught:
        podsync.load_pods([etcd.url(KEY)])

    (problem,) = caught.value.problems
    assert problem.source == etcd.url(KEY)
    assert "no such key" in problem.message


def test_etcd_unreachable_is_an_error_naming_the_source(etcd: EtcdServer) -> None:
    etcd.stop()

    with pytest.raises(ConfigError) as caught:
        podsync.load_pods([etcd.url(KEY)])

    (problem,) = caught.value.problems
    assert f"{etcd.url(KEY)}: cannot reach etcd at {etcd.endpoint}: connection refused" == str(
        problem
    )


def test_user_and_password_wrong_then_right(etcd: EtcdServer) -> None:
    etcd.put(KEY, WEB)
    etcd.enable_auth("node-a", "secret-pw")

    with pytest.raises(ConfigError) as caught:
        podsync.load_pods([etcd.url(KEY)], etcd=EtcdOptions(user="node-a", password="wrong"))
    assert "authentication failed" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        podsync.load_pods([etcd.url(KEY)])
    assert "--etcd-user" in str(caught.value)

    pods = podsync.load_pods([etcd.url(KEY)], etcd=EtcdOptions(user="node-a", password="secret-pw"))

    assert 2 == len(pods)


def test_an_expired_token_is_renewed(tmp_path: Path) -> None:
    server = EtcdServer(tmp_path / "etcd", extra_args=("--auth-token-ttl", "1"))
    server.start()
    try:
        server.put(KEY, WEB)
        server.enable_auth("node-a", "secret-pw")
        client = EtcdClient(
            parse_etcd_url(server.url(KEY)), EtcdOptions(user="node-a", password="secret-pw")
        )
        assert client.read().value == WEB.encode()
        time.sleep(2.5)  # the token expires unused

        assert client.read().value == WEB.encode()
        time.sleep(2.5)
        (created,) = itertools.islice(client.watch(1, idle=5), 1)
        assert 0 == created.events
        client.close()
    finally:
        server.stop()


@pytest.fixture
def tls_etcd(tmp_path: Path) -> EtcdServer:
    try:
        files = make_tls_files(tmp_path / "tls")
    except FileNotFoundError:
        pytest.skip("no openssl to make a throwaway CA")
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"openssl failed: {exc.stderr!r}")
    server = EtcdServer(tmp_path / "etcd", tls=files)
    server.start()
    return server


def test_tls_with_a_ca_and_a_client_certificate(tls_etcd: EtcdServer) -> None:
    try:
        tls = tls_etcd.tls
        assert tls is not None
        tls_etcd.put(KEY, WEB)
        options = EtcdOptions(ca_file=tls.ca, cert_file=tls.client_cert, key_file=tls.client_key)

        assert 2 == len(podsync.load_pods([tls_etcd.url(KEY)], etcd=options))
        # Without the client certificate the server refuses the handshake.
        with pytest.raises(ConfigError) as caught:
            podsync.load_pods([tls_etcd.url(KEY)], etcd=EtcdOptions(ca_file=tls.ca))
        assert tls_etcd.url(KEY) in str(caught.value)
    finally:
        tls_etcd.stop()


def test_etcd_urls() -> None:
    url = parse_etcd_url("etcd://10.0.0.1:2379,[::1]:2380/registry/hosts/a/kubelet")

    assert (("10.0.0.1", 2379), ("::1", 2380)) == url.endpoints
    assert "/registry/hosts/a/kubelet" == url.key
    for bad, says in (
        ("etcd://host/key", "is not HOST:PORT"),
        ("etcd://host:99999/key", "is not HOST:PORT"),
        ("etcd://host:2379", "names no key"),
        ("etcd://host:2379/", "names no key"),
    ):
        with pytest.raises(ValueError, match=says):
            parse_etcd_url(bad)


def test_a_bad_etcd_url_is_a_problem_of_that_source() -> None:
    with pytest.raises(ConfigError) as caught:
        podsync.load_pods(["etcd://nohost/registry/hosts/a/kubelet"])

    assert "etcd://nohost/registry/hosts/a/kubelet: 'nohost' is not HOST:PORT" in str(caught.value)
