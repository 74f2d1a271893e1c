"""The planner: the 2014 kubelet's own scenarios (reference §4.1), ported, plus podsync's
fixes and additions.

Each ported test names the seed test and its row in the reference. The seed asserted
Docker calls; podsync asserts the plan whose actions produce those calls, or the fix
listed in docs/differences.md ("Differences from the 2014 kubelet").
"""

from __future__ import annotations

import re

import attrs
import pytest

from podsync import (
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HTTPGetAction,
    Lifecycle,
    ObservedContainer,
    ObservedImage,
    Pod,
    PodSecurityContext,
    Port,
    Probe,
    PullPolicy,
    RestartPolicy,
    Volume,
    VolumeMount,
)
from podsync.actions._actions import (
    Create,
    Kill,
    Plan,
    Reason,
    Remove,
    RemovePodDir,
    Wait,
)
from podsync.actions._options import NODE_SCOPE, GCPolicy, PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_POD_UID
from podsync.spec._ownership import ownership
from podsync.spec._volumes import NamedVolumeMount, VolumeFileMount
from tests.support.cri import cri_labels, cri_name
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
ROOT = "/var/lib/podsync"

# The seed's standard pod: uid 12345678, name foo, namespace new, source test.
BAR = Container("bar", "busybox")


def foo_pod(*containers: Container, **kwargs) -> Pod:
    """The seed's pod, under the seed's pull rule: a container that names no pull
    policy pulls its image only when it is absent (the modern default, Always for an
    untagged image, is test_plan_images.py's subject)."""
    return Pod(
        "foo",
        tuple(_seed_pull(c) for c in containers or (BAR,)),
        namespace="new",
        source="test",
        uid="12345678",
        **kwargs,
    )


def _seed_pull(c: Container) -> Container:
    if c.image_pull_policy is not None:
        return c
    return attrs.evolve(c, image_pull_policy=PullPolicy.IF_NOT_PRESENT)


def legacy(
    cid: str, name: str, *, image: str = "busybox", running: bool = True, **kw
) -> ObservedContainer:
    """A container as a 2014 kubelet left it: a k8s_ name, no podsync labels."""
    return ObservedContainer(id=cid, name=name, image=image, running=running, **kw)


ALL_PRESENT = [
    ObservedImage(
        "sha256:1", ("busybox:latest", "custom_image_name:latest", "registry.k8s.io/pause:3.10")
    )
]


#: What the tests of a 2014 kubelet's containers plan with: taking them over is opt-in.
ADOPT = PlanOptions(scope=NODE_SCOPE, adopt_2014_containers=True)


#: The seed's tests port a kubelet that owned the node: they plan as the node scope
#: unless a test gives options of its own.
NODE = PlanOptions(scope=NODE_SCOPE)


def run(desired, observed=(), **kwargs) -> Plan:
    kwargs.setdefault("images", ALL_PRESENT)
    kwargs.setdefault("now", NOW)
    kwargs.setdefault("options", NODE)
    return plan(desired, observed, **kwargs)


def kinds(p: Plan) -> list[tuple[str, str]]:
    """The plan as (action, container) pairs, in order."""
    return [(type(a).__name__, getattr(a, "container", "")) for a in p.actions]


def creates(p: Plan) -> list[Create]:
    return [a for a in p.actions if isinstance(a, Create)]


def converge(desired, model: EngineModel, now: float = NOW, **kwargs) -> Plan:
    """Plan against the model, apply, and return the next plan."""
    p = plan(
        desired,
        model.observed,
        images=model.images,
        volumes=model.observed_volumes,
        pod_dirs=model.pod_dirs,
        now=now,
        **kwargs,
    )
    model.apply(p, now)
    return plan(
        desired,
        model.observed,
        images=model.images,
        volumes=model.observed_volumes,
        pod_dirs=model.pod_dirs,
        now=now,
        **kwargs,
    )


# --- ported scenarios ---------------------------------------------------------------


def test_sync_pods_does_nothing():
    """#3 TestSyncPodsDoesNothing: a running pod with a matching container is left alone."""
    observed = [
        legacy("1234", "/k8s_bar.2a1b3c4d_foo.new.test_12345678_00000000"[1:]),
        legacy(
            "9876", "k8s_net.0_foo.new.test_12345678_00000000", image="registry.k8s.io/pause:3.10"
        ),
    ]

    p = run([foo_pod()], observed, options=ADOPT)

    assert [] == kinds(p)
    assert not p.has_changes


def test_sync_pods_does_nothing_with_podsync_labels():
    """#3, as podsync itself leaves a pod: a second plan after applying the first is empty."""
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})

    after = converge([foo_pod()], model)

    assert [] == kinds(after)


def test_sync_pods_with_termination_log():
    """#4 TestSyncPodsWithTerminationLog: net and bar are created; bar's termination-
    message file is a fresh file of the pod's state volume in the engine, one per
    instance, written through the network container, which mounts the volume (the
    engine makes it, labelled as podsync's, at that create) - not a host file under
    <root>/<uid>/<container>/ as the seed's, which a remote engine would not have."""
    pod = foo_pod(Container("bar", "busybox", termination_message_path="/dev/somepath"))

    p = run([pod])

    assert [("Create", "net"), ("Create", "bar")] == kinds(p)
    net, bar = (c.spec for c in creates(p))
    labels = {
        "io.podsync.volume.kind": "pod-state",
        "io.podsync.volume.namespace": "new",
        "io.podsync.pod.uid": "12345678",
    }
    assert (
        NamedVolumeMount(
            "podsync-state_12345678",
            "/podsync-volume",
            no_copy=True,
            labels=tuple(sorted(labels.items())),
        ),
    ) == net.volumes
    assert "mounted" == net.labels["io.podsync.pod.state"]
    assert (
        VolumeFileMount(
            "podsync-state_12345678",
            f"termination/{bar.name}",
            "/dev/somepath",
            image=PlanOptions().network_image,
            through=net.name,
        ),
    ) == bar.file_mounts
    assert ((), (), ()) == (bar.mounts, bar.files, bar.directories)


