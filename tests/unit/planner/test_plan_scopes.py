"""Scopes (issue 29, ``podsync.planner._scope``), case by case in the manner of the
kubelet's ``TestComputePodActions``: each row is the pods an engine runs and the scope
each was synced in, the pods a plan desires and its scope, and what is left on the
engine once the plans converge - whose containers, whose volumes, whose pod
directories - and which desired pods were rejected as another scope's.

The kubelet's own rule (``HandlePodCleanups``: every pod the node's sources do not
hold goes) is the node scope's; no scope removes nothing of a pod it was not given; a
named scope removes only what carries its name.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from podsync import NODE_SCOPE, Pod, sync
from podsync.actions._actions import Create, CreateVolume, Plan, Reason
from podsync.actions._options import GCPolicy, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_POD_NAME, LABEL_POD_UID, LABEL_SCOPE, LABEL_SPEC_HASH
from podsync.spec._ownership import volume_ownership
from podsync.testing import FakeClock
from tests.support.convergence_examples import T0, pod, pod_file
from tests.support.engine_model import EngineModel
from tests.unit.planner.test_plan_metadata import NOW, POD, load, made_by_0_1_0

# Every pod has a state volume (its network container's create makes it); "cache" has an
# emptyDir volume too.
SCRATCH = """
      volumeMounts:
      - {name: scratch, mountPath: /scratch}
  volumes:
  - {name: scratch, emptyDir: {}}"""

PODS = {name: pod(name) for name in ("web", "db", "old")}
PODS["cache"] = pod("cache", extra=SCRATCH)
# "old" with its app's spec edited: its app is replaced, the rest of it kept.
PODS["old-edited"] = pod("old", extra="\n      env: [{name: MODE, value: fast}]")
# One pod under two names: its metadata.uid kept, its name changed.
SITE = """
apiVersion: v1
kind: Pod
metadata:
  name: %s
  uid: 5b1e0c2a-7d3f-4e8a-9b6c-0d1e2f3a4b5c
spec:
  containers:
    - name: app
      image: busybox:1.36
      command: ["httpd", "-f"]
