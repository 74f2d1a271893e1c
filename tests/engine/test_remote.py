"""podsync against a second, remote engine: a ``dockerd`` reached through TCP on the
loopback (issue 18). Everything podsync keeps of a pod - termination messages, stop
records, probe records - lives in that engine: ``podsync plan/apply/status/down -H
tcp://127.0.0.1:PORT`` work, and the root directory on this machine is never written.

The engine is started here, once for the module, with a data root, an exec root and a
pid file of its own, no bridge and no iptables (the engine tests' rule: loopback only)::

    dockerd -H tcp://127.0.0.1:PORT --bridge=none --iptables=false --ip-masq=false
            --data-root DIR/data --exec-root DIR/exec --pidfile DIR/dockerd.pid

Its images are the session engine's, copied as ``docker save | docker load`` does:
nothing is ever pulled (``tests.support.engines``, the multi-engine harness). The tests need the
session engine (``engine`` fixture), so they are ``engine`` tests: they skip without one
and fail under ``PODSYNC_REQUIRE_ENGINE=1``, as they do when ``dockerd`` is missing or
does not come up.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import docker
import docker.errors
import pytest

from podsync import cli, observe
from podsync.docker import DockerRuntime
from tests.conftest import _engine_required
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE
from tests.support.engines import ExtraEngine, start_engines, stop_engines

pytestmark = pytest.mark.docker_only(
    reason="starts dockerds of its own (a fleet, a remote engine); the session engine lends"
    " its images"
)


@pytest.fixture(scope="module")
def remote(engine: docker.DockerClient) -> Iterator[ExtraEngine]:
    """A second engine at ``tcp://127.0.0.1:<port>``, with the test images
    (``tests.support.engines``: its own data root, exec root and pid file; images copied from
    the session engine, never pulled)."""
    try:
        (started,) = start_engines(1, transport="tcp", source=engine)
    except (FileNotFoundError, RuntimeError, docker.errors.DockerException) as exc:
        if _engine_required():
            pytest.fail(f"cannot start the remote engine: {exc} (PODSYNC_REQUIRE_ENGINE=1)")
        pytest.skip(f"cannot start the remote engine: {exc}")
    try:
        yield started
    finally:
        stop_engines([started])


@attrs.frozen
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def remote_cli(
    remote: ExtraEngine, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> Callable[..., Result]:
    """``podsync <command> -H <remote> --root-dir <tmp>/root ...``, in this process."""

    def run(command: str, *args: str) -> Result:
        options = ["-H", remote.address, "--root-dir", str(tmp_path / "root")]
        if command in ("plan", "apply"):
            options += ["--network-mode", "none", "--network-image", PAUSE_IMAGE]
        code = cli.main([command, *options, *args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


PODS = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: said
  namespace: remote
spec:
  restartPolicy: Never
  containers:
  - name: work
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "printf 'wrote 3 rows' > /dev/termination-log"]
    terminationMessagePath: /dev/termination-log
    securityContext:
      runAsUser: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: probed
  namespace: remote
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: ["/bin/sleep", "3600"]
    livenessProbe:
      exec:
        command: ["/bin/false"]
      periodSeconds: 1
      failureThreshold: 2
"""


def _ours(client: docker.DockerClient) -> tuple[list[str], list[str]]:
    """podsync's containers (helpers included) and volumes on ``client``'s engine."""
    containers = [
        c.name
        for c in client.containers.list(all=True)
        if any(k.startswith("io.podsync.") for k in c.labels)
    ]
    volumes = [
        v["Name"]
        for v in client.api.volumes().get("Volumes") or ()
        if any(k.startswith("io.podsync.") for k in v.get("Labels") or {})
    ]
    return sorted(containers), sorted(volumes)


def _wait_until(what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.2)


