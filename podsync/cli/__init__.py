"""The ``podsync`` command line: ``plan``, ``apply``, ``show``, ``down``, ``run``,
``publish``, ``hosts`` and the operating commands.

``podsync.cli`` is the face (``main``, ``build_parser``, ``RuntimeFactory``, the exit
codes); ``_main`` holds ``main`` and the one-shot commands ``plan``, ``apply`` and
``down``, ``_saved`` saved plans (``plan --out``, ``apply --plan``, ``show``), ``_wait``
``apply --wait``, ``_engine`` the engine a one-shot command works on and one sync or
apply of it, ``_ops`` the operating commands, ``_run`` the continuous loop, ``_etcd``
publishing and the etcd options, ``_fleet`` ``apply --hosts``, ``_fleet_read`` the
fleet read back from etcd (``hosts``, ``status --etcd``, ``events --etcd``), ``_secrets`` a saved
plan's Secret values, ``_console`` what is written where, ``_output`` what ``-o
FORMAT`` prints; the ``_*args`` modules hold
the parser (``_args`` with the exit codes), ``_durations`` the Go durations it reads,
``_checks`` the combinations it cannot check, ``_planning`` the planning options the
arguments give.

May import: model, spec, actions, status, runtime, runtime/docker, host,
applier, load, loop, fleet, etcd, report, exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# The names are imported when first used (``__getattr__`` below, issue 33): a module of
# the folder that imports another of it does not load the rest of the folder with
# them. Type checkers and the API reference read the imports here.
if _TYPE_CHECKING:
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

#: The modules the names are imported from on first use (the ``_TYPE_CHECKING`` block
#: above lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.cli._args": (
        "DEFAULT_WAIT_TIMEOUT",
        "EXIT_CHANGES",
        "EXIT_ERROR",
        "EXIT_INTERRUPTED",
        "EXIT_OK",
        "EXIT_USAGE",
        "build_parser",
    ),
    "podsync.cli._engine": ("RuntimeFactory",),
    "podsync.cli._main": ("main",),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

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


# Hidden from type checkers, as on ``podsync`` itself: a misspelt name must not type-check.
if not _TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A name of the face, imported on first use (and kept, so it is imported once)."""
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = globals()[name] = getattr(importlib.import_module(module), name)
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})
