"""How a pod is doing, and what the operating commands read off the engine for it.

``_pod`` (``pod_status``: phase, conditions, container states), ``_container`` (one
container's state, last run and termination message) and ``_json`` (the versioned JSON
form) are pure: they read what was observed. ``_operate`` does the I/O around them:
finding a pod's containers on an engine, termination messages and log tails, and the
engine's events mapped to pods.

May import: model, spec, actions, runtime, exceptions.
"""
