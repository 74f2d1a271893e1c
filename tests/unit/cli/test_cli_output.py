"""``-o FORMAT`` / ``--output FORMAT`` (issue 30): kubectl's formats wherever kubectl has
one, on a ``FakeRuntime``. One row per command and format: ``yaml`` is the ``json``
document itself (the same data, the keys in the same order), ``-o json`` is ``--json``,
``name`` lines name the pods the command is about, ``wide`` adds IP, SCOPE and IMAGES;
an unknown format is a usage error listing the command's formats. Saved plans move to
``--out FILE``; ``plan -o FILE`` still saves, with a warning, for one release.

Each run gets a world of its own (a fake engine and clock, with the same pods applied
the same way), so that a command that changes the engine (apply, down) can be run in
two formats from the same state and the outputs compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from podsync.cli import _main as cli
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.cli.test_cli_unit import IMAGE, PAUSE, T0, Result, pod_yaml, write

#: The address the fake engine gives every container that has a network.
ADDRESS = "10.1.2.3"


class World:
    """A fake engine with ``web`` running in the scope ``team-a`` on the engine's
    network, and ``job`` (unscoped, network mode none) completed; a pod file ``new``
    that is not applied; ``plan.json`` a saved plan that creates it."""

    def __init__(self, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
        self.clock = FakeClock(T0, step=0.001)
        self.fake = FakeRuntime(images=[IMAGE, PAUSE], clock=self.clock, address=ADDRESS)
        self.capsys = capsys
        self.root = tmp_path / name / "root"
        files = tmp_path / "files"
        files.mkdir(exist_ok=True)
        self.web = write(files, "web.yaml", pod_yaml("web"))
        self.job = write(files, "job.yaml", pod_yaml("job", restart="Never", command=["true"]))
        self.new = write(files, "new.yaml", pod_yaml("new"))
        (tmp_path / name).mkdir()
        self.saved = str(tmp_path / name / "plan.json")
        assert 0 == self.run("apply", "--scope", "team-a", self.web, network=False).code
        assert 0 == self.run("apply", self.job).code
        job = next(c for c in self.fake.containers if c.labels.get("io.podsync.pod.name") == "job")
        self.fake.exit(job.id, 0)
        assert 0 == self.run("plan", "--out", self.saved, self.new).code
        self.clock.advance(125)

    def run(self, *argv: str, network: bool = True) -> Result:
        """``podsync ARGV`` on this world's engine; plan, apply, down and status get its
        root directory, and (``network``) network mode none."""
        args = list(argv)
        if args[0] in ("plan", "apply", "down", "status") and "--plan" not in args:
            args[1:1] = ["--root-dir", str(self.root), "--network-image", PAUSE]
            if network and args[0] != "down":
                args[1:1] = ["--network-mode", "none"]
        code = cli.main(
            args, runtime_factory=lambda host: self.fake, clock=self.clock, sleep=self.clock.advance
        )
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err
        return Result(code, captured.out, captured.err)


@pytest.fixture
def worlds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Callable[[], World]:
    """Makes a new world each call, in the same state as the others."""
    made: list[World] = []

    def make() -> World:
        made.append(World(tmp_path, f"world{len(made)}", capsys))
        return made[-1]

    return make


# The arguments of each command, in a world (after the command's name and -o FORMAT).
Args = Callable[[World], list[str]]
COMMANDS: dict[str, Args] = {
    # Without SOURCEs: every pod podsync runs, as the engine shows it.
    "status": lambda w: [],
    # Without --scope, plan and apply own the pods of their sources only.
    "plan": lambda w: [w.new],
    "show": lambda w: [w.saved],
    "apply": lambda w: [w.new],
    "apply --plan": lambda w: ["--plan", w.saved],
    "apply --wait": lambda w: ["--wait", w.new],
    "down": lambda w: [w.web, w.job],
    "events": lambda w: [],
}


def podsync(world: World, command: str, *options: str) -> Result:
    """``command`` (a row's: ``apply --plan`` is apply) with ``options`` in ``world``."""
    return world.run(command.split()[0], *options, *COMMANDS[command](world))


def parsed(command: str, fmt: str, out: str) -> Any:
    """The data of an output: the document, or (events: a stream) the records."""
    if command == "events":
        if fmt == "json":
            return [json.loads(line) for line in out.splitlines()]
        return list(yaml.safe_load_all(out))
    return json.loads(out) if fmt == "json" else yaml.safe_load(out)


def key_orders(data: Any) -> list[list[str]]:
    """The keys of every mapping in ``data``, in their order, depth first."""
    found: list[list[str]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            found.append(list(value))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(data)
    return found


DOCUMENTS = ["status", "plan", "show", "apply", "apply --plan", "apply --wait", "down", "events"]


@pytest.mark.parametrize("command", DOCUMENTS, ids=DOCUMENTS)
def test_yaml_is_the_json_document(worlds: Callable[[], World], command: str) -> None:
    """``-o yaml`` prints the data ``-o json`` prints, with the keys in the JSON's order
    (events: a YAML document per JSON line)."""
    one, other = worlds(), worlds()
    as_json = podsync(one, command, "-o", "json")
    as_yaml = podsync(other, command, "-o", "yaml")

    assert (0, 0) == (as_json.code, as_yaml.code), as_json.err + as_yaml.err
    data = parsed(command, "json", as_json.out)
    # The two worlds differ in their root directories only.
    same = parsed(command, "yaml", as_yaml.out.replace(str(other.root), str(one.root)))
    assert data  # something to compare: a document, or some events
    assert data == same
    assert key_orders(data) == key_orders(same)


JSON_FLAGS = ["status", "plan", "show", "apply", "apply --wait", "down", "events"]


@pytest.mark.parametrize("command", JSON_FLAGS, ids=JSON_FLAGS)
def test_the_json_flag_is_output_json(worlds: Callable[[], World], command: str) -> None:
    """``--json`` stays, as ``-o json``: the same text."""
    one, other = worlds(), worlds()
    flag = podsync(one, command, "--json")
    option = podsync(other, command, "--output", "json")

    assert (0, 0) == (flag.code, option.code), flag.err + option.err
    assert flag.out == option.out.replace(str(other.root), str(one.root))
    assert parsed(command, "json", option.out)


NAMES: list[tuple[str, list[str]]] = [
    ("status", ["pod/default/job", "pod/default/web"]),
    # web and job are as their files say: only new is created.
    ("plan", ["pod/default/new"]),
    ("show", ["pod/default/new"]),
    ("apply", ["pod/default/new"]),
    ("apply --plan", ["pod/default/new"]),
    ("apply --wait", ["pod/default/new"]),
    ("down", ["pod/default/job", "pod/default/web"]),
]


@pytest.mark.parametrize(("command", "names"), NAMES, ids=[row[0] for row in NAMES])
def test_names_are_the_pods_the_command_is_about(
    worlds: Callable[[], World], command: str, names: list[str]
) -> None:
    """``-o name``: one ``pod/NAMESPACE/NAME`` line per pod - the pods listed (status),
    those the plan changes (plan, show), those changed (apply, down) - and nothing else
    on standard output."""
    result = podsync(worlds(), command, "-o", "name")

    assert 0 == result.code, result.err
    assert names == result.out.splitlines()


def test_apply_json_says_what_apply_did(worlds: Callable[[], World]) -> None:
    """``apply -o json``: the outcome, the counts of the actions, the pods changed; no
    plan or summary lines on standard output."""
    world = worlds()
    before = len(world.fake.calls)

    result = podsync(world, "apply", "-o", "json")

    # A create action is the engine's create and start: one action done per container.
    creates = [c for c in world.fake.calls[before:] if c.name == "create"]
    document = json.loads(result.out)
    assert 0 == result.code, result.err
    assert {
        "format_version": 1,
        "ok": True,
        "applied": True,
        "changes": True,
        "rejected": [],
        "failed": 0,
        "skipped": 0,
        "failures": [],
        "changed": ["default/new"],
    }.items() <= document.items()
    assert len(creates) == document["done"] == 2  # new's network container and app
    assert document["summary"].startswith("Plan: ")


def test_apply_json_of_a_failed_apply(worlds: Callable[[], World]) -> None:
    """A pod whose actions failed is not among the pods changed; the failure is in the
    document, the error on standard error, and the exit code 1."""
    world = worlds()
    world.fake.fail("create", match="new", error="no space left")

    result = podsync(world, "apply", "-o", "json")

    document = json.loads(result.out)
    assert 1 == result.code
    assert (False, [], 1) == (document["ok"], document["changed"], document["failed"])
    assert ["no space left"] == [f.rpartition(": ")[2] for f in document["failures"]]
    assert "no space left" in result.err


def test_apply_wait_json_says_how_each_pod_ended(worlds: Callable[[], World]) -> None:
    """``apply --wait -o json``: the apply's document, ``wait`` each pod's outcome, and
    no per-pod lines on standard output (the waiting notes go to standard error)."""
    result = podsync(worlds(), "apply --wait", "-o", "json")

    document = json.loads(result.out)
    assert 0 == result.code, result.err
    assert (True, ["default/new"]) == (document["ok"], document["changed"])
    assert [("default/new", "running", "Running")] == [
        (p["pod"], p["state"], p["phase"]) for p in document["wait"]
    ]
    assert "Waiting up to" in result.err


def test_apply_json_without_changes(worlds: Callable[[], World]) -> None:
    """An apply with nothing to do applied nothing and changed no pod."""
    world = worlds()
    assert 0 == podsync(world, "apply").code

    result = podsync(world, "apply", "-o", "json")

    document = json.loads(result.out)
    assert 0 == result.code, result.err
    assert (False, False, [], 0) == (
        document["applied"],
        document["changes"],
        document["changed"],
        document["done"],
    )


def test_down_json_of_sources_without_pods(worlds: Callable[[], World], tmp_path: Path) -> None:
    """Nothing to remove is still a document: nothing applied, no pod changed."""
    world = worlds()
    # A source that holds no pod: a Secret alone.
    empty = write(tmp_path, "secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")

    result = world.run("down", "-o", "json", empty)

    assert 0 == result.code, result.err
    assert {"ok": True, "applied": False, "changed": []}.items() <= json.loads(result.out).items()


def test_status_wide_adds_ip_scope_and_images(worlds: Callable[[], World]) -> None:
    """``status -o wide``: kubectl's columns, then IP (the network container's address,
    ``<none>`` in network mode none), SCOPE (``<none>`` for an unscoped pod) and
    IMAGES."""
    result = podsync(worlds(), "status", "-o", "wide")

    assert 0 == result.code, result.err
    header, *rows = [line.split() for line in result.out.splitlines()]
    assert ["POD", "READY", "PHASE", "RESTARTS", "AGE", "REASON", "IP", "SCOPE", "IMAGES"] == (
        header
    )
    assert [
        ["default/job", "0/1", "Succeeded", "0", "2m5s", "Completed", "<none>", "<none>", IMAGE],
        ["default/web", "1/1", "Running", "0", "2m5s", ADDRESS, "team-a", IMAGE],
    ] == rows


def test_status_wide_of_a_container_gone_since_it_was_listed(
    worlds: Callable[[], World],
) -> None:
    """A network container removed between the list and the address (the engine's 404)
    has no address to show; the status is still printed."""
    world = worlds()
    world.fake.fail("address", status_code=404, error="No such container")

    result = podsync(world, "status", "-o", "wide")

    assert 0 == result.code, result.err
    assert [["<none>", "team-a"]] == [
        line.split()[-3:-1] for line in result.out.splitlines() if "default/web" in line
    ]


def test_status_json_carries_the_scope(worlds: Callable[[], World]) -> None:
    document = json.loads(podsync(worlds(), "status", "-o", "json").out)

    assert {"default/job": None, "default/web": "team-a"} == {
        p["pod"]: p["scope"] for p in document["pods"]
    }


def test_a_name_is_taken_back_as_a_pod(worlds: Callable[[], World]) -> None:
    """``pod/NAMESPACE/NAME`` from ``-o name`` names the pod to describe, logs, exec."""
    world = worlds()
    (name, _) = world.run("status", "-o", "name").out.splitlines()

    described = world.run("describe", name)

    assert 0 == described.code, described.err
    assert "Name:        job" in described.out


def _web_app(world: World) -> str:
    labels = ("io.podsync.pod.name", "io.podsync.container.name")
    return next(
        c.id for c in world.fake.containers if tuple(map(c.labels.get, labels)) == ("web", "app")
    )


@pytest.mark.parametrize("fmt", ["json", "yaml", "name"])
def test_status_watch_prints_a_changed_pod_in_the_format(
    worlds: Callable[[], World], fmt: str
) -> None:
    """``status -w -o FORMAT``: the statuses first, then each pod that changed - its
    record as a JSON line or a YAML document of its own, or its name."""
    world = worlds()
    looks = 0

    def sleep(seconds: float) -> None:
        nonlocal looks
        looks += 1
        if looks == 2:
            raise KeyboardInterrupt
        world.fake.exit(_web_app(world), 1)

    argv = ["status", "--root-dir", str(world.root), "-w", "-o", fmt]
    code = cli.main(argv, runtime_factory=lambda host: world.fake, clock=world.clock, sleep=sleep)
    out = world.capsys.readouterr().out

    assert 130 == code
    if fmt == "name":
        assert ["pod/default/job", "pod/default/web", "pod/default/web"] == out.splitlines()
        return
    if fmt == "json":
        first, _, line = out.rstrip("\n").rpartition("\n")
        documents = [json.loads(first), json.loads(line)]
    else:
        documents = list(yaml.safe_load_all(out))
    assert ["default/job", "default/web"] == [p["pod"] for p in documents[0]["pods"]]
    assert ("default/web", "team-a") == (documents[1]["pod"], documents[1]["scope"])
    assert 2 == len(documents)


UNKNOWN: list[tuple[list[str], str]] = [
    (["status", "-o", "table"], "-o table: status prints json, yaml, wide, name"),
    (["show", "-o", "wide", "plan.json"], "-o wide: show prints json, yaml, name"),
    (["events", "-o", "name"], "-o name: events prints json, yaml"),
    (["apply", "-o", "wide", "web.yaml"], "-o wide: apply prints json, yaml, name"),
    (["down", "-o", "xml", "web.yaml"], "-o xml: down prints json, yaml, name"),
    (["status", "--json", "-o", "yaml"], "--json is -o json: give one format"),
    (["plan", "-o", "p.json", "--out", "q.json", "web.yaml"], "give --out alone"),
]


@pytest.mark.parametrize(("argv", "message"), UNKNOWN, ids=[" ".join(r[0][:3]) for r in UNKNOWN])
def test_an_unknown_format_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """Exit 1 with the formats the command takes, before any engine is contacted."""

    def no_engine(host: str | None) -> FakeRuntime:
        raise AssertionError("the engine was contacted")

    code = cli.main(argv, runtime_factory=no_engine, clock=FakeClock(T0))

    err = capsys.readouterr().err
    assert 1 == code
    assert message in err
    assert "Traceback" not in err


# --- saved plans: --out FILE, and plan -o FILE for one release ----------------------------

SAVES: list[tuple[str, list[str], str, bool, bool]] = [
    # (id, options, file saved, deprecation warning, plan JSON on stdout)
    ("--out FILE", ["--out", "p.json"], "p.json", False, False),
    ("-o FILE (deprecated)", ["-o", "p.json"], "p.json", True, False),
    ("--json -o FILE (deprecated)", ["--json", "-o", "p.json"], "p.json", True, True),
    ("-o json --out FILE", ["-o", "json", "--out", "p.json"], "p.json", False, True),
    ("-o json (a format)", ["-o", "json"], "", False, True),
    ("--out json (a file named json)", ["--out", "json"], "json", False, False),
]


@pytest.mark.parametrize(
    ("options", "saved", "warned", "printed"),
    [row[1:] for row in SAVES],
    ids=[row[0] for row in SAVES],
)
def test_where_a_plan_is_saved(
    worlds: Callable[[], World],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
    saved: str,
    warned: bool,
    printed: bool,
) -> None:
    """``--out FILE`` saves silently; ``-o FILE`` saves too, with the deprecation on
    standard error; ``-o json`` prints the plan and saves nothing."""
    world = worlds()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    result = world.run("plan", *options, world.new)

    assert 0 == result.code, result.err
    assert ([saved] if saved else []) == sorted(p.name for p in work.iterdir())
    assert warned == ("-o FILE is deprecated: use --out FILE" in result.err)
    if printed:
        assert json.loads(result.out)["pods"][0]["pod"] == "default/new"
    else:
        assert "Saved the plan to" in result.out
    if saved:
        # What was saved is a plan apply --plan takes.
        assert 0 == world.run("apply", "--plan", str(work / saved)).code
        assert "default/new" in {
            f"default/{c.labels.get('io.podsync.pod.name')}" for c in world.fake.containers
        }
