"""One conformance suite, two runtimes: ``FakeRuntime`` and the real engine
(``DockerRuntime``) must observe the same things.

The suite's cases (the ``test_*`` functions here) take a ``subject`` fixture and run
through the ``podsync.Runtime`` protocol only. They are collected twice: by
``tests/unit/runtime/test_conformance.py`` against the fake (``fake_subject``), and by
``tests/engine/test_conformance.py`` against the engine (``engine_subject``), where
the directory marks them ``engine``. What a scenario cannot do through the protocol
- make a process that ignores SIGTERM, traps it or exits by itself, wait for that exit,
pause a container - a ``Subject`` does for each runtime in its own way: the engine runs
a real process (``/bin/sh -c ...`` in the busybox test image), the fake is told what
that process would do (``FakeRuntime.on_sigterm``, ``exit``, ``pause``).

So the fake is checked against the engine, and the planner's tests can trust it:
states, exit codes of stops (137 when SIGTERM is ignored, the trap's code otherwise),
Docker's refusals with Docker's own messages, list fields, exec results.

The engine is ``dockerd --bridge=none`` (CI's and every developer's private engine):
containers use network mode ``none`` or ``container:<id>`` only, and nothing can be
published there, so the host-port refusal is checked by the fake's own tests
(``tests/unit/runtime/test_fake_runtime_engine_rules.py``) and on an engine with a
bridge by ``tests/engine/test_host_ports.py``; here both runtimes accept bindings in
network mode ``none`` and publish nothing.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import re
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import attrs
import docker
import pytest

from podsync.actions._actions import CreateSpec
from podsync.docker import DockerRuntime
from podsync.exceptions import NameConflict, RuntimeCallError
from podsync.model._pod import HostAlias, ObservedContainer, ObservedVolume
from podsync.model._secrets import SecretPart, SecretText
from podsync.model._security import ContainerSecurity
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.runtime._protocol import ExecResult, PodListRuntime, Runtime
from podsync.spec._labels import LABEL_CONTAINER, LABEL_POD_UID
from podsync.spec._ports import PortMapping
from podsync.spec._volumes import Mount, NamedVolumeMount, TmpfsMount
from podsync.testing import FakeRuntime
from tests.support.engine import (
    PAUSE_IMAGE,
    TEST_IMAGE,
    remove_containers,
    remove_volumes,
    run_labels,
)
from tests.support.podman_answers import (
    DOMAIN_NAME_REFUSED,
    IPC_SHAREABLE,
    JOIN_CHECKED_AT_CREATE,
    SAME_SECOND_ORDER_UNFIXED,
    SYSCTLS_CHECKED_AT_CREATE,
    answer,
    events_of_a_stop,
    listed_image,
)

MIB = 1024 * 1024

# Seconds of grace for stops: short, so that a process that ignores SIGTERM costs one
# second of the suite.
GRACE = 1


# --- processes -------------------------------------------------------------------------


@attrs.frozen
class Process:
    """What a container's process does: on SIGTERM exit with ``on_term`` (``None``:
    ignore it, as busybox ``sleep`` or ``sh`` as PID 1 do, and be killed after the grace
    period), or exit by itself at once with ``exits``."""

    on_term: int | None = None
    exits: int | None = None

    def command(self) -> tuple[str, ...] | None:
        """The engine's process: ``None`` keeps the test image's ``sleep 3600``."""
        if self.exits is not None:
            return ("/bin/sh", "-c", f"exit {self.exits}")
        if self.on_term is not None:
            # ``wait`` is interrupted by the trapped signal at once, a foreground
            # ``sleep`` would not be.
            return (
                "/bin/sh",
                "-c",
                f"trap 'exit {self.on_term}' TERM; echo {TRAPPED}; "
                "while :; do sleep 1 & wait $!; done",
            )
        return None


#: What a trapping process prints once its trap is set: a stop before then would find
#: the shell's default (SIGTERM ends it: 143, or 137 after the grace period).
TRAPPED = "trap-set"


IGNORES_TERM = Process()


def traps(code: int) -> Process:
    """A process that exits with ``code`` on SIGTERM."""
    return Process(on_term=code)


def exits(code: int) -> Process:
    """A process that exits with ``code`` as soon as it starts."""
    return Process(exits=code)


# --- the two runtimes ------------------------------------------------------------------


class Clock:
    """The fake's clock: one second per reading, from a fixed epoch."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@attrs.define
class Subject:
    """One runtime under test, and what the scenarios need beyond the protocol."""

    kind: str
    runtime: Runtime
    client: docker.DockerClient | None = None
    engine: str = ""
    token: str = attrs.field(factory=lambda: secrets.token_hex(4))
    _processes: dict[str, Process] = attrs.field(factory=dict)
    _volumes: list[str] = attrs.field(factory=list)

    @property
    def fake(self) -> FakeRuntime:
        assert isinstance(self.runtime, FakeRuntime)
        return self.runtime

    def name(self, short: str) -> str:
        """A container name no other test or run uses."""
        return f"conformance-{self.token}-{short}"

    def spec(self, short: str, process: Process = IGNORES_TERM, **fields: Any) -> CreateSpec:
        """A spec for the test image running ``process``, owned by podsync (so that
        ``DockerRuntime`` reads exit codes and finish times) and labelled for cleanup."""
        name = fields.pop("name", None) or self.name(short)
        labels = {
            LABEL_POD_UID: f"uid-{self.token}",
            LABEL_CONTAINER: short,
            **fields.pop("labels", {}),
            **run_labels(),
        }
        if not fields.get("join"):
            fields.setdefault("network", "none")
        fields.setdefault("image", TEST_IMAGE)
        fields.setdefault("command", process.command())
        spec = CreateSpec(name=name, labels=labels, **fields)
        self._processes[name] = process
        if self.kind == "fake":
            self.fake.on_sigterm(name, process.on_term)
        return spec

    def answer(self, status: int | None, message: str, **call: str) -> tuple[int | None, str]:
        """What this runtime answers where Docker answers ``status`` with ``message``
        (``tests.support.podman_answers.answer``, with ``call``: the same, but on
        podman)."""
        return answer(self.engine, status, message, **call)

    def running(self, short: str, process: Process = IGNORES_TERM, **fields: Any) -> str:
        """Create and start a container; its id. On the engine, a process that traps
        SIGTERM has set its trap by then."""
        cid = self.runtime.create_container(self.spec(short, process, **fields))
        self.runtime.start_container(cid)
        if self.client is not None and process.on_term is not None:
            # On a loaded machine the shell may not have set its trap when the test
            # stops the container: wait until it says so (at most 30 s).
            deadline = time.monotonic() + 30
            while TRAPPED.encode() not in self.client.api.logs(cid):
                assert time.monotonic() < deadline, f"{short}: the trap was never set"
                time.sleep(0.05)
        return cid

    def wait_exited(self, cid: str, name: str) -> None:
        """Wait until the process of ``cid`` (created as ``name``) has exited by itself."""
        process = self._processes[name]
        assert process.exits is not None
        if self.client is not None:
            self.client.api.wait(cid, timeout=30)
        else:
            self.fake.exit(cid, process.exits)

    def pause(self, cid: str) -> None:
        if self.client is not None:
            self.client.api.pause(cid)
        else:
            self.fake.pause(cid)

    def script_exec(
        self, command: tuple[str, ...], result: ExecResult, *, seconds: float = 0.0
    ) -> None:
        """What ``command`` returns and how long it takes: the engine runs it, the fake
        is told."""
        if self.kind == "fake":
            self.fake.set_exec_result(command, result.exit_code, result.output, seconds=seconds)

    def now(self) -> float:
        """The runtime's time now: the engine's is the real clock, the fake's its own."""
        if self.kind == "fake":
            return self.fake.clock()
        return time.time()

    def listed(self, cid: str) -> ObservedContainer:
        (found,) = [c for c in self.runtime.list_containers() if c.id == cid]
        return found

    def ours(self) -> list[ObservedContainer]:
        """This test's containers, in the runtime's order."""
        return [c for c in self.runtime.list_containers() if c.name.startswith(self.name(""))]

    def volume(self, short: str) -> str:
        """A volume name no other test or run uses, removed when the test ends."""
        name = self.name(short)
        self._volumes.append(name)
        return name

    def our_volumes(self) -> list[ObservedVolume]:
        """This test's volumes, by name."""
        prefix = self.name("")
        found = [v for v in self.runtime.list_volumes() if v.name.startswith(prefix)]
        return sorted(found, key=lambda v: v.name)

    def modes(self, volume: str, paths: list[str]) -> dict[str, int]:
        """The permission bits of the entries at ``paths`` in ``volume``, as a container
        that mounts it sees them (``stat``, which does not follow a link); the fake's as
        it reports what it holds (``FakeRuntime.volume_files``)."""
        if self.client is None:
            held = self.fake.volume_files(volume)
            return {path: held[path].mode for path in paths}
        listing = self.client.containers.run(
            TEST_IMAGE,
            ["stat", "-c", "%a %n", *(f"/data/{path}" for path in paths)],
            volumes={volume: {"bind": "/data", "mode": "ro"}},
            network_mode="none",
            labels=run_labels(),
            remove=True,
        )
        found = [line.split(" ", 1) for line in listing.decode().splitlines()]
        return {name.removeprefix("/data/"): int(mode, 8) for mode, name in found}

    def remove_volumes(self) -> None:
        """Remove this test's containers (they may use the volumes), then its volumes."""
        if self.client is None or not self._volumes:
            return
        remove_containers(self.client, [c.id for c in self.ours()])
        remove_volumes(self.client, self._volumes)


