"""Properties of the planner: deterministic, and convergent on a model of the engine."""

from __future__ import annotations

import copy

import attrs
import pytest
from hypothesis import Phase, event, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from podsync import EnvVar, ObservedContainer, Pod, RestartPolicy, container_name, spec_hash
from podsync.actions._actions import Create, Kill, Plan, Reason, Rejection, Wait
from podsync.actions._json import plan_from_json, plan_to_json
from podsync.actions._options import NODE_SCOPE, AllowedHostPath, GCPolicy, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._hashing import SPEC_HASH_VERSION, canonical_spec
from podsync.spec._labels import (
    LABEL_ATTEMPT,
    LABEL_POD_UID,
    LABEL_RESTART_COUNT,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
)
from tests.support.convergence_examples import PINNED, pin
from tests.support.convergence_oracle import convergence_problems, expected, matches, owner
from tests.support.cri import cri_labels, cri_name
from tests.support.engine_model import EngineModel
from tests.support.strategies import STOP_RECORDS, dns_labels, later_states, pods

T0 = 1_700_000_000.0


@st.composite
def pod_sets(draw: st.DrawFn) -> list[Pod]:
    """Pods with distinct names (conflicting host ports and privileged ones included,
    though most pods ask for neither, so that most are admitted)."""
    # Host ports from 80-81 half the time, so that pods - desired, running, or both -
    # clash on them.
    host_ports = st.one_of(st.integers(80, 81), st.integers(1, 65535))
    drawn = draw(
        st.lists(
            pods(max_containers=2, host_ports=host_ports), max_size=4, unique_by=lambda p: p.key
        )
    )
    result = []
    for pod in drawn:
        if draw(st.integers(0, 3)):
            pod = attrs.evolve(
                pod, containers=tuple(attrs.evolve(c, privileged=False) for c in pod.containers)
            )
        result.append(pod)
    return result


