"""The arguments of ``podsync run`` (the continuous loop): its periods (``_durations``)
and ``--listen``.

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
from podsync.cli._durations import period

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
