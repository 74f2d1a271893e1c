"""``podsync.docker.DockerRuntime`` against the real engine, and its pure helpers.

Engine tests follow ``tests/engine.py``: containers use network mode ``none`` or
``container:<id>`` only, carry ``run_labels()``, and no test connects to a container's
address. Nothing is pulled (the one pull names a registry on a closed loopback port).
"""

from __future__ import annotations

import inspect
import re
import secrets
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import docker
import pytest
from podsync.docker import DockerRuntime

from podsync.actions._actions import CreateSpec
from podsync.exceptions import EngineUnavailable, NameConflict, RuntimeCallError
from podsync.model._pod import ObservedContainer, ObservedImage, PortProtocol
from podsync.runtime._protocol import ExecResult, Runtime
from podsync.runtime.docker._api import (
    _exit_code,
    _name,
    address_of,
    image_from_list,
    observed_from_list,
    timestamp,
)
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_UID
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import Mount
from tests.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, run_labels

# --- helpers ---------------------------------------------------------------------------


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


@pytest.fixture
def runtime(engine: docker.DockerClient) -> Iterator[DockerRuntime]:
    """A runtime for the test engine (``DOCKER_HOST``), closed after the test."""
    with DockerRuntime() as rt:
        yield rt


def _create(runtime: DockerRuntime, cleanup: Cleanup, spec: CreateSpec) -> str:
    return cleanup.add(runtime.create_container(spec))


def _by_id(runtime: DockerRuntime) -> dict[str, ObservedContainer]:
    return {c.id: c for c in runtime.list_containers()}


def _closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# --- the protocol ----------------------------------------------------------------------


def test_docker_runtime_satisfies_the_runtime_protocol() -> None:
    """Every Runtime method exists on DockerRuntime with the same parameters; building
    one connects to nothing."""
    runtime: Runtime = DockerRuntime(host="unix:///nonexistent.sock")  # type-checked
    protocol_methods = [
        name for name, _ in inspect.getmembers(Runtime, inspect.isfunction) if name[0] != "_"
    ]

    assert protocol_methods
    for name in protocol_methods:
        expected = list(inspect.signature(getattr(Runtime, name)).parameters)
        assert expected == list(inspect.signature(getattr(runtime, name).__func__).parameters)


def test_client_and_host_are_exclusive() -> None:
    """A runtime takes a client or a host, not both."""
    # A fixed API version: the client connects to nothing.
    client = docker.DockerClient(base_url="unix:///nonexistent.sock", version="1.41")

    try:
        with pytest.raises(ValueError, match="not both"):
            DockerRuntime(client, host="unix:///var/run/docker.sock")
    finally:
        client.close()


# --- create / start / list / stop / remove ---------------------------------------------


