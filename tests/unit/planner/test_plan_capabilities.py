"""Admission against the runtime's capabilities (``podsync.planner._capabilities``), in
the manner of the kubelet's ``TestComputePodActions``: one row per case (the pod file,
the capabilities the runtime has, the rejection expected or none), each message exact.

A pod that needs a capability the runtime lacks is refused, naming it, as the kubelet
refuses a pod its node cannot enforce (``appArmorAdmitHandler.Admit``); what podsync
adds by itself (the termination-message file) is left out instead.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from podsync import (
    AllowedHostPath,
    Create,
    CreateVolume,
    PlanOptions,
    Reason,
    parse_pods,
    plan_from_json,
    plan_to_json,
)
from podsync.actions._options import ALL_CAPABILITIES, Capability
from podsync.spec._labels import LABEL_POD_STATE
from tests.unit.planner.test_plan_pod_security import pod_file
from tests.unit.planner.test_plan_security import creates, plan_of

CORE: frozenset[Capability] = frozenset()
VOLUMES, FILES, EXEC = Capability.VOLUMES, Capability.FILES, Capability.EXEC
NODE = Capability.NODE


def without(*lacking: Capability) -> frozenset[Capability]:
    return ALL_CAPABILITIES - set(lacking)


MOUNT = "volumeMounts:\n- {name: data, mountPath: /data}\n"
CLAIM = "volumes:\n- name: data\n  persistentVolumeClaim: {claimName: db}\n"
EMPTY = "volumes:\n- name: data\n  emptyDir: {}\n"
MEMORY = "volumes:\n- name: data\n  emptyDir: {medium: Memory}\n"
HOST = "volumes:\n- name: data\n  hostPath: {path: /srv/data}\n"
CONFIG = "volumes:\n- name: data\n  configMap: {name: settings}\n"
EXEC_LIVENESS = "livenessProbe:\n  exec: {command: [cat, /ready]}\n"
HTTP_READINESS = "readinessProbe:\n  httpGet: {path: /, port: 80}\n"
HTTP_WITH_HOST = "readinessProbe:\n  httpGet: {host: 127.0.0.1, path: /, port: 80}\n"
TCP_STARTUP = "startupProbe:\n  tcpSocket: {port: 80}\n"
SIDECAR = "restartPolicy: Always\n"
POST_START_EXEC = "lifecycle:\n  postStart:\n    exec: {command: [touch, /ready]}\n"
POST_START_HTTP = "lifecycle:\n  postStart:\n    httpGet: {path: /warm, port: 80}\n"
PRE_STOP_EXEC = "lifecycle:\n  preStop:\n    exec: {command: [sh, -c, 'kill 1']}\n"
CONFIG_MAP = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a.conf: x}\n"


@attrs.frozen
class Case:
    id: str
    pod: str
    capabilities: frozenset[Capability]
    #: the rejection's message after "the runtime cannot run this pod: it has no ", or
    #: None when the pod is admitted
    rejected: str | None
    options: dict[str, Any] = attrs.field(factory=dict)


CASES = [
    # --- a plain pod needs nothing ----------------------------------------------------
    Case("a plain pod runs on a core runtime", pod_file(), CORE, None),
    Case("a plain pod runs on a full runtime", pod_file(), ALL_CAPABILITIES, None),
    # --- volumes ------------------------------------------------------------------------
    Case(
        "a claim needs named volumes",
        pod_file(CLAIM, MOUNT),
        without(VOLUMES),
        'volumes (volume "data": persistentVolumeClaim)',
    ),
    Case(
        "an emptyDir on disk needs named volumes",
        pod_file(EMPTY, MOUNT),
        CORE,
        'volumes (volume "data": emptyDir)',
    ),
    Case("an emptyDir in memory is a tmpfs of the create", pod_file(MEMORY, MOUNT), CORE, None),
    Case(
        "a hostPath is a bind of the create",
        pod_file(HOST, MOUNT),
        CORE,
        None,
        {"allowed_host_paths": (AllowedHostPath("/srv"),)},
    ),
    Case(
        "a configMap volume needs volumes and files",
        pod_file(CONFIG, MOUNT) + CONFIG_MAP,
        CORE,
        'files (volume "data": configMap); volumes (volume "data": configMap)',
    ),
    Case(
        "a configMap volume needs files even with volumes",
        pod_file(CONFIG, MOUNT) + CONFIG_MAP,
        without(FILES),
        'files (volume "data": configMap)',
    ),
    Case(
        "a claim on a runtime lacking only exec",
        pod_file(CLAIM, MOUNT),
        without(EXEC),
        None,
    ),
    # --- exec -------------------------------------------------------------------------
    Case(
        "an exec liveness probe needs exec",
        pod_file(app=EXEC_LIVENESS),
        without(EXEC),
        'exec (container "app": livenessProbe exec)',
    ),
    Case(
        "an exec preStop handler of a sidecar needs exec",
        pod_file(init=SIDECAR + PRE_STOP_EXEC),
        without(EXEC),
        'exec (container "setup": preStop exec)',
    ),
    Case(
        "an exec postStart handler needs exec",
        pod_file(app=POST_START_EXEC),
        without(EXEC),
        'exec (container "app": postStart exec)',
    ),
    Case(
        "an httpGet postStart handler without host needs the container's address",
        pod_file(app=POST_START_HTTP),
        without(NODE),
        'node (container "app": postStart httpGet without host)',
    ),
    Case(
        "an exec probe on a runtime lacking only volumes",
        pod_file(app=EXEC_LIVENESS),
        without(VOLUMES),
        None,
    ),
    # --- node: a handler's address ----------------------------------------------------
    Case(
        "an httpGet probe without host needs the container's address",
        pod_file(app=HTTP_READINESS),
        without(NODE),
        'node (container "app": readinessProbe httpGet without host)',
    ),
    Case(
        "a tcpSocket probe without host needs the container's address",
        pod_file(app=TCP_STARTUP),
        without(NODE),
        'node (container "app": startupProbe tcpSocket without host)',
    ),
    Case(
        "an httpGet probe with a host needs no address",
        pod_file(app=HTTP_WITH_HOST),
        CORE,
        None,
    ),
    # --- several at once: each capability named once, with all that needs it ----------
    Case(
        "every need named, capabilities in order",
        pod_file(CLAIM, MOUNT + EXEC_LIVENESS + HTTP_READINESS, init=SIDECAR + PRE_STOP_EXEC),
        CORE,
        'exec (container "setup": preStop exec, container "app": livenessProbe exec); '
        'node (container "app": readinessProbe httpGet without host); '
        'volumes (volume "data": persistentVolumeClaim)',
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_runtime_capabilities(case: Case) -> None:
    p = plan_of(case.pod, capabilities=case.capabilities, **case.options)

    expected = []
    if case.rejected is not None:
        (pod, *_) = parse_pods(case.pod)
        message = f"the runtime cannot run this pod: it has no {case.rejected}"
        expected = [(pod.key, pod.uid, Reason.MISSING_CAPABILITY, message)]
    assert expected == [(r.pod, r.uid, r.reason, r.message) for r in p.rejected]
    # A rejected pod gets nothing; an admitted one its containers.
    assert (case.rejected is None) == bool(creates(p))


def test_without_volumes_a_pod_gets_no_state_volume_nor_termination_file() -> None:
    """What podsync adds by itself degrades: no state volume mounted in the network
    container (nor its label), no termination-message file in the app container, no
    volume created; with volumes, both are there."""
    core = creates(plan_of(pod_file(), capabilities=CORE))
    full = creates(plan_of(pod_file()))

    assert ((), ()) == (core["net"].spec.volumes, core["app"].spec.file_mounts)
    assert LABEL_POD_STATE not in core["net"].spec.labels
    assert full["net"].spec.volumes
    assert full["app"].spec.file_mounts
    assert LABEL_POD_STATE in full["net"].spec.labels


def test_without_volumes_nothing_touches_volumes() -> None:
    """A core runtime's plan has no volume action at all."""
    p = plan_of(pod_file(MEMORY, MOUNT), capabilities=CORE)

    assert not [a for a in p.actions if isinstance(a, CreateVolume)]
    assert all(not a.spec.volumes for a in p.actions if isinstance(a, Create))


def test_capabilities_round_trip_through_the_plan_json() -> None:
    """A plan for a smaller runtime says so in its JSON (format 10), and reads back;
    a plan for a full runtime writes nothing of it (it reads as every capability)."""
    small = plan_of(pod_file(), capabilities={"volumes", "exec"})
    full = plan_of(pod_file())

    assert {VOLUMES, EXEC} == plan_from_json(plan_to_json(small)).options.capabilities
    assert '"capabilities"' not in plan_to_json(full)
    assert ALL_CAPABILITIES == plan_from_json(plan_to_json(full)).options.capabilities


def test_an_unknown_capability_is_refused() -> None:
    with pytest.raises(ValueError, match="'gpus' is not a valid Capability"):
        PlanOptions(capabilities={"gpus"})