def fake_subject() -> Subject:
    """The fake, with the test images and a clock of its own."""
    return Subject(
        "fake", FakeRuntime(images=[TEST_IMAGE, PAUSE_IMAGE], clock=Clock(), bridge=False)
    )


@contextlib.contextmanager
def engine_subject(client: docker.DockerClient, engine: str = "docker") -> Iterator[Subject]:
    """The engine at ``DOCKER_HOST`` (``engine``: which one it is); the volumes the test
    made are removed after it."""
    with DockerRuntime() as runtime:
        subject = Subject("engine", runtime, client, engine)
        try:
            yield subject
        finally:
            subject.remove_volumes()


def _refusal(call: Any, *args: Any, status: int | None) -> RuntimeCallError:
    """The error ``call(*args)`` raises, with the engine's HTTP ``status`` (``None``: a
    refusal made before the engine answers) and the class that status names
    (``NotFound`` for 404, ``Conflict`` for 409: ``RuntimeCallError.from_status``)."""
    with pytest.raises(RuntimeCallError) as info:
        call(*args)
    error = info.value
    assert status == error.status_code, error
    wanted = type(RuntimeCallError.from_status("", "", "", status))
    assert isinstance(error, wanted), error
    assert type(error) is wanted or isinstance(error, NameConflict)
    return error


# --- states and list fields ------------------------------------------------------------


def test_created_started_stopped_removed(subject: Subject) -> None:
    """A created container is listed not running, never finished, exit code 0, with its
    labels and image; started it runs; stopped (its process ignores SIGTERM) it is
    killed: 137, with a finish time; removed it is gone."""
    spec = subject.spec("app", labels={"team": "web"})
    cid = subject.runtime.create_container(spec)

    created = subject.listed(cid)
    assert (spec.name, spec.image, spec.labels) == (created.name, created.image, created.labels)
    assert (False, 0, None) == (created.running, created.exit_code, created.finished_at)
    assert created.created > 0

    subject.runtime.start_container(cid)
    started = subject.listed(cid)
    assert (True, None) == (started.running, started.finished_at)

    subject.runtime.stop_container(cid, GRACE)
    stopped = subject.listed(cid)
    assert (False, 137) == (stopped.running, stopped.exit_code)
    assert stopped.finished_at is not None
    assert stopped.finished_at >= stopped.created == created.created

    subject.runtime.remove_container(cid)
    assert [] == subject.ours()


def test_list_is_newest_first(subject: Subject) -> None:
    """Both list the newer container first (podman: only by whole seconds)."""
    first = subject.runtime.create_container(subject.spec("first"))
    second = subject.runtime.create_container(subject.spec("second"))

    listed = subject.ours()
    if subject.engine in SAME_SECOND_ORDER_UNFIXED:
        # Newest first by the listed (whole-second) creation times; a tie in any order.
        assert {second, first} == {c.id for c in listed}
        assert sorted(listed, key=lambda c: -c.created) == listed
        return
    assert [second, first] == [c.id for c in listed]


def test_a_pods_list_has_its_containers_alone(subject: Subject) -> None:
    """``list_pod_containers`` (``PodListRuntime``: the label filter) lists the pod's
    containers, running and exited, as ``list_containers`` does - an exited one with
    its exit code and finish time - and none of another pod."""
    runtime = subject.runtime
    assert isinstance(runtime, PodListRuntime)
    other = f"uid-{subject.token}-other"
    mine = subject.running("app")
    gone = subject.running("done", exits(3))
    subject.wait_exited(gone, subject.name("done"))
    theirs = subject.running("theirs", labels={LABEL_POD_UID: other})

    listed = runtime.list_pod_containers(f"uid-{subject.token}")
    whole = {c.id: c for c in runtime.list_containers()}
    assert {mine, gone} == {c.id for c in listed}
    assert all(c == whole[c.id] for c in listed)
    exited = next(c for c in listed if c.id == gone)
    assert (False, 3) == (exited.running, exited.exit_code)
    assert exited.finished_at is not None
    assert [theirs] == [c.id for c in runtime.list_pod_containers(other)]
    assert [] == runtime.list_pod_containers(f"uid-{subject.token}-none")


