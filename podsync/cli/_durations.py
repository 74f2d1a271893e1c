"""Durations on the command line, written as Go writes them: ``10s``, ``5m``, ``1h30m``,
``250ms``.

The kubelet's periods (``--sync-frequency``) and kubectl's ``--since`` take this form,
and so do ``podsync run``'s periods and ``podsync logs/events --since``. Ages are
shown as kubectl shows them (``human_duration``). ``duration``
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


def human_duration(seconds: float) -> str:
    """kubectl's ages (apimachinery ``duration.HumanDuration``): ``45s``, ``2m5s``,
    ``15m``, ``3h10m``, ``2d4h``, ``1y20d``."""
    s = int(seconds)
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" + (f"{s % 60}s" if s % 60 else "")
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h" + (f"{minutes % 60}m" if minutes % 60 else "")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" + (f"{hours % 24}h" if hours % 24 else "")
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" + (f"{days}d" if days else "")
    return f"{hours // 24 // 365}y"
