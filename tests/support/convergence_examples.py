"""Pinned worlds for the convergence properties: regression tests forever.

Each world is what ``tests.unit.planner.test_plan_properties.worlds`` could draw - desired pods, an
engine model holding what an earlier desired state left, then disturbed - written out
by hand: the counterexamples the properties found while podsync was written, and one
world per rule of ``tests.support.convergence_oracle``. ``PINNED`` maps a name to a factory
(each call builds a fresh world: the properties apply plans to the model) and to what
the oracle must expect of each container (``expected``), so the oracle itself is
checked too. ``pin`` puts them all on a property as ``@example``s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import example

from podsync import ObservedContainer, Pod, container_name, parse_pods
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.labels import LABEL_RESTART_COUNT
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_NAME
from tests.support.cri import cri_labels, cri_name
from tests.support.engine_model import EngineModel

T0 = 1_700_000_000.0

World = tuple[list[Pod], EngineModel, float, dict[str, bool], PlanOptions]


def pod_file(text: str) -> Pod:
    """The one pod of a pod file."""
    (pod,) = parse_pods(text, source="file")
    return pod


def pod(
    name: str,
    *,
    restart: str = "Always",
    image: str = "busybox:1.36",
    extra: str = "",
    host_port: int = 0,
    privileged: bool = False,
) -> Pod:
    """A one-container pod (container ``app``), as a person writes it."""
    ports = (
        f"\n      ports:\n      - containerPort: 80\n        hostPort: {host_port}"
        if host_port
        else ""
    )
    security = "\n      securityContext:\n        privileged: true" if privileged else ""
    return pod_file(
        f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: {restart}
  containers:
    - name: app
      image: {image}
      command: ["sleep", "3600"]{ports}{security}{extra}
"""
    )


def engine(earlier: list[Pod], options: PlanOptions) -> EngineModel:
    """An engine on which ``earlier`` was synced at ``T0`` (everything runs)."""
    images = {c.image for p in earlier for c in p.containers}
    model = EngineModel(image_tags=images)
    model.apply(plan(earlier, [], images=model.images, now=T0, options=options), T0)
    return model


def instance(model: EngineModel, pod_name: str, container: str = "app") -> ObservedContainer:
    (found,) = [
        o
        for o in model.observed
        if o.labels.get(LABEL_POD_NAME) == pod_name and o.labels.get(LABEL_CONTAINER) == container
    ]
    return found


def change(model: EngineModel, pod_name: str, container: str = "app", **fields: Any) -> None:
    """The instance of ``pod_name``'s ``container`` as a later observation finds it."""
    old = instance(model, pod_name, container)
    model.containers[old.id] = attrs.evolve(old, **fields)


def exited(code: int, at: float = T0 + 20) -> dict[str, Any]:
    return {"running": False, "exit_code": code, "finished_at": at}


# --- the worlds --------------------------------------------------------------------------


def never_pod_never_started() -> World:
    """Found against main's planner (issue 10, restart): a Never pod whose first start
    failed was judged completed, and never ran."""
    job = pod("job", restart="Never")
    model = engine([job], PlanOptions(scope=NODE_SCOPE))
    change(model, "job", running=False, exit_code=128, finished_at=None)
    return [job], model, T0 + 30, {}, PlanOptions(scope=NODE_SCOPE)


def never_pod_replacement_not_created() -> World:
    """Found against main's planner (issue 10, restart): podsync stopped a Never pod's
    container to replace it, the create of the replacement failed, and the next plan
    judged the stopped instance completed: the pod stayed down for good."""
    options = PlanOptions(scope=NODE_SCOPE)
    job = pod("job", restart="Never")
    model = engine([pod("job", restart="Never", image="busybox:1.35")], options)
    model.image_tags.add("busybox:1.36")
    change(model, "job", stopped_by_podsync="spec-changed", **exited(137, T0 + 10))
    return [job], model, T0 + 30, {}, options