@pytest.mark.parametrize(
    ("process", "exit_code"),
    [
        pytest.param(IGNORES_TERM, 137, id="ignores-term-killed"),
        pytest.param(traps(0), 0, id="traps-exit-0"),
        pytest.param(traps(3), 3, id="traps-exit-3"),
        pytest.param(traps(143), 143, id="traps-exit-143"),
    ],
)
def test_stop_exit_codes(subject: Subject, process: Process, exit_code: int) -> None:
    """A stop sends SIGTERM, then SIGKILL after the grace period: a process that ignores
    SIGTERM exits 137, one that handles it exits with its own code."""
    cid = subject.running("app", process)

    subject.runtime.stop_container(cid, GRACE)

    stopped = subject.listed(cid)
    assert (False, exit_code) == (stopped.running, stopped.exit_code)
    assert stopped.finished_at is not None


def test_process_that_exits_by_itself(subject: Subject) -> None:
    """A process that exits 7 is listed exited with 7 and a finish time; a stop then
    changes nothing, and exec is refused."""
    spec = subject.spec("app", exits(7))
    cid = subject.runtime.create_container(spec)
    subject.runtime.start_container(cid)
    subject.wait_exited(cid, spec.name)

    exited = subject.listed(cid)
    subject.runtime.stop_container(cid, GRACE)

    assert (False, 7) == (exited.running, exited.exit_code)
    assert exited.finished_at is not None
    assert exited == subject.listed(cid)
    status, message = subject.answer(409, f"Container {cid} is not running")
    error = _refusal(subject.runtime.exec_in_container, cid, ["true"], 5.0, status=status)
    assert message == error.message


def test_stop_and_remove_of_what_does_not_run(subject: Subject) -> None:
    """Stopping a container that never started, or one that is gone, and removing one
    that is gone, succeed; starting a running container does nothing."""
    never = subject.runtime.create_container(subject.spec("never"))
    running = subject.running("running")

    subject.runtime.stop_container(never, GRACE)
    subject.runtime.start_container(running)
    subject.runtime.remove_container(never)
    subject.runtime.stop_container(never, GRACE)
    subject.runtime.remove_container(never)

    assert [(running, True)] == [(c.id, c.running) for c in subject.ours()]


def test_remove_of_a_running_container_is_refused(subject: Subject) -> None:
    cid = subject.running("app")

    status, message = subject.answer(
        409,
        f"You cannot remove a running container {cid}. "
        "Stop the container before attempting removal or force remove",
    )
    error = _refusal(subject.runtime.remove_container, cid, status=status)

    assert message == error.message
    assert [cid] == [c.id for c in subject.ours()]


# --- refusals at create ----------------------------------------------------------------


def _invalid_name(name: str) -> str:
    return f"Invalid container name ({name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed"


MIN_MEMORY = "Minimum memory limit allowed is 6MB"
HOSTNAME_CONFLICT = "conflicting options: hostname and the network mode"
DNS_CONFLICT = "conflicting options: dns and the network mode"
PUBLISH_CONFLICT = "conflicting options: port publishing and the container type network mode"
HOSTS_CONFLICT = "conflicting options: custom host-to-IP mapping and the network mode"
ALIAS = HostAlias("10.1.2.3", ("db.example",))
NO_IMAGE = "podsync-test/no-such-image"
NO_SUCH_IMAGE = f"No such image: {NO_IMAGE}:latest"
MISSING_PROFILE = "seccomp profile /nonexistent/podsync/x.json does not exist"
BAD_PORT = 'invalid port specification: "70000"'

REFUSED_AT_CREATE = [
    # Docker's name pattern: [a-zA-Z0-9][a-zA-Z0-9_.-]+, one leading "/" allowed.
    pytest.param({"name": "bad name"}, _invalid_name("bad name"), id="name-space"),
    pytest.param({"name": "_x"}, _invalid_name("_x"), id="name-underscore-first"),
    pytest.param({"name": "a"}, _invalid_name("a"), id="name-one-character"),
    pytest.param({"name": "a/b"}, _invalid_name("a/b"), id="name-slash"),
    pytest.param({"name": "/_x"}, _invalid_name("/_x"), id="name-slash-first"),
    pytest.param({"name": "caf\u00e9"}, _invalid_name("caf\u00e9"), id="name-not-ascii"),
    # Docker 20.10's minimum memory limit (daemon/daemon_unix.go, linuxMinMemory).
    pytest.param({"memory": 1}, MIN_MEMORY, id="memory-1-byte"),
    pytest.param({"memory": 4 * MIB}, MIN_MEMORY, id="memory-4MiB"),
    pytest.param({"memory": 6 * MIB - 1}, MIN_MEMORY, id="memory-just-below-6MiB"),
    # Options that belong to the network container (runconfig's validateNetContainerMode).
    pytest.param({"joins": True, "hostname": "web"}, HOSTNAME_CONFLICT, id="hostname"),
    pytest.param({"joins": True, "dns": ("10.0.0.10",)}, DNS_CONFLICT, id="dns"),
    # hostAliases are the network container's: its joiners share its /etc/hosts.
    pytest.param({"joins": True, "host_aliases": (ALIAS,)}, HOSTS_CONFLICT, id="extra-hosts"),
    pytest.param(
        {"joins": True, "host_aliases": (ALIAS,), "ports": (PortMapping(80, 8080),)},
        HOSTS_CONFLICT,
        id="extra-hosts-before-ports",
    ),
    pytest.param(
        {"joins": True, "ports": (PortMapping(80, 8080),)},
        PUBLISH_CONFLICT,
        id="published-port",
    ),
    pytest.param({"image": NO_IMAGE}, NO_SUCH_IMAGE, id="no-image"),
    # Which refusal comes first: the options, then the memory, then the image, then the
    # name.
    pytest.param(
        {"joins": True, "hostname": "web", "dns": ("10.0.0.10",), "memory": 1},
        HOSTNAME_CONFLICT,
        id="hostname-before-dns-and-memory",
    ),
    pytest.param(
        {"joins": True, "dns": ("10.0.0.10",), "ports": (PortMapping(80, 8080),)},
        DNS_CONFLICT,
        id="dns-before-ports",
    ),
    pytest.param({"memory": 1, "image": NO_IMAGE}, MIN_MEMORY, id="memory-before-image"),
    pytest.param(
        {"image": NO_IMAGE, "name": "bad name"},
        NO_SUCH_IMAGE,
        id="image-before-name",
    ),
    pytest.param({"memory": 1, "name": "bad name"}, MIN_MEMORY, id="memory-before-name"),
    # Docker's NormalizeLegacyCapabilities: upper case, CAP_ added, unknown names refused.
    pytest.param(
        {"security": ContainerSecurity(cap_add=("NET_ADMN",))},
        'invalid CapAdd: unknown capability: "CAP_NET_ADMN"',
        id="unknown-capability",
    ),
    pytest.param(
        {"security": ContainerSecurity(cap_drop=("cap_foo",))},
        'invalid CapDrop: unknown capability: "CAP_FOO"',
        id="unknown-capability-dropped",
    ),
    # emptyDir in memory (issue 14): Docker's HostConfig.Tmpfs wants absolute paths, and
    # no bind at the same place.
    pytest.param(
        {"tmpfs": (TmpfsMount("data", 1 << 20),)},
        "invalid mount path: 'data' mount path must be absolute",
        id="tmpfs-relative-path",
    ),
    pytest.param(
        {"tmpfs": (TmpfsMount("/data", 1 << 20),), "mounts": (Mount("/tmp", "/data"),)},
        "Duplicate mount point: /data",
        id="tmpfs-where-a-bind-is",
    ),
    # Swap and OOM score (issue 27), daemon/daemon_unix.go's own checks and words: a swap
    # limit needs a memory limit no larger than it; the OOM score is the kernel's range.
    pytest.param(
        {"memory": 10 * MIB, "memory_swap": 5 * MIB},
        "Minimum memoryswap limit should be larger than memory limit, see usage",
        id="swap-under-memory",
    ),
    pytest.param(
        {"memory_swap": 50 * MIB},
        "You should always set the Memory limit when using Memoryswap limit, see usage",
        id="swap-without-memory",
    ),
    pytest.param(
        {"oom_score_adj": 1001},
        "Invalid value 1001, range for oom score adj is [-1000, 1000]",
        id="oom-score-above-1000",
    ),
    pytest.param(
        {"oom_score_adj": -1001},
        "Invalid value -1001, range for oom score adj is [-1000, 1000]",
        id="oom-score-under-1000",
    ),
    # The resources are checked before the OOM score.
    pytest.param({"oom_score_adj": -1001, "memory": 1}, MIN_MEMORY, id="memory-before-oom"),
    pytest.param(
        {"oom_score_adj": 1001, "memory_swap": 50 * MIB},
        "You should always set the Memory limit when using Memoryswap limit, see usage",
        id="swap-before-oom",
    ),
    # Published ports outside 0-65535 (issue 29: a CreateSpec built by hand can hold
    # them): refused before anything else, the name and the memory included.
    pytest.param({"ports": (PortMapping(70000, 8080),)}, BAD_PORT, id="container-port-above-65535"),
    pytest.param({"ports": (PortMapping(80, 70000),)}, BAD_PORT, id="host-port-above-65535"),
    pytest.param(
        {"ports": (PortMapping(80, -1),)},
        'invalid port specification: "-1"',
        id="negative-host-port",
    ),
    pytest.param(
        {"memory": 1, "name": "bad name", "ports": (PortMapping(70000, 8080),)},
        BAD_PORT,
        id="port-before-memory-and-name",
    ),
    # The IPC namespace's container is looked for at create, unlike the network's.
    pytest.param(
        {"join_ipc": "no-such-container"}, "No such container: no-such-container", id="no-ipc"
    ),
    # Refused by the runtime before the engine sees it: a Localhost profile whose file
    # does not exist.
    pytest.param(
        {"security": ContainerSecurity(seccomp="localhost//nonexistent/podsync/x.json")},
        MISSING_PROFILE,
        id="missing-seccomp-profile",
    ),
]


