"""What the Docker runtime reads differently from podman's Docker-compatible service than
from Docker (issue 31), case by case, on recorded answers of each engine: the list's
container states and the image names.

The same cases run on the real engines in ``tests/engine/`` (``[docker]``, ``[podman]``);
these pin the reading itself, so that a change to it fails here, on any machine.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import docker
import pytest

from podsync.docker import DockerRuntime
from podsync.runtime.docker._api import familiar_image, image_from_list
from podsync.spec._labels import LABEL_POD_UID

# id, engine, the list's State, its Status, running, its exit read (inspected)
STATES = [
    ("docker-running", "docker", "running", "Up 2 seconds", True, False),
    ("docker-paused", "docker", "paused", "Up 5 minutes (Paused)", True, False),
    ("docker-restarting", "docker", "restarting", "Restarting (1) 2 seconds ago", True, False),
    ("docker-created", "docker", "created", "Created", False, False),
    ("docker-exited", "docker", "exited", "Exited (3) 2 seconds ago", False, True),
    ("docker-dead", "docker", "dead", "Dead", False, True),
    ("docker-removing", "docker", "removing", "Removal In Progress", False, True),
    # podman 4.3 passes its own states through: "stopped" is exited (the process has
    # ended, podman's cleanup has not run yet), "stopping" still runs, "configured" is
    # created and never started.
    ("podman-stopped-is-exited", "podman", "stopped", "Exited (3) 1 second ago", False, True),
    ("podman-exited", "podman", "exited", "Exited (3) 2 seconds ago", False, True),
    ("podman-stopping-still-runs", "podman", "stopping", "Up 3 seconds", True, False),
    ("podman-configured-is-created", "podman", "configured", "Created", False, False),
    ("podman-created", "podman", "created", "Created", False, False),
]


def _listed(state: str, status: str) -> dict[str, Any]:
    """One podsync container as the engine's list shows it, in ``state``."""
    return {
        "Id": "x",
        "Names": ["/k8s_app"],
        "Image": "busybox",
        "Labels": {LABEL_POD_UID: "u"},
        "Created": 1,
        "State": state,
        "Status": status,
    }


@pytest.mark.parametrize(
    ("state", "status", "running", "inspected"),
    [row[2:] for row in STATES],
    ids=[row[0] for row in STATES],
)
def test_the_list_state_says_running_or_exited_on_either_engine(
    state: str, status: str, running: bool, inspected: bool
) -> None:
    """A container runs, has exited (its exit code and finish time read by one
    inspect), or has not started, whichever engine's word for it the list uses."""

    class API:
        base_url = "unix:///stub.sock"

        def __init__(self) -> None:
            self.inspected: list[str] = []

        def containers(self, all: bool) -> list[dict[str, Any]]:
            return [_listed(state, status)]

        def inspect_container(self, container: str) -> dict[str, Any]:
            self.inspected.append(container)
            return {
                "State": {
                    "ExitCode": 3,
                    "StartedAt": "2024-01-01T00:00:00Z",
                    "FinishedAt": "2024-01-01T00:00:01Z",
                }
            }

    api = API()
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=api)))

    (listed,) = runtime.list_containers()

    assert (listed.running, listed.finished_at is not None) == (running, inspected)
    assert api.inspected == (["x"] if inspected else [])
    if inspected:
        assert listed.exit_code == 3


# id, the engine is podman, RepoTags, the tags podsync sees
IMAGE_TAGS = [
    ("docker-as-listed", False, ["podsync-test/busybox:latest"], ["podsync-test/busybox:latest"]),
    # On Docker, localhost/app:1 is the registry localhost's image: app:1 is another.
    ("docker-localhost-is-a-registry", False, ["localhost/app:1"], ["localhost/app:1"]),
    ("podman-localhost-also-short", True, ["localhost/app:1"], ["localhost/app:1", "app:1"]),
    (
        "podman-localhost-path-also-short",
        True,
        ["localhost/podsync-demo/busybox:1"],
        ["localhost/podsync-demo/busybox:1", "podsync-demo/busybox:1"],
    ),
    # A registry on a port of localhost is a registry on podman too.
    (
        "podman-localhost-port-is-a-registry",
        True,
        ["localhost:5000/app:1"],
        ["localhost:5000/app:1"],
    ),
    ("podman-docker-io-short", True, ["docker.io/team/app:1"], ["team/app:1"]),
    ("podman-docker-io-library-short", True, ["docker.io/library/busybox:1"], ["busybox:1"]),
    ("podman-dangling", True, None, []),
]


