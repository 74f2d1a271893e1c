"""Handlers and probes: exec through the runtime, httpGet against a real HTTP server on
127.0.0.1, tcpSocket to loopback ports (seed runHandler, TestRunHandlerExec/Http,
#8 and #16 of reference §4.1).

Only loopback is ever connected to: every handler names host 127.0.0.1, or the fake
runtime reports 127.0.0.1 as the containers' address.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest

from podsync import (
    Container,
    Event,
    EventKind,
    Handler,
    HTTPGetAction,
    Lifecycle,
    ObservedContainer,
    Pod,
    Port,
    Probe,
    TCPSocketAction,
    sync,
)
from podsync.actions._actions import CreateSpec
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.prober import probe_liveness
from podsync.prober._handlers import HandlerError, http_get, resolve_port, run_handler, tcp_connect
from podsync.runtime._protocol import ExecResult
from podsync.testing import FakeClock, FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
LOOPBACK = "127.0.0.1"
# A 2014 kubelet's network container: taken over only with adopt_2014_containers.
LEGACY_NET = ObservedContainer(
    "9876", "k8s_net.0_foo.new.test_12345678_00000000", image=PAUSE, running=True, created=NOW - 100
)


@attrs.define
class Server:
    port: int
    paths: list[str]


@pytest.fixture
def server() -> Iterator[Server]:
    """An HTTP server on 127.0.0.1: /ok and / answer 200, /moved 302, /fail 500,
    anything else 404. It records the paths it was asked for."""
    paths: list[str] = []
    statuses = {"/": 200, "/ok": 200, "/bar": 200, "/moved": 302, "/fail": 500}

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            paths.append(self.path)
            self.send_response(statuses.get(self.path, 404))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    httpd = ThreadingHTTPServer((LOOPBACK, 0), Answer)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield Server(httpd.server_address[1], paths)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def listening() -> Iterator[int]:
    """A loopback port something listens on."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        s.listen()
        yield s.getsockname()[1]


def _calls(rt: FakeRuntime) -> list[Any]:
    """The engine calls, podsync's stop records aside (``tests/unit/applier/test_stop_records``
    checks those), and the termination-message files beside a 2014 network container
    (the volume list, the pod's state volume and the file written into it:
    ``tests/unit/loop/test_sync`` checks those): what these tests look at is the hooks'
    order."""
    return [
        c
        for c in rt.calls
        if not (
            c.name in ("create_volume", "remove_volume")
            and str(c.args[0]).startswith("podsync-stopped_")
        )
        and not (
            c.name in ("create_volume", "write_volume")
            and str(c.args[0]).startswith("podsync-state_")
        )
        and c.name != "list_volumes"
    ]


def _names(rt: FakeRuntime) -> list[str]:
    return [c.name for c in _calls(rt)]


def closed_port() -> int:
    """A loopback port nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def engine(**kwargs: Any) -> FakeRuntime:
    clock = iter(range(int(NOW) - 500, int(NOW)))
    kwargs.setdefault("images", ["busybox:1", PAUSE])
    return FakeRuntime(clock=lambda: float(next(clock)), **kwargs)


def foo_pod(*containers: Container) -> Pod:
    return Pod("foo", containers, namespace="new", source="test", uid="12345678")


def run(
    desired: Sequence[Pod], rt: FakeRuntime, tmp_path: Path, *, adopt: bool = False, **kwargs: Any
) -> Any:
    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path), adopt_2014_containers=adopt)
    kwargs.setdefault("clock", lambda: NOW)
    return sync(desired, rt, options=options, now=NOW, **kwargs)


def http(port: int | str, path: str = "", host: str = LOOPBACK, scheme: str = "HTTP") -> Handler:
    return Handler(http_get=HTTPGetAction(port=port, path=path, host=host, scheme=scheme))


# --- the pieces --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("port", "default", "expected"),
    [
        (8080, None, 8080),  # a number is itself
        ("8080", None, 8080),  # so is a numeric string
        ("web", None, 9000),  # a name is looked up in the container's ports
        ("", 80, 80),  # seed: an empty port is 80 for HTTP
    ],
)
def test_resolve_port(port, default, expected):
    """Ports are numbers, numeric strings or the names of the container's ports."""
    ports = (Port(9000, name="web"), Port(9001))

    assert expected == resolve_port(port, ports, default=default)


