"""One bad file is one bad file (issue 27): a file of a directory that is not a pod
stops nothing but itself.

The modern kubelet's file source (``extractFromDir``, ``pkg/kubelet/config/file.go``)
logs a file it cannot process and runs the others, and does not read names that start
with a dot. Here, for the loop's sources (``SourceSet``): each file keeps its last good
pods, the bad one is reported until it is fixed, and a file that was never good makes
its source not ready (deletions of its kind wait: the pods it may hold are unknown).
For a one-shot load (``load_pods(on_bad_file=...)``): the good files' pods, and each
bad file's problems with its ``$.path``. A missing ConfigMap key is not a bad file: it
holds that one container (``CreateContainerConfigError``). Files on disk, no clock.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from podsync.exceptions import ConfigError
from podsync.host._node import NodeInfo
from podsync.load._config import load_pods
from podsync.load._source_set import SourceSet

NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)


def pod(name: str, image: str = "busybox:1", env: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n"
        f"  - name: app\n    image: {image}\n{env}"
    )


def key_env(optional: bool = False) -> str:
    flag = ", optional: true" if optional else ""
    return (
        "    env:\n    - name: GREETING\n      valueFrom:\n"
        f"        configMapKeyRef: {{name: greetings, key: hello{flag}}}\n"
    )


GREETINGS = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greetings}\ndata: {hi: there}\n"
NOTES = "Notes: remember: the db needs a restart\n  - on Mondays\n"
HELD = "couldn't find key 'hello' in ConfigMap default/greetings (not optional)"

# Each case is a sequence of polls of one directory: the files written (None: removed)
# before the poll, then what the merged desired state is - the pods as "name:image"
# (with "!" when its container is held by a config error), the files reported as bad,
# and whether the source is ready (deletions of its kind allowed).
CASES: list[tuple[str, list[tuple[dict[str, str | None], list[str], list[str], bool]]]] = [
    (
        "stray-text-file",
        [
            ({"a.yaml": pod("a"), "b.yaml": pod("b")}, ["a:busybox:1", "b:busybox:1"], [], True),
            # Added later, never good: it may hold pods nobody knows of.
            ({"NOTES.txt": NOTES}, ["a:busybox:1", "b:busybox:1"], ["NOTES.txt"], False),
            ({"NOTES.txt": None}, ["a:busybox:1", "b:busybox:1"], [], True),
        ],
    ),
    (
        "editor-backup-file",
        [
            ({"a.yaml": pod("a")}, ["a:busybox:1"], [], True),
            # pod.yaml~ holds the pod again: the later definition is the bad one.
            ({"a.yaml~": pod("a", "busybox:2")}, ["a:busybox:1"], ["a.yaml~"], False),
        ],
    ),
    (
        "hidden-file-not-read",
        [
            ({"a.yaml": pod("a"), ".a.yaml.swp": "\0\1binary"}, ["a:busybox:1"], [], True),
        ],
    ),
    (
        "empty-file-keeps-its-pods",
        [
            ({"a.yaml": pod("a"), "b.yaml": pod("b")}, ["a:busybox:1", "b:busybox:1"], [], True),
            # What a reader sees of a file truncated to be rewritten.
            ({"b.yaml": ""}, ["a:busybox:1", "b:busybox:1"], ["b.yaml"], True),
        ],
    ),
    (
        "bad-yaml-then-fixed",
        [
            ({"a.yaml": pod("a"), "b.yaml": pod("b")}, ["a:busybox:1", "b:busybox:1"], [], True),
            (
                {"b.yaml": "kind: [\n", "a.yaml": pod("a", "busybox:2")},
                ["a:busybox:2", "b:busybox:1"],
                ["b.yaml"],
                True,
            ),
            ({"b.yaml": pod("b", "busybox:2")}, ["a:busybox:2", "b:busybox:2"], [], True),
        ],
    ),
    (
        "invalid-pod-keeps-its-last-good-one",
        [
            ({"a.yaml": pod("a"), "b.yaml": pod("b")}, ["a:busybox:1", "b:busybox:1"], [], True),
            ({"b.yaml": pod("b", "Bad Image")}, ["a:busybox:1", "b:busybox:1"], ["b.yaml"], True),
        ],
    ),
    (
        "file-removed",
        [
            ({"a.yaml": pod("a"), "b.yaml": pod("b")}, ["a:busybox:1", "b:busybox:1"], [], True),
            ({"b.yaml": None}, ["a:busybox:1"], [], True),
        ],
    ),
    (
        "bad-file-removed",
        [
            ({"a.yaml": pod("a"), "b.yaml": pod("b")}, ["a:busybox:1", "b:busybox:1"], [], True),
            ({"b.yaml": "kind: [\n"}, ["a:busybox:1", "b:busybox:1"], ["b.yaml"], True),
            ({"b.yaml": None}, ["a:busybox:1"], [], True),
        ],
    ),
    (
        "first-start-with-a-bad-file",
        [
            ({"a.yaml": pod("a"), "b.yaml": "kind: [\n"}, ["a:busybox:1"], ["b.yaml"], False),
            ({"b.yaml": pod("b")}, ["a:busybox:1", "b:busybox:1"], [], True),
        ],
    ),
    (
        "missing-key-beside-good-pods",
        [
            (
                {"a.yaml": pod("a", env=key_env()), "b.yaml": pod("b"), "c.yaml": GREETINGS},
                ["a:busybox:1!", "b:busybox:1"],
                [],
                True,
            ),
            # The key arrives: the container can be made.
            (
                {"c.yaml": GREETINGS.replace("hi:", "hello:")},
                ["a:busybox:1", "b:busybox:1"],
                [],
                True,
            ),
        ],
    ),
    (
        "missing-optional-key",
        [
            (
                {"a.yaml": pod("a", env=key_env(optional=True)), "c.yaml": GREETINGS},
                ["a:busybox:1"],
                [],
                True,
            ),
        ],
    ),
]


def write(directory: Path, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        if text is None:
            os.remove(directory / name)
        else:
            (directory / name).write_text(text)


def shown(pods: tuple[object, ...]) -> list[str]:
    """Each pod as ``name:image``, ``!`` when its container is held by a config error."""
    out = []
    for p in pods:
        (c,) = p.containers  # type: ignore[attr-defined]
        out.append(f"{p.name}:{c.image}{'!' if c.config_error else ''}")  # type: ignore[attr-defined]
    return out


@pytest.mark.parametrize("polls", [case[1] for case in CASES], ids=[case[0] for case in CASES])
def test_a_bad_file_of_a_watched_directory_is_one_bad_file(
    tmp_path: Path, polls: list[tuple[dict[str, str | None], list[str], list[str], bool]]
) -> None:
    """Poll by poll: the good files' pods are taken, a bad file keeps its last good pods
    (none when it never was good, and then the source is not ready) and is reported,
    naming it, at each poll until it is fixed."""
    pods = tmp_path / "pods"
    pods.mkdir()
    sources = SourceSet([str(pods)], node=NODE)
    seen = []
    for files, _, _, _ in polls:
        write(pods, files)
        errors = sources.update({str(pods): sources.poll(str(pods))}).errors
        # Each problem starts with its file.
        message = errors.get(str(pods), "")
        named = sorted({Path(part.split(": ", 1)[0]).name for part in message.split("; ") if part})
        seen.append((shown(sources.desired), named, str(pods) not in sources.not_ready))

    assert [(want, bad, ready) for _, want, bad, ready in polls] == seen


def test_a_bad_file_is_reported_at_every_poll_with_its_path(tmp_path: Path) -> None:
    """An unchanged bad file is said again at each poll (the loop logs what ``update``
    returns), with the file and the ``$.path`` of the problem."""
    pods = tmp_path / "pods"
    pods.mkdir()
    write(pods, {"a.yaml": pod("a"), "b.yaml": pod("b", "Bad Image")})
    sources = SourceSet([str(pods)], node=NODE)

    first = sources.update({str(pods): sources.poll(str(pods))}).errors
    again = sources.update({str(pods): sources.poll(str(pods))}).errors

    assert first == again
    assert [str(pods)] == list(first)
    assert first[str(pods)].startswith(f"{pods / 'b.yaml'}: $.spec.containers[0].image: ")


def test_a_refused_duplicate_is_taken_once_the_other_definition_goes(tmp_path: Path) -> None:
    """The later of two definitions is refused; when the first leaves (another source
    changed), the refused one is tried again and taken."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    write(first, {"a.yaml": pod("a")})
    write(second, {"a.yaml": pod("a", "busybox:2"), "b.yaml": pod("b")})
    sources = SourceSet([str(first), str(second)], node=NODE)
    sources.update({s: sources.poll(s) for s in sources.names})
    assert ["a:busybox:1", "b:busybox:1"] == shown(sources.desired)

    write(first, {"a.yaml": None})
    result = sources.update({str(first): sources.poll(str(first))})

    assert ({}, ["a:busybox:2", "b:busybox:1"]) == (result.errors, shown(sources.desired))


