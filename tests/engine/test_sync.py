"""``podsync.sync`` against a real Docker engine: the issue's required scenarios.

* two pods synced: the engine holds the network and app containers under the seed's
  names, the apps in the network container's namespace, ports on the network container,
  CPU shares, memory, env, binds and DNS as planned;
* a second sync makes no mutating call, and observes with one list call;
* a changed image replaces only that container;
* a pod removed from the desired set is stopped (and, once collectable, removed);
* a container someone else made survives every sync, deletions and GC included;
* a Kubernetes node's containers (cri-dockerd's names and labels) survive ``podsync
  apply`` with deletions, GC and ``down`` (run in a view of this test's containers);
* restart policies with containers that exit 0 and 1; a failing postStart hook;
* a slow preStop hook that shares the pod's grace period with the stop;
* pull policy Never with a present image (strict xfail: a bug in ``sync``, see there).

The engine is shared: other test sessions may run podsync pods on it at the same time.
Every sync here therefore runs with ``allow_deletions=False``, except where a pod is
removed on purpose: those syncs, in the node scope, limit deletions to a source no one
else uses (``ready_sources``), and the test checks that nothing outside it was touched.

Network rule (``tests/support/engine.py``): network mode ``none`` or ``container:<id>`` only;
the only connection made is a postStart httpGet to a closed port on the loopback.
Nothing is pulled: the app image is the test image under a tag of this run
(``APP_IMAGE``, present and not ``:latest``, so the default pull policy does not pull),
and the network image is pulled only when absent.
"""

from __future__ import annotations

import json
import re
import secrets
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import docker
import pytest

import podsync
import podsync.cli
import podsync.spec
from podsync import (
    Container,
    Create,
    CreateVolume,
    DNSPolicy,
    EnvVar,
    Event,
    EventKind,
    Handler,
    HTTPGetAction,
    Kill,
    Lifecycle,
    ObservedContainer,
    ObservedImage,
    ObservedVolume,
    Pod,
    Port,
    PortProtocol,
    PullPolicy,
    Reason,
    Remove,
    ResourceList,
    RestartPolicy,
    SyncResult,
    Volume,
    VolumeMount,
    Wait,
)
from podsync.actions._actions import CreateSpec
from podsync.actions._options import NODE_SCOPE, AllowedHostPath, GCPolicy, PlanOptions
from podsync.docker import DockerRuntime
from podsync.model._volume_entries import VolumeEntry
from podsync.runtime import ExecResult
from podsync.spec._labels import LABEL_RECORD_CONTAINER
from podsync.spec._resolv import without_loopback
from tests.support.cri import cri_labels, cri_name
from tests.support.engine import (
    PAUSE_IMAGE,
    TEST_IMAGE,
    Cleanup,
    free_host_ports,
    run_labels,
    volume_path,
)
from tests.support.podman_records import (
    comparable_env,
    one_pod_inspects_expected,
    recorded_binds,
    recorded_image,
    recorded_ports,
    volumes_created_first,
)

CLUSTER_DNS = "10.0.0.10"
CLUSTER_DOMAIN = "cluster.local"
# A systemd-resolved host's stub and, say, a VPN's server: pods (network mode none, not
# the host's) cannot reach the stub on their own loopback, so only 10.0.0.53 follows.
HOST_RESOLV = "nameserver 127.0.0.53\nnameserver 10.0.0.53\n"

# An app process that exits 0 at once on SIGTERM (busybox sleep as PID 1 ignores it,
# and a stop would wait out its timeout).
SERVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"

# The test image under a tag of this run's (see the ``_app_image`` fixture).
APP_IMAGE = f"{TEST_IMAGE.rpartition(':')[0]}:sync-{secrets.token_hex(4)}"

# What can change the engine (FakeRuntime's MUTATING_CALL_NAMES, in Runtime method names).
MUTATING = frozenset(
    {
        "pull_image",
        "create_container",
        "start_container",
        "stop_container",
        "remove_container",
        "remove_image",
        "create_volume",
        "remove_volume",
        "write_volume",
    }
)

# How long a container may take to exit on its own, or to be seen doing so.
EXIT_DEADLINE = 15.0


# --- helpers ---------------------------------------------------------------------------


class CountingRuntime:
    """A ``Runtime`` that forwards every call to a ``DockerRuntime`` and records it.

    ``calls`` holds ``(method name, first argument)``; ``listed`` the result of each
    ``list_containers`` call.
    """

    def __init__(self, inner: DockerRuntime) -> None:
        self.inner = inner
        self.calls: list[tuple[str, Any]] = []
        self.listed: list[list[ObservedContainer]] = []

    def _record(self, name: str, arg: Any = None) -> None:
        self.calls.append((name, arg))  # list.append is atomic: safe from worker threads

    def reset(self) -> None:
        self.calls.clear()
        self.listed.clear()

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def mutations(self) -> list[str]:
        return [name for name in self.names() if name in MUTATING]

    def args(self, name: str) -> list[Any]:
        return [arg for call, arg in self.calls if call == name]

    def list_containers(self) -> list[ObservedContainer]:
        self._record("list_containers")
        listed = self.inner.list_containers()
        self.listed.append(listed)
        return listed

    def list_images(self) -> list[ObservedImage]:
        self._record("list_images")
        return self.inner.list_images()

    def node_capacity(self) -> ResourceList:
        self._record("node_capacity")
        return self.inner.node_capacity()

    def pull_image(self, image: str) -> None:
        self._record("pull_image", image)
        self.inner.pull_image(image)

    def create_container(self, spec: CreateSpec) -> str:
        self._record("create_container", spec.name)
        return self.inner.create_container(spec)

    def start_container(self, container_id: str) -> None:
        self._record("start_container", container_id)
        self.inner.start_container(container_id)

    def stop_container(self, container_id: str, timeout: int) -> None:
        self._record("stop_container", container_id)
        self.inner.stop_container(container_id, timeout)

    def remove_container(self, container_id: str) -> None:
        self._record("remove_container", container_id)
        self.inner.remove_container(container_id)

    def exec_in_container(
        self, container_id: str, command: Sequence[str], timeout: float
    ) -> ExecResult:
        self._record("exec_in_container", container_id)
        return self.inner.exec_in_container(container_id, command, timeout)

    def exec_attached(self, container_id: str, command: Sequence[str], **kwargs: Any) -> int:
        # With exec_in_container, the exec capability (podsync.runtime.ExecRuntime):
        # without it, a pod with an exec hook or probe is rejected.
        self._record("exec_attached", container_id)
        return self.inner.exec_attached(container_id, command, **kwargs)

    def container_address(self, container_id: str) -> str | None:
        self._record("container_address", container_id)
        return self.inner.container_address(container_id)

    def remove_image(self, image_id: str) -> None:
        self._record("remove_image", image_id)
        self.inner.remove_image(image_id)

    def list_volumes(self) -> list[ObservedVolume]:
        self._record("list_volumes")
        return self.inner.list_volumes()

    def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        self._record("create_volume", name)
        self.inner.create_volume(name, labels)

    def remove_volume(self, name: str) -> None:
        self._record("remove_volume", name)
        self.inner.remove_volume(name)

    def write_volume(
        self, volume: str, entries: Sequence[VolumeEntry], *, through: str = ""
    ) -> None:
        self._record("write_volume", volume)
        self.inner.write_volume(volume, entries, through=through)

    def read_volume_file(self, volume: str, path: str, *, limit: int) -> bytes | None:
        self._record("read_volume_file", volume)
        return self.inner.read_volume_file(volume, path, limit=limit)

    def read_container_file(
        self, container_id: str, path: str, *, limit: int, tail: bool = False
    ) -> bytes | None:
        self._record("read_container_file", container_id)
        return self.inner.read_container_file(container_id, path, limit=limit, tail=tail)

    def close(self) -> None:
        # Not recorded: the fixture closes the inner runtime once the test is done.
        pass


