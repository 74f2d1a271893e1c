"""Unit tests of ``podsync/host/``."""
