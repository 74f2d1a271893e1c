"""The labels podsync writes on every container it creates, and how it reads them back.

Labels are podsync's ownership record (as compose's ``com.docker.compose.*`` and the
modern kubelet's ``io.kubernetes.*``): a container is podsync's when it carries
``LABEL_POD_UID``. They also carry everything the planner needs about a container, so
that one list call per sync is enough to observe an engine:

* who it belongs to (pod name, namespace, source, uid, container name, attempt);
* the versioned spec hash, and the canonical spec itself, so that a container whose hash
  was written by another hash version is compared field by field instead of restarted;
* the restart count that drives the crash-loop back-off;
* the preStop handler and the pod's grace period, so a container can be stopped
  gracefully even after its pod is gone from the desired state (the modern kubelet keeps
  them as an annotation and a label too: ``io.kubernetes.pod.terminationGracePeriod``);
* where its termination message is and whether its log stands in for an empty one, so
  that ``podsync status`` reads a message without the pod file (the modern kubelet's
  ``io.kubernetes.container.terminationMessagePath`` and ``...Policy`` annotations).

Every container also carries its pod's labels and annotations (as labels and
``annotation.<key>``), as they were when it was made: an edit of them replaces no
container (issue 27), so they may be stale, and podsync never reads them back - whatever
needs them takes them from the desired pod.

A container with any ``io.kubernetes.`` label belongs to a Kubernetes node (Docker
Desktop's Kubernetes, cri-dockerd, dockershim) and is never podsync's, whatever its name.
A container without labels whose name is exactly the seed's ``k8s_`` format is one a
2014 kubelet left behind: podsync takes it over only when asked
(``PlanOptions.adopt_2014_containers``). Anything else is foreign and never touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from podsync.model._pod import (
    DEFAULT_TERMINATION_MESSAGE_PATH,
    Handler,
    HTTPGetAction,
    TCPSocketAction,
    TerminationMessagePolicy,
)

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "LABEL_ATTEMPT",
    "LABEL_CONTAINER",
    "LABEL_CONTENT_VOLUMES",
    "LABEL_EMPTY_DIRS",
    "LABEL_GRACE_PERIOD",
    "LABEL_INIT_INDEX",
    "LABEL_INIT_RESTART_POLICY",
    "LABEL_JOINS",
    "LABEL_POD_NAME",
    "LABEL_POD_NAMESPACE",
    "LABEL_POD_SOURCE",
    "LABEL_POD_UID",
    "LABEL_PRE_STOP",
    "LABEL_RECORD_CONTAINER",
    "LABEL_RECORD_DATA",
    "LABEL_RECORD_GENERATION",
    "LABEL_RECORD_TIME",
    "LABEL_RECORD_VOLUME_CREATED",
    "LABEL_RESTART_COUNT",
    "LABEL_SCOPE",
    "LABEL_SPEC",
    "LABEL_SPEC_HASH",
    "LABEL_TERMINATION_MESSAGE_POLICY",
    "LABEL_VOLUME_CLAIM",
    "LABEL_VOLUME_KIND",
    "LABEL_VOLUME_NAME",
    "LABEL_VOLUME_NAMESPACE",
    "VOLUME_KIND_CLAIM",
    "VOLUME_KIND_CONTENT",
    "VOLUME_KIND_CONTENT_RECORD",
    "VOLUME_KIND_EMPTY_DIR",
    "VOLUME_KIND_POD_STATE",
    "VOLUME_KIND_PROBE_RECORD",
    "VOLUME_KIND_STOP_RECORD",
    "decode_handler",
    "encode_handler",
    "recorded_message_path",
    "recorded_message_policy",
]

_PREFIX = "io.podsync."

#: The prefix of podsync's own labels: a pod's labels cannot use it
#: (``podsync.load.convert._document``, ``podsync.planner._admission``), so they never
#: overwrite podsync's record of a container.
PODSYNC_LABEL_PREFIX = _PREFIX

#: The prefix under which a pod's annotations become container labels
#: (``annotation.<key>``), as the dockershim stored them: annotations and labels are
#: two maps in Kubernetes and would collide as one.
ANNOTATION_LABEL_PREFIX = "annotation."

#: The prefix of the labels the modern kubelet's Docker runtimes (dockershim,
#: cri-dockerd) put on every container they run (``io.kubernetes.pod.uid``,
#: ``io.kubernetes.docker.type``, ...): a container with one is never podsync's.
KUBERNETES_LABEL_PREFIX = "io.kubernetes."

#: The name of the container's pod.
LABEL_POD_NAME = _PREFIX + "pod.name"
#: The namespace of the container's pod.
LABEL_POD_NAMESPACE = _PREFIX + "pod.namespace"
#: Where the container's pod came from (``Pod.source``: ``file``, ``http``, ``api``).
LABEL_POD_SOURCE = _PREFIX + "pod.source"
#: The ownership label: podsync acts on containers that carry it.
LABEL_POD_UID = _PREFIX + "pod.uid"
#: The scope that made the container or named volume (``PlanOptions.scope``): a name;
#: absent on what an unscoped sync, the node scope (``podsync run``) or a podsync
#: before 0.2.0 made. A sync in a named scope removes only what carries its name;
#: what carries another scope's is never its own (``podsync.planner._scope``). Not in
#: the spec hash: a container moved to another scope is not replaced.
LABEL_SCOPE = _PREFIX + "scope"
#: The container's name in its pod spec (``net`` for the network container).
LABEL_CONTAINER = _PREFIX + "container.name"
#: The instance number of the pod container, also the last field of its name.
LABEL_ATTEMPT = _PREFIX + "container.attempt"
#: ``<version>:<sha256 hex>`` (see ``SpecHash``).
LABEL_SPEC_HASH = _PREFIX + "spec-hash"
#: The canonical spec as compact JSON, for field-by-field comparison across versions.
LABEL_SPEC = _PREFIX + "spec"
#: How many times this container was restarted after exiting (crash-loop back-off).
LABEL_RESTART_COUNT = _PREFIX + "restart-count"
#: The preStop handler as JSON, absent when there is none.
LABEL_PRE_STOP = _PREFIX + "pre-stop"
#: The index of an init container in its pod's ``initContainers`` ("0", "1" ...); absent
#: on app and network containers. With it, an observation alone (no pod file) tells init
#: containers from app containers, and in which order they ran.
LABEL_INIT_INDEX = _PREFIX + "container.init-index"
#: ``Always`` on a sidecar (an init container with ``restartPolicy: Always``); absent on
#: every other container.
LABEL_INIT_RESTART_POLICY = _PREFIX + "container.restart-policy"
#: The container's ``terminationMessagePolicy`` (``File`` or ``FallbackToLogsOnError``),
#: on every app, init and sidecar container (never the network container): whether its
#: log tail stands in for an empty termination message of a failed run. Not in the spec
#: hash (the policy is podsync's to read, not the engine's), so containers made before
#: it was recorded lack it and are not replaced: ``recorded_message_policy``. Where the
#: message is needs no label of its own: the spec label records the container's
#: ``terminationMessagePath`` (``recorded_message_path``).
LABEL_TERMINATION_MESSAGE_POLICY = _PREFIX + "container.termination-message-policy"
#: The name of the network container a container joins (its network, and its IPC
#: namespace when the pod shares one), on every app, init and sidecar container made
#: since issue 31; never on a network container. Not in the spec hash. A network
#: container is removed only after every container that joins it (``planner._joins``:
#: the kubelet keeps a sandbox while it has containers, and podman refuses to remove a
#: container others join). Containers made before it was recorded, and a 2014 kubelet's,
#: lack it: which network container they join is then inferred from creation times.
LABEL_JOINS = _PREFIX + "container.joins"
#: The pod's terminationGracePeriodSeconds (whole seconds), absent when the pod sets
#: none: with the preStop handler, how the container stops once its pod is gone.
LABEL_GRACE_PERIOD = _PREFIX + "pod.termination-grace-period"
#: On a pod's network container: ``shareable`` when its IPC namespace is the pod's, which
#: the pod's other containers join (issue 27). Network containers of podsync 0.2 and
#: earlier lack it: their pods keep an IPC namespace per container until rebuilt.
LABEL_POD_IPC = _PREFIX + "pod.ipc"
#: The value of ``LABEL_POD_IPC``.
POD_IPC_SHAREABLE = "shareable"
#: On a pod's network container: ``mounted`` when it mounts the pod's state volume
#: (``pod_state_mount``), through which the termination-message files of the pod's
#: containers are written. Network containers made before (issue 27) lack it: the files
#: of their pods are written through a container made for each.
LABEL_POD_STATE = _PREFIX + "pod.state"
#: The value of ``LABEL_POD_STATE``.
POD_STATE_MOUNTED = "mounted"

# -- named volumes (``podsync.volume_ownership``) ------------------------------------------

#: The ownership label of a named volume: podsync made the volume, for what its value
#: says (``claim``: a ``persistentVolumeClaim``'s data). A volume without it is not
#: podsync's, whatever its name.
LABEL_VOLUME_KIND = _PREFIX + "volume.kind"
#: The namespace of the volume's claim (or pod).
LABEL_VOLUME_NAMESPACE = _PREFIX + "volume.namespace"
#: The claim name (``claimName``) whose data the volume holds.
LABEL_VOLUME_CLAIM = _PREFIX + "volume.claim"
#: ``LABEL_VOLUME_KIND`` of a claim's volume: kept until someone removes it by hand.
VOLUME_KIND_CLAIM = "claim"
#: ``LABEL_VOLUME_KIND`` of a pod's state volume (``podsync.spec._volumes.
#: pod_state_volume_name``): its containers' termination-message files; it lives as
#: long as its pod (``LABEL_POD_UID``), and podsync removes it with the pod.
VOLUME_KIND_POD_STATE = "pod-state"
#: ``LABEL_VOLUME_KIND`` of a stop record (``podsync.spec._records``): an empty volume whose
#: labels say that podsync stopped the container ``LABEL_RECORD_CONTAINER`` of the pod
#: ``LABEL_POD_UID``, and why (``LABEL_RECORD_DATA``). Removed with the container.
VOLUME_KIND_STOP_RECORD = "stop-record"
#: ``LABEL_VOLUME_KIND`` of a probe record: an empty volume whose labels hold the
#: prober's states (``LABEL_RECORD_DATA``) of the running container
#: ``LABEL_RECORD_CONTAINER``, as of ``LABEL_RECORD_TIME``.
VOLUME_KIND_PROBE_RECORD = "probe-record"
#: The container id a record volume is about.
LABEL_RECORD_CONTAINER = _PREFIX + "record.container-id"
#: What a record volume says (a stop's reason; a probe record's states as JSON).
LABEL_RECORD_DATA = _PREFIX + "record.data"
#: When a probe record was made (seconds since the epoch, ``repr`` of a float): the
#: newest of a container's records wins.
LABEL_RECORD_TIME = _PREFIX + "record.time"
#: The label of the short-lived containers through which a runtime writes into and reads
#: out of a volume (``VolumeRuntime.write_volume``): created, never started, removed at once.
#: Its value says what the container is for (``volume``).
LABEL_HELPER = _PREFIX + "helper"
#: The name of the pod volume (``spec.volumes[].name``) whose data a volume of one pod
#: holds; the pod is the volume's ``LABEL_POD_UID``.
LABEL_VOLUME_NAME = _PREFIX + "volume.name"
#: ``LABEL_VOLUME_KIND`` of an ``emptyDir`` volume's engine volume: it lives as long as
#: its pod (``LABEL_POD_UID``), and podsync removes it with the pod.
VOLUME_KIND_EMPTY_DIR = "empty-dir"
#: On a container: ``engine`` when it mounts its pod's on-disk ``emptyDir`` volumes as
#: engine volumes. A container without it that mounts one was made by an earlier
#: podsync (or beside such a container) and binds the host directory
#: ``<root>/<pod uid>/volumes/empty/<volume>`` instead: while one runs, the pod's new
#: containers bind the same directories (see ``podsync.planner._pod``).
LABEL_EMPTY_DIRS = _PREFIX + "empty-dirs"
#: ``LABEL_EMPTY_DIRS``'s value.
EMPTY_DIRS_ENGINE = "engine"
#: ``LABEL_VOLUME_KIND`` of the engine volume holding the files of a ``configMap``,
#: ``secret`` or ``downwardAPI`` volume: it lives as long as its pod (``LABEL_POD_UID``),
#: podsync writes it and removes it with the pod.
VOLUME_KIND_CONTENT = "content"
#: On a container that mounts its pod's configMap, secret or downwardAPI volumes as
#: engine volumes: where, as compact JSON (``{"config":"/etc/app"}``: each such volume
#: it mounts and its first mount path), so that what podsync wrote there is read back
#: through the container (``FileRuntime.read_container_file``). A container without it
#: that mounts one was made by an earlier podsync and binds the host directory
#: ``<root>/<pod uid>/volumes/<kind>/<volume>``, which podsync keeps writing while such
#: a container runs.
LABEL_CONTENT_VOLUMES = _PREFIX + "content-volumes"


#: ``LABEL_VOLUME_KIND`` of a content record (``podsync.spec._content_records``): an empty
#: volume whose labels say what podsync last wrote into the engine volume of the pod
#: volume ``LABEL_VOLUME_NAME`` of pod ``LABEL_POD_UID`` (``LABEL_RECORD_DATA``: the
#: ``..podsync`` file's JSON), which generation of record it is
#: (``LABEL_RECORD_GENERATION``) and which engine volume it describes, by its creation
#: time (``LABEL_RECORD_VOLUME_CREATED``). Removed with its pod.
VOLUME_KIND_CONTENT_RECORD = "content-record"
#: A content record's generation (a decimal number): each write's record is one more
#: than the highest it replaces, so that of several the newest wins.
LABEL_RECORD_GENERATION = _PREFIX + "record.generation"
#: The ``CreatedAt`` the engine reported for the volume a content record describes: a
#: volume made again under the same name reports another, and the record is then not
#: about it.
LABEL_RECORD_VOLUME_CREATED = _PREFIX + "record.volume-created"


def encode_handler(handler: Handler) -> str:
    """A handler as compact JSON, for ``LABEL_PRE_STOP``."""
    data: dict[str, Any]
    if handler.exec_command is not None:
        data = {"exec": list(handler.exec_command)}
    elif handler.http_get is not None:
        h = handler.http_get
        data = {"httpGet": {"port": h.port, "path": h.path, "host": h.host, "scheme": h.scheme}}
    else:
        assert handler.tcp_socket is not None
        t = handler.tcp_socket
        data = {"tcpSocket": {"port": t.port, "host": t.host}}
    return _compact(data)


# json.dumps(sort_keys=True, separators=(",", ":")), its encoder built once.
_compact = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


def decode_handler(text: str) -> Handler | None:
    """The handler ``encode_handler`` wrote; ``None`` for anything else (a label is
    engine data, so it is never trusted to be well-formed)."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or len(data) != 1:
            return None
        if isinstance(data.get("exec"), list) and all(isinstance(a, str) for a in data["exec"]):
            return Handler(exec_command=tuple(data["exec"]))
        if isinstance(data.get("httpGet"), dict):
            h = data["httpGet"]
            return Handler(
                http_get=HTTPGetAction(
                    port=_port(h.get("port")),
                    path=str(h.get("path", "")),
                    host=str(h.get("host", "")),
                    scheme=str(h.get("scheme", "HTTP")),
                )
            )
        if isinstance(data.get("tcpSocket"), dict):
            t = data["tcpSocket"]
            return Handler(
                tcp_socket=TCPSocketAction(port=_port(t.get("port")), host=str(t.get("host", "")))
            )
    except (ValueError, TypeError):
        return None
    return None


