"""The seed's design on three hosts: pods published to etcd for each host, one ``podsync
run`` per host following its own key, each on its own real engine (``tests.support.engines``:
three extra ``dockerd`` with their own data roots and sockets). A change to one host's
key changes that host and no other.

Network rule: containers in network mode ``none``; etcd and the engines on 127.0.0.1 or
unix sockets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from podsync import publish
from tests.engine.test_loop import Loop, eventually, namespace, pod_yaml, running, start_loop
from tests.support.engines import ExtraEngine, unix_engines
from tests.support.etcd_server import EtcdServer

pytestmark = pytest.mark.docker_only(
    reason="starts dockerds of its own (a fleet, a remote engine); the session engine lends"
    " its images"
)

__all__ = ["namespace", "start_loop", "unix_engines"]  # fixtures, imported to be used here

HOSTS = ("node-a", "node-b", "node-c")


def test_each_host_runs_its_own_key_and_only_the_changed_host_changes(
    engine: docker.DockerClient,
    unix_engines: list[ExtraEngine],
    etcd: EtcdServer,
    tmp_path: Path,
    namespace: str,
    start_loop: Callable[..., Loop],
) -> None:
    """Publish a pod for each of three hosts; a loop per host (its own engine, its own
    key) runs it. Publish a change for node-b: node-b's changed container is replaced
    at once (watch-driven: the periods are an hour), and node-a's and node-c's
    containers are the same ones as before."""
    endpoints = f"etcd://{etcd.endpoint}"
    clients = [e.client() for e in unix_engines]
    sources: dict[str, Path] = {}
    try:
        for host in HOSTS:
            sources[host] = tmp_path / host
            sources[host].mkdir()
            (sources[host] / "web.yaml").write_text(pod_yaml(f"web-{host}", namespace))
            publish([sources[host]], etcd=endpoints, host=host)
        loops = [
            start_loop(
                [etcd.url(f"/registry/hosts/{host}/kubelet")],
                "-H",
                extra.address,
                "--sync-period",
                "1h",
                "--source-period",
                "1h",
            )
            for host, extra in zip(HOSTS, unix_engines, strict=True)
        ]
        before = [
            eventually(_three_running(client, namespace), log=loop)
            for client, loop in zip(clients, loops, strict=True)
        ]
        for host, found in zip(HOSTS, before, strict=True):
            assert {(f"web-{host}", name) for name in ("net", "app", "side")} == set(found)

        changed = sources["node-b"] / "web.yaml"
        changed.write_text(pod_yaml("web-node-b", namespace, side_env="b"))
        publish([sources["node-b"]], etcd=endpoints, host="node-b")

        def side_replaced() -> dict[tuple[str, str], str] | None:
            found = running(clients[1], namespace)
            side = found.get(("web-node-b", "side"))
            return found if side is not None and side != before[1][("web-node-b", "side")] else None

        after_b = eventually(side_replaced, log=loops[1])
        assert after_b[("web-node-b", "app")] == before[1][("web-node-b", "app")]
        # Give the other loops the time a change would have taken them: nothing moves.
        time.sleep(2)
        unchanged = [running(clients[0], namespace), running(clients[2], namespace)]
        assert [before[0], before[2]] == unchanged
        for loop in loops:
            assert 0 == loop.terminate()[0]
    finally:
        for client in clients:
            client.close()
        for extra in unix_engines:
            extra.remove_all_containers()


def _three_running(
    client: docker.DockerClient, namespace: str
) -> Callable[[], dict[tuple[str, str], str] | None]:
    """A condition: the pod's three containers run on ``client``'s engine."""

    def check() -> dict[tuple[str, str], str] | None:
        found = running(client, namespace)
        return found if len(found) == 3 else None

    return check
