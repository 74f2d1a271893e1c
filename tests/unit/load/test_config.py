"""Loading pods from YAML: documents, sources, error messages (podsync/load/_config.py,
which wires _sources.py, schema/_yaml.py, schema/_scalars.py, schema/_pod.py and
convert/_document.py)."""

from __future__ import annotations

import contextlib
import http.server
import io
import os
import random
import threading
from collections.abc import Iterator

import attrs
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from podsync import (
    ConfigError,
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HTTPGetAction,
    Lifecycle,
    Pod,
    Port,
    PortProtocol,
    Probe,
    Problem,
    PullPolicy,
    ResourceList,
    Resources,
    RestartPolicy,
    TCPSocketAction,
    Volume,
    VolumeMount,
    derive_pod_uid,
    load_pods,
    parse_pods,
)
from podsync.load.schema import _yaml
from podsync.spec._naming import is_safe_uid
from tests.support.strategies import pods

# --- helpers ---------------------------------------------------------------------------

MINIMAL_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox
"""

MINIMAL_MANIFEST = """\
version: v1beta1
id: {name}
containers:
- name: app
  image: busybox
"""


def minimal_pod(name: str = "web", source: str = "api") -> Pod:
    """The Pod that MINIMAL_POD / MINIMAL_MANIFEST describe."""
    return Pod(name=name, source=source, containers=(Container(name="app", image="busybox"),))


def problems_of(text: str, **kwargs: str) -> list[str]:
    """The problems ``parse_pods`` reports for ``text``, as strings."""
    with pytest.raises(ConfigError) as info:
        parse_pods(text, **kwargs)
    return [str(p) for p in info.value.problems]


def container_yaml(body: str) -> str:
    """A v1 pod whose only container has the given extra keys (indented YAML lines)."""
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return MINIMAL_POD.format(name="web") + lines


# --- v1 Pod ----------------------------------------------------------------------------

FULL_V1_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  uid: 6f1c2b4e-0d7a-4c1e-9a51-3f8d2b7c9e10
  labels: {app: web, tier: front}
  annotations: {kubernetes.io/created-by: me}
spec:
  restartPolicy: OnFailure
  dnsPolicy: Default
  volumes:
  - name: data
    hostPath: {path: /srv/data}
  - name: scratch
    emptyDir: {}
  - name: cache
  containers:
  - name: app
    image: nginx:1.7
    command: [nginx]
    args: [-g, daemon off;]
    workingDir: /srv
    env:
    - {name: MODE, value: production}
    - {name: EMPTY}
    ports:
    - {name: http, containerPort: 80, hostPort: 8080, protocol: TCP, hostIP: 127.0.0.1}
    - {containerPort: 53, protocol: udp}
    volumeMounts:
    - {name: data, mountPath: /data, readOnly: true}
    - {name: scratch, mountPath: /tmp/scratch}
    resources:
      limits: {cpu: 500m, memory: 128Mi}
      requests: {cpu: 250m, memory: 64Mi}
    imagePullPolicy: Always
    livenessProbe:
      httpGet: {path: /healthz, port: http, host: 10.0.0.1, scheme: HTTPS}
      initialDelaySeconds: 15
    lifecycle:
      postStart: {exec: {command: [touch, /ready]}}
      preStop: {tcpSocket: {port: 80, host: localhost}}
    securityContext: {privileged: true}
    terminationMessagePath: /dev/termination-log
  - name: sidecar
    image: busybox
    livenessProbe:
      tcpSocket: {port: 8081}
    lifecycle:
      preStop: {httpGet: {path: /quit, port: 8081}}
"""

FULL_V1_EXPECTED = Pod(
    name="web",
    namespace="shop",
    uid="6f1c2b4e-0d7a-4c1e-9a51-3f8d2b7c9e10",
    source="file",
    restart_policy=RestartPolicy.ON_FAILURE,
    dns_policy=DNSPolicy.DEFAULT,
    labels={"app": "web", "tier": "front"},
    annotations={"kubernetes.io/created-by": "me"},
    volumes=(
        Volume(name="data", host_path="/srv/data"),
        Volume(name="scratch"),
        Volume(name="cache"),
    ),
    containers=(
        Container(
            name="app",
            image="nginx:1.7",
            command=("nginx",),
            args=("-g", "daemon off;"),
            working_dir="/srv",
            env=(EnvVar("MODE", "production"), EnvVar("EMPTY", "")),
            ports=(
                Port(
                    container_port=80,
                    host_port=8080,
                    protocol=PortProtocol.TCP,
                    name="http",
                    host_ip="127.0.0.1",
                ),
                Port(container_port=53, protocol=PortProtocol.UDP),
            ),
            volume_mounts=(
                VolumeMount(name="data", mount_path="/data", read_only=True),
                VolumeMount(name="scratch", mount_path="/tmp/scratch"),
            ),
            resources=Resources(
                requests=ResourceList(cpu=250, memory=64 * 2**20),
                limits=ResourceList(cpu=500, memory=128 * 2**20),
            ),
            image_pull_policy=PullPolicy.ALWAYS,
            liveness_probe=Probe(
                handler=Handler(
                    http_get=HTTPGetAction(
                        port="http", path="/healthz", host="10.0.0.1", scheme="HTTPS"
                    )
                ),
                initial_delay_seconds=15,
            ),
            lifecycle=Lifecycle(
                post_start=Handler(exec_command=("touch", "/ready")),
                pre_stop=Handler(tcp_socket=TCPSocketAction(port=80, host="localhost")),
            ),
            privileged=True,
            termination_message_path="/dev/termination-log",
        ),
        Container(
            name="sidecar",
            image="busybox",
            liveness_probe=Probe(handler=Handler(tcp_socket=TCPSocketAction(port=8081))),
            lifecycle=Lifecycle(pre_stop=Handler(http_get=HTTPGetAction(port=8081, path="/quit"))),
        ),
    ),
)


def test_full_v1_pod():
    """Every key of a v1 Pod lands in its model field."""

    assert (FULL_V1_EXPECTED,) == parse_pods(FULL_V1_POD, source="file")


