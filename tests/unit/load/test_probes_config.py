"""Probes in pod files, as people write them: the model each file gives, or its exact error.

The files follow the Kubernetes documentation's probe examples ("Configure Liveness,
Readiness and Startup Probes": liveness-exec, liveness-http with a custom header,
tcp-liveness-readiness, the startup probe that protects a slow start, the etcd gRPC
probe), in block YAML, KYAML (flow style) and JSON.
"""

from __future__ import annotations

import pytest

from podsync import (
    ConfigError,
    Container,
    Handler,
    HTTPGetAction,
    HTTPHeader,
    Probe,
    TCPSocketAction,
    parse_pods,
)


def container(text: str) -> Container:
    pods = parse_pods(text, source_name="pod.yaml")
    assert 1 == len(pods)
    assert 1 == len(pods[0].containers)
    return pods[0].containers[0]


def error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pod.yaml")
    return str(info.value)


LIVENESS_EXEC = """\
apiVersion: v1
kind: Pod
metadata:
  labels:
    test: liveness
  name: liveness-exec
spec:
  containers:
  - name: liveness
    image: registry.k8s.io/busybox
    args:
    - /bin/sh
    - -c
    - touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600
    livenessProbe:
      exec:
        command:
        - cat
        - /tmp/healthy
      initialDelaySeconds: 5
      periodSeconds: 5
"""

LIVENESS_HTTP = """\
apiVersion: v1
kind: Pod
metadata:
  labels:
    test: liveness
  name: liveness-http
spec:
  containers:
  - name: liveness
    image: registry.k8s.io/e2e-test-images/agnhost:2.40
    args:
    - liveness
    livenessProbe:
      httpGet:
        path: /healthz
        port: 8080
        httpHeaders:
        - name: Custom-Header
          value: Awesome
      initialDelaySeconds: 3
      periodSeconds: 3
"""

# KYAML: Kubernetes' flow-style subset of YAML.
TCP_LIVENESS_READINESS = """\
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "goproxy",
    labels: {
      app: "goproxy",
    },
  },
  spec: {
    containers: [{
      name: "goproxy",
      image: "registry.k8s.io/goproxy:0.1",
      ports: [{
        containerPort: 8080,
      }],
      readinessProbe: {
        tcpSocket: {
          port: 8080,
        },
        initialDelaySeconds: 15,
        periodSeconds: 10,
      },
      livenessProbe: {
        tcpSocket: {
          port: 8080,
        },
        initialDelaySeconds: 15,
        periodSeconds: 10,
      },
    }],
  },
}
"""

STARTUP_JSON = """\
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "slow-start"},
  "spec": {
    "containers": [
      {
        "name": "app",
        "image": "example.com/app:1",
        "ports": [{"name": "liveness-port", "containerPort": 8080}],
        "livenessProbe": {
          "httpGet": {"path": "/healthz", "port": "liveness-port"},
          "failureThreshold": 1,
          "periodSeconds": 10,
          "terminationGracePeriodSeconds": 60
        },
        "startupProbe": {
          "httpGet": {"path": "/healthz", "port": "liveness-port", "scheme": "HTTPS",
                      "host": "127.0.0.1"},
          "failureThreshold": 30,
          "periodSeconds": 10,
          "timeoutSeconds": 5
        }
      }
    ]
  }
}
"""

ETCD_GRPC = """\
apiVersion: v1
kind: Pod
metadata:
  name: etcd-with-grpc
spec:
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.5.1-0
    command: [ "/usr/local/bin/etcd", "--data-dir",  "/var/lib/etcd",
               "--listen-client-urls", "http://0.0.0.0:2379",
               "--advertise-client-urls", "http://127.0.0.1:2379", "--log-level", "debug"]
    ports:
    - containerPort: 2379
    livenessProbe:
      grpc:
        port: 2379
      initialDelaySeconds: 10
"""


def test_liveness_exec_with_a_period():
    """The documentation's liveness-exec: an argument list, the delay and the period,
    and Kubernetes' defaults for what it leaves out (timeout 1, thresholds 1 and 3)."""
    probe = container(LIVENESS_EXEC).liveness_probe

    assert (
        Probe(
            Handler(exec_command=("cat", "/tmp/healthy")),
            initial_delay_seconds=5,
            period_seconds=5,
            timeout_seconds=1,
            success_threshold=1,
            failure_threshold=3,
        )
        == probe
    )


def test_liveness_http_with_a_custom_header():
    """httpHeaders are kept in order, name and value; the scheme defaults to HTTP."""
    probe = container(LIVENESS_HTTP).liveness_probe

    assert (
        Probe(
            Handler(
                http_get=HTTPGetAction(
                    port=8080,
                    path="/healthz",
                    http_headers=(HTTPHeader("Custom-Header", "Awesome"),),
                )
            ),
            initial_delay_seconds=3,
            period_seconds=3,
        )
        == probe
    )


