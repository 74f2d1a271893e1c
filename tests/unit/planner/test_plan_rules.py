"""Planner rules that a mutation run found untested: one behaviour-level test per rule.

Each test names the rule it pins down and the mutation of the planner (``podsync/planner/_plan.py``
then) it kills
(a mutant that survives the whole pure suite is a rule nothing checks). The pods are
written as people write pod files; the engine is the pure ``EngineModel``.
"""

from __future__ import annotations

import attrs
import pytest

from podsync import ObservedContainer, ObservedImage, Pod, RestartPolicy, parse_pods
from podsync.actions._actions import Create, Kill, Plan, Reason, Remove, Wait
from podsync.actions._options import NODE_SCOPE, BackOffPolicy, GCPolicy, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_RESTART_COUNT
from podsync.spec._naming import NETWORK_CONTAINER
from tests.support.engine_model import EngineModel
from tests.support.image_references import DIGEST

NOW = 1_000_000.0
IMAGES = {"busybox:1.36", "registry.k8s.io/pause:3.10"}


def pod_file(text: str) -> Pod:
    """The one pod of a pod file, read as ``podsync apply`` reads it."""
    (pod,) = parse_pods(text, source_name="pods/test.yaml", source="file")
    return pod


JOB = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: job
spec:
  restartPolicy: OnFailure
  containers:
    - name: work
      image: busybox:1.36
      command: ["sh", "-c", "make report"]
"""
)

PROBED_ONCE = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: once
spec:
  restartPolicy: Never
  containers:
    - name: app
      image: busybox:1.36
      command: ["sh", "-c", "serve"]
      livenessProbe:
        exec:
          command: ["cat", "/tmp/healthy"]
"""
)

WEB = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
    - name: app
      image: busybox:1.36
      command: ["httpd", "-f"]
