"""Unit tests of ``podsync/runtime/``."""
