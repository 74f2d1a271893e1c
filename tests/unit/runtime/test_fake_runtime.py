"""podsync.testing.FakeRuntime: an in-memory engine with the seed's call vocabulary
(reference §1.10) and an engine's rules."""

from __future__ import annotations

from typing import Any

import pytest

from podsync import (
    EngineUnavailable,
    ObservedContainer,
    ObservedImage,
    ResourceList,
    RuntimeCallError,
)
from podsync.actions._actions import CreateSpec
from podsync.exceptions import NameConflict
from podsync.runtime._protocol import ExecResult, Runtime
from podsync.testing import CALL_NAMES, MUTATING_CALL_NAMES, Call, FakeClock, FakeRuntime


class Clock:
    """A clock that ticks one second per reading, from ``start``."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def fake(**kwargs: Any) -> FakeRuntime:
    kwargs.setdefault("images", ["busybox", "registry.k8s.io/pause:3.10"])
    kwargs.setdefault("clock", Clock())
    return FakeRuntime(**kwargs)


def running(rt: FakeRuntime, name: str, **spec: Any) -> str:
    cid = rt.create_container(CreateSpec(name=name, image=spec.pop("image", "busybox"), **spec))
    rt.start_container(cid)
    return cid


def test_satisfies_the_runtime_protocol():
    """FakeRuntime is a Runtime without inheriting from anything (checked by mypy too)."""
    rt: Runtime = FakeRuntime()

    assert [] == rt.list_containers()


def test_close_is_counted_and_the_fake_stays_usable():
    """close() is the protocol's; the fake counts it (``closes``) instead of recording a
    call, so that call lists stay what the engine saw, and it still works after."""
    rt = fake()

    rt.close()
    rt.close()
    cid = running(rt, "app")

    assert 2 == rt.closes
    assert ["create", "start"] == rt.call_names()
    assert rt.container(cid).running


def test_repr():
    """The repr counts containers and calls."""
    rt = fake()
    running(rt, "app")

    assert "<FakeRuntime with 1 container(s), 2 call(s)>" == repr(rt)


def test_create_start_stop_change_what_list_returns():
    """Create gives a deterministic id and a stopped container with the clock's time;
    start runs it; stop ends it with exit code 0 and a finish time."""
    rt = fake()

    cid = rt.create_container(CreateSpec(name="app", image="busybox", labels={"k": "v"}))
    created = rt.list_containers()
    rt.start_container(cid)
    started = rt.list_containers()
    rt.stop_container(cid, 10)
    stopped = rt.list_containers()

    assert "c0001" == cid
    assert [ObservedContainer("c0001", "app", "busybox", {"k": "v"}, 1001.0)] == created
    assert [True] == [c.running for c in started]
    assert [(False, 0, 1002.0)] == [(c.running, c.exit_code, c.finished_at) for c in stopped]
    assert ["create", "list", "start", "list", "stop", "list"] == rt.call_names()
    assert Call("stop", ("c0001", 10)) == rt.calls[4]


def test_default_clock_is_a_fake_clock_of_its_own():
    """Without a clock, FakeRuntime never reads the real one: its own FakeClock gives
    creation and exit times one second apart, from FakeClock.DEFAULT_START."""
    rt = FakeRuntime(images=["busybox"])
    other = FakeRuntime(images=["busybox"])

    cid = running(rt, "app")
    rt.stop_container(cid, 10)
    running(other, "app")

    (app,) = rt.list_containers()
    assert (FakeClock.DEFAULT_START, FakeClock.DEFAULT_START + 1) == (app.created, app.finished_at)
    assert [FakeClock.DEFAULT_START] == [c.created for c in other.list_containers()]


def test_fake_clock_moves_a_step_per_reading_and_when_advanced():
    """FakeClock returns its time, then moves ``step`` on; advance moves it at once
    (a sleep that takes no time); it never goes back."""
    counting, still = FakeClock(100.0), FakeClock(100.0, step=0)

    readings = [counting(), counting(), counting()]
    still.advance(2.5)

    assert [100.0, 101.0, 102.0] == readings
    assert [102.5, 102.5] == [still(), still()]
    assert "<FakeClock at 102.5, step 0>" == repr(still)
    with pytest.raises(ValueError, match="cannot go back in time"):
        still.advance(-1)
    with pytest.raises(ValueError, match="step must be 0 or more"):
        FakeClock(step=-1)


def test_list_is_newest_first():
    """Containers are listed newest first, as the Docker API lists them."""
    rt = fake()
    for name in ("ant", "bee", "cat"):
        running(rt, name)

    assert ["cat", "bee", "ant"] == [c.name for c in rt.list_containers()]


def test_stop_exit_code_is_configurable():
    """A process that has to be killed after the grace period exits 137."""
    rt = fake(stop_exit_code=137)
    cid = running(rt, "app")

    rt.stop_container(cid, 10)

    assert 137 == rt.container(cid).exit_code


@pytest.mark.parametrize(("on_term", "exit_code"), [(None, 137), (0, 0), (143, 143), (3, 3)])
def test_each_container_handles_sigterm_its_own_way(on_term, exit_code):
    """on_sigterm, by name before the container exists or by id: ignoring SIGTERM
    (None) ends in Docker's SIGKILL, 137; otherwise the process's own code. Other
    containers keep the default."""
    rt = fake(stop_exit_code=None)
    rt.on_sigterm("named", on_term)
    named = running(rt, "named")
    by_id = running(rt, "by-id")
    rt.on_sigterm(by_id, on_term)
    other = running(rt, "other")

    for cid in (named, by_id, other):
        rt.stop_container(cid, 1)

    assert [exit_code, exit_code, 137] == [rt.container(c).exit_code for c in (named, by_id, other)]


def test_pause_and_unpause():
    """A paused container runs and cannot exec until it is unpaused; only a running
    container can be paused, only a paused one unpaused; no call is recorded."""
    rt = fake()
    cid = running(rt, "app")
    exited = running(rt, "exited")
    rt.exit(exited, 1)

    rt.pause(cid)
    with pytest.raises(RuntimeCallError, match="is paused"):
        rt.exec_in_container(cid, ["true"], 1.0)
    rt.unpause(cid)

    assert ExecResult(0) == rt.exec_in_container(cid, ["true"], 1.0)
    with pytest.raises(ValueError, match=f"Container {exited} is not running"):
        rt.pause(exited)
    with pytest.raises(ValueError, match="is not paused"):
        rt.unpause(cid)
    with pytest.raises(KeyError):
        rt.pause("gone")
    assert ["create", "start", "create", "start", "exec", "exec"] == rt.call_names()


def test_duplicate_name_is_refused():
    """Names are unique, as on an engine."""
    rt = fake()
    running(rt, "app")

    with pytest.raises(NameConflict, match='already in use by container "c0001"'):
        rt.create_container(CreateSpec(name="app", image="busybox"))

    assert issubclass(NameConflict, RuntimeCallError)


def test_absent_image_is_refused():
    """A container can only be created from a present image; pull makes it present."""
    rt = fake(images=[])

    with pytest.raises(RuntimeCallError, match="No such image: busybox"):
        rt.create_container(CreateSpec(name="app", image="busybox"))
    rt.pull_image("busybox")
    rt.create_container(CreateSpec(name="app", image="busybox"))

    assert ["busybox:latest"] == [t for i in rt.list_images() for t in i.tags]


def test_joining_the_network_of_a_container_that_does_not_run():
    """container:<name> is looked up at start, as Docker 20.10 does: the create is
    accepted, and the start needs the container to exist ("No such container") and to
    run ("cannot join network of a non running container: <id>")."""
    rt = fake()
    app = rt.create_container(CreateSpec(name="app", image="busybox", join="net"))
    with pytest.raises(RuntimeCallError, match="No such container: net"):
        rt.start_container(app)
    net = rt.create_container(CreateSpec(name="net", image="busybox"))

    with pytest.raises(RuntimeCallError, match=f"non running container: {net}"):
        rt.start_container(app)
    rt.start_container(net)
    rt.start_container(app)

    assert rt.container("app").running


def test_stop_and_remove_are_idempotent():
    """Stopping or removing a container that is gone succeeds, as the protocol says."""
    rt = fake()

    rt.stop_container("nope", 10)
    rt.remove_container("nope")

    assert ["stop", "remove"] == rt.call_names()


def test_remove_refuses_a_running_container():
    """A running container cannot be removed; a stopped one can."""
    rt = fake()
    cid = running(rt, "app")

    with pytest.raises(RuntimeCallError, match="running"):
        rt.remove_container(cid)
    rt.stop_container(cid, 1)
    rt.remove_container(cid)

    assert [] == rt.containers


def test_exit_simulates_a_process_exit():
    """exit() ends the process with a code at the clock's time, recording no call."""
    rt = fake()
    cid = running(rt, "app")

    rt.exit(cid, 3)

    c = rt.container(cid)
    assert (False, 3, 1002.0) == (c.running, c.exit_code, c.finished_at)
    assert ["create", "start"] == rt.call_names()


