"""Orphaned pods within a scope (issue 29): a pod the sources do not describe is
orphaned to the scope that owns it - the node scope and an unscoped caller find every
such pod orphaned, a named scope only its own; another scope's pod is not its to
remove, so not its orphan."""

from __future__ import annotations

import attrs
import pytest

from podsync import NODE_SCOPE, Container, Pod, sync
from podsync.status._pod import orphaned_pod_statuses
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.status.test_status_operate import NOW, OPTIONS, PAUSE


def _pod(name: str) -> Pod:
    return Pod(name, (Container("app", "busybox"),), source="file")


@pytest.mark.parametrize(
    ("scope", "orphaned"),
    [(None, {"a", "b", "plain"}), (NODE_SCOPE, {"a", "b", "plain"}), ("team-a", {"a"})],
    ids=["no-scope", "node-scope", "named-scope-its-own-only"],
)
def test_orphaned_within_the_scope_that_looks(scope: str | None, orphaned: set[str]) -> None:
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW, step=0))
    for pod, made_in in ((_pod("a"), "team-a"), (_pod("b"), "team-b"), (_pod("plain"), None)):
        assert sync([pod], fake, options=OPTIONS, scope=made_in, clock=fake.clock).ok

    statuses = orphaned_pod_statuses(
        fake.containers, desired=[], options=attrs.evolve(OPTIONS, scope=scope)
    )

    assert {"default/a", "default/b", "default/plain"} == {s.pod for s in statuses}
    assert {f"default/{n}" for n in orphaned} == {s.pod for s in statuses if s.orphaned}
