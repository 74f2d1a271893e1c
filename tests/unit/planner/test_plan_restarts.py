"""Restart decisions: what counts as a run, and when a spec change starts a container.

The restart policy is judged on how a container's newest instance *ended by itself*
(the modern kubelet's ``ShouldContainerBeRestarted``, kubelet-modern.md §1.1). An
instance podsync stopped, or one that was created and never started, is not such a run;
a run that the policy does not restart is never run again, whatever its spec now; a
changed spec takes effect on a running container, or one the policy restarts, with a
fresh crash-loop back-off. ``test_compute_pod_actions`` has the rules as one table.
"""

from __future__ import annotations

import attrs
import pytest

from podsync import Container, EnvVar, Handler, Pod, Probe, RestartPolicy
from podsync.actions._actions import Create, Kill, Plan, Reason, Wait
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_RESTART_COUNT, LABEL_SPEC_HASH
from tests.unit.planner.test_plan import ALL_PRESENT, NOW, foo_pod, kinds, labelled, run


def _bar(model):
    return next(c for c in model.observed if "_bar." in c.name)


def _with(model, container, **changes):
    model.containers[container.id] = attrs.evolve(container, **changes)


def _restart_count(create: Create) -> str:
    return create.spec.labels[LABEL_RESTART_COUNT]


def _changed(pod: Pod) -> Pod:
    """``pod`` with an environment variable added to its container ``bar``."""
    bar = pod.containers[0]
    return attrs.evolve(pod, containers=(attrs.evolve(bar, env=(EnvVar("V", "2"),)),))


# --- instances podsync stopped ----------------------------------------------------------


@pytest.mark.parametrize("why", ["spec-changed", "pod-rebuild", "duplicate", "not-in-spec"])
@pytest.mark.parametrize(
    ("policy", "exit_code"),
    [
        (RestartPolicy.NEVER, 0),
        (RestartPolicy.NEVER, 137),
        (RestartPolicy.ON_FAILURE, 0),
        (RestartPolicy.ALWAYS, 0),
    ],
)
def test_instance_podsync_stopped_is_not_a_run(policy, exit_code, why):
    """A container whose newest instance podsync stopped (to replace it, ...) and whose
    replacement never ran is started again, whatever its restart policy and exit code,
    at once: that stop was not a run, so the pod is not left down."""
    pod = foo_pod(restart_policy=policy)
    model = labelled(pod)
    bar = _bar(model)
    _with(
        model,
        bar,
        running=False,
        exit_code=exit_code,
        finished_at=NOW - 1,
        stopped_by_podsync=why,
    )

    p = run([pod], model.observed)

    assert [("Create", "bar")] == kinds(p)
    (create,) = p.actions
    assert Reason.NOT_REPLACED == create.reason
    assert (
        f"create new/foo/bar: podsync stopped its last instance ({why}) and nothing "
        "replaced it; that was not a run" == create.message
    )
    assert "0" == _restart_count(create)


@pytest.mark.parametrize("why", ["unhealthy", "post-start-failed"])
def test_instance_podsync_killed_for_a_failure_is_a_failed_run(why):
    """An instance podsync stopped because it failed (its liveness probe, its postStart
    handler) failed, even when the stopped process exited 0: OnFailure restarts it."""
    pod = foo_pod(restart_policy=RestartPolicy.ON_FAILURE)
    model = labelled(pod)
    _with(
        model, _bar(model), running=False, exit_code=0, finished_at=NOW - 1, stopped_by_podsync=why
    )

    p = run([pod], model.observed)

    (create,) = p.actions
    assert ("bar", "1") == (create.container, _restart_count(create))
    what = "liveness probe failed" if why == "unhealthy" else "postStart handler failed"
    assert f"stopped by podsync: {what}" in create.message, create.message


@pytest.mark.parametrize("why", ["unhealthy", "post-start-failed"])
def test_instance_podsync_killed_for_a_failure_stays_down_under_never(why):
    """Under Never a container killed for a failure is not restarted (the kubelet: a
    probe kill restarts only if the policy is not Never); the pod completes."""
    pod = foo_pod(restart_policy=RestartPolicy.NEVER)
    model = labelled(pod)
    _with(
        model, _bar(model), running=False, exit_code=0, finished_at=NOW - 1, stopped_by_podsync=why
    )

    p = run([pod], model.observed)

    assert [("Kill", "net")] == kinds(p)


