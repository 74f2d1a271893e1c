"""The volume rules of issue 27, as the modern kubelet has them, one table per rule in
the manner of the kubelet's ``TestComputePodActions`` (a case per row: an id, the pod,
what the engine holds, what the plan does and why).

* ConfigMap, Secret, downwardAPI and projected files default to mode 0644
  (``SetDefaults_ConfigMapVolumeSource``, ``SetDefaults_SecretVolumeSource``,
  ``SetDefaults_DownwardAPIVolumeSource``, ``SetDefaults_ProjectedVolumeSource``); a
  volume written with the 0400 of earlier versions is rewritten in place, the
  containers that mount it keep running.
* ``fsGroup`` applies to claims' volumes as to emptyDir volumes (``SetVolumeOwnership``,
  ``pkg/volume/volume_linux.go``): the root of podsync's volume of the claim is the
  fsGroup's, 02775 (02755 for a read-only claim), set up before each container that
  mounts it is created.
* ``terminationMessagePath`` defaults to ``/dev/termination-log``
  (``SetDefaults_Container``): every container has the file, bound from its pod's state
  volume, and its status reads the message back; a container made before the default
  keeps running.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from podsync import (
    ConfigError,
    ObservedVolume,
    PlanOptions,
    parse_pods,
    plan,
    plan_from_json,
    plan_to_json,
    pod_status,
)
from podsync.actions._actions import Create, CreateSpec, CreateVolume, Reason, WriteVolume
from podsync.labels import LABEL_CONTAINER, LABEL_VOLUME_CLAIM
from podsync.spec._labels import LABEL_POD_STATE
from podsync.spec._volumes import VolumeFileMount, claim_volume_labels
from podsync.status import termination_inputs
from tests.support.engine_model import EngineModel
from tests.unit.loop.test_content_volumes import NOW, PAUSE, fake, load, run, visible

OBJECTS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {app.conf: "color=blue"}
---
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: hunter2, user: app}
"""


def pod_with(volume: str, spec: str = "") -> str:
    """A pod whose one container mounts the volume ``files`` given as ``volume`` (the
    source's YAML, after ``- name: files``); ``spec`` adds pod fields."""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: web, labels: {{app: web}}}}
spec:
{spec}  volumes:
  - name: files
    {volume}
  containers:
  - name: app
    image: busybox
    volumeMounts: [{{name: files, mountPath: /etc/files}}]
