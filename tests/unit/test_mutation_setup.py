"""The mutation run's setup (``tools/mutation.sh``, ``[tool.mutmut]`` in pyproject.toml)
is what its scores rely on (issue 27)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTMUT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]


def test_mutants_run_in_processes_that_ran_no_test():
    """With mutmut's default ``fork``, every mutant inherits what the statistics run left
    in module-level objects (the planner's memo on a test module's pods), computed by
    the unmutated code: mutants of the spec comparison survived through it."""

    assert MUTMUT["process_isolation"] == "forkserver"


def test_the_planner_memo_tests_are_selected():
    """The memo tests (``test_plan_memo.py``) see what a memo mutant changes: they are in
    a selected folder and not left out by an ``--ignore``."""

    memo = "tests/unit/planner/test_plan_memo.py"
    assert (ROOT / memo).is_file()
    selected = MUTMUT["pytest_add_cli_args_test_selection"]
    assert any(memo.startswith(folder.rstrip("/") + "/") for folder in selected)
    ignored = [a.removeprefix("--ignore=") for a in MUTMUT["pytest_add_cli_args"]]
    assert not any(fnmatch.fnmatch(memo, pattern) or memo == pattern for pattern in ignored)


def test_equivalents_name_existing_modules_once():
    """Each recorded equivalent names a mutant of a module that is mutated, once."""

    names = [
        line.split(" ", 1)[0]
        for line in (ROOT / "tools/mutation-equivalent.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert len(names) == len(set(names))
    for name in names:
        module = name.split(".x", 1)[0]
        path = module.replace(".", "/") + ".py"
        assert (ROOT / path).is_file(), name
        assert any(fnmatch.fnmatch(path, glob) for glob in MUTMUT["only_mutate"]), name