@pytest.mark.parametrize(("fields", "message"), REFUSED_AT_CREATE)
def test_refused_at_create(subject: Subject, fields: dict[str, Any], message: str) -> None:
    """Docker refuses these at create, with these words, and creates nothing."""
    fields = dict(fields)
    if fields.pop("joins", False):
        net = subject.running("net", traps(0))
        fields["join"] = net
    before = subject.ours()

    # Docker answers 400 to a create it finds invalid, 404 for a missing image; a
    # profile DockerRuntime refuses before the engine has no answer's status.
    status = {NO_SUCH_IMAGE: 404, MISSING_PROFILE: None}.get(message, 400)
    status, message = subject.answer(status, message, during="create")
    error = _refusal(subject.runtime.create_container, subject.spec("app", **fields), status=status)

    assert message == error.message
    assert not isinstance(error, NameConflict)
    assert before == subject.ours()


SECRET_ENV = SecretText("TOKEN=s3cr3t", ("TOKEN=", SecretPart("default", "api", "token", "0" * 64)))


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"memory": 6 * MIB}, id="memory-6MiB"),
        pytest.param({"joins": True, "dns_search": ("example.com",)}, id="dns-search"),
        pytest.param({"name": "/{name}"}, id="name-with-leading-slash"),
        pytest.param({"image": "podsync-test/busybox"}, id="untagged-image"),
        pytest.param({"join": "no-such-container"}, id="missing-network"),
        pytest.param({"ports": (PortMapping(80, 8080),)}, id="ports-in-network-mode-none"),
        # Resources, terminals and host identity (issue 13).
        pytest.param({"milli_cpu": 250, "cpu_limit": 500, "memory": 6 * MIB}, id="cpu-limit"),
        pytest.param({"cpu_limit": 1}, id="cpu-limit-1m"),
        # The engine settings of issue 27.
        pytest.param({"memory": 6 * MIB, "memory_swap": 6 * MIB}, id="swap-equal-to-memory"),
        pytest.param({"oom_score_adj": -998}, id="oom-score-network"),
        pytest.param({"oom_score_adj": 1000}, id="oom-score-best-effort"),
        pytest.param({"ipc_shareable": True}, id="ipc-shareable"),
        pytest.param({"tty": True, "stdin": True, "stdin_once": True}, id="tty-stdin"),
        pytest.param(
            {"tmpfs": (TmpfsMount("/data", 1 << 20), TmpfsMount("/cache", 0, read_only=True))},
            id="tmpfs",
        ),
        pytest.param(
            {"hostname": "web", "domainname": "sub.ns.svc.cluster.local"}, id="domainname"
        ),
        pytest.param({"host_aliases": (ALIAS,)}, id="extra-hosts-own-network"),
        # A Secret's value is a str (SecretText) to a runtime: passed on as any other.
        pytest.param({"env": (SECRET_ENV,), "command": (SECRET_ENV,)}, id="secret-values"),
        pytest.param({"joins": True, "host_aliases": (HostAlias("10.1.2.3"),)}, id="no-names"),
        pytest.param({"joins": True, "domainname": "sub.ns.svc.cluster.local"}, id="domain-join"),
        pytest.param(
            {
                "security": ContainerSecurity(
                    user="1000:3000",
                    groups=(2000,),
                    cap_add=("net_admin", "CAP_SYS_TIME"),
                    cap_drop=("ALL",),
                    no_new_privileges=True,
                    read_only_root_filesystem=True,
                    seccomp="unconfined",
                    apparmor="unconfined",
                    sysctls=(("kernel.shm_rmid_forced", "1"),),
                    host_ipc=True,
                )
            },
            id="security-settings",
        ),
    ],
)
def test_accepted_at_create(subject: Subject, fields: dict[str, Any]) -> None:
    """Close to the refusals, and accepted: 6 MiB exactly, DNS search domains beside
    ``container:`` (only the servers conflict), a name with Docker's leading ``/``, an
    untagged reference to a ``:latest`` image, a ``container:`` network that does not
    exist yet (Docker 20.10 looks at start), ports in network mode ``none``. Where an
    engine refuses or cannot honour one (podman: a missing network container, a domain
    name), the refusal is its own, or podsync's, and nothing is made."""
    fields = dict(fields)
    if fields.pop("joins", False):
        net = subject.running("net", traps(0))
        fields["join"] = net
    name = subject.name("app")
    if "name" in fields:
        fields["name"] = fields["name"].format(name=name)
    if fields.get("join") == "no-such-container" and subject.engine in JOIN_CHECKED_AT_CREATE:
        status, message = subject.answer(404, f"No such container: {fields['join']}", during="join")
        error = _refusal(
            subject.runtime.create_container, subject.spec("app", **fields), status=status
        )
        assert message == error.message
        return
    if fields.get("domainname") and subject.engine in DOMAIN_NAME_REFUSED:
        # Refused by podsync, which cannot make it as asked there: never dropped.
        before = subject.ours()
        error = _refusal(
            subject.runtime.create_container, subject.spec("app", **fields), status=None
        )
        assert "cannot give a container a domain name" in error.message
        assert before == subject.ours()
        return

    cid = subject.runtime.create_container(subject.spec("app", **fields))

    listed = subject.listed(cid)
    assert (name, False) == (listed.name, listed.running)
    assert listed_image(subject.engine, fields.get("image", TEST_IMAGE)) == listed.image


