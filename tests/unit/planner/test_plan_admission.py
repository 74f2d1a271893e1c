"""Admission as the kubelet admits (issue 27), in the manner of the kubelet's
``TestComputePodActions``: one table, one row per case - the pod files, what the engine
holds, the node and the options - and the rejections and creates the plan must show.

The rules (``podsync.planner._admission``, ``_node_resources``, ``_host_ports``):

1. A finished pod (Succeeded or Failed: it ran and none of its containers will run
   again) holds nothing: its host ports and its requests go to other pods
   (``HandlePodAdditions`` admits against ``filterOutInactivePods``). While its network
   container still runs (it is stopped by this very plan) the port stays taken: the new
   pod waits one sync rather than race the stop.
2. Every check covers every container: app, init and sidecar containers.
3. Requests are checked against the node's capacity less ``system_reserved``, in the
   kubelet's admission order (running pods first, then input order), each pod against
   the active admitted ones (``OutOfcpu``, ``OutOfmemory``); the kubelet's effective
   request (``PodRequests``) counts init containers and sidecars.
4. A sidecar's host ports are published and checked like an app container's.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from podsync import (
    Container,
    ObservedContainer,
    Pod,
    Port,
    ResourceList,
    RestartPolicy,
    Volume,
    VolumeMount,
    parse_pods,
)
from podsync.actions._actions import Create, Kill, Plan, Reason
from podsync.actions._options import NODE_SCOPE, AllowedHostPath, PlanOptions
from podsync.model._security import (
    Capabilities,
    PodSecurityContext,
    ProfileType,
    SecurityContext,
    SecurityProfile,
)
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_RESTART_COUNT
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import ownership
from podsync.spec._ports import network_ports
from podsync.status._pod import PodPhase, pod_status
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
IMAGES = {"busybox:latest", "registry.k8s.io/pause:3.10"}
OPTIONS = PlanOptions(scope=NODE_SCOPE, root_dir="/var/lib/podsync")
# How the rows' engines were made: one pod at a time, the others left running.
_ALONE = attrs.evolve(OPTIONS, allow_deletions=False)
GIB = 1024**3


def _file(name: str, spec: str) -> Pod:
    """The pod of a pod file named ``name`` whose ``spec:`` block is ``spec``."""
    text = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n{spec}"
    (pod,) = parse_pods(text, source_name=f"pods/{name}.yaml", source="file")
    return pod


def _app(extra: str = "", *, name: str = "app") -> str:
    """One container block, with ``extra`` lines (already indented) under it."""
    return f"  - name: {name}\n    image: busybox\n{extra}"


def _requests(cpu: str = "", memory: str = "", *, limits: bool = False) -> str:
    kind = "limits" if limits else "requests"
    fields = ", ".join(f for f in (cpu and f"cpu: {cpu}", memory and f"memory: {memory}") if f)
    return f"    resources: {{{kind}: {{{fields}}}}}\n"


def _port(host: int, container: int = 80) -> str:
    return f"    ports:\n    - {{containerPort: {container}, hostPort: {host}}}\n"


PODS = {
    pod.name: pod
    for pod in (
        # Host ports.
        _file("job", "  restartPolicy: Never\n  containers:\n" + _app(_port(8080))),
        _file("retry", "  restartPolicy: OnFailure\n  containers:\n" + _app(_port(8080))),
        _file("server", "  containers:\n" + _app(_port(8080))),
        _file("web", "  containers:\n" + _app(_port(8080))),
        _file(
            "proxied",
            "  initContainers:\n"
            + _app("    restartPolicy: Always\n" + _port(8080, 9090), name="proxy")
            + "  containers:\n"
            + _app(),
        ),
        # Resources (milli-CPU and bytes; the node of the rows has 2 CPUs and 4 GiB).
        _file("batch", "  restartPolicy: Never\n  containers:\n" + _app(_requests("1500m"))),
        _file("small", "  containers:\n" + _app(_requests("400m"))),
        _file("medium", "  containers:\n" + _app(_requests("1"))),
        _file("large", "  containers:\n" + _app(_requests("1500m"))),
        _file("huge", "  containers:\n" + _app(_requests("3"))),
        _file("hungry", "  containers:\n" + _app(_requests(memory="5Gi"))),
        _file("limited", "  containers:\n" + _app(_requests("3", "1Gi", limits=True))),
        _file("nothing", "  containers:\n" + _app()),
        _file(
            "huge-web",
            "  containers:\n" + _app(_requests("3") + _port(8080)),
        ),
        _file(
            "medium-web",
            "  containers:\n" + _app(_requests("1500m") + _port(8080)),
        ),
        _file(
            "init-heavy",
            "  initContainers:\n"
            + _app(_requests("3"), name="setup")
            + "  containers:\n"
            + _app(_requests("1")),
        ),
        _file(
            "sidecar-heavy",
            "  initContainers:\n"
            + _app("    restartPolicy: Always\n" + _requests("1"), name="proxy")
            + "  containers:\n"
            + _app(_requests("1500m")),
        ),
        _file(
            "init-after-sidecar",
            "  initContainers:\n"
            + _app("    restartPolicy: Always\n" + _requests("500m"), name="proxy")
            + _app(_requests("1800m"), name="setup")
            + "  containers:\n"
            + _app(_requests("100m")),
        ),
        # Every container is checked.
        _file(
            "privileged-init",
            "  initContainers:\n"
            + _app("    securityContext: {privileged: true}\n", name="setup")
            + "  containers:\n"
            + _app(),
        ),
        _file(
            "privileged-sidecar",
            "  initContainers:\n"
            + _app(
                "    restartPolicy: Always\n    securityContext: {privileged: true}\n",
                name="proxy",
            )
            + "  containers:\n"
            + _app(),
        ),
        _file(
            "tiny-init",
            "  initContainers:\n"
            + _app(_requests(memory="1Mi", limits=True), name="setup")
            + "  containers:\n"
            + _app(),
        ),
        # hostPath prefixes.
        _file(
            "host-path-second",
            "  volumes:\n  - {name: scratch, emptyDir: {}}\n"
            "  - {name: etc, hostPath: {path: /etc}}\n  containers:\n" + _app(),
        ),
        _file(
            "host-path-data",
            "  volumes:\n  - {name: d, hostPath: {path: /data/x}}\n  containers:\n" + _app(),
        ),
    )
}


def _twin(name: str, uid: str, extra: str = "") -> Pod:
    """A pod file that gives its uid (``metadata.uid``); ``extra`` as ``_app``'s."""
    text = (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  uid: {uid}\n"
        "spec:\n  containers:\n" + _app(extra)
    )
    (pod,) = parse_pods(text, source_name=f"pods/{name}.yaml", source="file")
    return pod