def _mutate(pod: Pod, edit: str) -> Pod:
    """The same pod with an edit of its first container's spec: another image, another
    environment or another command."""
    first = pod.containers[0]
    if edit == "image":
        first = attrs.evolve(first, image=first.image + "-old")
    elif edit == "env":
        first = attrs.evolve(first, env=(*first.env, EnvVar("EDITED", "1")))
    else:
        first = attrs.evolve(first, command=("/bin/old", *first.command))
    return attrs.evolve(pod, containers=(first, *pod.containers[1:]))


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[Pod], EngineModel, float, dict[str, bool], PlanOptions]:
    """Desired pods, and an engine whose state is what an earlier desired state left
    (often with an edited spec), then disturbed: exits, stops by podsync (with their
    stop records), containers created and never started, restart counts (back-offs in
    progress), removals, duplicates, stale or missing labels, foreign containers and
    orphaned pod directories."""
    desired = draw(pod_sets())
    earlier = [
        p if draw(st.booleans()) else _mutate(p, draw(st.sampled_from(["image", "env", "command"])))
        for p in desired
        if draw(st.integers(0, 3))
    ]
    earlier += draw(
        pod_sets().map(lambda ps: [p for p in ps if p.key not in {d.key for d in desired}])
    )
    images = {c.image for p in desired + earlier for c in p.containers}
    model = EngineModel(
        image_tags={f"{i}:latest" if ":" not in i.rsplit("/", 1)[-1] else i for i in images}
    )
    options = PlanOptions(
        scope=NODE_SCOPE,
        # The pods' hostPath volumes are admitted (the oracle judges privileged mode
        # alone; Pod Security's checks have their own table, test_plan_pod_security).
        allowed_host_paths=(AllowedHostPath("/"),),
        allow_privileged=draw(st.booleans()),
        allow_deletions=draw(st.booleans()),
        adopt_2014_containers=draw(st.booleans()),
        gc=GCPolicy(
            max_per_container=draw(st.sampled_from([None, 0, 1, 5])),
            min_age=draw(st.sampled_from([0.0, 60.0])),
            max_total=draw(st.sampled_from([None, 0, 3])),
        ),
    )
    model.apply(plan(earlier, [], images=model.images, now=T0, options=options), T0)
    now = T0 + draw(st.sampled_from([1.0, 30.0, 1000.0]))
    for container in list(model.observed):
        fate = draw(
            st.sampled_from(["keep", "later", "later", "gone", "duplicate", "legacy", "stale"])
        )
        if fate == "later":
            model.containers[container.id] = draw(later_states(container, since=T0))
        elif fate == "gone":
            del model.containers[container.id]
        elif fate == "duplicate" and container.labels:
            attempt = int(container.labels[LABEL_ATTEMPT]) + 1000
            parts = container.name.rsplit("_", 1)
            name = f"{parts[0]}_{attempt:08x}"
            model.add(
                attrs.evolve(
                    container,
                    id=container.id + "d",
                    name=name,
                    labels={**container.labels, LABEL_ATTEMPT: str(attempt)},
                )
            )
        elif fate == "legacy":
            model.containers[container.id] = attrs.evolve(container, labels={})
            # podsync reads a container's host ports from its spec label only (a 2014
            # kubelet's container has none): the model forgets them too, or it would
            # catch what podsync cannot see (a documented limitation).
            model.published.pop(container.id, None)
        elif fate == "stale":
            # A hash of another version (here the previous one, as an upgrade of podsync
            # leaves them): compared field by field from the spec label, when there is one.
            labels = {**container.labels, LABEL_SPEC_HASH: "1:" + "ab" * 32}
            if draw(st.booleans()):
                labels.pop(LABEL_SPEC)
                model.published.pop(container.id, None)  # as for "legacy"
            model.containers[container.id] = attrs.evolve(container, labels=labels)
    for n in range(draw(st.integers(0, 3))):
        model.add(
            ObservedContainer(
                id=f"foreign{n}",
                name=draw(
                    st.sampled_from(["nginx", "k8s--x--y--1", "k8s_", "my_app_1", "k8s_lonely"])
                )
                + str(n),
                image="nginx",
                running=draw(st.booleans()),
                created=T0 - 5000,
                finished_at=None,
            )
        )
    # What a Kubernetes node's runtime (cri-dockerd) runs: never podsync's.
    if draw(st.booleans()):
        uid = "0f9e8d7c-6b5a-4c3d-2e1f-000000000000"
        for n, kind in enumerate(("POD", "app")):
            model.add(
                ObservedContainer(
                    id=f"foreign-k8s{n}",
                    name=cri_name(kind, "kube-proxy-x", "kube-system", uid, 0),
                    image="registry.k8s.io/kube-proxy:v1.29.2",
                    labels=cri_labels(kind, "kube-proxy-x", "kube-system", uid),
                    running=draw(st.booleans()),
                    created=T0 - 5000,
                    finished_at=None,
                )
            )
    # A container a 2014 kubelet left behind, for one desired pod.
    if desired and draw(st.booleans()):
        pod = desired[0]
        c = pod.containers[0]
        model.add(
            ObservedContainer(
                id="legacy0",
                name=container_name(c.name, 0, pod.full_name, pod.uid, 7),
                image=c.image,
                running=True,
                created=T0 - 10,
            )
        )
    model.pod_dirs |= set(draw(st.lists(dns_labels(), max_size=2)))
    liveness = {c.id: False for c in model.observed if draw(st.booleans())}
    return desired, model, now, liveness, options


def waited_for_room(first: Plan, second: Plan) -> bool:
    """Whether ``second`` only starts pods that ``first`` rejected because a pod it
    stopped still held what they need: admission lets a pod wait one sync rather than
    race the stop (see ``podsync.planner._admission.admit``). That is a host port of a
    running pod that is not admitted, or a host port, CPU or memory of an admitted pod
    that ``first`` stops and starts nothing of (a ``Never`` pod whose network was lost:
    it holds them until its containers stopped, as a terminating pod counts in the
    kubelet's filterOutInactivePods)."""
    stopping = {
        p.pod
        for p in first.pods
        if any(isinstance(a, Kill) for a in p.actions)
        and not any(isinstance(a, Create) for a in p.actions)
    }

    def waits(r: Rejection) -> bool:
        if r.reason is Reason.HOST_PORT_CONFLICT:
            holder = r.message.rpartition(" already used by pod ")[2]
            return "held by running pod" in r.message or holder in stopping
        return r.reason in (Reason.OUT_OF_CPU, Reason.OUT_OF_MEMORY) and bool(stopping)

    waiting = {r.pod for r in first.rejected if waits(r)}
    changed = {p.pod for p in second.pods if any(not isinstance(a, Wait) for a in p.actions)}
    return bool(waiting) and changed <= waiting