"""
)


def run(desired: list[Pod], model: EngineModel, *, now: float = NOW, **kwargs) -> Plan:
    return plan(
        desired,
        model.observed,
        images=model.images,
        pod_dirs=model.pod_dirs,
        now=now,
        **kwargs,
    )


def running(pod: Pod, *, at: float = NOW - 1000) -> EngineModel:
    """An engine on which podsync started ``pod`` at time ``at``."""
    model = EngineModel(image_tags=set(IMAGES))
    model.apply(run([pod], model, now=at), at)
    assert [] == kinds(run([pod], model, now=at)), "the pod should run as planned"
    return model


def instance(model: EngineModel, container: str) -> ObservedContainer:
    """The running instance of ``container`` (``net`` for the network container)."""
    return next(c for c in model.observed if c.running and f"_{container}." in c.name)


def kinds(p: Plan) -> list[tuple[str, str]]:
    return [(type(a).__name__, getattr(a, "container", "")) for a in p.actions]


# --- restart policy ---------------------------------------------------------------------


def test_on_failure_container_that_never_started_is_started():
    """OnFailure leaves down only a container that *ran* and exited 0. A container that
    was created but never started (its start failed, or apply stopped between create and
    start; Docker reports exit code 0 for it) has not succeeded, so it is started.

    Kills the mutant that judges OnFailure on the exit code alone (drops ``started``).
    """
    model = running(JOB)
    work = instance(model, "work")
    model.containers[work.id] = attrs.evolve(
        work, running=False, exit_code=0, finished_at=None, created=NOW - 60
    )

    p = run([JOB], model)

    assert [("Create", "work")] == kinds(p)


def test_liveness_failure_under_restart_policy_never_stops_the_container_for_good():
    """A failed liveness probe stops the container; under ``restartPolicy: Never`` it is
    not started again (kubelet-modern.md §1.3: a probe kill restarts only when the policy
    is not Never), and with nothing left running the pod's network container stops.

    Kills the mutant that restarts an unhealthy container whatever the policy.
    """
    model = running(PROBED_ONCE)
    app = instance(model, "app")

    p = run([PROBED_ONCE], model, liveness={app.id: False})

    assert [("Kill", "app"), ("Kill", NETWORK_CONTAINER)] == kinds(p)
    assert (Reason.UNHEALTHY, app.id) == (p.actions[0].reason, p.actions[0].id)


def _crashed(ran_for: float) -> EngineModel:
    """WEB's ``app`` has crashed 5 times before (restart count 5), and its last instance
    ran for ``ran_for`` seconds before it exited with code 1, five seconds ago."""
    model = running(WEB)
    app = instance(model, "app")
    labels = {**app.labels, LABEL_RESTART_COUNT: "5"}
    model.containers[app.id] = attrs.evolve(
        app,
        labels=labels,
        running=False,
        exit_code=1,
        created=NOW - 5 - ran_for,
        finished_at=NOW - 5,
    )
    return model


def test_back_off_starts_over_after_a_long_run():
    """A container that ran for ``reset_after`` seconds (10 min) before it crashed is not
    crash-looping: its back-off starts over, so it restarts at once, as restart 1
    (kubelet-modern.md §2, rule 4).

    Kills the mutants that drop the reset, reset to anything but zero restarts, or
    compare the run time with ``>`` (the boundary itself resets).
    """
    model = _crashed(ran_for=BackOffPolicy().reset_after)

    p = run([WEB], model)

    assert [("Create", "app")] == kinds(p)
    (create,) = p.actions
    assert "1" == create.spec.labels[LABEL_RESTART_COUNT]


def test_back_off_continues_after_a_short_run():
    """A second short of ``reset_after``, the crash loop goes on: restart 6 waits 160 s
    (10 s doubling, five times) from the exit five seconds ago.

    Kills the mutant that resets the back-off whatever the run time (e.g. ``+`` for
    ``-`` in the run-time computation).
    """
    model = _crashed(ran_for=BackOffPolicy().reset_after - 1)

    p = run([WEB], model)

    assert [("Wait", "app")] == kinds(p)
    (wait,) = p.actions
    assert isinstance(wait, Wait)
    assert (Reason.BACK_OFF, 155.0) == (wait.reason, wait.seconds)


# --- garbage collection -------------------------------------------------------------------


def test_gc_keeps_the_newest_exited_instance_even_when_asked_to_keep_none():
    """``max_per_container: 0`` still keeps the newest exited instance of a desired
    container: the restart policy is judged on it. The job below failed once, then
    succeeded; the failed run is collected, the successful one stays, and the job is
    not run a third time.

    Kills the mutant that keeps exactly ``max_per_container`` instances.
    """
    options = PlanOptions(scope=NODE_SCOPE, gc=GCPolicy(max_per_container=0, min_age=0))
    model = running(JOB, at=NOW - 100)
    failed = instance(model, "work")
    model.exit(failed.id, 1, NOW - 90)
    model.apply(run([JOB], model, now=NOW - 90, options=options), NOW - 90)
    succeeded = instance(model, "work")
    model.exit(succeeded.id, 0, NOW - 50)

    p = run([JOB], model, options=options)

    removed = [a.id for a in p.actions if isinstance(a, Remove)]
    assert [failed.id] == removed
    model.apply(p, NOW)
    assert [] == kinds(run([JOB], model, options=options))


# --- admission ------------------------------------------------------------------------------


def test_second_pod_with_the_same_full_name_is_rejected():
    """Two pod files that name the same pod (same name, namespace and source) are one
    pod twice, even when they carry different uids: the second is rejected, and only the
    first is planned. (``load_pods`` refuses this within one load; a program that reads
    its files one by one with ``parse_pods`` relies on the planner.)

    Kills the mutant that detects duplicates by uid alone.
    """
    first = pod_file(
        """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  uid: 0b1e4d2a-6f0c-4c1a-9d57-5b9a3a0f1c11
spec:
  containers:
    - name: app
      image: busybox:1.36
"""
    )
    second = pod_file(
        """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  uid: 7c3f9e10-2b4d-4e8f-a1c6-0d2e5f7a9b33
spec:
  containers:
    - name: app
      image: busybox:1.36
