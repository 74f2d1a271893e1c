"""The documentation site (``docs/``, ``mkdocs.yml``) holds to the code it describes.

The site itself is built by ``.ci/docs`` (``mkdocs build --strict``: a broken link or
anchor fails it there); these checks need no MkDocs. They hold the pages to the code: the
library guide's API table lists every public name and every module, its examples run,
the architecture page is the layering test's plan, the lifecycle diagrams name only real
reasons; and to each other: every link of the README and the pages points at a file
that exists (and a heading that exists), and every page is in the site's navigation.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from tests.support import paths
from tests.support.markdown import anchors, fenced_blocks, links, section, unfenced_lines
from tests.unit.test_exported_members import FACES

ROOT = paths.REPO
DOCS = ROOT / "docs"


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


LIBRARY = _page("library.md")


# --- the library guide's examples --------------------------------------------------


def test_the_fake_runtime_example_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The "Applying plans" example, on the pods of "A first look", under a temporary
    root directory."""
    applying = section(LIBRARY, "Applying plans")
    code = next(block for block in fenced_blocks(applying, "python") if "FakeRuntime" in block)
    code = code.replace('"/tmp/podsync-demo"', repr(str(tmp_path / "root")))
    code = code.replace('"busybox"', '"busybox", "podsync-demo/busybox:1"')
    monkeypatch.chdir(ROOT)
    import podsync

    pods = podsync.load_pods(["examples/pods/"], secret_key=b"k" * 32)
    namespace: dict[str, Any] = {"pods": pods, "print": lambda *a: None}
    exec(compile(code, "docs/library.md: Applying plans", "exec"), namespace)
    fake = namespace["fake"]
    assert "create" in fake.call_names()


# --- the library guide's API table -----------------------------------------------------


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
    """The rows of the first table in the library guide's "## API", by column header."""
    lines = section(LIBRARY, "API").splitlines()
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
    faces = (
        *("podsync.runtime", "podsync.status", "podsync.prober", "podsync.fleet"),
        *("podsync.report", "podsync.spec"),
    )
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


# --- the architecture page -------------------------------------------------------------


def test_the_architecture_page_is_the_layering_tests_plan() -> None:
    """The folder table says what ``tests/unit/test_layering.py`` checks: the same
    folders, each with the same imports, and a diagram of the same arrows (those no
    longer path implies)."""
    from tests.unit.test_layering import FOLDERS

    page = _page("architecture.md")
    rows = re.findall(r"^\| `([\w/]+)/` \| .* \| (.+) \|$", page, re.MULTILINE)
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
    (graph,) = fenced_blocks(page, "mermaid")
    drawn = set(re.findall(r"^\s+\w+\[([\w/]+)\] --> \w+\[([\w/]+)\]$", graph, re.MULTILINE))
    assert needed == drawn


# --- the lifecycle page ----------------------------------------------------------------

LIFECYCLE = _page("lifecycle.md")
#: ``A --> B : label`` in a state diagram.
_TRANSITION = re.compile(r"^\s*(\S+) --> (\S+)(?: : (.+))?$")


def _drawn_reasons() -> list[str]:
    """The reasons the lifecycle page's state diagrams name: every transition label that
    is not an event in words (those are between parentheses) is a list of reasons."""
    named: list[str] = []
    diagrams = fenced_blocks(LIFECYCLE, "mermaid")
    assert len(diagrams) == 2, "a container's and a pod's"
    for diagram in diagrams:
        assert diagram.startswith("stateDiagram-v2\n")
        # mermaid ends a statement at ";": the rest of a label would become states
        assert ";" not in diagram
        for line in diagram.splitlines():
            transition = _TRANSITION.match(line)
            if transition and transition.group(3) and not transition.group(3).startswith("("):
                named.extend(r.strip() for r in transition.group(3).split(","))
    return named


def _left_out() -> list[str]:
    """The reasons the page lists as left out of the pictures, each with why."""
    part = section(LIFECYCLE, "What the pictures leave out")
    return re.findall(r"^- `([^`]+)`: \S", part, re.MULTILINE)


def test_the_lifecycle_diagrams_name_only_real_reasons() -> None:
    from podsync.actions._actions import Reason

    values = {r.value for r in Reason}
    drawn = _drawn_reasons()
    assert drawn, "the diagrams name no reason"
    assert [] == sorted(set(drawn) - values)
    assert [] == sorted(set(_left_out()) - values)


