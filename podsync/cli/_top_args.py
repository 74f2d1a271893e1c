"""The arguments of ``podsync top`` (``podsync.cli._top``).

Kept apart from ``_args`` (the other commands' parser), which adds the command with the
engine and output options as parents.
"""

from __future__ import annotations

import argparse
from typing import Any

from podsync.cli._durations import period
from podsync.cli._output_args import add_output_option

__all__: list[str] = []

#: Seconds between ``podsync top``'s two readings, by default.
DEFAULT_WINDOW = 1.0


def add_top_command(commands: Any, *, parents: list[argparse.ArgumentParser]) -> Any:
    """``podsync top``; returns its parser (``_args`` adds the adopt option)."""
    top = commands.add_parser(
        "top",
        parents=parents,
        allow_abbrev=False,
        help="show the CPU and memory the pods use",
        description="A row per pod podsync runs, as kubectl top pods: the CPU it used "
        "over --window (in millicores) and its memory working set (in MiB), its running "
        "containers summed, the network container included. Changes nothing.",
    )
    top.add_argument(
        "pods",
        nargs="*",
        metavar="POD",
        help="only these pods: name, namespace/name, or its full name name.namespace.source",
    )
    top.add_argument(
        "--containers",
        action="store_true",
        help="a row per container (the network container as net) instead of per pod",
    )
    top.add_argument(
        "--window",
        metavar="DURATION",
        type=period,
        default=DEFAULT_WINDOW,
        help=f"the time between the two readings CPU is averaged over (default: "
        f"{DEFAULT_WINDOW:g}s)",
    )
    add_output_option(top, "top", "the usage")
    return top
