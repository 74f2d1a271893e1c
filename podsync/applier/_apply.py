"""Applying a plan: runtime calls, hooks, host files; it reports what it did with the
results and events of ``podsync.applier._results``.

Rule: apply decides nothing. It runs the plan's actions as written and reports what
happened; the next plan, made from a fresh observation, corrects whatever failed.

The seed ran each pod in its own goroutine (``podWorkers``) and acted as it decided;
here the order is:

1. all ``plan.pulls``, in parallel. A failed pull skips every pod that needs the image
   (``Pull.pods``, by pod uid): nothing of such a pod is touched, so a running old version keeps
   running (the seed skipped only the container, after it had already stopped it);
2. the pods, in parallel, one task per ``PodPlan``; a pod's actions run in order and the
   first failure skips the rest of that pod; other pods go on. The kills of a pod-wide
   stop (``Kill.concurrent``) run at once, each in its turn (``_stopping``), and the
   rest of the pod waits for all of them. On a runtime with
   ``overlapping_calls`` (``DockerRuntime``) the app containers are created while the
   network container they join starts (``_Applier._start_creating``);
3. ``plan.cleanup`` (image removals), in parallel.

Everything runs on ONE bounded thread pool. Nothing waits on the pool from inside it
(hooks run in the pod's task), so it cannot deadlock the way compose's nested pools
sharing a semaphore did (docker/compose #5864, #7486).

Errors: a failure of the runtime, of a hook or of the host filesystem is a failed
result, never an exception; a runtime that raises something other than
``RuntimeCallError`` (a bug) is reported the same way, so it cannot kill a worker.
``apply`` raises only for programming errors (bad arguments, an unknown action).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

import attrs

from podsync.actions._actions import (
    STOP_POST_START_FAILED,
    Action,
    Create,
    CreateSpec,
    CreateVolume,
    Kill,
    Plan,
    PodPlan,
    Pull,
    Remove,
    RemoveImage,
    RemovePodDir,
    RemoveVolume,
    Wait,
    WriteVolume,
)
from podsync.applier._content_engine import unknown_secrets, write_content_volume
from podsync.applier._defaults import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS
from podsync.applier._host_empty_dirs import move_into_volume
from podsync.applier._results import (
    ActionResult,
    ActionStatus,
    ApplyResult,
    Event,
    EventKind,
    action_event,
)
from podsync.applier._stop_records import remove_stop_record_volume, write_stop_record
from podsync.applier._stopping import Turn, concurrent_kills, run_concurrently
from podsync.exceptions import ActionError, NameConflict, PodsyncError, RuntimeCallError
from podsync.host._clock import Clock, Clocks, clocks
from podsync.host._files import (
    HostPathRefused,
    make_host_paths,
    remove_pod_dir,
    remove_stop_record,
)
from podsync.host._volume_writer import write_volume
from podsync.model._pod import Handler
from podsync.model._scrub import Scrubber
from podsync.model._secrets import spec_texts
from podsync.model._volume import VolumeContent
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.prober._handlers import HandlerError, run_handler
from podsync.runtime._protocol import Capability, Runtime, VolumeRuntime, missing
from podsync.spec._labels import LABEL_POD_UID, LABEL_SPEC_HASH

if TYPE_CHECKING:
    # The thread pool is imported where a plan is applied (concurrent.futures is not
    # small, and a program that only plans never needs it).
    from concurrent.futures import Future

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "DEFAULT_WORKERS",
    "apply",
]

# The kubelet's minimumGracePeriodInSeconds (pkg/kubelet/kuberuntime/kuberuntime_manager.go):
# the stop after a preStop handler gets at least this long, even when the handler used
# up the grace period (the documented "one-off 2 s extension").
_MINIMUM_GRACE_PERIOD = 2


_ACTION_TYPES = (
    Pull,
    Create,
    Kill,
    Remove,
    Wait,
    RemovePodDir,
    WriteVolume,
    RemoveImage,
    CreateVolume,
    RemoveVolume,
)


class _VolumeWriter(Protocol):
    """Writes a volume's content (``_volume_writer.write_volume``'s signature): True
    when something was written, False when it held the content already."""

    def __call__(
        self,
        path: str,
        root_dir: str,
        content: VolumeContent,
        *,
        fs_group: int | None,
        now: float,
    ) -> bool: ...


# What the host filesystem raises: a refused path, the OS's errors, a NUL in a path.
_HOST_ERRORS = (HostPathRefused, OSError, ValueError)


def _volumes(runtime: Runtime, purpose: str) -> VolumeRuntime:
    """``runtime`` as a ``VolumeRuntime``; an action that needs named volumes fails,
    naming the capability, on a runtime without them (a plan made for another
    runtime: ``sync`` plans none for it)."""
    if not isinstance(runtime, VolumeRuntime):
        raise ActionError(str(missing(Capability.VOLUMES, purpose)))
    return runtime


@contextlib.contextmanager
def _runtime_call(operation: str, target: str) -> Iterator[None]:
    """Let a ``RuntimeCallError`` through, and turn anything else a runtime raises (a
    bug in it) into one, so that it becomes a failed result instead of killing the
    worker. podsync's own bugs are outside these blocks and propagate."""
    try:
        yield
    except RuntimeCallError:
        raise
    except Exception as exc:
        raise RuntimeCallError(operation, target, f"{type(exc).__name__}: {exc}") from exc


