"""Resources and namespaces carried to the engine (issue 27, kubelet-modern.md §6): the
CPU shares of a container without a CPU request (``MilliCPUToShares``), no swap beyond a
memory limit (the kubelet's NoSwap), the OOM score of the pod's QoS class
(``GetContainerOOMScoreAdjust``, pkg/kubelet/qos/policy.go) and the pod's IPC namespace,
held by the network container and joined by the others (the CRI's pod-level IPC).

The table is in the manner of the kubelet's ``TestComputePodActions``: one row per case,
a pod file as people write it, the host's memory, and what Docker is asked for, per
container. Engine tests that read these settings back from Docker are in
``tests/engine/test_engine_settings.py``.
"""

from __future__ import annotations

import attrs
import pytest

from podsync import (
    Container,
    Plan,
    PlanOptions,
    Pod,
    parse_pods,
    plan,
    plan_from_json,
    plan_to_json,
)
from podsync.actions._actions import PLAN_FORMAT_VERSION, Create, CreateSpec
from podsync.runtime import ContainerSecurity
from podsync.runtime.docker._api import docker_create_args
from podsync.spec._labels import LABEL_POD_IPC
from podsync.spec._qos import QOSClass, oom_score_adj, qos_class
from tests.support.engine_model import EngineModel
from tests.unit.planner.test_plan_security import images, pod

NOW = 1_000_000.0
MI = 2**20
GI = 2**30


def plan_of(text: str, observed=(), **options) -> Plan:
    return plan(
        parse_pods(text),
        observed,
        now=NOW,
        images=images(busybox=""),
        options=PlanOptions(**options),
    )


def _mountpoints(spec: CreateSpec) -> dict[str, str]:
    """Where an engine might keep the volumes of ``spec``'s file mounts (every container
    binds its termination-message file from its pod's state volume)."""
    return {m.volume: f"/var/lib/docker/volumes/{m.volume}/_data" for m in spec.file_mounts}


def engine_settings(*plans: Plan) -> dict[str, tuple[object, ...]]:
    """What Docker gets for each container ``plans`` create: (CpuShares, Memory,
    MemorySwap, OomScoreAdj, IpcMode), the network container's name read as ``net``."""
    made = {a.container: a.spec for p in plans for a in p.actions if isinstance(a, Create)}
    net = made["net"].name if "net" in made else None
    settings = {}
    for name, spec in made.items():
        host = docker_create_args(spec, mountpoints=_mountpoints(spec)).host_config
        ipc = host["ipc_mode"]
        if net is not None and ipc == f"container:{net}":
            ipc = "container:net"
        settings[name] = (
            host["cpu_shares"],
            host["mem_limit"],
            host["memswap_limit"],
            host["oom_score_adj"],
            ipc,
        )
    return settings


def containers(*blocks: str) -> str:
    """A pod file with the container ``blocks`` (YAML list items, each starting with
    ``- name: ...``) under ``containers``, and the init containers after a ``---init``
    marker under ``initContainers``."""
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
    apps = [b for b in blocks if not b.startswith("init:")]
    inits = [b.removeprefix("init:") for b in blocks if b.startswith("init:")]
    for key, items in (("initContainers", inits), ("containers", apps)):
        if items:
            text += f"  {key}:\n"
            text += "".join(f"  {line}\n" for b in items for line in b.splitlines())
    return text


def app(name: str = "app", resources: str = "", image: str = "busybox") -> str:
    # IfNotPresent: the engine model has the image, and no registry is asked for it.
    text = f"- name: {name}\n  image: {image}\n  imagePullPolicy: IfNotPresent\n"
    return text + (f"  resources: {resources}\n" if resources else "")


# The network container of every pod that does not use the host's IPC namespace: the
# smallest CPU weight, no limits, PodInfraOOMAdj, and the pod's IPC namespace to share.
NET = (2, None, None, -998, "shareable")


@attrs.frozen
class Case:
    id: str
    pod: str
    expected: dict[str, tuple[object, ...]]
    memory_capacity: int = 4 * GI


