"""Engine tests that also need etcd: every test here is marked ``engine`` and ``etcd``
by its directory (``tests/conftest.py``)."""