def _dns(name: str, port: str) -> Pod:
    return _file(name, "  containers:\n" + _app(f"    ports:\n    - {port}\n"))


for _pod in (
    _dns("dns", "{containerPort: 53, hostPort: 5353, protocol: UDP, hostIP: 127.0.0.1}"),
    _dns("dns-tcp", "{containerPort: 53, hostPort: 5353}"),
    _dns("dns-other-ip", "{containerPort: 53, hostPort: 5353, protocol: UDP, hostIP: 127.0.0.2}"),
    _dns("dns-any", "{containerPort: 53, hostPort: 5353, protocol: UDP}"),
    _dns("dns-same-ip", "{containerPort: 54, hostPort: 5353, protocol: UDP, hostIP: 127.0.0.1}"),
    _file(
        "dns-both",
        "  containers:\n"
        + _app(
            "    ports:\n    - {containerPort: 53, hostPort: 5353, protocol: UDP}\n"
            "    - {containerPort: 53, hostPort: 5353}\n"
        ),
    ),
):
    PODS[_pod.name] = _pod

for _pod in (
    _file("mem-a", "  containers:\n" + _app(_requests(memory="3Gi"))),
    _file("mem-b", "  containers:\n" + _app(_requests(memory="2Gi"))),
):
    PODS[_pod.name] = _pod

PODS["one-milli"] = _file("one-milli", "  containers:\n" + _app(_requests("1m")))
PODS["cpu-init"] = _file(
    "cpu-init",
    "  initContainers:\n"
    + _app("    restartPolicy: Always\n" + _requests("500m"), name="s1")
    + _app("    restartPolicy: Always\n" + _requests("500m"), name="s2")
    + _app(_requests("1200m"), name="setup")
    + "  containers:\n"
    + _app(),
)
PODS["seven"] = _file("seven", "  containers:\n" + _app(_requests("700m")))
PODS["mem-sum"] = _file(
    "mem-sum",
    "  initContainers:\n"
    + _app("    restartPolicy: Always\n" + _requests(memory="2Gi"), name="s1")
    + "  containers:\n"
    + _app(_requests(memory="1Gi"))
    + _app(_requests(memory="2Gi"), name="b"),
)
PODS["mem-init"] = _file(
    "mem-init",
    "  initContainers:\n"
    + _app("    restartPolicy: Always\n" + _requests(memory="1Gi"), name="s1")
    + _app("    restartPolicy: Always\n" + _requests(memory="1Gi"), name="s2")
    + _app(_requests(memory="3Gi"), name="setup")
    + "  containers:\n"
    + _app(),
)

