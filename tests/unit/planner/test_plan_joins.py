"""A network container is removed after the containers that join it, and stays while one
is left: case by case, in the manner of the kubelet's ``TestComputePodActions``.

The kubelet's garbage collector keeps a sandbox while any container belongs to it,
running or not (``evictSandboxes``, pkg/kubelet/kuberuntime/kuberuntime_gc.go); podman
refuses the removal outright ("container ... has dependent containers which must be
removed before it"). Before the rule, once a pod's network container had died and the
pod was rebuilt, ``podsync down`` on podman failed at every try and never converged.

Each row starts from an engine on which podsync ran the two-container ``pair`` pod
(``load`` and ``serve``, restart policy ``Always``), then its network container died
and podsync rebuilt the pod (``net`` #1 and the first instances of the app containers
exited; ``net`` #2 and the second ones run). It then does what the row says to that
engine, plans once, and lists which network containers the plan removes (#1, #2) and
which it holds back. The engine model refuses a removal of a container that another one
joins, on every plan applied: the plan applied, the next plans converge too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from podsync.actions._actions import Plan, Reason, Remove, RemovePodDir
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.model._pod import ObservedContainer, Pod
from podsync.planner._joins import joiners, order_network_removals
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER, LABEL_JOINS
from podsync.spec._naming import container_name
from podsync.spec._ownership import identify
from tests.support.engine_model import EngineModel, EngineRuleBroken
from tests.unit.planner.test_compute_pod_actions import NOW, PAIR, STARTED, pod_file, ran

DIED = STARTED + 100  # when net #1 died
REBUILT = DIED + 10  # when podsync rebuilt the pod on net #2
LATER = NOW + 10_000  # when the row plans

#: One exited instance kept per pod container, whatever its age.
KEEP_ONE = PlanOptions(gc=GCPolicy(max_per_container=1, min_age=0))
#: Deletions allowed, exited containers kept for a minute.
OLD_ONLY = PlanOptions(allow_deletions=True, scope=NODE_SCOPE, gc=GCPolicy(min_age=60))
#: Deletions allowed, nothing kept for its age.
DOWN = PlanOptions(allow_deletions=True, scope=NODE_SCOPE, gc=GCPolicy(min_age=0))


def _sync(model: EngineModel, pods: list[Pod], at: float, options: PlanOptions) -> Plan:
    p = plan(
        pods, model.observed, images=model.images, volumes=model.observed_volumes, now=at,
        options=options,
    )  # fmt: skip
    model.apply(p, at)
    return p


def _nets(model: EngineModel) -> list[ObservedContainer]:
    """The pod's network containers, oldest first."""
    return sorted(
        (o for o in model.observed if o.labels.get(LABEL_CONTAINER) == "net"),
        key=lambda o: o.created,
    )


def rebuild(pod: Pod, model: EngineModel, died: float) -> None:
    """The pod's running network container dies at ``died``; podsync rebuilds the pod
    on a new one (ten seconds later, or when its back-off ends)."""
    (net,) = [n for n in _nets(model) if n.running]
    model.exit(net.id, 137, died)
    for step in range(4):
        # Ten seconds on, then further apart: a second death is backed off.
        _sync(model, [pod], died + 10 * 4**step, PlanOptions())
    assert _nets(model)[-1].running


def rebuilt() -> tuple[Pod, EngineModel]:
    """The row's starting engine: see the module docstring."""
    pod = pod_file(PAIR, "Always")
    model = ran(pod)
    rebuild(pod, model, DIED)
    assert [n.running for n in _nets(model)] == [False, True]
    return pod, model


# --- what a row does to the engine before it plans ---------------------------------------


def nothing(pod: Pod, model: EngineModel) -> None:
    """The engine as it is."""


def rebuilt_again(pod: Pod, model: EngineModel) -> None:
    """Net #2 died too, and the pod runs on net #3: with one exited instance kept per
    container, net #1's app instances go, and net #1 with them."""
    rebuild(pod, model, REBUILT + 100)


def unlabelled(pod: Pod, model: EngineModel) -> None:
    """Every container loses ``LABEL_JOINS`` (made by a podsync before the label, at
    whole seconds far apart): which network container each joins is inferred."""
    for o in model.observed:
        labels = {k: v for k, v in o.labels.items() if k != LABEL_JOINS}
        model.containers[o.id] = attrs.evolve(o, labels=labels)


def young_joiner(pod: Pod, model: EngineModel) -> None:
    """The first ``load`` exited only now: ``min_age`` keeps it."""
    (first,) = [o for o in model.observed if o.labels.get(LABEL_CONTAINER) == "load"][:1]
    model.containers[first.id] = attrs.evolve(first, finished_at=LATER - 1)


def stranger_2014(pod: Pod, model: EngineModel) -> None:
    """A 2014 kubelet's container of the pod, by its name alone, made after net #1 and
    before net #2 (not taken over: nobody removes it)."""
    name = container_name("extra", 0x1234, pod.full_name, pod.uid, 7)
    model.add(ObservedContainer(id="stranger", name=name, created=DIED - 5, finished_at=DIED))


