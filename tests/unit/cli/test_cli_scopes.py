"""Scopes on the command line (issue 29), through the CLI's runtime factory and a
``FakeRuntime``: ``apply A/`` then ``apply B/`` keeps A's pods; ``--scope NAME`` removes
only its own scope's pods; another scope's pod is refused; ``down --scope NAME`` removes
a whole scope and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from podsync import NODE_SCOPE
from podsync.cli._args import build_parser
from podsync.cli._planning import _plan_options
from podsync.spec._labels import LABEL_POD_NAME, LABEL_SCOPE
from podsync.spec._ownership import volume_ownership
from podsync.testing import FakeRuntime
from tests.unit.cli import test_cli_unit as unit
from tests.unit.cli.test_cli_unit import Result, mutations, pod_yaml, running_pods, write

# The command-line fixtures of tests/unit/cli/test_cli_unit.py (FakeRuntime, a fake clock).
clock, fake, run = unit.clock, unit.fake, unit.run


def directory(tmp_path: Path, name: str, *pods: str) -> str:
    """A directory of pod files, one per pod."""
    path = tmp_path / name
    path.mkdir()
    for pod in pods:
        write(path, f"{pod}.yaml", pod_yaml(pod))
    return str(path)


def scopes(fake: FakeRuntime) -> dict[str, str]:
    """The scope label of each pod's containers, by pod name ("" for none)."""
    return {
        c.labels[LABEL_POD_NAME]: c.labels.get(LABEL_SCOPE, "")
        for c in fake.containers
        if LABEL_POD_NAME in c.labels
    }