@attrs.frozen
class _Early:
    """A container created ahead (``_start_creating``): its id, the conflict that showed
    its instance made already (adopted), or why its create failed."""

    cid: str = ""
    conflict: NameConflict | None = None
    error: ActionError | RuntimeCallError | None = None


class _Applier:
    """One apply: the runtime, the settings, and the event callback's lock."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        root_dir: str,
        on_event: Callable[[Event], None] | None,
        hook_timeout: float,
        clocks: Clocks,
    ) -> None:
        self.runtime = runtime
        self.clocks = clocks
        # Where a WriteVolume's files go: the host, under the root directory. Kept
        # apart from the projection so that another writer (an engine volume, through
        # the engine's archive API) can take its place.
        self.volume_writer: _VolumeWriter = write_volume
        self.root_dir = root_dir
        self.on_event = on_event
        self.hook_timeout = hook_timeout
        self.event_lock = threading.Lock()
        self.callback_error: BaseException | None = None
        # A runtime whose calls are round trips says so (``Runtime``); the others get
        # their calls one after the other, in plan order.
        self.overlapping = getattr(runtime, "overlapping_calls", False) is True
        # The worker thread's pod: its containers created ahead, by container name.
        self.pod_local = threading.local()

    def emit(
        self,
        kind: EventKind,
        action: Action,
        message: str,
        *,
        container_id: str = "",
        exception: PodsyncError | None = None,
    ) -> None:
        """Report ``kind`` about ``action``: its pod, container and reason code, and
        ``container_id`` when it is about one container (kills and removals name
        theirs; a create names the container it made); a failure's ``exception``."""
        if self.on_event is None:
            return
        now = self.clocks.now()
        event = action_event(
            kind, action, message, now, container_id=container_id, exception=exception
        )
        # One event at a time, so the callback need not be thread-safe. A callback that
        # raises is the caller's bug: remember it, keep applying (a half-applied plan is
        # worse), and re-raise it from apply.
        with self.event_lock:
            try:
                self.on_event(event)
            except Exception as exc:
                if self.callback_error is None:
                    self.callback_error = exc

    # -- one action ---------------------------------------------------------------------

    def run(
        self, action: Action, pod_plan: PodPlan | None, turn: Turn | None = None
    ) -> ActionResult:
        """Run one action (a kill of a pod-wide stop with its ``turn``); its result."""
        pod, uid = _pod_label(pod_plan), _pod_uid(pod_plan)
        start = self.clocks.elapsed()
        made: list[str] = []  # the id of the container a create made, for its events
        try:
            self._do(action, pod_plan, made, turn)
        except (ActionError, RuntimeCallError) as exc:
            failure: ActionError | RuntimeCallError = exc
        else:
            took = self.clocks.elapsed() - start
            return ActionResult(action, ActionStatus.DONE, "", took, pod, uid)
        # The engine's words may quote a Secret value the action holds (a command
        # expanded with $(PASSWORD): 'exec: "s3cret": executable file not found'): the
        # message every output shows is masked, as the plan's text masks it.
        error = Scrubber.of_value(action)(str(failure))
        self.emit(EventKind.FAILED, action, error, container_id="".join(made), exception=failure)
        took = self.clocks.elapsed() - start
        return ActionResult(action, ActionStatus.FAILED, error, took, pod, uid, exception=failure)

    def _do(
        self, action: Action, pod_plan: PodPlan | None, made: list[str], turn: Turn | None
    ) -> None:
        runtime = self.runtime
        if isinstance(action, Pull):
            with _runtime_call("pull", action.image):
                runtime.pull_image(action.image)
            self.emit(EventKind.PULLED, action, f"pulled image {action.image}")
        elif isinstance(action, Create):
            self._create(action, pod_plan, made)
        elif isinstance(action, Kill):
            self._kill(action, turn)
        elif isinstance(action, Remove):
            with _runtime_call("remove", action.id):
                runtime.remove_container(action.id)
            # Its stop record, if podsync stopped it, goes with it: in the engine (one
            # call; a missing record counts as removed), and where an earlier podsync
            # kept it.
            if action.pod_uid:
                try:
                    with _runtime_call("remove volume", action.id):
                        remove_stop_record_volume(runtime, action.id)
                    remove_stop_record(self.root_dir, action.pod_uid, action.id)
                except (*_HOST_ERRORS, ValueError, RuntimeCallError) as exc:
                    raise ActionError(
                        f"removed {action.name}, but not its stop record: {exc}"
                    ) from exc
            self.emit(EventKind.REMOVED, action, action.message)
        elif isinstance(action, Wait):
            pass  # informational: the next plan decides again
        elif isinstance(action, RemovePodDir):
            try:
                removed = remove_pod_dir(action.path, self.root_dir)
            except _HOST_ERRORS as exc:
                raise ActionError(f"tear down {action.path}: {exc}") from exc
            if removed:
                self.emit(EventKind.POD_DIR_REMOVED, action, action.message)
        elif isinstance(action, WriteVolume):
            unknown = unknown_secrets(action)
            if unknown:
                # A saved plan holds a Secret volume's files by reference only: nothing
                # is written without their values (as for a create's, see _create).
                raise ActionError(
                    f"{action.engine_volume or action.path}: the plan holds Secret values by "
                    f"reference ({', '.join(unknown)}): read them from the sources first "
                    "(podsync apply --plan does)"
                )
            if action.engine_volume:  # (a refused payload name, too, is a failed call)
                volumes = _volumes(self.runtime, f"write volume {action.engine_volume}")
                with _runtime_call("write volume", action.engine_volume):
                    what = write_content_volume(volumes, action)
                self.emit(EventKind.VOLUME_WRITTEN, action, what)
                return
            try:
                written = self.volume_writer(
                    action.path,
                    self.root_dir,
                    action.content,
                    fs_group=action.fs_group,
                    now=self.clocks.now(),
                )
            except _HOST_ERRORS as exc:
                raise ActionError(f"write {action.path}: {exc}") from exc
            if written:
                kind = action.content.kind.value
                what = f"wrote the files of volume {action.volume} ({kind})"
                self.emit(EventKind.VOLUME_WRITTEN, action, what)
        elif isinstance(action, RemoveImage):
            with _runtime_call("remove image", action.image_id):
                runtime.remove_image(action.image_id)
            self.emit(EventKind.IMAGE_REMOVED, action, action.message)
        elif isinstance(action, CreateVolume):
            self._create_volume(action)
        elif isinstance(action, RemoveVolume):
            # A missing volume counts as removed; Docker refuses one a container mounts.
            volumes = _volumes(runtime, f"remove volume {action.volume}")
            with _runtime_call("remove volume", action.volume):
                volumes.remove_volume(action.volume)
            self.emit(EventKind.VOLUME_REMOVED, action, action.message)
        else:  # pragma: no cover - _apply checked every action's type
            raise TypeError(f"expected a plan action, got {action!r}")

    def _create_volume(self, action: CreateVolume) -> None:
        """Create the volume; for an emptyDir's, move in the host directory an earlier
        podsync kept it in (``copy_from``; ``move_into_volume``) and set its root up. A
        failure skips the rest of the pod: no container of it then makes the volume
        unlabelled, or mounts it before it is set up; the next plan tries again."""
        volumes = _volumes(self.runtime, f"create volume {action.volume}")
        with _runtime_call("create volume", action.volume):
            volumes.create_volume(action.volume, action.labels)
        moved = ""
        if action.copy_from:
            try:
                moved = move_into_volume(volumes, action.volume, action.copy_from, self.root_dir)
            except _HOST_ERRORS as exc:
                raise ActionError(f"move {action.copy_from}: {exc}") from exc
        if action.mode is not None:
            gid = action.gid if action.gid is not None else 0
            root = VolumeEntry(".", EntryKind.DIRECTORY, mode=action.mode, uid=0, gid=gid)
            with _runtime_call("write volume", action.volume):
                volumes.write_volume(action.volume, [root])
        self.emit(EventKind.VOLUME_CREATED, action, f"created volume {action.volume}{moved}")

    def _create(self, action: Create, pod_plan: PodPlan | None, made: list[str]) -> None:
        """Seed runContainer: host files, create, start, then the postStart handler; a
        failed handler stops the container (seed killContainerByID) and fails the action.
        A container created ahead is not created again."""
        spec = action.spec
        ahead: dict[str, _Early] | None = getattr(self.pod_local, "ahead", None)
        early = ahead.pop(action.container, None) if ahead is not None else None
        if early is None:
            cid, conflict = self._make(action)
        elif early.error is not None:
            raise early.error
        else:
            cid, conflict = early.cid, early.conflict
        if conflict is not None:
            # Another apply of the same plan (two syncs racing) created this very
            # instance - the name, pod uid and spec hash all match - and runs it: it
            # starts the container and its postStart handler. Adopting it as done is
            # what the kubelet's idempotent sync amounts to; failing the pod would
            # report a problem where there is none.
            made.append(conflict.holder_id)
            self.emit(
                EventKind.ADOPTED,
                action,
                f"adopted {spec.name} ({conflict.holder_id}): another apply created it",
                container_id=conflict.holder_id,
            )
            return
        made.append(cid)
        self.emit(EventKind.CREATED, action, f"created {spec.name} ({cid})", container_id=cid)
        joiners = _joiners(action, pod_plan) if ahead is not None else []
        if ahead is not None and joiners:
            self._start_creating(cid, joiners, ahead)
        else:
            with _runtime_call("start", cid):
                self.runtime.start_container(cid)
        self.emit(EventKind.STARTED, action, f"started {spec.name} ({cid})", container_id=cid)
        if spec.post_start is None:
            return
        # App containers share the network container's namespace: a handler without a
        # host connects to its address (the seed used the pod IP).
        network_id = spec.join or None
        try:
            run_handler(
                spec.post_start,
                self.runtime,
                cid,
                network_id=network_id,
                timeout=self.hook_timeout,
            )
        except HandlerError as exc:
            error = f"postStart handler failed: {exc}"
            self.emit(EventKind.HOOK_FAILED, action, error, container_id=cid)
            # The stop that follows is podsync's, not the container's own end: recorded
            # as a failure, so that the restart policy does not count a process that
            # exits 0 on SIGTERM as a success. The container is stopped even when the
            # record cannot be written (its handler failed); the error says so.
            if action.pod_uid:
                try:
                    write_stop_record(self.runtime, action.pod_uid, cid, STOP_POST_START_FAILED)
                except (ValueError, RuntimeCallError) as record_exc:
                    error += f"; recording the stop failed: {record_exc}"
            self.emit(
                EventKind.STOPPING,
                action,
                f"stop {spec.name} ({cid}): postStart handler failed",
                container_id=cid,
            )
            # Stopped as any other container (the kubelet's killContainer, reason
            # FailedPostStartHook): its preStop handler runs, within the pod's grace
            # period. The seed stopped it with a fixed 10 s and no preStop.
            try:
                self._stop(action, cid, spec.stop_timeout, spec.pre_stop)
            except RuntimeCallError as stop_exc:
                error += f"; stopping the container failed too: {stop_exc}"
            raise ActionError(error) from exc

    def _make(self, action: Create, *, files: bool = True) -> tuple[str, NameConflict | None]:
        """Host files, the files of its ``file_mounts`` (unless ``files`` is false: they
        were written already), then the engine's create: the new container's id, or
        ``("", conflict)`` when the name is held by this very instance already (see
        ``_same_instance``: adopted by the caller)."""
        spec = action.spec
        missing = [p for text in spec_texts(spec) if not text.known for p in text.secrets]
        if missing:
            # A saved plan holds Secret values by reference only (podsync.model._secrets): a
            # container is never created with a placeholder, or without its value.
            refs = ", ".join(sorted({f"Secret {p.secret} key {p.key}" for p in missing}))
            raise ActionError(
                f"{spec.name}: the plan holds Secret values by reference ({refs}): read "
                "them from the sources first (podsync apply --plan does)"
            )
        try:
            make_host_paths(spec, self.root_dir)
        except _HOST_ERRORS as exc:
            raise ActionError(f"host paths of {spec.name}: {exc}") from exc
        if files:
            self._write_files([spec])
        try:
            with _runtime_call("create", spec.name):
                return self.runtime.create_container(spec), None
        except NameConflict as exc:
            if not _same_instance(exc, spec):
                raise
            return "", exc

    def _write_files(self, specs: list[CreateSpec]) -> None:
        """The files of ``specs``' ``file_mounts``, before their creates: empty and
        writable by the container's user (the kubelet's fresh 0666 termination-message
        file), since Docker makes a directory of a missing bind source. Through the
        engine, so a remote engine works: one call for the files of one volume that
        are written through the same container (the pod's network container), one call
        each through a container made for it otherwise."""
        mounted_files = [(spec, m) for spec in specs for m in spec.file_mounts]
        if not mounted_files:
            return  # (a plan for a runtime without volumes binds none)
        volumes = _volumes(self.runtime, f"write the files {mounted_files[0][0].name} binds")
        batches: dict[tuple[str, str], list[VolumeEntry]] = {}
        for _, mounted in mounted_files:
            entry = VolumeEntry(mounted.path, EntryKind.FILE, mode=mounted.mode)
            if mounted.through:
                batches.setdefault((mounted.volume, mounted.through), []).append(entry)
                continue
            with _runtime_call("write volume", mounted.volume):
                volumes.write_volume(mounted.volume, [entry])
        for (volume, through), entries in batches.items():
            with _runtime_call("write volume", volume):
                volumes.write_volume(volume, entries, through=through)

    def _start_creating(self, cid: str, joiners: list[Create], ahead: dict[str, _Early]) -> None:
        """Start the network container ``cid`` while a thread of its own creates
        ``joiners``, in order, up to the first that fails (kept in ``ahead`` for their
        actions); raise the start's failure. The start goes first: it is the longest
        call. Docker checks that ``container:<x>`` runs only at start, and resolves x at
        create once it exists (moby/moby#49374)."""
        bug: list[BaseException] = []

        def create() -> None:
            try:
                # The joiners' termination-message files at once (one upload through
                # the network container), while it starts.
                try:
                    self._write_files([joiner.spec for joiner in joiners])
                except (ActionError, RuntimeCallError) as exc:
                    ahead[joiners[0].container] = _Early(error=exc)
                    return
                for joiner in joiners:
                    try:
                        ahead[joiner.container] = _Early(*self._make(joiner, files=False))
                    except (ActionError, RuntimeCallError) as exc:
                        ahead[joiner.container] = _Early(error=exc)
                        break
            except BaseException as exc:  # podsync's bug: raised below, as without a thread
                bug.append(exc)

        creator = threading.Thread(target=create, name="podsync-apply-create")
        creator.start()
        try:
            with _runtime_call("start", cid):
                self.runtime.start_container(cid)
        finally:
            creator.join()
            if bug:
                raise bug[0]

    def undo_ahead(self, action: Action) -> str:
        """Remove the container created ahead for ``action``, which is skipped; what to
        add to its reason (nothing when none was made: an adopted one is not ours)."""
        ahead: dict[str, _Early] | None = getattr(self.pod_local, "ahead", None)
        early = ahead.pop(action.container, None) if ahead and isinstance(action, Create) else None
        if early is None or not early.cid:
            return ""
        try:
            with _runtime_call("remove", early.cid):
                self.runtime.remove_container(early.cid)
        except RuntimeCallError as exc:
            return f"; the container made ahead for it ({early.cid}) was not removed: {exc}"
        return f"; removed the container made ahead for it ({early.cid})"

    def _kill(self, action: Kill, turn: Turn | None) -> None:
        """Seed killContainer, plus the preStop handler the seed never ran, and - in a
        pod-wide stop - the wait for its ``turn``."""
        if action.record_stop:
            # Before anything else: without its record, a stopped container would later
            # be judged as a run that ended by itself (``Kill.record_stop``). When the
            # record cannot be written, nothing is stopped and the kill fails.
            try:
                write_stop_record(self.runtime, action.pod_uid, action.id, action.reason.value)
            except (ValueError, RuntimeCallError) as exc:
                raise ActionError(f"stop record of {action.name}: {exc}") from exc
        self.emit(EventKind.STOPPING, action, action.message)
        self._stop(action, action.id, action.timeout, action.pre_stop, turn)

    def _stop(
        self,
        action: Create | Kill,
        cid: str,
        grace: int,
        pre_stop: Handler | None,
        turn: Turn | None = None,
    ) -> None:
        """Stop ``cid`` within ``grace`` seconds, its preStop handler included.

        The kubelet's killContainer (pkg/kubelet/kuberuntime/kuberuntime_container.go):
        the grace period is one budget. The preStop handler runs first, only when the
        grace is positive, with the grace as its deadline; the whole seconds it took are
        taken from the grace. In a pod-wide stop the container then waits for its
        ``turn`` (waitForTurn) while grace is left, at most what is left, and the whole
        seconds it waited are taken too. The stop gets what is left, but at least
        ``_MINIMUM_GRACE_PERIOD`` (kuberuntime_manager.go) - so a handler that overran,
        or a sidecar whose turn came late, leaves the container 2 s to exit. A grace
        period shorter than that minimum is honoured as given (the kubelet would raise
        it to 2 s): ``--stop-timeout 0`` kills at once. A failed handler is reported and
        does not prevent the stop.
        """
        left = grace
        # Where its turn's wait is measured from: the pod-wide stop's start (read once
        # for all its kills), or the end of the preStop handler.
        mark = turn.began if turn is not None else 0.0
        if pre_stop is not None and grace > 0:
            started = self.clocks.elapsed()
            try:
                run_handler(pre_stop, self.runtime, cid, timeout=float(grace))
            except HandlerError as exc:
                self.emit(
                    EventKind.HOOK_FAILED,
                    action,
                    f"preStop handler failed: {exc}",
                    container_id=cid,
                )
            # Whole seconds, as the kubelet's executePreStopHook counts them.
            mark = self.clocks.elapsed()
            left -= int(mark - started)
        if turn is not None and turn.wait is not None and left > 0:
            turn.wait(mark, left)
            # Whole seconds again: "the time we've waited gets truncated downward".
            left -= int(self.clocks.elapsed() - mark)
        timeout = max(left, min(_MINIMUM_GRACE_PERIOD, grace))
        with _runtime_call("stop", cid):
            self.runtime.stop_container(cid, timeout)

    # -- one pod ------------------------------------------------------------------------

    def run_pod(self, pod_plan: PodPlan, blocked: str) -> list[ActionResult]:
        """The pod's actions in order; after a failure (or when ``blocked`` names a
        failed pull) the rest are skipped."""
        pod, uid = _pod_label(pod_plan), _pod_uid(pod_plan)
        results: list[ActionResult] = []
        reason = blocked
        self.pod_local.ahead = {} if self.overlapping else None
        actions = pod_plan.actions
        try:
            while len(results) < len(actions):
                action = actions[len(results)]
                if reason:
                    why = reason + self.undo_ahead(action)
                    results.append(ActionResult(action, ActionStatus.SKIPPED, why, 0.0, pod, uid))
                    continue
                # A pod-wide stop: its kills at once, each in its turn (_stopping).
                together = concurrent_kills(actions, len(results))
                if len(together) > 1:
                    done = run_concurrently(
                        together,
                        lambda kill, turn: self.run(kill, pod_plan, turn),
                        self.clocks.elapsed,
                    )
                else:
                    done = [self.run(action, pod_plan)]
                results.extend(done)
                failed = next((r for r in done if r.status is ActionStatus.FAILED), None)
                if failed is not None:
                    reason = f"not run: an earlier action failed ({failed.action.message})"
        finally:
            self.pod_local.ahead = None
        return results