"""
    )
    assert first.full_name == second.full_name
    assert first.uid != second.uid

    p = plan([first, second], [], now=NOW)

    assert [(second.uid, Reason.DUPLICATE_POD)] == [(r.uid, r.reason) for r in p.rejected]
    assert [first.uid] == [pp.uid for pp in p.pods]


# --- pods that are no longer desired ---------------------------------------------------------


def test_pod_no_longer_desired_stops_its_apps_before_their_network_container():
    """A pod that left the desired state is stopped app containers first, then the
    network container they live in (stopped first, it would cut the apps' network while
    their preStop handlers and shutdown run) - whatever the creation times say. Here the
    host clock stepped back between creating ``net`` and ``app``, so ``net`` looks newer.

    Kills the mutants that drop or invert the "network container last" ordering.
    """
    model = running(WEB)
    net, app = instance(model, NETWORK_CONTAINER), instance(model, "app")
    model.containers[net.id] = attrs.evolve(net, created=NOW - 500)
    model.containers[app.id] = attrs.evolve(app, created=NOW - 700)

    p = run([], model, options=PlanOptions(scope=NODE_SCOPE))

    kills = [(a.container, a.id) for a in p.actions if isinstance(a, Kill)]
    assert [("app", app.id), (NETWORK_CONTAINER, net.id)] == kills
    assert all(a.reason is Reason.POD_NOT_DESIRED for a in p.actions if isinstance(a, Kill))
    assert not [a for a in p.actions if isinstance(a, Create)]


# --- images -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("listed", "wanted"),
    [
        # Podman and containerd list fully qualified names; Docker lists "busybox:latest".
        (ObservedImage("sha256:b", tags=("docker.io/library/busybox:latest",)), "busybox"),
        (ObservedImage("sha256:b", tags=("docker.io/library/busybox",)), "busybox:latest"),
        (
            ObservedImage("sha256:b", digests=(f"docker.io/library/busybox@{DIGEST}",)),
            f"busybox@{DIGEST}",
        ),
    ],
)
def test_present_image_is_found_however_the_runtime_spells_it(listed, wanted):
    """An image is present when the engine lists it under any spelling of the same
    reference: the references a runtime lists are normalized too, not only the pod's.

    Kills the mutants that compare the pod's normalized reference with the listed tags or
    digests as they are.
    """
    (pod,) = parse_pods(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: tools
spec:
  containers:
    - name: shell
      image: {wanted}
      imagePullPolicy: Never
""",
        source="file",
    )
    pause = ObservedImage("sha256:p", tags=("registry.k8s.io/pause:3.10",))

    p = plan([pod], [], images=[pause, listed], now=NOW)

    assert [] == list(p.pulls)
    assert [(NETWORK_CONTAINER, Reason.NETWORK_MISSING), ("shell", Reason.MISSING)] == [
        (a.container, a.reason) for a in p.actions
    ]


# --- found by tools/mutation.sh -----------------------------------------------------------


def test_gc_removes_exited_instances_older_than_min_age_and_keeps_younger_ones():
    """Of the exited instances that exited more than ``min_age`` seconds ago, the
    newest ``max_per_container`` stay and the older ones are removed (seed
    purgeOldest); one that exited exactly ``min_age`` ago, or later, is not counted.

    Kills the mutants that measure age from now (nothing old ever goes) and that
    compare with ``>=``.
    """
    options = PlanOptions(scope=NODE_SCOPE, gc=GCPolicy(max_per_container=1, min_age=60))
    model = running(WEB, at=NOW - 5)
    app = instance(model, "app")
    # Three earlier instances that crashed, oldest first; the one above replaced them.
    exited = [f"crashed-{n}" for n in range(4)]
    for cid, ended in zip(exited, (NOW - 400, NOW - 300, NOW - 60, NOW - 10), strict=True):
        model.add(
            attrs.evolve(
                app, id=cid, running=False, exit_code=1, created=ended - 50, finished_at=ended
            )
        )

    p = run([WEB], model, options=options)

    removed = [a.id for a in p.actions if isinstance(a, Remove)]
    assert [exited[0]] == removed


def test_pod_directories_with_unsafe_names_are_never_torn_down():
    """A directory under the root whose name could leave the root, or is empty, is
    never turned into a path to remove; an ordinary stale one is."""
    unsafe = {"", ".", "..", "a/b", "nul\0"}

    p = plan([], [], pod_dirs=unsafe | {"gone"}, now=NOW, options=PlanOptions(scope=NODE_SCOPE))

    assert [("RemovePodDir", "gone")] == [(type(a).__name__, a.pod_uid) for a in p.actions]


@pytest.mark.parametrize(
    ("suffix", "next_suffix"),
    [
        # The next number, up to the largest 32-bit one.
        ("fffffffe", "ffffffff"),
        # A 2014 kubelet wrote random suffixes: past the top, a free number is taken.
        ("ffffffff", "00000000"),
    ],
)
def test_restart_of_a_2014_container_numbers_its_successor(suffix, next_suffix):
    """The new instance of an adopted 2014 kubelet's container gets the next attempt
    number, or a free one when the old suffix is already the largest."""
    job = attrs.evolve(JOB, restart_policy=RestartPolicy.ALWAYS)
    net = ObservedContainer(
        id="n1",
        name=f"k8s_net.0_{job.full_name}_{job.uid}_00000001",
        image="registry.k8s.io/pause:3.10",
        running=True,
    )
    old = ObservedContainer(
        id="w1",
        name=f"k8s_work.0_{job.full_name}_{job.uid}_{suffix}",
        image="busybox",
        running=False,
        exit_code=1,
        finished_at=NOW - 100,
    )
    options = PlanOptions(scope=NODE_SCOPE, adopt_2014_containers=True)

    p = plan(
        [job],
        [net, old],
        images=EngineModel(image_tags=set(IMAGES)).images,
        now=NOW,
        options=options,
    )

    (create,) = [a for a in p.actions if isinstance(a, Create)]
    assert create.spec.name.endswith(f"_{next_suffix}")


