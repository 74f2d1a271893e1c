"""The kinds of Kubernetes objects people keep next to their pods, and what podsync
says about each one it does not read.

podsync reads ``Pod``, ``List`` / ``PodList`` (of pods), and the ``ConfigMap``,
``Secret`` and ``PersistentVolumeClaim`` objects pods refer to. Any other kind is
refused - the whole load fails, so a file that mixes pods with such objects changes
nothing - with a message that says why and what to do instead:

* the workload controllers (``_WORKLOADS``): podsync runs pods, and a controller's
  replicas, rollouts, retries and schedules are a cluster's work. The message names the
  controller's Pod template (``spec.template``; ``spec.jobTemplate.spec.template`` for a
  CronJob) and how to make a pod of it;
* the cluster objects kept beside pods (``_CLUSTER_OBJECTS``: Service, Ingress, RBAC,
  Namespace, autoscalers, network policies ...): what podsync does instead, if
  anything (``hostPort`` publishes a port), and to remove them from the files it reads;
* any other kind: the kinds podsync reads, with a did-you-mean for a kind written in
  the wrong case (``pod``).

Why refuse rather than ignore: the kubelet's static pod source, the reference for pod
files on one host, reads pods only and fails a file it cannot decode as one; and a
Service or NetworkPolicy ignored without a word would leave the user believing a port
is reachable, or traffic restricted, when it is not. An object that means nothing on
one host (a ServiceAccount, a Role) could be ignored with a warning instead; podsync
has no warning channel for a document that is not a pod, so it is refused with how to
go on ("remove it").

Layering: no imports from podsync; pure data and one function. Its names keep their
leading underscore: they are shared among the loader's modules only.
"""

from __future__ import annotations

import attrs

# Nothing here is public API.
__all__: list[str] = []

#: The kinds podsync reads, as the messages list them.
_READ = "Pod, List, PodList, ConfigMap, Secret and PersistentVolumeClaim"

#: What every cluster-object message ends with.
_REMOVE = "remove it from the files podsync reads"


@attrs.frozen
class _Workload:
    """A controller of pods: what of it is a cluster's work, what podsync does instead,
    and where its Pod template is."""

    what: str
    instead: str
    template: str = "spec.template"

    def message(self, kind: str) -> str:
        return (
            f"{kind} is not supported by podsync: podsync runs pods, and {self.what} the "
            f"work of a cluster's controllers ({self.instead}); to run its pod here, make "
            f"its Pod template ({self.template}) a document of its own: apiVersion: v1, "
            "kind: Pod, a metadata.name, and the template's labels and spec"
        )


_REPLICAS = "podsync runs each pod once and restarts its containers"

_WORKLOADS: dict[str, _Workload] = {
    "Deployment": _Workload(
        "a Deployment's replicas and rolling updates are",
        "podsync runs each pod once, restarts its containers and replaces them when the "
        "pod's spec changes",
    ),
    "ReplicaSet": _Workload("a ReplicaSet's replicas are", _REPLICAS),
    "ReplicationController": _Workload("a ReplicationController's replicas are", _REPLICAS),
    "StatefulSet": _Workload(
        "a StatefulSet's replicas, their stable names and their claims are",
        "give the pod a persistentVolumeClaim volume for each volumeClaimTemplates entry: "
        "podsync makes a Docker volume per claim",
    ),
    "DaemonSet": _Workload("a DaemonSet's pod on every node is", "on this host that is one pod"),
    "Job": _Workload(
        "a Job's completions and retries (backoffLimit) are",
        "a pod with restartPolicy OnFailure or Never runs to completion, and podsync "
        "apply --wait waits for it",
    ),
    # A completed pod is not started again by the next apply (the kubelet's rule for
    # OnFailure / Never): a schedule has to remove it first.
    "CronJob": _Workload(
        "a CronJob's schedule is",
        "a completed pod is not run again: from cron or a systemd timer, run podsync down "
        "and then podsync apply --wait on the pod's file",
        template="spec.jobTemplate.spec.template",
    ),
}