def test_minimal_v1_pod_defaults():
    """Left-out keys take the model's defaults and the uid is derived."""
    expected = (minimal_pod(source="file"),)

    actual = parse_pods(MINIMAL_POD.format(name="web"), source="file")

    assert expected == actual
    assert derive_pod_uid("file", "default", "web") == actual[0].uid


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # Empty policy strings mean the default, like Go's zero value.
        # Empty is the API server's "unset": the default then follows the tag.
        ('imagePullPolicy: ""', {"image_pull_policy": None}),
        ("imagePullPolicy: Never", {"image_pull_policy": PullPolicy.NEVER}),
        ("imagePullPolicy: IfNotPresent", {"image_pull_policy": PullPolicy.IF_NOT_PRESENT}),
        # Requests and limits are kept apart: a request is never a limit (see
        # tests/unit/planner/test_pod_fields.py for what each becomes); the 2014 values stay 0.
        (
            "resources: {requests: {cpu: 250m, memory: 1Gi}}",
            {
                "cpu": 0,
                "memory": 0,
                "resources": Resources(requests=ResourceList(cpu=250, memory=2**30)),
            },
        ),
        (
            "resources: {limits: {cpu: 1}, requests: {cpu: 500m, memory: 1Ki}}",
            {
                "resources": Resources(
                    requests=ResourceList(cpu=500, memory=1024), limits=ResourceList(cpu=1000)
                )
            },
        ),
        # No resources at all: unset.
        ("resources: {}", {"cpu": 0, "memory": 0, "resources": None}),
        # A null probe or lifecycle is as good as none.
        ("livenessProbe: null", {"liveness_probe": None}),
        # securityContext without privileged.
        ("securityContext: {}", {"privileged": False}),
        # An empty protocol is TCP; any case is accepted.
        (
            "ports: [{containerPort: 1, protocol: ''}, {containerPort: 2, protocol: Udp}]",
            {"ports": (Port(1), Port(2, protocol=PortProtocol.UDP))},
        ),
        # A hostPort of 0 is "not published".
        ("ports: [{containerPort: 80, hostPort: 0}]", {"ports": (Port(80),)}),
    ],
)
def test_container_fields(body, expected):
    """Container keys map to the model, with documented defaults."""
    pod = parse_pods(container_yaml(body))[0]

    actual = {key: getattr(pod.containers[0], key) for key in expected}

    assert expected == actual


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # Defaults.
        ("", (RestartPolicy.ALWAYS, DNSPolicy.CLUSTER_FIRST)),
        # Empty strings are defaults too.
        ("restartPolicy: ''\ndnsPolicy: ''", (RestartPolicy.ALWAYS, DNSPolicy.CLUSTER_FIRST)),
        ("restartPolicy: Never", (RestartPolicy.NEVER, DNSPolicy.CLUSTER_FIRST)),
        (
            "restartPolicy: OnFailure\ndnsPolicy: Default",
            (RestartPolicy.ON_FAILURE, DNSPolicy.DEFAULT),
        ),
    ],
)
def test_pod_policies(spec, expected):
    """restartPolicy and dnsPolicy are read from the spec."""
    text = MINIMAL_POD.format(name="web") + "".join(f"  {line}\n" for line in spec.splitlines())
    pod = parse_pods(text)[0]

    assert expected == (pod.restart_policy, pod.dns_policy)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("", None),  # not given: the stop timeout option decides
        ("terminationGracePeriodSeconds: 45", 45),
        ("terminationGracePeriodSeconds: 0", 0),
        ("terminationGracePeriodSeconds: 2147483647", 2147483647),
    ],
)
def test_termination_grace_period(spec, expected):
    """terminationGracePeriodSeconds is read from the spec (whole seconds)."""
    text = MINIMAL_POD.format(name="web") + "".join(f"  {line}\n" for line in spec.splitlines())

    assert expected == parse_pods(text)[0].termination_grace_period_seconds


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-1", "must not be negative, got -1"),
        ("2147483648", "must be at most 2147483647, got 2147483648"),
        ("30s", "expected an integer, got '30s'"),
        ("1.5", "expected an integer, got 1.5"),
    ],
)
def test_bad_termination_grace_period(value, message):
    """A grace period that Docker cannot take as a stop timeout is refused."""
    text = MINIMAL_POD.format(name="web") + f"  terminationGracePeriodSeconds: {value}\n"

    with pytest.raises(ConfigError) as error:
        parse_pods(text)

    problems = [str(p) for p in error.value.problems]
    assert [f"$.spec.terminationGracePeriodSeconds: {message}"] == problems


@pytest.mark.parametrize("kind", ["List", "PodList"])
def test_list_kinds(kind):
    """A List or PodList yields its items in order; items may omit apiVersion and kind."""
    text = f"""\
apiVersion: v1
kind: {kind}
metadata: {{resourceVersion: "", selfLink: ""}}
items:
- apiVersion: v1
  kind: Pod
  metadata: {{name: one}}
  spec: {{containers: [{{name: app, image: busybox}}]}}
- metadata: {{name: two}}
  spec: {{containers: [{{name: app, image: busybox}}]}}
"""
    expected = (minimal_pod("one"), minimal_pod("two"))

    assert expected == parse_pods(text)


def test_empty_list_is_no_pods():
    """A List with no items is a valid, empty desired state."""

    assert () == parse_pods("apiVersion: v1\nkind: List\nitems: []\n")


def test_multi_document_stream():
    """Documents of a stream are read in order; empty documents are skipped."""
    text = (
        "---\n"
        + MINIMAL_POD.format(name="one")
        + "---\n---\n"
        + MINIMAL_MANIFEST.format(name="two")
        + "...\n"
    )
    expected = (minimal_pod("one"), minimal_pod("two"))

    assert expected == parse_pods(text)


def test_top_level_list_of_manifests():
    """A top-level list of documents is accepted, as the seed's HTTP source did."""
    text = yaml.safe_dump([yaml.safe_load(MINIMAL_MANIFEST.format(name=n)) for n in ("one", "two")])
    expected = (minimal_pod("one"), minimal_pod("two"))

    assert expected == parse_pods(text)


def test_bytes_with_bom():
    """UTF-8 bytes are accepted, with or without a byte-order mark."""
    text = MINIMAL_POD.format(name="web").encode()

    assert parse_pods(text) == parse_pods(b"\xef\xbb\xbf" + text)


def test_yaml_features():
    """Anchors, merge keys and unquoted dates are read like ordinary YAML."""
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {built: 2014-11-01}
spec:
  containers:
  - &base
    name: one
    image: busybox
    env: [{name: A, value: x}]
  - <<: *base
    name: two
"""
    env = (EnvVar("A", "x"),)
    expected = (
        Container(name="one", image="busybox", env=env),
        Container(name="two", image="busybox", env=env),
    )

    assert expected == parse_pods(text)[0].containers


# --- v1beta1 ContainerManifest ---------------------------------------------------------

FULL_MANIFEST = """\
version: v1beta1
id: web
uuid: 6f1c2b4e-0d7a-4c1e-9a51-3f8d2b7c9e10
volumes:
- name: data
  source: {hostDir: {path: /srv/data}}
- name: scratch
  source: {emptyDir: {}}