def never_pod_stopped_for_a_rebuild() -> World:
    """podsync stopped a Never pod's container, which has the desired spec, to rebuild
    the pod (its network container had exited), and the create of the new network
    container failed: the stop was not a run, so the container starts again."""
    job = pod("job", restart="Never")
    model = engine([job], PlanOptions(scope=NODE_SCOPE))
    change(model, "job", stopped_by_podsync="pod-rebuild", **exited(137, T0 + 10))
    change(model, "job", "net", **exited(0, T0 + 10))
    return [job], model, T0 + 30, {}, PlanOptions(scope=NODE_SCOPE)


def never_pod_completed_then_spec_changed() -> World:
    """A completed Never container whose spec changed stays down (issue 27: the restart
    policy is absolute; issue 10 had made it run again)."""
    options = PlanOptions(scope=NODE_SCOPE)
    job = pod("job", restart="Never")
    model = engine([pod("job", restart="Never", image="busybox:1.35")], options)
    model.image_tags.add("busybox:1.36")
    change(model, "job", **exited(0))
    return [job], model, T0 + 30, {}, options


def never_pod_network_died() -> World:
    """A Never pod's network container died under its running container: the container
    is stopped, nothing is recreated, the pod has failed (computePodActions)."""
    job = pod("job", restart="Never")
    model = engine([job], PlanOptions(scope=NODE_SCOPE))
    change(model, "job", "net", **exited(137, T0 + 10))
    return [job], model, T0 + 30, {}, PlanOptions(scope=NODE_SCOPE)


def always_pod_network_died() -> World:
    """An Always pod's network container died under its running container: the pod is
    rebuilt, and the container runs again."""
    web = pod("web")
    model = engine([web], PlanOptions(scope=NODE_SCOPE))
    change(model, "web", "net", **exited(137, T0 + 10))
    return [web], model, T0 + 30, {}, PlanOptions(scope=NODE_SCOPE)


def on_failure_pod_completed() -> World:
    """A job that succeeded stays down, with its newest instance; its network container
    stops (nothing of the pod runs or will run)."""
    job = pod("job", restart="OnFailure")
    model = engine([job], PlanOptions(scope=NODE_SCOPE))
    change(model, "job", **exited(0))
    return [job], model, T0 + 30, {}, PlanOptions(scope=NODE_SCOPE)


def on_failure_pod_backing_off() -> World:
    """A job that failed for the fourth time waits out its back-off (80 s); its network
    container keeps running."""
    job = pod("job", restart="OnFailure")
    model = engine([job], PlanOptions(scope=NODE_SCOPE))
    old = instance(model, "job")
    labels = {**old.labels, LABEL_RESTART_COUNT: "3"}
    change(model, "job", labels=labels, **exited(1))
    return [job], model, T0 + 30, {}, PlanOptions(scope=NODE_SCOPE)


def killed_for_liveness_exit_0() -> World:
    """podsync killed an OnFailure container for its liveness probe and it exited 0 on
    SIGTERM: a failed run, restarted."""
    job = pod("job", restart="OnFailure")
    model = engine([job], PlanOptions(scope=NODE_SCOPE))
    change(model, "job", stopped_by_podsync="unhealthy", **exited(0))
    return [job], model, T0 + 1000, {}, PlanOptions(scope=NODE_SCOPE)


_PROBE = """
      livenessProbe:
        exec:
          command: ["true"]"""


_POST_START = """
      lifecycle:
        postStart:
          exec:
            command: ["true"]"""


_REQUESTS = """
      resources:
        requests:
          cpu: %s"""


def never_pod_with_a_post_start_hook() -> World:
    """A Never pod with a postStart hook that has not run yet: with an injected exec
    fault the hook fails, which is a failed run, and the pod stays down."""
    job = pod("job", restart="Never", extra=_POST_START)
    return [job], EngineModel(image_tags={"busybox:1.36"}), T0, {}, PlanOptions(scope=NODE_SCOPE)


def unhealthy_never() -> World:
    """A Never container whose liveness probe fails is stopped for good; its network
    container stops with it."""
    job = pod("job", restart="Never", extra=_PROBE)
    model = engine([job], PlanOptions(scope=NODE_SCOPE))
    return [job], model, T0 + 30, {instance(model, "job").id: False}, PlanOptions(scope=NODE_SCOPE)