def _joiners(action: Create, pod_plan: PodPlan | None) -> list[Create]:
    """The creates right after ``action`` in its pod that join its container's network
    (none for a container that joins another's)."""
    if pod_plan is None or action.spec.join:
        return []
    at = next(i for i, a in enumerate(pod_plan.actions) if a is action)
    joiners = []
    for following in pod_plan.actions[at + 1 :]:
        if not isinstance(following, Create) or following.spec.join != action.spec.name:
            break
        joiners.append(following)
    return joiners


def _pod_label(pod_plan: PodPlan | None) -> str:
    if pod_plan is None:
        return ""
    return pod_plan.pod or pod_plan.uid


def _same_instance(conflict: NameConflict, spec: CreateSpec) -> bool:
    """Whether the container holding ``spec``'s name is the instance ``spec`` describes:
    it records the same pod uid and spec hash (the name already matches)."""
    theirs, ours = conflict.holder_labels, spec.labels
    return bool(
        conflict.holder_id
        and ours.get(LABEL_POD_UID)
        and ours.get(LABEL_SPEC_HASH)
        and theirs.get(LABEL_POD_UID) == ours[LABEL_POD_UID]
        and theirs.get(LABEL_SPEC_HASH) == ours[LABEL_SPEC_HASH]
    )


