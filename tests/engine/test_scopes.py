"""Scopes on a real Docker engine (issue 29): two scopes, one sync each, and neither
removes the other's pods; ``podsync.down(scope=...)`` removes its own containers and
volumes and nothing else.

Each scope's name is this test's own (the engine is shared with other test sessions,
whose pods no sync here may touch: a named scope removes only what carries its name).

Network rule (``tests/support/engine.py``): network mode ``none`` only.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import docker

import podsync
from podsync import PlanOptions, Pod, Reason, parse_pods
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_POD_UID, LABEL_SCOPE
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

# Exits 0 at once on SIGTERM: the stops are quick.
SERVE = "trap 'exit 0' TERM; while :; do sleep 1; done"


def _pod(cleanup: Cleanup, name: str) -> Pod:
    uid = str(uuid.uuid4())
    text = (
        "apiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: {name}-{uid[:6]}, uid: {uid}}}\n"
        "spec:\n  terminationGracePeriodSeconds: 2\n  containers:\n"
        f"  - {{name: app, image: {TEST_IMAGE}, imagePullPolicy: Never,\n"
        f'     command: [/bin/sh, -c, "{SERVE}"]}}\n'
    )
    (pod,) = parse_pods(text, source="file")
    cleanup.add_label(f"{LABEL_POD_UID}={pod.uid}")
    return pod


def _state(engine: docker.DockerClient, pod: Pod) -> tuple[dict[str, str], dict[str, str]]:
    """The pod's containers (name -> scope label) and its volumes (name -> scope
    label)."""
    label = f"{LABEL_POD_UID}={pod.uid}"
    containers = engine.api.containers(all=True, filters={"label": label})
    volumes = engine.api.volumes(filters={"label": label}).get("Volumes") or ()
    return (
        {c["Names"][0]: (c["Labels"] or {}).get(LABEL_SCOPE, "") for c in containers},
        {v["Name"]: (v["Labels"] or {}).get(LABEL_SCOPE, "") for v in volumes},
    )


def test_two_scopes_leave_each_other_alone_and_down_removes_one(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    a, b = f"test-a-{suffix}", f"test-b-{suffix}"
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        stop_timeout=2,
    )
    web, db, cache = _pod(cleanup, "web"), _pod(cleanup, "db"), _pod(cleanup, "cache")
    with DockerRuntime() as runtime:
        first_a = podsync.sync([web, db], runtime, options=options, scope=a, probe=False)
        first_b = podsync.sync([cache], runtime, options=options, scope=b, probe=False)
        assert first_a.ok, first_a.apply_result.summary()
        assert first_b.ok, first_b.apply_result.summary()
        cache_before = _state(engine, cache)
        # Every container and the state volume carry their scope's name.
        assert {a} == {*_state(engine, web)[0].values(), *_state(engine, web)[1].values()}
        assert {b} == {*cache_before[0].values(), *cache_before[1].values()}
        assert len(cache_before[0]) == 2  # the network container and app
        assert len(cache_before[1]) == 1  # the pod's state volume

        # Scope a no longer desires db: it goes; scope b's pod is not a's to touch.
        second_a = podsync.sync([web], runtime, options=options, scope=a, probe=False)
        # Scope b syncs nothing but its own: web and db are a's, never b's to remove.
        second_b = podsync.sync([cache], runtime, options=options, scope=b, probe=False)
        # A pod of scope a is refused to scope b (which still desires its own).
        taken = podsync.sync([web, cache], runtime, options=options, scope=b, probe=False)

        assert second_a.ok, second_a.apply_result.summary()
        assert {db.uid} == {p.uid for p in second_a.plan.pods}
        assert [] == [p.uid for p in second_b.plan.pods]
        assert [(web.uid, Reason.SCOPE_CONFLICT)] == [
            (r.uid, r.reason) for r in taken.plan.rejected
        ]
        assert not taken.plan.has_changes
        assert all(s == "running" for s in _running(engine, web).values())
        assert all(s == "running" for s in _running(engine, cache).values())
        assert not any(s == "running" for s in _running(engine, db).values())

        # down(scope=b): b's containers and volumes go, a's stay.
        down_b = podsync.down(runtime=runtime, scope=b, options=options)
        assert down_b.ok, down_b.apply_result.summary()
        assert ({}, {}) == _state(engine, cache)
        assert all(s == "running" for s in _running(engine, web).values())

        # down(scope=a): the rest of a's, db's stopped containers and volume included.
        down_a = podsync.down(runtime=runtime, scope=a, options=options)
        assert down_a.ok, down_a.apply_result.summary()
        assert ({}, {}) == _state(engine, web)
        assert ({}, {}) == _state(engine, db)


def _running(engine: docker.DockerClient, pod: Pod) -> dict[str, str]:
    """The state of each of the pod's containers, by name."""
    label = f"{LABEL_POD_UID}={pod.uid}"
    return {
        c["Names"][0]: c["State"] for c in engine.api.containers(all=True, filters={"label": label})
    }