def unhealthy_always() -> World:
    """An Always container whose liveness probe fails is replaced."""
    web = pod("web", extra=_PROBE)
    model = engine([web], PlanOptions(scope=NODE_SCOPE))
    return [web], model, T0 + 30, {instance(model, "web").id: False}, PlanOptions(scope=NODE_SCOPE)


def port_held_by_a_stopped_pod() -> World:
    """Found while porting admission (issue 10, images): a new pod whose host port an
    undesired pod still published. The plan stops the old pod and lets the new one wait
    a sync for the port, then starts it."""
    options = PlanOptions(scope=NODE_SCOPE, allow_deletions=True)
    model = engine([pod("old", host_port=80)], options)
    return [pod("web", host_port=80)], model, T0 + 30, {}, options


def port_held_beside_a_pod_too_big() -> World:
    """``port_held_by_a_stopped_pod``, beside a pod that requests more CPU than the node
    has: admission rejects it on every sync that knows the node's capacity. Found
    through the fault property (issue 27): once a stop failed, the sync after it let
    the new pod wait for the port, and the property planned once more without the
    capacity - and found the big pod to create."""
    options = PlanOptions(scope=NODE_SCOPE, allow_deletions=True)
    model = engine([pod("old", host_port=80)], options)
    big = pod("big", extra=_REQUESTS % "9")
    return [pod("web", host_port=80), big], model, T0 + 30, {}, options


def running_pod_keeps_its_port() -> World:
    """Found while porting admission (issue 10, images): a new pod listed before a
    running pod that publishes the same host port took the port, and neither ran. The
    running pod keeps it, the newcomer is rejected."""
    options = PlanOptions(scope=NODE_SCOPE)
    web = pod("web", host_port=80)
    model = engine([web], options)
    return [pod("new", host_port=80), web], model, T0 + 30, {}, options


def running_pods_clash_on_a_port() -> World:
    """Found by the derandomized ci profile (issue 11): two running pods ask for one
    host port. ``web``'s network container publishes it; ``job`` (listed first) runs
    only a container a 2014 kubelet left, without a network container. Admission took
    the running pods in input order, gave the port to ``job`` and rejected ``web``,
    which kept publishing it: ``job``'s new network container could never start. A
    port a running pod publishes is now its own, whatever the order."""
    options = PlanOptions(scope=NODE_SCOPE, adopt_2014_containers=True)
    web = pod("web", host_port=80)
    job = pod("job", host_port=80)
    model = engine([web], options)
    model.add(
        ObservedContainer(
            id="legacy0",
            name=container_name("app", 0, job.full_name, job.uid, 7),
            image="busybox:1.36",
            running=True,
            created=T0 - 10,
        )
    )
    return [job, web], model, T0 + 1, {}, options


def never_pod_network_lost_beside_a_newer_instance() -> World:
    """Found by the derandomized ci profile of the fault property (issue 27): a Never
    pod without a network container runs a container a 2014 kubelet left (adopted,
    created before) beside a newer instance podsync had stopped. The plan kills the
    adopted one (its network is lost: the pod has failed), and the global cap removed
    it in the same plan - it kept the newest *created* - so the next sync judged the
    other instance, no run, and ran the container again. GC now keeps the instance
    that ended last, the one the restart policy is judged on."""
    options = PlanOptions(
        scope=NODE_SCOPE,
        adopt_2014_containers=True,
        gc=GCPolicy(max_per_container=0, min_age=0, max_total=3),
    )
    job = pod("job", restart="Never")
    model = engine([pod("job", restart="Never", image="busybox:1.35")], options)
    del model.containers[instance(model, "job", "net").id]
    change(model, "job", stopped_by_podsync="not-in-spec", **exited(137, T0 + 0.5))
    model.image_tags.add("busybox:1.36")
    model.add(
        ObservedContainer(
            id="legacy0",
            name=container_name("app", 0, job.full_name, job.uid, 7),
            image="busybox:1.36",
            running=True,
            created=T0 - 10,
        )
    )
    return [job], model, T0 + 1000, {}, options