- name: cache
restartPolicy: {never: {}}
dnsPolicy: Default
containers:
- name: app
  image: nginx:1.7
  command: [nginx, -g, daemon off;]
  workingDir: /srv
  ports:
  - {name: http, containerPort: 80, hostPort: 8080, protocol: UDP, hostIP: 0.0.0.0}
  env:
  - {name: MODE, value: production}
  memory: 134217728
  cpu: 500
  volumeMounts:
  - {name: data, mountPath: /data, readOnly: true}
  livenessProbe:
    httpGet: {path: /healthz, port: 80, host: localhost}
    initialDelaySeconds: 5
  lifecycle:
    postStart: {exec: {command: [touch, /ready]}}
    preStop: {httpGet: {path: /quit, port: http}}
  terminationMessagePath: /dev/termination-log
  privileged: true
  imagePullPolicy: PullNever
"""

FULL_MANIFEST_EXPECTED = Pod(
    name="web",
    uid="6f1c2b4e-0d7a-4c1e-9a51-3f8d2b7c9e10",
    source="http",
    restart_policy=RestartPolicy.NEVER,
    dns_policy=DNSPolicy.DEFAULT,
    volumes=(
        Volume(name="data", host_path="/srv/data"),
        Volume(name="scratch"),
        Volume(name="cache"),
    ),
    containers=(
        Container(
            name="app",
            image="nginx:1.7",
            # v1beta1 command is Docker CMD: the model's args.
            args=("nginx", "-g", "daemon off;"),
            working_dir="/srv",
            env=(EnvVar("MODE", "production"),),
            ports=(
                Port(
                    container_port=80,
                    host_port=8080,
                    protocol=PortProtocol.UDP,
                    name="http",
                    host_ip="0.0.0.0",
                ),
            ),
            volume_mounts=(VolumeMount(name="data", mount_path="/data", read_only=True),),
            cpu=500,
            memory=134217728,
            image_pull_policy=PullPolicy.NEVER,
            liveness_probe=Probe(
                handler=Handler(http_get=HTTPGetAction(port=80, path="/healthz", host="localhost")),
                initial_delay_seconds=5,
            ),
            lifecycle=Lifecycle(
                post_start=Handler(exec_command=("touch", "/ready")),
                pre_stop=Handler(http_get=HTTPGetAction(port="http", path="/quit")),
            ),
            privileged=True,
            termination_message_path="/dev/termination-log",
        ),
    ),
)


def test_full_v1beta1_manifest():
    """Every key of a v1beta1 ContainerManifest lands in its model field."""

    assert (FULL_MANIFEST_EXPECTED,) == parse_pods(FULL_MANIFEST, source="http")


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # Left out: Always.
        ("", RestartPolicy.ALWAYS),
        # Empty struct: Always (the 2014 validation default).
        ("restartPolicy: {}", RestartPolicy.ALWAYS),
        ("restartPolicy: {always: {}}", RestartPolicy.ALWAYS),
        ("restartPolicy: {onFailure: {}}", RestartPolicy.ON_FAILURE),
        ("restartPolicy: {never: {}}", RestartPolicy.NEVER),
        # A member written without a value still counts (Go would have fallen back to
        # Always, the opposite of what was written).
        ("restartPolicy: {never: }", RestartPolicy.NEVER),
    ],
)
def test_v1beta1_restart_policy(policy, expected):
    """The v1beta1 restart policy is a struct with one member set."""
    pod = parse_pods(MINIMAL_MANIFEST.format(name="web") + policy + "\n")[0]

    assert expected == pod.restart_policy


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("PullAlways", PullPolicy.ALWAYS),
        # Case-insensitive, like the seed's pullPoliciesEqual.
        ("pullalways", PullPolicy.ALWAYS),
        ("PULLNEVER", PullPolicy.NEVER),
        ("PullIfNotPresent", PullPolicy.IF_NOT_PRESENT),
        # Empty: none given; the default follows the tag (SetDefaults_Container).
        ("''", None),
    ],
)
def test_v1beta1_pull_policy(policy, expected):
    """v1beta1 pull policies use the 2014 names, in any case."""
    text = MINIMAL_MANIFEST.format(name="web") + f"  imagePullPolicy: {policy}\n"

    assert expected == parse_pods(text)[0].containers[0].image_pull_policy


def test_v1beta1_volume_sources():
    """hostDir is a host path; emptyDir, a null source or none at all is an emptyDir."""
    text = MINIMAL_MANIFEST.format(name="web") + (
        "volumes:\n"
        "- {name: a, source: {hostDir: {path: /a}}}\n"
        "- {name: b, source: {emptyDir: {}}}\n"
        "- {name: c, source: null}\n"
        "- {name: d}\n"
        "- {name: e, source: {emptyDir: }}\n"
    )
    expected = (
        Volume("a", "/a"),
        Volume("b"),
        Volume("c"),
        Volume("d"),
        Volume("e"),
    )

    assert expected == parse_pods(text)[0].volumes


def test_v1beta2_manifest():
    """version v1beta2 manifests read like v1beta1 (the 2014 validation took both)."""
    text = MINIMAL_MANIFEST.format(name="web").replace("v1beta1", "v1beta2")

    assert (minimal_pod(),) == parse_pods(text)


# --- quantities ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quantity", "expected"),
    [
        # Milli-CPU as written.
        ("500m", 500),
        # Fractions of a CPU, as a YAML float and as a string.
        ("0.5", 500),
        ("'0.5'", 500),
        (".25", 250),
        ("1.5", 1500),
        # Whole CPUs, as a YAML int.
        ("2", 2000),
        # An explicit plus sign.
        ("'+1'", 1000),
        # Zero: unset.
        ("0", 0),
        ("0m", 0),
        # Finer than a milli-CPU rounds up, as Kubernetes' MilliValue does.
        ("0.0001", 1),
        ("1.0001", 1001),
        # Exponents.
        ("1e3", 1000000),
        ("2e-3", 2),
        # A decimal suffix on CPU is unusual but valid: 1k CPUs.
        ("1k", 1000000),
    ],
)
def test_cpu_quantities(quantity, expected):
    """CPU quantities become milli-CPU."""
    text = container_yaml(f"resources: {{limits: {{cpu: {quantity}}}}}")

    assert expected == parse_pods(text)[0].containers[0].effective_resources.limits.cpu


@pytest.mark.parametrize(
    ("quantity", "expected"),
    [
        # Binary suffixes.
        ("128Mi", 134217728),
        ("1Ki", 1024),
        ("1.5Gi", 1610612736),
        ("2Ti", 2 * 2**40),
        ("1Pi", 2**50),
        ("1Ei", 2**60),
        # Decimal suffixes.
        ("1G", 10**9),
        ("500M", 500 * 10**6),
        ("1k", 1000),
        ("3T", 3 * 10**12),
        ("1P", 10**15),
        ("2E", 2 * 10**18),
        # Exponents: 1e9 is a string to YAML, 1.0e+9 a float; both are a billion.
        ("1e9", 10**9),
        ("1.0e+9", 10**9),
        ("1E3", 1000),
        # Plain bytes.
        ("512", 512),
        # Milli-bytes round up to whole bytes.
        ("1500m", 2),
    ],
)
def test_memory_quantities(quantity, expected):
    """Memory quantities become bytes."""
    text = container_yaml(f"resources: {{limits: {{memory: {quantity}}}}}")

    assert expected == parse_pods(text)[0].containers[0].effective_resources.limits.memory


@pytest.mark.parametrize(
    ("resource", "quantity", "message"),
    [
        # Not a number.
        (
            "cpu",
            "abc",
            "'abc' is not a valid quantity: expected a number with an optional "
            "suffix, like 500m, 0.5 or 2",
        ),
        # A unit that does not exist.
        (
            "memory",
            "12XB",
            "'12XB' is not a valid quantity: expected a number with an "
            "optional suffix, like 128Mi, 1G or 512",
        ),
        # Spaces are not part of a quantity.
        (
            "memory",
            "'1 Gi'",
            "'1 Gi' is not a valid quantity: expected a number with an "
            "optional suffix, like 128Mi, 1G or 512",
        ),
        # Negative.
        ("cpu", "-1", "must not be negative, got -1"),
        ("memory", "'-1Gi'", "must not be negative, got '-1Gi'"),
        # Beyond int64.
        ("memory", "16Ei", "'16Ei' is too large: at most 9223372036854775807 bytes"),
        ("cpu", "1e99", "'1e99' is too large: at most 9223372036854775807 milli-CPU"),
        # Not finite.
        ("cpu", ".inf", "must be a finite number, got inf"),
        # Booleans and lists are not quantities.
        ("cpu", "true", "expected a quantity like 500m, 0.5 or 2, got true"),
        ("memory", "[1]", "expected a quantity like 128Mi, 1G or 512, got a list"),
    ],
)
def test_bad_quantities(resource, quantity, message):
    """A bad quantity is an error at its path saying what is wrong."""
    text = container_yaml(f"resources: {{limits: {{{resource}: {quantity}}}}}")
    expected = [f"$.spec.containers[0].resources.limits.{resource}: {message}"]

    assert expected == problems_of(text)


# --- identity ---------------------------------------------------------------------------


def test_derived_uid_is_deterministic():
    """The same pod read twice gets the same derived uid."""
    text = MINIMAL_POD.format(name="web")

    assert parse_pods(text, source="file")[0].uid == parse_pods(text, source="file")[0].uid


@pytest.mark.parametrize(
    ("text", "source"),
    [
        # Another source.
        (MINIMAL_POD.format(name="web"), "http"),
        # Another name.
        (MINIMAL_POD.format(name="web2"), "file"),
        # Another namespace.
        (MINIMAL_POD.format(name="web").replace("name: web", "name: web\n  namespace: x"), "file"),
    ],
)
def test_derived_uid_differs(text, source):
    """Pods that differ in source, namespace or name get different derived uids."""
    base = parse_pods(MINIMAL_POD.format(name="web"), source="file")[0]

    assert base.uid != parse_pods(text, source=source)[0].uid


def test_explicit_uid_is_kept():
    """A given uid is used as it is, not derived."""
    text = MINIMAL_POD.format(name="web").replace("name: web", "name: web\n  uid: Abc.1-2")

    assert "Abc.1-2" == parse_pods(text)[0].uid


def pod_with_uid(uid: str) -> str:
    """A minimal pod whose ``metadata.uid`` is ``uid`` (a YAML double-quoted string)."""
    quoted = '"' + uid.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return MINIMAL_POD.format(name="web").replace("name: web", f"name: web\n  uid: {quoted}")


@pytest.mark.parametrize(
    ("uid", "expected"),
    [
        ("", "must not be empty (leave it out to derive a uid)"),
        ("a" * 254, "must be at most 253 characters, got 254"),
        ("a_b", "'a_b' is not a valid uid: '_' is not allowed (only letters, digits, '.' and '-')"),
        ("a/b", "'a/b' is not a valid uid: '/' is not allowed (only letters, digits, '.' and '-')"),
        ("-abc", "'-abc' is not a valid uid: it must start with a letter or digit"),
        (".", "'.' is not a valid uid: it must start with a letter or digit"),
    ],
)
def test_bad_uid_messages(uid, expected):
    """Each part of the uid rule a value breaks is named."""
    assert [f"$.metadata.uid: {expected}"] == problems_of(pod_with_uid(uid))


@given(st.text(alphabet="aZ09.-_/ \u00e9", max_size=12) | st.sampled_from(["a" * 253, "a" * 254]))
@settings(max_examples=300)
def test_loader_uid_rule_is_is_safe_uid(uid):
    """The loader accepts exactly the uids ``is_safe_uid`` accepts (the planner's rule for
    pods built in code): one rule, in podsync.spec._naming."""
    try:
        accepted = parse_pods(pod_with_uid(uid))[0].uid == uid
    except ConfigError:
        accepted = False

    assert is_safe_uid(uid) == accepted


def test_parse_pods_rejects_bad_source():
    """The source becomes part of container names, so it must be a plain word."""

    with pytest.raises(ValueError, match="source"):
        parse_pods(MINIMAL_POD.format(name="web"), source="my_source")


# --- error format -----------------------------------------------------------------------


def test_problem_format():
    """Problems read '<source>: <path>: <message>' and carry their parts."""
    text = container_yaml("ports: [{containerPort: 70000}]")
    expected = [
        Problem(
            "pods/web.yaml",
            "$.spec.containers[0].ports[0].containerPort",
            "must be 1-65535, got 70000",
        )
    ]

    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pods/web.yaml")

    assert expected == list(info.value.problems)
    assert (
        "pods/web.yaml: $.spec.containers[0].ports[0].containerPort: must be 1-65535, got 70000"
        == str(info.value)
    )


def test_document_number_prefix():
    """In a multi-document stream, paths start with the 1-based document number."""
    text = (
        MINIMAL_POD.format(name="ok")
        + "---\n"
        + MINIMAL_POD.format(name="Bad")
        + "---\n"
        + MINIMAL_MANIFEST.format(name="b_d")
    )
    expected = [
        "all.yaml: document 2: $.metadata.name: 'Bad' is not a valid DNS-1123 label: "
        "uppercase letters are not allowed (only lowercase letters, digits and '-')",
        "all.yaml: document 3: $.id: 'b_d' is not a valid DNS-1123 label: '_' is not allowed "
        "(only lowercase letters, digits and '-')",
    ]

    assert expected == problems_of(text, source_name="all.yaml")


def test_all_problems_of_a_document_are_reported():
    """Shape errors anywhere in a document are all reported, in field order."""
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: web, color: blue}
spec:
  containers:
  - {name: a, image: x, ports: [{containerPort: '80'}]}
  - {name: b, image: '', command: ls}
"""
    expected = [
        "$.metadata: unknown key 'color'",
        "$.spec.containers[0].ports[0].containerPort: expected an integer, got '80' "
        "(write it without quotes)",
        "$.spec.containers[1].image: must not be empty",
        "$.spec.containers[1].command: expected a list, got 'ls'",
    ]

    assert expected == problems_of(text)


