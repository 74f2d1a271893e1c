"""Re-planning the same pods (issue 16): a loop plans the same ``Pod`` objects every few
seconds (``PodFileCache`` gives back the very objects of unchanged files), and the
canonical spec text of each app container was a third of a steady plan. A ``Pod``
remembers the texts planning computed for its running containers; the plan is the same
either way, and a changed pod (a new object) is computed afresh.
"""

from __future__ import annotations

import attrs
import pytest

from podsync import Container, EnvVar, Pod
from podsync.actions._actions import Kill
from podsync.actions._json import plan_to_json
from podsync.actions._options import PlanOptions
from podsync.planner import _spec_change as planner
from podsync.planner._plan import plan
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
IMAGES = {"busybox:latest", "registry.k8s.io/pause:3.10"}


def pods() -> list[Pod]:
    return [
        Pod(
            f"web-{i}",
            (
                Container("app", "busybox", env=(EnvVar("N", str(i)),)),
                Container("side", "busybox", args=("sleep", "1d")),
            ),
            namespace="default",
            source="file",
            labels={"app": "web"},
        )
        for i in range(3)
    ]


@pytest.fixture
def texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The containers whose canonical spec text the planner computed, in order."""
    made: list[str] = []
    compute = planner.canonical_spec_text

    def counting(c: Container, pod: Pod | None = None, *, root_dir: str) -> str:
        made.append(f"{pod.name if pod else ''}/{c.name}")
        return compute(c, pod, root_dir=root_dir)

    monkeypatch.setattr(planner, "canonical_spec_text", counting)
    return made


def running(desired: list[Pod]) -> EngineModel:
    model = EngineModel(image_tags=set(IMAGES))
    model.apply(plan(desired, [], now=NOW, images=model.images), NOW)
    return model


def test_the_same_pods_planned_again_reuse_their_spec_texts(texts: list[str]) -> None:
    desired = pods()
    model = running(desired)
    texts.clear()

    first = plan(desired, model.observed, now=NOW + 60, images=model.images)
    second = plan(desired, model.observed, now=NOW + 120, images=model.images)

    assert not first.has_changes
    assert not second.has_changes
    assert len(texts) == 6  # the first steady plan: each app container once
    assert plan_to_json(second) == plan_to_json(
        plan(pods(), model.observed, now=NOW + 120, images=model.images)
    )
    assert len(texts) == 12  # new Pod objects (equal ones): computed again


def test_a_changed_pod_is_computed_afresh_and_replaced(texts: list[str]) -> None:
    desired = pods()
    model = running(desired)
    plan(desired, model.observed, now=NOW + 60, images=model.images)
    changed = [
        attrs.evolve(
            p, containers=(attrs.evolve(p.containers[0], image="busybox:2"), p.containers[1])
        )
        if p.name == "web-1"
        else p
        for p in desired
    ]
    texts.clear()

    after = plan(changed, model.observed, now=NOW + 120, images=model.images)

    assert texts == ["web-1/app", "web-1/side"]  # a new Pod object
    assert [(a.pod, a.container, a.reason.value) for a in after.actions if isinstance(a, Kill)] == [
        ("default/web-1", "app", "spec-changed")
    ]


def test_another_root_directory_is_another_text(texts: list[str]) -> None:
    desired = pods()
    model = running(desired)
    plan(desired, model.observed, now=NOW + 60, images=model.images)
    texts.clear()

    plan(
        desired,
        model.observed,
        now=NOW + 120,
        images=model.images,
        options=PlanOptions(root_dir="/srv/podsync"),
    )

    assert len(texts) == 6


def test_the_remembered_texts_are_no_part_of_the_pod() -> None:
    desired = pods()
    model = running(desired)
    plan(desired, model.observed, now=NOW + 60, images=model.images)

    assert desired == pods()
    assert hash(desired[0]) == hash(pods()[0])
    assert repr(desired[0]) == repr(pods()[0])


def test_the_network_containers_text_is_remembered_too(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    compute = planner.network_spec_text

    def counting(pod: Pod, image: str, **inputs: object) -> str:
        made.append(pod.name)
        return compute(pod, image, **inputs)  # type: ignore[arg-type]

    monkeypatch.setattr(planner, "network_spec_text", counting)
    desired = pods()
    model = running(desired)
    made.clear()

    plan(desired, model.observed, now=NOW + 60, images=model.images)
    plan(desired, model.observed, now=NOW + 120, images=model.images)
    dns = PlanOptions(cluster_dns="10.0.0.10", cluster_domain="cluster.local")
    again = plan(desired, model.observed, now=NOW + 180, images=model.images, options=dns)

    assert made == ["web-0", "web-1", "web-2"] * 2  # once, and again for other options
    assert "network-changed" in {a.reason.value for a in again.actions if isinstance(a, Kill)}


def test_what_a_pod_remembers_is_strings_and_numbers() -> None:
    """40,000 remembered texts for 10,000 pods must not be 40,000 more objects for the
    garbage collector to walk on every pass: keys and values hold no container."""
    desired = pods()
    model = running(desired)
    plan(desired, model.observed, now=NOW + 60, images=model.images)

    remembered = [entry for p in desired for entry in p._planned or ()]

    assert len(remembered) == 3 * 3  # two app containers and the network's, per pod
    assert all(
        isinstance(part, (str, int)) for key, *value in remembered for part in (*key, *value)
    )


def test_a_pod_planned_once_remembers_nothing(texts: list[str]) -> None:
    """A one-shot ``podsync plan`` plans each pod once: keeping its texts would cost
    that plan more than it saves. Only a Pod object planned again remembers them."""
    desired = pods()
    model = running(pods())  # other, equal Pod objects made them run
    texts.clear()

    plan(desired, model.observed, now=NOW + 60, images=model.images)
    kept_after_one = [len(p._planned or ()) for p in desired]
    plan(desired, model.observed, now=NOW + 120, images=model.images)
    plan(desired, model.observed, now=NOW + 180, images=model.images)

    assert kept_after_one == [0, 0, 0]
    assert len(texts) == 6 + 6  # the first plan and the second; the third remembers
    assert [len(p._planned or ()) for p in desired] == [3, 3, 3]


def test_a_pod_planned_before_is_not_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks that depend on the pod alone (grace period, contents, mounts, images,
    memory, labels, security settings) ran when this very, immutable Pod object was
    first admitted: a loop's later plans of it skip them. A new object, even an equal
    one, is checked."""
    from podsync.planner import _admission

    checked: list[str] = []
    check = _admission._grace_problem

    def counting(pod: Pod) -> str | None:
        checked.append(pod.name)
        return check(pod)

    monkeypatch.setattr(_admission, "_grace_problem", counting)
    desired = pods()
    model = running(desired)
    checked.clear()

    first = plan(desired, model.observed, now=NOW + 60, images=model.images)
    second = plan(desired, model.observed, now=NOW + 120, images=model.images)
    fresh = plan(pods(), model.observed, now=NOW + 120, images=model.images)

    assert not first.has_changes
    assert plan_to_json(second) == plan_to_json(fresh)
    # ``running`` planned ``desired`` first (checked then): only the new objects now.
    assert ["web-0", "web-1", "web-2"] == checked


def test_a_pod_rejected_once_is_rejected_again() -> None:
    """A rejected pod is never planned: each plan checks it again, and rejects it."""
    bad = Pod("web", (Container("app", "busybox", args=("a\0b",)),), namespace="default")

    first = plan([bad], [], now=NOW)
    second = plan([bad], [], now=NOW + 60)

    assert [r.reason for r in first.rejected] == [r.reason for r in second.rejected]
    assert 1 == len(second.rejected)
