"""The Docker translation of the runtime-neutral ``CreateSpec`` (``podsync.runtime.docker._api``),
without an engine: the docker SDK's own config builders (``HostConfig``,
``ContainerConfig``, which ``APIClient.create_host_config`` / ``create_container`` call)
turn the arguments into the Engine API's JSON, and that JSON is what is checked. The
engine tests (``tests/unit/runtime/test_docker_runtime.py``, ``tests/engine/test_sync.py``) show an
engine records the same."""

from __future__ import annotations

from typing import Any

import pytest
from docker.types import ContainerConfig, HostConfig

from podsync import Container, Pod, Port, PortProtocol, Volume, VolumeMount
from podsync.actions._actions import Create, CreateSpec
from podsync.actions._options import PlanOptions
from podsync.model._security import ContainerSecurity
from podsync.planner._plan import plan
from podsync.runtime._protocol import EngineEvent, LogLine
from podsync.runtime.docker._api import docker_create_args, engine_event, log_line
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import Mount

# An Engine API version the SDK builds the JSON for (20.10's).
API_VERSION = "1.41"


def engine_json(spec: CreateSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(HostConfig, Config)`` as the docker SDK sends them for ``spec``."""
    # Where a local engine keeps a volume: each file mount is bound from there.
    mountpoints = {m.volume: f"/var/lib/docker/volumes/{m.volume}/_data" for m in spec.file_mounts}
    args = docker_create_args(spec, mountpoints=mountpoints)
    host_config = HostConfig(version=API_VERSION, **args.host_config)
    container = dict(args.container)
    assert spec.name == container.pop("name")  # a query parameter, not part of Config
    config = ContainerConfig(API_VERSION, spec.image, **container)
    return dict(host_config), dict(config)


def test_an_app_container_joins_its_network_container_by_name() -> None:
    """``join`` is network mode ``container:<name>``; mounts are binds (``:ro`` when
    read-only); milli-CPU is CPU shares (500m: 512); memory in bytes; env, command
    (Docker's entrypoint), arguments and working directory as given."""
    spec = CreateSpec(
        name="k8s_app.1_web",
        image="nginx:1.25",
        labels={"io.podsync.pod.uid": "u1"},
        command=("/bin/sh", "-c"),
        args=("exec nginx",),
        env=("A=1", "B="),
        working_dir="/srv",
        join="k8s_net.0_web",
        mounts=(
            Mount("/var/lib/podsync/u1/volumes/empty/cache", "/cache"),
            Mount("/etc/web", "/conf", read_only=True),
        ),
        milli_cpu=500,
        memory=64 * 1024 * 1024,
    )

    host_config, config = engine_json(spec)

    assert "container:k8s_net.0_web" == host_config["NetworkMode"]
    assert [
        "/var/lib/podsync/u1/volumes/empty/cache:/cache",
        "/etc/web:/conf:ro",
    ] == host_config["Binds"]
    assert 512 == host_config["CpuShares"]
    assert 64 * 1024 * 1024 == host_config["Memory"]
    assert not {"Dns", "DnsSearch", "PortBindings"} & {k for k, v in host_config.items() if v}
    assert (["/bin/sh", "-c"], ["exec nginx"]) == (config["Entrypoint"], config["Cmd"])
    assert (["A=1", "B="], "/srv") == (config["Env"], config["WorkingDir"])
    assert {"io.podsync.pod.uid": "u1"} == config["Labels"]
    assert config.get("Hostname") is None
    assert config.get("ExposedPorts") is None


def test_a_network_container_publishes_its_ports_and_carries_the_dns() -> None:
    """Ports are ``PortBindings`` (host address and port, as strings) and
    ``ExposedPorts`` keyed ``"<port>/<tcp|udp>"``; DNS servers and search domains,
    hostname and the network mode as given."""
    spec = CreateSpec(
        name="k8s_net.0_web",
        image="pause:3.9",
        hostname="web",
        network="bridge",
        ports=(
            PortMapping(80, 8080),
            PortMapping(80, 8081, host_ip="127.0.0.1"),
            PortMapping(53, 5353, PortProtocol.UDP),
        ),
        dns=("10.0.0.10", "192.0.2.53"),
        dns_search=("default.svc.cluster.local", "svc.cluster.local"),
    )

    host_config, config = engine_json(spec)

    assert "bridge" == host_config["NetworkMode"]
    assert {
        "80/tcp": [{"HostIp": "", "HostPort": "8080"}, {"HostIp": "127.0.0.1", "HostPort": "8081"}],
        "53/udp": [{"HostIp": "", "HostPort": "5353"}],
    } == host_config["PortBindings"]
    assert {"53/udp": {}, "80/tcp": {}} == config["ExposedPorts"]
    assert ["10.0.0.10", "192.0.2.53"] == host_config["Dns"]
    assert ["default.svc.cluster.local", "svc.cluster.local"] == host_config["DnsSearch"]
    assert "web" == config["Hostname"]


@pytest.mark.parametrize(("network", "mode"), [("", None), ("none", "none"), ("host", "host")])
def test_a_network_of_its_own_is_the_network_mode(network: str, mode: str | None) -> None:
    """``""`` leaves the engine's default network (no ``NetworkMode`` sent: the SDK then
    says ``default``); any other network is the mode as it is."""
    args = docker_create_args(CreateSpec(name="n", image="pause", network=network))

    assert mode == args.host_config["network_mode"]


def test_unset_values_are_left_to_the_engine() -> None:
    """An empty spec sends no CPU quota, memory or swap limit, OOM score, IPC mode, DNS,
    extra hosts, hostname, domain, working directory, entrypoint or command, no terminal
    and no open standard input: the image's and the engine's defaults stay. The CPU
    shares are the one exception: no request is the smallest weight, 2 shares (the
    kubelet's MilliCPUToShares(0)), not the engine's default of 1024."""
    args = docker_create_args(CreateSpec(name="x", image="busybox"))

    assert {
        "binds": [],
        "port_bindings": {},
        "network_mode": None,
        "cpu_shares": 2,
        "mem_limit": None,
        "memswap_limit": None,
        "oom_score_adj": None,
        "cpu_period": None,
        "cpu_quota": None,
        "extra_hosts": None,
        "privileged": False,
        "dns": None,
        "dns_search": None,
        "group_add": None,
        "cap_add": None,
        "cap_drop": None,
        "read_only": None,
        "security_opt": None,
        "sysctls": None,
        "pid_mode": None,
        "ipc_mode": None,
    } == args.host_config
    assert {
        "name": "x",
        "entrypoint": None,
        "command": None,
        "environment": [],
        "labels": {},
        "working_dir": None,
        "hostname": None,
        "ports": None,
        "domainname": None,
        "tty": False,
        "stdin_open": False,
        "user": None,
    } == args.container


def test_the_smallest_cpu_request_gets_the_smallest_shares() -> None:
    """1 milli-CPU is 2 shares, the kernel's minimum (``cpu_shares``, the one
    conversion), and privileged is passed on."""
    args = docker_create_args(CreateSpec(name="x", image="busybox", milli_cpu=1, privileged=True))

    assert (2, True) == (args.host_config["cpu_shares"], args.host_config["privileged"])


def test_a_planned_pod_in_dockers_terms() -> None:
    """From a pod to the Engine API: the planner's neutral specs, translated, give the
    seed's Docker spellings (the network container publishes the pod's host ports; each
    app joins it by name and binds its volumes)."""
    pod = Pod(
        name="web",
        namespace="default",
        uid="web-uid",
        containers=(
            Container(
                name="nginx",
                image="nginx:1.25",
                cpu=250,
                ports=(Port(80, 8080), Port(9090)),  # 9090: no host port, not published
                volume_mounts=(VolumeMount("cache", "/cache", read_only=True),),
            ),
        ),
        volumes=(Volume("cache"),),
    )
    creates = [
        a
        for a in plan([pod], [], now=0.0, options=PlanOptions(root_dir="/srv/podsync")).actions
        if isinstance(a, Create)
    ]
    (net,), (app,) = (
        [c.spec for c in creates if c.container == name] for name in (NETWORK_CONTAINER, "nginx")
    )

    net_host, net_config = engine_json(net)
    app_host, _ = engine_json(app)

    assert {"80/tcp": [{"HostIp": "", "HostPort": "8080"}]} == net_host["PortBindings"]
    assert {"80/tcp": {}} == net_config["ExposedPorts"]
    assert f"container:{net.name}" == app_host["NetworkMode"]
    # An emptyDir is its pod's engine volume, never filled from the image; the
    # termination-message file is bound from the pod's state volume, which the network
    # container mounts with its labels (the engine makes it so at that create).
    assert [
        "podsync-emptydir_web-uid_cache:/cache:ro,nocopy",
        f"/var/lib/docker/volumes/podsync-state_web-uid/_data/termination/{app.name}"
        ":/dev/termination-log",
    ] == app_host["Binds"]
    assert [
        {
            "Type": "volume",
            "Source": "podsync-state_web-uid",
            "Target": "/podsync-volume",
            "ReadOnly": False,
            "VolumeOptions": {
                "NoCopy": True,
                "Labels": {
                    "io.podsync.pod.uid": "web-uid",
                    "io.podsync.volume.kind": "pod-state",
                    "io.podsync.volume.namespace": "default",
                },
            },
        }
    ] == net_host["Mounts"]
    assert 256 == app_host["CpuShares"]


def test_a_spec_joins_a_network_or_has_its_own_never_both() -> None:
    """A container that joins another's network has none of its own: a spec with both
    cannot be made (no runtime has to decide what it means)."""
    with pytest.raises(ValueError, match="has no network of its own"):
        CreateSpec(name="app", image="busybox", join="net", network="none")


def test_security_settings_in_dockers_terms() -> None:
    """User and groups, capabilities in Kubernetes' spelling, read-only root, sysctls,
    shared PID namespace, and the security options: no-new-privileges, the Localhost
    seccomp profile's JSON itself (as the docker CLI sends it), an AppArmor profile."""
    spec = CreateSpec(
        name="app",
        image="busybox",
        join="net",
        security=ContainerSecurity(
            user="1000:3000",
            groups=(2000, 4000),
            cap_add=("NET_BIND_SERVICE",),
            cap_drop=("ALL",),
            no_new_privileges=True,
            read_only_root_filesystem=True,
            seccomp="localhost//srv/podsync/seccomp/audit.json",
            apparmor="localhost/k8s-deny-write",
            sysctls=(("kernel.shm_rmid_forced", "1"),),
            share_pid_with="net",
        ),
    )

    host_config, config = _security_json(spec, '{"defaultAction": "SCMP_ACT_LOG"}')

    assert "1000:3000" == config["User"]
    assert {
        "GroupAdd": ["2000", "4000"],
        "CapAdd": ["NET_BIND_SERVICE"],
        "CapDrop": ["ALL"],
        "ReadonlyRootfs": True,
        "SecurityOpt": [
            "no-new-privileges",
            'seccomp={"defaultAction": "SCMP_ACT_LOG"}',
            "apparmor=k8s-deny-write",
        ],
        "Sysctls": {"kernel.shm_rmid_forced": "1"},
        "PidMode": "container:net",
    } == {key: host_config.get(key) for key in _SECURITY_KEYS}


_SECURITY_KEYS = ("GroupAdd", "CapAdd", "CapDrop", "ReadonlyRootfs", "SecurityOpt")
_SECURITY_KEYS += ("Sysctls", "PidMode")


def _security_json(spec: CreateSpec, profile: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    args = docker_create_args(spec, profile)
    host_config = HostConfig(version=API_VERSION, **args.host_config)
    container = dict(args.container)
    container.pop("name")
    return dict(host_config), dict(ContainerConfig(API_VERSION, spec.image, **container))


@pytest.mark.parametrize(
    ("security", "expected"),
    [
        (
            ContainerSecurity(seccomp="unconfined", apparmor="unconfined"),
            {"SecurityOpt": ["seccomp=unconfined", "apparmor=unconfined"]},
        ),
        # The engine's default profiles are its own: nothing to send.
        (ContainerSecurity(seccomp="runtime/default", apparmor="runtime/default"), {}),
        (ContainerSecurity(host_pid=True, host_ipc=True), {"PidMode": "host", "IpcMode": "host"}),
    ],
)
def test_profiles_and_host_namespaces(
    security: ContainerSecurity, expected: dict[str, Any]
) -> None:
    host_config, _ = _security_json(CreateSpec(name="n", image="pause", security=security), None)

    assert expected == {
        key: host_config[key] for key in ("SecurityOpt", "PidMode", "IpcMode") if key in host_config
    }


def test_a_localhost_seccomp_profile_needs_its_content() -> None:
    spec = CreateSpec(name="n", image="x", security=ContainerSecurity(seccomp="localhost//p.json"))

    with pytest.raises(ValueError, match="needs the profile's content"):
        docker_create_args(spec)


# --- what the operating calls read ------------------------------------------------------


def test_a_timestamped_log_entry() -> None:
    """``timestamps=1`` entries: RFC 3339 with nanoseconds, a space, the line; an entry
    without a time keeps its bytes."""
    line = log_line("stderr", b"2024-01-02T03:04:05.123456789Z oops: x y\n")

    assert ("stderr", b"oops: x y\n") == (line.stream, line.data)
    assert 1704164645.123456 == pytest.approx(line.time)
    assert LogLine("stdout", b"no time here\n", 0.0) == log_line("stdout", b"no time here\n")


def test_an_engine_event() -> None:
    """A ``die`` message: the time in nanoseconds, the exit code, and the labels
    without Docker's own attributes."""
    message = {
        "Type": "container",
        "Action": "die",
        "Actor": {
            "ID": "abc",
            "Attributes": {
                "exitCode": "137",
                "image": "busybox",
                "name": "k8s_app",
                "io.podsync.pod.uid": "u1",
            },
        },
        "time": 1700000000,
        "timeNano": 1700000000500000000,
    }

    event = engine_event(message)

    assert (
        EngineEvent(1700000000.5, "die", "abc", "k8s_app", {"io.podsync.pod.uid": "u1"}, 137)
        == event
    )
    assert engine_event({**message, "Action": "exec_start: sh -c true"}) is None
    assert engine_event({**message, "Type": "network"}) is None
    kill = engine_event(
        {**message, "Action": "kill", "Actor": {"ID": "abc", "Attributes": {"signal": "15"}}}
    )
    assert kill is not None
    assert (None, 15) == (kill.exit_code, kill.signal)
