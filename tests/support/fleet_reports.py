"""A reporting host's records written to a real etcd as ``podsync run`` writes them
(``podsync.report._records``' keys and JSON, real leases): for the tests that read a
fleet back (``tests/etcd/test_etcd_fleet.py``, ``tests/etcd/test_cli_fleet.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from podsync.etcd._client import EtcdClient
from podsync.etcd._kv import Put
from podsync.etcd._urls import parse_etcd_url
from podsync.report._records import (
    HostRecord,
    SourceState,
    heartbeat_key,
    host_record_json,
    node_key,
    pod_key,
    pod_record_json,
)
from tests.support.etcd_server import EtcdServer

WRITTEN = "2026-12-02T20:00:00Z"
#: 20:00:30 UTC that day: ``now`` of the tests that measure ages.
NOW = 1796241630.0


def endpoints(etcd: EtcdServer) -> str:
    """The server's endpoints, as ``--etcd`` takes them."""
    return f"etcd://{etcd.endpoint}"


@contextmanager
def etcd_client(etcd: EtcdServer) -> Iterator[EtcdClient]:
    """A client of the server, closed after."""
    made = EtcdClient(parse_etcd_url(etcd.url("/registry/hosts/")))
    try:
        yield made
    finally:
        made.close()


def pod_record(pod: str, phase: str = "Running", ready: int = 1) -> dict[str, object]:
    """``podsync status --json``'s record of a one-container pod, as a reporter writes it."""
    return {
        "pod": pod,
        "uid": f"uid-{pod.replace('/', '-')}",
        "phase": phase,
        "state": "running",
        "message": "",
        "reason": "",
        "display_status": phase,
        "orphaned": False,
        "scope": None,
        "ready": [ready, 1],
        "restarts": 0,
        "conditions": [{"type": "Ready", "status": bool(ready), "reason": "", "message": ""}],
        "init_containers": [],
        "containers": [
            {"name": "app", "state": "running", "image": "busybox:1", "running_since": NOW - 150}
        ],
        "written": WRITTEN,
    }


def report(
    client: EtcdClient,
    host: str,
    *,
    ttl: int | None,
    pods: tuple[str, ...] = (),
    engine: str = "28.2.2",
) -> int:
    """Write ``host``'s records as a reporter does: its heartbeat bound to a lease of
    ``ttl`` seconds (``None``: no heartbeat, its ``node`` copy only), its node copy and
    its pods; the lease."""
    lease = client.grant_lease(ttl) if ttl is not None else 0
    record = HostRecord(
        host,
        engine_kind="docker",
        engine_version=engine,
        cpus=2.0,
        memory=4 << 30,
        podsync_version="0.3.0",
        pods_desired=len(pods),
        pods_running=len(pods),
        lease=lease,
        lease_ttl=ttl or 40,
        written=WRITTEN,
        last_sync="2026-12-02T20:00:25Z",
        sources=(SourceState(f"etcd://127.0.0.1:2379/registry/hosts/{host}/kubelet", True),),
        cpu_cores=0.25,
        memory_working_set=300 << 20,
    )
    ops = [Put(node_key(host), host_record_json(record))]
    if ttl is not None:
        ops.append(Put(heartbeat_key(host), host_record_json(record), lease=lease))
    ops += [Put(pod_key(host, p), pod_record_json(pod_record(p))) for p in pods]
    client.commit(ops)
    return lease
