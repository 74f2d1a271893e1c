"""etcd tests: against a real etcd server on loopback.

Every test in this folder is marked ``etcd`` by its directory (``tests/conftest.py``).
"""
