"""The Kubernetes fields podsync knows but does not honour: refused with a reason, or
ignored with a warning; and the words "unknown key" may use.

A key of a real Kubernetes object that podsync cannot honour is never an "unknown key"
(whose did-you-mean would point at a field with another meaning): it is refused with
its reason (``_NOT_SUPPORTED``: ``<key> is not supported by podsync: <why>``), or - when
it means nothing on one host - accepted, ignored and listed in the pod's one warning
(``_IGNORED``). These tables are the whole list, keyed by the Kubernetes object (as the
API reference names it: ``PodSpec``, ``Container``, ``Volume`` ...); the schema classes
of ``_pod`` hold only what podsync honours, and say which object each one reads.

For an unknown key, ``_suggestion`` proposes only a near-misspelling, and nothing for a
key that is a field of some other Kubernetes object (``_KUBERNETES_FIELDS``);
``_RENAMED`` names the fields that replaced the spellings from before v1beta1.

Layering: above ``_yaml`` (for ``_describe``), below ``_pod``; no I/O. Its names keep
their leading underscore: they are shared among the loader's modules only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from podsync.load.schema._yaml import _describe

# Nothing here is public API.
__all__: list[str] = []


def _is_unset(value: object) -> bool:
    """Null, ``[]`` or ``{}``: Go reads these as "not given", so they ask for nothing."""
    return value is None or value == [] or value == {}


def _is_null(value: object) -> bool:
    return value is None


@attrs.frozen
class _Refusal:
    """Why a Kubernetes field is refused, and which of its values are still accepted.

    ``accepts`` says which values ask for nothing podsync lacks (by default the unset
    ones); ``only`` names them in the message when that is more than "unset". A
    ``planned`` field is one a later podsync will honour ("not supported ... yet").
    ``unless`` names a key of the same mapping whose presence makes the field moot
    (Kubernetes ignores ``generateName`` when ``name`` is given).
    """

    why: str
    accepts: Callable[[object], bool] = _is_unset
    only: str = ""
    planned: bool = False
    unless: str = ""

    def message(self, key: str, value: object) -> str:
        yet = " yet" if self.planned else ""
        if self.only:
            return (
                f"{key}: {_flow(value)} is not supported by podsync{yet}: {self.why} "
                f"(only {self.only} is)"
            )
        return f"{key} is not supported by podsync{yet}: {self.why}"


def _flow(value: object) -> str:
    """A value as YAML flow style shows it: ``{name: windows}``, ``false``, ``'Memory'``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow_plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow_plain(v) for v in value) + "]"
    return _describe(value)


def _flow_plain(value: object) -> str:
    return value if isinstance(value, str) and value.isidentifier() else _flow(value)


def _planned(why: str, **kw: Any) -> _Refusal:
    return _Refusal(why, planned=True, **kw)


def _equals(*allowed: object) -> Callable[[object], bool]:
    """Null, or one of ``allowed`` with its type (``1`` is not ``true`` here)."""
    return lambda value: (
        value is None or any(type(value) is type(a) and value == a for a in allowed)
    )


_SOURCE_ONLY = _is_null  # a volume source asks for a volume even when written {}


_EMPTY_VOLUMES = (
    "podsync creates empty volumes: a claim is not filled from a snapshot or another claim"
)


def _cluster_volume(kind: str) -> _Refusal:
    return _Refusal(f"{kind} volumes are mounted by a cluster's volume plugin", _SOURCE_ONLY)


