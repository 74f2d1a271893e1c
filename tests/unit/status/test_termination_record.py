"""Where a run's termination message is read, and under which policy, with or without
the pod file (issue 30), on a FakeRuntime: one row per case.

The kubelet reads both off the container that ran (``getContainerInfoFromAnnotations``
in ``convertToKubeContainerStatus``, ``pkg/kubelet/kuberuntime/kuberuntime_container.go``),
never the desired spec: podsync reads the path the container's spec label records and
the policy its ``LABEL_TERMINATION_MESSAGE_POLICY`` records. A pod file given fills in
only what the container does not record (one made before the policy was recorded; a
spec label that cannot be read); without one, the kubelet's defaults,
``/dev/termination-log`` and ``File``.

Each row runs a pod, lets its container fail with an empty termination-message file and
a line in its log, takes the container's record off where the row says, and reads the
inputs of its status (``termination_inputs``): the path read is the engine call's, and
the policy shows as the log tail read (``FallbackToLogsOnError``) or not (``File``).
"""

from __future__ import annotations

import attrs
import pytest

from podsync import ObservedContainer, Pod, TerminationMessagePolicy, parse_pods, sync
from podsync.actions._options import PlanOptions
from podsync.spec._labels import LABEL_CONTAINER, LABEL_SPEC, LABEL_TERMINATION_MESSAGE_POLICY
from podsync.status import orphaned_pod_statuses, pod_status, termination_inputs
from podsync.testing import FakeClock, FakeRuntime

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
OPTIONS = PlanOptions(root_dir="/nonexistent")
DEFAULT = "/dev/termination-log"
CUSTOM = "/var/run/done"
FILE = TerminationMessagePolicy.FILE
FALLBACK = TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: busybox
"""


def pod_file(fields: str = "") -> Pod:
    """The job's pod file, its container with ``fields`` (YAML lines) added."""
    (pod,) = parse_pods(POD + fields, source="file")
    return pod


CUSTOM_FALLBACK = (
    "    terminationMessagePath: /var/run/done\n"
    "    terminationMessagePolicy: FallbackToLogsOnError\n"
)
ELSEWHERE_FILE = "    terminationMessagePath: /elsewhere\n    terminationMessagePolicy: File\n"
FALLBACK_ONLY = "    terminationMessagePolicy: FallbackToLogsOnError\n"


def failed(pod: Pod) -> tuple[FakeRuntime, str]:
    """An engine on which ``pod``'s container ran and failed: an empty file, a log."""
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW, step=0))
    assert sync([pod], fake, options=OPTIONS, clock=fake.clock).ok
    cid = next(c.id for c in fake.containers if c.labels.get(LABEL_CONTAINER) == "app")
    fake.write_log(cid, "no database\n", "stderr")
    fake.exit(cid, 1)
    return fake, cid


# What of the container's record a row keeps: all of it; all but the policy (a
# container made before podsync recorded it); all but a readable spec label (none at
# all, as on a 2014 kubelet's container; one that is no JSON; one without the path);
# neither; a policy label whose value is no policy.
RECORDS = {
    "kept": {},
    "no policy": {LABEL_TERMINATION_MESSAGE_POLICY: None},
    "no spec": {LABEL_SPEC: None},
    "unreadable spec": {LABEL_SPEC: "{not json"},
    "spec without the path": {LABEL_SPEC: '{"name":"app"}'},
    "neither": {LABEL_TERMINATION_MESSAGE_POLICY: None, LABEL_SPEC: "{not json"},
    "policy not a policy": {LABEL_TERMINATION_MESSAGE_POLICY: "Logs"},
}


def with_record(oc: ObservedContainer, record: str) -> ObservedContainer:
    labels = dict(oc.labels)
    for key, value in RECORDS[record].items():
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
    return attrs.evolve(oc, labels=labels)


@attrs.frozen
class Case:
    id: str
    ran: str  # the container fields of the pod it was made from
    record: str  # what of its record is left (RECORDS)
    given: str | None  # the container fields of the pod file given; None: no pod file
    path: str
    policy: TerminationMessagePolicy


