"""The ``podsync`` command line: ``plan``, ``apply``, ``show`` and ``down``, and the
operating commands ``status``, ``describe``, ``logs``, ``exec`` and ``events``
(``podsync.cli._ops``).

Usage::

    podsync plan [--json] [-o FILE] [--detailed-exitcode] SOURCE...
    podsync apply [--wait [--timeout S]] SOURCE...
    podsync apply --plan FILE
    podsync apply --hosts HOSTS.yaml [--json] SOURCE...     (podsync.cli._fleet)
    podsync show [--json] FILE
    podsync down SOURCE...
    podsync status [--json] [-w] [SOURCE...]
    podsync describe POD [-f SOURCE]...
    podsync logs POD [-c CONTAINER] [--tail N] [-f] [-p] [--timestamps] [--since DURATION]
    podsync exec POD [-c CONTAINER] [-i] [-t] -- COMMAND...
    podsync events [-f] [--json] [--since DURATION]

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

This module holds the commands; the arguments (parser, checks, planning options) are
``podsync.cli._args``'s, the output (text and JSON lines, progress) ``podsync.cli._console``'s,
and each sync is ``podsync.sync``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from podsync.actions._actions import Action, Plan, shorten_ids
from podsync.actions._fingerprint import plan_fingerprint
from podsync.actions._options import GCPolicy, PlanOptions
from podsync.applier._apply import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS, apply
from podsync.applier._content_engine import planned_engine_records
from podsync.applier._results import ApplyResult, Event, EventKind
from podsync.cli._args import (
    DEFAULT_WAIT_TIMEOUT,
    EXIT_CHANGES,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    _check_combinations,
    _Failure,
    _given,
    _host_key,
    _plan_options,
    _probe,
    _root_dir,
    _UsageError,
    build_parser,
)
from podsync.cli._console import (
    Console,
    Progress,
    changes,
    report_apply,
    warn_rejected,
    warn_unpublished_ports,
)
from podsync.cli._etcd import cmd_publish, etcd_options
from podsync.exceptions import ConfigError, EngineUnavailable, PodsyncError, RuntimeCallError
from podsync.host._clock import Clock, clocks, system_sleep
from podsync.load._config import DEFAULT_MAX_BYTES, load_pods
from podsync.loop._sync import Observation, SyncResult, observe, sync
from podsync.model._pod import ObservedContainer, ObservedVolume, Pod
from podsync.planner._plan import plan
from podsync.runtime._protocol import Runtime
from podsync.spec._backoff import Backoff
from podsync.spec._ownership import ownership, volume_ownership

if TYPE_CHECKING:
    from podsync.load._etcd import EtcdOptions
    from podsync.status._pod import PodStatus

# What only saved plans (plan -o, apply --plan, show, --json) or --wait need - the
# plan's JSON form, the fingerprint, Secrets read again for a saved plan, pod status,
# temporary files - is imported where it is used: ``podsync apply SOURCE`` does not
# pay for it (issue 16: a one-pod apply, process start to running).

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

# ---------------------------------------------------------------------------------------
# The engine


def docker_runtime(host: str | None) -> Runtime:
    """The default runtime factory: a ``DockerRuntime`` for ``host`` (``None``: the
    ``DOCKER_*`` environment), with an address that is checked before any call."""
    from podsync.runtime.docker._runtime import DockerRuntime

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
        runtime.close()


def _observe(runtime: Runtime, root_dir: str, *, volumes: bool = False) -> Observation:
    try:
        return observe(runtime, root_dir, volumes=volumes)
    except OSError as exc:
        raise _Failure(f"cannot list the root directory {root_dir}: {exc}") from None


def _never(the_plan: Plan, observation: Observation) -> bool:
    """A ``before_apply`` that applies nothing (``podsync plan``)."""
    return False


def _fingerprint(the_plan: Plan, observation: Observation, runtime: Runtime) -> str:
    """The fingerprint of ``the_plan`` against ``observation`` and the records of the
    volumes it writes (``plan_fingerprint``): under the root directory, and in the
    engine volumes, read through ``runtime``."""
    from podsync.host._volume_writer import planned_volume_records

    engine = planned_engine_records(runtime, the_plan, observation.containers)
    volumes = planned_volume_records(the_plan) + engine
    return plan_fingerprint(
        the_plan,
        observation.containers,
        observation.images,
        observation.pod_dirs,
        volume_files=volumes,
    )


# ---------------------------------------------------------------------------------------
# Reading


def _load(
    sources: Sequence[str],
    warn: Callable[[str], object],
    max_bytes: int | None,
    root_dir: str,
    etcd: EtcdOptions | None = None,
) -> tuple[Pod, ...]:
    """The pods of every source, or a failure listing every problem (nothing else
    happens first: the engine is not contacted before the sources are read). The
    fields a pod sets that podsync ignores are one ``warn`` per pod. ``max_bytes`` is
    ``--max-bytes`` (None: the library's default). Secret values are digested with the
    key under ``root_dir`` (made there when the sources first hold a Secret); etcd
    sources are reached with ``etcd``."""
    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    key = _host_key(root_dir)
    try:
        return load_pods(list(sources), on_warning=warn, max_bytes=limit, secret_key=key, etcd=etcd)
    except ConfigError as exc:
        lines = [str(p) for p in exc.problems]
        if len(lines) > 1:
            # Several lines, some about one document of a file that also holds good
            # pods: say that none of them was used.
            lines.append(
                f"{len(lines)} problems in the sources: podsync stopped before contacting "
                "the engine, and changed nothing"
            )
        raise _Failure(*lines) from None


def _read_plan(path: str) -> Plan:
    from podsync.actions._json import plan_from_json

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
    import tempfile

    from podsync.actions._json import plan_json_chunks

    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".podsync-plan-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                stream.writelines(plan_json_chunks(the_plan))
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise _Failure(f"cannot save the plan to {path}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------------------------------
# Applying


def _sync_pods(
    console: Console,
    runtime: Runtime,
    pods: Sequence[Pod],
    options: PlanOptions,
    args: argparse.Namespace,
    *,
    verb: str,
    before_apply: Callable[[Plan, Observation], bool],
    record_probes: bool = True,
) -> SyncResult:
    """One ``podsync.sync`` (observe, probe, plan, apply): ``before_apply`` sees the
    plan first and says whether to apply it; an applied plan is reported with progress
    on stderr, then the summary (stdout) and the failures."""
    progress: Progress | None = None

    def decide(the_plan: Plan, observation: Observation) -> bool:
        nonlocal progress
        if not before_apply(the_plan, observation):
            return False
        progress = Progress(console, changes(the_plan))
        return True

    def on_event(event: Event) -> None:
        # The progress of applying the plan. Probes run before the plan is made: a
        # failure that decided a kill shows in the plan, as the reason of a replacement;
        # the others (below failureThreshold, readiness, a probe that could not run)
        # change no plan, so they are warnings here.
        if progress is not None:
            progress(event)
        elif event.kind in (EventKind.UNHEALTHY, EventKind.PROBE_ERROR) and event.reason is None:
            console.warning(
                f"{event.pod}/{event.container}: {event.message}",
                pod=event.pod,
                container=event.container,
            )

    try:
        result = sync(
            pods,
            runtime,
            options=options,
            workers=getattr(args, "workers", DEFAULT_WORKERS),
            on_event=on_event,
            probe=_probe(args),
            hook_timeout=getattr(args, "hook_timeout", DEFAULT_HOOK_TIMEOUT),
            clock=console.clocks.given,
            before_apply=decide,
            record_probes=record_probes,
        )
    except BrokenPipeError:
        raise
    except OSError as exc:
        # Observing lists it; probing reads and writes the probe records in it.
        raise _Failure(f"cannot use the root directory {options.root_dir}: {exc}") from None
    finally:
        if progress is not None:
            progress.close()
    if result.applied:
        report_apply(console, result.apply_result, verb=verb)
    return result


def _run_apply(
    console: Console, the_plan: Plan, runtime: Runtime, args: argparse.Namespace, *, verb: str
) -> ApplyResult:
    """Apply with progress on stderr, then the summary (stdout) and the failures."""
    progress = Progress(console, changes(the_plan))
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
    report_apply(console, result, verb=verb)
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


# ---------------------------------------------------------------------------------------
# --wait


def pod_statuses(
    pods: Sequence[Pod],
    containers: Sequence[ObservedContainer],
    the_plan: Plan,
    first_seen: dict[str, float],
    now: float,
    *,
    adopt_2014_containers: bool = False,
) -> list[PodStatus]:
    """The status of each pod (``podsync.pod_status``), from an observation and the
    plan made from it, for ``--wait``.

    A running container counts as up once it was seen running for ``_STABLE_SECONDS``:
    ``first_seen`` remembers, by container id, when each was first seen running, in the
    clock of ``now``; until then it is "starting". A 2014 kubelet's containers count
    only with ``adopt_2014_containers`` (the plan's option).
    """
    from podsync.status._pod import pod_status

    settling = set()
    for oc in containers:
        if oc.running and now - first_seen.setdefault(oc.id, now) < _STABLE_SECONDS:
            settling.add(oc.id)
    options = PlanOptions(adopt_2014_containers=adopt_2014_containers)
    return [
        pod_status(pod, containers, plan=the_plan, options=options, settling=settling)
        for pod in pods
    ]


def _verb_of(action: Action) -> str:
    """``stop default/job/net`` from ``stop default/job/net (k8s_...): why``."""
    return shorten_ids(action.message).split(" (", 1)[0].split(": ", 1)[0]


def _wait(
    console: Console,
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
    backoff = Backoff(_WAIT_FIRST_DELAY, _WAIT_MAX_DELAY)
    first_seen = {oc.id: float("-inf") for oc in before.containers if oc.running}
    console.note(f"Waiting up to {args.timeout:g}s for {len(pods)} pod(s)...")
    while True:
        give_up = False
        statuses: list[PodStatus] = []

        def judge(the_plan: Plan, observation: Observation) -> bool:
            nonlocal give_up, statuses
            statuses = pod_statuses(
                pods,
                observation.containers,
                the_plan,
                first_seen,
                elapsed(),
                adopt_2014_containers=options.adopt_2014_containers,
            )
            if all(s.final for s in statuses) or deadline - elapsed() <= 0:
                give_up = True
                return False
            for status in statuses:
                if not status.final:
                    console.note(f"  {status.pod}: {status.message}", pod=status.pod)
            if the_plan.has_changes:
                console.note(f"Syncing again: {the_plan.summary()}")
            return the_plan.has_changes

        result = _sync_pods(console, runtime, pods, options, args, verb="Sync", before_apply=judge)
        the_plan = result.plan
        if give_up:
            break
        if result.applied:
            last_apply_ok = result.ok
        pause = min(backoff.next(), max(deadline - elapsed(), 0.0))
        console.note(f"Checking again in {pause:.1f}s.")
        sleep(pause)
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


def _cmd_plan(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
    from podsync.actions._json import plan_json_chunks
    from podsync.cli._secrets import _with_sources

    pods = _load(args.sources, console.warning, args.max_bytes, _root_dir(args), etcd_options(args))
    options = _plan_options(args, console)
    with _engine(factory, args.docker_host) as runtime:
        # A dry run: the plan is made as apply makes it, and never applied.
        the_plan = _sync_pods(
            console,
            runtime,
            pods,
            options,
            args,
            verb="Plan",
            before_apply=_never,
            # A dry run: plan --probe runs the probes and counts nothing.
            record_probes=False,
        ).plan
    warn_rejected(console, the_plan)
    warn_unpublished_ports(console, pods, options)
    if args.out:
        _write_plan(args.out, _with_sources(the_plan, args.sources))
    if args.json:
        console.print_chunks(plan_json_chunks(the_plan))
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


def _cmd_show(args: argparse.Namespace, console: Console) -> int:
    from podsync.actions._json import plan_json_chunks

    the_plan = _read_plan(args.file)
    if args.json:
        console.print_chunks(plan_json_chunks(the_plan))
        return EXIT_OK
    warn_rejected(console, the_plan)
    console.print(the_plan.render())
    console.print(f"Planned against engine state {the_plan.fingerprint[:12] or '(none)'}.")
    return EXIT_OK


def _cmd_apply(
    args: argparse.Namespace,
    console: Console,
    factory: RuntimeFactory,
    sleep: Callable[[float], None],
) -> int:
    if args.hosts is not None or args.json:
        from podsync.cli._fleet import cmd_apply_hosts

        return cmd_apply_hosts(args, console, factory)
    if args.plan_file is not None:
        return _apply_saved(args, console, factory)
    pods = _load(args.sources, console.warning, args.max_bytes, _root_dir(args), etcd_options(args))
    options = _plan_options(args, console)

    def show(the_plan: Plan, observation: Observation) -> bool:
        warn_rejected(console, the_plan)
        warn_unpublished_ports(console, pods, options)
        if not pods:
            console.warning("the sources describe no pods")
        console.print(the_plan.render())
        return the_plan.has_changes

    with _engine(factory, args.docker_host) as runtime:
        result = _sync_pods(console, runtime, pods, options, args, verb="Apply", before_apply=show)
        the_plan = result.plan
        ok = result.ok
        if args.wait:
            return _wait(console, runtime, pods, options, args, sleep, ok, result.observation)
    if the_plan.rejected:
        console.error(f"{len(the_plan.rejected)} pod(s) rejected: see the warnings above")
        return EXIT_ERROR
    return EXIT_OK if ok else EXIT_ERROR


def _apply_saved(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
    from podsync.cli._secrets import _unsealed

    the_plan = _read_plan(args.plan_file)
    # The plan's paths and binds were made under its own root directory, and apply
    # takes it from the plan; a --root-dir naming another one is a mistake to report.
    root_dir = the_plan.options.root_dir
    if _given(args, "root_dir", None) is not None and _root_dir(args) != root_dir:
        raise _Failure(
            f"the saved plan was made with --root-dir {root_dir}, not {_root_dir(args)}; "
            "leave --root-dir out or make the plan again"
        )
    the_plan = _unsealed(the_plan, args.plan_file, etcd_options(args))
    with _engine(factory, args.docker_host) as runtime:
        current = _fingerprint(the_plan, _observe(runtime, root_dir), runtime)
        if current != the_plan.fingerprint:
            raise _Failure(
                "Saved plan is stale: the engine changed since the plan was made "
                f"(fingerprint {the_plan.fingerprint[:12]}… != {current[:12]}…); "
                "run podsync plan again."
            )
        warn_rejected(console, the_plan)
        console.print(f"Applying the saved plan {args.plan_file}: {the_plan.summary()}")
        if not the_plan.has_changes:
            return EXIT_OK
        result = _run_apply(console, the_plan, runtime, args, verb="Apply")
    return EXIT_OK if result.ok else EXIT_ERROR


def _pod_of_volume(volume: ObservedVolume) -> str:
    """The pod uid of a volume podsync made for one pod, else ``""``."""
    owner = volume_ownership(volume)
    return owner.pod_uid if owner is not None else ""


def _cmd_down(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
    # Removing pods: what they would ignore while running is beside the point.
    pods = _load(args.sources, lambda _: None, args.max_bytes, _root_dir(args), etcd_options(args))
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
            # The volumes too: what podsync keeps of these pods in the engine (their
            # state volumes, their containers' records) goes with them.
            observation = _observe(runtime, root_dir, volumes=True)
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
                volumes=[v for v in observation.volumes if _pod_of_volume(v) in uids],
            )
            if attempt == 0:
                console.print(the_plan.render())
                kept = dirs | {_pod_of_volume(v) for v in observation.volumes}
                absent = [p.key for p in pods if not owned[p.uid] and p.uid not in kept]
                if absent:
                    console.note(f"Not on the engine: {', '.join(absent)}")
            if not the_plan.has_changes:
                break
            if not _run_apply(console, the_plan, runtime, args, verb="Down").ok:
                return EXIT_ERROR
    return EXIT_OK


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
    factory = runtime_factory or docker_runtime
    try:
        _check_combinations(args)
        if args.command == "plan":
            return _cmd_plan(args, console, factory)
        if args.command == "apply":
            return _cmd_apply(args, console, factory, sleep or system_sleep)
        if args.command == "show":
            return _cmd_show(args, console)
        if args.command in _OPERATING:
            return _operate(args, console, factory, sleep or system_sleep)
        if args.command == "publish":
            return cmd_publish(args, console)
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


_OPERATING = ("status", "describe", "logs", "exec", "events")


def _operate(
    args: argparse.Namespace,
    console: Console,
    factory: RuntimeFactory,
    sleep: Callable[[float], None],
) -> int:
    """The operating commands (``podsync.cli._ops``)."""
    from podsync.cli import _ops as _cli_ops

    def engine() -> contextlib.AbstractContextManager[Runtime]:
        return _engine(factory, args.docker_host)

    if args.command == "status":
        return _cli_ops.cmd_status(args, console, engine, sleep)
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