@pytest.mark.parametrize(
    ("libpod", "repo_tags", "expected"),
    [row[1:] for row in IMAGE_TAGS],
    ids=[row[0] for row in IMAGE_TAGS],
)
def test_podman_s_local_images_are_found_by_the_short_name(
    libpod: bool, repo_tags: list[str] | None, expected: list[str]
) -> None:
    """podman names a local image ``localhost/<name>`` and finds it by ``<name>``: on
    podman podsync lists it under both names; on Docker as it is."""
    entry = {"Id": "sha256:1", "RepoTags": repo_tags, "RepoDigests": None}

    assert list(image_from_list(entry, libpod=libpod).tags) == expected


@pytest.mark.parametrize(
    ("headers", "libpod"),
    [
        ({"API-Version": "1.41"}, False),
        ({"API-Version": "1.41", "Libpod-API-Version": "4.3.1"}, True),
    ],
    ids=["docker", "podman"],
)
def test_the_engine_is_podman_when_its_ping_says_libpod(
    headers: dict[str, str], libpod: bool
) -> None:
    """A runtime on a client passed in asks ``/_ping`` once whether the engine is podman
    (Libpod-API-Version), and lists its images accordingly."""
    import requests.structures

    class Response:
        def __init__(self) -> None:
            self.headers = requests.structures.CaseInsensitiveDict(headers)

        def close(self) -> None:
            pass

    class API:
        base_url = "http+docker://localhost"

        def __init__(self) -> None:
            self.pings = 0

        def get(self, url: str, timeout: int) -> Response:
            assert url.endswith("/_ping")
            self.pings += 1
            return Response()

        def images(self) -> list[dict[str, Any]]:
            return [{"Id": "sha256:1", "RepoTags": ["localhost/app:1"]}]

        def inspect_image(self, image: str) -> dict[str, Any]:
            return {"Config": {"User": ""}}

    api = API()
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=api)))

    (first,) = runtime.list_images()
    runtime.list_images()

    assert ("app:1" in first.tags) == libpod
    assert api.pings == 1


# id, the Image of podman's container list, the image podsync observes
PODMAN_IMAGES = [
    ("hub-official", "docker.io/library/busybox:latest", "busybox:latest"),
    ("hub-team", "docker.io/podsync-test/busybox:latest", "podsync-test/busybox:latest"),
    ("made-here", "localhost/podsync-demo/busybox:1", "podsync-demo/busybox:1"),
    ("library-before-a-path", "docker.io/library/team/app:1", "library/team/app:1"),
    ("registry-on-a-port", "localhost:5000/app:1", "localhost:5000/app:1"),
    ("another-registry", "quay.io/team/app:1", "quay.io/team/app:1"),
    ("image-id", "sha256:0123", "sha256:0123"),
]


@pytest.mark.parametrize(
    ("listed", "expected"),
    [row[1:] for row in PODMAN_IMAGES],
    ids=[row[0] for row in PODMAN_IMAGES],
)
def test_podman_s_qualified_image_names_are_read_in_docker_s_short_form(
    listed: str, expected: str
) -> None:
    """podman lists a container's image fully qualified; podsync observes it in Docker's
    short form, as a pod names it (Docker's list repeats the name given at create)."""
    assert familiar_image(listed) == expected


def _archive(name: str, data: bytes) -> bytes:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# id, the first member of the engine's archive, the base name asked for, what is read
ARCHIVE_ANSWERS = [
    ("the-file-asked-for", "app.conf", "app.conf", b"listen\n"),
    # podman follows the link "current" and answers with its target, named "app.conf";
    # Docker answers with the link itself (no regular file): a link is read as nothing.
    ("podman-a-link-followed", "app.conf", "current", None),
    ("no-name-to-check", "app.conf", None, b"listen\n"),
]


