"""Secret values in a container's environment (issue 14): ``env[].valueFrom.secretKeyRef``
and ``envFrom[].secretRef`` read from the Secrets of the sources, as the kubelet's
``makeEnvironmentVariables`` does (kubelet-modern.md §8), and kept secret on the way
(``podsync.model._secrets``): the pods hold ``SecretText`` s whose digests are keyed with the
host's key."""

from __future__ import annotations

import base64
import json

import pytest

from podsync import ConfigError, EnvVar, NodeInfo, Pod, PodFileCache, load_pods, parse_pods, plan
from podsync.actions._actions import Create
from podsync.model._secrets import SecretPart, SecretText, revealed, secret_digest
from podsync.spec._labels import LABEL_SPEC

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)
HOST_KEY = b"h" * 32
NOW = 1_700_000_000.0

SECRET = f"""\
apiVersion: v1
kind: Secret
metadata:
  name: db-creds
type: Opaque
data:
  password: {base64.b64encode(b"hunter2-s3cr3t").decode()}
stringData:
  user: app
  bad-name: x
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "connect --url=$(DB_URL)"]
    args: ["--user", "$(DB_USER)"]
    env:
    - name: DB_PASSWORD
      valueFrom:
        secretKeyRef: {name: db-creds, key: password}
    - name: DB_URL
      value: "postgres://app:$(DB_PASSWORD)@db/app"
    - name: DB_USER
      valueFrom:
        secretKeyRef: {name: db-creds, key: user}
"""

FROM_SECRET = "Secret default/db-creds"


def parse(text: str, key: bytes | None = HOST_KEY) -> tuple[Pod, ...]:
    return parse_pods(text, source_name="pods.yaml", source="file", node=NODE, secret_key=key)


def errors(text: str, key: bytes | None = HOST_KEY) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(text, key)
    return [str(p) for p in info.value.problems]


def part(key: str, value: bytes) -> SecretPart:
    return SecretPart(
        "default", "db-creds", key, secret_digest(HOST_KEY, "default", "db-creds", key, value)
    )


def test_secret_key_ref_gives_the_value_sealed():
    (pod,) = parse(SECRET + "---\n" + POD)
    env = pod.containers[0].env
    password = env[0].value

    assert [e.name for e in env] == ["DB_PASSWORD", "DB_URL", "DB_USER"]
    assert isinstance(password, SecretText)
    assert "hunter2-s3cr3t" == password.get_secret_value()
    assert (part("password", b"hunter2-s3cr3t"),) == password.parts
    assert FROM_SECRET == env[0].source == env[2].source
    assert "hunter2" not in repr(pod)


def test_expansion_sees_secret_values_and_keeps_them_sealed():
    """$(VAR) expands a Secret's value as any other (kubelet-modern.md §8); what it
    expands into - another variable, command, args - holds it, and is sealed too."""
    (pod,) = parse(SECRET + "---\n" + POD)
    c = pod.containers[0]
    url = c.env[1].value

    assert "postgres://app:hunter2-s3cr3t@db/app" == url.get_secret_value()
    assert isinstance(url, SecretText)
    assert "postgres://app:<secret default/db-creds key password>@db/app" == url.shown
    assert "connect --url=postgres://app:hunter2-s3cr3t@db/app" == revealed(c.command)[2]
    assert isinstance(c.command[2], SecretText)
    assert ["--user", "app"] == revealed(c.args)
    assert isinstance(c.args[1], SecretText)
    assert type(c.args[0]) is str


