"""The files people keep, read as a new user reads them with podsync.

Whole files in ``tests/data/pod_files/`` - a Helm-rendered chart (``# Source:`` headers,
empty documents, keys Helm left null), a pod with an init container and two emptyDir
volumes - and the loader's answers to the shapes such files take: a ``null`` that
Kubernetes reads as "not given", a ConfigMap inside a ``kind: List``. What podsync says
about the kinds it does not read (Deployments, Services ...) is in the bad-input corpus
(``tests/data/bad_inputs``), where the message is the point.
"""

from __future__ import annotations

import pytest

from podsync import (
    ConfigError,
    DNSPolicy,
    NodeInfo,
    Pod,
    PodSecurityContext,
    Port,
    RestartPolicy,
    parse_pods,
)
from tests.support import paths

FILES = paths.DATA / "pod_files"
NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)


def load(name: str) -> tuple[tuple[Pod, ...], list[str]]:
    """The pods of ``tests/data/pod_files/<name>`` and the warnings given."""
    warnings: list[str] = []
    pods = parse_pods(
        (FILES / name).read_bytes(),
        source_name=name,
        source="file",
        node=NODE,
        on_warning=warnings.append,
    )
    return pods, warnings


def test_a_helm_rendered_chart_loads():
    """``helm template`` output: the ConfigMap feeds the pod, Helm's labels are the
    containers' labels, the keys a template left empty (null) are not given, and the
    one thing that means nothing here (the service account) is the pod's warning."""
    pods, warnings = load("helm-rendered.yaml")

    notes, test = pods
    (container,) = notes.containers
    env = {e.name: e.value for e in container.env}
    assert ("default/release-notes", "default/release-notes-test-connection") == (
        notes.key,
        test.key,
    )
    assert {"LOG_LEVEL": "info", "LISTEN_PORT": "8080", "RELEASE": "3", "EXTRA_FLAGS": ""} == env
    assert "Helm" == notes.labels["app.kubernetes.io/managed-by"]
    assert ((), (), ()) == (notes.volumes, container.args, container.volume_mounts)
    assert {"helm.sh/hook": "test"} == dict(test.annotations)
    assert RestartPolicy.NEVER == test.restart_policy
    assert [
        "helm-rendered.yaml: pod default/release-notes: ignoring service-account fields "
        "(there is no API server to issue a token): "
        "serviceAccountName"
    ] == warnings


def test_a_pod_with_an_init_container_and_empty_dirs_loads():
    """The init container fills one emptyDir, the server reads it, a sidecar writes the
    other: three containers, two volumes, nothing ignored."""
    pods, warnings = load("static-site.yaml")

    (pod,) = pods
    assert ["fetch-content"] == [c.name for c in pod.init_containers]
    assert ["server", "log-tailer"] == [c.name for c in pod.containers]
    assert ["content", "logs"] == [v.name for v in pod.volumes]
    assert [] == warnings


def test_a_node_agent_on_the_hosts_network_loads():
    """A node exporter as a DaemonSet's pod: the host's network with the cluster's DNS
    (ClusterFirstWithHostNet, which podsync honours), and every scheduling field a
    cluster needs and one host does not, ignored in one warning."""
    pods, warnings = load("node-agent.yaml")

    (pod,) = pods
    assert DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET == pod.dns_policy
    assert PodSecurityContext(host_network=True) == pod.security_context
    assert (Port(9100, host_port=9100, name="metrics"),) == pod.containers[0].ports
    assert [
        "node-agent.yaml: pod monitoring/metrics-agent: ignoring scheduling fields: "
        "priorityClassName, nodeSelector, affinity, tolerations, topologySpreadConstraints; "
        "ignoring service-account fields (there is no API server to issue a token): "
        "serviceAccountName; ignoring cluster fields: imagePullSecrets"
    ] == warnings


POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n{meta}"
    "spec:\n{spec}  containers:\n  - name: app\n    image: busybox\n{container}"
)

