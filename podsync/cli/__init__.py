"""The ``podsync`` command line: ``plan``, ``apply``, ``show``, ``down``, ``run``,
``publish`` and the operating commands.

``podsync.cli`` is the face (``main``, ``build_parser``, ``RuntimeFactory``, the exit
codes); ``_main`` holds ``main`` and the one-shot commands ``plan``, ``apply`` and
``down``, ``_saved`` saved plans (``plan --out``, ``apply --plan``, ``show``), ``_wait``
``apply --wait``, ``_engine`` the engine a one-shot command works on and one sync or
apply of it, ``_ops`` the operating commands, ``_run`` the continuous loop, ``_etcd``
publishing and the etcd options, ``_fleet`` ``apply --hosts``, ``_secrets`` a saved
plan's Secret values, ``_console`` what is written where, ``_output`` what ``-o
FORMAT`` prints; the ``_*args`` modules hold
the parser (``_args`` with the exit codes), ``_durations`` the Go durations it reads,
``_checks`` the combinations it cannot check, ``_planning`` the planning options the
arguments give.

May import: model, spec, actions, status, runtime, runtime/docker, host,
applier, load, loop, fleet, report, etcd, exceptions.
"""

from __future__ import annotations

from podsync.cli._args import (
    DEFAULT_WAIT_TIMEOUT,
    EXIT_CHANGES,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    build_parser,
)
from podsync.cli._engine import RuntimeFactory
from podsync.cli._main import main

__all__ = [
    "DEFAULT_WAIT_TIMEOUT",
    "EXIT_CHANGES",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "RuntimeFactory",
    "build_parser",
    "main",
]
