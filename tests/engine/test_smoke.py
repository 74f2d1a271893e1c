"""Smoke tests against a real Docker engine: what podsync's helpers build, the engine
takes and records, and the test images behave as the other engine tests assume.

Network rule: network mode ``none`` or ``container:<id>`` only. The engine (Debian 12's
20.10, and with ``--bridge=none``) accepts port bindings on a ``none`` container and
records them in ``HostConfig.PortBindings``, but publishes nothing (no network); a
``container:<id>`` container may have neither port bindings nor exposed ports (the
engine answers 400 "conflicting options"), so in a pod the ports go on the pause
container, as in the kubelet.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest

from podsync import (
    EnvVar,
    Port,
    PortProtocol,
    VolumeMount,
    cpu_shares,
    exposed_ports,
    port_bindings,
)
from podsync.spec._environment import environment
from podsync.spec._volumes import binds, container_mounts
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, free_host_ports, run_labels
from tests.support.podman_records import comparable_env, recorded_binds, recorded_ports


def _ports(engine: docker.DockerClient) -> tuple[Port, ...]:
    """Two published ports, on host ports free at run time (the engine is shared), and
    one that is not published."""
    http, dns = free_host_ports(engine, 2)
    return (
        Port(container_port=80, host_port=http, host_ip="127.0.0.1", name="http"),
        Port(container_port=53, host_port=dns, protocol=PortProtocol.UDP, name="dns"),
        Port(container_port=8080),  # not published
    )


ENV = (
    EnvVar("GREETING", "hello world"),
    EnvVar("EQUATION", "a=b=c"),
    EnvVar("EMPTY", ""),
)


def _mounts(tmp_path: Path) -> tuple[tuple[VolumeMount, ...], dict[str, str]]:
    data, config = tmp_path / "data", tmp_path / "config"
    data.mkdir()
    config.mkdir()
    (config / "hello").write_text("from the host\n")
    mounts = (
        VolumeMount(name="data", mount_path="/data"),
        VolumeMount(name="config", mount_path="/config", read_only=True),
    )
    return mounts, {"data": str(data), "config": str(config)}


def _create(engine: docker.DockerClient, cleanup: Cleanup, image: str, **kwargs: Any) -> str:
    host_config = engine.api.create_host_config(**kwargs.pop("host_config"))
    created = engine.api.create_container(
        image, host_config=host_config, labels=run_labels(), **kwargs
    )
    return cleanup.add(created["Id"])


def test_engine_records_ports_cpu_shares_binds_and_env(
    engine: docker.DockerClient, engine_name: str, cleanup: Cleanup, tmp_path: Path
) -> None:
    mounts, host_paths = _mounts(tmp_path)
    ports = _ports(engine)
    bindings = port_bindings(ports)
    exposed = exposed_ports(ports)
    shares = cpu_shares(500)
    bind_list = binds(container_mounts(mounts, host_paths))
    env = environment(ENV)
    assert bindings
    assert shares > 0
    assert len(bind_list) == len(mounts)

    container_id = _create(
        engine,
        cleanup,
        PAUSE_IMAGE,
        # ``ports=`` would take "80/tcp" as port "80/tcp" with protocol tcp: pass the
        # ExposedPorts mapping itself.
        ports={port: {} for port in exposed},
        environment=env,
        host_config={
            "network_mode": "none",
            "port_bindings": bindings,
            "cpu_shares": shares,
            "binds": bind_list,
        },
    )

    inspected = engine.api.inspect_container(container_id)
    host_config, config = inspected["HostConfig"], inspected["Config"]
    assert host_config["NetworkMode"] == "none"
    assert host_config["PortBindings"] == recorded_ports(
        engine_name,
        "none",
        {
            key: [{"HostIp": ip, "HostPort": str(port)} for ip, port in pairs]
            for key, pairs in bindings.items()
        },
    )
    assert set(config.get("ExposedPorts") or {}) == recorded_ports(
        engine_name, "none", set(exposed)
    )
    assert host_config["CpuShares"] == shares
    assert host_config["Binds"] == recorded_binds(engine_name, bind_list)
    # the test images set no Env of their own
    assert comparable_env(engine_name, config["Env"]) == comparable_env(engine_name, env)

    engine.api.remove_container(container_id, force=True)
    with pytest.raises(docker.errors.NotFound):
        engine.api.inspect_container(container_id)


def test_binds_mount_host_directories_read_write_and_read_only(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    mounts, host_paths = _mounts(tmp_path)
    container_id = _create(
        engine,
        cleanup,
        PAUSE_IMAGE,
        host_config={"network_mode": "none", "binds": binds(container_mounts(mounts, host_paths))},
    )
    engine.api.start(container_id)
    container = engine.containers.get(container_id)

    read = container.exec_run(["cat", "/config/hello"])
    assert (read.exit_code, read.output) == (0, b"from the host\n")
    write = container.exec_run(["sh", "-c", "echo from the container > /data/out"])
    assert write.exit_code == 0, write.output
    assert (tmp_path / "data" / "out").read_text() == "from the container\n"
    refused = container.exec_run(["touch", "/config/nope"])
    assert refused.exit_code != 0, "a read-only bind was writable"
    assert not (tmp_path / "config" / "nope").exists()


def test_app_container_joins_pause_network_and_pause_stops_on_sigterm(
    engine: docker.DockerClient, cleanup: Cleanup
) -> None:
    pause_id = _create(engine, cleanup, PAUSE_IMAGE, host_config={"network_mode": "none"})
    engine.api.start(pause_id)
    app_id = _create(
        engine, cleanup, TEST_IMAGE, host_config={"network_mode": f"container:{pause_id}"}
    )
    engine.api.start(app_id)

    pause, app = engine.containers.get(pause_id), engine.containers.get(app_id)
    assert pause.attrs["State"]["Running"]
    assert app.attrs["State"]["Running"]
    assert app.attrs["HostConfig"]["NetworkMode"] == f"container:{pause_id}"
    namespaces = [c.exec_run(["readlink", "/proc/1/ns/net"]) for c in (pause, app)]
    assert [n.exit_code for n in namespaces] == [0, 0]
    assert namespaces[0].output == namespaces[1].output, "the app has its own network"
    interfaces = app.exec_run(["cat", "/proc/net/dev"]).output
    assert isinstance(interfaces, bytes)
    assert [line.split(b":")[0].strip() for line in interfaces.splitlines()[2:]] == [b"lo"]

    # The app's sleep is PID 1 and ignores SIGTERM: killed after the 1 s timeout.
    engine.api.stop(app_id, timeout=1)
    # The pause container traps SIGTERM and exits 0 at once, well within its timeout
    # (a loaded machine may take seconds; a container that ignored SIGTERM would take
    # the whole 30 s and be killed).
    started = time.monotonic()
    engine.api.stop(pause_id, timeout=30)
    elapsed = time.monotonic() - started
    state = engine.api.inspect_container(pause_id)["State"]
    assert not state["Running"]
    assert state["ExitCode"] == 0, f"the pause container was killed: {state}"
    assert elapsed < 15, f"the pause container took {elapsed:.1f} s to stop"
    assert not engine.api.inspect_container(app_id)["State"]["Running"]