def test_pods_on_a_remote_engine_keep_their_state_in_it(
    remote: ExtraEngine, remote_cli: Callable[..., Result], tmp_path: Path
) -> None:
    """Through ``-H tcp://127.0.0.1:PORT``: a container's termination message (written
    by a user that is not root) is read back from the engine; a liveness probe counts
    its failures across two ``podsync apply`` runs and the container podsync then stops
    carries its stop record; ``down`` leaves nothing of podsync's on the engine. The
    root directory on this machine is never made."""
    podsync = remote_cli
    root = tmp_path / "root"
    pods = tmp_path / "pods.yaml"
    pods.write_text(PODS)
    client = remote.client()
    try:
        planned = podsync("plan", str(pods))
        assert 0 == planned.code, planned.err
        # Each pod's state volume is made by the engine, labelled, at its network
        # container's create: no create of its own.
        assert "create volume" not in planned.out

        first = podsync("apply", str(pods))
        assert 0 == first.code, first.err
        states = client.api.volumes(filters={"label": "io.podsync.volume.kind=pod-state"})
        assert 2 == len(states["Volumes"] or ())
        probed = client.containers.list(filters={"label": "io.podsync.container.name=app"})
        (app,) = probed
        _wait_until(
            "the work container exited",
            lambda: all(
                c.status == "exited"
                for c in client.containers.list(
                    all=True, filters={"label": "io.podsync.container.name=work"}
                )
            ),
        )

        # The first failure is recorded in the engine, not on this machine.
        time.sleep(1.1)
        second = podsync("apply", str(pods))
        assert 0 == second.code, second.err
        assert "liveness probe failed (1/2)" in second.err
        records = client.api.volumes(filters={"label": "io.podsync.volume.kind=probe-record"})
        assert [app.id] == [
            v["Labels"]["io.podsync.record.container-id"] for v in records["Volumes"] or ()
        ]

        # The second one, in the next process, decides: podsync stops the container,
        # records why, and replaces it.
        time.sleep(1.1)
        third = podsync("apply", str(pods))
        assert 0 == third.code, third.err
        assert "app: stopping: liveness probe failed" in third.err
        with DockerRuntime(host=remote.address) as runtime:
            seen = {c.id: c for c in observe(runtime, str(root)).containers}
        assert "unhealthy" == seen[app.id].stopped_by_podsync
        assert not seen[app.id].running

        status = podsync("status", "--json", str(pods))
        assert 0 == status.code, status.err
        by_pod = {p["pod"]: p for p in json.loads(status.out)["pods"]}
        (work,) = by_pod["remote/said"]["containers"]
        assert ("Succeeded", "wrote 3 rows") == (
            by_pod["remote/said"]["phase"],
            work["termination_message"],
        )
        assert 1 == by_pod["remote/probed"]["restarts"]

        down = podsync("down", str(pods))
        assert 0 == down.code, down.err
        assert ([], []) == _ours(client)
        assert not root.exists()
    finally:
        client.close()


SHARED = f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
  namespace: remote
data:
  greeting: hello from a ConfigMap
---
apiVersion: v1
kind: Pod
metadata:
  name: shared
  namespace: remote
spec:
  restartPolicy: Never
  volumes:
  - name: scratch
    emptyDir: {{}}
  - name: config
    configMap:
      name: greeting
  containers:
  - name: writer
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "cat /config/greeting > /scratch/note"]
    securityContext:
      runAsUser: 1000
    volumeMounts:
    - {{name: scratch, mountPath: /scratch}}
    - {{name: config, mountPath: /config}}
  - name: reader
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command:
    - /bin/sh
    - -c
    - "while [ ! -s /scratch/note ]; do sleep 0.1; done; cat /scratch/note > /dev/termination-log"
    terminationMessagePath: /dev/termination-log
    securityContext:
      runAsUser: 2000
    volumeMounts:
    - {{name: scratch, mountPath: /scratch}}
"""


def test_volumes_of_a_pod_on_a_remote_engine_live_in_it(
    remote: ExtraEngine, remote_cli: Callable[..., Result], tmp_path: Path
) -> None:
    """Through ``-H tcp://127.0.0.1:PORT``: a ConfigMap volume's file reaches one
    container, which copies it into an emptyDir as a user that is not root; another
    container of the pod, as another user, reads it there and says it in its
    termination message. Everything was in that engine: ``down`` leaves nothing of
    podsync's there, and the root directory on this machine is never made."""
    podsync = remote_cli
    root = tmp_path / "root"
    pods = tmp_path / "shared.yaml"
    pods.write_text(SHARED)
    client = remote.client()
    try:
        applied = podsync("apply", str(pods))
        assert 0 == applied.code, applied.err
        _wait_until(
            "both containers exited",
            lambda: (
                len(
                    [
                        c
                        for c in client.containers.list(
                            all=True, filters={"label": "io.podsync.pod.name=shared"}
                        )
                        if c.status == "exited"
                        and c.labels.get("io.podsync.container.name") != "net"
                    ]
                )
                == 2
            ),
        )
        volumes = _ours(client)[1]
        assert any(v.startswith("podsync-emptydir_") for v in volumes), volumes
        assert any(v.startswith("podsync-content_") for v in volumes), volumes

        status = podsync("status", "--json", str(pods))
        assert 0 == status.code, status.err
        (pod,) = json.loads(status.out)["pods"]
        by_name = {c["name"]: c for c in pod["containers"]}
        assert "hello from a ConfigMap" == by_name["reader"]["termination_message"]
        assert ("Succeeded", 0) == (pod["phase"], by_name["writer"]["exit_code"])

        down = podsync("down", str(pods))
        assert 0 == down.code, down.err
        assert ([], []) == _ours(client)
        assert not root.exists()
    finally:
        client.close()
