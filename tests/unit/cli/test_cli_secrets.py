"""Secret values through the command line (FakeRuntime): the host's digest key under
--root-dir, plan text, JSON and YAML and saved plans without the value, ``apply --plan`` reading
the Secrets again and refusing another value, a changed Secret naming itself."""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import yaml

from podsync.spec._labels import LABEL_CONTAINER
from podsync.testing import FakeRuntime
from tests.unit.cli import test_cli_unit as unit
from tests.unit.cli.test_cli_unit import IMAGE, PAUSE, Result, mutations, write

# The command-line fixtures of tests/unit/cli/test_cli_unit.py (FakeRuntime, a fake clock).
clock, fake, run = unit.clock, unit.fake, unit.run

PASSWORD = "hunter2-s3cr3t"


def secret(password: str = PASSWORD) -> str:
    return f"""\
apiVersion: v1
kind: Secret
metadata:
  name: db-creds
data:
  password: {base64.b64encode(password.encode()).decode()}
"""


POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: {IMAGE}
    command: ["sh", "-c", "run --url=$(DB_URL)"]
    env:
    - name: DB_PASSWORD
      valueFrom:
        secretKeyRef: {{name: db-creds, key: password}}
    - name: DB_URL
      value: postgres://app:$(DB_PASSWORD)@db
"""


def sources(tmp_path: Path, password: str = PASSWORD) -> str:
    """The pod in one file and its Secret in another, in one directory."""
    directory = tmp_path / "pods"
    directory.mkdir(exist_ok=True)
    write(directory, "secret.yaml", secret(password))
    write(directory, "web.yaml", POD)
    return str(directory)


def app_env(fake: FakeRuntime) -> list[str]:
    (app,) = [c for c in fake.containers if c.labels.get(LABEL_CONTAINER) == "app" and c.running]
    spec = fake.spec(app.id)
    assert spec is not None
    return list(spec.env)


def test_plan_output_and_the_saved_plan_never_hold_the_value(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    pods = sources(tmp_path)
    saved = tmp_path / "p.json"

    shown = run("plan", "--out", str(saved), pods, runtime=fake)
    as_json = run("plan", "--json", pods, runtime=fake)
    as_yaml = run("plan", "-o", "yaml", pods, runtime=fake)
    saved_yaml = run("show", "-o", "yaml", str(saved))

    assert 0 == shown.code == as_json.code == as_yaml.code == saved_yaml.code
    outputs = (shown, as_json, as_yaml, saved_yaml)
    for text in (*(r.out for r in outputs), *(r.err for r in outputs), saved.read_text()):
        assert PASSWORD not in text
    # YAML is the JSON's document: the Secret by reference and digest, as there.
    assert json.loads(as_json.out) == yaml.safe_load(as_yaml.out)
    assert json.loads(saved.read_text()) == yaml.safe_load(saved_yaml.out)
    assert "secret: default/db-creds" in as_yaml.out
    assert '"secret":"default/db-creds"' in saved.read_text()
    key = tmp_path / "root" / "secret-digest.key"
    assert 0o600 == stat.S_IMODE(os.stat(key).st_mode)
    assert [] == mutations(fake)


def test_a_saved_plan_gets_the_values_again_from_its_sources(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    pods = sources(tmp_path)
    saved = str(tmp_path / "p.json")
    run("plan", "--out", saved, pods, runtime=fake)

    result = run("apply", "--plan", saved, runtime=fake)

    assert 0 == result.code, result.err
    assert f"DB_PASSWORD={PASSWORD}" in app_env(fake)
    assert f"DB_URL=postgres://app:{PASSWORD}@db" in app_env(fake)
    assert PASSWORD not in result.out + result.err


def test_a_saved_plan_whose_secret_changed_is_refused_and_changes_nothing(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    pods = sources(tmp_path)
    saved = str(tmp_path / "p.json")
    run("plan", "--out", saved, pods, runtime=fake)
    sources(tmp_path, "changed-since")
    fake.clear_calls()

    result = run("apply", "--plan", saved, runtime=fake)

    assert 1 == result.code
    assert [] == mutations(fake)
    assert result.err_lines == [
        "podsync: error: the saved plan cannot be applied: the value of Secret "
        "default/db-creds key password is not the one the plan was made with; make the plan "
        "again (podsync plan --out FILE)"
    ]
    (tmp_path / "pods" / "secret.yaml").unlink()
    result = run("apply", "--plan", saved, runtime=fake)
    assert result.err_lines == [
        "podsync: error: the saved plan cannot be applied: Secret default/db-creds is not in "
        "the sources; make the plan again (podsync plan --out FILE)"
    ]
    assert [] == mutations(fake)


def test_a_changed_secret_replaces_the_container_and_the_plan_names_it(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    assert 0 == run("apply", sources(tmp_path), runtime=fake).code
    assert "No changes" in run("plan", sources(tmp_path), runtime=fake).out

    result = run("apply", sources(tmp_path, "changed-since"), runtime=fake)

    assert 0 == result.code
    assert "replace default/web/app: spec changed (Secret default/db-creds changed)" in result.out
    assert "DB_PASSWORD=changed-since" in app_env(fake)
    assert "changed-since" not in result.out + result.err
    assert PASSWORD not in result.out + result.err


def test_status_and_describe_read_the_pods_with_the_same_key(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """status and describe judge the running containers against the pod files: with the
    host's key under the same root directory the digests match, and nothing is due."""
    pods = sources(tmp_path)
    assert 0 == run("apply", pods, runtime=fake).code
    options = ["--root-dir", str(tmp_path / "root"), "--network-image", PAUSE]
    options += ["--network-mode", "none"]

    status = run("status", *options, pods, runtime=fake)
    described = run("describe", *options, "web", "-f", pods, runtime=fake)

    assert 0 == status.code == described.code, status.err + described.err
    assert "Running" in status.out
    assert "Next sync:\n  nothing to do" in described.out
    assert PASSWORD not in status.out + status.err + described.out + described.err