@pytest.mark.parametrize(
    ("member", "asked", "expected"),
    [row[1:] for row in ARCHIVE_ANSWERS],
    ids=[row[0] for row in ARCHIVE_ANSWERS],
)
def test_a_symbolic_link_podman_followed_is_no_file(
    member: str, asked: str | None, expected: bytes | None
) -> None:
    """A file read through the archive API is the file asked for, not the target of a
    link podman followed."""
    from podsync.runtime.docker._archive import first_file

    assert first_file([_archive(member, b"listen\n")], limit=100, name=asked) == expected


# id, the action of an engine's event, the action podsync reads (None: not one of its)
EVENT_WORDS = [
    ("docker-destroy", "destroy", "destroy"),
    ("podman-remove-is-destroy", "remove", "destroy"),
    ("podman-init-is-none-of-ours", "init", None),
    ("podman-cleanup-is-none-of-ours", "cleanup", None),
    ("both-die", "die", "die"),
    # libpod's own word for a death, the one its event filter matches (see below)
    ("podman-died-is-die", "died", "die"),
    ("both-kill", "kill", "kill"),
    ("podman-exec-died-is-none-of-ours", "exec_died", None),
]


@pytest.mark.parametrize(
    ("action", "expected"), [row[1:] for row in EVENT_WORDS], ids=[row[0] for row in EVENT_WORDS]
)
def test_podman_s_event_words_are_read_as_docker_s(action: str, expected: str | None) -> None:
    """podman says "remove" where Docker says "destroy", and libpod "died" where Docker
    says "die"; its own "init", "cleanup" and "exec_died" are not container actions
    podsync follows."""
    from podsync.runtime.docker._api import engine_event

    message = {"Type": "container", "Action": action, "Actor": {"ID": "c", "Attributes": {}}}
    event = engine_event(message)
    assert (event.action if event is not None else None) == expected


# id, the word an engine filters on, the action podsync reads from it. podman 4.3's
# compat events handler sends "die" but filters on libpod's "died": a filter
# event=die gives no death on podman (seen on podman 4.3.1), and the loop would wake on
# its period alone. Docker ignores the words it never sends.
FILTER_WORDS = [
    ("docker-die", "die", "die"),
    ("podman-died", "died", "die"),
    ("docker-destroy", "destroy", "destroy"),
    ("podman-remove", "remove", "destroy"),
    ("both-oom", "oom", "oom"),
    ("both-kill", "kill", "kill"),
]


@pytest.mark.parametrize(
    ("word", "action"), [row[1:] for row in FILTER_WORDS], ids=[row[0] for row in FILTER_WORDS]
)
def test_the_events_filter_asks_in_either_engine_s_words(word: str, action: str) -> None:
    """The stream of engine events asks for each action podsync follows in Docker's word
    and in podman's, and reads either as Docker's."""
    from podsync.runtime.docker import _streams

    class Stream:
        _response = SimpleNamespace(close=lambda: None)

        def __iter__(self) -> Any:
            yield {"Type": "container", "Action": word, "Actor": {"ID": "c", "Attributes": {}}}

        def close(self) -> None:
            pass

    asked: list[dict[str, Any]] = []

    def events(decode: bool, **params: Any) -> Stream:
        asked.append(params["filters"])
        return Stream()

    items, close = _streams.events(SimpleNamespace(events=events), since=None, until=None)
    (event,) = list(items)
    close()

    (filters,) = asked
    assert (word in filters["event"], filters["type"], event.action) == (
        True,
        ["container"],
        action,
    )


def _refusal(status: int, explanation: str) -> docker.errors.APIError:
    response = SimpleNamespace(status_code=status, close=lambda: None)
    return docker.errors.APIError(explanation, response=response, explanation=explanation)


_IMPROPER = "container c is running or paused, refusing to clean up: container state improper"

