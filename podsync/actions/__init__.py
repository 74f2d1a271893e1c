"""The plan's vocabulary: what a plan says, independent of who makes or runs it.

``_actions`` (``Plan``, ``Reason``, the actions, ``CreateSpec``), ``_options`` (the
planning options and policies), ``_fingerprint`` (the digest of the observed state a
saved plan acts on) and ``_json`` (a plan's JSON form). The planner writes this
vocabulary and the runtime side reads it: it is where the two meet. Pure.

May import: model, spec, exceptions.
"""
