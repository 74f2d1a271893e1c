"""A file that is not a pod - any file a pod file's symlink may point to - is refused
with a message naming the file and what is wrong, never with its bytes (issue 28)."""

from __future__ import annotations

import pytest

from podsync import ConfigError, load_pods

# id, the target's bytes (each holds SEKRIT), the error after "<file>: "
_CASES = [
    (
        "shadow-line",
        b"root:$6$SEKRIT$x:19000:0:99999:7:::\n",
        "$: not a pod: expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or "
        "PodList of pods, or a v1beta1 ContainerManifest (version: v1beta1)",
    ),
    (
        "private-key",
        b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1SEKRIT\n"
        b"-----END OPENSSH PRIVATE KEY-----\n",
        "$: expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or PodList of "
        "pods, or a v1beta1 ContainerManifest (version: v1beta1), got a string",
    ),
    (
        "a-list-of-words",
        b"- SEKRIT\n",
        "$[0]: expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or PodList of "
        "pods, or a v1beta1 ContainerManifest (version: v1beta1), got a string",
    ),
    (
        "a-number",
        b"4711\n",
        "$: expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or PodList of "
        "pods, or a v1beta1 ContainerManifest (version: v1beta1), got a number",
    ),
    (
        "credentials-json",
        b'{"type": "service_account", "private_key": "SEKRIT"}\n',
        "$: not a pod: expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or "
        "PodList of pods, or a v1beta1 ContainerManifest (version: v1beta1)",
    ),
    (
        "env-file",
        b"PASSWORD=SEKRIT\nTOKEN: SEKRIT\n",
        "invalid YAML at line 2, column 6: mapping values are not allowed in this context",
    ),
    (
        "binary",
        b"\xff\xd8\xffSEKRIT",
        "not UTF-8 text: byte 0xff at byte offset 0 (invalid start byte)",
    ),
    ("nul-bytes", b"SEKRIT\0\0", "binary data, not YAML text (a NUL byte at byte offset 6)"),
]


@pytest.mark.parametrize(("target", "message"), [c[1:] for c in _CASES], ids=[c[0] for c in _CASES])
def test_a_symlinked_non_pod_files_error_never_shows_its_bytes(tmp_path, target, message):
    (tmp_path / "elsewhere").write_bytes(target)
    link = tmp_path / "pod.yaml"
    link.symlink_to(tmp_path / "elsewhere")

    with pytest.raises(ConfigError) as caught:
        load_pods([str(link)])

    assert str(caught.value) == f"{link}: {message}"
    assert "SEKRIT" not in str(caught.value)