def test_never_a_traceback_on_garbage():
    """Arbitrary text gives a ConfigError (or pods), never another exception."""
    samples = ["", "-", ":", "[", "{a: [}", "*x", "&a [*a]", "? [a]\n: b", "%YAML 9.9\n---\n"]
    for sample in samples:
        with pytest.raises(ConfigError):
            parse_pods(sample)


@given(st.text(max_size=60))
@settings(max_examples=200)
def test_arbitrary_text_never_raises_anything_else(text):
    """Whatever the text, parse_pods returns pods or raises ConfigError."""
    with contextlib.suppress(ConfigError):
        parse_pods(text)


# Pieces of YAML and of pod documents, so that generated streams reach past the parser:
# tags, anchors, merges, flow and block collections, and the keys the loader dispatches on.
YAML_FRAGMENTS = [
    *("\n", "  ", "- ", ": ", "? ", ", ", "[", "]", "{", "}", "'", '"', "#", "---\n", "...\n"),
    *("&a ", "*a ", "<<: ", "!!int ", "!!float ", "!!bool ", "!!timestamp ", "!!binary "),
    *("!!str ", "!!map ", "!!seq ", "!!set ", "!!omap ", "!x ", "null", "true", "0", "-1"),
    *("1.5", "70000", "abc", "2014-13-45", "500m", "1Gi", "\t", "\x00", "\ud800", "é"),
    *("apiVersion: v1\n", "kind: Pod\n", "kind: List\n", "items:\n", "version: v1beta1\n"),
    *("metadata:\n", "name: web\n", "spec:\n", "containers:\n", "id: web\n", "image: x\n"),
    *("ports:\n", "containerPort: ", "hostPort: ", "volumes:\n", "volumeMounts:\n"),
    *("restartPolicy: ", "resources: {limits: {cpu: ", "livenessProbe:\n", "httpGet:\n"),
]


