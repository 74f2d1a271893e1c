"""Environment variables: the seed's makeEnvironmentVariables (reference §4.1 #29)."""

from __future__ import annotations

import pytest

from podsync import EnvVar
from podsync.spec._environment import environment


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        # The seed's TestMakeEnvVariables case.
        ([EnvVar("foo", "bar"), EnvVar("baz", "blah")], ["foo=bar", "baz=blah"]),
        # No variables.
        ([], []),
        # An empty value.
        ([EnvVar("EMPTY")], ["EMPTY="]),
        # "=" in the value is kept as is: only the first "=" separates.
        ([EnvVar("URL", "a=b=c")], ["URL=a=b=c"]),
        # A repeated name stays repeated, in order: the engine lets the later one win.
        ([EnvVar("X", "1"), EnvVar("Y", "2"), EnvVar("X", "3")], ["X=1", "Y=2", "X=3"]),
    ],
)
def test_environment(env, expected):
    """Each variable becomes NAME=value, in the given order."""

    assert expected == environment(env)


def test_environment_accepts_any_iterable():
    """A generator works as well as a list."""
    expected = ["A=1"]

    assert expected == environment(v for v in [EnvVar("A", "1")])
