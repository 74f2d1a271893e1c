"""The loop's scope (issue 29): a pod whose file leaves the sources is removed by a loop
that owns it - the node scope (``podsync run``'s default), or a named scope that made
it - and left running by a loop without a scope (``Reconciler``'s default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from podsync import NODE_SCOPE, GCPolicy, PlanOptions
from tests.unit.loop.test_reconciler import make_loop, pod_yaml

WEB = [("web", "app"), ("web", "net")]
DB = [("db", "app"), ("db", "net")]


@pytest.mark.parametrize(
    ("scope", "left"),
    [(None, DB + WEB), (NODE_SCOPE, DB), ("team-a", DB)],
    ids=["no-scope-leaves-it", "node-scope-removes-it", "named-scope-removes-its-own"],
)
def test_a_file_removed_from_the_sources(
    tmp_path: Path, scope: str | None, left: list[tuple[str, str]]
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    (pods / "db.yaml").write_text(pod_yaml("db"))
    options = PlanOptions(
        network_image="pause:1", root_dir=str(tmp_path / "root"), gc=GCPolicy(min_age=0)
    )
    loop = make_loop(tmp_path, [str(pods)], options=options, source_period=1, scope=scope)
    loop.tick()
    (pods / "web.yaml").unlink()
    loop.advance(1)

    assert left == loop.running()