CASES = [
    Case(
        "best-effort-gets-2-shares-and-oom-1000",
        containers(app()),
        {"net": NET, "app": (2, None, None, 1000, "container:net")},
    ),
    Case(
        "cpu-request-only-is-burstable",
        containers(app(resources="{requests: {cpu: 250m}}")),
        # No memory request: 1000 - 0, lowered to 999 (safer than BestEffort).
        {"net": NET, "app": (256, None, None, 999, "container:net")},
    ),
    Case(
        "limits-only-is-guaranteed",
        # The API server copies the limits into the requests.
        containers(app(resources="{limits: {cpu: 500m, memory: 128Mi}}")),
        {"net": NET, "app": (512, 128 * MI, 128 * MI, -997, "container:net")},
    ),
    Case(
        "requests-equal-limits-is-guaranteed",
        containers(
            app(resources="{requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 1, memory: 1Gi}}")
        ),
        {"net": NET, "app": (1024, GI, GI, -997, "container:net")},
    ),
    Case(
        "memory-request-a-quarter-of-the-host",
        containers(app(resources="{requests: {memory: 1Gi}, limits: {memory: 2Gi}}")),
        # 1000 - 1000 * 1Gi / 4Gi; the memory limit caps the swap too.
        {"net": NET, "app": (2, 2 * GI, 2 * GI, 750, "container:net")},
    ),
    Case(
        "memory-request-of-the-whole-host-is-raised-to-3",
        containers(app(resources="{requests: {memory: 4Gi}}")),
        {"net": NET, "app": (2, None, None, 3, "container:net")},
    ),
    Case(
        "memory-request-rounds-the-score-down",
        # 1000 - 1000 * 100Mi / 4Gi = 1000 - 24.4: 976 (Go's integer division).
        containers(app(resources="{requests: {memory: 100Mi}}")),
        {"net": NET, "app": (2, None, None, 976, "container:net")},
    ),
    Case(
        "unknown-host-memory-gives-burstable-999",
        containers(app(resources="{requests: {memory: 1Gi}}")),
        {"net": NET, "app": (2, None, None, 999, "container:net")},
        memory_capacity=0,
    ),
    Case(
        "one-best-effort-container-makes-the-pod-burstable",
        containers(app("db", "{limits: {cpu: 1, memory: 1Gi}}"), app("debug")),
        {
            "net": NET,
            "db": (1024, GI, GI, 750, "container:net"),
            "debug": (2, None, None, 999, "container:net"),
        },
    ),
    Case(
        "cpu-limit-without-memory-limit-is-burstable",
        containers(app(resources="{limits: {cpu: 1}, requests: {memory: 512Mi}}")),
        {"net": NET, "app": (1024, None, None, 875, "container:net")},
    ),
    Case(
        "init-container-without-limits-makes-the-pod-burstable",
        containers("init:" + app("setup"), app(resources="{limits: {cpu: 1, memory: 2Gi}}")),
        {
            "net": NET,
            "setup": (2, None, None, 999, "container:net"),
            "app": (1024, 2 * GI, 2 * GI, 500, "container:net"),
        },
    ),
    Case(
        "guaranteed-init-container-keeps-the-pod-guaranteed",
        containers(
            "init:" + app("setup", "{limits: {cpu: 100m, memory: 64Mi}}"),
            app(resources="{limits: {cpu: 1, memory: 2Gi}}"),
        ),
        {
            "net": NET,
            "setup": (102, 64 * MI, 64 * MI, -997, "container:net"),
            "app": (1024, 2 * GI, 2 * GI, -997, "container:net"),
        },
    ),
    Case(
        "sidecar-goes-no-sooner-than-the-app-it-serves",
        containers(
            "init:" + app("proxy", "{requests: {memory: 64Mi}}") + "  restartPolicy: Always\n",
            app(resources="{requests: {memory: 2Gi}}"),
        ),
        # The sidecar's own value would be 985; the app's, 500, is lower.
        {
            "net": NET,
            "proxy": (2, None, None, 500, "container:net"),
            "app": (2, None, None, 500, "container:net"),
        },
    ),
    Case(
        "sidecar-with-a-larger-request-keeps-its-own",
        containers(
            "init:" + app("proxy", "{requests: {memory: 3Gi}}") + "  restartPolicy: Always\n",
            app(resources="{requests: {memory: 1Gi}}"),
        ),
        {
            "net": NET,
            "proxy": (2, None, None, 250, "container:net"),
            "app": (2, None, None, 750, "container:net"),
        },
    ),
    Case(
        "plain-init-container-gets-its-own-score",
        containers(
            "init:" + app("setup", "{requests: {memory: 64Mi}}"),
            app(resources="{requests: {memory: 2Gi}}"),
        ),
        {
            "net": NET,
            "setup": (2, None, None, 985, "container:net"),
            "app": (2, None, None, 500, "container:net"),
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_engine_settings(case: Case) -> None:
    """Each container of a new pod gets the CPU shares, memory and swap limits, OOM score
    and IPC mode the modern kubelet would give it."""
    plans = until_all_run(case.pod, memory_capacity=case.memory_capacity)

    assert case.expected == engine_settings(*plans)


def until_all_run(text: str, **options) -> list[Plan]:
    """The plans that start ``text``'s pod on an engine model, one sync after another:
    each plain init container exits 0 once started, so the next one (and then the app
    containers) is created by the next plan."""
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})
    (parsed,) = parse_pods(text)
    plain_inits = {c.name for c in parsed.init_containers if c.restart_policy is None}
    plans = []
    for _ in range(len(parsed.init_containers) + 2):
        p = plan_of(text, model.observed, **options)
        if not p.has_changes:
            break
        plans.append(p)
        model.apply(p, NOW)
        for name in plain_inits:
            exited(model, name, code=0)
    return plans


def test_host_ipc_pod_keeps_the_hosts_ipc_namespace() -> None:
    """hostIPC: every container of the pod is in the host's IPC namespace; the network
    container has none to share, and no label says it has."""
    p = plan_of(pod(spec="hostIPC: true"), allow_host_namespaces=True)

    settings = engine_settings(p)
    assert "host" == settings["net"][4] == settings["app"][4]
    net = next(a.spec for a in p.actions if isinstance(a, Create) and a.container == "net")
    assert LABEL_POD_IPC not in net.labels


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ("", QOSClass.BEST_EFFORT),
        ("{requests: {ephemeral-storage: 1Gi}}", QOSClass.BEST_EFFORT),
        ("{requests: {cpu: 100m}}", QOSClass.BURSTABLE),
        ("{limits: {memory: 1Gi}}", QOSClass.BURSTABLE),
        ("{limits: {cpu: 1, memory: 1Gi}}", QOSClass.GUARANTEED),
        ("{requests: {cpu: 500m}, limits: {cpu: 1, memory: 1Gi}}", QOSClass.BURSTABLE),
        ("{requests: {memory: 512Mi}, limits: {cpu: 1, memory: 1Gi}}", QOSClass.BURSTABLE),
    ],
    ids=[
        "nothing",
        "ephemeral-storage-does-not-count",
        "cpu-request",
        "memory-limit-alone",
        "both-limits",
        "cpu-request-under-limit",
        "memory-request-under-limit",
    ],
)
def test_qos_class(resources: str, expected: QOSClass) -> None:
    """GetPodQOS: only CPU and memory count; Guaranteed needs both limits, with requests
    equal to them (a missing request is its limit)."""
    (parsed,) = parse_pods(containers(app(resources=resources)))

    assert expected == qos_class(parsed)


