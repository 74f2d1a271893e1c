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
