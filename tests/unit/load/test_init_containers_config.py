"""Reading init containers: the app containers' schema, Kubernetes' rules for init
containers (validateInitContainers, pkg/apis/core/validation/validation.go), one
namespace of names, and sidecars (``restartPolicy: Always`` on an init container)."""

from __future__ import annotations

import json

import pytest

from podsync import (
    Container,
    EnvVar,
    Handler,
    Pod,
    Port,
    PortProtocol,
    Probe,
    RestartPolicy,
    VolumeMount,
)
from tests.unit.load.test_pod_files import errors, load

BLOCK = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  volumes:
  - name: work
    emptyDir: {}
  initContainers:
  - name: setup
    image: busybox
    command: [sh, -c, "echo ready > /work/setup"]
    env:
    - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    volumeMounts:
    - {name: work, mountPath: /work}
  - name: proxy
    image: busybox
    restartPolicy: Always
    args: [httpd, -f]
    startupProbe:
      exec: {command: ["true"]}
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - {name: work, mountPath: /work, readOnly: true}
"""

KYAML = """\
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {name: "web"},
  spec: {
    volumes: [{name: "work", emptyDir: {}}],
    initContainers: [{
      name: "setup",
      image: "busybox",
      command: ["sh", "-c", "echo ready > /work/setup"],
      env: [{name: "POD", valueFrom: {fieldRef: {fieldPath: "metadata.name"}}}],
      volumeMounts: [{name: "work", mountPath: "/work"}],
    }, {
      name: "proxy",
      image: "busybox",
      restartPolicy: "Always",
      args: ["httpd", "-f"],
      startupProbe: {exec: {command: ["true"]}},
    }],
    containers: [{
      name: "app",
      image: "busybox",
      volumeMounts: [{name: "work", mountPath: "/work", readOnly: true}],
    }],
  },
}
"""

JSON = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {
            "volumes": [{"name": "work", "emptyDir": {}}],
            "initContainers": [
                {
                    "name": "setup",
                    "image": "busybox",
                    "command": ["sh", "-c", "echo ready > /work/setup"],
                    "env": [
                        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
                    ],
                    "volumeMounts": [{"name": "work", "mountPath": "/work"}],
                },
                {
                    "name": "proxy",
                    "image": "busybox",
                    "restartPolicy": "Always",
                    "args": ["httpd", "-f"],
                    "startupProbe": {"exec": {"command": ["true"]}},
                },
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "busybox",
                    "volumeMounts": [{"name": "work", "mountPath": "/work", "readOnly": True}],
                }
            ],
        },
    },
    indent=2,
)


@pytest.mark.parametrize("text", [BLOCK, KYAML, JSON], ids=["block", "kyaml", "json"])
def test_init_containers_are_read_in_order(text):
    (pod,), warnings = load(text)

    assert [] == warnings
    assert (
        Container(
            "setup",
            "busybox",
            command=("sh", "-c", "echo ready > /work/setup"),
            env=(EnvVar("POD", "web"),),
            volume_mounts=(VolumeMount("work", "/work"),),
        ),
        Container(
            "proxy",
            "busybox",
            args=("httpd", "-f"),
            startup_probe=Probe(Handler(exec_command=("true",))),
            restart_policy=RestartPolicy.ALWAYS,
        ),
    ) == pod.init_containers
    assert (Container("app", "busybox", volume_mounts=(VolumeMount("work", "/work", True),)),) == (
        pod.containers
    )
    assert (pod.init_containers[1],) == pod.sidecars


def _pod(init: str, app: str = "  - name: app\n    image: busybox\n") -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n"
        "  initContainers:\n" + init + "  containers:\n" + app
    )


BAD = {
    "liveness probe on an init container": (
        _pod(
            "  - name: setup\n    image: busybox\n    livenessProbe:\n      tcpSocket: {port: 80}\n"
        ),
        [
            "pod.yaml: $.spec.initContainers[0].livenessProbe: must not be set on an init "
            "container: only a sidecar (restartPolicy: Always) has probes and lifecycle hooks"
        ],
    ),
    "startup probe on an init container": (
        _pod(
            "  - name: setup\n    image: busybox\n    startupProbe:\n"
            "      exec: {command: ['true']}\n"
        ),
        [
            "pod.yaml: $.spec.initContainers[0].startupProbe: must not be set on an init "
            "container: only a sidecar (restartPolicy: Always) has probes and lifecycle hooks"
        ],
    ),
    "lifecycle on an init container": (
        _pod(
            "  - name: setup\n    image: busybox\n    lifecycle:\n"
            "      preStop: {exec: {command: ['true']}}\n"
        ),
        [
            "pod.yaml: $.spec.initContainers[0].lifecycle: must not be set on an init "
            "container: only a sidecar (restartPolicy: Always) has probes and lifecycle hooks"
        ],
    ),
    "an init container's restartPolicy other than Always": (
        _pod("  - name: setup\n    image: busybox\n    restartPolicy: OnFailure\n"),
        [
            "pod.yaml: $.spec.initContainers[0].restartPolicy: must be 'Always' (a sidecar) "
            "or unset, got 'OnFailure'"
        ],
    ),
    "restartPolicy on an app container": (
        _pod(
            "  - name: setup\n    image: busybox\n",
            "  - name: app\n    image: busybox\n    restartPolicy: Always\n",
        ),
        [
            "pod.yaml: $.spec.containers[0].restartPolicy: may only be set on an init "
            "container (a sidecar): an app container follows the pod's restartPolicy"
        ],
    ),
    "a name shared by an init and an app container": (
        _pod("  - name: app\n    image: busybox\n"),
        [
            "pod.yaml: $.spec.containers[0].name: duplicate container name 'app' (first at "
            "$.spec.initContainers[0])"
        ],
    ),
    "two init containers of one name": (
        _pod("  - name: setup\n    image: busybox\n  - name: setup\n    image: busybox\n"),
        [
            "pod.yaml: $.spec.initContainers[1].name: duplicate container name 'setup' "
            "(first at $.spec.initContainers[0])"
        ],
    ),
    "a mount of no volume": (
        _pod(
            "  - name: setup\n    image: busybox\n    volumeMounts:\n"
            "    - {name: work, mountPath: /work}\n"
        ),
        [
            "pod.yaml: $.spec.initContainers[0].volumeMounts[0].name: no volume named "
            "'work' in this pod (the pod has no volumes)"
        ],
    ),
    "a host port on an init container": (
        _pod(
            "  - name: setup\n    image: busybox\n    ports:\n"
            "    - {containerPort: 80, hostPort: 8080}\n"
        ),
        [
            "pod.yaml: $.spec.initContainers[0].ports[0].hostPort: hostPort is not "
            "supported by podsync on an init container that is not a sidecar: the pod's "
            "network container publishes the host ports of the app containers and sidecars"
        ],
    ),
    "a sidecar's host port used by an app container": (
        _pod(
            "  - name: proxy\n    image: busybox\n    restartPolicy: Always\n    ports:\n"
            "    - {containerPort: 80, hostPort: 8080}\n",
            "  - name: app\n    image: busybox\n    ports:\n"
            "    - {containerPort: 81, hostPort: 8080}\n",
        ),
        [
            "pod.yaml: $.spec.containers[0].ports[0].hostPort: host port 8080/TCP is "
            "already used by $.spec.initContainers[0].ports[0]"
        ],
    ),
    "a sidecar's other host port with hostNetwork": (
        _pod(
            "  - name: proxy\n    image: busybox\n    restartPolicy: Always\n    ports:\n"
            "    - {containerPort: 80, hostPort: 8080}\n",
        ).replace("spec:\n", "spec:\n  hostNetwork: true\n"),
        [
            "pod.yaml: $.spec.initContainers[0].ports[0].hostPort: must be 80 (the "
            "containerPort) or unset with hostNetwork"
        ],
    ),
    "the network container's name": (
        _pod("  - name: net\n    image: busybox\n"),
        None,
    ),
    "restartPolicyRules": (
        _pod(
            "  - name: setup\n    image: busybox\n    restartPolicyRules:\n"
            "    - {action: Restart, exitCodes: {operator: In, values: [42]}}\n"
        ),
        [
            "pod.yaml: $.spec.initContainers[0].restartPolicyRules: restartPolicyRules is "
            "not supported by podsync yet: restart rules per exit code are not implemented"
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_init_containers(case):
    text, expected = BAD[case]
    found = errors(text)
    if expected is None:  # the same message as for an app container of that name
        (only,) = found
        assert only.startswith("pod.yaml: $.spec.initContainers[0].name")
    else:
        assert expected == found


def test_a_sidecar_may_have_probes_and_hooks():
    text = _pod(
        "  - name: proxy\n    image: busybox\n    restartPolicy: Always\n"
        "    livenessProbe: {exec: {command: ['true']}}\n"
        "    readinessProbe: {exec: {command: ['true']}}\n"
        "    lifecycle: {preStop: {exec: {command: ['true']}}}\n"
    )

    (pod,), _ = load(text)

    (proxy,) = pod.sidecars
    assert proxy.liveness_probe is not None
    assert proxy.readiness_probe is not None
    assert proxy.lifecycle is not None


def test_model_refuses_what_the_loader_refuses():
    with pytest.raises(ValueError, match="only an init container may have a restart_policy"):
        Pod("web", (Container("app", "busybox", restart_policy=RestartPolicy.ALWAYS),))
    with pytest.raises(ValueError, match="duplicate container name 'app'"):
        Pod("web", (Container("app", "busybox"),), init_containers=(Container("app", "x"),))
    with pytest.raises(ValueError, match="can only be Always"):
        Container("app", "busybox", restart_policy=RestartPolicy.NEVER)


# A sidecar's ports, as Kubernetes defaults them (SetDefaults_Pod, SetDefaults_ContainerPort)
# and as podsync then publishes them: one row per case.
SIDECAR_PORTS = [
    pytest.param(
        "",
        "    - {containerPort: 9090, hostPort: 19090}\n",
        [Port(9090, 19090, PortProtocol.TCP)],
        id="a host port, TCP by default",
    ),
    pytest.param(
        "",
        "    - {containerPort: 53, hostPort: 5353, protocol: UDP, hostIP: 127.0.0.1}\n",
        [Port(53, 5353, PortProtocol.UDP, host_ip="127.0.0.1")],
        id="a UDP port on one address",
    ),
    pytest.param(
        "  hostNetwork: true\n",
        "    - {containerPort: 9090}\n",
        [Port(9090, 9090, PortProtocol.TCP)],
        id="hostNetwork: the host port defaults to the container port",
    ),
    pytest.param(
        "",
        "    - {containerPort: 9090}\n",
        [Port(9090, 0, PortProtocol.TCP)],
        id="no host port: not published",
    ),
]


@pytest.mark.parametrize(("spec", "ports", "expected"), SIDECAR_PORTS)
def test_sidecar_ports_are_defaulted_as_an_app_containers(spec, ports, expected):
    text = _pod(
        "  - name: proxy\n    image: busybox\n    restartPolicy: Always\n    ports:\n" + ports
    ).replace("spec:\n", "spec:\n" + spec)

    (pod,), _ = load(text)

    assert expected == list(pod.sidecars[0].ports)
