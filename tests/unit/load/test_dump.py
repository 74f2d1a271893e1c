"""``podsync.dump_pods``: pods written as Kubernetes YAML read back as equal pods.

Three kinds of test: the round trip of every pod file of the repository that parses;
a table of the values the model holds resolved (ConfigMaps, Secrets, the downward API,
``$(VAR)``), each written as a reference that reads back the same value - and a Secret's
value never written; a table of what no pod file can give, refused; and a Hypothesis
property over generated pods in the loader's form."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import podsync
from podsync import (
    Container,
    EnvVar,
    Handler,
    Lifecycle,
    Pod,
    PodSecurityContext,
    ResourceList,
    Resources,
    SecretPart,
    SecretText,
    SecurityContext,
)
from podsync.host._node import NodeInfo
from podsync.model._security import sysctl_namespace
from podsync.model._volume import MemoryMedium, Volume, VolumeContent, VolumeFile, VolumeKind
from tests.support.paths import REPO
from tests.support.strategies import pods, secured_pods

NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)
HOST_KEY = b"h" * 32


def parse(text: str, source: str = "api") -> tuple[Pod, ...]:
    return podsync.parse_pods(
        text, source=source, node=NODE, secret_key=HOST_KEY, on_warning=lambda _: None
    )


def secrets_of(text: str) -> str:
    """The Secret documents of a stream (``dump_pods`` writes none)."""
    found = [
        d for d in yaml.safe_load_all(text) if isinstance(d, dict) and d.get("kind") == "Secret"
    ]
    return "".join(f"---\n{yaml.safe_dump(d)}" for d in found)


# -- every pod file of the repository ----------------------------------------------------


def _reads(path: Path) -> bool:
    try:
        parse(path.read_bytes().decode("utf-8", "replace"), source="file")
    except podsync.ConfigError:
        return False  # a file of another kind (a hosts file, a record), or a refused pod
    return True


def _pod_files() -> list[Path]:
    """Every pod file under tests/data and examples/pods that podsync reads (chosen
    when the tests are collected, so that no case skips)."""
    found = []
    for folder in (REPO / "tests" / "data", REPO / "examples" / "pods"):
        for path in sorted(folder.rglob("*")):
            kind = path.suffix in (".yaml", ".yml", ".json") and "bad_inputs" not in path.parts
            if kind and _reads(path):
                found.append(path)
    return found


@pytest.mark.parametrize("path", _pod_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_pod_file_that_parses_reads_back_as_the_same_pods(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    pods_read = parse(text, source="file")
    written = podsync.dump_pods(pods_read)
    assert parse(written + secrets_of(text), source="file") == pods_read


def test_the_pod_files_include_the_kinds_of_pod_people_write() -> None:
    """The file round trip covers a v1beta1 manifest, a List, init containers and a
    Secret: the parametrized test above leaves out nothing it should not."""
    names = {p.name for p in _pod_files()}
    assert "seed-manifest.yaml" in names
    assert len(names) > 20


# -- values held resolved: written as their references ----------------------------------

POD_HEAD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {tier: front, app: web}
  annotations: {team: blue}
spec:
"""

CONFIG_MAP = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data:
  mode: fast
  who: web
  app.conf: "listen 80\\n"
  nested: deep
binaryData:
  blob: AAEC/w==
"""

SECRET = """\
---
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData:
  password: hunter2-very-secret
  user: admin-secret-name
"""

REFERENCES = [
    (
        "every-field-of-a-container",
        """\
  initContainers:
  - name: side
    image: busybox:1
    restartPolicy: Always
    startupProbe: {tcpSocket: {port: 80, host: 127.0.0.1}, periodSeconds: 2}
  containers:
  - name: app
    image: busybox:1
    command: [/bin/app]
    args: [--serve]
    workingDir: /srv
    ports: [{name: http, containerPort: 80, hostPort: 8080, hostIP: 127.0.0.1, protocol: UDP}]
    resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: "1", memory: 128Mi}}
    livenessProbe:
      httpGet: {port: http, path: /healthz, scheme: HTTPS, httpHeaders: [{name: X, value: y}]}
      initialDelaySeconds: 3
      periodSeconds: 4
      timeoutSeconds: 5
      successThreshold: 1
      failureThreshold: 6
      terminationGracePeriodSeconds: 7
    readinessProbe: {exec: {command: [cat, /ready]}, successThreshold: 2}
    lifecycle: {postStart: {exec: {command: [touch, /x]}}, preStop: {httpGet: {port: 80}}}
    terminationMessagePath: /tmp/msg
    terminationMessagePolicy: FallbackToLogsOnError
    imagePullPolicy: IfNotPresent
    stdin: true
    stdinOnce: true
    tty: true
    securityContext:
      runAsUser: 1000
      runAsGroup: 1000
      runAsNonRoot: true
      capabilities: {add: [NET_ADMIN], drop: [ALL]}
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      seccompProfile: {type: RuntimeDefault}
  securityContext:
    fsGroup: 2000
    supplementalGroups: [3000]
    sysctls: [{name: kernel.shm_rmid_forced, value: "1"}]
  restartPolicy: OnFailure
  dnsPolicy: Default
  terminationGracePeriodSeconds: 9
  hostname: h
  subdomain: s
  hostAliases: [{ip: 10.0.0.1, hostnames: [a, b]}]
  schedulingGates: [{name: wait}]