@given(st.lists(st.sampled_from(YAML_FRAGMENTS), max_size=30).map("".join))
@settings(max_examples=300)
def test_yaml_like_text_never_raises_anything_else(text):
    """Streams built from YAML and pod fragments give pods or a ConfigError."""
    with contextlib.suppress(ConfigError):
        parse_pods(text)


@pytest.mark.parametrize("loader", [_yaml._PyLoader, _yaml._LOADER])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Nine levels of nine aliases would expand to 9**9 nodes; the fifth level is
        # already over the budget (50000 + the 378 characters of the text).
        pytest.param(
            "a: &a [x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
                for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "refused at line 5, column 4: the YAML expands to more than 50378 nodes "
            "through aliases (an alias bomb?)",
            id="alias-bomb",
        ),
        # An anchor used inside itself.
        pytest.param(
            "a: &a [1, *a]\n",
            "refused at line 1, column 11: recursive alias *a (used inside its own anchor)",
            id="recursive-alias",
        ),
        # Too deep.
        pytest.param(
            "[" * 100 + "]" * 100,
            "refused at line 1, column 65: nested more than 64 levels deep",
            id="deep",
        ),
    ],
)
def test_yaml_guards(monkeypatch, loader, text, expected):
    """Both loaders (libyaml's parser and PyYAML's) refuse bombs, recursion and depth."""
    monkeypatch.setattr(_yaml, "_LOADER", loader)

    assert [expected] == problems_of(text)


def test_pure_python_loader_reads_pods(monkeypatch):
    """Without libyaml the pure-Python loader gives the same pods."""
    monkeypatch.setattr(_yaml, "_LOADER", _yaml._PyLoader)

    assert (FULL_V1_EXPECTED,) == parse_pods(FULL_V1_POD, source="file")


# --- key order and round trips ---------------------------------------------------------


def shuffled(data: object, rnd: random.Random) -> object:
    """``data`` with the keys of every mapping in a random order."""
    if isinstance(data, dict):
        items = list(data.items())
        rnd.shuffle(items)
        return {key: shuffled(value, rnd) for key, value in items}
    if isinstance(data, list):
        return [shuffled(item, rnd) for item in data]
    return data


@given(st.randoms(use_true_random=False))
@settings(max_examples=25)
def test_key_order_does_not_matter(rnd):
    """The same pod with its keys in another order parses to an equal Pod."""
    for text in (FULL_V1_POD, FULL_MANIFEST):
        data = yaml.safe_load(text)
        reordered = yaml.safe_dump(shuffled(data, rnd), sort_keys=False)

        assert parse_pods(text) == parse_pods(reordered)


def handler_yaml(handler: Handler) -> dict[str, object]:
    if handler.exec_command is not None:
        return {"exec": {"command": list(handler.exec_command)}}
    if handler.http_get is not None:
        action = handler.http_get
        return {
            "httpGet": {
                "port": action.port,
                "path": action.path,
                "host": action.host,
                "scheme": action.scheme,
            }
        }
    assert handler.tcp_socket is not None
    return {"tcpSocket": {"port": handler.tcp_socket.port, "host": handler.tcp_socket.host}}


def escape_dollars(text: str) -> str:
    """``text`` as a v1 pod file writes it where ``$(VAR)`` is expanded."""
    return text.replace("$", "$$")


def resources_yaml(c: Container) -> dict[str, object]:
    """A container's ``resources`` key, from ``resources`` or the 2014 values (which a
    v1 pod writes as a CPU request and a memory limit: what they mean)."""
    if c.resources is None and not c.cpu and not c.memory:
        return {}
    r = c.effective_resources
    return {
        "resources": {
            "requests": {
                "cpu": f"{r.requests.cpu}m",
                "memory": r.requests.memory,
                "ephemeral-storage": r.requests.ephemeral_storage,
            },
            "limits": {"cpu": f"{r.limits.cpu}m", "memory": r.limits.memory},
        }
    }


