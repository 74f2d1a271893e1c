"""Records of containers that are gone (``podsync.spec._records``): a stop or probe record
outlives its container when someone removes the container by hand (``docker rm -f``);
the planner removes it once the container is not among the observed ones - never the
record of a container that still exists, running or exited, and never a volume podsync
did not make as a record. On FakeRuntime and on observed values; the engine's side is
``tests/engine/test_records.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from podsync import (
    Container,
    Create,
    Handler,
    Kill,
    ObservedContainer,
    ObservedVolume,
    Plan,
    Pod,
    Probe,
    Reason,
    RemovePodDir,
    RemoveVolume,
    RestartPolicy,
    plan,
    sync,
)
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.applier._stop_records import write_stop_record
from podsync.spec._labels import LABEL_CONTAINER, LABEL_RECORD_CONTAINER
from podsync.spec._records import (
    Record,
    named_as_made,
    probe_record_labels,
    probe_record_volume,
    records_of,
    stop_record_labels,
    stop_record_volume,
)
from podsync.testing import FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
OPTIONS = PlanOptions(scope=NODE_SCOPE, root_dir="/nonexistent/podsync")
ON_FAILURE = RestartPolicy.ON_FAILURE


def web(*containers: Container, **fields: Any) -> Pod:
    return Pod(
        "web",
        containers or (Container("app", "busybox"), Container("log", "busybox")),
        namespace="default",
        source="file",
        uid="web-uid",
        **fields,
    )


def started(*pods: Pod) -> FakeRuntime:
    """A fake engine running ``pods``, as one sync left them."""
    fake = FakeRuntime(images=["busybox", "busybox:2", PAUSE], clock=lambda: NOW)
    assert sync(list(pods), fake, options=OPTIONS, now=NOW, clock=fake.clock).ok
    return fake


def instance(fake: FakeRuntime, container: str) -> ObservedContainer:
    (found,) = [c for c in fake.containers if c.labels.get(LABEL_CONTAINER) == container]
    return found


def stop_record(uid: str, container_id: str, reason: str = "spec-changed") -> ObservedVolume:
    return ObservedVolume(
        stop_record_volume(container_id), stop_record_labels(uid, container_id, reason)
    )


def probe_record(uid: str, container_id: str, text: str = '{"liveness": {}}') -> ObservedVolume:
    return ObservedVolume(
        probe_record_volume(container_id, text),
        probe_record_labels(uid, container_id, text, NOW - 10),
    )


def removals(made: Plan) -> list[RemoveVolume]:
    return [a for a in made.actions if isinstance(a, RemoveVolume)]


def test_the_records_of_a_container_removed_by_hand_are_removed() -> None:
    """A container whose stop record and probe record are listed but which is not among
    the observed containers is gone (the list is complete): both records are removed,
    in its pod's own plan, as ``orphaned-record``, the message naming the container."""
    fake = started(web())
    gone = "0123456789abcdef" * 4
    volumes = [stop_record("web-uid", gone), probe_record("web-uid", gone)]

    made = plan([web()], fake.containers, now=NOW, options=OPTIONS, volumes=volumes)

    assert [
        RemoveVolume(
            "default/web",
            "web-uid",
            v.name,
            Reason.ORPHANED_RECORD,
            f"remove volume {v.name}: the {what} of container {gone[:12]}, which no longer exists",
        )
        for v, what in zip(volumes, ("stop record", "probe record"), strict=True)
    ] == sorted(removals(made), key=lambda a: a.volume, reverse=True)
    (pod_plan,) = made.pods
    assert ("default/web", "web-uid", web().full_name) == (
        pod_plan.pod,
        pod_plan.uid,
        pod_plan.full_name,
    )


def test_the_records_of_running_and_exited_containers_stay() -> None:
    """A record is about a container that exists - running, or exited (a stopped
    container's record says podsync stopped it): nothing is removed, whatever the
    record says."""
    fake = started(web())
    app, log = instance(fake, "app"), instance(fake, "log")
    fake.exit(log.id, 0)
    volumes = [
        stop_record("web-uid", app.id),
        probe_record("web-uid", app.id),
        stop_record("web-uid", log.id, "pod-rebuild"),
        probe_record("web-uid", log.id),
    ]

    made = plan([web()], fake.containers, now=NOW, options=OPTIONS, volumes=volumes)

    assert [] == removals(made)