""",
    ),
    (
        "configMapKeyRef",
        """\
  containers:
  - name: app
    image: busybox:1
    env:
    - name: MODE
      valueFrom: {configMapKeyRef: {name: settings, key: mode}}
""",
    ),
    (
        "envFrom-configMap-with-prefix",
        """\
  containers:
  - name: app
    image: busybox:1
    envFrom:
    - configMapRef: {name: settings}
      prefix: CFG_
""",
    ),
    (
        "configMap-volume-every-key",
        """\
  containers:
  - name: app
    image: busybox:1
    volumeMounts: [{name: conf, mountPath: /etc/app}]
  volumes:
  - name: conf
    configMap: {name: settings, defaultMode: 0400}
""",
    ),
    (
        "configMap-volume-items-in-directories",
        """\
  containers:
  - name: app
    image: busybox:1
    volumeMounts: [{name: conf, mountPath: /etc/app}]
  volumes:
  - name: conf
    configMap:
      name: settings
      items: [{key: nested, path: a/b/c.txt, mode: 0600}, {key: mode, path: m}]
""",
    ),
    (
        "configMap-optional-and-missing",
        """\
  containers:
  - name: app
    image: busybox:1
    volumeMounts: [{name: conf, mountPath: /etc/app}]
  volumes:
  - name: conf
    configMap: {name: absent, optional: true}
""",
    ),
    (
        "secretKeyRef",
        """\
  containers:
  - name: app
    image: busybox:1
    env:
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: db, key: password}}
""",
    ),
    (
        "envFrom-secret",
        """\
  containers:
  - name: app
    image: busybox:1
    envFrom: [{secretRef: {name: db}}]
""",
    ),
    (
        "secret-expanded-into-args",
        """\
  containers:
  - name: app
    image: busybox:1
    args: ["--password=$(PASSWORD)", "$(PASSWORD)"]
    env:
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: db, key: password}}
    - name: DSN
      value: $(PASSWORD)
""",
    ),
    (
        "secret-volume",
        """\
  containers:
  - name: app
    image: busybox:1
    volumeMounts: [{name: creds, mountPath: /run/creds}]
  volumes:
  - name: creds
    secret:
      secretName: db
      items: [{key: password, path: pw/file, mode: 0400}, {key: user, path: u}]
""",
    ),
    (
        "downwardAPI-volume",
        """\
  containers:
  - name: app
    image: busybox:1
    volumeMounts: [{name: info, mountPath: /etc/info}]
  volumes:
  - name: info
    downwardAPI:
      items:
      - {path: name, fieldRef: {fieldPath: metadata.name}}
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: tier, fieldRef: {fieldPath: "metadata.labels['tier']"}}
      - {path: app, fieldRef: {fieldPath: "metadata.labels['app']"}}
      - {path: team, fieldRef: {fieldPath: "metadata.annotations['team']"}, mode: 0600}
""",
    ),
    (
        "projected-configMap-secret-downwardAPI",
        """\
  containers:
  - name: app
    image: busybox:1
    volumeMounts: [{name: all, mountPath: /etc/all}]
  volumes:
  - name: all
    projected:
      defaultMode: 0440
      sources:
      - configMap: {name: settings, items: [{key: mode, path: cfg/mode}]}
      - secret: {name: db, items: [{key: password, path: pw}]}
      - downwardAPI: {items: [{path: ns, fieldRef: {fieldPath: metadata.namespace}}]}
""",
    ),
    (
        "fieldRef-label-and-dollar-text",
        """\
  containers:
  - name: app
    image: busybox:1
    command: [sh, -c, "echo $$HOME costs $$5"]
    env:
    - name: TIER
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}
    - name: WHERE
      value: "tier=$(TIER) $$(NOT) $$(TIER) $$$$"
    - name: NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
