"""Plan JSON format 11 (issue 33): realistic plans read back equal, in far less text;
what a pod plan leaves out is put back only where it was left out."""

from __future__ import annotations

import json

import attrs
import pytest

from benchmarks.bench_plan import NOW, OPTIONS, make_images, make_pod, observed_after
from podsync import plan_from_json, plan_to_json
from podsync.actions._actions import Create, Plan
from podsync.exceptions import ConfigError
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_JOINS, LABEL_SPEC, LABEL_SPEC_HASH

PODS = 40


def _fleet(**kwargs: object) -> Plan:
    """The plan of ``benchmarks.bench_plan``'s pods (env, named ports, a liveness probe,
    resources, emptyDir and hostPath volumes, preStop hooks), every image present."""
    pods = [make_pod(i) for i in range(PODS)]
    return plan(pods, [], now=NOW, images=make_images(), options=OPTIONS, **kwargs)  # type: ignore[arg-type]


def test_a_fleet_plan_reads_back_equal() -> None:
    made = _fleet()
    assert plan_from_json(plan_to_json(made)) == made


def test_a_plan_of_replacements_reads_back_equal() -> None:
    """Restarts and replacements (kills, attempts past 0, creates without their pod's
    network container's) read back equal too."""
    pods = [make_pod(i) for i in range(PODS)]
    observed = observed_after(plan(pods, [], now=NOW, images=make_images(), options=OPTIONS), NOW)
    changed = [attrs.evolve(p, containers=p.containers[:2]) for p in pods[:10]] + pods[10:]
    made = plan(changed, observed, now=NOW + 3600, images=make_images(), options=OPTIONS)
    assert made.has_changes
    assert plan_from_json(plan_to_json(made)) == made


def test_the_text_per_pod() -> None:
    """A pod of three containers takes at most 2 KB (12.3 KB in format 10: issue 33)."""
    size = len(plan_to_json(_fleet()).encode()) / PODS
    assert size <= 2_048


def _edited(made: Plan, **labels: str | None) -> Plan:
    """``made`` with its first app container's create labelled ``labels`` (None: the
    label taken away)."""
    pod = made.pods[0]
    n, create = next(
        (n, a) for n, a in enumerate(pod.actions) if isinstance(a, Create) and a.spec.join
    )
    new = {k: v for k, v in {**create.spec.labels, **labels}.items() if v is not None}
    action = attrs.evolve(create, spec=attrs.evolve(create.spec, labels=new))
    actions = (*pod.actions[:n], action, *pod.actions[n + 1 :])
    return attrs.evolve(made, pods=(attrs.evolve(pod, actions=actions), *made.pods[1:]))


@pytest.mark.parametrize(
    "labels",
    [
        {LABEL_SPEC_HASH: None},
        {LABEL_JOINS: None},
        {LABEL_JOINS: "someone-else"},
        {LABEL_SPEC: '{"name":"x","-":1}'},
        {LABEL_SPEC: "not json"},
        {LABEL_SPEC_HASH: "3:" + "0" * 64},
        {LABEL_SPEC: '{"name": "app"}'},
        {LABEL_SPEC: '{"cpu":250.0,"name":"web","privileged":0,"volume_mounts":[{"read_only":0}]}'},
        {LABEL_SPEC: '{"args":[1,true],"name":"app","ports":[{"host_port":false},3]}'},
    ],
    ids=[
        "no-hash",
        "no-joins",
        "other-joins",
        "dash-key",
        "not-json",
        "other-hash",
        "not-canonical",
        "numbers-for-booleans",
        "lists-of-other-values",
    ],
)
def test_labels_that_are_not_as_predicted_read_back(labels: dict[str, str | None]) -> None:
    made = _edited(_fleet(), **labels)
    assert plan_from_json(plan_to_json(made)) == made


def test_a_create_that_joins_no_one_in_a_pod_with_a_network_create_reads_back() -> None:
    made = _fleet()
    pod = made.pods[0]
    actions = tuple(
        attrs.evolve(a, spec=attrs.evolve(a.spec, join="", join_ipc=""))
        if isinstance(a, Create) and a.container == "app"
        else a
        for a in pod.actions
    )
    made = attrs.evolve(made, pods=(attrs.evolve(pod, actions=actions), *made.pods[1:]))
    text = plan_to_json(made)
    assert plan_from_json(text) == made
    assert '"join":""' in text


def test_the_spec_label_is_written_as_an_object() -> None:
    data = json.loads(plan_to_json(_fleet()))
    creates = [a for p in data["pods"] for a in p["actions"] if a["action"] == "create"]
    assert all(isinstance(a["spec"]["labels"][LABEL_SPEC], dict) for a in creates)


@pytest.mark.parametrize(
    "spec",
    [{"env": 5}, {"name": 7, "file_mounts": [{}]}, {"file_mounts": 3}],
    ids=["env", "name", "file-mounts"],
)
def test_a_format_11_plan_of_wrong_shapes_is_refused(spec: dict[str, object]) -> None:
    """What no podsync writes is refused as an invalid plan, whatever it breaks."""
    data = json.loads(plan_to_json(_fleet()))
    action = data["pods"][0]["actions"][1]
    action["spec"] = {**action["spec"], **spec}

    with pytest.raises(ConfigError, match="invalid plan"):
        plan_from_json(json.dumps(data))
