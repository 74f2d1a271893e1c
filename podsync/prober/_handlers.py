"""Handlers and probes: exec, httpGet and tcpSocket, run against containers.

Ported from the seed's ``runHandler`` / ``newActionHandler`` (exec through the engine,
HTTP GET ``http://<host>:<port>/<path>``; reference §2.5) and its health checkers
(``healthy``, §2.5). tcpSocket is the later kubelet's TCP checker. When a probe runs and
what its results add up to is ``_rules``'s (the modern kubelet's worker); this module
finds the probed containers and runs the probes.

Semantics, as Kubernetes':

* exec: the command (an argument list, never a shell string) runs in the container;
  exit code 0 is success.
* httpGet: a GET to ``handler.host`` or, when it names none, the address of the pod's
  network; success is a 2xx or 3xx status (redirects are not followed). A port is a
  number or the name of one of the container's ports; an empty port is 80 (seed). HTTPS
  does not verify the certificate (the kubelet's probes do not either). The action's
  ``httpHeaders`` are sent as the kubelet sends them (``pkg/probe/http/request.go``):
  ``User-Agent`` and ``Accept: */*`` are added only when absent, an explicitly empty
  ``Accept`` sends none, and a ``Host`` header names the request's host.
* tcpSocket: success is an accepted TCP connection.

Every network operation has a timeout. Nothing runs a shell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.exceptions import PodsyncError
from podsync.model._pod import Container, Handler, HTTPHeader, ObservedContainer, Pod, Port, Probe
from podsync.prober._rules import ProbeKind, probes_of
from podsync.runtime._protocol import Capability, ExecRuntime, NodeRuntime, Runtime, missing
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import ownership

if TYPE_CHECKING:
    # Imported where a probe runs (http.client brings email, ssl is large): importing
    # podsync stays cheap for a program that never probes.
    import http.client
    import ssl

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["DEFAULT_PROBE_TIMEOUT", "probe_liveness"]

#: Seconds a probe may take unless it says (Kubernetes' ``timeoutSeconds`` default).
DEFAULT_PROBE_TIMEOUT = 1.0

# How many probes run at once: probes are short and run before every plan; a few
# threads keep a slow container from delaying the others without loading the engine.
_PROBE_WORKERS = 4

# The kubelet reads at most 10 KiB of a probe's response body; so does podsync.
_MAX_BODY = 10 * 1024
# How much of an exec's output an error message quotes.
_MAX_OUTPUT = 200


class HandlerError(PodsyncError):
    """A handler failed.

    Attributes:
        ran: True when the handler ran and failed (exit code, HTTP status, refused
            connection); False when it could not be run at all (the runtime call
            failed, the container has no address, a named port is unknown).
    """

    def __init__(self, message: str, *, ran: bool = True) -> None:
        super().__init__(message)
        self.ran = ran


def resolve_port(port: int | str, ports: Sequence[Port], *, default: int | None = None) -> int:
    """The port number a handler means: a number, a numeric string, or the name of one
    of the container's ``ports`` (seed: "named port resolved via container ports").

    Raises:
        HandlerError: the port is empty with no default, out of range, or names no port.
    """
    if isinstance(port, str):
        if port == "":
            if default is None:
                raise HandlerError("no port given", ran=False)
            return default
        if port.isdigit():
            port = int(port)
        else:
            for candidate in ports:
                if candidate.name == port:
                    return candidate.container_port
            known = sorted(p.name for p in ports if p.name)
            raise HandlerError(
                f"no container port is named {port!r} (named ports: {known or 'none'})",
                ran=False,
            )
    if not 0 < port < 65536:
        raise HandlerError(f"port must be 1-65535, got {port}", ran=False)
    return port


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _run_exec(runtime: Runtime, container_id: str, command: Sequence[str], timeout: float) -> None:
    if not isinstance(runtime, ExecRuntime):  # (a plan for this runtime rejects the pod)
        raise HandlerError(f"exec {list(command)!r}: {missing(Capability.EXEC, 'exec')}", ran=False)
    try:
        result = runtime.exec_in_container(container_id, list(command), timeout)
    except Exception as exc:  # the runtime's error, or its bug: the handler did not run
        raise HandlerError(f"exec {list(command)!r}: {exc}", ran=False) from exc
    if result.exit_code != 0:
        output = result.output.decode("utf-8", "replace").strip()
        if len(output) > _MAX_OUTPUT:
            output = output[:_MAX_OUTPUT] + "..."
        detail = f": {output}" if output else ""
        if result.exit_code < 0:
            # No process exits with a negative code: the runtime gave up waiting
            # (DockerRuntime's -1). A timeout is a failure, as with the kubelet's
            # ExecProbeTimeout (pkg/probe/exec/exec.go).
            raise HandlerError(f"exec {list(command)!r} did not finish within {timeout:g}s{detail}")
        raise HandlerError(f"exec {list(command)!r} exited with code {result.exit_code}{detail}")


def _insecure_context() -> ssl.SSLContext:
    # The kubelet's HTTPS probes skip certificate verification: a pod's certificate is
    # rarely issued for its IP address.
    import ssl

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


# What podsync calls itself when the action's headers name no User-Agent.
_USER_AGENT = "podsync"


def _send_headers(
    conn: http.client.HTTPConnection, target: str, headers: Sequence[HTTPHeader]
) -> None:
    """Send the request line and headers as the kubelet's probes build them
    (``pkg/probe/http/request.go``, ``newProbeRequest`` and ``http.go``): the action's
    headers in order (a name given twice is sent twice); ``Host`` names the request's
    host instead of being sent as another header; ``User-Agent`` and ``Accept: */*``
    only when the headers name none; an ``Accept`` given empty means no Accept at all.
    No compression is asked for (the kubelet's transport disables it)."""
    names = {h.name.lower() for h in headers}
    host = next((h.value for h in headers if h.name.lower() == "host"), None)
    accept = [h.value for h in headers if h.name.lower() == "accept"]
    conn.putrequest("GET", target, skip_host=host is not None, skip_accept_encoding=True)
    if host is not None:
        conn.putheader("Host", host)
    for h in headers:
        lower = h.name.lower()
        if lower == "host" or (lower == "accept" and accept[0] == ""):
            continue
        conn.putheader(h.name, h.value)
    if "user-agent" not in names:
        conn.putheader("User-Agent", _USER_AGENT)
    if not accept:
        conn.putheader("Accept", "*/*")
    conn.endheaders()