"""


@attrs.frozen
class ModeCase:
    id: str
    volume: str
    modes: dict[str, int]
    spec: str = ""


MODE_CASES = [
    ModeCase("secret-default", "secret: {secretName: db}", {"password": 0o644, "user": 0o644}),
    ModeCase(
        "secret-default-mode",
        "secret: {secretName: db, defaultMode: 0400}",
        {"password": 0o400, "user": 0o400},
    ),
    ModeCase(
        "secret-item-mode",
        "secret: {secretName: db, items: [{key: password, path: pw, mode: 0440}, "
        "{key: user, path: user}]}",
        {"pw": 0o440, "user": 0o644},
    ),
    ModeCase("config-map-default", "configMap: {name: settings}", {"app.conf": 0o644}),
    ModeCase(
        "downward-api-default",
        "downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}",
        {"labels": 0o644},
    ),
    ModeCase(
        "projected-secret-default",
        "projected: {sources: [{secret: {name: db}}, {configMap: {name: settings}}]}",
        {"password": 0o644, "user": 0o644, "app.conf": 0o644},
    ),
    ModeCase(
        "projected-default-mode",
        "projected: {defaultMode: 0440, sources: [{secret: {name: db}}]}",
        {"password": 0o440, "user": 0o440},
    ),
    # An fsGroup ORs in 0440 (SetVolumeOwnership): nothing to add to 0644.
    ModeCase(
        "secret-fs-group",
        "secret: {secretName: db}",
        {"password": 0o644, "user": 0o644},
        spec="  securityContext: {fsGroup: 2000}\n",
    ),
    ModeCase(
        "secret-default-mode-fs-group",
        "secret: {secretName: db, defaultMode: 0400}",
        {"password": 0o440, "user": 0o440},
        spec="  securityContext: {fsGroup: 2000}\n",
    ),
]


@pytest.mark.parametrize("case", MODE_CASES, ids=[c.id for c in MODE_CASES])
def test_files_default_to_0644(case: ModeCase, tmp_path: Path) -> None:
    """The files a container sees, with their modes, after one sync."""
    pods = load(OBJECTS, pod_with(case.volume, case.spec))
    runtime = fake()
    assert run(pods, runtime, tmp_path).ok
    volume = f"podsync-content_{pods[0].uid}_files"
    assert {path: seen[1] for path, seen in visible(runtime, volume).items() if seen} == case.modes


@attrs.frozen
class UpgradeCase:
    id: str
    #: The volume as the earlier podsync wrote it (its 0400 default spelt out) ...
    before: str
    #: ... and as the pod file says it, read by this version.
    after: str
    #: What the plan of the second sync does: the message of its one write, or None.
    write: str | None
    modes: dict[str, int]
    spec: str = ""


UPGRADE_CASES = [
    UpgradeCase(
        "secret-0400-rewritten",
        "secret: {secretName: db, defaultMode: 0400}",
        "secret: {secretName: db}",
        "write default/web volume files (secret): Secret default/db changed",
        {"password": 0o644, "user": 0o644},
    ),
    UpgradeCase(
        "projected-secret-0400-rewritten",
        "projected: {sources: [{secret: {name: db, items: [{key: user, path: user, mode: 0400}]}},"
        " {configMap: {name: settings}}]}",
        "projected: {sources: [{secret: {name: db, items: [{key: user, path: user}]}},"
        " {configMap: {name: settings}}]}",
        "write default/web volume files (projected): Secret default/db changed",
        {"user": 0o644, "app.conf": 0o644},
    ),
    UpgradeCase(
        "secret-with-fs-group-rewritten",
        "secret: {secretName: db, defaultMode: 0400}",
        "secret: {secretName: db}",
        "write default/web volume files (secret): Secret default/db changed",
        {"password": 0o644, "user": 0o644},
        spec="  securityContext: {fsGroup: 2000}\n",
    ),
    # An explicit defaultMode keeps its files as they are: nothing to write.
    UpgradeCase(
        "explicit-0400-kept",
        "secret: {secretName: db, defaultMode: 0400}",
        "secret: {secretName: db, defaultMode: 0400}",
        None,
        {"password": 0o400, "user": 0o400},
    ),
    # A ConfigMap's default was 0644 already: nothing to write.
    UpgradeCase(
        "config-map-kept",
        "configMap: {name: settings}",
        "configMap: {name: settings}",
        None,
        {"app.conf": 0o644},
    ),
]


@pytest.mark.parametrize("case", UPGRADE_CASES, ids=[c.id for c in UPGRADE_CASES])
def test_a_volume_of_an_earlier_default_is_rewritten_in_place(
    case: UpgradeCase, tmp_path: Path
) -> None:
    """The first sync after the upgrade rewrites a volume whose files an earlier version
    wrote 0400 (its content digest holds the modes) and restarts nothing: the file
    content is no part of a container's spec hash, as the kubelet's atomic writer
    swaps ``..data`` under a running container."""
    runtime = fake()
    before = load(OBJECTS, pod_with(case.before, case.spec))
    assert run(before, runtime, tmp_path).ok
    running = {c.id for c in runtime.list_containers() if c.running}
    after = load(OBJECTS, pod_with(case.after, case.spec))
    assert after[0].uid == before[0].uid
    result = run(after, runtime, tmp_path)
    assert result.ok
    actions = [(type(a).__name__, a.reason, a.message) for a in result.plan.actions]
    if case.write is None:
        assert actions == []
    else:
        assert actions == [("WriteVolume", Reason.VOLUME_CHANGED, case.write)]
        assert all(isinstance(a, WriteVolume) for a in result.plan.actions)
    assert {c.id for c in runtime.list_containers() if c.running} == running
    volume = f"podsync-content_{after[0].uid}_files"
    assert {path: seen[1] for path, seen in visible(runtime, volume).items() if seen} == case.modes


# --- fsGroup on claims ------------------------------------------------------------------


def claim_pod(
    *, fs_group: str = "", claim_read_only: str = "", mount_read_only: str = "", init: bool = False
) -> str:
    """A pod of one app container (and with ``init`` an init container) that mounts the
    claim ``data`` at /data; ``fs_group`` is the pod's fsGroup, if any."""
    security = f"  securityContext: {{fsGroup: {fs_group}}}\n" if fs_group else ""
    init_containers = (
        "  initContainers:\n"
        "  - {name: prepare, image: busybox, volumeMounts: [{name: store, mountPath: /data}]}\n"
        if init
        else ""
    )
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: db}}
spec:
{security}  volumes:
  - name: store
    persistentVolumeClaim: {{claimName: data{claim_read_only}}}
{init_containers}  containers:
  - name: app
    image: busybox
    volumeMounts: [{{name: store, mountPath: /data{mount_read_only}}}]