def test_sync_pods_creates_net_and_container():
    """#5 TestSyncPodsCreatesNetAndContainer: with a custom network image, net runs it and
    both names have the seed's shape."""
    p = run([foo_pod()], options=PlanOptions(network_image="custom_image_name"))

    net, bar = (c.spec for c in creates(p))
    assert "custom_image_name" == net.image
    assert re.fullmatch(r"k8s_net\.[a-f0-9]+_foo\.new\.test_12345678_00000000", net.name)
    assert re.fullmatch(r"k8s_bar\.[a-f0-9]+_foo\.new\.test_12345678_00000000", bar.name)
    assert net.name == bar.join
    assert [] == list(p.pulls)


def test_sync_pods_creates_net_and_container_pulls_image():
    """#6 ...PullsImage: nothing present: the network image and bar's image are pulled,
    before any create (podsync sorts pulls by image; the seed pulled net's first)."""
    p = run([foo_pod()], images=[], options=PlanOptions(network_image="custom_image_name"))

    assert ["busybox", "custom_image_name"] == [pull.image for pull in p.pulls]
    assert [("Pull", ""), ("Pull", ""), ("Create", "net"), ("Create", "bar")] == kinds(p)


def test_sync_pods_with_net_creates_container():
    """#7 TestSyncPodsWithNetCreatesContainer: only net runs: bar is created in it."""
    observed = [
        legacy(
            "9876", "k8s_net.0_foo.new.test_12345678_00000000", image="registry.k8s.io/pause:3.10"
        )
    ]

    p = run([foo_pod()], observed, options=ADOPT)

    assert [("CreateVolume", ""), ("Create", "bar")] == kinds(p)
    assert "k8s_net.0_foo.new.test_12345678_00000000" == creates(p)[0].spec.join


def test_sync_pods_with_net_creates_container_calls_handler():
    """#8 ...CallsHandler: the create carries bar's postStart handler for the apply side."""
    hook = Handler(http_get=HTTPGetAction(host="foo", port=8080, path="bar"))
    pod = foo_pod(Container("bar", "busybox", lifecycle=Lifecycle(post_start=hook)))
    observed = [
        legacy(
            "9876", "k8s_net.0_foo.new.test_12345678_00000000", image="registry.k8s.io/pause:3.10"
        )
    ]

    p = run([pod], observed, options=ADOPT)

    assert hook == creates(p)[0].spec.post_start


def test_sync_pods_deletes_with_no_net_container():
    """#9 TestSyncPodsDeletesWithNoNetContainer: bar runs without net: bar is stopped,
    net created, bar created again."""
    p = run(
        [foo_pod()], [legacy("1234", "k8s_bar.0_foo.new.test_12345678_00000000")], options=ADOPT
    )

    assert [("Kill", "bar"), ("Create", "net"), ("Create", "bar")] == kinds(p)
    assert "1234" == p.actions[0].id
    assert Reason.NETWORK_LOST == p.actions[0].reason


@pytest.mark.parametrize("ready", [False, True])
def test_sync_pods_deletes_when_sources_are_ready(ready):
    """#10 TestSyncPodsDeletesWhenSourcesAreReady: containers of pods that are not
    desired are stopped only once deletions are allowed."""
    observed = [
        legacy("1234", "k8s_foo.0_bar.new.test_12345678_00000042"),
        legacy("9876", "k8s_net.0_foo.new.test_12345678_00000042"),
    ]

    p = run(
        [],
        observed,
        options=PlanOptions(scope=NODE_SCOPE, adopt_2014_containers=True, allow_deletions=ready),
    )

    expected = {"1234", "9876"} if ready else set()
    assert expected == {a.id for a in p.actions if isinstance(a, Kill)}


def test_sync_pods_deletes_when_container_source_ready():
    """#11 TestSyncPodsDeletesWhenContainerSourceReady (post-seed): only pods of a ready
    source are deleted."""
    observed = [
        legacy("7492", "k8s_boo.0_bar.default.testsource_12345678_00000042"),
        legacy("3542", "k8s_net.0_bar.default.testsource_12345678_00000042"),
        legacy("1234", "k8s_foo.0_bar.default.othersource_12345678_00000042"),
        legacy("9876", "k8s_net.0_bar.default.othersource_12345678_00000042"),
    ]

    p = run(
        [],
        observed,
        options=PlanOptions(
            scope=NODE_SCOPE, adopt_2014_containers=True, ready_sources=frozenset({"testsource"})
        ),
    )

    assert {"7492", "3542"} == {a.id for a in p.actions if isinstance(a, Kill)}


def test_sync_pods_deletes():
    """#12 TestSyncPodsDeletes: owned containers of undesired pods are stopped; a
    foreign container named plain ``foo`` is untouched."""
    observed = [
        legacy("1234", "k8s_foo.0_bar.new.test_12345678_00000042"),
        legacy("9876", "k8s_net.0_foo.new.test_12345678_00000042"),
        legacy("4567", "foo"),
    ]

    p = run([], observed, options=ADOPT)

    assert {"1234", "9876"} == {a.id for a in p.actions if isinstance(a, Kill)}
    assert "4567" not in {getattr(a, "id", "") for a in p.actions}


def test_sync_pod_deletes_duplicate():
    """#13 TestSyncPodDeletesDuplicate: one of two running foo instances is stopped, the
    other pod's container untouched (podsync keeps the newest; the seed an arbitrary one)."""
    pod = Pod("bar", (Container("foo", "busybox"),), namespace="new", source="test", uid="12345678")
    observed = [
        legacy("1234", "k8s_foo.0_bar.new.test_12345678_00001111"),
        legacy("9876", "k8s_net.0_bar.new.test_12345678_00002222"),
        legacy("4567", "k8s_foo.0_bar.new.test_12345678_00003333"),
        legacy("2304", "k8s_baz.0_fiz.new.test_6_00000042"),
    ]

    p = run([pod], observed, options=PlanOptions(adopt_2014_containers=True, allow_deletions=False))

    assert [("Kill", "foo")] == kinds(p)
    assert "1234" == p.actions[0].id
    assert Reason.DUPLICATE == p.actions[0].reason


def labelled(model_pod: Pod, **overrides) -> EngineModel:
    """An engine holding ``model_pod`` as podsync created it."""
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10", "busybox:2"})
    model.apply(run([model_pod]), NOW - 100)
    return model