def test_the_digest_covers_what_a_secret_flowed_into():
    """A Secret value changed: the label of every entry it flowed into changes."""
    (before,) = parse(SECRET + "---\n" + POD)
    other = SECRET.replace(
        base64.b64encode(b"hunter2-s3cr3t").decode(), base64.b64encode(b"other").decode()
    )
    (after,) = parse(other + "---\n" + POD)

    def label(pod: Pod) -> dict:  # type: ignore[type-arg]
        create = next(
            a
            for a in plan([pod], [], now=NOW).actions
            if isinstance(a, Create) and a.container == "app"
        )
        spec: dict = json.loads(create.spec.labels[LABEL_SPEC])  # type: ignore[type-arg]
        return spec

    old, new = label(before), label(after)
    assert old["env"][0] != new["env"][0]
    assert old["env"][1] != new["env"][1]
    assert old["command"][2] != new["command"][2]
    assert old["args"] == new["args"]  # the user did not change
    assert "hunter2" not in json.dumps(old)
    assert "other" not in json.dumps(new)


def config_error(text: str) -> str:
    (pod,) = parse(text)
    return pod.containers[0].config_error


def test_a_missing_secret_or_key_fails_the_container_naming_it():
    """CreateContainerConfigError: the pod loads, its container is not to be created;
    the message names the object and the key, never a value."""
    assert config_error(POD) == "Secret default/db-creds not found (not optional)"
    missing_key = config_error(SECRET + "---\n" + POD.replace("key: user", "key: login"))
    assert missing_key == "couldn't find key 'login' in Secret default/db-creds (not optional)"
    assert "hunter2" not in missing_key


def test_optional_references_to_what_is_missing_set_nothing():
    optional = POD.replace("key: password}", "key: password, optional: true}").replace(
        "key: user}", "key: login, optional: true}"
    )
    (pod,) = parse(SECRET + "---\n" + optional)
    assert ["DB_PASSWORD", "DB_URL"] == [e.name for e in pod.containers[0].env]
    assert ("--user", "$(DB_USER)") == pod.containers[0].args

    (pod,) = parse(optional)
    assert [EnvVar("DB_URL", "postgres://app:$(DB_PASSWORD)@db/app")] == list(pod.containers[0].env)


ENV_FROM = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox
    envFrom:
    - secretRef: {name: db-creds}
    - prefix: DB_
      secretRef: {name: db-creds}
    - secretRef: {name: other, optional: true}
    env:
    - name: user
      value: mine