_SERVICE = (
    "podsync makes no Service (no cluster IP, load balancing or DNS name: they are "
    "kube-proxy's and the cluster DNS's); publish a port on the host with the "
    "container's ports[].hostPort (the containers of one pod reach each other on "
    f"localhost), and {_REMOVE}"
)
_RBAC = f"RBAC grants access to an API server, and podsync has none; {_REMOVE}"

#: Why each object podsync does not read is refused, and what to do instead.
_CLUSTER_OBJECTS: dict[str, str] = {
    "Service": _SERVICE,
    "Endpoints": _SERVICE,
    "EndpointSlice": _SERVICE,
    "Ingress": (
        "podsync runs no ingress controller; publish the pod's port on the host with the "
        "container's ports[].hostPort (behind a reverse proxy of your own for host names "
        f"and TLS), and {_REMOVE}"
    ),
    "ServiceAccount": (
        "there is no API server to issue its tokens (a pod's serviceAccountName is "
        f"ignored, with a warning); {_REMOVE}"
    ),
    "Role": _RBAC,
    "RoleBinding": _RBAC,
    "ClusterRole": _RBAC,
    "ClusterRoleBinding": _RBAC,
    "Namespace": (
        "podsync creates nothing for a namespace (a pod's metadata.namespace is part of "
        f"its name, and that is all podsync needs); {_REMOVE}"
    ),
    "HorizontalPodAutoscaler": (
        f"podsync scales nothing (it runs each pod once, as written); {_REMOVE}"
    ),
    "VerticalPodAutoscaler": (
        f"podsync resizes nothing (a container's resources are what the pod says); {_REMOVE}"
    ),
    "NetworkPolicy": (
        "podsync enforces no network policy (a pod's traffic is the engine network's, "
        f"--network-mode); restrict it with the host's firewall, and {_REMOVE}"
    ),
    "PodDisruptionBudget": (
        f"podsync evicts no pod, so there is no disruption to budget; {_REMOVE}"
    ),
    "PriorityClass": (
        "podsync schedules nothing (a pod's priorityClassName is ignored, with a "
        f"warning); {_REMOVE}"
    ),
    "LimitRange": (
        "podsync applies no namespace defaults (the API server's admission does); write "
        f"each container's resources, and {_REMOVE}"
    ),
    "ResourceQuota": (
        "podsync enforces no quota (the API server's admission does); write each "
        f"container's resources, and {_REMOVE}"
    ),
    "PersistentVolume": (
        "podsync binds no PersistentVolume: a pod's persistentVolumeClaim volume is a "
        "Docker volume podsync makes for the claim (or one you made: docker volume "
        f"create podsync_<namespace>_<claim>); {_REMOVE}"
    ),
    "StorageClass": (
        f"podsync provisions no storage: a claim is a Docker volume on this host; {_REMOVE}"
    ),
}

_KNOWN = ("Pod", "List", "PodList", "ConfigMap", "Secret", "PersistentVolumeClaim")


def _kind_message(kind: str) -> str:
    """The message for a document of ``kind``, a kind podsync does not read (said at
    the document's ``kind``)."""
    workload = _WORKLOADS.get(kind)
    if workload is not None:
        return workload.message(kind)
    why = _CLUSTER_OBJECTS.get(kind)
    if why is not None:
        return f"{kind} is not supported by podsync: {why}"
    # Kubernetes' kinds are case-sensitive: "pod" is no Pod to the API server either.
    meant = [k for k in (*_KNOWN, *_WORKLOADS, *_CLUSTER_OBJECTS) if k.lower() == kind.lower()]
    hint = f" (did you mean {meant[0]!r}?)" if meant else ""
    return f"unsupported kind {kind!r}{hint}: podsync reads {_READ} documents"
