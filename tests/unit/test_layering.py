"""The architecture of podsync, read from the source (``ast``), not from a running import.

podsync is a house of folders, one per concern; ``FOLDERS`` below is its plan: each folder,
what it holds, and the folders it may import. A module imports only from its own folder
and the folders its row lists, whether the import is at the top of the file, inside a
function or under ``if TYPE_CHECKING`` (an import deferred for speed is an arrow of the
architecture all the same). The table is checked both ways: every import of every module
is allowed by it, and every arrow it allows is used (a stale permission would hide the
next wrong import). On top of the table:

* no circle: neither between files nor between folders;
* the pure folders (and the pure modules of the mixed ones) import only the standard
  library's computing modules, ``attrs``/``cattrs`` and other pure code: no files,
  sockets, processes, clock or environment;
* the runtime side (the runtimes, the host's files, the prober, apply) never reaches the
  planner, not even through another folder: the two meet in the plan's vocabulary
  (``actions``);
* every folder has an ``__init__.py`` whose docstring says what the folder is and ends
  with a ``May import:`` line that is its row of the table;
* no module is over ``MAX_LINES`` lines: a module that grows past it holds a second
  concept that wants a file of its own.

The public faces - ``podsync``, ``podsync.docker``, ``podsync.testing``, ``podsync.aio``,
``podsync.cli``, ``podsync.labels``, ``podsync.exceptions`` and ``python -m podsync`` - sit
on top, each over the folders it shows. Inside podsync, a module imports the module that
defines a name, never a face.
"""

from __future__ import annotations

import ast
import pathlib
import sys

import attrs
import pytest

from tests.support import paths

PACKAGE = paths.PACKAGE


@attrs.frozen
class Folder:
    """One row of the plan: what the folder holds, and what it may import."""

    holds: str
    imports: frozenset[str]
    pure: bool = False
    #: Modules of an impure folder that are pure all the same (checked as pure).
    pure_modules: frozenset[str] = frozenset()


def _row(holds: str, *imports: str, pure: bool = False, pure_modules: tuple[str, ...] = ()):
    return Folder(holds, frozenset(imports), pure, frozenset(pure_modules))


