"""The runtime conformance suite on the real engine: the cases of
``tests/support/conformance.py`` and ``tests/support/conformance_files.py``, which
``tests/unit/runtime/test_conformance.py`` runs on ``FakeRuntime``, and what only the
engine can say (the modes and owners of written files)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import secrets
from collections.abc import Iterator

import docker
import pytest

from podsync.docker import DockerRuntime
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.runtime.docker._api import familiar_image
from podsync.runtime.docker._volumes import HELPER_IMAGE
from podsync.spec._labels import LABEL_HELPER
from tests.support.conformance import *  # noqa: F403 - the suite's cases, collected here
from tests.support.conformance import Subject, engine_subject
from tests.support.conformance_files import *  # noqa: F403 - the suite's cases, collected here
from tests.support.conformance_files import _dir
from tests.support.engine import TEST_IMAGE, remove_volumes, run_labels


@pytest.fixture
def subject(engine: docker.DockerClient, engine_name: str) -> Iterator[Subject]:
    """The runtime every case runs on: the engine at ``DOCKER_HOST``."""
    with engine_subject(engine, engine_name) as subject:
        yield subject


def test_a_written_volume_has_the_entries_modes_and_owners(engine: docker.DockerClient) -> None:
    """On the engine, what a container sees in the volume: the root's mode (an emptyDir
    is 0777), a setgid directory of a group, a file only its owner reads, a link."""
    volume = f"podsync-test-modes-{secrets.token_hex(4)}"
    try:
        with DockerRuntime() as runtime:
            runtime.write_volume(
                volume,
                [
                    _dir(".", 0o777),
                    VolumeEntry("d", EntryKind.DIRECTORY, mode=0o2770, gid=2000),
                    VolumeEntry("d/f", EntryKind.FILE, mode=0o400, uid=1000, data=b"s3cret"),
                    VolumeEntry("l", EntryKind.SYMLINK, mode=0o777, target="d/f"),
                ],
            )
        listing = engine.containers.run(
            TEST_IMAGE,
            [
                "sh",
                "-c",
                "stat -c '%a %u %g %F %n' /data /data/d /data/d/f /data/l; readlink /data/l",
            ],
            volumes={volume: {"bind": "/data", "mode": "ro"}},
            network_mode="none",
            labels=run_labels(),
            remove=True,
        )
    finally:
        remove_volumes(engine, [volume])

    assert [
        "777 0 0 directory /data",
        "2770 0 2000 directory /data/d",
        "400 1000 0 regular file /data/d/f",
        "777 0 0 symbolic link /data/l",
        "d/f",
    ] == listing.decode().splitlines()


def test_the_volume_helper_image_is_the_runtimes_own(engine: docker.DockerClient) -> None:
    """No image is named to write a volume: the runtime imports its empty helper image
    through the engine when it is missing (no registry), tagged - so the dangling-image
    collection, which takes untagged images only, never removes it - and labelled as
    podsync's; two runtimes that find it missing at once both write."""
    volumes = [f"podsync-test-helper-{secrets.token_hex(4)}" for _ in range(2)]
    with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
        engine.images.remove(HELPER_IMAGE)  # (in use by another run's write: kept)
    try:
        with DockerRuntime() as one, DockerRuntime() as two:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                done = [
                    pool.submit(runtime.write_volume, volume, [VolumeEntry("f", EntryKind.FILE)])
                    for runtime, volume in zip((one, two), volumes, strict=True)
                ]
                for future in done:
                    future.result()
            read = [one.read_volume_file(volume, "f", limit=10) for volume in volumes]
        image = engine.images.get(HELPER_IMAGE)
        # No helper container is left behind on these volumes (others' come and go).
        left = [
            engine.containers.list(
                all=True, filters={"label": f"{LABEL_HELPER}=volume", "volume": volume}
            )
            for volume in volumes
        ]
    finally:
        remove_volumes(engine, volumes)

    assert [b"", b""] == read
    assert HELPER_IMAGE in {familiar_image(tag) for tag in image.tags}
    assert {LABEL_HELPER: "volume"} == image.labels
    assert image.attrs["Config"]["Cmd"] is None  # nothing in it to run
    assert [[], []] == left