# A one-shot load of a directory: (id, files, the pods loaded, the bad files named).
ONE_SHOT_CASES = [
    ("stray-text-file", {"a.yaml": pod("a"), "NOTES.txt": NOTES}, ["a:busybox:1"], ["NOTES.txt"]),
    ("editor-backup-file", {"a.yaml": pod("a"), "a.yaml~": pod("a")}, ["a:busybox:1"], ["a.yaml~"]),
    ("hidden-file-not-read", {"a.yaml": pod("a"), ".#a.yaml": "kind: ["}, ["a:busybox:1"], []),
    ("empty-file", {"a.yaml": pod("a"), "b.yaml": ""}, ["a:busybox:1"], ["b.yaml"]),
    (
        "invalid-pod",
        {"a.yaml": pod("a"), "b.yaml": pod("b", "Bad Image")},
        ["a:busybox:1"],
        ["b.yaml"],
    ),
    # The objects of a bad file do not count: the pod that reads them is held.
    (
        "objects-of-a-bad-file",
        {
            "a.yaml": pod("a", env=key_env()),
            "c.yaml": GREETINGS.replace("hi:", "hello:") + "---\n" + pod("z", "Bad Image"),
        },
        ["a:busybox:1!"],
        ["c.yaml"],
    ),
    (
        "missing-key-beside-good-pods",
        {"a.yaml": pod("a", env=key_env()), "b.yaml": pod("b")},
        ["a:busybox:1!", "b:busybox:1"],
        [],
    ),
    ("missing-optional-key", {"a.yaml": pod("a", env=key_env(optional=True))}, ["a:busybox:1"], []),
]


@pytest.mark.parametrize(
    ("files", "expected", "named"),
    [case[1:] for case in ONE_SHOT_CASES],
    ids=[case[0] for case in ONE_SHOT_CASES],
)
def test_a_one_shot_load_takes_the_good_files_and_names_the_bad(
    tmp_path: Path, files: dict[str, str | None], expected: list[str], named: list[str]
) -> None:
    """``load_pods(on_bad_file=...)``: the pods of the good files, each bad file's
    problems (one call per file, with its source); without it, every problem fails the
    load as before."""
    write(tmp_path, files)
    bad: list[ConfigError] = []

    pods = load_pods([str(tmp_path)], node=NODE, on_bad_file=bad.append)

    assert expected == shown(pods)
    assert [str(tmp_path / name) for name in named] == [error.problems[0].source for error in bad]
    assert all({e.problems[0].source} == {p.source for p in e.problems} for e in bad)
    if named:
        with pytest.raises(ConfigError):
            load_pods([str(tmp_path)], node=NODE)
