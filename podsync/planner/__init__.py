"""The planner: desired pods and an observed state in, an explained plan out.

``_plan`` (the entry point, ``plan``, and the whole-plan steps), ``_admission`` (which
pods are planned and why the others are rejected), ``_host_ports`` (host-port
conflicts), ``_context`` (the state one plan shares between its pods: images, pulls,
probe verdicts), ``_pod`` (the seed's syncPod for one pod), ``_restarts`` (when a stopped
container starts again, its crash-loop back-off, the probe kills), ``_create_specs``
(what a create asks of the engine, and the labels it records), ``_init`` (init
containers and sidecars), ``_volumes`` (the files of content volumes), ``_empty_dirs``
(emptyDir engine volumes), ``_spec_change`` (why an instance differs from its spec) and
``_gc`` (garbage collection and pods no longer desired), ``_joins`` (network containers
removed after the containers that join them). Pure: no I/O, no clock, no
randomness; every action carries its reason.

May import: model, spec, actions.
"""