@pytest.fixture(scope="module", autouse=True)
def _app_image(engine: docker.DockerClient) -> Iterator[None]:
    """Tag the test image as ``APP_IMAGE`` for this module; untag it afterwards (only the
    tag goes: the image keeps its other tags)."""
    _tag(engine, APP_IMAGE)
    try:
        yield
    finally:
        engine.api.remove_image(APP_IMAGE)


def _tag(engine: docker.DockerClient, reference: str) -> None:
    repository, _, tag = reference.rpartition(":")
    assert engine.api.tag(TEST_IMAGE, repository, tag)


@pytest.fixture
def runtime(engine: docker.DockerClient) -> Iterator[CountingRuntime]:
    """A counting runtime on its own ``DockerRuntime`` (its own clients), closed after."""
    with DockerRuntime() as inner:
        yield CountingRuntime(inner)


def _volumes(engine: docker.DockerClient, pod: Pod) -> list[str]:
    """The names of the volumes on the engine labelled with ``pod``'s uid, sorted."""
    label = f"{podsync.labels.LABEL_POD_UID}={pod.uid}"
    listed = engine.api.volumes(filters={"label": label}).get("Volumes") or ()
    return sorted(v["Name"] for v in listed)


def _hex(n: int = 6) -> str:
    return uuid.uuid4().hex[:n]


def _app(name: str, **fields: Any) -> Container:
    """An app container of ``APP_IMAGE`` (present: never pulled) that stops at once."""
    fields.setdefault("command", ("/bin/sh", "-c", SERVE))
    fields.setdefault("image", APP_IMAGE)
    return Container(name, **fields)


def _pod(cleanup: Cleanup, prefix: str, *containers: Container, **fields: Any) -> Pod:
    """A pod with a name and uid unique to this run, registered for cleanup."""
    fields.setdefault("uid", str(uuid.uuid4()))
    pod = Pod(f"{prefix}-{_hex()}", containers, **fields)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    return pod


def _options(tmp_path: Path, **fields: Any) -> PlanOptions:
    fields.setdefault("allow_deletions", False)  # the engine is shared: see the docstring
    # The tests' hostPath volumes are the test's own directories.
    fields.setdefault("allowed_host_paths", (AllowedHostPath(str(tmp_path)),))
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        cluster_dns=CLUSTER_DNS,
        cluster_domain=CLUSTER_DOMAIN,
        host_resolv_conf=HOST_RESOLV,
        stop_timeout=1,
        **fields,
    )


def _sync(
    pods: Sequence[Pod],
    runtime: CountingRuntime,
    options: PlanOptions,
    events: list[Event] | None = None,
) -> SyncResult:
    runtime.reset()
    return podsync.sync(
        pods, runtime, options=options, on_event=None if events is None else events.append
    )


def _containers(engine: docker.DockerClient, pod: Pod) -> dict[str, list[dict[str, Any]]]:
    """The pod's containers on the engine, inspected, by pod container name, oldest
    instance first."""
    listed = engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
    )
    found: dict[str, list[dict[str, Any]]] = {}
    for entry in listed:
        inspected = engine.api.inspect_container(entry["Id"])
        found.setdefault(inspected["Config"]["Labels"][podsync.labels.LABEL_CONTAINER], []).append(
            inspected
        )
    for instances in found.values():
        instances.sort(key=lambda i: int(i["Config"]["Labels"][podsync.labels.LABEL_ATTEMPT]))
    return found


def _ids(found: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    return {name: [c["Id"] for c in instances] for name, instances in found.items()}


def _running(engine: docker.DockerClient, container_id: str) -> bool:
    return bool(engine.api.inspect_container(container_id)["State"]["Running"])


def _wait_exited(engine: docker.DockerClient, ids: Iterable[str]) -> None:
    """Poll until every container in ``ids`` has exited."""
    pending = set(ids)
    deadline = time.monotonic() + EXIT_DEADLINE
    while pending:
        pending = {cid for cid in pending if _running(engine, cid)}
        if not pending:
            return
        assert time.monotonic() < deadline, f"still running after {EXIT_DEADLINE} s: {pending}"
        time.sleep(0.05)


def _actions(result: SyncResult, pod: Pod | None = None) -> list[Any]:
    actions = list(result.plan.actions)
    if pod is None:
        return actions
    return [a for a in actions if getattr(a, "pod", None) == pod.key]


def _summary(result: SyncResult) -> str:
    return f"{result.plan.describe()}\n{result.apply_result.summary()}"


def _net_ns(runtime: CountingRuntime, container_id: str) -> bytes:
    """The container's network namespace, as ``readlink /proc/1/ns/net`` shows it."""
    result = runtime.exec_in_container(container_id, ["/bin/readlink", "/proc/1/ns/net"], 10.0)
    assert 0 == result.exit_code, result
    assert result.output.startswith(b"net:["), result
    return result.output.strip()


def _closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _two_pods(cleanup: Cleanup, tmp_path: Path, host_ports: tuple[int, ...]) -> tuple[Pod, Pod]:
    """web: two app containers with every field the engine records, ClusterFirst DNS,
    publishing ``host_ports`` (http, dns, sidecar: chosen free, the engine is shared);
    db: one plain app container in another namespace, Default DNS."""
    http, dns, sidecar = host_ports
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "hello").write_text("from the host\n")
    web = _pod(
        cleanup,
        "web",
        _app(
            "app",
            env=(EnvVar("GREETING", "hello world"), EnvVar("EQUATION", "a=b=c"), EnvVar("EMPTY")),
            cpu=500,
            memory=64 * 1024 * 1024,
            ports=(
                Port(80, host_port=http, host_ip="127.0.0.1", name="http"),
                Port(53, host_port=dns, protocol=PortProtocol.UDP),
            ),
            volume_mounts=(
                VolumeMount("cache", "/cache"),
                VolumeMount("data", "/data", read_only=True),
            ),
            termination_message_path="/dev/termination-log",
            working_dir="/tmp",
        ),
        # The image's own command (sleep 3600).
        Container("sidecar", APP_IMAGE, cpu=1, ports=(Port(8080, host_port=sidecar), Port(9090))),
        volumes=(Volume("cache"), Volume("data", host_path=str(data))),
        namespace=f"ns-{_hex()}",
        dns_policy=DNSPolicy.CLUSTER_FIRST,
    )
    db = _pod(cleanup, "db", _app("db"), dns_policy=DNSPolicy.DEFAULT)
    return web, db


# --- sync two pods ---------------------------------------------------------------------