CASES = [
    Case("recorded, no pod file", CUSTOM_FALLBACK, "kept", None, CUSTOM, FALLBACK),
    Case("recorded defaults, no pod file", "", "kept", None, DEFAULT, FILE),
    Case("recorded, pod file alike", CUSTOM_FALLBACK, "kept", CUSTOM_FALLBACK, CUSTOM, FALLBACK),
    # The container that ran wins over a pod file that says otherwise now.
    Case("recorded, pod file differs", CUSTOM_FALLBACK, "kept", ELSEWHERE_FILE, CUSTOM, FALLBACK),
    Case("recorded File, pod file falls back", "", "kept", FALLBACK_ONLY, DEFAULT, FILE),
    # Made before the policy was recorded: the path is in its spec label all the same.
    Case("no policy, no pod file", CUSTOM_FALLBACK, "no policy", None, CUSTOM, FILE),
    Case("no policy, pod file", CUSTOM_FALLBACK, "no policy", FALLBACK_ONLY, CUSTOM, FALLBACK),
    Case("no policy, pod file File", CUSTOM_FALLBACK, "no policy", ELSEWHERE_FILE, CUSTOM, FILE),
    Case(
        "unreadable spec, no pod file", CUSTOM_FALLBACK, "unreadable spec", None, DEFAULT, FALLBACK
    ),
    Case(
        "unreadable spec, pod file",
        CUSTOM_FALLBACK,
        "unreadable spec",
        ELSEWHERE_FILE,
        "/elsewhere",
        FALLBACK,
    ),
    Case("no spec, no pod file", CUSTOM_FALLBACK, "no spec", None, DEFAULT, FALLBACK),
    Case("no spec, pod file", CUSTOM_FALLBACK, "no spec", ELSEWHERE_FILE, "/elsewhere", FALLBACK),
    Case(
        "spec without the path, pod file",
        CUSTOM_FALLBACK,
        "spec without the path",
        ELSEWHERE_FILE,
        "/elsewhere",
        FALLBACK,
    ),
    Case("neither, no pod file", CUSTOM_FALLBACK, "neither", None, DEFAULT, FILE),
    Case("neither, pod file", "", "neither", CUSTOM_FALLBACK, CUSTOM, FALLBACK),
    Case(
        "policy not a policy, no pod file",
        FALLBACK_ONLY,
        "policy not a policy",
        None,
        DEFAULT,
        FILE,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_where_the_message_is_and_its_policy(case: Case) -> None:
    fake, cid = failed(pod_file(case.ran))
    seen = [with_record(oc, case.record) for oc in fake.containers]
    pods = [pod_file(case.given)] if case.given is not None else []
    fake.clear_calls()

    messages, tails = termination_inputs(fake, pods, seen)

    read = [call.args[1] for call in fake.calls if call.name == "read_file"]
    policy = FALLBACK if cid in tails else FILE
    assert ([case.path], case.policy) == (read, policy)
    assert ({cid: ""}, {cid: "no database\n"} if policy is FALLBACK else {}) == (messages, tails)


def test_the_message_a_status_shows_follows_the_recorded_policy() -> None:
    """What ``termination_inputs`` read, ``pod_status`` and ``orphaned_pod_statuses``
    show under the policy the container ran with: the pod file's File does not hide the
    log tail of a run that fell back, and a pod without its file shows it too."""
    pod = pod_file(CUSTOM_FALLBACK)
    fake, _ = failed(pod)
    now_file = pod_file(ELSEWHERE_FILE)
    messages, tails = termination_inputs(fake, [now_file], fake.containers)

    (app,) = pod_status(
        now_file, fake.containers, termination_messages=messages, log_tails=tails
    ).containers
    (orphaned,) = orphaned_pod_statuses(
        fake.containers, termination_messages=messages, log_tails=tails
    )

    assert "no database\n" == app.termination_message
    assert ["no database\n"] == [c.termination_message for c in orphaned.containers]


def test_a_file_with_words_is_the_message_whatever_the_policy() -> None:
    pod = pod_file(CUSTOM_FALLBACK)
    fake, cid = failed(pod)
    fake.write_container_file(cid, CUSTOM, b"disk full\n")

    messages, tails = termination_inputs(fake, [], fake.containers)
    (status,) = orphaned_pod_statuses(
        fake.containers, termination_messages=messages, log_tails=tails
    )

    assert ({cid: "disk full\n"}, {}) == (messages, tails)
    assert ["disk full\n"] == [c.termination_message for c in status.containers]


def test_an_init_container_made_before_the_record_takes_the_pod_files_policy() -> None:
    """The pod file's init containers fill in what theirs do not record, as its app
    containers do."""
    pod = pod_file("  initContainers:\n  - name: prepare\n    image: busybox\n" + FALLBACK_ONLY)
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW, step=0))
    assert sync([pod], fake, options=OPTIONS, clock=fake.clock).ok
    cid = next(c.id for c in fake.containers if c.labels.get(LABEL_CONTAINER) == "prepare")
    fake.write_log(cid, "migration failed\n", "stderr")
    fake.exit(cid, 1)
    seen = [with_record(oc, "no policy") for oc in fake.containers]

    with_file = termination_inputs(fake, [pod], seen)
    without_file = termination_inputs(fake, [], seen)

    assert ({cid: ""}, {cid: "migration failed\n"}) == with_file
    assert ({cid: ""}, {}) == without_file


def test_the_network_container_has_no_message_to_read() -> None:
    """The pod's network container runs no process of the pod's: nothing is read for
    it, even once it has exited."""
    fake, cid = failed(pod_file(CUSTOM_FALLBACK))
    (net,) = [c.id for c in fake.containers if c.labels.get(LABEL_CONTAINER) == "net"]
    fake.exit(net, 0)
    fake.clear_calls()

    messages, _ = termination_inputs(fake, [], fake.containers)

    assert [cid] == list(messages)
    assert [cid] == [call.args[0] for call in fake.calls if call.name == "read_file"]
