"""Admission against what the runtime can do: a pod that needs an optional capability
the runtime lacks (``PlanOptions.capabilities``; ``podsync.runtime``) is rejected,
naming the capability and what needs it.

The kubelet refuses at admission a pod that asks for what its node cannot enforce,
with a reason and a message, rather than run it without (``appArmorAdmitHandler.Admit``,
``pkg/kubelet/lifecycle/handlers.go``: "Cannot enforce AppArmor: ..."). podsync does
the same for its runtime's optional capabilities ("a setting podsync cannot honour is
refused, never dropped"):

========================================  ============================================
what the pod has                          what it needs
========================================  ============================================
a ``persistentVolumeClaim`` volume        ``volumes`` (the claim's named volume)
an ``emptyDir`` volume on disk            ``volumes`` (an engine volume per pod)
a ``configMap``, ``secret``,              ``volumes`` (its files are written into an
``downwardAPI`` or ``projected`` volume   engine volume) and ``files`` (their record is
                                          read back through a container)
an ``exec`` probe or lifecycle handler    ``exec``
an ``httpGet`` or ``tcpSocket`` probe or  ``node`` (the container's address: where a
handler that names no ``host``            handler that names none connects)
========================================  ============================================

What podsync adds by itself is not a reason to reject: without ``volumes`` the
containers get no termination-message file (``podsync.planner._create_specs``), stops
and probe outcomes are not recorded; without ``node`` no pod is checked against the
host's capacity. A ``hostPath`` and a ``medium: Memory`` emptyDir are mounts of the
create itself: every runtime has them.

Contract: pure; reads the pod and the capabilities alone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from podsync.actions._actions import Reason, Rejection
from podsync.actions._options import ALL_CAPABILITIES, Capability
from podsync.model._pod import Container, Handler, Pod

__all__ = ["runtime_capability_problem"]


def runtime_capability_problem(pod: Pod, capabilities: Collection[Capability]) -> Rejection | None:
    """The rejection of ``pod`` when it needs a capability not in ``capabilities``: reason
    ``missing-capability``, a message naming each missing capability and, for each,
    what of the pod needs it (in spec order); ``None`` when it needs none of them."""
    lacking = ALL_CAPABILITIES.difference(capabilities)
    if not lacking:
        return None
    needs: dict[Capability, list[str]] = {}
    for capability, what in _needs(pod):  # (each pair once: names are unique in a pod)
        if capability in lacking:
            needs.setdefault(capability, []).append(what)
    if not needs:
        return None
    said = "; ".join(f"{c.value} ({', '.join(needs[c])})" for c in sorted(needs))
    return Rejection(
        pod.key,
        pod.uid,
        Reason.MISSING_CAPABILITY,
        f"the runtime cannot run this pod: it has no {said}",
    )


def _needs(pod: Pod) -> Iterator[tuple[Capability, str]]:
    """Every (capability, what needs it) of ``pod``: its volumes, then its containers'
    probes and handlers."""
    for volume in pod.volumes:
        if volume.claim is not None:
            yield Capability.VOLUMES, f'volume "{volume.name}": persistentVolumeClaim'
        elif volume.on_disk:
            yield Capability.VOLUMES, f'volume "{volume.name}": emptyDir'
        elif volume.content is not None:
            what = f'volume "{volume.name}": {volume.content.kind.value}'
            yield Capability.VOLUMES, what
            yield Capability.FILES, what
    for container in (*pod.init_containers, *pod.containers):
        for where, handler in _handlers(container):
            what = f'container "{container.name}": {where}'
            if handler.exec_command is not None:
                yield Capability.EXEC, f"{what} exec"
                continue
            action = handler.http_get or handler.tcp_socket
            if action is not None and not action.host:
                kind = "httpGet" if handler.http_get is not None else "tcpSocket"
                yield Capability.NODE, f"{what} {kind} without host"


def _handlers(container: Container) -> Iterator[tuple[str, Handler]]:
    """The container's probes' and lifecycle hooks' handlers, each with its name."""
    for where, probe in (
        ("startupProbe", container.startup_probe),
        ("livenessProbe", container.liveness_probe),
        ("readinessProbe", container.readiness_probe),
    ):
        if probe is not None:
            yield where, probe.handler
    if container.lifecycle is not None:
        if container.lifecycle.post_start is not None:
            yield "postStart", container.lifecycle.post_start
        if container.lifecycle.pre_stop is not None:
            yield "preStop", container.lifecycle.pre_stop
