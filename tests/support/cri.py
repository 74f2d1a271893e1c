"""Containers as a Kubernetes node's runtime names and labels them.

Docker Desktop's Kubernetes, cri-dockerd and the kubelet's old dockershim run pods on
Docker as ``k8s_<container>_<pod>_<namespace>_<uid>_<attempt>`` containers labelled
``io.kubernetes.*``: a sandbox (``POD``, the pause container) and the app containers
that join it. The seed's name parser reads such a name as a container of pod
``<pod>``; podsync must never treat one as its own.
"""

from __future__ import annotations

__all__ = ["cri_labels", "cri_name"]


def cri_name(container: str, pod: str, namespace: str, uid: str, attempt: int) -> str:
    """cri-dockerd's container name (``POD`` for the sandbox)."""
    return f"k8s_{container}_{pod}_{namespace}_{uid}_{attempt}"


def cri_labels(
    container: str, pod: str, namespace: str, uid: str, *, sandbox_id: str = ""
) -> dict[str, str]:
    """The labels cri-dockerd puts on a sandbox (``container == "POD"``) or an app
    container, with the pod's own labels of a static control-plane pod."""
    labels = {
        "io.kubernetes.pod.name": pod,
        "io.kubernetes.pod.namespace": namespace,
        "io.kubernetes.pod.uid": uid,
        "component": pod.split("-")[0],
        "tier": "control-plane",
    }
    if container == "POD":
        labels["io.kubernetes.container.name"] = "POD"
        labels["io.kubernetes.docker.type"] = "podsandbox"
    else:
        labels["io.kubernetes.container.name"] = container
        labels["io.kubernetes.docker.type"] = "container"
        labels["io.kubernetes.sandbox.id"] = sandbox_id
        labels["annotation.io.kubernetes.container.restartCount"] = "0"
    return labels