def http_get(
    host: str,
    port: int,
    path: str,
    scheme: str,
    timeout: float,
    headers: Sequence[HTTPHeader] = (),
) -> None:
    """GET ``<scheme>://<host>:<port>/<path>`` with ``headers``; success is a 2xx or 3xx
    status.

    Raises:
        HandlerError: the request failed or the status is not 2xx/3xx.
    """
    import http.client

    target = path if path.startswith("/") else "/" + path
    url = f"{scheme.lower()}://{_host_for_url(host)}:{port}{target}"
    conn: http.client.HTTPConnection
    if scheme.upper() == "HTTP":
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    elif scheme.upper() == "HTTPS":
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=_insecure_context())
    else:
        raise HandlerError(f"unsupported scheme {scheme!r} (expected HTTP or HTTPS)", ran=False)
    try:
        _send_headers(conn, target, headers)
        response = conn.getresponse()
        response.read(_MAX_BODY)
        status = response.status
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise HandlerError(f"GET {url}: {_reason(exc)}") from exc
    finally:
        conn.close()
    if not 200 <= status < 400:
        raise HandlerError(f"GET {url}: status {status}")


def tcp_connect(host: str, port: int, timeout: float) -> None:
    """Open (and close) a TCP connection to ``host:port``.

    Raises:
        HandlerError: the connection was refused, timed out or could not be made.
    """
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except (OSError, ValueError) as exc:
        raise HandlerError(f"connect {_host_for_url(host)}:{port}: {_reason(exc)}") from exc


def _address(runtime: Runtime, network_id: str) -> str:
    if not isinstance(runtime, NodeRuntime):  # (a plan for this runtime rejects the pod)
        raise HandlerError(
            f"address of {network_id}: {missing(Capability.NODE, 'a handler without host')}",
            ran=False,
        )
    try:
        address = runtime.container_address(network_id)
    except Exception as exc:  # the runtime's error, or its bug: the handler did not run
        raise HandlerError(f"address of {network_id}: {exc}", ran=False) from exc
    if not address:
        raise HandlerError(
            f"container {network_id} has no network address and the handler names no host",
            ran=False,
        )
    return address


