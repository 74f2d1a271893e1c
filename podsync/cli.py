"""The ``podsync`` command line: ``plan``, ``apply``, ``show`` and ``down``.

Usage::

    podsync plan [--json] [-o FILE] [--detailed-exitcode] SOURCE...
    podsync apply [--wait [--timeout S]] SOURCE...
    podsync apply --plan FILE
    podsync show [--json] FILE
    podsync down SOURCE...

A SOURCE is a pod file, a directory of them, an http(s) URL, or ``-`` for standard
input; several are merged (``podsync.load_pods``). The sources are read completely
*before* the engine is contacted: any problem in any of them is reported with its file
and ``$.path``, and nothing on the engine is touched.

Conventions (Terraform's for plans and exit codes, the docker CLI's for the engine):

* Standard output carries the result: the plan, the apply summary, the ``--wait``
  report, the JSON of ``--json``. Standard error carries progress, warnings and errors,
  as text or, with ``--log-format json``, as one JSON object per line.
* Exit codes: 0 success; 1 any error (a command line usage error, a bad source, an
  unreachable engine, a failed action, a stale saved plan, a rejected pod, a pod not
  running after ``--wait``); 2 only for ``plan --detailed-exitcode``: success, with
  changes; 130 interrupted. A usage error is 1, not argparse's 2, as in Terraform: a
  script reading 2 as "changes" must never act on a typo. Errors are one
  ``podsync: error: ...`` line each, never a traceback.
* The engine is ``--docker-host`` / ``-H``, else ``DOCKER_HOST`` (with
  ``DOCKER_TLS_VERIFY`` and ``DOCKER_CERT_PATH``, as the docker SDK and CLI read them),
  else the local socket. ``ssh://`` hosts use the ``ssh`` command, as the docker CLI.

Saved plans (``plan -o FILE``, then ``apply --plan FILE``) carry a fingerprint of the
engine state they act on (``Plan.fingerprint``, computed with ``plan``'s digest over the
containers and pod directories of the pods in the plan and the images it uses; the rest
of the engine is left out, since applying the plan touches nothing else). ``apply
--plan`` observes the engine again and refuses the plan when the fingerprint differs -
including a plan made against an empty engine, once its pods exist (Terraform #24078).
A saved plan carries the options it was made with (``Plan.options``); ``apply --plan``
uses its root directory, and refuses a ``--root-dir`` that names another one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, NoReturn

import attrs

from podsync._actions import (
    FAILED_STOPS,
    Action,
    Plan,
    PodPlan,
    Reason,
    Wait,
    shorten_ids,
)
from podsync._apply import (
    DEFAULT_HOOK_TIMEOUT,
    DEFAULT_WORKERS,
    ActionStatus,
    ApplyResult,
    Event,
    EventKind,
    apply,
)
from podsync._clock import Clock, clocks, system_sleep
from podsync._config import load_pods
from podsync._fingerprint import plan_fingerprint
from podsync._hooks import probe_liveness
from podsync._models import ObservedContainer, Pod, RestartPolicy
from podsync._options import DEFAULT_NETWORK_IMAGE, GCPolicy, PlanOptions
from podsync._ownership import ownership
from podsync._plan import plan
from podsync._plan_json import plan_from_json, plan_to_json
from podsync._resolv import (
    HOST_RESOLV_CONF,
    SYSTEMD_RESOLV_CONF,
    is_loopback_nameserver,
    only_loopback_nameservers,
    parse_resolv_conf,
)
from podsync._runtime import Runtime
from podsync._sync import Observation, observe
from podsync.exceptions import ConfigError, EngineUnavailable, PodsyncError, RuntimeCallError

__all__ = [
    "DEFAULT_WAIT_TIMEOUT",
    "EXIT_CHANGES",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "RuntimeFactory",
    "build_parser",
    "main",
]

#: Success (``plan --detailed-exitcode``: success and no changes).
EXIT_OK = 0
#: Any error: a bad source, an unreachable engine, a failed action, a stale saved plan,
#: a rejected pod, a pod that is not running when ``--wait`` gives up.
EXIT_ERROR = 1
#: ``plan --detailed-exitcode``: success, and the plan has changes (Terraform's code).
EXIT_CHANGES = 2
#: A command line that cannot be used: the code of every error, as Terraform's usage
#: errors. Never argparse's 2, which ``plan --detailed-exitcode`` reserves for "changes".
EXIT_USAGE = EXIT_ERROR
#: Interrupted (Ctrl-C): 128 + SIGINT, as a shell reports it.
EXIT_INTERRUPTED = 130

#: Seconds ``apply --wait`` waits for the pods unless ``--timeout`` says otherwise.
DEFAULT_WAIT_TIMEOUT = 60.0

#: Makes a runtime for an engine address (``--docker-host``; ``None``: the environment).
RuntimeFactory = Callable[[str | None], Runtime]

# The seed's run-once retried after 1 s, doubling (reference §5); here the delay is
# capped so that a long --timeout still notices a pod that comes up late.
_WAIT_FIRST_DELAY = 1.0
_WAIT_MAX_DELAY = 10.0
# A container counts as running once it has been seen running for this long: one that
# crashes right after its start is not reported as up (the Docker engine reports a
# started container as running before its process had a chance to fail).
_STABLE_SECONDS = 1.0

# Where the host's DNS settings are read from (module attributes, so tests point them
# at files of their own).
_RESOLV_CONF = HOST_RESOLV_CONF
_SYSTEMD_RESOLV_CONF = SYSTEMD_RESOLV_CONF
_DEFAULT_ROOT_DIR = PlanOptions().root_dir
_DEFAULT_GC = GCPolicy()
_DEFAULT_STOP_TIMEOUT = PlanOptions().stop_timeout


# ---------------------------------------------------------------------------------------
# Errors inside the CLI


class _Failure(Exception):
    """The command failed; ``lines`` are printed as errors and the exit code is 1."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class _UsageError(Exception):
    """A combination of options argparse cannot express; exit code 1 with usage."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that a usage error exits ``EXIT_USAGE`` (1) instead of
    argparse's 2, the code ``plan --detailed-exitcode`` gives to "changes". Subcommand
    parsers are made with the class of their parent, so they exit the same way."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


# ---------------------------------------------------------------------------------------
# The command line


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def _count_or_none(text: str) -> int | None:
    if text.lower() == "none":
        return None
    return _count(text)


def _seconds(text: str, *, zero: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds, got {text!r}")
    if value < 0 or (value == 0 and not zero):
        bound = "must not be negative" if zero else "must be more than 0"
        raise argparse.ArgumentTypeError(f"{bound}, got {text}")
    return value


def _positive_seconds(text: str) -> float:
    return _seconds(text, zero=False)


def _nonnegative_seconds(text: str) -> float:
    return _seconds(text, zero=True)


# Options that shape a plan: they make no sense with ``apply --plan FILE``, whose plan
# was made with its own. Their argparse default is _UNSET, so "given" can be told apart.
_PLANNING_OPTIONS = {
    "network_image": "--network-image",
    "network_mode": "--network-mode",
    "cluster_dns": "--cluster-dns",
    "cluster_domain": "--cluster-domain",
    "allow_privileged": "--allow-privileged",
    "no_delete": "--no-delete",
    "stop_timeout": "--stop-timeout",
    "max_per_container": "--max-per-container",
    "min_age": "--min-age",
    "max_total": "--max-total",
    "remove_dangling_images": "--remove-dangling-images",
    "no_probe": "--no-probe",
    "adopt_2014_containers": "--adopt-2014-containers",
    "resolv_conf": "--resolv-conf",
}


class _Unset:
    """The argparse default of the planning options: "not given" (``None`` is a value:
    ``--max-per-container none``)."""

    def __repr__(self) -> str:
        return "(not given)"


_UNSET: Any = _Unset()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("podsync")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``podsync`` command (all subcommands)."""
    output = _Parser(add_help=False, allow_abbrev=False)
    output.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="standard error as text (default) or as JSON lines: every apply event, "
        "warning, error and summary is one JSON object",
    )

    engine = _Parser(add_help=False, allow_abbrev=False)
    group = engine.add_argument_group("engine")
    group.add_argument(
        "-H",
        "--docker-host",
        metavar="HOST",
        help="the Docker engine: unix:///path, tcp://host:port or ssh://user@host "
        "(default: DOCKER_HOST, else unix:///var/run/docker.sock)",
    )
    group.add_argument(
        "--root-dir",
        metavar="DIR",
        # _UNSET, so that apply --plan can tell a --root-dir given from the default.
        default=_UNSET,
        help="where pod directories (emptyDir volumes, termination messages) live "
        f"(default: {_DEFAULT_ROOT_DIR})",
    )

    planning = _Parser(add_help=False, allow_abbrev=False)
    group = planning.add_argument_group("planning")
    group.add_argument(
        "--network-image",
        metavar="IMAGE",
        default=_UNSET,
        help=f"the image of each pod's network container (default: {DEFAULT_NETWORK_IMAGE})",
    )
    group.add_argument(
        "--network-mode",
        metavar="MODE",
        default=_UNSET,
        help="network mode of each pod's network container: the engine's default "
        "(bridge) when not given; 'none' gives pods only loopback (host ports are then "
        "recorded but not published)",
    )
    group.add_argument(
        "--cluster-dns", metavar="IP", default=_UNSET, help="DNS server for ClusterFirst pods"
    )
    group.add_argument(
        "--cluster-domain",
        metavar="DOMAIN",
        default=_UNSET,
        help="cluster domain: ClusterFirst pods search <namespace>.<domain> and <domain>",
    )
    group.add_argument(
        "--resolv-conf",
        metavar="FILE",
        default=_UNSET,
        help="the resolv.conf whose name servers and search domains ClusterFirst pods get "
        "after the cluster's (with --cluster-dns or --cluster-domain), as the kubelet's; "
        f"'' for none (default: {HOST_RESOLV_CONF}, or {SYSTEMD_RESOLV_CONF} when that "
        "lists only loopback servers, as on systemd-resolved hosts). Loopback servers are "
        "left out unless --network-mode is host",
    )
    group.add_argument(
        "--allow-privileged",
        action="store_const",
        const=True,
        default=_UNSET,
        help="admit pods with privileged containers (rejected otherwise)",
    )
    group.add_argument(
        "--no-delete",
        action="store_const",
        const=True,
        default=_UNSET,
        help="keep the containers of pods that are not in the sources (by default podsync "
        "stops and removes every pod it runs on the engine that the sources do not describe)",
    )
    group.add_argument(
        "--stop-timeout",
        metavar="SECONDS",
        type=_count,
        default=_UNSET,
        help="seconds a stopped container gets, its preStop handler included, before it "
        "is killed, for pods that set no terminationGracePeriodSeconds "
        f"(default: {_DEFAULT_STOP_TIMEOUT})",
    )
    group.add_argument(
        "--no-probe",
        action="store_const",
        const=True,
        default=_UNSET,
        help="do not run liveness probes before planning (plan runs none unless --probe)",
    )
    _add_adopt_option(group, default=_UNSET)
    gc = planning.add_argument_group("garbage collection")
    gc.add_argument(
        "--max-per-container",
        metavar="N",
        type=_count_or_none,
        default=_UNSET,
        help="exited instances kept per pod container, or 'none' for no limit "
        f"(default: {_DEFAULT_GC.max_per_container})",
    )
    gc.add_argument(
        "--min-age",
        metavar="SECONDS",
        type=_nonnegative_seconds,
        default=_UNSET,
        help=f"an exited container is kept at least this long (default: {_DEFAULT_GC.min_age:g})",
    )
    gc.add_argument(
        "--max-total",
        metavar="N",
        type=_count_or_none,
        default=_UNSET,
        help="cap on exited containers podsync owns, or 'none' (default: none)",
    )
    gc.add_argument(
        "--remove-dangling-images",
        action="store_const",
        const=True,
        default=_UNSET,
        help="remove untagged images no container uses",
    )

    applying = _Parser(add_help=False, allow_abbrev=False)
    group = applying.add_argument_group("applying")
    group.add_argument(
        "--workers",
        metavar="N",
        type=_positive_int,
        default=DEFAULT_WORKERS,
        help=f"engine calls made in parallel (default: {DEFAULT_WORKERS})",
    )
    group.add_argument(
        "--hook-timeout",
        metavar="SECONDS",
        type=_positive_seconds,
        default=DEFAULT_HOOK_TIMEOUT,
        help="time a postStart handler may take; a preStop handler has the container's "
        f"grace period instead (default: {DEFAULT_HOOK_TIMEOUT:g})",
    )

    parser = _Parser(
        prog="podsync",
        allow_abbrev=False,
        description="Make a container engine run the pods described in Kubernetes YAML: "
        "the 2014 kubelet's pod sync as plan and apply.",
        epilog="A SOURCE is a pod file, a directory of pod files, an http(s) URL, or - for "
        "standard input. Exit codes: 0 success, 1 error (usage errors included), 2 changes "
        "(plan --detailed-exitcode only), 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"podsync {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = commands.add_parser(
        "plan",
        parents=[engine, planning, output],
        allow_abbrev=False,
        help="show what apply would do",
        description="Observe the engine and show what it takes to make it run the pods "
        "of the sources, grouped by pod, each action with its reason. Changes nothing.",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="pod files, directories, URLs, -")
    p.add_argument(
        "--json", action="store_true", help="print the plan as JSON (with its format_version)"
    )
    p.add_argument(
        "-o",
        "--out",
        metavar="FILE",
        help="save the plan as JSON, for podsync apply --plan FILE (written with mode 0600: "
        "it holds the containers' environment)",
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="run the liveness probes of running containers, as apply does, and plan the "
        "replacement of those that fail (exec probes run commands inside containers: by "
        "default plan runs nothing on the engine)",
    )
    p.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 0 when there are no changes, 2 when there are, 1 on any error (usage "
        "errors included: 2 always means changes)",
    )

    a = commands.add_parser(
        "apply",
        parents=[engine, planning, applying, output],
        allow_abbrev=False,
        help="make the engine run the pods",
        description="Observe the engine, plan and apply: make it run the pods of the "
        "sources. With --plan FILE, apply a saved plan instead, if the engine is still in "
        "the state the plan was made from.",
    )
    a.add_argument("sources", nargs="*", metavar="SOURCE", help="pod files, directories, URLs, -")
    a.add_argument(
        "--plan",
        metavar="FILE",
        dest="plan_file",
        help="apply this saved plan (podsync plan -o FILE; - for standard input); the "
        "planning options cannot be given with it: the plan was made with its own",
    )
    a.add_argument(
        "--wait",
        action="store_true",
        help="then wait until every pod runs (run-to-completion pods: until they "
        "completed), syncing again with back-off; report per pod",
    )
    a.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_positive_seconds,
        default=DEFAULT_WAIT_TIMEOUT,
        help=f"how long --wait waits (default: {DEFAULT_WAIT_TIMEOUT:g})",
    )

    s = commands.add_parser(
        "show",
        parents=[output],
        allow_abbrev=False,
        help="show a saved plan",
        description="Show a plan saved with podsync plan -o FILE.",
    )
    s.add_argument("file", metavar="FILE", help="the saved plan (- for standard input)")
    s.add_argument("--json", action="store_true", help="print the plan as JSON")

    d = commands.add_parser(
        "down",
        parents=[engine, applying, output],
        allow_abbrev=False,
        help="stop and remove the pods described",
        description="Stop and remove the containers and pod directories of the pods the "
        "sources describe, and nothing else.",
    )
    d.add_argument("sources", nargs="+", metavar="SOURCE", help="pod files, directories, URLs, -")
    d.add_argument(
        "--stop-timeout",
        metavar="SECONDS",
        type=_count,
        default=_DEFAULT_STOP_TIMEOUT,
        help="seconds a stopped container gets, its preStop handler included, before it "
        "is killed, for pods that set no terminationGracePeriodSeconds "
        f"(default: {_DEFAULT_STOP_TIMEOUT})",
    )
    _add_adopt_option(d, default=False)
    return parser


def _add_adopt_option(group: Any, *, default: Any) -> None:
    group.add_argument(
        "--adopt-2014-containers",
        action="store_const",
        const=True,
        default=default,
        help="also take over containers a 2014 kubelet left behind: unlabelled ones "
        "named exactly k8s_<container>.<hash>_<pod>.<namespace>.<source>_<uid>_<8 hex> "
        "(by default they are left alone, as every container podsync did not label)",
    )


# ---------------------------------------------------------------------------------------
# Output


class _Console:
    """Where a command writes: results to stdout; progress, warnings and errors to
    stderr, as text or as JSON lines (``--log-format json``). It carries the command's
    clocks (``main``'s ``clock``), which stamp its lines and time its plans and waits."""

    def __init__(self, log_format: str = "text", clock: Clock | None = None) -> None:
        self.json = log_format == "json"
        self.lock = threading.Lock()
        self.clocks = clocks(clock)

    @property
    def out(self) -> IO[str]:
        return sys.stdout

    @property
    def err(self) -> IO[str]:
        return sys.stderr

    def print(self, text: str = "") -> None:
        """A result, on stdout."""
        with self.lock:
            print(text, file=self.out, flush=True)

    def record(self, kind: str, message: str = "", **fields: Any) -> None:
        """One JSON line on stderr (JSON log format only)."""
        data: dict[str, Any] = {"time": round(self.clocks.now(), 6), "kind": kind}
        data.update(fields)
        data["message"] = message
        line = json.dumps(data, ensure_ascii=False)
        with self.lock:
            print(line, file=self.err, flush=True)

    def _text(self, prefix: str, message: str) -> None:
        with self.lock:
            for line in message.splitlines() or [""]:
                print(f"{prefix}{line}", file=self.err, flush=True)

    def error(self, message: str) -> None:
        if self.json:
            self.record("error", message)
        else:
            self._text("podsync: error: ", message)

    def internal_error(self, message: str) -> None:
        if self.json:
            self.record("internal-error", message)
        else:
            self._text("podsync: internal error: ", message)

    def warning(self, message: str, **fields: Any) -> None:
        if self.json:
            self.record("warning", message, **fields)
        else:
            self._text("podsync: warning: ", message)

    def note(self, message: str, **fields: Any) -> None:
        """Progress that is not an apply event (waiting, re-syncing)."""
        if self.json:
            self.record("info", message, **fields)
        else:
            self._text("", message)


def _target(event: Event) -> str:
    if event.pod and event.container:
        return f"{event.pod}/{event.container}"
    return event.pod


def event_record(event: Event) -> dict[str, Any]:
    """An apply event as the JSON object ``--log-format json`` writes."""
    return {
        "time": round(event.time, 6),
        "kind": event.kind.value,
        "pod": event.pod,
        "pod_uid": event.pod_uid,
        "container": event.container,
        "container_id": event.container_id,
        "reason": event.reason.value if event.reason is not None else None,
        "message": event.message,
    }


# apply's kill and removal messages name the container in full ("stop default/web/app
# (k8s_...): why"); the line already names the pod container, so the CLI keeps the why.
# Ids are never read from messages: the event carries the container's id.
_BECAUSE = re.compile(r"^\S+ \S+ \(\S+\): (.+)$")


def event_text(event: Event) -> str:
    """An event's message for a progress line (after its pod/container): short ids,
    and no repeated container name."""
    kind = event.kind
    if kind in (EventKind.CREATED, EventKind.STARTED, EventKind.ADOPTED) and event.container_id:
        return f"{kind.value} ({shorten_ids(event.container_id)})"
    if kind in (EventKind.STOPPING, EventKind.REMOVED):
        match = _BECAUSE.match(event.message)
        if match:
            return f"{kind.value}: {shorten_ids(match.group(1))}"
    elif kind is EventKind.FAILED:
        return f"failed: {shorten_ids(event.message)}"
    return shorten_ids(event.message)


# The events that end an action, for the progress bar's count: a pull, a create (its
# start, or the adoption of a racing apply's container), a stop (counted when it
# begins), a removal, a teardown, a failure.
_ENDS_ACTION = frozenset(
    {
        EventKind.PULLED,
        EventKind.STARTED,
        EventKind.ADOPTED,
        EventKind.STOPPING,
        EventKind.REMOVED,
        EventKind.POD_DIR_REMOVED,
        EventKind.IMAGE_REMOVED,
        EventKind.FAILED,
    }
)


class _Progress:
    """Reports apply events on stderr while a plan is applied.

    * ``--log-format json``: every event as one JSON line;
    * a terminal: one line, redrawn in place - a bar, the count of actions done and the
      latest event - with failures kept above it;
    * otherwise (a pipe, a CI log): one line per event, with the seconds since the start.

    ``apply`` calls it from its worker threads, one call at a time.
    """

    def __init__(self, console: _Console, total: int, *, terminal: bool | None = None) -> None:
        self.console = console
        self.total = total
        self.done = 0
        self.started = console.clocks.elapsed()
        if terminal is None:
            terminal = _is_terminal(console.err)
        self.bar = terminal and not console.json
        self.drawn = False
        # After a failed postStart handler apply reports hook-failed, stopping and
        # failed for the same action: count that action once.
        self.hook_failed: set[tuple[str, str, str]] = set()

    def __call__(self, event: Event) -> None:
        if self.console.json:
            line = json.dumps(event_record(event), ensure_ascii=False)
            with self.console.lock:
                print(line, file=self.console.err, flush=True)
            return
        self._count(event)
        text = self._line(event)
        if not self.bar:
            elapsed = self.console.clocks.elapsed() - self.started
            with self.console.lock:
                print(f"[{elapsed:5.1f}s] {text}", file=self.console.err, flush=True)
            return
        if event.kind in (EventKind.FAILED, EventKind.HOOK_FAILED):
            self._clear()
            with self.console.lock:
                print(text, file=self.console.err, flush=True)
        self._draw(text)

    def _count(self, event: Event) -> None:
        key = (event.pod_uid, event.pod, event.container)
        if event.kind is EventKind.HOOK_FAILED and event.message.startswith("postStart"):
            self.hook_failed.add(key)
            return
        if key in self.hook_failed and event.kind in (EventKind.STOPPING, EventKind.FAILED):
            if event.kind is EventKind.FAILED:
                self.hook_failed.discard(key)
            return
        if event.kind in _ENDS_ACTION:
            self.done = min(self.done + 1, self.total)

    @staticmethod
    def _line(event: Event) -> str:
        target = _target(event)
        message = event_text(event)
        return f"{target}: {message}" if target else message

    def _draw(self, text: str) -> None:
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        filled = (10 * self.done) // self.total if self.total else 10
        line = f"[{'#' * filled}{'.' * (10 - filled)}] {self.done}/{self.total} {text}"
        with self.console.lock:
            self.console.err.write("\r" + line[:width] + "\x1b[K")
            self.console.err.flush()
        self.drawn = True

    def _clear(self) -> None:
        if self.drawn:
            with self.console.lock:
                self.console.err.write("\r\x1b[K")
                self.console.err.flush()
            self.drawn = False

    def close(self) -> None:
        """Remove the bar (a terminal); the summary follows on stdout."""
        self._clear()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


# ---------------------------------------------------------------------------------------
# Rejected pods and other warnings about a plan


def _warn_rejected(console: _Console, the_plan: Plan) -> None:
    for r in the_plan.rejected:
        console.warning(
            f"pod {r.pod} is rejected and left alone: {r.message} [{r.reason.value}]",
            pod=r.pod,
            reason=r.reason.value,
        )


def _warn_unpublished_ports(console: _Console, pods: Sequence[Pod], options: PlanOptions) -> None:
    if options.network_mode != "none":
        return
    for pod in pods:
        ports = sorted({p.host_port for c in pod.containers for p in c.ports if p.host_port})
        if ports:
            listed = ", ".join(str(p) for p in ports)
            console.warning(
                f"pod {pod.key}: host port(s) {listed} are recorded but not published "
                "in network mode none",
                pod=pod.key,
            )


# ---------------------------------------------------------------------------------------
# The engine


def docker_runtime(host: str | None) -> Runtime:
    """The default runtime factory: a ``DockerRuntime`` for ``host`` (``None``: the
    ``DOCKER_*`` environment), with an address that is checked before any call."""
    from podsync.docker import DockerRuntime

    effective = host or os.environ.get("DOCKER_HOST", "")
    if effective:
        _check_docker_host(effective, "--docker-host" if host else "DOCKER_HOST")
    return DockerRuntime(host=host, use_ssh_client=effective.startswith("ssh://"))


def _check_docker_host(address: str, where: str) -> None:
    import docker.errors
    import docker.utils

    try:
        docker.utils.parse_host(address)
    except (docker.errors.DockerException, ValueError) as exc:
        raise _Failure(f"invalid Docker host {address!r} ({where}): {exc}") from None


@contextlib.contextmanager
def _engine(factory: RuntimeFactory, host: str | None) -> Iterator[Runtime]:
    runtime = factory(host)
    try:
        yield runtime
    finally:
        close = getattr(runtime, "close", None)
        if callable(close):
            close()


def _observe(runtime: Runtime, root_dir: str) -> Observation:
    try:
        return observe(runtime, root_dir)
    except OSError as exc:
        raise _Failure(f"cannot list the root directory {root_dir}: {exc}") from None


def _observe_and_plan(
    runtime: Runtime, pods: Sequence[Pod], options: PlanOptions, *, probe: bool, clock: Clock
) -> tuple[Observation, Plan]:
    """One observation (and liveness probes), and the plan made from it, for the time
    ``clock`` reads after the observation."""
    observation = _observe(runtime, options.root_dir)
    now = clock()
    liveness = {}
    if probe:
        liveness = probe_liveness(
            pods,
            observation.containers,
            runtime,
            now=now,
            adopt_2014_containers=options.adopt_2014_containers,
        )
    the_plan = plan(
        pods,
        observation.containers,
        now=now,
        images=observation.images,
        pod_dirs=observation.pod_dirs,
        liveness=liveness,
        options=options,
    )
    return observation, the_plan


def _fingerprint(the_plan: Plan, observation: Observation) -> str:
    """The fingerprint of ``the_plan`` against ``observation`` (``plan_fingerprint``)."""
    return plan_fingerprint(
        the_plan, observation.containers, observation.images, observation.pod_dirs
    )


# ---------------------------------------------------------------------------------------
# Reading


def _load(sources: Sequence[str]) -> tuple[Pod, ...]:
    """The pods of every source, or a failure listing every problem (nothing else
    happens first: the engine is not contacted before the sources are read)."""
    try:
        return load_pods(list(sources))
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None


def _read_plan(path: str) -> Plan:
    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as stream:
                data = stream.read()
    except OSError as exc:
        raise _Failure(f"{source}: cannot read the saved plan: {exc.strerror or exc}") from None
    try:
        return plan_from_json(data, source=source)
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None


def _write_plan(path: str, the_plan: Plan) -> None:
    """Write atomically (a temporary file renamed over ``path``), mode 0600."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".podsync-plan-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                stream.write(plan_to_json(the_plan))
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise _Failure(f"cannot save the plan to {path}: {exc.strerror or exc}") from None


def _host_resolv_conf(args: argparse.Namespace, console: _Console) -> str:
    """The text of the resolv.conf ClusterFirst pods get their host settings from.

    ``--resolv-conf FILE`` names it (``""``: none), as the kubelet's. Otherwise it is
    ``/etc/resolv.conf`` - or, when that lists only loopback name servers (the
    systemd-resolved stub ``127.0.0.53``) and ``/run/systemd/resolve/resolv.conf``
    exists, that file, as Docker (libnetwork ``resolvconf.Path``) and kubeadm choose it.
    A missing ``/etc/resolv.conf`` gives no host settings; any other file that cannot be
    read fails the command. The loopback name servers the planner will leave out are
    reported as warnings.
    """
    given = _given(args, "resolv_conf", None)
    if given == "":
        return ""
    if given is not None:
        path, text = str(given), _read_resolv_conf(str(given))
    else:
        path = _RESOLV_CONF
        try:
            text = _read_resolv_conf(path, missing_ok=True)
        except FileNotFoundError:
            return ""
        if only_loopback_nameservers(parse_resolv_conf(text)) and os.path.exists(
            _SYSTEMD_RESOLV_CONF
        ):
            path, text = _SYSTEMD_RESOLV_CONF, _read_resolv_conf(_SYSTEMD_RESOLV_CONF)
    if _given(args, "network_mode", "") != "host":
        for server in parse_resolv_conf(text).nameservers:
            if is_loopback_nameserver(server):
                console.warning(
                    f"{path}: name server {server} is a loopback address, unreachable from "
                    "the pods' own network namespace: it is left out of their DNS (use "
                    "--resolv-conf FILE to name a resolv.conf with reachable servers)"
                )
    return text


def _read_resolv_conf(path: str, *, missing_ok: bool = False) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()
    except FileNotFoundError:
        if missing_ok:
            raise
        raise _Failure(f"cannot read {path}: No such file or directory") from None
    except OSError as exc:
        raise _Failure(f"cannot read {path}: {exc.strerror or exc}") from None


def _root_dir(args: argparse.Namespace) -> str:
    # Absolute: the plan's binds and pod directories are built from it, and the engine
    # only takes absolute bind sources.
    return os.path.abspath(str(_given(args, "root_dir", _DEFAULT_ROOT_DIR)))


def _given(args: argparse.Namespace, name: str, default: Any) -> Any:
    """A planning option's value, or ``default`` when it was not given."""
    value = getattr(args, name, _UNSET)
    return default if value is _UNSET else value


def _probe(args: argparse.Namespace) -> bool:
    """Whether to run liveness probes before planning. ``plan`` is a dry run: probes
    (exec probes run commands inside containers) only with ``--probe``; ``apply``
    probes unless ``--no-probe``."""
    if args.command == "plan":
        return bool(args.probe)
    return not _given(args, "no_probe", False)


def _plan_options(args: argparse.Namespace, console: _Console | None = None) -> PlanOptions:
    """The planning options of ``args``; warnings (about the host's resolv.conf) go to
    ``console``, by default text on standard error."""

    def given(name: str, default: Any) -> Any:
        return _given(args, name, default)

    dns = given("cluster_dns", "")
    domain = given("cluster_domain", "")
    return PlanOptions(
        network_image=given("network_image", DEFAULT_NETWORK_IMAGE),
        network_mode=given("network_mode", ""),
        cluster_dns=dns,
        cluster_domain=domain,
        host_resolv_conf=_host_resolv_conf(args, console or _Console()) if dns or domain else "",
        allow_privileged=given("allow_privileged", False),
        adopt_2014_containers=given("adopt_2014_containers", False),
        allow_deletions=not given("no_delete", False),
        root_dir=_root_dir(args),
        stop_timeout=given("stop_timeout", _DEFAULT_STOP_TIMEOUT),
        gc=GCPolicy(
            max_per_container=given("max_per_container", _DEFAULT_GC.max_per_container),
            min_age=given("min_age", _DEFAULT_GC.min_age),
            max_total=given("max_total", _DEFAULT_GC.max_total),
            remove_dangling_images=given("remove_dangling_images", False),
        ),
    )


# ---------------------------------------------------------------------------------------
# Applying


def _changes(the_plan: Plan) -> int:
    return sum(not isinstance(a, Wait) for a in the_plan.actions)


def _run_apply(
    console: _Console, the_plan: Plan, runtime: Runtime, args: argparse.Namespace, *, verb: str
) -> ApplyResult:
    """Apply with progress on stderr, then the summary (stdout) and the failures."""
    progress = _Progress(console, _changes(the_plan))
    try:
        result = apply(
            the_plan,
            runtime,
            workers=args.workers,
            on_event=progress,
            hook_timeout=args.hook_timeout,
            clock=console.clocks.given,
        )
    finally:
        progress.close()
    counts = dict.fromkeys(ActionStatus, 0)
    for r in result.results:
        if not isinstance(r.action, Wait):
            counts[r.status] += 1
    done, failed, skipped = (
        counts[ActionStatus.DONE],
        counts[ActionStatus.FAILED],
        counts[ActionStatus.SKIPPED],
    )
    outcome = "complete!" if result.ok else "failed!"
    console.print(
        f"{verb} {outcome} {done} done, {failed} failed, {skipped} skipped "
        f"in {result.duration:.1f}s."
    )
    if console.json:
        console.record(
            "summary",
            f"{verb.lower()} {'complete' if result.ok else 'failed'}",
            done=done,
            failed=failed,
            skipped=skipped,
            duration=round(result.duration, 3),
        )
    for r in result.failures:
        console.error(f"{shorten_ids(r.action.message)}: {shorten_ids(r.error)}")
    skipped_pods = sorted({r.pod for r in result.results if r.status is ActionStatus.SKIPPED})
    if skipped_pods:
        console.warning(
            "actions skipped after a failure, for: "
            + ", ".join(p or "(engine)" for p in skipped_pods)
        )
    return result


# ---------------------------------------------------------------------------------------
# Which containers belong to which pod


def _by_pod(
    pods: Sequence[Pod],
    containers: Sequence[ObservedContainer],
    *,
    adopt_2014_containers: bool = False,
) -> dict[str, list[ObservedContainer]]:
    """The observed containers of each pod, by pod uid: those the planner's
    ``ownership`` rule gives to the pod's uid; other containers are left out."""
    found: dict[str, list[ObservedContainer]] = {p.uid: [] for p in pods}
    for oc in containers:
        owner = ownership(oc, adopt_2014_containers=adopt_2014_containers)
        if owner is not None and owner.pod_uid in found:
            found[owner.pod_uid].append(oc)
    return found


def _container_of(oc: ObservedContainer) -> str:
    """The pod container name of ``oc``, which ``_by_pod`` already found to be a pod's
    (with or without 2014 containers: only the name is read here)."""
    owner = ownership(oc, adopt_2014_containers=True)
    return owner.container if owner is not None else ""


# ---------------------------------------------------------------------------------------
# --wait


@attrs.frozen
class PodStatus:
    """How one pod is doing, for ``apply --wait``.

    Attributes:
        pod: the pod key (``namespace/name``).
        state: ``running`` or ``completed`` (up: done waiting), ``failed`` or
            ``rejected`` (will not come up: done waiting), ``pending`` (keep waiting).
        message: for people, e.g. ``running (2/2 containers)``.
    """

    pod: str
    state: str
    message: str

    @property
    def final(self) -> bool:
        return self.state != "pending"

    @property
    def ok(self) -> bool:
        return self.state in ("running", "completed")


def pod_statuses(
    pods: Sequence[Pod],
    containers: Sequence[ObservedContainer],
    the_plan: Plan,
    first_seen: dict[str, float],
    now: float,
    *,
    adopt_2014_containers: bool = False,
) -> list[PodStatus]:
    """The status of each pod, from an observation and the plan made from it.

    A pod is up when every app container runs (seen running for ``_STABLE_SECONDS``:
    ``first_seen`` remembers, by container id, when each was first seen running, in
    the clock of ``now``) or, in a pod whose restart policy is OnFailure or Never, has
    completed with exit code 0 - and the plan has nothing left to do for it (a
    completed pod's network container is stopped first). A container that exited
    non-zero under Never fails its pod; a rejected pod fails too. A 2014 kubelet's
    containers count only with ``adopt_2014_containers`` (the plan's option).
    """
    rejected = {r.uid: r for r in the_plan.rejected}
    plans = {(p.uid, p.full_name): p for p in the_plan.pods}
    owned = _by_pod(pods, containers, adopt_2014_containers=adopt_2014_containers)
    statuses: list[PodStatus] = []
    for pod in pods:
        rejection = rejected.get(pod.uid)
        if rejection is not None:
            statuses.append(PodStatus(pod.key, "rejected", f"rejected: {rejection.message}"))
            continue
        pod_plan = plans.get((pod.uid, pod.full_name))
        statuses.append(_pod_status(pod, owned[pod.uid], pod_plan, first_seen, now))
    return statuses


def _pod_status(
    pod: Pod,
    containers: Sequence[ObservedContainer],
    pod_plan: PodPlan | None,
    first_seen: dict[str, float],
    now: float,
) -> PodStatus:
    actions = pod_plan.actions if pod_plan is not None else ()
    waits = {a.container: a for a in actions if isinstance(a, Wait)}
    pending = [a for a in actions if not isinstance(a, Wait)]
    instances: dict[str, list[ObservedContainer]] = {}
    for oc in containers:
        instances.setdefault(_container_of(oc), []).append(oc)
    running = completed = 0
    problems: list[str] = []
    failures: list[str] = []
    for c in pod.containers:
        mine = instances.get(c.name, [])
        live = [oc for oc in mine if oc.running]
        if live:
            newest = max(live, key=lambda oc: (oc.created, oc.id))
            if now - first_seen.setdefault(newest.id, now) >= _STABLE_SECONDS:
                running += 1
            else:
                problems.append(f"{c.name} starting")
            continue
        wait = waits.get(c.name)
        if not mine:
            if wait is not None and wait.reason is Reason.IMAGE_NEVER_PULL:
                problems.append(f"{c.name}: image {c.image} is absent (pull policy Never)")
            else:
                problems.append(f"{c.name} not started yet")
            continue
        # The instance the planner judges: the newest to stop (one that never started
        # stopped when it was created).
        last = max(mine, key=lambda oc: (_ended(oc), oc.created))
        code = last.exit_code
        stop = last.stopped_by_podsync
        failure = FAILED_STOPS.get(stop)
        if last.finished_at is None:
            # Created and never started: not a run; the plan starts it again.
            ended = f"{c.name} did not start"
        elif failure is not None:
            ended = f"{c.name} stopped by podsync: {failure}"
        elif stop:
            # podsync stopped it (to replace it, ...): not a run, it is started again.
            problems.append(f"{c.name} stopped by podsync ({stop}), to be started again")
            continue
        else:
            ended = f"{c.name} exited with code {code}"
        succeeded = last.finished_at is not None and failure is None and code == 0
        if succeeded and pod.restart_policy is not RestartPolicy.ALWAYS:
            completed += 1
        elif (
            last.finished_at is not None
            and not succeeded
            and pod.restart_policy is RestartPolicy.NEVER
        ):
            failures.append(f"{ended} (restart policy Never)")
        elif wait is not None and wait.reason is Reason.BACK_OFF:
            problems.append(f"{ended}, back-off: restart in {wait.seconds:.0f}s")
        else:
            problems.append(f"{ended}, restarting")
    total = len(pod.containers)
    if failures:
        return PodStatus(pod.key, "failed", "failed: " + "; ".join(failures))
    if not problems and not pending:
        if completed == total and total:
            return PodStatus(
                pod.key, "completed", f"completed ({total}/{total} containers exited 0)"
            )
        if completed:
            return PodStatus(
                pod.key, "running", f"running ({running} running, {completed} completed)"
            )
        return PodStatus(pod.key, "running", f"running ({running}/{total} containers)")
    if not problems:
        state = "completed" if completed == total else "running"
        return PodStatus(
            pod.key, "pending", f"{state}, {len(pending)} change(s) to make: {_verb_of(pending[0])}"
        )
    return PodStatus(
        pod.key, "pending", f"not running ({running}/{total} containers): " + "; ".join(problems)
    )


def _ended(oc: ObservedContainer) -> float:
    return oc.finished_at if oc.finished_at is not None else oc.created


def _verb_of(action: Action) -> str:
    """``stop default/job/net`` from ``stop default/job/net (k8s_...): why``."""
    return shorten_ids(action.message).split(" (", 1)[0].split(": ", 1)[0]


def _wait(
    console: _Console,
    runtime: Runtime,
    pods: Sequence[Pod],
    options: PlanOptions,
    args: argparse.Namespace,
    sleep: Callable[[float], None],
    last_apply_ok: bool,
    before: Observation,
) -> int:
    """Wait until every pod is up, syncing again with back-off (the seed's run-once,
    reference §5); report per pod on stdout. 0 when every pod is up in time.

    ``before`` is the observation the first plan was made from: a container that was
    running then has been running for as long as podsync knows, and counts as running
    at once."""
    elapsed = console.clocks.elapsed
    deadline = elapsed() + args.timeout
    delay = _WAIT_FIRST_DELAY
    first_seen = {oc.id: float("-inf") for oc in before.containers if oc.running}
    probe = _probe(args)
    console.note(f"Waiting up to {args.timeout:g}s for {len(pods)} pod(s)...")
    while True:
        observation, the_plan = _observe_and_plan(
            runtime, pods, options, probe=probe, clock=console.clocks.now
        )
        statuses = pod_statuses(
            pods,
            observation.containers,
            the_plan,
            first_seen,
            elapsed(),
            adopt_2014_containers=options.adopt_2014_containers,
        )
        if all(s.final for s in statuses):
            break
        remaining = deadline - elapsed()
        if remaining <= 0:
            break
        for status in statuses:
            if not status.final:
                console.note(f"  {status.pod}: {status.message}", pod=status.pod)
        if the_plan.has_changes:
            console.note(f"Syncing again: {the_plan.summary()}")
            last_apply_ok = _run_apply(console, the_plan, runtime, args, verb="Sync").ok
        pause = min(delay, max(deadline - elapsed(), 0.0))
        console.note(f"Checking again in {pause:.1f}s.")
        sleep(pause)
        delay = min(delay * 2, _WAIT_MAX_DELAY)
    # A failed action of an earlier sync that a later plan no longer needs is mended.
    last_apply_ok = last_apply_ok or not the_plan.has_changes
    up = sum(s.ok for s in statuses)
    for status in statuses:
        console.print(f"{status.pod}: {status.message}")
        if console.json:
            console.record("pod-status", status.message, pod=status.pod, state=status.state)
    if up == len(statuses) and last_apply_ok:
        console.print(f"All {len(statuses)} pod(s) are up.")
        return EXIT_OK
    pending = [s.pod for s in statuses if not s.final]
    if pending:
        console.error(f"timed out after {args.timeout:g}s: not running: {', '.join(pending)}")
    bad = [s.pod for s in statuses if s.final and not s.ok]
    if bad:
        console.error(f"will not come up: {', '.join(bad)}")
    if up == len(statuses):
        console.error("the pods are up, but the last sync had failed actions")
    return EXIT_ERROR


# ---------------------------------------------------------------------------------------
# The commands


def _cmd_plan(args: argparse.Namespace, console: _Console, factory: RuntimeFactory) -> int:
    pods = _load(args.sources)
    options = _plan_options(args, console)
    with _engine(factory, args.docker_host) as runtime:
        _, the_plan = _observe_and_plan(
            runtime, pods, options, probe=_probe(args), clock=console.clocks.now
        )
    _warn_rejected(console, the_plan)
    _warn_unpublished_ports(console, pods, options)
    if args.out:
        _write_plan(args.out, the_plan)
    if args.json:
        console.print(plan_to_json(the_plan).rstrip("\n"))
    else:
        console.print(the_plan.render())
        if args.out:
            console.print(
                f"\nSaved the plan to {args.out}. To apply exactly this plan: "
                f"podsync apply --plan {args.out}"
            )
    if args.detailed_exitcode and the_plan.has_changes:
        return EXIT_CHANGES
    return EXIT_OK


def _cmd_show(args: argparse.Namespace, console: _Console) -> int:
    the_plan = _read_plan(args.file)
    if args.json:
        console.print(plan_to_json(the_plan).rstrip("\n"))
        return EXIT_OK
    _warn_rejected(console, the_plan)
    console.print(the_plan.render())
    console.print(f"Planned against engine state {the_plan.fingerprint[:12] or '(none)'}.")
    return EXIT_OK


def _cmd_apply(
    args: argparse.Namespace,
    console: _Console,
    factory: RuntimeFactory,
    sleep: Callable[[float], None],
) -> int:
    if args.plan_file is not None:
        return _apply_saved(args, console, factory)
    pods = _load(args.sources)
    options = _plan_options(args, console)
    with _engine(factory, args.docker_host) as runtime:
        before, the_plan = _observe_and_plan(
            runtime, pods, options, probe=_probe(args), clock=console.clocks.now
        )
        _warn_rejected(console, the_plan)
        _warn_unpublished_ports(console, pods, options)
        if not pods:
            console.warning("the sources describe no pods")
        console.print(the_plan.render())
        ok = True
        if the_plan.has_changes:
            ok = _run_apply(console, the_plan, runtime, args, verb="Apply").ok
        if args.wait:
            return _wait(console, runtime, pods, options, args, sleep, ok, before)
    if the_plan.rejected:
        console.error(f"{len(the_plan.rejected)} pod(s) rejected: see the warnings above")
        return EXIT_ERROR
    return EXIT_OK if ok else EXIT_ERROR


def _apply_saved(args: argparse.Namespace, console: _Console, factory: RuntimeFactory) -> int:
    the_plan = _read_plan(args.plan_file)
    # The plan's paths and binds were made under its own root directory, and apply
    # takes it from the plan; a --root-dir naming another one is a mistake to report.
    root_dir = the_plan.options.root_dir
    if _given(args, "root_dir", None) is not None and _root_dir(args) != root_dir:
        raise _Failure(
            f"the saved plan was made with --root-dir {root_dir}, not {_root_dir(args)}; "
            "leave --root-dir out or make the plan again"
        )
    with _engine(factory, args.docker_host) as runtime:
        current = _fingerprint(the_plan, _observe(runtime, root_dir))
        if current != the_plan.fingerprint:
            raise _Failure(
                "Saved plan is stale: the engine changed since the plan was made "
                f"(fingerprint {the_plan.fingerprint[:12]}… != {current[:12]}…); "
                "run podsync plan again."
            )
        _warn_rejected(console, the_plan)
        console.print(f"Applying the saved plan {args.plan_file}: {the_plan.summary()}")
        if not the_plan.has_changes:
            return EXIT_OK
        result = _run_apply(console, the_plan, runtime, args, verb="Apply")
    return EXIT_OK if result.ok else EXIT_ERROR


def _cmd_down(args: argparse.Namespace, console: _Console, factory: RuntimeFactory) -> int:
    pods = _load(args.sources)
    root_dir = _root_dir(args)
    uids = {p.uid for p in pods}
    options = PlanOptions(
        root_dir=root_dir,
        stop_timeout=args.stop_timeout,
        allow_deletions=True,
        adopt_2014_containers=args.adopt_2014_containers,
        # Everything of these pods goes, exited instances of any age included.
        gc=GCPolicy(max_per_container=0, min_age=0.0),
    )
    with _engine(factory, args.docker_host) as runtime:
        # A second pass removes what a first pass could not see yet (a container that
        # a concurrent sync created between the observation and the stops).
        for attempt in range(2):
            observation = _observe(runtime, root_dir)
            owned = _by_pod(
                pods,
                observation.containers,
                adopt_2014_containers=options.adopt_2014_containers,
            )
            mine = [oc for found in owned.values() for oc in found]
            dirs = observation.pod_dirs & uids
            the_plan = plan(
                [],
                mine,
                now=console.clocks.now(),
                images=observation.images,
                pod_dirs=dirs,
                options=options,
            )
            if attempt == 0:
                console.print(the_plan.render())
                absent = [p.key for p in pods if not owned[p.uid] and p.uid not in dirs]
                if absent:
                    console.note(f"Not on the engine: {', '.join(absent)}")
            if not the_plan.has_changes:
                break
            if not _run_apply(console, the_plan, runtime, args, verb="Down").ok:
                return EXIT_ERROR
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# main


def _check_combinations(args: argparse.Namespace) -> None:
    if args.command == "plan" and args.probe and args.no_probe is not _UNSET:
        raise _UsageError("--probe and --no-probe cannot be given together")
    if args.command not in ("plan", "apply"):
        return
    if args.command == "apply" and args.plan_file is not None:
        if args.sources:
            raise _UsageError("give SOURCEs or --plan FILE, not both")
        if args.wait:
            raise _UsageError(
                "--wait needs the pods: use podsync apply --wait SOURCE..., not --plan"
            )
        given = [
            flag for name, flag in _PLANNING_OPTIONS.items() if getattr(args, name) is not _UNSET
        ]
        if given:
            raise _UsageError(
                f"{', '.join(given)} cannot be used with --plan: a saved plan was made "
                "with its own options"
            )
    elif not args.sources:
        raise _UsageError("give the pods' SOURCEs, or --plan FILE")
    cluster = (args.cluster_dns, args.cluster_domain)
    if args.resolv_conf is not _UNSET and cluster == (_UNSET, _UNSET):
        # Pods then get the engine's own DNS settings: the file would not be used.
        raise _UsageError("--resolv-conf is used only with --cluster-dns or --cluster-domain")


def main(
    argv: Sequence[str] | None = None,
    *,
    runtime_factory: RuntimeFactory | None = None,
    sleep: Callable[[float], None] | None = None,
    clock: Clock | None = None,
) -> int:
    """Run the ``podsync`` command line; returns the exit code.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when ``None``.
        runtime_factory: makes the runtime from the ``--docker-host`` value (``None``
            when not given); ``DockerRuntime`` by default. Tests pass a function that
            returns a ``podsync.testing.FakeRuntime``.
        sleep: how ``apply --wait`` waits between syncs; ``time.sleep`` when ``None``.
        clock: where the command reads the time, in seconds since the epoch: the
            plans' ``now``, the times of log lines, the seconds on progress lines, the
            actions' durations and ``apply --wait``'s deadline. The system clock when
            ``None`` (its monotonic clock for durations and the deadline). Tests pass a
            ``podsync.testing.FakeClock``, and with ``--wait`` a ``sleep`` that moves it
            (``clock.advance``): a clock that ``sleep`` does not move never reaches the
            deadline.

    Returns:
        The exit code (see the module docstring); usage errors (1) and ``--help`` (0)
        return their code instead of raising ``SystemExit``.

    Raises:
        TypeError: ``clock`` is not callable (a programming error, not a usage one).
    """
    # A clock that is not a function is the caller's bug, not a command line error.
    clocks(clock)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    console = _Console(getattr(args, "log_format", "text"), clock)
    factory = runtime_factory or docker_runtime
    try:
        _check_combinations(args)
        if args.command == "plan":
            return _cmd_plan(args, console, factory)
        if args.command == "apply":
            return _cmd_apply(args, console, factory, sleep or system_sleep)
        if args.command == "show":
            return _cmd_show(args, console)
        return _cmd_down(args, console, factory)
    except _UsageError as exc:
        return _usage_error(parser, args.command, str(exc))
    except _Failure as exc:
        for line in exc.lines:
            console.error(line)
        return EXIT_ERROR
    except EngineUnavailable as exc:
        # "cannot reach the Docker engine at <host>: <reason>", without the operation.
        console.error(" ".join(exc.message.split()))
        return EXIT_ERROR
    except RuntimeCallError as exc:
        console.error(" ".join(str(exc).split()))
        return EXIT_ERROR
    except PodsyncError as exc:
        console.error(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        console.error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (podsync plan | head): say nothing more, and keep the
        # interpreter from complaining when it flushes stdout at exit.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:  # the last resort: never a traceback
        console.internal_error(f"{type(exc).__name__}: {exc} (please report this)")
        return EXIT_ERROR


def _usage_error(parser: argparse.ArgumentParser, command: str, message: str) -> int:
    # The format and code of the errors argparse finds itself (``_Parser.error``).
    sub = f" {command}" if command else ""
    print(f"usage: {parser.prog}{sub} ... (see podsync{sub} --help)", file=sys.stderr)
    print(f"{parser.prog}{sub}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