def as_v1(pod: Pod) -> Pod:
    """``pod`` as a v1 document reads back: the 2014 values become ``resources``."""
    containers = []
    for c in pod.containers:
        given = c.resources is not None or c.cpu or c.memory
        resources = c.effective_resources if given else None
        # ``resources`` that ask for nothing read back as none given.
        resources = None if resources == Resources() else resources
        containers.append(attrs.evolve(c, cpu=0, memory=0, resources=resources))
    return attrs.evolve(pod, containers=tuple(containers))


def pod_yaml(pod: Pod) -> dict[str, object]:
    """A v1 Pod document for ``pod`` (the inverse of the loader)."""
    containers = []
    for c in pod.containers:
        container: dict[str, object] = {
            "name": c.name,
            "image": c.image,
            # A v1 pod expands $(VAR) in these: "$$" writes a "$".
            "command": [escape_dollars(x) for x in c.command],
            "args": [escape_dollars(x) for x in c.args],
            "workingDir": c.working_dir,
            "env": [{"name": e.name, "value": escape_dollars(e.value)} for e in c.env],
            "ports": [
                {
                    "name": p.name,
                    "containerPort": p.container_port,
                    "hostPort": p.host_port,
                    "protocol": p.protocol.value,
                    "hostIP": p.host_ip,
                }
                for p in c.ports
            ],
            "volumeMounts": [
                {"name": m.name, "mountPath": m.mount_path, "readOnly": m.read_only}
                for m in c.volume_mounts
            ],
            **resources_yaml(c),
            "imagePullPolicy": c.image_pull_policy.value,
            "securityContext": {"privileged": c.privileged},
            "terminationMessagePath": c.termination_message_path,
            "tty": c.tty,
            "stdin": c.stdin,
            "stdinOnce": c.stdin_once,
        }
        if c.liveness_probe is not None:
            container["livenessProbe"] = {
                **handler_yaml(c.liveness_probe.handler),
                "initialDelaySeconds": c.liveness_probe.initial_delay_seconds,
            }
        if c.lifecycle is not None:
            container["lifecycle"] = {
                key: handler_yaml(h)
                for key, h in (
                    ("postStart", c.lifecycle.post_start),
                    ("preStop", c.lifecycle.pre_stop),
                )
                if h is not None
            }
        containers.append(container)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod.name,
            "namespace": pod.namespace,
            "uid": pod.uid,
            "labels": pod.labels,
            "annotations": pod.annotations,
        },
        "spec": {
            "hostname": pod.hostname,
            "subdomain": pod.subdomain,
            "hostAliases": [{"ip": a.ip, "hostnames": list(a.hostnames)} for a in pod.host_aliases],
            "containers": containers,
            "volumes": [
                {"name": v.name, "hostPath": {"path": v.host_path}}
                if v.host_path is not None
                else {"name": v.name, "emptyDir": {}}
                for v in pod.volumes
            ],
            "restartPolicy": pod.restart_policy.value,
            "dnsPolicy": pod.dns_policy.value,
            **(
                {"terminationGracePeriodSeconds": pod.termination_grace_period_seconds}
                if pod.termination_grace_period_seconds is not None
                else {}
            ),
        },
    }


def with_declared_ports(pod: Pod) -> Pod:
    """``pod`` with handler ports that name no port of their container made numeric.

    The strategy draws named handler ports freely; the loader requires the name to be a
    port of the container.
    """

    def fix(handler: Handler | None, names: set[str]) -> Handler | None:
        if handler is None:
            return None
        http_get, tcp_socket = handler.http_get, handler.tcp_socket
        if http_get is not None and isinstance(http_get.port, str) and http_get.port not in names:
            return attrs.evolve(handler, http_get=attrs.evolve(http_get, port=80))
        if (
            tcp_socket is not None
            and isinstance(tcp_socket.port, str)
            and tcp_socket.port not in names
        ):
            return attrs.evolve(handler, tcp_socket=attrs.evolve(tcp_socket, port=80))
        return handler

    containers = []
    for c in pod.containers:
        names = {p.name for p in c.ports if p.name}
        probe = c.liveness_probe
        if probe is not None:
            fixed = fix(probe.handler, names)
            assert fixed is not None
            probe = attrs.evolve(probe, handler=fixed)
        lifecycle = c.lifecycle
        if lifecycle is not None:
            lifecycle = Lifecycle(fix(lifecycle.post_start, names), fix(lifecycle.pre_stop, names))
        containers.append(attrs.evolve(c, liveness_probe=probe, lifecycle=lifecycle))
    return attrs.evolve(pod, containers=tuple(containers))


def without_memory_or_objects(pod: Pod) -> Pod:
    """``pod`` with its env values as literals and its memory volumes on disk: a pod
    document alone gives neither (a ConfigMap gives the one, the node's memory sizes the
    other; tests/unit/load/test_objects.py and tests/unit/planner/test_memory_volumes.py
    read them)."""
    return attrs.evolve(
        pod,
        containers=tuple(
            attrs.evolve(c, env=tuple(attrs.evolve(e, source="") for e in c.env))
            for c in pod.containers
        ),
        volumes=tuple(attrs.evolve(v, memory=None) for v in pod.volumes),
    )


@given(pods(extras=True))
@settings(max_examples=30)
def test_round_trip(pod):
    """Any valid pod written as a v1 Pod document reads back equal."""
    pod = without_memory_or_objects(with_declared_ports(pod))
    text = yaml.safe_dump(pod_yaml(pod), allow_unicode=True)

    assert (as_v1(pod),) == parse_pods(text, source=pod.source)


# --- sources ----------------------------------------------------------------------------


def test_file_source(tmp_path):
    """A file's pods get the source 'file'."""
    path = tmp_path / "web.yaml"
    path.write_text(MINIMAL_POD.format(name="web"))

    assert (minimal_pod(source="file"),) == load_pods([path])


def test_directory_order_and_dot_files(tmp_path):
    """A directory is read in name order; dot-files and subdirectories are skipped."""
    for name in ("b.yaml", "a.yaml", "0z.yml", "c"):
        (tmp_path / name).write_text(MINIMAL_POD.format(name=name.split(".")[0]))
    (tmp_path / ".hidden.yaml").write_text("not: [valid")
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.yaml").write_text(MINIMAL_POD.format(name="x"))
    expected = tuple(minimal_pod(n, source="file") for n in ("0z", "a", "b", "c"))

    assert expected == load_pods([str(tmp_path)])


def test_empty_directory_is_no_pods(tmp_path):
    """An empty directory is an empty desired state, not an error."""

    assert () == load_pods([tmp_path])


