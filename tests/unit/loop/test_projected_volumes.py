"""projected volumes: one directory holding the files of a ConfigMap, a Secret and the
downward API, as the modern kubelet projects them (``collectData``,
pkg/volume/projected/projected.go), written and rewritten like a configMap volume; the
sources podsync cannot fill (a service-account token, a ClusterTrustBundle, a pod
certificate) refused with what to do - the service-account volume a cluster adds to
every pod above all, as it is in every pod exported with ``kubectl get -o yaml``."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from podsync import (
    ConfigError,
    NodeInfo,
    Pod,
    WriteVolume,
    parse_pods,
    plan,
    plan_from_json,
    plan_to_json,
    spec_hash,
    sync,
)
from podsync.actions._actions import Create, Reason
from podsync.actions._options import PlanOptions
from podsync.host._volume_writer import unseal_write
from podsync.model._volume import VolumeContent, VolumeKind
from podsync.model._volume_entries import EntryKind
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.loop.test_content_volumes import visible

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)
NOW = 1_800_000_000.0
HOST_KEY = b"k" * 32
PASSWORD = "hunter2-correct-horse"

OBJECTS = f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  app.conf: |
    color=blue
  log-level: info
---
apiVersion: v1
kind: Secret
metadata:
  name: db-creds
type: Opaque
stringData:
  username: app
  password: {PASSWORD}
"""

# A pod as people write one to merge a ConfigMap, a Secret and downward API files.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
    tier: front
spec:
  containers:
  - name: app
    image: nginx:1.27
    volumeMounts:
    - name: all-in-one
      mountPath: /etc/app
      readOnly: true
  volumes:
  - name: all-in-one
    projected:
      sources:
      - configMap:
          name: app-config
      - secret:
          name: db-creds
          items:
          - key: password
            path: db/password
            mode: 0440
          - key: username
            path: db/username
      - downwardAPI:
          items:
          - path: labels
            fieldRef:
              fieldPath: metadata.labels
          - path: cpu-limit
            resourceFieldRef:
              containerName: app
              resource: limits.cpu
"""


def load(text: str) -> list[Pod]:
    return list(parse_pods(text, source_name="pods.yaml", node=NODE, secret_key=HOST_KEY))


def content(pod_text: str = POD, objects: str = OBJECTS) -> VolumeContent:
    (pod,) = load(objects + "---\n" + pod_text)
    found = pod.volumes[0].content
    assert found is not None
    return found


def files(pod_text: str = POD, objects: str = OBJECTS) -> dict[str, tuple[bytes, int]]:
    return {f.path: (f.data, f.mode) for f in content(pod_text, objects).files}


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load(text)
    return [str(p) for p in info.value.problems]


def fake() -> FakeRuntime:
    return FakeRuntime(images=["nginx:1.27", "registry.k8s.io/pause:3.10"], clock=FakeClock(NOW))


def read(runtime: FakeRuntime, volume: str) -> dict[str, tuple[bytes, int]]:
    """Every file of ``volume``'s current payload (``..data``), by its path in it."""
    files = runtime.volume_files(volume)
    payload = files["..data"].target + "/"
    return {
        path[len(payload) :]: (entry.data, entry.mode)
        for path, entry in files.items()
        if path.startswith(payload) and entry.kind is EntryKind.FILE and "..podsync" not in path
    }


def run(pods: list[Pod], runtime: FakeRuntime, root: Path):  # type: ignore[no-untyped-def]
    return sync(
        pods, runtime, options=PlanOptions(root_dir=str(root)), probe=False, clock=FakeClock(NOW)
    )


# ---------------------------------------------------------------------------------------
# The files of the sources, in one directory
# ---------------------------------------------------------------------------------------


def test_the_sources_files_are_merged_with_their_modes() -> None:
    found = content()
    assert found.kind is VolumeKind.PROJECTED
    assert {f.path: (f.data, f.mode) for f in found.files} == {
        # Every key of the ConfigMap, 0644 (SetDefaults_ProjectedVolumeSource).
        "app.conf": (b"color=blue\n", 0o644),
        "log-level": (b"info", 0o644),
        # The Secret's items: the item's mode, else the volume's default (0644).
        "db/password": (PASSWORD.encode(), 0o440),
        "db/username": (b"app", 0o644),
        # The downward API, as a downwardAPI volume writes it.
        "labels": (b'app="web"\ntier="front"', 0o644),
        "cpu-limit": (b"4", 0o644),  # no limit: the node's allocatable CPU, rounded up
    }
    # Each object the files were read from is a source, with its digest.
    assert sorted(found.sources) == [
        "ConfigMap default/app-config",
        "Secret default/db-creds",
        "the labels of pod default/web",
        "the resources of container default/web/app",
    ]
    # A Secret's file holds its key by reference and keyed digest, as in a secret volume.
    secret_files = {f.path: f.secret for f in found.files if f.secret is not None}
    assert sorted(secret_files) == ["db/password", "db/username"]
    password = secret_files["db/password"]
    assert password is not None
    assert (password.namespace, password.name, password.key) == ("default", "db-creds", "password")


