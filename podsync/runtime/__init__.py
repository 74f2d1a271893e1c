"""The runtime boundary: what podsync needs from a container engine.

``_protocol`` holds ``Runtime``, a ``typing.Protocol`` with no engine types in its
signatures, and the values it returns. Each engine is a folder beside it: ``docker``
(the docker SDK) and ``fake`` (an in-memory engine for tests).

May import: model, actions.
"""
