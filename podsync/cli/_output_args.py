"""The arguments of ``-o FORMAT`` / ``--output FORMAT`` (issue 30): the formats each
command takes, with kubectl's meanings, and the options that ask for them.

Kept apart from ``_args`` (the parser), which adds them to ``plan``, ``show``,
``status``, ``events``, ``apply``, ``down``, ``hosts`` and ``publish``; what each format prints is
``podsync.cli._output``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__: list[str] = []

JSON, YAML, NAME, WIDE = "json", "yaml", "name", "wide"

#: The formats each command takes (kubectl's: ``get pods`` has ``wide``; ``events``
#: prints no names; ``apply --hosts`` has no pods to name, only hosts).
FORMATS: Mapping[str, tuple[str, ...]] = {
    "status": (JSON, YAML, WIDE, NAME),
    "plan": (JSON, YAML, NAME),
    "show": (JSON, YAML, NAME),
    "apply": (JSON, YAML, NAME),
    "down": (JSON, YAML, NAME),
    "events": (JSON, YAML),
    "top": (JSON, YAML),
    "apply --hosts": (JSON, YAML),
    "hosts": (JSON, YAML, WIDE),
    "publish": (JSON, YAML),
}


def add_output_option(
    command: Any, name: str, what: str, *, json_help: str | None = None, note: str = ""
) -> None:
    """``-o FORMAT`` / ``--output FORMAT`` on ``command`` (the formats of ``name``, what
    ``podsync.cli._output`` prints), and ``--json`` with ``json_help`` when given (kept:
    ``-o json``)."""
    *first, last = FORMATS[name]
    command.add_argument(
        "-o",
        "--output",
        metavar="FORMAT",
        help=f"print {what} as {', '.join(first)} or {last} instead of text{note}"
        # plan -o FILE saves, for one release more (its note says so).
        + ("" if name == "plan" else "; an unknown format is a usage error"),
    )
    if json_help is not None:
        command.add_argument("--json", action="store_true", help=f"{json_help} (kept)")


def add_apply_output_option(command: Any, *, down: bool) -> None:
    """``apply``'s ``-o FORMAT`` (what it did); ``down`` takes it too, and prints what
    it removed the same way."""
    command.add_argument(
        "-o",
        "--output",
        metavar="FORMAT",
        help=f"print what {'down' if down else 'apply'} did as json, yaml or name (the pods "
        "it changed, pod/NAMESPACE/NAME) instead of the plan and summary lines"
        + ("" if down else "; with --hosts, json or yaml")
        + "; an unknown format is a usage error",
    )