@pin()
@given(worlds())
def test_plan_is_deterministic(world):
    """Equal inputs give an equal plan and byte-identical JSON, whatever the order in
    which the engine listed its containers; the JSON reads back to the same plan."""
    desired, model, now, liveness, options = world
    args = dict(
        images=model.images, pod_dirs=model.pod_dirs, now=now, liveness=liveness, options=options
    )

    first = plan(desired, model.observed, **args)
    second = plan(desired, list(reversed(model.observed)), **args)

    assert first == second
    assert plan_to_json(first) == plan_to_json(second)
    assert first == plan_from_json(plan_to_json(first))


@pin()
@given(worlds())
def test_plan_converges(world):
    """Plan, apply to the engine model, plan again: nothing left to do but wait, and the
    engine is converged as ``tests.support.convergence_oracle`` says - every container that
    should run runs with the desired spec or waits for a stated reason, completed ones
    stay completed with the desired spec, the network container runs iff the pod does,
    undesired pods are gone (when deletions are allowed) and foreign containers are
    untouched."""
    desired, model, now, liveness, options = copy.deepcopy(world)
    before = list(model.observed)
    args = dict(now=now, liveness=liveness, options=options)

    first = plan(desired, model.observed, images=model.images, pod_dirs=model.pod_dirs, **args)
    for situation in sorted(situations(world, first)):
        event(situation)
    model.apply(first, now)
    second = plan(desired, model.observed, images=model.images, pod_dirs=model.pod_dirs, **args)
    if waited_for_room(first, second):
        model.apply(second, now)
        second = plan(desired, model.observed, images=model.images, pod_dirs=model.pod_dirs, **args)

    assert [] == [a.message for a in second.actions if not isinstance(a, Wait)]
    assert [] == convergence_problems(
        desired,
        before,
        model.observed,
        second,
        options=options,
        now=now,
        liveness=liveness,
        first=first,
    )


def situations(world, first: Plan | None = None) -> set[str]:
    """The situations ``world`` holds, for ``hypothesis.event`` and the coverage test:
    read from the world itself (with ``tests.support.convergence_oracle``'s reading of
    ownership), and from ``first``, the plan made on it, when given."""
    desired, model, now, liveness, options = world
    adopt = options.adopt_2014_containers
    found: set[str] = set()
    by_uid = {p.uid: p for p in desired}
    for o in model.observed:
        if any(k.startswith("io.kubernetes.") for k in o.labels):
            found.add("kubernetes node container")
            continue
        w = owner(o, adopt=True)
        if w is None:
            found.add("foreign container")
            continue
        if not w.labelled:
            found.add(f"2014-named container, adopt={adopt}")
        if o.labels.get(LABEL_SPEC_HASH, "").partition(":")[0] not in ("", str(SPEC_HASH_VERSION)):
            found.add("hash of another version")
        if int(o.labels.get(LABEL_RESTART_COUNT, "0")) > 0:
            found.add("restart count > 0")
        pod = by_uid.get(w.pod_uid)
        if pod is None:
            found.add(f"container of an undesired pod, deletions={options.allow_deletions}")
            continue
        policy = pod.restart_policy.value
        spec = {c.name: c for c in pod.containers}.get(w.container)
        if spec is not None and not matches(
            o,
            spec_hash(spec, pod, root_dir=options.root_dir),
            canonical_spec(spec, pod, root_dir=options.root_dir),
            spec.image,
        ):
            found.add(f"spec changed, {'running' if o.running else 'stopped'}")
        if o.running:
            probe = spec.liveness_probe if spec else None
            if (
                probe
                and liveness.get(o.id) is False
                and now - o.created >= probe.initial_delay_seconds
            ):
                found.add(f"liveness failed, {policy}")
        elif o.finished_at is None:
            found.add(f"created, never started, {policy}")
        elif o.stopped_by_podsync:
            found.add(f"stopped by podsync ({o.stopped_by_podsync})")
            found.add(f"stopped by podsync, {policy}")
        else:
            found.add(f"exited {'0' if o.exit_code == 0 else 'non-zero'}, {policy}")
    running = [(o.name, o.labels.get(LABEL_POD_UID)) for o in model.observed if o.running]
    names = {n.rsplit("_", 1)[0] for n, uid in running if uid}
    if len(names) < len([n for n, uid in running if uid]):
        found.add("duplicate running instances")
    if model.pod_dirs - {p.uid for p in desired}:
        found.add("orphaned pod directory")
    if first is not None:
        for r in first.rejected:
            found.add(f"rejected: {r.reason.value}")
        for a in first.actions:
            if isinstance(a, Wait):
                found.add(f"wait: {a.reason.value}")
    return found


