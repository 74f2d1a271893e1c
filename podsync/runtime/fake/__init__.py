"""``FakeRuntime``, an in-memory engine that refuses what Docker refuses, and
``FakeClock``.

``_runtime`` holds the engine; ``_state`` its containers, logs and events; ``_rules`` the
Docker rules it enforces; ``_calls`` the calls it records and the faults a test scripts;
``_volumes`` its named volumes; ``_clock`` the clock. ``podsync.testing`` is its face.

May import: model, spec, actions, runtime, exceptions.
"""
