"""One observation type: ``observe()`` returns an ``Observation`` and ``plan()`` takes it
whole (issue 29), so a caller cannot leave a field out.

The trap it closes: planned field by field, as the README's recipe once did
(``plan(pods, obs.containers, images=obs.images, pod_dirs=obs.pod_dirs, ...)``), a plan
made after a container exits does not see the named volumes or the records of the
files podsync wrote, so it creates the pod's volumes again and rewrites its configMap
files (the issue saw ``create volume podsync-state_...``; a network container of this
version mounts the state volume itself, and the pod's emptyDir and configMap volumes
show the same trap).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import podsync
import podsync.loop._sync
import podsync.model._observation
from podsync import CreateVolume, Observation, Plan, RemovePodDir, WriteVolume
from podsync.testing import FakeClock, FakeRuntime

# A job whose container fails, with a configMap volume (files podsync writes, and a
# record of them) and an emptyDir volume (an engine volume podsync makes).
JOB = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: job-config}
data: {MODE: full}
---
apiVersion: v1
kind: Pod
metadata: {name: job, uid: 7d1c6a0e-27aa-4c1e-9b3e-1f2a3b4c5d6e}
spec:
  restartPolicy: OnFailure
  containers:
  - name: work
    image: busybox:1
    command: [sh, -c, "make report"]
    volumeMounts:
    - {name: config, mountPath: /etc/job}
    - {name: scratch, mountPath: /scratch}
  volumes:
  - {name: config, configMap: {name: job-config}}
  - {name: scratch, emptyDir: {}}
"""


def _exited(root: Path) -> tuple[list[podsync.Pod], FakeRuntime, FakeClock, podsync.PlanOptions]:
    """The job synced on a FakeRuntime, then its container exited with code 1."""
    pods = podsync.parse_pods(JOB, source_name="pods/job.yaml")
    options = podsync.PlanOptions(root_dir=str(root))
    clock = FakeClock(1_000.0, step=0)
    fake = FakeRuntime(images=["busybox:1", "registry.k8s.io/pause:3.10"], clock=clock)
    assert podsync.sync(pods, fake, options=options, clock=clock).ok
    (work,) = [c for c in fake.containers if c.name.startswith("k8s_work.")]
    fake.exit(work.id, 1)
    clock.advance(5)
    return pods, fake, clock, options


def _volume_work(the_plan: Plan) -> list[str]:
    return [
        a.message
        for pod in the_plan.pods
        for a in pod.actions
        if isinstance(a, CreateVolume | WriteVolume)
    ]


def test_a_plan_from_the_observation_whole_only_restarts_the_container(tmp_path: Path) -> None:
    pods, fake, clock, options = _exited(tmp_path)
    obs = podsync.observe(fake, options.root_dir, desired=pods)

    the_plan = podsync.plan(pods, obs, now=clock(), options=options)

    assert _volume_work(the_plan) == []
    assert [a.message for p in the_plan.pods for a in p.actions] == [
        "restart default/job/work: exited with code 1 (restart policy OnFailure, restart 1)"
    ]


# A pod whose containers mount a claim's and an emptyDir's engine volumes, and one that
# requests more CPU than the node has.
MOUNTS = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 5e9a7c20-27aa-4c1e-9b3e-1f2a3b4c5d6e}
spec:
  containers:
  - name: app
    image: busybox:1
    command: [httpd, -f]
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
    - {name: data, mountPath: /data}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: data, persistentVolumeClaim: {claimName: data}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, uid: 0c24ab4a-b380-5514-9b5e-c5b208e5aa4e}
spec:
  containers:
  - name: app
    image: busybox:1
    command: [httpd, -f]
    resources: {requests: {cpu: "4"}}
"""


def test_observe_lists_what_the_plan_of_its_desired_pods_needs(tmp_path: Path) -> None:
    """A running pod's container is edited: the plan replaces it, and from
    ``observe(..., desired=pods)`` it knows the claim's and the emptyDir's volumes exist
    (listed because a desired pod mounts them) and the node's capacity (asked because a
    desired pod requests CPU)."""
    web, big = podsync.parse_pods(MOUNTS, source_name="pods/web.yaml")
    options = podsync.PlanOptions(root_dir=str(tmp_path))
    clock = FakeClock(1_000.0, step=0)
    fake = FakeRuntime(
        images=["busybox:1", "registry.k8s.io/pause:3.10"],
        clock=clock,
        capacity=podsync.ResourceList(cpu=2000, memory=1 << 30),
    )
    assert podsync.sync([web], fake, options=options, clock=clock).ok
    (edited,) = podsync.parse_pods(
        MOUNTS.split("---")[0].replace("httpd, -f", "httpd, -f, -v"), source_name="pods/web.yaml"
    )
    pods = [edited, big]

    obs = podsync.observe(fake, options.root_dir, desired=pods)
    the_plan = podsync.plan(pods, obs, now=clock(), options=options)

    assert obs.volumes_listed
    assert obs.capacity == podsync.ResourceList(cpu=2000, memory=1 << 30)
    assert _volume_work(the_plan) == []
    assert [r.reason.value for r in the_plan.rejected] == ["OutOfcpu"]
    # Without the desired pods, the observation has neither: a plan from it creates the
    # volumes again and admits the pod that does not fit.
    blind = podsync.plan(pods, podsync.observe(fake, options.root_dir), now=clock())
    assert len(_volume_work(blind)) == 2
    assert blind.rejected == ()


def test_field_by_field_without_the_volumes_is_the_trap(tmp_path: Path) -> None:
    """The old recipe's call still plans - and makes the volumes and files again."""
    pods, fake, clock, options = _exited(tmp_path)
    obs = podsync.observe(fake, options.root_dir, desired=pods)

    the_plan = podsync.plan(
        pods,
        obs.containers,
        images=obs.images,
        pod_dirs=obs.pod_dirs,
        now=clock(),
        options=options,
    )

    created = _volume_work(the_plan)
    assert any(m.startswith("create volume podsync-emptydir_") for m in created), created
    assert any(m.startswith("write default/job volume config") for m in created), created