def test_default_mode_is_every_files_mode_unless_an_item_says_otherwise() -> None:
    text = POD.replace("    projected:\n", "    projected:\n      defaultMode: 0750\n")
    assert {path: mode for path, (_, mode) in files(text).items()} == {
        "app.conf": 0o750,
        "log-level": 0o750,
        "db/password": 0o440,  # its item's mode
        "db/username": 0o750,
        "labels": 0o750,
        "cpu-limit": 0o750,
    }


def test_default_mode_as_kubectl_prints_it_in_decimal() -> None:
    text = POD.replace("    projected:\n", "    projected:\n      defaultMode: 420\n")
    assert files(text)["db/username"] == (b"app", 0o644)


def test_an_optional_missing_source_contributes_nothing() -> None:
    text = POD.replace(
        "      - downwardAPI:\n",
        "      - configMap:\n          name: feature-flags\n          optional: true\n"
        "      - downwardAPI:\n",
    )
    found = content(text)
    assert "feature-flags" not in {f.path for f in found.files}
    assert len(found.files) == 6
    assert found.sources["ConfigMap default/feature-flags"] == "missing"


def test_a_missing_source_is_an_error_naming_its_path() -> None:
    text = POD.replace("name: db-creds", "name: db-credentials")
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[1].secret.name: no Secret "
        "default/db-credentials in the sources (set optional: true if the pod may run without "
        "it)"
    ]


def test_a_missing_key_is_an_error_naming_its_path() -> None:
    text = POD.replace("key: username", "key: user")
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[1].secret.items[1].key: "
        "Secret default/db-creds has no key 'user' (keys: password, username)"
    ]


def test_two_sources_writing_one_path_are_refused() -> None:
    """The API server refuses two items of a projected volume at one path
    (validateProjectionSources: "conflicting duplicate paths"); the kubelet's
    collectData would let the later source win for the keys no item names. podsync
    refuses both, naming the two places."""
    text = POD.replace("path: labels", "path: app.conf")
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[2].downwardAPI.items[0]: "
        "'app.conf' is also the path of $.spec.volumes[0].projected.sources[0].configMap "
        "(ConfigMap default/app-config)"
    ]
    text = POD.replace("path: db/password", "path: log-level/password")
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[1].secret.items[0]: "
        "'log-level/password' and the path of "
        "$.spec.volumes[0].projected.sources[0].configMap (ConfigMap default/app-config) "
        "cannot both be files"
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd", "'/etc/passwd' must be a relative path"),
        ("../escape", "'../escape' must not contain '..'"),
        ("..data", "'..data' must not start with '..'"),
    ],
)
def test_item_paths_are_checked_as_for_the_other_kinds(path: str, message: str) -> None:
    text = POD.replace("path: db/password", f"path: '{path}'")
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[1].secret.items[0].path: "
        + message
    ]


def test_a_source_names_one_kind() -> None:
    text = POD.replace(
        "      - downwardAPI:\n", "      - configMap: {name: app-config}\n        downwardAPI:\n"
    )
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[2]: needs exactly one of "
        "configMap, secret or downwardAPI, got configMap and downwardAPI"
    ]
    empty = POD.replace("      - downwardAPI:\n", "      - {}\n      - downwardAPI:\n")
    assert errors(OBJECTS + "---\n" + empty) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[2]: needs exactly one of "
        "configMap, secret or downwardAPI, got none"
    ]


def test_a_volume_is_projected_or_of_another_kind() -> None:
    text = POD.replace("    projected:\n", "    emptyDir: {}\n    projected:\n")
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0]: needs at most one of hostPath, emptyDir, "
        "persistentVolumeClaim, configMap, secret, downwardAPI or projected, got emptyDir "
        "and projected"
    ]


def test_an_unknown_key_of_a_source_is_named() -> None:
    text = POD.replace("- configMap:\n          name: app-config", "- configMap:\n          nme: x")
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[0].configMap.name: "
        "required field missing",
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[0].configMap: unknown key "
        "'nme' (did you mean 'name'?)",
    ]