def test_name_conflict(subject: Subject) -> None:
    """A taken name is a ``NameConflict`` naming the holder, in Docker's words."""
    spec = subject.spec("app", labels={"team": "web"})
    holder = subject.runtime.create_container(spec)

    status, message = subject.answer(
        409,
        f'Conflict. The container name "/{spec.name}" is already in use by container '
        f'"{holder}". You have to remove (or rename) that container to be able to reuse '
        "that name.",
    )
    error = _refusal(subject.runtime.create_container, subject.spec("app"), status=status)

    assert isinstance(error, NameConflict)
    assert (holder, spec.labels) == (error.holder_id, error.holder_labels)
    assert message == error.message


def test_ports_in_network_mode_none_are_not_published(subject: Subject) -> None:
    """Network mode ``none`` publishes nothing (``--bridge=none`` publishes nothing
    either): two containers binding one host port both run."""
    ports = (PortMapping(80, 8080),)

    first = subject.running("first", traps(0), ports=ports)
    second = subject.running("second", traps(0), ports=ports)

    assert {first: True, second: True} == {c.id: c.running for c in subject.ours()}


# --- the network container -------------------------------------------------------------


def test_joining_a_network_container(subject: Subject) -> None:
    """``container:<x>`` starts only while x runs: a missing x and a stopped x are
    refused at start (the container stays created; podman refuses a missing x at
    create: ``JOIN_CHECKED_AT_CREATE``); a running or paused x is joined."""
    net = subject.runtime.create_container(subject.spec("net", traps(0)))
    app = subject.runtime.create_container(subject.spec("app", join=net))
    missing_spec = subject.spec("missing", join="no-such-container")
    status, message = subject.answer(404, "No such container: no-such-container", during="join")
    if subject.engine in JOIN_CHECKED_AT_CREATE:
        no_such = _refusal(subject.runtime.create_container, missing_spec, status=status)
    else:
        missing = subject.runtime.create_container(missing_spec)
        # Docker answers 404 for the missing network container, though the call is a
        # start of a container that exists.
        no_such = _refusal(subject.runtime.start_container, missing, status=status)
        assert not subject.listed(missing).running
    not_running = _refusal(subject.runtime.start_container, app, status=409)

    assert message == no_such.message
    assert f"cannot join network of a non running container: {net}" == not_running.message
    assert not subject.listed(app).running
    subject.runtime.start_container(net)
    subject.pause(net)
    subject.runtime.start_container(app)
    assert subject.listed(app).running


def test_joining_an_ipc_namespace(subject: Subject) -> None:
    """``IpcMode container:<x>`` (issue 27): x is looked for at create; the joiner starts
    only while x runs, and only if x's IPC namespace is ``shareable`` (Docker's own
    ``private`` default is not; podman's every namespace is: ``IPC_SHAREABLE``); the
    network is checked first."""
    private = subject.running("private", traps(0))
    shareable = subject.runtime.create_container(
        subject.spec("shareable", traps(0), ipc_shareable=True)
    )
    of_private = subject.runtime.create_container(subject.spec("a", join_ipc=private))
    of_stopped = subject.runtime.create_container(subject.spec("b", join_ipc=shareable))
    both = subject.runtime.create_container(subject.spec("c", join=shareable, join_ipc=shareable))

    if subject.engine in IPC_SHAREABLE:
        subject.runtime.start_container(of_private)
        assert subject.listed(of_private).running
    else:
        not_shareable = _refusal(subject.runtime.start_container, of_private, status=500)
        assert (
            f"can't join IPC of container {private}: non-shareable IPC (hint: use "
            "IpcMode:shareable for the donor container)"
        ) == not_shareable.message
    not_running = _refusal(subject.runtime.start_container, of_stopped, status=500)
    network_first = _refusal(subject.runtime.start_container, both, status=409)

    assert (
        f"can't join IPC of container {shareable}: container {shareable} is not running"
    ) == not_running.message
    assert f"cannot join network of a non running container: {shareable}" == (network_first.message)
    subject.runtime.start_container(shareable)
    subject.runtime.start_container(of_stopped)
    subject.runtime.start_container(both)
    assert subject.listed(of_stopped).running
    assert subject.listed(both).running


def test_container_address_without_a_network(subject: Subject) -> None:
    """Network mode ``none`` has no address, nor has a container that joins it."""
    net = subject.running("net", traps(0))
    app = subject.running("app", join=net)

    assert (None, None) == (
        subject.runtime.container_address(net),
        subject.runtime.container_address(app),
    )


# --- paused containers -----------------------------------------------------------------


def test_a_paused_container(subject: Subject) -> None:
    """A paused container is listed running; exec, start and remove are refused with
    Docker's words; a stop unpauses it and it exits as its process does."""
    cid = subject.running("app", traps(0))
    subject.pause(cid)

    listed = subject.listed(cid)
    exec_answer = subject.answer(
        409, f"Container {cid} is paused, unpause the container before exec"
    )
    start_answer = subject.answer(
        409, "cannot start a paused container, try unpause instead", container=cid
    )
    remove_answer = subject.answer(
        409,
        f"You cannot remove a paused container {cid}. Unpause and then stop the container "
        "before attempting removal or force remove",
    )
    exec_error = _refusal(
        subject.runtime.exec_in_container, cid, ["true"], 5.0, status=exec_answer[0]
    )
    start_error = _refusal(subject.runtime.start_container, cid, status=start_answer[0])
    remove_error = _refusal(subject.runtime.remove_container, cid, status=remove_answer[0])
    subject.runtime.stop_container(cid, GRACE)

    assert (True, None) == (listed.running, listed.finished_at)
    assert exec_answer[1] == exec_error.message
    assert start_answer[1] == start_error.message
    assert remove_answer[1] == remove_error.message
    stopped = subject.listed(cid)
    assert (False, 0) == (stopped.running, stopped.exit_code)


def test_stop_of_a_paused_process_that_ignores_term(subject: Subject) -> None:
    """Paused or not, a process that ignores SIGTERM is killed: 137."""
    cid = subject.running("app")
    subject.pause(cid)

    subject.runtime.stop_container(cid, GRACE)

    assert (False, 137) == (subject.listed(cid).running, subject.listed(cid).exit_code)


