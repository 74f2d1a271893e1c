"""Properties of the planner: deterministic, and convergent on a model of the engine."""

from __future__ import annotations

import attrs
from hypothesis import given
from hypothesis import strategies as st

from podsync import EnvVar, ObservedContainer, Pod, container_name, ownership, spec_hash
from podsync._actions import Kill, Plan, Reason, Remove, Wait
from podsync._hashing import SPEC_HASH_VERSION
from podsync._labels import LABEL_ATTEMPT, LABEL_SPEC, LABEL_SPEC_HASH
from podsync._options import GCPolicy, PlanOptions
from podsync._plan import plan
from podsync._plan_json import plan_from_json, plan_to_json
from tests.cri import cri_labels, cri_name
from tests.engine_model import EngineModel
from tests.strategies import dns_labels, later_states, pods

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


def waited_for_a_port(first: Plan, second: Plan) -> bool:
    """Whether ``second`` only starts pods that ``first`` rejected because a pod it
    stopped still held their host port: admission lets a new pod wait one sync rather
    than race the stop for the port (see ``podsync._admission.admit``)."""
    waiting = {
        r.pod
        for r in first.rejected
        if r.reason is Reason.HOST_PORT_CONFLICT and "held by running pod" in r.message
    }
    changed = {p.pod for p in second.pods if any(not isinstance(a, Wait) for a in p.actions)}
    return bool(waiting) and changed <= waiting


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


@given(worlds())
def test_plan_converges(world):
    """Plan, apply to the engine model, plan again: nothing left to do but wait, and no
    action ever names a foreign container."""
    desired, model, now, liveness, options = world
    foreign = {c.id for c in model.observed if c.id.startswith("foreign")}
    args = dict(now=now, liveness=liveness, options=options)

    first = plan(desired, model.observed, images=model.images, pod_dirs=model.pod_dirs, **args)
    model.apply(first, now)
    second = plan(desired, model.observed, images=model.images, pod_dirs=model.pod_dirs, **args)
    if waited_for_a_port(first, second):
        model.apply(second, now)
        second = plan(desired, model.observed, images=model.images, pod_dirs=model.pod_dirs, **args)

    assert [] == [a.message for a in second.actions if not isinstance(a, Wait)]
    assert [] == stale_specs(desired, model.observed, second, adopt=options.adopt_2014_containers)
    touched = {a.id for a in first.actions if isinstance(a, Kill | Remove)}
    assert set() == touched & foreign


def _instance_of(o: ObservedContainer, pod: Pod, container: str, adopt: bool) -> bool:
    owner = ownership(o, adopt_2014_containers=adopt)
    return (
        owner is not None
        and owner.container == container
        and owner.pod_full_name == pod.full_name
        and owner.pod_uid in ("", pod.uid)
    )


def stale_specs(
    desired: list[Pod], observed: list[ObservedContainer], after: Plan, *, adopt: bool
) -> list[str]:
    """What contradicts "a changed spec always takes effect" once a plan has converged:
    the desired containers whose newest instance - the one that runs, or else the one
    the restart policy is judged on - does not carry the desired spec hash, or is not a
    run at all (created and never started; stopped by podsync other than for a
    failure; unless it waits out the back-off of a start that keeps failing). A
    container that runs, waits out a back-off, or has completed therefore does so with
    the desired spec. Containers waiting for an image they may not pull
    are left out, and so are instances whose hash has another version (or none: a 2014
    kubelet's), which the planner compares field by field."""
    rejected = {r.pod for r in after.rejected}
    waits = {(a.pod, a.container): a.reason for a in after.actions if isinstance(a, Wait)}
    problems = []
    for pod in desired:
        if pod.key in rejected:
            continue
        for c in pod.containers:
            wait = waits.get((pod.key, c.name))
            if wait is Reason.IMAGE_NEVER_PULL:
                continue
            mine = [o for o in observed if _instance_of(o, pod, c.name, adopt)]
            running = [o for o in mine if o.running]
            if not running and not mine:
                problems.append(f"{pod.key}/{c.name}: no instance")
                continue
            if not running:
                newest = max(mine, key=lambda o: (o.finished_at or o.created, o.created))
                if newest.finished_at is None and wait is not Reason.BACK_OFF:
                    problems.append(f"{pod.key}/{c.name}: {newest.name} never started")
                elif newest.stopped_by_podsync not in ("", "unhealthy", "post-start-failed"):
                    problems.append(
                        f"{pod.key}/{c.name}: {newest.name} stopped by podsync "
                        f"({newest.stopped_by_podsync}) and not replaced"
                    )
                running = [newest]
            # The options the plan was made with shape the hash too (the root directory).
            want = str(spec_hash(c, pod, root_dir=after.options.root_dir))
            for o in running:
                text = o.labels.get(LABEL_SPEC_HASH, "")
                if text.startswith(f"{SPEC_HASH_VERSION}:") and text != want:
                    problems.append(f"{pod.key}/{c.name}: {o.name} has {text}, not {want}")
    return problems