@pytest.mark.parametrize(
    ("port", "message"),
    [
        ("metrics", "no container port is named 'metrics' (named ports: ['web'])"),
        ("", "no port given"),
        (0, "port must be 1-65535, got 0"),
        (70000, "port must be 1-65535, got 70000"),
    ],
)
def test_resolve_port_errors(port, message):
    """An unknown name, an empty port without a default or a bad number cannot be run."""
    with pytest.raises(HandlerError) as info:
        resolve_port(port, (Port(9000, name="web"),))

    assert message == str(info.value)
    assert not info.value.ran


@pytest.mark.parametrize(("path", "ok"), [("ok", True), ("/moved", True), ("/fail", False)])
def test_http_get_status(server, path, ok):
    """2xx and 3xx are success (redirects are not followed); anything else fails. The
    path gets its leading slash (seed: host:port + "/" + path)."""
    if ok:
        http_get(LOOPBACK, server.port, path, "HTTP", 1.0)
    else:
        with pytest.raises(HandlerError, match=f"GET http://127.0.0.1:{server.port}/fail: status"):
            http_get(LOOPBACK, server.port, path, "HTTP", 1.0)

    assert ["/" + path.lstrip("/")] == server.paths


def test_http_get_refused():
    """A refused connection is a failure, with the URL in the message."""
    port = closed_port()

    with pytest.raises(HandlerError, match=f"GET http://127.0.0.1:{port}/x: .*refused") as info:
        http_get(LOOPBACK, port, "x", "HTTP", 1.0)

    assert info.value.ran


def test_http_get_unknown_scheme():
    """Only HTTP and HTTPS are spoken."""
    with pytest.raises(HandlerError, match="unsupported scheme 'FTP'"):
        http_get(LOOPBACK, 1, "", "FTP", 1.0)


def test_tcp_socket(listening):
    """tcpSocket succeeds when something accepts, fails when the port is closed."""
    tcp_connect(LOOPBACK, listening, 1.0)
    port = closed_port()

    with pytest.raises(HandlerError, match=f"connect 127.0.0.1:{port}: .*refused"):
        tcp_connect(LOOPBACK, port, 1.0)


def test_run_handler_exec():
    """TestRunHandlerExec: the command runs in the container through the runtime;
    a non-zero exit code fails, quoting the output."""
    rt = engine()
    cid = rt.create_container(CreateSpec("app", "busybox:1"))
    rt.start_container(cid)
    rt.set_exec_result(["ls", "-a"], 2, b"no such file\n")

    run_handler(Handler(exec_command=("ls",)), rt, cid, timeout=1.0)
    with pytest.raises(HandlerError, match=r"exec \['ls', '-a'\] exited with code 2: no such file"):
        run_handler(Handler(exec_command=("ls", "-a")), rt, cid, timeout=1.0)

    assert [(cid, ("ls",), 1.0), (cid, ("ls", "-a"), 1.0)] == [
        c.args for c in rt.calls if c.name == "exec"
    ]


def test_run_handler_uses_the_network_address(server):
    """A handler without a host connects to the address of the pod's network container."""
    rt = engine(address=LOOPBACK)
    net = rt.create_container(CreateSpec("net", "busybox:1"))

    run_handler(http(server.port, "ok", host=""), rt, "app-id", network_id=net, timeout=1.0)

    assert ["/ok"] == server.paths
    assert ("address", (net,)) == (_calls(rt)[-1].name, _calls(rt)[-1].args)


def test_run_handler_without_an_address():
    """No host and no address: the handler cannot run."""
    rt = engine()
    cid = rt.create_container(CreateSpec("app", "busybox:1"))

    with pytest.raises(HandlerError, match="has no network address") as info:
        run_handler(Handler(tcp_socket=TCPSocketAction(port=80)), rt, cid, timeout=1.0)

    assert not info.value.ran


