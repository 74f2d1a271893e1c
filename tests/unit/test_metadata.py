"""The package metadata in setup.cfg says what is true (issue 30): the Python versions
it lists are the ones podsync runs on, the licence classifier is the licence, and
``Typing :: Typed`` is there because the marker file ships."""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _metadata() -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    return config


def _classifiers() -> list[str]:
    return [line.strip() for line in _metadata()["metadata"]["classifiers"].splitlines() if line]


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_the_python_versions_listed_are_run_and_allowed() -> None:
    listed = [
        _minor(c.rsplit(" :: ", 1)[1])
        for c in _classifiers()
        if c.startswith("Programming Language :: Python :: 3.")
    ]
    required = _metadata()["options"]["python_requires"].strip()
    assert required.startswith(">=")
    oldest = _minor(required.removeprefix(">="))

    assert listed, "no Python version classifier"
    assert all(version >= oldest for version in listed)
    # The suite runs on the versions CI runs: this one must be listed.
    assert sys.version_info[:2] in listed
    assert oldest in listed


def test_the_licence_classifier_is_the_licence() -> None:
    metadata = _metadata()["metadata"]
    licences = [c for c in _classifiers() if c.startswith("License :: ")]

    assert "Apache-2.0" == metadata["license"].strip()
    assert ["License :: OSI Approved :: Apache Software License"] == licences
    assert "Apache License" in (ROOT / metadata["license_files"].strip()).read_text()


def test_typed_is_claimed_because_the_marker_ships() -> None:
    package_data = _metadata()["options.package_data"]["podsync"]

    assert "Typing :: Typed" in _classifiers()
    assert "py.typed" in package_data
    assert (ROOT / "podsync" / "py.typed").is_file()
