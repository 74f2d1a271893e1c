"""The extra engines of ``tests/support/engines.py`` are real, separate engines: each answers at
its own address, holds the test images without a pull, runs containers beside the
others (network mode none), and is gone with its directory once stopped."""

from __future__ import annotations

import contextlib

import docker
import pytest

from tests.support import engines
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE
from tests.support.engines import (
    ExtraEngine,
    start_engines,
    stop_engines,
    tcp_engines,
    unix_engines,
)

pytestmark = pytest.mark.docker_only(reason="tests the harness that starts extra dockerds")

__all__ = ["tcp_engines", "unix_engines"]


def _run_on(engine: ExtraEngine, name: str) -> str:
    with contextlib.closing(engine.client()) as client:
        output = client.containers.run(TEST_IMAGE, ["echo", name], network_mode="none", remove=True)
    return bytes(output).decode().strip()


@pytest.mark.parametrize("fixture", ["unix_engines", "tcp_engines"])
def test_each_engine_is_separate_and_has_the_images(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    engines: list[ExtraEngine] = request.getfixturevalue(fixture)
    assert len(engines) == 3
    prefix = "unix:///" if fixture == "unix_engines" else "tcp://127.0.0.1:"
    assert all(e.address.startswith(prefix) for e in engines)
    assert len({e.address for e in engines}) == 3
    ids = set()
    for engine in engines:
        with contextlib.closing(engine.client()) as client:
            # DockerRootDir, not ID: the engines share /etc/docker/key.json, the ID's source.
            ids.add(client.info()["DockerRootDir"])
            tags = {tag for image in client.images.list() for tag in image.tags}
        assert {TEST_IMAGE, PAUSE_IMAGE} <= tags
        assert _run_on(engine, engine.name) == engine.name
    assert len(ids) == 3  # three daemons, not one answering thrice


def test_a_stopped_engine_is_gone_and_its_directory_removed(engine: docker.DockerClient) -> None:
    (one,) = start_engines(1, source=None)
    try:
        assert one.running
        one.stop()
        assert not one.running
        assert not one._listening()
        one.start()  # again, from its data root
        assert one.running
    finally:
        stop_engines([one])
    assert not one.directory.exists()
    assert not one.directory.parent.exists()


def test_without_dockerd_the_fixtures_fail_when_an_engine_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(FileNotFoundError, match="no dockerd on PATH"):
        start_engines(1)
    monkeypatch.setenv("PODSYNC_REQUIRE_ENGINE", "1")
    with (
        pytest.raises(pytest.fail.Exception, match="PODSYNC_REQUIRE_ENGINE=1"),
        engines._fleet(object(), "unix"),  # type: ignore[arg-type]
    ):
        pass
    monkeypatch.setenv("PODSYNC_REQUIRE_ENGINE", "0")
    with (
        pytest.raises(pytest.skip.Exception, match="no dockerd on PATH"),
        engines._fleet(object(), "unix"),  # type: ignore[arg-type]
    ):
        pass