def test_seeded_containers_and_images():
    """Containers and images given to the constructor are there, no call recorded."""
    oc = ObservedContainer("1234", "k8s_bar_foo.new.test_12345678_0", running=True)
    image = ObservedImage("sha256:x", ("custom:1",))

    rt = FakeRuntime(containers=[oc], images=[image])

    assert [oc] == rt.containers
    assert [image] == rt.images
    assert [] == rt.calls


@pytest.mark.parametrize(
    ("case", "state_label", "uid", "present", "expected"),
    [
        ("mounted-brings-its-volume", "mounted", "u1", None, {"podsync-state_u1": "ns"}),
        ("unlabelled-brings-none", None, "u1", None, {}),
        ("no-uid-brings-none", "mounted", None, None, {}),
        (
            "present-volume-kept-as-it-is",
            "mounted",
            "u1",
            "podsync-state_u1",
            {"podsync-state_u1": ""},
        ),
    ],
    ids=[
        "mounted-brings-its-volume",
        "unlabelled-brings-none",
        "no-uid-brings-none",
        "present-volume-kept-as-it-is",
    ],
)
def test_a_network_container_that_mounts_the_state_volume_brings_it(
    case: str,
    state_label: str | None,
    uid: str | None,
    present: str | None,
    expected: dict[str, str],
) -> None:
    """A network container put on the fake that says it mounts its pod's state volume
    comes with it (Docker made the volume at its create, and removes none a container
    mounts); a volume of that name already there is kept as it is."""
    labels = {"io.podsync.pod.namespace": "ns"}
    if state_label is not None:
        labels["io.podsync.pod.state"] = state_label
    if uid is not None:
        labels["io.podsync.pod.uid"] = uid
    rt = fake()
    if present is not None:
        rt.add_volume(present)
    rt.add_container(ObservedContainer("c1", "k8s_net.1_p.ns.file_u1_0", labels=labels))

    assert expected == {v.name: v.labels.get("io.podsync.volume.namespace", "") for v in rt.volumes}
    assert [] == rt.calls