def test_field_by_field_with_every_field_is_the_same_plan(tmp_path: Path) -> None:
    pods, fake, clock, options = _exited(tmp_path)
    obs = podsync.observe(fake, options.root_dir, desired=pods)
    now = clock()

    whole = podsync.plan(pods, obs, now=now, options=options)
    by_field = podsync.plan(
        pods,
        list(obs.containers),
        now=now,
        options=options,
        images=list(obs.images),
        pod_dirs=set(obs.pod_dirs),
        volumes=list(obs.volumes),
        volume_files=list(obs.volume_files),
        empty_dirs=set(obs.empty_dirs),
        capacity=obs.capacity,
    )

    assert whole == by_field
    assert whole.fingerprint == by_field.fingerprint


def _copies(the_plan: Plan) -> list[str]:
    return [
        a.copy_from
        for p in the_plan.pods
        for a in p.actions
        if isinstance(a, CreateVolume) and a.copy_from
    ]


def _torn_down(the_plan: Plan) -> list[str]:
    return [a.pod_uid for a in the_plan.actions if isinstance(a, RemovePodDir)]


GONE = "9f1e2d3c-4b5a-4c6d-8e7f-001122334455"  # no desired pod's uid


@pytest.mark.parametrize(
    ("keyword", "value", "seen"),
    [
        # a pod directory of a pod no longer desired: torn down
        ("pod_dirs", {GONE}, _torn_down),
        # the capacity: the pod that requests 4 CPUs does not fit in 2
        ("capacity", podsync.ResourceList(cpu=2000, memory=1 << 30),
         lambda p: [r.reason.value for r in p.rejected]),
        # an earlier podsync's emptyDir host directory: copied into the new volume
        ("empty_dirs", {("5e9a7c20-27aa-4c1e-9b3e-1f2a3b4c5d6e", "scratch")}, _copies),
    ],
    ids=["pod_dirs", "capacity", "empty_dirs"],
)  # fmt: skip
def test_each_field_by_field_keyword_is_seen(
    keyword: str, value: object, seen: Callable[[Plan], list[str]], tmp_path: Path
) -> None:
    """Each keyword given field by field counts, as the same field of an Observation."""
    pods = podsync.parse_pods(MOUNTS, source_name="pods/web.yaml")
    # The node scope: a pod directory of a pod no longer desired is torn down.
    options = podsync.PlanOptions(root_dir=str(tmp_path), scope=podsync.NODE_SCOPE)

    by_field = podsync.plan(pods, [], now=0.0, options=options, **{keyword: value})  # type: ignore[arg-type]
    whole = podsync.plan(pods, Observation(**{keyword: value}), now=0.0, options=options)  # type: ignore[arg-type]
    without = podsync.plan(pods, [], now=0.0, options=options)

    assert by_field == whole
    assert seen(by_field) != []
    assert seen(without) == []


def test_sync_plans_from_its_observation_whole(tmp_path: Path) -> None:
    """What ``sync`` planned is ``plan(pods, result.observation, ...)`` with its verdicts:
    the sync and a caller map an observation to the plan's inputs in one place."""
    pods, fake, clock, options = _exited(tmp_path)

    result = podsync.sync(pods, fake, options=options, clock=clock, before_apply=lambda *_: False)

    again = podsync.plan(
        pods,
        result.observation,
        now=clock(),
        options=options,
        liveness=result.liveness,
        startup=result.startup,
    )
    assert again == result.plan
    assert _volume_work(result.plan) == []


CAPACITY = podsync.ResourceList(cpu=2000, memory=1 << 30)


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("images", []),
        ("pod_dirs", set()),
        ("volumes", []),
        ("volume_files", []),
        ("empty_dirs", set()),
        ("capacity", CAPACITY),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_an_observation_and_a_keyword_it_holds_are_refused(keyword: str, value: object) -> None:
    """Two values of one fact would disagree: an Observation with one of its own fields
    as a keyword is a TypeError naming the keyword - even an empty one."""
    obs = Observation(capacity=CAPACITY)
    with pytest.raises(TypeError, match=rf"plan\(\) got an Observation and {keyword}=: .*"):
        podsync.plan([], obs, now=0.0, **{keyword: value})  # type: ignore[arg-type]


def test_the_keywords_the_caller_decides_go_with_an_observation() -> None:
    """``liveness``, ``startup``, ``pull_failures`` and ``options`` are not seen: they are
    given beside an Observation."""
    the_plan = podsync.plan(
        [],
        Observation(),
        now=0.0,
        liveness={},
        startup={},
        pull_failures=(),
        options=podsync.PlanOptions(),
    )
    assert not the_plan.has_changes


def test_one_observation_type() -> None:
    """``podsync.Observation`` is the pure model's, and ``podsync.loop._sync`` still
    names it for its internal callers."""
    assert podsync.Observation is podsync.model._observation.Observation
    assert podsync.loop._sync.Observation is podsync.Observation
