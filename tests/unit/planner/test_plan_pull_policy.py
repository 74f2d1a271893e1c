"""Image pulls as the modern kubelet decides them (kubelet-modern.md §13), one row per
case in the manner of the kubelet's ``TestComputePodActions``: the default pull policy
follows the tag (``SetDefaults_Container``), a given policy is honoured, and a pull that
failed for a pod waits out its back-off (``EnsureImageExists``: 10 s doubling to 300 s,
forgotten after 600 s without a failure) instead of being tried every sync - the network
container's image too, which podsync pulls as it pulls the app images."""

from __future__ import annotations

import attrs
import pytest

from podsync import ObservedImage, PullFailure, parse_pods
from podsync.actions._actions import Create, Reason, Wait
from podsync.actions._options import PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER
from tests.support.engine_model import EngineModel
from tests.support.image_references import DIGEST

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
UID = "0b5c2f9e-7c1d-4f63-9a51-2f5d1c7e8a10"


def web(image: str, policy: str = "") -> str:
    """A pod file as people write it: one container, with a pull policy or without."""
    line = f"\n    imagePullPolicy: {policy}" if policy else ""
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: web
  uid: {UID}
spec:
  containers:
  - name: app
    image: {image}{line}
"""


def present(*tags: str) -> list[ObservedImage]:
    """The engine's images: the pause image and ``tags`` (a digest reference is listed
    as a repository digest)."""
    found = [ObservedImage("sha256:pause", (PAUSE,))]
    for n, tag in enumerate(tags):
        if "@" in tag:
            found.append(ObservedImage(f"sha256:{n}", digests=(tag,)))
        else:
            found.append(ObservedImage(f"sha256:{n}", (tag,)))
    return found


def failed(image: str, ago: float, back_off: float = 10.0, uid: str = UID) -> PullFailure:
    """A pull of ``image`` for pod ``uid`` that failed ``ago`` seconds before NOW."""
    return PullFailure(uid, image, NOW - ago, back_off, "pull access denied for myapp")


@attrs.frozen
class Case:
    id: str
    pod: str
    images: list[ObservedImage]
    # What the plan does: the pulls (image, reason), and the app container's action:
    # "create", or the reason of its wait (with the seconds left).
    pulls: list[tuple[str, Reason]]
    app: str | tuple[Reason, float]
    failures: tuple[PullFailure, ...] = ()


CASES = [
    # -- the default policy follows the tag (SetDefaults_Container) ----------------------
    Case(
        "untagged-means-latest-always",
        web("nginx"),
        present("nginx:latest"),
        [("nginx", Reason.IMAGE_LATEST)],
        "create",
    ),
    Case(
        "latest-tag-always",
        web("nginx:latest"),
        present("nginx:latest"),
        [("nginx:latest", Reason.IMAGE_LATEST)],
        "create",
    ),
    Case("other-tag-if-not-present", web("nginx:1.25"), present("nginx:1.25"), [], "create"),
    Case(
        "other-tag-absent-pulled",
        web("nginx:1.25"),
        present(),
        [("nginx:1.25", Reason.IMAGE_ABSENT)],
        "create",
    ),
    Case("digest-if-not-present", web(f"nginx@{DIGEST}"), present(f"nginx@{DIGEST}"), [], "create"),
    Case(
        "latest-tag-with-digest-always",
        web(f"nginx:latest@{DIGEST}"),
        present(f"nginx@{DIGEST}"),
        [(f"nginx:latest@{DIGEST}", Reason.IMAGE_LATEST)],
        "create",
    ),
    # -- a given policy is honoured, whatever the tag ------------------------------------
    Case(
        "explicit-if-not-present-on-local-latest",
        web("myapp:latest", "IfNotPresent"),
        present("myapp:latest"),
        [],
        "create",
    ),
    Case(
        "explicit-if-not-present-untagged-absent",
        web("myapp", "IfNotPresent"),
        present(),
        [("myapp", Reason.IMAGE_ABSENT)],
        "create",
    ),
    Case(
        "explicit-always-on-a-tag",
        web("nginx:1.25", "Always"),
        present("nginx:1.25"),
        [("nginx:1.25", Reason.PULL_ALWAYS)],
        "create",
    ),
    Case(
        "never-present-latest", web("myapp:latest", "Never"), present("myapp:latest"), [], "create"
    ),
    Case(
        "never-absent-waits",
        web("myapp:latest", "Never"),
        present(),
        [],
        (Reason.IMAGE_NEVER_PULL, 0.0),
    ),
    # -- a failed pull backs off, per pod and image (EnsureImageExists) -----------------
    Case(
        "pull-failed-once-waits-the-rest-of-10s",
        web("myapp:1"),
        present(),
        [],
        (Reason.IMAGE_PULL_BACK_OFF, 7.0),
        (failed("myapp:1", ago=3),),
    ),
    Case(
        "in-back-off-after-doublings",
        web("myapp:1"),
        present(),
        [],
        (Reason.IMAGE_PULL_BACK_OFF, 10.0),
        (failed("myapp:1", ago=30, back_off=40),),
    ),
    Case(
        "spelling-of-the-failed-image-does-not-matter",
        web("docker.io/library/myapp:1"),
        present(),
        [],
        (Reason.IMAGE_PULL_BACK_OFF, 7.0),
        (failed("myapp:1", ago=3),),
    ),
    Case(
        "always-on-a-present-image-backs-off-too",
        web("nginx"),
        present("nginx:latest"),
        [],
        (Reason.IMAGE_PULL_BACK_OFF, 5.0),
        (failed("nginx", ago=5),),
    ),
    Case(
        "explicit-always-on-a-present-tag-backs-off-too",
        web("myapp:1", "Always"),
        present("myapp:1"),
        [],
        (Reason.IMAGE_PULL_BACK_OFF, 7.0),
        (failed("myapp:1", ago=3),),
    ),
    Case(
        "back-off-over-pulls-again",
        web("myapp:1"),
        present(),
        [("myapp:1", Reason.IMAGE_ABSENT)],
        "create",
        (failed("myapp:1", ago=10),),
    ),
    Case(
        "reset-after-600s-without-a-failure",
        web("myapp:1"),
        present(),
        [("myapp:1", Reason.IMAGE_ABSENT)],
        "create",
        (failed("myapp:1", ago=601, back_off=300),),
    ),
    Case(
        "another-pods-failure-holds-nothing",
        web("myapp:1"),
        present(),
        [("myapp:1", Reason.IMAGE_ABSENT)],
        "create",
        (failed("myapp:1", ago=3, uid="another-pod"),),
    ),
    Case(
        "a-present-image-that-needs-no-pull-is-used",
        web("myapp:1"),
        present("myapp:1"),
        [],
        "create",
        (failed("myapp:1", ago=3),),
    ),
    Case(
        "another-image-of-the-pod-failed",
        web("myapp:2"),
        present(),
        [("myapp:2", Reason.IMAGE_ABSENT)],
        "create",
        (failed("myapp:1", ago=3),),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_compute_pull_actions(case: Case) -> None:
    """The pulls and the app container's action for each case."""
    p = plan(
        parse_pods(case.pod),
        [],
        now=NOW,
        images=case.images,
        pull_failures=case.failures,
        options=PlanOptions(network_image=PAUSE),
    )

    app = [a for a in p.actions if getattr(a, "container", "") == "app"]
    if isinstance(case.app, str):
        assert [Create] == [type(a) for a in app]
    else:
        assert [case.app] == [(a.reason, a.seconds) for a in app if isinstance(a, Wait)]
        assert len(app) == 1
    assert case.pulls == [(pull.image, pull.reason) for pull in p.pulls]