@pytest.mark.engine
def test_round_trip_of_a_pod(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    """A network container and an app container sharing its network are created with
    every field of their specs, listed running with their labels, stopped with an exit
    code and finish time, and removed; repeated stops and removals succeed."""
    net_name, app_name = _unique("net"), _unique("app")
    net_labels, app_labels = _owned_labels("net"), _owned_labels("app")
    net_spec = _spec(
        net_name,
        PAUSE_IMAGE,
        labels=net_labels,
        hostname="web",
        ports=(
            PortMapping(80, 18080, host_ip="127.0.0.1"),
            PortMapping(53, 18053, PortProtocol.UDP),
        ),
        dns=("10.0.0.10",),
        dns_search=("default.svc.cluster.local",),
    )
    app_spec = _spec(
        app_name,
        labels=app_labels,
        join=net_name,
        entrypoint=("/bin/sleep",),
        command=("3600",),
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
    assert [f"{tmp_path}:/data:ro"] == host_config["Binds"]
    # The engine records the network container by id although the spec names it.
    assert f"container:{net_id}" == host_config["NetworkMode"]
    assert ["GREETING=hello world", "EMPTY="] == config["Env"]
    assert (["/bin/sleep"], ["3600"]) == (config["Entrypoint"], config["Cmd"])
    assert "/tmp" == config["WorkingDir"]
    assert not host_config["Privileged"]
    net_recorded = engine.api.inspect_container(net_id)
    assert {
        "80/tcp": [{"HostIp": "127.0.0.1", "HostPort": "18080"}],
        "53/udp": [{"HostIp": "", "HostPort": "18053"}],
    } == net_recorded["HostConfig"]["PortBindings"]
    assert {"53/udp", "80/tcp"} == set(net_recorded["Config"]["ExposedPorts"])
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


@pytest.mark.engine
def test_entrypoint_and_command_none_keep_the_images(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """An empty entrypoint and command leave the image's CMD in place."""
    container_id = _create(runtime, cleanup, _spec(_unique("cmd"), entrypoint=(), command=None))

    config = engine.api.inspect_container(container_id)["Config"]
    assert (None, ["/bin/sleep", "3600"]) == (config["Entrypoint"], config["Cmd"])


@pytest.mark.engine
def test_remove_of_a_running_container_fails(cleanup: Cleanup, runtime: DockerRuntime) -> None:
    """Removing a container that runs is refused (nothing is forced)."""
    container_id = _create(runtime, cleanup, _spec(_unique("running"), PAUSE_IMAGE))
    runtime.start_container(container_id)

    with pytest.raises(RuntimeCallError) as caught:
        runtime.remove_container(container_id)
    assert ("remove", container_id) == (caught.value.operation, caught.value.target)


# --- list: exit codes and finish times -------------------------------------------------


@pytest.mark.engine
def test_exit_code_and_finish_time_of_exited_and_created_containers(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """An owned container that exited 3 is listed with exit code 3 and its finish time; a
    foreign one with the exit code from Status and no finish time; a container never
    started is not running and never finished."""
    exit3 = ("/bin/sh", "-c", "exit 3")
    owned_id = _create(runtime, cleanup, _spec(_unique("exit3"), entrypoint=exit3))
    foreign_id = _create(
        runtime, cleanup, _spec(_unique("foreign"), entrypoint=exit3, labels=run_labels())
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
    assert (False, 3, None) == (foreign.running, foreign.exit_code, foreign.finished_at)
    assert (False, 0, None) == (created.running, created.exit_code, created.finished_at)


@pytest.mark.engine
def test_exited_containers_are_inspected_once(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    runtime: DockerRuntime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first list inspects each exited owned container once; later lists inspect
    nothing: not those again, nor running or foreign containers."""
    exit3 = ("/bin/sh", "-c", "exit 3")
    exited = [_create(runtime, cleanup, _spec(_unique("once"), entrypoint=exit3)) for _ in "ab"]
    foreign = _create(
        runtime, cleanup, _spec(_unique("foreign"), entrypoint=exit3, labels=run_labels())
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


@pytest.mark.engine
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


@pytest.mark.engine
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


@pytest.mark.engine
def test_conflicting_network_options_are_a_runtime_call_error(
    cleanup: Cleanup, runtime: DockerRuntime
) -> None:
    """The engine refuses a hostname together with container: network mode (400)."""
    net_id = _create(runtime, cleanup, _spec(_unique("net"), PAUSE_IMAGE))
    name = _unique("conflicting")
    cleanup.add(name)

    with pytest.raises(RuntimeCallError, match="conflicting options"):
        runtime.create_container(_spec(name, join=net_id, hostname="x"))


@pytest.mark.engine
def test_start_of_a_missing_container_fails(runtime: DockerRuntime) -> None:
    """Starting a container that does not exist is an error (unlike stop and remove)."""
    with pytest.raises(RuntimeCallError, match="No such container"):
        runtime.start_container("podsync-test-missing-" + secrets.token_hex(4))


@pytest.mark.parametrize(
    "host",
    [
        "unix:///nonexistent.sock",  # no socket file
        f"tcp://127.0.0.1:{_closed_loopback_port()}",  # nothing listens
    ],
)
@pytest.mark.real_clock  # real connections, and a bound on how long they take
def test_unreachable_engine_is_engine_unavailable(host: str) -> None:
    """An engine that cannot be reached raises EngineUnavailable: one line, naming the
    host, from the first call (building the runtime connects to nothing)."""
    runtime = DockerRuntime(host=host)

    started = time.monotonic()
    with pytest.raises(EngineUnavailable) as caught:
        runtime.list_containers()
    message = str(caught.value)
    assert message.startswith(f"list: cannot reach the Docker engine at {host}: ")
    assert "\n" not in message
    assert any(r in message for r in ("No such file or directory", "Connection refused"))
    assert time.monotonic() - started < 5
    runtime.close()


def test_malformed_host_is_engine_unavailable() -> None:
    """A host the SDK cannot even parse (a port out of range) is a podsync error naming
    it, not the SDK's bare ValueError."""
    with pytest.raises(EngineUnavailable) as caught:
        DockerRuntime(host="tcp://127.0.0.1:99999").list_containers()

    assert "cannot use the Docker engine at tcp://127.0.0.1:99999: " in str(caught.value)


def test_ping_of_an_unreachable_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """ping() raises EngineUnavailable naming DOCKER_HOST when it is taken from there."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent.sock")
    runtime = DockerRuntime()

    assert "unix:///nonexistent.sock" == runtime.host
    with pytest.raises(EngineUnavailable, match=r"at unix:///nonexistent\.sock: "):
        runtime.ping()


@pytest.mark.engine
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


@pytest.mark.engine
def test_exec_returns_output_and_exit_code(runtime: DockerRuntime, running: str) -> None:
    """An exec returns its exit code and its output."""
    assert ExecResult(0, b"hi\n") == runtime.exec_in_container(running, ["/bin/echo", "hi"], 5)
    assert 1 == runtime.exec_in_container(running, ["/bin/false"], 5).exit_code


@pytest.mark.engine
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


@pytest.mark.engine
def test_exec_in_a_stopped_container_fails(cleanup: Cleanup, runtime: DockerRuntime) -> None:
    """Exec needs a running container."""
    container_id = _create(runtime, cleanup, _spec(_unique("stopped")))

    with pytest.raises(RuntimeCallError) as caught:
        runtime.exec_in_container(container_id, ["/bin/true"], 5)
    assert "exec" == caught.value.operation


# --- images, threads, the connection ---------------------------------------------------


@pytest.mark.engine
def test_list_images_includes_the_test_images(runtime: DockerRuntime) -> None:
    """list_images reports the test images with their tags and without placeholders."""
    images = runtime.list_images()
    tags = {tag for image in images for tag in image.tags}

    assert {TEST_IMAGE, PAUSE_IMAGE} <= tags
    assert all(i.id.startswith("sha256:") for i in images)
    assert not any("<none>" in t for i in images for t in (*i.tags, *i.digests))


@pytest.mark.engine
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


@pytest.mark.engine
def test_a_client_passed_in_is_used_and_left_open(
    engine: docker.DockerClient, runtime: DockerRuntime
) -> None:
    """A runtime built on the caller's client uses it and does not close it."""
    with DockerRuntime(engine) as borrowed:
        borrowed.ping()
        assert runtime.host == borrowed.host
    engine.api.ping()


@pytest.mark.engine
def test_close_releases_clients_and_the_runtime_reconnects(runtime: DockerRuntime) -> None:
    """close() empties the client pool; a later call opens a new client."""
    runtime.ping()
    assert 1 == len(runtime._idle)

    runtime.close()
    assert [] == runtime._idle
    runtime.ping()
    assert 1 == len(runtime._idle)


# --- the pure helpers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("Exited (137) 5 minutes ago", 137),
        ("Exited (0) Less than a second ago", 0),
        ("Exited (3) About an hour ago", 3),
        ("Restarting (1) 2 seconds ago", 1),
        ("Up 2 hours", 0),
        ("Up 3 seconds (Paused)", 0),
        ("Created", 0),
        ("Dead", 0),
        ("Removal In Progress", 0),
        ("", 0),
        ("Exited (-1) 1 second ago", -1),  # not a real code, but parsed
    ],
)
def test__exit_code(status: str, expected: int) -> None:
    """The exit code is read from the list's Status text, 0 when it has none."""
    assert expected == _exit_code(status)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1970-01-01T00:00:00Z", 0.0),
        ("2024-01-02T03:04:05.123456789Z", 1704164645.123456),  # nanoseconds cut
        ("2024-01-02T03:04:05Z", 1704164645.0),
        ("2024-01-02T04:04:05.5+01:00", 1704164645.5),
        ("0001-01-01T00:00:00Z", None),  # Docker's zero time: never finished
        ("", None),
        ("yesterday", None),
        (None, None),
    ],
)
def test_timestamp(text: object, expected: float | None) -> None:
    """RFC 3339 times become epoch seconds; zero and unreadable times None."""
    assert expected == timestamp(text)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["/web"], "web"),
        (["/app/db", "/db"], "db"),  # a legacy link alias comes first
        (["web"], "web"),
        ([], ""),
    ],
)
def test__name(names: list[str], expected: str) -> None:
    """The container's own name, without the leading slash or link aliases."""
    assert expected == _name(names)


