"""The runtime protocol's core and optional capabilities (issue 29): what a runtime must
have, what podsync discovers, and what it does on a runtime with the core alone
(``tests/support/core_runtime.py``): plain pods sync end to end; pods that need more
are rejected naming the capability; operating commands say what is missing.
"""

from __future__ import annotations

import pickle
import typing
from collections.abc import Callable
from pathlib import Path

import pytest

import podsync
import podsync.runtime
from podsync import (
    ClaimSource,
    Container,
    Handler,
    PlanOptions,
    Pod,
    Probe,
    Reason,
    Volume,
    VolumeMount,
    sync,
)
from podsync.exceptions import MissingCapability
from podsync.runtime import (
    Capability,
    EventRuntime,
    ExecRuntime,
    FileRuntime,
    FullRuntime,
    LogRuntime,
    NodeRuntime,
    Runtime,
    VolumeRuntime,
    capabilities,
    require,
)
from podsync.testing import FakeClock, FakeRuntime
from tests.support.core_runtime import CoreRuntime
from tests.unit.loop.test_reconciler import wait_for

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"
PROTOCOLS = (Runtime, VolumeRuntime, FileRuntime, ExecRuntime, LogRuntime, EventRuntime)
PROTOCOLS += (NodeRuntime, FullRuntime)


def fake() -> FakeRuntime:
    return FakeRuntime(images=("busybox", PAUSE), clock=FakeClock(NOW, step=0.001))


def web(*containers: Container, **kwargs: object) -> Pod:
    return Pod("web", containers or (Container("app", "busybox"),), uid="web-1", **kwargs)  # type: ignore[arg-type]


def run(pods: list[Pod], runtime: object, root: Path) -> podsync.SyncResult:
    return sync(
        pods,
        runtime,  # type: ignore[arg-type]
        options=PlanOptions(root_dir=str(root), network_mode="none", scope=podsync.NODE_SCOPE),
        now=NOW,
        clock=lambda: NOW,
    )


# --- the protocols ---------------------------------------------------------------------


def test_a_class_with_the_core_methods_is_a_runtime_and_nothing_more() -> None:
    core = CoreRuntime(fake())

    assert isinstance(core, Runtime)
    assert frozenset() == capabilities(core)
    assert not isinstance(core, VolumeRuntime | ExecRuntime | FullRuntime)
    assert not isinstance(object(), Runtime)


def test_the_shipped_runtimes_have_every_capability() -> None:
    from podsync.docker import DockerRuntime

    docker = DockerRuntime(host="unix:///podsync-test-no-engine.sock")  # never connects

    assert frozenset(Capability) == capabilities(fake()) == capabilities(docker)
    assert isinstance(fake(), FullRuntime)
    assert isinstance(docker, FullRuntime)


def test_the_core_and_the_capabilities_split_the_methods() -> None:
    """Every method is in exactly one protocol; the core is the nine every engine has;
    ``FullRuntime`` is all of them."""

    def methods(protocol: type) -> set[str]:
        return {n for n in vars(protocol) if not n.startswith("_")}

    parts = [methods(p) for p in PROTOCOLS[:-1]]
    every = set().union(*parts)
    core = {"list_containers", "list_images", "pull_image", "create_container"}
    core |= {"start_container", "stop_container", "remove_container", "remove_image", "close"}

    assert core == parts[0]
    assert sum(map(len, parts)) == len(every)
    assert every == {n for n in dir(FullRuntime) if not n.startswith("_")}
    assert set(Capability) == set(podsync.runtime._protocol.CAPABILITY_PROTOCOLS)


def _podsync_types(hint: object) -> set[type]:
    """The podsync classes a type hint names, inside unions and generics too."""
    found: set[type] = set()
    module = getattr(hint, "__module__", "")
    if isinstance(hint, type) and module.startswith("podsync"):
        found.add(hint)
    for argument in typing.get_args(hint):
        found |= _podsync_types(argument)
    origin = typing.get_origin(hint)
    if origin is not None:
        found |= _podsync_types(origin)
    return found


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p.__name__)
def test_every_type_in_a_signature_is_public_on_podsync_runtime(protocol: type) -> None:
    """What a runtime author implements names nothing private: every type a method takes
    or returns is on ``podsync.runtime``'s face, the same object."""
    named: set[type] = set()
    for name in (n for n in vars(protocol) if not n.startswith("_")):
        hints = typing.get_type_hints(getattr(protocol, name), vars(podsync.runtime._protocol))
        for hint in hints.values():
            named |= _podsync_types(hint)

    private = {t.__qualname__ for t in named if getattr(podsync.runtime, t.__name__, None) is not t}
    assert set() == private
    if protocol in (Runtime, VolumeRuntime):
        assert named  # (the walk sees the types: CreateSpec, VolumeEntry...)