# The running pod "large", edited in code to publish one host port twice: it is rejected,
# and keeps running (and holding its CPU).
PODS["large-twice"] = attrs.evolve(
    PODS["large"],
    containers=(
        attrs.evolve(PODS["large"].containers[0], ports=(Port(80, 8080),)),
        Container("b", "busybox", ports=(Port(81, 8080),)),
    ),
)

UID = "0b0e7ab1-5a9c-4c57-9d5e-2f8f5c1d7a10"
PODS["twin-a"] = _twin("twin-a", UID)
PODS["twin-b"] = _twin("twin-b", UID)
PODS["twin-c"] = _twin("twin-c", UID)
# Another file with the name of pods/twin-a.yaml's pod, and a uid of its own.
PODS["twin-a-again"] = _twin("twin-a", "5e1f3c0a-7d1b-4d8e-a3b2-9c4f6e2a1b77")
# The pod file of "nothing", edited to ask for a host port.
PODS["nothing-web"] = _file("nothing", "  containers:\n" + _app(_port(8080)))
# The pod file of "nothing", edited to a memory limit no engine takes.
PODS["nothing-tiny"] = _file(
    "nothing", "  containers:\n" + _app(_requests(memory="1Mi", limits=True))
)
# The pod file of "web", given a uid of its own (a new pod with the old one's name).
PODS["web-renewed"] = _twin("web", "7c3e9d2a-1f4b-4e6a-9b8c-0d5e2f7a3c91", _port(8080))

NODE = ResourceList(cpu=2000, memory=4 * GIB)


@attrs.frozen
class Case:
    """One row: ``desired`` pods (by name, in input order) planned against an engine on
    which ``running`` pods run, ``finished`` pods ran to their end (every app container
    exited with ``exit_code``, the network container stopped) and ``finishing`` pods
    just exited (their network container still runs) and a 2014 kubelet runs ``legacy``
    pods (no labels: nothing records their ports); the node has ``capacity``.

    ``rejected``: (pod, reason, message) in input order; ``created``: the pods the plan
    creates containers for; ``stopped``: the pods it stops containers of."""

    id: str
    desired: Sequence[str]
    rejected: Sequence[tuple[str, Reason, str]] = ()
    created: Sequence[str] = ()
    stopped: Sequence[str] = ()
    running: Sequence[str] = ()
    legacy: Sequence[str] = ()
    finished: Sequence[str] = ()
    finishing: Sequence[str] = ()
    exit_code: int = 0
    restarts: int = 0
    capacity: ResourceList | None = NODE
    options: dict[str, object] = attrs.field(factory=dict)


def _cpu(requested: int, used: int, capacity: int = 2000) -> str:
    return (
        f"Node didn't have enough resource: cpu, requested: {requested}, used: {used}, "
        f"capacity: {capacity}"
    )