"""
PODS["site"] = pod_file(SITE % "site")
PODS["site-v2"] = pod_file(SITE % "site-v2")
# Everything goes at once: exited containers of any age are collected.
GC = GCPolicy(max_per_container=0, min_age=0.0)
# A pod directory podsync left for a pod it no longer runs (no container, no volume).
STRAY_DIR = "3f0c9a8e-1b2c-4d5e-8f90-a1b2c3d4e5f6"


@attrs.frozen
class Case:
    id: str
    # (pod, the scope it was synced in) in order, each sync given that pod alone.
    made: tuple[tuple[str, str | None], ...]
    desired: tuple[str, ...]
    scope: str | None
    # The pods whose containers are left on the engine once the plans converge.
    left: frozenset[str]
    # The pods with a volume podsync made left on the engine.
    volumes_left: frozenset[str] | None = None
    # Desired pods rejected as another scope's.
    conflicts: frozenset[str] = frozenset()
    allow_deletions: bool = True
    # PlanOptions.ready_sources: the sources whose pods may be removed.
    ready_sources: frozenset[str] | None = None
    # Whether the stray pod directory (no container, no volume) is left.
    stray_dir_left: bool = True


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


CASES = [
    Case(
        "unscoped-sync-leaves-a-pod-it-was-not-given",
        made=(("web", None), ("db", None)),
        desired=("web",),
        scope=None,
        left=_set("web", "db"),
    ),
    Case(
        "unscoped-sync-leaves-a-named-scopes-pod",
        made=(("web", None), ("db", "team-a")),
        desired=("web",),
        scope=None,
        left=_set("web", "db"),
    ),
    Case(
        "named-scope-removes-its-own-undesired-pod-with-its-volumes",
        made=(("web", "team-a"), ("cache", "team-a")),
        desired=("web",),
        scope="team-a",
        left=_set("web"),
        volumes_left=_set("web"),
    ),
    Case(
        "named-scope-leaves-another-scopes-pod",
        made=(("web", "team-a"), ("db", "team-b")),
        desired=("web",),
        scope="team-a",
        left=_set("web", "db"),
    ),
    Case(
        "named-scope-leaves-an-unlabelled-pod",
        made=(("web", "team-a"), ("old", None)),
        desired=("web",),
        scope="team-a",
        left=_set("web", "old"),
    ),
    Case(
        "named-scope-with-nothing-desired-removes-everything-of-its-own",
        made=(("web", "team-a"), ("cache", "team-a"), ("db", "team-b"), ("old", None)),
        desired=(),
        scope="team-a",
        left=_set("db", "old"),
        volumes_left=_set("db", "old"),
    ),
    Case(
        "node-scope-removes-every-undesired-pod-any-label",
        made=(("web", "team-a"), ("cache", "team-b"), ("old", None)),
        desired=("web",),
        scope=NODE_SCOPE,
        left=_set("web"),
        volumes_left=_set("web"),
        stray_dir_left=False,
    ),
    Case(
        "desired-pod-of-another-scope-rejected-by-no-scope",
        made=(("db", "team-b"),),
        desired=("db",),
        scope=None,
        left=_set("db"),
        conflicts=_set("db"),
    ),
    Case(
        "desired-pod-of-another-scope-rejected-by-a-named-scope",
        made=(("web", "team-a"), ("db", "team-b")),
        desired=("web", "db"),
        scope="team-a",
        left=_set("web", "db"),
        conflicts=_set("db"),
    ),
    Case(
        "desired-pod-of-another-scope-adopted-by-the-node-scope",
        made=(("db", "team-b"),),
        desired=("db",),
        scope=NODE_SCOPE,
        left=_set("db"),
        stray_dir_left=False,
    ),
    Case(
        "unlabelled-desired-pod-adopted-by-a-named-scope",
        made=(("old", None),),
        desired=("old",),
        scope="team-a",
        left=_set("old"),
    ),
    Case(
        "adopted-unlabelled-pod-is-not-removed-by-the-named-scope",
        made=(("old", None), ("web", "team-a")),
        desired=("web",),
        scope="team-a",
        left=_set("web", "old"),
    ),
    Case(
        "unscoped-sync-removes-the-stale-instance-of-a-pod-it-was-given",
        made=(("site", None),),
        desired=("site-v2",),
        scope=None,
        left=_set("site-v2"),
    ),
    Case(
        "named-scope-removes-the-stale-instance-of-a-pod-it-was-given",
        made=(("site", "team-a"),),
        desired=("site-v2",),
        scope="team-a",
        left=_set("site-v2"),
    ),
    Case(
        "adopted-pod-replaced-in-a-named-scope-goes-with-its-unlabelled-volumes",
        made=(("old", None), ("old-edited", "team-a"), ("web", "team-b")),
        desired=(),
        scope="team-a",
        left=_set("web"),
        volumes_left=_set("web"),
    ),
    Case(
        "named-scope-keeps-its-pods-of-a-source-not-ready",
        made=(("web", "team-a"), ("db", "team-a")),
        desired=("web",),
        scope="team-a",
        left=_set("web", "db"),
        ready_sources=frozenset({"http"}),
    ),
    Case(
        "named-scope-removes-its-pods-of-a-ready-source",
        made=(("web", "team-a"), ("db", "team-a")),
        desired=("web",),
        scope="team-a",
        left=_set("web"),
        ready_sources=frozenset({"file"}),
    ),
    Case(
        "own-pods-kept-when-deletions-are-off",
        made=(("web", "team-a"), ("cache", "team-a")),
        desired=("web",),
        scope="team-a",
        left=_set("web", "cache"),
        allow_deletions=False,
    ),
    Case(
        "node-scope-keeps-everything-when-deletions-are-off",
        made=(("web", None), ("db", "team-b")),
        desired=(),
        scope=NODE_SCOPE,
        left=_set("web", "db"),
        allow_deletions=False,
    ),
]


def _engine(case: Case) -> EngineModel:
    """The engine after each pod of ``case.made`` was synced alone, in its scope."""
    model = EngineModel(image_tags={"busybox:1.36", "registry.k8s.io/pause:3.10"})
    for name, scope in case.made:
        made = plan(
            [PODS[name]], model.observed, images=model.images, now=T0, options=_options(scope)
        )
        model.apply(made, T0)
    model.pod_dirs.add(STRAY_DIR)
    return model


def _options(
    scope: str | None,
    *,
    allow_deletions: bool = True,
    ready_sources: frozenset[str] | None = None,
) -> PlanOptions:
    return PlanOptions(
        scope=scope, allow_deletions=allow_deletions, ready_sources=ready_sources, gc=GC
    )


def _converge(model: EngineModel, desired: Sequence[Pod], options: PlanOptions) -> list[Plan]:
    """The plans of syncs until one has nothing to do (at most four), applied."""
    plans = []
    for step in range(4):
        now = T0 + 10 * (step + 1)
        made = plan(
            desired,
            model.observed,
            images=model.images,
            now=now,
            options=options,
            volumes=model.observed_volumes,
            pod_dirs=model.pod_dirs,
        )
        plans.append(made)
        if not made.has_changes:
            break
        model.apply(made, now)
    return plans


def _pods_with_containers(model: EngineModel) -> set[str]:
    return {c.labels[LABEL_POD_NAME] for c in model.observed}


def _pods_with_volumes(model: EngineModel) -> set[str]:
    names = {p.uid: p.name for p in PODS.values()}
    owned = (volume_ownership(v) for v in model.observed_volumes)
    return {names[o.pod_uid] for o in owned if o is not None and o.pod_uid}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_scope(case: Case) -> None:
    model = _engine(case)
    before = {c.id: c for c in model.observed}
    desired = [PODS[name] for name in case.desired]
    options = _options(
        case.scope, allow_deletions=case.allow_deletions, ready_sources=case.ready_sources
    )

    plans = _converge(model, desired, options)

    assert not plans[-1].has_changes
    assert case.left == _pods_with_containers(model)
    if case.volumes_left is not None:
        assert case.volumes_left == _pods_with_volumes(model)
    assert case.stray_dir_left == (STRAY_DIR in model.pod_dirs)
    conflicts = {r.pod.split("/")[1] for r in plans[0].rejected}
    assert case.conflicts == conflicts
    for rejection in plans[0].rejected:
        assert Reason.SCOPE_CONFLICT == rejection.reason
        assert "team-b" in rejection.message
    # What is left of a pod not desired, rejected or adopted is the same containers:
    # nothing is replaced (the scope label is in no spec hash).
    for cid, container in before.items():
        if container.labels[LABEL_POD_NAME] in case.left:
            assert container == model.containers[cid]


# -- what a scope writes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "label"),
    [(None, None), (NODE_SCOPE, None), ("team-a", "team-a")],
    ids=["no-scope-writes-no-label", "node-scope-writes-no-label", "named-scope-labels"],
)
def test_creates_carry_the_scope_label(scope: str | None, label: str | None) -> None:
    """Every container and named volume a plan creates carries its named scope's
    label, the state volume its network container's create makes included; the
    unscoped and node scopes write none."""
    made = plan([PODS["cache"]], [], now=T0, options=PlanOptions(scope=scope))
    actions = [a for p in made.pods for a in p.actions]
    creates = [a for a in actions if isinstance(a, Create)]
    volumes = [a for a in actions if isinstance(a, CreateVolume)]
    mounted = [m for a in creates for m in a.spec.volumes if m.labels]
    assert creates
    assert volumes
    assert mounted
    assert {label} == {a.spec.labels.get(LABEL_SCOPE) for a in creates}
    assert {label} == {a.labels.get(LABEL_SCOPE) for a in volumes}
    assert {label} == {dict(m.labels).get(LABEL_SCOPE) for m in mounted}
    # Only the mounts that label the volume the create makes (the state volume) do.
    unscoped = plan([PODS["cache"]], [], now=T0, options=PlanOptions())
    assert {m.volume for m in mounted} == {
        m.volume
        for p in unscoped.pods
        for a in p.actions
        if isinstance(a, Create)
        for m in a.spec.volumes
        if m.labels
    }


def test_the_scope_label_is_in_no_spec_hash() -> None:
    """A scope changes no container's spec hash: the same pod in two scopes is the same
    spec, so moving a pod between scopes replaces nothing."""

    def hashes(scope: str | None) -> dict[str, str]:
        made = plan([PODS["web"]], [], now=T0, options=PlanOptions(scope=scope))
        return {
            a.container: a.spec.labels[LABEL_SPEC_HASH]
            for p in made.pods
            for a in p.actions
            if isinstance(a, Create)
        }

    assert hashes(None) == hashes("team-a") == hashes(NODE_SCOPE)
    assert len(hashes(None)) == 2  # the network container and app


def test_a_scoped_volume_attributes_its_pod_directory() -> None:
    """A pod directory names no scope: a named scope removes one whose pod has no
    container left only when a volume of that pod carries its name."""
    model = _engine(Case("", made=(("cache", "team-a"),), desired=(), scope="", left=_set()))
    uid = PODS["cache"].uid
    model.pod_dirs.add(uid)
    # The containers went (removed by hand); the pod's volumes and directory are left.
    model.containers = {k: c for k, c in model.containers.items() if c.labels[LABEL_POD_UID] != uid}
    model.mounted.clear()
    assert _pods_with_volumes(model) == {"cache"}

    _converge(model, [], _options("team-b"))
    assert uid in model.pod_dirs
    assert _pods_with_volumes(model) == {"cache"}

    _converge(model, [], _options("team-a"))
    assert uid not in model.pod_dirs
    assert not _pods_with_volumes(model)
    assert STRAY_DIR in model.pod_dirs


@pytest.mark.parametrize("scope", ["", "Team", "-a", "a-", "a b", "a/b", "x" * 64], ids=repr)
def test_a_bad_scope_is_refused(scope: str) -> None:
    with pytest.raises(ValueError, match="bad scope"):
        PlanOptions(scope=scope)


@pytest.mark.parametrize("scope", ["a", "team-a", "ci_1.2", "x" * 63, NODE_SCOPE], ids=repr)
def test_a_scope_name(scope: str) -> None:
    assert scope == PlanOptions(scope=scope).scope


# -- across the upgrade -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "desired", "removed"),
    [
        (None, True, False),
        ("team-a", True, False),
        (NODE_SCOPE, True, False),
        (None, False, False),
        ("team-a", False, False),
        (NODE_SCOPE, False, True),
    ],
    ids=[
        "no-scope-runs-it-on",
        "a-named-scope-adopts-it",
        "the-node-scope-runs-it-on",
        "no-scope-leaves-it-when-not-given",
        "a-named-scope-leaves-it-when-not-given",
        "the-node-scope-removes-it-when-not-desired",
    ],
)
def test_a_pod_podsync_0_1_0_runs(scope: str | None, desired: bool, removed: bool) -> None:
    """The containers podsync 0.1.0 made (its recorded labels: no scope) are adopted
    unchanged by every scope that desires their pod, and removed only by the node
    scope: an installation keeps its pods across the upgrade."""
    runtime = made_by_0_1_0()
    before = {c.id: c for c in runtime.containers}
    pods = load(POD) if desired else []

    result = sync(
        pods, runtime, options=PlanOptions(scope=scope), probe=False, clock=FakeClock(NOW + 30)
    )

    assert result.ok, result.apply_result.summary()
    assert () == result.plan.rejected
    if removed:
        assert not any(c.running for c in runtime.containers)
    else:
        assert before == {c.id: c for c in runtime.containers}


def test_rejections_keep_the_input_order() -> None:
    """Another scope's pods and the pods admission rejects are reported in the order
    of the desired pods, as admission reports its own."""
    model = _engine(Case("", made=(("db", "team-b"),), desired=(), scope="", left=_set()))
    first, last = pod("first", privileged=True), pod("last", privileged=True)

    made = plan(
        [first, PODS["db"], PODS["web"], last],
        model.observed,
        images=model.images,
        now=T0,
        options=PlanOptions(scope="team-a"),
    )

    assert [
        ("default/first", Reason.PRIVILEGED_NOT_ALLOWED),
        ("default/db", Reason.SCOPE_CONFLICT),
        ("default/last", Reason.PRIVILEGED_NOT_ALLOWED),
    ] == [(r.pod, r.reason) for r in made.rejected]