def test_sync_pod_bad_hash_replaces_only_that_container():
    """#14 TestSyncPodBadHash, fixed: a container whose spec changed is replaced; the
    network container keeps running and the new container joins it (the seed also
    stopped net and joined the new container to the dead namespace)."""
    model = labelled(foo_pod())
    net = next(c for c in model.observed if "_net." in c.name)
    old_bar = next(c for c in model.observed if "_bar." in c.name)
    changed = foo_pod(Container("bar", "busybox:2"))

    p = run([changed], model.observed, images=model.images)

    assert [("Kill", "bar"), ("Create", "bar")] == kinds(p)
    assert old_bar.id == p.actions[0].id
    assert net.name == creates(p)[0].spec.join
    assert "replace new/foo/bar: spec changed (image busybox -> busybox:2)" == p.actions[1].message


def test_sync_pod_bad_hash_legacy_container():
    """#14 for a 2014 kubelet's container (hash 0x1234 in its name, no labels): its Go
    hash cannot be recomputed, so the image decides."""
    net = legacy(
        "9876", "k8s_net.0_foo.new.test_12345678_00000042", image="registry.k8s.io/pause:3.10"
    )
    same = legacy("1234", "k8s_bar.1234_foo.new.test_12345678_00000042", image="busybox")
    other = attrs.evolve(same, image="busybox:old")

    assert [] == kinds(run([foo_pod()], [same, net], options=ADOPT))
    assert [("Kill", "bar"), ("CreateVolume", ""), ("Create", "bar")] == kinds(
        run([foo_pod()], [other, net], options=ADOPT)
    )


def test_sync_pod_unhealthy():
    """#15 TestSyncPodUnhealthy, fixed: a failed liveness probe replaces the container
    only (the seed also stopped net)."""
    pod = foo_pod(
        Container("bar", "busybox", liveness_probe=Probe(Handler(exec_command=("true",))))
    )
    observed = [
        legacy("1234", "k8s_bar.0_foo.new.test_12345678_00000042", created=0.0),
        legacy(
            "9876", "k8s_net.0_foo.new.test_12345678_00000042", image="registry.k8s.io/pause:3.10"
        ),
    ]

    p = run([pod], observed, liveness={"1234": False}, options=ADOPT)

    assert [("Kill", "bar"), ("CreateVolume", ""), ("Create", "bar")] == kinds(p)
    assert Reason.UNHEALTHY == p.actions[0].reason


def test_liveness_grace_period():
    """Seed healthy(): within initialDelaySeconds of creation a failed probe is ignored."""
    probe = Probe(Handler(exec_command=("true",)), initial_delay_seconds=30)
    pod = foo_pod(Container("bar", "busybox", liveness_probe=probe))
    net = legacy(
        "9876", "k8s_net.0_foo.new.test_12345678_00000042", image="registry.k8s.io/pause:3.10"
    )
    young = legacy("1234", "k8s_bar.0_foo.new.test_12345678_00000042", created=NOW - 29)
    old = attrs.evolve(young, created=NOW - 30)

    assert [] == kinds(run([pod], [young, net], liveness={"1234": False}, options=ADOPT))
    assert [("Kill", "bar"), ("CreateVolume", ""), ("Create", "bar")] == kinds(
        run([pod], [old, net], liveness={"1234": False}, options=ADOPT)
    )


def test_sync_pod_event_handler_fails():
    """#16 TestSyncPodEventHandlerFails: the plan creates bar with its postStart handler;
    running it and stopping bar when it fails is the apply side's job."""
    hook = Handler(http_get=HTTPGetAction(host="does.no.exist", port=8080, path="bar"))
    pod = foo_pod(Container("bar", "busybox", lifecycle=Lifecycle(post_start=hook)))
    net = legacy(
        "9876", "k8s_net.0_foo.new.test_12345678_00000042", image="registry.k8s.io/pause:3.10"
    )

    p = run([pod], [net], options=ADOPT)

    assert [("CreateVolume", ""), ("Create", "bar")] == kinds(p)
    assert hook == creates(p)[0].spec.post_start


def test_sync_pods_with_pull_policy():
    """#17 TestSyncPodsWithPullPolicy: Always pulls, IfNotPresent pulls when absent,
    Never never pulls. Changed: an explicit IfNotPresent on a present ``:latest`` image
    is honoured, no pull (the seed pulled it, kubernetes #2388; the modern kubelet
    defaults such an image to Always only when no policy is given). Fix: a Never
    container whose image is absent waits instead of a create the engine would refuse."""
    pod = foo_pod(
        Container("bar", "pull_always_image", image_pull_policy=PullPolicy.ALWAYS),
        Container("bar1", "pull_never_image", image_pull_policy=PullPolicy.NEVER),
        Container("bar2", "pull_if_not_present_image", image_pull_policy=PullPolicy.IF_NOT_PRESENT),
        Container("bar3", "existing_one", image_pull_policy=PullPolicy.IF_NOT_PRESENT),
        Container("bar4", "want:latest", image_pull_policy=PullPolicy.IF_NOT_PRESENT),
    )
    images = [
        ObservedImage("sha256:a", ("existing_one:latest",)),
        ObservedImage("sha256:b", ("want:latest",)),
    ]

    p = run([pod], images=images, options=PlanOptions(network_image="custom_image_name"))

    assert [
        "custom_image_name",
        "pull_always_image",
        "pull_if_not_present_image",
    ] == [pull.image for pull in p.pulls]
    assert ["net", "bar", "bar2", "bar3", "bar4"] == [c.container for c in creates(p)]
    assert [("bar1", Reason.IMAGE_NEVER_PULL)] == [
        (a.container, a.reason) for a in p.actions if isinstance(a, Wait)
    ]


def gc_instances(pod: Pod, created: dict[str, float], running: set[str]) -> list[ObservedContainer]:
    """Network-container instances of ``pod`` with the given ids and creation times."""
    return [
        legacy(
            cid,
            f"k8s_net.0_{pod.full_name}_{pod.uid}_{int(cid):08x}",
            image="registry.k8s.io/pause:3.10",
            running=cid in running,
            created=t,
            finished_at=None if cid in running else t + 0.5,
        )
        for cid, t in created.items()
    ]


GC_POD = Pod("foo", (), namespace="new", source="test", uid="deadbeef")
GC = PlanOptions(
    gc=GCPolicy(max_per_container=5, min_age=0), allow_deletions=False, adopt_2014_containers=True
)