def port_kept_by_a_failing_never_pod() -> World:
    """Found by a random profile of the planner's property (issue 27): two running pods
    want one host port and neither publishes it - ``web``'s network container exited,
    ``job`` runs only a container a 2014 kubelet left, without one. ``job``, first in
    input order, keeps the port in the sync that kills its container for good (a
    ``Never`` pod whose network is lost has failed), and ``web`` waits: the next sync
    admits it, once ``job`` holds nothing (a pod whose containers are being stopped
    still counts, as for the kubelet's filterOutInactivePods)."""
    options = PlanOptions(scope=NODE_SCOPE, adopt_2014_containers=True)
    web = pod("web", host_port=80)
    job = pod("job", restart="Never", host_port=80)
    model = engine([web], options)
    change(model, "web", "net", **exited(137, T0 + 10))
    model.add(
        ObservedContainer(
            id="legacy0",
            name=container_name("app", 0, job.full_name, job.uid, 7),
            image="busybox:1.36",
            running=True,
            created=T0 - 10,
        )
    )
    return [job, web], model, T0 + 30, {}, options


def resources_kept_by_a_failing_never_pod() -> World:
    """Found by the ci profile of the fault property (issue 27): a ``Never`` pod whose
    network container died under its container keeps the CPU it requests in the sync
    that kills the container for good, and a new pod that does not fit beside it waits:
    the next sync admits it (a pod whose containers are being stopped still counts, as
    for the kubelet's filterOutInactivePods). On FakeRuntime's 8 CPUs."""
    options = PlanOptions(scope=NODE_SCOPE)
    job = pod("job", restart="Never", extra=_REQUESTS % "5")
    model = engine([job], options)
    change(model, "job", "net", **exited(137, T0 + 10))
    return [job, pod("web", extra=_REQUESTS % "4")], model, T0 + 30, {}, options


def privileged_not_allowed() -> World:
    """A privileged pod is rejected and its old containers are left alone."""
    options = PlanOptions(scope=NODE_SCOPE, allow_privileged=False)
    admin = pod("admin", privileged=True)
    model = engine([admin], PlanOptions(scope=NODE_SCOPE, allow_privileged=True))
    return [admin], model, T0 + 30, {}, options


def duplicates() -> World:
    """Two running instances of one container: one is stopped."""
    web = pod("web")
    model = engine([web], PlanOptions(scope=NODE_SCOPE))
    old = instance(model, "web")
    model.add(attrs.evolve(old, id=old.id + "d", name=old.name[:-8] + "000003e9"))
    return [web], model, T0 + 30, {}, PlanOptions(scope=NODE_SCOPE)


def legacy_container(adopt: bool) -> Callable[[], World]:
    def build() -> World:
        """A container a 2014 kubelet left for a desired pod: adopted (and, with name
        hash 0, kept running) with the adopt option; left alone without it."""
        options = PlanOptions(scope=NODE_SCOPE, adopt_2014_containers=adopt)
        web = pod("web")
        model = EngineModel(image_tags={"busybox:1.36"})
        model.add(
            ObservedContainer(
                id="legacy0",
                name=container_name("app", 0, web.full_name, web.uid, 7),
                image="busybox:1.36",
                running=True,
                created=T0 - 10,
            )
        )
        return [web], model, T0 + 30, {}, options

    return build


def kubernetes_node() -> World:
    """A Kubernetes node's containers (cri-dockerd's names and labels) next to a pod:
    never touched, even with deletions and adoption on."""
    options = PlanOptions(scope=NODE_SCOPE, allow_deletions=True, adopt_2014_containers=True)
    model = EngineModel(image_tags={"busybox:1.36"})
    uid = "0f9e8d7c-6b5a-4c3d-2e1f-000000000000"
    for n, kind in enumerate(("POD", "app")):
        model.add(
            ObservedContainer(
                id=f"foreign-k8s{n}",
                name=cri_name(kind, "web", "default", uid, 0),
                image="registry.k8s.io/kube-proxy:v1.29.2",
                labels=cri_labels(kind, "web", "default", uid),
                running=n == 0,
                created=T0 - 5000,
            )
        )
    return [pod("web")], model, T0 + 30, {}, options