def run_handler(
    handler: Handler,
    runtime: Runtime,
    container_id: str,
    *,
    network_id: str | None = None,
    ports: Sequence[Port] = (),
    timeout: float,
) -> None:
    """Run ``handler`` against a container (seed runHandler).

    Args:
        handler: the handler (exactly one action is set).
        runtime: where exec commands run and container addresses come from.
        container_id: the container the handler is for: exec runs in it.
        network_id: the container whose address httpGet and tcpSocket use when the
            handler names no host: the pod's network container (app containers share
            its network); the container itself when ``None``.
        ports: the container's ports, to resolve named ports.
        timeout: seconds the exec, connection or request may take.

    Raises:
        HandlerError: the handler failed or could not be run.
    """
    if handler.exec_command is not None:
        _run_exec(runtime, container_id, handler.exec_command, timeout)
    elif handler.http_get is not None:
        h = handler.http_get
        port = resolve_port(h.port, ports, default=80)
        host = h.host or _address(runtime, network_id or container_id)
        http_get(host, port, h.path, h.scheme, timeout, h.http_headers)
    else:
        assert handler.tcp_socket is not None  # Handler's invariant: exactly one is set
        t = handler.tcp_socket
        port = resolve_port(t.port, ports)
        host = t.host or _address(runtime, network_id or container_id)
        tcp_connect(host, port, timeout)


# ---------------------------------------------------------------------------------------
# Probes


@attrs.frozen
class ProbedContainer:
    """A running container of a desired pod whose spec has at least one probe.

    Attributes:
        observed: the container, as the engine listed it.
        pod: its desired pod.
        spec: its container spec in that pod.
        network_id: the engine id of the pod's running network container, whose address
            httpGet and tcpSocket probes without a host use; ``None`` when none runs.
    """

    observed: ObservedContainer
    pod: Pod
    spec: Container
    network_id: str | None


def probed_containers(
    desired: Sequence[Pod],
    observed: Sequence[ObservedContainer],
    *,
    adopt_2014_containers: bool = False,
) -> list[ProbedContainer]:
    """The running containers of ``desired`` pods whose spec has a probe, in the order
    observed. Which containers are a pod's is the planner's ``ownership`` rule, with the
    plan's ``adopt_2014_containers``: a probe execs in the container, so it must never
    reach one podsync does not own."""
    by_identity: dict[tuple[str, str], Pod] = {}
    for pod in desired:
        by_identity.setdefault((pod.uid, pod.full_name), pod)
    matched: list[tuple[ObservedContainer, Pod, str]] = []
    networks: dict[str, ObservedContainer] = {}  # newest running net by pod uid
    for oc in observed:
        if not oc.running:
            continue
        found = ownership(oc, adopt_2014_containers=adopt_2014_containers)
        if found is None:
            continue
        owner = by_identity.get((found.pod_uid, found.pod_full_name))
        if owner is None:
            continue
        name = found.container
        if name == NETWORK_CONTAINER:
            known = networks.get(owner.uid)
            if known is None or (oc.created, oc.id) > (known.created, known.id):
                networks[owner.uid] = oc
        else:
            matched.append((oc, owner, name))
    probed: list[ProbedContainer] = []
    for oc, pod, name in matched:
        # Sidecars (init containers with restartPolicy Always) are probed as app
        # containers are; other init containers have no probes.
        spec: Container | None = next(
            (c for c in (*pod.containers, *pod.init_containers) if c.name == name), None
        )
        if spec is None or not probes_of(spec):
            continue
        net = networks.get(pod.uid)
        probed.append(ProbedContainer(oc, pod, spec, net.id if net is not None else None))
    return probed


@attrs.frozen
class ProbeTarget:
    """One probe to run against one running container."""

    container_id: str
    pod: str  # the pod key, namespace/name
    container: str
    handler: Handler
    ports: tuple[Port, ...]
    network_id: str | None
    pod_uid: str = ""  # the pod's identity, for events
    kind: ProbeKind = ProbeKind.LIVENESS
    timeout: float = DEFAULT_PROBE_TIMEOUT  # the probe's timeoutSeconds
    failure_threshold: int = 3  # the probe's failureThreshold, for messages

    @classmethod
    def of(cls, probed: ProbedContainer, kind: ProbeKind, probe: Probe) -> ProbeTarget:
        """The target that runs ``probe`` (of ``kind``) against ``probed``."""
        return cls(
            container_id=probed.observed.id,
            pod=probed.pod.key,
            pod_uid=probed.pod.uid,
            container=probed.spec.name,
            handler=probe.handler,
            ports=probed.spec.ports,
            network_id=probed.network_id,
            kind=kind,
            timeout=float(probe.timeout_seconds),
            failure_threshold=probe.failure_threshold,
        )


