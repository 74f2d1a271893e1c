"""The plan format's version: format 11 leaves out defaults and what a pod's plan says
twice (issue 33; a format-11 text is read back only by a podsync that reads 11); format
10 holds what issue 29 added (a create's process
named as Kubernetes does: ``command`` and ``args``, format 9's ``entrypoint`` and
``command``; the runtime's capabilities; the options' scope); format 9 holds what issue
27 added after format 8 (the reasons ``network-lost``, ``image-pull-back-off``,
``claim-fs-group``, ``OutOfcpu``, ``OutOfmemory``, the engine settings of a create, the
node's options), so a podsync that reads only format 8 refuses such a plan by its
version instead of misreading it; this podsync still reads formats 10, 9, 8, 7, 6 and 5.
One row per case: the data of an older format is what this podsync writes with what
format 11 leaves out of a pod's plan put back (fields at their default may be left out
of any format: they read as their default)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from podsync import (
    PLAN_FORMAT_VERSION,
    Container,
    PlanOptions,
    Pod,
    apply,
    plan,
    plan_from_json,
    plan_to_json,
)
from podsync.actions._actions import Create, Kill, Plan, PodPlan, Reason, Rejection, Wait
from podsync.actions._json import _pod_context
from podsync.actions._json_pods import expand_pod
from podsync.exceptions import ConfigError
from podsync.model._pod import ResourceList
from podsync.testing import FakeRuntime

NOW = 1_700_000_000.0
UID = "9a1f2c3d-0b4e-4f5a-8c6d-7e8f9a0b1c2d"
WEB = Pod(
    "web",
    (Container("app", "busybox:1.36", command=("sh", "-c"), args=("sleep 10",)),),
    uid=UID,
    source="file",
)


def _pod_plan(*actions: Any) -> Plan:
    return Plan(pods=(PodPlan("default/web", UID, "web_default", tuple(actions)),))


NETWORK_LOST = _pod_plan(
    Kill(
        "default/web",
        UID,
        "app",
        "c1",
        "k8s_app",
        10,
        Reason.NETWORK_LOST,
        "stop default/web/app: network lost: network container exited",
        record_stop=True,
    )
)
PULL_BACK_OFF = _pod_plan(
    Wait("default/web", UID, "net", 7.0, Reason.IMAGE_PULL_BACK_OFF, "wait default/web/net")
)
OUT_OF_CPU = Plan(rejected=(Rejection("default/web", UID, Reason.OUT_OF_CPU, "no cpu left"),))


def _made() -> Plan:
    """A plan of today's podsync: its creates hold the engine settings of format 9 (a
    BestEffort container's OOM score, the network container's shareable IPC)."""
    made = plan([WEB], [], now=NOW)
    specs = [a.spec for a in made.actions if isinstance(a, Create)]
    assert any(s.oom_score_adj for s in specs)
    assert any(s.ipc_shareable for s in specs)
    assert ("sh", "-c", "sleep 10") in [(*(s.command or ()), *(s.args or ())) for s in specs]
    return made


def _as_format_9(data: dict[str, Any]) -> None:
    """What a podsync writing format 9 wrote: a create's Kubernetes ``command`` as its
    ``entrypoint``, its ``args`` as its ``command``; options without a scope."""
    data.get("options", {}).pop("scope", None)
    for pod in data["pods"]:
        for action in pod["actions"]:
            spec = action.get("spec", {})
            if "command" in spec:
                spec["entrypoint"] = spec.pop("command")
            if "args" in spec:
                spec["command"] = spec.pop("args")


def _as_format_8(data: dict[str, Any]) -> None:
    """What a podsync writing format 8 wrote: format 9's names, no engine settings, no
    node options."""
    _as_format_9(data)
    for pod in data["pods"]:
        for action in pod["actions"]:
            for field in _SETTINGS:
                action.get("spec", {}).pop(field, None)
    data.setdefault("options", {}).pop("memory_capacity", None)
    data["options"].pop("system_reserved", None)


def _scoped() -> Plan:
    """A plan of a named scope (format 10): its options say so."""
    return plan([WEB], [], now=NOW, options=PlanOptions(scope="team-a"))


def _with_defaults(made: Plan) -> Plan:
    """``made`` as read from ``_as_format_8``'s data: what it took out at its default."""
    pods = tuple(
        attrs.evolve(
            pod,
            actions=tuple(
                attrs.evolve(a, spec=attrs.evolve(a.spec, **_SETTINGS))
                if isinstance(a, Create)
                else a
                for a in pod.actions
            ),
        )
        for pod in made.pods
    )
    options = attrs.evolve(made.options, memory_capacity=0, system_reserved=ResourceList())
    return attrs.evolve(made, pods=pods, options=options)


