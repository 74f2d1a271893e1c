"""The ``podsync`` command end to end: the console script (and ``python -m podsync``)
against the real engine.

Every pod here has a name unique to the test run and its own ``--root-dir`` under the
test's tmp_path, and every container podsync makes for it is registered with the
``cleanup`` fixture by pod uid. Every command passes ``--no-delete``: deletion would also
stop the pods of other test sessions that share the engine; deleting is tested with
``down`` here and with a fake runtime in ``test_cli_unit.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import docker
import pytest

import podsync
from podsync.docker import DockerRuntime
from tests.support import paths
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

REPO = paths.REPO

# A shell as PID 1 that exits at once on SIGTERM: stops take no grace period.
SLEEPER = ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"]


def console_script() -> str:
    """The installed ``podsync`` script: beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / "podsync"
    found = str(beside) if beside.is_file() else shutil.which("podsync")
    if found is None:
        pytest.fail("the podsync console script is not installed: pip install -e '.[dev]'")
    return found


class Podsync:
    """Runs ``podsync`` in a subprocess with this test's root directory."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "root"

    def __call__(
        self, *argv: str, script: bool = False, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        program = [console_script()] if script else [sys.executable, "-m", "podsync"]
        args = list(argv)
        if args[0] in ("plan", "apply", "down"):
            args[1:1] = ["--root-dir", str(self.root)]
        if args[0] in ("plan", "apply") and "--plan" not in args:
            args[1:1] = [
                "--network-mode",
                "none",
                "--network-image",
                PAUSE_IMAGE,
                "--no-delete",
                "--stop-timeout",
                "1",
            ]
        done = subprocess.run(
            [*program, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
            check=False,
        )
        assert "Traceback" not in done.stderr
        assert "Traceback" not in done.stdout
        return done


@pytest.fixture
def podsync_cmd(tmp_path: Path) -> Podsync:
    return Podsync(tmp_path)


@pytest.fixture
def pods(tmp_path: Path, cleanup: Cleanup) -> Any:
    """Writes a pod file and registers its containers for cleanup; returns (path, pod)."""
    suffix = uuid.uuid4().hex[:8]

    def make(
        base: str,
        *,
        command: Sequence[str] = SLEEPER,
        restart: str = "Always",
        volume: bool = False,
    ) -> tuple[str, podsync.Pod]:
        name = f"cli-{base}-{suffix}"
        text = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: {restart}
  containers:
    - name: app
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: {json.dumps(list(command))}
"""
        if volume:
            text += (
                "      volumeMounts: [{name: data, mountPath: /data}]\n"
                "  volumes: [{name: data, emptyDir: {}}]\n"
            )
        path = tmp_path / f"{base}.yaml"
        path.write_text(text)
        (pod,) = podsync.load_pods([str(path)])
        cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
        return str(path), pod

    return make


def containers_of(engine: docker.DockerClient, pod: podsync.Pod) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
    )
    return found


def running_of(engine: docker.DockerClient, pod: podsync.Pod) -> list[str]:
    return sorted(
        c["Labels"][podsync.labels.LABEL_CONTAINER]
        for c in containers_of(engine, pod)
        if c["State"] == "running"
    )


def test_plan_apply_plan_exit_codes_through_the_console_script(
    engine: docker.DockerClient, podsync_cmd: Podsync, pods: Any
) -> None:
    """plan --detailed-exitcode: 2 before apply, 0 after; apply exits 0 and the pod runs."""
    source, pod = pods("web")

    before = podsync_cmd("plan", "--detailed-exitcode", source, script=True)
    applied = podsync_cmd("apply", source, script=True)
    after = podsync_cmd("plan", "--detailed-exitcode", source, script=True)

    assert (2, 0, 0) == (before.returncode, applied.returncode, after.returncode), applied.stderr
    assert f"create default/{pod.name}/app: no container yet  [missing]" in before.stdout
    assert "Apply complete! 2 done, 0 failed, 0 skipped" in applied.stdout
    assert f"default/{pod.name}/app: started (" in applied.stderr
    assert "No changes. The engine matches the desired pods." in after.stdout
    assert ["app", "net"] == running_of(engine, pod)


