"""Schema to model: pod documents become ``Pod`` / ``Container``, with cross-field checks.

Contract: ``_read_document(data, root, context, out)`` takes one document of plain data
(from ``_yaml``), decides what it is (a v1 ``Pod``, a ``List`` / ``PodList``, a v1beta1
``ContainerManifest``), structures it through ``schema._pod`` and converts it into pods
(``_Read``), each with the paths of its name and uid (for ``_config``'s duplicate
messages) and its one warning line (the fields it sets that podsync ignores). Every
problem is appended to ``out`` as a ``(path, message)`` pair; a document with problems
gives no pod. It never raises for bad data.

Here live the rules that involve several values of one pod: duplicate volume,
container, port names and mount paths, mounts that name no volume, a host port used
twice, one v1beta1 restart policy; and the conversion of the pod between the two
schemas and the model (a v1beta1 manifest without ``id`` is named after its file). One
container's conversion - handlers with exactly one action, probes, hooks, the v1beta1
``command`` as the model's ``args``, ports named by a probe or hook that the container
does not have - is ``_container``'s; a v1 container's ``resources`` and the pod
fields beyond the 2014 ones are ``_pod``'s; a v1 env is resolved by
``_env``.

Layering: the top of the loader below ``_config``: it imports ``schema._pod``,
``_container``, ``_pod``, ``_security``, ``_unsupported``,
``_env``, ``_yaml``, ``_node`` and the model,
never the planner, and does no I/O. Its names keep their
leading underscore: they are shared among the loader's modules only; nothing here is
public API.
"""

from __future__ import annotations

import base64
import hashlib
import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from podsync.host._node import NodeInfo
from podsync.load.convert._container import _check_named_ports, _container_v1, _container_v1beta1
from podsync.load.convert._env import _PodFacts
from podsync.load.convert._kinds import _kind_message
from podsync.load.convert._objects import _Objects
from podsync.load.convert._pod import (
    _app_restart_policies,
    _check_empty_dir,
    _check_memory_mounts,
    _in_memory,
    _init_rules,
    _pod_fields,
    _resources,
)
from podsync.load.convert._projection import _project_volume
from podsync.load.convert._security import _with_security
from podsync.load.schema._objects import _ClaimSourceV1
from podsync.load.schema._pod import (
    _ListV1,
    _ManifestV1Beta1,
    _PodItemV1,
    _PodV1,
    _RestartPolicyV1Beta1,
    _structure,
)
from podsync.load.schema._unsupported import (
    _DNS_OPTIONS,
    _IGNORED,
    _SCHEDULING,
    _SERVICE_ACCOUNT,
    _WARNING_GROUPS,
    _WRITTEN_BY_SERVER,
)
from podsync.load.schema._volumes import (
    _Empty,
    _EmptyDirV1,
    _HostPathSource,
    _HostPathV1,
    _VolumeV1,
)
from podsync.load.schema._yaml import _describe, _kind
from podsync.model._pod import (
    DEFAULT_TERMINATION_MESSAGE_PATH,
    Container,
    DNSPolicy,
    Pod,
    PortProtocol,
    RestartPolicy,
    derive_pod_uid,
)
from podsync.model._security import PodSecurityContext
from podsync.model._volume import ClaimSource, Volume
from podsync.spec._volumes import claim_volume_name

# Nothing here is public API: ``_config`` reads each document through ``_read_document``.
__all__: list[str] = []


@attrs.frozen
class _Context:
    """What a document is read with besides its data.

    Attributes:
        source: the pods' source (``file``, ``http``, ``api``).
        node: the node the pods run on (environment values, the ``nodeName`` warning).
        file: names the stream a 2014 manifest without ``id`` derives its name from
            (an absolute path, a URL, the ``source_name`` given to ``parse_pods``);
            ``None`` when there is none (standard input).
    """

    source: str
    node: NodeInfo
    file: str | None
    # The ConfigMaps and Secrets of all sources (env, envFrom).
    objects: _Objects = attrs.field(factory=_Objects)
    # One instance of each equal immutable part (a container's resources) among the
    # pods of one load: a fleet repeats the same few, and every object the pods hold is
    # walked by each pass of the garbage collector while the rest is read and planned.
    shared: dict[Any, Any] = attrs.field(factory=dict, eq=False, repr=False)
    # Loading for a fleet (``load_host_pods``): each pod's node is the host its
    # spec.nodeName names, and ``node`` above is only the default.
    fleet: _Fleet | None = None


