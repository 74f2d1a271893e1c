"""``podsync.docker.DockerRuntime`` against the real engine (its pure helpers are in
``tests/unit/runtime/test_docker_runtime.py``).

Engine tests follow ``tests/support/engine.py``: containers use network mode ``none`` or
``container:<id>`` only, carry ``run_labels()``, and no test connects to a container's
address. Nothing is pulled (the one pull names a registry on a closed loopback port).
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker
import pytest

from podsync.actions._actions import CreateSpec
from podsync.docker import DockerRuntime
from podsync.exceptions import EngineUnavailable, NameConflict, NotFound, RuntimeCallError
from podsync.model._pod import ObservedContainer, PortProtocol
from podsync.runtime._protocol import ExecResult
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_UID
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import Mount
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, free_host_ports, run_labels
from tests.support.podman_answers import (
    NO_ENTRYPOINT,
    answer,
    recorded_ports,
    set_env,
)
from tests.support.podman_records import recorded_binds
from tests.unit.runtime.test_docker_runtime import _closed_loopback_port

# --- helpers ---------------------------------------------------------------------------


@pytest.fixture
def runtime(engine: docker.DockerClient) -> Iterator[DockerRuntime]:
    """A runtime for the test engine (``DOCKER_HOST``), closed after the test."""
    with DockerRuntime() as rt:
        yield rt


def _unique(prefix: str) -> str:
    """A container name no other test or run uses."""
    return f"podsync-test-{prefix}-{secrets.token_hex(4)}"


def _owned_labels(container: str = "app") -> dict[str, str]:
    """Labels that make a container podsync's (and this run's, for cleanup)."""
    return run_labels(**{LABEL_POD_UID: "uid-" + secrets.token_hex(4), LABEL_CONTAINER: container})


def _spec(name: str, image: str = TEST_IMAGE, **fields: Any) -> CreateSpec:
    labels = {**fields.pop("labels", _owned_labels()), **run_labels()}
    if not fields.get("join"):
        fields.setdefault("network", "none")
    return CreateSpec(name=name, image=image, labels=labels, **fields)


def _create(runtime: DockerRuntime, cleanup: Cleanup, spec: CreateSpec) -> str:
    return cleanup.add(runtime.create_container(spec))


def _by_id(runtime: DockerRuntime) -> dict[str, ObservedContainer]:
    return {c.id: c for c in runtime.list_containers()}


def test_round_trip_of_a_pod(
    engine: docker.DockerClient,
    engine_name: str,
    cleanup: Cleanup,
    runtime: DockerRuntime,
    tmp_path: Path,
) -> None:
    """A network container and an app container sharing its network are created with
    every field of their specs, listed running with their labels, stopped with an exit
    code and finish time, and removed; repeated stops and removals succeed."""
    net_name, app_name = _unique("net"), _unique("app")
    net_labels, app_labels = _owned_labels("net"), _owned_labels("app")
    http, dns = free_host_ports(engine, 2)  # the engine is shared: no fixed host port
    net_spec = _spec(
        net_name,
        PAUSE_IMAGE,
        labels=net_labels,
        hostname="web",
        ports=(
            PortMapping(80, http, host_ip="127.0.0.1"),
            PortMapping(53, dns, PortProtocol.UDP),
        ),
        dns=("10.0.0.10",),
        dns_search=("default.svc.cluster.local",),
    )
    app_spec = _spec(
        app_name,
        labels=app_labels,
        join=net_name,
        command=("/bin/sleep",),
        args=("3600",),
        env=("GREETING=hello world", "EMPTY="),
        working_dir="/tmp",
        mounts=(Mount(str(tmp_path), "/data", read_only=True),),
        milli_cpu=500,
        memory=64 * 1024 * 1024,
    )
    net_id = _create(runtime, cleanup, net_spec)
    runtime.start_container(net_id)
    app_id = _create(runtime, cleanup, app_spec)
    runtime.start_container(app_id)

    listed = _by_id(runtime)
    assert {net_id, app_id} <= set(listed)
    net, app = listed[net_id], listed[app_id]
    assert (net_name, PAUSE_IMAGE, True) == (net.name, net.image, net.running)
    assert (app_name, TEST_IMAGE, True) == (app.name, app.image, app.running)
    assert {**net_labels, **run_labels()} == net.labels
    assert {**app_labels, **run_labels()} == app.labels
    assert None is app.finished_at
    assert abs(time.time() - app.created) < 60

    recorded = engine.api.inspect_container(app_id)
    host_config, config = recorded["HostConfig"], recorded["Config"]
    assert 512 == host_config["CpuShares"]
    assert 64 * 1024 * 1024 == host_config["Memory"]
    joined = engine.api.inspect_container(net_id)
    assert (
        recorded_binds(engine_name, [f"{tmp_path}:/data:ro"], joins=joined) == host_config["Binds"]
    )
    # The engine records the network container by id although the spec names it.
    assert f"container:{net_id}" == host_config["NetworkMode"]
    env = ["GREETING=hello world", "EMPTY="]
    assert set_env(engine_name, env) == set_env(engine_name, config["Env"])
    assert (["/bin/sleep"], ["3600"]) == (config["Entrypoint"], config["Cmd"])
    assert "/tmp" == config["WorkingDir"]
    assert not host_config["Privileged"]
    net_recorded = engine.api.inspect_container(net_id)
    assert (
        recorded_ports(
            engine_name,
            {
                "80/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(http)}],
                "53/udp": [{"HostIp": "", "HostPort": str(dns)}],
            },
        )
        == net_recorded["HostConfig"]["PortBindings"]
    )
    exposed = recorded_ports(engine_name, {"53/udp": {}, "80/tcp": {}})
    assert set(exposed) == set(net_recorded["Config"].get("ExposedPorts") or {})
    assert "none" == net_recorded["HostConfig"]["NetworkMode"]
    assert ["10.0.0.10"] == net_recorded["HostConfig"]["Dns"]
    assert ["default.svc.cluster.local"] == net_recorded["HostConfig"]["DnsSearch"]
    assert "web" == net_recorded["Config"]["Hostname"]
    # Network mode none: no address, for the net container and for the app in its network.
    assert None is runtime.container_address(net_id)
    assert None is runtime.container_address(app_id)

    # The app's sleep is PID 1 and ignores SIGTERM: killed after 1 s (exit 137).
    runtime.stop_container(app_id, 1)
    runtime.stop_container(net_id, 5)
    stopped = _by_id(runtime)
    app, net = stopped[app_id], stopped[net_id]
    assert (False, 137) == (app.running, app.exit_code)
    assert (False, 0) == (net.running, net.exit_code)
    assert app.finished_at is not None
    assert abs(time.time() - app.finished_at) < 30

    runtime.stop_container(app_id, 1)  # not running: 304, a success
    runtime.remove_container(app_id)
    runtime.remove_container(net_id)
    runtime.stop_container(app_id, 1)  # gone: 404, a success
    runtime.remove_container(app_id)  # gone: 404, a success

    assert not {net_id, app_id} & set(_by_id(runtime))


def test_command_and_args_none_keep_the_images(
    engine: docker.DockerClient, engine_name: str, cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """An empty command and no args leave the image's CMD in place."""
    container_id = _create(runtime, cleanup, _spec(_unique("cmd"), command=(), args=None))

    config = engine.api.inspect_container(container_id)["Config"]
    wanted = (NO_ENTRYPOINT[engine_name], ["/bin/sleep", "3600"])
    assert wanted == (config["Entrypoint"], config["Cmd"])