def test_sync_two_pods_creates_what_was_planned(
    engine: docker.DockerClient,
    engine_name: str,
    cleanup: Cleanup,
    runtime: CountingRuntime,
    tmp_path: Path,
) -> None:
    """Both pods run: names in the seed's format, apps in the network container's
    namespace, ports, DNS and hostname on the network container only, CPU shares, memory,
    env, working dir and binds on the apps; the emptyDir is the pod's engine volume,
    writable, the hostPath read-only, the termination-message file in place."""
    http, dns, sidecar = free_host_ports(engine, 3)
    web, db = _two_pods(cleanup, tmp_path, (http, dns, sidecar))
    options = _options(tmp_path)
    volume = cleanup.add_volume(podsync.spec.empty_dir_volume_name(web.uid, "cache"))

    result = _sync([web, db], runtime, options)

    assert result.ok, _summary(result)
    assert [] == runtime.args("pull_image")
    # web's emptyDir's volume before web's app (its state volume, where the
    # termination-message files are, is made at its network container's create).
    assert [CreateVolume, Create, Create] == [type(a) for a in _actions(result, web)[1:]], (
        result.plan.describe()
    )
    assert 6 == len(_actions(result))
    assert [["net", "app", "sidecar"], ["net", "db"]] == [
        [a.container for a in _actions(result, pod) if isinstance(a, Create)] for pod in (web, db)
    ]
    assert volume in runtime.args("create_volume")
    assert all(
        a.reason is (Reason.NETWORK_MISSING if a.container == "net" else Reason.MISSING)
        for a in _actions(result)
        if isinstance(a, Create)
    )

    on_engine = {pod.key: _containers(engine, pod) for pod in (web, db)}
    assert {"net", "app", "sidecar"} == set(on_engine[web.key])
    assert {"net", "db"} == set(on_engine[db.key])

    root = options.root_dir
    for pod in (web, db):
        found = on_engine[pod.key]
        assert all(1 == len(instances) for instances in found.values())
        net = found["net"][0]
        net_id = net["Id"]
        # Names: k8s_<container>.<hash hex>_<name>.<namespace>.<source>_<uid>_<attempt>.
        for name, (inspected,) in found.items():
            assert inspected["State"]["Running"], inspected["State"]
            container_name = inspected["Name"].lstrip("/")
            assert re.fullmatch(
                rf"k8s_{name}\.[0-9a-f]+_{re.escape(pod.full_name)}_{pod.uid}_00000000",
                container_name,
            )
            parsed = podsync.parse_container_name(container_name)
            assert (name, pod.full_name, pod.uid, 0) == (
                parsed.container,
                parsed.pod_full_name,
                parsed.uid,
                parsed.attempt,
            )
            # The options that shape the containers are hashed too.
            if name == "net":
                digest = podsync.spec.network_spec_hash(
                    pod,
                    PAUSE_IMAGE,
                    network_mode=options.network_mode,
                    cluster_dns=options.cluster_dns,
                    cluster_domain=options.cluster_domain,
                    # As the planner uses it: the loopback stub left out.
                    host_dns=without_loopback(podsync.parse_resolv_conf(options.host_resolv_conf)),
                )
            else:
                (spec,) = (c for c in pod.containers if c.name == name)
                digest = podsync.spec_hash(spec, pod, root_dir=root)
            assert digest.name_hash == parsed.hash
            labels = inspected["Config"]["Labels"]
            assert (pod.uid, pod.name, pod.namespace, pod.source, str(digest)) == (
                labels[podsync.labels.LABEL_POD_UID],
                labels[podsync.labels.LABEL_POD_NAME],
                labels[podsync.labels.LABEL_POD_NAMESPACE],
                labels[podsync.labels.LABEL_POD_SOURCE],
                labels[podsync.labels.LABEL_SPEC_HASH],
            )
        # The network container: network mode none, the pod's hostname, image PAUSE.
        assert "none" == net["HostConfig"]["NetworkMode"]
        assert pod.name == net["Config"]["Hostname"]
        assert recorded_image(engine_name, PAUSE_IMAGE) == net["Config"]["Image"]
        # Every app container lives in the network container's namespace.
        net_ns = _net_ns(runtime, net_id)
        for name, (inspected,) in found.items():
            if name == "net":
                continue
            assert f"container:{net_id}" == inspected["HostConfig"]["NetworkMode"]
            assert not inspected["HostConfig"]["PortBindings"]
            assert not inspected["Config"].get("ExposedPorts")
            assert not inspected["HostConfig"]["Dns"]
            assert net_ns == _net_ns(runtime, inspected["Id"])
    # Two pods, two namespaces.
    assert _net_ns(runtime, on_engine[web.key]["net"][0]["Id"]) != _net_ns(
        runtime, on_engine[db.key]["net"][0]["Id"]
    )

    # web's network container: the pod's published ports, from both apps; ClusterFirst
    # DNS with the cluster's server and search domains before the host's (its loopback
    # stub left out).
    (web_net,) = on_engine[web.key]["net"]
    # (podman records no ports in network mode none: recorded_ports)
    assert (
        recorded_ports(
            engine_name,
            "none",
            {
                "80/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(http)}],
                "53/udp": [{"HostIp": "", "HostPort": str(dns)}],
                "8080/tcp": [{"HostIp": "", "HostPort": str(sidecar)}],
            },
        )
        == web_net["HostConfig"]["PortBindings"]
    )
    # Only published ports are exposed (host port 0: neither bound nor exposed, seed).
    assert recorded_ports(engine_name, "none", {"80/tcp", "53/udp", "8080/tcp"}) == set(
        web_net["Config"].get("ExposedPorts") or {}
    )
    assert [CLUSTER_DNS, "10.0.0.53"] == web_net["HostConfig"]["Dns"]
    assert [f"{web.namespace}.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN] == web_net["HostConfig"][
        "DnsSearch"
    ]
    # db: DNS policy Default leaves the engine's; no ports.
    (db_net,) = on_engine[db.key]["net"]
    assert not db_net["HostConfig"]["Dns"]
    assert not db_net["HostConfig"]["DnsSearch"]
    assert not db_net["HostConfig"]["PortBindings"]

    # web's app: resources, env, working dir, entrypoint, binds in mount order then the
    # termination-message file.
    (app,) = on_engine[web.key]["app"]
    app_name = app["Name"].lstrip("/")
    assert podsync.cpu_shares(500) == app["HostConfig"]["CpuShares"] == 512
    assert 64 * 1024 * 1024 == app["HostConfig"]["Memory"]
    assert comparable_env(
        engine_name, ["GREETING=hello world", "EQUATION=a=b=c", "EMPTY="]
    ) == comparable_env(engine_name, app["Config"]["Env"])
    assert "/tmp" == app["Config"]["WorkingDir"]
    assert ["/bin/sh", "-c", SERVE] == app["Config"]["Entrypoint"]
    assert recorded_image(engine_name, APP_IMAGE) == app["Config"]["Image"]
    # The termination-message file: a file of the pod's state volume, bound from where
    # the engine keeps the volume.
    state = engine.api.inspect_volume(f"podsync-state_{web.uid}")
    message_file = f"{state['Mountpoint']}/termination/{app_name}"
    assert (
        recorded_binds(
            engine_name,
            [
                f"{tmp_path / 'data'}:/data:ro",
                f"{volume}:/cache:nocopy",
                f"{message_file}:/dev/termination-log",
            ],
            joins=web_net,
        )
        == app["HostConfig"]["Binds"]
    )
    assert "pod-state" == state["Labels"]["io.podsync.volume.kind"]
    # Nothing of the pod under the root directory: its state is in the engine.
    assert not Path(root, web.uid).exists()
    # The sidecar: 1 milli-CPU is the kernel's minimum of 2 shares; no memory limit, no
    # binds but its termination-message file (/dev/termination-log by default), the
    # image's own command.
    (sidecar,) = on_engine[web.key]["sidecar"]
    assert podsync.cpu_shares(1) == sidecar["HostConfig"]["CpuShares"] == 2
    assert 0 == sidecar["HostConfig"]["Memory"]
    sidecar_file = f"{state['Mountpoint']}/termination/{sidecar['Name'].lstrip('/')}"
    assert (
        recorded_binds(engine_name, [f"{sidecar_file}:/dev/termination-log"], joins=web_net)
        == sidecar["HostConfig"]["Binds"]
    )
    assert ["/bin/sleep", "3600"] == sidecar["Config"]["Cmd"]

    # The binds work: the emptyDir is the volume, the hostPath is read-only.
    wrote = runtime.exec_in_container(
        app["Id"], ["/bin/sh", "-c", "echo from the app > /cache/out"], 10.0
    )
    assert 0 == wrote.exit_code, wrote
    assert "from the app\n" == (volume_path(engine, volume) / "out").read_text()
    read = runtime.exec_in_container(app["Id"], ["/bin/cat", "/data/hello"], 10.0)
    assert (0, b"from the host\n") == (read.exit_code, read.output)
    refused = runtime.exec_in_container(app["Id"], ["/bin/touch", "/data/nope"], 10.0)
    assert 0 != refused.exit_code
    assert not (tmp_path / "data" / "nope").exists()


