"""The shape of pod files: YAML read hardened, checked scalars, the schema classes
that mirror the YAML, and the Kubernetes fields podsync refuses or ignores.

``_yaml`` (bytes to plain data), ``_scalars`` (one value at a time), ``_pod`` (the pod
schema and its strict converter), ``_pod_fields``, ``_objects``, ``_security`` and
``_volumes`` (the schema of the fields beyond 2014, of ConfigMaps, Secrets and claims,
of security settings and of volumes), ``_unsupported`` (refused and ignored fields, and
did-you-mean).

May import: model, spec.
"""
