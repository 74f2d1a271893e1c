"""The README's Python examples run, and print what the README says they print.

A new user's first contact is the README: its examples are run here as they are written
(the clock they read is the only thing replaced, so the test reads no real clock).
"""

from __future__ import annotations

import contextlib
import io
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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

    namespace = {"pods": podsync.load_pods(["examples/pods/"]), "print": lambda *a: None}
    exec(compile(code, "README.md: Applying plans", "exec"), namespace)
    fake = namespace["fake"]
    assert "create" in fake.call_names()