@pytest.mark.parametrize(
    ("created", "running", "expected"),
    [
        # (a) six dead instances, 1876 the oldest: it goes.
        ({"1876": 1.0, **{f"{n}876": 100.0 + n for n in range(2, 7)}}, set(), ["1876"]),
        # (b) seven, 1876 running, 2876 the oldest dead one: 2876 goes.
        (
            {"1876": 1.0, "2876": 2.0, **{f"{n}876": 100.0 + n for n in range(3, 8)}},
            {"1876"},
            ["2876"],
        ),
        # (c) one container: nothing.
        ({"1876": 1.0}, set(), []),
    ],
)
def test_kubelet_garbage_collection(created, running, expected):
    """#25 TestKubeletGarbageCollection: dead instances beyond 5 per pod container go,
    oldest first; running ones are never removed."""
    pod = attrs.evolve(GC_POD, containers=(BAR,))
    observed = gc_instances(pod, created, running)
    bar = legacy("99", "k8s_bar.0_foo.new.test_deadbeef_00000000", created=200.0)
    net_running = [] if running else gc_instances(pod, {"98": 201.0}, {"98"})

    p = run([pod], [*observed, bar, *net_running], options=GC)

    assert expected == [a.id for a in p.actions if isinstance(a, Remove)]


@pytest.mark.parametrize(
    ("created", "running", "expected"),
    [
        # (a) ids 1-5, "1" running: nothing.
        ({str(n): 1.0 for n in range(1, 6)}, {"1"}, []),
        # (b) ids 1-6 all dead, "2" the oldest: "2" goes.
        ({**{str(n): 1.0 for n in range(1, 7)}, "2": 0.001}, set(), ["2"]),
        # (c) ids 1-7 dead, "2" and "6" the oldest: both go, newest first.
        ({**{str(n): 1.0 for n in range(1, 8)}, "2": 0.001, "6": 0.000001}, set(), ["2", "6"]),
    ],
)
def test_purge_oldest(created, running, expected):
    """#26 TestPurgeOldest: keep the newest 5 dead instances, remove the rest."""
    pod = attrs.evolve(GC_POD, containers=(BAR,))
    bar = legacy("99", "k8s_bar.0_foo.new.test_deadbeef_00000000", created=200.0)
    net_running = [] if running else gc_instances(pod, {"98": 201.0}, {"98"})

    p = run([pod], [*gc_instances(pod, created, running), bar, *net_running], options=GC)

    assert expected == [a.id for a in p.actions if isinstance(a, Remove)]


# --- podsync's semantics beyond the ported scenarios --------------------------------


def test_min_age_keeps_young_exited_containers():
    """Seed minimumGCAge: an exited instance younger than min_age is never removed."""
    pod = attrs.evolve(GC_POD, containers=(BAR,))
    observed = gc_instances(pod, {str(n): NOW - 10 for n in range(1, 8)}, set())
    bar = legacy("99", "k8s_bar.0_foo.new.test_deadbeef_00000000")
    net = gc_instances(pod, {"98": NOW}, {"98"})
    options = PlanOptions(gc=GCPolicy(max_per_container=1, min_age=60))

    p = run([pod], [*observed, bar, *net], options=options)

    assert [] == [a for a in p.actions if isinstance(a, Remove)]


def test_global_cap_removes_oldest_across_pods():
    """The global cap removes the oldest exited containers of any pod, never the newest
    exited instance of a pod container."""
    a = Pod("a", (Container("c", "busybox"),), uid="ua")
    b = Pod("b", (Container("c", "busybox"),), uid="ub")
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})
    model.apply(run([a, b]), 0.0)
    for t in range(1, 4):  # three crash-restarts of each c
        for c in list(model.observed):
            if c.running and c.labels.get("io.podsync.container.name") == "c":
                model.exit(c.id, 1, float(t * 1000))
        model.apply(run([a, b], model.observed, now=t * 1000.0 + 500), t * 1000.0 + 500)
    options = PlanOptions(gc=GCPolicy(max_per_container=None, min_age=0, max_total=2))

    p = run([a, b], model.observed, now=10_000.0, options=options)

    removed = [x for x in p.actions if isinstance(x, Remove)]
    assert 4 == len(removed)
    assert {Reason.GC_GLOBAL_CAP} == {x.reason for x in removed}
    exited = sorted((c.created, c.id) for c in model.observed if not c.running)
    assert {cid for _, cid in exited[:2]} | {cid for _, cid in exited[2:4]} == {
        x.id for x in removed
    }


@pytest.mark.parametrize(
    ("policy", "exit_code", "restarts"),
    [
        (RestartPolicy.ALWAYS, 0, True),
        (RestartPolicy.ALWAYS, 1, True),
        (RestartPolicy.ON_FAILURE, 0, False),
        (RestartPolicy.ON_FAILURE, 1, True),
        (RestartPolicy.NEVER, 0, False),
        (RestartPolicy.NEVER, 1, False),
    ],
)
def test_restart_policy(policy, exit_code, restarts):
    """Seed restart policy (§7 #7), judged on the newest exited instance."""
    pod = foo_pod(restart_policy=policy)
    model = labelled(pod)
    bar = next(c for c in model.observed if "_bar." in c.name)
    model.exit(bar.id, exit_code, NOW - 50)

    p = run([pod], model.observed)

    # Without a restart nothing of the pod runs any more, so its network container stops.
    assert ([("Create", "bar")] if restarts else [("Kill", "net")]) == kinds(p)


def test_completed_pod_stops_its_network_container():
    """When nothing of a pod runs or will run, its network container is stopped, and the
    plan after that is empty."""
    pod = foo_pod(restart_policy=RestartPolicy.NEVER)
    model = labelled(pod)
    bar = next(c for c in model.observed if "_bar." in c.name)
    model.exit(bar.id, 0, NOW - 50)

    p = run([pod], model.observed)
    model.apply(p, NOW)

    assert [("Kill", "net")] == kinds(p)
    assert Reason.POD_COMPLETED == p.actions[0].reason
    assert [] == kinds(run([pod], model.observed))


def test_crash_loop_back_off():
    """Restarts after exits back off: immediately, then 10 s, 20 s, 40 s ... up to 5 min."""
    pod = foo_pod()
    model = labelled(pod)
    t = NOW
    delays = []
    keep_all = PlanOptions(gc=GCPolicy(max_per_container=None))
    for _ in range(8):
        bar = next(c for c in model.observed if "_bar." in c.name and c.running)
        model.exit(bar.id, 1, t)
        p = run([pod], model.observed, now=t, options=keep_all)
        waits = [a for a in p.actions if isinstance(a, Wait)]
        delay = waits[0].seconds if waits else 0.0
        delays.append(delay)
        t += delay
        p = run([pod], model.observed, now=t, options=keep_all)
        assert [("Create", "bar")] == kinds(p)
        model.apply(p, t)

    assert [0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0] == delays