def test_second_sync_makes_no_mutating_call(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    runtime: CountingRuntime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Synced again, nothing changes: no create, start, stop, remove or pull, the plan is
    empty, and the observation is one container list (no image list: nothing is to be
    created) with no inspect of a running container - the runtime's cached-inspect
    design."""
    web, db = _two_pods(cleanup, tmp_path, free_host_ports(engine, 3))
    options = _options(tmp_path)
    first = _sync([web, db], runtime, options)
    assert first.ok, _summary(first)
    ours = {c["Id"] for pod in (web, db) for cs in _containers(engine, pod).values() for c in cs}
    assert 5 == len(ours)

    inspected: list[str] = []
    original = docker.APIClient.inspect_container

    def counting_inspect(self: docker.APIClient, container: str) -> Any:
        inspected.append(container)
        return original(self, container)

    with monkeypatch.context() as patch:
        patch.setattr(docker.APIClient, "inspect_container", counting_inspect)
        engine.api.inspect_container(next(iter(ours)))  # the patch sees every client
        assert 1 == len(inspected)
        inspected.clear()
        second = _sync([web, db], runtime, options)

    assert second.ok, _summary(second)
    assert [] == runtime.mutations()
    # The volume list, for stop records, only when the shared engine holds podsync
    # containers that are not running (the quickstart's demo job, another session's).
    expected = ["list_containers"]
    if any(
        not c.running and podsync.ownership(c, adopt_2014_containers=True) is not None
        for c in runtime.listed[0]
    ):
        expected.append("list_volumes")
    assert expected == runtime.names()
    assert not second.plan.has_changes, second.plan.describe()
    assert () == second.plan.actions
    assert () == second.apply_result.results
    assert "No changes. The engine matches the desired pods." == second.plan.describe()
    # The engine is shared: another session's container may have exited since the first
    # sync and be inspected once; nothing running, and nothing of ours, is.
    (listed,) = runtime.listed
    running = {c.id for c in listed if c.running}
    assert ours <= running
    assert not set(inspected) & running, inspected
    assert not set(inspected) & ours
    # Still the same containers, still running.
    after = {c["Id"] for pod in (web, db) for cs in _containers(engine, pod).values() for c in cs}
    assert ours == after
    assert all(_running(engine, cid) for cid in ours)


# --- image change ----------------------------------------------------------------------


@pytest.fixture
def alt_image(engine: docker.DockerClient) -> Iterator[str]:
    """The test image under a second tag of its own (untagged after the test)."""
    reference = f"{TEST_IMAGE.rpartition(':')[0]}:alt-{secrets.token_hex(4)}"
    _tag(engine, reference)
    try:
        yield reference
    finally:
        # Only the tag goes: the image keeps its other tags (and any container using it).
        engine.api.remove_image(reference)


def test_second_cli_apply_makes_one_api_request(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``podsync apply`` again with nothing to do sends the engine one API request for
    its pod, the container list, as ``podsync.sync`` does (no image list: nothing is
    created), besides the client's API version check when it connects.

    The engine is shared (the quickstart's demo, other runs): a new process inspects
    each exited container someone else left once, for its exit code and finish time, and
    then lists the volumes for their stop records. Those reads are not this pod's, and
    are all it may send besides the list: no write, no image list."""
    path = tmp_path / "web.yaml"
    path.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web-{_hex()}}}\nspec:\n"
        f"  containers:\n  - name: app\n    image: {APP_IMAGE}\n"
        f"    command: [/bin/sh, -c, {json.dumps(SERVE)}]\n"
    )
    (pod,) = podsync.load_pods([str(path)])
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    argv = [
        "apply",
        "--no-delete",
        "--root-dir",
        str(tmp_path / "root"),
        "--network-mode",
        "none",
        "--network-image",
        PAUSE_IMAGE,
        "--stop-timeout",
        "1",
        str(path),
    ]
    assert 0 == podsync.cli.main(argv)

    sent: list[str] = []
    original = docker.APIClient.send

    def counting_send(self: docker.APIClient, request: Any, **kwargs: Any) -> Any:
        sent.append(f"{request.method} {request.path_url.split('?')[0]}")
        return original(self, request, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(docker.APIClient, "send", counting_send)
        code = podsync.cli.main(argv)

    # The runtime asks the engine's API version when it first connects (GET /_ping,
    # once per runtime, not per sync); the sync itself is the container list.
    assert "GET /_ping" == sent[0]
    synced = sent[1:]
    assert 0 == code
    assert re.fullmatch(r"GET /v[0-9.]+/containers/json", synced[0]), sent
    ours = {
        c["Id"]
        for c in engine.api.containers(
            all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
        )
    }
    others = {
        c["Id"]
        for c in engine.api.containers(all=True, filters={"status": ["exited", "created"]})
        if c["Id"] not in ours
    }
    for request in synced[1:]:
        inspected = re.fullmatch(r"GET /v[0-9.]+/containers/([0-9a-f]+)/json", request)
        if inspected is None:
            assert others, sent
            assert re.fullmatch(r"GET /v[0-9.]+/volumes", request), sent
        else:
            assert inspected[1] in others, sent


def test_first_cli_apply_of_one_pod_makes_only_the_calls_it_needs(
    engine: docker.DockerClient,
    engine_name: str,
    cleanup: Cleanup,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first ``podsync apply`` of a one-pod file (issue 16: process start to running)
    sends the engine: one ``GET /_ping`` for the API version (not ``GET /version``),
    the container list, the image list with one inspect per image (for its user), then
    the OOM-score probe (a container created, started and removed: can the engine lower
    a score?), then create and start of the network container and of the app (created
    while the network container starts) - no inspect of a container it made, nothing
    after the app's start."""
    path = tmp_path / "one.yaml"
    path.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: one-{_hex()}}}\nspec:\n"
        f"  containers:\n  - name: app\n    image: {APP_IMAGE}\n"
        f"    command: [/bin/sh, -c, {json.dumps(SERVE)}]\n"
    )
    (pod,) = podsync.load_pods([str(path)])
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    argv = [
        "apply",
        "--root-dir",
        str(tmp_path / "root"),
        "--network-mode",
        "none",
        "--network-image",
        PAUSE_IMAGE,
        "--stop-timeout",
        "1",
        str(path),
    ]
    sent: list[str] = []
    original = docker.APIClient.send

    def recording_send(self: docker.APIClient, request: Any, **kwargs: Any) -> Any:
        sent.append(f"{request.method} {request.path_url.split('?')[0]}")
        return original(self, request, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(docker.APIClient, "send", recording_send)
        code = podsync.cli.main(argv)

    assert 0 == code
    version = r"/v[0-9.]+"
    first_create = next(i for i, r in enumerate(sent) if r.endswith("/containers/create"))
    observing, applying = sent[:first_create], sent[first_create:]
    # Observing: the ping, the container list (with an inspect of each exited container
    # the runtime has not seen: other sessions share the engine), the image list and
    # one inspect per image.
    assert "GET /_ping" == observing[0], sent
    assert re.fullmatch(rf"GET {version}/containers/json", observing[1]), sent
    # The volume list comes only for podsync's stop records, when an exited container
    # of podsync's (another test's) is on the engine.
    rest = [r for r in observing[2:] if not re.fullmatch(rf"GET {version}/volumes", r)]
    image_list = [i for i, r in enumerate(rest) if re.fullmatch(rf"GET {version}/images/json", r)]
    assert 1 == len(image_list), sent
    exited, images = rest[: image_list[0]], rest[image_list[0] + 1 :]
    inspect = rf"GET {version}/containers/[0-9a-f]{{64}}/json"
    assert all(re.fullmatch(inspect, r) for r in exited), sent
    assert all(re.fullmatch(rf"GET {version}/images/[^/]+/json", r) for r in images), sent
    assert len(images) <= len(engine.api.images())
    # Applying: create and start, twice, the app's termination-message file and its
    # volume's mountpoint, and nothing else; the app is created while the network
    # container starts (DockerRuntime.overlapping_calls), so those calls come in any
    # order.
    create = rf"POST {version}/containers/create"
    start = rf"POST {version}/containers/[0-9a-f]{{64}}/start"
    # The runtime's one question before its first negative OOM score (the network
    # container's -998): can this engine lower one? A probe container, created,
    # started and removed (DockerRuntime._lowers_oom_scores).
    remove = rf"DELETE {version}/containers/[0-9a-f]{{64}}"
    assert re.fullmatch(create, applying[0]), sent
    assert re.fullmatch(start, applying[1]), sent
    assert re.fullmatch(remove, applying[2]), sent
    applying = applying[3:]
    # On podman the pod's state volume is made first, with its labels
    # (volumes_created_first); Docker makes it at the network container's create.
    made_first = volumes_created_first(engine_name, 1)
    volume_create = rf"POST {version}/volumes/create"
    assert all(re.fullmatch(volume_create, call) for call in applying[:made_first]), sent
    applying = applying[made_first:]
    # No inspect of a container it made - but on podman, the inspects podman needs
    # (one_pod_inspects_expected), in any order among the rest.
    container_inspect = rf"GET {version}/containers/[^/]+/json"
    inspects = [call for call in applying if re.fullmatch(container_inspect, call)]
    assert one_pod_inspects_expected(engine_name, len(inspects)), sent
    applying = [call for call in applying if not re.fullmatch(container_inspect, call)]
    assert 6 == len(applying), sent
    assert re.fullmatch(create, applying[0]), sent
    # While the network container starts: the app's termination-message file written
    # through it (one upload into the pod's state volume, which it mounts), the
    # volume's mountpoint asked for (the file's bind), the app's create.
    upload = rf"PUT {version}/containers/[^/]+/archive"
    mountpoint = rf"GET {version}/volumes/podsync-state_[^/]+"
    kinds = {"create": create, "start": start, "upload": upload, "mountpoint": mountpoint}
    assert ["create", "mountpoint", "start", "upload"] == sorted(
        next((k for k, pattern in kinds.items() if re.fullmatch(pattern, call)), call)
        for call in applying[1:5]
    ), sent
    assert re.fullmatch(start, applying[5]), sent


def test_changed_image_replaces_only_that_container(
    engine: docker.DockerClient,
    engine_name: str,
    cleanup: Cleanup,
    runtime: CountingRuntime,
    tmp_path: Path,
    alt_image: str,
) -> None:
    """One container's image changes (to a present, non-latest tag under the default pull
    policy: nothing is pulled): that container is stopped and a new instance created and
    started; the network container and the other app container keep running as they were."""
    options = _options(tmp_path)
    pod = _pod(cleanup, "img", _app("one"), _app("two"))
    other = _pod(cleanup, "bystander", _app("three"))
    first = _sync([pod, other], runtime, options)
    assert first.ok, _summary(first)
    before = _containers(engine, pod)
    bystander = {n: c[0]["Id"] for n, c in _containers(engine, other).items()}

    changed = Pod(
        pod.name,
        (_app("one", image=alt_image), _app("two")),
        uid=pod.uid,
    )
    second = _sync([changed, other], runtime, options)

    assert second.ok, _summary(second)
    old_one = before["one"][0]["Id"]
    # The stop record first (podsync.spec._records), then the stop; the new instance's
    # termination-message file, written through the network container, before its create.
    assert [
        "remove_volume",
        "create_volume",
        "stop_container",
        "write_volume",
        "create_container",
        "start_container",
    ] == runtime.mutations()
    assert [old_one] == runtime.args("stop_container")
    kill, create = _actions(second)
    assert isinstance(kill, Kill)
    assert isinstance(create, Create)
    assert (pod.key, "one", Reason.SPEC_CHANGED) == (kill.pod, kill.container, kill.reason)
    assert (pod.key, "one", Reason.SPEC_CHANGED) == (create.pod, create.container, create.reason)
    assert "image" in create.message, create.message

    after = _containers(engine, pod)
    # The network container and "two": same ids, still running, one instance each.
    for name in ("net", "two"):
        assert [before[name][0]["Id"]] == [c["Id"] for c in after[name]]
        assert after[name][0]["State"]["Running"]
    # "one": the old instance exited (stop), the new one runs the new image, attempt 1,
    # in the same network container.
    old, new = after["one"]
    assert old_one == old["Id"]
    assert not old["State"]["Running"]
    assert new["State"]["Running"]
    assert recorded_image(engine_name, alt_image) == new["Config"]["Image"]
    assert f"container:{before['net'][0]['Id']}" == new["HostConfig"]["NetworkMode"]
    assert 1 == podsync.parse_container_name(new["Name"]).attempt
    assert old["Name"] != new["Name"]
    assert _net_ns(runtime, before["net"][0]["Id"]) == _net_ns(runtime, new["Id"])
    # The other pod was not touched.
    assert bystander == {n: c[0]["Id"] for n, c in _containers(engine, other).items()}
    assert all(_running(engine, cid) for cid in bystander.values())

    third = _sync([changed, other], runtime, options)
    assert third.ok, _summary(third)
    assert [] == runtime.mutations(), third.plan.describe()


# --- a pod leaves the desired set ------------------------------------------------------


def test_pod_removed_from_desired_set_is_stopped(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: CountingRuntime, tmp_path: Path
) -> None:
    """With deletions allowed for this test's source only: a pod that leaves the desired
    set has its containers stopped (apps before the network container, the stop timeout
    honoured) and its directory torn down; once collectable (GC min_age 0) they are
    removed. The pod that stays is not touched, nor is anything outside the source."""
    source = f"t{_hex(8)}"
    options = _options(
        tmp_path, allow_deletions=True, ready_sources=frozenset({source}), scope=NODE_SCOPE
    )
    stays = _pod(
        cleanup,
        "stays",
        _app("app", termination_message_path="/dev/termination-log"),
        source=source,
    )
    # The image's own command: sleep as PID 1 ignores SIGTERM, so the stop waits out
    # stop_timeout (1 s) and kills it.
    goes = _pod(
        cleanup,
        "goes",
        Container("app", APP_IMAGE),
        _app("side", termination_message_path="/dev/termination-log"),
        source=source,
    )
    first = _sync([stays, goes], runtime, options)
    assert first.ok, _summary(first)
    kept = _containers(engine, stays)
    gone = _containers(engine, goes)
    gone_ids = {c[0]["Id"] for c in gone.values()}
    # Their termination-message files are in the engine: nothing under the root.
    assert not Path(options.root_dir).exists()
    assert [f"podsync-state_{goes.uid}"] == _volumes(engine, goes)

    started = time.monotonic()
    second = _sync([stays], runtime, options)
    elapsed = time.monotonic() - started

    assert second.ok, _summary(second)
    (pod_plan,) = second.plan.pods
    assert (goes.key, goes.uid) == (pod_plan.pod, pod_plan.uid)
    kills = [a for a in pod_plan.actions if isinstance(a, Kill)]
    assert {Reason.POD_NOT_DESIRED} == {a.reason for a in kills}
    assert "net" == kills[-1].container, "apps first, then their network container"
    assert {"app", "side"} == {a.container for a in kills[:-1]}
    assert all(1 == a.timeout for a in kills)
    # Default GC (min_age 60 s): the stopped containers stay for now, and the pod's
    # state volume with them (their termination messages).
    assert [] == [a for a in pod_plan.actions if not isinstance(a, Kill)]
    assert sorted(["stop_container"] * 3) == sorted(runtime.mutations())
    assert gone_ids == set(runtime.args("stop_container"))
    assert [f"podsync-state_{goes.uid}"] == _volumes(engine, goes)
    assert elapsed < 10, f"the stops took {elapsed:.1f} s"

    now_gone = _containers(engine, goes)
    assert gone_ids == {c[0]["Id"] for c in now_gone.values()}
    states = {name: c[0]["State"] for name, c in now_gone.items()}
    assert not any(s["Running"] for s in states.values()), states
    assert 137 == states["app"]["ExitCode"], "sleep ignores SIGTERM: killed after 1 s"
    assert 0 == states["side"]["ExitCode"]
    assert 0 == states["net"]["ExitCode"]
    # The pod that stays runs on, untouched.
    assert _ids(kept) == _ids(_containers(engine, stays))
    assert all(_running(engine, c[0]["Id"]) for c in kept.values())

    # Collectable now: the exited containers are removed, and nothing else.
    third = _sync([stays], runtime, attrs.evolve(options, gc=GCPolicy(min_age=0)))
    assert third.ok, _summary(third)
    assert {goes.uid} == {p.uid for p in third.plan.pods}
    assert {Reason.GC_NOT_DESIRED} == {a.reason for a in _actions(third) if isinstance(a, Remove)}
    # Each container with its stop record (none here: one call each), then the pod's
    # state volume.
    assert ["remove_container", "remove_volume"] * 3 + ["remove_volume"] == runtime.mutations()
    assert gone_ids == set(runtime.args("remove_container"))
    assert {} == _containers(engine, goes)
    assert [] == _volumes(engine, goes)
    assert [f"podsync-state_{stays.uid}"] == _volumes(engine, stays)
    assert not Path(options.root_dir).exists()
    assert all(_running(engine, c[0]["Id"]) for c in kept.values())

    fourth = _sync([stays], runtime, options)
    assert fourth.ok, _summary(fourth)
    assert [] == runtime.mutations(), fourth.plan.describe()


# --- a container podsync does not own -------------------------------------------------


def test_foreign_containers_survive_everything(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: CountingRuntime, tmp_path: Path
) -> None:
    """Containers made by someone else (no podsync label, a name that is not podsync's -
    one of them starting with ``k8s_`` but without a pod) are never touched: not by
    syncs that create, replace and delete pods, not by GC with no minimum age, a
    one-per-container limit and a global cap of 0 - whether they run or have exited."""
    suffix = _hex(8)
    foreign: dict[str, str] = {}
    for name, command in (
        (f"foreign-{suffix}", None),  # runs (sleep 3600)
        (f"k8s_foreign{suffix}", None),  # a k8s_ name with no pod: not ours either
        (f"foreign-exited-{suffix}", ["/bin/true"]),  # exits 0 at once
    ):
        created = engine.api.create_container(
            TEST_IMAGE,
            name=name,
            command=command,
            labels=run_labels(),
            host_config=engine.api.create_host_config(network_mode="none"),
        )
        foreign[name] = cleanup.add(created["Id"])
        engine.api.start(created["Id"])
    exited = foreign[f"foreign-exited-{suffix}"]
    _wait_exited(engine, [exited])
    runs = {name: cid for name, cid in foreign.items() if cid != exited}

    source = f"t{_hex(8)}"
    gc = GCPolicy(min_age=0, max_per_container=1, max_total=0)
    deleting = _options(
        tmp_path, allow_deletions=True, ready_sources=frozenset({source}), scope=NODE_SCOPE, gc=gc
    )
    keeping = _options(tmp_path, gc=gc)
    pod = _pod(cleanup, "fg", _app("app"), source=source)
    v2, v3 = (
        Pod(pod.name, (_app("app", env=(EnvVar("V", v),)),), source=source, uid=pod.uid)
        for v in ("2", "3")
    )
    steps = [
        ([pod], keeping),  # create
        ([pod], keeping),  # nothing to do
        ([v2], keeping),  # replace the app: its newest exited instance is kept
        ([v3], keeping),  # replace it again: the older exited instance is collected
        ([], deleting),  # the pod leaves: stop and remove it all
        ([], deleting),  # nothing left to do
    ]
    touched: set[str] = set()
    reasons: set[Reason] = set()
    for desired, options in steps:
        result = _sync(desired, runtime, options)
        assert result.ok, _summary(result)
        touched.update(arg for name, arg in runtime.calls if name in MUTATING)
        for action in _actions(result):
            assert getattr(action, "id", None) not in foreign.values(), action
            assert pod.key == getattr(action, "pod", pod.key), action
            reasons.add(action.reason)
    assert {
        Reason.SPEC_CHANGED,
        Reason.GC_EXITED,
        Reason.POD_NOT_DESIRED,
        Reason.GC_NOT_DESIRED,
    } < (reasons), "every kind of stop and removal was exercised"

    assert not touched & set(foreign.values())
    assert not touched & set(foreign)
    assert {} == _containers(engine, pod), "the pod's containers were all collected"
    for name, cid in foreign.items():
        state = engine.api.inspect_container(cid)
        assert name == state["Name"].lstrip("/")
        assert (cid in runs.values()) == state["State"]["Running"], (name, state["State"])


# --- a Kubernetes node on the same engine ----------------------------------------------


class ScopedRuntime(CountingRuntime):
    """A counting runtime whose ``list_containers`` shows only the containers ``keep``
    accepts, and whose ``list_volumes`` only the volumes of the pods (and the records of
    the containers) it shows, besides volumes that are not podsync's: on a shared engine
    (the quickstart's demo, other runs), ``podsync apply`` in the node scope then reaches
    this test's containers and volumes only, and decides about them exactly as it would
    on an engine of their own. Without the volume filter it would take the demo's
    volumes for an orphan's and remove them."""

    def __init__(self, inner: DockerRuntime, keep: Callable[[ObservedContainer], bool]) -> None:
        super().__init__(inner)
        self.keep = keep
        self._shown: set[str] = set()  # the pod uids and container ids listed

    def list_containers(self) -> list[ObservedContainer]:
        kept = [c for c in super().list_containers() if self.keep(c)]
        for c in kept:
            self._shown.update((c.id, c.labels.get(podsync.labels.LABEL_POD_UID, "")))
        return kept

    def list_volumes(self) -> list[ObservedVolume]:
        return [
            v
            for v in super().list_volumes()
            if podsync.volume_ownership(v) is None
            or v.labels.get(podsync.labels.LABEL_POD_UID) in self._shown
            or v.labels.get(LABEL_RECORD_CONTAINER) in self._shown
        ]


def _cri_container(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    container: str,
    pod: str,
    uid: str,
    attempt: int,
    *,
    image: str,
    command: Sequence[str] | None = None,
    sandbox: str = "",
) -> str:
    """A container named and labelled as cri-dockerd makes them, started."""
    created = engine.api.create_container(
        image,
        name=cri_name(container, pod, "kube-system", uid, attempt),
        command=list(command) if command is not None else None,
        labels={
            **run_labels(),
            **cri_labels(container, pod, "kube-system", uid, sandbox_id=sandbox),
        },
        host_config=engine.api.create_host_config(
            network_mode=f"container:{sandbox}" if sandbox else "none"
        ),
    )
    cid = cleanup.add(created["Id"])
    engine.api.start(cid)
    return cid


def test_kubernetes_node_containers_survive_apply_down_and_gc(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """A host that runs Kubernetes on Docker (Docker Desktop, cri-dockerd): its API
    server's sandbox and app container, and an exited earlier attempt, all named
    ``k8s_<container>_<pod>_<namespace>_<uid>_<attempt>`` and labelled
    ``io.kubernetes.*``, survive ``podsync apply`` (deletions on, as by default), an
    apply that deletes a pod, the most eager GC and ``down`` - with and without
    ``--adopt-2014-containers``. No podsync call ever names them."""
    pod, uid = f"kube-apiserver-{_hex()}", str(uuid.uuid4())
    sandbox = _cri_container(engine, cleanup, "POD", pod, uid, 0, image=PAUSE_IMAGE)
    exited = _cri_container(
        engine, cleanup, "kube-apiserver", pod, uid, 0, image=TEST_IMAGE,
        command=["/bin/sh", "-c", "exit 137"], sandbox=sandbox,
    )  # fmt: skip
    app = _cri_container(
        engine, cleanup, "kube-apiserver", pod, uid, 1, image=TEST_IMAGE, sandbox=sandbox
    )
    _wait_exited(engine, [exited])
    node = (sandbox, app, exited)
    before = {cid: engine.api.inspect_container(cid)["State"] for cid in node}

    sources: dict[str, str] = {}
    uids: set[str] = set()
    for base in ("web", "job"):
        path = tmp_path / f"{base}.yaml"
        path.write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {base}-{_hex()}}}\nspec:\n"
            f"  containers:\n  - name: app\n    image: {TEST_IMAGE}\n"
            f"    imagePullPolicy: Never\n    command: [/bin/sh, -c, {json.dumps(SERVE)}]\n"
        )
        (loaded,) = podsync.load_pods([str(path)])
        cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={loaded.uid}")
        sources[base] = str(path)
        uids.add(loaded.uid)
    ours = {*node, *uids}
    with DockerRuntime() as inner:
        scoped = ScopedRuntime(
            inner, lambda c: c.id in ours or c.labels.get(podsync.labels.LABEL_POD_UID) in ours
        )
        common = ["--root-dir", str(tmp_path / "root"), "--stop-timeout", "1"]
        # The node scope: apply removes the pod it is no longer given (in this view).
        planning = ["--network-mode", "none", "--network-image", PAUSE_IMAGE, "--scope", "node"]
        gc = ["--min-age", "0", "--max-per-container", "0", "--max-total", "0"]
        for adopt in ([], ["--adopt-2014-containers"]):
            for argv in (
                ["apply", *common, *planning, *gc, *adopt, sources["web"]],
                ["apply", *common, *planning, *gc, *adopt, sources["web"]],
                ["apply", *common, *planning, *gc, *adopt, sources["job"]],  # web goes
                ["down", *common, *adopt, sources["web"], sources["job"]],
            ):
                code = podsync.cli.main(argv, runtime_factory=lambda host: scoped)
                touched = {arg for name, arg in scoped.calls if name != "list_containers"}
                assert not touched & set(node), (argv, scoped.calls)
                assert 0 == code, argv

    assert {"create_container", "stop_container", "remove_container"} <= set(scoped.names())
    for cid in node:
        state = engine.api.inspect_container(cid)["State"]
        assert (before[cid]["Running"], before[cid]["StartedAt"], before[cid]["FinishedAt"]) == (
            state["Running"],
            state["StartedAt"],
            state["FinishedAt"],
        ), cid
    for pod_uid in uids:  # down removed podsync's own containers
        assert [] == engine.api.containers(
            all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod_uid}"}
        )