"""


def test_env_from_a_secret_with_prefix_skips_invalid_names():
    (pod,) = parse(SECRET + "---\n" + ENV_FROM)
    env = pod.containers[0].env

    # bad-name is no variable name: skipped, as the kubelet skips it; env wins over envFrom.
    assert ["password", "DB_password", "DB_user", "user"] == [e.name for e in env]
    assert ["hunter2-s3cr3t", "hunter2-s3cr3t", "app", "mine"] == revealed(e.value for e in env)
    assert all(isinstance(e.value, SecretText) for e in env[:3])
    assert [FROM_SECRET] * 3 + [""] == [e.source for e in env]


def test_env_from_a_missing_secret_and_both_refs():
    assert config_error(ENV_FROM) == "Secret default/db-creds not found (not optional)"
    both = ENV_FROM.replace(
        "- secretRef: {name: db-creds}",
        "- secretRef: {name: db-creds}\n      configMapRef: {name: x}",
    )
    assert errors(SECRET + "---\n" + both) == [
        "pods.yaml: document 2: $.spec.containers[0].envFrom[0]: needs configMapRef or "
        "secretRef, not both"
    ]


def test_a_value_no_environment_can_hold_is_refused_without_showing_it():
    binary = SECRET.replace(
        base64.b64encode(b"hunter2-s3cr3t").decode(), base64.b64encode(b"\xffhunter2").decode()
    )
    nul = SECRET.replace(
        base64.b64encode(b"hunter2-s3cr3t").decode(), base64.b64encode(b"hunter2\0").decode()
    )
    assert errors(binary + "---\n" + POD) == [
        "pods.yaml: document 2: $.spec.containers[0].env[0].valueFrom.secretKeyRef.key: the "
        "value of Secret default/db-creds key password is not UTF-8 text, which an environment "
        "variable cannot hold (the value is not shown: it is a Secret's)"
    ]
    assert errors(nul + "---\n" + POD) == [
        "pods.yaml: document 2: $.spec.containers[0].env[0].valueFrom.secretKeyRef.key: the "
        "value of Secret default/db-creds key password contains a NUL character, which no "
        "engine can pass on (the value is not shown: it is a Secret's)"
    ]


def test_without_the_hosts_key_a_secret_value_is_an_error():
    assert errors(SECRET + "---\n" + POD, key=None)[0] == (
        "pods.yaml: document 2: $.spec.containers[0].env[0].valueFrom.secretKeyRef: a Secret's "
        "value needs the host's digest key to be kept out of labels and plans: pass "
        "secret_key to load_pods (podsync.host_secret_key)"
    )
    # Pods that use no Secret value need none, even beside a Secret.
    assert parse(
        SECRET
        + "---\n"
        + POD.split("    env:")[0].replace("$(DB_URL)", "x").replace("$(DB_USER)", "u"),
        key=None,
    )


def test_the_key_is_read_only_when_the_sources_hold_a_secret(tmp_path):
    (tmp_path / "pod.yaml").write_text(POD.replace("secretKeyRef", "configMapKeyRef") + "")
    calls: list[int] = []

    def key() -> bytes:
        calls.append(1)
        return HOST_KEY

    (held,) = load_pods([str(tmp_path)], node=NODE, secret_key=key)
    assert "ConfigMap default/db-creds not found (not optional)" == held.containers[0].config_error
    assert [] == calls
    (tmp_path / "secret.yaml").write_text(SECRET)
    (tmp_path / "pod.yaml").write_text(POD)
    (pod,) = load_pods([str(tmp_path)], node=NODE, secret_key=key)
    assert [1] == calls
    assert part("password", b"hunter2-s3cr3t") == pod.containers[0].env[0].value.parts[0]  # type: ignore[attr-defined]


def test_a_cache_parses_again_under_another_key(tmp_path):
    (tmp_path / "all.yaml").write_text(SECRET + "---\n" + POD)
    cache = PodFileCache()
    (first,) = load_pods([str(tmp_path)], node=NODE, secret_key=HOST_KEY, cache=cache)
    (same,) = load_pods([str(tmp_path)], node=NODE, secret_key=HOST_KEY, cache=cache)
    (other,) = load_pods([str(tmp_path)], node=NODE, secret_key=b"o" * 32, cache=cache)

    digest = lambda p: p.containers[0].env[0].value.parts[0].digest  # noqa: E731
    assert digest(first) == digest(same) != digest(other)


def test_skipped_env_from_keys_are_warned_of():
    """The kubelet records a warning event (InvalidEnvironmentVariableNames) naming the
    keys it skipped; podsync says it in the pod's warning line, the keys sorted."""
    configmap = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n"
        "data: {ok: '1', app.properties: x, 9lives: y}\n"
    )
    text = (
        SECRET
        + "---\n"
        + configmap
        + "---\n"
        + ENV_FROM.replace(
            "    - secretRef: {name: other, optional: true}\n",
            "    - secretRef: {name: other, optional: true}\n    - configMapRef: {name: cfg}\n",
        )
    )
    warnings: list[str] = []

    parse_pods(
        text,
        source_name="pods.yaml",
        source="file",
        node=NODE,
        secret_key=HOST_KEY,
        on_warning=warnings.append,
    )

    assert warnings == [
        "pods.yaml: pod default/web: skipping envFrom keys that are not environment variable "
        "names, as the kubelet does: containers[0].envFrom[0]: bad-name (Secret "
        "default/db-creds); containers[0].envFrom[1]: DB_bad-name (Secret default/db-creds); "
        "containers[0].envFrom[3]: 9lives, app.properties (ConfigMap default/cfg)"
    ]
