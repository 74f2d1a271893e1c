"""The arguments of ``podsync run`` (the continuous loop): its periods (``_durations``),
``--listen`` and reporting to etcd (``--report-to``, ``--no-report``, ``--report-ttl``,
``--event-ttl``).

Kept apart from ``_args`` (the other commands' parser), which adds the command
with the common options as parents.
"""

from __future__ import annotations

import argparse
from typing import Any

from podsync.actions._options import (
    DEFAULT_GC_PERIOD,
    DEFAULT_SHUTDOWN_TIMEOUT,
    DEFAULT_SOURCE_PERIOD,
    DEFAULT_SYNC_PERIOD,
    DEFAULT_USAGE_PERIOD,
)
from podsync.cli._durations import duration, period
from podsync.report._records import DEFAULT_EVENT_TTL, DEFAULT_LEASE_TTL

__all__: list[str] = []


def add_run_command(commands: Any, *, parents: list[argparse.ArgumentParser]) -> None:
    """``podsync run``: the continuous loop (``podsync.Reconciler``)."""
    r = commands.add_parser(
        "run",
        parents=parents,
        allow_abbrev=False,
        help="keep the engine running the pods, continuously",
        description="Keep the engine running the pods of the sources, as the kubelet's "
        "sync loop: each source is read again every source period (a source that cannot "
        "be read or has an error keeps its pods, and the error is logged), the pods are "
        "synced when a source changed, every sync period, and at once when one of their "
        "containers dies; garbage is collected every GC period. Runs until SIGTERM or "
        "SIGINT, then exits 0; the pods keep running.",
    )
    r.add_argument("sources", nargs="*", metavar="SOURCE", help="pod files, directories, URLs")
    r.add_argument(
        "--sync-period",
        metavar="DURATION",
        type=period,
        default=DEFAULT_SYNC_PERIOD,
        help=f"time between full syncs (default: {DEFAULT_SYNC_PERIOD:g}s)",
    )
    r.add_argument(
        "--source-period",
        metavar="DURATION",
        type=period,
        default=DEFAULT_SOURCE_PERIOD,
        help=f"time between two reads of a source (default: {DEFAULT_SOURCE_PERIOD:g}s)",
    )
    r.add_argument(
        "--gc-period",
        metavar="DURATION",
        type=period,
        default=DEFAULT_GC_PERIOD,
        help=f"time between garbage collections (default: {DEFAULT_GC_PERIOD:g}s)",
    )
    r.add_argument(
        "--shutdown-timeout",
        metavar="DURATION",
        type=period,
        default=DEFAULT_SHUTDOWN_TIMEOUT,
        help="time the syncs in progress get to finish their engine calls on SIGTERM "
        f"(default: {DEFAULT_SHUTDOWN_TIMEOUT:g}s)",
    )
    r.add_argument(
        "--usage-period",
        metavar="DURATION",
        type=period,
        default=DEFAULT_USAGE_PERIOD,
        help="time between two readings of the pods' CPU and memory for /metrics (with "
        f"--listen; default: {DEFAULT_USAGE_PERIOD:g}s)",
    )
    r.add_argument(
        "--listen",
        metavar="ADDR",
        help="serve /healthz, /pods and /metrics at ADDR (host:port, e.g. 127.0.0.1:10255; "
        "a port alone listens on loopback); off unless given",
    )
    reporting = r.add_argument_group(
        "reporting to etcd",
        "A run whose source is etcd://EP/registry/hosts/HOST/kubelet reports to "
        "etcd://EP/registry/hosts/HOST (its heartbeat, pod statuses and events), with the "
        "same --etcd-* options; --report-to reports any run, or elsewhere.",
    )
    reporting.add_argument(
        "--report-to",
        metavar="URL",
        help="report to etcd://HOST:PORT[,HOST:PORT...]/registry/hosts/HOST",
    )
    reporting.add_argument(
        "--no-report",
        action="store_true",
        help="report nothing, even for an etcd source",
    )
    reporting.add_argument(
        "--report-ttl",
        metavar="SECONDS",
        type=int,
        default=DEFAULT_LEASE_TTL,
        help="the heartbeat's lease TTL: a host silent this long is NotReady "
        f"(default: {DEFAULT_LEASE_TTL}; renewed every quarter of it)",
    )
    reporting.add_argument(
        "--event-ttl",
        metavar="DURATION",
        type=duration,
        default=float(DEFAULT_EVENT_TTL),
        help=f"how long events are kept at least (default: {DEFAULT_EVENT_TTL // 3600}h)",
    )