# --- restart policies ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "restarts_after_0", "restarts_after_1"),
    [
        (RestartPolicy.ALWAYS, True, True),
        (RestartPolicy.ON_FAILURE, False, True),
        (RestartPolicy.NEVER, False, False),
    ],
    ids=lambda v: v.value if isinstance(v, RestartPolicy) else None,
)
def test_restart_policy(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    runtime: CountingRuntime,
    tmp_path: Path,
    policy: RestartPolicy,
    restarts_after_0: bool,
    restarts_after_1: bool,
) -> None:
    """Two pods under one restart policy, whose container exits 0 or 1 at once.

    After the exit, the next sync restarts the container when the policy allows (the
    first restart is immediate), and otherwise stops the pod's network container: the
    pod has completed. After the restarted container exits again, the following sync
    waits out the crash-loop back-off (10 s) and leaves the network container running.
    """
    options = _options(tmp_path)
    pods = {
        code: _pod(
            cleanup,
            f"exit{code}",
            _app("job", command=("/bin/sh", "-c", f"exit {code}")),
            restart_policy=policy,
        )
        for code in (0, 1)
    }
    restarts = {0: restarts_after_0, 1: restarts_after_1}
    first = _sync(list(pods.values()), runtime, options)
    assert first.ok, _summary(first)
    firsts = {code: _containers(engine, pod) for code, pod in pods.items()}
    _wait_exited(engine, [found["job"][0]["Id"] for found in firsts.values()])
    for code, found in firsts.items():
        assert code == engine.api.inspect_container(found["job"][0]["Id"])["State"]["ExitCode"]

    second = _sync(list(pods.values()), runtime, options)

    assert second.ok, _summary(second)
    for code, pod in pods.items():
        actions = _actions(second, pod)
        net_id = firsts[code]["net"][0]["Id"]
        if restarts[code]:
            (create,) = actions
            assert isinstance(create, Create)
            assert ("job", Reason.EXITED) == (create.container, create.reason)
            assert "1" == create.spec.labels[podsync.labels.LABEL_RESTART_COUNT]
            assert _running(engine, net_id)
        else:
            (kill,) = actions
            assert isinstance(kill, Kill)
            assert ("net", net_id, Reason.POD_COMPLETED) == (kill.container, kill.id, kill.reason)
            assert not _running(engine, net_id)
    restarted = sum(restarts.values())
    # (A restart's termination-message file first, through the network container.)
    restart = ["write_volume", "create_container", "start_container"]
    # (A network container's stop is recorded first, as an app container's: its stop
    # record, replacing any an earlier failed stop left, is a remove and a create.)
    stop = ["remove_volume", "create_volume", "stop_container"]
    assert sorted(restart * restarted + stop * (2 - restarted)) == sorted(runtime.mutations())

    seconds = {code: _containers(engine, pod) for code, pod in pods.items()}
    _wait_exited(engine, [c["Id"] for found in seconds.values() for c in found["job"]])
    third = _sync(list(pods.values()), runtime, options)

    assert third.ok, _summary(third)
    assert [] == runtime.mutations(), third.plan.describe()
    for code, pod in pods.items():
        actions = _actions(third, pod)
        net_id = seconds[code]["net"][0]["Id"]
        if restarts[code]:
            assert 2 == len(seconds[code]["job"])
            (wait,) = actions
            assert isinstance(wait, Wait)
            assert ("job", Reason.BACK_OFF) == (wait.container, wait.reason)
            assert 0 < wait.seconds <= 10
            assert _running(engine, net_id), "a pod waiting to restart keeps its network"
        else:
            assert 1 == len(seconds[code]["job"])
            assert [] == actions
            assert not _running(engine, net_id)


