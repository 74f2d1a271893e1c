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

from podsync.prober._handlers import DEFAULT_PROBE_TIMEOUT, probe_liveness
from podsync.prober._rules import ProbeKind, ProbeResult, ProbeState

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "ProbeKind",
    "ProbeResult",
    "ProbeState",
    "probe_liveness",
]
