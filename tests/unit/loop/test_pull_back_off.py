"""A failed image pull backs off across syncs, as the kubelet's ImagePullBackOff: the
caller that syncs again and again keeps the failures (``sync(pull_failures=...)``), the
plan waits them out, and the status says ``ErrImagePull`` (the engine's error) then
``ImagePullBackOff``. Pull failures cannot be made real here (no registry): the
FakeRuntime fails the pulls."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from podsync import PullFailure, parse_pods, pod_status, sync
from podsync.actions._actions import Reason, Wait
from podsync.actions._options import PlanOptions
from podsync.testing import FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  uid: 6f1f3c1e-5a8e-4a47-9d0b-4b8c2e7a9f10
spec:
  containers:
  - name: app
    image: registry.example.com/team/myapp:1.4
"""
DENIED = "pull access denied for registry.example.com/team/myapp"


@pytest.fixture
def options(tmp_path: Path) -> PlanOptions:
    return PlanOptions(root_dir=str(tmp_path / "root"))


def pulls(rt: FakeRuntime) -> list[str]:
    return [c.args[0] for c in rt.calls if c.name == "pull"]


def test_a_failed_pull_waits_out_its_back_off_and_the_status_says_why(options):
    """Sync 1 pulls and fails; sync 2, 3 s later, does not pull (ImagePullBackOff, 7 s
    left); sync 3, after the 10 s, pulls again (ErrImagePull with the engine's error
    while it does) and fails again: 20 s now; once the registry answers, the container
    runs and the failure holds nothing."""
    (pod,) = parse_pods(POD)
    rt = FakeRuntime(images=[PAUSE])
    rt.fail("pull", match="myapp", error=DENIED)
    failures: dict[tuple[str, str], PullFailure] = {}

    def at(now: float):
        result = sync(
            [pod], rt, options=options, now=now, clock=lambda: now, pull_failures=failures
        )
        (app,) = pod_status(
            pod,
            result.observation.containers,
            plan=result.plan,
            pull_failures=tuple(failures.values()) if result.plan.pulls else (),
        ).containers
        return result, app

    first, _ = at(NOW)
    assert ["registry.example.com/team/myapp:1.4"] == pulls(rt)
    assert not first.ok
    assert [(pod.uid, "registry.example.com/team/myapp:1.4", NOW, 10.0)] == [
        (f.pod_uid, f.image, f.at, f.back_off) for f in failures.values()
    ]
    assert DENIED in next(iter(failures.values())).message

    rt.clear_calls()
    second, app = at(NOW + 3)
    assert [] == pulls(rt)
    assert [(Reason.IMAGE_PULL_BACK_OFF, 7.0)] == [
        (a.reason, a.seconds) for a in second.plan.actions if isinstance(a, Wait)
    ]
    assert ("ImagePullBackOff", 'Back-off pulling image "registry.example.com/team/myapp:1.4"') == (
        app.reason,
        app.message,
    )

    _, app = at(NOW + 10)
    assert ["registry.example.com/team/myapp:1.4"] == pulls(rt)
    assert "ErrImagePull" == app.reason
    assert DENIED in app.message
    assert [20.0] == [f.back_off for f in failures.values()]

    rt.clear_faults()
    rt.clear_calls()
    _, app = at(NOW + 25)
    assert [] == pulls(rt)
    assert "ImagePullBackOff" == app.reason
    done, _ = at(NOW + 30)
    assert ["registry.example.com/team/myapp:1.4"] == pulls(rt)
    assert done.ok
    assert ["net", "app"] == [
        c.args[0].labels["io.podsync.container.name"] for c in rt.calls if c.name == "create"
    ]


def test_without_a_keeper_every_sync_pulls_again(options):
    """A one-shot sync remembers nothing: each pulls (what ``podsync apply`` without
    ``--wait`` does, once)."""
    (pod,) = parse_pods(POD)
    rt = FakeRuntime(images=[PAUSE])
    rt.fail("pull", match="myapp", error=DENIED)

    for now in (NOW, NOW + 1):
        sync([pod], rt, options=options, now=now, clock=lambda at=now: at)

    assert 2 == pulls(rt).count("registry.example.com/team/myapp:1.4")


def test_the_failure_is_the_pods_that_needed_the_image(options):
    """Two pods need the image; both waited for the one failed pull, so both back off,
    each with its own entry."""
    (first,) = parse_pods(POD)
    (second,) = parse_pods(
        POD.replace("name: web", "name: api").replace("4b8c2e7a9f10", "4b8c2e7a9f11")
    )
    rt = FakeRuntime(images=[PAUSE])
    rt.fail("pull", match="myapp", error=DENIED)
    failures: dict[tuple[str, str], PullFailure] = {}

    sync([first, second], rt, options=options, now=NOW, clock=lambda: NOW, pull_failures=failures)

    assert sorted([first.uid, second.uid]) == sorted(uid for uid, _ in failures)


def test_a_failed_pull_of_the_network_image_backs_off(options):
    """The network image is pulled when absent; a failed pull of it is not tried again
    for the pod before its back-off ends, and the status says so, as for an app
    image."""
    pause = "registry.example.com/infra/pause:3.10"
    options = attrs.evolve(options, network_image=pause)
    (pod,) = parse_pods(POD)
    rt = FakeRuntime(images=["registry.example.com/team/myapp:1.4"])
    rt.fail("pull", match="pause", error="pull access denied for infra/pause")
    failures: dict[tuple[str, str], PullFailure] = {}

    def at(now: float) -> str:
        result = sync(
            [pod], rt, options=options, now=now, clock=lambda: now, pull_failures=failures
        )
        return pod_status(
            pod, result.observation.containers, plan=result.plan, pull_failures=failures.values()
        ).message

    at(NOW)
    assert [pause] == pulls(rt)
    assert [(pod.uid, pause, 10.0)] == [(f.pod_uid, f.image, f.back_off) for f in failures.values()]

    rt.clear_calls()
    message = at(NOW + 3)
    assert [] == pulls(rt)
    assert message.startswith(
        "not running (0/1 containers): network container ImagePullBackOff: "
        f'Back-off pulling image "{pause}"'
    ), message

    rt.clear_faults()
    at(NOW + 10)
    assert [pause] == pulls(rt)
    assert ["net", "app"] == [
        c.args[0].labels["io.podsync.container.name"] for c in rt.calls if c.name == "create"
    ]
