"""Engine tests: against a real Docker engine (and etcd, where a test asks for it).

Every test in this folder is marked ``engine`` by its directory (``tests/conftest.py``).
"""