"""


CLAIM = "podsync_default_data"
PODSYNCS = ObservedVolume(CLAIM, claim_volume_labels("default", "data"))
FOREIGN = ObservedVolume(CLAIM, {"owner": "ops"})


@attrs.frozen
class ClaimCase:
    id: str
    pod: str
    #: The volume the engine has (None: none of the claim's name).
    observed: ObservedVolume | None
    #: The pod's actions, as (kind, container or volume, reason).
    actions: list[tuple[str, str, str]]
    #: The claim's CreateVolume: (mode, gid, message), or None when there is none.
    setup: tuple[int | None, int | None, str] | None
    #: The note the app container's create carries, if any.
    note: str = ""


FIRST_USE = "create volume podsync_default_data: claim default/data: first use"
SET_UP = "set up volume podsync_default_data: claim default/data"
NET = ("Create", "net", "network-missing")
APP = ("Create", "app", "missing")
CLAIM_CASES = [
    ClaimCase(
        "no-fs-group-missing",
        claim_pod(),
        None,
        [NET, ("CreateVolume", CLAIM, "claim-first-use"), APP],
        (None, None, FIRST_USE),
    ),
    ClaimCase(
        "fs-group-missing",
        claim_pod(fs_group="2000"),
        None,
        [NET, ("CreateVolume", CLAIM, "claim-first-use"), APP],
        (0o2775, 2000, f"{FIRST_USE}; its root 2775, group 2000 (the pod's fsGroup)"),
    ),
    ClaimCase(
        "fs-group-read-only-claim",
        claim_pod(fs_group="2000", claim_read_only=", readOnly: true"),
        None,
        [NET, ("CreateVolume", CLAIM, "claim-first-use"), APP],
        (0o2755, 2000, f"{FIRST_USE}; its root 2755, group 2000 (the pod's fsGroup)"),
    ),
    # The volume's read-only decides (the kubelet's mounter), not one mount's.
    ClaimCase(
        "fs-group-read-only-mount",
        claim_pod(fs_group="2000", mount_read_only=", readOnly: true"),
        None,
        [NET, ("CreateVolume", CLAIM, "claim-first-use"), APP],
        (0o2775, 2000, f"{FIRST_USE}; its root 2775, group 2000 (the pod's fsGroup)"),
    ),
    ClaimCase(
        "fs-group-podsyncs-volume",
        claim_pod(fs_group="2000"),
        PODSYNCS,
        [NET, ("CreateVolume", CLAIM, "claim-fs-group"), APP],
        (0o2775, 2000, f"{SET_UP}; its root 2775, group 2000 (the pod's fsGroup)"),
    ),
    ClaimCase("no-fs-group-podsyncs-volume", claim_pod(), PODSYNCS, [NET, APP], None),
    ClaimCase(
        "fs-group-foreign-volume",
        claim_pod(fs_group="2000"),
        FOREIGN,
        [NET, APP],
        None,
        note=(
            " (claim default/data: volume podsync_default_data exists and was not made by "
            "podsync: used as it is, the pod's fsGroup 2000 not applied to it)"
        ),
    ),
    ClaimCase(
        "no-fs-group-foreign-volume",
        claim_pod(),
        FOREIGN,
        [NET, APP],
        None,
        note=(
            " (claim default/data: volume podsync_default_data exists and was not made by "
            "podsync: used as it is)"
        ),
    ),
    # Set up before the first container that mounts it: the init container.
    ClaimCase(
        "fs-group-init-container",
        claim_pod(fs_group="2000", init=True),
        PODSYNCS,
        [
            NET,
            ("CreateVolume", CLAIM, "claim-fs-group"),
            ("Create", "prepare", "missing"),
            ("Wait", "app", "init-pending"),
        ],
        (0o2775, 2000, f"{SET_UP}; its root 2775, group 2000 (the pod's fsGroup)"),
    ),
]


def _named(action: object) -> str:
    return str(getattr(action, "container", "") or getattr(action, "volume", ""))


@pytest.mark.parametrize("case", CLAIM_CASES, ids=[c.id for c in CLAIM_CASES])
def test_fs_group_applies_to_claims(case: ClaimCase) -> None:
    """SetVolumeOwnership on a claim's volume (pkg/volume/volume_linux.go): the plan of a
    pod with an fsGroup sets the root of the claim's volume (podsync's) up before the
    first container that mounts it - when it creates the volume, and when the volume
    exists, as the kubelet does at every mount."""
    (pod,) = parse_pods(case.pod, source_name="pod.yaml", source="file")
    observed = [case.observed] if case.observed is not None else []
    made = plan([pod], now=NOW, options=PlanOptions(root_dir="/srv/podsync"), volumes=observed)
    (pod_plan,) = made.pods
    assert [(type(a).__name__, _named(a), a.reason) for a in pod_plan.actions] == case.actions
    setups = [a for a in pod_plan.actions if isinstance(a, CreateVolume)]
    if case.setup is None:
        assert setups == []
    else:
        (setup,) = setups
        assert (setup.mode, setup.gid, setup.message) == case.setup
        assert setup.labels == claim_volume_labels("default", "data")
        # The set-up's helper container runs the network image, which the plan pulls.
        assert setup.image == (PAUSE if setup.mode is not None else "")
    (app,) = [a for a in pod_plan.actions if isinstance(a, Create) and a.container == "app"] or [
        None
    ]
    if app is not None:
        assert app.message == f"create default/db/app: no container yet{case.note}"
    assert made == plan_from_json(plan_to_json(made))


def test_each_claim_is_set_up_as_its_own_volume() -> None:
    """A pod of two claims (after a volume of another kind): each claim's volume is
    created and set up under its own name, the read-only one as read-only."""
    text = claim_pod(fs_group="2000").replace(
        "  volumes:\n",
        "  volumes:\n  - {name: scratch, emptyDir: {medium: Memory}}\n"
        "  - {name: logs, persistentVolumeClaim: {claimName: logs, readOnly: true}}\n",
    )
    text = text.replace("mountPath: /data}]", "mountPath: /data}, {name: logs, mountPath: /logs}]")
    (pod,) = parse_pods(text, source_name="pod.yaml", source="file")
    made = plan([pod], now=NOW, options=PlanOptions(root_dir="/srv/podsync"))
    setups = [
        (a.volume, a.mode, a.labels[LABEL_VOLUME_CLAIM])
        for a in made.pods[0].actions
        if isinstance(a, CreateVolume)
    ]
    assert setups == [(CLAIM, 0o2775, "data"), ("podsync_default_logs", 0o2755, "logs")]


def test_the_fs_group_set_up_is_planned_only_before_a_create(tmp_path: Path) -> None:
    """A pod whose containers run plans nothing for its claim: the root is set up when
    a container that mounts it is created (restarted, replaced), not on every sync."""
    runtime = fake()
    pods = load(OBJECTS, claim_pod(fs_group="2000"))
    assert run(pods, runtime, tmp_path).ok
    again = run(pods, runtime, tmp_path)
    assert again.ok
    assert not again.plan.has_changes


@pytest.mark.parametrize(
    ("fs_group", "root"),
    [("", (0o755, 0)), ("2000", (0o2775, 2000))],
    ids=["no-fs-group", "fs-group"],
)
def test_sync_gives_the_claims_root_to_the_fs_group(
    fs_group: str, root: tuple[int, int], tmp_path: Path
) -> None:
    """After a sync, the claim's volume root is the fsGroup's, 02775 (the engine's 0755
    otherwise), written through the engine before the container that mounts it."""
    runtime = fake()
    pods = load(OBJECTS, claim_pod(fs_group=fs_group))
    assert run(pods, runtime, tmp_path).ok
    entry = runtime.volume_files(CLAIM).get(".")
    found = (entry.mode, entry.gid) if entry is not None else (0o755, 0)
    assert found == root


# --- terminationMessagePath -------------------------------------------------------------


def message_pod(container: str = "", init: str = "", volume: str = "") -> str:
    """A run-once pod of one app container (``container``: its extra fields), with an
    init container when ``init`` gives its extra fields, and a pod volume ``volume``."""
    init_containers = (
        f"  initContainers:\n  - name: prepare\n    image: busybox\n{init}" if init else ""
    )
    volumes = f"  volumes:\n  - {volume}\n" if volume else ""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: job}}
spec:
  restartPolicy: Never
{volumes}{init_containers}  containers:
  - name: work
    image: busybox
{container}"""