# --- exec ------------------------------------------------------------------------------


def test_exec(subject: Subject) -> None:
    """exec returns the command's exit code and output; in a missing container it is
    refused."""
    cid = subject.running("app")
    command = ("/bin/sh", "-c", "echo hello; exit 4")
    subject.script_exec(command, ExecResult(4, b"hello\n"))

    assert ExecResult(0, b"") == subject.runtime.exec_in_container(cid, ["true"], 10.0)
    assert ExecResult(4, b"hello\n") == subject.runtime.exec_in_container(cid, command, 10.0)
    status, message = subject.answer(404, "No such container: no-such-container")
    missing = _refusal(
        subject.runtime.exec_in_container, "no-such-container", ["true"], 5.0, status=status
    )
    assert message == missing.message


def test_an_exec_that_outlasts_its_timeout(subject: Subject) -> None:
    """A command still running at the exec's timeout gives exit code -1 (the prober's
    failed exec probe, the kubelet's ExecProbeTimeout); the runtime does not wait for
    it (the engine cannot kill an exec: the command is left to finish)."""
    cid = subject.running("app")
    command = ("/bin/sleep", "30")
    subject.script_exec(command, ExecResult(0), seconds=30.0)

    result = subject.runtime.exec_in_container(cid, list(command), 3.0)

    assert ExecResult(-1, b"") == result


# --- images ----------------------------------------------------------------------------


def test_image_listing(subject: Subject) -> None:
    """The test images are listed by their tags, with ``sha256:`` ids."""
    images = subject.runtime.list_images()

    tagged = {tag: image for image in images for tag in image.tags}
    assert {TEST_IMAGE, PAUSE_IMAGE} <= set(tagged)
    assert all(tagged[t].id.startswith("sha256:") for t in (TEST_IMAGE, PAUSE_IMAGE))


# --- security settings the engine's host must have ---------------------------------------


def test_an_apparmor_profile_without_apparmor_is_refused(subject: Subject) -> None:
    """A host without AppArmor would run the container unconfined without a word (Docker
    ignores the profile there): both runtimes refuse the create instead."""
    if subject.client is not None and any(
        "apparmor" in str(o) for o in subject.client.info().get("SecurityOptions") or ()
    ):
        pytest.skip("the engine's host has AppArmor")
    before = subject.ours()

    error = _refusal(
        subject.runtime.create_container,
        subject.spec("app", security=ContainerSecurity(apparmor="runtime/default")),
        status=None,
    )

    assert (
        "AppArmor profile runtime/default asked for, but AppArmor is not enabled on the "
        "Docker engine's host: podsync does not run the container without it"
    ) == error.message
    assert before == subject.ours()


def test_a_sysctl_no_namespace_holds_is_refused_at_start(subject: Subject) -> None:
    """runc refuses a node-level sysctl when the container starts; it stays created.
    podman refuses it at create (``SYSCTLS_CHECKED_AT_CREATE``), and creates nothing."""
    spec = subject.spec("app", security=ContainerSecurity(sysctls=(("kernel.panic", "1"),)))
    if subject.engine in SYSCTLS_CHECKED_AT_CREATE:
        error = _refusal(subject.runtime.create_container, spec, status=500)
        assert "sysctl 'kernel.panic' is not allowed" in error.message
        assert [] == subject.ours()
        return
    cid = subject.runtime.create_container(spec)

    error = _refusal(subject.runtime.start_container, cid, status=500)

    assert 'sysctl "kernel.panic" is not in a separate kernel namespace' in error.message
    assert (cid, False) == (subject.listed(cid).id, subject.listed(cid).running)


def test_image_users(subject: Subject) -> None:
    """The test images name no user: both runtimes report ``""`` (root)."""
    users = {tag: image.user for image in subject.runtime.list_images() for tag in image.tags}

    assert ("", "") == (users[TEST_IMAGE], users[PAUSE_IMAGE])


# --- logs ------------------------------------------------------------------------------

# A process that writes to both streams and exits 0.
WRITES_BOTH = ("/bin/sh", "-c", "echo out1; echo err1 >&2; echo out2; echo err2 >&2")


def _write_both(subject: Subject, cid: str) -> None:
    """What ``WRITES_BOTH`` writes: the engine's process writes it, the fake is told."""
    if subject.kind == "fake":
        for stream, line in (
            ("stdout", "out1\n"),
            ("stderr", "err1\n"),
            ("stdout", "out2\n"),
            ("stderr", "err2\n"),
        ):
            subject.fake.write_log(cid, line, stream)
        subject.fake.exit(cid, 0)
    else:
        assert subject.client is not None
        subject.client.api.wait(cid, timeout=30)


def _lines(stream: Any) -> list[tuple[str, bytes]]:
    with stream:
        return [(line.stream, line.data) for line in stream]


def test_logs_keep_stdout_and_stderr_apart(subject: Subject) -> None:
    """Logs come line by line, each with its stream and a time; ``tail`` keeps the
    last lines; a ``since`` after every line gives none; ``follow`` of an exited
    container ends at once."""
    cid = subject.running("app", command=WRITES_BOTH)
    _write_both(subject, cid)

    with subject.runtime.container_logs(cid) as stream:
        lines = list(stream)
    tail = _lines(subject.runtime.container_logs(cid, tail=1))
    followed = _lines(subject.runtime.container_logs(cid, follow=True))
    later = _lines(subject.runtime.container_logs(cid, since=lines[-1].time + 5))

    by_stream = {s: [line.data for line in lines if line.stream == s] for s in ("stdout", "stderr")}
    assert {"stdout": [b"out1\n", b"out2\n"], "stderr": [b"err1\n", b"err2\n"]} == by_stream
    assert all(line.time >= subject.listed(cid).created - 1 for line in lines)
    assert [(lines[-1].stream, lines[-1].data)] == tail
    assert sorted(followed) == sorted((line.stream, line.data) for line in lines)
    assert [] == later
    status, message = subject.answer(404, "No such container: no-such-container")
    missing = _refusal(subject.runtime.container_logs, "no-such-container", status=status)
    assert message in missing.message


def test_following_logs_ends_when_the_container_exits(subject: Subject) -> None:
    """A follower sees the lines written after it started, and its iteration ends
    when the container's process exits."""
    script = ("/bin/sh", "-c", "echo first; sleep 2; echo second; exit 3")
    cid = subject.running("app", command=script)
    if subject.kind == "fake":
        subject.fake.write_log(cid, "first\n")

    seen: list[bytes] = []
    with subject.runtime.container_logs(cid, follow=True) as stream:
        for line in stream:
            seen.append(line.data)
            if line.data == b"first\n" and subject.kind == "fake":
                # What the engine's process does by itself, the fake is told.
                subject.fake.write_log(cid, "second\n")
                subject.fake.exit(cid, 3)

    assert [b"first\n", b"second\n"] == seen
    if subject.client is not None:
        # The engine ends the log a moment before it records the exit.
        subject.client.api.wait(cid, timeout=30)
    assert (False, 3) == (subject.listed(cid).running, subject.listed(cid).exit_code)