def test_the_content_is_not_in_the_spec_hash_but_the_volume_kind_is() -> None:
    (pod,) = load(OBJECTS + "---\n" + POD)
    (edited,) = load(OBJECTS.replace("blue", "green") + "---\n" + POD)
    assert spec_hash(pod.containers[0], pod) == spec_hash(edited.containers[0], edited)
    (as_config_map,) = load(
        OBJECTS + "---\n" + POD.split("    projected:")[0] + "    configMap: {name: app-config}\n"
    )
    assert spec_hash(pod.containers[0], pod) != spec_hash(
        as_config_map.containers[0], as_config_map
    )


# ---------------------------------------------------------------------------------------
# Sources podsync cannot fill: refused with what to do
# ---------------------------------------------------------------------------------------


def test_a_service_account_token_source_is_refused() -> None:
    text = POD.replace(
        "      - downwardAPI:\n",
        "      - serviceAccountToken:\n          path: token\n          audience: vault\n"
        "          expirationSeconds: 3600\n      - downwardAPI:\n",
    )
    assert errors(OBJECTS + "---\n" + text) == [
        "pods.yaml: document 3: $.spec.volumes[0].projected.sources[2].serviceAccountToken: "
        "serviceAccountToken is not supported by podsync: there is no API server to issue a "
        "token; put a token in a Secret and project it with a secret source instead"
    ]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "clusterTrustBundle: {signerName: example.com/ca, path: ca.pem}",
            "clusterTrustBundle is not supported by podsync: ClusterTrustBundles are cluster "
            "objects, which podsync cannot read; put the certificates in a ConfigMap and "
            "project it with a configMap source instead",
        ),
        (
            "podCertificate: {signerName: example.com/pod, keyType: ED25519, "
            "credentialBundlePath: creds.pem}",
            "podCertificate is not supported by podsync: a pod certificate is issued by a "
            "cluster's signer through the API server; put the certificate and its key in a "
            "Secret and project it with a secret source instead",
        ),
    ],
)
def test_cluster_sources_are_refused(source: str, message: str) -> None:
    text = POD.replace("      - downwardAPI:\n", f"      - {source}\n      - downwardAPI:\n")
    key = source.split(":")[0]
    assert errors(OBJECTS + "---\n" + text) == [
        f"pods.yaml: document 3: $.spec.volumes[0].projected.sources[2].{key}: {message}"
    ]


# A pod as `kubectl get pod web -o yaml` prints it: the API server's fields, the
# service-account volume it added (kube-api-access-*) and its mount in every container.
EXPORTED = """\
apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: "2026-11-02T09:14:27Z"
  generateName: web-7c9d8f6b5-
  labels:
    app: web
    pod-template-hash: 7c9d8f6b5
  name: web-7c9d8f6b5-x2k4q
  namespace: default
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-7c9d8f6b5
    uid: 5b0f3c7e-2a51-4a8e-9a55-0c1d6f1e8b21
  resourceVersion: "48213"
  uid: 9e2b7c41-6d0a-4f3e-b1c2-7a8d9e0f1a2b
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:generateName: {}
        f:labels:
          .: {}
          f:app: {}
          f:pod-template-hash: {}
      f:spec:
        f:containers:
          k:{"name":"app"}:
            .: {}
            f:image: {}
            f:name: {}
    manager: kube-controller-manager
    operation: Update
    time: "2026-11-02T09:14:27Z"
spec:
  containers:
  - image: nginx:1.27
    imagePullPolicy: IfNotPresent
    name: app
    ports:
    - containerPort: 80
      protocol: TCP
    resources: {}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
    volumeMounts:
    - mountPath: /var/run/secrets/kubernetes.io/serviceaccount
      name: kube-api-access-7xq2m
      readOnly: true
  dnsPolicy: ClusterFirst
  enableServiceLinks: true
  nodeName: kind-worker
  preemptionPolicy: PreemptLowerPriority
  priority: 0
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {}
  serviceAccount: default
  serviceAccountName: default
  terminationGracePeriodSeconds: 30
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  - effect: NoExecute
    key: node.kubernetes.io/unreachable
    operator: Exists
    tolerationSeconds: 300
  volumes:
  - name: kube-api-access-7xq2m
    projected:
      defaultMode: 420
      sources:
      - serviceAccountToken:
          expirationSeconds: 3607
          path: token
      - configMap:
          items:
          - key: ca.crt
            path: ca.crt
          name: kube-root-ca.crt
      - downwardAPI:
          items:
          - fieldRef:
              apiVersion: v1
              fieldPath: metadata.namespace
            path: namespace
status:
  conditions:
  - lastProbeTime: null
    lastTransitionTime: "2026-11-02T09:14:29Z"
    status: "True"
    type: Ready
  containerStatuses:
  - containerID: containerd://3f1e2d4c5b6a79880a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f80
    image: docker.io/library/nginx:1.27
    imageID: docker.io/library/nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31
    lastState: {}
    name: app
    ready: true
    restartCount: 0
    started: true
    state:
      running:
        startedAt: "2026-11-02T09:14:28Z"
  hostIP: 172.18.0.3
  phase: Running
  podIP: 10.244.1.7
  podIPs:
  - ip: 10.244.1.7
  qosClass: BestEffort
  startTime: "2026-11-02T09:14:27Z"
"""  # noqa: E501 - the imageID line is as long as kubectl prints it


