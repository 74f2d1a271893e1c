"""Volumes: the seed's TestMakeVolumesAndBinds and the host paths (reference §2.5,
§4.1 #18)."""

from __future__ import annotations

import posixpath
from typing import Any

import pytest

from podsync import (
    ClaimSource,
    ConfigError,
    MemoryMedium,
    Pod,
    Volume,
    VolumeContent,
    VolumeFile,
    VolumeKind,
    VolumeMount,
    parse_pods,
)
from podsync.runtime import Mount
from podsync.spec._volumes import (
    binds,
    container_mounts,
    termination_message_file,
    volume_host_paths,
)


def test_make_volumes_and_binds_seed_case():
    """TestMakeVolumesAndBinds: host paths and mounts give the seed's binds, in order."""
    mounts = [
        VolumeMount(name="disk", mount_path="/mnt/path"),
        VolumeMount(name="disk", mount_path="/mnt/path3", read_only=True),
        VolumeMount(name="disk4", mount_path="/mnt/path4"),
        VolumeMount(name="disk5", mount_path="/mnt/path5"),
    ]
    host_paths = {
        "disk": "/mnt/disk",
        "disk4": "/mnt/host",
        "disk5": "/var/lib/kubelet/podID/volumes/empty/disk5",
    }
    expected = [
        "/mnt/disk:/mnt/path",
        "/mnt/disk:/mnt/path3:ro",
        "/mnt/host:/mnt/path4",
        "/var/lib/kubelet/podID/volumes/empty/disk5:/mnt/path5",
    ]

    assert expected == binds(container_mounts(mounts, host_paths))


def test_mounts_skip_unknown_volumes():
    """A mount of a volume with no host path is skipped, as in the seed."""
    mounts = [VolumeMount("missing", "/a"), VolumeMount("known", "/b", read_only=True)]
    expected = [Mount("/host", "/b", read_only=True)]

    assert expected == container_mounts(mounts, {"known": "/host"})


def test_volume_host_paths_seed_layout():
    """hostPath volumes are their path; emptyDirs live under <root>/<uid>/volumes/empty/."""
    pod = Pod(
        name="foo",
        uid="podID",
        volumes=(Volume("disk", "/mnt/disk"), Volume("disk4", "/mnt/host"), Volume("disk5")),
    )
    expected = {
        "disk": "/mnt/disk",
        "disk4": "/mnt/host",
        "disk5": "/var/lib/kubelet/podID/volumes/empty/disk5",
    }

    assert expected == volume_host_paths(pod, "/var/lib/kubelet")


def test_empty_dirs_of_same_named_pods_differ():
    """Two pods named alike in two namespaces never share an emptyDir (the seed keyed
    volume directories by pod name)."""
    first = Pod(name="web", namespace="a", volumes=(Volume("scratch"),))
    second = Pod(name="web", namespace="b", volumes=(Volume("scratch"),))

    assert volume_host_paths(first, "/r") != volume_host_paths(second, "/r")


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        # A plain root.
        (
            "/var/lib/podsync",
            "/var/lib/podsync/12345678/bar/k8s_bar.1234_foo.new.test_12345678_00000000",
        ),
        # A trailing slash on the root is harmless.
        (
            "/var/lib/podsync/",
            "/var/lib/podsync/12345678/bar/k8s_bar.1234_foo.new.test_12345678_00000000",
        ),
    ],
)
def test_termination_message_file(root, expected):
    """<root>/<uid>/<container>/<instance name>."""

    assert expected == termination_message_file(
        root, "12345678", "bar", "k8s_bar.1234_foo.new.test_12345678_00000000"
    )


def test_termination_message_file_name_fits_the_filesystem():
    """A container name can be far longer than the 255-byte limit of a file name (long
    pod and namespace names, a 253-character uid): the file name is then shortened,
    deterministically, and instances still get files of their own."""
    uid = "u" * 253
    pod_part = f"{'p' * 63}.{'n' * 63}.file"
    first = f"k8s_{'c' * 63}.1234abcd_{pod_part}_{uid}_00000000"
    second = f"k8s_{'c' * 63}.1234abcd_{pod_part}_{uid}_00000001"

    paths = [termination_message_file("/r", uid, "c" * 63, i) for i in (first, second)]

    names = [posixpath.basename(p) for p in paths]
    assert all(len(n.encode()) <= 255 for n in names)
    assert names[0] != names[1]
    assert all(p.startswith(f"/r/{uid}/{'c' * 63}/k8s_{'c' * 63}.1234abcd_") for p in paths)
    assert paths == [termination_message_file("/r", uid, "c" * 63, i) for i in (first, second)]


def test_short_termination_message_file_names_are_kept():
    """Up to 255 bytes the file is named after the instance, as before."""
    name = "k8s_bar.1234_foo.new.test_" + "u" * 220 + "_00000000"
    assert 255 == len(name)

    assert name == posixpath.basename(termination_message_file("/r", "u", "bar", name))


_CONTENT = VolumeContent(VolumeKind.CONFIG_MAP, (VolumeFile("a", b"1"),))


@pytest.mark.parametrize(
    ("sources", "named"),
    [
        ({"host_path": "/srv/data", "memory": MemoryMedium(1 << 20)}, "host_path, memory"),
        ({"claim": ClaimSource("data"), "content": _CONTENT}, "claim, content"),
        ({"host_path": "/srv", "claim": ClaimSource("data")}, "host_path, claim"),
        ({"memory": MemoryMedium(1), "content": _CONTENT}, "memory, content"),
        (
            {"host_path": "/srv", "memory": MemoryMedium(1), "claim": ClaimSource("d")},
            "host_path, memory, claim",
        ),
    ],
)
def test_a_volume_built_with_two_sources_is_refused(sources: dict[str, Any], named: str) -> None:
    """A volume has one source (Kubernetes' validation: "may not specify more than 1
    volume type"); a library user building one in code with two gets a ValueError
    naming them, instead of a plan in which one of them silently wins."""
    with pytest.raises(ValueError, match="more than one source") as info:
        Volume("data", **sources)

    assert f"volume 'data' has more than one source: {named}" == str(info.value)


@pytest.mark.parametrize(
    "sources",
    [
        {},
        {"host_path": "/srv"},
        {"memory": MemoryMedium(1)},
        {"claim": ClaimSource("data")},
        {"content": _CONTENT},
    ],
)
def test_a_volume_with_one_source_or_none_is_taken(sources: dict[str, Any]) -> None:
    """No source is an emptyDir on disk; each source alone is a volume of its kind."""
    assert "data" == Volume("data", **sources).name


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        (
            "hostPath: {path: /srv}\n    emptyDir: {medium: Memory}",
            "needs at most one of hostPath or emptyDir, got both",
        ),
        (
            "persistentVolumeClaim: {claimName: data}\n    emptyDir: {medium: Memory}",
            "needs one volume source, got persistentVolumeClaim and emptyDir",
        ),
    ],
)
def test_a_file_with_two_sources_is_a_config_error(volume: str, message: str) -> None:
    """The loader reports two sources as a problem of the file (it never builds such a
    volume, not even for an emptyDir in memory it would otherwise size)."""
    text = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: default}}
spec:
  volumes:
  - name: data
    {volume}
  containers:
  - name: app
    image: busybox
    volumeMounts: [{{name: data, mountPath: /data}}]
"""
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pods.yaml", source="file")

    assert [f"pods.yaml: $.spec.volumes[0]: {message}"] == [str(p) for p in info.value.problems]
