"""What a pod's status says while an image holds it, one row per case in the manner of
the kubelet's ``TestComputePodActions``: the plan made with the failed pulls, then the
status made from the same observation. An init container's status comes from the same
path as an app container's (``convertToAPIContainerStatuses``): ``ErrImagePull`` with
the engine's error while its pull is tried again, ``ImagePullBackOff`` while the pull
waits out its back-off (``EnsureImageExists``), ``ErrImageNeverPull`` for an absent image
it may not pull - and kubectl's ``Init:<reason>``."""

from __future__ import annotations

import attrs
import pytest

from podsync import PodStatus, PullFailure, parse_pods, pod_status
from podsync.actions._options import PlanOptions
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
OPTIONS = PlanOptions(network_image=PAUSE)
DENIED = "pull access denied for registry.example.com/team/migrate"

WEB = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 3c2d9e4f-1a6b-4c8d-9e0f-a1b2c3d4e5f6}
spec:
  restartPolicy: %(policy)s
  initContainers:
  - name: setup
    image: %(setup)s
    command: [migrate]%(sidecar)s
  containers:
  - name: app
    image: busybox:1.36
    command: [httpd, -f]
"""


def web(setup: str, policy: str = "Always", sidecar: bool = False) -> str:
    """The pod file: init container ``setup`` (with ``imagePullPolicy: Never`` when its
    image ends with ``#never``; a sidecar with ``sidecar``) before ``app``."""
    extra = "\n    restartPolicy: Always" if sidecar else ""
    if setup.endswith("#never"):
        setup, extra = setup.removesuffix("#never"), extra + "\n    imagePullPolicy: Never"
    return WEB % {"policy": policy, "setup": setup, "sidecar": extra}


def failed(image: str, ago: float, back_off: float = 10.0) -> PullFailure:
    """A pull of ``image`` for the pod that failed ``ago`` seconds before NOW."""
    return PullFailure("3c2d9e4f-1a6b-4c8d-9e0f-a1b2c3d4e5f6", image, NOW - ago, back_off, DENIED)


@attrs.frozen
class Case:
    """One row: the pod file, the images the engine holds, the failed pulls, whether
    ``setup`` ran and exited with ``exit_code`` (``None``: it never ran), and what the
    status says of ``setup``: (state, reason), the message's start (kubectl's words)."""

    id: str
    pod: str
    images: frozenset[str]
    failures: tuple[PullFailure, ...]
    exit_code: int | None
    setup: tuple[str, str]
    kubectl: str


MIGRATE = "registry.example.com/team/migrate:2"
LATEST = "registry.example.com/team/migrate"  # no tag: latest, pulled Always
HERE = frozenset({PAUSE, "busybox:1.36"})

CASES = [
    Case(
        "init-never-ran-pull-in-back-off",
        web(MIGRATE),
        HERE,
        (failed(MIGRATE, ago=3),),
        None,
        ("waiting", "ImagePullBackOff"),
        "not running (0/1 containers): Init:ImagePullBackOff: init container setup: "
        f'Back-off pulling image "{MIGRATE}"',
    ),
    Case(
        "init-never-ran-pull-tried-again",
        web(MIGRATE),
        HERE,
        (failed(MIGRATE, ago=12),),
        None,
        ("waiting", "ErrImagePull"),
        f"not running (0/1 containers): Init:ErrImagePull: init container setup: {DENIED}",
    ),
    Case(
        "init-never-ran-without-a-failure",
        web(MIGRATE),
        HERE,
        (),
        None,
        ("waiting", "PodInitializing"),
        "not running (0/1 containers): Init:0/1: init container setup not started yet",
    ),
    Case(
        "another-images-failure-holds-nothing",
        web(MIGRATE),
        HERE,
        (failed("registry.example.com/team/other:1", ago=3),),
        None,
        ("waiting", "PodInitializing"),
        "not running (0/1 containers): Init:0/1: init container setup not started yet",
    ),
    Case(
        "init-image-absent-pull-policy-never",
        web(MIGRATE + "#never"),
        HERE,
        (),
        None,
        ("waiting", "ErrImageNeverPull"),
        "not running (0/1 containers): Init:ErrImageNeverPull: init container setup: "
        f"setup: image {MIGRATE} is absent (pull policy Never)",
    ),
    Case(
        "sidecar-never-ran-pull-in-back-off",
        web(MIGRATE, sidecar=True),
        HERE,
        (failed(MIGRATE, ago=3),),
        None,
        ("waiting", "ImagePullBackOff"),
        "not running (0/1 containers): Init:ImagePullBackOff",
    ),
    Case(
        "init-failed-its-restart-waits-for-the-pull",
        web(LATEST, "OnFailure"),
        HERE | {LATEST + ":latest"},
        (failed(LATEST, ago=3),),
        1,
        ("waiting", "ImagePullBackOff"),
        "not running (0/1 containers): Init:ImagePullBackOff: init container setup exited "
        f'with code 1: Back-off pulling image "{LATEST}"',
    ),
    Case(
        "init-failed-its-pull-tried-again",
        web(LATEST, "OnFailure"),
        HERE | {LATEST + ":latest"},
        (failed(LATEST, ago=30, back_off=20),),
        1,
        ("waiting", "ErrImagePull"),
        "not running (0/1 containers): Init:ErrImagePull: init container setup exited with "
        f"code 1: {DENIED}",
    ),
    Case(
        "init-failed-under-never-has-failed",
        web(LATEST, "Never"),
        HERE | {LATEST + ":latest"},
        (failed(LATEST, ago=3),),
        1,
        ("terminated", "Error"),
        "failed: Init:Error: init container setup exited with code 1 (restart policy Never)",
    ),
]


def _status(case: Case) -> PodStatus:
    (pod,) = parse_pods(case.pod)
    model = EngineModel(image_tags=set(case.images))
    if case.exit_code is not None:
        # podsync ran the pod: the network container and setup, which then exited.
        ran = NOW - 100
        model.apply(plan([pod], model.observed, images=model.images, now=ran), ran)
        (setup,) = [o for o in model.observed if o.labels.get(LABEL_CONTAINER) == "setup"]
        model.exit(setup.id, case.exit_code, NOW - 5)
    p = plan(
        [pod],
        model.observed,
        images=model.images,
        now=NOW,
        pull_failures=case.failures,
        options=OPTIONS,
    )
    return pod_status(pod, model.observed, plan=p, pull_failures=case.failures)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_an_init_container_held_by_its_image(case: Case) -> None:
    """The init container's state and reason, what kubectl shows, and a pod that does
    not run (a failed one under Never)."""
    status = _status(case)

    (setup,) = status.init_containers
    assert case.setup == (setup.state.value, setup.reason)
    assert status.message.startswith(case.kubectl), status.message
    assert status.state == ("failed" if status.message.startswith("failed") else "pending")
    assert not status.ready


def test_the_failed_run_stays_the_last_state_while_the_pull_waits() -> None:
    """A failed init container waiting for its image keeps its run: exit code, reason,
    restarts (as under CrashLoopBackOff)."""
    (case,) = [c for c in CASES if c.id == "init-failed-its-restart-waits-for-the-pull"]

    (setup,) = _status(case).init_containers

    assert (1, "Error", 'Back-off pulling image "registry.example.com/team/migrate"') == (
        setup.exit_code,
        setup.exit_reason,
        setup.message.rpartition(": ")[2],
    )


# --- the network container's image --------------------------------------------------------

NEW_PAUSE = "registry.example.com/infra/pause:3.10"
APP = """\
apiVersion: v1
kind: Pod
metadata: {name: web, uid: 3c2d9e4f-1a6b-4c8d-9e0f-a1b2c3d4e5f6}
spec:
  containers:
  - name: app
    image: busybox:1.36
"""


@attrs.frozen
class NetCase:
    """One row: whether the pod ran on a network container of ``PAUSE`` (the option then
    names ``NEW_PAUSE``, absent), the failed pulls, and the status: its state, the
    app's reason, the message."""

    id: str
    ran: bool
    failures: tuple[PullFailure, ...]
    state: str
    app: str
    message: str


NET_CASES = [
    NetCase(
        "new-pod-network-image-in-back-off",
        False,
        (failed(NEW_PAUSE, ago=3),),
        "pending",
        "ContainerCreating",
        "not running (0/1 containers): network container ImagePullBackOff: Back-off "
        f'pulling image "{NEW_PAUSE}"; app not started yet',
    ),
    NetCase(
        "new-pod-network-image-tried-again",
        False,
        (failed(NEW_PAUSE, ago=12),),
        "pending",
        "ContainerCreating",
        f"not running (0/1 containers): network container ErrImagePull: {DENIED}; "
        "app not started yet",
    ),
    NetCase(
        "running-pod-waits-for-its-new-network-image",
        True,
        (failed(NEW_PAUSE, ago=3),),
        "pending",
        "",
        "not running (1/1 containers): network container ImagePullBackOff: Back-off "
        f'pulling image "{NEW_PAUSE}"',
    ),
    NetCase(
        "new-pod-without-a-failure",
        False,
        (),
        "pending",
        "ContainerCreating",
        "not running (0/1 containers): app not started yet",
    ),
]


@pytest.mark.parametrize("case", NET_CASES, ids=[c.id for c in NET_CASES])
def test_a_pod_held_by_its_network_image(case: NetCase) -> None:
    """The pod's message starts with what holds its network container (its image,
    pulled as the app images are); its containers wait to be created, or run on."""
    (pod,) = parse_pods(APP)
    model = EngineModel(image_tags={PAUSE, "busybox:1.36"})
    if case.ran:
        ran = NOW - 100
        model.apply(plan([pod], [], images=model.images, now=ran, options=OPTIONS), ran)
    options = PlanOptions(network_image=NEW_PAUSE)
    p = plan(
        [pod],
        model.observed,
        images=model.images,
        now=NOW,
        pull_failures=case.failures,
        options=options,
    )

    status = pod_status(pod, model.observed, plan=p, pull_failures=case.failures)

    (app,) = status.containers
    assert (case.state, case.app, case.message) == (status.state, app.reason, status.message)