def test_remove_of_a_running_container_fails(cleanup: Cleanup, runtime: DockerRuntime) -> None:
    """Removing a container that runs is refused (nothing is forced)."""
    container_id = _create(runtime, cleanup, _spec(_unique("running"), PAUSE_IMAGE))
    runtime.start_container(container_id)

    with pytest.raises(RuntimeCallError) as caught:
        runtime.remove_container(container_id)
    assert ("remove", container_id) == (caught.value.operation, caught.value.target)


# --- list: exit codes and finish times -------------------------------------------------


def test_exit_code_and_finish_time_of_exited_and_created_containers(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """An owned container that exited 3 is listed with exit code 3 and its finish time; a
    foreign one with the exit code from Status and no finish time; a container never
    started is not running and never finished. The owned one's start is reported too."""
    exit3 = ("/bin/sh", "-c", "exit 3")
    owned_id = _create(runtime, cleanup, _spec(_unique("exit3"), command=exit3))
    foreign_id = _create(
        runtime, cleanup, _spec(_unique("foreign"), command=exit3, labels=run_labels())
    )
    created_id = _create(runtime, cleanup, _spec(_unique("created")))
    for container_id in (owned_id, foreign_id):
        runtime.start_container(container_id)
        engine.api.wait(container_id, timeout=10)

    listed = _by_id(runtime)
    owned, foreign, created = listed[owned_id], listed[foreign_id], listed[created_id]
    assert (False, 3) == (owned.running, owned.exit_code)
    assert owned.finished_at is not None
    assert owned.created <= owned.finished_at <= time.time() + 1
    # When that run started (State.StartedAt): a probe's initialDelaySeconds counts from it.
    assert owned.started_at is not None
    assert owned.created - 1 <= owned.started_at <= owned.finished_at
    assert (False, 3, None) == (foreign.running, foreign.exit_code, foreign.finished_at)
    assert (False, 0, None) == (created.running, created.exit_code, created.finished_at)


def test_exited_containers_are_inspected_once(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    runtime: DockerRuntime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first list inspects each exited owned container once; later lists inspect
    nothing: not those again, nor running or foreign containers."""
    exit3 = ("/bin/sh", "-c", "exit 3")
    exited = [_create(runtime, cleanup, _spec(_unique("once"), command=exit3)) for _ in "ab"]
    foreign = _create(
        runtime, cleanup, _spec(_unique("foreign"), command=exit3, labels=run_labels())
    )
    running = _create(runtime, cleanup, _spec(_unique("running"), PAUSE_IMAGE))
    for container_id in (*exited, foreign, running):
        runtime.start_container(container_id)
    for container_id in (*exited, foreign):
        engine.api.wait(container_id, timeout=10)
    inspected: list[str] = []
    original = docker.APIClient.inspect_container

    def counting(self: docker.APIClient, container: str) -> Any:
        inspected.append(container)
        return original(self, container)

    monkeypatch.setattr(docker.APIClient, "inspect_container", counting)

    first = _by_id(runtime)
    ours = [c for c in inspected if c in {*exited, foreign, running}]
    assert sorted(exited) == sorted(ours)
    inspected.clear()
    second = _by_id(runtime)
    assert [] == [c for c in inspected if c in {*exited, foreign, running}]
    assert [first[c] for c in exited] == [second[c] for c in exited]


# --- errors ----------------------------------------------------------------------------


def test_create_with_an_absent_image_fails_without_pulling(
    cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """Creating from an image the engine lacks is a RuntimeCallError naming the image."""
    name = _unique("absent")
    cleanup.add(name)

    with pytest.raises(RuntimeCallError) as caught:
        runtime.create_container(_spec(name, "podsync-test/absent:latest"))
    assert ("create", name) == (caught.value.operation, caught.value.target)
    assert "podsync-test/absent" in str(caught.value)
    assert not isinstance(caught.value, EngineUnavailable | NameConflict)


def test_create_with_a_name_in_use_is_a_name_conflict(
    cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """A second create with the same name raises NameConflict, naming the container
    that holds the name and its labels (apply adopts it when it is the same instance)."""
    name = _unique("twice")
    spec = _spec(name)
    first = _create(runtime, cleanup, spec)

    with pytest.raises(NameConflict) as caught:
        runtime.create_container(spec)
    assert ("create", name) == (caught.value.operation, caught.value.target)
    assert "already in use" in str(caught.value)
    assert first == caught.value.holder_id
    assert spec.labels == caught.value.holder_labels


def test_conflicting_network_options_are_a_runtime_call_error(
    cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """The engine refuses a hostname together with container: network mode (400); on
    podman, which would create it, the runtime refuses it first, in Docker's words."""
    net_id = _create(runtime, cleanup, _spec(_unique("net"), PAUSE_IMAGE))
    name = _unique("conflicting")
    cleanup.add(name)

    with pytest.raises(RuntimeCallError, match="conflicting options"):
        runtime.create_container(_spec(name, join=net_id, hostname="x"))


def test_start_of_a_missing_container_fails(runtime: DockerRuntime, engine_name: str) -> None:
    """Starting a container that does not exist is an error (unlike stop and remove)."""
    name = "podsync-test-missing-" + secrets.token_hex(4)
    _, words = answer(engine_name, 404, f"No such container: {name}")
    with pytest.raises(NotFound, match=re.escape(words)):
        runtime.start_container(name)


def test_pull_failure_is_a_runtime_call_error(runtime: DockerRuntime) -> None:
    """A pull from a registry that cannot be reached fails quickly (loopback only)."""
    image = f"127.0.0.1:{_closed_loopback_port()}/podsync-test/absent:1"

    started = time.monotonic()
    with pytest.raises(RuntimeCallError) as caught:
        runtime.pull_image(image)
    assert ("pull", image) == (caught.value.operation, caught.value.target)
    assert not isinstance(caught.value, EngineUnavailable)
    assert time.monotonic() - started < 10


# --- exec ------------------------------------------------------------------------------


@pytest.fixture
def running(cleanup: Cleanup, runtime: DockerRuntime) -> str:
    """A running pause container (network mode none)."""
    container_id = _create(runtime, cleanup, _spec(_unique("exec"), PAUSE_IMAGE))
    runtime.start_container(container_id)
    return container_id


def test_exec_returns_output_and_exit_code(runtime: DockerRuntime, running: str) -> None:
    """An exec returns its exit code and its output."""
    assert ExecResult(0, b"hi\n") == runtime.exec_in_container(running, ["/bin/echo", "hi"], 5)
    assert 1 == runtime.exec_in_container(running, ["/bin/false"], 5).exit_code


def test_exec_that_outlives_its_timeout_returns_minus_one(
    runtime: DockerRuntime, running: str
) -> None:
    """A command still running at its timeout gives exit code -1, on time: after the
    timeout, long before the command would end."""
    started = time.monotonic()
    result = runtime.exec_in_container(running, ["/bin/sleep", "60"], 3)
    elapsed = time.monotonic() - started

    assert ExecResult(-1, b"") == result
    # A loaded machine may be late by seconds, never by the command's minute.
    assert 3 <= elapsed < 3 + 10


def test_exec_in_a_stopped_container_fails(cleanup: Cleanup, runtime: DockerRuntime) -> None:
    """Exec needs a running container."""
    container_id = _create(runtime, cleanup, _spec(_unique("stopped")))

    with pytest.raises(RuntimeCallError) as caught:
        runtime.exec_in_container(container_id, ["/bin/true"], 5)
    assert "exec" == caught.value.operation


def test_stop_of_a_paused_container_stops_it(
    engine: docker.DockerClient, runtime: DockerRuntime, running: str
) -> None:
    """A paused container is stopped, on its stop signal, as Docker stops it (the signal
    sent, the container resumed so that it lands); podman refuses the stop itself, and
    the runtime resumes the container first."""
    engine.api.pause(running)
    started = time.monotonic()

    runtime.stop_container(running, 10)

    (listed,) = [c for c in runtime.list_containers() if c.id == running]
    assert (False, 0) == (listed.running, listed.exit_code)
    assert time.monotonic() - started < 10  # the pause container ended on SIGTERM


# --- images, threads, the connection ---------------------------------------------------


def test_list_images_includes_the_test_images(runtime: DockerRuntime) -> None:
    """list_images reports the test images with their tags and without placeholders."""
    images = runtime.list_images()
    tags = {tag for image in images for tag in image.tags}

    assert {TEST_IMAGE, PAUSE_IMAGE} <= tags
    assert all(i.id.startswith("sha256:") for i in images)
    assert not any("<none>" in t for i in images for t in (*i.tags, *i.digests))


def test_calls_from_many_threads(cleanup: Cleanup, runtime: DockerRuntime, running: str) -> None:
    """Concurrent calls each get a client of their own, and the clients are reused."""

    def work(i: int) -> object:
        if i % 3 == 0:
            return runtime.exec_in_container(running, ["/bin/echo", str(i)], 5)
        if i % 3 == 1:
            return len(runtime.list_containers())
        return len(runtime.list_images())

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(48)))

    assert [ExecResult(0, f"{i}\n".encode()) for i in range(0, 48, 3)] == results[::3]
    assert 1 <= len(runtime._idle) <= 8