@attrs.frozen
class MessageCase:
    id: str
    pod: str
    #: Where each created container's termination-message file is bound, by container.
    paths: dict[str, str]


MESSAGE_CASES = [
    MessageCase("absent", message_pod(), {"work": "/dev/termination-log"}),
    MessageCase(
        "given",
        message_pod("    terminationMessagePath: /tmp/why\n"),
        {"work": "/tmp/why"},
    ),
    MessageCase(
        "given-as-the-default",
        message_pod("    terminationMessagePath: /dev/termination-log\n"),
        {"work": "/dev/termination-log"},
    ),
    MessageCase(
        "init-container",
        message_pod(init="    command: [/bin/true]\n"),
        {"prepare": "/dev/termination-log"},
    ),
    MessageCase(
        "fallback-to-logs",
        message_pod("    terminationMessagePolicy: FallbackToLogsOnError\n"),
        {"work": "/dev/termination-log"},
    ),
    # A volume may be mounted beside the file: only the path itself is the file's.
    MessageCase(
        "volume-under-dev",
        message_pod(
            "    volumeMounts: [{name: shm, mountPath: /dev/shm}]\n",
            volume="{name: shm, emptyDir: {medium: Memory}}",
        ),
        {"work": "/dev/termination-log"},
    ),
]