def test_saved_plan_is_shown_and_applied(
    engine: docker.DockerClient, podsync_cmd: Podsync, pods: Any, tmp_path: Path
) -> None:
    """plan --json -o FILE, show (text and JSON), then apply --plan FILE."""
    source, pod = pods("saved")
    saved = str(tmp_path / "plan.json")
    # The fingerprint covers the images the plan uses, which other test sessions on
    # the shared engine may re-tag: try again then.
    for _ in range(3):
        planned = podsync_cmd("plan", "--json", "--out", saved, source)
        shown = podsync_cmd("show", saved)
        shown_json = podsync_cmd("show", "--json", saved)
        applied = podsync_cmd("apply", "--plan", saved)
        if "Saved plan is stale" not in applied.stderr:
            break

    assert podsync.PLAN_FORMAT_VERSION == json.loads(planned.stdout)["format_version"]
    assert Path(saved).read_text() == planned.stdout == shown_json.stdout
    assert f"Pod default/{pod.name}:" in shown.stdout
    assert (0, 0) == (applied.returncode, shown.returncode), applied.stderr
    assert f"Applying the saved plan {saved}: Plan: 2 to create." in applied.stdout
    assert ["app", "net"] == running_of(engine, pod)


def test_stale_saved_plan_is_refused(
    engine: docker.DockerClient, podsync_cmd: Podsync, pods: Any, tmp_path: Path
) -> None:
    """A saved plan whose pod changed on the engine since (here: it was applied by
    another command) is refused with a clear message, exit 1, and nothing of it is
    applied."""
    source, pod = pods("stale")
    saved = str(tmp_path / "plan.json")
    podsync_cmd("plan", "--out", saved, source)
    podsync_cmd("apply", source)
    before = sorted(c["Id"] for c in containers_of(engine, pod))

    refused = podsync_cmd("apply", "--plan", saved)

    assert 1 == refused.returncode
    (line,) = refused.stderr.splitlines()
    assert line.startswith(
        "podsync: error: Saved plan is stale: the engine changed since the plan was made"
    )
    assert line.endswith("run podsync plan again.")
    assert 2 == len(before)
    assert before == sorted(c["Id"] for c in containers_of(engine, pod))


def test_wait_for_a_pod_that_comes_up(
    engine: docker.DockerClient, podsync_cmd: Podsync, pods: Any
) -> None:
    """apply --wait returns 0 once the pod runs, reporting it; with --log-format json
    stderr is JSON lines."""
    source, pod = pods("up")

    done = podsync_cmd("apply", "--wait", "--timeout", "20", "--log-format", "json", source)

    assert 0 == done.returncode, done.stderr
    assert f"default/{pod.name}: running (1/1 containers)" in done.stdout
    records = [json.loads(line) for line in done.stderr.splitlines()]
    started = [r for r in records if r["kind"] == "started"]
    assert {("net", f"default/{pod.name}"), ("app", f"default/{pod.name}")} == {
        (r["container"], r["pod"]) for r in started
    }


def test_wait_gives_up_on_a_container_that_keeps_exiting(
    engine: docker.DockerClient, podsync_cmd: Podsync, pods: Any
) -> None:
    """A crash-looping container: restarted with back-off until --timeout, then exit 1
    with the pod named in the report."""
    source, pod = pods("crash", command=["/bin/sh", "-c", "exit 1"])

    done = podsync_cmd("apply", "--wait", "--timeout", "5", source)

    assert 1 == done.returncode
    (line,) = [s for s in done.stdout.splitlines() if s.startswith(f"default/{pod.name}: ")]
    assert "app exited with code 1" in line
    assert f"podsync: error: timed out after 5s: not running: default/{pod.name}" in done.stderr