@attrs.frozen
class _Fleet:
    """The hosts of a fleet, for a load that assigns pods by ``spec.nodeName``.

    Attributes:
        nodes: each host's node, by name.
        hosts_file: where the hosts come from (for messages).
        assigned: filled by the load: each pod's uid -> its host's name.
    """

    nodes: Mapping[str, NodeInfo]
    hosts_file: str
    assigned: dict[str, str] = attrs.field(factory=dict, eq=False, repr=False)

    def node_of(
        self, key: str, node_name: str, path: str, out: list[tuple[str, str]]
    ) -> NodeInfo | None:
        """The node of pod ``key`` (``namespace/name``), whose ``spec.nodeName`` is
        ``node_name`` at ``path``; ``None`` (and a problem) when it names no host of
        the fleet. The 2014 scheduler bound every pod to a host before any kubelet ran
        it: a pod bound to none, or to a host the fleet does not have, runs nowhere."""
        node = self.nodes.get(node_name)
        if node is None:
            hosts = ", ".join(self.nodes) or "none"
            if node_name:
                why = f"{node_name!r} is not a host of {self.hosts_file}"
            else:
                why = f"no spec.nodeName: each pod names its host of {self.hosts_file}"
            out.append((path, f"pod {key}: {why} (its hosts: {hosts})"))
        return node


@attrs.frozen
class _Read:
    """A pod read from a document, with where its name and uid are, and its warning."""

    pod: Pod
    name_path: str
    uid_path: str
    warning: str = ""


# ---------------------------------------------------------------------------------------
# Schema to model
# ---------------------------------------------------------------------------------------


def _volume(
    name: str,
    host: _HostPathSource | _HostPathV1 | None,
    empty: _Empty | _EmptyDirV1 | None,
    keys: tuple[str, str],
    path: str,
    out: list[tuple[str, str]],
    claim: _ClaimSourceV1 | None = None,
) -> Volume:
    if host is not None and empty is not None:
        out.append((path, f"needs at most one of {keys[0]} or {keys[1]}, got both"))
    if claim is not None and (host is not None or empty is not None):
        other = keys[0] if host is not None else keys[1]
        out.append((path, f"needs one volume source, got persistentVolumeClaim and {other}"))
    if isinstance(empty, _EmptyDirV1):
        _check_empty_dir(empty, f"{path}.{keys[1]}", out)
    if claim is not None:
        return Volume(name=name, claim=ClaimSource(claim.claim_name, claim.read_only))
    # No source at all means emptyDir (the 2014 validation default).
    return Volume(name=name, host_path=host.path if host is not None else None)


# The longest file name Linux filesystems take: Docker's local driver makes a directory
# named after the volume ("file name too long" beyond it).
_VOLUME_NAME_MAX = 255


def _check_claim_names(
    volumes: Sequence[Volume], namespace: str, spec_path: str, out: list[tuple[str, str]]
) -> None:
    """A claim whose volume name (``claim_volume_name``) is longer than the engine can
    make a directory for is refused when the file is read, not at the create."""
    for i, volume in enumerate(volumes):
        if volume.claim is None:
            continue
        name = claim_volume_name(namespace, volume.claim.claim_name)
        if len(name) > _VOLUME_NAME_MAX:
            out.append(
                (
                    f"{spec_path}.volumes[{i}].persistentVolumeClaim.claimName",
                    f"too long: the claim's volume name {name[:40]}... would have "
                    f"{len(name)} characters, and a Docker volume name at most "
                    f"{_VOLUME_NAME_MAX}",
                )
            )


# A v1 volume's sources podsync honours, by their keys.
_V1_SOURCES = (
    "hostPath",
    "emptyDir",
    "persistentVolumeClaim",
    "configMap",
    "secret",
    "downwardAPI",
    "projected",
)
# The sources of a volume with files (their pairs with others get the message below;
# pairs among the others keep _volume's).
_CONTENT_SOURCES = frozenset(("configMap", "secret", "downwardAPI", "projected"))


