"""One bad file is one bad file, through ``podsync run``'s loop (issue 27).

Measured before: a ``NOTES.txt`` beside two pod files in the watched directory meant no
pod started at all. The modern kubelet's file source (``extractFromDir``) logs such a
file and runs the others. Here, on FakeRuntime with a fake clock: the good files' pods
run, a bad file keeps its last good pods and is logged at each poll with its path, a
file that was never good deletes nothing, and a missing ConfigMap key holds one
container (``CreateContainerConfigError``) while the other pods run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from podsync.testing import FakeRuntime
from tests.unit.loop.test_reconciler import Loop, make_loop, pod_yaml

NOTES = "Notes: remember: the db needs a restart\n  - on Mondays\n"
GREETINGS = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greetings}\ndata: {hi: there}\n"


def with_key(name: str, optional: bool = False) -> str:
    flag = ", optional: true" if optional else ""
    return pod_yaml(name) + (
        "    env:\n    - name: GREETING\n      valueFrom:\n"
        f"        configMapKeyRef: {{name: greetings, key: hello{flag}}}\n"
    )


# (id, files a previous run of podsync ran (None: a fresh engine), the files at the
# start, the change after the first round (None: removed), the pods running after the
# first round and after the change, the files the last round logged as bad).
CASES = [
    (
        "stray-text-file",
        None,
        {"a.yaml": pod_yaml("a"), "b.yaml": pod_yaml("b"), "NOTES.txt": NOTES},
        {},
        {"a", "b"},
        {"a:busybox:1", "b:busybox:1"},
        ["NOTES.txt"],
    ),
    (
        "editor-backup-file",
        None,
        {"a.yaml": pod_yaml("a")},
        {"a.yaml~": pod_yaml("a", "busybox:2")},
        {"a"},
        {"a:busybox:1"},
        ["a.yaml~"],
    ),
    (
        "hidden-file",
        None,
        {"a.yaml": pod_yaml("a"), ".a.yaml.swp": "\0"},
        {},
        {"a"},
        {"a:busybox:1"},
        [],
    ),
    (
        "empty-file",
        None,
        {"a.yaml": pod_yaml("a"), "b.yaml": pod_yaml("b")},
        {"b.yaml": ""},
        {"a", "b"},
        {"a:busybox:1", "b:busybox:1"},
        ["b.yaml"],
    ),
    (
        "bad-yaml-then-fixed",
        None,
        {"a.yaml": pod_yaml("a"), "b.yaml": "kind: [\n"},
        {"b.yaml": pod_yaml("b", "busybox:2")},
        {"a"},
        {"a:busybox:1", "b:busybox:2"},
        [],
    ),
    (
        "bad-yaml-keeps-the-running-pod",
        None,
        {"a.yaml": pod_yaml("a"), "b.yaml": pod_yaml("b")},
        {"b.yaml": "kind: [\n"},
        {"a", "b"},
        {"a:busybox:1", "b:busybox:1"},
        ["b.yaml"],
    ),
    (
        "file-removed",
        None,
        {"a.yaml": pod_yaml("a"), "b.yaml": pod_yaml("b")},
        {"b.yaml": None},
        {"a", "b"},
        {"a:busybox:1"},
        [],
    ),
    # podsync restarted: b's pod runs from before, its file is bad from the start: the
    # pods it holds are unknown, so nothing is deleted (c's removal waits too); fixed,
    # the deletions happen.
    (
        "first-start-with-a-bad-file",
        {"a.yaml": pod_yaml("a"), "b.yaml": pod_yaml("b"), "c.yaml": pod_yaml("c")},
        {"a.yaml": pod_yaml("a"), "b.yaml": "kind: [\n", "c.yaml": None},
        {"b.yaml": pod_yaml("b")},
        {"a", "b", "c"},
        {"a:busybox:1", "b:busybox:1"},
        [],
    ),
    (
        "missing-key-beside-good-pods",
        None,
        {"a.yaml": with_key("a"), "b.yaml": pod_yaml("b"), "c.yaml": GREETINGS},
        {"c.yaml": GREETINGS.replace("hi:", "hello:")},
        {"b"},
        {"a:busybox:1", "b:busybox:1"},
        [],
    ),
    (
        "missing-optional-key",
        None,
        {"a.yaml": with_key("a", optional=True), "c.yaml": GREETINGS},
        {},
        {"a"},
        {"a:busybox:1"},
        [],
    ),
]


def write(directory: Path, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        if text is None:
            (directory / name).unlink()
        else:
            (directory / name).write_text(text)


def pods_running(loop: Loop, images: bool) -> set[str]:
    """The pods whose app container runs; ``name:image`` for those ``images`` asks."""
    return {
        c.labels["io.podsync.pod.name"] + (f":{c.image}" if images else "")
        for c in loop.fake.containers
        if c.running and c.labels.get("io.podsync.container.name") == "app"
    }


@pytest.mark.parametrize(
    ("earlier", "start", "change", "first", "after", "logged"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_bad_file_in_the_watched_directory_stops_nothing_but_itself(
    tmp_path: Path,
    earlier: dict[str, str] | None,
    start: dict[str, str | None],
    change: dict[str, str | None],
    first: set[str],
    after: set[str],
    logged: list[str],
) -> None:
    """Round by round: what runs after the first round and after the change, and the
    files the last round's source-error notices name (each with its path)."""
    pods = tmp_path / "pods"
    pods.mkdir()
    fake: FakeRuntime | None = None
    if earlier is not None:
        write(pods, dict(earlier))
        before = make_loop(tmp_path, [str(pods)])
        before.tick()
        fake = before.fake
    write(pods, start)
    loop = make_loop(tmp_path, [str(pods)], fake=fake, source_period=1)
    loop.tick()
    running_first = pods_running(loop, False)
    write(pods, change)
    loop.notices.clear()
    loop.advance(1)

    named = sorted(
        {
            Path(part.split(": ", 1)[0]).name
            for n in loop.kinds("source-error")
            for part in n.message.split("; ")
        }
    )
    assert (first, after, logged) == (running_first, pods_running(loop, True), named)


