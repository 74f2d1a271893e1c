"""``EngineInfoRuntime``: what an engine says of itself. The ``/version`` answers below
are the real ones of Docker 20.10 and podman 4.3 (Debian 12), trimmed to what is read."""

from __future__ import annotations

from podsync.model._engine_info import EngineInfo
from podsync.runtime._protocol import EngineInfoRuntime
from podsync.runtime.docker._runtime import DockerRuntime, engine_info_of
from podsync.testing import FakeRuntime

DOCKER = {
    "Platform": {"Name": ""},
    "Components": [
        {"Name": "Engine", "Version": "20.10.24+dfsg1"},
        {"Name": "containerd", "Version": "1.6.20~ds1"},
        {"Name": "runc", "Version": "1.1.5+ds1"},
    ],
    "Version": "20.10.24+dfsg1",
    "ApiVersion": "1.41",
}
PODMAN = {
    "Platform": {"Name": "linux/amd64/debian-12"},
    "Components": [
        {"Name": "Podman Engine", "Version": "4.3.1"},
        {"Name": "Conmon", "Version": "conmon version 2.1.6, commit: unknown"},
    ],
    "Version": "4.3.1",
    "ApiVersion": "1.41",
}


def test_docker_and_podman_tell_themselves_apart() -> None:
    assert engine_info_of(DOCKER) == EngineInfo("docker", "20.10.24+dfsg1")
    assert engine_info_of(PODMAN) == EngineInfo("podman", "4.3.1")
    desktop = {"Platform": {"Name": "Docker Engine - Community"}, "Version": "27.0.1"}
    assert engine_info_of(desktop) == EngineInfo("docker", "27.0.1")
    assert engine_info_of({}) == EngineInfo("docker", "")


def test_the_runtimes_have_it() -> None:
    assert isinstance(FakeRuntime(), EngineInfoRuntime)
    assert FakeRuntime().engine_info() == EngineInfo("fake", "1.0")
    assert FakeRuntime().calls == []  # not a recorded call
    assert issubclass(DockerRuntime, EngineInfoRuntime)
    assert EngineInfo("docker", "20.10").runtime_version == "docker://20.10"
