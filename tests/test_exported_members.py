"""The public surface: everything public is in ``podsync.__all__``, and nothing else."""

from __future__ import annotations

import enum

import podsync


def test_all_lists_exactly_the_public_names():
    """``podsync.__all__`` is the sorted set of non-underscore names the package defines
    (submodules aside), so nothing becomes public by accident."""
    public = {
        name
        for name, value in vars(podsync).items()
        if not name.startswith("_") and type(value).__name__ != "module" and name != "annotations"
    }

    assert sorted(public) == sorted(podsync.__all__)
    assert len(set(podsync.__all__)) == len(podsync.__all__)


def test_every_enum_is_a_str_enum():
    """Every enum podsync exports is of one kind, ``enum.StrEnum``: a member is its value
    (the string JSON, labels and saved plans hold), and ``.value`` is that string."""
    enums = [
        value
        for value in vars(podsync).values()
        if isinstance(value, type) and issubclass(value, enum.Enum)
    ]

    assert len(enums) >= 7  # Reason, EventKind, ActionStatus and the model's policies
    assert [] == [e.__name__ for e in enums if not issubclass(e, enum.StrEnum)]
    assert all(str(m) == m.value == m for e in enums for m in e)