def test_tcp_liveness_and_readiness_in_kyaml():
    """A readiness probe loads beside the liveness probe (KYAML)."""
    c = container(TCP_LIVENESS_READINESS)
    expected = Probe(
        Handler(tcp_socket=TCPSocketAction(port=8080)), initial_delay_seconds=15, period_seconds=10
    )

    assert (expected, expected, None) == (c.liveness_probe, c.readiness_probe, c.startup_probe)


def test_a_startup_probe_protects_a_slow_start_in_json():
    """A startup probe with its own thresholds, timeout, scheme and host; a liveness
    probe with a grace period of its own (used when it kills the container)."""
    c = container(STARTUP_JSON)

    assert (
        Probe(
            Handler(http_get=HTTPGetAction(port="liveness-port", path="/healthz")),
            failure_threshold=1,
            period_seconds=10,
            termination_grace_period_seconds=60,
        ),
        Probe(
            Handler(
                http_get=HTTPGetAction(
                    port="liveness-port", path="/healthz", scheme="HTTPS", host="127.0.0.1"
                )
            ),
            failure_threshold=30,
            period_seconds=10,
            timeout_seconds=5,
        ),
    ) == (c.liveness_probe, c.startup_probe)


def test_headers_are_kept_in_order_and_may_repeat():
    """Each entry is one header: a name given twice sends both (Go's Header.Add)."""
    c = container(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n"
        "  - name: app\n    image: nginx\n    readinessProbe:\n      httpGet:\n"
        "        port: 80\n        httpHeaders:\n        - {name: Host, value: example.com}\n"
        "        - {name: X-Token, value: a}\n        - {name: X-Token, value: ''}\n"
    )

    assert c.readiness_probe is not None
    assert c.readiness_probe.handler.http_get is not None
    assert (
        HTTPHeader("Host", "example.com"),
        HTTPHeader("X-Token", "a"),
        HTTPHeader("X-Token", ""),
    ) == c.readiness_probe.handler.http_get.http_headers


def test_lifecycle_http_hooks_take_headers_too():
    """httpHeaders belong to every httpGet action, hooks included (one Kubernetes type)."""
    c = container(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n"
        "  - name: app\n    image: nginx\n    lifecycle:\n      preStop:\n"
        "        httpGet: {port: 80, path: /drain, httpHeaders: [{name: X-Drain, value: '1'}]}\n"
    )

    assert c.lifecycle is not None
    assert c.lifecycle.pre_stop is not None
    assert (
        HTTPGetAction(port=80, path="/drain", http_headers=(HTTPHeader("X-Drain", "1"),))
        == c.lifecycle.pre_stop.http_get
    )


def pod_with(probe_yaml: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n"
        "  - name: app\n    image: nginx\n    ports: [{name: http, containerPort: 80}]\n"
        f"    {probe_yaml}\n"
    )


