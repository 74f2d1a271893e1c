"""The ``podsync`` command line's arguments: the parser (``build_parser``), the exit
codes, and the failure a command ends with.

The parser holds every command: ``plan``, ``apply``, ``show``, ``down`` and the
operating commands here, ``run``'s arguments from ``_run_args``, the etcd options,
``publish``'s, ``hosts``' and ``--etcd``'s of ``status`` and ``events`` from
``_etcd_args``, ``apply --hosts``'s from ``_fleet_args``, ``-o FORMAT``'s from
``_output_args``. The checks argparse cannot express are ``_checks``'s, the planning
options the arguments give ``_planning``'s. The commands themselves are in
``podsync.cli._main`` and the modules it dispatches to.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from podsync.actions._options import (
    DEFAULT_NETWORK_IMAGE,
    NODE_SCOPE,
    AllowedHostPath,
    GCPolicy,
    PlanOptions,
    PodSecurityLevel,
    scope_problem,
)
from podsync.applier._defaults import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS
from podsync.cli._durations import duration
from podsync.cli._etcd_args import (
    add_etcd_options,
    add_fleet_read_options,
    add_hosts_command,
    add_publish_command,
)
from podsync.cli._fleet_args import add_fleet_options
from podsync.cli._output_args import add_apply_output_option, add_output_option
from podsync.cli._run_args import add_run_command
from podsync.cli._source_args import add_source_options
from podsync.cli._top_args import add_top_command
from podsync.model._pod import ResourceList
from podsync.spec._resolv import HOST_RESOLV_CONF, SYSTEMD_RESOLV_CONF

# The command line's own helpers: none of them is part of the podsync API.
__all__: list[str] = []

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

#: What ``down`` does with the options it shares with ``apply`` (its ``--help``
#: epilog; docs/cli.md, the command line's page, says the same).
DOWN_OPTIONS_NOTE = (
    "down takes every option apply takes, so that a script keeps one set of flags for "
    "both. --scope, --root-dir, --stop-timeout, --adopt-2014-containers, --workers, "
    "--hook-timeout and the engine and reading options work as for apply. The others "
    "cannot change what down removes and are accepted and ignored: the network, DNS and "
    "admission options (down creates and admits nothing), --no-probe (down runs no "
    "probes), the garbage-collection options (every exited instance of the pods goes, "
    "and no image), --wait and --timeout (down returns when the pods are gone), and "
    "--no-delete with SOURCEs (down removes only their pods). Refused: --no-delete with "
    "--scope and no SOURCEs, --plan, and --hosts. -o FORMAT (and --json) prints what down "
    "did, as for apply."
)

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


def _system_reserved(text: str) -> ResourceList:
    """``--system-reserved`` in the kubelet's spelling: ``cpu=500m,memory=1Gi``."""
    from podsync.load._reserved import resource_list

    try:
        return resource_list(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _allowed_host_paths(text: str) -> tuple[AllowedHostPath, ...]:
    """``--allowed-host-paths``: absolute paths, comma-separated, each with an optional
    ``:ro`` (PodSecurityPolicy's ``allowedHostPaths`` with ``readOnly``)."""
    found = []
    for item in text.split(","):
        path, ro, rest = item.strip().partition(":")
        if rest != ("ro" if ro else ""):
            raise argparse.ArgumentTypeError(
                f"expected PATH or PATH:ro, got {item.strip()!r} (only ':ro' may follow a path)"
            )
        try:
            found.append(AllowedHostPath(path, read_only=bool(ro)))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return tuple(found)


def _allowed_capabilities(text: str) -> tuple[str, ...]:
    """``--allowed-capabilities``: capability names, comma-separated, in Kubernetes' or
    Docker's spelling (``NET_ADMIN``, ``CAP_NET_ADMIN``, ``net_admin``) or ``ALL``."""
    from podsync.model._security import normalize_capability

    found = []
    for item in text.split(","):
        name = normalize_capability(item.strip())
        if name is None:
            raise argparse.ArgumentTypeError(
                f"{item.strip()!r} is not a capability name (NET_ADMIN, SYS_TIME, ..., or ALL)"
            )
        found.append(name)
    return tuple(found)


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


class _Unset:
    """The argparse default of the planning options: "not given" (``None`` is a value:
    ``--max-per-container none``)."""

    def __repr__(self) -> str:
        return "(not given)"


_UNSET: Any = _Unset()


class _VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (reading the
    package metadata costs every other command its time)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from podsync.host._version import package_version

        sys.stdout.write(f"podsync {package_version()}\n")
        sys.stdout.flush()
        parser.exit()


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
        help="the engine (Docker, or podman's Docker-compatible service): unix:///path, "
        "tcp://host:port or ssh://user@host (default: DOCKER_HOST, else CONTAINER_HOST, "
        "else unix:///var/run/docker.sock)",
    )
    _add_tls_options(group)
    group.add_argument(
        "--root-dir",
        metavar="DIR",
        # _UNSET, so that apply --plan can tell a --root-dir given from the default.
        default=_UNSET,
        help="where pod directories (emptyDir volumes, termination messages) live "
        f"(default: {_DEFAULT_ROOT_DIR})",
    )

    reading = _Parser(add_help=False, allow_abbrev=False)
    group = reading.add_argument_group("reading")
    group.add_argument(
        "--max-bytes",
        type=_count,
        metavar="N",
        help="the largest standard input, pipe, device or URL body read, in bytes "
        "(default: 4 MiB); pod files and directories are read whatever their size",
    )
    add_source_options(group)
    add_etcd_options(reading)

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
        "--pod-security",
        metavar="LEVEL",
        choices=[level.value for level in PodSecurityLevel],
        default=_UNSET,
        help="the Pod Security level pods are admitted at: privileged (no checks), "
        "baseline (the default; host ports allowed) or restricted; a pod that fails a "
        "check is rejected with every failed check named. The options below open one "
        "check each",
    )
    group.add_argument(
        "--allow-privileged",
        action="store_const",
        const=True,
        default=_UNSET,
        help="admit pods with privileged containers (rejected otherwise)",
    )
    group.add_argument(
        "--allow-host-namespaces",
        action="store_const",
        const=True,
        default=_UNSET,
        help="admit pods that use the host's network, PID or IPC namespace (hostNetwork, "
        "hostPID, hostIPC; rejected otherwise)",
    )
    group.add_argument(
        "--allowed-host-paths",
        action=_AppendGiven,
        type=_allowed_host_paths,
        default=_UNSET,
        metavar="PATH[:ro][,...]",
        help="host directories hostPath volumes may use, with what is under them (whole "
        "path components: /srv/data admits /srv/data/x, not /srv/database); ':ro' admits "
        "only read-only mounts; comma-separated, repeatable (default: no hostPath volume)",
    )
    group.add_argument(
        "--allowed-capabilities",
        action=_AppendGiven,
        type=_allowed_capabilities,
        default=_UNSET,
        metavar="CAP[,...]",
        help="capabilities containers may add beyond the baseline set (and, at the "
        "restricted level, beyond NET_BIND_SERVICE); ALL allows every one; "
        "comma-separated, repeatable",
    )
    group.add_argument(
        "--allow-unconfined",
        action="store_const",
        const=True,
        default=_UNSET,
        help="admit pods whose seccomp or AppArmor profile is Unconfined (pod or container "
        "level; rejected otherwise)",
    )
    group.add_argument(
        "--allowed-unsafe-sysctls",
        action=_AppendGiven,
        default=_UNSET,
        metavar="LIST",
        help="namespaced sysctls beyond the kubelet's safe set that pods may set: names or "
        "prefixes ending in '*', comma-separated, repeatable (as the kubelet's option); "
        "sysctls that are not namespaced are always refused",
    )
    group.add_argument(
        "--system-reserved",
        metavar="LIST",
        type=_system_reserved,
        default=_UNSET,
        help="CPU and memory kept from the pods for the system, as the kubelet's option "
        "(cpu=500m,memory=1Gi): a pod that does not run yet is admitted only when its "
        "requests fit in the engine's CPUs and memory less this and less what the pods "
        "admitted before it request (rejected otherwise: OutOfcpu, OutOfmemory; "
        "default: nothing reserved)",
    )
    _add_scope_option(group, default=_UNSET)
    group.add_argument(
        "--no-delete",
        action="store_const",
        const=True,
        default=_UNSET,
        help="remove nothing of the pods that are not in the sources, whatever the scope",
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
        help="do not run probes (startup, liveness, readiness) before planning "
        "(plan runs none unless --probe)",
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
        epilog="A SOURCE is a pod file, a directory of pod files, an http(s) URL, an etcd key "
        "(etcd://HOST:PORT[,HOST:PORT...]/KEY), or - for standard input. Exit codes: 0 "
        "success, 1 error (usage errors included), 2 changes (plan --detailed-exitcode "
        "only), 130 interrupted; exec exits with its command's code.",
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="show program's version number and exit"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = commands.add_parser(
        "plan",
        parents=[engine, planning, reading, output],
        allow_abbrev=False,
        help="show what apply would do",
        description="Observe the engine and show what it takes to make it run the pods "
        "of the sources, grouped by pod, each action with its reason. Changes nothing.",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="pod files, directories, URLs, -")
    add_output_option(
        p,
        "plan",
        "the plan",
        json_help="print the plan as JSON (with its format_version); the same as -o json",
        note="; -o FILE, a name that is none of these, still saves the plan to FILE, with "
        "a warning, for this release only: use --out FILE",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="save the plan as JSON, for podsync apply --plan FILE (written with mode 0600: "
        "it holds the containers' environment); Terraform's -out",
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="run the due probes of running containers, as apply does, and plan the "
        "replacement of those whose liveness or startup probe failed failureThreshold "
        "times in a row; the run is not counted (exec probes run commands inside "
        "containers: by default plan runs nothing on the engine)",
    )
    p.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 0 when there are no changes, 2 when there are, 1 on any error (usage "
        "errors included: 2 always means changes)",
    )

    a = commands.add_parser(
        "apply",
        parents=[engine, planning, applying, reading, output],
        allow_abbrev=False,
        help="make the engine run the pods",
        description="Observe the engine, plan and apply: make it run the pods of the "
        "sources. With --plan FILE, apply a saved plan instead, if the engine is still in "
        "the state the plan was made from.",
    )
    a.add_argument("sources", nargs="*", metavar="SOURCE", help="pod files, directories, URLs, -")
    _add_apply_command_options(a, down=False)

    s = commands.add_parser(
        "show",
        parents=[output],
        allow_abbrev=False,
        help="show a saved plan",
        description="Show a plan saved with podsync plan --out FILE.",
    )
    s.add_argument("file", metavar="FILE", help="the saved plan (- for standard input)")
    add_output_option(
        s, "show", "the plan", json_help="print the plan as JSON; the same as -o json"
    )

    d = commands.add_parser(
        "down",
        # apply's options, so that a script keeps one set of flags for both (terraform
        # destroy takes apply's variables); _cmd_down says which of them count.
        parents=[engine, planning, applying, reading, output],
        allow_abbrev=False,
        help="stop and remove the pods described, or a scope's",
        description="Stop and remove the containers, pod directories and volumes of the "
        "pods the sources describe, whatever their scope, and nothing else; with --scope "
        "and no sources, everything of that scope; with both, the pods of the sources that "
        "are not another scope's.",
        epilog=DOWN_OPTIONS_NOTE,
    )
    d.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="pod files, directories, URLs, - (none with --scope: the whole scope)",
    )
    _add_apply_command_options(d, down=True)
    _add_operating_commands(commands, engine, planning, output)
    add_run_command(commands, parents=[engine, planning, applying, reading, output])
    add_publish_command(commands, parents=[reading, output])
    add_hosts_command(commands, parents=[output])
    return parser