def test_deletions_limited_to_ready_sources_read_the_source_label():
    """With deletions limited to the sources that reported completely, a pod podsync
    runs that left a ready source is stopped; one from a source not yet ready stays."""
    from_file = WEB
    (from_http,) = parse_pods(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: api\nspec:\n"
        "  containers:\n    - name: app\n      image: busybox:1.36\n",
        source="http",
    )
    model = running(from_file)
    model.apply(run([from_file, from_http], model), NOW - 1000)
    options = PlanOptions(scope=NODE_SCOPE, ready_sources=frozenset({"file"}))

    p = run([], model, options=options)

    assert {from_file.uid} == {pp.uid for pp in p.pods if pp.actions}


HOOKED = pod_file(
    """\
apiVersion: v1
kind: Pod
metadata:
  name: shop
  namespace: prod
spec:
  terminationGracePeriodSeconds: 45
  containers:
    - name: app
      image: busybox
      command: ["httpd", "-f"]
      lifecycle:
        preStop:
          exec:
            command: ["sh", "-c", "drain"]
"""
)


def _kill_fields(kill: Kill) -> tuple:
    hook = kill.pre_stop.exec_command if kill.pre_stop is not None else None
    return (
        kill.pod,
        kill.pod_uid,
        kill.container,
        kill.name,
        kill.timeout,
        kill.reason,
        kill.message,
        hook,
        kill.record_stop,
    )


def test_every_field_of_a_replacing_stop():
    """A stop that replaces a container says whose it is, gives the pod's grace period,
    runs the preStop hook, and asks for a stop record (it is not a run)."""
    model = running(HOOKED)
    app = instance(model, "app")
    edited = attrs.evolve(
        HOOKED, containers=(attrs.evolve(HOOKED.containers[0], image="busybox:1.36"),)
    )

    p = run([edited], model)

    (kill,) = [a for a in p.actions if isinstance(a, Kill)]
    assert (
        "prod/shop",
        HOOKED.uid,
        "app",
        app.name,
        45,
        Reason.SPEC_CHANGED,
        f"stop prod/shop/app ({app.name}): replaced, spec changed (image busybox -> busybox:1.36)",
        ("sh", "-c", "drain"),
        True,
    ) == _kill_fields(kill)
    assert app.id == kill.id


def test_every_field_of_the_stops_and_removals_of_a_pod_no_longer_desired():
    """A pod that is no longer desired is stopped with the grace period and preStop hook
    its containers were created with (read from their labels), and, with no minimum
    age, removed in the same plan; every action names the pod, its uid and the
    container."""
    model = running(HOOKED)
    app, net = instance(model, "app"), instance(model, NETWORK_CONTAINER)
    options = PlanOptions(scope=NODE_SCOPE, gc=GCPolicy(min_age=0))

    p = run([], model, options=options)

    kills = [a for a in p.actions if isinstance(a, Kill)]
    assert [
        (
            "prod/shop",
            HOOKED.uid,
            "app",
            app.name,
            45,
            Reason.POD_NOT_DESIRED,
            f"stop prod/shop/app ({app.name}): pod is no longer desired",
            ("sh", "-c", "drain"),
            False,
        ),
        (
            "prod/shop",
            HOOKED.uid,
            NETWORK_CONTAINER,
            net.name,
            45,
            Reason.POD_NOT_DESIRED,
            f"stop prod/shop/net ({net.name}): pod is no longer desired",
            None,
            False,
        ),
    ] == [_kill_fields(k) for k in kills]
    assert [app.id, net.id] == [k.id for k in kills]
    assert [
        Remove(
            pod="prod/shop",
            pod_uid=HOOKED.uid,
            container=container,
            id=observed.id,
            name=observed.name,
            reason=Reason.GC_NOT_DESIRED,
            message=f"remove prod/shop/{container} ({observed.name}): exited, pod is no "
            "longer desired",
        )
        for container, observed in (("app", app), (NETWORK_CONTAINER, net))
    ] == [a for a in p.actions if isinstance(a, Remove)]
