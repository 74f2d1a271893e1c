"""Where things are, for tests in any folder of ``tests/``: the repository, the tests'
data, the examples."""

from __future__ import annotations

from pathlib import Path

#: The checkout: ``tests/support/`` is two levels below it.
REPO = Path(__file__).resolve().parents[2]
#: The package's own files (read as text by the layering, README and docs tests).
PACKAGE = REPO / "podsync"
#: Files the tests read: the bad-input corpus, the files people keep.
DATA = REPO / "tests" / "data"
#: The example pod files of the quickstart.
EXAMPLES = REPO / "examples" / "pods"