def test_require_names_the_capability_and_its_protocol() -> None:
    core = CoreRuntime(fake())

    with pytest.raises(MissingCapability) as caught:
        require(core, Capability.LOGS, "podsync logs")
    require(fake(), Capability.LOGS, "podsync logs")  # has it: nothing raised

    assert (
        "podsync logs: the runtime has no logs capability "
        "(a runtime has it with LogRuntime: container_logs)"
    ) == str(caught.value)
    again = pickle.loads(pickle.dumps(caught.value))
    assert (str(caught.value), "logs") == (str(again), again.capability)


# --- syncing on a core runtime --------------------------------------------------------


def test_a_plain_pod_syncs_end_to_end_on_a_core_runtime(tmp_path: Path) -> None:
    """Created and started with the core calls alone; the next sync does nothing; a
    pod no longer desired is stopped (its stop is not recorded: there are no volumes to
    record it in)."""
    inner = fake()
    core = CoreRuntime(inner)

    first = run([web()], core, tmp_path)
    steady = run([web()], core, tmp_path)
    inner.clear_calls()
    gone = run([], core, tmp_path)

    assert first.ok
    assert not first.plan.rejected
    assert {"net", "app"} == {c.labels["io.podsync.container.name"] for c in inner.containers}
    assert () == steady.plan.pods
    assert gone.ok
    assert [] == [c for c in inner.containers if c.running]
    assert {"list", "stop"} == set(inner.call_names())
    assert [] == inner.volumes


def test_the_plan_is_made_for_the_runtimes_capabilities(tmp_path: Path) -> None:
    """``sync`` keeps of ``PlanOptions.capabilities`` what the runtime has."""
    result = run([web()], CoreRuntime(fake()), tmp_path)
    full = run([web()], fake(), tmp_path)

    assert frozenset() == result.plan.options.capabilities
    assert frozenset(Capability) == full.plan.options.capabilities


EXEC_PROBE = Probe(Handler(exec_command=("cat", "/ready")))
CLAIM = Volume("data", claim=ClaimSource("db"))
DATA = (VolumeMount("data", "/data"),)
REJECTIONS = [
    (
        "exec probe",
        web(Container("app", "busybox", liveness_probe=EXEC_PROBE)),
        'exec (container "app": livenessProbe exec)',
    ),
    (
        "claim",
        web(Container("app", "busybox", volume_mounts=DATA), volumes=(CLAIM,)),
        'volumes (volume "data": persistentVolumeClaim)',
    ),
    (
        "emptyDir",
        web(Container("app", "busybox", volume_mounts=DATA), volumes=(Volume("data"),)),
        'volumes (volume "data": emptyDir)',
    ),
]


@pytest.mark.parametrize(
    ("pod", "needs"), [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS]
)
def test_a_pod_that_needs_more_is_rejected_on_a_core_runtime(
    tmp_path: Path, pod: Pod, needs: str
) -> None:
    inner = fake()

    result = run([pod], CoreRuntime(inner), tmp_path)

    assert [(Reason.MISSING_CAPABILITY, f"the runtime cannot run this pod: it has no {needs}")] == [
        (r.reason, r.message) for r in result.plan.rejected
    ]
    assert [] == inner.containers
    assert {"list", "list_images"} == set(inner.call_names())


def test_a_plan_for_a_full_runtime_fails_its_volume_actions_by_name(tmp_path: Path) -> None:
    """Applied to a core runtime, a plan made for a full one fails the action that needs
    volumes with a message naming the capability - never an AttributeError - and the
    rest of the pod is skipped (the app container that mounts the claim)."""
    pod = web(Container("app", "busybox", volume_mounts=DATA), volumes=(CLAIM,))
    made = podsync.plan(
        [pod], now=NOW, images=fake().images, options=PlanOptions(root_dir=str(tmp_path))
    )
    inner = fake()

    result = podsync.apply(made, CoreRuntime(inner), clock=lambda: NOW)  # type: ignore[arg-type]

    outcomes = [(type(r.action).__name__, r.status.value) for r in result.results]
    (failed,) = [r for r in result.results if r.status is podsync.ActionStatus.FAILED]
    assert isinstance(failed.action, podsync.CreateVolume)
    assert (
        f"create volume {failed.action.volume}: the runtime has no volumes capability "
        "(a runtime has it with VolumeRuntime: list_volumes, create_volume, remove_volume, "
        "write_volume, read_volume_file)"
    ) == failed.error
    assert ("Create", "skipped") in outcomes
    assert ["net"] == [c.labels["io.podsync.container.name"] for c in inner.containers]