def test_down_removes_only_the_described_pods(
    engine: docker.DockerClient, podsync_cmd: Podsync, pods: Any
) -> None:
    """down stops and removes the described pod's containers and its engine volumes (its
    emptyDir's); a pod that is not described keeps running. Nothing of either pod is
    under the root directory."""
    gone, gone_pod = pods("gone", volume=True)
    kept, kept_pod = pods("kept")
    applied = podsync_cmd("apply", gone, kept)

    def volumes_of(uid: str) -> list[str]:
        found = engine.api.volumes(filters={"label": f"io.podsync.pod.uid={uid}"})
        return sorted(v["Name"] for v in found.get("Volumes") or ())

    volumes_before = volumes_of(gone_pod.uid)

    down = podsync_cmd("down", gone)

    assert (0, 0) == (applied.returncode, down.returncode), down.stderr
    assert any(v.startswith("podsync-emptydir_") for v in volumes_before), volumes_before
    assert [] == volumes_of(gone_pod.uid)
    assert not (podsync_cmd.root / gone_pod.uid).exists()
    assert [] == containers_of(engine, gone_pod)
    assert ["app", "net"] == running_of(engine, kept_pod)
    assert "Down complete!" in down.stdout


def test_a_bad_source_beside_a_good_one_is_reported_and_the_good_one_applied(
    engine: docker.DockerClient, podsync_cmd: Podsync, pods: Any, tmp_path: Path
) -> None:
    """A bad file beside a good one (and bad standard input): exit 1, every problem with
    its file and $.path - and the good file's pod is applied, as the kubelet's file
    source runs the files it can read (one bad file is one bad file, ``extractFromDir``)."""
    good, good_pod = pods("good")
    bad = tmp_path / "bad.yaml"
    bad.write_text(Path(good).read_text().replace("imagePullPolicy", "imagePulPolicy"))

    from_files = podsync_cmd("apply", good, str(bad))
    from_stdin = podsync_cmd("apply", good, "-", stdin="kind: Pod\nspec: [\n")

    assert (1, 1) == (from_files.returncode, from_stdin.returncode)
    assert (
        f"podsync: error: {bad}: $.spec.containers[0]: unknown key 'imagePulPolicy'"
        in from_files.stderr
    )
    assert "podsync: error: <stdin>: " in from_stdin.stderr
    # The good file's pod: its network container and its app, created once.
    assert 2 == len(containers_of(engine, good_pod))


@pytest.mark.parametrize(
    ("host", "reason"),
    [("tcp://127.0.0.1:1", "Connection refused"), ("unix:///nonexistent.sock", "No such file")],
)
def test_unreachable_engine_is_one_line_naming_the_host(
    podsync_cmd: Podsync, tmp_path: Path, host: str, reason: str
) -> None:
    """An engine that does not answer: one error line that names the host, exit 1."""
    source = tmp_path / "a.yaml"
    source.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
        "spec: {containers: [{name: app, image: x:1}]}\n"
    )

    done = podsync_cmd("plan", "--docker-host", host, str(source))

    assert 1 == done.returncode
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"podsync: error: cannot reach the Docker engine at {host}: {reason}")


def test_apply_gives_the_container_its_downward_api_env_and_warns_of_ignored_fields(
    podsync_cmd: Podsync, engine: docker.DockerClient, tmp_path: Path, cleanup: Cleanup
) -> None:
    """What the engine got: env from fieldRef and $(VAR) in args, resolved when the file
    was read; the ignored scheduling field is a warning, not an error."""
    name = f"cli-dapi-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "dapi.yaml"
    path.write_text(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  nodeSelector: {{disktype: ssd}}
  containers:
    - name: app
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: {json.dumps(SLEEPER)}
      args: ["$(POD_NAME)", "$$(POD_NAME)"]
      env:
        - name: POD_NAME
          valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}
        - name: WHERE
          value: "$(POD_NAME) in $(POD_NAMESPACE)"