def test_a_closed_follower_ends(subject: Subject) -> None:
    """The caller can stop following a running container: ``close`` ends the
    iteration, from another thread too."""
    cid = subject.running("app")
    stream = subject.runtime.container_logs(cid, follow=True)
    closer = threading.Thread(target=stream.close)

    closer.start()
    assert [] == list(stream)
    closer.join()
    assert stream.closed


# --- exec, attached -------------------------------------------------------------------


def test_exec_attached_passes_stdin_and_exit_code(subject: Subject) -> None:
    """An attached exec gets its standard input to the end (then end-of-file), writes
    to both streams apart, and returns the command's exit code."""
    cid = subject.running("app")
    command = ("/bin/sh", "-c", "cat; echo oops >&2; exit 3")
    if subject.kind == "fake":

        def cat(stdin: bytes, output: Any) -> int:
            output("stdout", stdin)
            output("stderr", b"oops\n")
            return 3

        subject.fake.set_exec_handler(command, cat)
    written: dict[str, bytes] = {"stdout": b"", "stderr": b""}

    def output(stream: str, data: bytes) -> None:
        written[stream] += data

    code = subject.runtime.exec_attached(
        cid, command, output=output, stdin=io.BytesIO(b"hello\nworld\n")
    )

    assert 3 == code
    assert {"stdout": b"hello\nworld\n", "stderr": b"oops\n"} == written
    assert 0 == subject.runtime.exec_attached(cid, ["true"], output=output)
    status, message = subject.answer(404, "No such container: no-such-container")
    missing = _refusal(
        lambda: subject.runtime.exec_attached("no-such-container", ["true"], output=output),
        status=status,
    )
    assert message == missing.message


def test_exec_attached_with_a_tty_has_one_stream(subject: Subject) -> None:
    """With a TTY everything comes as stdout."""
    cid = subject.running("app")
    command = ("/bin/sh", "-c", "echo oops >&2; exit 5")
    if subject.kind == "fake":

        def tty(stdin: bytes, output: Any) -> int:
            output("stdout", b"oops\r\n")
            return 5

        subject.fake.set_exec_handler(command, tty)
    written: list[tuple[str, bytes]] = []

    code = subject.runtime.exec_attached(
        cid, command, output=lambda s, d: written.append((s, d)), tty=True
    )

    assert 5 == code
    assert {"stdout"} == {s for s, _ in written}
    assert b"oops\r\n" == b"".join(d for _, d in written)


# --- events ----------------------------------------------------------------------------


def _events(subject: Subject, since: float, cid: str) -> list[tuple[str, int | None, int | None]]:
    """The events of ``cid`` since ``since``, up to now, as (action, exit code, signal)."""
    if subject.kind == "engine":
        time.sleep(1.1)  # until is whole seconds on the engine: let "now" pass the last event
    until = subject.now()
    with subject.runtime.engine_events(since=since, until=until) as stream:
        return [(e.action, e.exit_code, e.signal) for e in stream if e.container_id == cid]


def test_events_of_a_container_life(subject: Subject) -> None:
    """create, start, a stop of a process that ignores SIGTERM (kill 15, kill 9, die
    137, stop), destroy: each event with the container's name and labels."""
    since = subject.now() - 1
    spec = subject.spec("app")
    cid = subject.runtime.create_container(spec)
    subject.runtime.start_container(cid)
    subject.runtime.stop_container(cid, GRACE)
    subject.runtime.remove_container(cid)

    events = _events(subject, since, cid)
    until = subject.now()
    with subject.runtime.engine_events(since=since, until=until) as stream:
        named = [(e.name, e.labels.get(LABEL_POD_UID)) for e in stream if e.container_id == cid]

    assert events_of_a_stop(
        subject.engine,
        [
            ("create", None, None),
            ("start", None, None),
            ("kill", None, 15),
            ("kill", None, 9),
            ("die", 137, None),
            ("stop", None, None),
            ("destroy", None, None),
        ],
    ) == events_of_a_stop(subject.engine, events)
    assert {(spec.name, spec.labels[LABEL_POD_UID])} == set(named)


@pytest.mark.podman_differs(
    reason="podman 4.3.1 sends no oom event and leaves State.OOMKilled false (cgroup v1)"
)
def test_events_of_an_oom_kill(subject: Subject) -> None:
    """A process the OOM killer ends: events oom, then die 137; listed with
    ``oom_killed``."""
    since = subject.now() - 1
    spec = subject.spec("app", exits(0), memory=8 * MIB, command=("tail", "/dev/zero"))
    cid = subject.runtime.create_container(spec)
    subject.runtime.start_container(cid)
    if subject.kind == "fake":
        subject.fake.exit(cid, 137, oom=True)
    else:
        assert subject.client is not None
        subject.client.api.wait(cid, timeout=60)

    events = _events(subject, since, cid)

    # The oom event comes before the death; on a loaded machine Docker may send it
    # before the start event too (the process dies at once), so only its place before
    # the die is asserted.
    assert ("die", 137, None) == events[-1]
    assert ("oom", None, None) in events[:-1]
    listed = subject.listed(cid)
    assert (False, 137, True) == (listed.running, listed.exit_code, listed.oom_killed)


def test_following_events(subject: Subject) -> None:
    """Without ``until`` the stream follows new events until the caller closes it."""
    stream = subject.runtime.engine_events(since=subject.now() - 1)
    seen: list[str] = []
    cid = subject.running("app")

    for event in stream:
        if event.container_id == cid:
            seen.append(event.action)
        if seen == ["create", "start"]:
            stream.close()

    assert ["create", "start"] == seen


def test_logs_of_a_container_with_a_tty(subject: Subject) -> None:
    """A container with a terminal has one stream: everything is stdout, with the
    terminal's line ends."""
    script = ("/bin/sh", "-c", "echo out; echo err >&2")
    cid = subject.running("app", command=script, tty=True)
    if subject.kind == "fake":
        subject.fake.write_log(cid, "out\r\n")
        subject.fake.write_log(cid, "err\r\n", "stderr")
        subject.fake.exit(cid, 0)
    else:
        assert subject.client is not None
        subject.client.api.wait(cid, timeout=30)

    lines = _lines(subject.runtime.container_logs(cid))

    assert [("stdout", b"out\r\n"), ("stdout", b"err\r\n")] == lines


# --- named volumes ---------------------------------------------------------------------


def test_a_volume_is_created_listed_and_removed(subject: Subject) -> None:
    """A created volume is listed with its labels. Creating it again succeeds and leaves
    it as it is, labels included (Docker returns the volume that exists); removing it
    twice succeeds (the protocol's idempotent removal)."""
    name = subject.volume("data")
    labels = {"io.podsync.volume.kind": "claim", "team": "web"}

    subject.runtime.create_volume(name, labels)
    subject.runtime.create_volume(name, {"team": "db"})

    assert [(name, labels)] == [(v.name, v.labels) for v in subject.our_volumes()]
    subject.runtime.remove_volume(name)
    subject.runtime.remove_volume(name)
    assert [] == subject.our_volumes()