def test_the_back_off_wait_says_why_as_the_kubelet_does():
    """The wait quotes the kubelet's message, the back-off and the engine's error."""
    p = plan(
        parse_pods(web("myapp:1")),
        [],
        now=NOW,
        images=present(),
        pull_failures=(failed("myapp:1", ago=15, back_off=20),),
        options=PlanOptions(network_image=PAUSE),
    )

    (wait,) = [a for a in p.actions if isinstance(a, Wait)]
    assert ("default/web", UID) == (wait.pod, wait.pod_uid)
    assert (
        'wait default/web/app: Back-off pulling image "myapp:1", back-off 20s, 5s left '
        "(the last pull failed: pull access denied for myapp)"
    ) == wait.message


# --- the network container's image backs off too -------------------------------------------

NEW_PAUSE = "registry.example.com/infra/pause:3.10"
NEW_NET = PlanOptions(network_image=NEW_PAUSE)


@attrs.frozen
class NetCase:
    """One row: what the engine shows of the pod (``shown``: nothing; ``running``: the
    pod runs on a network container of ``PAUSE``; ``net-died``: that network container
    exited under the running app), the images beside ``PAUSE``, the failed pulls, and
    the pod's actions as (kind, container, reason) with the pulls planned."""

    id: str
    shown: str
    images: tuple[str, ...]
    failures: tuple[PullFailure, ...]
    actions: tuple[tuple[str, str, str], ...]
    pulls: tuple[str, ...] = ()
    app: str = "myapp:1"