def _volume_v1(v: _VolumeV1, facts: _PodFacts, path: str, out: list[tuple[str, str]]) -> Volume:
    given = [
        key
        for key, value in zip(
            _V1_SOURCES,
            (
                v.host_path,
                v.empty_dir,
                v.persistent_volume_claim,
                v.config_map,
                v.secret,
                v.downward_api,
                v.projected,
            ),
            strict=True,
        )
        if value is not None
    ]
    if len(given) > 1 and _CONTENT_SOURCES.intersection(given):
        names = ", ".join(_V1_SOURCES[:-1]) + f" or {_V1_SOURCES[-1]}"
        out.append((path, f"needs at most one of {names}, got {' and '.join(given)}"))
        return Volume(name=v.name)
    volume = _volume(
        v.name,
        v.host_path,
        v.empty_dir,
        ("hostPath", "emptyDir"),
        path,
        out,
        v.persistent_volume_claim,
    )
    content = _project_volume(v, facts, path, out)
    return volume if content is None else attrs.evolve(volume, content=content)


def _restart_v1beta1(
    policy: _RestartPolicyV1Beta1 | None, path: str, out: list[tuple[str, str]]
) -> RestartPolicy:
    if policy is None:
        return RestartPolicy.ALWAYS
    chosen = [
        (key, value)
        for key, flag, value in (
            ("always", policy.always, RestartPolicy.ALWAYS),
            ("onFailure", policy.on_failure, RestartPolicy.ON_FAILURE),
            ("never", policy.never, RestartPolicy.NEVER),
        )
        if flag is not None
    ]
    if len(chosen) > 1:
        got = " and ".join(key for key, _ in chosen)
        out.append((path, f"must set only one of always, onFailure or never, got {got}"))
    # None set means Always, as the 2014 validation defaulted it (and syncPod read it).
    return chosen[0][1] if chosen else RestartPolicy.ALWAYS


def _check_pod(
    containers: Sequence[Container],
    volumes: Sequence[Volume],
    spec_path: str,
    out: list[tuple[str, str]],
    init_containers: Sequence[Container] = (),
) -> None:
    """The rules that relate values across the pod (paths are the same in v1 and v1beta1);
    init containers share the app containers' names and rules (Kubernetes' validation)."""
    if not containers:
        out.append((f"{spec_path}.containers", "a pod needs at least one container"))
    volume_paths: dict[str, str] = {}
    for i, volume in enumerate(volumes):
        at = f"{spec_path}.volumes[{i}]"
        first = volume_paths.setdefault(volume.name, at)
        if first != at:
            out.append((f"{at}.name", f"duplicate volume name {volume.name!r} (first at {first})"))
    container_paths: dict[str, str] = {}
    host_ports: dict[tuple[int, PortProtocol], str] = {}
    every = [
        *((f"{spec_path}.initContainers[{i}]", c) for i, c in enumerate(init_containers)),
        *((f"{spec_path}.containers[{i}]", c) for i, c in enumerate(containers)),
    ]
    for at, container in every:
        first = container_paths.setdefault(container.name, at)
        if first != at:
            out.append(
                (f"{at}.name", f"duplicate container name {container.name!r} (first at {first})")
            )
        port_names: dict[str, str] = {}
        for j, port in enumerate(container.ports):
            port_at = f"{at}.ports[{j}]"
            if port.name:
                first = port_names.setdefault(port.name, port_at)
                if first != port_at:
                    out.append(
                        (f"{port_at}.name", f"duplicate port name {port.name!r} (first at {first})")
                    )
            if port.host_port:
                # One pod cannot publish the same host port twice (the seed's
                # checkHostPortConflicts). The seed keyed on the number alone; here
                # 53/TCP and 53/UDP are different ports, as they are to the kernel.
                key = (port.host_port, port.protocol)
                first = host_ports.setdefault(key, port_at)
                if first != port_at:
                    out.append(
                        (
                            f"{port_at}.hostPort",
                            f"host port {port.host_port}/{port.protocol.value} is already "
                            f"used by {first}",
                        )
                    )
        mount_paths: dict[str, str] = {}
        for j, mount in enumerate(container.volume_mounts):
            mount_at = f"{at}.volumeMounts[{j}]"
            if mount.name not in volume_paths:
                # The seed silently skipped such mounts (makeBinds).
                known = (
                    f"volumes: {', '.join(sorted(volume_paths))}"
                    if volume_paths
                    else "the pod has no volumes"
                )
                out.append(
                    (
                        f"{mount_at}.name",
                        f"no volume named {mount.name!r} in this pod ({known})",
                    )
                )
            first = mount_paths.setdefault(mount.mount_path, mount_at)
            if first != mount_at:
                out.append(
                    (
                        f"{mount_at}.mountPath",
                        f"duplicate mount path {mount.mount_path!r} (first at {first})",
                    )
                )
        # The termination-message file is bound at its path (/dev/termination-log unless
        # given: SetDefaults_Container); Docker refuses a second mount at a path a volume
        # is mounted at ("Duplicate mount point"), so the pod is refused here, before the
        # engine is touched.
        given = container.termination_message_path
        message_path = given or DEFAULT_TERMINATION_MESSAGE_PATH
        clash = next(
            (
                f"{at}.volumeMounts[{j}]"
                for j, m in enumerate(container.volume_mounts)
                if posixpath.normpath(m.mount_path) == posixpath.normpath(message_path)
            ),
            None,
        )
        if clash is not None and given:
            out.append(
                (
                    f"{at}.terminationMessagePath",
                    f"{message_path!r} is also where {clash} mounts a volume; the "
                    "termination-message file needs a path of its own",
                )
            )
        elif clash is not None:
            out.append(
                (
                    f"{clash}.mountPath",
                    f"{message_path!r} is where the termination-message file is (the default "
                    "terminationMessagePath); mount the volume elsewhere, or give the file "
                    "another terminationMessagePath",
                )
            )
        _check_named_ports(container, at, out)


