"""``python -m podsync`` and the ``podsync`` console script: the command line (see
``podsync.cli``)."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn

from podsync.cli import main


def run() -> NoReturn:
    """Run the command line and exit with its code.

    Once ``main`` has returned, nothing the process made is needed again: the collector
    is frozen so that interpreter shutdown does not walk every object of the run (the
    loaded pods, the plan, the imported modules) in its final collections - about 40 ms
    of a one-pod ``podsync apply`` (issue 16). Shutdown is otherwise unchanged (atexit
    handlers, flushing, threads). Only the program does this: ``podsync.cli.main``
    called from Python leaves the collector alone.
    """
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
