"""Unit tests of ``podsync/applier/``."""
