"""Pod files as people write them: what loads, what is ignored with a warning, what is
refused and why (issue 13, the loader's part).

Each case is a whole pod file - block YAML, KYAML (the flow-style subset the Kubernetes
documentation now uses) or JSON - with the exact model it gives or the exact messages
it fails with. Warnings are collected through ``on_warning``; the node the pods run on
is given (``NodeInfo``) so that nothing here reads the machine.
"""

from __future__ import annotations

import io
import json

import pytest

from podsync import (
    ConfigError,
    Container,
    EnvVar,
    NodeInfo,
    Pod,
    Port,
    RestartPolicy,
    Volume,
    load_pods,
    parse_pods,
)
from podsync.load.schema import _yaml

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)


def load(text: str, name: str = "pod.yaml") -> tuple[tuple[Pod, ...], list[str]]:
    """The pods of ``text`` read as the file ``name``, and the warnings given."""
    warnings: list[str] = []
    pods = parse_pods(text, source_name=name, source="file", node=NODE, on_warning=warnings.append)
    return pods, warnings


def errors(text: str, name: str = "pod.yaml") -> list[str]:
    """The problems reading ``text`` as the file ``name`` gives, as printed."""
    with pytest.raises(ConfigError) as info:
        load(text, name)
    return [str(p) for p in info.value.problems]


def pod_with(spec: str = "", container: str = "", top: str = "") -> str:
    """A block-YAML pod named web with extra lines in its spec, its container, at top."""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
        + top
        + "spec:\n"
        + spec
        + "  containers:\n  - name: app\n    image: busybox\n"
        + container
    )


def web(*containers: Container, **fields: object) -> Pod:
    return Pod(name="web", source="file", containers=containers, **fields)  # type: ignore[arg-type]


APP = Container(name="app", image="busybox")

# --- refused: fields Kubernetes knows that podsync cannot honour ----------------------

