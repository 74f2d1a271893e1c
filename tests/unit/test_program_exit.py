"""The ``podsync`` program (``python -m podsync``, the console script) ends as quickly as
it can (issue 16: a one-pod apply, process start to running): when ``main`` has
returned, nothing the process made is needed again, so the collector's passes over it
during interpreter shutdown are skipped. ``podsync.cli.main`` called from Python (a
library user, a test) touches no collector state."""

from __future__ import annotations

import configparser
import gc
import subprocess
import sys
from pathlib import Path

import pytest

import podsync.__main__
import podsync.cli
from tests.support import paths

ROOT = paths.REPO


def test_the_program_freezes_the_collector_only_after_main_returned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``run`` calls ``main``, then freezes the collector, then exits with main's code."""
    calls: list[str] = []

    def fake_main() -> int:
        calls.append("main")
        return 3

    monkeypatch.setattr(podsync.__main__, "main", fake_main)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))

    with pytest.raises(SystemExit) as exited:
        podsync.__main__.run()

    assert ["main", "freeze"] == calls
    assert 3 == exited.value.code


def test_main_called_from_python_leaves_the_collector_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A library call of ``main`` neither freezes nor pauses the collector."""
    touched: list[str] = []
    for name in ("freeze", "disable", "unfreeze"):
        monkeypatch.setattr(gc, name, lambda name=name: touched.append(name))

    assert 0 == podsync.cli.main(["--version"])

    assert [] == touched
    assert gc.isenabled()


def test_the_console_script_is_the_program_entry() -> None:
    """The installed ``podsync`` command runs ``podsync.__main__.run``, as ``python -m
    podsync`` does."""
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")

    scripts = setup["options.entry_points"]["console_scripts"].split()
    assert ["podsync", "=", "podsync.__main__:run"] == scripts


def test_python_m_podsync_exits_with_mains_code(tmp_path: Path) -> None:
    """``python -m podsync`` passes ``main``'s exit code on and flushes its output."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: 3}\n")

    version = subprocess.run(
        [sys.executable, "-m", "podsync", "--version"], capture_output=True, text=True
    )
    refused = subprocess.run(
        [sys.executable, "-m", "podsync", "plan", str(bad)], capture_output=True, text=True
    )

    assert (0, "podsync") == (version.returncode, version.stdout.split()[0])
    assert 1 == refused.returncode
    assert "bad.yaml" in refused.stderr