@pytest.mark.parametrize("case", MESSAGE_CASES, ids=[c.id for c in MESSAGE_CASES])
def test_every_container_has_a_termination_message_file(case: MessageCase) -> None:
    """terminationMessagePath defaults to /dev/termination-log (SetDefaults_Container,
    TerminationMessagePathDefault): every container the plan creates binds a fresh file
    of its pod's state volume there (or at the path the pod gives), written through
    the network container, whose create makes the volume."""
    (pod,) = parse_pods(case.pod, source_name="pod.yaml", source="file")
    made = plan([pod], now=NOW, options=PlanOptions(root_dir="/srv/podsync"))
    (pod_plan,) = made.pods
    created = {a.container: a.spec for a in pod_plan.actions if isinstance(a, Create)}
    bound = {
        name: [m.container_path for m in spec.file_mounts]
        for name, spec in created.items()
        if name != "net"
    }
    assert bound == {name: [path] for name, path in case.paths.items()}
    net = created["net"]
    assert net.file_mounts == ()
    # The network container mounts the pod's state volume, which the engine makes,
    # labelled, at its create (no create of its own); the files are written through it.
    (state,) = net.volumes
    assert (state.volume, dict(state.labels)) == (
        f"podsync-state_{pod.uid}",
        {
            "io.podsync.volume.kind": "pod-state",
            "io.podsync.volume.namespace": "default",
            "io.podsync.pod.uid": pod.uid,
        },
    )
    assert {net.name} == {m.through for name, spec in bound_specs(created) for m in spec}
    assert not [a for a in pod_plan.actions if isinstance(a, CreateVolume)]