def test_run_handler_named_port(server):
    """A named port is resolved through the container's ports."""
    rt = engine()

    run_handler(http("web", "bar"), rt, "x", ports=(Port(server.port, name="web"),), timeout=1.0)

    assert ["/bar"] == server.paths


# --- postStart and preStop through apply and sync ------------------------------------------


def test_sync_pods_with_net_creates_container_calls_handler(server, tmp_path):
    """#8 TestSyncPodsWithNetCreatesContainerCallsHandler: bar is created and started,
    then its postStart handler GETs http://<host>:<port>/bar."""
    pod = foo_pod(
        Container("bar", "busybox:1", lifecycle=Lifecycle(post_start=http(server.port, "bar")))
    )
    rt = engine(containers=[LEGACY_NET])

    result = run([pod], rt, tmp_path, adopt=True)

    assert ["list", "list_images", "create", "start"] == _names(rt)
    assert ["/bar"] == server.paths
    assert result.ok


def test_sync_pod_event_handler_fails(tmp_path):
    """#16 TestSyncPodEventHandlerFails: the postStart handler fails, so the new
    container is stopped and the create reported failed; the sync is not ok."""
    port = closed_port()
    pod = foo_pod(Container("bar", "busybox:1", lifecycle=Lifecycle(post_start=http(port, "bar"))))
    rt = engine(containers=[LEGACY_NET])
    events: list[Event] = []

    result = run([pod], rt, tmp_path, adopt=True, on_event=events.append)

    assert ["list", "list_images", "create", "start", "stop"] == _names(rt)
    created = _calls(rt)[3].args[0]
    assert not rt.container(created).running
    assert not result.ok
    (failure,) = result.apply_result.failures
    assert failure.error.startswith(f"postStart handler failed: GET http://127.0.0.1:{port}/bar: ")
    assert [
        EventKind.VOLUME_CREATED,  # bar's state volume, beside the 2014 network container
        EventKind.CREATED,
        EventKind.STARTED,
        EventKind.HOOK_FAILED,
        EventKind.STOPPING,
        EventKind.FAILED,
    ] == [e.kind for e in events]


@pytest.mark.parametrize(("exit_code", "ok"), [(0, True), (1, False)])
def test_exec_post_start(tmp_path, exit_code, ok):
    """An exec postStart handler runs in the new container; a non-zero exit stops it."""
    hook = Handler(exec_command=("/bin/setup", "--fast"))
    pod = foo_pod(Container("bar", "busybox:1", lifecycle=Lifecycle(post_start=hook)))
    rt = engine(containers=[LEGACY_NET])
    rt.set_exec_result(["/bin/setup", "--fast"], exit_code, b"oops")

    result = run([pod], rt, tmp_path, adopt=True)

    expected = ["create", "start", "exec"] + ([] if ok else ["stop"])
    assert expected == _names(rt)[2:]
    assert ok == result.ok
    if not ok:
        assert (
            "postStart handler failed: exec ['/bin/setup', '--fast'] exited with code 1: oops"
            == result.apply_result.failures[0].error
        )


def test_post_start_named_port_through_sync(server, tmp_path):
    """sync resolves a postStart handler's named port through the desired pod's ports
    (a plan's CreateSpec carries port numbers only)."""
    hook = http("web", "ok")
    container = Container(
        "bar",
        "busybox:1",
        ports=(Port(server.port, name="web"),),
        lifecycle=Lifecycle(post_start=hook),
    )
    rt = engine(containers=[LEGACY_NET])

    result = run([foo_pod(container)], rt, tmp_path, adopt=True)

    assert ["/ok"] == server.paths
    assert result.ok


def labelled_pod(rt: FakeRuntime, tmp_path: Path, pre_stop: Handler) -> Pod:
    pod = foo_pod(Container("bar", "busybox:1", lifecycle=Lifecycle(pre_stop=pre_stop)))
    assert run([pod], rt, tmp_path).ok
    rt.clear_calls()
    return pod


