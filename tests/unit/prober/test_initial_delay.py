"""A probe's initialDelaySeconds counts from the container's start, not its creation
(the kubelet's prober worker, pkg/kubelet/prober/worker.go doProbe: skip while the
seconds since State.StartedAt are fewer than initialDelaySeconds).

One table: when the container was created and started, when the round runs, and
whether its liveness probe runs. The engine is the FakeRuntime, whose start records
Docker's StartedAt from its clock.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from podsync import ObservedContainer, Pod, apply, parse_pods
from podsync.actions._actions import CreateSpec, Kill, Reason
from podsync.actions._options import PlanOptions
from podsync.planner._plan import plan
from podsync.prober import ProbeKind
from podsync.prober._handlers import probe_targets
from podsync.prober._probing import probe
from podsync.runtime.fake._runtime import FakeRuntime
from podsync.testing import FakeClock

CREATED = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 5f0e4c3d-0003-4a5e-8e7a-5d6c2f1e9b00}
spec:
  containers:
  - name: app
    image: busybox
    livenessProbe:
      exec: {command: [check]}
      initialDelaySeconds: 10
"""


def _pod() -> Pod:
    (pod,) = parse_pods(POD, source="file")
    return pod


CASES = [
    # id, seconds from create to start, seconds from create to the round, probed?
    ("started at once, before the delay", 0, 9, False),
    ("started at once, at the delay", 0, 10, True),
    ("started late: the delay counts from the start", 8, 12, False),
    ("started late, past the delay from the start", 8, 18, True),
    ("started late, whole seconds as the worker counts them", 8, 17.9, False),
]


@pytest.mark.parametrize(
    ("start_after", "at", "probed"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_the_initial_delay_counts_from_the_start(
    tmp_path: Path, start_after: float, at: float, probed: bool
) -> None:
    """The liveness probe runs only once initialDelaySeconds have passed since the
    container started (State.StartedAt), however long ago it was created."""
    rt = FakeRuntime(images=["busybox"], clock=FakeClock(CREATED, step=0))
    pod = _pod()
    app = ObservedContainer(
        "c1",
        "k8s_app.1_web.default.file_5f0e4c3d-0003-4a5e-8e7a-5d6c2f1e9b00_1",
        "busybox",
        {
            "io.podsync.pod.uid": pod.uid,
            "io.podsync.pod.name": "web",
            "io.podsync.pod.namespace": "default",
            "io.podsync.pod.source": "file",
            "io.podsync.container.name": "app",
        },
        created=CREATED,
        running=True,
        started_at=CREATED + start_after,
    )
    rt.add_container(app)

    round_ = probe([pod], rt.containers, rt, root_dir=str(tmp_path), now=CREATED + at)
    targets = probe_targets([pod], rt.containers, now=CREATED + at)

    ran = [o.target.kind for o in round_.outcomes]
    assert ([ProbeKind.LIVENESS] if probed else []) == ran
    # probe_liveness's one-shot rule counts from the start too (strict "<", not whole
    # seconds: the seed's healthy()).
    assert (CREATED + at - (CREATED + start_after) >= 10) == bool(targets)


def test_the_fake_engine_records_when_a_container_started() -> None:
    """FakeRuntime reports Docker's StartedAt: its clock's time at the start, which a
    test can hold back from the creation."""
    clock = FakeClock(CREATED, step=0)
    rt = FakeRuntime(images=["busybox"], clock=clock)
    cid = rt.create_container(CreateSpec(name="late", image="busybox"))
    clock.advance(8)
    rt.start_container(cid)

    (seen,) = rt.containers
    assert (CREATED, CREATED + 8) == (seen.created, seen.started_at)
    assert [CREATED + 8] == [c.started_at for c in rt.list_containers()]


@pytest.mark.parametrize(
    ("start_after", "at", "killed"),
    [case[1:] for case in CASES if case[3] == (case[2] - case[1] >= 10)],
    ids=[case[0] for case in CASES if case[3] == (case[2] - case[1] >= 10)],
)
def test_the_plan_ignores_a_failed_verdict_within_the_delay_from_the_start(
    start_after: float, at: float, killed: bool
) -> None:
    """The planner's side of the rule (``_unhealthy``): a liveness failure of a
    container that started less than initialDelaySeconds ago does not kill it."""
    pod = _pod()
    clock = FakeClock(CREATED, step=0)
    rt = FakeRuntime(images=["busybox", PAUSE], clock=clock)
    options = PlanOptions(network_image=PAUSE)
    first = plan([pod], [], images=rt.images, now=CREATED, options=options)
    assert apply(first, rt, clock=clock).ok
    observed = [
        attrs.evolve(c, started_at=CREATED + start_after) if "_app." in c.name else c
        for c in rt.containers
    ]
    app = next(c for c in observed if "_app." in c.name)

    p = plan(
        [pod],
        observed,
        images=rt.images,
        now=CREATED + at,
        liveness={app.id: False},
        options=options,
    )

    assert killed == any(
        isinstance(a, Kill) and a.container == "app" and a.reason is Reason.UNHEALTHY
        for a in p.actions
    )
