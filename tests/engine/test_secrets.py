"""Secret values on the real engine, through the command line: the container's process
gets them (read inside it with exec), and nothing podsync writes down has them - the
container's labels (``docker inspect``), ``plan --json``, a saved plan (``plan -o``) -
while a changed Secret replaces the container, naming the Secret."""

from __future__ import annotations

import base64
import json
import re
import uuid
from pathlib import Path

import docker

import podsync
from podsync.docker import DockerRuntime
from tests.engine.test_cli import SLEEPER, Podsync, containers_of
from tests.support.engine import TEST_IMAGE, Cleanup

PASSWORD = "pw-" + uuid.uuid4().hex[:12]  # unique: grepping for it finds only it


def test_a_secret_reaches_the_container_and_nothing_podsync_writes(
    engine: docker.DockerClient, tmp_path: Path, cleanup: Cleanup
) -> None:
    podsync_cmd = Podsync(tmp_path)
    name = f"cli-secret-{uuid.uuid4().hex[:8]}"
    (tmp_path / "pods").mkdir()
    (tmp_path / "secrets").mkdir()
    (tmp_path / "pods" / "web.yaml").write_text(
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
      args: ["--token=$(API_TOKEN)"]
      envFrom:
        - prefix: DB_
          secretRef: {{name: db-creds}}
      env:
        - name: DB_URL
          value: postgres://app:$(DB_password)@db/app
        - name: API_TOKEN
          valueFrom: {{secretKeyRef: {{name: db-creds, key: password}}}}
"""
    )
    secret_file = tmp_path / "secrets" / "db.yaml"

    def write_secret(password: str) -> None:
        encoded = base64.b64encode(password.encode()).decode()
        secret_file.write_text(
            "apiVersion: v1\nkind: Secret\nmetadata: {name: db-creds}\n"
            f"data: {{password: {encoded}}}\nstringData: {{user: app}}\n"
        )

    write_secret(PASSWORD)
    sources = [str(tmp_path / "pods"), str(tmp_path / "secrets")]
    (pod,) = podsync.load_pods(sources, secret_key=b"k" * 32)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    runtime = DockerRuntime()

    def app() -> dict:  # type: ignore[type-arg]
        (found,) = (
            c
            for c in containers_of(engine, pod)
            if c["Labels"][podsync.labels.LABEL_CONTAINER] == "app" and c["State"] == "running"
        )
        return found  # type: ignore[no-any-return]

    def env_of(container_id: str) -> set[str]:
        result = runtime.exec_in_container(container_id, ["env"], timeout=10)
        assert 0 == result.exit_code
        return set(result.output.decode().splitlines())

    saved = tmp_path / "plan.json"
    planned = podsync_cmd("plan", "--json", "--out", str(saved), *sources)
    assert 0 == planned.returncode, planned.stderr
    assert PASSWORD.encode() not in saved.read_bytes()
    assert PASSWORD not in planned.stdout + planned.stderr
    # the plan names the Secret it reads at apply (format 11 writes an action on one
    # line, without spaces)
    assert re.search(r'"secret":\s*"default/db-creds"', planned.stdout), planned.stdout

    done = podsync_cmd("apply", "--plan", str(saved))
    assert 0 == done.returncode, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    first = app()
    assert {
        f"DB_password={PASSWORD}",
        "DB_user=app",
        f"DB_URL=postgres://app:{PASSWORD}@db/app",
        f"API_TOKEN={PASSWORD}",
    } <= env_of(first["Id"])
    inspected = engine.api.inspect_container(first["Id"])
    assert f"--token={PASSWORD}" == inspected["Args"][-1]  # the process has it
    labels = json.dumps(inspected["Config"]["Labels"])
    assert PASSWORD not in labels
    assert "<secret" not in labels  # references and digests, not their shown form
    assert '\\"secret\\":\\"default/db-creds\\"' in labels
    # Only the engine's own record of the process has it (Env, Args): nothing podsync wrote.
    config = {k: v for k, v in inspected["Config"].items() if k not in ("Env", "Cmd")}
    assert PASSWORD not in json.dumps(config)

    write_secret(PASSWORD + "-rotated")
    shown = podsync_cmd("plan", *sources)
    assert 0 == shown.returncode, shown.stderr
    assert "spec changed (Secret default/db-creds changed)" in shown.stdout
    assert PASSWORD not in shown.stdout + shown.stderr
    done = podsync_cmd("apply", *sources)
    assert 0 == done.returncode, done.stderr
    second = app()
    assert second["Id"] != first["Id"]
    assert f"API_TOKEN={PASSWORD}-rotated" in env_of(second["Id"])
    assert PASSWORD not in done.stdout + done.stderr


def test_the_engines_refusal_quoting_a_secret_is_masked_in_applys_output(
    engine: docker.DockerClient, tmp_path: Path, cleanup: Cleanup
) -> None:
    """A command that is a Secret's value (``$(TOKEN)``): the engine cannot run it and
    says so, naming it (``exec: "<value>": executable file not found``). apply fails the
    start, and its output - text and JSON - shows the Secret's mask, not its value."""
    podsync_cmd = Podsync(tmp_path)
    name = f"cli-secret-cmd-{uuid.uuid4().hex[:8]}"
    token = "tok-" + uuid.uuid4().hex[:12]
    (tmp_path / "pods").mkdir()
    (tmp_path / "pods" / "bad.yaml").write_text(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: Never
  containers:
    - name: app
      image: {TEST_IMAGE}
      imagePullPolicy: Never
      command: ["$(TOKEN)"]
      env:
        - name: TOKEN
          valueFrom: {{secretKeyRef: {{name: tok, key: token}}}}
---
apiVersion: v1
kind: Secret
metadata: {{name: tok}}
stringData: {{token: {token}}}
"""
    )
    source = str(tmp_path / "pods")
    (pod,) = podsync.load_pods([source], secret_key=b"k" * 32)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")

    done = podsync_cmd("apply", source)
    as_json = podsync_cmd("apply", "--log-format", "json", source)

    output = done.stdout + done.stderr
    assert 0 != done.returncode  # the start failed
    assert "<secret default/tok key token>" in output, output
    assert token not in output
    assert token not in as_json.stdout + as_json.stderr
