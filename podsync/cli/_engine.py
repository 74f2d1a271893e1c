"""The engine a one-shot command works on, and one sync or apply of it on the console.

The engine is the runtime a ``RuntimeFactory`` makes from ``--docker-host`` (by default
``docker_runtime``: a ``DockerRuntime``, its address checked before any call), opened
for the command and closed after it (``_engine``). A command observes it (``_observe``),
syncs it (``_sync_pods``: observe, probe, plan, apply, through ``podsync.sync``) or
applies a plan it already has (``_run_apply``: a saved plan, ``down``'s); either way an
applied plan shows its progress on standard error, then its summary on standard output
and its failures (``podsync.cli._console``). An engine or a root directory that cannot be
used is a ``_Failure``: one error line, exit code 1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator, Sequence

from podsync.actions._actions import Plan
from podsync.actions._options import PlanOptions
from podsync.applier._apply import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS, apply
from podsync.applier._results import ApplyResult, Event, EventKind
from podsync.cli._args import _Failure
from podsync.cli._console import Console, Progress, changes, report_apply
from podsync.cli._planning import _probe
from podsync.loop._sync import Observation, SyncResult, observe, sync
from podsync.model._pod import Pod
from podsync.model._pulls import PullFailure
from podsync.runtime._protocol import Runtime

__all__: list[str] = []

#: Makes a runtime for an engine address (``--docker-host``; ``None``: the environment).
RuntimeFactory = Callable[[str | None], Runtime]

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


def _observe(
    runtime: Runtime, root_dir: str, *, images: bool = True, volumes: bool = False
) -> Observation:
    """``observe`` for a command: a root directory that cannot be listed is the
    command's failure, in one line (the operating commands need no images)."""
    try:
        return observe(runtime, root_dir, images=images, volumes=volumes)
    except OSError as exc:
        raise _Failure(f"cannot list the root directory {root_dir}: {exc}") from None


# ---------------------------------------------------------------------------------------
# Syncing and applying


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
    pull_failures: dict[tuple[str, str], PullFailure] | None = None,
) -> SyncResult:
    """One ``podsync.sync`` (observe, probe, plan, apply): ``before_apply`` sees the
    plan first and says whether to apply it; an applied plan is reported with progress
    on stderr, then the summary (stdout) and the failures. ``pull_failures`` keeps the
    failed pulls across the syncs of one command (``apply --wait``), for their
    back-off."""
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
            pull_failures=pull_failures,
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