@attrs.frozen
class ProbeOutcome:
    """What probing one container gave: ``healthy`` is None when the probe could not
    be run (no result: the kubelet throws a prober error's result away)."""

    target: ProbeTarget
    healthy: bool | None
    message: str = ""


def probe_targets(
    desired: Sequence[Pod],
    observed: Sequence[ObservedContainer],
    *,
    now: float,
    adopt_2014_containers: bool = False,
) -> list[ProbeTarget]:
    """The liveness probes of the running containers of desired pods that are past
    their initialDelaySeconds since they started (``ObservedContainer.start_time``; seed healthy():
    within the delay a container counts as healthy, strict ``<``), whatever their other
    probes say."""
    targets: list[ProbeTarget] = []
    for probed in probed_containers(desired, observed, adopt_2014_containers=adopt_2014_containers):
        probe = probed.spec.liveness_probe
        if probe is None or now - probed.observed.start_time < probe.initial_delay_seconds:
            continue
        targets.append(ProbeTarget.of(probed, ProbeKind.LIVENESS, probe))
    return targets


def run_probes(
    targets: Sequence[ProbeTarget],
    runtime: Runtime,
    *,
    timeout: float | None = None,
    workers: int = _PROBE_WORKERS,
) -> list[ProbeOutcome]:
    """Run ``targets`` in parallel; their outcomes, in the order of ``targets``. Each
    probe may take its own ``timeout`` (its ``timeoutSeconds``), or ``timeout`` when
    given: an exec that takes longer failed (the kubelet's ``ExecProbeTimeout``), a
    connection or request that takes longer failed."""

    def run(target: ProbeTarget) -> ProbeOutcome:
        try:
            run_handler(
                target.handler,
                runtime,
                target.container_id,
                network_id=target.network_id,
                ports=target.ports,
                timeout=target.timeout if timeout is None else timeout,
            )
        except HandlerError as exc:
            return ProbeOutcome(target, False if exc.ran else None, str(exc))
        return ProbeOutcome(target, True)

    if not targets:
        return []
    if len(targets) == 1:
        return [run(targets[0])]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(
        max_workers=min(workers, len(targets)), thread_name_prefix="podsync-probe"
    ) as pool:
        return list(pool.map(run, targets))


def probe_liveness(
    desired: Sequence[Pod],
    observed: Sequence[ObservedContainer],
    runtime: Runtime,
    *,
    now: float,
    timeout: float | None = None,
    adopt_2014_containers: bool = False,
) -> dict[str, bool]:
    """Run the liveness probes of the running containers of ``desired`` pods, once each.

    A container is probed when it is running, belongs to a desired pod (by the planner's
    ``ownership`` rule: podsync's labels, or - with ``adopt_2014_containers``, as the
    plan's option - a 2014 kubelet's exact ``k8s_`` name), its spec has a
    liveness probe, and it started (``start_time``) at least ``initial_delay_seconds``
    before ``now``. exec probes run in the container; httpGet and tcpSocket probes without a
    host connect to the address of the pod's network container. Probes run in parallel
    on a small pool of threads.

    These are single results: no thresholds, no period, no startup gate. ``sync``
    applies those (``podsync.ProbeState``) and keeps the count between syncs; passing
    these results to ``plan(..., liveness=...)`` as they are replaces a container on its
    first failure.

    Args:
        desired: the desired pods.
        observed: the containers on the engine (``runtime.list_containers()``).
        runtime: where exec probes run and container addresses come from.
        now: the current time, seconds since the epoch.
        timeout: seconds each probe may take; ``None``: its own ``timeoutSeconds``.
        adopt_2014_containers: probe a 2014 kubelet's containers too; pass the plan's
            ``PlanOptions.adopt_2014_containers``.

    Returns:
        By container id: True when the probe passed, False when it failed. A container
        whose probe could not be run at all (the runtime call failed, no address) has
        no entry, which the planner counts as healthy, as the seed did when its health
        check errored.
    """
    targets = probe_targets(desired, observed, now=now, adopt_2014_containers=adopt_2014_containers)
    outcomes = run_probes(targets, runtime, timeout=timeout)
    return {o.target.container_id: o.healthy for o in outcomes if o.healthy is not None}