def test_a_volume_that_is_not_podsyncs_record_is_never_removed() -> None:
    """Only a volume podsync made as a record goes: its kind label says a record, it
    names a pod and a container, no Kubernetes label marks it another's, and its name
    is the one podsync gives that record. A volume named like a record without the
    labels, a labelled one under another name, one without a container label, and one
    with a Kubernetes label are all left alone - the records listed with them go."""
    fake = started(web())
    gone = "feedfacecafe"
    record = stop_record("web-uid", gone)
    kubernetes = {**record.labels, "io.kubernetes.pod.uid": "web-uid"}
    no_container = {k: v for k, v in record.labels.items() if k != LABEL_RECORD_CONTAINER}
    volumes = [
        ObservedVolume(record.name),  # someone's volume, named like a record
        ObservedVolume("backup-of-a-record", record.labels),
        ObservedVolume(stop_record_volume("c0ffee"), no_container),
        ObservedVolume(stop_record_volume("beef"), kubernetes),
        ObservedVolume(
            probe_record_volume("beef", "{}"),
            {**probe_record_labels("web-uid", "beef", "{}", NOW), **kubernetes},
        ),
        ObservedVolume("podsync_default_data", {"io.podsync.volume.kind": "claim"}),
        probe_record("web-uid", gone),
    ]

    made = plan([web()], fake.containers, now=NOW, options=OPTIONS, volumes=volumes)

    assert [probe_record("web-uid", gone).name] == [a.volume for a in removals(made)]


STOP, PROBE = "stop-record", "probe-record"
DIGEST = "0123456789abcdef"


@pytest.mark.parametrize(
    ("volume", "kind", "container", "named"),
    [
        ("podsync-stopped_abc", STOP, "abc", True),
        ("podsync-stopped_abcd", STOP, "abc", False),
        ("podsync-stopped_abc", PROBE, "abc", False),
        (f"podsync-probes_abc_{DIGEST}", PROBE, "abc", True),
        (f"podsync-probes_abc_{DIGEST}", STOP, "abc", False),
        (f"podsync-probes_abcd_{DIGEST}", PROBE, "abc", False),
        (f"podsync-probes_abc_{DIGEST[:-1]}", PROBE, "abc", False),
        (f"podsync-probes_abc_{DIGEST}0", PROBE, "abc", False),
        (f"podsync-probes_abc_{DIGEST.upper()}", PROBE, "abc", False),
        (f"podsync-probes_abc_{DIGEST[:-1]}g", PROBE, "abc", False),
        (f"podsync-probes_abc_{DIGEST[:-1]}X", PROBE, "abc", False),
        ("podsync-stopped__abc", STOP, "_abc", False),
        ("podsync-stopped_a/b", STOP, "a/b", False),
    ],
)
def test_a_record_is_podsyncs_by_its_name_too(
    volume: str, kind: str, container: str, named: bool
) -> None:
    """``named_as_made``: the name is the one podsync gives a record of that kind and
    container - ``podsync-stopped_<id>``, ``podsync-probes_<id>_<16 hex digits>`` - and
    the id is one podsync names records after."""
    record = Record(volume, kind, "web-uid", container, "")

    assert named is named_as_made(record)


def test_a_record_removal_comes_after_the_pods_work() -> None:
    """The pod has work to do (a container to replace): the record of a gone container
    is removed after it, so that a removal that fails holds nothing of the pod back;
    a record is written only for a container podsync stops, which exists then."""
    fake = started(web())
    app = instance(fake, "app")
    changed = web(Container("app", "busybox:2"), Container("log", "busybox"))
    gone = stop_record("web-uid", "deadbeef")

    made = plan([changed], fake.containers, now=NOW, options=OPTIONS, volumes=[gone])

    (pod_plan,) = made.pods
    assert ["Kill", "Create", "RemoveVolume"] == [type(a).__name__ for a in pod_plan.actions]
    kill = pod_plan.actions[0]
    assert isinstance(kill, Kill)
    assert (app.id, True) == (kill.id, kill.record_stop)
    assert gone.name == pod_plan.actions[-1].volume  # type: ignore[union-attr]