# --- pods that run already: what an upgrade does --------------------------------------


def running(text: str, *, drop_ipc_label: bool = False, **options) -> EngineModel:
    """An engine on which ``text``'s pod runs, as this podsync made it; with
    ``drop_ipc_label``, its network container as podsync 0.2 made it (no IPC label:
    a private IPC namespace that nobody can join)."""
    model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})
    model.apply(plan_of(text, **options), NOW - 100)
    if drop_ipc_label:
        for cid, c in list(model.containers.items()):
            if LABEL_POD_IPC in c.labels:
                labels = {k: v for k, v in c.labels.items() if k != LABEL_POD_IPC}
                model.containers[cid] = attrs.evolve(c, labels=labels)
                model.shareable.discard(cid)
    return model


def exited(model: EngineModel, container: str, code: int = 1) -> None:
    """Every running instance of ``container`` in ``model`` exits with ``code``."""
    for cid, c in list(model.containers.items()):
        if f"_{container}." in c.name and c.running:
            model.containers[cid] = attrs.evolve(
                c, running=False, exit_code=code, finished_at=NOW - 50
            )


@attrs.frozen
class RunningCase:
    id: str
    old_network: bool
    exits: str
    expected_kinds: list[tuple[str, str]]
    expected_ipc: str | None


RUNNING_CASES = [
    RunningCase("same-podsync-nothing-to-do", False, "", [], None),
    # An upgrade replaces nothing: the engine settings are not part of the spec hash.
    RunningCase("network-of-podsync-0.2-is-kept", True, "", [], None),
    # A restart in a pod of this podsync joins the pod's IPC namespace ...
    RunningCase("restart-joins-the-pods-ipc", False, "app", [("Create", "app")], "container:net"),
    # ... and one in a pod made by podsync 0.2 keeps a private one: Docker lets nobody
    # join that network container's IPC namespace.
    RunningCase(
        "restart-beside-an-old-network-stays-private", True, "app", [("Create", "app")], None
    ),
    # A rebuilt pod gets a shareable network container and every container joins it.
    RunningCase(
        "rebuilt-old-pod-shares-ipc",
        True,
        "net",
        [("Kill", "app"), ("Create", "net"), ("Create", "app")],
        "container:net",
    ),
]