@pytest.mark.podman_differs(reason="podman's volume CreatedAt is the creation time")
def test_a_volume_reports_when_its_root_last_changed(subject: Subject) -> None:
    """A listed volume reports a time (Docker's ``CreatedAt``: RFC 3339, whole seconds),
    the same in every listing. For Docker's local driver it is when the volume's root
    directory last changed: made, or an entry at its top written, not a file below it.
    Made again under its name a second later, it reports a later time. What a content
    record compares (``podsync.spec._content_records``)."""
    name = subject.volume("made")

    def reported() -> datetime.datetime:
        (found,) = subject.our_volumes()
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)", found.created)
        return datetime.datetime.fromisoformat(found.created.replace("Z", "+00:00"))

    def a_second() -> None:
        if subject.kind == "engine":
            time.sleep(1.1)  # the fake's clock moves a second per reading

    subject.runtime.create_volume(name, {})
    made = reported()
    assert abs(made.timestamp() - subject.now()) < 5
    assert reported() == made
    a_second()
    directory = VolumeEntry("conf", EntryKind.DIRECTORY, mode=0o755)
    subject.runtime.write_volume(name, [directory])
    written = reported()
    assert written > made
    a_second()
    below = VolumeEntry("conf/a.conf", EntryKind.FILE, data=b"x")
    subject.runtime.write_volume(name, [below])
    assert reported() == written
    subject.runtime.remove_volume(name)
    a_second()
    subject.runtime.create_volume(name, {})
    assert reported() > written


def _volume_name_refusal(name: str) -> str:
    return (
        f'create {name}: "{name}" includes invalid characters for a local volume name, only '
        '"[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, '
        "use absolute path"
    )


BAD_VOLUME_NAMES = [
    pytest.param(
        "v",
        "create v: volume name is too short, names should be at least two alphanumeric characters",
        id="one-character",
    ),
    pytest.param("_data", _volume_name_refusal("_data"), id="underscore-first"),
    pytest.param("team/data", _volume_name_refusal("team/data"), id="slash"),
    pytest.param("my data", _volume_name_refusal("my data"), id="space"),
]


@pytest.mark.parametrize(("name", "message"), BAD_VOLUME_NAMES)
def test_a_bad_volume_name_is_refused(subject: Subject, name: str, message: str) -> None:
    """Docker's local driver refuses these names, in these words, both when the volume
    is created and when a container mounts it; nothing is created."""
    # Sorted: Docker lists volumes in no fixed order.
    before = sorted(v.name for v in subject.runtime.list_volumes())

    status, words = subject.answer(400, message)
    created = _refusal(subject.runtime.create_volume, name, {}, status=status)
    status, mount_words = subject.answer(400, message, during="mount", volume=name)
    mounted = _refusal(
        subject.runtime.create_container,
        subject.spec("app", volumes=(NamedVolumeMount(name, "/data"),)),
        status=status,
    )

    assert (words, mount_words) == (created.message, mounted.message)
    assert [] == subject.ours()
    assert before == sorted(v.name for v in subject.runtime.list_volumes())


def test_a_container_creates_the_missing_volume_it_mounts(subject: Subject) -> None:
    """Creating a container that mounts a volume that does not exist creates the volume,
    unlabelled; removing the container leaves the volume (a named volume is not the
    container's: only anonymous ones go with it)."""
    name = subject.volume("auto")

    cid = subject.runtime.create_container(
        subject.spec("app", volumes=(NamedVolumeMount(name, "/data", read_only=True),))
    )

    assert [(name, {})] == [(v.name, v.labels) for v in subject.our_volumes()]
    subject.runtime.remove_container(cid)
    assert [name] == [v.name for v in subject.our_volumes()]


def test_a_volume_in_use_is_not_removed(subject: Subject) -> None:
    """A volume that a container mounts - running or not - cannot be removed; once the
    container is gone it can."""
    name = subject.volume("used")
    subject.runtime.create_volume(name, {})
    cid = subject.runtime.create_container(
        subject.spec("app", volumes=(NamedVolumeMount(name, "/data"),))
    )

    status, message = subject.answer(409, f"remove {name}: volume is in use - [{cid}]")
    error = _refusal(subject.runtime.remove_volume, name, status=status)

    assert message == error.message
    assert [name] == [v.name for v in subject.our_volumes()]
    subject.runtime.remove_container(cid)
    subject.runtime.remove_volume(name)
    assert [] == subject.our_volumes()


def test_a_volume_where_a_bind_is_is_refused(subject: Subject) -> None:
    """Two mounts at one place are refused, whatever their kinds."""
    name = subject.volume("dup")

    status, message = subject.answer(400, "Duplicate mount point: /data")
    error = _refusal(
        subject.runtime.create_container,
        subject.spec(
            "app",
            mounts=(Mount("/tmp", "/data"),),
            volumes=(NamedVolumeMount(name, "/data"),),
        ),
        status=status,
    )

    assert message == error.message
    assert [] == subject.ours()


def test_a_volume_mounted_without_copy_starts_empty(subject: Subject) -> None:
    """An emptyDir's volume (``no_copy``) mounted where the image has a directory with
    files (the test image's ``/etc``) holds none of them: what is in the volume is only
    what was written into it (Docker: the ``nocopy`` bind option)."""
    name = subject.volume("empty")
    subject.runtime.create_volume(name, {})
    root = VolumeEntry(".", EntryKind.DIRECTORY, mode=0o777)
    subject.runtime.write_volume(name, [root])

    cid = subject.runtime.create_container(
        subject.spec("app", volumes=(NamedVolumeMount(name, "/etc", no_copy=True),))
    )

    assert subject.runtime.read_container_file(cid, "/etc/group", limit=100) is None
    written = VolumeEntry("group", EntryKind.FILE, data=b"pod:x:2000:\n")
    subject.runtime.write_volume(name, [written])
    assert b"pod:x:2000:\n" == subject.runtime.read_container_file(cid, "/etc/group", limit=100)
    subject.runtime.remove_container(cid)


def test_a_links_mode_is_always_0777(subject: Subject) -> None:
    """Linux has no mode for a symbolic link (every link is 0777, ``lchmod`` does not
    exist): Docker's untar ignores an entry's mode for one, and so does the fake, while
    a file keeps the mode it was written with."""
    name = subject.volume("links")
    subject.runtime.create_volume(name, {})
    subject.runtime.write_volume(
        name,
        [
            VolumeEntry(".", EntryKind.DIRECTORY, mode=0o755),
            VolumeEntry("app.conf", EntryKind.FILE, mode=0o600, data=b"listen 8080\n"),
            VolumeEntry("private", EntryKind.SYMLINK, mode=0o600, target="app.conf"),
            VolumeEntry("odd", EntryKind.SYMLINK, mode=0o2751, target="app.conf"),
            VolumeEntry("open", EntryKind.SYMLINK, mode=0o777, target="app.conf"),
        ],
    )

    modes = subject.modes(name, ["app.conf", "private", "odd", "open"])

    assert {"app.conf": 0o600, "private": 0o777, "odd": 0o777, "open": 0o777} == modes
