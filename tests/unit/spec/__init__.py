"""Unit tests of ``podsync/spec/``."""
