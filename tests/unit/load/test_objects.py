"""ConfigMaps and Secrets among the sources (issue 14, the objects' part): documents
validated like pods, and the environment they give (``configMapKeyRef``, ``envFrom``).

Objects may sit in the same file as the pods, in another document, or in another file
or directory of the sources; they are namespaced like pods.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from podsync import ConfigError, EnvVar, NodeInfo, Pod, load_pods, parse_pods

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  MODE: production
  LOG_LEVEL: debug
  app.properties: |
    color=blue
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1.36
    env:
    - name: MODE
      valueFrom:
        configMapKeyRef: {name: app-config, key: MODE}
    - name: GREETING
      value: "mode $(MODE)"
"""


def parse(text: str, name: str = "pods.yaml") -> tuple[Pod, ...]:
    return parse_pods(text, source_name=name, source="file", node=NODE)


def errors(text: str, name: str = "pods.yaml") -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(text, name)
    return [str(p) for p in info.value.problems]


def config_errors(text: str) -> list[str]:
    """The ``config_error`` of each container of the pods of ``text``: a missing object
    or key fails the container (CreateContainerConfigError), not the file."""
    return [c.config_error for pod in parse(text) for c in pod.containers]


def env_of(pod: Pod) -> list[EnvVar]:
    return list(pod.containers[0].env)


FROM_CONFIG = "ConfigMap default/app-config"


def test_a_configmap_key_in_the_same_file_becomes_the_variable() -> None:
    (pod,) = parse(CONFIG + "---\n" + POD)
    assert env_of(pod) == [
        EnvVar("MODE", "production", FROM_CONFIG),
        EnvVar("GREETING", "mode production"),
    ]


def test_the_configmap_may_come_after_the_pod() -> None:
    (pod,) = parse(POD + "---\n" + CONFIG)
    assert env_of(pod)[0] == EnvVar("MODE", "production", FROM_CONFIG)


def test_objects_in_another_file_and_directory(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "app.yaml").write_text(CONFIG)
    (tmp_path / "pods").mkdir()
    (tmp_path / "pods" / "web.yaml").write_text(POD)
    (pod,) = load_pods([tmp_path / "pods", tmp_path / "config"], node=NODE)
    assert env_of(pod)[0] == EnvVar("MODE", "production", FROM_CONFIG)


def test_a_list_may_hold_objects_and_pods() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: "
        "[{name: app, image: busybox, envFrom: [{configMapRef: {name: app-config}}]}]}}\n"
    )
    # A List holds pods only (a ConfigMap item is refused as not a pod); a list of
    # documents (the seed's HTTP form) may mix them.
    mixed = (
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: app-config}, data: {A: '1'}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: "
        "[{name: app, image: busybox, envFrom: [{configMapRef: {name: app-config}}]}]}}\n"
    )
    (pod,) = parse(mixed)
    assert env_of(pod) == [EnvVar("A", "1", FROM_CONFIG)]
    assert config_errors(text) == ["ConfigMap default/app-config not found (not optional)"]


def test_objects_are_namespaced_like_pods() -> None:
    other = CONFIG.replace("name: app-config", "name: app-config\n  namespace: other")
    assert config_errors(other + "---\n" + POD) == [
        "ConfigMap default/app-config not found (not optional)"
    ]
    in_other = POD.replace("name: web", "name: web\n  namespace: other")
    (pod,) = parse(other + "---\n" + in_other)
    assert env_of(pod)[0] == EnvVar("MODE", "production", "ConfigMap other/app-config")


def test_a_missing_key_fails_the_container_naming_the_object_and_key() -> None:
    text = CONFIG + "---\n" + POD.replace("key: MODE", "key: mode")
    assert config_errors(text) == [
        "couldn't find key 'mode' in ConfigMap default/app-config (not optional)"
    ]


def test_optional_references_to_what_is_missing_set_nothing() -> None:
    text = POD.replace("key: MODE}", "key: MODE, optional: true}")
    (pod,) = parse(text)
    assert env_of(pod) == [EnvVar("GREETING", "mode $(MODE)")]
    text = CONFIG + "---\n" + POD.replace("key: MODE}", "key: nope, optional: true}")
    (pod,) = parse(text)
    assert env_of(pod) == [EnvVar("GREETING", "mode $(MODE)")]


ENV_FROM = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1.36
    envFrom:
    - configMapRef: {name: app-config}
    - prefix: CFG_
      configMapRef: {name: app-config}
    env:
    - name: LOG_LEVEL
      value: info
    - name: SHOWN
      value: $(CFG_MODE)
