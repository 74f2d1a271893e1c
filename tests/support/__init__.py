"""Shared helpers of the tests: the engine and etcd harnesses, the clock guard, the
engine model, strategies, paths."""
