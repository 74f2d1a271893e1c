"""Unit tests of ``podsync/actions/``."""