REFUSED = {
    "ephemeralContainers": (
        pod_with(spec="  ephemeralContainers:\n  - {name: debug, image: busybox}\n"),
        "pod.yaml: $.spec.ephemeralContainers: ephemeralContainers is not supported by "
        "podsync: ephemeral containers are added to running pods through the API server "
        "(kubectl debug)",
    ),
    "resourceClaims": (
        pod_with(spec="  resourceClaims:\n  - {name: gpu, resourceClaimName: gpu}\n"),
        "pod.yaml: $.spec.resourceClaims: resourceClaims is not supported by podsync: "
        "dynamic resource allocation needs a cluster's resource drivers",
    ),
    "runtimeClassName": (
        pod_with(spec="  runtimeClassName: gvisor\n"),
        "pod.yaml: $.spec.runtimeClassName: runtimeClassName is not supported by podsync: "
        "containers run with the engine's default runtime",
    ),
    "hostUsers false": (
        pod_with(spec="  hostUsers: false\n"),
        "pod.yaml: $.spec.hostUsers: hostUsers: false is not supported by podsync: "
        "user namespaces are not implemented (only true, the default, is)",
    ),
    "os windows": (
        pod_with(spec="  os: {name: windows}\n"),
        "pod.yaml: $.spec.os: os: {name: windows} is not supported by podsync: "
        "podsync runs Linux containers only (only {name: linux} is)",
    ),
    "overhead": (
        pod_with(spec="  overhead: {cpu: 250m}\n"),
        "pod.yaml: $.spec.overhead: overhead is not supported by podsync: "
        "pod overhead comes with a RuntimeClass, which podsync does not support",
    ),
    "resizePolicy": (
        pod_with(
            container="    resizePolicy:\n    - {resourceName: cpu, restartPolicy: NotRequired}\n"
        ),
        "pod.yaml: $.spec.containers[0].resizePolicy: resizePolicy is not supported by "
        "podsync: podsync resizes no container in place; changed resources replace it",
    ),
    "volumeDevices": (
        pod_with(container="    volumeDevices:\n    - {name: disk, devicePath: /dev/xvda}\n"),
        "pod.yaml: $.spec.containers[0].volumeDevices: volumeDevices is not supported by "
        "podsync: raw block devices come from PersistentVolumeClaims, which need a cluster",
    ),
    "mountPropagation Bidirectional": (
        pod_with(
            spec="  volumes:\n  - {name: data, hostPath: {path: /srv}}\n",
            container="    volumeMounts:\n"
            "    - {name: data, mountPath: /data, mountPropagation: Bidirectional}\n",
        ),
        "pod.yaml: $.spec.containers[0].volumeMounts[0].mountPropagation: mountPropagation: "
        "'Bidirectional' is not supported by podsync: volumes are bound with private "
        "propagation (only 'None', the default, is)",
    ),
    "nfs volume": (
        pod_with(
            spec="  volumes:\n  - name: share\n    nfs: {server: nfs.example.com, path: /x}\n"
        ),
        "pod.yaml: $.spec.volumes[0].nfs: nfs is not supported by podsync: "
        "NFS volumes are mounted by a cluster's volume plugin",
    ),
    "csi volume": (
        pod_with(spec="  volumes:\n  - name: store\n    csi: {driver: example.com/x}\n"),
        "pod.yaml: $.spec.volumes[0].csi: csi is not supported by podsync: "
        "CSI volumes need a cluster's CSI driver",
    ),
    "subPath": (
        pod_with(
            spec="  volumes:\n  - {name: data, emptyDir: {}}\n",
            container="    volumeMounts:\n    - {name: data, mountPath: /data, subPath: app}\n",
        ),
        "pod.yaml: $.spec.containers[0].volumeMounts[0].subPath: subPath is not supported "
        "by podsync yet: volumes are mounted whole",
    ),
    "hostPath type": (
        pod_with(
            spec="  volumes:\n  - name: sock\n    hostPath: {path: /run/x.sock, type: Socket}\n"
        ),
        "pod.yaml: $.spec.volumes[0].hostPath.type: type: 'Socket' is not supported by "
        "podsync: podsync checks no host path's type, and Docker creates a missing path as "
        "a directory (only '' or 'DirectoryOrCreate' is)",
    ),
    "emptyDir size limit": (
        pod_with(spec="  volumes:\n  - name: cache\n    emptyDir: {sizeLimit: 500Mi}\n"),
        "pod.yaml: $.spec.volumes[0].emptyDir.sizeLimit: sizeLimit is not supported by "
        "podsync for an emptyDir on disk: podsync does not limit a directory's size (with "
        "medium: Memory it is the tmpfs's size)",
    ),
    "dnsPolicy None": (
        pod_with(spec="  dnsPolicy: None\n"),
        "pod.yaml: $.spec.dnsPolicy: dnsPolicy: 'None' is not supported by podsync: podsync "
        "sets no per-pod name servers (see --cluster-dns and --resolv-conf)",
    ),
    "SCTP": (
        pod_with(container="    ports:\n    - {containerPort: 9999, protocol: SCTP}\n"),
        "pod.yaml: $.spec.containers[0].ports[0].protocol: protocol: 'SCTP' is not supported "
        "by podsync: podsync publishes and probes TCP and UDP ports only",
    ),
    "generateName without a name": (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: web-\nspec:\n"
        "  containers:\n  - {name: app, image: busybox}\n",
        [
            "pod.yaml: $.metadata.generateName: generateName is not supported by podsync: a "
            "generated name needs the API server; give metadata.name",
            "pod.yaml: $.metadata.name: required field missing",
        ],
    ),
    "emptyDir in huge pages": (
        pod_with(spec="  volumes:\n  - name: cache\n    emptyDir: {medium: HugePages}\n"),
        "pod.yaml: $.spec.volumes[0].emptyDir.medium: medium: 'HugePages' is not supported by "
        "podsync: huge pages are not implemented (only '' or 'Memory' is)",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_field(case):
    """A Kubernetes field podsync cannot honour fails with "not supported" and why."""
    text, expected = REFUSED[case]

    assert ([expected] if isinstance(expected, str) else expected) == errors(text)


def test_generate_name_beside_a_name_is_moot():
    """Kubernetes uses the name when both are given, and so does podsync."""
    text = pod_with().replace("  name: web\n", "  name: web\n  generateName: web-\n", 1)

    assert ((web(APP),), []) == load(text)


def test_refused_fields_with_nothing_in_them_load():
    """An empty list or null (what generated files hold) asks for nothing: it loads."""
    text = pod_with(
        spec="  initContainers: []\n  ephemeralContainers: null\n  hostUsers: true\n"
        "  volumes:\n  - {name: data, hostPath: {path: /srv, type: DirectoryOrCreate}}\n",
        container="    terminationMessagePolicy: File\n",
    )

    assert ((web(APP, volumes=(Volume("data", "/srv"),)),), []) == load(text)


# --- unknown keys: did-you-mean only for near-misspellings ----------------------------

UNKNOWN = {
    "misspelt": (
        pod_with(container="    imagePullPolicyy: Always\n"),
        "pod.yaml: $.spec.containers[0]: unknown key 'imagePullPolicyy' "
        "(did you mean 'imagePullPolicy'?)",
    ),
    "case": (
        pod_with(container="    workingdir: /srv\n"),
        "pod.yaml: $.spec.containers[0]: unknown key 'workingdir' (did you mean 'workingDir'?)",
    ),
    "far from anything": (
        pod_with(container="    colour: blue\n"),
        "pod.yaml: $.spec.containers[0]: unknown key 'colour'",
    ),
    # A real field in the wrong place is not a misspelling of a field here: no hint
    # that would change its meaning.
    "field of another object": (
        pod_with(container="    port: 80\n"),
        "pod.yaml: $.spec.containers[0]: unknown key 'port'",
    ),
    "a v1beta1 field in a v1 pod": (
        pod_with(
            spec="  volumes:\n  - name: data\n    hostDir: {path: /srv}\n",
            container="    privileged: true\n",
        ),
        "pod.yaml: $.spec.containers[0]: unknown key 'privileged': a v1beta1 field, now "
        "'securityContext.privileged'\n"
        "pod.yaml: $.spec.volumes[0]: unknown key 'hostDir': a v1beta1 field, now 'hostPath'",
    ),
    "misspelt refused field": (
        pod_with(spec="  initContainer:\n  - {name: init, image: busybox}\n"),
        "pod.yaml: $.spec: unknown key 'initContainer' (did you mean 'initContainers'?)",
    ),
}


@pytest.mark.parametrize("case", sorted(UNKNOWN))
def test_unknown_key(case):
    text, expected = UNKNOWN[case]

    assert expected.split("\n") == errors(text)


def test_old_spelling_names_the_current_field_once():
    """A pre-v1beta1 spelling gets the field that replaced it, and no "required field
    missing" for that field besides."""
    text = (
        "version: v1beta1\nid: old\ncontainers:\n- name: app\n  image: busybox\n"
        "  env:\n  - {key: MODE, value: production}\n"
    )

    assert [
        "pod.yaml: $.containers[0].env[0]: unknown key 'key': a spelling from before "
        "v1beta1, now 'name'"
    ] == errors(text)


# --- ignored with a warning: what means nothing on one host ---------------------------

SCHEDULED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  creationTimestamp: null
spec:
  nodeSelector: {disktype: ssd}
  tolerations:
  - {key: example.com/gpu, operator: Exists, effect: NoSchedule}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [a]}
  priorityClassName: high
  serviceAccountName: web
  automountServiceAccountToken: true
  enableServiceLinks: true
  imagePullSecrets:
  - name: registry
  containers:
  - name: app
    image: busybox
status: {}
"""


def test_fields_that_mean_nothing_on_one_host_load_with_one_warning():
    assert (
        (web(APP),),
        [
            "pod.yaml: pod default/web: ignoring scheduling fields: nodeSelector, "
            "tolerations, affinity, priorityClassName; ignoring service-account fields "
            "(there is no API server to issue a token): automountServiceAccountToken, "
            "serviceAccountName; ignoring cluster fields: enableServiceLinks, imagePullSecrets"
        ],
    ) == load(SCHEDULED_POD)


def test_false_asks_for_nothing():
    """No token and no service links is what one host gives: no warning."""
    text = pod_with(spec="  automountServiceAccountToken: false\n  enableServiceLinks: false\n")

    assert ((web(APP),), []) == load(text)


def test_what_kubectl_writes_loads_without_a_warning():
    """``kubectl run --dry-run=client -o yaml`` output: null and {} ask for nothing."""
    text = """\
apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels: {run: web}
  name: web
spec:
  containers:
  - image: busybox
    name: app
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
status: {}
"""

    # The labels are the containers' too (tests/unit/planner/test_pod_fields.py).
    assert ((web(APP, labels={"run": "web"}),), []) == load(text)


def test_what_the_api_server_wrote_is_ignored_with_a_warning():
    """``kubectl get pod -o yaml`` output, trimmed."""
    text = (
        pod_with(
            top="  creationTimestamp: '2025-01-01T00:00:00Z'\n  resourceVersion: '42'\n",
            spec="  nodeName: node-1\n  schedulerName: default-scheduler\n",
        )
        + "status:\n  phase: Running\n  podIP: 10.1.2.3\n"
    )
    text = text.replace("metadata:\n  name: web\n  creation", "metadata:\n  name: web\n  creation")

    assert (
        (web(APP),),
        [
            "pod.yaml: pod default/web: ignoring scheduling fields: schedulerName; ignoring "
            "fields the API server writes: metadata.creationTimestamp, "
            "metadata.resourceVersion, status"
        ],
    ) == load(text)


def test_a_pod_bound_to_another_node_runs_here_with_a_warning():
    text = pod_with(spec="  nodeName: node-7\n")

    assert (
        (web(APP),),
        [
            "pod.yaml: pod default/web: nodeName 'node-7' is not this node ('node-1'): "
            "the pod runs here"
        ],
    ) == load(text)


def test_dns_options_are_ignored_and_name_servers_refused():
    options = pod_with(spec="  dnsConfig:\n    options:\n    - {name: ndots, value: '2'}\n")
    servers = pod_with(spec="  dnsConfig:\n    nameservers: [1.1.1.1]\n    searches: [x.local]\n")

    assert (
        (web(APP),),
        ["pod.yaml: pod default/web: ignoring DNS options podsync cannot map: dnsConfig.options"],
    ) == load(options)
    assert [
        "pod.yaml: $.spec.dnsConfig.nameservers: nameservers is not supported by podsync: "
        "podsync sets no per-pod name servers (see --cluster-dns and --resolv-conf)",
        "pod.yaml: $.spec.dnsConfig.searches: searches is not supported by podsync: "
        "podsync sets no per-pod search domains (see --cluster-domain)",
    ] == errors(servers)


def test_warnings_go_to_the_podsync_logger_when_no_callback_is_given(caplog):
    parse_pods(pod_with(spec="  nodeSelector: {a: b}\n"), source_name="pod.yaml", node=NODE)

    assert [
        ("podsync", 30, "pod.yaml: pod default/web: ignoring scheduling fields: nodeSelector")
    ] == caplog.record_tuples


def test_no_warning_when_the_load_fails():
    """A load that fails gives its problems only: the warnings of pods that are not
    returned would speak of pods that do not run."""
    warnings: list[str] = []
    text = pod_with(spec="  nodeSelector: {a: b}\n") + "---\n" + pod_with(spec="  bogus: 1\n")

    with pytest.raises(ConfigError):
        parse_pods(text, source_name="pod.yaml", node=NODE, on_warning=warnings.append)
    assert [] == warnings


# --- 2014 manifests --------------------------------------------------------------------

# A container-VM manifest of early 2015, as the GCE docs showed it: no id, v1beta2.
CONTAINER_VM_MANIFEST = """\
version: v1beta2
containers:
  - name: simple-echo
    image: google/busybox
    command: ['nc', '-p', '8080', '-l', '-l', '-e', 'echo', 'hello world!']
    imagePullPolicy: PullIfNotPresent
    ports:
      - name: nc-echo
        containerPort: 8080
        hostPort: 8080
"""


def test_a_manifest_without_id_is_named_after_its_file_as_in_late_2014(tmp_path):
    """The late-2014 file source's simpleSubdomainSafeHash: the base name's first 15
    letters and digits, then 30 characters of the base32 SHA-1 of the whole path."""
    path = tmp_path / "simple-echo.yaml"
    path.write_text(CONTAINER_VM_MANIFEST)

    pods = load_pods([str(path)], node=NODE)
    again = load_pods([str(path)], node=NODE)

    assert 1 == len(pods)
    assert pods == again
    assert pods[0].name.startswith("simpleechoyaml")
    assert 14 + 30 == len(pods[0].name)
    assert ("simple-echo",) == tuple(c.name for c in pods[0].containers)


def test_the_derived_name_is_the_2014_one():
    """Pinned: the name the late-2014 kubelet gave /etc/kubernetes/manifests/web-server.yaml."""
    pods, _ = load(CONTAINER_VM_MANIFEST, "/etc/kubernetes/manifests/web-server.yaml")

    assert "webserveryamlqslql0de14gpurvgkdqhb22jhevmsu" == pods[0].name


def test_a_manifest_without_id_on_standard_input_has_no_name():
    with pytest.raises(ConfigError) as info:
        load_pods(["-"], stdin=io.BytesIO(CONTAINER_VM_MANIFEST.encode()), node=NODE)

    assert [
        "<stdin>: $.id: required field missing: standard input has no file name to derive "
        "the pod's name from"
    ] == [str(p) for p in info.value.problems]


def test_v1beta2_reads_like_v1beta1():
    v1beta1 = CONTAINER_VM_MANIFEST.replace("version: v1beta2", "version: v1beta1")

    assert load(v1beta1) == load(CONTAINER_VM_MANIFEST)


# --- KYAML and JSON ----------------------------------------------------------------------

# The Kubernetes documentation's pods, as `kubectl get -o kyaml` writes them: flow style,
# double-quoted strings, trailing commas, a quoted key where plain YAML would read a
# boolean, a string continued over lines with a trailing backslash.
KYAML_POD = """\
---
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "command-demo",
    labels: {
      purpose: "demonstrate-command",
      "on": "yes",
    },
  },
  spec: {
    containers: [{
      name: "command-demo-container",
      image: "debian",
      command: ["printenv"],
      args: [
        "HOSTNAME",
        "KUBERNETES_PORT",
        "a long argument \\
        over two lines",
      ],
      env: [{
        name: "MESSAGE",
        value: "hello world",
      }],
      ports: [{
        containerPort: 80,
        protocol: "TCP",
      }],
    }],
    restartPolicy: "OnFailure",
  },
}
"""

KYAML_MODEL = Pod(
    name="command-demo",
    source="file",
    restart_policy=RestartPolicy.ON_FAILURE,
    labels={"purpose": "demonstrate-command", "on": "yes"},
    containers=(
        Container(
            name="command-demo-container",
            image="debian",
            command=("printenv",),
            args=("HOSTNAME", "KUBERNETES_PORT", "a long argument over two lines"),
            env=(EnvVar(name="MESSAGE", value="hello world"),),
            ports=(Port(container_port=80),),
        ),
    ),
)

JSON_POD = """\
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "command-demo", "labels": {"purpose": "demonstrate-command", "on": "yes"}},
  "spec": {
    "containers": [
      {
        "name": "command-demo-container",
        "image": "debian",
        "command": ["printenv"],
        "args": ["HOSTNAME", "KUBERNETES_PORT", "a long argument over two lines"],
        "env": [{"name": "MESSAGE", "value": "hello world"}],
        "ports": [{"containerPort": 80, "protocol": "TCP"}]
      }
    ],
    "restartPolicy": "OnFailure"
  }
}
"""


@pytest.mark.parametrize("loader", ["libyaml", "python"])
@pytest.mark.parametrize("text", [KYAML_POD, JSON_POD], ids=["kyaml", "json"])
def test_kyaml_and_json_pods_load(monkeypatch, loader, text):
    if loader == "python":
        monkeypatch.setattr(_yaml, "_LOADER", _yaml._PyLoader)

    assert ((KYAML_MODEL,), []) == load(text)


def test_a_kyaml_list_of_two_pods_with_refused_and_ignored_fields():
    """KYAML's paths and messages are the block YAML ones."""
    text = """\
---
{
  apiVersion: "v1",
  kind: "List",
  items: [{
    apiVersion: "v1",
    kind: "Pod",
    metadata: {name: "a"},
    spec: {
      tolerations: [{key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule"}],
      containers: [{name: "app", image: "busybox"}],
    },
  }, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {name: "b"},
    spec: {
      runtimeClassName: "kata",
      containers: [{name: "app", image: "busybox"}],
    },
  }],
}
"""

    assert [
        "pod.yaml: $.items[1].spec.runtimeClassName: runtimeClassName is not supported by "
        "podsync: containers run with the engine's default runtime"
    ] == errors(text)
    assert (
        (
            Pod(name="a", source="file", containers=(APP,)),
            Pod(name="b", source="file", containers=(APP,)),
        ),
        ["pod.yaml: pod default/a: ignoring scheduling fields: tolerations"],
    ) == load(text.replace('runtimeClassName: "kata",', ""))