# id, what the engine answers the first stop, whether inspect says paused, the calls
# the runtime makes, the HTTP status it raises (None: stopped)
PAUSED_STOPS = [
    ("docker-stops-a-paused-one", None, True, ["stop"], None),
    # podman 4.3 refuses the stop of a paused container: resumed, then stopped
    (
        "podman-refuses-paused",
        (500, _IMPROPER),
        True,
        ["stop", "inspect", "unpause", "stop"],
        None,
    ),
    # the same words for a container that is not paused: the refusal stands (a 409)
    ("podman-improper-not-paused", (500, _IMPROPER), False, ["stop", "inspect"], 409),
    ("another-server-error", (500, "cannot kill: EPERM"), True, ["stop"], 500),
    ("docker-conflict", (409, "Conflict"), True, ["stop"], 409),
]


@pytest.mark.parametrize(
    ("first", "paused", "calls", "raised"),
    [row[1:] for row in PAUSED_STOPS],
    ids=[row[0] for row in PAUSED_STOPS],
)
def test_a_paused_container_is_stopped_on_either_engine(
    first: tuple[int, str] | None, paused: bool, calls: list[str], raised: int | None
) -> None:
    """Docker stops a paused container; where podman refuses, the runtime resumes it and
    stops it again. Any other refusal is the stop's."""
    from podsync.exceptions import RuntimeCallError

    class API:
        base_url = "unix:///stub.sock"

        def __init__(self) -> None:
            self.calls: list[str] = []

        def stop(self, container: str, timeout: int) -> None:
            self.calls.append("stop")
            if first is not None and self.calls.count("stop") == 1:
                raise _refusal(*first)

        def inspect_container(self, container: str) -> dict[str, Any]:
            self.calls.append("inspect")
            return {"State": {"Paused": paused, "Running": True}}

        def unpause(self, container: str) -> None:
            self.calls.append("unpause")

    api = API()
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=api)))

    if raised is None:
        runtime.stop_container("c", 1)
    else:
        with pytest.raises(RuntimeCallError) as caught:
            runtime.stop_container("c", 1)
        assert caught.value.status_code == raised
    assert api.calls == calls


# podman's 500s, with libpod's words, and the status Docker answers for the same refusal
PODMAN_500S = [
    ("remove-running", _IMPROPER, 409),
    ("volume-in-use", "remove v: volume is being used", 409),
    (
        "dependents",
        "container n has dependent containers which must be removed before it: a: "
        "container already exists",
        409,
    ),
    (
        "name-in-use",
        "creating container storage: the container name x: that name is already in use",
        409,
    ),
    # an inspect racing a removal (seen in the removal-order engine test)
    (
        "inspect-of-removed",
        "container 787d does not exist in database: no such container",
        404,
    ),
    ("a-real-server-error", "cannot kill: EPERM", 500),
]


@pytest.mark.parametrize(
    ("explanation", "status"),
    [row[1:] for row in PODMAN_500S],
    ids=[row[0] for row in PODMAN_500S],
)
def test_podmans_500s_read_as_dockers_statuses(explanation: str, status: int) -> None:
    """What podman answers with 500 and libpod's words is read as the status Docker
    answers for it; a server error stays one."""
    from podsync.runtime.docker._connection import _docker_status

    assert _docker_status(explanation) == status


def _event_at(moment: float) -> dict[str, Any]:
    return {
        "Type": "container",
        "Action": "die",
        "Actor": {"ID": "c", "Attributes": {}},
        "timeNano": int(moment * 1e9),
    }