# --- faults ---------------------------------------------------------------------------


def test_fail_every_call():
    """A fault without times fails every call of that name; the call is recorded and
    changes nothing."""
    rt = fake()
    rt.fail("create", error="disk full")

    for _ in range(2):
        with pytest.raises(RuntimeCallError, match="create app: disk full"):
            rt.create_container(CreateSpec(name="app", image="busybox"))

    assert ["create", "create"] == rt.call_names()
    assert [] == rt.containers


def test_fail_times():
    """times=1 fails the next matching call only."""
    rt = fake()
    rt.fail("pull", times=1)

    with pytest.raises(RuntimeCallError, match="injected failure"):
        rt.pull_image("redis")
    rt.pull_image("redis")

    assert "redis:latest" in {t for i in rt.images for t in i.tags}


@pytest.mark.parametrize(
    ("match", "failing"),
    [
        # A string matches the created spec's name ...
        ("alpha", {"k8s_net_alpha"}),
        # ... or its image.
        ("pause", {"k8s_net_alpha", "k8s_net_beta"}),
        # A function gets the Call.
        (lambda call: call.args[0].name.endswith("beta"), {"k8s_net_beta"}),
    ],
)
def test_fail_match_on_create(match, failing):
    """match picks the calls that fail."""
    rt = fake()
    rt.fail("create", match=match)

    failed = set()
    for name in ("k8s_net_alpha", "k8s_net_beta"):
        try:
            rt.create_container(CreateSpec(name=name, image="registry.k8s.io/pause:3.10"))
        except RuntimeCallError:
            failed.add(name)

    assert failing == failed


def test_fail_match_on_container_calls_uses_id_and_name():
    """For start/stop/remove/exec, a string matches the container's id or its name."""
    rt = fake()
    a = rt.create_container(CreateSpec(name="k8s_bar_alpha", image="busybox"))
    b = rt.create_container(CreateSpec(name="k8s_bar_beta", image="busybox"))
    rt.fail("start", match="alpha")
    rt.fail("stop", match=b)

    with pytest.raises(RuntimeCallError):
        rt.start_container(a)
    rt.start_container(b)
    with pytest.raises(RuntimeCallError, match=f"stop {b}"):
        rt.stop_container(b, 1)


