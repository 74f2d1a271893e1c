"""What the loader remembers per distinct value (issue 33) gives what reading it again
gives: a container's resources read once per distinct ``resources`` mapping, the uid of
a pod without one written out rather than through ``uuid.uuid5``. Problems are still
worded every time, each with its own file and ``$.path``."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podsync import ConfigError, ResourceList, Resources, derive_pod_uid, parse_pods
from podsync.load.convert import _pod as convert_pod
from podsync.model._pod import _POD_UID_NAMESPACE

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox
    resources: {resources}
"""


def _resources(name: str, resources: str) -> Resources | None:
    (pod,) = parse_pods(POD.format(name=name, resources=resources), source="file")
    return pod.containers[0].resources


@given(
    source=st.sampled_from(["file", "http", "api"]),
    namespace=st.text(min_size=1, max_size=20),
    name=st.text(min_size=1, max_size=300),
)
def test_derived_uid_is_uuid5(source: str, namespace: str, name: str) -> None:
    expected = uuid.uuid5(uuid.UUID(_POD_UID_NAMESPACE), f"{source}/{namespace}/{name}")
    assert derive_pod_uid(source, namespace, name) == str(expected)


def test_the_same_resources_read_again_are_the_same() -> None:
    first = _resources("a", "{requests: {cpu: 250m}, limits: {memory: 128Mi}}")
    again = _resources("b", "{requests: {cpu: 250m}, limits: {memory: 128Mi}}")
    assert (
        first
        == again
        == Resources(requests=ResourceList(cpu=250), limits=ResourceList(memory=128 * 2**20))
    )
    assert first is again  # remembered, not read again


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Requests and limits with the same amounts are not mixed up.
        ("{limits: {cpu: 250m}}", Resources(limits=ResourceList(cpu=250))),
        ("{requests: {cpu: 250m}}", Resources(requests=ResourceList(cpu=250))),
        # 1 and 1.0 are equal keys in Python; both are one CPU.
        ("{limits: {cpu: 1}}", Resources(limits=ResourceList(cpu=1000))),
        ("{limits: {cpu: 1.0}}", Resources(limits=ResourceList(cpu=1000))),
        ("{limits: {cpu: '1'}}", Resources(limits=ResourceList(cpu=1000))),
        ("{}", None),
    ],
)
def test_remembered_resources_keep_apart_what_differs(
    text: str, expected: Resources | None
) -> None:
    # Each read twice: the second comes from the memo.
    assert _resources("a", text) == expected
    assert _resources("b", text) == expected


def test_a_refused_amount_is_refused_each_time_with_its_path() -> None:
    # true equals 1 as a dict key: it must not find one CPU remembered under 1.
    assert _resources("a", "{limits: {cpu: 1}}") == Resources(limits=ResourceList(cpu=1000))
    two = POD.format(name="b", resources="{limits: {cpu: true}}") + (
        "  - name: other\n    image: busybox\n    resources: {limits: {cpu: true}}\n"
    )
    with pytest.raises(ConfigError) as caught:
        parse_pods(two, source="file")
    assert [p.path for p in caught.value.problems] == [
        "$.spec.containers[0].resources.limits.cpu",
        "$.spec.containers[1].resources.limits.cpu",
    ]
    assert caught.value.problems[0].message == caught.value.problems[1].message


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(convert_pod, "_REMEMBERED_RESOURCES", 3)
    monkeypatch.setattr(convert_pod, "_KNOWN_RESOURCES", {})
    for cpu in range(1, 10):
        assert _resources("a", f"{{limits: {{cpu: {cpu}}}}}") == Resources(
            limits=ResourceList(cpu=cpu * 1000)
        )
        assert len(convert_pod._KNOWN_RESOURCES) <= 3