def test_network_spec_change_rebuilds_the_pod():
    """A changed host port changes the network container's spec: the whole pod is
    rebuilt, app containers stopped before net and created after it."""
    pod = foo_pod(Container("bar", "busybox", ports=(Port(80, 8080),)))
    model = labelled(pod)
    moved = foo_pod(Container("bar", "busybox", ports=(Port(80, 8081),)))

    p = run([moved], model.observed)

    assert [("Kill", "bar"), ("Kill", "net"), ("Create", "net"), ("Create", "bar")] == kinds(p)
    assert Reason.NETWORK_CHANGED == p.actions[1].reason
    assert {8081} == {m.host_port for m in creates(p)[0].spec.ports}


def test_container_removed_from_spec_is_stopped():
    """Seed duplicate sweep: a running container whose name left the spec is stopped."""
    pod = foo_pod(Container("bar", "busybox"), Container("baz", "busybox"))
    model = labelled(pod)

    p = run([foo_pod()], model.observed)

    assert [("Kill", "baz")] == kinds(p)
    assert Reason.NOT_IN_SPEC == p.actions[0].reason


def test_pre_stop_handler_is_carried_by_kills():
    """A kill of a container with a preStop handler carries it, also once its pod is gone
    (read back from the container's label)."""
    hook = Handler(exec_command=("/bin/sh", "-c", "echo bye"))
    pod = foo_pod(Container("bar", "busybox", lifecycle=Lifecycle(pre_stop=hook)))
    model = labelled(pod)

    p = run([], model.observed)

    assert {"bar": hook, "net": None} == {
        a.container: a.pre_stop for a in p.actions if isinstance(a, Kill)
    }


def test_pods_grace_period_is_every_stop_of_the_pod():
    """terminationGracePeriodSeconds is the grace of every stop of the pod's containers
    (replaced, removed from the spec, the network container); a create carries it and
    the preStop handler for the stop after a failed postStart; without it, the
    stop_timeout option is the grace."""
    hook = Handler(exec_command=("drain",))
    pod = foo_pod(
        Container("bar", "busybox", lifecycle=Lifecycle(pre_stop=hook)),
        Container("baz", "busybox"),
        termination_grace_period_seconds=45,
    )
    model = labelled(pod)
    changed = attrs.evolve(pod, containers=(Container("bar", "busybox:2"),))
    options = PlanOptions(scope=NODE_SCOPE, stop_timeout=7)

    p = run([changed], model.observed, images=model.images, options=options)
    defaulted = run([attrs.evolve(changed, termination_grace_period_seconds=None)], [])
    gone = run([], model.observed, options=options)

    assert [("Kill", "bar"), ("Create", "bar"), ("Kill", "baz")] == kinds(p)
    assert [45, 45] == [a.timeout for a in p.actions if isinstance(a, Kill)]
    assert (45, None) == (creates(p)[0].spec.stop_timeout, creates(p)[0].spec.pre_stop)
    assert [30, 30] == [c.spec.stop_timeout for c in creates(defaulted)]
    assert {"bar": 45, "baz": 45, "net": 45} == {
        a.container: a.timeout for a in gone.actions if isinstance(a, Kill)
    }
    first = run([pod], [])
    assert [("45", hook)] == [
        (c.spec.labels.get("io.podsync.pod.termination-grace-period"), c.spec.pre_stop)
        for c in creates(first)
        if c.container == "bar"
    ]


@pytest.mark.parametrize(
    ("label", "timeout"),
    [(None, 7), ("30", 30), ("0", 0), ("-1", 7), ("3.5", 7), ("99999999999", 7), ("", 7)],
)
def test_grace_period_of_a_pod_that_is_gone_is_read_from_its_label(label, timeout):
    """A pod no longer desired stops with the grace period its containers remember;
    a missing or malformed label (engine data) means the stop_timeout option."""
    labels = {
        "io.podsync.pod.uid": "12345678",
        "io.podsync.pod.name": "foo",
        "io.podsync.pod.namespace": "new",
        "io.podsync.pod.source": "test",
        "io.podsync.container.name": "bar",
    }
    if label is not None:
        labels["io.podsync.pod.termination-grace-period"] = label
    observed = [
        ObservedContainer(
            "c1", "k8s_bar.1_foo.new.test_12345678_1", "busybox", labels, NOW - 50, True
        )
    ]

    p = run([], observed, options=PlanOptions(scope=NODE_SCOPE, stop_timeout=7))

    assert [timeout] == [a.timeout for a in p.actions if isinstance(a, Kill)]


def test_undesired_pod_is_stopped_then_removed_and_its_directory_torn_down():
    """A pod that left the desired state: stopped, exited instances removed once old
    enough, and its directory under the root torn down."""
    pod = foo_pod()
    model = labelled(pod)
    model.pod_dirs.add("12345678")
    options = PlanOptions(scope=NODE_SCOPE, gc=GCPolicy(min_age=0))

    p = run([], model.observed, pod_dirs=model.pod_dirs, options=options)

    assert [
        ("Kill", "bar"),
        ("Kill", "net"),
        ("Remove", "bar"),
        ("Remove", "net"),
        ("RemovePodDir", ""),
    ] == kinds(p)
    assert (
        RemovePodDir(
            "12345678",
            f"{ROOT}/12345678",
            Reason.ORPHANED_POD_DIR,
            f"tear down {ROOT}/12345678: pod is no longer desired",
        )
        == p.actions[-1]
    )


def test_desired_pod_directory_is_never_torn_down():
    """A pod directory of a desired pod stays, whatever else happens."""
    p = run([foo_pod()], pod_dirs={"12345678", "gone"})

    assert ["gone"] == [a.pod_uid for a in p.actions if isinstance(a, RemovePodDir)]


def test_only_directories_named_like_a_pod_uid_are_torn_down():
    """A directory is torn down only when its name can be a pod uid (``is_safe_uid``, the
    rule admission applies to pods): podsync made no other, and a path is never built
    from a name that could leave the root directory."""
    names = {"gone", "..", ".hidden", "a_b", "a/b", "x" * 254, ""}

    p = run([], pod_dirs=names)

    assert ["gone"] == [a.pod_uid for a in p.actions if isinstance(a, RemovePodDir)]