def test_the_lifecycle_page_accounts_for_every_reason() -> None:
    """Each reason is drawn, or listed as left out - never both, never neither: a new
    reason finds its place on the page."""
    from podsync.actions._actions import Reason

    drawn, left_out = set(_drawn_reasons()), _left_out()
    assert [] == sorted(drawn & set(left_out))
    assert [] == sorted(r.value for r in Reason if r.value not in drawn | set(left_out))


# --- links and navigation ----------------------------------------------------------------


def _markdown_files() -> Iterator[Path]:
    yield ROOT / "README.md"
    yield from sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("source", list(_markdown_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_what_exists(source: Path) -> None:
    """A relative link names a file of the checkout (a page of the site, or for the
    README a file a forge shows); an anchor names a heading of that page."""
    text = source.read_text(encoding="utf-8")
    broken = []
    for target in links(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (source.parent / path).resolve() if path else source
        if not file.exists():
            broken.append(f"{target}: no {file.relative_to(ROOT)}")
        elif (
            anchor
            and file.suffix == ".md"
            and anchor not in anchors(file.read_text(encoding="utf-8"))
        ):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert [] == broken


def test_the_anchors_are_the_ones_mkdocs_writes() -> None:
    """The slug rule the link check uses, on headings of the pages' kinds."""
    page = (
        "# Continuous sync (`podsync run`)\n"
        "## asyncio (`podsync.aio`)\n"
        "### HTTP sources and Secret values\n"
    )
    assert anchors(page) == {
        "continuous-sync-podsync-run",
        "asyncio-podsyncaio",
        "http-sources-and-secret-values",
    }


class _MkDocsLoader(yaml.SafeLoader):
    """Reads mkdocs.yml: its ``!!python/name:`` tags (the mermaid fence's formatter)
    are read as their names, not imported."""


def _python_name(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> str:
    return suffix


_MkDocsLoader.add_multi_constructor("tag:yaml.org,2002:python/name:", _python_name)


def _mkdocs() -> dict[str, Any]:
    with (ROOT / "mkdocs.yml").open(encoding="utf-8") as stream:
        config: dict[str, Any] = yaml.load(stream, Loader=_MkDocsLoader)
    return config


def _nav_pages(entry: object) -> Iterator[str]:
    if isinstance(entry, str):
        yield entry
    elif isinstance(entry, list):
        for item in entry:
            yield from _nav_pages(item)
    elif isinstance(entry, dict):
        for value in entry.values():
            yield from _nav_pages(value)


def test_every_page_is_in_the_navigation() -> None:
    nav = list(_nav_pages(_mkdocs()["nav"]))
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert [] == [p for p in pages if p not in nav], "a page no one can reach"
    assert [] == [p for p in nav if p not in pages], "the nav names a page that is not there"
    assert sorted(nav) == sorted(set(nav)), "a page twice in the nav"


def test_the_build_is_strict_and_offline() -> None:
    """A warning fails the build (links and anchors are warnings), and the theme loads
    no fonts from the network."""
    config = _mkdocs()
    assert config["strict"] is True
    validation = config["validation"]
    assert {validation[k] for k in ("omitted_files", "unrecognized_links", "anchors")} == {"warn"}
    assert config["theme"]["font"] is False


#: The faces the API reference has a page for: the modules of one concern each and the
#: faces of the folders (``FACES``); ``podsync.cli`` is the command's, documented by
#: the command line page.
REFERENCE_FACES = (
    "podsync",
    "podsync.labels",
    "podsync.docker",
    "podsync.testing",
    "podsync.aio",
    "podsync.exceptions",
    *sorted(FACES),
)


@pytest.mark.parametrize("face", REFERENCE_FACES)
def test_every_face_has_a_reference_page(face: str) -> None:
    page = "podsync" if face == "podsync" else face.removeprefix("podsync.")
    text = _page(f"reference/{page}.md")
    assert f"\n::: {face}\n" in text
    assert f"]({page}.md)" in _page("reference/index.md"), "the reference's index links it"


def test_the_changelog_page_includes_the_changelog() -> None:
    """docs/changelog.md is CHANGELOG.md itself (pymdownx.snippets), not a copy."""
    lines = [line for line in unfenced_lines(_page("changelog.md")) if line.strip()]
    assert lines == ['--8<-- "CHANGELOG.md"']


def test_the_benchmarks_page_shows_the_benchmarks_plots() -> None:
    """The four figures the benchmarks draw (``--plot``), by the names they are made
    under."""
    targets = {PurePosixPath(t).name for t in links(_page("benchmarks.md"))}
    plots = {f"bench-{name}.svg" for name in ("plan", "apply", "e2e", "loop")}
    assert plots <= targets