@attrs.frozen
class Case:
    """A row: what is done to the engine, the pod desired or not, the options, and the
    network containers the plan removes (``1``, ``2``...: net #1, #2...)."""

    name: str
    setup: Callable[[Pod, EngineModel], None]
    desired: bool
    options: PlanOptions
    removed: tuple[int, ...]

    def __str__(self) -> str:
        return self.name


# fmt: off
CASES = [
    # The exited instances of net #1's app containers are kept (the newest per
    # container): net #1 stays with them, as the kubelet keeps a sandbox with containers.
    Case("rebuilt pod, its old instances kept", nothing, True, KEEP_ONE, ()),
    # The global cap keeps the last exited instance of each container: net #1 with them.
    Case(
        "rebuilt pod, a global cap of none",
        nothing,
        True,
        PlanOptions(gc=GCPolicy(max_per_container=None, min_age=0, max_total=0)),
        (),
    ),
    # Once GC removes net #1's app instances, net #1 goes in the same plan, after them.
    Case("rebuilt twice, the oldest instances collected", rebuilt_again, True, KEEP_ONE, (1,)),
    # down: every container goes, each network container after its own joiners.
    Case("down of a rebuilt pod", nothing, False, DOWN, (1, 2)),
    Case("down, joins inferred from creation times", unlabelled, False, DOWN, (1, 2)),
    # min_age: what this plan stops is too young to go (net #2 with its containers);
    # net #1's generation exited long ago and goes...
    Case("down, min_age 60", nothing, False, OLD_ONLY, (1,)),
    # ...but not while a joiner of it is too young to go.
    Case("down, min_age 60, a joiner of net #1 young", young_joiner, False, OLD_ONLY, ()),
    # A 2014 kubelet's container, not taken over, made while net #1 was the pod's: it
    # may join net #1, which stays with it.
    Case("down, a 2014 container not taken over", stranger_2014, False, DOWN, (2,)),
    # Deletions off: a pod no longer desired is left alone, nets included.
    Case("not desired, deletions off", nothing, False, KEEP_ONE, ()),
]
# fmt: on


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_network_container_goes_after_its_joiners(case: Case) -> None:
    pod, model = rebuilt()
    case.setup(pod, model)
    nets = {n.id: number for number, n in enumerate(_nets(model), 1)}
    desired = [pod] if case.desired else []
    p = plan(
        desired, model.observed, images=model.images, volumes=model.observed_volumes,
        now=LATER, options=case.options,
    )  # fmt: skip
    removes = [a for pp in p.pods for a in pp.actions if isinstance(a, Remove)]
    removed_nets = tuple(sorted(nets[a.id] for a in removes if a.id in nets))
    assert removed_nets == case.removed
    # Each network container removed comes after every container that joins it.
    joined = joiners(filter(None, map(identify, model.observed)))
    order = [a.id for a in removes]
    for net in nets:
        if net in order:
            assert all(order.index(j) < order.index(net) for j in joined.get(net, ()))
    # The engine takes the plan - no removal of a container another joins - and
    # planning converges from there.
    model.apply(p, LATER)
    for step in range(1, 6):
        again = _sync(model, desired, LATER + step, case.options)
        if not any(pp.actions for pp in again.pods):
            break
    else:
        pytest.fail("planning did not converge")


def test_a_removal_that_breaks_the_rule_is_refused_by_the_model() -> None:
    """The model refuses what podman refuses: the check above can fail."""
    pod, model = rebuilt()
    first = _nets(model)[0]
    removal = Remove(
        pod=pod.key,
        pod_uid=pod.uid,
        container="net",
        id=first.id,
        name=first.name,
        reason=Reason.GC_EXITED,
        message="remove net #1",
    )
    with pytest.raises(EngineRuleBroken, match="join"):
        model.apply(Plan(pods=(), cleanup=(removal,)), LATER)


# --- which network container a container joins, by creation time ------------------------


UID = "2b8e4f10-27aa-4c1e-9b3e-1f2a3b4c5d6e"


def _observed(key: str, created: float) -> ObservedContainer:
    """A 2014 kubelet's container of one pod (no labels): ``net<n>`` a network
    container, anything else an app container."""
    container = "net" if key.startswith("net") else "app"
    attempt = int(key[-1])
    return ObservedContainer(
        id=key,
        name=container_name(container, 1, "pair.default.file", UID, attempt),
        created=created,
    )


@pytest.mark.parametrize(
    ("nets", "joiner", "joins"),
    [
        # The newest network container created strictly before it.
        ({"net1": 100.0, "net2": 200.0}, 250.0, {"net2"}),
        ({"net1": 100.0, "net2": 200.0}, 150.0, {"net1"}),
        # Made in the same (whole) second as net #2: it may join either.
        ({"net1": 100.0, "net2": 200.0}, 200.0, {"net1", "net2"}),
        # Older than every network container: it joins none of them.
        ({"net1": 100.0}, 50.0, set()),
        # Two network containers made in one second, both before it: either.
        ({"net1": 100.0, "net2": 100.0}, 150.0, {"net1", "net2"}),
        # Made in the same second as the pod's only network container (an earlier
        # podsync's app, created right after its network container): it joins it.
        ({"net1": 100.0}, 100.0, {"net1"}),
    ],
)
def test_joins_inferred_from_creation_times(
    nets: dict[str, float], joiner: float, joins: set[str]
) -> None:
    observed = [_observed(n, t) for n, t in nets.items()] + [_observed("app9", joiner)]
    instances = [i for i in map(identify, observed) if i is not None]
    assert len(instances) == len(observed)
    assert {net for net, who in joiners(instances).items() if "app9" in who} == joins


