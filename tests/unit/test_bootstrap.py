"""The environment bootstrap both README commands share (``.ci/venv.sh``).

What a new user meets before any podsync code runs: which interpreter is used, the error
for one that is too old, and the reuse of the checkout's environment. These run the real
shell functions in ``bash``; nothing is installed (an environment that already holds
podsync is reused, so pip is never called). The full path - a fresh clone, Debian's own
externally managed ``python3`` - is what ``.ci/run`` runs in CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import paths

ROOT = paths.REPO
VENV_SH = ROOT / ".ci" / "venv.sh"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash scripts")


def run_ensure_venv(
    venv: Path, spec: str = ".", python: str | None = None, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``ensure_venv SPEC`` in the checkout, with PODSYNC_VENV=venv; prints VENV_PY last."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "PODSYNC_VENV")}
    env["PODSYNC_VENV"] = str(venv)
    if python is not None:
        env["PYTHON"] = python
    if path is not None:
        env["PATH"] = path
    script = (
        'say() { printf "%s\\n" "$*"; }\n'
        'install_debian_packages() { echo "apt-get install $*"; return 1; }\n'
        f"source {VENV_SH}\n"
        f'ensure_venv "{spec}" && echo "VENV_PY=$VENV_PY"\n'
    )
    return subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def fake_python(directory: Path, version: str) -> Path:
    """A ``python3`` that answers like an interpreter of ``version`` (too old to run
    podsync): it prints its identity and fails the version check."""
    directory.mkdir(parents=True, exist_ok=True)
    program = directory / "python3"
    program.write_text(
        "#!/bin/sh\n"
        'case "$2" in\n'
        f'  *print*) echo "{program} {version}" ;;\n'
        "  *version_info*) exit 1 ;;\n"
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    program.chmod(0o755)
    return program


def installed_environment(venv: Path, spec: str = ".[dev]") -> Path:
    """An environment that holds podsync already: its python runs as the one running
    these tests, except that ``python -m pip`` only records its arguments (in the file
    returned) - these tests never install anything. Its install stamp matches this
    checkout's packaging."""
    (venv / "bin").mkdir(parents=True)
    pip_calls = venv / "pip-calls"
    python = venv / "bin" / "python"
    python.write_text(
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "-m pip" ]; then echo "$*" >>{pip_calls}; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    digest = subprocess.run(
        ["bash", "-c", "cat setup.cfg pyproject.toml | sha256sum | cut -c1-16"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (venv / ".podsync-installed").write_text(f"{digest} {spec}\n")
    return pip_calls


def test_too_old_python_is_a_clear_error(tmp_path: Path) -> None:
    old = fake_python(tmp_path / "old", "3.9.2")
    venv = tmp_path / "venv"
    result = run_ensure_venv(venv, python=str(old))
    assert result.returncode != 0
    assert f"podsync needs Python 3.11 or newer, and {old} is Python 3.9.2" in result.stdout
    assert "apt-get install python3" in result.stdout  # what to install
    assert "PYTHON=" in result.stdout  # and how to point at it
    assert not venv.exists()


def test_too_old_python3_on_path_is_a_clear_error(tmp_path: Path) -> None:
    fake_python(tmp_path / "bin", "3.10.12")
    result = run_ensure_venv(tmp_path / "venv", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert result.returncode != 0
    assert "is Python 3.10.12" in result.stdout


def test_missing_interpreter_is_a_clear_error(tmp_path: Path) -> None:
    result = run_ensure_venv(tmp_path / "venv", python="python3.99-not-here")
    assert result.returncode != 0
    assert "no 'python3.99-not-here' on PATH: podsync needs Python 3.11 or newer" in result.stdout


def test_a_second_run_reuses_the_environment(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    pip_calls = installed_environment(venv, spec=".[dev]")
    for spec in (".[dev]", "."):  # the tests' environment serves the quickstart as it is
        result = run_ensure_venv(venv, spec=spec)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"podsync ({spec}) is installed in {venv}" in result.stdout
        assert "pip install" not in result.stdout
        assert "python -m venv" not in result.stdout
        assert result.stdout.strip().endswith(f"VENV_PY={venv}/bin/python")
    assert not pip_calls.exists()


def test_changed_packaging_installs_again(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    pip_calls = installed_environment(venv, spec=".")
    (venv / ".podsync-installed").write_text("0000000000000000 .\n")  # another setup.cfg
    result = run_ensure_venv(venv, spec=".")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"pip install --editable '.' into {venv}" in result.stdout
    assert "install --quiet --editable ." in pip_calls.read_text()
    # ... and the stamp now records this checkout: the next run installs nothing.
    again = run_ensure_venv(venv, spec=".")
    assert "pip install" not in again.stdout
    assert pip_calls.read_text().count("install") == 1


def test_the_quickstart_environment_does_not_serve_the_tests(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    pip_calls = installed_environment(venv, spec=".")
    result = run_ensure_venv(venv, spec=".[dev]")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "install --quiet --editable .[dev]" in pip_calls.read_text()


def test_python_selects_another_interpreter(tmp_path: Path) -> None:
    """PYTHON is checked even when an environment exists: a too-old choice is refused
    before the working environment is touched."""
    venv = tmp_path / "venv"
    installed_environment(venv)
    old = fake_python(tmp_path / "old", "3.8.10")
    result = run_ensure_venv(venv, python=str(old))
    assert result.returncode != 0
    assert "is Python 3.8.10" in result.stdout
    assert (venv / "bin" / "python").exists()  # kept
