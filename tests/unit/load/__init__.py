"""Unit tests of ``podsync/load/``."""
