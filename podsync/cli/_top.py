"""``podsync top``: the CPU and memory podsync's pods use now, as ``kubectl top pods``.

Usage::

    podsync top [POD...] [--containers] [--window DURATION] [-o json|yaml]

The engine is read twice, ``--window`` apart (1 s by default): CPU is a rate, the CPU
seconds each container used between the two readings divided by the seconds between
them (``podsync.status.pod_usage``); memory is the working set of the second reading
(usage minus inactive file cache, cAdvisor's and so ``kubectl top``'s). The figures are
printed in kubectl's forms (``top_pod.go``, ``printSingleResourceUsage``): CPU in whole
millicores, rounded up as ``Quantity.MilliValue`` does (``3m``), memory in whole
mebibytes, rounded down (``12Mi``). A container that started between the readings has
no rate yet: ``-``.

A pod's row sums its running containers, the network container included (``net``:
with ``--containers`` it has a row of its own, so that the rows add up to the pod's).
The runtime must read usage (``podsync.runtime.UsageRuntime``); another is told so
(``MissingCapability``). Changes nothing.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from podsync.cli._args import EXIT_OK
from podsync.cli._console import Console
from podsync.cli._output import output_format, print_document
from podsync.model._usage import PodUsage, UsageFigures
from podsync.runtime._protocol import Runtime, require_usage
from podsync.spec._ownership import ownership
from podsync.status._operate import pod_refs
from podsync.status._usage import pod_usage

__all__: list[str] = []

_HEADER = ["NAME", "CPU(cores)", "MEMORY(bytes)"]
_CONTAINERS_HEADER = ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
_MiB = 1024 * 1024


def cpu_text(cores: float | None) -> str:
    """kubectl's CPU cell: whole millicores, rounded up (``0.0021`` -> ``3m``); ``-``
    without a rate."""
    if cores is None:
        return "-"
    # A hair below a whole millicore is that millicore (float error), not the next.
    return f"{math.ceil(round(cores * 1000, 6))}m"


def memory_text(working_set: int) -> str:
    """kubectl's memory cell: whole mebibytes, rounded down (``12.9 MiB`` -> ``12Mi``)."""
    return f"{working_set // _MiB}Mi"


def top_rows(usage: Sequence[PodUsage], *, containers: bool) -> list[list[str]]:
    """The table, its header first: a row per pod, or per container with
    ``containers``."""
    if not containers:
        return [
            _HEADER,
            *([u.pod, cpu_text(u.total.cpu_cores), memory_text(u.total.memory_working_set)]
              for u in usage),
        ]  # fmt: skip
    rows = [_CONTAINERS_HEADER]
    for u in usage:
        for name, figures in u.containers.items():
            rows.append(
                [u.pod, name, cpu_text(figures.cpu_cores), memory_text(figures.memory_working_set)]
            )
    return rows


def table_lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` as aligned columns, three spaces apart (kubectl's)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "   ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _figures(figures: UsageFigures) -> dict[str, Any]:
    return {"cpu_cores": figures.cpu_cores, "memory_bytes": figures.memory_working_set}


def usage_json(usage: Sequence[PodUsage], window: float) -> str:
    """``top -o json``'s document: the window, and each pod with its containers."""
    pods = [
        {
            "pod": u.pod,
            "uid": u.uid,
            **_figures(u.total),
            "containers": [{"name": n, **_figures(f)} for n, f in u.containers.items()],
        }
        for u in usage
    ]
    return json.dumps({"window_seconds": window, "pods": pods}, indent=2, sort_keys=True)


def cmd_top(
    args: argparse.Namespace,
    console: Console,
    engine: Callable[[], Any],
    sleep: Callable[[float], None],
) -> int:
    """``podsync top``: two readings ``--window`` apart, printed."""
    from podsync.cli._ops import _pod

    fmt = output_format(args)
    adopt = bool(args.adopt_2014_containers)
    with engine() as runtime:
        runtime_: Runtime = runtime
        reader = require_usage(runtime_, "podsync top")
        seen = runtime_.list_containers()
        wanted = {_pod(pod_refs(seen, adopt_2014_containers=adopt), p).uid for p in args.pods}
        mine = []
        for oc in seen:
            owner = ownership(oc, adopt_2014_containers=adopt)
            if oc.running and owner is not None and (not wanted or owner.pod_uid in wanted):
                mine.append(oc)
        ids = [oc.id for oc in mine]
        first = reader.container_usage(ids) if ids else {}
        if ids:
            sleep(args.window)
        second = reader.container_usage(ids) if ids else {}
    usage = pod_usage(first, second, mine, adopt_2014_containers=adopt)
    if fmt is not None:
        print_document(console, fmt, usage_json(usage, args.window))
    elif not usage:
        console.note("No running pods.")
    else:
        for line in table_lines(top_rows(usage, containers=args.containers)):
            console.print(line)
    return EXIT_OK