def test_apply_of_one_directory_keeps_the_pods_of_another(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Without a scope apply owns only the pods of its sources: ``apply A/`` then
    ``apply B/`` leaves A's pods running (kubectl apply without --prune)."""
    a = directory(tmp_path, "a", "web", "db")
    b = directory(tmp_path, "b", "cache")

    first = run("apply", a, runtime=fake)
    second = run("apply", b, runtime=fake)

    assert (0, 0) == (first.code, second.code)
    assert {"web", "db", "cache"} == running_pods(fake)
    assert "stop " not in second.out
    assert {"web": "", "db": "", "cache": ""} == scopes(fake)
    # Said once, with how the node scope would remove them (0.1.0's apply did).
    assert "other podsync pod" not in first.err
    assert "2 other podsync pod(s) on the engine left as they are" in second.err
    assert "--scope node" in second.err
    # In a scope, or with --no-delete, nothing is said: nothing would go anyway.
    assert "other podsync pod" not in run("plan", "--scope", "x", b, runtime=fake).err
    assert "other podsync pod" not in run("plan", "--no-delete", b, runtime=fake).err


def test_a_named_scope_removes_only_its_own_pods(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """Two scopes, each applied from its own directory: a pod that leaves one scope's
    directory is removed by that scope's next apply, the other scope's pods stay."""
    a = directory(tmp_path, "a", "web", "db")
    b = directory(tmp_path, "b", "cache")
    assert 0 == run("apply", "--scope", "team-a", a, runtime=fake).code
    assert 0 == run("apply", "--scope", "team-b", b, runtime=fake).code
    assert {"web": "team-a", "db": "team-a", "cache": "team-b"} == scopes(fake)

    Path(a, "db.yaml").unlink()
    again_b = run("apply", "--scope", "team-b", b, runtime=fake)
    again_a = run("apply", "--scope", "team-a", a, runtime=fake)

    assert (0, 0) == (again_b.code, again_a.code)
    assert "stop " not in again_b.out
    assert "stop default/db/app" in again_a.out
    assert {"web", "cache"} == running_pods(fake)


def test_a_pod_of_another_scope_is_refused(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A pod another scope runs is rejected, exit 1, with the way to take it over; the
    node scope adopts it, replacing nothing."""
    a = directory(tmp_path, "a", "web")
    assert 0 == run("apply", "--scope", "team-a", a, runtime=fake).code
    before = mutations(fake)

    unscoped = run("apply", a, runtime=fake)
    other = run("apply", "--scope", "team-b", a, runtime=fake)
    node = run("apply", "--scope", "node", a, runtime=fake)

    assert (1, 1, 0) == (unscoped.code, other.code, node.code)
    assert "scope 'team-a'" in unscoped.err
    assert "--scope node" in other.err
    assert before == mutations(fake)
    assert {"web": "team-a"} == scopes(fake)


@pytest.mark.parametrize("scope", ["Team", "a b", "a-", "a/b", "x" * 64])
def test_a_bad_scope_is_a_usage_error(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, scope: str
) -> None:
    source = write(tmp_path, "a.yaml", pod_yaml("a"))

    result = run("apply", "--scope", scope, source, runtime=fake)

    assert 1 == result.code
    assert "bad scope" in result.err
    assert [] == mutations(fake)


def test_down_scope_removes_the_whole_scope_and_nothing_else(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """``down --scope NAME`` without sources: every container and volume of that
    scope goes; another scope's and an unscoped apply's pods stay."""
    a = directory(tmp_path, "a", "web", "db")
    b = directory(tmp_path, "b", "cache")
    c = directory(tmp_path, "c", "old")
    assert 0 == run("apply", "--scope", "team-a", a, runtime=fake).code
    assert 0 == run("apply", "--scope", "team-b", b, runtime=fake).code
    assert 0 == run("apply", c, runtime=fake).code
    volumes = {o.pod_uid for v in fake.list_volumes() if (o := volume_ownership(v))}
    assert len(volumes) == 4  # each pod's state volume

    result = run("down", "--scope", "team-a", runtime=fake)

    assert 0 == result.code, result.err
    assert {"cache": "team-b", "old": ""} == scopes(fake)
    left = {o.pod_uid for v in fake.list_volumes() if (o := volume_ownership(v))}
    assert len(left) == 2
    assert "remove volume podsync-state_" in result.out


def test_down_of_a_file_in_a_scope_leaves_another_scopes_pod(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """``down --scope NAME FILE``: the file's pods of that scope (or of none) go; one of
    another scope is left, and said so (exit 1)."""
    web = write(tmp_path, "web.yaml", pod_yaml("web"))
    db = write(tmp_path, "db.yaml", pod_yaml("db"))
    assert 0 == run("apply", "--scope", "team-a", web, runtime=fake).code
    assert 0 == run("apply", "--scope", "team-b", db, runtime=fake).code

    result = run("down", "--scope", "team-a", web, db, runtime=fake)

    assert 1 == result.code
    assert {"db": "team-b"} == scopes(fake)
    assert "scope 'team-b'" in result.err


def test_down_of_a_file_removes_its_pods_whatever_their_scope(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """``down FILE``: the caller named the pods, so they go, whichever scope runs them."""
    web = write(tmp_path, "web.yaml", pod_yaml("web"))
    db = write(tmp_path, "db.yaml", pod_yaml("db"))
    assert 0 == run("apply", "--scope", "team-a", web, db, runtime=fake).code

    result = run("down", web, runtime=fake)

    assert 0 == result.code
    assert {"db": "team-a"} == scopes(fake)


def test_down_needs_sources_or_a_scope(run: Callable[..., Result], fake: FakeRuntime) -> None:
    result = run("down", runtime=fake)

    assert 1 == result.code
    assert "--scope" in result.err
    assert [] == mutations(fake)


@pytest.mark.parametrize(
    ("argv", "scope"),
    [
        (["run", "pods/"], NODE_SCOPE),
        (["run", "--scope", "team-a", "pods/"], "team-a"),
        (["apply", "pods/"], None),
        (["apply", "--scope", "node", "pods/"], NODE_SCOPE),
        (["plan", "--scope", "team-a", "pods/"], "team-a"),
        (["status", "--scope", "team-a"], "team-a"),
    ],
    ids=[
        "run-owns-the-node",
        "run-narrowed",
        "apply-owns-its-pods",
        "apply-node",
        "plan",
        "status",
    ],
)
def test_the_scope_each_command_plans_in(argv: list[str], scope: str | None) -> None:
    """``podsync run`` is the node agent: it owns the node unless ``--scope`` narrows
    it; ``plan``, ``apply`` and ``status`` own only their sources' pods unless told."""
    args = build_parser().parse_args(argv)

    assert scope == _plan_options(args).scope
