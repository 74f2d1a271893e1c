"""The layers of podsync, read from the source (``ast``), not from a running import.

::

    model and helpers   _models _volume_model _naming _labels labels _hashing _ports _cpu
                        _resolv _volumes _images _host_ports _environment _prober
    vocabulary          _options _actions _ownership _fingerprint _plan_json
    planner             _plan _admission _gc _spec_change _pod_planner _init_planner
                        _status _container_status _status_json
    runtime boundary    _runtime docker _docker_api testing (_fake_rules _fake_calls _fake_clock)
                        _hooks _hostfs _probing
    apply / sync        _apply _apply_results _sync
    command line        cli

A module imports only from its own layer and the layers above it, with two rules that
this file checks:

* the runtime side (runtimes, hooks, the host filesystem, apply, the JSON form) never
  imports the planner, not even through another module: it speaks the vocabulary;
* the pure modules (model, helpers, vocabulary, planner) import nothing that does I/O:
  only the standard library's pure modules, ``attrs``/``cattrs`` and other pure modules;

and no podsync module imports itself back through others (no import cycles).
"""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "podsync"

MODEL_AND_HELPERS = {
    "_models",
    "_volume_model",
    "_naming",
    "_labels",
    "labels",
    "_hashing",
    "_ports",
    "_cpu",
    "_resolv",
    "_volumes",
    "_content_layout",
    "_volume_entries",
    "_images",
    "_host_ports",
    "_environment",
    "_prober",
    "_security",
    "_secrets",
    "_records",
    "_content_records",
    "exceptions",
}
VOCABULARY = {"_options", "_actions", "_ownership", "_fingerprint", "_plan_json"}
# The planner, and pod status (which judges containers as the planner does).
PLANNER = {
    "_plan",
    "_volume_planner",
    "_empty_dir_planner",
    "_admission",
    "_gc",
    "_spec_change",
    "_pod_planner",
    "_init_planner",
    "_status",
    "_container_status",
    "_status_json",
}
PURE = MODEL_AND_HELPERS | VOCABULARY | PLANNER

RUNTIME_SIDE = {"_runtime", "docker", "testing", "_hooks", "_hostfs", "_apply", "_plan_json"}
RUNTIME_SIDE |= {"_volume_writer"}  # the files of configMap, secret, downwardAPI volumes
RUNTIME_SIDE |= {"_probing"}  # one sync's probes: records, runs, new states
RUNTIME_SIDE |= {"_docker_api"}  # the Docker runtime's translation to and from the Engine API
RUNTIME_SIDE |= {"_docker_streams"}  # the Docker runtime's logs, attached exec and events
RUNTIME_SIDE |= {"_fake_rules", "_fake_calls", "_fake_clock", "_fake_state"}  # FakeRuntime's parts
RUNTIME_SIDE |= {"_fake_volumes"}  # FakeRuntime's named volumes
RUNTIME_SIDE |= {"_host_empty_dirs"}  # emptyDir host directories of earlier versions
RUNTIME_SIDE |= {"_apply_results"}  # what an apply did: results and events

# What a pure module may import from outside podsync: computation only. No files, no
# sockets, no processes, no clock, no environment (``os``, ``sys``, ``time``,
# ``socket``, ``subprocess``, ``pathlib``, ``docker``, ``requests``, ... are absent on
# purpose). ``uuid`` is here for ``uuid5`` (a digest); ``threading`` and ``gc`` for
# the planner's pause of the cyclic garbage collector, which touches no outside state.
PURE_EXTERNAL = {
    "__future__",
    "attrs",
    "base64",  # the files a saved plan's WriteVolume writes, as text
    "cattrs",
    "cattrs.strategies",
    "collections",
    "collections.abc",
    "contextlib",
    "enum",
    "functools",
    "gc",
    "hashlib",
    "hmac",
    "ipaddress",
    "itertools",
    "json",
    "math",
    "operator",
    "posixpath",
    "re",
    "string",
    "threading",
    "typing",
    "uuid",
}


def _top_level_imports(tree: ast.Module) -> set[str]:
    """The modules a file imports when it is imported: statements at module level
    (inside top-level ``if``/``try`` too), but not under ``if TYPE_CHECKING`` and not
    inside functions."""
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, "podsync uses absolute imports"
                assert node.module is not None
                found.add(node.module)
                if node.module == "podsync":  # ``from podsync import _x``
                    found.update(f"podsync.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                test = node.test
                if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                    continue
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return found


def _graph() -> dict[str, set[str]]:
    """podsync module (short name) -> the imports of its file."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[path.stem] = _top_level_imports(tree)
    return graph


GRAPH = _graph()


def _internal(imports: set[str]) -> set[str]:
    return {m.removeprefix("podsync.") for m in imports if m.startswith("podsync.")}


def _reachable(start: str) -> set[str]:
    """The podsync modules ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for name in _internal(GRAPH.get(todo.pop(), set())):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def test_every_listed_module_exists() -> None:
    # A renamed module must not leave this test checking nothing.
    assert set() == (PURE | RUNTIME_SIDE) - set(GRAPH)


@pytest.mark.parametrize("module", sorted(RUNTIME_SIDE))
def test_the_runtime_side_never_imports_the_planner(module: str) -> None:
    assert set() == _reachable(module) & PLANNER, (
        f"podsync.{module} reaches the planner; import the vocabulary "
        "(_actions, _options, _ownership) instead"
    )


@pytest.mark.parametrize("module", sorted(PURE))
def test_pure_modules_import_nothing_that_does_io(module: str) -> None:
    imports = GRAPH[module]
    external = {m for m in imports if m != "podsync" and not m.startswith("podsync.")}
    assert set() == external - PURE_EXTERNAL
    assert set() == _internal(imports) - PURE, "a pure module imports an impure one"


@pytest.mark.parametrize("module", sorted(PURE))
def test_pure_modules_do_not_reach_the_standard_librarys_io(module: str) -> None:
    # Belt and braces for the allowlist: the modules that do I/O are known by name.
    io = {"os", "sys", "time", "socket", "subprocess", "pathlib", "shutil", "io", "docker"}
    io |= {"requests", "urllib", "http", "tempfile", "random", "datetime", "ssl"}
    reached = GRAPH[module].union(*(GRAPH[m] for m in _reachable(module)))
    assert set() == {m.split(".")[0] for m in reached} & io


def test_no_import_cycles() -> None:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(_internal(GRAPH.get(name, set()))):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert [] == cycles


#: One concept per module keeps a module readable in one sitting: about 800 lines at
#: most. The exceptions are known and waiting for their split.
MAX_LINES = 800
LONGER = {"docker"}


def test_modules_stay_small() -> None:
    lengths = {
        path.stem: len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.glob("*.py")
    }
    assert {} == {m: n for m, n in lengths.items() if n > MAX_LINES and m not in LONGER}


def test_the_checker_sees_what_it_checks() -> None:
    # The rules above pass vacuously if the parser finds no imports: pin a few.
    assert "podsync._actions" in GRAPH["_apply"]
    assert "podsync._plan" in GRAPH["_sync"]
    assert "os" in GRAPH["_hostfs"]
    assert "socket" in GRAPH["docker"]  # the docker SDK itself is imported lazily
    assert sys.version_info >= (3, 11)