@pytest.mark.parametrize("libpod", [False, True], ids=["docker", "podman"])
def test_events_until_a_past_moment(libpod: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """podman answers no events at all for an ``until`` that has passed: it is asked
    until a moment from now, and what came after ``until`` is dropped; Docker is asked
    for ``until`` itself, and its answer is kept whole."""
    from podsync.runtime.docker import _streams

    now = 1_700_000_000.0
    monkeypatch.setattr(_streams, "time", SimpleNamespace(time=lambda: now))
    until = now - 10
    asked: list[float] = []

    class Stream:
        def __iter__(self) -> Any:
            yield _event_at(until - 1)
            yield _event_at(until + 1)

        def close(self) -> None:
            pass

    def events(decode: bool, **params: Any) -> Stream:
        asked.append(float(params["until"]))
        return Stream()

    items, _ = _streams.events(
        SimpleNamespace(events=events), since=None, until=until, libpod=libpod
    )
    times = [round(e.time - until) for e in items]

    if libpod:
        assert ([now + _streams._UNTIL_AHEAD], [-1]) == (asked, times)
    else:
        assert ([until], [-1, 1]) == (asked, times)


def test_a_follow_on_podman_reads_the_new_lines_until_the_container_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """podman sends nothing for a follow until the first line: there a follow is reads
    of the lines after the last one read, until the container no longer runs; a line
    read before is not read again, and a closed follow ends at once."""
    from podsync.runtime._protocol import LogLine
    from podsync.runtime.docker import _streams

    monkeypatch.setattr(_streams, "_FOLLOW_POLL", 0.0)
    monkeypatch.setattr(_streams, "time", SimpleNamespace(time=lambda: 1_700_000_000.0))
    written = [LogLine("stdout", b"one\n", 1.0), LogLine("stdout", b"two\n", 2.0)]
    states = iter([True, True, False])
    reads: list[float | None] = []

    def read(api: Any, container_id: str, **asked: Any) -> tuple[Any, Any]:
        reads.append(asked["since"])
        since = asked["since"]
        lines = [line for line in written if since is None or line.time >= since]
        if len(reads) == 2:
            written.append(LogLine("stderr", b"three\n", 3.0))
        return iter(lines), lambda: None

    monkeypatch.setattr(_streams, "logs", read)
    api = SimpleNamespace(inspect_container=lambda _: {"State": {"Running": next(states)}})

    items, _ = _streams._polled(api, "c", tail=None, since=None)
    seen = [line.data for line in items]
    closed, close = _streams._polled(api, "c", tail=None, since=None)
    close()

    # Each read goes back _FOLLOW_OVERLAP (1 s) before the newest line read.
    assert ([b"one\n", b"two\n", b"three\n"], [None, 1.0, 1.0], []) == (
        seen,
        reads,
        list(closed),
    )


def test_a_follow_on_podman_gives_a_line_stamped_before_one_it_gave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """podman stamps its two streams apart: ``echo out1; echo err1 >&2`` may read as
    out1 first, and err1 - stamped a little earlier - only in the next read. The
    follow gives it all the same (each read goes back a second, and what was given
    is not given twice); with a tail, what is older than the tail stays out."""
    from podsync.runtime._protocol import LogLine
    from podsync.runtime.docker import _streams

    monkeypatch.setattr(_streams, "_FOLLOW_POLL", 0.0)
    monkeypatch.setattr(_streams, "time", SimpleNamespace(time=lambda: 1_700_000_000.0))

    def follow(tail: int | None, reads: list[list[LogLine]]) -> list[bytes]:
        answers = iter(reads)
        states = iter([True] * (len(reads) - 1) + [False])

        def read(api: Any, container_id: str, **asked: Any) -> tuple[Any, Any]:
            since = asked["since"]
            kept = [line for line in next(answers) if since is None or line.time >= since]
            return iter(kept), None

        monkeypatch.setattr(_streams, "logs", read)
        api = SimpleNamespace(inspect_container=lambda _: {"State": {"Running": next(states)}})
        items, _ = _streams._polled(api, "c", tail=tail, since=None)
        return [line.data for line in items]

    out1 = LogLine("stdout", b"out1\n", 10.5)
    err1 = LogLine("stderr", b"err1\n", 10.4)
    out2 = LogLine("stdout", b"out2\n", 12.5)
    old = LogLine("stderr", b"old\n", 10.0)

    assert [b"out1\n", b"err1\n", b"out2\n"] == follow(
        None, [[out1], [out1, err1], [out1, err1, out2]]
    )
    assert [b"out1\n", b"out2\n"] == follow(1, [[out1], [old, out1, out2]])


_GONE_FROM_DATABASE = "container x does not exist in database: no such container"

# id, what the engine answers the inspect of a container removed since it was listed
GONE_SINCE_LISTED = [
    ("docker-404", (404, "No such container: x")),
    # podman 4.3.1 answers 500, with libpod's "no such container" at the end
    ("podman-500-no-such-container", (500, _GONE_FROM_DATABASE)),
]


@pytest.mark.parametrize(
    "answer", [row[1] for row in GONE_SINCE_LISTED], ids=[row[0] for row in GONE_SINCE_LISTED]
)
def test_an_exited_container_removed_since_the_list_is_gone(answer: tuple[int, str]) -> None:
    """A container listed as exited and removed before its inspect is not observed, on
    either engine's answer; the list does not fail."""

    class API:
        base_url = "unix:///stub.sock"

        def containers(self, all: bool) -> list[dict[str, Any]]:
            return [_listed("exited", "Exited (0) 1 second ago")]

        def inspect_container(self, container: str) -> dict[str, Any]:
            raise _refusal(*answer)

    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=API())))

    assert [] == runtime.list_containers()