def test_directory_with_a_bad_file_fails_whole_load(tmp_path):
    """One bad file in a directory fails the load, and every problem is listed."""
    (tmp_path / "a.yaml").write_text(MINIMAL_POD.format(name="a"))
    (tmp_path / "b.yaml").write_text(MINIMAL_POD.format(name="B"))
    (tmp_path / "c.yaml").write_text("")
    expected = [
        f"{tmp_path}/b.yaml: $.metadata.name: 'B' is not a valid DNS-1123 label: uppercase "
        "letters are not allowed (only lowercase letters, digits and '-')",
        f"{tmp_path}/c.yaml: no pods found (the source is empty)",
    ]

    with pytest.raises(ConfigError) as info:
        load_pods([tmp_path])

    assert expected == [str(p) for p in info.value.problems]


def test_directory_entries_that_are_not_files(tmp_path):
    """Links to files are followed; a FIFO or a broken link in a directory is an error."""
    pods_dir = tmp_path / "pods"
    pods_dir.mkdir()
    (tmp_path / "real.yaml").write_text(MINIMAL_POD.format(name="real"))
    os.symlink(tmp_path / "real.yaml", pods_dir / "web")
    linked = load_pods([pods_dir])
    os.symlink(tmp_path / "nowhere", pods_dir / "x-broken")
    os.mkfifo(pods_dir / "y-fifo")
    expected = [
        f"{pods_dir}/x-broken: cannot read: No such file or directory",
        f"{pods_dir}/y-fifo: not a regular file",
    ]

    with pytest.raises(ConfigError) as info:
        load_pods([pods_dir])

    assert (minimal_pod("real", source="file"),) == linked
    assert expected == [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    "kwargs",
    [
        # A negative size limit.
        {"max_bytes": -1},
        # A timeout of zero would fail every fetch.
        {"http_timeout": 0},
    ],
)
def test_bad_limits_are_value_errors(kwargs):
    """Nonsensical limits are programming errors, not configuration errors."""

    with pytest.raises(ValueError, match=next(iter(kwargs))):
        load_pods([], **kwargs)


def test_missing_file(tmp_path):
    """A missing file is a ConfigError naming it."""
    path = tmp_path / "nope.yaml"

    with pytest.raises(ConfigError) as info:
        load_pods([path])

    assert f"{path}: cannot read: No such file or directory" == str(info.value)


_LIMIT_HINT = "(raise it with --max-bytes)"


def test_file_over_max_bytes_is_read(tmp_path):
    """A regular file is read whatever its size: the user named it, and its size is
    known before it is read. ``max_bytes`` caps what could be endless."""
    path = tmp_path / "big.yaml"
    path.write_text(MINIMAL_POD.format(name="web") + "#" * 200 + "\n")

    assert (minimal_pod(source="file"),) == load_pods([path], max_bytes=100)


def test_file_over_max_bytes_in_a_directory_is_read(tmp_path):
    """The files of a directory the user named are not capped either."""
    (tmp_path / "big.yaml").write_text(MINIMAL_POD.format(name="web") + "#" * 200 + "\n")

    assert (minimal_pod(source="file"),) == load_pods([tmp_path], max_bytes=100)


def test_a_list_of_pods_over_4_mib_in_one_file_is_read(tmp_path):
    """A single file larger than the old 4 MiB cap (a List of 10,000 pods is 5.4 MB) is
    read."""
    items = "".join(
        f"- apiVersion: v1\n  kind: Pod\n  metadata: {{name: web-{i}}}\n"
        f"  spec: {{containers: [{{name: app, image: busybox}}]}}\n"
        for i in range(200)
    )
    padding = ("# " + "x" * 1022 + "\n") * (5 * 1024 + 512)  # 5.5 MiB of comments
    path = tmp_path / "fleet.yaml"
    path.write_text(f"apiVersion: v1\nkind: List\nitems:\n{items}{padding}")
    assert path.stat().st_size > 5_400_000

    pods = load_pods([path])

    assert (200, "web-199") == (len(pods), pods[-1].name)


def test_stdin_over_max_bytes(tmp_path):
    """Standard input over max_bytes is refused, naming the limit and the option that
    raises it."""
    stdin = io.BytesIO((MINIMAL_POD.format(name="web") + "#" * 200 + "\n").encode())

    with pytest.raises(ConfigError) as info:
        load_pods(["-"], stdin=stdin, max_bytes=100)

    assert f"<stdin>: larger than the limit of 100 bytes {_LIMIT_HINT}" == str(info.value)


def test_endless_device_is_capped():
    """A path that is no regular file (a device, a pipe) is read like standard input:
    up to the limit, never to its end."""
    if not os.path.exists("/dev/zero"):  # pragma: no cover - not Linux
        pytest.skip("no /dev/zero")

    with pytest.raises(ConfigError) as info:
        load_pods(["/dev/zero"], max_bytes=1000)

    assert f"/dev/zero: larger than the limit of 1000 bytes {_LIMIT_HINT}" == str(info.value)


def test_stdin_source():
    """'-' reads standard input; its pods get the source 'file'."""
    stdin = io.BytesIO(MINIMAL_MANIFEST.format(name="web").encode())

    assert (minimal_pod(source="file"),) == load_pods(["-"], stdin=stdin)


def test_stdin_twice():
    """Standard input can be read only once."""
    stdin = io.BytesIO(MINIMAL_MANIFEST.format(name="web").encode())

    with pytest.raises(ConfigError) as info:
        load_pods(["-", "-"], stdin=stdin)

    assert "<stdin>: '-' is given more than once" == str(info.value)


def test_sources_are_merged_in_order(tmp_path):
    """Pods of several sources come in source order."""
    (tmp_path / "a.yaml").write_text(MINIMAL_POD.format(name="a"))
    (tmp_path / "b.yaml").write_text(MINIMAL_POD.format(name="b"))
    stdin = io.BytesIO(MINIMAL_POD.format(name="c").encode())
    expected = tuple(minimal_pod(n, source="file") for n in ("b", "c", "a"))

    assert expected == load_pods([tmp_path / "b.yaml", "-", tmp_path / "a.yaml"], stdin=stdin)


def test_no_sources():
    """No sources, no pods."""

    assert () == load_pods([])


def test_single_string_is_a_type_error():
    """A bare string would be read letter by letter: it is refused."""

    with pytest.raises(TypeError):
        load_pods("pods/")


