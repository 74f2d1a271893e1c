"""Unit tests of ``podsync/loop/``."""
