"""``podsync run etcd://...`` against the real engine and a real etcd: the seed's design,
pods published to ``/registry/hosts/<host>/kubelet`` and run by the host's loop.

The loop is the real command in a subprocess (``tests.support.loop_runner``, on a view of the
engine holding only this test's namespace), with periods of an hour: only the etcd
watch can make it act. Network rule: containers in network mode ``none``; etcd on
127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import docker

from podsync import publish
from tests.engine.test_loop import (
    Loop,
    eventually,
    namespace,
    pod_yaml,
    running,
    start_loop,
)
from tests.support.etcd_server import EtcdServer

__all__ = ["namespace", "start_loop"]  # fixtures, imported to be used here

HOST = "node-a"
KEY = f"/registry/hosts/{HOST}/kubelet"


def test_the_loop_runs_what_is_published_for_its_host(
    engine: docker.DockerClient,
    etcd: EtcdServer,
    tmp_path: Path,
    namespace: str,
    start_loop: Callable[..., Loop],
) -> None:
    """Publish: the pods run; publish a change: applied at once (watch-driven); a bad
    value: ignored, reported once; etcd stopped: the pods keep running and the loop
    says so; etcd back with a change made meanwhile: applied; SIGTERM: exit 0."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web", namespace))
    endpoints = f"etcd://{etcd.endpoint}"
    publish([pods], etcd=endpoints, host=HOST)
    loop = start_loop([etcd.url(KEY)], "--sync-period", "1h", "--source-period", "1h")
    before = eventually(
        lambda: (found := running(engine, namespace)) and len(found) == 3 and found, log=loop
    )

    (pods / "web.yaml").write_text(pod_yaml("web", namespace, side_env="b"))
    publish([pods], etcd=endpoints, host=HOST)

    def side_replaced() -> dict[tuple[str, str], str] | None:
        found = running(engine, namespace)
        side = found.get(("web", "side"))
        return found if side is not None and side != before[("web", "side")] else None

    after = eventually(side_replaced, log=loop)
    assert after[("web", "app")] == before[("web", "app")]

    etcd.put(KEY, '[{"kind": "Pod"}]')
    errors = eventually(lambda: [r for r in loop.lines() if r["kind"] == "error"], log=loop)
    assert errors[0]["source"] == etcd.url(KEY)
    assert errors[0]["message"].startswith(f"{etcd.url(KEY)}: $[0]")

    etcd.stop()
    eventually(lambda: len([r for r in loop.lines() if r["kind"] == "error"]) >= 2, log=loop)
    down = [r for r in loop.lines() if r["kind"] == "error"][1]
    assert down["source"] == etcd.url(KEY)
    assert "etcd" in down["message"]
    assert running(engine, namespace) == after  # etcd away never deletes pods

    etcd.start()
    (pods / "db.yaml").write_text(pod_yaml("db", namespace))
    publish([pods], etcd=endpoints, host=HOST)  # at once: the loop may still be retrying
    eventually(lambda: len(running(engine, namespace)) == 6, log=loop)
    assert running(engine, namespace).items() >= after.items()
    assert any(r["kind"] == "source-ok" for r in loop.lines())

    code, _ = loop.terminate()
    assert code == 0
    assert len(running(engine, namespace)) == 6