def test_instance_killed_for_a_failure_backs_off():
    """The restart after a podsync kill for a failure goes through the crash-loop
    back-off of the killed instance."""
    pod = foo_pod()
    model = labelled(pod)
    bar = _bar(model)
    labels = {**bar.labels, LABEL_RESTART_COUNT: "2"}
    _with(
        model,
        bar,
        labels=labels,
        running=False,
        exit_code=137,
        finished_at=NOW - 5,
        stopped_by_podsync="unhealthy",
    )

    p = run([pod], model.observed)

    assert [("Wait", "bar")] == kinds(p)
    assert (
        "wait new/foo/bar: stopped by podsync: liveness probe failed, back-off 20s, 15s left"
        == p.actions[0].message
    )


# --- a changed spec, and the restart policy ---------------------------------------------


@pytest.mark.parametrize(
    ("policy", "exit_code"),
    [
        (RestartPolicy.NEVER, 0),
        (RestartPolicy.NEVER, 1),
        (RestartPolicy.ON_FAILURE, 0),
    ],
)
def test_completed_container_whose_spec_changed_stays_down(policy, exit_code):
    """A container that has ended and that its policy does not restart stays down, even
    when its spec changed since it ran: the restart policy is absolute (issue 27; the
    kubelet replaces only a running container whose hash changed). Only the network
    container, which nothing needs now, stops."""
    pod = foo_pod(restart_policy=policy)
    model = labelled(pod)
    _with(model, _bar(model), running=False, exit_code=exit_code, finished_at=NOW - 50)
    changed = _changed(pod)

    p = run([changed], model.observed)

    assert [("Kill", "net")] == kinds(p)
    assert Reason.POD_COMPLETED == p.actions[0].reason


def test_failed_on_failure_container_whose_spec_changed_runs_at_once():
    """OnFailure after a failure restarts; a changed spec is a new container, without
    the old one's back-off."""
    pod = foo_pod(restart_policy=RestartPolicy.ON_FAILURE)
    model = labelled(pod)
    _with(model, _bar(model), running=False, exit_code=1, finished_at=NOW - 1)

    p = run([_changed(pod)], model.observed)

    (create,) = p.actions
    assert Reason.SPEC_CHANGED == create.reason
    assert (
        "replace new/foo/bar: exited with code 1, and its spec changed "
        "(env changed): a new container" == create.message
    )


def test_backing_off_container_whose_spec_changed_starts_at_once():
    """A container in crash-loop back-off whose spec changed starts at once, with a fresh
    back-off (the modern kubelet keys back-off on the spec hash, §2)."""
    pod = foo_pod()
    model = labelled(pod)
    bar = _bar(model)
    labels = {**bar.labels, LABEL_RESTART_COUNT: "4"}
    _with(model, bar, labels=labels, running=False, exit_code=1, finished_at=NOW - 5)
    assert [("Wait", "bar")] == kinds(run([pod], model.observed))

    p = run([_changed(pod)], model.observed)

    (create,) = p.actions
    assert (Reason.SPEC_CHANGED, "0") == (create.reason, _restart_count(create))


def test_unchanged_completed_container_stays_down():
    """Without a spec change, a completed Never container stays down: the plan after
    the pod completed is empty."""
    pod = foo_pod(restart_policy=RestartPolicy.NEVER)
    model = labelled(pod)
    _with(model, _bar(model), running=False, exit_code=0, finished_at=NOW - 50)
    model.apply(run([pod], model.observed), NOW)

    p = run([pod], model.observed)

    assert [] == kinds(p)
    assert "No changes. The engine matches the desired pods." == p.describe()


# --- created, never started ---------------------------------------------------------------


@pytest.mark.parametrize("policy", list(RestartPolicy))
def test_container_created_but_never_started_is_started_under_any_policy(policy):
    """A container that was created but never started (its start failed, or apply was
    interrupted between create and start) is not a run: it is started under any restart
    policy (the modern kubelet restarts containers in the created state)."""
    pod = foo_pod(restart_policy=policy)
    model = labelled(pod)
    _with(model, _bar(model), running=False, created=NOW - 50, finished_at=None)

    p = run([pod], model.observed)

    (create,) = p.actions
    assert ("bar", Reason.NOT_STARTED) == (create.container, create.reason)
    assert (
        "create new/foo/bar: its last instance was created but never started; "
        "that was not a run (restart 1)" == create.message
    )


