"""Schema to model: checked documents become ``Pod`` values.

``_document`` (one document: a pod, a list, a manifest), ``_container``, ``_pod`` and
``_security`` (the rules of containers, of the pod fields beyond 2014 and of security
settings), ``_env`` (the downward API and ``$(VAR)``), ``_projection`` (the files of
configMap, secret, downwardAPI and projected volumes), ``_objects`` (the ConfigMaps and
Secrets of the sources) and ``_kinds`` (what podsync says of the kinds it does not read).

May import: model, spec, host, load/schema.
"""