def _pod_from_v1(
    doc: _PodV1 | _PodItemV1, root: str, context: _Context, out: list[tuple[str, str]]
) -> _Read | None:
    spec_path = f"{root}.spec"
    before = len(out)
    extra = _pod_fields(doc, root, out)
    meta = doc.metadata
    fleet = context.fleet
    if fleet is not None:
        node = fleet.node_of(
            f"{meta.namespace}/{meta.name}", doc.spec.node_name, f"{spec_path}.nodeName", out
        )
        context = attrs.evolve(context, node=node or context.node)
    shared = context.shared
    resources = [
        shared.setdefault(r, r) if r is not None else None
        for r in (
            _resources(c.resources, f"{spec_path}.containers[{i}]", out)
            for i, c in enumerate(doc.spec.containers)
        )
    ]
    inits = [
        (c, f"{spec_path}.initContainers[{i}]") for i, c in enumerate(doc.spec.init_containers)
    ]
    init_resources = [_resources(c.resources, at, out) for c, at in inits]
    everyone = [*doc.spec.init_containers, *doc.spec.containers]
    named = zip(everyone, [*init_resources, *resources], strict=True)
    facts = _PodFacts(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid or derive_pod_uid(context.source, meta.namespace, meta.name),
        labels=meta.labels,
        annotations=meta.annotations,
        # serviceAccount is the deprecated spelling; serviceAccountName wins.
        service_account=doc.spec.service_account_name or doc.spec.service_account,
        node=context.node,
        objects=context.objects,
        # Reversed: with a repeated name (an error of its own) the first one counts.
        resources={c.name: r for c, r in reversed(list(named))},
        exported_mounts=_exported_mounts(doc),
    )
    volumes = [
        _volume_v1(v, facts, f"{spec_path}.volumes[{i}]", out)
        for i, v in enumerate(doc.spec.volumes)
    ]
    containers = [
        _container_v1(c, facts, f"{spec_path}.containers[{i}]", out, resources[i])
        for i, c in enumerate(doc.spec.containers)
    ]
    _app_restart_policies(doc.spec.containers, spec_path, out)
    init_containers = [
        _init_rules(c, _container_v1(c, facts, at, out, r), at, out)
        for (c, at), r in zip(inits, init_resources, strict=True)
    ]
    containers, pod_security, init_containers = _with_security(
        doc, containers, root, out, init_containers
    )
    volumes = _in_memory(volumes, [v.empty_dir for v in doc.spec.volumes], resources, context.node)
    _check_pod(containers, volumes, spec_path, out, init_containers)
    _check_memory_mounts(containers, volumes, spec_path, out)
    _check_claim_names(volumes, meta.namespace, spec_path, out)
    if len(out) > before:
        return None
    pod = _make_pod(
        meta.name,
        meta.namespace,
        facts.uid,  # derived once (a uuid5) when the document gives none
        context.source,
        containers,
        volumes,
        doc.spec.restart_policy,
        doc.spec.dns_policy,
        doc.spec.termination_grace_period_seconds,
        extra,
        pod_security,
        init_containers,
    )
    uid_path = f"{root}.metadata.uid" if meta.uid is not None else f"{root}.metadata.name"
    if fleet is not None:
        fleet.assigned[pod.uid] = doc.spec.node_name
    return _Read(
        pod,
        f"{root}.metadata.name",
        uid_path,
        _warning(doc, pod, context.node, facts.skipped, facts.missing),
    )


