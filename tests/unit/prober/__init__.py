"""Unit tests of ``podsync/prober/``."""