def test_the_service_account_volume_of_an_exported_pod_says_to_delete_it() -> None:
    assert errors(EXPORTED) == [
        "pods.yaml: $.spec.volumes[0].projected.sources[0].serviceAccountToken: "
        "serviceAccountToken is not supported by podsync: there is no API server to issue a "
        "token. Volume 'kube-api-access-7xq2m' is the service-account volume the API server "
        "added to the pod when it was created in a cluster: delete it from spec.volumes, and "
        "delete its volumeMounts entry (mountPath /var/run/secrets/kubernetes.io/"
        "serviceaccount) from containers[0] 'app'"
    ]


def test_the_same_in_a_list_as_kubectl_get_pods_prints_it() -> None:
    items = "".join(
        ("- " if i == 0 else "  ") + line + "\n" for i, line in enumerate(EXPORTED.splitlines())
    )
    text = 'apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: ""\nitems:\n' + items
    (problem,) = errors(text)
    assert problem.startswith(
        "pods.yaml: $.items[0].spec.volumes[0].projected.sources[0].serviceAccountToken: "
        "serviceAccountToken is not supported by podsync: there is no API server to issue a "
        "token. Volume 'kube-api-access-7xq2m' is the service-account volume"
    )


def test_the_exported_pod_runs_once_the_volume_and_its_mount_are_deleted() -> None:
    volume = EXPORTED.index("  volumes:\n")
    trimmed = EXPORTED[:volume] + EXPORTED[EXPORTED.index("status:\n") :]
    trimmed = trimmed.replace(
        "    volumeMounts:\n"
        "    - mountPath: /var/run/secrets/kubernetes.io/serviceaccount\n"
        "      name: kube-api-access-7xq2m\n"
        "      readOnly: true\n",
        "",
    )
    # generateName is moot beside a name (the API server's own rule).
    (pod,) = load(trimmed)
    assert (pod.name, pod.volumes, pod.containers[0].volume_mounts) == (
        "web-7c9d8f6b5-x2k4q",
        (),
        (),
    )


def test_a_hand_written_kube_api_access_volume_gets_the_plain_refusal() -> None:
    """Without the API server's fields the pod was not exported: the volume is the
    user's, and the refusal says what podsync cannot do, not that a cluster added it."""
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
        + EXPORTED[EXPORTED.index("\nspec:\n") + 1 : EXPORTED.index("status:\n")]
    )
    assert errors(text) == [
        "pods.yaml: $.spec.volumes[0].projected.sources[0].serviceAccountToken: "
        "serviceAccountToken is not supported by podsync: there is no API server to issue a "
        "token; put a token in a Secret and project it with a secret source instead",
        # Its other sources are the user's too, checked as any.
        "pods.yaml: $.spec.volumes[0].projected.sources[1].configMap.name: no ConfigMap "
        "default/kube-root-ca.crt in the sources (set optional: true if the pod may run "
        "without it)",
    ]


# ---------------------------------------------------------------------------------------
# Plan and sync: written like a configMap volume, rewritten in place
# ---------------------------------------------------------------------------------------


def test_the_files_are_written_before_the_container(tmp_path: Path) -> None:
    pods = load(OBJECTS + "---\n" + POD)
    p = plan(pods, now=NOW, options=PlanOptions(root_dir=str(tmp_path)))
    (pod_plan,) = p.pods
    assert [type(a).__name__ for a in pod_plan.actions] == [
        "CreateVolume",
        "WriteVolume",
        "Create",
        "Create",
    ]
    write = pod_plan.actions[1]
    assert isinstance(write, WriteVolume)
    assert write.engine_volume == f"podsync-content_{pods[0].uid}_all-in-one"
    # Mounted read-only whatever the mount says, as the kubelet mounts it.
    (pod,) = load(OBJECTS + "---\n" + POD.replace("      readOnly: true\n", ""))
    made = plan([pod], now=NOW, options=PlanOptions(root_dir=str(tmp_path)))
    create = made.pods[0].actions[-1]
    assert isinstance(create, Create)
    assert [(m.volume, m.container_path, m.read_only) for m in create.spec.volumes] == [
        (write.engine_volume, "/etc/app", True)
    ]
    assert write.message == "write default/web volume all-in-one (projected): files not written yet"
    # No Secret value in the plan's text or its JSON.
    for text in (p.render(), p.describe(), plan_to_json(p)):
        assert PASSWORD not in text
        assert base64.b64encode(PASSWORD.encode()).decode() not in text