def test_pre_stop_runs_before_stop(tmp_path):
    """preStop (exec) runs in the container, then the container is stopped; the
    handler is read back from the container's label once the pod is gone."""
    rt = engine()
    labelled_pod(rt, tmp_path, Handler(exec_command=("drain",)))
    bar = next(c for c in rt.containers if "_bar." in c.name)

    result = run([], rt, tmp_path)

    assert ["list", "exec", "stop", "stop"] == _names(rt)
    assert (bar.id, ("drain",), 30.0) == _calls(rt)[1].args  # the default grace period
    assert bar.id == _calls(rt)[2].args[0]
    assert result.ok


def test_pre_stop_runs_for_a_container_removed_from_the_spec(tmp_path):
    """A container whose name left the pod spec stops gracefully too: its preStop
    handler, remembered in its label, runs before the stop, as when the whole pod
    goes."""
    rt = engine()
    drain = Handler(exec_command=("drain",))
    both = foo_pod(
        Container("bar", "busybox:1", lifecycle=Lifecycle(pre_stop=drain)),
        Container("baz", "busybox:1"),
    )
    assert run([both], rt, tmp_path).ok
    rt.clear_calls()
    bar = next(c for c in rt.containers if "_bar." in c.name)

    result = run([foo_pod(Container("baz", "busybox:1"))], rt, tmp_path)

    (kill,) = [a for a in result.plan.actions if getattr(a, "container", "") == "bar"]
    assert drain == kill.pre_stop
    assert ["list", "exec", "stop"] == _names(rt)
    assert (bar.id, ("drain",)) == _calls(rt)[1].args[:2]
    assert result.ok


def test_failed_pre_stop_does_not_prevent_the_stop(tmp_path):
    """A failing preStop handler is reported as an event; the container still stops
    and the action is done (the kubelet's behaviour)."""
    rt = engine()
    labelled_pod(rt, tmp_path, Handler(exec_command=("drain",)))
    rt.set_exec_result(["drain"], 1)
    events: list[Event] = []

    result = run([], rt, tmp_path, on_event=events.append)

    assert result.ok
    assert [False, False] == [c.running for c in rt.containers]
    assert [
        (EventKind.STOPPING, "bar"),
        (EventKind.HOOK_FAILED, "bar"),
        (EventKind.STOPPING, "net"),
    ] == [(e.kind, e.container) for e in events]
    assert "preStop handler failed: exec ['drain'] exited with code 1" == events[1].message


def test_pre_stop_http_uses_the_container_address(server, tmp_path):
    """A preStop httpGet without a host goes to the address of the container's
    network (the fake follows container:<net> as Docker does)."""
    rt = engine(address=LOOPBACK)
    labelled_pod(rt, tmp_path, http(server.port, "bar", host=""))

    assert run([], rt, tmp_path).ok
    assert ["/bar"] == server.paths


# --- the grace period: one budget for preStop and the stop --------------------------------


@pytest.fixture
def ticking() -> FakeClock:
    """apply's clock: it moves only when a hook takes time (``slow_hooks``)."""
    return FakeClock(NOW, step=0)


def slow_hooks(rt: FakeRuntime, clock: FakeClock, seconds: float) -> None:
    """Every exec in ``rt`` takes ``seconds`` on ``clock``; one that would take longer
    than its timeout returns at the timeout as timed out (as DockerRuntime does)."""
    original = rt.exec_in_container

    def exec_in_container(container_id: str, command: Sequence[str], timeout: float) -> Any:
        clock.advance(min(seconds, timeout))
        result = original(container_id, command, timeout)
        return result if seconds <= timeout else ExecResult(-1)

    rt.exec_in_container = exec_in_container  # type: ignore[method-assign]