def test_a_container_of_a_pod_without_a_network_container_joins_none() -> None:
    """An unlabelled container whose pod has no network container left (another pod's
    is there) joins nothing; one whose label names a container that is gone neither."""
    other_pod = ObservedContainer(
        id="net1", name=container_name("net", 1, "other.default.file", UID, 1), created=1.0
    )
    orphan = _observed("app1", 5.0)
    named = attrs.evolve(_observed("app2", 5.0), id="app2", labels={LABEL_JOINS: "k8s_gone"})
    instances = [i for i in map(identify, (other_pod, orphan, named)) if i is not None]
    assert len(instances) == 3
    assert {} == joiners(instances)


# --- the rule applied to pod plans' actions, case by case ---------------------------------


def _instance(key: str, created: float, joins: str | None = None, pod: str = "pair") -> Any:
    """An identified container of ``pod``: ``net<n>`` a network container, anything
    else one that joins the network container ``joins`` names (by its label; ``None``:
    no label, judged by creation time)."""
    container = "net" if key.startswith("net") else key.rstrip("0123456789")
    labels = {} if joins is None else {LABEL_JOINS: f"k8s_{joins}"}
    observed = ObservedContainer(
        id=key,
        name=container_name(container, 1, f"{pod}.default.file", UID, int(key[-1])),
        labels=labels,
        created=created,
    )
    instance = identify(observed)
    assert instance is not None
    # The label names a container by its name: name the network containers so.
    if container == "net":
        instance.observed = attrs.evolve(observed, name=f"k8s_{key}")
    return instance


def _remove(key: str) -> Remove:
    return Remove(
        pod="default/pair", pod_uid=UID, container="net" if key.startswith("net") else "app",
        id=key, name=key, reason=Reason.GC_EXITED, message=f"remove {key}",
    )  # fmt: skip


TEARDOWN = RemovePodDir(pod_uid=UID, path="/var/lib/podsync/x", reason=Reason.ORPHANED_POD_DIR,
                        message="tear down")  # fmt: skip

#: The containers every row observes: net1 (joined by a1 and b1, made with it), net2
#: (joined by a2; x1 joins net1 too and is never removed), and a container of another pod.
OBSERVED = [
    _instance("net1", 100.0),
    _instance("a1", 100.0, joins="net1"),
    _instance("b1", 101.0, joins="net1"),
    _instance("net2", 200.0),
    _instance("a2", 200.0, joins="net2"),
    _instance("web1", 50.0, pod="web"),
]
HELD_BY_X1 = [*OBSERVED, _instance("x1", 150.0)]  # unlabelled: by time, it joins net1

# fmt: off
ORDER_CASES = [
    # id, what each pod plan removes (keys; "dir": a teardown), observed, what is left
    ("moved-right-after-its-last-joiner", [["net1", "a1", "b1", "dir"]], OBSERVED,
     [["a1", "b1", "net1", "dir"]]),
    ("already-after-its-joiners", [["a1", "b1", "net1"]], OBSERVED, [["a1", "b1", "net1"]]),
    ("a-joiner-stays", [["net1", "a1"]], OBSERVED, [["a1"]]),
    ("a-joiner-nobody-removes", [["a1", "b1", "net1"]], HELD_BY_X1, [["a1", "b1"]]),
    # The first held, the next one still ordered.
    ("held-then-moved", [["net1", "net2", "a2", "a1", "b1"]], HELD_BY_X1,
     [["a2", "net2", "a1", "b1"]]),
    # A pod plan with nothing of the rule's, then one with it.
    ("second-pod-plan", [["web1"], ["net2", "a2"]], OBSERVED, [["web1"], ["a2", "net2"]]),
    # Pod plans run side by side: a joiner another plan removes holds the removal.
    ("joiner-in-another-plan", [["net2"], ["a2"]], OBSERVED, [[], ["a2"]]),
]
# fmt: on


@pytest.mark.parametrize(
    ("groups", "observed", "left"),
    [row[1:] for row in ORDER_CASES],
    ids=[row[0] for row in ORDER_CASES],
)
def test_network_removals_in_pod_plans(
    groups: list[list[str]], observed: list[Any], left: list[list[str]]
) -> None:
    plans = {
        (f"uid{n}", f"pod{n}"): (
            "default/pair",
            [TEARDOWN if k == "dir" else _remove(k) for k in g],
        )
        for n, g in enumerate(groups)
    }
    order_network_removals(plans, observed)
    assert left == [
        ["dir" if isinstance(a, RemovePodDir) else a.id for a in actions]
        for _, actions in plans.values()
    ]