def _exported_mounts(
    doc: _PodV1 | _PodItemV1,
) -> dict[str, tuple[tuple[str, str], ...]] | None:
    """For a pod exported from a cluster (``kubectl get -o yaml``: it has fields only the
    API server writes, which podsync ignores), the mounts of each volume, by volume
    name, as ``("containers[0] 'app'", mountPath)``; ``None`` for any other pod."""
    if not doc.metadata.ignored and not doc.ignored:
        return None
    mounts: dict[str, list[tuple[str, str]]] = {}
    for kind, containers in (
        ("initContainers", doc.spec.init_containers),
        ("containers", doc.spec.containers),
    ):
        for i, container in enumerate(containers):
            for mount in container.volume_mounts:
                where = f"{kind}[{i}] {container.name!r}"
                mounts.setdefault(mount.name, []).append((where, mount.mount_path))
    return {name: tuple(found) for name, found in mounts.items()}


def _warning(
    doc: _PodV1 | _PodItemV1,
    pod: Pod,
    node: NodeInfo,
    skipped: Sequence[str] = (),
    missing: Sequence[tuple[str, str]] = (),
) -> str:
    """The pod's one warning line: the fields it sets that mean nothing on one host.

    ``pod default/web: ignoring scheduling fields: nodeSelector, tolerations; ...``,
    groups in ``_WARNING_GROUPS`` order, fields in document order; empty when none.
    """
    spec = doc.spec
    groups: dict[str, list[str]] = {group: [] for group in _WARNING_GROUPS}
    for key in spec.ignored:
        groups[_IGNORED["PodSpec"][key]].append(key)
    # An ephemeral-storage request only informs a cluster's scheduler: the kubelet makes
    # no cgroup of it (kubelet-modern.md §6), and podsync reserves no disk.
    groups[_SCHEDULING].extend(
        f"containers[{i}].resources.requests.ephemeral-storage"
        for i, c in enumerate(pod.containers)
        if c.resources is not None and c.resources.requests.ephemeral_storage
    )
    for key, name in (
        ("serviceAccountName", spec.service_account_name),
        ("serviceAccount", spec.service_account),
    ):
        if name:
            groups[_SERVICE_ACCOUNT].append(key)
    if spec.dns_config is not None:
        groups[_DNS_OPTIONS].extend(f"dnsConfig.{key}" for key in spec.dns_config.ignored)
    groups[_WRITTEN_BY_SERVER].extend(f"metadata.{key}" for key in doc.metadata.ignored)
    groups[_WRITTEN_BY_SERVER].extend(doc.ignored)
    clauses = [f"ignoring {group}: {', '.join(keys)}" for group, keys in groups.items() if keys]
    if skipped:
        # The kubelet's InvalidEnvironmentVariableNames event (makeEnvironmentVariables).
        clauses.append(
            "skipping envFrom keys that are not environment variable names, as the kubelet "
            f"does: {'; '.join(skipped)}"
        )
    if missing:
        # Not the file's problem: the container's (generateContainerConfig), named here
        # with its path so that the user finds the reference to fix.
        clauses.append(
            "not creating a container until the sources hold what its env reads "
            "(CreateContainerConfigError): "
            + "; ".join(f"{path}: {message}" for path, message in missing)
        )
    # A static pod runs on the node whose kubelet reads it: the kubelet sets nodeName to
    # its own name (pkg/kubelet/config/common.go, applyDefaults), so a file naming
    # another node still runs here - which its author may not expect.
    if spec.node_name and spec.node_name != node.name:
        clauses.append(
            f"nodeName {spec.node_name!r} is not this node ({node.name!r}): the pod runs here"
        )
    return f"pod {pod.key}: {'; '.join(clauses)}" if clauses else ""


