"""Unit tests of ``podsync/status/``."""
