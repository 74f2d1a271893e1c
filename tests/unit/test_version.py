"""``podsync.__version__`` and ``podsync --version`` (issue 30): the installed
package's version, read from its metadata; a source tree without metadata says so."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable

import pytest

import podsync
from podsync.host import _version
from tests.unit.cli import test_cli_unit as unit
from tests.unit.cli.test_cli_unit import Result

# The command-line fixtures of tests/unit/cli/test_cli_unit.py.
clock, run = unit.clock, unit.run


def test_version_is_the_package_metadatas() -> None:
    installed = importlib.metadata.version("podsync")

    assert installed == podsync.__version__
    assert "__version__" in dir(podsync)
    assert "__version__" not in podsync.__all__  # a dunder, as every package's


def test_version_command_prints_the_same(run: Callable[..., Result]) -> None:
    result = run("--version", engine_options=False)

    assert 0 == result.code
    assert f"podsync {podsync.__version__}\n" == result.out


@pytest.fixture
def no_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """podsync as a checkout that was never installed: no package metadata, and no
    version read before."""

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_version, "version", missing)
    monkeypatch.delattr(podsync, "__version__", raising=False)


@pytest.mark.usefixtures("no_metadata")
def test_a_tree_without_metadata_has_a_version_that_says_so(
    run: Callable[..., Result],
) -> None:
    result = run("--version", engine_options=False)

    assert "0+unknown" == podsync.__version__
    assert "podsync 0+unknown\n" == result.out
