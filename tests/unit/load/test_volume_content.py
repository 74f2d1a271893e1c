"""configMap and downwardAPI volumes (issue 14): the files the loader projects from the
sources' objects and the pod (``Volume.content``), as the kubelet's ``MakePayload`` and
``CollectData`` would write them, and the errors of bad references and paths."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from podsync import ConfigError, NodeInfo, Pod, load_pods, parse_pods, spec_hash
from podsync.load.convert._projection import _format_map, _go_quote
from podsync.model._volume import VolumeContent, VolumeFile, VolumeKind
from podsync.spec._volumes import container_mounts, volume_host_paths

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  app.conf: |
    color=blue
  mode: production
binaryData:
  logo.bin: AAEC/w==
"""


def pod_file(volume: str, mounts: str = "{name: config, mountPath: /etc/config}") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: web
  uid: 7d1c0f8e-1111-4222-8333-444455556666
  labels: {{app: web, tier: front}}
  annotations: {{note: 'say "hi"'}}
spec:
  volumes:
  - name: config
    {volume}
  containers:
  - name: app
    image: busybox
    resources: {{limits: {{memory: 64Mi, cpu: 500m}}}}
    volumeMounts: [{mounts}]
"""


def parse(text: str) -> Pod:
    (pod,) = parse_pods(text, source_name="pods.yaml", source="file", node=NODE)
    return pod


def content(volume: str, objects: str = SETTINGS) -> VolumeContent:
    pod = parse(objects + "---\n" + pod_file(volume))
    found = pod.volumes[0].content
    assert found is not None
    return found


def files(volume: str, objects: str = SETTINGS) -> dict[str, tuple[bytes, int]]:
    return {f.path: (f.data, f.mode) for f in content(volume, objects).files}


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pods.yaml", source="file", node=NODE)
    return [str(p) for p in info.value.problems]


# ---------------------------------------------------------------------------------------
# configMap volumes
# ---------------------------------------------------------------------------------------


def test_every_key_is_a_file_with_mode_0644() -> None:
    assert files("configMap: {name: settings}") == {
        "app.conf": (b"color=blue\n", 0o644),
        "logo.bin": (b"\x00\x01\x02\xff", 0o644),  # binaryData, decoded
        "mode": (b"production", 0o644),
    }
    found = content("configMap: {name: settings}")
    assert found.kind is VolumeKind.CONFIG_MAP
    assert list(found.sources) == ["ConfigMap default/settings"]


def test_items_choose_keys_paths_and_modes() -> None:
    volume = (
        "configMap: {name: settings, defaultMode: 0440, items: ["
        "{key: mode, path: env/mode}, {key: app.conf, path: app.conf, mode: 0600}]}"
    )
    assert files(volume) == {
        "app.conf": (b"color=blue\n", 0o600),
        "env/mode": (b"production", 0o440),
    }


def test_a_missing_configmap_is_an_error_naming_it_unless_optional() -> None:
    assert errors(pod_file("configMap: {name: nothere}")) == [
        "pods.yaml: $.spec.volumes[0].configMap.name: no ConfigMap default/nothere in the "
        "sources (set optional: true if the pod may run without it)"
    ]
    # kubelet: an optional ConfigMap that does not exist gives an empty volume.
    found = content("configMap: {name: nothere, optional: true}", objects="")
    assert found.files == ()
    assert list(found.sources) == ["ConfigMap default/nothere"]


def test_a_missing_key_is_an_error_unless_optional() -> None:
    assert errors(
        SETTINGS
        + "---\n"
        + pod_file("configMap: {name: settings, items: [{key: colour, path: c}]}")
    ) == [
        "pods.yaml: document 2: $.spec.volumes[0].configMap.items[0].key: ConfigMap "
        "default/settings has no key 'colour' (keys: app.conf, logo.bin, mode)"
    ]
    volume = (
        "configMap: {name: settings, optional: true, items: "
        "[{key: colour, path: c}, {key: mode, path: m}]}"
    )
    assert files(volume) == {"m": (b"production", 0o644)}


def test_objects_may_come_from_another_file(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.yaml").write_text(SETTINGS)
    (tmp_path / "pod.yaml").write_text(pod_file("configMap: {name: settings}"))
    (pod,) = load_pods([str(tmp_path / "pod.yaml"), str(tmp_path / "config")])
    assert pod.volumes[0].content is not None
    assert len(pod.volumes[0].content.files) == 3


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd", "'/etc/passwd' must be a relative path"),
        ("../escape", "'../escape' must not contain '..'"),
        ("a/../../b", "'a/../../b' must not contain '..'"),
        ("..data", "'..data' must not start with '..'"),
        ("", "must not be empty"),
        (".", "'.' names the volume itself, not a file in it"),
    ],
)
def test_item_paths_are_checked_as_the_api_server_does(path: str, message: str) -> None:
    volume = f"configMap: {{name: settings, items: [{{key: mode, path: '{path}'}}]}}"
    assert errors(SETTINGS + "---\n" + pod_file(volume)) == [
        f"pods.yaml: document 2: $.spec.volumes[0].configMap.items[0].path: {message}"
    ]


def test_two_items_at_one_path_are_refused() -> None:
    volume = (
        "configMap: {name: settings, items: [{key: mode, path: a}, {key: app.conf, path: a}, "
        "{key: logo.bin, path: a/b}]}"
    )
    at = "pods.yaml: document 2: $.spec.volumes[0].configMap.items"
    assert errors(SETTINGS + "---\n" + pod_file(volume)) == [
        f"{at}[1]: 'a' is also the path of $.spec.volumes[0].configMap.items[0]",
        f"{at}[2]: 'a/b' and the path of $.spec.volumes[0].configMap.items[0] cannot both be files",
    ]


def test_modes_are_0_to_0777() -> None:
    assert errors(SETTINGS + "---\n" + pod_file("configMap: {name: settings, defaultMode: 0o1000}"))
    assert errors(
        SETTINGS + "---\n" + pod_file("configMap: {name: settings, defaultMode: 512}")
    ) == [
        "pods.yaml: document 2: $.spec.volumes[0].configMap.defaultMode: must be a number "
        "between 0 and 0777 (octal), both inclusive, got 512 (01000 in octal)"
    ]


def test_one_volume_has_one_source() -> None:
    assert errors(
        SETTINGS + "---\n" + pod_file("configMap: {name: settings}\n    emptyDir: {}")
    ) == [
        "pods.yaml: document 2: $.spec.volumes[0]: needs at most one of hostPath, emptyDir, "
        "persistentVolumeClaim, "
        "configMap, secret, downwardAPI or projected, got emptyDir and configMap"
    ]


def test_the_volume_is_mounted_read_only_from_the_pod_directory() -> None:
    pod = parse(SETTINGS + "---\n" + pod_file("configMap: {name: settings}"))
    paths = volume_host_paths(pod, "/var/lib/podsync")
    host = f"/var/lib/podsync/{pod.uid}/volumes/configmap/config"
    assert paths == {"config": host}
    (mount,) = container_mounts(pod.containers[0].volume_mounts, paths, pod)
    # The kubelet mounts configMap, secret and downwardAPI volumes read-only.
    assert (mount.host_path, mount.container_path, mount.read_only) == (host, "/etc/config", True)


def test_the_content_is_not_in_the_spec_hash_but_the_volume_kind_is() -> None:
    """An edited ConfigMap rewrites the files, it does not replace the container; turning
    an emptyDir into a configMap volume is another container."""
    edited = SETTINGS.replace("production", "staging")
    before = parse(SETTINGS + "---\n" + pod_file("configMap: {name: settings}"))
    after = parse(edited + "---\n" + pod_file("configMap: {name: settings}"))
    assert before.volumes[0].content != after.volumes[0].content
    assert spec_hash(before.containers[0], before) == spec_hash(after.containers[0], after)
    empty = parse(pod_file("emptyDir: {}"))
    assert spec_hash(empty.containers[0], empty) != spec_hash(before.containers[0], before)


def test_the_digest_follows_the_content() -> None:
    one = VolumeContent(VolumeKind.CONFIG_MAP, (VolumeFile("a", b"1"),))
    assert one.digest == VolumeContent(VolumeKind.CONFIG_MAP, (VolumeFile("a", b"1"),)).digest
    for other in (
        VolumeContent(VolumeKind.CONFIG_MAP, (VolumeFile("a", b"2"),)),
        VolumeContent(VolumeKind.CONFIG_MAP, (VolumeFile("a", b"1", 0o600),)),
        VolumeContent(VolumeKind.CONFIG_MAP, (VolumeFile("b", b"1"),)),
        VolumeContent(VolumeKind.DOWNWARD_API, (VolumeFile("a", b"1"),)),
    ):
        assert other.digest != one.digest


# ---------------------------------------------------------------------------------------
# downwardAPI volumes
# ---------------------------------------------------------------------------------------

DOWNWARD = """downwardAPI:
      defaultMode: 0444
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}, mode: 0400}
      - {path: pod/name, fieldRef: {fieldPath: metadata.name}}
      - {path: pod/namespace, fieldRef: {fieldPath: metadata.namespace}}
      - {path: pod/uid, fieldRef: {fieldPath: metadata.uid}}
      - {path: tier, fieldRef: {fieldPath: "metadata.labels['tier']"}}
      - {path: mem, resourceFieldRef: {containerName: app, resource: limits.memory, divisor: 1Mi}}
      - {path: cpu, resourceFieldRef: {containerName: app, resource: limits.cpu, divisor: 1m}}"""


def test_downward_api_files() -> None:
    assert files(DOWNWARD, objects="") == {
        # fieldpath.FormatMap: sorted key="value" lines, no newline at the end.
        "labels": (b'app="web"\ntier="front"', 0o444),
        "annotations": (b'note="say \\"hi\\""', 0o400),
        "pod/name": (b"web", 0o444),
        "pod/namespace": (b"default", 0o444),
        "pod/uid": (b"7d1c0f8e-1111-4222-8333-444455556666", 0o444),
        "tier": (b"front", 0o444),
        "mem": (b"64", 0o444),
        "cpu": (b"500", 0o444),
    }
    assert sorted(content(DOWNWARD, objects="").sources) == [
        "pod default/web",
        "the annotations of pod default/web",
        "the labels of pod default/web",
        "the resources of container default/web/app",
    ]


def test_format_map_quotes_as_go() -> None:
    assert _format_map({}) == ""
    assert _format_map({"b": "2", "a": "1"}) == 'a="1"\nb="2"'
    assert _go_quote('tab\there "q" back\\slash') == '"tab\\there \\"q\\" back\\\\slash"'
    assert _go_quote("\x01\x7f\u00e9\u200b\U0001f600") == '"\\x01\\x7f\u00e9\\u200b\U0001f600"'


def test_the_default_mode_of_downward_api_files_is_0644() -> None:
    volume = "downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}"
    assert files(volume, objects="") == {"name": (b"web", 0o644)}


@pytest.mark.parametrize(
    ("item", "path", "message"),
    [
        (
            "{path: n, fieldRef: {fieldPath: spec.nodeName}}",
            ".fieldRef.fieldPath",
            "must be one of metadata.name, metadata.namespace, metadata.uid, metadata.labels, "
            "metadata.annotations, metadata.labels['<key>'] or metadata.annotations['<key>'] in "
            "a downwardAPI volume, got 'spec.nodeName'",
        ),
        (
            "{path: n, resourceFieldRef: {resource: limits.memory}}",
            ".resourceFieldRef.containerName",
            "is required in a downwardAPI volume",
        ),
        (
            "{path: n, resourceFieldRef: {containerName: nope, resource: limits.memory}}",
            ".resourceFieldRef.containerName",
            "no container named 'nope' in this pod",
        ),
        (
            "{path: n}",
            "",
            "needs exactly one of fieldRef or resourceFieldRef, got none",
        ),
        (
            "{path: ../n, fieldRef: {fieldPath: metadata.name}}",
            ".path",
            "'../n' must not contain '..'",
        ),
    ],
)
def test_bad_downward_api_items(item: str, path: str, message: str) -> None:
    assert errors(pod_file(f"downwardAPI: {{items: [{item}]}}")) == [
        f"pods.yaml: $.spec.volumes[0].downwardAPI.items[0]{path}: {message}"
    ]


def test_changed_labels_change_the_labels_source_only() -> None:
    before = content(DOWNWARD, objects="")
    pod = parse(pod_file(DOWNWARD).replace("tier: front", "tier: back"))
    after = pod.volumes[0].content
    assert after is not None
    changed = {k for k in before.sources if before.sources[k] != after.sources[k]}
    assert changed == {"the labels of pod default/web"}


def test_a_hand_made_pod_may_carry_content() -> None:
    """Library callers build the content themselves; the model checks nothing more."""
    volume = attrs.evolve(
        parse(pod_file("emptyDir: {}")).volumes[0],
        content=VolumeContent(VolumeKind.CONFIG_MAP, (VolumeFile("a", b"x"),)),
    )
    assert not volume.is_empty_dir
    assert not volume.on_disk