# --- postStart hooks -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["exec", "http-get"])
def test_failing_post_start_hook(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    runtime: CountingRuntime,
    tmp_path: Path,
    kind: str,
) -> None:
    """A container whose postStart handler fails (``/bin/false``; a GET to a closed port
    on the loopback) is stopped and its create fails, with a hook-failed event; the pod's
    network container and its other container run on. The next sync restarts it at once
    (restart policy Always), the one after waits out the back-off."""
    if kind == "exec":
        handler = Handler(exec_command=("/bin/false",))
    else:
        handler = Handler(http_get=HTTPGetAction(port=_closed_loopback_port(), host="127.0.0.1"))
    options = _options(tmp_path)
    pod = _pod(
        cleanup,
        "hook",
        _app("plain"),
        _app("hooked", lifecycle=Lifecycle(post_start=handler)),
    )
    events: list[Event] = []

    first = _sync([pod], runtime, options, events)

    assert not first.ok
    (failure,) = first.apply_result.failures
    assert isinstance(failure.action, Create)
    assert "hooked" == failure.action.container
    assert "postStart handler failed" in failure.error, failure.error
    hook_events = [e for e in events if e.kind is EventKind.HOOK_FAILED]
    assert [("hooked", pod.key)] == [(e.container, e.pod) for e in hook_events]
    found = _containers(engine, pod)
    (hooked,) = found["hooked"]
    assert [hooked["Id"]] == runtime.args("stop_container")
    assert not _running(engine, hooked["Id"]), "stopped after its handler failed"
    assert _running(engine, found["net"][0]["Id"])
    assert _running(engine, found["plain"][0]["Id"])

    second = _sync([pod], runtime, options, events)

    assert not second.ok
    (create,) = _actions(second)
    assert isinstance(create, Create)
    assert ("hooked", Reason.EXITED) == (create.container, create.reason)
    recorded = ["remove_volume", "create_volume"]  # the stop record, before the stop
    assert ["write_volume", "create_container", "start_container", *recorded, "stop_container"] == (
        runtime.mutations()
    )
    found = _containers(engine, pod)
    assert 2 == len(found["hooked"])
    assert "1" == found["hooked"][1]["Config"]["Labels"][podsync.labels.LABEL_RESTART_COUNT]
    assert not any(_running(engine, c["Id"]) for c in found["hooked"])

    third = _sync([pod], runtime, options, events)

    assert third.ok, _summary(third)
    (wait,) = _actions(third)
    assert isinstance(wait, Wait)
    assert ("hooked", Reason.BACK_OFF) == (wait.container, wait.reason)
    assert [] == runtime.mutations()
    assert _running(engine, found["net"][0]["Id"])
    assert _running(engine, found["plain"][0]["Id"])


