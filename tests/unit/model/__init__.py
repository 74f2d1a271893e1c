"""Unit tests of ``podsync/model/``."""
