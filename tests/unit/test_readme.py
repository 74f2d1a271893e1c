"""The README: short, and its Python example runs and prints what it says it prints.

A new user's first contact is the README: its example is run here as it is written
(the clock it reads is the only thing replaced, so the test reads no real clock). The
rest of the manual is the documentation site, ``docs/`` (``tests/unit/test_docs.py``).
"""

from __future__ import annotations

import contextlib
import io
import types

import pytest

from tests.support import paths
from tests.support.markdown import fenced_blocks, section

ROOT = paths.REPO
README = (ROOT / "README.md").read_text(encoding="utf-8")
LIBRARY = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")

#: What a newcomer reads in five minutes (issue 30); the rest belongs in docs/.
MAX_README_LINES = 300
#: Pages "Where to go" need not link: the site's home (what the README says) and the
#: changelog page (the README links CHANGELOG.md itself).
_NOT_LINKED = ("index.md", "changelog.md")


def _fixed_clock_module() -> types.ModuleType:
    module = types.ModuleType("time")
    module.time = lambda: 1_000_000.0  # type: ignore[attr-defined]
    return module


def run_first_look(text: str, title: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """Runs the one Python block of section ``title`` of ``text`` from the checkout,
    with a fixed clock; returns what it printed and the first plain block after it (what
    the text says it prints)."""
    part = section(text, title)
    (code,) = fenced_blocks(part, "python")
    shown = fenced_blocks(part, "")[0]
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(__import__("sys").modules, "time", _fixed_clock_module())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{title}", "exec"), {})
    return out.getvalue(), shown


def test_the_library_example_prints_what_the_readme_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    printed, shown = run_first_look(README, "The library", monkeypatch)
    assert printed == shown


def test_the_readme_example_is_the_library_guides_first_look() -> None:
    """The README shows the example of the library guide's "A first look", as it is
    there (``tests/unit/test_docs.py`` runs that one too)."""
    readme = section(README, "The library")
    guide = section(LIBRARY, "A first look")
    assert fenced_blocks(readme, "python") == fenced_blocks(guide, "python")
    assert fenced_blocks(readme, "")[0] == fenced_blocks(guide, "")[0]


def test_the_readme_is_short() -> None:
    lines = README.count("\n")
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines: at most {MAX_README_LINES}; move the rest to docs/"
    )


def test_the_readme_links_onward_to_every_guide_page() -> None:
    """The section "Where to go" names every page of the user guide, the library and the reference
    (the site's nav has the rest: the API reference pages, the project's pages)."""
    where = section(README, "Where to go")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    # The site's home page is the README's own text; its changelog page is CHANGELOG.md.
    assert [] == [p for p in pages if f"(docs/{p})" not in where and p not in _NOT_LINKED]
    assert "(CHANGELOG.md)" in where
