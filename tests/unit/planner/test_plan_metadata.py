"""Metadata edits restart nothing (issue 27), in the manner of the kubelet's
``TestComputePodActions``: one row per case.

The kubelet's container hash (``HashContainer``, ``pkg/kubelet/container/helpers.go``)
covers the container's spec, not its pod's labels or annotations: adding, changing or
removing one replaces no container and re-runs no init container. An env value read
from a label (``fieldRef: metadata.labels['tier']``) keeps the value the container
started with (``makeEnvironmentVariables`` runs at start only), and a downwardAPI
volume that shows the labels is rewritten in place (the kubelet's atomic writer).

The pod is ``tests/data/upgrade/web-0.1.0.yaml``: labels and annotations, an env value
read from a label and one expanded from it, a downwardAPI volume of both, an init
container, a sidecar and an app. Each row starts from the engine as one podsync left
it - this one (``current``), podsync 0.1.0 (spec hash version 2:
``web-0.1.0-engine.json``, recorded with that release by ``tools/upgrade-fixture.py``)
or a podsync of version 1 (``v1``: this one's containers with their hash label's
version set to 1, as ``test_plan_options.as_version_1`` does) - edits the pod file and
plans once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from podsync import ObservedContainer, Pod, parse_pods, sync
from podsync.actions._actions import Create, Kill, Plan, Reason, WriteVolume
from podsync.actions._options import PlanOptions
from podsync.spec._labels import LABEL_CONTAINER, LABEL_INIT_INDEX, LABEL_SPEC_HASH
from podsync.testing import FakeClock, FakeRuntime

DATA = Path(__file__).resolve().parents[2] / "data" / "upgrade"
POD = (DATA / "web-0.1.0.yaml").read_text()
NOW = 1_800_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"


def load(text: str) -> list[Pod]:
    # As podsync 0.1.0 read the file (load_pods of its path): the uid follows from the
    # file source, the namespace and the name.
    return list(parse_pods(text, source_name=str(DATA / "web-0.1.0.yaml"), source="file"))


def run(pods: list[Pod], runtime: FakeRuntime, now: float) -> Plan:
    # The default options, as podsync 0.1.0 ran with them: the root directory is in the
    # spec of a container that mounts a content volume. Nothing is written under it
    # (content volumes are engine volumes).
    result = sync(pods, runtime, options=PlanOptions(), probe=False, clock=FakeClock(now))
    assert result.ok, result.apply_result.summary()
    return result.plan


def finish_init_containers(runtime: FakeRuntime) -> None:
    """The init container that runs to completion exits 0 (a sidecar keeps running)."""
    for c in runtime.containers:
        if c.running and c.labels.get(LABEL_INIT_INDEX) == "0":
            runtime.exit(c.id, 0)


def current() -> FakeRuntime:
    """The engine as this podsync leaves the pod: initialised, running, steady."""
    runtime = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW))
    for step in range(4):
        run(load(POD), runtime, NOW + step)
        finish_init_containers(runtime)
    assert not run(load(POD), runtime, NOW + 10).has_changes
    return runtime


def made_by_0_1_0() -> FakeRuntime:
    """The engine as podsync 0.1.0 left the pod (its containers as it labelled them);
    this podsync then writes the downwardAPI volume's files, which 0.1.0's fixture
    recorder did not, and nothing else: the upgrade restarts nothing."""
    runtime = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(NOW))
    recorded = json.loads((DATA / "web-0.1.0-engine.json").read_text())
    assert recorded["recorded_by"] == "podsync 0.1.0"
    for n, c in enumerate(recorded["containers"]):
        runtime.add_container(
            ObservedContainer(
                id=f"old{n}",
                name=c["name"],
                image=c["image"],
                labels=c["labels"],
                created=NOW - 3600,
                running=c["running"],
                exit_code=c["exit_code"],
                finished_at=None if c["running"] else NOW - 3500,
            )
        )
    upgraded = run(load(POD), runtime, NOW)
    assert not [a for a in upgraded.actions if isinstance(a, Create | Kill)], upgraded.describe()
    assert not run(load(POD), runtime, NOW + 10).has_changes
    return runtime


def made_by_version_1() -> FakeRuntime:
    """This podsync's containers, their hash label's version set to 1."""
    runtime = current()
    with runtime._lock:
        for c in runtime._containers.values():
            digest = c.labels[LABEL_SPEC_HASH].split(":")[1]
            c.labels[LABEL_SPEC_HASH] = f"1:{digest}"
    return runtime


ENGINES: dict[str, Callable[[], FakeRuntime]] = {
    "current": current,
    "0.1.0": made_by_0_1_0,
    "v1": made_by_version_1,
}

# What a row expects: (action, container or volume, reason), in plan order.
WRITE_PODINFO = ("WriteVolume", "podinfo", Reason.VOLUME_CHANGED)
REPLACE_APP = [("Kill", "app", Reason.SPEC_CHANGED), ("Create", "app", Reason.SPEC_CHANGED)]
REBUILD_FOR_INIT = [
    ("Kill", "app", Reason.POD_REBUILD),
    ("Kill", "log-shipper", Reason.POD_REBUILD),
    ("Kill", "net", Reason.NETWORK_CHANGED),
    ("Remove", "migrate", Reason.INIT_PURGED),
    ("Remove", "log-shipper", Reason.INIT_PURGED),
    ("Create", "net", Reason.NETWORK_CHANGED),
    ("Create", "migrate", Reason.POD_REBUILD),
    ("Wait", "log-shipper", Reason.INIT_PENDING),
    ("Wait", "app", Reason.INIT_PENDING),
]

# A pod of podsync 0.1.0 has no state volume (it bound a termination-message file only
# where the pod gave a path; issue 27 binds one at /dev/termination-log by default), and
# its network container does not mount one: a container this version creates beside
# that network container creates the volume first (its file is written through a
# container made for it). A rebuilt pod's new network container mounts the volume,
# which the engine makes at its create: nothing to create then.
FIRST_STATE = ("CreateVolume", "", Reason.POD_STATE_FIRST_USE)
REPLACE_APP_0_1_0 = [REPLACE_APP[0], FIRST_STATE, REPLACE_APP[1]]


@attrs.frozen
class Case:
    id: str
    engine: str
    # (text, replacement) edits of the pod file.
    edits: tuple[tuple[str, str], ...]
    expected: list[tuple[str, str, Reason]]


LABEL_ADDED = (("    tier: frontend\n", "    tier: frontend\n    release: blue\n"),)
LABEL_CHANGED = (("tier: frontend", "tier: backend"),)
LABEL_REMOVED = (("    app: web\n", ""),)
ANNOTATION_CHANGED = (("team: payments", "team: checkout"),)
ANNOTATION_ADDED = (("    team: payments\n", "    team: payments\n    owner: ana\n"),)
ALL_METADATA = (
    ("tier: frontend", "tier: backend"),
    ("    app: web\n", ""),
    ("team: payments", "team: checkout"),
)
REFERENCE_CHANGED = (("metadata.labels['tier']", "metadata.labels['app']"),)
INIT_EDITED = (("echo migrated", "echo migrated again"),)

CASES = [
    Case("label added", "current", LABEL_ADDED, [WRITE_PODINFO]),
    # TIER is read from it, GREETING expanded from TIER: both keep their values.
    Case("label read by env changed", "current", LABEL_CHANGED, [WRITE_PODINFO]),
    Case("label removed", "current", LABEL_REMOVED, [WRITE_PODINFO]),
    Case("annotation changed", "current", ANNOTATION_CHANGED, [WRITE_PODINFO]),
    Case("annotation added", "current", ANNOTATION_ADDED, [WRITE_PODINFO]),
    # The init container is not re-run, the sidecar not restarted.
    Case("all metadata at once", "current", ALL_METADATA, [WRITE_PODINFO]),
    # Controls: another reference is another spec; an edited init container re-initialises.
    Case("env reads another label", "current", REFERENCE_CHANGED, REPLACE_APP),
    Case("init container edited", "current", INIT_EDITED, REBUILD_FOR_INIT),
    Case("0.1.0: label added", "0.1.0", LABEL_ADDED, [WRITE_PODINFO]),
    Case("0.1.0: label read by env changed", "0.1.0", LABEL_CHANGED, [WRITE_PODINFO]),
    Case("0.1.0: label removed", "0.1.0", LABEL_REMOVED, [WRITE_PODINFO]),
    Case("0.1.0: annotation changed", "0.1.0", ANNOTATION_CHANGED, [WRITE_PODINFO]),
    Case("0.1.0: all metadata at once", "0.1.0", ALL_METADATA, [WRITE_PODINFO]),
    Case("0.1.0: env reads another label", "0.1.0", REFERENCE_CHANGED, REPLACE_APP_0_1_0),
    Case("0.1.0: init container edited", "0.1.0", INIT_EDITED, REBUILD_FOR_INIT),
    Case("v1: label read by env changed", "v1", LABEL_CHANGED, [WRITE_PODINFO]),
    Case("v1: annotation changed", "v1", ANNOTATION_CHANGED, [WRITE_PODINFO]),
    Case("v1: env reads another label", "v1", REFERENCE_CHANGED, REPLACE_APP),
]


def edited(edits: tuple[tuple[str, str], ...]) -> str:
    text = POD
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def actions(p: Plan) -> list[tuple[str, str, Reason]]:
    return [
        (
            type(a).__name__,
            a.volume if isinstance(a, WriteVolume) else getattr(a, "container", ""),
            a.reason,
        )
        for a in p.actions
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_metadata_edits(case: Case) -> None:
    runtime = ENGINES[case.engine]()
    before = {c.id for c in runtime.containers}

    p = run(load(edited(case.edits)), runtime, NOW + 20)

    assert case.expected == actions(p), p.describe()
    if not any(kind == "Kill" for kind, _, _ in case.expected):
        # Not one container was made or stopped.
        assert before == {c.id for c in runtime.containers if c.running or c.exit_code == 0}


def test_the_volume_shows_the_new_labels_and_the_env_keeps_its_value() -> None:
    """Rewritten in place, the downwardAPI volume shows the edited labels to the running
    container, whose environment keeps the value it started with (as the kubelet's)."""
    runtime = current()
    (uid,) = {p.uid for p in load(POD)}
    app = next(c for c in runtime.containers if c.labels[LABEL_CONTAINER] == "app")

    run(load(edited(LABEL_CHANGED)), runtime, NOW + 20)

    files = runtime.volume_files(f"podsync-content_{uid}_podinfo")
    payload = files["..data"].target
    assert b'tier="backend"' in files[f"{payload}/labels"].data
    spec = runtime.spec(app.id)
    assert spec is not None
    assert ("TIER=frontend", "GREETING=serving the frontend tier") == spec.env


def test_a_container_started_after_the_edit_gets_the_new_values() -> None:
    """A container that starts later - here the app, after it exited - is made with the
    values of that time: the env read from the label, and the Docker labels."""
    runtime = current()
    pods = load(edited(LABEL_CHANGED))
    run(pods, runtime, NOW + 20)
    app = next(c for c in runtime.containers if c.labels[LABEL_CONTAINER] == "app")
    runtime.exit(app.id, 1)

    p = run(pods, runtime, NOW + 30)

    (create,) = [a for a in p.actions if isinstance(a, Create)]
    assert ("app", Reason.EXITED) == (create.container, create.reason)
    assert ("TIER=backend", "GREETING=serving the backend tier") == create.spec.env
    assert "backend" == create.spec.labels["tier"]
    # The same spec hash: its replacement is the same container spec, started anew.
    assert app.labels[LABEL_SPEC_HASH] == create.spec.labels[LABEL_SPEC_HASH]