def test_records_of_gone_containers_go_whatever_the_pod() -> None:
    """The container's absence is what counts, not the pod's: the record of a gone
    container of a pod no longer desired goes although deletions are not allowed
    (``--no-delete``) or a source is not ready, in that pod's plan (named by a container
    of it that is left, else by nothing); a rejected pod is left alone, as nothing is
    done to it."""
    desired = web()
    fake = started(desired, Pod("old", (Container("app", "busybox"),), uid="old-uid"))
    records = [stop_record("old-uid", "aaaa"), stop_record("nobody-uid", "bbbb")]
    expected = [("default/old", "old-uid", records[0].name), ("", "nobody-uid", records[1].name)]

    for options in (
        attrs.evolve(OPTIONS, allow_deletions=False),
        attrs.evolve(OPTIONS, ready_sources=frozenset()),
    ):
        made = plan([desired], fake.containers, now=NOW, options=options, volumes=records)

        assert expected == sorted((a.pod, a.pod_uid, a.volume) for a in removals(made))[::-1]

    privileged = Pod("old", (Container("app", "busybox", privileged=True),), uid="old-uid")
    kept = plan([desired, privileged], fake.containers, now=NOW, options=OPTIONS, volumes=records)

    assert ["old-uid"] == [r.uid for r in kept.rejected]
    assert [records[1].name] == [a.volume for a in removals(kept)]


def test_a_gone_pods_records_are_removed_once() -> None:
    """A pod no longer desired, none of its containers left: its records are removed
    with its other volumes, once each (the reason of a gone pod's volumes), before its
    pod directory's teardown."""
    records = [stop_record("gone-uid", "aaaa"), probe_record("gone-uid", "bbbb")]
    state = ObservedVolume(
        "podsync-state_gone-uid",
        {"io.podsync.volume.kind": "pod-state", "io.podsync.pod.uid": "gone-uid"},
    )

    made = plan([], [], now=NOW, options=OPTIONS, volumes=[*records, state], pod_dirs=["gone-uid"])

    (pod_plan,) = made.pods
    *removed, teardown = pod_plan.actions
    assert isinstance(teardown, RemovePodDir)
    assert sorted(v.name for v in (*records, state)) == sorted(
        a.volume for a in removed if isinstance(a, RemoveVolume)
    )
    assert len(removed) == 3
    assert all("a pod that is no longer desired" in a.message for a in removals(made))


def test_sync_removes_the_record_of_a_container_removed_by_hand() -> None:
    """podsync replaced a container (its old instance stopped, with a stop record); the
    old instance is then removed by hand, which leaves the record. The next sync, which
    lists the volumes (an exited container of podsync's is left: the pod's setup
    container, which finished), removes the record and nothing else; the sync after it
    has nothing to do, and no second container list."""
    setup = Container("setup", "busybox")
    fake = started(web(Container("app", "busybox"), setup, restart_policy=ON_FAILURE))
    fake.exit(instance(fake, "setup").id, 0)
    old = instance(fake, "app")
    changed = web(Container("app", "busybox:2"), setup, restart_policy=ON_FAILURE)
    replaced = sync([changed], fake, options=OPTIONS, now=NOW + 1, clock=fake.clock)
    assert replaced.ok
    assert [Kill, Create] == [type(a) for a in replaced.plan.pods[0].actions]
    assert [old.id] == [r.container_id for r in records_of(fake.volumes)]
    fake.remove_container(old.id)  # by hand: docker rm -f
    fake.clear_calls()

    after = sync([changed], fake, options=OPTIONS, now=NOW + 2, clock=fake.clock)

    assert after.ok
    (removal,) = after.plan.actions
    assert isinstance(removal, RemoveVolume)
    assert (stop_record_volume(old.id), Reason.ORPHANED_RECORD) == (
        removal.volume,
        removal.reason,
    )
    assert [] == records_of(fake.volumes)
    # The second list confirms that the container the record names is gone.
    assert ["list", "list_volumes", "list", "remove_volume"] == fake.call_names()
    fake.clear_calls()
    again = sync([changed], fake, options=OPTIONS, now=NOW + 3, clock=fake.clock)
    assert not again.plan.has_changes
    assert ["list", "list_volumes"] == fake.call_names()


