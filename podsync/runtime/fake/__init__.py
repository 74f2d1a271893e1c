"""``FakeRuntime``, an in-memory engine that refuses what Docker refuses, and
``FakeClock``.

``_runtime`` holds the engine (its constructor, what a test sets up, inspects and
scripts, the container and image calls), assembled from mixins on one base: ``_engine``
what every call stands on (the lookups, the recording of calls and the faults they
raise, the latency), ``_volumes`` its named volumes and their files, ``_operating`` exec,
logs, attached exec and events. ``_state`` holds its containers, logs and events;
``_rules`` the Docker rules it enforces; ``_calls`` the calls it records and the faults a
test scripts; ``_clock`` the clock. ``podsync.testing`` is its face.

May import: model, spec, actions, runtime, exceptions.
"""