# --- stopping gracefully -----------------------------------------------------------------


def test_pre_stop_time_counts_against_the_grace_period(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: CountingRuntime, tmp_path: Path
) -> None:
    """The grace period is one budget (the kubelet's killContainer): a preStop handler
    that would take 30 s is cut at the pod's terminationGracePeriodSeconds (3 s), and
    the container then gets the 2 s minimum to stop - about 5 s in all, not the hook's
    time plus the grace. The handler did run (it wrote a file first), and the
    container, whose process ignores SIGTERM, was killed."""
    source = f"t{_hex(8)}"
    options = _options(
        tmp_path, allow_deletions=True, ready_sources=frozenset({source}), scope=NODE_SCOPE
    )
    data = tmp_path / "data"
    data.mkdir()
    drain = Handler(exec_command=("/bin/sh", "-c", "echo draining > /data/pre-stop; sleep 30"))
    # The image's own command: sleep as PID 1 ignores SIGTERM, so only SIGKILL ends it.
    pod = _pod(
        cleanup,
        "grace",
        Container(
            "app",
            APP_IMAGE,
            volume_mounts=(VolumeMount("data", "/data"),),
            lifecycle=Lifecycle(pre_stop=drain),
        ),
        volumes=(Volume("data", host_path=str(data)),),
        source=source,
        termination_grace_period_seconds=3,
    )
    first = _sync([pod], runtime, options)
    assert first.ok, _summary(first)
    (app,) = _containers(engine, pod)["app"]
    assert "3" == app["Config"]["Labels"][podsync.labels.LABEL_GRACE_PERIOD]

    started = time.monotonic()
    second = _sync([], runtime, options)
    elapsed = time.monotonic() - started

    assert second.ok, _summary(second)
    kills = [a for a in _actions(second, pod) if isinstance(a, Kill)]
    assert [("app", 3, drain), ("net", 3, None)] == [
        (k.container, k.timeout, k.pre_stop) for k in kills
    ]
    assert "draining\n" == (data / "pre-stop").read_text()
    state = engine.api.inspect_container(app["Id"])["State"]
    assert (False, 137) == (state["Running"], state["ExitCode"])
    # 3 s of preStop, then 2 s before SIGKILL; the old way took 10 s + 3 s. The margin
    # allows for a loaded machine, and stays below the old way's 13 s.
    assert 4.5 <= elapsed < 11, f"the stop took {elapsed:.1f} s"


