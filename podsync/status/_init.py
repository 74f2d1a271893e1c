"""The init containers' statuses of one pod (``initContainerStatuses``), as the
kubelet's status shows them (``convertToAPIContainerStatuses``; ``getPhase``'s init
rules, kubelet-modern.md §5), and what they say of the pod: whether initialisation is
done, what holds it, whether an init container failed, and kubectl's words for it
(``Init:1/2``, ``Init:CrashLoopBackOff``, ``Init:ImagePullBackOff``).

Pure (no I/O, no clock). ``podsync.status._pod`` (``pod_status``) uses it for a pod with
init containers; one container's state and last run are ``podsync.status._container``'s,
shared with the app containers.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import attrs

from podsync.actions._actions import FAILED_STOPS, Reason, Wait
from podsync.model._pod import ObservedContainer, Pod, RestartPolicy
from podsync.status._container import (
    ContainerState,
    ContainerStatus,
    _Inputs,
    _last_run,
    _ran,
    _running,
    _with_run,
    image_waiting,
)

__all__: list[str] = []  # podsync's own


class _Init:
    """The init containers of one pod, as the kubelet's status shows them
    (``convertToAPIContainerStatuses``; ``getPhase``'s init rules, kubelet-modern.md §5):
    each one's status, whether initialisation is done, what holds it, whether an init
    container failed, and kubectl's words for it (``Init:1/2``)."""

    def __init__(
        self,
        pod: Pod,
        instances: dict[str, list[ObservedContainer]],
        waits: Mapping[str, Wait],
        inputs: _Inputs,
    ) -> None:
        self.statuses: tuple[ContainerStatus, ...] = ()
        self.done = True
        self.blocking = ""
        self.failed = ""
        self.kubectl = ""
        statuses: list[ContainerStatus] = []
        finished = 0
        incomplete: list[str] = []
        for c in pod.init_containers:
            sidecar = c.restart_policy is not None
            mine = instances.get(c.name, [])
            restarts = max(sum(_ran(oc) for oc in mine) - 1, 0)
            last_run = _last_run(mine)
            live = [oc for oc in mine if oc.running]
            wait = waits.get(c.name)
            said = functools.partial(inputs.message, c.termination_message_policy)
            if live:
                newest = max(live, key=lambda oc: (oc.created, oc.id))
                started = inputs.started(c, newest.id)
                statuses.append(
                    _with_run(
                        _running(
                            c.name,
                            newest,
                            restarts,
                            started=started,
                            # isInitContainerInitialized: a sidecar once started; a
                            # plain init container only when it exited 0.
                            ready=sidecar and inputs.ready(c, newest.id),
                        ),
                        last_run,
                        said,
                    )
                )
                if sidecar and started:
                    finished += 1
                else:
                    incomplete.append(c.name)
                    self.blocking = self.blocking or f"init container {c.name} running"
                continue
            # An init container's image holds it as an app container's does: the kubelet
            # builds both statuses in convertToAPIContainerStatuses, from the image
            # manager's errors (ErrImagePull, ImagePullBackOff, ErrImageNeverPull).
            held = image_waiting(c.name, c.image, wait, inputs.pull_errors.get(c.name))
            if last_run is None:
                reason, text = held or ("PodInitializing", f"{c.name} not started yet")
                statuses.append(
                    ContainerStatus(
                        c.name, ContainerState.WAITING, reason, text, restart_count=restarts
                    )
                )
                incomplete.append(c.name)
                if held is not None:
                    # kubectl shows a waiting init container's reason: Init:<reason>.
                    self.kubectl = self.kubectl or f"Init:{reason}"
                    text = f"init container {c.name}: {text}"
                else:
                    text = f"init container {text}"
                self.blocking = self.blocking or text
                continue
            code = last_run.exit_code
            # An OOM kill fails an init container whatever its code (the kubelet's
            # isInitContainerFailed, as the planner judges it).
            oom = last_run.oom_killed and not last_run.stopped_by_podsync
            failed = code != 0 or oom or last_run.stopped_by_podsync in FAILED_STOPS
            if not failed and not sidecar:
                finished += 1
                statuses.append(
                    _with_run(
                        ContainerStatus(
                            c.name,
                            ContainerState.TERMINATED,
                            message=f"{c.name} exited with code 0",
                            restart_count=restarts,
                            ready=True,
                        ),
                        last_run,
                        said,
                        reason=True,
                    )
                )
                continue
            incomplete.append(c.name)
            text = f"init container {c.name} exited with code {code}{', OOM-killed' * oom}"
            if wait is not None and wait.reason is Reason.BACK_OFF:
                self.kubectl = self.kubectl or "Init:CrashLoopBackOff"
                statuses.append(
                    _with_run(
                        ContainerStatus(
                            c.name,
                            ContainerState.WAITING,
                            "CrashLoopBackOff",
                            f"{text}, back-off: restart in {wait.seconds:.0f}s",
                            restart_count=restarts,
                        ),
                        last_run,
                        said,
                    )
                )
            elif held is not None:
                # Its restart waits for its image: waiting with the image's reason, the
                # failed run as its last state (as CrashLoopBackOff above).
                self.kubectl = self.kubectl or f"Init:{held[0]}"
                text = f"{text}: {held[1]}"
                statuses.append(
                    _with_run(
                        ContainerStatus(
                            c.name, ContainerState.WAITING, held[0], text, restart_count=restarts
                        ),
                        last_run,
                        said,
                    )
                )
            else:
                self.kubectl = self.kubectl or "Init:Error"
                statuses.append(
                    _with_run(
                        ContainerStatus(
                            c.name,
                            ContainerState.TERMINATED,
                            message=text,
                            restart_count=restarts,
                        ),
                        last_run,
                        said,
                        reason=True,
                    )
                )
            if failed and not sidecar and pod.restart_policy is RestartPolicy.NEVER:
                self.failed = self.failed or f"{text} (restart policy Never)"
            self.blocking = self.blocking or text
        self.statuses = tuple(
            attrs.evolve(s, image=c.image, sidecar=c.restart_policy is not None)
            for s, c in zip(statuses, pod.init_containers, strict=True)
        )
        self.done = not incomplete
        self.incomplete = incomplete
        total = len(pod.init_containers)
        self.kubectl = self.kubectl or f"Init:{finished}/{total}"