# --- the environment: downward API values and $(VAR) expansion ----------------------------

# The Kubernetes documentation's dapi-envars-pod, trimmed: every fieldRef one host knows.
DOWNWARD_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: dapi-envars-fieldref
  namespace: shop
  uid: 6f1c2b4e-0d7a-4c1e-9a51-3f8d2b7c9e10
  labels: {app.kubernetes.io/name: shop, tier: front}
  annotations: {build: "1234"}
spec:
  serviceAccountName: shop-sa
  containers:
  - name: test-container
    image: busybox
    command: ["sh", "-c"]
    args:
    - echo $(MY_NODE_NAME) $(MY_POD_NAME) $(UNKNOWN) $$(MY_POD_NAME) $$$(MY_POD_NAME) $
    env:
    - name: MY_NODE_NAME
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
    - name: MY_POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: MY_POD_NAMESPACE
      valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}}
    - name: MY_POD_UID
      valueFrom: {fieldRef: {fieldPath: metadata.uid}}
    - name: MY_TIER
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}
    - name: MY_APP
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['app.kubernetes.io/name']"}}
    - name: MY_BUILD
      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['build']"}}
    - name: MY_MISSING_LABEL
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['nope']"}}
    - name: MY_POD_SERVICE_ACCOUNT
      valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}
    - name: GREETING
      value: "$(MY_POD_NAME) in $(MY_POD_NAMESPACE), not $(LATER), $$(MY_POD_NAME)"
    - name: LATER
      value: later
    - name: VERBATIM
      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['build']"}}
