"""The ``podsync`` commands that operate pods: ``status``, ``describe``, ``logs``,
``exec`` and ``events`` (the parser is ``podsync.cli._args``'s, ``main`` in
``podsync.cli`` dispatches here).

They change nothing on the engine (``exec`` runs what the user asked for, nothing
else). Results go to stdout - a container's stderr to stderr - and errors are one line
each, with the exit codes of the rest of the command line: 0 success, 1 any error
(``exec``: the command's own exit code once it ran), 130 interrupted.

A POD is looked up among the pods podsync runs on the engine (``podsync.status._operate``): a
full name (``name.namespace.source``), ``namespace/name``, a uid, or a bare name; a
name that matches none or several is an error naming the pod and the candidates.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

from podsync.actions._options import PlanOptions
from podsync.cli._args import EXIT_OK, _Failure
from podsync.cli._console import Console
from podsync.cli._durations import human_duration
from podsync.cli._engine import _observe
from podsync.cli._output import (
    output_format,
    pod_name,
    pod_query,
    print_document,
    print_names,
    print_record,
)
from podsync.cli._output_args import JSON, NAME, WIDE, YAML
from podsync.cli._planning import _host_key, _plan_options, _root_dir
from podsync.exceptions import ConfigError, NotFound
from podsync.model._observation import Observation
from podsync.model._pod import ObservedContainer, Pod
from podsync.runtime._protocol import (
    Capability,
    ExecRuntime,
    LogRuntime,
    NodeRuntime,
    Runtime,
    missing,
)
from podsync.spec._labels import LABEL_INIT_INDEX, LABEL_SPEC
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import ownership
from podsync.status._json import status_record, statuses_to_json
from podsync.status._operate import (
    PodEngineEvent,
    PodRef,
    current_instance,
    find_pods,
    instances,
    pod_events,
    pod_refs,
    previous_instance,
    termination_inputs,
)
from podsync.status._pod import (
    ContainerState,
    ContainerStatus,
    PodStatus,
    orphaned_pod_statuses,
    pod_status,
)

__all__: list[str] = []

#: Seconds between two looks of ``status --watch``.
WATCH_INTERVAL = 2.0

# The engine's event history starts before any time podsync asks for: "since the
# beginning" (0 means "unset" to the Engine API).
_BEGINNING = 1.0

Engine = Callable[[], contextlib.AbstractContextManager[Runtime]]


def _load(sources: Sequence[str], root_dir: str) -> tuple[Pod, ...]:
    if not sources:
        return ()
    # The loader (PyYAML, cattrs) and the planner (``sync``) are imported when pods are
    # given: ``status``, ``logs`` or ``top`` on the engine alone reads none (issue 33).
    from podsync.load._config import load_pods

    try:
        return load_pods(list(sources), secret_key=_host_key(root_dir))
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None


# ---------------------------------------------------------------------------------------
# status


def _statuses(
    runtime: Runtime,
    pods: Sequence[Pod],
    options: PlanOptions,
    clock: Any,
    *,
    probe: bool = False,
) -> tuple[list[PodStatus], Observation, Any]:
    """The status of each desired pod (as the next sync would see it: the plan is made
    and not applied; with ``probe`` the probes run first and their verdicts decide
    readiness) and of the pods podsync runs that are not desired; the observation; the
    plan (``None`` without pods)."""
    the_plan = None
    readiness: dict[str, bool] = {}
    startup: dict[str, bool] = {}
    if pods:
        from podsync.loop._sync import sync

        try:
            # The probes' states are not recorded (as plan --probe): status changes
            # nothing, and the next sync counts as if it had not looked.
            result = sync(
                pods,
                runtime,
                options=options,
                probe=probe,
                clock=clock,
                before_apply=_never,
                record_probes=False,
            )
        except OSError as exc:
            raise _Failure(f"cannot list the root directory {options.root_dir}: {exc}") from None
        observation, the_plan = result.observation, result.plan
        readiness, startup = result.readiness, result.startup
    else:
        observation = _observe(runtime, options.root_dir, images=False)
    seen = observation.containers
    adopt = options.adopt_2014_containers
    messages, tails = termination_inputs(
        runtime, pods, seen, options.root_dir, adopt_2014_containers=adopt
    )
    # Each pod judged on its own containers: pod_status looks at every container given.
    mine: dict[str, list[ObservedContainer]] = {}
    for oc in seen:
        owner = ownership(oc, adopt_2014_containers=adopt)
        if owner is not None:
            mine.setdefault(owner.pod_uid, []).append(oc)
    statuses = [
        pod_status(
            p,
            mine.get(p.uid, []),
            plan=the_plan,
            options=options,
            readiness=readiness,
            startup=startup,
            termination_messages=messages,
            log_tails=tails,
        )
        for p in pods
    ]
    statuses += orphaned_pod_statuses(
        seen,
        desired=pods if pods else None,
        options=options,
        termination_messages=messages,
        log_tails=tails,
    )
    statuses.sort(key=lambda s: (s.pod, s.uid))
    return statuses, observation, the_plan


def _never(*_: object) -> bool:
    return False


def _reason(status: PodStatus) -> str:
    """The REASON column: what kubectl's STATUS column shows (``display_status``) where
    it is not the phase."""
    shown = status.display_status
    return "" if shown == status.phase.value else shown


def _rows(
    statuses: Sequence[PodStatus],
    seen: Sequence[ObservedContainer],
    now: float,
    adopt: bool,
    addresses: Mapping[str, str] | None = None,
) -> list[list[str]]:
    """The table's rows; a pod's age is its oldest container's (the network container's,
    usually: it is made first). With ``addresses`` (``-o wide``: the pods' IPs, by uid)
    each row adds IP, SCOPE and IMAGES."""
    born: dict[str, float] = {}
    for oc in seen:
        owner = ownership(oc, adopt_2014_containers=adopt)
        if owner is not None:
            born[owner.pod_uid] = min(born.get(owner.pod_uid, oc.created), oc.created)
    rows = []
    for s in statuses:
        ready, total = s.ready_count
        age = human_duration(now - born[s.uid]) if s.uid in born else "-"
        row = [s.pod, f"{ready}/{total}", s.phase.value, str(s.restarts), age, _reason(s)]
        if addresses is not None:
            images = ",".join(dict.fromkeys(c.image for c in s.containers if c.image))
            row += [addresses.get(s.uid, _NONE), s.scope or _NONE, images or _NONE]
        rows.append(row)
    return rows


# kubectl's placeholder for an empty cell of -o wide (``<none>``).
_NONE = "<none>"
_HEADER = ["POD", "READY", "PHASE", "RESTARTS", "AGE", "REASON"]
# -o wide's columns: kubectl get pods -o wide adds IP and NODE. A status looks at one
# engine, so a NODE column would repeat it on every row: podsync shows the scope that
# runs the pod instead (who owns it), and, as -o wide of kubectl's workloads, IMAGES.
_WIDE_HEADER = [*_HEADER, "IP", "SCOPE", "IMAGES"]


def _addresses(runtime: Runtime, seen: Sequence[ObservedContainer], adopt: bool) -> dict[str, str]:
    """The address of each pod's running network container, by pod uid, as the engine
    reports it (``NodeRuntime.container_address``); a pod whose network container has
    none (network mode none, not running) or an engine that cannot say is left out."""
    if not isinstance(runtime, NodeRuntime):
        return {}
    found: dict[str, str] = {}
    for oc in seen:
        owner = ownership(oc, adopt_2014_containers=adopt)
        if owner is not None and owner.container == NETWORK_CONTAINER and oc.running:
            try:
                address = runtime.container_address(oc.id)
            except NotFound:
                continue  # removed since it was listed: no address to show
            if address:
                found[owner.pod_uid] = address
    return found


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    header = _WIDE_HEADER if rows and len(rows[0]) > len(_HEADER) else _HEADER
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "   ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]


def _show_statuses(console: Console, fmt: str | None, statuses: Sequence[PodStatus]) -> bool:
    """``status -o json|yaml|name``: the statuses printed; ``False`` for a table (no
    format, or ``wide``), which the caller prints."""
    if fmt == NAME:
        print_names(console, (pod_name(st.pod, st.uid) for st in statuses))
    elif fmt in (JSON, YAML):
        print_document(console, fmt, statuses_to_json(statuses))
    else:
        return False
    return True


def cmd_status(
    args: argparse.Namespace,
    console: Console,
    engine: Engine,
    sleep: Callable[[float], None],
) -> int:
    pods = _load(args.sources, _root_dir(args))
    options = _plan_options(args, console)
    adopt = options.adopt_2014_containers
    if args.probe and not pods:
        raise _Failure("--probe needs the pods' SOURCEs: the probes are in the pod files")
    fmt = output_format(args)

    def look(runtime: Runtime) -> tuple[list[PodStatus], list[list[str]]]:
        statuses, observation, _ = _statuses(
            runtime, pods, options, console.clocks.given, probe=args.probe
        )
        seen = observation.containers
        wide = _addresses(runtime, seen, adopt) if fmt == WIDE else None
        return statuses, _rows(statuses, seen, console.clocks.now(), adopt, wide)

    with engine() as runtime:
        statuses, rows = look(runtime)
        if not _show_statuses(console, fmt, statuses):
            if not statuses:
                console.note("No pods.")
            for line in _table(rows) if statuses else []:
                console.print(line)
        if not args.watch:
            return EXIT_OK
        # By uid: two sources can hold pods of one namespace/name.
        shown = {st.uid: _without_age(r) for st, r in zip(statuses, rows, strict=True)}
        while True:  # until interrupted: KeyboardInterrupt is main's (130)
            sleep(WATCH_INTERVAL)
            statuses, rows = look(runtime)
            for st, row, line in zip(statuses, rows, _table(rows)[1:], strict=True):
                if shown.get(st.uid) != _without_age(row):
                    shown[st.uid] = _without_age(row)
                    if fmt in (JSON, YAML):
                        print_record(console, fmt, status_record(st))
                    elif fmt == NAME:
                        console.print(pod_name(st.pod, st.uid))
                    else:
                        console.print(line)


def _without_age(row: Sequence[str]) -> tuple[str, ...]:
    return (*row[:4], *row[5:])


# ---------------------------------------------------------------------------------------
# Finding a pod and a container


def _pod(refs: Sequence[PodRef], given: str) -> PodRef:
    # -o name's pod/NAMESPACE/NAME is taken back (podsync status -o name | xargs ...).
    query = pod_query(given)
    found = find_pods(refs, query)
    if len(found) == 1:
        return found[0]
    if not found:
        known = ", ".join(r.key for r in refs) or "none"
        raise _Failure(f'no pod "{query}" on the engine; podsync runs: {known}')
    listed = ", ".join(f"{r.key} ({r.full_name})" for r in found)
    raise _Failure(f'pod "{query}" is ambiguous: {listed}; give namespace/name or the full name')


def _container(ref: PodRef, groups: dict[str, list[ObservedContainer]], wanted: str | None) -> str:
    names = sorted(n for n in groups if n != NETWORK_CONTAINER)
    if wanted is not None:
        if wanted not in groups:
            raise _Failure(f'no container "{wanted}" in pod {ref.key}; it has: {", ".join(names)}')
        return wanted
    if len(names) == 1:
        return names[0]
    # As kubectl logs/exec: a pod's init containers do not make it ambiguous; its one
    # app container is taken, and stderr says which (kubectl's "Defaulted container").
    apps = [n for n in names if not any(LABEL_INIT_INDEX in c.labels for c in groups[n])]
    if len(apps) == 1:
        listed = ", ".join(n if n in apps else f"{n} (init)" for n in names)
        print(f'Defaulted container "{apps[0]}" out of: {listed}', file=sys.stderr)
        return apps[0]
    raise _Failure(
        f"pod {ref.key} has {len(names)} containers: {', '.join(names)}; choose one with -c"
    )


def _locate(
    args: argparse.Namespace, runtime: Runtime
) -> tuple[PodRef, str, list[ObservedContainer]]:
    """The pod, the pod container and its instances (newest first) the arguments name."""
    adopt = bool(args.adopt_2014_containers)
    seen = _observe(runtime, _root_dir(args), images=False).containers
    ref = _pod(pod_refs(seen, adopt_2014_containers=adopt), args.pod)
    groups = instances(seen, ref.uid, adopt_2014_containers=adopt)
    name = _container(ref, groups, args.container)
    return ref, name, groups[name]


# ---------------------------------------------------------------------------------------
# logs and exec


def _binary(stream: IO[str]) -> Callable[[bytes], None]:
    """Write bytes to a text stream's buffer (its text flushed first), or decoded."""
    buffer = getattr(stream, "buffer", None)

    def write(data: bytes) -> None:
        stream.flush()
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:
            stream.write(data.decode("utf-8", "replace"))
            stream.flush()

    return write


def stamp(moment: float) -> str:
    """RFC 3339 in UTC with microseconds, as ``docker logs --timestamps`` (which has
    nanoseconds)."""
    when = datetime.datetime.fromtimestamp(moment, datetime.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"


def cmd_logs(args: argparse.Namespace, console: Console, engine: Engine) -> int:
    with engine() as runtime:
        ref, name, group = _locate(args, runtime)
        instance = previous_instance(group) if args.previous else current_instance(group)
        if instance is None:
            raise _Failure(f"no previous instance of {ref.key}/{name}")
        since = console.clocks.now() - args.since if args.since is not None else None
        writers = {"stdout": _binary(console.out), "stderr": _binary(console.err)}
        if not isinstance(runtime, LogRuntime):
            raise missing(Capability.LOGS, "podsync logs")
        with runtime.container_logs(
            instance.id, tail=args.tail, since=since, follow=args.follow and not args.previous
        ) as lines:
            for line in lines:
                prefix = f"{stamp(line.time)} ".encode() if args.timestamps else b""
                writers.get(line.stream, writers["stdout"])(prefix + line.data)
    return EXIT_OK


def cmd_exec(args: argparse.Namespace, console: Console, engine: Engine) -> int:
    with engine() as runtime:
        ref, name, group = _locate(args, runtime)
        instance = current_instance(group)
        assert instance is not None  # a located container has an instance
        if not instance.running:
            raise _Failure(f"container {ref.key}/{name} is not running ({instance.id[:12]})")
        writers = {"stdout": _binary(console.out), "stderr": _binary(console.err)}
        stdin = sys.stdin.buffer if args.stdin else None
        if not isinstance(runtime, ExecRuntime):
            raise missing(Capability.EXEC, "podsync exec")
        with _raw_terminal(args.tty and args.stdin):
            return runtime.exec_attached(
                instance.id,
                args.command_line,
                output=lambda stream, data: writers.get(stream, writers["stdout"])(data),
                stdin=stdin,
                tty=args.tty,
            )


@contextlib.contextmanager
def _raw_terminal(wanted: bool) -> Iterator[None]:
    """Standard input in raw mode while a TTY exec runs (keys go to the command, as
    ``docker exec -it``), when it is a terminal."""
    if not wanted or not sys.stdin.isatty():
        yield
        return
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


# ---------------------------------------------------------------------------------------
# events


def _event_line(item: PodEngineEvent) -> str:
    e = item.event
    details = ""
    if e.exit_code is not None:
        details = f" exit code {e.exit_code}"
    elif e.signal is not None:
        details = f" signal {e.signal}"
    return (
        f"{stamp(e.time)} {item.pod} {item.container} {e.action}{details} ({e.container_id[:12]})"
    )


def _event_record(item: PodEngineEvent) -> dict[str, Any]:
    e = item.event
    return {
        "time": e.time,
        "pod": item.pod,
        "pod_uid": item.pod_uid,
        "container": item.container,
        "container_id": e.container_id,
        "name": e.name,
        "action": e.action,
        "exit_code": e.exit_code,
        "signal": e.signal,
    }


def cmd_events(args: argparse.Namespace, console: Console, engine: Engine) -> int:
    now = console.clocks.now()
    since = now - args.since if args.since is not None else _BEGINNING
    with (
        engine() as runtime,
        pod_events(
            runtime,
            since=since,
            until=None if args.follow else now,
            adopt_2014_containers=bool(args.adopt_2014_containers),
        ) as stream,
    ):
        fmt = output_format(args)
        for item in stream:
            if fmt is None:
                console.print(_event_line(item))
            else:
                print_record(console, fmt, _event_record(item))
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# describe


def _field(label: str, value: object, indent: int = 4, width: int = 16) -> str:
    return f"{' ' * indent}{label + ':':<{width}}{value}".rstrip()


def _state_text(c: ContainerStatus) -> tuple[str, str]:
    """(State, Last State) as kubectl describe words them."""
    run = f"{c.exit_reason}, exit code {c.exit_code}"
    if c.state is ContainerState.RUNNING:
        since = f" since {stamp(c.running_since)}" if c.running_since is not None else ""
        state = f"Running{since}"
    elif c.state is ContainerState.WAITING:
        state = f"Waiting ({c.reason})"
    else:
        return f"Terminated ({run})", ""
    return state, f"Terminated ({run})" if c.exit_code is not None else ""


def _spec_lines(instance: ObservedContainer | None, pod: Pod | None, name: str) -> list[str]:
    """Ports and mounts: from the pod file when given, else from the instance's
    recorded spec (``LABEL_SPEC``)."""
    ports: list[str] = []
    mounts: list[str] = []
    spec = next((c for c in pod.containers if c.name == name), None) if pod else None
    if spec is not None:
        ports = [
            f"{p.container_port}/{p.protocol.value}"
            + (
                f" (host {p.host_ip + ':' if p.host_ip else ''}{p.host_port})"
                if p.host_port
                else ""
            )
            for p in spec.ports
        ]
        # configMap, secret and downwardAPI volumes are mounted read-only whatever the
        # mount says (podsync writes their files).
        written = {v.name for v in pod.volumes if v.content is not None} if pod else set()
        mounts = [
            f"{m.mount_path} from {m.name}" + (" (ro)" if m.read_only or m.name in written else "")
            for m in spec.volume_mounts
        ]
    elif instance is not None and LABEL_SPEC in instance.labels:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            recorded = json.loads(instance.labels[LABEL_SPEC])
            ports = [
                f"{p['container_port']}/{p['protocol']}"
                + (f" (host {p['host_port']})" if p.get("host_port") else "")
                for p in recorded.get("ports", [])
            ]
            mounts = [
                f"{m['mount_path']} from {m['name']}" + (" (ro)" if m.get("read_only") else "")
                for m in recorded.get("volume_mounts", [])
            ]
    return [
        _field("Ports", ", ".join(ports) or "<none>"),
        _field("Mounts", ", ".join(mounts) or "<none>"),
    ]


def cmd_describe(args: argparse.Namespace, console: Console, engine: Engine) -> int:
    desired = _load(args.sources, _root_dir(args))
    options = _plan_options(args, console)
    with engine() as runtime:
        seen = _observe(runtime, options.root_dir, images=False).containers
        adopt = options.adopt_2014_containers
        refs = pod_refs(seen, adopt_2014_containers=adopt)
        known = {r.uid for r in refs}
        # A pod of the files that is not on the engine yet can be described too.
        refs += [PodRef(p.uid, p.key, p.full_name) for p in desired if p.uid not in known]
        ref = _pod(refs, args.pod)
        pod = next((p for p in desired if p.uid == ref.uid), None)
        # All the files' pods: one that is not among them is orphaned.
        statuses, observation, the_plan = _statuses(runtime, desired, options, console.clocks.given)
        status = next(s for s in statuses if s.uid == ref.uid)
        groups = instances(observation.containers, ref.uid, adopt_2014_containers=adopt)
        now = console.clocks.now()
        with pod_events(
            runtime, since=_BEGINNING, until=now, adopt_2014_containers=adopt
        ) as events:
            mine = [e for e in events if e.pod_uid == ref.uid]
    lines = [
        _field("Name", ref.name, 0, 13),
        _field("Namespace", ref.namespace, 0, 13),
        _field("Full name", ref.full_name, 0, 13),
        _field("UID", ref.uid, 0, 13),
        _field("Phase", status.phase.value, 0, 13),
        _field("Status", status.message, 0, 13),
    ]
    if status.orphaned:
        lines.append("Orphaned:    podsync runs it, but the pod files do not describe it")
    lines.append("Conditions:")
    for condition in status.conditions:
        kind, holds = condition.type, str(condition.status)
        lines.append(f"  {kind:<15}  {holds:<5}  {condition.reason}".rstrip())
    net = current_instance(groups.get(NETWORK_CONTAINER, []))
    if net is not None:
        lines.append(f"Network container: {net.id[:12]} ({'running' if net.running else 'exited'})")
    lines.append("Containers:")
    for c in status.containers:
        state, last = _state_text(c)
        instance = next((oc for oc in groups.get(c.name, []) if oc.id == c.container_id), None)
        lines.append(f"  {c.name}:")
        lines.append(_field("Container ID", c.container_id[:12] or "<none>"))
        lines.append(_field("Image", c.image))
        lines.append(_field("State", state))
        if last:
            lines.append(_field("Last State", last))
        if c.finished_at is not None:
            lines.append(_field("Finished", stamp(c.finished_at)))
        if c.termination_message:
            lines.append(
                _field("Message", c.termination_message.strip().replace("\n", "\n" + " " * 20))
            )
        lines.append(_field("Ready", c.ready))
        lines.append(_field("Restart Count", c.restart_count))
        lines.extend(_spec_lines(instance, pod, c.name))
    if the_plan is not None:
        lines.append("Next sync:")
        actions = [a for p in the_plan.pods if p.uid == ref.uid for a in p.actions]
        lines.extend(f"  {a.message}" for a in actions)
        if not actions:
            lines.append("  nothing to do")
    lines.append("Events:")
    lines.extend(f"  {_event_line(e)}" for e in mine[-20:])
    if not mine:
        lines.append("  <none>")
    for line in lines:
        console.print(line)
    return EXIT_OK
