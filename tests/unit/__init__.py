"""Unit tests: no engine, no etcd, no real clock; one folder per folder of podsync."""
