"""The README's Python examples run, and print what the README says they print.

A new user's first contact is the README: its examples are run here as they are written
(the clock they read is the only thing replaced, so the test reads no real clock).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import types
from pathlib import Path

import pytest

from tests.support import paths

ROOT = paths.REPO
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.index("\n## ", start + 1)
    return README[start:end]


def _blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` ("" for plain ones), in order."""
    blocks: list[str] = []
    current: list[str] | None = None
    keep = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, keep = [], line.strip() == f"```{language}"
            else:
                if keep:
                    blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def _fixed_clock_module() -> types.ModuleType:
    module = types.ModuleType("time")
    module.time = lambda: 1_000_000.0  # type: ignore[attr-defined]
    return module


def test_a_first_look_prints_what_the_readme_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    section = _section("A first look")
    (code,) = _blocks(section, "python")
    shown = _blocks(section, "")[0]
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(__import__("sys").modules, "time", _fixed_clock_module())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md: A first look", "exec"), {})
    assert out.getvalue() == shown


def test_the_fake_runtime_example_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The "Applying plans" example, on the pods of "A first look", under a temporary
    root directory."""
    applying = _section("API")
    code = next(block for block in _blocks(applying, "python") if "FakeRuntime" in block)
    code = code.replace('"/tmp/podsync-demo"', repr(str(tmp_path / "root")))
    code = code.replace('"busybox"', '"busybox", "podsync-demo/busybox:1"')
    monkeypatch.chdir(ROOT)
    import podsync

    pods = podsync.load_pods(["examples/pods/"], secret_key=b"k" * 32)
    namespace = {"pods": pods, "print": lambda *a: None}
    exec(compile(code, "README.md: Applying plans", "exec"), namespace)
    fake = namespace["fake"]
    assert "create" in fake.call_names()


def _outside_parentheses(cell: str) -> str:
    """``cell`` without its parenthesised asides (``Plan (`describe()`, ...)``): what
    is left names things; the asides describe them. Parentheses inside backticks (a
    call's ``()``) are part of the name."""
    kept: list[str] = []
    depth, quoted = 0, False
    for char in cell:
        if char == "`":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
            continue
        elif not quoted and char == ")":
            depth -= 1
            continue
        if depth == 0:
            kept.append(char)
    assert depth == 0, f"unbalanced parentheses in {cell!r}"
    return "".join(kept)


def _api_table() -> list[dict[str, str]]:
    """The rows of the first table in "## API", by column header."""
    lines = _section("API").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    header, separator, *rows = table
    assert all(set(cell) <= set("-: ") for cell in separator)
    return [dict(zip(header, row, strict=True)) for row in rows]


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def _listed_names() -> list[str]:
    """The names in the table's "names" column: backticked, outside parentheses, a call's
    ``(...)`` dropped."""
    names = []
    for row in _api_table():
        for token in re.findall(r"`([^`]+)`", _outside_parentheses(row["names"])):
            name = re.sub(r"\(.*\)$", "", token)
            assert _NAME.fullmatch(name), f"not a name in the API table: {token!r}"
            names.append(name)
    return names


def test_the_api_table_lists_every_public_name() -> None:
    import podsync

    listed = _listed_names()
    assert [] == sorted(set(podsync.__all__) - set(listed))
    assert [] == sorted({n for n in listed if listed.count(n) > 1}), "listed twice"


def test_the_api_table_lists_every_name_of_the_faces() -> None:
    """Every name on a folder's public face is in the table: qualified
    (``podsync.fleet.sync_hosts``), or bare when the top level has it too."""
    import podsync

    listed = set(_listed_names())
    faces = ("podsync.runtime", "podsync.status", "podsync.prober", "podsync.fleet", "podsync.spec")
    missing = [
        f"{face}.{name}"
        for face in faces
        for name in importlib.import_module(face).__all__
        if f"{face}.{name}" not in listed and not (name in podsync.__all__ and name in listed)
    ]
    assert [] == missing


def test_every_name_in_the_api_table_exists() -> None:
    """A top-level name is in ``podsync.__all__`` (a deprecated one still imports, but
    is not listed); a qualified one (``podsync.testing.FakeRuntime``) is in its module."""
    import podsync

    for name in _listed_names():
        if "." not in name:
            assert name in podsync.__all__, f"the API table lists podsync.{name}"
            continue
        module, _, attribute = name.rpartition(".")
        assert module == "podsync" or module.startswith("podsync."), name  # __version__
        assert hasattr(importlib.import_module(module), attribute), name


def test_the_api_table_lists_every_label_key() -> None:
    import podsync.labels

    listed = set(_listed_names())
    assert [] == [k for k in podsync.labels.__all__ if f"podsync.labels.{k}" not in listed]


def test_the_api_tables_modules_exist() -> None:
    """Each concept's module column names files that exist, and every module of the
    package is somewhere in it."""
    package = ROOT / "podsync"
    named = {token for row in _api_table() for token in re.findall(r"`([^`]+\.py)`", row["module"])}
    assert [] == sorted(m for m in named if not (package / m).is_file())
    modules = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    modules = {m for m in modules if not m.endswith(("__init__.py", "__main__.py"))}
    assert [] == sorted(modules - named)


def test_the_architecture_section_is_the_layering_tests_plan() -> None:
    """The README's folder table says what ``tests/unit/test_layering.py`` checks: the
    same folders, each with the same imports, and a diagram of the same arrows (those no
    longer path implies)."""
    from tests.unit.test_layering import FOLDERS

    section = _section("Architecture")
    rows = re.findall(r"^\| `([\w/]+)/` \| .* \| (.+) \|$", section, re.MULTILINE)
    said = {folder: set(imports.split(", ")) - {"nothing of podsync"} for folder, imports in rows}
    assert {f: set(row.imports) for f, row in FOLDERS.items()} == said

    edges = {f: set(row.imports) - {"exceptions"} for f, row in FOLDERS.items()}

    def reaches(start: str, skip: tuple[str, str]) -> set[str]:
        seen: set[str] = set()
        todo = [v for v in edges[start] if (start, v) != skip]
        while todo:
            folder = todo.pop()
            if folder not in seen:
                seen.add(folder)
                todo.extend(edges[folder])
        return seen

    needed = {(u, v) for u in edges for v in edges[u] if v not in reaches(u, (u, v))}
    drawn = set(re.findall(r"^\s+\w+\[([\w/]+)\] --> \w+\[([\w/]+)\]$", section, re.MULTILINE))
    assert needed == drawn
