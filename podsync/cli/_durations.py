"""Durations on the command line, written as Go writes them: ``10s``, ``5m``, ``1h30m``,
``250ms``.

The kubelet's periods (``--sync-frequency``) and kubectl's ``--since`` take this form,
and so do ``podsync run``'s periods and ``podsync logs/events --since``. ``duration``
is an argparse type: a bad value is an ``ArgumentTypeError``, which the parser reports
as a usage error naming the option.
"""

from __future__ import annotations

import argparse
import re

__all__: list[str] = []

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(text: str) -> float:
    """A Go duration (``10s``, ``1m30s``, ``250ms``) in seconds: one or more numbers,
    each with its unit (``h``, ``m``, ``s``, ``ms``), nothing else."""
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise argparse.ArgumentTypeError(
            f"expected a duration such as 10s, 5m, 1h30m or 500ms, got {text!r}"
        )
    return sum(float(n) * _SECONDS[u] for n, u in parts)


def period(text: str) -> float:
    """A period: a duration (``10s``, ``1m``, ``500ms``) or seconds (``2.5``), above 0."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = duration(text)
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text!r}")
    return seconds