CASES = [
    # --- 1. finished pods hold nothing -------------------------------------------------
    Case(
        "a finished job's host port goes to a new pod",
        desired=["job", "web"],
        finished=["job"],
        created=["web"],
    ),
    Case(
        "a job that failed under Never has finished too",
        desired=["job", "web"],
        finished=["job"],
        exit_code=1,
        created=["web"],
    ),
    Case(
        "a job whose network container still runs holds its port one more sync",
        desired=["web", "job"],
        finishing=["job"],
        rejected=[
            (
                "web",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is held by running pod default/job",
            )
        ],
        stopped=["job"],
    ),
    Case(
        "an OnFailure job that failed will run again: it keeps its port",
        desired=["web", "retry"],
        finishing=["retry"],
        exit_code=1,
        rejected=[
            (
                "web",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is already used by pod default/retry",
            )
        ],
        created=["retry"],
    ),
    Case(
        "a server waiting out its crash-loop back-off keeps its port",
        desired=["web", "server"],
        finishing=["server"],
        exit_code=1,
        restarts=3,
        rejected=[
            (
                "web",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is already used by pod default/server",
            )
        ],
    ),
    Case(
        "a server whose containers exited will run again: it keeps its port",
        desired=["web", "server"],
        finishing=["server"],
        rejected=[
            (
                "web",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is already used by pod default/server",
            )
        ],
        created=["server"],
    ),
    Case(
        "a finished job's requests are not counted",
        desired=["batch", "large"],
        finished=["batch"],
        created=["large"],
    ),
    Case(
        "a running job's requests are counted",
        desired=["large", "batch"],
        running=["batch"],
        rejected=[("large", Reason.OUT_OF_CPU, _cpu(1500, 1500))],
    ),
    # --- 2. every check covers every container ----------------------------------------
    Case(
        "a privileged init container",
        desired=["privileged-init", "nothing"],
        rejected=[
            (
                "privileged-init",
                Reason.PRIVILEGED_NOT_ALLOWED,
                'violates PodSecurity "baseline": privileged (container "setup" must not set '
                "securityContext.privileged=true; allow with --allow-privileged)",
            )
        ],
        created=["nothing"],
    ),
    Case(
        "a privileged sidecar",
        desired=["privileged-sidecar"],
        rejected=[
            (
                "privileged-sidecar",
                Reason.PRIVILEGED_NOT_ALLOWED,
                'violates PodSecurity "baseline": privileged (container "proxy" must not set '
                "securityContext.privileged=true; allow with --allow-privileged)",
            )
        ],
    ),
    Case(
        "a privileged init container, allowed",
        desired=["privileged-init"],
        options={"allow_privileged": True},
        created=["privileged-init"],
    ),
    Case(
        "an init container under the engine's memory minimum",
        desired=["tiny-init"],
        rejected=[
            (
                "tiny-init",
                Reason.INVALID_POD,
                "container setup: memory limit 1048576 bytes is below the container "
                "engine's minimum of 6MB (6291456 bytes)",
            )
        ],
    ),
    # --- 3. requests against what the node has -----------------------------------------
    Case("requests that fit", desired=["medium"], created=["medium"]),
    Case(
        "a CPU request beyond the node",
        desired=["huge"],
        rejected=[("huge", Reason.OUT_OF_CPU, _cpu(3000, 0))],
    ),
    Case(
        "a memory request beyond the node",
        desired=["hungry"],
        rejected=[
            (
                "hungry",
                Reason.OUT_OF_MEMORY,
                "Node didn't have enough resource: memory, requested: 5368709120, used: 0, "
                "capacity: 4294967296",
            )
        ],
    ),
    Case(
        "limits stand for missing requests",
        desired=["limited"],
        rejected=[("limited", Reason.OUT_OF_CPU, _cpu(3000, 0))],
    ),
    Case(
        "the system's reserve is not the pods'",
        desired=["large"],
        options={"system_reserved": ResourceList(cpu=600)},
        rejected=[("large", Reason.OUT_OF_CPU, _cpu(1500, 0, 1400))],
    ),
    Case(
        "a reserve beyond the node leaves nothing",
        desired=["small", "nothing"],
        options={"system_reserved": ResourceList(cpu=5000, memory=8 * GIB)},
        rejected=[("small", Reason.OUT_OF_CPU, _cpu(400, 0, 0))],
        created=["nothing"],
    ),
    Case(
        "earlier pods are admitted first; a later one that fits still is",
        desired=["large", "medium", "small"],
        rejected=[("medium", Reason.OUT_OF_CPU, _cpu(1000, 1500))],
        created=["large", "small"],
    ),
    Case(
        "a running pod comes first, wherever it is listed",
        desired=["medium", "large"],
        running=["large"],
        rejected=[("medium", Reason.OUT_OF_CPU, _cpu(1000, 1500))],
    ),
    Case(
        "a running pod is never rejected for its requests",
        desired=["large", "huge"],
        running=["huge"],
        rejected=[("large", Reason.OUT_OF_CPU, _cpu(1500, 3000))],
    ),
    Case(
        "a pod that requests nothing fits on a full node",
        desired=["huge", "nothing"],
        running=["huge"],
        created=["nothing"],
    ),
    Case(
        "app containers' and sidecars' memory adds up",
        desired=["mem-sum"],
        rejected=[
            (
                "mem-sum",
                Reason.OUT_OF_MEMORY,
                "Node didn't have enough resource: memory, requested: 5368709120, "
                "used: 0, capacity: 4294967296",
            )
        ],
    ),
    Case(
        "an init container's memory beside the sidecars before it",
        desired=["mem-init"],
        rejected=[
            (
                "mem-init",
                Reason.OUT_OF_MEMORY,
                "Node didn't have enough resource: memory, requested: 5368709120, "
                "used: 0, capacity: 4294967296",
            )
        ],
    ),
    Case(
        "a memory reserve; a request that just fits",
        desired=["mem-a", "mem-b"],
        options={"system_reserved": ResourceList(memory=1024**3)},
        rejected=[
            (
                "mem-b",
                Reason.OUT_OF_MEMORY,
                "Node didn't have enough resource: memory, requested: 2147483648, "
                "used: 3221225472, capacity: 3221225472",
            )
        ],
        created=["mem-a"],
    ),
    Case(
        "an init container's CPU beside every sidecar before it",
        desired=["cpu-init"],
        rejected=[("cpu-init", Reason.OUT_OF_CPU, _cpu(2200, 0))],
    ),
    Case(
        "the smallest request does not fit on a full node",
        desired=["huge", "one-milli"],
        running=["huge"],
        rejected=[("one-milli", Reason.OUT_OF_CPU, _cpu(1, 3000))],
    ),
    Case(
        "CPU requests add up",
        desired=["small", "medium", "seven"],
        rejected=[("seven", Reason.OUT_OF_CPU, _cpu(700, 1400))],
        created=["small", "medium"],
    ),
    Case(
        "memory requests add up",
        desired=["mem-a", "mem-b"],
        rejected=[
            (
                "mem-b",
                Reason.OUT_OF_MEMORY,
                "Node didn't have enough resource: memory, requested: 2147483648, "
                "used: 3221225472, capacity: 4294967296",
            )
        ],
        created=["mem-a"],
    ),
    Case(
        "a running pod rejected for its ports still holds its requests",
        desired=["large-twice", "medium"],
        running=["large"],
        rejected=[
            ("large", Reason.HOST_PORT_CONFLICT, "host port 8080/TCP is used twice in the pod"),
            ("medium", Reason.OUT_OF_CPU, _cpu(1000, 1500)),
        ],
    ),
    Case(
        "an init container runs alone: the pod needs its request",
        desired=["init-heavy"],
        rejected=[("init-heavy", Reason.OUT_OF_CPU, _cpu(3000, 0))],
    ),
    Case(
        "a sidecar runs beside the app containers: their requests add up",
        desired=["sidecar-heavy"],
        rejected=[("sidecar-heavy", Reason.OUT_OF_CPU, _cpu(2500, 0))],
    ),
    Case(
        "an init container runs beside the sidecars before it",
        desired=["init-after-sidecar"],
        rejected=[("init-after-sidecar", Reason.OUT_OF_CPU, _cpu(2300, 0))],
    ),
    Case(
        "resources are checked before host ports",
        desired=["huge-web"],
        running=["web"],
        rejected=[("huge-web", Reason.OUT_OF_CPU, _cpu(3000, 0))],
        stopped=["web"],
    ),
    Case(
        "a pod rejected for its port holds no resources",
        desired=["medium-web", "medium", "web"],
        running=["web"],
        rejected=[
            (
                "medium-web",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is already used by pod default/web",
            )
        ],
        created=["medium"],
    ),
    Case(
        "without the node's capacity no request is checked",
        desired=["huge"],
        capacity=None,
        created=["huge"],
    ),
    # --- 4. a sidecar's host ports ------------------------------------------------------
    Case(
        "a sidecar's host port held by a running pod",
        desired=["proxied"],
        running=["web"],
        rejected=[
            (
                "proxied",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is held by running pod default/web",
            )
        ],
        stopped=["web"],
    ),
    Case(
        "a running sidecar keeps its host port",
        desired=["web", "proxied"],
        running=["proxied"],
        rejected=[
            (
                "web",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is already used by pod default/proxied",
            )
        ],
    ),
    # --- what a running network container records ---------------------------------------
    Case(
        "a recorded UDP port does not hold the TCP one",
        desired=["dns-tcp"],
        running=["dns"],
        options={"allow_deletions": False},
        created=["dns-tcp"],
    ),
    Case(
        "a recorded address does not hold another one",
        desired=["dns-other-ip"],
        running=["dns"],
        options={"allow_deletions": False},
        created=["dns-other-ip"],
    ),
    Case(
        "a recorded address holds itself",
        desired=["dns-same-ip"],
        running=["dns"],
        options={"allow_deletions": False},
        rejected=[
            (
                "dns-same-ip",
                Reason.HOST_PORT_CONFLICT,
                "host port 127.0.0.1:5353/UDP is held by running pod default/dns",
            )
        ],
    ),
    Case(
        "a recorded address holds every address",
        desired=["dns-any"],
        running=["dns"],
        options={"allow_deletions": False},
        rejected=[
            (
                "dns-any",
                Reason.HOST_PORT_CONFLICT,
                "host port 5353/UDP is held by running pod default/dns",
            )
        ],
    ),
    Case(
        "of two running pods that hold a port, the first by name is named",
        desired=["dns-any"],
        # Listed by the engine in either order (test_admission plans both).
        running=["dns-other-ip", "dns"],
        options={"allow_deletions": False},
        rejected=[
            (
                "dns-any",
                Reason.HOST_PORT_CONFLICT,
                "host port 5353/UDP is held by running pod default/dns",
            )
        ],
    ),
    Case(
        "a running pod's every recorded port is held",
        desired=["dns-tcp"],
        running=["dns-both"],
        options={"allow_deletions": False},
        rejected=[
            (
                "dns-tcp",
                Reason.HOST_PORT_CONFLICT,
                "host port 5353/TCP is held by running pod default/dns-both",
            )
        ],
    ),
    Case(
        "a pod whose uid changed waits for its old self to stop",
        desired=["web-renewed"],
        running=["web"],
        rejected=[
            (
                "web",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is held by running pod default/web",
            )
        ],
        stopped=["web"],
    ),
    Case(
        "a 2014 kubelet's pod holds the ports it asks for",
        # "nothing" runs and now asks for the port; the 2014 kubelet's pod publishes it.
        desired=["nothing-web", "server"],
        running=["nothing"],
        legacy=["server"],
        options={"adopt_2014_containers": True},
        rejected=[
            (
                "nothing",
                Reason.HOST_PORT_CONFLICT,
                "host port 8080/TCP is held by running pod default/server",
            )
        ],
    ),
    # --- one rejection never hides the pods after it -----------------------------------
    Case(
        "a running pod edited into an invalid one is left alone",
        desired=["nothing-tiny"],
        running=["nothing"],
        rejected=[
            (
                "nothing",
                Reason.INVALID_POD,
                "container app: memory limit 1048576 bytes is below the container "
                "engine's minimum of 6MB (6291456 bytes)",
            )
        ],
    ),
    Case(
        "after a rejected pod the later ones are still admitted",
        desired=["privileged-sidecar", "tiny-init", "huge", "small"],
        rejected=[
            (
                "privileged-sidecar",
                Reason.PRIVILEGED_NOT_ALLOWED,
                'violates PodSecurity "baseline": privileged (container "proxy" must not set '
                "securityContext.privileged=true; allow with --allow-privileged)",
            ),
            (
                "tiny-init",
                Reason.INVALID_POD,
                "container setup: memory limit 1048576 bytes is below the container "
                "engine's minimum of 6MB (6291456 bytes)",
            ),
            ("huge", Reason.OUT_OF_CPU, _cpu(3000, 0)),
        ],
        created=["small"],
    ),
    Case(
        "a hostPath listed after another volume",
        desired=["host-path-second", "host-path-data"],
        options={"allowed_host_paths": (AllowedHostPath("/data"),)},
        rejected=[
            (
                "host-path-second",
                Reason.HOST_PATH_NOT_ALLOWED,
                'violates PodSecurity "baseline": hostPath volumes (volume "etc" uses host '
                'path "/etc"; allow with --allowed-host-paths)',
            )
        ],
        created=["host-path-data"],
    ),
    Case(
        "two pods with one uid",
        desired=["twin-a", "twin-b", "twin-c"],
        rejected=[
            ("twin-b", Reason.DUPLICATE_POD, "same uid or full name as pod default/twin-a"),
            ("twin-c", Reason.DUPLICATE_POD, "same uid or full name as pod default/twin-a"),
        ],
        created=["twin-a"],
    ),
    Case(
        "two pods with one name",
        desired=["twin-a", "twin-a-again"],
        rejected=[("twin-a", Reason.DUPLICATE_POD, "same uid or full name as pod default/twin-a")],
        created=["twin-a"],
    ),
    Case(
        "a running pod rejected as a duplicate is left alone",
        desired=["twin-a", "twin-a-again"],
        running=["twin-a-again"],
        rejected=[("twin-a", Reason.DUPLICATE_POD, "same uid or full name as pod default/twin-a")],
        created=["twin-a"],
    ),
]