def bound_specs(created: dict[str, CreateSpec]) -> list[tuple[str, tuple[VolumeFileMount, ...]]]:
    return [(name, spec.file_mounts) for name, spec in created.items() if name != "net"]


@attrs.frozen
class WriterCase:
    id: str
    #: The network container that runs: "" (none: a new pod), "current" (it mounts the
    #: pod's state volume) or "0.1.0" (made before: no label, no state volume).
    network: str
    #: Whether the plan is given the volume list.
    listed: bool
    expected: list[tuple[str, str]]
    #: Whom work's termination-message file is written through: "net" (the network
    #: container, one archive upload), "helper" (a container of the network image).
    writer: str
    #: For a network container of 0.1.0: an earlier restart made the state volume.
    volume_made: bool = False


STATE_VOLUME = ("CreateVolume", "")
WORK = ("Create", "work")
WRITER_CASES = [
    WriterCase("new-pod", "", False, [("Create", "net"), WORK], "net"),
    WriterCase("new-pod-volumes-listed", "", True, [("Create", "net"), WORK], "net"),
    # The network container mounts the volume: it exists (Docker removes no volume a
    # container mounts), with or without the list.
    WriterCase("restart-beside-current-network", "current", False, [WORK], "net"),
    WriterCase("restart-beside-current-network-listed", "current", True, [WORK], "net"),
    # A network container of 0.1.0 is kept (upgrading restarts nothing); the file is
    # written through a container made for it, into a volume created first.
    WriterCase("restart-beside-0.1.0-network", "0.1.0", False, [STATE_VOLUME, WORK], "helper"),
    WriterCase(
        "restart-beside-0.1.0-network-listed", "0.1.0", True, [STATE_VOLUME, WORK], "helper"
    ),
    WriterCase("again-beside-0.1.0-network-volume-listed", "0.1.0", True, [WORK], "helper", True),
]


@pytest.mark.parametrize("case", WRITER_CASES, ids=[c.id for c in WRITER_CASES])
def test_the_termination_message_file_is_written_through_the_network_container(
    case: WriterCase,
) -> None:
    """Where the file of a new instance is written from, and when the pod's state
    volume is created: the network container of this version mounts the volume
    (``pod_state_mount``), so the files are written through it and the volume exists
    while it does; beside a network container made before, through a container of the
    network image, into a volume the plan creates unless the list shows it. The engine
    model then takes the plan (a file's volume exists; a container written through
    mounts it)."""
    (pod,) = parse_pods(
        message_pod().replace("restartPolicy: Never", "restartPolicy: OnFailure"),
        source_name="pod.yaml",
        source="file",
    )
    model = EngineModel(image_tags={"busybox:latest", PAUSE})
    state = f"podsync-state_{pod.uid}"
    if case.network:
        model.apply(plan([pod], now=NOW - 100), NOW - 100)
        (work,) = [c for c in model.observed if c.labels.get(LABEL_CONTAINER) == "work"]
        model.exit(work.id, 1, NOW - 50)
    if case.network == "0.1.0":
        (net,) = [c for c in model.observed if c.labels.get(LABEL_CONTAINER) == "net"]
        labels = {k: v for k, v in net.labels.items() if k != LABEL_POD_STATE}
        model.containers[net.id] = attrs.evolve(net, labels=labels)
        model.mounted[net.id] = ()
        if not case.volume_made:
            del model.volumes[state]
    volumes = model.observed_volumes if case.listed else []

    made = plan([pod], model.observed, images=model.images, volumes=volumes, now=NOW)

    (pod_plan,) = made.pods
    assert [(type(a).__name__, getattr(a, "container", "")) for a in pod_plan.actions] == (
        case.expected
    )
    (create,) = [a for a in pod_plan.actions if isinstance(a, Create) and a.container == "work"]
    (mounted,) = create.spec.file_mounts
    net_name = create.spec.join
    assert (mounted.volume, mounted.through) == (
        state,
        net_name if case.writer == "net" else "",
    )
    assert mounted.image == PAUSE
    model.apply(made, NOW)