def test_an_edited_configmap_rewrites_the_volume_naming_it_and_keeps_the_container(
    tmp_path: Path,
) -> None:
    runtime = fake()
    first = run(load(OBJECTS + "---\n" + POD), runtime, tmp_path)
    assert first.ok, first.apply_result.summary()
    (pod,) = load(OBJECTS + "---\n" + POD)
    volume = f"podsync-content_{pod.uid}_all-in-one"
    assert read(runtime, volume) == {
        "app.conf": (b"color=blue\n", 0o644),
        "log-level": (b"info", 0o644),
        "db/password": (PASSWORD.encode(), 0o440),
        "db/username": (b"app", 0o644),
        "labels": (b'app="web"\ntier="front"', 0o644),
        "cpu-limit": (b"4", 0o644),
    }
    # What a container reads: a link per top-level name into ..data.
    assert sorted(visible(runtime, volume)) == [
        "app.conf",
        "cpu-limit",
        "db",
        "labels",
        "log-level",
    ]
    (app,) = [c for c in runtime.list_containers() if "app" in c.name]
    assert not run(load(OBJECTS + "---\n" + POD), runtime, tmp_path).plan.has_changes

    edited = load(OBJECTS.replace("blue", "green") + "---\n" + POD)
    second = run(edited, runtime, tmp_path)
    assert second.ok
    assert [(type(a).__name__, a.reason) for a in second.plan.actions] == [
        ("WriteVolume", Reason.VOLUME_CHANGED)
    ]
    assert second.plan.actions[0].message == (
        "write default/web volume all-in-one (projected): ConfigMap default/app-config changed"
    )
    after = read(runtime, volume)
    assert after["app.conf"] == (b"color=green\n", 0o644)
    # The Secret's file is still there, unchanged.
    assert after["db/password"] == (PASSWORD.encode(), 0o440)
    (still,) = [c for c in runtime.list_containers() if "app" in c.name]
    assert (still.id, still.running) == (app.id, True)


def test_a_rotated_secret_names_the_secret_and_shows_no_value(tmp_path: Path) -> None:
    runtime = fake()
    assert run(load(OBJECTS + "---\n" + POD), runtime, tmp_path).ok
    rotated = load(OBJECTS.replace(PASSWORD, "new-" + PASSWORD) + "---\n" + POD)
    result = run(rotated, runtime, tmp_path)
    assert result.ok
    (write,) = result.plan.actions
    assert write.message == (
        "write default/web volume all-in-one (projected): Secret default/db-creds changed"
    )
    for text in (result.plan.render(), json.dumps(json.loads(plan_to_json(result.plan)))):
        assert PASSWORD not in text
    for container in runtime.list_containers():
        assert not any(PASSWORD in value for value in container.labels.values())


def test_a_saved_plan_holds_the_secret_files_by_reference_only(tmp_path: Path) -> None:
    """The ConfigMap's and the downward API's files travel in the plan's JSON; the
    Secret's by reference and keyed digest, read back from the sources when applied."""
    p = plan(load(OBJECTS + "---\n" + POD), now=NOW, options=PlanOptions(root_dir=str(tmp_path)))
    saved = plan_from_json(plan_to_json(p))
    (write,) = [a for a in saved.actions if isinstance(a, WriteVolume)]
    (planned,) = [a for a in p.actions if isinstance(a, WriteVolume)]
    assert write.content.digest == planned.content.digest
    assert write.content.sources == planned.content.sources
    known = {f.path: (f.known, f.data) for f in write.content.files}
    assert known["app.conf"] == (True, b"color=blue\n")
    assert known["db/password"] == (False, b"")

    def lookup(namespace: str, name: str) -> dict[str, bytes] | None:
        found = {("default", "db-creds"): {"username": b"app", "password": PASSWORD.encode()}}
        return found.get((namespace, name))

    unsealed = unseal_write(write, lookup, HOST_KEY)
    assert {f.path: f.data for f in unsealed.content.files} == {
        f.path: f.data for f in planned.content.files
    }