def test_rejections():
    """Pods that conflict on a host port, ask for privileged mode when it is not allowed,
    or repeat an earlier pod are rejected, and nothing happens to them."""
    web = Pod("web", (Container("a", "busybox", ports=(Port(80, 80),)),))
    clash = Pod("clash", (Container("a", "busybox", ports=(Port(81, 80),)),))
    priv = Pod("priv", (Container("a", "busybox", privileged=True),))
    twin = Pod("web", (Container("b", "busybox"),))

    p = run([web, clash, priv, twin])

    assert [
        ("default/clash", Reason.HOST_PORT_CONFLICT),
        ("default/priv", Reason.PRIVILEGED_NOT_ALLOWED),
        ("default/web", Reason.DUPLICATE_POD),
    ] == [(r.pod, r.reason) for r in p.rejected]
    assert ["default/web"] == [pp.pod for pp in p.pods]
    allowed = run([priv], options=PlanOptions(allow_privileged=True))
    assert [True] == [c.spec.privileged for c in creates(allowed) if c.container == "a"]


@pytest.mark.parametrize("memory", [1, 4 * 1024 * 1024, 6 * 1024 * 1024 - 1])
def test_memory_limit_below_dockers_minimum_is_rejected(memory):
    """Docker refuses a memory limit under 6 MB at every create; the pod is rejected
    before anything is done to it. 6 MB exactly, and no limit, are accepted."""
    small = Pod("small", (Container("app", "busybox", memory=memory),))
    enough = Pod("enough", (Container("app", "busybox", memory=6 * 1024 * 1024),))
    unlimited = Pod("unlimited", (Container("app", "busybox"),))

    p = run([small, enough, unlimited])

    assert [
        (
            "default/small",
            Reason.INVALID_POD,
            f"container app: memory limit {memory} bytes is below the container engine's "
            "minimum of 6MB (6291456 bytes)",
        )
    ] == [(r.pod, r.reason, r.message) for r in p.rejected]
    assert ["default/enough", "default/unlimited"] == sorted(pp.pod for pp in p.pods)


def test_foreign_and_lookalike_containers_are_never_touched():
    """Containers without podsync labels whose names do not parse as k8s_ names with a
    pod are foreign: no action ever names them."""
    observed = [
        legacy("f1", "nginx"),
        legacy("f2", "k8s_"),
        legacy("f3", "k8s--bar--foo--1234"),
        legacy("f4", "k8s_onlycontainer"),
        legacy("f5", "k8s_x", running=False, finished_at=0.0),
    ]

    p = run(
        [],
        observed,
        options=PlanOptions(scope=NODE_SCOPE, gc=GCPolicy(min_age=0), allow_deletions=True),
    )

    assert [] == kinds(p)


KUBE_UID = "3f1c2a9e-5b7d-4e0a-9c61-2d8f0b4a7e15"


def kubernetes_node_containers() -> list[ObservedContainer]:
    """What Docker Desktop's Kubernetes leaves on the engine for its API server: a
    running sandbox, a running app container and an exited earlier attempt."""
    pod, ns = "kube-apiserver-docker-desktop", "kube-system"
    return [
        ObservedContainer(
            "sandbox",
            cri_name("POD", pod, ns, KUBE_UID, 0),
            image="registry.k8s.io/pause:3.9",
            labels=cri_labels("POD", pod, ns, KUBE_UID),
            created=NOW - 3600,
            running=True,
        ),
        ObservedContainer(
            "apiserver",
            cri_name("kube-apiserver", pod, ns, KUBE_UID, 1),
            image="registry.k8s.io/kube-apiserver:v1.29.2",
            labels=cri_labels("kube-apiserver", pod, ns, KUBE_UID, sandbox_id="sandbox"),
            created=NOW - 3000,
            running=True,
        ),
        ObservedContainer(
            "apiserver-old",
            cri_name("kube-apiserver", pod, ns, KUBE_UID, 0),
            image="registry.k8s.io/kube-apiserver:v1.29.2",
            labels=cri_labels("kube-apiserver", pod, ns, KUBE_UID, sandbox_id="sandbox"),
            created=NOW - 3500,
            running=False,
            exit_code=137,
            finished_at=NOW - 3100,
        ),
    ]


@pytest.mark.parametrize("adopt", [False, True], ids=["default", "adopting"])
def test_kubernetes_node_containers_are_never_touched(adopt):
    """A host that runs Kubernetes on Docker survives a plan with deletions allowed and
    the most eager GC: containers named ``k8s_<c>_<pod>_<ns>_<uid>_<n>`` and labelled
    ``io.kubernetes.*`` are not podsync's, whatever the options."""
    options = PlanOptions(
        allow_deletions=True,
        adopt_2014_containers=adopt,
        gc=GCPolicy(max_per_container=0, min_age=0, max_total=0),
    )

    p = run([foo_pod()], kubernetes_node_containers(), options=options)

    assert {"new/foo"} == {pod_plan.pod for pod_plan in p.pods}
    assert [("Create", "net"), ("Create", "bar")] == kinds(p)


def test_an_io_kubernetes_label_makes_any_container_foreign():
    """A container with an ``io.kubernetes.`` label is never podsync's, even with a name
    in the seed's exact format, or podsync's own uid label."""
    seed_name = "k8s_bar.2a1b3c4d_foo.new.test_12345678_8a3c01f2"
    observed = [
        legacy("k1", seed_name, labels={"io.kubernetes.pod.name": "foo"}),
        legacy(
            "k2",
            "whatever",
            labels={"io.kubernetes.container.name": "bar", LABEL_POD_UID: "12345678"},
        ),
    ]
    options = PlanOptions(adopt_2014_containers=True, gc=GCPolicy(min_age=0, max_total=0))

    assert [] == kinds(run([], observed, options=options))
    assert ownership(observed[0], adopt_2014_containers=True) is None
    assert ownership(observed[1], adopt_2014_containers=True) is None


