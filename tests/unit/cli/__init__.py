"""Unit tests of ``podsync/cli/``."""
