"""Reading a fleet back from etcd on the command line: ``podsync hosts``, ``podsync
status --etcd`` and ``podsync events --etcd`` (the parser's arguments are
``_etcd_args``'s, the reads ``podsync.report._fleet``'s).

* ``hosts``: ``kubectl get nodes``' table - NAME, STATUS (Ready / NotReady), LAST
  HEARTBEAT (kubectl's ages; a NotReady host's is the age of its last record, marked
  ``(record)``), PODS (running/desired), ENGINE; ``-o wide`` adds PODSYNC, CPUS, MEMORY,
  CPU and MEMORY USE (the host's usage, ``kubectl top``'s units; ``<unknown>`` for a
  NotReady host), LAST SYNC and SOURCES (how many of them its loop could read).
* ``status --etcd``: ``podsync status``'s columns for every host's pods, with HOST (as
  ``kubectl get pods -A -o wide``'s NODE); a NotReady host's pods are ``Unknown``,
  REASON ``NodeLost``. ``-o json`` is ``status --json``'s document, each record with its
  ``host``.
* ``events --etcd``: ``kubectl get events -A``' columns - LAST SEEN, TYPE, REASON, OBJECT,
  MESSAGE - and HOST; ``-o json`` a JSON object per line.

A record that cannot be read is a warning naming its key; etcd that cannot be reached
is an error line and exit code 1, as for every etcd error.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from podsync.cli._args import EXIT_OK
from podsync.cli._checks import _UsageError
from podsync.cli._console import Console
from podsync.cli._durations import human_duration
from podsync.cli._etcd import endpoint_options
from podsync.cli._output import output_format, pod_name, print_document, print_names, print_record
from podsync.cli._output_args import JSON, NAME, WIDE, YAML
from podsync.etcd._urls import host_key
from podsync.report._fleet import (
    FleetPodStatus,
    HostView,
    age_of,
    fleet_events,
    fleet_hosts,
    fleet_statuses,
    rfc3339_seconds,
)
from podsync.report._records import EventRecord, HostRecord, host_record_json
from podsync.status._json import STATUS_FORMAT_VERSION

__all__: list[str] = []

#: The layout of ``hosts -o json``'s document.
HOSTS_FORMAT_VERSION = 1

# kubectl's placeholders: an empty cell of -o wide, an age it cannot tell.
_NONE = "<none>"
_UNKNOWN = "<unknown>"

_HOSTS_HEADER = ["NAME", "STATUS", "LAST HEARTBEAT", "PODS", "ENGINE"]
_HOSTS_WIDE = ["PODSYNC", "CPUS", "MEMORY", "CPU USE", "MEMORY USE", "LAST SYNC", "SOURCES"]
_PODS_HEADER = ["POD", "READY", "PHASE", "RESTARTS", "AGE", "REASON", "HOST"]
_PODS_WIDE = ["SCOPE", "IMAGES"]
_EVENTS_HEADER = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE", "HOST"]

# What the engine-reading forms take and the fleet-reading ones do not.
_ENGINE_ONLY = {
    "status": (("sources", "SOURCEs"), ("probe", "--probe"), ("watch", "--watch")),
    "events": (("follow", "--follow"), ("adopt_2014_containers", "--adopt-2014-containers")),
}


def reads_fleet(args: argparse.Namespace) -> bool:
    """Whether ``status`` or ``events`` reads the fleet from etcd (``--etcd``); a usage
    error for ``--host`` without it, and for what only the engine's forms take."""
    if getattr(args, "etcd", None) is None:
        if getattr(args, "host", None) is not None:
            raise _UsageError("--host NAME is a host of the fleet: give --etcd URL too")
        return False
    given = [flag for dest, flag in _ENGINE_ONLY[args.command] if getattr(args, dest, None)]
    if getattr(args, "docker_host", None) is not None:
        given.append("-H/--docker-host")
    if given:
        raise _UsageError(
            f"--etcd reads what the hosts reported to etcd, not an engine: "
            f"{', '.join(given)} cannot be given with it"
        )
    if args.host is not None:
        try:
            host_key(args.host)
        except ValueError as exc:
            raise _UsageError(f"--host: {exc}") from None
    return True


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "   ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]