def test_never_pod_whose_start_keeps_failing_backs_off():
    """A start that keeps failing backs off, under Never too, rather than creating a
    container every sync."""
    pod = foo_pod(restart_policy=RestartPolicy.NEVER)
    model = labelled(pod)
    bar = _bar(model)
    labels = {**bar.labels, LABEL_RESTART_COUNT: "1"}
    _with(model, bar, labels=labels, running=False, created=NOW - 5, finished_at=None)

    p = run([pod], model.observed)

    assert [("Wait", "bar")] == kinds(p)
    assert "wait new/foo/bar: did not start, back-off 10s, 5s left" == p.actions[0].message


# --- liveness kills -------------------------------------------------------------------------


def _probed(policy: RestartPolicy = RestartPolicy.ALWAYS) -> Pod:
    probe = Probe(Handler(exec_command=("true",)))
    return foo_pod(Container("bar", "busybox", liveness_probe=probe), restart_policy=policy)


def test_first_liveness_kill_restarts_at_once():
    """A container killed for its liveness probe the first time is replaced at once."""
    pod = _probed()
    model = labelled(pod)

    p = run([pod], model.observed, liveness={_bar(model).id: False})

    assert [("Kill", "bar"), ("Create", "bar")] == kinds(p)
    assert (Reason.UNHEALTHY, "1") == (p.actions[1].reason, _restart_count(p.actions[1]))


def test_repeated_liveness_kills_back_off():
    """A container repeatedly killed for its liveness probe is stopped at once but
    restarted through the crash-loop back-off, not on every sync."""
    pod = _probed()
    model = labelled(pod)
    bar = _bar(model)
    _with(model, bar, labels={**bar.labels, LABEL_RESTART_COUNT: "2"})

    p = run([pod], model.observed, liveness={bar.id: False})

    assert [("Kill", "bar"), ("Wait", "bar")] == kinds(p)
    kill, wait = p.actions
    assert Reason.UNHEALTHY == kill.reason
    assert (Reason.BACK_OFF, 20.0) == (wait.reason, wait.seconds)
    assert "wait new/foo/bar: liveness probe failed, back-off 20s, 20s left" == wait.message


def test_liveness_kill_under_never_does_not_restart():
    """Under Never a liveness kill stops the container for good."""
    pod = _probed(RestartPolicy.NEVER)
    model = labelled(pod)

    p = run([pod], model.observed, liveness={_bar(model).id: False})

    assert [("Kill", "bar"), ("Kill", "net")] == kinds(p)


# --- which stops are recorded ---------------------------------------------------------------


def test_kills_of_desired_pods_containers_are_recorded():
    """The plan asks apply to record its stops of a desired pod's containers (an app
    container's must not be judged as a run later, a network container's as a lost
    network), and not those of pods that are no longer desired."""
    pod = foo_pod()
    model = labelled(pod)
    bar = _bar(model)

    replaced = run([_changed(pod)], model.observed)
    rebuilt = run(
        [pod], model.observed, options=PlanOptions(scope=NODE_SCOPE, network_image="pause:2")
    )
    gone = run([], model.observed)

    assert [(bar.id, True)] == [
        (a.id, a.record_stop) for a in replaced.actions if isinstance(a, Kill)
    ]
    assert [("bar", True), ("net", True)] == [
        (a.container, a.record_stop) for a in rebuilt.actions if isinstance(a, Kill)
    ]
    assert {False} == {a.record_stop for a in gone.actions if isinstance(a, Kill)}


def test_spec_hash_after_spec_change_of_exited_container():
    """The new attempt after a spec change carries the new spec hash, and the plan after
    it is empty."""
    pod = foo_pod(restart_policy=RestartPolicy.ALWAYS)
    model = labelled(pod)
    _with(model, _bar(model), running=False, exit_code=0, finished_at=NOW - 50)
    changed = _changed(pod)

    p: Plan = plan([changed], model.observed, images=ALL_PRESENT, now=NOW)
    model.apply(p, NOW)

    running = [c for c in model.observed if c.running and "_bar." in c.name]
    assert [p.actions[0].spec.labels[LABEL_SPEC_HASH]] == [
        c.labels[LABEL_SPEC_HASH] for c in running
    ]
    assert [] == kinds(run([changed], model.observed))
    assert not any(isinstance(a, Wait) for a in p.actions)