@pytest.mark.parametrize(
    ("grace", "hook_seconds", "stop_timeout"),
    [
        (10, 4.5, 6),  # the hook's whole seconds (4) are taken from the grace
        (10, 0.4, 10),  # a quick hook takes nothing (the kubelet counts whole seconds)
        (10, 30.0, 2),  # the hook overran: it was cut at the grace, then 2 s to stop
        (3, 2.0, 2),  # never below the 2 s minimum...
        (1, 30.0, 1),  # ...unless the grace itself is shorter: it is honoured as given
    ],
)
def test_pre_stop_time_counts_against_the_grace_period(
    tmp_path, ticking, grace, hook_seconds, stop_timeout
):
    """The grace period is one budget (the kubelet's killContainer): the preStop
    handler may take at most the grace period, and the stop gets what is left, at
    least 2 s (minimumGracePeriodInSeconds) - not the hook's time plus the grace."""
    rt = engine()
    labelled_pod(rt, tmp_path, Handler(exec_command=("drain",)))
    bar = next(c for c in rt.containers if "_bar." in c.name)
    slow_hooks(rt, ticking, hook_seconds)

    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path), stop_timeout=grace)
    result = sync([], rt, options=options, clock=ticking)

    assert result.ok
    assert ["list", "exec", "stop", "stop"] == _names(rt)
    assert (bar.id, ("drain",), float(grace)) == _calls(rt)[1].args
    assert (bar.id, stop_timeout) == _calls(rt)[2].args


def test_no_pre_stop_with_a_grace_period_of_zero(tmp_path, ticking):
    """A grace period of 0 leaves no time for a preStop handler: it is not run (the
    kubelet runs preStop only when the grace period is positive), and the container
    is stopped at once."""
    rt = engine()
    labelled_pod(rt, tmp_path, Handler(exec_command=("drain",)))
    bar = next(c for c in rt.containers if "_bar." in c.name)

    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path), stop_timeout=0)

    result = sync([], rt, options=options, clock=ticking)

    assert result.ok
    assert ["list", "stop", "stop"] == _names(rt)
    assert (bar.id, 0) == _calls(rt)[1].args


def test_failed_post_start_stops_with_the_pods_grace_period(tmp_path, ticking):
    """A container whose postStart handler failed is stopped as any other (the
    kubelet's killContainer with reason FailedPostStartHook): its preStop handler
    runs, and the stop gets the pod's terminationGracePeriodSeconds, not a fixed 10 s."""
    hooks = Lifecycle(
        post_start=Handler(exec_command=("setup",)), pre_stop=Handler(exec_command=("drain",))
    )
    pod = attrs.evolve(
        foo_pod(Container("bar", "busybox:1", lifecycle=hooks)), termination_grace_period_seconds=3
    )
    rt = engine(containers=[LEGACY_NET])
    rt.set_exec_result(["setup"], 1)
    slow_hooks(rt, ticking, 1.0)

    result = run([pod], rt, tmp_path, adopt=True, clock=ticking)

    assert not result.ok
    assert ["create", "start", "exec", "exec", "stop"] == _names(rt)[2:]
    created = _calls(rt)[3].args[0]
    assert (created, ("drain",), 3.0) == _calls(rt)[5].args
    assert (created, 2) == _calls(rt)[6].args


# --- liveness probes ---------------------------------------------------------------------


def probed_pod(handler: Handler, delay: int = 0) -> Pod:
    return foo_pod(
        Container(
            "bar",
            "busybox:1",
            ports=(Port(1, name="web"),),
            liveness_probe=Probe(handler, initial_delay_seconds=delay),
        ),
        Container("quiet", "busybox:1"),
    )


def started(pod: Pod, tmp_path: Path, **kwargs: Any) -> tuple[FakeRuntime, str]:
    rt = engine(**kwargs)
    assert run([pod], rt, tmp_path, probe=False).ok
    bar = next(c for c in rt.containers if "_bar." in c.name)
    rt.clear_calls()
    return rt, bar.id


