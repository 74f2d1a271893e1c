"""The arguments of ``podsync apply --hosts HOSTS.yaml``: a fleet from one process.

Kept apart from ``_args`` (the other commands' parser), which adds them to
``apply`` (and to ``down``, which takes apply's options and refuses these); the command
itself is ``podsync.cli._fleet``'s.
"""

from __future__ import annotations

import argparse

__all__: list[str] = []


def add_fleet_options(command: argparse.ArgumentParser, *, down: bool = False) -> None:
    """``--hosts FILE`` and ``--json`` (``-o json``) on the ``apply`` parser (``down``:
    the same options, with the help that says ``down`` refuses ``--hosts``)."""
    group = command.add_argument_group("fleet")
    group.add_argument(
        "--hosts",
        metavar="FILE",
        help="refused: down removes pods from one engine (-H)"
        if down
        else "apply to several engines at once: FILE maps host names to engine addresses "
        "(unix://, tcp://, ssh://); each pod goes to the host its spec.nodeName names. "
        "Each host keeps its pod directories under ROOT-DIR/hosts/NAME",
    )
    group.add_argument(
        "--json",
        action="store_true",
        help="the same as -o json (kept)"
        if down
        else "the same as -o json (kept): print what apply did as JSON on stdout instead "
        "of the plan and summary lines; with --hosts, each host's outcome",
    )
