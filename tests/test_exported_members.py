"""The public surface: everything public is in ``podsync.__all__``, and nothing else."""

from __future__ import annotations

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
