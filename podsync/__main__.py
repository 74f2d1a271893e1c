"""``python -m podsync``: the ``podsync`` command line (see ``podsync.cli``)."""

from __future__ import annotations

import sys

from podsync.cli import main

if __name__ == "__main__":
    sys.exit(main())
