"""``emptyDir.medium: Memory`` (issue 14): a tmpfs the engine mounts in the container,
sized as the kubelet sizes it, with ``sizeLimit``."""

from __future__ import annotations

import pytest

from podsync import ConfigError, NodeInfo, Pod, parse_pods
from podsync.model._volume import MemoryMedium
from podsync.spec._volumes import TmpfsMount, volume_host_paths

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)


def pod_file(volume: str, limits: str = "", second: bool = False) -> str:
    text = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: web}}
spec:
  volumes:
  - name: scratch
    emptyDir: {volume}
  containers:
  - name: app
    image: busybox
    volumeMounts: [{{name: scratch, mountPath: /scratch}}]
{limits}"""
    if second:
        text += (
            "  - name: other\n    image: busybox\n"
            "    volumeMounts: [{name: scratch, mountPath: /scratch}]\n"
        )
    return text


def parse(text: str) -> Pod:
    (pod,) = parse_pods(text, source_name="pod.yaml", source="file", node=NODE)
    return pod


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pod.yaml", source="file", node=NODE)
    return [str(p) for p in info.value.problems]


LIMITED = "    resources: {limits: {memory: 64Mi}}\n"


@pytest.mark.parametrize(
    ("volume", "limits", "size"),
    [
        # calculateEmptyDirMemorySize: the node's allocatable memory ...
        ("{medium: Memory}", "", 8 * 2**30),
        # ... the pod's memory limit when every container has one ...
        ("{medium: Memory}", LIMITED, 64 * 2**20),
        # ... the sizeLimit when it is smaller ...
        ("{medium: Memory, sizeLimit: 16Mi}", LIMITED, 16 * 2**20),
        # ... and not when it is larger.
        ("{medium: Memory, sizeLimit: 1Gi}", LIMITED, 64 * 2**20),
        ("{medium: Memory, sizeLimit: 1Ti}", "", 8 * 2**30),
    ],
)
def test_the_tmpfs_size_is_the_kubelets(volume: str, limits: str, size: int) -> None:
    pod = parse(pod_file(volume, limits))
    assert pod.volumes[0].memory == MemoryMedium(size)
    # No directory under the root: the engine's tmpfs.
    assert volume_host_paths(pod, "/var/lib/podsync") == {}


def test_refusals() -> None:
    assert errors(pod_file("{sizeLimit: 1Gi}")) == [
        "pod.yaml: $.spec.volumes[0].emptyDir.sizeLimit: sizeLimit is not supported by podsync "
        "for an emptyDir on disk: podsync does not limit a directory's size (with medium: "
        "Memory it is the tmpfs's size)"
    ]
    assert errors(pod_file("{medium: HugePages-2Mi}")) == [
        "pod.yaml: $.spec.volumes[0].emptyDir.medium: medium: 'HugePages-2Mi' is not supported "
        "by podsync: huge pages are not implemented (only '' or 'Memory' is)"
    ]
    assert errors(pod_file("{medium: Disk}")) == [
        "pod.yaml: $.spec.volumes[0].emptyDir.medium: must be '' or 'Memory', got 'Disk'"
    ]
    assert errors(pod_file("{medium: Memory}", second=True)) == [
        "pod.yaml: $.spec.containers[1].volumeMounts[0].name: the memory volume 'scratch' is "
        "already mounted by $.spec.containers[0].volumeMounts[0]: podsync makes a tmpfs per "
        "container, so a memory volume cannot be shared yet"
    ]


def test_the_create_spec_carries_the_tmpfs() -> None:
    from podsync.actions._actions import Create
    from tests.unit.planner.test_plan import run

    pod = parse(pod_file("{medium: Memory, sizeLimit: 16Mi}", LIMITED))
    (create,) = [a for a in run([pod]).actions if isinstance(a, Create) and a.container == "app"]
    assert create.spec.tmpfs == (TmpfsMount("/scratch", 16 * 2**20),)
    assert create.spec.mounts == ()
    assert create.spec.directories == ()