# --- operating commands ----------------------------------------------------------------


@pytest.fixture
def cli_on_core(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> Callable[..., tuple[int, str]]:
    inner = fake()
    core = CoreRuntime(inner)
    clock = FakeClock(NOW, step=0.001)
    pods = tmp_path / "web.yaml"
    pods.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
        "spec:\n  containers:\n  - {name: app, image: busybox}\n"
    )

    def cli(*argv: str) -> tuple[int, str]:
        argv = tuple(a.replace("ROOT", root).replace("PODS", str(pods)) for a in argv)
        code = podsync.cli.main(list(argv), runtime_factory=lambda host: core, clock=clock)  # type: ignore[arg-type,return-value]
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return code, captured.err + captured.out

    root = str(tmp_path / "root")
    code, err = cli("apply", "--root-dir", root, "--network-image", PAUSE, str(pods))
    assert 0 == code, err
    return cli


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("logs", "web"), "podsync logs: the runtime has no logs capability"),
        (("exec", "web", "--", "true"), "podsync exec: the runtime has no exec capability"),
        (("events", "--since", "1m"), "pod events: the runtime has no events capability"),
    ],
    ids=["logs", "exec", "events"],
)
def test_an_operating_command_names_the_missing_capability(
    cli_on_core: Callable[..., tuple[int, str]], argv: tuple[str, ...], said: str
) -> None:
    code, err = cli_on_core(*argv)

    assert 1 == code
    assert said in err


def test_status_needs_no_capability(cli_on_core: Callable[..., tuple[int, str]]) -> None:
    """``podsync status`` reads the container list: it works on the core alone (a
    termination message, which needs files or logs, is then empty)."""
    code, said = cli_on_core("status", "--root-dir", "ROOT", "PODS")

    assert 0 == code, said
    assert ["default/web", "1/1", "Running"] == said.splitlines()[1].split()[:3]


def test_the_loop_on_a_core_runtime_syncs_without_events_and_says_so_once(
    tmp_path: Path,
) -> None:
    """``podsync run``'s loop follows no events on a runtime without them: one notice
    says why, and the pods run all the same."""
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
        "spec:\n  containers:\n  - {name: app, image: busybox}\n"
    )
    inner = fake()
    notices: list[podsync.LoopNotice] = []
    options = PlanOptions(root_dir=str(tmp_path / "root"), network_mode="none")
    reconciler = podsync.Reconciler(
        [str(pods)],
        CoreRuntime(inner),  # type: ignore[arg-type]
        options,
        on_notice=notices.append,
        clock=FakeClock(NOW),
    )

    with reconciler:
        assert wait_for(lambda: len([c for c in inner.containers if c.running]) == 2)
        assert wait_for(lambda: any(n.kind == "events-error" for n in notices))

    (said,) = [n.message for n in notices if n.kind == "events-error"]
    assert (
        "following engine events: the runtime has no events capability (a runtime has it "
        "with EventRuntime: engine_events): syncing on the period alone"
    ) == said


def test_a_full_plans_termination_file_fails_its_create_by_name(tmp_path: Path) -> None:
    """A plan made for a full runtime binds a termination-message file into each app
    container; on a core runtime that create fails, naming the capability, and nothing
    of the container is made."""
    options = PlanOptions(root_dir=str(tmp_path), network_mode="none")
    made = podsync.plan([web()], now=NOW, images=fake().images, options=options)
    inner = fake()

    result = podsync.apply(made, CoreRuntime(inner), clock=lambda: NOW)  # type: ignore[arg-type]

    (failed,) = [r for r in result.results if r.status is podsync.ActionStatus.FAILED]
    assert isinstance(failed.action, podsync.Create)
    assert "app" == failed.action.container
    assert failed.error.startswith(f"write the files {failed.action.spec.name} binds: ")
    assert "the runtime has no volumes capability" in failed.error
    assert ["net"] == [c.labels["io.podsync.container.name"] for c in inner.containers]