_SETTINGS: dict[str, Any] = {
    "memory_swap": 0,
    "oom_score_adj": 0,
    "ipc_shareable": False,
    "join_ipc": "",
}


@attrs.frozen
class Case:
    id: str
    plan: Callable[[], Plan]
    version: str
    # Changes made to the saved text's data before it is read back.
    edit: Callable[[dict[str, Any]], None] = lambda data: None
    # What read gives back, from what was saved: the same plan (unedited).
    expect: Callable[[Plan], Plan] = lambda made: made
    # The error read gives instead; empty: it reads.
    refused: str = ""


#: Format 10 (issue 29): a plan made for a runtime with the core alone says so.
FOR_A_CORE_RUNTIME = Plan(
    rejected=(Rejection("default/web", UID, Reason.MISSING_CAPABILITY, "it has no exec"),),
    options=PlanOptions(capabilities=()),
)


CASES = [
    Case("10-network-lost", lambda: NETWORK_LOST, PLAN_FORMAT_VERSION),
    Case("10-command-and-args", _made, "10"),
    Case(
        "10-with-the-names-of-9",
        _made,
        "10",
        _as_format_9,
        refused="extra fields found (entrypoint) @ $.pods[0].actions[1].spec",
    ),
    Case("9-network-lost", lambda: NETWORK_LOST, "9"),
    Case("9-image-pull-back-off-of-the-network-container", lambda: PULL_BACK_OFF, "9"),
    Case("9-out-of-cpu-rejection", lambda: OUT_OF_CPU, "9"),
    Case("9-entrypoint-and-command-read-as-command-and-args", _made, "9", _as_format_9),
    Case("10-scope", _scoped, "10"),
    Case("8-without-the-settings-9-added", _made, "8", _as_format_8, _with_defaults),
    Case("8-network-lost-as-an-unbumped-podsync-wrote-it", lambda: NETWORK_LOST, "8"),
    Case("7", _made, "7", _as_format_8, _with_defaults),
    Case("5", _made, "5", _as_format_8, _with_defaults),
    Case("10-made-for-a-core-runtime", lambda: FOR_A_CORE_RUNTIME, PLAN_FORMAT_VERSION),
    Case("11-command-and-args", _made, PLAN_FORMAT_VERSION),
    Case("10-made-for-a-core-runtime-as-10-wrote-it", lambda: FOR_A_CORE_RUNTIME, "10"),
    Case(
        "12-a-newer-podsync",
        _made,
        "12",
        refused="this podsync reads plan format 11, got '12'",
    ),
    Case(
        "4-an-older-podsync",
        _made,
        "4",
        refused="plan format 4 was written by an older podsync",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_plan_formats(case: Case) -> None:
    """A plan saved by this podsync names format 11; a saved plan of each format is read
    back, or refused by its version with what to do."""
    made = case.plan()
    data = json.loads(plan_to_json(made))
    assert "11" == data["format_version"]
    if case.version != PLAN_FORMAT_VERSION:
        context = _pod_context(data.get("options"))
        data["pods"] = [expand_pod(pod, context) for pod in data.get("pods", [])]
    data["format_version"] = case.version
    case.edit(data)

    if case.refused:
        with pytest.raises(ConfigError) as caught:
            plan_from_json(json.dumps(data), source="saved.json")
        assert case.refused in str(caught.value)
        return
    read = plan_from_json(json.dumps(data), source="saved.json")
    assert attrs.evolve(case.expect(made), format_version=case.version) == read


def test_a_saved_format_9_create_applies_with_its_command_and_args(tmp_path: Path) -> None:
    """A plan saved before format 10 (its creates' process as ``entrypoint`` and
    ``command``) applies: the container runs the pod's ``command`` with its ``args``,
    each where Kubernetes puts it, as a plan of this podsync would make it."""
    fake = FakeRuntime(images=["busybox:1.36", "registry.k8s.io/pause:3.10"], clock=lambda: NOW)
    options = PlanOptions(root_dir=str(tmp_path))
    made = plan([WEB], [], images=fake.images, now=NOW, options=options)
    data = json.loads(plan_to_json(made))
    data["pods"] = [expand_pod(pod, _pod_context(data.get("options"))) for pod in data["pods"]]
    _as_format_9(data)
    data["format_version"] = "9"

    result = apply(plan_from_json(json.dumps(data)), fake, clock=fake.clock)

    assert result.ok
    app = next(a.spec.name for a in made.actions if isinstance(a, Create) and a.container == "app")
    spec = fake.spec(app)
    assert spec is not None
    assert (("sh", "-c"), ("sleep 10",)) == (spec.command, spec.args)