""",
    ),
]


@pytest.mark.parametrize(("spec"), [s for _, s in REFERENCES], ids=[i for i, _ in REFERENCES])
def test_a_resolved_value_is_written_as_a_reference_that_reads_back_the_same(spec: str) -> None:
    text = POD_HEAD + spec + CONFIG_MAP + SECRET
    (pod,) = parse(text)
    written = podsync.dump_pods([pod])
    assert "hunter2" not in written
    assert "admin-secret-name" not in written
    documents = list(yaml.safe_load_all(written))
    assert documents[0]["kind"] == "Pod"
    assert {d["kind"] for d in documents[1:]} <= {"ConfigMap"}
    assert parse(written + secrets_of(text)) == (pod,)


def test_a_secret_changed_since_gives_another_pod() -> None:
    """The value is read from the Secret again: the digest tells the change."""
    (pod,) = parse(POD_HEAD + dict(REFERENCES)["secretKeyRef"] + SECRET)
    written = podsync.dump_pods([pod])
    other = SECRET.replace("hunter2-very-secret", "another")
    assert parse(written + other) != (pod,)


def test_configmap_values_of_two_pods_share_one_document() -> None:
    spec_a = REFERENCES[0][1]
    spec_b = REFERENCES[3][1]
    (a,) = parse(POD_HEAD + spec_a + CONFIG_MAP)
    (b,) = parse(POD_HEAD.replace("name: web", "name: api") + spec_b + CONFIG_MAP)
    written = podsync.dump_pods([a, b])
    kinds = [d["kind"] for d in yaml.safe_load_all(written)]
    assert kinds == ["Pod", "Pod", "ConfigMap"]
    assert parse(written) == (a, b)


# -- refused: what no pod file can give ----------------------------------------------------

SECRET_PART = SecretPart("default", "db", "password", "ab" * 32)


def _with(container: Container, **fields: object) -> Pod:
    return Pod("web", (attrs.evolve(container, **fields),))


APP = Container("app", "busybox:1")


def _env_of(value: SecretText, source: str = "") -> Pod:
    return _with(APP, env=(EnvVar("P", value, source),))


def _config_map_file(file: VolumeFile, digest: str) -> Pod:
    content = VolumeContent(VolumeKind.CONFIG_MAP, (file,), {"ConfigMap default/c": digest})
    return Pod("web", (APP,), volumes=(Volume("c", content=content),))


OTHER_PART = attrs.evolve(SECRET_PART, namespace="other")
REFUSED = [
    (
        "config-error",
        _with(APP, config_error="ConfigMap default/x is not in the sources"),
        "$.spec.containers[0]: container 'app' cannot be created as it is",
    ),
    (
        "mixed-secret-value",
        _env_of(SecretText("a-pw", ("a-", SECRET_PART))),
        "$.spec.containers[0].env[0]: a-<secret default/db key password> holds the value of",
    ),
    (
        "secret-known-by-digest",
        _env_of(SecretText("", (SECRET_PART,), known=False)),
        "is known only by its digest",
    ),
    (
        "secret-of-another-namespace",
        _env_of(SecretText("x", (OTHER_PART,)), "Secret other/db"),
        "an object of namespace 'other', not the pod's",
    ),
    (
        "2014-values-with-v1-fields",
        _with(APP, cpu=100, tty=True),
        "only a v1beta1 manifest holds, and fields a manifest cannot hold (containers)",
    ),
    (
        "init-container-2014-values",
        Pod("web", (APP,), init_containers=(Container("init", "busybox:1", memory=2**24),)),
        "init container 'init' has the 2014 cpu/memory values",
    ),
    (
        "file-known-by-digest",
        _config_map_file(VolumeFile("a", b"", known=False), "x"),
        "$.spec.volumes[0]: the file 'a' is known only by its digest",
    ),
    (
        "files-not-of-their-source",
        _config_map_file(VolumeFile("a", b"1"), "0" * 64),
        "$.spec.volumes[0]: its files cannot be told apart by the sources they come from",
    ),
]


@pytest.mark.parametrize(
    ("pod", "message"), [(p, m) for _, p, m in REFUSED], ids=[i for i, _, _ in REFUSED]
)
def test_what_no_pod_file_can_give_is_refused(pod: Pod, message: str) -> None:
    with pytest.raises(ValueError, match="pod default/web: ") as caught:
        podsync.dump_pods([pod])
    assert message in str(caught.value)
    assert "a-pw" not in str(caught.value)


def test_an_element_that_is_not_a_pod_is_refused() -> None:
    with pytest.raises(TypeError, match=r"podsync\.Pod objects, got str"):
        podsync.dump_pods(["web"])  # type: ignore[list-item]


# -- the property: generated pods in the loader's form --------------------------------


def _named_port_or_number(handler: Handler | None, names: set[str]) -> Handler | None:
    """A handler whose named port is one of the container's (the loader refuses others)."""
    if handler is None:
        return None
    action = handler.http_get or handler.tcp_socket
    if action is not None and isinstance(action.port, str) and action.port not in names:
        action = attrs.evolve(action, port=8080)
        key = "http_get" if handler.http_get is not None else "tcp_socket"
        return Handler(**{key: action})
    return handler