def _port(value: object) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"bad port {value!r}")
    return value


#: The largest grace period podsync writes or reads: Docker takes a stop timeout in
#: whole seconds as an int, and this one fits every platform's (about 68 years).
MAX_GRACE_PERIOD = 2**31 - 1


def decode_grace_period(text: str) -> int | None:
    """The grace period ``LABEL_GRACE_PERIOD`` holds; ``None`` for anything but a whole
    number of seconds from 0 to ``MAX_GRACE_PERIOD`` (a label is engine data)."""
    if not text.isascii() or not text.isdigit() or len(text) > len(str(MAX_GRACE_PERIOD)):
        return None
    seconds = int(text)
    return seconds if seconds <= MAX_GRACE_PERIOD else None


def recorded_message_path(labels: Mapping[str, str]) -> str | None:
    """Where the termination-message file of the container with ``labels`` is: the
    ``terminationMessagePath`` its spec label (``LABEL_SPEC``) records - every spec hash
    version writes it - or ``/dev/termination-log`` when that is empty (the default,
    ``SetDefaults_Container``). ``None`` when the container records none: no spec label,
    one that cannot be read (a label is engine data, never trusted to be well-formed),
    or a network container's."""
    text = labels.get(LABEL_SPEC)
    if text is None:
        return None
    try:
        spec = json.loads(text)
    except ValueError:
        return None
    path = spec.get("termination_message_path") if isinstance(spec, dict) else None
    if not isinstance(path, str):
        return None
    return path or DEFAULT_TERMINATION_MESSAGE_PATH


def recorded_message_policy(labels: Mapping[str, str]) -> TerminationMessagePolicy | None:
    """The ``terminationMessagePolicy`` that ``LABEL_TERMINATION_MESSAGE_POLICY`` records
    on the container with ``labels``; ``None`` without one (a container made before
    podsync recorded it) or with a value that is no policy."""
    try:
        return TerminationMessagePolicy(labels.get(LABEL_TERMINATION_MESSAGE_POLICY, ""))
    except ValueError:
        return None