def test_a_missing_key_shows_as_create_container_config_error(tmp_path: Path) -> None:
    """The held container's status is the kubelet's: waiting, reason
    CreateContainerConfigError, its message naming the object and the key."""
    pods = tmp_path / "pods"
    pods.mkdir()
    write(pods, {"a.yaml": with_key("a"), "b.yaml": pod_yaml("b"), "c.yaml": GREETINGS})
    loop = make_loop(tmp_path, [str(pods)])
    loop.tick()

    (statuses,) = loop.board.named("pods_seen")[-1]
    by_pod = {s.pod: s for s in statuses}
    (app,) = by_pod["default/a"].containers

    assert ("waiting", "CreateContainerConfigError") == (app.state.value, app.reason)
    assert "app: couldn't find key 'hello' in ConfigMap default/greetings (not optional)" == (
        app.message
    )
    assert {"b"} == pods_running(loop, False)
    assert [] == loop.kinds("source-error")


def test_a_running_container_is_kept_when_its_key_goes(tmp_path: Path) -> None:
    """The kubelet resolves env at a start only: a key taken away does not stop the
    container that runs with it; it holds the next start."""
    pods = tmp_path / "pods"
    pods.mkdir()
    write(pods, {"a.yaml": with_key("a"), "c.yaml": GREETINGS.replace("hi:", "hello:")})
    loop = make_loop(tmp_path, [str(pods)], source_period=1)
    loop.tick()
    running = {c.id for c in loop.fake.containers if c.running}

    write(pods, {"c.yaml": GREETINGS})
    loop.advance(1)

    assert (2, running) == (len(running), {c.id for c in loop.fake.containers if c.running})
