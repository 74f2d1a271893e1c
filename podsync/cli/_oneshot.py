"""The one-shot commands ``plan``, ``apply`` and ``down``: read the sources, then sync
the engine once (``podsync.cli._engine``) or remove pods from it (``podsync.down``).

``podsync.cli._main`` dispatches to them and imports this module when one of them runs
(issue 33: ``status``, ``hosts`` or ``run`` load none of what is here). What only saved
plans (``plan --out``, ``apply --plan``, ``show``, ``-o json``), ``--wait`` or
``--hosts`` need - their modules (``podsync.cli._saved``, ``podsync.cli._wait``,
``podsync.cli._fleet``), the plan's JSON form, Secrets read again for a saved plan, pod
status, temporary files - is imported where it is used: ``podsync apply SOURCE`` does
not pay for it (issue 16: a one-pod apply, process start to running).
"""

from __future__ import annotations

import argparse
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
    EXIT_OK,
    _Failure,
)
from podsync.cli._console import (
    Console,
    Progress,
    changes,
    report_apply,
    warn_rejected,
    warn_unpublished_ports,
)
from podsync.cli._engine import RuntimeFactory, _engine, _sync_pods
from podsync.cli._etcd import etcd_options
from podsync.cli._output import output_format, print_apply
from podsync.cli._planning import _given, _host_key, _plan_options, _root_dir
from podsync.cli._source_args import http_options
from podsync.exceptions import ConfigError
from podsync.load._config import DEFAULT_MAX_BYTES, load_pods
from podsync.load._source_reads import source_kind
from podsync.loop._down import down, pod_of_volume
from podsync.loop._sync import Observation
from podsync.model._pod import ObservedContainer, Pod
from podsync.model._pulls import PullFailure
from podsync.spec._ownership import ownership

if TYPE_CHECKING:
    from podsync.etcd._urls import EtcdOptions
    from podsync.load._sources import HttpOptions
    from podsync.status._pod import PodStatus

__all__: list[str] = []

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


def _load_given(args: argparse.Namespace, console: Console) -> _Loaded:
    """``_load`` of the sources ``plan`` and ``apply`` were given, with the options of
    their arguments (``--max-bytes``, ``--root-dir``, etcd's and http's)."""
    return _load(
        args.sources,
        console.warning,
        args.max_bytes,
        _root_dir(args),
        etcd_options(args, console.warning),
        http_options(args),
    )


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


def cmd_plan(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
    from podsync.cli._output import DEPRECATED_SAVE, deprecated_plan_file

    loaded = _load_given(args, console)
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
        from podsync.cli._saved import _write_plan
        from podsync.cli._secrets import _with_sources

        _write_plan(saved, _with_sources(the_plan, args.sources))
    if fmt is None:
        console.print(the_plan.render())
        if saved:
            console.print(
                f"\nSaved the plan to {saved}. To apply exactly this plan: "
                f"podsync apply --plan {saved}"
            )
    else:
        from podsync.cli._saved import print_plan

        print_plan(console, fmt, the_plan)
    if not loaded.report(console):
        return EXIT_ERROR
    if args.detailed_exitcode and the_plan.has_changes:
        return EXIT_CHANGES
    return EXIT_OK


def cmd_apply(
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
    loaded = _load_given(args, console)
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


def cmd_down(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
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
