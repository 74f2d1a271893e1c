"""``podsync status -o wide`` on the real engine (issue 30): the IP column is the
address Docker gave the pod's network container (``docker inspect``), which only the
engine knows; SCOPE is the scope that runs the pod. The pod is on a network of the
test's own (the test engine has no default bridge), and publishes no port."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

import podsync
from podsync import cli
from tests.engine.test_operate import pod_file
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE

__all__ = ["pod_file"]  # the fixture: a pod file whose containers the test cleans up


def test_status_wide_shows_the_network_containers_address(
    engine: docker.DockerClient,
    pod_file: Callable[..., tuple[str, podsync.Pod]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source, pod = pod_file("wide", "sleep 3600")
    suffix = uuid.uuid4().hex[:8]
    scope = f"wide-{suffix}"
    common = ["--root-dir", str(tmp_path / "root"), "--network-image", PAUSE_IMAGE]
    network = engine.networks.create(f"podsync-wide-{suffix}")
    try:
        apply = ["apply", *common, "--network-mode", network.name, "--scope", scope]
        assert 0 == cli.main([*apply, source]), capsys.readouterr().err
        capsys.readouterr()

        code = cli.main(["status", *common, "-o", "wide"])

        out = capsys.readouterr().out
        address = _address(engine, pod)
    finally:
        # The pod's containers go first: a network in use cannot be removed.
        cli.main(["down", *common, "--stop-timeout", "1", source])
        network.remove()
    assert 0 == code
    header, *rows = [line.split() for line in out.splitlines()]
    assert ["IP", "SCOPE", "IMAGES"] == header[-3:]
    (row,) = [r for r in rows if r[0] == pod.key]
    assert address  # the network gave it one
    assert [address, scope, TEST_IMAGE] == row[-3:]


def _address(engine: docker.DockerClient, pod: podsync.Pod) -> str:
    """The address ``docker inspect`` shows for the pod's network container."""
    labels = [f"{podsync.labels.LABEL_POD_UID}={pod.uid}", "io.podsync.container.name=net"]
    (network,) = engine.api.containers(filters={"label": labels})
    networks = engine.api.inspect_container(network["Id"])["NetworkSettings"]["Networks"]
    return next(str(n["IPAddress"]) for n in networks.values() if n.get("IPAddress"))
