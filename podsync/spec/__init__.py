"""Pure rules over the model: what the seed's helpers computed, one concept per module.

Container names (``_naming``), the versioned spec hash (``_hashing``), port bindings
(``_ports``), CPU shares and quota (``_cpu``), resolv.conf (``_resolv``), image
references and the pull decision (``_images``), the labels podsync writes and reads back
(``_labels``), whose a container or volume is (``_ownership``), the environment
(``_environment``), where volumes live and how containers mount them (``_volumes``),
and podsync's state in the engine: the layout of content volumes
(``_content_layout``), their records (``_content_records``) and the stop and probe
records (``_records``). No I/O, no clock, no randomness.

May import: model.
"""