def _engine(case: Case) -> EngineModel:
    """An engine on which podsync ran the case's running, finished and finishing pods,
    in that order (each planned alone, leaving the others be: their ports and requests
    never met)."""
    model = EngineModel(image_tags=set(IMAGES))
    at = NOW - 1000

    def sync(name: str, now: float) -> None:
        model.apply(
            plan([PODS[name]], model.observed, images=model.images, now=now, options=_ALONE), now
        )

    for name in (*case.running, *case.finished, *case.finishing):
        for _ in range(3):  # a sidecar starts before the app container
            sync(name, at)
    ended = {f"default/{name}" for name in (*case.finished, *case.finishing)}
    for container in list(model.observed):
        owner = ownership(container, adopt_2014_containers=False)
        assert owner is not None
        if owner.pod_key in ended and owner.container != NETWORK_CONTAINER:
            # A crash loop: the instance that exited was restart number ``restarts``,
            # and it exited just now (its back-off has not passed).
            labels = {**container.labels, LABEL_RESTART_COUNT: str(case.restarts)}
            created = NOW - 30 if case.restarts else container.created
            model.add(attrs.evolve(container, labels=labels, created=created))
            model.exit(container.id, case.exit_code, NOW - 5 if case.restarts else at + 10)
    for name in case.finished:
        # The sync after the end stops the network container.
        sync(name, at + 20)
    for name in case.legacy:
        pod = PODS[name]
        for container in (NETWORK_CONTAINER, *(c.name for c in pod.containers)):
            model.add(
                ObservedContainer(
                    f"{name}-{container}",
                    f"k8s_{container}.0_{pod.full_name}_{pod.uid}_00000001",
                    image="busybox",
                    created=at,
                    running=True,
                )
            )
    return model