def _print_table(
    console: Console, header: Sequence[str], rows: Sequence[Sequence[str]], empty: str
) -> None:
    if not rows:
        console.note(empty)
        return
    for line in _table(header, rows):
        console.print(line)


# ---------------------------------------------------------------------------------------
# hosts


def cores(value: float | None) -> str:
    """CPU as ``kubectl top`` shows it: millicores, ``250m``."""
    return _NONE if value is None else f"{round(value * 1000)}m"


def memory(value: int | None) -> str:
    """Memory as ``kubectl top`` shows it: mebibytes, ``512Mi`` (gibibytes from 10Gi)."""
    if value is None:
        return _NONE
    return f"{value >> 30}Gi" if value >= 10 << 30 else f"{value >> 20}Mi"


def heartbeat_age(view: HostView) -> str:
    """LAST HEARTBEAT: the age of the lease's last renewal, or for a NotReady host the
    age of its last record, marked ``(record)``."""
    if view.last_heartbeat is None:
        return _UNKNOWN
    age = human_duration(view.last_heartbeat)
    return age if view.last_heartbeat_from == "lease" else f"{age} (record)"


def _since(moment: str, now: float) -> str:
    age = age_of(moment, now)
    return _UNKNOWN if age is None else human_duration(age)


def host_row(view: HostView, now: float, *, wide: bool) -> list[str]:
    """A host's row of ``podsync hosts`` (``wide``: with ``-o wide``'s columns)."""
    row = [
        view.name,
        view.status,
        heartbeat_age(view),
        f"{view.pods_running}/{view.pods_desired}",
        view.engine or _NONE,
    ]
    if not wide:
        return row
    record = view.record or HostRecord(view.name)
    last_sync = _NONE
    if record.last_sync:
        last_sync = _since(record.last_sync, now)
        if not record.last_sync_ok:
            last_sync += " (failed)"
    ok = sum(1 for s in record.sources if s.ok)
    return [
        *row,
        record.podsync_version or _NONE,
        f"{record.cpus:g}" if record.cpus else _NONE,
        memory(record.memory) if record.memory else _NONE,
        # A NotReady host's last usage is no longer its usage (kubectl top shows none).
        cores(record.cpu_cores) if view.ready else _UNKNOWN,
        memory(record.memory_working_set) if view.ready else _UNKNOWN,
        last_sync,
        f"{ok}/{len(record.sources)} ok" if record.sources else _NONE,
    ]


def host_document(view: HostView) -> dict[str, Any]:
    """A host of ``hosts -o json``: what the table shows, and the host's record as it
    wrote it (``null`` when it could not be read)."""
    return {
        "name": view.name,
        "status": view.status,
        "ready": view.ready,
        "last_heartbeat_seconds": view.last_heartbeat,
        "last_heartbeat_from": view.last_heartbeat_from,
        "pods_running": view.pods_running,
        "pods_desired": view.pods_desired,
        "engine": view.engine,
        "podsync_version": view.podsync_version,
        "record": json.loads(host_record_json(view.record)) if view.record else None,
    }


def cmd_hosts(args: argparse.Namespace, console: Console) -> int:
    fmt = output_format(args)
    options = endpoint_options(args, console)
    now = console.clocks.now()
    views = fleet_hosts(args.etcd, options, now=now, on_warning=console.warning)
    if fmt in (JSON, YAML):
        document = {
            "format_version": HOSTS_FORMAT_VERSION,
            "hosts": [host_document(v) for v in views],
        }
        print_document(console, fmt, json.dumps(document, sort_keys=True, indent=2))
        return EXIT_OK
    wide = fmt == WIDE
    header = [*_HOSTS_HEADER, *_HOSTS_WIDE] if wide else _HOSTS_HEADER
    rows = [host_row(v, now, wide=wide) for v in views]
    _print_table(console, header, rows, "No hosts report to etcd.")
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# status --etcd


