"""A container whose env reads a ConfigMap key the sources do not hold (issue 27): the
kubelet's ``CreateContainerConfigError``, in the manner of ``TestComputePodActions``.

``generateContainerConfig`` fails the start of that container only, at each sync, and
the kubelet never touches the env of a container that runs
(``makeEnvironmentVariables``, kubelet-modern.md §8). So the planner creates no
instance of a container with a ``config_error``, keeps one that runs (whatever else
changed in its spec), and plans the pod's other containers as ever.
"""

from __future__ import annotations

import pytest

from podsync import parse_pods, plan, pod_status
from podsync.actions._actions import Create, Kill, Plan, Reason, Wait
from podsync.model._pod import Pod
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
HELD = "couldn't find key 'mode' in ConfigMap default/settings (not optional)"

CONFIG = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"
WITHOUT_THE_KEY = CONFIG.replace("mode: fast", "speed: fast")


def web(
    *, image: str = "busybox", sidecar: bool = False, init: bool = False, policy: str = "Always"
) -> str:
    """The pod as people write it: app (or the init container setup) reads key ``mode``
    of ConfigMap settings."""
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web}}\nspec:\n  restartPolicy: {policy}\n"
    if init:
        text += (
            "  initContainers:\n  - name: setup\n    image: busybox\n    env:\n"
            "    - name: MODE\n      valueFrom: {configMapKeyRef: {name: settings, key: mode}}\n"
        )
    text += f"  containers:\n  - name: app\n    image: {image}\n"
    if not init:  # with an init container, it is the one that reads the key
        text += (
            "    env:\n"
            "    - name: MODE\n      valueFrom: {configMapKeyRef: {name: settings, key: mode}}\n"
        )
    if sidecar:
        text += "  - name: logger\n    image: busybox\n"
    return text


def pods(config: str, pod: str) -> list[Pod]:
    return list(parse_pods(config + "---\n" + pod, source="file"))


def plan_on(model: EngineModel, desired: list[Pod]) -> Plan:
    return plan(desired, model.observed, images=model.images, now=NOW, pod_dirs=model.pod_dirs)


def engine(state: str, pod: str) -> EngineModel:
    """The engine as a good version of ``pod`` (the key there) left it: ``none``, its
    containers ``running``, or its app container ``exited`` with code 1."""
    model = EngineModel(image_tags={"busybox:latest", "busybox:2", PAUSE})
    if state == "none":
        return model
    model.apply(plan_on(model, pods(CONFIG, pod)), NOW - 100)
    if state == "exited":
        app = next(c for c in model.observed if c.name.startswith("k8s_app."))
        model.exit(app.id, 1, NOW - 50)
    return model


def summary(p: Plan) -> list[tuple[str, str, str]]:
    """(action, container, reason) of each container action, in plan order."""
    return [
        (type(a).__name__, a.container, str(a.reason))
        for a in p.actions
        if isinstance(a, Create | Kill | Wait)
    ]


WAIT_APP = ("Wait", "app", str(Reason.CONFIG_MISSING))

# (id, the engine before, the pod file now (its key gone), the actions planned).
CASES = [
    ("new-pod-nothing-created", "none", web(), [WAIT_APP]),
    (
        "other-container-created",
        "none",
        web(sidecar=True),
        [("Create", "net", "network-missing"), WAIT_APP, ("Create", "logger", "missing")],
    ),
    ("running-container-kept", "running", web(), []),
    ("running-container-kept-through-a-spec-change", "running", web(image="busybox:2"), []),
    ("exited-container-not-restarted", "exited", web(), [WAIT_APP]),
    (
        "init-container-held-holds-the-app",
        "none",
        web(init=True),
        [("Wait", "setup", str(Reason.CONFIG_MISSING)), ("Wait", "app", str(Reason.INIT_PENDING))],
    ),
]


@pytest.mark.parametrize(
    ("state", "pod", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_container_whose_key_is_missing_is_not_created(
    state: str, pod: str, expected: list[tuple[str, str, str]]
) -> None:
    """The held container waits with reason ``config-missing``; the rest of the pod is
    planned as ever."""
    model = engine(state, pod)

    the_plan = plan_on(model, pods(WITHOUT_THE_KEY, pod))

    assert expected == summary(the_plan)
    held = [
        a for a in the_plan.actions if isinstance(a, Wait) and a.reason is Reason.CONFIG_MISSING
    ]
    assert all(a.message.endswith(HELD) for a in held)


def test_the_key_back_creates_the_container() -> None:
    """Once the sources hold the key, the container is created with it."""
    model = engine("none", web())
    model.apply(plan_on(model, pods(WITHOUT_THE_KEY, web())), NOW - 10)

    the_plan = plan_on(model, pods(CONFIG, web()))

    assert [("Create", "net", "network-missing"), ("Create", "app", "missing")] == summary(the_plan)


# (id, the engine before, the app's state, its reason, its message).
STATUS_CASES = [
    ("never-created", "none", "waiting", "CreateContainerConfigError", f"app: {HELD}"),
    (
        "exited-and-held",
        "exited",
        "waiting",
        "CreateContainerConfigError",
        f"app exited with code 1, cannot start again: {HELD}",
    ),
    ("running-kept", "running", "running", "", "app running"),
]


@pytest.mark.parametrize(
    ("state", "shown", "reason", "message"),
    [case[1:] for case in STATUS_CASES],
    ids=[case[0] for case in STATUS_CASES],
)
def test_the_held_container_shows_create_container_config_error(
    state: str, shown: str, reason: str, message: str
) -> None:
    """The kubelet's status: Waiting CreateContainerConfigError with the object and key
    (the ended run, if any, as its last state); a kept running container runs."""
    model = engine(state, web())
    (pod,) = pods(WITHOUT_THE_KEY, web())

    status = pod_status(pod, model.observed, plan=plan_on(model, [pod]))

    (app,) = status.containers
    assert (shown, reason, message) == (app.state.value, app.reason, app.message)
