"""Models validate when built: what one field's value, or one pod's fields together, can
get wrong is refused by the constructor (and by ``attrs.evolve``), with the field named,
as the loader refuses it in a pod file - one row per case, in the manner of the
kubelet's table tests (Kubernetes' ``ValidatePodSpec``, ``validateContainerPorts``,
``ValidateVolumeMounts``, ``validateEnv``)."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from podsync import (
    Container,
    EnvVar,
    Handler,
    Pod,
    Port,
    PortProtocol,
    RestartPolicy,
    SecretPart,
    SecretText,
    Volume,
    VolumeMount,
)

APP = Container("app", "busybox")


def _pod(*containers: Container, **fields: Any) -> Pod:
    return Pod("web", containers or (APP,), **fields)


def _mounting(*mounts: VolumeMount, **fields: Any) -> Container:
    return Container("app", "busybox", volume_mounts=mounts, **fields)


REFUSED: list[Any] = [
    # (id, what builds the object, the exception, the start of its message)
    # Ports (validateContainerPorts): Docker refuses the same at create ('invalid port
    # specification: "70000"').
    (
        "container-port-70000",
        lambda: Port(70000, 70000),
        ValueError,
        "container_port must be 1-65535, got 70000",
    ),
    ("container-port-0", lambda: Port(0), ValueError, "container_port must be 1-65535, got 0"),
    (
        "host-port-65536",
        lambda: Port(80, 65536),
        ValueError,
        "host_port must be 0-65535, got 65536",
    ),
    ("host-port-negative", lambda: Port(80, -1), ValueError, "host_port must be 0-65535, got -1"),
    ("port-as-text", lambda: Port("80"), TypeError, "container_port must be an int, got '80'"),
    ("port-as-bool", lambda: Port(True), TypeError, "container_port must be an int, got True"),
    (
        "protocol-lowercase",
        lambda: Port(80, protocol="udp"),
        ValueError,
        "'udp' is not a valid PortProtocol",
    ),
    (
        "protocol-sctp",
        lambda: Port(80, protocol="SCTP"),
        ValueError,
        "'SCTP' is not a valid PortProtocol",
    ),
    (
        "port-name-uppercase",
        lambda: Port(80, name="HTTP"),
        ValueError,
        "name 'HTTP' is not a valid DNS-1123 label",
    ),
    (
        "host-ip-not-an-address",
        lambda: Port(80, 8080, host_ip="localhost"),
        ValueError,
        "host_ip 'localhost' is not an IP address",
    ),
    # Containers: a DNS label other than the network container's; argv as lists.
    (
        "container-name-uppercase",
        lambda: Container("App", "busybox"),
        ValueError,
        "name 'App' is not a valid DNS-1123 label: uppercase letters are not allowed",
    ),
    (
        "container-name-empty",
        lambda: Container("", "busybox"),
        ValueError,
        "name '' is not a valid DNS-1123 label: it is empty",
    ),
    (
        "container-named-net",
        lambda: Container("net", "busybox"),
        ValueError,
        "name 'net' is reserved for the pod's network container",
    ),
    (
        "command-as-one-string",
        lambda: Container("app", "busybox", command="sleep 10"),
        TypeError,
        "command must be a list of strings, one per argument, not one string: "
        "a list: ['sleep', '10']",
    ),
    (
        "args-as-one-string",
        lambda: Container("app", "busybox", args="-c 'echo hi'"),
        TypeError,
        "args must be a list of strings",
    ),
    (
        "args-with-a-number",
        lambda: Container("app", "busybox", args=("sleep", 10)),
        TypeError,
        "args[1] must be a str, got 10",
    ),
    (
        "command-not-a-sequence",
        lambda: Container("app", "busybox", command=10),
        TypeError,
        "command must be a list of strings, got 10",
    ),
    (
        "exec-handler-as-one-string",
        lambda: Handler(exec_command="cat /tmp/ready"),
        TypeError,
        "exec_command must be a list of strings",
    ),
    (
        "working-dir-relative",
        lambda: Container("app", "busybox", working_dir="srv"),
        ValueError,
        "working_dir must be an absolute path, got 'srv'",
    ),
    (
        "env-name-with-a-dash",
        lambda: EnvVar("MY-VAR", "1"),
        ValueError,
        "name 'MY-VAR' is not a valid environment variable name",
    ),
    (
        "env-name-leading-digit",
        lambda: EnvVar("1VAR", "1"),
        ValueError,
        "name '1VAR' is not a valid environment variable name",
    ),
    # Volumes and mounts.
    (
        "volume-name-underscore",
        lambda: Volume("my_data"),
        ValueError,
        "name 'my_data' is not a valid DNS-1123 label",
    ),
    (
        "mount-path-relative",
        lambda: VolumeMount("data", "data"),
        ValueError,
        "mount_path must be an absolute path, got 'data'",
    ),
    (
        "mount-path-with-colon",
        lambda: VolumeMount("data", "/data:ro"),
        ValueError,
        "mount_path must not contain ':', got '/data:ro'",
    ),
    # Pods: names and uids become container-name fields and directory names.
    (
        "pod-name-underscore",
        lambda: Pod("my_pod", (APP,)),
        ValueError,
        "name 'my_pod' is not a valid DNS-1123 label: '_' is not allowed",
    ),
    (
        "namespace-uppercase",
        lambda: _pod(namespace="Prod"),
        ValueError,
        "namespace 'Prod' is not a valid DNS-1123 label",
    ),
    (
        "source-with-a-dot",
        lambda: _pod(source="my.files"),
        ValueError,
        "source 'my.files' is not a valid DNS-1123 label",
    ),
    (
        "uid-climbing-out",
        lambda: _pod(uid=".."),
        ValueError,
        "uid '..' cannot be used in container names and paths",
    ),
    (
        "uid-underscore",
        lambda: _pod(uid="a_b"),
        ValueError,
        "uid 'a_b' cannot be used in container names and paths",
    ),
    # Pods: what their fields get wrong together (the loader's _check_pod).
    (
        "two-app-containers-one-name",
        lambda: _pod(APP, APP),
        ValueError,
        "pod default/web: containers: duplicate container name 'app'",
    ),
    (
        "an-init-container-named-as-an-app-container",
        lambda: _pod(init_containers=(APP,)),
        ValueError,
        "pod default/web: containers: duplicate container name 'app'",
    ),
    (
        "two-volumes-one-name",
        lambda: _pod(volumes=(Volume("data"), Volume("data"))),
        ValueError,
        "pod default/web: volumes: duplicate volume name 'data'",
    ),
    (
        "a-mount-of-a-missing-volume",
        lambda: _pod(_mounting(VolumeMount("data", "/data"))),
        ValueError,
        "pod default/web: container app: no volume named 'data' in this pod",
    ),
    (
        "an-init-containers-mount-of-a-missing-volume",
        lambda: _pod(
            init_containers=(
                Container("setup", "busybox", volume_mounts=(VolumeMount("cache", "/c"),)),
            )
        ),
        ValueError,
        "pod default/web: container setup: no volume named 'cache' in this pod",
    ),
    (
        "two-mounts-at-one-path",
        lambda: _pod(
            _mounting(VolumeMount("a", "/data"), VolumeMount("b", "/data")),
            volumes=(Volume("a"), Volume("b")),
        ),
        ValueError,
        "pod default/web: container app: duplicate mount path '/data'",
    ),
    (
        "two-ports-one-name",
        lambda: _pod(
            Container("app", "busybox", ports=(Port(80, name="web"), Port(81, name="web")))
        ),
        ValueError,
        "pod default/web: container app: duplicate port name 'web'",
    ),
    (
        "an-app-container-with-a-restart-policy",
        lambda: _pod(Container("app", "busybox", restart_policy=RestartPolicy.ALWAYS)),
        ValueError,
        "container 'app': only an init container may have a restart_policy",
    ),
    # attrs.evolve builds again, and checks again.
    (
        "evolved-to-a-bad-port",
        lambda: attrs.evolve(Port(80), container_port=70000),
        ValueError,
        "container_port must be 1-65535, got 70000",
    ),
    (
        "evolved-to-a-duplicate",
        lambda: attrs.evolve(_pod(), containers=(APP, APP)),
        ValueError,
        "pod default/web: containers: duplicate container name 'app'",
    ),
]


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [row[1:] for row in REFUSED],
    ids=[row[0] for row in REFUSED],
)
def test_refused_when_built(build: Callable[[], object], error: type, message: str) -> None:
    with pytest.raises(error) as info:
        build()

    assert str(info.value).startswith(message), str(info.value)


SECRET = SecretText("s3cr3t", (SecretPart("default", "api", "token", "0" * 64),))

ACCEPTED: list[Any] = [
    # (id, what builds the object, what a field reads back)
    ("highest-ports", lambda: Port(65535, 65535).host_port, 65535),
    ("host-port-0-publishes-nothing", lambda: Port(1, 0).container_port, 1),
    ("protocol-given-as-text", lambda: Port(53, protocol="UDP").protocol, PortProtocol.UDP),
    ("an-ipv6-host-address", lambda: Port(80, 8080, host_ip="::1").host_ip, "::1"),
    (
        "command-given-as-a-list",
        lambda: Container("app", "busybox", command=["sleep", "10"]).command,
        ("sleep", "10"),
    ),
    (
        "a-secret-in-args",
        lambda: Container("app", "busybox", args=("--token", SECRET)).args[1],
        SECRET,
    ),
    ("empty-argv-keeps-the-images", lambda: Container("app", "busybox").command, ()),
    ("env-name-with-underscores", lambda: EnvVar("_MY_VAR_1").name, "_MY_VAR_1"),
    (
        "one-mount-per-path",
        lambda: len(
            _pod(
                _mounting(VolumeMount("a", "/a"), VolumeMount("a", "/b")), volumes=(Volume("a"),)
            ).volumes
        ),
        1,
    ),
    (
        "same-port-name-in-two-containers",
        lambda: len(
            _pod(
                Container("a", "x", ports=(Port(80, name="web"),)),
                Container("b", "x", ports=(Port(81, name="web"),)),
            ).containers
        ),
        2,
    ),
    (
        "a-sidecar-may-restart",
        lambda: (
            _pod(init_containers=(Container("proxy", "x", restart_policy=RestartPolicy.ALWAYS),))
            .sidecars[0]
            .name
        ),
        "proxy",
    ),
]


@pytest.mark.parametrize(
    ("build", "expected"), [row[1:] for row in ACCEPTED], ids=[row[0] for row in ACCEPTED]
)
def test_accepted_when_built(build: Callable[[], object], expected: object) -> None:
    assert expected == build()


def test_a_valid_pod_survives_pickle() -> None:
    """A pod whose argv was given as a list (kept as a tuple) pickles, as a process pool
    sends it, and comes back equal."""
    pod = _pod(
        Container("app", "busybox", command=["sleep", "10"], ports=(Port(80, 8080),)),
        volumes=(Volume("data"),),
    )

    assert pod == pickle.loads(pickle.dumps(pod))