"""


def test_env_from_with_prefix_skips_invalid_names_and_env_wins() -> None:
    (pod,) = parse(CONFIG + "---\n" + ENV_FROM)
    # app.properties is no variable name: skipped, as the kubelet skips it.
    assert env_of(pod) == [
        EnvVar("MODE", "production", FROM_CONFIG),
        EnvVar("CFG_MODE", "production", FROM_CONFIG),
        EnvVar("CFG_LOG_LEVEL", "debug", FROM_CONFIG),
        EnvVar("LOG_LEVEL", "info"),
        EnvVar("SHOWN", "production"),
    ]


def test_env_from_a_missing_configmap_and_a_bad_prefix() -> None:
    text = ENV_FROM.replace("prefix: CFG_", "prefix: 1CFG")
    # The bad prefix is the file's problem; the missing ConfigMap only the container's.
    assert errors(text) == [
        "pods.yaml: $.spec.containers[0].envFrom[1].prefix: '1CFG' is not a valid environment "
        "variable name (letters, digits and '_', not starting with a digit)",
    ]
    assert config_errors(ENV_FROM) == ["ConfigMap default/app-config not found (not optional)"]
    optional = ENV_FROM.replace(
        "- configMapRef: {name: app-config}", "- configMapRef: {name: app-config, optional: true}"
    ).replace("configMapRef: {name: app-config}\n", "configMapRef: {name: x, optional: true}\n")
    (pod,) = parse(optional)
    assert env_of(pod) == [EnvVar("LOG_LEVEL", "info"), EnvVar("SHOWN", "$(CFG_MODE)")]


def test_bad_objects_are_reported_with_their_paths() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: Bad_Name}
data:
  ok: "1"
  bad key: "2"
  ..hidden: "3"
  dup: "4"
  num: 5
binaryData:
  dup: AAAA
  blob: not base64!
colour: red
---
apiVersion: v1
kind: Secret
metadata: {name: tls}
type: kubernetes.io/tls
data:
  tls.crt: "%%%"
stringData:
  extra: plain
"""
    assert errors(text) == [
        "pods.yaml: document 1: $.metadata.name: 'Bad_Name' is not a valid DNS-1123 subdomain "
        "(lowercase letters, digits, '-' and '.', at most 253 characters)",
        "pods.yaml: document 1: $.data.num: expected a string, got 5 "
        "(put it in quotes: YAML reads it as a number)",
        "pods.yaml: document 1: $: unknown key 'colour'",
        "pods.yaml: document 2: $.data['tls.crt']: is not valid base64",
        "pods.yaml: document 2: $.data: a Secret of type 'kubernetes.io/tls' needs the key "
        "'tls.crt'",
        "pods.yaml: document 2: $.data: a Secret of type 'kubernetes.io/tls' needs the key "
        "'tls.key'",
    ]
    keys = (
        CONFIG.replace(
            "  MODE: production\n",
            '  bad key: "2"\n  ..hidden: "3"\n  dup: "4"\n',
        )
        + "binaryData:\n  dup: AAAA\n  blob: not base64!\n"
    )
    assert errors(keys) == [
        "pods.yaml: $.data['bad key']: 'bad key' is not a valid key: keys consist of letters, "
        "digits, '-', '_' and '.'",
        "pods.yaml: $.data['..hidden']: '..hidden' is not a valid key: it must not start with '..'",
        "pods.yaml: $.binaryData.dup: duplicate of key 'dup' in data",
        "pods.yaml: $.binaryData.blob: is not valid base64",
    ]


def test_a_configmap_over_one_mebibyte_is_refused() -> None:
    big = "x" * (1024 * 1024)
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n  k: {big}\n"
    assert errors(text) == [
        "pods.yaml: $: the ConfigMap's data is 1048577 bytes, more than Kubernetes' limit of "
        "1048576 bytes (1 MiB)"
    ]
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n  k: {big[:-1]}\n"
    assert parse(text) == ()  # at the limit: accepted; a file of objects alone is fine


def test_objects_defined_twice() -> None:
    text = CONFIG + "---\n" + CONFIG + "---\n" + POD
    assert errors(text) == [
        "pods.yaml: document 2: $.metadata.name: duplicate ConfigMap default/app-config "
        "(first at pods.yaml: document 1: $.metadata.name)"
    ]


def test_a_secret_is_decoded_and_its_string_data_wins() -> None:
    from podsync.load.convert._objects import _read_object, _Secret

    out: list[tuple[str, str]] = []
    secret = _read_object(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db"},
            "data": {"password": base64.b64encode(b"hunter2").decode(), "user": "YWRtaW4="},
            "stringData": {"user": "root"},
        },
        "Secret",
        "$",
        out,
    )
    assert out == []
    assert isinstance(secret, _Secret)
    assert secret.type == "Opaque"
    assert dict(secret.data) == {"password": b"hunter2", "user": b"root"}
    assert "hunter2" not in repr(secret)


