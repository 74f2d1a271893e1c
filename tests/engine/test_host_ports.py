"""Host ports on a real Docker engine in network mode ``none``, the only mode engine
tests use: what FakeRuntime models as "publishes nothing".

Docker records the bindings of a ``none`` container and publishes none of them, so two
containers with one host port both start. On a bridge network (not usable in these
tests: see ``tests/support/engine.py``) Docker 20.10 refuses the second start with "driver
failed programming external connectivity on endpoint <name> (<id>): Bind for
0.0.0.0:<port> failed: port is already allocated" (the same address), or "... Error
starting userland proxy: listen tcp4 <address>:<port>: bind: address already in use"
(every address next to one address), and binds two specific addresses side by side;
FakeRuntime's tests (``tests/unit/runtime/test_fake_runtime_engine_rules.py``) hold those rules.
"""

from __future__ import annotations

import secrets
import uuid
from pathlib import Path

import docker

import podsync
from podsync import Container, Pod, Port, PullPolicy, Reason
from podsync.actions._actions import CreateSpec
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from podsync.spec._ports import port_mappings
from podsync.testing import FakeRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, free_host_port, run_labels
from tests.support.podman_answers import recorded_ports

SUFFIX = secrets.token_hex(4)


def test_network_none_publishes_nothing_so_nothing_conflicts(
    engine: docker.DockerClient, engine_name: str, cleanup: Cleanup
) -> None:
    """Two ``none`` containers with the same host port both run; the engine keeps the
    bindings in ``HostConfig`` (podman drops them: ``recorded_ports``) and publishes
    none; FakeRuntime agrees."""
    host_port = free_host_port(engine)  # the engine is shared: no fixed host port
    with DockerRuntime() as runtime:
        ids = []
        for n in range(2):
            spec = CreateSpec(
                name=f"podsync-ports-{n}-{SUFFIX}",
                image=PAUSE_IMAGE,
                labels=run_labels(),
                network="none",
                ports=tuple(port_mappings([Port(80, host_port)])),
            )
            cid = cleanup.add(runtime.create_container(spec))
            runtime.start_container(cid)
            ids.append(cid)
    inspected = [engine.api.inspect_container(cid) for cid in ids]

    bindings = recorded_ports(engine_name, {"80/tcp": [{"HostIp": "", "HostPort": str(host_port)}]})
    assert [(True, bindings, {})] * 2 == [
        (
            i["State"]["Running"],
            i["HostConfig"]["PortBindings"],
            i["NetworkSettings"]["Ports"] or {},
        )
        for i in inspected
    ]
    fake = FakeRuntime(images=[PAUSE_IMAGE])
    for n in range(2):
        spec = CreateSpec(
            name=f"c{n}",
            image=PAUSE_IMAGE,
            network="none",
            ports=tuple(port_mappings([Port(80, host_port)])),
        )
        fake.start_container(fake.create_container(spec))
    assert [True, True] == [c.running for c in fake.containers]


def test_running_pod_keeps_its_host_port_on_the_engine(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """A pod running on the engine with a host port keeps it when a new pod that
    sorts before it asks for the same port: the newcomer is rejected, the running pod
    is not touched (its recorded ports are read back from the engine's labels)."""
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
        stop_timeout=1,
    )
    host_port = free_host_port(engine)  # the engine is shared: no fixed host port
    serve = ("/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done")

    def pod(name: str) -> Pod:
        made = Pod(
            f"{name}-{SUFFIX}",
            (
                Container(
                    "app",
                    TEST_IMAGE,
                    command=serve,
                    ports=(Port(80, host_port),),
                    image_pull_policy=PullPolicy.NEVER,
                ),
            ),
            uid=str(uuid.uuid4()),
        )
        cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={made.uid}")
        return made

    web, newcomer = pod("web"), pod("aaa-new")
    with DockerRuntime() as runtime:
        assert podsync.sync([web], runtime, options=options).ok
        result = podsync.sync([newcomer, web], runtime, options=options)

    assert [(newcomer.key, Reason.HOST_PORT_CONFLICT)] == [
        (r.pod, r.reason) for r in result.plan.rejected
    ]
    assert not result.plan.has_changes
