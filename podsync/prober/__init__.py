"""Probes and lifecycle hooks.

``_rules`` holds the prober's rules, purely (thresholds, periods, the startup gate, the
stored form); ``_handlers`` runs exec, httpGet and tcpSocket handlers against
containers; ``_probing`` is one sync's probing: which probes are due, running them, and
the states they leave.

This package is the public face of the prober, for a loop that probes on its own: one
probe's state and what a result does to it (``ProbeState``, ``ProbeKind``,
``ProbeResult``), and running a liveness probe once (``probe_liveness``, with
``DEFAULT_PROBE_TIMEOUT``).

May import: model, spec, runtime, host, exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# The names are imported when first used (``__getattr__`` below, issue 33): a module of
# the folder that imports another of it does not load the rest of the folder with
# them. Type checkers and the API reference read the imports here.
if _TYPE_CHECKING:
    from podsync.prober._handlers import DEFAULT_PROBE_TIMEOUT, probe_liveness
    from podsync.prober._rules import ProbeKind, ProbeResult, ProbeState

#: The modules the names are imported from on first use (the ``_TYPE_CHECKING`` block
#: above lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.prober._handlers": ("DEFAULT_PROBE_TIMEOUT", "probe_liveness"),
    "podsync.prober._rules": ("ProbeKind", "ProbeResult", "ProbeState"),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "ProbeKind",
    "ProbeResult",
    "ProbeState",
    "probe_liveness",
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