@pytest.mark.parametrize(
    ("container", "problem"),
    [
        (
            "    volumeMounts: [{name: logs, mountPath: /dev/termination-log}]\n",
            "$.spec.containers[0].volumeMounts[0].mountPath: '/dev/termination-log' is where "
            "the termination-message file is (the default terminationMessagePath); mount the "
            "volume elsewhere, or give the file another terminationMessagePath",
        ),
        (
            "    terminationMessagePath: /var/log/app\n"
            "    volumeMounts: [{name: logs, mountPath: /var/log/app}]\n",
            "$.spec.containers[0].terminationMessagePath: '/var/log/app' is also where "
            "$.spec.containers[0].volumeMounts[0] mounts a volume; the termination-message "
            "file needs a path of its own",
        ),
        (
            "    terminationMessagePath: /var/log/why\n"
            "    volumeMounts: [{name: logs, mountPath: /dev/termination-log}]\n",
            None,
        ),
    ],
    ids=["volume-at-the-default", "volume-at-the-given-path", "volume-at-the-default-moved"],
)
def test_a_volume_where_the_file_is_bound_is_refused(container: str, problem: str | None) -> None:
    """Docker refuses two mounts at one path ("Duplicate mount point"): a volume at the
    file's path - the default one when the pod gives none - is refused when the pod is
    read, naming the place to change."""
    text = message_pod(container, volume="{name: logs, emptyDir: {}}")
    if problem is None:
        assert parse_pods(text, source_name="pod.yaml", source="file")
        return
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pod.yaml", source="file")
    assert [str(p) for p in info.value.problems] == [f"pod.yaml: {problem}"]


@pytest.mark.parametrize(
    ("container", "written", "message"),
    [
        ("", ("/dev/termination-log", b"done: 3 rows"), "done: 3 rows"),
        ("    terminationMessagePath: /tmp/why\n", ("/tmp/why", b"why not"), "why not"),
        # The file is the only place read: a write elsewhere is no message.
        ("    terminationMessagePath: /tmp/why\n", ("/dev/termination-log", b"lost"), ""),
    ],
    ids=["default-path", "given-path", "default-path-not-read-when-given"],
)
def test_status_reads_the_message_back_from_the_file(
    container: str, written: tuple[str, bytes], message: str, tmp_path: Path
) -> None:
    """What the process wrote at its terminationMessagePath (the default one when the
    pod gives none) is its run's message in the pod status, read through the engine."""
    runtime = fake()
    (pod,) = parse_pods(message_pod(container), source_name="pod.yaml", source="file")
    assert run([pod], runtime, tmp_path).ok
    (work,) = [c.id for c in runtime.containers if c.labels.get(LABEL_CONTAINER) == "work"]
    runtime.write_container_file(work, *written)
    runtime.stop_container(work, 0)
    messages, _ = termination_inputs(runtime, [pod], runtime.containers)
    status = pod_status(pod, runtime.containers, termination_messages=messages)
    assert status.containers[0].termination_message == message


def test_a_container_of_an_earlier_version_without_the_file_is_kept(tmp_path: Path) -> None:
    """Upgrading restarts nothing: a container made before the default, without the file
    (its pod gave no terminationMessagePath), has the spec hash of one made now - the
    path is hashed as the pod gives it - and keeps running; its status has no message
    (nothing is bound at /dev/termination-log)."""
    runtime = fake()
    (pod,) = parse_pods(
        message_pod("    command: [sleep, '3600']\n"), source_name="pod.yaml", source="file"
    )
    assert run([pod], runtime, tmp_path).ok
    (work,) = [c for c in runtime.containers if c.labels.get(LABEL_CONTAINER) == "work"]
    with runtime._lock:  # as an earlier podsync created it: no termination file
        made = runtime._containers[work.id]
        assert made.spec is not None
        made.spec = attrs.evolve(made.spec, file_mounts=())
    again = run([pod], runtime, tmp_path)
    assert again.ok
    assert not again.plan.has_changes
    runtime.write_container_file(work.id, "/dev/termination-log", b"in its own /dev")
    runtime.stop_container(work.id, 0)
    (stopped,) = [c for c in runtime.containers if c.id == work.id]
    messages, _ = termination_inputs(runtime, [pod], [stopped])
    assert messages == {work.id: ""}