NET_CASES = [
    NetCase(
        "new-pod-network-pull-failed-waits",
        "nothing",
        ("myapp:1",),
        (failed(NEW_PAUSE, ago=3),),
        (("Wait", "net", "image-pull-back-off"),),
    ),
    NetCase(
        "new-pod-back-off-over-pulls-again",
        "nothing",
        ("myapp:1",),
        (failed(NEW_PAUSE, ago=10),),
        (("Create", "net", "network-missing"), ("Create", "app", "missing")),
        (NEW_PAUSE,),
    ),
    NetCase(
        "network-image-present-is-used",
        "nothing",
        ("myapp:1", NEW_PAUSE),
        (failed(NEW_PAUSE, ago=3),),
        (("Create", "net", "network-missing"), ("Create", "app", "missing")),
    ),
    NetCase(
        "another-pods-network-failure-holds-nothing",
        "nothing",
        ("myapp:1",),
        (failed(NEW_PAUSE, ago=3, uid="another-pod"),),
        (("Create", "net", "network-missing"), ("Create", "app", "missing")),
        (NEW_PAUSE,),
    ),
    NetCase(
        # nothing would join a network container yet: it is not made, nor waited for
        "app-image-held-too-the-network-is-not-needed-yet",
        "nothing",
        (),
        (failed(NEW_PAUSE, ago=3), failed("myapp:1", ago=5)),
        (("Wait", "app", "image-pull-back-off"),),
    ),
    NetCase(
        "network-image-changed-held-the-pod-runs-on",
        "running",
        ("myapp:1",),
        (failed(NEW_PAUSE, ago=3),),
        (("Wait", "net", "image-pull-back-off"),),
    ),
    NetCase(
        "network-image-changed-after-the-back-off-rebuilds",
        "running",
        ("myapp:1",),
        (failed(NEW_PAUSE, ago=40, back_off=20),),
        (
            ("Kill", "app", "pod-rebuild"),
            ("Kill", "net", "network-changed"),
            ("Create", "net", "network-changed"),
            ("Create", "app", "pod-rebuild"),
        ),
        (NEW_PAUSE,),
    ),
    NetCase(
        "network-died-image-held-stops-what-ran-on-it",
        "net-died",
        ("myapp:1",),
        (failed(NEW_PAUSE, ago=3),),
        (("Kill", "app", "network-lost"), ("Wait", "net", "image-pull-back-off")),
    ),
]


def _net_world(case: NetCase) -> EngineModel:
    model = EngineModel(image_tags={PAUSE, *case.images})
    (pod,) = parse_pods(web(case.app))
    if case.shown != "nothing":
        ran = NOW - 100
        options = PlanOptions(network_image=PAUSE)
        model.apply(plan([pod], [], now=ran, images=model.images, options=options), ran)
    if case.shown == "net-died":
        (net,) = [o for o in model.observed if o.labels.get(LABEL_CONTAINER) == "net"]
        model.exit(net.id, 137, NOW - 1)
    return model


@pytest.mark.parametrize("case", NET_CASES, ids=[c.id for c in NET_CASES])
def test_the_network_image_backs_off(case: NetCase) -> None:
    """A failed pull of the network image holds the network container, per pod, as an
    app image's does (podsync pulls it as it pulls theirs): nothing joins it meanwhile,
    and a pod that runs on its old network container keeps running; after the back-off
    it is pulled again."""
    model = _net_world(case)

    p = plan(
        parse_pods(web(case.app)),
        model.observed,
        now=NOW,
        images=model.images,
        pull_failures=case.failures,
        options=NEW_NET,
    )

    assert list(case.actions) == [
        (type(a).__name__, a.container, a.reason.value) for pod in p.pods for a in pod.actions
    ]
    assert list(case.pulls) == [pull.image for pull in p.pulls]


def test_the_network_containers_wait_says_why() -> None:
    """The network container's wait quotes the kubelet's message and the engine's
    error, with the seconds left."""
    p = plan(
        parse_pods(web("myapp:1")),
        [],
        now=NOW,
        images=present("myapp:1"),
        pull_failures=(failed(NEW_PAUSE, ago=15, back_off=20),),
        options=NEW_NET,
    )

    (wait,) = [a for a in p.actions if isinstance(a, Wait)]
    assert ("default/web", UID, 5.0) == (wait.pod, wait.pod_uid, wait.seconds)
    assert (
        f'wait default/web/net: Back-off pulling image "{NEW_PAUSE}", back-off 20s, 5s left '
        "(the last pull failed: pull access denied for myapp)"
    ) == wait.message