# Each key written with nothing after it, as a template leaves it when its value is
# empty: Go's JSON decoder reads null as "not given" (the field keeps its zero value),
# so the API server takes the pod as if the key were not there.
NULLS = {
    "metadata.labels": {"meta": "  labels:\n"},
    "metadata.annotations": {"meta": "  annotations:\n"},
    "metadata.namespace": {"meta": "  namespace:\n"},
    "spec.volumes": {"spec": "  volumes:\n"},
    "spec.initContainers": {"spec": "  initContainers:\n"},
    "spec.restartPolicy": {"spec": "  restartPolicy:\n"},
    "spec.dnsPolicy": {"spec": "  dnsPolicy:\n"},
    "spec.hostNetwork": {"spec": "  hostNetwork:\n"},
    "spec.hostAliases": {"spec": "  hostAliases:\n"},
    "spec.serviceAccountName": {"spec": "  serviceAccountName:\n"},
    "container.command": {"container": "    command:\n"},
    "container.args": {"container": "    args:\n"},
    "container.env": {"container": "    env:\n"},
    "container.envFrom": {"container": "    envFrom:\n"},
    "container.ports": {"container": "    ports:\n"},
    "container.volumeMounts": {"container": "    volumeMounts:\n"},
    "container.imagePullPolicy": {"container": "    imagePullPolicy:\n"},
    "container.workingDir": {"container": "    workingDir:\n"},
}


def pod_text(**parts: str) -> str:
    return POD.format(**{"meta": "", "spec": "", "container": "", **parts})


@pytest.mark.parametrize("parts", NULLS.values(), ids=NULLS.keys())
def test_a_null_is_a_key_not_given(parts):
    """A null value gives the pod the key's absence gives."""
    assert parse_pods(pod_text(), node=NODE) == parse_pods(pod_text(**parts), node=NODE)


def test_null_keys_of_a_port_are_not_given():
    """``protocol:`` and ``hostPort:`` left null: TCP, no host port."""
    port = "    ports:\n    - containerPort: 80\n"
    nulls = port + "      protocol:\n      hostPort:\n"

    assert parse_pods(pod_text(container=port), node=NODE) == parse_pods(
        pod_text(container=nulls), node=NODE
    )


def test_a_null_env_value_is_the_empty_string():
    """``value:`` with nothing after it: the variable is set, to "" (Go's zero value),
    as ``value: ""`` sets it."""
    text = pod_text(container="    env:\n    - name: EXTRA\n      value:\n")

    (pod,) = parse_pods(text, node=NODE)
    assert [("EXTRA", "")] == [(e.name, e.value) for e in pod.containers[0].env]


def test_a_null_required_key_is_missing():
    """A required key left null is missing, as the API server says it, not "a string
    expected"."""
    text = POD.format(meta="", spec="", container="").replace("image: busybox", "image:")

    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pod.yaml", node=NODE)
    assert ["pod.yaml: $.spec.containers[0].image: required field missing"] == [
        str(p) for p in info.value.problems
    ]


def test_a_null_unknown_key_is_still_unknown():
    """Null does not hide a key no Kubernetes object has."""
    text = pod_text(container="    imagePulPolicy:\n")

    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pod.yaml", node=NODE)
    assert [
        "pod.yaml: $.spec.containers[0]: unknown key 'imagePulPolicy' "
        "(did you mean 'imagePullPolicy'?)"
    ] == [str(p) for p in info.value.problems]


def test_a_config_map_inside_a_list_says_to_make_it_a_document():
    """``kubectl get configmaps,pods -o yaml`` gives one List; podsync reads the objects
    pods refer to from documents only, and says so, with the list's pods read for their
    own problems at their own index."""
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: settings}\n  data: {MODE: fast}\n"
        "- apiVersion: v1\n  kind: Pod\n  metadata: {name: web}\n"
        "  spec: {containers: [{name: app, image: busybox, ports: [{containerPort: 0}]}]}\n"
    )

    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="everything.yaml", node=NODE)
    assert [
        "everything.yaml: $.items[0].kind: a ConfigMap inside a List is not read by podsync: "
        "write it as a document of its own (documents are separated by ---)",
        "everything.yaml: $.items[1].spec.containers[0].ports[0].containerPort: must be "
        "1-65535, got 0",
    ] == [str(p) for p in info.value.problems]
