"""``python -m podsync`` and the ``podsync`` console script: the command line (see
``podsync.cli``).

``run`` is the program's own entry, and the only place podsync changes process-wide
state: the process is podsync's. ``podsync.cli.main``, which embedders and tests call
in-process, leaves the garbage collector as it finds it.
"""

from __future__ import annotations

import gc
import sys
from typing import NoReturn

from podsync.cli import main

# Full collections: after this many collections of the middle generation (Python's
# default is 10). See ``tune_collector``.
_FULL_COLLECTION_EVERY = 100


def tune_collector() -> None:
    """Run full garbage collections ten times more rarely than Python's default.

    The program builds a large heap of long-lived objects (pods, observed containers,
    plans) and next to no cyclic garbage: its objects are freed by reference counting.
    A full collection walks the whole heap, and for 10,000 pods Python's default ran 13
    of them in one ``podsync plan`` (about a fifth of its CPU time) to free nothing.
    The young generations are collected as usual, and Python still runs a full
    collection only when the heap has grown by a quarter since the last one, so a loop
    (``podsync run``) that does make cyclic garbage still frees it.
    """
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _FULL_COLLECTION_EVERY)


def run() -> NoReturn:
    """Run the command line and exit with its code.

    Before it, ``tune_collector``. Once ``main`` has returned, nothing the process made
    is needed again: the collector is frozen so that interpreter shutdown does not walk
    every object of the run (the loaded pods, the plan, the imported modules) in its
    final collections - about 40 ms of a one-pod ``podsync apply`` (issue 16). Shutdown
    is otherwise unchanged (atexit handlers, flushing, threads). Only the program does
    this: ``podsync.cli.main`` called from Python leaves the collector alone.
    """
    tune_collector()
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