def test_io_kubernetes_inside_a_label_key_is_no_kubernetes_label():
    """Only a key that *starts* with ``io.kubernetes.`` makes a container foreign: the
    same text elsewhere in a key (or in a value) leaves podsync's container its own."""
    observed = [
        legacy(
            "k1",
            "whatever",
            labels={
                LABEL_POD_UID: "12345678",
                "example.io.kubernetes.note": "x",
                "team": "io.kubernetes.pod.name",
            },
        ),
    ]

    found = ownership(observed[0])

    assert found is not None
    assert "12345678" == found.pod_uid


def test_2014_containers_are_taken_over_only_when_asked():
    """An unlabelled container in the seed's exact format is a 2014 kubelet's; podsync
    takes it over only with ``adopt_2014_containers``. By default it is foreign: a
    desired pod of the same uid and full name gets its own containers beside it."""
    observed = [
        legacy("1234", "k8s_bar.2a1b3c4d_foo.new.test_12345678_8a3c01f2"),
        legacy(
            "9876",
            "k8s_net.5f03e1a2_foo.new.test_12345678_0c1d2e3f",
            image="registry.k8s.io/pause:3.10",
        ),
        legacy("5555", "k8s_old.1_gone.new.test_87654321_00000001"),
    ]

    default = run([foo_pod()], observed)
    adopting = run([foo_pod()], observed, options=ADOPT)

    assert [("Create", "net"), ("Create", "bar")] == kinds(default)
    assert ownership(observed[0]) is None
    assert [("Kill", "old")] == kinds(adopting)
    assert "k8s_old.1_gone.new.test_87654321_00000001" == adopting.actions[0].name
    owner = ownership(observed[0], adopt_2014_containers=True)
    assert owner is not None
    assert ("12345678", "foo.new.test", "new/foo", "bar") == (
        owner.pod_uid,
        owner.pod_full_name,
        owner.pod_key,
        owner.container,
    )


def test_names_of_2014_containers_left_alone_are_not_reused():
    """A 2014 kubelet's container that is not taken over keeps its name: podsync numbers
    its own attempt past it (Docker refuses a second container of one name)."""
    first = {c.container: c.spec.name for c in creates(run([foo_pod()]))}
    observed = [legacy(f"old-{c}", name) for c, name in first.items()]

    again = {c.container: c.spec.name for c in creates(run([foo_pod()], observed))}

    assert ["net", "bar"] == list(again)
    assert not set(again.values()) & set(first.values())
    assert all(name.endswith("_00000001") for name in again.values())


@pytest.mark.parametrize(
    "name",
    [
        "k8s_bar_foo.new.test_12345678_8a3c01f2",  # no hash
        "k8s_bar.1_foo.new_12345678_8a3c01f2",  # a two-part pod field
        "k8s_bar.1_foo.new.test_12345678_42",  # not the seed's %08x suffix
        "k8s_bar.1_foo.new.test_8a3c01f2",  # no uid
        f"k8s_bar_foo_new_{KUBE_UID}_0",  # cri-dockerd's, without its labels
    ],
)
def test_near_2014_names_are_foreign_even_when_adopting(name):
    """Only the exact format is taken over: anything near it is someone else's."""
    options = PlanOptions(adopt_2014_containers=True, gc=GCPolicy(min_age=0, max_total=0))
    observed = [legacy("x", name), legacy("y", name + "0", running=False, finished_at=0.0)]

    assert [] == kinds(run([], observed, options=options))


def test_cluster_dns_goes_on_the_network_container():
    """ClusterFirst pods get the cluster DNS server and search path first, then the
    host's (seed applyClusterDNS), on the network container that app containers share."""
    options = PlanOptions(
        cluster_dns="10.0.0.10",
        cluster_domain="cluster.local",
        host_resolv_conf="nameserver 1.2.3.4\nsearch example.com\n",
    )

    net = creates(run([foo_pod()], options=options))[0].spec

    assert ("10.0.0.10", "1.2.3.4") == net.dns
    assert ("new.cluster.local", "cluster.local", "example.com") == net.dns_search


# The kubelet's table (getPodDNSType, pkg/kubelet/network/dns/dns.go): ClusterFirst is
# the host's DNS on the host's network, ClusterFirstWithHostNet the cluster's on both.
CLUSTER = ("10.0.0.10", "1.2.3.4")


@pytest.mark.parametrize(
    ("policy", "host_network", "nameservers"),
    [
        (DNSPolicy.CLUSTER_FIRST, False, CLUSTER),
        (DNSPolicy.CLUSTER_FIRST, True, ()),
        (DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET, False, CLUSTER),
        (DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET, True, CLUSTER),
        (DNSPolicy.DEFAULT, False, ()),
        (DNSPolicy.DEFAULT, True, ()),
    ],
)
def test_dns_policies_on_and_off_the_hosts_network(policy, host_network, nameservers):
    """A node agent on the host's network that asks for ClusterFirstWithHostNet gets
    the cluster DNS on its network container (Docker gives a host-network container a
    resolv.conf of its own, which the pod's other containers share)."""
    options = PlanOptions(
        cluster_dns="10.0.0.10",
        cluster_domain="cluster.local",
        host_resolv_conf="nameserver 1.2.3.4\nsearch example.com\n",
        allow_host_namespaces=True,
    )
    pod = foo_pod(dns_policy=policy, security_context=PodSecurityContext(host_network=host_network))

    net = creates(run([pod], options=options))[0].spec

    assert nameservers == net.dns
    searches = ("new.cluster.local", "cluster.local", "example.com") if nameservers else ()
    assert searches == net.dns_search


def test_cluster_first_with_host_net_without_a_cluster_dns_is_the_hosts():
    """No cluster DNS configured: the kubelet falls back to the host's settings
    (MissingClusterDNS), and the engine gives the host's resolv.conf."""
    options = PlanOptions(allow_host_namespaces=True)
    pod = foo_pod(
        dns_policy=DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET,
        security_context=PodSecurityContext(host_network=True),
    )

    net = creates(run([pod], options=options))[0].spec

    assert ((), ()) == (net.dns, net.dns_search)