def _run(case: Case, model: EngineModel, *, newest_first: bool = False) -> Plan:
    """The plan of the case's desired pods on ``model``, which lists its containers as
    they were made or, as Docker does, ``newest_first``."""
    return plan(
        [PODS[name] for name in case.desired],
        model.observed[::-1] if newest_first else model.observed,
        images=model.images,
        pod_dirs=model.pod_dirs,
        now=NOW,
        options=attrs.evolve(OPTIONS, **case.options),
        capacity=case.capacity,
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_admission(case: Case) -> None:
    model = _engine(case)

    # The engine lists its containers in any order: the plan is the same for each.
    plans = [_run(case, model), _run(case, model, newest_first=True)]

    for p in plans:
        assert list(case.rejected) == [
            (r.pod.removeprefix("default/"), r.reason, r.message) for r in p.rejected
        ]
        created = {a.pod.removeprefix("default/") for a in p.actions if isinstance(a, Create)}
        assert sorted(case.created) == sorted(created)
        stopped = {a.pod.removeprefix("default/") for a in p.actions if isinstance(a, Kill)}
        assert sorted(case.stopped) == sorted(stopped)
    # Whatever the plan does is what an engine can do: nothing it creates clashes.
    model.apply(plans[0], NOW)


def test_a_sidecars_host_port_is_published_by_the_network_container() -> None:
    """The pod's network container holds every port of the pod (the app containers join
    its namespace): a sidecar's host port is published there, as an app container's."""
    p = _run(Case("", desired=["proxied"]), EngineModel(image_tags=set(IMAGES)))

    (net,) = [a for a in p.actions if isinstance(a, Create) and a.container == NETWORK_CONTAINER]
    assert [(9090, 8080)] == [(m.container_port, m.host_port) for m in net.spec.ports]


def test_a_pod_that_does_not_fit_has_failed() -> None:
    """The kubelet's rejectPod: phase Failed, the reason, ``Pod was rejected: ...``."""
    huge = PODS["huge"]
    p = _run(Case("", desired=["huge"]), EngineModel(image_tags=set(IMAGES)))

    status = pod_status(huge, [], plan=p, options=OPTIONS)

    assert (PodPhase.FAILED, "OutOfcpu", f"Pod was rejected: {_cpu(3000, 0)}") == (
        status.phase,
        status.reason,
        status.message,
    )


# Pods built in code (an orchestrator's): what the loader refuses in a pod file is
# refused at admission too, for every container. One row per case: the pod's settings,
# and the rejection's message (None: admitted).
def _profile(kind: str, local: str = "") -> SecurityProfile:
    return SecurityProfile(ProfileType(kind), local)


def _coded(
    context: PodSecurityContext | None = None,
    *,
    init: SecurityContext | None = None,
    sidecar: SecurityContext | None = None,
) -> Pod:
    return Pod(
        "coded",
        (Container("app", "busybox"),),
        security_context=context,
        init_containers=(
            Container("setup", "busybox", security_context=init),
            Container(
                "proxy", "busybox", security_context=sidecar, restart_policy=RestartPolicy.ALWAYS
            ),
        ),
    )


def _mounted(path: str, *, message_path: str = "", init: bool = False) -> Pod:
    """A pod whose container ``app`` (or init container ``setup``) mounts volume
    ``data`` at ``path``, its termination-message file at ``message_path``."""
    mounting = Container(
        "setup" if init else "app",
        "busybox",
        volume_mounts=(VolumeMount("data", path),),
        termination_message_path=message_path,
    )
    app = Container("app", "busybox")
    if init:
        return Pod("coded", (app,), volumes=(Volume("data"),), init_containers=(mounting,))
    return Pod("coded", (mounting,), volumes=(Volume("data"),))


CODED = [
    pytest.param(
        _coded(PodSecurityContext(seccomp_profile=_profile("Localhost"))),
        "pod: a seccomp profile names a local profile exactly when it is Localhost",
        id="a pod's Localhost seccomp profile without a file",
    ),
    pytest.param(
        _coded(PodSecurityContext(app_armor_profile=_profile("RuntimeDefault", "mine"))),
        "pod: a AppArmor profile names a local profile exactly when it is Localhost",
        id="a pod's AppArmor profile names a local one it is not",
    ),
    pytest.param(
        _coded(
            PodSecurityContext(run_as_user=1000),
            init=SecurityContext(seccomp_profile=_profile("Localhost", "../x.json")),
        ),
        "container setup: seccomp localhost profile must not contain '..', got '../x.json'",
        id="an init container's seccomp file outside the directory, after a pod context",
    ),
    pytest.param(
        _coded(sidecar=SecurityContext(app_armor_profile=_profile("Localhost", "../x"))),
        None,
        id="an AppArmor profile is a name, not a seccomp file",
    ),
    pytest.param(
        _coded(sidecar=SecurityContext(app_armor_profile=_profile("Localhost"))),
        "container proxy: a AppArmor profile names a local profile exactly when it is Localhost",
        id="a sidecar's Localhost AppArmor profile without a name",
    ),
    pytest.param(
        _coded(init=SecurityContext(capabilities=Capabilities(add=("CAP_NET_ADMIN",)))),
        "container setup: 'CAP_NET_ADMIN' is not a capability name (NET_ADMIN, SYS_TIME, "
        "..., or ALL)",
        id="an init container's capability in Docker's spelling",
    ),
    # Names, uids, duplicate container names, ports out of range and mounts of missing
    # volumes are refused when the pod is built (tests/unit/model/test_validators.py).
    # What no validator sees and the engine refuses: a volume mounted where the
    # termination-message file is bound ("Duplicate mount point" at every create), at
    # its default path or at the container's own.
    pytest.param(
        _mounted("/dev/termination-log"),
        "container app: volume data is mounted at '/dev/termination-log', where the "
        "termination-message file is bound; the engine refuses two mounts at one path",
        id="a volume at the default termination-message path",
    ),
    pytest.param(
        _mounted("/dev/termination-log/"),
        "container app: volume data is mounted at '/dev/termination-log/', where the "
        "termination-message file is bound; the engine refuses two mounts at one path",
        id="the same path with a trailing slash",
    ),
    pytest.param(
        _mounted("/var/log/done", message_path="/var/log/done"),
        "container app: volume data is mounted at '/var/log/done', where the "
        "termination-message file is bound; the engine refuses two mounts at one path",
        id="a volume at the container's own termination-message path",
    ),
    pytest.param(
        _mounted("/dev/termination-log", message_path="/var/log/done"),
        None,
        id="a volume at the default path when the file is elsewhere",
    ),
    pytest.param(
        Pod(
            "coded",
            (
                Container("app", "busybox"),
                Container(
                    "web", "busybox", volume_mounts=(VolumeMount("data", "/dev/termination-log"),)
                ),
            ),
            volumes=(Volume("data"),),
        ),
        "container web: volume data is mounted at '/dev/termination-log', where the "
        "termination-message file is bound; the engine refuses two mounts at one path",
        id="a second container's volume at the termination-message path",
    ),
    pytest.param(
        _mounted("/dev/termination-log", init=True),
        "container setup: volume data is mounted at '/dev/termination-log', where the "
        "termination-message file is bound; the engine refuses two mounts at one path",
        id="an init container's volume at the termination-message path",
    ),
    # The grace period is Docker's stop timeout: whole seconds that fit an int32 (-1
    # would wait for ever).
    pytest.param(
        Pod("web", (Container("app", "busybox"),), termination_grace_period_seconds=-1),
        "terminationGracePeriodSeconds must be 0-2147483647, got -1",
        id="a negative grace period",
    ),
    pytest.param(
        Pod("web", (Container("app", "busybox"),), termination_grace_period_seconds=0),
        None,
        id="no grace period at all",
    ),
    pytest.param(
        Pod("web", (Container("app", "busybox"),), termination_grace_period_seconds=2**31 - 1),
        None,
        id="the longest grace period Docker takes",
    ),
    pytest.param(
        Pod("web", (Container("app", "busybox"),), termination_grace_period_seconds=2**31),
        "terminationGracePeriodSeconds must be 0-2147483647, got 2147483648",
        id="a grace period beyond Docker's",
    ),
]


@pytest.mark.parametrize(("pod", "message"), CODED)
def test_pods_built_in_code(pod: Pod, message: str | None) -> None:
    p = plan([pod], [], now=NOW, options=OPTIONS)

    expected = [] if message is None else [(Reason.INVALID_POD, message)]
    assert expected == [(r.reason, r.message) for r in p.rejected]


def test_a_sidecars_port_that_publishes_nothing_is_not_the_network_containers() -> None:
    """Only a sidecar's published ports join the network container's: one without a
    host port reaches no engine, and leaving it out keeps the network spec (and hash) of
    a pod whose sidecar declared one before sidecars could publish."""
    quiet = _file(
        "quiet",
        "  initContainers:\n"
        + _app("    restartPolicy: Always\n    ports:\n    - {containerPort: 9090}\n", name="p")
        + "  containers:\n"
        + _app("    ports:\n    - {containerPort: 80}\n"),
    )

    assert [Port(80)] == network_ports(quiet)
    assert [Port(9090, 8080)] == network_ports(PODS["proxied"])