#: The plan of the house, from the bottom up. ``exceptions`` is the public error tree:
#: a leaf every layer of the shell raises from.
FOLDERS: dict[str, Folder] = {
    "model": _row(
        "the values: pods, containers, volumes, security settings, Secret values, what a"
        " runtime observes",
        pure=True,
    ),
    "spec": _row(
        "pure rules over the model: names, spec hashes, ports, CPU, resolv.conf, images,"
        " labels, ownership, volume paths and podsync's records in the engine",
        "model",
        pure=True,
    ),
    "actions": _row(
        "the plan's vocabulary: reasons, actions, planning options, the fingerprint, the"
        " plan's JSON form",
        "model",
        "spec",
        "exceptions",
        pure=True,
    ),
    "planner": _row(
        "the pure planner: admission, the per-pod and init-container decisions, volumes,"
        " garbage collection",
        "model",
        "spec",
        "actions",
        pure=True,
    ),
    "status": _row(
        "how a pod is doing (pure: phases, conditions, container states, their JSON) and"
        " what the operating commands read off the engine for it",
        "model",
        "spec",
        "actions",
        "runtime",
        "exceptions",
        pure_modules=("_pod", "_container", "_init", "_kubectl", "_json", "_usage"),
    ),
    "runtime": _row(
        "the runtime protocol: what podsync needs from a container engine, and the face"
        " of what a runtime author implements",
        "model",
        "spec",
        "actions",
        "exceptions",
    ),
    "runtime/docker": _row(
        "the Docker runtime on the docker SDK",
        "model",
        "spec",
        "actions",
        "runtime",
        "exceptions",
    ),
    "runtime/fake": _row(
        "FakeRuntime, an in-memory engine with Docker's rules, and FakeClock",
        "model",
        "spec",
        "actions",
        "runtime",
        "exceptions",
    ),
    "host": _row(
        "this machine outside the engine: files under the root directory, the clock, the"
        " node's name and capacity, the key of Secret digests",
        "model",
        "spec",
        "actions",
        "exceptions",
    ),
    "prober": _row(
        "probes and lifecycle hooks: the prober's pure rules, the handlers, one sync's probing",
        "model",
        "spec",
        "runtime",
        "host",
        "exceptions",
        pure_modules=("_rules",),
    ),
    "applier": _row(
        "running a plan through a runtime, and what it did",
        "model",
        "spec",
        "actions",
        "runtime",
        "host",
        "prober",
        "exceptions",
    ),
    "etcd": _row(
        "etcd: its URLs and options, and a client of its v3 gateway (read, compare-and-swap,"
        " watch)",
        "exceptions",
    ),
    "load/schema": _row(
        "the shape of pod files: hardened YAML, checked scalars, the schema classes, the"
        " fields refused or ignored",
        "model",
        "spec",
    ),
    "load/convert": _row(
        "schema to model: pods, containers, security, the downward API and $(VAR), the"
        " files of content volumes, ConfigMaps and Secrets, kinds podsync does not read",
        "model",
        "spec",
        "host",
        "load/schema",
    ),
    "load": _row(
        "reading desired pods: files, directories, URLs, standard input, etcd; the loop's"
        " source set and the etcd watch",
        "model",
        "spec",
        "host",
        "load/schema",
        "load/convert",
        "etcd",
        "exceptions",
    ),
    "loop": _row(
        "observe, plan, apply in one call, and the continuous loop around it: workers, the"
        " status board",
        "model",
        "spec",
        "actions",
        "planner",
        "status",
        "runtime",
        "runtime/docker",
        "host",
        "prober",
        "applier",
        "load",
        "etcd",
        "exceptions",
    ),
    "fleet": _row(
        "beyond one host: the hosts file, one sync per host, publishing to etcd",
        "model",
        "actions",
        "runtime",
        "host",
        "applier",
        "load",
        "load/schema",
        "load/convert",
        "loop",
        "etcd",
        "report",
        "exceptions",
    ),
    "report": _row(
        "a fleet seen from one place: a host's heartbeat, pod statuses and events in etcd,"
        " and reading them back",
        "model",
        "status",
        "runtime",
        "host",
        "applier",
        "loop",
        "etcd",
        "exceptions",
        pure_modules=("_records",),
    ),
    "cli": _row(
        "the podsync command: arguments, commands, console output",
        "model",
        "spec",
        "actions",
        "status",
        "runtime",
        "runtime/docker",
        "host",
        "applier",
        "load",
        "loop",
        "fleet",
        "report",
        "etcd",
        "report",
        "exceptions",
    ),
}

#: The public faces over the folders (top-level modules), and what each shows.
FACES: dict[str, frozenset[str]] = {
    "exceptions": frozenset(),
    "labels": frozenset({"spec"}),
    "docker": frozenset({"runtime/docker"}),
    "testing": frozenset({"runtime/fake"}),
    "aio": frozenset({"loop", "applier", "load", "runtime"}),
    "__main__": frozenset({"cli"}),
    "__init__": frozenset(FOLDERS) - {"cli"} | {"exceptions", "labels"},
}