def test_another_server_error_of_an_inspect_fails_the_list() -> None:
    """Only libpod's "no such container" reads as gone: any other 500 stands."""
    from podsync.exceptions import RuntimeCallError

    class API:
        base_url = "unix:///stub.sock"

        def containers(self, all: bool) -> list[dict[str, Any]]:
            return [{"Id": "x", "Labels": {LABEL_POD_UID: "u"}, "State": "exited"}]

        def inspect_container(self, container: str) -> dict[str, Any]:
            raise _refusal(500, "database is locked")

    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=API())))

    with pytest.raises(RuntimeCallError) as caught:
        runtime.list_containers()
    assert caught.value.status_code == 500


@pytest.mark.parametrize("libpod", [False, True], ids=["docker-domainname", "podman-refuses"])
def test_a_pods_domain_name_is_set_or_refused(libpod: bool) -> None:
    """The pod's domain name is Docker's ``Domainname``; podman can set none (it drops
    the field and refuses the sysctl), so there the create is refused before the engine
    is asked anything, in words that say why."""
    from podsync.actions._actions import CreateSpec
    from podsync.exceptions import RuntimeCallError

    sent: list[dict[str, Any]] = []

    class API:
        base_url = "unix:///stub.sock"

        def create_host_config(self, **host_config: Any) -> dict[str, Any]:
            return host_config

        def create_container(self, image: str, host_config: Any, **container: Any) -> Any:
            sent.append(container)
            return {"Id": "c"}

    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=API())))
    runtime._libpod = libpod
    spec = CreateSpec(name="net", image="pause", hostname="h", domainname="s.ns.svc")

    if libpod:
        with pytest.raises(RuntimeCallError) as caught:
            runtime.create_container(spec)
        assert ([], None) == (sent, caught.value.status_code)
        assert "cannot give a container a domain name (s.ns.svc" in caught.value.message
    else:
        runtime.create_container(spec)
        assert ["s.ns.svc"] == [c["domainname"] for c in sent]
    # Without a domain name, podman creates the container as Docker does.
    runtime.create_container(CreateSpec(name="net2", image="pause", hostname="h"))
    assert None is sent[-1]["domainname"]