"""


def test_field_refs_resolve_from_the_pod_and_this_node():
    """Resolved when the file is read (so they are part of the spec the hash covers);
    an env value sees earlier entries only, command and args see all of them; unknown
    references stay as written and $$ is a literal $."""
    pods, warnings = load(DOWNWARD_POD)

    (container,) = pods[0].containers
    assert [
        EnvVar("MY_NODE_NAME", "node-1"),
        EnvVar("MY_POD_NAME", "dapi-envars-fieldref"),
        EnvVar("MY_POD_NAMESPACE", "shop"),
        EnvVar("MY_POD_UID", "6f1c2b4e-0d7a-4c1e-9a51-3f8d2b7c9e10"),
        EnvVar("MY_TIER", "front"),
        EnvVar("MY_APP", "shop"),
        EnvVar("MY_BUILD", "1234"),
        EnvVar("MY_MISSING_LABEL", ""),
        EnvVar("MY_POD_SERVICE_ACCOUNT", "shop-sa"),
        EnvVar("GREETING", "dapi-envars-fieldref in shop, not $(LATER), $(MY_POD_NAME)"),
        EnvVar("LATER", "later"),
        EnvVar("VERBATIM", "1234"),
    ] == list(container.env)
    assert ("sh", "-c") == container.command
    assert (
        "echo node-1 dapi-envars-fieldref $(UNKNOWN) $(MY_POD_NAME) $dapi-envars-fieldref $",
    ) == container.args
    assert [
        "pod.yaml: pod shop/dapi-envars-fieldref: ignoring service-account fields (there is "
        "no API server to issue a token): serviceAccountName"
    ] == warnings


def test_a_derived_uid_is_the_one_the_pod_gets():
    text = pod_with(
        container="    env:\n    - {name: UID, valueFrom: {fieldRef: {fieldPath: metadata.uid}}}\n"
    )

    pods, _ = load(text)

    assert pods[0].uid == pods[0].containers[0].env[0].value


# The documentation's dapi-envars-resourcefieldref, trimmed.
RESOURCE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: dapi-envars-resourcefieldref
spec:
  containers:
  - name: test-container
    image: busybox
    resources:
      requests: {memory: 32Mi, cpu: 125m}
      limits: {memory: 64Mi, cpu: 250m}
    env:
    - name: MY_CPU_REQUEST
      valueFrom:
        resourceFieldRef: {containerName: test-container, resource: requests.cpu, divisor: 1m}
    - name: MY_CPU_LIMIT
      valueFrom: {resourceFieldRef: {resource: limits.cpu}}
    - name: MY_MEM_REQUEST
      valueFrom: {resourceFieldRef: {resource: requests.memory, divisor: 1Mi}}
    - name: MY_MEM_LIMIT
      valueFrom: {resourceFieldRef: {resource: limits.memory}}
    - name: SIDECAR_CPU_LIMIT
      valueFrom: {resourceFieldRef: {containerName: sidecar, resource: limits.cpu, divisor: 1m}}
    - name: SIDECAR_MEM_LIMIT
      valueFrom: {resourceFieldRef: {containerName: sidecar, resource: limits.memory, divisor: 1Mi}}
    - name: SIDECAR_CPU_REQUEST
      valueFrom: {resourceFieldRef: {containerName: sidecar, resource: requests.cpu, divisor: 1m}}
    - name: SIDECAR_MEM_REQUEST
      valueFrom: {resourceFieldRef: {containerName: sidecar, resource: requests.memory}}
  - name: sidecar
    image: busybox
    resources:
      limits: {memory: 1000000}
"""