@pytest.mark.parametrize(
    ("probe_yaml", "message"),
    [
        (
            "livenessProbe: {exec: {command: [check]}, successThreshold: 2}",
            "$.spec.containers[0].livenessProbe.successThreshold: "
            "must be 1 for a liveness probe, got 2",
        ),
        (
            "startupProbe: {exec: {command: [check]}, successThreshold: 3}",
            "$.spec.containers[0].startupProbe.successThreshold: "
            "must be 1 for a startup probe, got 3",
        ),
        (
            "readinessProbe: {exec: {command: [check]}, terminationGracePeriodSeconds: 5}",
            "$.spec.containers[0].readinessProbe.terminationGracePeriodSeconds: "
            "must not be set for a readiness probe (it never stops the container)",
        ),
        (
            "livenessProbe: {exec: {command: [check]}, terminationGracePeriodSeconds: 0}",
            "$.spec.containers[0].livenessProbe.terminationGracePeriodSeconds: "
            "must be at least 1, got 0",
        ),
        (
            "readinessProbe: {tcpSocket: {port: http}, periodSeconds: 0}",
            "$.spec.containers[0].readinessProbe.periodSeconds: must be at least 1, got 0",
        ),
        (
            "livenessProbe: {tcpSocket: {port: http}, timeoutSeconds: 0}",
            "$.spec.containers[0].livenessProbe.timeoutSeconds: must be at least 1, got 0",
        ),
        (
            "livenessProbe: {tcpSocket: {port: http}, failureThreshold: 0}",
            "$.spec.containers[0].livenessProbe.failureThreshold: must be at least 1, got 0",
        ),
        (
            "readinessProbe: {tcpSocket: {port: http}, successThreshold: -1}",
            "$.spec.containers[0].readinessProbe.successThreshold: must be at least 1, got -1",
        ),
        (
            "readinessProbe: {tcpSocket: {port: http}, periodSeconds: 2147483648}",
            "$.spec.containers[0].readinessProbe.periodSeconds: "
            "must be at most 2147483647, got 2147483648",
        ),
        (
            "readinessProbe: {tcpSocket: {port: http}, periodSeconds: '10'}",
            "$.spec.containers[0].readinessProbe.periodSeconds: expected an integer, got '10' "
            "(write it without quotes)",
        ),
        (
            "startupProbe: {tcpSocket: {port: metrics}}",
            "$.spec.containers[0].startupProbe.tcpSocket.port: "
            "no port named 'metrics' in this container",
        ),
        (
            "readinessProbe: {httpGet: {port: http, httpHeaders: [{name: 'X Y', value: a}]}}",
            "$.spec.containers[0].readinessProbe.httpGet.httpHeaders[0].name: "
            "'X Y' is not a valid HTTP header name (letters, digits and '-' only)",
        ),
        (
            "readinessProbe: {httpGet: {port: http, httpHeaders: "
            '[{name: X, value: "a\\r\\nB: c"}]}}',
            "$.spec.containers[0].readinessProbe.httpGet.httpHeaders[0].value: "
            "'a\\r\\nB: c' contains a line break, which no HTTP header may",
        ),
        (
            "readinessProbe: {httpGet: {port: http, httpHeaders: [{name: X}]}}",
            "$.spec.containers[0].readinessProbe.httpGet.httpHeaders[0].value: "
            "required field missing",
        ),
        (
            "readinessProbe: {httpGet: {port: http, scheme: https}}",
            "$.spec.containers[0].readinessProbe.httpGet.scheme: "
            "must be HTTP or HTTPS, got 'https'",
        ),
        (
            "startupProbe: {periodSeconds: 5}",
            "$.spec.containers[0].startupProbe: "
            "needs exactly one of exec, httpGet or tcpSocket, got none",
        ),
        (
            "readinessProbe: {exec: {command: [check]}, periodSecond: 5}",
            "$.spec.containers[0].readinessProbe: "
            "unknown key 'periodSecond' (did you mean 'periodSeconds'?)",
        ),
    ],
)
def test_probe_problems(probe_yaml, message):
    """Every rule of a probe's fields fails with its path and says what was expected."""
    assert f"pod.yaml: {message}" == error(pod_with(probe_yaml))


def test_grpc_probes_are_refused_with_the_reason():
    """The documentation's etcd gRPC probe: refused, saying why and what to use instead
    (podsync has no gRPC client among its dependencies)."""
    assert (
        "pod.yaml: $.spec.containers[0].livenessProbe.grpc: grpc is not supported by "
        "podsync: a gRPC health check needs a gRPC client (HTTP/2 and protobuf), which "
        "podsync does not have; run a health-check program with an exec probe (e.g. "
        "grpc_health_probe -addr=:PORT) or use tcpSocket"
    ) == error(ETCD_GRPC)


@pytest.mark.parametrize("kind", ["readinessProbe", "startupProbe"])
def test_grpc_is_refused_in_every_probe(kind):
    """Readiness and startup probes refuse gRPC the same way."""
    text = error(pod_with(f"{kind}: {{grpc: {{port: 2379, service: etcd}}}}"))

    assert text.startswith(
        f"pod.yaml: $.spec.containers[0].{kind}.grpc: grpc is not supported by podsync: "
    )


def test_v1beta1_manifests_keep_their_liveness_probe():
    """A 2014 manifest's liveness probe gets today's defaults for what it could not say."""
    c = container(
        "version: v1beta1\nid: web\ncontainers:\n- name: app\n  image: nginx\n"
        "  livenessProbe:\n    httpGet: {path: /healthz, port: 8080}\n"
        "    initialDelaySeconds: 15\n"
    )

    assert (
        Probe(Handler(http_get=HTTPGetAction(port=8080, path="/healthz")), initial_delay_seconds=15)
        == c.liveness_probe
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("initial_delay_seconds", -1),
        ("period_seconds", 0),
        ("timeout_seconds", 0),
        ("success_threshold", 0),
        ("failure_threshold", 0),
        ("termination_grace_period_seconds", 0),
    ],
)
def test_the_model_refuses_what_kubernetes_refuses(field, value):
    """Library callers get the API's minimums too, as a ValueError naming the field."""
    with pytest.raises(ValueError, match=f"^{field} must be at least"):
        Probe(Handler(exec_command=("true",)), **{field: value})
