"""``podsync.docker.DockerRuntime`` without an engine: the protocol, unreachable
engines, the API version's negotiation, and the pure helpers of ``_api``. Against the
real engine: ``tests/engine/test_docker_runtime.py``.
"""

from __future__ import annotations

import inspect
import re
import socket
import time
from types import SimpleNamespace
from typing import Any, cast

import docker
import pytest

from podsync.docker import DockerRuntime
from podsync.exceptions import EngineUnavailable
from podsync.model._pod import ObservedContainer, ObservedImage
from podsync.runtime._protocol import Runtime
from podsync.runtime.docker._api import (
    _exit_code,
    _name,
    address_of,
    image_from_list,
    observed_from_list,
    timestamp,
)
from podsync.spec._labels import LABEL_POD_UID

# --- helpers ---------------------------------------------------------------------------


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


# --- unreachable engines ---------------------------------------------------------------


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


# id, DOCKER_HOST, CONTAINER_HOST, the runtime's host (or the error's text)
ENVIRONMENT_HOSTS = [
    ("neither", None, None, "unix:///var/run/docker.sock"),
    ("docker-host", "unix:///run/d.sock", None, "unix:///run/d.sock"),
    ("container-host", None, "unix:///run/p.sock", "unix:///run/p.sock"),
    ("docker-host-wins", "unix:///run/d.sock", "unix:///run/p.sock", "unix:///run/d.sock"),
    ("empty-docker-host-is-unset", "", "unix:///run/p.sock", "unix:///run/p.sock"),
    (
        "podman-ssh-socket-refused",
        None,
        "ssh://core@node1/run/podman/podman.sock",
        "error: podman reaches the socket /run/podman/podman.sock over ssh itself",
    ),
]


@pytest.mark.parametrize(
    ("docker_host", "container_host", "expected"),
    [row[1:] for row in ENVIRONMENT_HOSTS],
    ids=[row[0] for row in ENVIRONMENT_HOSTS],
)
def test_the_engine_comes_from_docker_host_else_container_host(
    docker_host: str | None,
    container_host: str | None,
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``DockerRuntime()`` reads DOCKER_HOST, else podman's CONTAINER_HOST, else the
    local socket; podman's ssh form (a socket path after the host) is refused."""
    for name, value in (("DOCKER_HOST", docker_host), ("CONTAINER_HOST", container_host)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    if expected.startswith("error: "):
        with pytest.raises(EngineUnavailable, match=re.escape(expected.removeprefix("error: "))):
            DockerRuntime()
        return
    runtime = DockerRuntime()
    assert runtime.host == expected
    assert runtime._base_url == expected


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


# --- the API version, from the ping (issue 16: a one-pod apply costs the calls it needs) -


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


# --- the OOM score probe -----------------------------------------------------------------

_NO_ENTRYPOINT = (
    "failed to create shim task: OCI runtime create failed: runc create failed: unable to "
    'start container process: exec: "/podsync-oom-probe": stat /podsync-oom-probe: no such '
    "file or directory: unknown"
)
# What runc says when it may not write a negative oom_score_adj (no CAP_SYS_RESOURCE).
_NO_CAPABILITY = (
    "failed to create shim task: OCI runtime create failed: runc create failed: unable to "
    "start container process: can't get final child's PID from pipe: EOF: unknown"
)


class _CreatingAPI:
    """An engine stub for creates: it records every call, and its probe's start fails
    with ``probe_start``."""

    base_url = "unix:///stub.sock"

    def __init__(self, probe_start: str) -> None:
        self.probe_start = probe_start
        self.calls: list[tuple[str, Any]] = []

    def create_host_config(self, **kwargs: Any) -> dict[str, Any]:
        return kwargs

    def get(self, url: str, **kwargs: Any) -> SimpleNamespace:
        """The ping that asks whether the engine is podman: Docker's (no libpod header)."""
        return SimpleNamespace(headers={"API-Version": "1.41"}, close=lambda: None)

    def create_container(self, image: str, **kwargs: Any) -> dict[str, str]:
        probe = kwargs.get("entrypoint") == ["/podsync-oom-probe"]
        self.calls.append(("create", kwargs["host_config"].get("oom_score_adj")))
        return {"Id": "probe" if probe else kwargs["name"]}

    def start(self, container: str) -> None:
        self.calls.append(("start", container))
        raise docker.errors.APIError("500", explanation=self.probe_start)

    def remove_container(self, container: str, force: bool) -> None:
        self.calls.append(("remove", container))


@pytest.mark.parametrize(
    ("probe_start", "scores"),
    [
        # The entrypoint was looked for: the score had been set, so scores are kept.
        (_NO_ENTRYPOINT, [-997, -998, 1000]),
        # runc failed before: negative scores are raised to 0 (the engine's default, so
        # not sent), the others kept.
        (_NO_CAPABILITY, [None, None, 1000]),
    ],
    ids=["engine-lowers-scores", "engine-without-cap-sys-resource"],
)
def test_negative_oom_scores_on_an_engine_that_cannot_lower_them(
    probe_start: str, scores: list[int | None], caplog: pytest.LogCaptureFixture
) -> None:
    """The first create with a negative OOM score probes the engine once (a container
    that starts no process, removed at once); an engine that cannot lower a score gets 0
    for negative scores, with one warning; positive scores never probe."""
    from podsync.actions._actions import CreateSpec

    api = _CreatingAPI(probe_start)
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=api)))

    for name, score in (("a", -997), ("b", -998), ("c", 1000)):
        runtime.create_container(CreateSpec(name=name, image="busybox", oom_score_adj=score))

    assert [
        ("create", -1),
        ("start", "probe"),
        ("remove", "probe"),
        *(("create", s) for s in scores),
    ] == api.calls
    warned = [r for r in caplog.records if "cannot lower OOM scores" in r.getMessage()]
    assert (1 if scores[0] is None else 0) == len(warned)
