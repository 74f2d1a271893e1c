"""``podsync apply --hosts`` on three real engines (``tests/support/engines.py``): each engine
runs the pods bound to its host and no other; a stopped engine fails its host alone;
a bad hosts file or a pod bound to no host applies nothing on any engine."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podsync import cli
from podsync.labels import LABEL_CONTAINER, LABEL_POD_NAME
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE
from tests.support.engines import ExtraEngine, tcp_engines, unix_engines

pytestmark = pytest.mark.docker_only(
    reason="starts dockerds of its own (a fleet, a remote engine); the session engine lends"
    " its images"
)

__all__ = ["tcp_engines", "unix_engines"]

# Exits at once on SIGTERM (busybox sleep as PID 1 would ignore it).
COMMAND = ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]


def pod_yaml(name: str, node: str | None) -> str:
    node_line = f"\n  nodeName: {node}" if node is not None else ""
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:{node_line}
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: {json.dumps(COMMAND)}
"""


def write_fleet(directory: Path, engines: list[ExtraEngine], per_host: int = 2) -> Path:
    """A hosts file naming the engines, and ``per_host`` pods for each, in
    ``directory``; returns the hosts file."""
    pods = directory / "pods"
    pods.mkdir()
    for engine in engines:
        for i in range(per_host):
            name = f"{engine.name}-pod-{i}"
            (pods / f"{name}.yaml").write_text(pod_yaml(name, engine.name))
    hosts = directory / "hosts.yaml"
    hosts.write_text("hosts:\n" + "".join(f"  {e.name}: {e.address}\n" for e in engines))
    return hosts


def apply_hosts(
    hosts: Path, root: Path, *sources: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    code = cli.main(
        [
            "apply",
            "--hosts",
            str(hosts),
            "--root-dir",
            str(root),
            "--network-mode",
            "none",
            "--network-image",
            PAUSE_IMAGE,
            *(str(s) for s in sources),
        ]
    )
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def running_pods(engine: ExtraEngine) -> set[str]:
    with contextlib.closing(engine.client()) as client:
        found: list[dict[str, Any]] = client.api.containers(filters={"label": LABEL_POD_NAME})
    return {c["Labels"][LABEL_POD_NAME] for c in found if c["Labels"].get(LABEL_CONTAINER) == "app"}


def all_containers(engine: ExtraEngine) -> list[str]:
    with contextlib.closing(engine.client()) as client:
        return sorted(c["Id"] for c in client.api.containers(all=True))


@pytest.fixture
def clean(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts and ends with empty engines (they are the tests' own)."""
    yield
    for name in ("unix_engines", "tcp_engines"):
        if name in request.fixturenames:
            for engine in request.getfixturevalue(name):
                if engine.running:
                    engine.remove_all_containers()


@pytest.mark.parametrize("fleet", ["unix_engines", "tcp_engines"])
def test_each_engine_converges_to_the_pods_of_its_host(
    fleet: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    clean: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engines: list[ExtraEngine] = request.getfixturevalue(fleet)
    hosts = write_fleet(tmp_path, engines)
    code, out, err = apply_hosts(hosts, tmp_path / "root", tmp_path / "pods", capsys=capsys)
    assert code == 0, err
    for engine in engines:
        assert running_pods(engine) == {f"{engine.name}-pod-0", f"{engine.name}-pod-1"}
    assert "Fleet: 3 of 3 host(s) applied." in out
    # Again: nothing to do anywhere.
    code, out, err = apply_hosts(hosts, tmp_path / "root", tmp_path / "pods", capsys=capsys)
    assert code == 0, err
    for engine in engines:
        assert f"{engine.name}: No changes. 2 pod(s) up to date." in out


def test_a_stopped_engine_fails_its_host_alone(
    unix_engines: list[ExtraEngine],
    tmp_path: Path,
    clean: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hosts = write_fleet(tmp_path, unix_engines)
    stopped = unix_engines[1]
    stopped.stop()
    try:
        code, out, err = apply_hosts(hosts, tmp_path / "root", tmp_path / "pods", capsys=capsys)
        assert code == 1
        for engine in (unix_engines[0], unix_engines[2]):
            assert running_pods(engine) == {f"{engine.name}-pod-0", f"{engine.name}-pod-1"}
        assert f"{stopped.name}: not applied: " in out
        assert f"Fleet: 2 of 3 host(s) applied; failed: {stopped.name}." in out
        assert f"podsync: error: host {stopped.name} ({stopped.address}): " in err
        assert f"1 of 3 host(s) failed: {stopped.name}" in err
    finally:
        stopped.start()
    assert running_pods(stopped) == set()
    # Back: the next apply brings it its pods.
    code, out, err = apply_hosts(hosts, tmp_path / "root", tmp_path / "pods", capsys=capsys)
    assert code == 0, err
    assert running_pods(stopped) == {f"{stopped.name}-pod-0", f"{stopped.name}-pod-1"}


@pytest.mark.parametrize("problem", ["bad hosts file", "pod without nodeName"])
def test_a_bad_hosts_file_or_an_unbound_pod_applies_nothing_anywhere(
    problem: str,
    unix_engines: list[ExtraEngine],
    tmp_path: Path,
    clean: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hosts = write_fleet(tmp_path, unix_engines)
    if problem == "bad hosts file":
        hosts.write_text(hosts.read_text() + "  host-9:\n    engine: unix:///x.sock\n    tls: {}\n")
        expected = f"{hosts}: $.hosts.host-9.tls: TLS is for tcp:// engines"
    else:
        (tmp_path / "pods" / "stray.yaml").write_text(pod_yaml("stray", None))
        expected = (
            f"{tmp_path / 'pods' / 'stray.yaml'}: $.spec.nodeName: pod default/stray: "
            "no spec.nodeName"
        )
    before = [all_containers(e) for e in unix_engines]
    code, _, err = apply_hosts(hosts, tmp_path / "root", tmp_path / "pods", capsys=capsys)
    assert code == 1
    assert f"podsync: error: {expected}" in err
    assert [all_containers(e) for e in unix_engines] == before
    assert not (tmp_path / "root" / "hosts").exists()