@pytest.mark.parametrize(
    ("network_mode", "nameservers"),
    [
        ("", ("10.0.0.10", "192.168.1.1")),
        ("none", ("10.0.0.10", "192.168.1.1")),
        # On the host network a pod shares the host's loopback: the stub answers there.
        ("host", ("10.0.0.10", "127.0.0.53", "192.168.1.1", "::1")),
    ],
)
def test_loopback_name_servers_are_left_out_of_pods_with_their_own_network(
    network_mode, nameservers
):
    """A loopback name server of the host (systemd-resolved's 127.0.0.53 stub) is
    unreachable from a pod's own network namespace: it is left out of the pod's DNS, as
    Docker's resolv.conf filter does; the search domains stay."""
    options = PlanOptions(
        network_mode=network_mode,
        cluster_dns="10.0.0.10",
        cluster_domain="cluster.local",
        host_resolv_conf=(
            "nameserver 127.0.0.53\nnameserver 192.168.1.1\nnameserver ::1\nsearch lan\n"
        ),
    )

    net = creates(run([foo_pod()], options=options))[0].spec

    assert nameservers == net.dns
    assert ("new.cluster.local", "cluster.local", "lan") == net.dns_search


def test_nothing_to_do_is_said_plainly():
    """An empty plan says so."""
    assert "No changes. The engine matches the desired pods." == run([]).describe()


@pytest.mark.parametrize(
    "pod",
    [
        # A negative grace period (Docker's -1 would wait for ever).
        Pod("web", (BAR,), termination_grace_period_seconds=-1),
        # One Docker cannot take as a stop timeout.
        Pod("web", (BAR,), termination_grace_period_seconds=2**31),
        # A volume where the termination-message file is bound (Docker refuses two
        # mounts at one path).
        Pod(
            "web",
            (
                Container(
                    "bar", "busybox", volume_mounts=(VolumeMount("v", "/dev/termination-log"),)
                ),
            ),
            volumes=(Volume("v"),),
        ),
    ],
)
def test_invalid_pods_built_in_code_are_rejected(pod):
    """Pods built in code get the loader's rules that no model validator sees: a bad one
    is rejected, and nothing is planned for it. (Names, uids and duplicate container
    names are refused when the pod is built: tests/unit/model/test_validators.py.)"""
    p = run([pod])

    assert [Reason.INVALID_POD] == [r.reason for r in p.rejected]
    assert () == p.pods


def test_container_that_never_started_backs_off():
    """A container whose start failed (Docker leaves it "created", with no finish time)
    counts as a failed run: the next start waits out the back-off instead of a new
    container every sync."""
    pod = foo_pod()
    model = labelled(pod)
    bar = next(c for c in model.observed if "_bar." in c.name)
    labels = {**bar.labels, "io.podsync.restart-count": "1"}
    model.containers[bar.id] = attrs.evolve(bar, running=False, labels=labels, created=NOW - 5)

    p = run([pod], model.observed)

    assert [("Wait", "bar")] == kinds(p)
    assert "wait new/foo/bar: did not start, back-off 10s, 5s left" == p.actions[0].message


@pytest.mark.parametrize(
    ("host_path", "admitted"),
    [
        # Inside an allowed prefix.
        ("/data/web", True),
        # The prefix itself.
        ("/data", True),
        # A sibling that merely starts with the same letters.
        ("/database", False),
        # Climbing out with "..".
        ("/data/../etc", False),
        # Elsewhere entirely.
        ("/etc", False),
    ],
)
def test_host_path_allow_list(host_path, admitted):
    """With an allow-list of hostPath prefixes, a pod mounting a host directory outside
    them is rejected (whole path components, after normalisation)."""
    pod = Pod(
        "web",
        (Container("a", "busybox", volume_mounts=(VolumeMount("v", "/v"),)),),
        volumes=(Volume("v", host_path),),
    )

    p = run([pod], options=PlanOptions(host_path_prefixes=("/data/",)))

    assert ([] if admitted else [Reason.HOST_PATH_NOT_ALLOWED]) == [r.reason for r in p.rejected]


def test_pods_with_shared_name_prefixes_and_namespaces_stay_apart():
    """Pods whose names share a prefix, and one name in two namespaces, never touch each
    other's containers: each pod's plan names only its own."""
    pods = [
        Pod("web", (BAR,)),
        Pod("web-1", (BAR,)),
        Pod("we", (BAR,)),
        Pod("web", (BAR,), namespace="other"),
    ]
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})
    model.apply(run(pods), NOW - 100)

    for keep in pods:
        others = [p for p in pods if p is not keep]
        p = run([keep], model.observed, options=PlanOptions(allow_deletions=False))
        assert [] == kinds(p)
        gone = run(others, model.observed)
        stopped = {a.id for a in gone.actions if isinstance(a, Kill)}
        mine = {c.id for c in model.observed if c.labels["io.podsync.pod.uid"] == keep.uid}
        assert mine == stopped


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        # The loader refuses an empty container list; a pod built in code gets the same.
        (Pod("web"), "a pod needs at least one container"),
        # NUL characters cannot reach a process: argv and the environment are C strings.
        (
            Pod("web", (Container("app", "busybox", command=("sh", "-c", "echo a\0b")),)),
            "container app: command[2] 'echo a\\x00b' contains a NUL character"
            ", which no engine can pass on",
        ),
        (
            Pod("web", (Container("app", "busybox", args=("-p", "80\0")),)),
            "container app: args[1] '80\\x00' contains a NUL character"
            ", which no engine can pass on",
        ),
        (
            Pod("web", (Container("app", "busybox", env=(EnvVar("A", "x\0y"),)),)),
            "container app: env[0] 'A=x\\x00y' contains a NUL character"
            ", which no engine can pass on",
        ),
    ],
)
def test_pods_built_in_code_get_the_loaders_content_rules(pod, message):
    """A pod the loader would refuse is rejected with the reason, and nothing of it is
    planned (a pod without containers would otherwise get a lone network container)."""
    p = run([pod])

    assert [(Reason.INVALID_POD, message)] == [(r.reason, r.message) for r in p.rejected]
    assert () == p.pods
    assert () == p.pulls


# --- no process-wide side effects (issue 16) -------------------------------------------


def test_plan_leaves_the_garbage_collector_alone(monkeypatch):
    """Planning never switches the process's cyclic garbage collector off: other threads
    and the embedding application would feel it."""
    import gc

    calls: list[str] = []
    monkeypatch.setattr(gc, "disable", lambda: calls.append("disable"))
    monkeypatch.setattr(gc, "enable", lambda: calls.append("enable"))
    pods = [foo_pod(), attrs.evolve(foo_pod(), name="other", uid="87654321")]

    p = run(pods)

    assert ([], 2) == (calls, len(p.pods))