def test_the_prober_and_the_plan_agree_on_a_probed_pods_gone_container() -> None:
    """A running container with a liveness probe is removed by hand: its probe record
    goes (the prober drops the records of its pod's containers that no longer run, and
    the plan removes the record of a container that is gone - the second removal of a
    missing volume counts as done), and the replacement starts afresh."""
    probe = Probe(Handler(exec_command=("alive",)), failure_threshold=3, period_seconds=10)
    pod = web(Container("app", "busybox", liveness_probe=probe))
    fake = started(pod)
    fake.set_exec_result(["alive"], 1)
    app = instance(fake, "app")
    assert sync([pod], fake, options=OPTIONS, now=NOW + 10, clock=fake.clock).ok
    assert [app.id] == [r.container_id for r in records_of(fake.volumes)]
    fake.exit(app.id, 137)
    fake.remove_container(app.id)

    after = sync([pod], fake, options=OPTIONS, now=NOW + 11, clock=fake.clock)

    assert after.ok, after.apply_result.failures
    assert [] == [r for r in records_of(fake.volumes) if r.container_id == app.id]


class RacingEngine(FakeRuntime):
    """An engine that another podsync works on too: between a sync's container list and
    its volume list, the other one creates a container and stops it, writing its stop
    record first (``race``, once)."""

    race: Callable[[], None] | None = None

    def list_volumes(self) -> list[ObservedVolume]:
        race, self.race = self.race, None
        if race is not None:
            race()
        return super().list_volumes()


def test_a_record_written_after_the_container_list_is_not_taken_for_a_gone_ones() -> None:
    """The containers are listed before the volumes: a container created and stopped in
    between (by another podsync on the engine) is missing from the list while its stop
    record is listed. A record whose container is missing is confirmed gone by a second
    container list, made after the volume list, before it is removed: this one exists
    and its record stays; the record of a container that is really gone still goes."""
    fake = RacingEngine(images=["busybox", PAUSE], clock=lambda: NOW)
    setup = Container("setup", "busybox")
    pod = web(Container("app", "busybox"), setup, restart_policy=ON_FAILURE)
    assert sync([pod], fake, options=OPTIONS, now=NOW, clock=fake.clock).ok
    fake.exit(instance(fake, "setup").id, 0)  # an exited container: the volumes are listed
    write_stop_record(fake, "old-uid", "gone0", "spec-changed")
    late = attrs.evolve(
        instance(fake, "app"),
        id="late1",
        name="k8s_app.1_other_default_file_other-uid_1",
        labels={**instance(fake, "app").labels, "io.podsync.pod.uid": "other-uid"},
        running=False,
    )

    def other_podsync() -> None:
        fake.add_container(late)
        write_stop_record(fake, "other-uid", late.id, "spec-changed")

    fake.race = other_podsync
    fake.clear_calls()

    after = sync([pod], fake, options=OPTIONS, now=NOW + 1, clock=fake.clock, probe=False)

    assert after.ok
    assert [stop_record_volume("gone0")] == [a.volume for a in removals(after.plan)]
    assert [late.id] == [r.container_id for r in records_of(fake.volumes)]
    # The other podsync's record write (remove, create) comes before the volume list.
    assert [
        "list",
        "remove_volume",
        "create_volume",
        "list_volumes",
        "list",
        "remove_volume",
    ] == fake.call_names()


def test_the_record_of_a_pod_podsync_knows_nothing_of_goes_in_a_plan_named_by_nothing() -> None:
    """A gone container's record whose pod is neither desired nor has a container left
    is removed in the plan of a pod without containers - named by nothing (no pod key,
    no full name), the plan a pod directory's teardown of that uid has - also when the
    pod's other volumes stay (deletions not allowed, or a source not ready)."""
    fake = started(web())
    record = stop_record("nobody-uid", "bbbb")
    for options in (
        OPTIONS,
        attrs.evolve(OPTIONS, allow_deletions=False),
        attrs.evolve(OPTIONS, ready_sources=frozenset()),
    ):
        made = plan([web()], fake.containers, now=NOW, options=options, volumes=[record])

        (pod_plan,) = [p for p in made.pods if p.uid == "nobody-uid"]
        assert ("", "") == (pod_plan.pod, pod_plan.full_name)
        removed = [a.volume for a in pod_plan.actions if isinstance(a, RemoveVolume)]
        assert [record.name] == removed