def _add_apply_command_options(command: Any, *, down: bool) -> None:
    """``apply``'s own options (``--plan``, ``--wait``, ``--timeout``, ``-o``,
    ``--hosts``, ``--json``); ``down`` takes them too, so that one set of flags serves both, and
    refuses or ignores them (``DOWN_OPTIONS_NOTE``)."""
    command.add_argument(
        "--plan",
        metavar="FILE",
        dest="plan_file",
        help="refused: down removes the pods of SOURCEs or of a --scope"
        if down
        else "apply this saved plan (podsync plan --out FILE; - for standard input); the "
        "planning options cannot be given with it: the plan was made with its own",
    )
    command.add_argument(
        "--wait",
        action="store_true",
        help="ignored: down returns when the pods are gone"
        if down
        else "then wait until every pod runs (run-to-completion pods: until they "
        "completed), syncing again with back-off; report per pod",
    )
    command.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_positive_seconds,
        default=DEFAULT_WAIT_TIMEOUT,
        help="ignored, as --wait"
        if down
        else f"how long --wait waits (default: {DEFAULT_WAIT_TIMEOUT:g})",
    )
    add_apply_output_option(command, down=down)
    add_fleet_options(command, down=down)


def _scope(value: str) -> str:
    """``--scope``'s value: ``node`` or a scope name (``PlanOptions.scope``)."""
    problem = scope_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def _add_scope_option(group: Any, *, default: Any) -> None:
    """``--scope NAME`` (plan, apply, run, down)."""
    group.add_argument(
        "--scope",
        metavar="NAME",
        type=_scope,
        default=default,
        help="what the command owns: the pods labelled NAME, which it labels what it "
        f"creates with, removes when the sources no longer describe them; '{NODE_SCOPE}': "
        "every podsync pod on the engine (run's default). Without it, plan and apply own "
        "only the pods of the sources and remove nothing else",
    )


