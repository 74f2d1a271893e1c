"""The termination-message policy recorded on a container replaces nothing (issue 30),
in the manner of the kubelet's ``TestComputePodActions``: one row per case.

Every app, init and sidecar container records its ``terminationMessagePolicy``
(``LABEL_TERMINATION_MESSAGE_POLICY``), as the kubelet records it as an annotation of the
container it creates (``newContainerAnnotations``), so that ``podsync status`` reads a
message without the pod file. The label is in no spec hash: a container made before
podsync recorded it plans nothing, nor does an edit of the policy (the kubelet's
``HashContainer`` leaves it out too: a run keeps the policy it was made with). The
path is in the hash already (a control row): another path is another container.

Each row starts from a pod running on the engine as this podsync left it, or with the
label taken off its containers (as a podsync before it left them), edits the pod file
and plans once.
"""

from __future__ import annotations

import attrs
import pytest

from podsync import Pod, parse_pods
from podsync.actions._actions import Create, Plan, Reason
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER, LABEL_TERMINATION_MESSAGE_POLICY
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: job, uid: 0e4c3d52-4444-4a5e-8e7a-5d6c2f1e9b00}
spec:
  initContainers:
  - {name: setup, image: busybox}
  - {name: proxy, image: busybox, restartPolicy: Always%(proxy)s}
  containers:
  - {name: app, image: busybox%(app)s}
"""

FALLBACK = ", terminationMessagePolicy: FallbackToLogsOnError"
FILE = ", terminationMessagePolicy: File"
CUSTOM_PATH = ", terminationMessagePath: /var/run/done"


def pod_file(app: str = "", proxy: str = "") -> Pod:
    (pod,) = parse_pods(
        POD % {"app": app, "proxy": proxy}, source_name="pods/job.yaml", source="file"
    )
    return pod


def running(pod: Pod) -> EngineModel:
    """An engine on which podsync started ``pod``: its init container done, its sidecar
    and app running, nothing left to do."""
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})
    for t in range(6):
        model.apply(plan([pod], model.observed, images=model.images, now=NOW + t), NOW + t)
        for c in list(model.observed):
            if c.running and c.labels.get(LABEL_CONTAINER) == "setup":
                model.exit(c.id, 0, NOW + t)
    assert not plan([pod], model.observed, images=model.images, now=NOW + 9).has_changes
    return model


def made_before(model: EngineModel) -> EngineModel:
    """The engine as a podsync that did not record the policy left it."""
    for cid, c in list(model.containers.items()):
        labels = {k: v for k, v in c.labels.items() if k != LABEL_TERMINATION_MESSAGE_POLICY}
        model.containers[cid] = attrs.evolve(c, labels=labels)
    return model


@attrs.frozen
class Case:
    id: str
    # The container fields the pod ran with, and those of the pod file planned with.
    ran: dict[str, str]
    planned: dict[str, str]
    before: bool  # the containers made before the policy was recorded
    expected: list[tuple[str, str, Reason]]


REPLACE_APP = [("Kill", "app", Reason.SPEC_CHANGED), ("Create", "app", Reason.SPEC_CHANGED)]

CASES = [
    Case("made before the record, unchanged", {}, {}, True, []),
    Case(
        "made before the record, FallbackToLogsOnError",
        {"app": FALLBACK, "proxy": FALLBACK},
        {"app": FALLBACK, "proxy": FALLBACK},
        True,
        [],
    ),
    Case(
        "made before the record, policy edited", {}, {"app": FALLBACK, "proxy": FALLBACK}, True, []
    ),
    Case("policy edited to FallbackToLogsOnError", {}, {"app": FALLBACK}, False, []),
    Case("policy edited to File", {"app": FALLBACK}, {"app": FILE}, False, []),
    Case("sidecar's policy edited", {}, {"proxy": FALLBACK}, False, []),
    Case("File spelled out", {}, {"app": FILE, "proxy": FILE}, False, []),
    # Control: the path is in the spec hash.
    Case("path edited", {}, {"app": CUSTOM_PATH}, False, REPLACE_APP),
    Case("made before the record, path edited", {}, {"app": CUSTOM_PATH}, True, REPLACE_APP),
]


def actions(p: Plan) -> list[tuple[str, str, Reason]]:
    """The pod's actions (a pull of busybox:latest is the image's business)."""
    return [
        (type(a).__name__, getattr(a, "container", ""), a.reason)
        for pod in p.pods
        for a in pod.actions
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_recorded_policy_replaces_nothing(case: Case) -> None:
    model = running(pod_file(**case.ran))
    if case.before:
        model = made_before(model)

    p = plan([pod_file(**case.planned)], model.observed, images=model.images, now=NOW + 20)

    assert case.expected == actions(p), p.describe()


def test_every_pod_container_records_its_policy_and_the_network_container_none() -> None:
    pod = pod_file(app=FALLBACK)

    model = running(pod)

    recorded = {
        c.labels[LABEL_CONTAINER]: c.labels.get(LABEL_TERMINATION_MESSAGE_POLICY)
        for c in model.observed
    }
    assert {
        "net": None,
        "setup": "File",
        "proxy": "File",
        "app": "FallbackToLogsOnError",
    } == recorded


def test_a_replacement_records_the_policy_of_the_pod_file_it_is_made_from() -> None:
    """A container made again (for its own reason: here, another path) takes the
    policy the pod file says now."""
    model = made_before(running(pod_file()))

    p = plan(
        [pod_file(app=CUSTOM_PATH + FALLBACK)], model.observed, images=model.images, now=NOW + 20
    )

    (create,) = [a for a in p.actions if isinstance(a, Create)]
    assert "FallbackToLogsOnError" == create.spec.labels[LABEL_TERMINATION_MESSAGE_POLICY]