def test_observed_from_list() -> None:
    """A list entry becomes an ObservedContainer; paused containers run."""
    entry = {
        "Id": "abc",
        "Names": ["/k8s_web.1_pod.default.api_uid_1"],
        "Image": "busybox:latest",
        "Labels": None,
        "Created": 1700000000,
        "State": "paused",
        "Status": "Up 5 minutes (Paused)",
    }

    assert ObservedContainer(
        id="abc",
        name="k8s_web.1_pod.default.api_uid_1",
        image="busybox:latest",
        labels={},
        created=1700000000.0,
        running=True,
    ) == observed_from_list(entry)


SEED_NAME = "k8s_web.1_pod.default.api_uid_00000001"
CRI_NAME = "k8s_POD_kube-apiserver-docker-desktop_kube-system_uid_0"


@pytest.mark.parametrize(
    ("name", "labels", "expected"),
    [
        ("anything", {LABEL_POD_UID: "u"}, True),
        (SEED_NAME, {}, True),  # left by a 2014 kubelet: a plan may take it over
        ("k8s_web.1_pod.default.api_uid_1", {}, False),  # not what the seed wrote
        ("k8s_web", {}, False),  # no pod full name
        ("web", {}, False),
        (CRI_NAME, {}, False),  # cri-dockerd's name
        (CRI_NAME, {"io.kubernetes.docker.type": "podsandbox"}, False),
        (SEED_NAME, {"io.kubernetes.pod.uid": "uid"}, False),
        ("anything", {LABEL_POD_UID: "u", "io.kubernetes.pod.uid": "u"}, False),
    ],
)
def test_inspected_containers_follow_the_ownership_rule(
    name: str, labels: dict[str, str], expected: bool
) -> None:
    """list_containers inspects an exited container when the planner's ownership rule,
    with 2014 containers taken over, gives it to podsync (a plan may take it over; the
    runtime does not know the plan's options) - never a Kubernetes node's."""

    class API:
        base_url = "unix:///stub.sock"

        def __init__(self) -> None:
            self.inspected: list[str] = []

        def containers(self, all: bool) -> list[dict[str, Any]]:
            return [
                {
                    "Id": "x",
                    "Names": [f"/{name}"],
                    "Image": "busybox",
                    "Labels": labels,
                    "Created": 1,
                    "State": "exited",
                    "Status": "Exited (3) 2 seconds ago",
                }
            ]

        def inspect_container(self, container: str) -> dict[str, Any]:
            self.inspected.append(container)
            return {"State": {"ExitCode": 3, "FinishedAt": "2024-01-01T00:00:00Z"}}

    api = API()
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=api)))

    (listed,) = runtime.list_containers()

    assert (["x"] if expected else []) == api.inspected
    assert expected == (listed.finished_at is not None)