def test_fail_unavailable_and_clear():
    """unavailable=True raises EngineUnavailable; clear_faults stops the failures."""
    rt = fake()
    rt.fail("list", unavailable=True, error="daemon down")

    with pytest.raises(EngineUnavailable, match="daemon down"):
        rt.list_containers()
    rt.clear_faults()

    assert [] == rt.list_containers()


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [(("inspect_container",), {}), (("list",), {"times": 0})],
)
def test_fail_rejects_bad_arguments(args, kwargs):
    """An unknown call name or times below 1 is a programming error."""
    with pytest.raises(ValueError, match=r"expected|times"):
        FakeRuntime().fail(*args, **kwargs)


# --- exec and addresses ------------------------------------------------------------------


def test_exec_results_are_scripted():
    """An unscripted command exits 0; a scripted one returns its result."""
    rt = fake()
    cid = running(rt, "app")
    rt.set_exec_result(["cat", "/health"], 1, b"sick")

    assert ExecResult(0) == rt.exec_in_container(cid, ["true"], 1.0)
    assert ExecResult(1, b"sick") == rt.exec_in_container(cid, ["cat", "/health"], 1.0)
    assert Call("exec", (cid, ("cat", "/health"), 1.0)) == rt.calls[-1]


def test_exec_needs_a_running_container():
    """exec in a stopped container fails, as on an engine."""
    rt = fake()
    cid = running(rt, "app")
    rt.stop_container(cid, 1)

    with pytest.raises(RuntimeCallError, match="not running"):
        rt.exec_in_container(cid, ["true"], 1.0)


def test_container_address():
    """The configured address, through container:<net> to the network container;
    None for network mode none and when no address is configured."""
    rt = fake(address="127.0.0.1")
    running(rt, "net")
    app = running(rt, "app", join="net")
    lonely = running(rt, "lonely", network="none")

    assert "127.0.0.1" == rt.container_address(app)
    assert rt.container_address(lonely) is None
    assert ["address", "address"] == [n for n in rt.call_names() if n == "address"]
    no_address = fake()
    assert no_address.container_address(running(no_address, "xx")) is None


def test_node_capacity():
    """The capacity given (8 CPUs and 16 GiB unless given), recorded as ``info``."""
    given = fake(capacity=ResourceList(cpu=2500, memory=1024))

    assert (ResourceList(cpu=2500, memory=1024), ["info"]) == (
        given.node_capacity(),
        given.call_names(),
    )
    assert ResourceList(cpu=8000, memory=16 * 1024**3) == fake().node_capacity()


def test_remove_image():
    """An unused image can be removed; one a container uses cannot; a missing one is
    removed already (as DockerRuntime)."""
    rt = fake()
    running(rt, "app")
    busybox = next(i for i in rt.images if "busybox:latest" in i.tags)
    pause = next(i for i in rt.images if "registry.k8s.io/pause:3.10" in i.tags)

    with pytest.raises(RuntimeCallError, match="being used"):
        rt.remove_image(busybox.id)
    rt.remove_image(pause.id)
    rt.remove_image("sha256:gone")

    assert [busybox] == rt.images


def test_vocabulary():
    """The call names: the seed's FakeDockerClient words plus the ones podsync adds."""
    assert {
        "list",
        "list_pod",
        "list_images",
        "info",
        "pull",
        "create",
        "start",
        "stop",
        "remove",
        "exec",
        "address",
        "remove_image",
        "exec_attached",
        "logs",
        "events",
        "list_volumes",
        "create_volume",
        "remove_volume",
        "write_volume",
        "read_volume_file",
        "read_file",
        "usage",
        "node_usage",
    } == CALL_NAMES
    assert MUTATING_CALL_NAMES < CALL_NAMES


def test_volume_calls_are_recorded_and_can_fail():
    """The volume calls are recorded with their arguments, and a scripted fault fails
    the one whose volume it names, changing nothing."""
    rt = fake()
    rt.fail("create_volume", match="claim", times=1)

    with pytest.raises(RuntimeCallError, match="injected failure"):
        rt.create_volume("podsync_default_claim", {"io.podsync.volume.kind": "claim"})
    rt.create_volume("other", {})
    rt.remove_volume("other")
    rt.list_volumes()

    assert [
        ("create_volume", ("podsync_default_claim", {"io.podsync.volume.kind": "claim"})),
        ("create_volume", ("other", {})),
        ("remove_volume", ("other",)),
        ("list_volumes", ()),
    ] == [(c.name, c.args) for c in rt.calls]
    assert [] == rt.volumes
