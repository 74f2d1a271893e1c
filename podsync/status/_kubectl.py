"""kubectl's STATUS column for a pod: ``PodStatus.display_status``.

A port of ``printPod`` (kubectl's table printer, ``pkg/printers/internalversion/
printers.go``), which derives one word from a pod's status: it is not a field of the
Kubernetes API (``v1.PodStatus`` has ``phase``, ``reason`` and ``message``), and
kubectl computes it on every ``get pods``. podsync computes it the same way from
``PodStatus``, so that a pod reads here as ``kubectl get pods`` would show it.

The rule, in printPod's order:

1. the pod's phase, or its ``reason`` when it has one (``OutOfcpu``, ``NodePorts``: a
   rejection); ``SchedulingGated`` for a pod held by scheduling gates;
2. the init containers, in order, until the first that is not done: one that exited 0
   is done, and so is a sidecar (restartPolicy Always) that started; a terminated one
   gives ``Init:<reason>`` (``Init:Error``, ``Init:OOMKilled``; ``Init:ExitCode:<n>``
   without a reason), a waiting one with a reason other than ``PodInitializing``
   ``Init:<reason>`` (``Init:CrashLoopBackOff``, ``Init:ImagePullBackOff``), any other
   ``Init:<done>/<all>`` - and the pod is initialising;
3. unless it is initialising (or its ``Initialized`` condition holds), the app
   containers, last to first, so that the first in the pod's order wins: a waiting
   container's reason (``CrashLoopBackOff``, ``ImagePullBackOff``,
   ``ContainerCreating``), else a terminated one's (``Completed``, ``Error``,
   ``OOMKilled``; ``ExitCode:<n>`` without a reason); ``Completed`` while another
   container still runs and is ready reads ``Running`` when the pod is Ready, else
   ``NotReady``;
4. a pod being deleted that has not reached a terminal phase: ``Terminating``.

podsync's words for what kubectl's inputs do not have:

* podsync deletes no pod object, so nothing is ``Terminating``. A pod that is not
  desired any more (``PodStatus.orphaned``) is in step 4's place: ``Orphaned`` until it
  has Succeeded or Failed - not ``Terminating``, since a status cannot tell whether a
  sync that may delete (deletions allowed) will run: ``podsync status pods/`` shows the
  pods a removed file left running, which nothing stops before the next ``apply``;
* a rejected pod (``PodState.REJECTED``) has no container statuses at the kubelet (its
  ``rejectPod`` sets the phase, reason and message only), nor has a pod held by
  scheduling gates (never scheduled): steps 2 and 3 read none of the waiting statuses
  podsync lists for their containers, so they show their reason (``SchedulingGated``);
* Docker reports no signal of a run's end, so ``Signal:<n>`` (printPod's alternative to
  ``ExitCode:<n>``) never appears; and every run podsync observes has a reason, so
  ``ExitCode:<n>`` appears only for a status built without one.

Pure (no I/O, no clock).
"""

from __future__ import annotations

from collections.abc import Sequence

from podsync.status._container import ContainerState, ContainerStatus

__all__: list[str] = []  # PodStatus.display_status is the public face

#: The waiting reason that does not stop printPod's init-container walk at its reason
#: (the kubelet's default for an init container that has not run).
_POD_INITIALIZING = "PodInitializing"


def kubectl_status(
    phase: str,
    reason: str,
    init_containers: Sequence[ContainerStatus],
    containers: Sequence[ContainerStatus],
    *,
    initialized: bool,
    ready: bool,
    orphaned: bool,
    rejected: bool = False,
) -> str:
    """kubectl's STATUS column (``printPod``) for a pod with these statuses.

    Args:
        phase: the pod's phase (``Pending``, ``Running``, ``Succeeded``, ``Failed``).
        reason: the pod's reason (a rejection's), else empty.
        init_containers: the init containers' statuses, in the pod's order.
        containers: the app containers' statuses, in the pod's order.
        initialized: the pod's ``Initialized`` condition holds.
        ready: the pod's ``Ready`` condition holds.
        orphaned: the pod is not desired any more (in place of printPod's deletion).
        rejected: the pod was rejected: its container statuses are podsync's, not the
            kubelet's, and are not read.
    """
    shown = reason or phase
    # The kubelet reports no container statuses for a pod it rejected (rejectPod sets
    # the phase, reason and message) or never ran (a gated pod is not scheduled): the
    # waiting statuses podsync lists for their containers are its own, and not read.
    if any(c.state is ContainerState.WAITING and c.reason == "SchedulingGated" for c in containers):
        shown = "SchedulingGated"
        init_containers = containers = ()
    if rejected:
        init_containers = containers = ()
    initializing = False
    for index, c in enumerate(init_containers):
        if c.state is ContainerState.TERMINATED and c.exit_code == 0:
            continue
        if c.sidecar and c.started:
            continue
        initializing = True
        if c.state is ContainerState.TERMINATED:
            shown = "Init:" + (c.reason or f"ExitCode:{c.exit_code}")
        elif c.state is ContainerState.WAITING and c.reason not in ("", _POD_INITIALIZING):
            shown = "Init:" + c.reason
        else:
            shown = f"Init:{index}/{len(init_containers)}"
        break
    if not initializing or initialized:
        running = False
        for c in reversed(containers):
            if c.state is ContainerState.WAITING and c.reason:
                shown = c.reason
            elif c.state is ContainerState.TERMINATED:
                shown = c.reason or f"ExitCode:{c.exit_code}"
            elif c.state is ContainerState.RUNNING and c.ready:
                running = True
        if shown == "Completed" and running:
            shown = "Running" if ready else "NotReady"
    if orphaned and phase not in ("Succeeded", "Failed"):
        shown = "Orphaned"
    return shown