def _pod_from_v1beta1(
    doc: _ManifestV1Beta1, root: str, context: _Context, out: list[tuple[str, str]]
) -> _Read | None:
    before = len(out)
    if context.fleet is not None:
        # The seed read a host's manifests from that host's key: the manifest itself
        # names no host, so a fleet cannot tell where it runs.
        out.append(
            (
                root,
                "a v1beta1 manifest names no host: in a fleet (the hosts of "
                f"{context.fleet.hosts_file}) write it as a v1 Pod with spec.nodeName",
            )
        )
    volumes = []
    for i, v in enumerate(doc.volumes):
        host = v.source.host_dir if v.source else None
        empty = v.source.empty_dir if v.source else None
        volumes.append(
            _volume(
                v.name, host, empty, ("hostDir", "emptyDir"), f"{root}.volumes[{i}].source", out
            )
        )
    containers = [
        _container_v1beta1(c, f"{root}.containers[{i}]", out) for i, c in enumerate(doc.containers)
    ]
    restart = _restart_v1beta1(doc.restart_policy, f"{root}.restartPolicy", out)
    _check_pod(containers, volumes, root, out)
    name: str | None = doc.id
    if name is None:
        if context.file is None:
            out.append(
                (
                    f"{root}.id",
                    "required field missing: standard input has no file name to derive "
                    "the pod's name from",
                )
            )
        else:
            name = _name_from_file(context.file)
    if len(out) > before or name is None:
        return None
    pod = _make_pod(
        name, "default", doc.uuid, context.source, containers, volumes, restart, doc.dns_policy
    )
    uid_path = f"{root}.uuid" if doc.uuid is not None else f"{root}.id"
    return _Read(pod, f"{root}.id", uid_path)


# The file source of late 2014 (pkg/kubelet/config/file.go, simpleSubdomainSafeHash)
# named a manifest's pod after its file: base32 with this alphabet, so the name is a
# DNS label.
_STANDARD_BASE32 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_SUBDOMAIN_SAFE_BASE32 = b"0123456789abcdefghijklmnopqrstuv"
_NOT_LABEL_CHARACTERS = re.compile(r"[^a-z0-9]+")


def _name_from_file(file: str) -> str:
    """The pod name of a 2014 manifest without ``id``, as the late-2014 file source made it.

    The first 15 characters of the file's lower-cased base name without anything but
    ``a-z`` and ``0-9``, then the first 30 characters of the SHA-1 of the whole name in
    base32 (``0-9a-v``): ``webserver`` + 30 characters for ``/etc/pods/web-server.yaml``.
    The same file always gives the same name; two files with the same base name in
    different directories give different ones.
    """
    base = _NOT_LABEL_CHARACTERS.sub("", os.path.basename(file).lower())
    digest = base64.b32encode(hashlib.sha1(file.encode("utf-8")).digest())
    safe = digest.translate(bytes.maketrans(_STANDARD_BASE32, _SUBDOMAIN_SAFE_BASE32))
    return f"{base[:15]}{safe.decode('ascii')[:30]}"