def _add_tls_options(group: Any) -> None:
    """The docker CLI's TLS flags for a ``tcp://`` engine (resolved with the
    environment by ``podsync.cli._engine.EngineTLS``). ``None`` when not given."""
    group.add_argument(
        "--tls",
        action="store_true",
        default=None,
        help="speak TLS to a tcp:// engine without verifying it (implied by --tlsverify)",
    )
    group.add_argument(
        "--tlsverify",
        action="store_true",
        default=None,
        help="speak TLS to a tcp:// engine and verify its certificate (default: "
        "DOCKER_TLS_VERIFY non-empty)",
    )
    for name, file, what in (
        ("--tlscacert", "ca.pem", "the CA that signed the engine's certificate"),
        ("--tlscert", "cert.pem", "the client certificate"),
        ("--tlskey", "key.pem", "the client certificate's key"),
    ):
        group.add_argument(
            name,
            metavar="FILE",
            help=f"{what} (default: DOCKER_CERT_PATH/{file}, else ~/.docker/{file})",
        )


def _add_operating_commands(commands: Any, engine: Any, planning: Any, output: Any) -> None:
    """``status``, ``describe``, ``logs``, ``exec`` and ``events`` (``podsync.cli._ops``),
    and ``top`` (``podsync.cli._top``)."""
    pod_help = "the pod: name, namespace/name, or its full name name.namespace.source"
    st = commands.add_parser(
        "status",
        parents=[engine, planning, output],
        allow_abbrev=False,
        help="show how the pods are doing",
        description="A row per pod, as kubectl get pods: ready containers, phase, restarts, "
        "age and reason. With SOURCEs: those pods (as the next sync would see them) and the "
        "pods podsync runs that they do not describe (Orphaned); without: every pod podsync "
        "runs on the engine. Changes nothing.",
    )
    st.add_argument("sources", nargs="*", metavar="SOURCE", help="pod files, directories, URLs, -")
    add_output_option(
        st,
        "status",
        "the statuses",
        json_help="print the statuses as JSON; the same as -o json",
        note="; wide adds IP, SCOPE and IMAGES to the table, name prints pod/NAMESPACE/NAME",
    )
    st.add_argument(
        "--probe",
        action="store_true",
        help="run the pods' probes first (exec probes run commands inside containers), so "
        "that readiness is known: without, a container with a readiness probe is not ready",
    )
    st.add_argument(
        "-w",
        "--watch",
        action="store_true",
        help="then print a pod's row again whenever it changes, until interrupted",
    )
    add_fleet_read_options(st, "the pods' statuses")
    de = commands.add_parser(
        "describe",
        parents=[engine, planning, output],
        allow_abbrev=False,
        help="show everything about one pod",
        description="One pod's containers, their states and last terminations, ports, "
        "mounts, conditions, what the next sync would do for it (with -f) and its recent "
        "engine events.",
    )
    de.add_argument("pod", metavar="POD", help=pod_help)
    de.add_argument(
        "-f",
        "--filename",
        dest="sources",
        action="append",
        default=[],
        metavar="SOURCE",
        help="the pod files: the pod's spec, restart policy and next sync's actions",
    )
    lo = commands.add_parser(
        "logs",
        parents=[engine, output],
        allow_abbrev=False,
        help="print a container's logs",
        description="Print what a pod container wrote: its stdout to stdout, its stderr to stderr.",
    )
    lo.add_argument("pod", metavar="POD", help=pod_help)
    lo.add_argument(
        "-c",
        "--container",
        help="the pod container (needed when the pod has more than one)",
    )
    lo.add_argument("--tail", metavar="N", type=_count, help="only the last N lines")
    lo.add_argument(
        "-f", "--follow", action="store_true", help="go on printing until the container stops"
    )
    lo.add_argument(
        "-p",
        "--previous",
        action="store_true",
        help="the logs of the previous instance (the newest one that exited before)",
    )
    lo.add_argument("--timestamps", action="store_true", help="each line with its time")
    lo.add_argument(
        "--since",
        metavar="DURATION",
        type=duration,
        help="only lines newer than this (10s, 5m, 1h)",
    )
    _add_adopt_option(lo, default=False)
    ex = commands.add_parser(
        "exec",
        parents=[engine, output],
        allow_abbrev=False,
        help="run a command in a container",
        description="Run COMMAND in a running pod container, as docker exec: no shell is "
        "added. Exits with the command's exit code.",
    )
    ex.add_argument("pod", metavar="POD", help=pod_help)
    ex.add_argument("-c", "--container", help="the pod container (needed when it has more)")
    ex.add_argument("-i", "--stdin", action="store_true", help="pass standard input on")
    ex.add_argument("-t", "--tty", action="store_true", help="give the command a terminal")
    # What follows "--" is the command whatever it looks like: main() splits it off
    # before parsing, so that options after POD (-c, -i) are still podsync's.
    ex.add_argument("command_line", nargs="*", metavar="-- COMMAND", help="the command")
    _add_adopt_option(ex, default=False)
    ev = commands.add_parser(
        "events",
        parents=[engine, output],
        allow_abbrev=False,
        help="print the engine's events of podsync's pods",
        description="The engine's container events (create, start, kill, die, oom, stop, "
        "destroy, ...) of the pods podsync runs, oldest first, from the engine's recent "
        "history.",
    )
    ev.add_argument(
        "-f", "--follow", action="store_true", help="then print new events until interrupted"
    )
    add_output_option(
        ev,
        "events",
        "the events",
        json_help="one JSON object per line; the same as -o json",
        note=" (json: one object per line; yaml: one document per event)",
    )
    ev.add_argument(
        "--since", metavar="DURATION", type=duration, help="only events newer than this"
    )
    add_fleet_read_options(ev, "the events")
    _add_adopt_option(ev, default=False)
    _add_adopt_option(add_top_command(commands, parents=[engine, output]), default=False)


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


class _AppendGiven(argparse.Action):
    """``append`` for an option whose default is ``_UNSET`` (so "given" can be told)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        current = getattr(namespace, self.dest, _UNSET)
        items = [] if current is _UNSET else list(current)
        setattr(namespace, self.dest, [*items, values])
