"""``PodStatus.scope`` (issue 30): the scope that runs a pod, from the ``io.podsync.scope``
label its containers carry; ``None`` for a pod no named scope made (an unscoped sync's, the
node scope's) and for one with no container yet. The same for a desired pod
(``pod_status``) and one judged from the engine alone (``orphaned_pod_statuses``), and in
the JSON (``podsync status -o json``)."""

from __future__ import annotations

import json

import pytest

from podsync import NODE_SCOPE, Container, Pod, pod_status, sync
from podsync.status._json import statuses_to_json
from podsync.status._pod import orphaned_pod_statuses
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.status.test_status_operate import NOW, OPTIONS, PAUSE

WEB = Pod("web", (Container("app", "busybox"),), source="file")

# (id, the scope the pod was synced in - "" for not synced at all -, its status' scope)
ROWS: list[tuple[str, str | None, str | None]] = [
    ("unscoped-sync", None, None),
    ("node-scope", NODE_SCOPE, None),
    ("named-scope", "team-a", "team-a"),
    ("not-on-the-engine", "", None),
]


def _engine(made_in: str | None) -> FakeRuntime:
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW, step=0))
    if made_in != "":
        assert sync([WEB], fake, options=OPTIONS, scope=made_in, clock=fake.clock).ok
    return fake


@pytest.mark.parametrize(("made_in", "scope"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_desired_pods_scope(made_in: str | None, scope: str | None) -> None:
    fake = _engine(made_in)

    status = pod_status(WEB, fake.containers, options=OPTIONS)

    assert scope == status.scope
    assert scope == json.loads(statuses_to_json([status]))["pods"][0]["scope"]


@pytest.mark.parametrize(
    ("made_in", "scope"), [r[1:] for r in ROWS if r[1] != ""], ids=[r[0] for r in ROWS[:-1]]
)
def test_a_pod_judged_from_the_engine_alone(made_in: str | None, scope: str | None) -> None:
    fake = _engine(made_in)

    (status,) = orphaned_pod_statuses(fake.containers, options=OPTIONS)

    assert ("default/web", scope) == (status.pod, status.scope)