def _make_pod(
    name: str,
    namespace: str,
    uid: str | None,
    source: str,
    containers: Sequence[Container],
    volumes: Sequence[Volume],
    restart_policy: RestartPolicy,
    dns_policy: DNSPolicy,
    termination_grace_period_seconds: int | None = None,
    extra: dict[str, Any] | None = None,
    security_context: PodSecurityContext | None = None,
    init_containers: Sequence[Container] = (),
) -> Pod:
    fields: dict[str, Any] = {
        **(extra or {}),
        "name": name,
        "namespace": namespace,
        "source": source,
        "containers": tuple(containers),
        "volumes": tuple(volumes),
        "restart_policy": restart_policy,
        "dns_policy": dns_policy,
        "termination_grace_period_seconds": termination_grace_period_seconds,
        "security_context": security_context,
        "init_containers": tuple(init_containers),
    }
    if uid is not None:  # otherwise Pod derives it from source, namespace and name
        fields["uid"] = uid
    return Pod(**fields)


# ---------------------------------------------------------------------------------------
# Documents and streams
# ---------------------------------------------------------------------------------------

_NOT_A_POD = (
    "expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or PodList of pods, "
    "or a v1beta1 ContainerManifest (version: v1beta1)"
)


def _read_document(
    data: object, root: str, context: _Context, out: list[tuple[str, str]]
) -> list[_Read]:
    """The pods of one document (or of one item of a top-level list)."""
    if not isinstance(data, dict):
        # Its kind only: a file that is not a pod may be any file (a symlink to one the
        # user did not mean to show); its text stays out of the message.
        out.append((root, f"{_NOT_A_POD}, got {_kind(data)}"))
        return []
    results: list[_Read | None] = []
    if "kind" in data or "apiVersion" in data:
        kind = data.get("kind")
        if "kind" not in data:
            out.append((f"{root}.kind", "required field missing (Pod, List or PodList)"))
        elif not isinstance(kind, str):
            out.append((f"{root}.kind", f"expected a string, got {_describe(kind)}"))
        elif kind == "Pod":
            pod = _structure(data, _PodV1, root, out)
            if pod is not None:
                results.append(_pod_from_v1(pod, root, context, out))
        elif kind in ("List", "PodList"):
            results.extend(_read_list(data, root, context, out))
        else:
            out.append((f"{root}.kind", _kind_message(kind)))
    elif "version" in data:
        manifest = _structure(data, _ManifestV1Beta1, root, out)
        if manifest is not None:
            results.append(_pod_from_v1beta1(manifest, root, context, out))
    else:
        out.append((root, f"not a pod: {_NOT_A_POD}"))
    return [r for r in results if r is not None]


def _read_list(
    data: dict[str, Any], root: str, context: _Context, out: list[tuple[str, str]]
) -> list[_Read | None]:
    """The pods of a ``List`` / ``PodList`` document.

    An item of another kind (a Service in ``kubectl get pods,services -o yaml``) is
    said once, at its ``kind``, as that kind's document would be (``_kinds``) - not
    as a pod with a Service's keys; the list's other items are still read, each at its
    own index, for their problems."""
    items = data.get("items")
    others = {
        i: item["kind"]
        for i, item in enumerate(items if isinstance(items, list) else ())
        if isinstance(item, dict) and isinstance(item.get("kind"), str) and item["kind"] != "Pod"
    }
    if not others:
        pod_list = _structure(data, _ListV1, root, out)
        if pod_list is None:
            return []
        return [
            _pod_from_v1(item, f"{root}.items[{i}]", context, out)
            for i, item in enumerate(pod_list.items)
        ]
    assert isinstance(items, list)
    _structure({**data, "items": []}, _ListV1, root, out)  # the list's own keys
    results: list[_Read | None] = []
    for i, item in enumerate(items):
        path = f"{root}.items[{i}]"
        kind = others.get(i)
        if kind in _OBJECT_KINDS:
            out.append((f"{path}.kind", _IN_A_LIST.format(kind=kind)))
        elif kind is not None:
            out.append((f"{path}.kind", _kind_message(kind)))
        else:
            pod = _structure(item, _PodItemV1, path, out)
            if pod is not None:
                results.append(_pod_from_v1(pod, path, context, out))
    return results


# The objects pods refer to are read from the documents of the sources, before any
# pod (``_streams._objects_of``); one inside a List is not among them.
_OBJECT_KINDS = frozenset({"ConfigMap", "Secret", "PersistentVolumeClaim"})
_IN_A_LIST = (
    "a {kind} inside a List is not read by podsync: write it as a document of its own "
    "(documents are separated by ---)"
)