_NOT_SUPPORTED: Mapping[str, Mapping[str, _Refusal]] = {
    "PodSpec": {
        "ephemeralContainers": _Refusal(
            "ephemeral containers are added to running pods through the API server (kubectl debug)"
        ),
        "resourceClaims": _Refusal(
            "dynamic resource allocation needs a cluster's resource drivers"
        ),
        "runtimeClassName": _Refusal(
            "containers run with the engine's default runtime", _equals("")
        ),
        "overhead": _Refusal(
            "pod overhead comes with a RuntimeClass, which podsync does not support"
        ),
        "hostUsers": _Refusal(
            "user namespaces are not implemented", _equals(True), "true, the default,"
        ),
        "os": _Refusal(
            "podsync runs Linux containers only", _equals({"name": "linux"}), "{name: linux}"
        ),
        "activeDeadlineSeconds": _Refusal("podsync puts no deadline on a pod's run"),
        "setHostnameAsFQDN": _Refusal(
            "the host name is never the pod's FQDN", _equals(False), "false, the default,"
        ),
        "hostnameOverride": _Refusal("podsync does not override a pod's host name", _equals("")),
    },
    # A claim's document (issue 14): podsync makes every claim a Docker local volume,
    # so what binds a claim to a cluster's volumes or provisioner is refused.
    "PersistentVolumeClaimSpec": {
        "storageClassName": _Refusal(
            # The document is optional: the hint says how to keep the pod file as it is.
            "every claim is a Docker local volume; a storage class needs a cluster's provisioner"
            " (the PersistentVolumeClaim document is optional: leave it out of the sources)",
            _equals(""),
            "''",
        ),
        "selector": _Refusal(
            "a selector binds a claim to a cluster's PersistentVolumes; podsync makes a Docker "
            "volume for it"
        ),
        "volumeName": _Refusal(
            "it binds a claim to a cluster's PersistentVolume; podsync uses the Docker volume "
            "podsync_<namespace>_<claim>, made by podsync or by hand",
            _equals(""),
            "''",
        ),
        "dataSource": _Refusal(_EMPTY_VOLUMES),
        "dataSourceRef": _Refusal(_EMPTY_VOLUMES),
        "volumeAttributesClassName": _Refusal(
            "volume attributes classes need a cluster's CSI driver", _equals(""), "''"
        ),
    },
    "VolumeResourceRequirements": {
        "limits": _Refusal("Docker's local volumes have no size limit"),
    },
    "PodDNSConfig": {
        "nameservers": _Refusal(
            "podsync sets no per-pod name servers (see --cluster-dns and --resolv-conf)"
        ),
        "searches": _Refusal("podsync sets no per-pod search domains (see --cluster-domain)"),
    },
    "ObjectMeta": {
        "generateName": _Refusal(
            "a generated name needs the API server; give metadata.name", unless="name"
        ),
    },
    "Container": {
        "resizePolicy": _Refusal(
            "podsync resizes no container in place; changed resources replace it"
        ),
        "volumeDevices": _Refusal(
            "raw block devices come from PersistentVolumeClaims, which need a cluster"
        ),
        # restartPolicy (Always on an init container: a sidecar) is honoured; convert._document
        # refuses it on an app container, as Kubernetes' validation does.
        "restartPolicyRules": _planned("restart rules per exit code are not implemented"),
    },
    "VolumeMount": {
        "subPath": _planned("volumes are mounted whole", accepts=_equals("")),
        "subPathExpr": _planned("volumes are mounted whole", accepts=_equals("")),
        "mountPropagation": _Refusal(
            "volumes are bound with private propagation",
            _equals("", "None"),
            "'None', the default,",
        ),
        "recursiveReadOnly": _Refusal(
            "read-only mounts are not made recursively read-only",
            _equals("", "Disabled"),
            "'Disabled', the default,",
        ),
    },
    # Security settings podsync cannot apply (the rest are honoured: _security).
    "SecurityContext": {
        "seLinuxOptions": _Refusal("SELinux labels are not implemented"),
        "windowsOptions": _Refusal("podsync runs Linux containers only"),
        "procMount": _Refusal(
            "podsync keeps the engine's masked /proc paths", _equals("Default"), "'Default'"
        ),
    },
    "PodSecurityContext": {
        "seLinuxOptions": _Refusal("SELinux labels are not implemented"),
        "seLinuxChangePolicy": _Refusal("SELinux labels are not implemented"),
        "windowsOptions": _Refusal("podsync runs Linux containers only"),
        # podsync sets the roots of the volumes it makes (emptyDir, a claim's) and walks
        # no files: both policies do the same there, accepted.
        "fsGroupChangePolicy": _Refusal(
            "the fsGroup is applied to the roots of the emptyDir and claim volumes podsync makes",
            _equals("Always", "OnRootMismatch"),
            "'Always' or 'OnRootMismatch'",
        ),
        "supplementalGroupsPolicy": _Refusal(
            "Docker also gives the process the groups of its user in the image's /etc/group",
            _equals("Merge"),
            "'Merge', the default,",
        ),
    },
    # A projected volume's sources podsync cannot fill (serviceAccountToken is refused
    # by _projection, whose message knows the volume and whether a cluster added it).
    "VolumeProjection": {
        "clusterTrustBundle": _Refusal(
            "ClusterTrustBundles are cluster objects, which podsync cannot read; put the "
            "certificates in a ConfigMap and project it with a configMap source instead",
            _SOURCE_ONLY,
        ),
        "podCertificate": _Refusal(
            "a pod certificate is issued by a cluster's signer through the API server; put "
            "the certificate and its key in a Secret and project it with a secret source "
            "instead",
            _SOURCE_ONLY,
        ),
    },
    "HostPathVolumeSource": {
        "type": _Refusal(
            "podsync checks no host path's type, and Docker creates a missing path as a directory",
            _equals("", "DirectoryOrCreate"),
            "'' or 'DirectoryOrCreate'",
        ),
    },
    "Volume": {
        # configMap, secret, downwardAPI and projected volumes are honoured (_projection).
        "ephemeral": _Refusal(
            "generic ephemeral volumes are PersistentVolumeClaims a cluster provisions",
            _SOURCE_ONLY,
        ),
        "image": _planned("image volumes are not implemented", accepts=_SOURCE_ONLY),
        "gitRepo": _Refusal(
            "gitRepo volumes are deprecated by Kubernetes; clone into an emptyDir instead",
            _SOURCE_ONLY,
        ),
        "csi": _Refusal("CSI volumes need a cluster's CSI driver", _SOURCE_ONLY),
        "nfs": _cluster_volume("NFS"),
        "iscsi": _cluster_volume("iSCSI"),
        "fc": _cluster_volume("Fibre Channel"),
        "rbd": _cluster_volume("Ceph RBD"),
        "cephfs": _cluster_volume("CephFS"),
        "glusterfs": _cluster_volume("GlusterFS"),
        "cinder": _cluster_volume("Cinder"),
        "flocker": _cluster_volume("Flocker"),
        "flexVolume": _cluster_volume("FlexVolume"),
        "quobyte": _cluster_volume("Quobyte"),
        "scaleIO": _cluster_volume("ScaleIO"),
        "storageos": _cluster_volume("StorageOS"),
        "portworxVolume": _cluster_volume("Portworx"),
        "azureDisk": _cluster_volume("Azure Disk"),
        "azureFile": _cluster_volume("Azure File"),
        "awsElasticBlockStore": _cluster_volume("AWS EBS"),
        "gcePersistentDisk": _cluster_volume("GCE persistent disk"),
        "vsphereVolume": _cluster_volume("vSphere"),
        "photonPersistentDisk": _cluster_volume("Photon persistent disk"),
    },
    "EnvVarSource": {
        "fileKeyRef": _planned("environment variables from files are not implemented"),
    },
}

