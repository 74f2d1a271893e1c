"""A fleet from one process: one ``sync`` per host, all hosts at once.

The seed ran a kubelet per host, each syncing the pods bound to its host; ``sync_hosts``
does the same from one process: every host's ``sync`` runs in a thread of its own, and
each applies its plan with a pool of its own (``workers`` engine calls at a time per
engine), so a slow or unreachable engine holds nobody else up. A host whose sync fails
(its engine cannot be reached, its root directory cannot be used) is a failed
``HostResult`` naming the reason, and the other hosts are synced as if it were not there.

Each host keeps its pod directories (emptyDir volumes, termination-message files, stop
and probe records) under a root directory of its own, ``host_root_dir(root_dir, name)``:
a sync removes the pod directories of pods it does not desire, and one host's pods are
never another's to remove.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

import attrs

from podsync.actions._actions import Plan
from podsync.actions._options import PlanOptions
from podsync.applier._apply import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS, _check_settings
from podsync.applier._results import Event
from podsync.exceptions import PodsyncError
from podsync.fleet._hosts import host_root_dir
from podsync.host._clock import Clock, clocks
from podsync.loop._sync import Observation, SyncResult, sync
from podsync.model._pod import Pod
from podsync.runtime._protocol import Runtime

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["FleetResult", "HostResult", "sync_hosts"]


@attrs.frozen
class HostResult:
    """What syncing one host did.

    Attributes:
        host: the host's name.
        result: its sync's plan and outcome; ``None`` when the sync could not run.
        error: why the sync could not run (``""`` when it ran): the engine could not be
            reached or listed, the root directory could not be used.
        root_dir: the host's root directory of pod directories.
    """

    host: str
    result: SyncResult | None
    error: str = ""
    root_dir: str = ""

    @property
    def ok(self) -> bool:
        """True when the sync ran and every action of its plan was done (rejected pods
        aside, as ``SyncResult.ok``)."""
        return self.result is not None and self.result.ok


@attrs.frozen
class FleetResult:
    """What ``sync_hosts`` did: one ``HostResult`` per host, in the order given."""

    hosts: tuple[HostResult, ...]

    @property
    def ok(self) -> bool:
        """True when every host's sync ran and did all of its plan."""
        return all(h.ok for h in self.hosts)

    @property
    def failed(self) -> tuple[str, ...]:
        """The hosts whose sync could not run or had failed actions."""
        return tuple(h.host for h in self.hosts if not h.ok)

    def __getitem__(self, host: str) -> HostResult:
        """The result of ``host``."""
        for found in self.hosts:
            if found.host == host:
                return found
        raise KeyError(host)


def sync_hosts(
    desired: Mapping[str, Sequence[Pod]],
    runtimes: Mapping[str, Runtime],
    *,
    options: PlanOptions | None = None,
    workers: int = DEFAULT_WORKERS,
    on_event: Callable[[str, Event], None] | None = None,
    probe: bool = True,
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
    probe_timeout: float | None = None,
    clock: Clock | None = None,
    before_apply: Callable[[str, Plan, Observation], bool] | None = None,
) -> FleetResult:
    """Make every host's engine run its pods: one ``sync`` per host, concurrently.

    Args:
        desired: each host's pods, by host name (``load_host_pods``). A host of
            ``runtimes`` that is missing here desires no pods.
        runtimes: each host's engine, by host name; the caller owns (and closes) them.
        options: the planning options of every host (``PlanOptions()`` when ``None``),
            except the root directory: host ``name`` uses
            ``host_root_dir(options.root_dir, name)``.
        workers: the size of each host's apply pool (engine calls at a time per engine).
        on_event: called with the host's name and each ``Event`` of its sync, from
            worker threads, one call at a time across all hosts.
        probe: as ``sync``, for every host.
        hook_timeout: as ``sync``, for every host.
        probe_timeout: as ``sync``, for every host.
        clock: as ``sync``, for every host.
        before_apply: called with the host's name, its plan and its observation before
            anything is applied there (one call at a time across all hosts); when it
            returns False that host's plan is not applied.

    Returns:
        A ``HostResult`` per host of ``runtimes``, in its order.

    Raises:
        KeyError: ``desired`` names a host that is not in ``runtimes``.
        ValueError: bad ``workers`` or timeouts (before any host is synced).
        TypeError: ``clock`` is not callable.
    """
    unknown = sorted(set(desired) - set(runtimes))
    if unknown:
        raise KeyError(f"pods for hosts without an engine: {', '.join(unknown)}")
    _check_settings(workers, hook_timeout)
    if probe_timeout is not None and not probe_timeout > 0:
        raise ValueError(f"probe_timeout must be positive, got {probe_timeout!r}")
    clocks(clock)
    base = options or PlanOptions()
    # One lock for the callbacks of every host: the caller sees one call at a time, as
    # with a single sync.
    lock = threading.Lock()
    results: dict[str, HostResult] = {}

    def one(name: str, runtime: Runtime) -> None:
        root = host_root_dir(base.root_dir, name)

        def event(e: Event) -> None:
            if on_event is not None:
                with lock:
                    on_event(name, e)

        def decide(the_plan: Plan, observation: Observation) -> bool:
            if before_apply is None:
                return True
            with lock:
                return before_apply(name, the_plan, observation)

        try:
            result = sync(
                desired.get(name, ()),
                runtime,
                options=attrs.evolve(base, root_dir=root),
                workers=workers,
                on_event=event,
                probe=probe,
                hook_timeout=hook_timeout,
                probe_timeout=probe_timeout,
                clock=clock,
                before_apply=decide,
            )
        except PodsyncError as exc:  # the engine cannot be reached or listed
            results[name] = HostResult(name, None, " ".join(str(exc).split()), root)
        except OSError as exc:
            why = f"cannot use the root directory {root}: {exc}"
            results[name] = HostResult(name, None, why, root)
        except Exception as exc:  # one host's surprise is not every host's failure
            why = f"internal error: {type(exc).__name__}: {exc}"
            results[name] = HostResult(name, None, why, root)
        else:
            results[name] = HostResult(name, result, "", root)

    threads = [
        threading.Thread(target=one, args=(name, runtime), name=f"podsync-host-{name}")
        for name, runtime in runtimes.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return FleetResult(tuple(results[name] for name in runtimes))
