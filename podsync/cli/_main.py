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

This module holds ``main``, which dispatches to the commands, importing the module of
the one that runs: ``plan``, ``apply`` and ``down`` in ``podsync.cli._oneshot``, saved
plans (``apply --plan``, ``show``) in ``podsync.cli._saved``, ``apply --wait`` in
``podsync.cli._wait``, ``apply --hosts`` in ``podsync.cli._fleet``, the operating
commands in ``podsync.cli._ops`` and ``podsync.cli._top``, ``run`` in
``podsync.cli._run``, ``publish`` in ``podsync.cli._etcd``, and what reads the fleet
back from etcd (``hosts``, ``status --etcd``, ``events --etcd``) in
``podsync.cli._fleet_read``. The engine they work on, and one sync or apply of it, are
``podsync.cli._engine``'s; the parser ``podsync.cli._args``'s, the checks argparse
cannot express ``podsync.cli._checks``'s, the planning options the arguments give
``podsync.cli._planning``'s, the output (text and JSON lines, progress)
``podsync.cli._console``'s, and each sync is ``podsync.sync``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from podsync.cli._args import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    _Failure,
    build_parser,
)
from podsync.cli._checks import _check_combinations, _UsageError
from podsync.cli._console import Console
from podsync.cli._engine import RuntimeFactory, _engine, docker_factory
from podsync.cli._output import check_output
from podsync.exceptions import EngineUnavailable, PodsyncError, RuntimeCallError
from podsync.host._clock import Clock, clocks, system_sleep

if TYPE_CHECKING:
    from podsync.runtime._protocol import Runtime

# Each command's module is imported when that command runs (issue 33): ``plan``,
# ``apply`` and ``down`` (``podsync.cli._oneshot``: the loader, the planner, apply),
# the operating commands (``podsync.cli._ops``, ``podsync.cli._top``), ``run``
# (``podsync.cli._run``: the loop), ``publish`` (``podsync.cli._etcd``), ``show`` and
# saved plans (``podsync.cli._saved``) and what reads the fleet back from etcd
# (``podsync.cli._fleet_read``). Here: the parser, the console and the engine's address.

__all__ = ["main"]


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
            from podsync.cli._oneshot import cmd_plan

            return cmd_plan(args, console, factory)
        if args.command == "apply":
            from podsync.cli._oneshot import cmd_apply

            return cmd_apply(args, console, factory, sleep or system_sleep)
        if args.command == "show":
            from podsync.cli._saved import _cmd_show

            return _cmd_show(args, console)
        if args.command in _OPERATING:
            return _operate(args, console, factory, sleep or system_sleep)
        if args.command == "publish":
            from podsync.cli._etcd import cmd_publish

            return cmd_publish(args, console)
        if args.command == "hosts":
            from podsync.cli._fleet_read import cmd_hosts

            return cmd_hosts(args, console)
        if args.command == "run":
            from podsync.cli._run import cmd_run

            return cmd_run(args, console, factory)
        from podsync.cli._oneshot import cmd_down

        return cmd_down(args, console, factory)
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
    fleet_options = (getattr(args, "etcd", None), getattr(args, "host", None))
    if args.command in ("status", "events") and fleet_options != (None, None):
        # The etcd client and the fleet's records only for --etcd (and --host, which
        # is a usage error without it): the engine's status reads none of them.
        from podsync.cli._fleet_read import cmd_fleet_events, cmd_fleet_status, reads_fleet

        if reads_fleet(args):
            # --etcd: what the hosts reported, read from etcd; no engine is contacted.
            fleet = cmd_fleet_status if args.command == "status" else cmd_fleet_events
            return fleet(args, console)
    from podsync.cli import _ops as _cli_ops

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