@pytest.mark.parametrize(("exit_code", "healthy"), [(0, True), (1, False)])
def test_probe_liveness_exec(tmp_path, exit_code, healthy):
    """An exec probe passes on exit 0 and fails otherwise; containers without a probe
    (and network containers) are not probed."""
    pod = probed_pod(Handler(exec_command=("check",)))
    rt, bar = started(pod, tmp_path)
    rt.set_exec_result(["check"], exit_code)

    assert {bar: healthy} == probe_liveness([pod], rt.containers, rt, now=NOW)
    assert ["exec"] == _names(rt)


def test_probe_liveness_initial_delay(tmp_path):
    """Within initialDelaySeconds of creation a container is not probed (seed
    healthy(), strict <); from then on it is."""
    pod = probed_pod(Handler(exec_command=("check",)), delay=60)
    rt, bar = started(pod, tmp_path)
    created = rt.container(bar).created

    assert {} == probe_liveness([pod], rt.containers, rt, now=created + 59)
    assert {bar: True} == probe_liveness([pod], rt.containers, rt, now=created + 60)


@pytest.mark.parametrize(("path", "healthy"), [("/ok", True), ("/fail", False)])
def test_probe_liveness_http_uses_the_pod_address(server, tmp_path, path, healthy):
    """An httpGet probe without a host goes to the pod's network container address."""
    pod = probed_pod(http(server.port, path, host=""))
    rt, bar = started(pod, tmp_path, address=LOOPBACK)
    net = next(c for c in rt.containers if "_net." in c.name)

    assert {bar: healthy} == probe_liveness([pod], rt.containers, rt, now=NOW)
    assert [("address", (net.id,))] == [(c.name, c.args) for c in rt.calls]


def test_probe_liveness_tcp_named_port(listening, tmp_path):
    """A tcpSocket probe resolves a named port through the container's ports."""
    handler = Handler(tcp_socket=TCPSocketAction(port="web", host=LOOPBACK))
    pod = foo_pod(
        Container(
            "bar", "busybox:1", ports=(Port(listening, name="web"),), liveness_probe=Probe(handler)
        )
    )
    rt, bar = started(pod, tmp_path)

    assert {bar: True} == probe_liveness([pod], rt.containers, rt, now=NOW)


def test_probe_that_cannot_run_gives_no_result(tmp_path):
    """When the runtime cannot run the probe (the exec call fails), there is no result:
    the planner counts the container healthy, as the seed did on a health-check error."""
    pod = probed_pod(Handler(exec_command=("check",)))
    rt, _ = started(pod, tmp_path)
    rt.fail("exec")

    assert {} == probe_liveness([pod], rt.containers, rt, now=NOW)


def test_only_desired_running_containers_are_probed(tmp_path):
    """Exited containers and containers of pods that are not desired are not probed."""
    pod = probed_pod(Handler(exec_command=("check",)))
    rt, bar = started(pod, tmp_path)
    other = attrs.evolve(pod, uid="another")

    assert {} == probe_liveness([other], rt.containers, rt, now=NOW)
    rt.exit(bar, 1)
    assert {} == probe_liveness([pod], rt.containers, rt, now=NOW)
    assert [] == rt.calls


def test_probe_liveness_follows_the_ownership_rule(tmp_path):
    """Probes exec in containers, so they reach only the containers the plan owns: a
    2014 kubelet's container only when it is taken over, a Kubernetes node's never."""
    pod = probed_pod(Handler(exec_command=("check",)))
    legacy_bar = ObservedContainer(
        "1234", "k8s_bar.0_foo.new.test_12345678_00000000", running=True, created=NOW - 100
    )
    node_bar = ObservedContainer(
        "5678",
        "k8s_bar.0_foo.new.test_12345678_00000001",
        labels={"io.kubernetes.pod.uid": "12345678"},
        running=True,
        created=NOW - 100,
    )
    rt = engine(containers=[LEGACY_NET, legacy_bar, node_bar])

    assert {} == probe_liveness([pod], rt.containers, rt, now=NOW)
    assert [] == _names(rt)
    assert {"1234": True} == probe_liveness(
        [pod], rt.containers, rt, now=NOW, adopt_2014_containers=True
    )
    assert ["exec"] == _names(rt)
