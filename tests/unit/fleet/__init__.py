"""Unit tests of ``podsync/fleet/``."""