#: What a pure module may import from outside podsync: computation only. No files, no
#: sockets, no processes, no clock, no environment (``os``, ``sys``, ``time``,
#: ``socket``, ``subprocess``, ``pathlib``, ``docker``, ``requests``, ... are absent on
#: purpose). ``uuid`` is here for ``uuid5`` (a digest); ``threading`` and ``gc`` for
#: the planner's pause of the cyclic garbage collector, which touches no outside state.
PURE_EXTERNAL = {
    "__future__",
    "attrs",
    "base64",  # the files a saved plan's WriteVolume writes, as text
    "cattrs",
    "cattrs.gen",  # the converter's generated (un)structuring functions
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

#: The standard library's and the engine SDK's I/O, by top-level name: a pure module
#: reaches none of them, not even through another podsync module.
IO_MODULES = {"os", "sys", "time", "socket", "subprocess", "pathlib", "shutil", "io", "docker"}
IO_MODULES |= {"requests", "urllib", "http", "tempfile", "random", "datetime", "ssl"}

#: One concept per module keeps a module readable in one sitting.
MAX_LINES = 800


@attrs.frozen
class Module:
    """One file of podsync: its dotted name, its unit (folder or face) and its imports."""

    name: str
    path: pathlib.Path
    unit: str
    imports: frozenset[str]


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    relative = pathlib.Path(*dotted.split("."))
    base = PACKAGE.parent / relative
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports(tree: ast.Module) -> frozenset[str]:
    """Every module a file imports, at any depth: top level, functions, ``try``, and
    ``if TYPE_CHECKING`` alike. ``from podsync.x import y`` is ``podsync.x.y`` when ``y``
    is a module."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "podsync uses absolute imports"
            assert node.module is not None
            modules = {f"{node.module}.{alias.name}" for alias in node.names}
            modules = {name for name in modules if _is_module(name)}
            found.update(modules)
            if len(modules) < len(node.names):  # names defined in node.module itself
                found.add(node.module)
    return frozenset(found)


def _unit(path: pathlib.Path) -> str:
    """A top-level file is a face (or unplaced); any other file is its folder's."""
    relative = path.relative_to(PACKAGE)
    if len(relative.parts) == 1:
        return relative.stem if relative.stem in FACES else f"<unplaced {relative.stem}>"
    return relative.parent.as_posix()


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        name = _module_name(path)
        found[name] = Module(name, path, _unit(path), _imports(tree))
    return found


MODULES = _modules()
#: dotted name -> unit, for every module of podsync (a folder's ``__init__`` is the
#: folder's).
UNIT_OF = {name: module.unit for name, module in MODULES.items()}


def _internal(module: Module) -> set[str]:
    """The podsync modules ``module`` imports (a name imported from a package counts as
    the package)."""
    return {name for name in module.imports if name in MODULES and name != module.name}


def _reachable(start: str) -> set[str]:
    """The podsync modules ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for name in _internal(MODULES[todo.pop()]):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def _allowed(unit: str) -> frozenset[str]:
    if unit in FOLDERS:
        return FOLDERS[unit].imports | {unit}
    return FACES.get(unit, frozenset()) | {unit}


def _is_pure(module: Module) -> bool:
    if module.unit == "exceptions":
        return True  # the error tree: classes, no imports
    folder = FOLDERS.get(module.unit)
    if folder is None:
        return False
    return folder.pure or module.path.stem in folder.pure_modules


def test_every_module_has_a_place() -> None:
    assert [] == [m.name for m in MODULES.values() if m.unit not in FOLDERS and m.unit not in FACES]


def test_the_plan_names_real_folders() -> None:
    # A renamed folder must not leave this test checking nothing.
    units = {module.unit for module in MODULES.values()}
    assert set() == set(FOLDERS) - units
    for row in FOLDERS.values():
        assert set() == row.imports - set(FOLDERS) - {"exceptions"}
        assert set() == row.pure_modules - {m.path.stem for m in MODULES.values()}


def test_the_plan_has_no_circle() -> None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(unit: str, path: list[str]) -> None:
        state[unit] = 1
        for nxt in sorted(FOLDERS[unit].imports - {"exceptions"}):
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[unit] = 2

    for unit in FOLDERS:
        if unit not in state:
            visit(unit, [unit])
    assert [] == circles


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_module_imports_only_what_its_folder_may(name: str) -> None:
    module = MODULES[name]
    allowed = _allowed(module.unit)
    wrong = {other for other in _internal(module) if UNIT_OF[other] not in allowed}
    assert set() == {f"{other} (in {UNIT_OF[other]})" for other in wrong}, (
        f"{name} is in {module.unit}, which may import {sorted(allowed)}"
    )


def _is_face(module: Module) -> bool:
    """A public face: a top-level module (``exceptions`` aside, which defines what it
    shows) or a folder's ``__init__``."""
    if module.unit in FOLDERS:
        return module.path.name == "__init__.py"
    return module.unit != "exceptions"


def test_inside_podsync_a_module_imports_no_face() -> None:
    # ``from podsync import plan`` or ``from podsync.status import pod_status`` inside
    # podsync would make a face a floor of the house; the faces are for users, and a
    # module imports the module that defines a name.
    uses = {
        (module.name, other)
        for module in MODULES.values()
        if not _is_face(module)
        for other in _internal(module)
        if _is_face(MODULES[other])
    }
    assert set() == uses


def test_every_arrow_of_the_plan_is_used() -> None:
    used = {
        (module.unit, UNIT_OF[other])
        for module in MODULES.values()
        for other in _internal(module)
        if module.unit != UNIT_OF[other]
    }
    planned = {(unit, other) for unit, row in FOLDERS.items() for other in row.imports}
    assert set() == planned - used


def test_no_circle_between_files() -> None:
    circles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(_internal(MODULES[name])):
            if nxt == "podsync" or MODULES[nxt].path.name == "__init__.py":
                continue  # a package's face runs before its modules; it is not a file arrow
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in sorted(MODULES):
        if name not in state and MODULES[name].path.name != "__init__.py":
            visit(name, [name])
    assert [] == circles


PURE = sorted(name for name, module in MODULES.items() if _is_pure(module))


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_import_nothing_that_does_io(name: str) -> None:
    module = MODULES[name]
    external = {m for m in module.imports if m != "podsync" and not m.startswith("podsync.")}
    # A face imports its names on first use (issue 33) with ``importlib``: its folder's
    # own modules, which the plain imports of the face checked here allow.
    allowed = PURE_EXTERNAL | ({"importlib"} if module.path.name == "__init__.py" else set())
    assert set() == external - allowed
    impure = {other for other in _internal(module) if not _is_pure(MODULES[other])}
    assert set() == {o for o in impure if MODULES[o].path.name != "__init__.py"}, (
        "a pure module imports an impure one"
    )


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_do_not_reach_the_standard_librarys_io(name: str) -> None:
    # Belt and braces for the allowlist: the modules that do I/O are known by name.
    reached = MODULES[name].imports.union(*(MODULES[m].imports for m in _reachable(name)))
    assert set() == {m.split(".")[0] for m in reached} & IO_MODULES


RUNTIME_SIDE = ("runtime", "runtime/docker", "runtime/fake", "host", "prober", "applier")


@pytest.mark.parametrize("name", sorted(n for n, m in MODULES.items() if m.unit in RUNTIME_SIDE))
def test_the_runtime_side_never_reaches_the_planner(name: str) -> None:
    assert set() == {m for m in _reachable(name) if UNIT_OF[m] == "planner"}, (
        f"{name} reaches the planner; import the vocabulary (podsync.actions) instead"
    )


def test_every_folder_says_what_it_is_and_what_it_may_import() -> None:
    problems: list[str] = []
    for unit, row in FOLDERS.items():
        init = PACKAGE / unit / "__init__.py"
        if not init.is_file():
            problems.append(f"{unit}: no __init__.py")
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        last = " ".join(doc[doc.rfind("May import:") :].split()) if "May import:" in doc else ""
        if not last.startswith("May import:") or "\n\n" in doc[doc.rfind("May import:") :]:
            problems.append(f"{unit}: its docstring does not end with 'May import: ...'")
            continue
        said = {w.strip(" .`") for w in last.removeprefix("May import:").split(",")}
        said.discard("nothing of podsync")
        if said != set(row.imports):
            problems.append(f"{unit}: says {sorted(said)}, the plan says {sorted(row.imports)}")
    assert [] == problems


def test_modules_stay_small() -> None:
    lengths = {
        name: len(module.path.read_text(encoding="utf-8").splitlines())
        for name, module in MODULES.items()
    }
    assert {} == {name: n for name, n in lengths.items() if n > MAX_LINES}


def test_the_checker_sees_what_it_checks() -> None:
    # The rules above pass vacuously if the parser finds no imports: pin a few.
    assert any(UNIT_OF.get(m) == "actions" for m in _internal(_find("applier", "apply")))
    assert any(UNIT_OF.get(m) == "planner" for m in _internal(_find("loop", "sync")))
    assert "os" in _find("host", "files").imports
    assert sys.version_info >= (3, 11)


def _find(unit: str, concern: str) -> Module:
    """The module of ``unit`` whose file is named for ``concern``."""
    for module in MODULES.values():
        if module.unit == unit and module.path.stem == f"_{concern}":
            return module
    raise AssertionError(f"no module for {concern} in {unit}")


def test_no_folder_shadows_a_public_name() -> None:
    # ``import podsync.plan`` would replace the function ``podsync.plan`` with the
    # package: a folder's top-level name is never a public name of podsync.
    import podsync

    tops = {unit.split("/")[0] for unit in FOLDERS}
    assert set() == tops & set(podsync.__all__)
