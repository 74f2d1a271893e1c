"""The ``podsync`` command line: ``plan``, ``apply``, ``show``, ``down``, ``run``,
``publish`` and the operating commands.

``podsync.cli`` is the face (``main``, ``build_parser``, the exit codes); ``_main``
holds the one-shot commands, ``_ops`` the operating ones, ``_run`` the continuous loop,
``_etcd`` publishing and the etcd options, ``_fleet`` ``apply --hosts``, ``_secrets`` a
saved plan's Secret values, ``_console`` what is written where; the ``_*args`` modules
hold the parser.

May import: model, spec, actions, planner, status, runtime, runtime/docker, host,
applier, load, loop, fleet, exceptions.
"""

from __future__ import annotations

from podsync.cli._main import (
    DEFAULT_WAIT_TIMEOUT,
    EXIT_CHANGES,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    RuntimeFactory,
    build_parser,
    main,
)

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