def test_unsupported_url_scheme():
    """Only http and https URLs are fetched."""

    with pytest.raises(ConfigError) as info:
        load_pods(["ftp://example.com/pods.yaml"])

    assert (
        "ftp://example.com/pods.yaml: unsupported URL scheme 'ftp' (only http and https are "
        "fetched)" == str(info.value)
    )


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # The same namespace/name in two files.
        (
            {
                "a.yaml": MINIMAL_POD.format(name="web"),
                "b.yaml": MINIMAL_MANIFEST.format(name="web"),
            },
            "{d}/b.yaml: $.id: duplicate pod default/web (first at {d}/a.yaml: $.metadata.name)",
        ),
        # Two names with the same explicit uid.
        (
            {
                "a.yaml": MINIMAL_MANIFEST.format(name="one") + "uuid: same\n",
                "b.yaml": MINIMAL_MANIFEST.format(name="two") + "uuid: same\n",
            },
            "{d}/b.yaml: $.uuid: duplicate uid 'same': already used by pod default/one "
            "(at {d}/a.yaml: $.uuid)",
        ),
        # Within one file, in different documents.
        (
            {"a.yaml": MINIMAL_POD.format(name="web") + "---\n" + MINIMAL_POD.format(name="web")},
            "{d}/a.yaml: document 2: $.metadata.name: duplicate pod default/web "
            "(first at {d}/a.yaml: document 1: $.metadata.name)",
        ),
    ],
)
def test_duplicate_pods(tmp_path, files, expected):
    """A pod defined twice is an error naming both places."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)

    with pytest.raises(ConfigError) as info:
        load_pods([tmp_path])

    assert expected.format(d=tmp_path) == str(info.value)


def test_duplicate_pods_across_source_kinds(tmp_path):
    """The same namespace/name from a file and from stdin is a duplicate too."""
    (tmp_path / "a.yaml").write_text(MINIMAL_POD.format(name="web"))
    stdin = io.BytesIO(MINIMAL_POD.format(name="web").encode())

    with pytest.raises(ConfigError) as info:
        load_pods([tmp_path / "a.yaml", "-"], stdin=stdin)

    assert (
        f"<stdin>: $.metadata.name: duplicate pod default/web (first at {tmp_path}/a.yaml: "
        "$.metadata.name)" == str(info.value)
    )


# --- HTTP -------------------------------------------------------------------------------


class PodServer(http.server.ThreadingHTTPServer):
    """A loopback HTTP server with a few fixed routes (see ``PodHandler``)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), PodHandler)
        self.release = threading.Event()

    def handle_error(self, request, client_address):
        """Clients that hang up early (the size and time limits) are expected."""


class PodHandler(http.server.BaseHTTPRequestHandler):
    """``/pod``: one manifest; ``/list``: a list of manifests; ``/error``: a 500;
    ``/huge``: a big body with a Content-Length; ``/stream``: a big body without one;
    ``/slow``: answers only when released (or after 5 s)."""

    server: PodServer

    def log_message(self, format, *args):
        """Quiet."""

    def send_body(self, status: int, body: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/pod":
            self.send_body(200, MINIMAL_MANIFEST.format(name="web").encode())
        elif self.path == "/list":
            body = "".join(
                "- " + MINIMAL_MANIFEST.format(name=n).replace("\n", "\n  ").rstrip() + "\n"
                for n in ("one", "two")
            )
            self.send_body(200, body.encode())
        elif self.path == "/error":
            self.send_body(500, b"oops")
        elif self.path == "/huge":
            self.send_body(200, b"#" * 2000, length=10**9)
        elif self.path == "/stream":
            self.send_response(200)
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b"#" * 1000 + b"\n")
        elif self.path == "/slow":
            self.server.release.wait(5)
            self.send_body(200, MINIMAL_MANIFEST.format(name="web").encode())
        else:
            self.send_body(404, b"")


# The tests that fetch from it are marked real_clock: a fetch's deadline is real time
# (load_pods' http_timeout), like the socket timeouts under it.
@pytest.fixture(scope="module")
def pod_server_url() -> Iterator[str]:
    """The base URL of a ``PodServer`` on 127.0.0.1, shared by the module's tests."""
    server = PodServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def pod_server(pod_server_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``pod_server_url``, with no proxy configured in between."""
    for name in (
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)
    return pod_server_url


@pytest.mark.real_clock
def test_http_single_manifest(pod_server):
    """A URL serving one manifest gives its pod, with the source 'http'."""

    assert (minimal_pod(source="http"),) == load_pods([f"{pod_server}/pod"])


@pytest.mark.real_clock
def test_http_list_of_manifests(pod_server):
    """A URL serving a list of manifests gives all of them."""
    expected = (minimal_pod("one", source="http"), minimal_pod("two", source="http"))

    assert expected == load_pods([f"{pod_server}/list"])


@pytest.mark.real_clock
@pytest.mark.parametrize(
    ("path", "message"),
    [
        # A server error.
        ("/error", "HTTP status 500 (Internal Server Error)"),
        # Not found.
        ("/missing", "HTTP status 404 (Not Found)"),
        # Content-Length over the limit: refused before reading.
        ("/huge", "larger than the limit of 1000 bytes (raise it with --max-bytes)"),
        # No Content-Length, body over the limit: refused once the limit is passed.
        ("/stream", "larger than the limit of 1000 bytes (raise it with --max-bytes)"),
    ],
)
def test_http_errors(pod_server, path, message):
    """HTTP failures name the URL and what went wrong."""
    url = f"{pod_server}{path}"

    with pytest.raises(ConfigError) as info:
        load_pods([url], max_bytes=1000)

    assert f"{url}: {message}" == str(info.value)


@pytest.mark.real_clock
def test_http_timeout(pod_server):
    """A server slower than http_timeout is a timeout error."""
    url = f"{pod_server}/slow"

    with pytest.raises(ConfigError) as info:
        load_pods([url], http_timeout=0.2)

    assert f"{url}: timed out after 0.2 seconds" == str(info.value)


@pytest.mark.real_clock
def test_http_connection_refused(pod_server):
    """A URL nobody listens on is a ConfigError, not a URLError."""
    server = PodServer()
    port = server.server_address[1]
    server.server_close()  # the port is now free: connecting is refused
    url = f"http://127.0.0.1:{port}/pod"

    with pytest.raises(ConfigError) as info:
        load_pods([url])

    assert f"{url}: cannot fetch: Connection refused" == str(info.value)


@pytest.mark.real_clock
def test_http_and_file_problems_are_collected(pod_server, tmp_path):
    """Problems of all sources are reported together."""
    path = tmp_path / "bad.yaml"
    path.write_text("a: [")

    with pytest.raises(ConfigError) as info:
        load_pods([path, f"{pod_server}/error", f"{pod_server}/pod"])

    assert [str(path), f"{pod_server}/error"] == [p.source for p in info.value.problems]