def undesired_pod_without_deletions() -> World:
    """Without deletions, a pod that is no longer desired keeps running."""
    options = PlanOptions(scope=NODE_SCOPE, allow_deletions=False)
    model = engine([pod("old")], options)
    return [pod("web")], model, T0 + 30, {}, options


@attrs.frozen
class Pinned:
    build: Callable[[], World]
    #: What ``tests.support.convergence_oracle.expected`` must say, per "pod/container".
    expected: dict[str, str]


PINNED: dict[str, Pinned] = {
    "never-pod-never-started": Pinned(never_pod_never_started, {"job/app": "run"}),
    "never-pod-replacement-not-created": Pinned(
        never_pod_replacement_not_created, {"job/app": "run"}
    ),
    "never-pod-stopped-for-a-rebuild": Pinned(never_pod_stopped_for_a_rebuild, {"job/app": "run"}),
    "never-pod-completed-then-spec-changed": Pinned(
        never_pod_completed_then_spec_changed, {"job/app": "down"}
    ),
    "never-pod-network-died": Pinned(never_pod_network_died, {"job/app": "down"}),
    "always-pod-network-died": Pinned(always_pod_network_died, {"web/app": "run"}),
    "never-pod-with-a-post-start-hook": Pinned(
        never_pod_with_a_post_start_hook, {"job/app": "run"}
    ),
    "on-failure-pod-completed": Pinned(on_failure_pod_completed, {"job/app": "down"}),
    "on-failure-pod-backing-off": Pinned(on_failure_pod_backing_off, {"job/app": "run"}),
    "killed-for-liveness-exit-0": Pinned(killed_for_liveness_exit_0, {"job/app": "run"}),
    "unhealthy-never": Pinned(unhealthy_never, {"job/app": "either"}),
    "unhealthy-always": Pinned(unhealthy_always, {"web/app": "run"}),
    "port-held-by-a-stopped-pod": Pinned(port_held_by_a_stopped_pod, {"web/app": "run"}),
    "port-held-beside-a-pod-too-big": Pinned(
        port_held_beside_a_pod_too_big, {"web/app": "run", "big/app": "run"}
    ),
    "running-pod-keeps-its-port": Pinned(
        running_pod_keeps_its_port, {"web/app": "run", "new/app": "run"}
    ),
    "running-pods-clash-on-a-port": Pinned(
        running_pods_clash_on_a_port, {"web/app": "run", "job/app": "run"}
    ),
    "never-pod-network-lost-beside-a-newer-instance": Pinned(
        never_pod_network_lost_beside_a_newer_instance, {"job/app": "down"}
    ),
    "port-kept-by-a-failing-never-pod": Pinned(
        port_kept_by_a_failing_never_pod, {"web/app": "run", "job/app": "down"}
    ),
    "resources-kept-by-a-failing-never-pod": Pinned(
        resources_kept_by_a_failing_never_pod, {"job/app": "down", "web/app": "run"}
    ),
    "privileged-not-allowed": Pinned(privileged_not_allowed, {"admin/app": "run"}),
    "duplicates": Pinned(duplicates, {"web/app": "run"}),
    "legacy-adopted": Pinned(legacy_container(True), {"web/app": "run"}),
    "legacy-not-adopted": Pinned(legacy_container(False), {"web/app": "run"}),
    "kubernetes-node": Pinned(kubernetes_node, {"web/app": "run"}),
    "undesired-pod-without-deletions": Pinned(undesired_pod_without_deletions, {"web/app": "run"}),
}


def pin(*extra: Any) -> Callable[[Any], Any]:
    """``@example`` every pinned world (followed by ``extra`` arguments) on a property."""

    def decorate(test: Any) -> Any:
        for pinned in PINNED.values():
            test = example(pinned.build(), *extra)(test)
        return test

    return decorate