def _loader_container(c: Container, namespace: str, host_network: bool) -> Container:
    """``c`` as a pod file can say it: the 2014 values as ``resources`` (a v1 Pod), an
    empty ``resources`` or ``securityContext`` as none, named ports that exist,
    ConfigMaps of the pod's namespace, the host ports of the host's network, and no
    ``allowPrivilegeEscalation: false`` when privileged."""
    names = {p.name for p in c.ports if p.name}
    if host_network:
        ports = tuple(attrs.evolve(p, host_port=p.container_port) for p in c.ports)
        c = attrs.evolve(c, ports=ports)
    if c.privileged and c.security_context is not None:
        c = attrs.evolve(
            c, security_context=attrs.evolve(c.security_context, allow_privilege_escalation=None)
        )
    if c.cpu or c.memory:
        resources = Resources(ResourceList(cpu=c.cpu), ResourceList(memory=c.memory))
        c = attrs.evolve(c, cpu=0, memory=0, resources=resources)
    if c.resources == Resources():
        c = attrs.evolve(c, resources=None)
    if c.security_context == SecurityContext():
        c = attrs.evolve(c, security_context=None)
    probes = {
        f: attrs.evolve(p, handler=_named_port_or_number(p.handler, names))
        for f in ("liveness_probe", "readiness_probe", "startup_probe")
        if (p := getattr(c, f)) is not None
    }
    if c.lifecycle is not None:
        hooks = (c.lifecycle.post_start, c.lifecycle.pre_stop)
        probes["lifecycle"] = Lifecycle(*(_named_port_or_number(h, names) for h in hooks))
    env = tuple(
        attrs.evolve(e, source=f"ConfigMap {namespace}/settings") if e.source else e for e in c.env
    )
    return attrs.evolve(c, env=env, **probes)


def _loader_form(pod: Pod) -> Pod:
    """``pod`` as a pod file can say it, on ``NODE`` (see ``_loader_container``; an
    in-memory emptyDir of the size the kubelet's rule gives it)."""
    sc = pod.security_context
    host_network = sc is not None and sc.host_network
    pod = attrs.evolve(
        pod,
        containers=tuple(_loader_container(c, pod.namespace, host_network) for c in pod.containers),
        init_containers=tuple(
            _loader_container(c, pod.namespace, host_network and c.restart_policy is not None)
            for c in pod.init_containers
        ),
    )
    if sc is not None:
        # Kubernetes' validateSysctls: none of a namespace the pod shares with the host;
        # and not both hostPID and shareProcessNamespace.
        shared = {"net": sc.host_network, "ipc": sc.host_ipc, None: False}
        sysctls = tuple(s for s in sc.sysctls if not shared[sysctl_namespace(s.name)])
        sc = attrs.evolve(
            sc,
            sysctls=sysctls,
            share_process_namespace=sc.share_process_namespace and not sc.host_pid,
        )
        pod = attrs.evolve(pod, security_context=None if sc == PodSecurityContext() else sc)
    mounted = [m.name for c in pod.containers for m in c.volume_mounts]
    limits = [c.resources.limits.memory if c.resources else 0 for c in pod.containers]
    bound = min(NODE.memory, sum(limits) if all(limits) else NODE.memory)
    volumes = tuple(
        # A memory volume has one user (a tmpfs per container): mounted twice, on disk.
        (
            attrs.evolve(v, memory=None)
            if mounted.count(v.name) > 1
            else attrs.evolve(v, memory=MemoryMedium(min(v.memory.size, bound)))
        )
        if v.memory
        else v
        for v in pod.volumes
    )
    return attrs.evolve(pod, volumes=volumes)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.one_of(pods(extras=True), secured_pods()).map(_loader_form))
def test_generated_pods_read_back_as_the_same_pods(pod: Pod) -> None:
    written = podsync.dump_pods([pod])
    assert parse(written, source=pod.source) == (pod,)