# What the keys of _IGNORED are, in the warning (one line per pod, groups in this order).
_SCHEDULING = "scheduling fields"
_SERVICE_ACCOUNT = "service-account fields (there is no API server to issue a token)"
_CLUSTER = "cluster fields"
_DNS_OPTIONS = "DNS options podsync cannot map"
_WRITTEN_BY_SERVER = "fields the API server writes"
_WARNING_GROUPS = (_SCHEDULING, _SERVICE_ACCOUNT, _CLUSTER, _DNS_OPTIONS, _WRITTEN_BY_SERVER)

# Keys accepted and ignored: they mean nothing on one host. Each names its group.
_IGNORED: Mapping[str, Mapping[str, str]] = {
    "PodSpec": {
        **dict.fromkeys(
            (
                "nodeSelector",
                "affinity",
                "tolerations",
                "schedulerName",
                "priorityClassName",
                "priority",
                "preemptionPolicy",
                "topologySpreadConstraints",
                "readinessGates",
            ),
            _SCHEDULING,
        ),
        # serviceAccountName and serviceAccount are attributes (fieldRef reads them);
        # convert._document lists them under _SERVICE_ACCOUNT.
        "automountServiceAccountToken": _SERVICE_ACCOUNT,
        "enableServiceLinks": _CLUSTER,  # no Services on one host
        "imagePullSecrets": _CLUSTER,  # the engine pulls with its own credentials
    },
    "PodDNSConfig": {"options": _DNS_OPTIONS},
    "ObjectMeta": dict.fromkeys(
        (
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
            "generation",
            "selfLink",
            "managedFields",
            "ownerReferences",
            "finalizers",
        ),
        _WRITTEN_BY_SERVER,
    ),
    "Pod": {"status": _WRITTEN_BY_SERVER},
    "PersistentVolumeClaim": {"status": _WRITTEN_BY_SERVER},
}

