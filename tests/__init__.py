"""podsync's test suite: a package, so that ``.ci/test`` can run
``python -m tests.support.engine`` and tests can share helpers."""