"""
    )
    (pod,) = podsync.load_pods([str(path)])
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")

    done = podsync_cmd("apply", str(path))

    assert 0 == done.returncode, done.stderr
    assert (
        f"podsync: warning: {path}: pod default/{name}: ignoring scheduling fields: nodeSelector"
    ) in done.stderr
    (app,) = (
        c
        for c in containers_of(engine, pod)
        if c["Labels"][podsync.labels.LABEL_CONTAINER] == "app"
    )
    config = engine.api.inspect_container(app["Id"])["Config"]
    assert {f"POD_NAME={name}", f"WHERE={name} in $(POD_NAMESPACE)"} <= set(config["Env"])
    assert [name, "$(POD_NAME)"] == config["Cmd"]


def test_env_from_a_configmap_in_another_directory_reaches_the_container(
    podsync_cmd: Podsync, engine: docker.DockerClient, tmp_path: Path, cleanup: Cleanup
) -> None:
    """The pod and its ConfigMap in two directories: the container's environment (read
    inside it with exec) holds the ConfigMap's values; an edited ConfigMap replaces the
    container (env cannot change in place); a key the ConfigMap lacks changes nothing."""
    name = f"cli-cm-{uuid.uuid4().hex[:8]}"
    (tmp_path / "pods").mkdir()
    (tmp_path / "config").mkdir()
    pod_file = tmp_path / "pods" / "web.yaml"
    pod_file.write_text(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
    - name: app
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: {json.dumps(SLEEPER)}
      envFrom:
        - prefix: CFG_
          configMapRef: {{name: settings}}
      env:
        - name: MODE
          valueFrom: {{configMapKeyRef: {{name: settings, key: mode}}}}
"""
    )
    config_file = tmp_path / "config" / "settings.yaml"
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings}}\ndata: {{mode: {}}}\n"
    config_file.write_text(config.format("fast"))
    sources = [str(tmp_path / "pods"), str(tmp_path / "config")]
    (pod,) = podsync.load_pods(sources)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    runtime = DockerRuntime()

    def app_env() -> tuple[str, set[str]]:
        (app,) = (
            c
            for c in containers_of(engine, pod)
            if c["Labels"][podsync.labels.LABEL_CONTAINER] == "app" and c["State"] == "running"
        )
        result = runtime.exec_in_container(app["Id"], ["env"], timeout=10)
        assert 0 == result.exit_code
        return app["Id"], set(result.output.decode().splitlines())

    done = podsync_cmd("apply", *sources)
    assert 0 == done.returncode, done.stderr
    first, env = app_env()
    assert {"MODE=fast", "CFG_mode=fast"} <= env

    config_file.write_text(config.format("slow"))
    done = podsync_cmd("apply", *sources)
    assert 0 == done.returncode, done.stderr
    second, env = app_env()
    assert second != first
    assert {"MODE=slow", "CFG_mode=slow"} <= env

    # A key that is not there holds the container's next start
    # (CreateContainerConfigError); the one that runs is kept, as the kubelet keeps it.
    pod_file.write_text(pod_file.read_text().replace("key: mode", "key: speed"))
    done = podsync_cmd("apply", *sources)
    assert 0 == done.returncode, done.stderr
    assert f"podsync: warning: {pod_file}: pod default/{name}: " in done.stderr
    assert (
        "(CreateContainerConfigError): $.spec.containers[0].env[0].valueFrom.configMapKeyRef.key"
        ": couldn't find key 'speed' in ConfigMap default/settings (not optional)"
    ) in done.stderr
    assert second == app_env()[0]


def test_an_emptydir_in_memory_is_a_tmpfs_of_its_size_limit(
    podsync_cmd: Podsync, engine: docker.DockerClient, tmp_path: Path, cleanup: Cleanup
) -> None:
    """emptyDir.medium: Memory with a sizeLimit: the container sees a tmpfs of that
    size at the mount path (read inside it with exec); nothing under the root dir."""
    name = f"cli-tmpfs-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "tmpfs.yaml"
    path.write_text(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  volumes:
    - name: scratch
      emptyDir: {{medium: Memory, sizeLimit: 16Mi}}
  containers:
    - name: app
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: {json.dumps(SLEEPER)}
      volumeMounts: [{{name: scratch, mountPath: /scratch}}]
"""
    )
    (pod,) = podsync.load_pods([str(path)])
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")

    done = podsync_cmd("apply", str(path))

    assert 0 == done.returncode, done.stderr
    (app,) = (
        c
        for c in containers_of(engine, pod)
        if c["Labels"][podsync.labels.LABEL_CONTAINER] == "app"
    )
    result = DockerRuntime().exec_in_container(app["Id"], ["cat", "/proc/mounts"], timeout=10)
    (line,) = [m for m in result.output.decode().splitlines() if " /scratch " in m]
    device, _, kind, options = line.split()[:4]
    assert ("tmpfs", "tmpfs") == (device, kind)
    assert "size=16384k" in options.split(",")
    assert not (podsync_cmd.root / pod.uid / "volumes").exists()