def pod_age(record: Mapping[str, Any], now: float) -> str:
    """AGE of a reported pod: since its ``created`` time when the record has one, else
    since its oldest container started; ``-`` when neither is known."""
    created = record.get("created")
    if isinstance(created, str):
        age = age_of(created, now)
        if age is not None:
            return human_duration(age)
    started = [
        c["running_since"]
        for c in record.get("containers") or ()
        if isinstance(c, dict) and isinstance(c.get("running_since"), (int, float))
    ]
    return human_duration(now - min(started)) if started else "-"


def _reason(status: FleetPodStatus) -> str:
    """REASON: ``podsync status``'s (kubectl's STATUS where it is not the phase), and a
    NotReady host's ``NodeLost``."""
    record = status.record
    shown, phase = str(record.get("display_status", "")), str(record.get("phase", ""))
    if shown != phase:
        return shown
    return "" if status.host_ready else str(record.get("reason", ""))


def pod_row(status: FleetPodStatus, now: float, *, wide: bool) -> list[str]:
    """A pod's row of ``status --etcd`` (``wide``: with SCOPE and IMAGES)."""
    record = status.record
    ready = record.get("ready")
    shown_ready = f"{ready[0]}/{ready[1]}" if isinstance(ready, list) and len(ready) == 2 else "-"
    row = [
        status.pod,
        shown_ready,
        str(record.get("phase", "")),
        str(record.get("restarts", 0)),
        pod_age(record, now),
        _reason(status),
        status.host,
    ]
    if wide:
        containers = [c for c in record.get("containers") or () if isinstance(c, dict)]
        images = ",".join(dict.fromkeys(str(c["image"]) for c in containers if c.get("image")))
        row += [str(record.get("scope") or _NONE), images or _NONE]
    return row


def statuses_document(statuses: Sequence[FleetPodStatus]) -> str:
    """``status --json``'s document, each record as its host reported it, with ``host``
    (the records' own ``format_version`` is the document's)."""
    pods = [
        {k: v for k, v in s.record.items() if k != "format_version"} | {"host": s.host}
        for s in statuses
    ]
    document = {"format_version": STATUS_FORMAT_VERSION, "pods": pods}
    return json.dumps(document, sort_keys=True, indent=2) + "\n"


def cmd_fleet_status(args: argparse.Namespace, console: Console) -> int:
    fmt = output_format(args)
    options = endpoint_options(args, console)
    now = console.clocks.now()
    statuses = fleet_statuses(args.etcd, options, args.host, now=now, on_warning=console.warning)
    if fmt == NAME:
        print_names(console, (pod_name(s.pod) for s in statuses))
    elif fmt in (JSON, YAML):
        print_document(console, fmt, statuses_document(statuses))
    else:
        wide = fmt == WIDE
        header = [*_PODS_HEADER, *_PODS_WIDE] if wide else _PODS_HEADER
        rows = [pod_row(s, now, wide=wide) for s in statuses]
        _print_table(console, header, rows, "No pods reported.")
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# events --etcd


def event_row(event: EventRecord, now: float) -> list[str]:
    """An event's row: ``kubectl get events -A``' columns, and HOST."""
    return [
        _since(event.time, now),
        event.type,
        event.reason,
        event.object,
        " ".join(event.message.split()),
        event.host,
    ]


def cmd_fleet_events(args: argparse.Namespace, console: Console) -> int:
    fmt = output_format(args)
    options = endpoint_options(args, console)
    now = console.clocks.now()
    events = fleet_events(args.etcd, options, args.host, on_warning=console.warning)
    if args.since is not None:
        events = [e for e in events if rfc3339_seconds(e.time) >= now - args.since]
    if fmt is not None:
        for event in events:
            print_record(console, fmt, attrs.asdict(event))
        return EXIT_OK
    _print_table(console, _EVENTS_HEADER, [event_row(e, now) for e in events], "No events.")
    return EXIT_OK