def test_resource_field_refs_follow_the_kubelet():
    """ceil(value / divisor); a limit not set is the node's allocatable; a request not
    set is the limit written (Kubernetes' defaulting), else 0."""
    pods, _ = load(RESOURCE_POD)

    assert [
        EnvVar("MY_CPU_REQUEST", "125"),
        EnvVar("MY_CPU_LIMIT", "1"),  # 250m rounds up to one CPU
        EnvVar("MY_MEM_REQUEST", "32"),
        EnvVar("MY_MEM_LIMIT", str(64 * 2**20)),
        EnvVar("SIDECAR_CPU_LIMIT", "4000"),  # the node's
        EnvVar("SIDECAR_MEM_LIMIT", "1"),  # 1000000 bytes in Mi, rounded up
        EnvVar("SIDECAR_CPU_REQUEST", "0"),
        EnvVar("SIDECAR_MEM_REQUEST", "1000000"),
    ] == list(pods[0].containers[0].env)


def env_from(source: str, name: str = "X") -> str:
    """Container lines: an env entry whose valueFrom is ``source`` (flow YAML)."""
    return f"    env:\n    - {{name: {name}, valueFrom: {source}}}\n"


ENV_ERRORS = {
    "podIP": (
        env_from("{fieldRef: {fieldPath: status.podIP}}", "IP"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: status.podIP "
        "is not supported by podsync: the pod's address is known only once its network "
        "container runs, and podsync fixes the environment when it reads the pod",
    ),
    "hostIP": (
        env_from("{fieldRef: {fieldPath: status.hostIP}}", "IP"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: status.hostIP "
        "is not supported by podsync: the node's address is not known when podsync reads "
        "the pod",
    ),
    "unknown field path": (
        env_from("{fieldRef: {fieldPath: spec.hostname}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: must be one of "
        "metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], "
        "metadata.annotations['<key>'], spec.nodeName, spec.serviceAccountName, "
        "status.hostIP or status.podIP, got 'spec.hostname'",
    ),
    "all labels": (
        env_from("{fieldRef: {fieldPath: metadata.labels}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: must be one of "
        "metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], "
        "metadata.annotations['<key>'], spec.nodeName, spec.serviceAccountName, "
        "status.hostIP or status.podIP, got 'metadata.labels' (all labels are for "
        "downwardAPI volumes)",
    ),
    "api version": (
        env_from("{fieldRef: {apiVersion: v2, fieldPath: metadata.name}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.fieldRef.apiVersion: must be 'v1', "
        "got 'v2'",
    ),
    "value and valueFrom": (
        "    env:\n    - name: X\n      value: x\n"
        "      valueFrom: {fieldRef: {fieldPath: metadata.name}}\n",
        "pod.yaml: $.spec.containers[0].env[0]: needs value or valueFrom, not both",
    ),
    "empty valueFrom": (
        env_from("{}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom: needs exactly one of fieldRef, "
        "resourceFieldRef, configMapKeyRef or secretKeyRef, got none",
    ),
    "cpu divisor": (
        env_from("{resourceFieldRef: {resource: limits.cpu, divisor: 1Mi}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: must be "
        "1m or 1 for limits.cpu, got '1Mi'",
    ),
    "memory divisor": (
        env_from("{resourceFieldRef: {resource: requests.memory, divisor: 2Mi}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: must be "
        "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi or 1Ei for requests.memory, "
        "got '2Mi'",
    ),
    "resource": (
        env_from("{resourceFieldRef: {resource: limits.gpu}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.resourceFieldRef.resource: must be "
        "limits.cpu, limits.memory, requests.cpu or requests.memory, got 'limits.gpu'",
    ),
    "ephemeral storage": (
        env_from("{resourceFieldRef: {resource: limits.ephemeral-storage}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.resourceFieldRef.resource: "
        "limits.ephemeral-storage is not supported by podsync: podsync sets no "
        "ephemeral-storage limit",
    ),
    "container": (
        env_from("{resourceFieldRef: {containerName: db, resource: limits.cpu}}"),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.resourceFieldRef.containerName: no "
        "container named 'db' in this pod",
    ),
}


@pytest.mark.parametrize("case", sorted(ENV_ERRORS))
def test_environment_errors(case):
    container, expected = ENV_ERRORS[case]

    assert [expected] == errors(pod_with(container=container))


def test_v1beta1_manifests_are_not_expanded():
    """$(VAR) came with v1 (2015): a 2014 manifest's command is passed as written."""
    text = (
        "version: v1beta1\nid: old\ncontainers:\n- name: app\n  image: busybox\n"
        "  command: [echo, $(A), $$(A)]\n  env:\n  - {name: A, value: a}\n"
    )

    pods, _ = load(text)

    assert ("echo", "$(A)", "$$(A)") == pods[0].containers[0].args


EXPANSIONS = [
    # Cases of Kubernetes' third_party/forked/golang/expansion/expand_test.go.
    ("$(VAR_A)", "A"),
    ("___$(VAR_B)___", "___B___"),
    ("$(VAR_C)", "$(VAR_A)"),  # a value is not expanded again
    ("$(VAR_A)-$(VAR_A)", "A-A"),
    ("$(VAR_A)-1", "A-1"),
    ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("$$(VAR_B)_$$(VAR_A)", "$(VAR_B)_$(VAR_A)"),
    ("f000-$$VAR_A", "f000-$VAR_A"),
    ("$(VAR_EMPTY)", ""),
    ("$(VAR_A", "$(VAR_A"),
    ("$VAR_A", "$VAR_A"),
    ("$(VAR_DNE)", "$(VAR_DNE)"),
    ("$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("$$$$$$(VAR_A)", "$$$(VAR_A)"),
    ("$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
    ("$$$$$$$(VAR_A)", "$$$A"),
    ("$()", "$()"),
    ("$(VAR_A)$", "A$"),
    ("$", "$"),
    ("$$", "$"),
    ("x$(", "x$("),
    ("$(A $(VAR_B)", "$(A $(VAR_B)"),
    ("ü$ü$(VAR_A)", "ü$üA"),
]


@pytest.mark.parametrize(("text", "expanded"), EXPANSIONS)
def test_expansion_is_kubernetes_expand(text, expanded):
    """Through a pod file: an env value, with the entries before it defined."""
    container = (
        "    env:\n"
        "    - {name: VAR_A, value: A}\n"
        "    - {name: VAR_B, value: B}\n"
        "    - {name: VAR_C, value: $$(VAR_A)}\n"
        "    - {name: VAR_EMPTY, value: ''}\n"
        f"    - {{name: X, value: {json.dumps(text)}}}\n"
    )

    pods, _ = load(pod_with(container=container))

    assert EnvVar("X", expanded) == pods[0].containers[0].env[-1]


def test_a_kyaml_pod_with_the_downward_api():
    text = """\
---
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "dapi",
    labels: {
      zone: "us-east-coast",
    },
  },
  spec: {
    containers: [{
      name: "client",
      image: "busybox",
      command: ["sh", "-c", "echo $(ZONE) $(NODE)"],
      env: [{
        name: "ZONE",
        valueFrom: {
          fieldRef: {
            fieldPath: "metadata.labels['zone']",
          },
        },
      }, {
        name: "NODE",
        valueFrom: {
          fieldRef: {
            fieldPath: "spec.nodeName",
          },
        },
      }],
    }],
  },
}
"""

    pods, _ = load(text)

    (container,) = pods[0].containers
    assert ("sh", "-c", "echo us-east-coast node-1") == container.command
    assert (EnvVar("ZONE", "us-east-coast"), EnvVar("NODE", "node-1")) == container.env


def test_a_json_pod_with_init_containers_and_a_scheduler():
    """The Kubernetes documentation's init-container pod, as JSON: the init container is
    read with its command, the scheduler is ignored with the warning."""
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "myapp-pod", "labels": {"app.kubernetes.io/name": "MyApp"}},
            "spec": {
                "schedulerName": "my-scheduler",
                "initContainers": [
                    {
                        "name": "init-myservice",
                        "image": "busybox:1.28",
                        "command": ["sh", "-c", "until nslookup myservice; do sleep 2; done"],
                    }
                ],
                "containers": [
                    {
                        "name": "myapp-container",
                        "image": "busybox:1.28",
                        "command": ["sh", "-c", "echo The app is running! && sleep 3600"],
                    }
                ],
            },
        },
        indent=2,
    )

    pods, warnings = load(text, "pod.json")

    (pod,) = pods
    assert (
        Container(
            "init-myservice",
            "busybox:1.28",
            command=("sh", "-c", "until nslookup myservice; do sleep 2; done"),
        ),
    ) == pod.init_containers
    assert ("myapp-container",) == tuple(c.name for c in pod.containers)
    warning = "pod.json: pod default/myapp-pod: ignoring scheduling fields: schedulerName"
    assert [warning] == warnings
