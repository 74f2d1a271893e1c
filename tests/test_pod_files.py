"""Pod files as people write them: what loads, what is ignored with a warning, what is
refused and why (issue 13, the loader's part).

Each case is a whole pod file - block YAML, KYAML (the flow-style subset the Kubernetes
documentation now uses) or JSON - with the exact model it gives or the exact messages
it fails with. Warnings are collected through ``on_warning``; the node the pods run on
is given (``NodeInfo``) so that nothing here reads the machine.
"""

from __future__ import annotations

import io

import pytest

from podsync import (
    ConfigError,
    Container,
    EnvVar,
    NodeInfo,
    Pod,
    Port,
    RestartPolicy,
    _yaml,
    load_pods,
    parse_pods,
)

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
    "initContainers": (
        pod_with(spec="  initContainers:\n  - {name: init, image: busybox}\n"),
        "pod.yaml: $.spec.initContainers: initContainers is not supported by podsync yet: "
        "init containers are not implemented",
    ),
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
    "envFrom": (
        pod_with(container="    envFrom:\n    - configMapRef: {name: settings}\n"),
        "pod.yaml: $.spec.containers[0].envFrom: envFrom is not supported by podsync yet: "
        "ConfigMaps and Secrets are not implemented",
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
    "configMap volume": (
        pod_with(spec="  volumes:\n  - name: cfg\n    configMap: {name: settings}\n"),
        "pod.yaml: $.spec.volumes[0].configMap: configMap is not supported by podsync yet: "
        "ConfigMaps and Secrets are not implemented",
    ),
    "persistentVolumeClaim volume": (
        pod_with(spec="  volumes:\n  - name: db\n    persistentVolumeClaim: {claimName: db}\n"),
        "pod.yaml: $.spec.volumes[0].persistentVolumeClaim: persistentVolumeClaim is not "
        "supported by podsync yet: PersistentVolumeClaims are not implemented",
    ),
    "configMapKeyRef": (
        pod_with(
            container="    env:\n    - name: MODE\n      valueFrom:\n"
            "        configMapKeyRef: {name: settings, key: mode}\n"
        ),
        "pod.yaml: $.spec.containers[0].env[0].valueFrom.configMapKeyRef: configMapKeyRef "
        "is not supported by podsync yet: ConfigMaps and Secrets are not implemented",
    ),
    "subPath": (
        pod_with(
            spec="  volumes:\n  - {name: data, emptyDir: {}}\n",
            container="    volumeMounts:\n    - {name: data, mountPath: /data, subPath: app}\n",
        ),
        "pod.yaml: $.spec.containers[0].volumeMounts[0].subPath: subPath is not supported "
        "by podsync yet: volumes are mounted whole",
    ),
    "emptyDir in memory": (
        pod_with(spec="  volumes:\n  - name: cache\n    emptyDir: {medium: Memory}\n"),
        "pod.yaml: $.spec.volumes[0].emptyDir.medium: medium: 'Memory' is not supported by "
        "podsync yet: emptyDir volumes are directories on disk (only '', the default, is)",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_field(case):
    """A Kubernetes field podsync cannot honour fails with "not supported" and why."""
    text, expected = REFUSED[case]

    assert [expected] == errors(text)


def test_refused_fields_with_nothing_in_them_load():
    """An empty list or null (what generated files hold) asks for nothing: it loads."""
    text = pod_with(spec="  initContainers: []\n  ephemeralContainers: null\n  hostUsers: true\n")

    assert ((web(APP),), []) == load(text)


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
    "misspelt refused field": (
        pod_with(spec="  initContainer:\n  - {name: init, image: busybox}\n"),
        "pod.yaml: $.spec: unknown key 'initContainer' (did you mean 'initContainers'?)",
    ),
}


@pytest.mark.parametrize("case", sorted(UNKNOWN))
def test_unknown_key(case):
    text, expected = UNKNOWN[case]

    assert [expected] == errors(text)


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
  automountServiceAccountToken: false
  enableServiceLinks: false
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

    assert ((web(APP),), []) == load(text)


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