def test_image_from_list() -> None:
    """Dangling placeholders are dropped from tags and digests."""
    entry = {
        "Id": "sha256:1",
        "RepoTags": ["<none>:<none>"],
        "RepoDigests": ["<none>@<none>", "busybox@sha256:2"],
    }

    assert ObservedImage("sha256:1", (), ("busybox@sha256:2",)) == image_from_list(entry)
    assert ObservedImage("sha256:3") == image_from_list(
        {"Id": "sha256:3", "RepoTags": None, "RepoDigests": None}
    )


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"IPAddress": "172.17.0.2", "Networks": {}}, "172.17.0.2"),
        ({"IPAddress": "", "Networks": {"none": {"IPAddress": ""}}}, None),
        ({"IPAddress": "", "Networks": {"net1": {"IPAddress": "10.1.0.5"}}}, "10.1.0.5"),
        ({}, None),
    ],
)
def test_address_of(settings: dict[str, Any], expected: str | None) -> None:
    """The address is the bridge's, else the first network's; none has none."""
    assert expected == address_of(settings)


# --- round trips (issue 16: a one-pod apply costs the engine calls it needs) ------------


def _sent_requests(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every request any ``APIClient`` sends from now on, as ``METHOD /path``."""
    sent: list[str] = []
    original = docker.APIClient.send

    def recording_send(self: docker.APIClient, request: Any, **kwargs: Any) -> Any:
        sent.append(f"{request.method} {request.path_url.split('?')[0]}")
        return original(self, request, **kwargs)

    monkeypatch.setattr(docker.APIClient, "send", recording_send)
    return sent


@pytest.mark.engine
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


class _PingResponse:
    """What ``requests`` answers to ``GET /_ping``, as far as the runtime reads it."""

    def __init__(self, headers: dict[str, str], status: int = 200) -> None:
        self.headers = headers
        self.status = status
        self.closed = False

    def raise_for_status(self) -> None:
        if self.status >= 400:
            raise RuntimeError(f"HTTP {self.status}")

    def close(self) -> None:
        self.closed = True


class _Probe:
    """A stand-in for the probe ``APIClient``: its ``get`` and ``version``."""

    base_url = "http+docker://localhost"

    def __init__(self, response: _PingResponse, version: str = "1.24") -> None:
        self.response = response
        self.asked: list[str] = []
        self._version = version

    def get(self, url: str, timeout: int) -> _PingResponse:
        self.asked.append(f"GET {url} timeout={timeout}")
        return self.response

    def version(self, api_version: bool) -> dict[str, str]:
        self.asked.append(f"version api_version={api_version}")
        return {"ApiVersion": self._version}


def test_the_api_version_comes_from_the_ping_header() -> None:
    """The ``API-Version`` header of ``/_ping`` is the version; nothing else is asked,
    the response is closed, and the call has the runtime's timeout."""
    runtime = DockerRuntime(host="unix:///nonexistent.sock", timeout=7)
    probe = _Probe(_PingResponse({"API-Version": "1.41"}))

    version = runtime._engine_api_version(cast(docker.APIClient, probe))

    assert "1.41" == version
    assert ["GET http+docker://localhost/_ping timeout=7"] == probe.asked
    assert probe.response.closed


def test_an_engine_without_the_ping_header_is_asked_its_version() -> None:
    """An engine older than API 1.25 sends no ``API-Version`` header: ``/version`` then
    tells."""
    runtime = DockerRuntime(host="unix:///nonexistent.sock")
    probe = _Probe(_PingResponse({}), version="1.24")

    assert "1.24" == runtime._engine_api_version(cast(docker.APIClient, probe))
    assert "version api_version=False" == probe.asked[-1]


def test_a_failed_ping_is_not_read_as_a_version() -> None:
    """An error status of ``/_ping`` raises (the caller translates it), and the
    response is closed."""
    runtime = DockerRuntime(host="unix:///nonexistent.sock")
    probe = _Probe(_PingResponse({"API-Version": "1.41"}, status=500))

    with pytest.raises(RuntimeError, match="HTTP 500"):
        runtime._engine_api_version(cast(docker.APIClient, probe))
    assert probe.response.closed
    assert 1 == len(probe.asked)