@pytest.mark.parametrize("libpod", [False, True], ids=["docker-content", "podman-path"])
def test_a_localhost_seccomp_profile_reaches_either_engine(
    libpod: bool, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Docker gets a Localhost seccomp profile's content in ``SecurityOpt``; podman,
    which opens the value as a path (containers/podman#27710), the profile's absolute
    path - a relative one resolved where podsync read it."""
    from podsync.actions._actions import CreateSpec
    from podsync.model._security import ContainerSecurity

    sent: list[dict[str, Any]] = []

    class API:
        base_url = "unix:///stub.sock"

        def info(self) -> dict[str, Any]:
            return {"SecurityOptions": ["name=seccomp,profile=default"]}

        def create_host_config(self, **host_config: Any) -> dict[str, Any]:
            return host_config

        def create_container(self, image: str, host_config: Any, **container: Any) -> Any:
            sent.append(host_config)
            return {"Id": "c"}

    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "audit.json").write_text('{"defaultAction": "SCMP_ACT_ALLOW"}')
    monkeypatch.chdir(tmp_path)
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=API())))
    runtime._libpod = libpod
    security = ContainerSecurity(seccomp="localhost/profiles/audit.json")

    runtime.create_container(CreateSpec(name="app", image="pause", security=security))

    ((host_config),) = sent
    profile = f"{tmp_path}/profiles/audit.json" if libpod else '{"defaultAction": "SCMP_ACT_ALLOW"}'
    assert [f"seccomp={profile}"] == [
        o for o in host_config["security_opt"] if o.startswith("seccomp=")
    ]


@pytest.mark.parametrize("libpod", [False, True], ids=["docker-copies", "podman-joins-uts"])
def test_a_pods_apps_are_named_and_resolve_as_the_pod_on_either_engine(libpod: bool) -> None:
    """Docker gives a container that joins the network container its hostname and hosts
    file; podman does not, so there the app joins the network container's UTS
    namespace, and gets its hosts file bound at /etc/hosts."""
    from podsync.actions._actions import CreateSpec

    sent: list[dict[str, Any]] = []

    class API:
        base_url = "unix:///stub.sock"

        def create_host_config(self, **host_config: Any) -> dict[str, Any]:
            return {
                "Binds": host_config.get("binds"),
                "NetworkMode": host_config.get("network_mode"),
            }

        def inspect_container(self, container: str) -> dict[str, Any]:
            assert "net" == container
            return {"HostsPath": "/run/net/hosts"}

        def create_container(self, image: str, host_config: Any, **container: Any) -> Any:
            sent.append(host_config)
            return {"Id": "c"}

    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=API())))
    runtime._libpod = libpod

    runtime.create_container(CreateSpec(name="app", image="busybox", join="net"))
    runtime.create_container(CreateSpec(name="net", image="pause", hostname="h"))

    joined = ("container:net", ["/run/net/hosts:/etc/hosts"]) if libpod else (None, [])
    assert [(*joined, "container:net"), (None, [], None)] == [
        (h.get("UTSMode"), h["Binds"], h["NetworkMode"]) for h in sent
    ]


def test_a_tail_on_podman_is_the_last_lines_of_both_streams() -> None:
    """podman answers a tail of n with up to n lines of each stream: the runtime keeps
    the last n of the log, by time, as Docker answers."""
    from podsync.runtime._protocol import LogLine
    from podsync.runtime.docker._streams import _last

    lines = [
        LogLine("stdout", b"out1\n", 1.0),
        LogLine("stderr", b"err1\n", 2.0),
        LogLine("stdout", b"out2\n", 4.0),
    ]
    assert [b"out2\n"] == [line.data for line in _last(iter(lines), 1)]
    assert [b"err1\n", b"out2\n"] == [line.data for line in _last(iter(lines[::-1]), 2)]
    assert [] == list(_last(iter(lines), 0))


_BROKEN = "passing bulk input to subprocess: write |1: broken pipe"
_REPLACED = (
    'copier: put: error setting ownership of "/podsync-volume/termination/k8s_a": '
    "lchown /podsync-volume/termination/k8s_a: no such file or directory"
)


@pytest.mark.parametrize(
    ("libpod", "refusal", "failures", "calls", "raised"),
    [
        (True, _BROKEN, 1, 2, False),  # podman's tar broke once: written on the second try
        (True, _REPLACED, 1, 2, False),  # another upload replaced the file: written again
        (True, _BROKEN, 3, 3, True),  # three times: the failure stands
        (True, "copier: put: permission denied", 1, 1, True),  # any other: it stands
        (False, _BROKEN, 1, 1, True),  # Docker: never retried
    ],
    ids=[
        "podman-retried",
        "podman-replaced-retried",
        "podman-gives-up",
        "podman-other-not-retried",
        "docker-not-retried",
    ],
)
def test_a_broken_archive_upload_is_retried_on_podman(
    libpod: bool, refusal: str, failures: int, calls: int, raised: bool
) -> None:
    """podman's archive upload sometimes fails with its tar process's broken pipe (HTTP
    500, on a loaded machine), or because a concurrent upload of the same file (two
    syncs of one pod) replaced it under this one; the runtime writes the same entries
    again, twice at most, on podman only."""
    from podsync.exceptions import RuntimeCallError
    from podsync.model._volume_entries import EntryKind, VolumeEntry

    class API:
        base_url = "unix:///stub.sock"

        def __init__(self) -> None:
            self.calls = 0

        def put_archive(self, container: str, path: str, data: bytes) -> bool:
            self.calls += 1
            if self.calls <= failures:
                raise _refusal(500, refusal)
            return True

    api = API()
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=api)))
    runtime._libpod = libpod
    entries = [VolumeEntry("key", EntryKind.FILE, data=b"value")]
    if raised:
        with pytest.raises(RuntimeCallError, match=refusal.split(":")[-1].strip()):
            runtime.write_volume("v", entries, through="net")
    else:
        runtime.write_volume("v", entries, through="net")
    assert calls == api.calls


@pytest.mark.parametrize(
    ("libpod", "explanation", "raised"),
    [
        (True, "volume with name data already exists: volume already exists", False),
        (True, "no space left on device", True),
        (False, "volume with name data already exists: volume already exists", True),
    ],
    ids=["podman-made-meanwhile", "podman-other-refusal", "docker-never-answers-so"],
)
def test_a_volume_made_by_an_overlapping_create_counts_as_made_on_podman(
    libpod: bool, explanation: str, raised: bool
) -> None:
    """Two creates of one volume that overlap on podman: the later one fails with
    "volume already exists" (two syncs of one pod racing); the volume exists, as a
    create on Docker would answer, so the runtime goes on. Any other refusal stands,
    and Docker, which answers a create of an existing volume with it, is not second
    guessed."""
    from podsync.exceptions import RuntimeCallError

    class API:
        base_url = "unix:///stub.sock"

        def create_volume(self, name: str, **options: Any) -> Any:
            raise _refusal(500, explanation)

    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=API())))
    runtime._libpod = libpod
    if raised:
        with pytest.raises(RuntimeCallError, match=explanation.split(":")[-1].strip()):
            runtime.create_volume("data", {"io.podsync.pod.uid": "u"})
    else:
        runtime.create_volume("data", {"io.podsync.pod.uid": "u"})


_STATE_FILE = "/var/lib/containers/storage/volumes/podsync-state_86448be8/_data/termination/k8s_b_0"


@pytest.mark.parametrize(
    ("refusal", "failures", "calls", "raised"),
    [
        # podman's words when another sync's upload had removed the file it binds
        (
            f'runc create failed: error mounting "{_STATE_FILE}" to rootfs at '
            f'"/dev/termination-log": stat {_STATE_FILE}: no such file or directory',
            1,
            2,
            False,
        ),
        (
            f'error mounting "{_STATE_FILE}" to rootfs: stat {_STATE_FILE}: '
            "no such file or directory",
            3,
            3,
            True,
        ),
        # a command the image lacks: the same errno, never tried again
        (
            'exec: "nosuch": executable file not found in $PATH: no such file or directory',
            1,
            1,
            True,
        ),
    ],
    ids=["replaced-file-retried", "still-missing-gives-up", "missing-command-stands"],
)
def test_a_start_that_met_a_termination_file_being_rewritten_is_tried_again(
    refusal: str, failures: int, calls: int, raised: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two syncs of one pod at once: the second's upload of the termination-message
    files replaces the first's, and a start in between finds the bound file missing.
    The runtime starts again after a short pause (three tries at most); any other
    refusal stands."""
    from podsync.exceptions import RuntimeCallError
    from podsync.runtime.docker import _containers

    pauses: list[float] = []
    monkeypatch.setattr(_containers, "time", SimpleNamespace(sleep=pauses.append))

    class API:
        base_url = "unix:///stub.sock"

        def __init__(self) -> None:
            self.calls = 0

        def start(self, container: str) -> None:
            self.calls += 1
            if self.calls <= failures:
                raise _refusal(500, refusal)

    api = API()
    runtime = DockerRuntime(client=cast(docker.DockerClient, SimpleNamespace(api=api)))
    runtime._libpod = False
    if raised:
        with pytest.raises(RuntimeCallError, match="no such file or directory"):
            runtime.start_container("c")
    else:
        runtime.start_container("c")
    assert calls == api.calls
    assert [_containers._REPLACED_FILE_PAUSE] * min(failures, calls - 1) == pauses