def _pod_uid(pod_plan: PodPlan | None) -> str:
    return "" if pod_plan is None else pod_plan.uid


def _check_settings(workers: int, hook_timeout: float) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer of at least 1, got {workers!r}")
    if not hook_timeout > 0:
        raise ValueError(f"hook_timeout must be positive, got {hook_timeout!r}")


def apply(
    plan: Plan,
    runtime: Runtime,
    *,
    workers: int = DEFAULT_WORKERS,
    on_event: Callable[[Event], None] | None = None,
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
    clock: Clock | None = None,
) -> ApplyResult:
    """Execute ``plan`` through ``runtime``: pulls, then the pods in parallel, then the
    cleanup (see the module docstring for the order and how failures propagate).

    Args:
        plan: what to do (``podsync.plan``). Host paths are created and pod
            directories torn down only strictly inside the root directory it was made
            with (``plan.options.root_dir``).
        runtime: the engine (``podsync.docker.DockerRuntime``,
            ``podsync.testing.FakeRuntime``, or any ``Runtime``).
        workers: the size of the one thread pool used for everything.
        on_event: called with each ``Event`` as it happens, from the worker threads,
            one call at a time (calls are serialized, so the callback need not be
            thread-safe, but it should be quick: the workers wait for it).
        hook_timeout: seconds a postStart handler may take. A preStop handler may
            take the container's grace period (``Kill.timeout``), which it shares with
            the stop that follows.
        clock: where apply reads the time - the events' times, and the durations of
            the actions, of the apply and of a preStop handler (its share of the grace
            period) as differences of two readings - in seconds since the epoch. The
            system clock when ``None`` (its monotonic clock for the durations). A test
            passes a fixed clock, or one that moves only as it wants
            (``podsync.testing.FakeClock``); a clock that moves on every reading makes
            durations count readings, those of other workers included.

    Returns:
        One result per action, in plan order; ``result.ok`` is True when everything
        was done.

    Raises:
        ValueError: ``workers`` is below 1 or ``hook_timeout`` is not positive.
        TypeError: ``clock`` is not callable.
        TypeError: the plan holds something that is not an action.
        Exception: whatever ``on_event`` raised (the first such exception), re-raised
            after the whole plan has been applied.
    """
    _check_settings(workers, hook_timeout)
    the_clocks = clocks(clock)

    # A plan holding something else is a programming error: refuse it before any call.
    for action in plan.actions:
        if not isinstance(action, _ACTION_TYPES):
            raise TypeError(f"expected a plan action, got {action!r}")
    started = the_clocks.elapsed()
    applier = _Applier(
        runtime,
        root_dir=plan.options.root_dir,
        on_event=on_event,
        hook_timeout=hook_timeout,
        clocks=the_clocks,
    )
    pull_results: list[ActionResult] = []
    pod_results: list[list[ActionResult]] = []
    cleanup_results: list[ActionResult] = []
    if plan.pulls or plan.pods or plan.cleanup:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="podsync-apply")
        try:
            # 1. Pulls. Each image is pulled once, whatever the number of pods needing it.
            pull_futures = [pool.submit(applier.run, pull, None) for pull in plan.pulls]
            pull_results = [f.result() for f in pull_futures]
            # Keyed by pod uid, never by namespace/name: two sources can hold pods of
            # one name, and a failed pull for one must not skip the other.
            blocked: dict[str, str] = {}
            for result in pull_results:
                if result.status is ActionStatus.FAILED:
                    assert isinstance(result.action, Pull)
                    for uid in result.action.pods:
                        blocked.setdefault(uid, f"pull of {result.action.image} failed")
            # 2. Pods, in parallel; each pod's actions in order.
            pod_futures: list[Future[list[ActionResult]]] = [
                pool.submit(applier.run_pod, pod_plan, blocked.get(pod_plan.uid, ""))
                for pod_plan in plan.pods
            ]
            pod_results = [f.result() for f in pod_futures]
            # 3. Engine-wide cleanup, after every pod is done with its images.
            cleanup_futures = [pool.submit(applier.run, a, None) for a in plan.cleanup]
            cleanup_results = [f.result() for f in cleanup_futures]
        except BaseException:
            # Interrupted (Ctrl-C): pods not started yet are not started at all; the
            # calls already running finish, as an engine call cannot be taken back.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    results: list[ActionResult] = list(pull_results)
    for pod_result in pod_results:
        results.extend(pod_result)
    results.extend(cleanup_results)
    if applier.callback_error is not None:
        raise applier.callback_error
    return ApplyResult(tuple(results), the_clocks.elapsed() - started)
