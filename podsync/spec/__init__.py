"""Pure rules over the model: what the seed's helpers computed, one concept per module.

Container names (``_naming``), the versioned spec hash (``_hashing``), port bindings
(``_ports``), CPU shares and quota (``_cpu``), a pod's QoS class and its containers'
OOM scores (``_qos``), resolv.conf (``_resolv``), image
references and the pull decision (``_images``), the labels podsync writes and reads back
(``_labels``), whose a container or volume is (``_ownership``), the environment
(``_environment``), where volumes live and how containers mount them (``_volumes``),
back-off (``_backoff``), and podsync's state in the engine: the layout of content
volumes (``_content_layout``), their records (``_content_records``) and the stop and
probe records (``_records``). No I/O, no clock, no randomness.

This package is the public face of the rules that name and hash what podsync makes,
beyond the helpers at the top of ``podsync``: the 2014 kubelet's container names
(``parse_2014_container_name``), the prefix of every container name
(``CONTAINER_NAME_PREFIX``), the network container's hash (``network_spec_hash``), the
hash's type and version (``SpecHash``, ``SPEC_HASH_VERSION``), and the names of the
engine volumes of claims and emptyDirs (``claim_volume_name``,
``empty_dir_volume_name``), and the pull policy of a container that gives none
(``default_pull_policy``).

May import: model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# The names are imported when first used (``__getattr__`` below, issue 33): a module of
# the folder that imports another of it does not load the rest of the folder with
# them. Type checkers and the API reference read the imports here.
if _TYPE_CHECKING:
    from podsync.spec._hashing import SPEC_HASH_VERSION, SpecHash, network_spec_hash
    from podsync.spec._images import default_pull_policy
    from podsync.spec._naming import CONTAINER_NAME_PREFIX, parse_2014_container_name
    from podsync.spec._volumes import claim_volume_name, empty_dir_volume_name

#: The modules the names are imported from on first use (the ``_TYPE_CHECKING`` block
#: above lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.spec._hashing": ("SPEC_HASH_VERSION", "SpecHash", "network_spec_hash"),
    "podsync.spec._images": ("default_pull_policy",),
    "podsync.spec._naming": ("CONTAINER_NAME_PREFIX", "parse_2014_container_name"),
    "podsync.spec._volumes": ("claim_volume_name", "empty_dir_volume_name"),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

__all__ = [
    "CONTAINER_NAME_PREFIX",
    "SPEC_HASH_VERSION",
    "SpecHash",
    "claim_volume_name",
    "default_pull_policy",
    "empty_dir_volume_name",
    "network_spec_hash",
    "parse_2014_container_name",
]


# Hidden from type checkers, as on ``podsync`` itself: a misspelt name must not type-check.
if not _TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A name of the face, imported on first use (and kept, so it is imported once)."""
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = globals()[name] = getattr(importlib.import_module(module), name)
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})
