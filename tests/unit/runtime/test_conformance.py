"""The runtime conformance suite on ``FakeRuntime``: the cases of
``tests/support/conformance.py`` and ``tests/support/conformance_files.py``, which
``tests/engine/test_conformance.py`` runs on the real engine too."""

from __future__ import annotations

import pytest

from tests.support.conformance import *  # noqa: F403 - the suite's cases, collected here
from tests.support.conformance import Subject, fake_subject
from tests.support.conformance_files import *  # noqa: F403 - the suite's cases, collected here


@pytest.fixture
def subject() -> Subject:
    """The runtime every case runs on: the fake."""
    return fake_subject()