# --- pull policy Never -------------------------------------------------------------------


# A regression test: sync plans first without the image list, and a present image of a
# container with pull policy Never must not look absent (it once did: the plan held a
# Wait instead of the Create, and the images were never listed).


def test_pull_policy_never_with_a_present_image_starts(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: CountingRuntime, tmp_path: Path
) -> None:
    """An app container with pull policy Never whose image is present (the test image's
    own :latest tag) is created and started, and nothing is pulled."""
    pod = _pod(cleanup, "never", _app("app", image=TEST_IMAGE, image_pull_policy=PullPolicy.NEVER))

    result = _sync([pod], runtime, _options(tmp_path))

    assert result.ok, _summary(result)
    assert [] == runtime.args("pull_image")
    assert [("net", Reason.NETWORK_MISSING), ("app", Reason.MISSING)] == [
        (a.container, a.reason) for a in _actions(result)
    ], result.plan.describe()
    found = _containers(engine, pod)
    assert {"net", "app"} == set(found)
    assert all(c[0]["State"]["Running"] for c in found.values())


def test_pull_policy_never_container_with_a_changed_spec_is_replaced(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: CountingRuntime, tmp_path: Path
) -> None:
    """A running container with pull policy Never whose spec changes is replaced: its old
    instance stopped and a new one created and started - not only stopped. (The pod's
    other container, under the default policy, makes the first sync list images.)"""
    options = _options(tmp_path)
    never = _app("app", image=TEST_IMAGE, image_pull_policy=PullPolicy.NEVER)
    pod = _pod(cleanup, "never", never, _app("side"))
    first = _sync([pod], runtime, options)
    assert first.ok, _summary(first)
    assert 3 == len(_actions(first)), first.plan.describe()
    changed = attrs.evolve(
        pod, containers=(attrs.evolve(never, env=(EnvVar("V", "2"),)), pod.containers[1])
    )

    second = _sync([changed], runtime, options)

    assert second.ok, _summary(second)
    recorded = ["remove_volume", "create_volume"]  # the stop record, before the stop
    replace = ["write_volume", "create_container", "start_container"]
    assert [*recorded, "stop_container", *replace] == runtime.mutations(), second.plan.describe()
    found = _containers(engine, pod)
    assert 2 == len(found["app"])
    assert found["app"][1]["State"]["Running"]
