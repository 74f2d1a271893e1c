"""Container environment: ``EnvVar`` values to the engine's ``NAME=value`` strings.

Contract: ``environment(env)`` gives one ``NAME=value`` string per variable, in the
given order, with nothing added, dropped or merged.

Ported from the seed's ``makeEnvironmentVariables`` (reference §2.5, test §4.1 #29). The
order is kept because the engine applies the list in order: when a name repeats, the
later entry wins, and the spec hash treats a reordering as a change for that reason.

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from podsync.model._pod import EnvVar
from podsync.model._secrets import SecretText, join_texts

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "environment",
]


def environment(env: Iterable[EnvVar]) -> list[str]:
    """``["NAME=value", ...]`` for the docker SDK's ``environment=``, in order. An entry
    whose value holds a Secret's is a ``SecretText`` too (``podsync.model._secrets``), so that
    nothing downstream writes it down."""
    return [
        join_texts([var.name, "=", var.value])
        if isinstance(var.value, SecretText)
        else f"{var.name}={var.value}"
        for var in env
    ]