def test_a_client_passed_in_is_used_and_left_open(
    engine: docker.DockerClient, runtime: DockerRuntime
) -> None:
    """A runtime built on the caller's client uses it and does not close it."""
    with DockerRuntime(engine) as borrowed:
        borrowed.ping()
        assert runtime.host == borrowed.host
    engine.api.ping()


def test_close_releases_clients_and_the_runtime_reconnects(runtime: DockerRuntime) -> None:
    """close() empties the client pool; a later call opens a new client."""
    runtime.ping()
    assert 1 == len(runtime._idle)

    runtime.close()
    assert [] == runtime._idle
    runtime.ping()
    assert 1 == len(runtime._idle)


# --- the API version -------------------------------------------------------------------


def _sent_requests(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every request any ``APIClient`` sends from now on, as ``METHOD /path``."""
    sent: list[str] = []
    original = docker.APIClient.send

    def recording_send(self: docker.APIClient, request: Any, **kwargs: Any) -> Any:
        sent.append(f"{request.method} {request.path_url.split('?')[0]}")
        return original(self, request, **kwargs)

    monkeypatch.setattr(docker.APIClient, "send", recording_send)
    return sent


def test_the_api_version_is_learnt_from_one_ping(
    engine: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first call asks the engine's API version with ``GET /_ping`` (its
    ``API-Version`` header), not ``GET /version``, which makes the engine run ``runc``
    and ``docker-init`` to report their versions; later calls, from any client the
    runtime opens, ask nothing. The version used is the engine's."""
    version = engine.api.version()["ApiVersion"]
    sent = _sent_requests(monkeypatch)
    with DockerRuntime() as runtime:
        runtime.list_containers()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: runtime.list_containers(), range(8)))

    assert "GET /_ping" == sent[0]
    # Exited containers a plan may own are inspected once each (other tests' may be
    # on the shared engine): what is left is the nine lists.
    lists = [r for r in sent[1:] if not re.fullmatch(r"GET /v[0-9.]+/containers/\w+/json", r)]
    assert [f"GET /v{version}/containers/json"] * 9 == lists
    assert "GET /version" not in sent
