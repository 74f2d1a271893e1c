"""``podsync run --report-to`` against the real engine and a real etcd: the host's
heartbeat names the engine, its pods' statuses follow the containers (and catch up
after etcd was away), no Secret value reaches ``/registry/hosts/`` even where the
engine's own error message holds one, and a loop killed with SIGKILL leaves its host
NotReady (the heartbeat gone) within the lease TTL plus one second.

The loop is the real command in a subprocess (``tests.support.loop_runner``, on a view of
the engine holding only this test's namespace). Network rule: containers in network
mode ``none``; etcd on 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker

from podsync.labels import LABEL_CONTAINER, LABEL_POD_NAME, LABEL_POD_NAMESPACE
from podsync.report import fleet_hosts, fleet_statuses
from podsync.report._records import heartbeat_key, host_prefix, parse_host_record, pod_key
from tests.engine.test_loop import SLEEPER, Loop, eventually, namespace, start_loop
from tests.support.engine import TEST_IMAGE
from tests.support.etcd_server import EtcdServer

__all__ = ["namespace", "start_loop"]  # fixtures, imported to be used here

HOST = "node-r"
TTL = 3
SECRET = "s3cret-Value-42"


def _keys(etcd: EtcdServer) -> dict[str, bytes]:
    prefix = "/registry/hosts/"
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    b64 = lambda text: base64.b64encode(text.encode()).decode()  # noqa: E731
    body = etcd._post("/kv/range", {"key": b64(prefix), "range_end": b64(end)})
    return {
        base64.b64decode(kv["key"]).decode(): base64.b64decode(kv.get("value", ""))
        for kv in body.get("kvs", ())
    }


def _pod(etcd: EtcdServer, namespace: str, name: str) -> dict[str, Any] | None:
    value = _keys(etcd).get(pod_key(HOST, f"{namespace}/{name}"))
    return None if value is None else dict(json.loads(value))


def _pod_yaml(name: str, namespace: str, command: str) -> str:
    """A pod whose one container has ``TOKEN`` from the Secret ``tok``."""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: {command}
    env: [{{name: TOKEN, valueFrom: {{secretKeyRef: {{name: tok, key: token}}}}}}]
"""


def _pods(tmp_path: Path, namespace: str) -> list[str]:
    """``web`` (runs), ``bad`` (its command is a Secret's value: the engine cannot run
    it and says so, naming the value) and the Secret."""
    pods, secrets = tmp_path / "pods", tmp_path / "secrets"
    pods.mkdir()
    secrets.mkdir()
    (pods / "web.yaml").write_text(_pod_yaml("web", namespace, SLEEPER))
    (pods / "bad.yaml").write_text(_pod_yaml("bad", namespace, '["$(TOKEN)"]'))
    encoded = base64.b64encode(SECRET.encode()).decode()
    (secrets / "tok.yaml").write_text(
        f"apiVersion: v1\nkind: Secret\nmetadata: {{name: tok, namespace: {namespace}}}\n"
        f"data: {{token: {encoded}}}\n"
    )
    return [str(pods), str(secrets)]


def _web_app(engine: docker.DockerClient, namespace: str) -> str | None:
    found = engine.api.containers(
        filters={"label": [f"{LABEL_POD_NAMESPACE}={namespace}", f"{LABEL_POD_NAME}=web"]}
    )
    ids = [c["Id"] for c in found if c["Labels"].get(LABEL_CONTAINER) == "app"]
    return ids[0] if ids else None


def test_a_reporting_run_on_the_real_engine(
    engine: docker.DockerClient,
    engine_name: str,
    etcd: EtcdServer,
    tmp_path: Path,
    namespace: str,
    start_loop: Callable[..., Loop],
) -> None:
    """The heartbeat and the statuses; a Secret value nowhere; etcd away while a
    container dies: the statuses catch up; SIGKILL: NotReady within TTL + 1 s."""
    loop = start_loop(
        _pods(tmp_path, namespace),
        "--report-to",
        f"etcd://{etcd.endpoint}/registry/hosts/{HOST}",
        "--report-ttl",
        str(TTL),
        "--sync-period",
        "2s",
    )

    def web_running() -> dict[str, Any] | None:
        record = _pod(etcd, namespace, "web")
        return record if record is not None and record["phase"] == "Running" else None

    eventually(web_running, log=loop)
    heartbeat = parse_host_record(_keys(etcd)[heartbeat_key(HOST)])
    assert heartbeat.engine_kind == ("podman" if "podman" in engine_name else "docker")
    assert heartbeat.engine_version
    assert heartbeat.cpus >= 1
    assert heartbeat.memory > 0
    assert heartbeat.pods_desired == 2

    # The engine's error names the Secret's value; what is reported masks it.
    def failed_events() -> list[dict[str, Any]]:
        events = [json.loads(v) for k, v in _keys(etcd).items() if "/events/" in k]
        return [e for e in events if e["reason"] == "Failed" and "/bad/" in e["object"]]

    failed = eventually(failed_events, log=loop)
    assert all(e["type"] == "Warning" for e in failed)
    assert any("<secret " in e["message"] for e in failed), failed
    bad = _pod(etcd, namespace, "bad")
    assert bad is not None
    assert bad["phase"] != "Running"
    everything = _keys(etcd)
    assert not [k for k, v in everything.items() if SECRET.encode() in v or SECRET in k]

    # etcd away while web's container dies: the loop restarts it; back, the status says so.
    restarts = web_running()["restarts"]  # type: ignore[index]
    etcd.stop()
    app = _web_app(engine, namespace)
    assert app is not None
    engine.api.kill(app)
    eventually(lambda: ((now := _web_app(engine, namespace)) and now != app) or None, log=loop)
    etcd.start()

    def caught_up() -> dict[str, Any] | None:
        record = web_running()
        return record if record is not None and record["restarts"] > restarts else None

    eventually(caught_up, log=loop)
    warnings = [r for r in loop.lines() if "reporting to etcd" in r.get("message", "")]
    assert len([w for w in warnings if "failed" in w["message"]]) == 1  # said once

    # SIGKILL: nothing revokes the lease; etcd expires it.
    eventually(lambda: heartbeat_key(HOST) in _keys(etcd), log=loop)
    loop.process.send_signal(signal.SIGKILL)
    loop.process.wait(10)
    killed = time.monotonic()
    eventually(lambda: heartbeat_key(HOST) not in _keys(etcd), timeout=TTL + 5)
    gone = time.monotonic() - killed
    print(f"heartbeat gone {gone:.2f} s after SIGKILL (TTL {TTL} s)")
    assert gone <= TTL + 1, gone
    assert [k for k in _keys(etcd) if k.startswith(host_prefix(HOST) + "node")]
    # What anyone reads back: the host NotReady, its pods Unknown (NodeLost), as the
    # node lifecycle controller and kubectl show a silent node's pods.
    endpoints = f"etcd://{etcd.endpoint}"
    (host,) = [h for h in fleet_hosts(endpoints) if h.name == HOST]
    assert not host.ready
    statuses = fleet_statuses(endpoints, host=HOST)
    assert statuses
    assert {("Unknown", "NodeLost")} == {
        (s.record["display_status"], s.record["reason"]) for s in statuses
    }
