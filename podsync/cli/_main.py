"""The ``podsync`` command line: ``plan``, ``apply``, ``show`` and ``down``, and the
operating commands ``status``, ``describe``, ``logs``, ``exec`` and ``events``
(``podsync.cli._ops``) and ``top`` (``podsync.cli._top``).

Usage::

    podsync plan [-o json|yaml|name] [--out FILE] [--detailed-exitcode] SOURCE...
    podsync apply [-o json|yaml|name] [--wait [--timeout S]] SOURCE...
    podsync apply --plan FILE
    podsync apply --hosts HOSTS.yaml [-o json|yaml] SOURCE...     (podsync.cli._fleet)
    podsync show [-o json|yaml|name] FILE
    podsync down [-o json|yaml|name] SOURCE...
    podsync status [-o json|yaml|wide|name] [-w] [SOURCE...]
    podsync describe POD [-f SOURCE]...
    podsync logs POD [-c CONTAINER] [--tail N] [-f] [-p] [--timestamps] [--since DURATION]
    podsync exec POD [-c CONTAINER] [-i] [-t] -- COMMAND...
    podsync events [-f] [-o json|yaml] [--since DURATION]
    podsync top [POD...] [--containers] [--window DURATION] [-o json|yaml]

``--json`` is ``-o json`` wherever it is taken; the formats are
``podsync.cli._output``'s.

A SOURCE is a pod file, a directory of them, an http(s) URL, or ``-`` for standard
input; several are merged (``podsync.load_pods``). The sources are read completely
*before* the engine is contacted: any problem in any of them is reported with its file
and ``$.path``, and nothing on the engine is touched.

Conventions (Terraform's for plans and exit codes, the docker CLI's for the engine):

* Standard output carries the result: the plan, the apply summary, the ``--wait``
  report, or the document or names ``-o`` asks for. Standard error carries progress,
  warnings and errors, as text or, with ``--log-format json``, as one JSON object per
  line.
* Exit codes: 0 success; 1 any error (a command line usage error, a bad source, an
  unreachable engine, a failed action, a stale saved plan, a rejected pod, a pod not
  running after ``--wait``); 2 only for ``plan --detailed-exitcode``: success, with
  changes; 130 interrupted. A usage error is 1, not argparse's 2, as in Terraform: a
  script reading 2 as "changes" must never act on a typo. Errors are one
  ``podsync: error: ...`` line each, never a traceback.
* The engine is ``--docker-host`` / ``-H``, else ``DOCKER_HOST``, else podman's
  ``CONTAINER_HOST``, else the local socket; a ``tcp://`` engine speaks TLS as the
  docker CLI decides from ``--tls*``, ``DOCKER_TLS_VERIFY`` and ``DOCKER_CERT_PATH``
  (``podsync.cli._engine.EngineTLS``).
  ``ssh://`` hosts use the ``ssh`` command, as the docker CLI.

Saved plans (``plan --out FILE``, then ``apply --plan FILE``) carry a fingerprint of the
engine state they act on, and ``apply --plan`` refuses a plan the engine has moved away
from (``podsync.cli._saved``).

This module holds the commands and ``main``, which dispatches to them: ``plan``,
``apply`` and ``down`` here, saved plans (``apply --plan``, ``show``) in
``podsync.cli._saved``, ``apply --wait`` in ``podsync.cli._wait``, ``apply --hosts`` in
``podsync.cli._fleet``, the operating commands in ``podsync.cli._ops``, ``run`` in
``podsync.cli._run``, ``publish`` in ``podsync.cli._etcd``, and what reads the fleet
back from etcd (``hosts``, ``status --etcd``, ``events --etcd``) in
``podsync.cli._fleet_read``. The engine they work on,
and one sync or apply of it, are ``podsync.cli._engine``'s; the parser
``podsync.cli._args``'s, the checks argparse cannot express ``podsync.cli._checks``'s,
the planning options the arguments give ``podsync.cli._planning``'s, the output (text
and JSON lines, progress) ``podsync.cli._console``'s, and each sync is ``podsync.sync``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.actions._actions import Plan
from podsync.actions._options import PlanOptions
from podsync.applier._results import Event
from podsync.cli._args import (
    _DEFAULT_STOP_TIMEOUT,
    EXIT_CHANGES,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    _Failure,
    build_parser,
)
from podsync.cli._checks import _check_combinations, _UsageError
from podsync.cli._console import (
    Console,
    Progress,
    changes,
    report_apply,
    warn_rejected,
    warn_unpublished_ports,
)
from podsync.cli._engine import (
    RuntimeFactory,
    _engine,
    _sync_pods,
    docker_factory,
)
from podsync.cli._etcd import cmd_publish, etcd_options
from podsync.cli._output import check_output, output_format, print_apply
from podsync.cli._planning import _given, _host_key, _plan_options, _root_dir
from podsync.cli._source_args import http_options
from podsync.exceptions import ConfigError, EngineUnavailable, PodsyncError, RuntimeCallError
from podsync.host._clock import Clock, clocks, system_sleep
from podsync.load._config import DEFAULT_MAX_BYTES, load_pods
from podsync.load._source_reads import source_kind
from podsync.loop._down import down, pod_of_volume
from podsync.loop._sync import Observation
from podsync.model._pod import ObservedContainer, Pod
from podsync.model._pulls import PullFailure
from podsync.runtime._protocol import Runtime
from podsync.spec._ownership import ownership

if TYPE_CHECKING:
    from podsync.etcd._urls import EtcdOptions
    from podsync.load._sources import HttpOptions
    from podsync.status._pod import PodStatus

# What only saved plans (plan --out, apply --plan, show, -o json) or --wait need - their
# commands (podsync.cli._saved, podsync.cli._wait), the plan's JSON form, Secrets read
# again for a saved plan, pod status, temporary files - is imported where it is used:
# ``podsync apply SOURCE`` does not pay for it (issue 16: a one-pod apply, process start
# to running).

__all__ = ["main"]

# ---------------------------------------------------------------------------------------
# Reading


@attrs.frozen
class _Loaded:
    """What the sources gave: the pods of the good files, and the bad files' problems.

    Attributes:
        pods: the pods of every file (URL, etcd key) without a problem.
        bad: one ``ConfigError`` per file that was not used, in source order.
    """

    pods: tuple[Pod, ...]
    bad: tuple[ConfigError, ...] = ()

    def options(self, options: PlanOptions) -> PlanOptions:
        """``options``, deleting no pod of a kind of source that had a bad file: the
        pods a bad file holds are unknown, and a bad file never causes a deletion
        (``kubectl apply --prune`` prunes nothing after an error either)."""
        kinds = {source_kind(p.source) for error in self.bad for p in error.problems}
        if not kinds:
            return options
        ready = options.ready_sources
        base = ready if ready is not None else frozenset({"file", "http", "etcd"})
        return attrs.evolve(options, ready_sources=base - kinds)

    def report(self, console: Console, *, deletions: bool = True) -> bool:
        """Say which files were not used, and why (each problem with its file and
        ``$.path``); whether all were used. ``deletions``: the command deletes the pods
        the sources no longer hold (``plan``, ``apply``), which waited."""
        for error in self.bad:
            for problem in error.problems:
                console.error(str(problem))
        if self.bad:
            held = ", and no pod of their kind of source was deleted" if deletions else ""
            console.error(
                f"{len(self.bad)} source file(s) not used: what they hold was neither "
                f"started nor stopped{held}; the other files were used"
            )
        return not self.bad


def _load(
    sources: Sequence[str],
    warn: Callable[[str], object],
    max_bytes: int | None,
    root_dir: str,
    etcd: EtcdOptions | None = None,
    http: HttpOptions | None = None,
) -> _Loaded:
    """The pods of every good source file, and the problems of the others (the engine
    is not contacted before the sources are read): one bad file is one bad file, as for
    the kubelet's file source (``extractFromDir``) and ``kubectl apply -f DIR``; a
    failure listing every problem when no file gave a pod. The
    fields a pod sets that podsync ignores are one ``warn`` per pod. ``max_bytes`` is
    ``--max-bytes`` (None: the library's default). Secret values are digested with the
    key under ``root_dir`` (made there when the sources first hold a Secret); etcd
    sources are reached with ``etcd``, URLs with ``http``."""
    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    key = _host_key(root_dir)
    bad: list[ConfigError] = []
    pods = load_pods(
        list(sources),
        on_warning=warn,
        max_bytes=limit,
        secret_key=key,
        etcd=etcd,
        on_bad_file=bad.append,
        http=http,
    )
    if bad and not pods:
        # Nothing to use: stop before the engine, as when every file is bad there is
        # nothing a plan could do (a bad file deletes nothing).
        lines = [str(p) for error in bad for p in error.problems]
        if len(lines) > 1:
            # Several lines, some about one document of a file that also holds good
            # pods: say that none of them was used.
            lines.append(
                f"{len(lines)} problems in the sources: podsync stopped before contacting "
                "the engine, and changed nothing"
            )
        raise _Failure(*lines)
    return _Loaded(pods, tuple(bad))


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


# ---------------------------------------------------------------------------------------
# The commands


def _never(the_plan: Plan, observation: Observation) -> bool:
    """A ``before_apply`` that applies nothing (``podsync plan``)."""
    return False


def _note_left_alone(
    console: Console, pods: Sequence[Pod], options: PlanOptions, observation: Observation
) -> None:
    """Without a scope, ``plan`` and ``apply`` remove nothing of the pods they were not
    given (podsync 0.1.0 removed them): a note says how many podsync pods on the engine
    the sources do not describe, and how a node scope would remove them."""
    if options.scope is not None or not options.allow_deletions:
        return
    wanted = {p.uid for p in pods}
    adopt = options.adopt_2014_containers
    others = {
        o.pod_uid
        for oc in observation.containers
        if (o := ownership(oc, adopt_2014_containers=adopt)) and o.pod_uid not in wanted
    }
    if others:
        console.note(
            f"{len(others)} other podsync pod(s) on the engine left as they are: without "
            "--scope, only the pods of the sources are this command's (--scope node "
            "removes the others)"
        )


def _cmd_plan(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
    from podsync.cli._output import DEPRECATED_SAVE, deprecated_plan_file
    from podsync.cli._saved import _write_plan, print_plan
    from podsync.cli._secrets import _with_sources

    loaded = _load(
        args.sources,
        console.warning,
        args.max_bytes,
        _root_dir(args),
        etcd_options(args, console.warning),
        http_options(args),
    )
    pods = loaded.pods
    options = loaded.options(_plan_options(args, console))
    with _engine(factory, args.docker_host) as runtime:
        # A dry run: the plan is made as apply makes it, and never applied.
        result = _sync_pods(
            console,
            runtime,
            pods,
            options,
            args,
            verb="Plan",
            before_apply=_never,
            # A dry run: plan --probe runs the probes and counts nothing.
            record_probes=False,
        )
    the_plan = result.plan
    warn_rejected(console, the_plan)
    warn_unpublished_ports(console, pods, options)
    _note_left_alone(console, pods, options, result.observation)
    fmt = output_format(args)
    saved = args.out
    if saved is None and deprecated_plan_file(args) is not None:
        # plan -o FILE, for one release more (issue 30): -o is now the format.
        console.warning(DEPRECATED_SAVE)
        saved = args.output
    if saved:
        _write_plan(saved, _with_sources(the_plan, args.sources))
    if fmt is None:
        console.print(the_plan.render())
        if saved:
            console.print(
                f"\nSaved the plan to {saved}. To apply exactly this plan: "
                f"podsync apply --plan {saved}"
            )
    else:
        print_plan(console, fmt, the_plan)
    if not loaded.report(console):
        return EXIT_ERROR
    if args.detailed_exitcode and the_plan.has_changes:
        return EXIT_CHANGES
    return EXIT_OK


def _cmd_apply(
    args: argparse.Namespace,
    console: Console,
    factory: RuntimeFactory,
    sleep: Callable[[float], None],
) -> int:
    if args.hosts is not None:
        from podsync.cli._fleet import cmd_apply_hosts

        return cmd_apply_hosts(args, console, factory)
    if args.plan_file is not None:
        from podsync.cli._saved import _apply_saved

        return _apply_saved(args, console, factory)
    loaded = _load(
        args.sources,
        console.warning,
        args.max_bytes,
        _root_dir(args),
        etcd_options(args, console.warning),
        http_options(args),
    )
    pods = loaded.pods
    options = loaded.options(_plan_options(args, console))
    fmt = output_format(args)

    def show(the_plan: Plan, observation: Observation) -> bool:
        warn_rejected(console, the_plan)
        warn_unpublished_ports(console, pods, options)
        _note_left_alone(console, pods, options, observation)
        if not pods and not loaded.bad:
            console.warning("the sources describe no pods")
        if fmt is None:
            console.print(the_plan.render())
        return the_plan.has_changes

    # The failed pulls, for their back-off across the syncs of --wait (ImagePullBackOff).
    failures: dict[tuple[str, str], PullFailure] = {}
    with _engine(factory, args.docker_host) as runtime:
        result = _sync_pods(
            console,
            runtime,
            pods,
            options,
            args,
            verb="Apply",
            before_apply=show,
            pull_failures=failures,
            summary=fmt is None,
        )
        the_plan = result.plan
        ok = result.ok
        applied = result.apply_result if result.applied else None
        if args.wait:
            from podsync.cli._wait import _wait

            waited: list[PodStatus] = []
            code = _wait(
                console,
                runtime,
                pods,
                options,
                args,
                sleep,
                ok,
                result.observation,
                failures,
                report=None if fmt is None else waited.extend,
            )
            if fmt is not None:
                print_apply(console, fmt, the_plan, applied, code == EXIT_OK, waited)
            return code if loaded.report(console) else EXIT_ERROR
    if fmt is not None:
        print_apply(console, fmt, the_plan, applied, ok and not the_plan.rejected)
    if not loaded.report(console):
        return EXIT_ERROR
    if the_plan.rejected:
        console.error(f"{len(the_plan.rejected)} pod(s) rejected: see the warnings above")
        return EXIT_ERROR
    return EXIT_OK if ok else EXIT_ERROR


def _cmd_down(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
    # down takes apply's options; of the planning ones, only these can change what it
    # removes (DOWN_OPTIONS_NOTE): the others are not read.
    scope = _given(args, "scope", None)
    if not args.sources and scope is None:
        raise _Failure("down needs SOURCEs, --scope NAME, or both")
    # Removing pods: what they would ignore while running is beside the point.
    loaded = (
        _load(
            args.sources,
            lambda _: None,
            args.max_bytes,
            _root_dir(args),
            etcd_options(args, console.warning),
            http_options(args),
        )
        if args.sources
        else None
    )
    pods = loaded.pods if loaded is not None else []
    fmt = output_format(args)
    if loaded is not None and not pods and scope is None:
        # Every source good and empty: nothing to remove (``down()`` would refuse).
        ok = loaded.report(console, deletions=False)
        if fmt is not None:
            print_apply(console, fmt, Plan(), None, ok)
        return EXIT_OK if ok else EXIT_ERROR
    options = PlanOptions(
        root_dir=_root_dir(args),
        stop_timeout=_given(args, "stop_timeout", _DEFAULT_STOP_TIMEOUT),
        adopt_2014_containers=_given(args, "adopt_2014_containers", False),
    )
    progress: Progress | None = None

    def show(the_plan: Plan, observation: Observation) -> bool:
        nonlocal progress
        warn_rejected(console, the_plan)
        if fmt is None:
            console.print(the_plan.render())
        adopt = options.adopt_2014_containers
        owned = {
            o.pod_uid
            for oc in observation.containers
            if (o := ownership(oc, adopt_2014_containers=adopt))
        }
        kept = owned | observation.pod_dirs | {pod_of_volume(v) for v in observation.volumes}
        absent = [p.key for p in pods if p.uid not in kept]
        if absent:
            console.note(f"Not on the engine: {', '.join(absent)}")
        progress = Progress(console, changes(the_plan))
        return True

    def on_event(event: Event) -> None:
        if progress is not None:
            progress(event)

    with _engine(factory, args.docker_host) as runtime:
        try:
            result = down(
                pods,
                runtime,
                scope=scope,
                options=options,
                workers=args.workers,
                on_event=on_event,
                hook_timeout=args.hook_timeout,
                clock=console.clocks.given,
                before_apply=show,
            )
        except OSError as exc:
            raise _Failure(f"cannot list the root directory {options.root_dir}: {exc}") from None
        finally:
            if progress is not None:
                progress.close()
    ok = result.ok and not result.plan.rejected
    if fmt is not None:
        applied = result.apply_result if result.plan.has_changes else None
        print_apply(console, fmt, result.plan, applied, ok)
    elif result.plan.has_changes:
        report_apply(console, result.apply_result, verb="Down")
    # The pods of a bad file are unknown: they stay (kubectl delete -f DIR deletes what
    # it could read and reports the rest, too).
    if loaded is not None and not loaded.report(console, deletions=False):
        return EXIT_ERROR
    return EXIT_OK if ok else EXIT_ERROR


# ---------------------------------------------------------------------------------------
# main


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
    argv = list(sys.argv[1:] if argv is None else argv)
    command_line: list[str] | None = None
    if argv[:1] == ["exec"] and "--" in argv:
        # ``exec POD [options] -- COMMAND...``: the command is the user's, argparse
        # never sees it (it would read its options as podsync's).
        split = argv.index("--")
        argv, command_line = argv[:split], argv[split + 1 :]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if command_line is not None:
        args.command_line = [*args.command_line, *command_line]
    console = Console(getattr(args, "log_format", "text"), clock)
    factory = runtime_factory or docker_factory(args, console.warning)
    with console.library_warnings():
        return _run_command(args, parser, console, factory, sleep)


def _run_command(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    console: Console,
    factory: RuntimeFactory,
    sleep: Callable[[float], None] | None,
) -> int:
    """``main``'s dispatch to the command, and the errors every command reports."""
    try:
        _check_combinations(args)
        check_output(args)
        if args.command == "plan":
            return _cmd_plan(args, console, factory)
        if args.command == "apply":
            return _cmd_apply(args, console, factory, sleep or system_sleep)
        if args.command == "show":
            from podsync.cli._saved import _cmd_show

            return _cmd_show(args, console)
        if args.command in _OPERATING:
            return _operate(args, console, factory, sleep or system_sleep)
        if args.command == "publish":
            return cmd_publish(args, console)
        if args.command == "hosts":
            from podsync.cli._fleet_read import cmd_hosts

            return cmd_hosts(args, console)
        if args.command == "run":
            from podsync.cli._run import cmd_run

            return cmd_run(args, console, factory)
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


_OPERATING = ("status", "describe", "logs", "exec", "events", "top")


def _operate(
    args: argparse.Namespace,
    console: Console,
    factory: RuntimeFactory,
    sleep: Callable[[float], None],
) -> int:
    """The operating commands (``podsync.cli._ops``)."""
    from podsync.cli import _ops as _cli_ops
    from podsync.cli._fleet_read import cmd_fleet_events, cmd_fleet_status, reads_fleet

    if args.command in ("status", "events") and reads_fleet(args):
        # --etcd: what the hosts reported, read from etcd; no engine is contacted.
        return (cmd_fleet_status if args.command == "status" else cmd_fleet_events)(args, console)

    def engine() -> contextlib.AbstractContextManager[Runtime]:
        return _engine(factory, args.docker_host)

    if args.command == "status":
        return _cli_ops.cmd_status(args, console, engine, sleep)
    if args.command == "top":
        from podsync.cli._top import cmd_top

        return cmd_top(args, console, engine, sleep)
    command = {
        "describe": _cli_ops.cmd_describe,
        "logs": _cli_ops.cmd_logs,
        "exec": _cli_ops.cmd_exec,
        "events": _cli_ops.cmd_events,
    }[args.command]
    return command(args, console, engine)


def _usage_error(parser: argparse.ArgumentParser, command: str, message: str) -> int:
    # The format and code of the errors argparse finds itself (``_Parser.error``).
    sub = f" {command}" if command else ""
    print(f"usage: {parser.prog}{sub} ... (see podsync{sub} --help)", file=sys.stderr)
    print(f"{parser.prog}{sub}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
