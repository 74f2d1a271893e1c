"""Unit tests of ``podsync/planner/``."""