@pytest.mark.parametrize("case", RUNNING_CASES, ids=[c.id for c in RUNNING_CASES])
def test_running_pods(case: RunningCase) -> None:
    """What a plan does to a pod that runs already: kept as it is after an upgrade, the
    IPC namespace joined only where the network container shares one."""
    text = containers(app(resources="{requests: {memory: 1Gi}}"))
    model = running(text, drop_ipc_label=case.old_network, memory_capacity=4 * GI)
    if case.exits:
        exited(model, case.exits)

    p = plan_of(text, model.observed, memory_capacity=4 * GI)

    kinds = [(type(a).__name__, getattr(a, "container", "")) for a in p.actions]
    assert case.expected_kinds == kinds
    made = {a.container: a.spec for a in p.actions if isinstance(a, Create)}
    if "app" in made:
        net = made["net"].name if "net" in made else _running_net(model)
        spec = made["app"]
        ipc = docker_create_args(spec, mountpoints=_mountpoints(spec)).host_config["ipc_mode"]
        assert case.expected_ipc == (ipc if ipc != f"container:{net}" else "container:net")
    # The engine model accepts what the plan asks for: it refuses to join an IPC
    # namespace that does not run or is not shareable.
    model.apply(p, NOW)


def _running_net(model: EngineModel) -> str:
    return next(c.name for c in model.observed if "_net." in c.name and c.running)


def test_a_plan_with_engine_settings_round_trips_through_json() -> None:
    """Plan format 9 carries the swap limit, the OOM score, the IPC fields and the
    host's memory option; they read back equal."""
    text = containers(app(resources="{requests: {memory: 1Gi}, limits: {memory: 2Gi}}"))
    p = plan_of(text, memory_capacity=4 * GI)

    again = plan_from_json(plan_to_json(p))

    assert p == again
    assert PLAN_FORMAT_VERSION == again.format_version
    assert 4 * GI == again.options.memory_capacity


@pytest.mark.parametrize(
    "fields",
    [{"ipc_shareable": True}, {"security": ContainerSecurity(host_ipc=True)}],
    ids=["shareable", "host-ipc"],
)
def test_a_container_that_joins_an_ipc_namespace_has_none_of_its_own(fields) -> None:
    """``join_ipc`` excludes an IPC namespace of the container's own to share, and the
    host's."""
    with pytest.raises(ValueError, match="joins 'net'"):
        CreateSpec(name="app", image="busybox", join_ipc="net", **fields)


@pytest.mark.parametrize(
    ("cpu", "memory", "expected", "score"),
    [
        (0, 0, QOSClass.BEST_EFFORT, 1000),
        (100, 0, QOSClass.BURSTABLE, 999),
        (0, 64 * MI, QOSClass.BURSTABLE, 985),
        (100, 64 * MI, QOSClass.GUARANTEED, -997),
    ],
    ids=["nothing", "cpu-alone", "memory-alone", "both"],
)
def test_a_2014_manifests_cpu_and_memory_are_limits(cpu, memory, expected, score) -> None:
    """A v1beta1 container's ``cpu`` and ``memory`` were limits (its requests equal to
    them): both make a Guaranteed pod, one a Burstable one."""
    legacy = Pod("web", (Container("app", "busybox", cpu=cpu, memory=memory),))

    assert (expected, score) == (
        qos_class(legacy),
        oom_score_adj(legacy, legacy.containers[0], 4 * GI),
    )
