"""Volumes: the seed's TestMakeVolumesAndBinds and the host paths (reference §2.5,
§4.1 #18)."""

from __future__ import annotations

import posixpath

import pytest

from podsync import Mount, Pod, Volume, VolumeMount
from podsync._volumes import binds, container_mounts, termination_message_file, volume_host_paths


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
