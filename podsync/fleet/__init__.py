"""Beyond one host: a fleet's hosts file, one sync per host from one process, and
publishing a host's pods to etcd.

``_hosts`` (the hosts file, and a fleet's pods by ``spec.nodeName``), ``_sync_hosts``
(``sync_hosts``) and ``_publish`` (``publish``: validation, diff, compare-and-swap).

This package is the public face of the fleet: ``load_hosts`` / ``parse_hosts`` give the
``Host`` values (``HostTLS`` for a ``tcp://`` engine), ``load_host_pods`` each host's
pods, ``sync_hosts`` syncs them all at once (``FleetResult``, one ``HostResult`` per
host), ``host_root_dir`` is where a host's pod directories go; ``publish`` writes a
host's pods to etcd (``PublishResult``; also at the top of ``podsync``).

May import: model, actions, runtime, host, applier, load, load/schema, load/convert,
loop, etcd, report, exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

# The names are imported when first used (``__getattr__`` below, issue 33): a module of
# the folder that imports another of it does not load the rest of the folder with
# them. Type checkers and the API reference read the imports here.
if _TYPE_CHECKING:
    from podsync.fleet._hosts import (
        Host,
        HostTLS,
        host_root_dir,
        load_host_pods,
        load_hosts,
        parse_hosts,
    )
    from podsync.fleet._publish import PublishResult, publish
    from podsync.fleet._sync_hosts import FleetResult, HostResult, sync_hosts

#: The modules the names are imported from on first use (the ``_TYPE_CHECKING`` block
#: above lists the same; tests/unit/test_exported_members.py checks it).
_ON_FIRST_USE: dict[str, tuple[str, ...]] = {
    "podsync.fleet._hosts": (
        "Host",
        "HostTLS",
        "host_root_dir",
        "load_host_pods",
        "load_hosts",
        "parse_hosts",
    ),
    "podsync.fleet._publish": ("PublishResult", "publish"),
    "podsync.fleet._sync_hosts": ("FleetResult", "HostResult", "sync_hosts"),
}
_LAZY = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

__all__ = [
    "FleetResult",
    "Host",
    "HostResult",
    "HostTLS",
    "PublishResult",
    "host_root_dir",
    "load_host_pods",
    "load_hosts",
    "parse_hosts",
    "publish",
    "sync_hosts",
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