# Field names of the Kubernetes objects a pod file holds (Pod, ObjectMeta, PodSpec,
# Container, their volumes, probes, security contexts and the like). An unknown key that
# is one of them is a real field in the wrong place (or one podsync does not read yet):
# "did you mean" would propose a field with another meaning, so it is not offered.
_KUBERNETES_FIELDS = frozenset(
    """
    apiVersion kind metadata spec status items name namespace uid labels annotations
    generateName creationTimestamp deletionTimestamp deletionGracePeriodSeconds
    resourceVersion generation selfLink managedFields ownerReferences finalizers volumes
    initContainers containers ephemeralContainers restartPolicy
    terminationGracePeriodSeconds activeDeadlineSeconds dnsPolicy nodeSelector
    serviceAccountName serviceAccount automountServiceAccountToken nodeName hostNetwork
    hostPID hostIPC shareProcessNamespace securityContext imagePullSecrets hostname
    subdomain affinity schedulerName tolerations hostAliases priorityClassName priority
    dnsConfig readinessGates runtimeClassName enableServiceLinks preemptionPolicy
    overhead topologySpreadConstraints setHostnameAsFQDN os hostUsers schedulingGates
    resourceClaims resources hostnameOverride image command args workingDir ports
    envFrom env volumeMounts volumeDevices livenessProbe readinessProbe startupProbe
    lifecycle terminationMessagePath terminationMessagePolicy imagePullPolicy stdin
    stdinOnce tty resizePolicy restartPolicyRules containerPort hostPort protocol hostIP
    value valueFrom fieldRef fieldPath resourceFieldRef containerName resource divisor
    configMapKeyRef secretKeyRef fileKeyRef key optional prefix configMapRef secretRef
    mountPath readOnly subPath subPathExpr mountPropagation recursiveReadOnly devicePath
    hostPath path type emptyDir medium sizeLimit configMap secret secretName defaultMode
    downwardAPI projected sources serviceAccountToken clusterTrustBundle podCertificate
    audience expirationSeconds signerName labelSelector persistentVolumeClaim claimName
    nfs server csi driver
    iscsi ephemeral gitRepo limits requests claims exec httpGet tcpSocket grpc host
    scheme httpHeaders port service initialDelaySeconds timeoutSeconds periodSeconds
    successThreshold failureThreshold terminationGracePeriodSeconds postStart preStop
    sleep seconds stopSignal capabilities add drop privileged seLinuxOptions
    windowsOptions runAsUser runAsGroup runAsNonRoot readOnlyRootFilesystem
    allowPrivilegeEscalation procMount seccompProfile appArmorProfile localhostProfile
    supplementalGroups supplementalGroupsPolicy fsGroup fsGroupChangePolicy sysctls
    seLinuxChangePolicy ip hostnames nameservers searches options
    accessModes storageClassName volumeMode selector dataSource dataSourceRef volumeName
    volumeAttributesClassName storage
    """.split()  # noqa: SIM905 - a word list reads better than a column
)

# Keys of older API versions in a newer document: an unknown key, with what replaced it.
# The spellings from before v1beta1 (which the 2014 seed no longer read) in any
# document; the v1beta1 fields in a v1 pod.
_BEFORE_V1BETA1 = "a spelling from before v1beta1"
_V1BETA1 = "a v1beta1 field"
_RENAMED: Mapping[str, Mapping[str, str]] = {
    "EnvVar (v1beta1)": {"key": f"{_BEFORE_V1BETA1}, now 'name'"},
    "EnvVar": {"key": f"{_BEFORE_V1BETA1}, now 'name'"},
    "VolumeMount (v1beta1)": {
        "path": f"{_BEFORE_V1BETA1}, now 'mountPath'",
        "mountType": "a field from before v1beta1, which v1beta1 dropped",
    },
    "VolumeMount": {
        "path": f"{_BEFORE_V1BETA1}, now 'mountPath'",
        "mountType": "a field from before v1beta1, which v1beta1 dropped",
    },
    "Volume": {
        "source": f"{_V1BETA1}: a v1 volume has hostPath or emptyDir itself",
        "hostDir": f"{_V1BETA1}, now 'hostPath'",
    },
    "Container": {
        "privileged": f"{_V1BETA1}, now 'securityContext.privileged'",
        "cpu": f"{_V1BETA1}, now 'resources.limits.cpu' (a quantity: 500m)",
        "memory": f"{_V1BETA1}, now 'resources.limits.memory' (a quantity: 128Mi)",
    },
}


def _distance(a: str, b: str) -> int:
    """The optimal-string-alignment distance: edits, with a swap of neighbours as one."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, previous2[j - 2] + 1)
            current.append(best)
        previous2, previous = previous, current
    return previous[-1]


def _suggestion(key: str, known: Iterable[str]) -> str | None:
    """The key of ``known`` that ``key`` probably misspells, if any.

    Only a near-miss counts: at most one edit for keys of up to five letters, two
    beyond, case ignored. A key that is a field of some Kubernetes object gets no
    suggestion: ``initContainers`` is not a misspelling of ``containers``, and ``port``
    in a container is not one of ``ports``.
    """
    if key in _KUBERNETES_FIELDS:
        return None
    limit = 1 if len(key) <= 5 else 2
    scored = sorted((_distance(key.lower(), k.lower()), k) for k in known)
    if scored and scored[0][0] <= limit:
        return scored[0][1]
    return None