#: What the generated worlds must hold, each at least once in COVERAGE_EXAMPLES worlds.
#: The draw is derandomized, so the outcome is fixed for a given generator: when a
#: generator change makes this fail, make the missing situation more likely rather than
#: only raising the count (300 worlds take about 15-30 s on the shared CI machine).
SITUATIONS = {
    "kubernetes node container",
    "foreign container",
    "2014-named container, adopt=True",
    "2014-named container, adopt=False",
    "hash of another version",
    "restart count > 0",
    "container of an undesired pod, deletions=True",
    "container of an undesired pod, deletions=False",
    "spec changed, running",
    "spec changed, stopped",
    *(f"liveness failed, {p.value}" for p in RestartPolicy),
    *(f"created, never started, {p.value}" for p in RestartPolicy),
    *(f"stopped by podsync ({r})" for r in STOP_RECORDS),
    *(f"stopped by podsync, {p.value}" for p in RestartPolicy),
    *(f"exited {code}, {p.value}" for code in ("0", "non-zero") for p in RestartPolicy),
    "duplicate running instances",
    "orphaned pod directory",
    "rejected: host-port-conflict",
    "rejected: privileged-not-allowed",
    "wait: back-off",
}
COVERAGE_EXAMPLES = 300
"""The first pass: the worlds most runs see. A situation it misses is then searched for
on its own (``find``, up to ``SEARCH_EXAMPLES`` worlds): a rare situation must still be
reachable, but how rare it is may change with any change to the generators - a fixed
sample size made this test fail for generator changes that lost nothing. 300 rather than
150: with the volume-file actions the first 150 worlds missed four situations, and
searching for each one on its own cost more than the larger first pass (62 s against
145 s for the whole test)."""
SEARCH_EXAMPLES = 3000


def _world_situations(world) -> set[str]:
    desired, model, now, liveness, options = world
    first = plan(
        desired,
        model.observed,
        images=model.images,
        pod_dirs=model.pod_dirs,
        now=now,
        liveness=liveness,
        options=options,
    )
    return situations(world, first)


# The worlds' reprs grow with every model field (Hypothesis warns past 32 kB while it
# searches); they are never printed here: a miss is reported by situation name.
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
def test_worlds_hold_every_situation():
    """The generated worlds hold every situation the convergence properties are meant
    to cover (a generator change that loses one fails here, not silently)."""
    seen: set[str] = set()

    @settings(
        max_examples=COVERAGE_EXAMPLES,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
    )
    @given(worlds())
    def collect(world):
        seen.update(_world_situations(world))

    collect()
    unreached = []
    for situation in sorted(SITUATIONS - seen):
        try:
            find(
                worlds(),
                lambda world, situation=situation: situation in _world_situations(world),
                settings=settings(
                    max_examples=SEARCH_EXAMPLES,
                    derandomize=True,
                    database=None,
                    phases=[Phase.generate],
                ),
            )
        except NoSuchExample:
            unreached.append(situation)
    assert unreached == []


@pytest.mark.parametrize("name", sorted(PINNED))
def test_pinned_world_expectations(name):
    """The oracle reads each pinned world's history as its docstring says."""
    desired, model, now, liveness, options = PINNED[name].build()
    verdicts = {
        f"{p.name}/{c.name}": expected(
            p, c, model.observed, adopt=options.adopt_2014_containers, now=now, liveness=liveness
        )
        for p in desired
        for c in p.containers
    }
    assert PINNED[name].expected == verdicts