def test_secret_references_in_env_read_secrets_not_configmaps() -> None:
    # More in tests/unit/load/test_secret_env.py.
    text = CONFIG + "---\n" + POD.replace("configMapKeyRef", "secretKeyRef")
    assert config_errors(text) == ["Secret default/app-config not found (not optional)"]


def test_an_edited_configmap_replaces_the_container_and_the_plan_names_it() -> None:
    """env cannot change in place: the container whose env comes from the ConfigMap is
    replaced, and the plan says which object changed."""
    from podsync.actions._actions import Create, Kill
    from tests.support.engine_model import EngineModel
    from tests.unit.planner.test_plan import NOW, run

    model = EngineModel(image_tags={"busybox:1.36", "registry.k8s.io/pause:3.10"})
    model.apply(run(list(parse(CONFIG + "---\n" + POD))), NOW - 100)
    assert (
        run(list(parse(CONFIG + "---\n" + POD)), model.observed, images=model.images).actions == ()
    )

    edited = parse(CONFIG.replace("production", "staging") + "---\n" + POD)
    p = run(list(edited), model.observed, images=model.images)

    assert [type(a) for a in p.actions] == [Kill, Create]
    assert p.actions[1].message == (
        "replace default/web/app: spec changed (env changed (from ConfigMap default/app-config))"
    )


def test_a_secret_value_of_the_wrong_type_is_not_shown() -> None:
    """A Secret value that is not a string is an error that names its path and what was
    expected, never the value: it would end up on a terminal or in a CI log."""
    secret = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
        "stringData:\n  pin: 4711\ndata:\n  token: 90210\n"
    )
    assert errors(
        secret
        + "---\n"
        + POD.replace(
            "configMapKeyRef: {name: app-config, key: MODE}", "fieldRef: {fieldPath: metadata.name}"
        )
    ) == [
        "pods.yaml: document 1: $.data.token: expected a string, got a number (the value is "
        "not shown: it is a Secret's)",
        "pods.yaml: document 1: $.stringData.pin: expected a string, got a number (the value "
        "is not shown: it is a Secret's)",
    ]


_HIDDEN = "(the value is not shown: it is a Secret's)"

# id, the Secret's data and stringData (YAML flow), the problems (path: message)
_SECRET_VALUE_CASES = [
    (
        "nul-escape",
        "{}",
        '{pin: "SEKRIT\\0x"}',
        [f"$.stringData.pin: contains a NUL character, which no engine can pass on {_HIDDEN}"],
    ),
    (
        "unicode-nul-escape",
        "{}",
        '{pin: "SEKRIT\\u0000"}',
        [f"$.stringData.pin: contains a NUL character, which no engine can pass on {_HIDDEN}"],
    ),
    ("number", "{token: 4711}", "{}", [f"$.data.token: expected a string, got a number {_HIDDEN}"]),
    ("list", "{token: [SEKRIT]}", "{}", [f"$.data.token: expected a string, got a list {_HIDDEN}"]),
    (
        "mapping",
        "{}",
        "{pin: {SEKRIT: 1}}",
        [f"$.stringData.pin: expected a string, got a mapping {_HIDDEN}"],
    ),
    ("data-a-string", "SEKRIT", "{}", [f"$.data: expected a mapping, got a string {_HIDDEN}"]),
    (
        "stringData-a-list",
        "{}",
        "[SEKRIT]",
        [f"$.stringData: expected a mapping, got a list {_HIDDEN}"],
    ),
    ("bad-base64", '{token: "SEKRIT!"}', "{}", ["$.data.token: is not valid base64"]),
]


@pytest.mark.parametrize(
    ("data", "string_data", "problems"),
    [c[1:] for c in _SECRET_VALUE_CASES],
    ids=[c[0] for c in _SECRET_VALUE_CASES],
)
def test_a_secrets_problems_never_show_its_values(data, string_data, problems) -> None:
    """Every problem of a Secret's ``data`` / ``stringData`` is made in one place, from
    the value's kind: the value (``SEKRIT`` in each case) is in no message."""
    secret = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
        f"data: {data}\nstringData: {string_data}\n"
    )
    pod = POD.replace(
        "configMapKeyRef: {name: app-config, key: MODE}", "fieldRef: {fieldPath: metadata.name}"
    )
    found = errors(secret + "---\n" + pod)
    assert found == [f"pods.yaml: document 1: {p}" for p in problems]
    assert not any("SEKRIT" in message for message in found)
