"""``podsync apply --hosts HOSTS.yaml SOURCE...``: one apply per host, all at once.

The hosts file is read first, then every source, each pod assigned to the host its
``spec.nodeName`` names (``podsync.load_host_pods``): a problem in either fails the
command before any engine is contacted, so nothing is applied anywhere. Then every
host is synced concurrently (``podsync.sync_hosts``), each with its own apply pool of
``--workers`` and its own root directory (``ROOT-DIR/hosts/NAME``).

Output: each host's plan under a ``# NAME (ENGINE)`` heading and its progress lines
prefixed with its name (text), or with a ``host`` field (``--log-format json``); then
one summary line per host and a fleet line on stdout, or with ``-o json`` (``--json``)
one JSON document (``format_version`` 1) instead of the plans and summary lines, with
``-o yaml`` the same document as YAML. An engine that
cannot be reached fails its host only, named in an error line; the exit code is 1 when
any host failed, had failed actions or rejected pods.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from podsync.actions._actions import Plan
from podsync.applier._apply import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS
from podsync.applier._results import Event
from podsync.cli._args import EXIT_ERROR, EXIT_OK, _Failure
from podsync.cli._checks import _UsageError
from podsync.cli._console import (
    Console,
    event_record,
    event_text,
    warn_rejected,
    warn_unpublished_ports,
)
from podsync.cli._etcd import etcd_options
from podsync.cli._output import apply_record, output_format, print_document
from podsync.cli._planning import _host_key, _plan_options, _probe, _root_dir
from podsync.exceptions import ConfigError
from podsync.fleet._hosts import Host, load_host_pods, load_hosts
from podsync.fleet._sync_hosts import FleetResult, HostResult, sync_hosts
from podsync.loop._sync import Observation
from podsync.model._pod import Pod
from podsync.runtime._protocol import Runtime

__all__: list[str] = []

#: The layout of ``apply --hosts --json``'s document.
FLEET_FORMAT_VERSION = 1


def cmd_apply_hosts(args: argparse.Namespace, console: Console, factory: Any) -> int:
    """``apply --hosts``; ``factory`` makes a runtime from an engine address (the
    command line's ``RuntimeFactory``)."""
    _check(args)
    fmt = output_format(args, "apply --hosts")
    root_dir = _root_dir(args)
    hosts = _read_hosts(args.hosts)
    try:
        load: dict[str, Any] = {}
        if args.max_bytes is not None:
            load["max_bytes"] = args.max_bytes
        desired = load_host_pods(
            list(args.sources),
            hosts,
            hosts_file=args.hosts,
            on_warning=console.warning,
            secret_key=_host_key(root_dir),
            etcd=etcd_options(args, console.warning),
            **load,
        )
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None
    options = _plan_options(args, console)
    everyone = [pod for pods in desired.values() for pod in pods]
    warn_unpublished_ports(console, everyone, options)
    if not everyone:
        console.warning("the sources describe no pods")
    runtimes: dict[str, Runtime] = {}
    try:
        for host in hosts:
            runtimes[host.name] = _runtime(host, factory)
        engines = {host.name: host.engine for host in hosts}
        started = console.clocks.elapsed()

        def show(name: str, the_plan: Plan, observation: Observation) -> bool:
            warn_rejected(console, the_plan)
            if fmt is None:
                console.print(f"# {name} ({engines[name]})\n{the_plan.render()}")
            return the_plan.has_changes

        def progress(name: str, event: Event) -> None:
            if console.json:
                record = event_record(event)
                record["host"] = name
                line = json.dumps(record, ensure_ascii=False)
                with console.lock:
                    print(line, file=console.err, flush=True)
                return
            target = f"{event.pod}/{event.container}" if event.container else event.pod
            text = event_text(event)
            elapsed = console.clocks.elapsed() - started
            line = f"[{elapsed:5.1f}s] {name}: {target + ': ' if target else ''}{text}"
            with console.lock:
                print(line, file=console.err, flush=True)

        result = sync_hosts(
            desired,
            runtimes,
            options=options,
            workers=getattr(args, "workers", DEFAULT_WORKERS),
            on_event=progress,
            probe=_probe(args),
            hook_timeout=getattr(args, "hook_timeout", DEFAULT_HOOK_TIMEOUT),
            clock=console.clocks.given,
            before_apply=show,
        )
    finally:
        for runtime in runtimes.values():
            runtime.close()
    return _report(console, fmt, hosts, desired, result)


def _check(args: argparse.Namespace) -> None:
    if args.plan_file is not None:
        raise _UsageError("--hosts applies SOURCEs, not a saved --plan")
    if args.wait:
        raise _UsageError("--wait cannot be used with --hosts")
    if args.docker_host is not None:
        raise _UsageError(
            "-H/--docker-host cannot be used with --hosts: the hosts file names each host's engine"
        )


def _read_hosts(path: str) -> tuple[Host, ...]:
    try:
        return load_hosts(path)
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None


def _runtime(host: Host, factory: Any) -> Runtime:
    """The host's runtime: ``factory(address)`` (the command line's TLS flags and
    ``DOCKER_TLS_VERIFY``), or with the host's TLS settings a ``DockerRuntime`` that uses
    them instead."""
    if host.tls is None:
        runtime: Runtime = factory(host.engine)
        return runtime
    import docker.tls

    from podsync.runtime.docker._runtime import DockerRuntime

    tls = host.tls
    config = docker.tls.TLSConfig(
        client_cert=(tls.cert, tls.key) if tls.cert else None,
        ca_cert=tls.ca or None,
        verify=tls.ca or True,
    )
    return DockerRuntime(host=host.engine, tls=config)


def host_record(host: Host, outcome: HostResult, pods: Sequence[Pod]) -> dict[str, Any]:
    """One host's outcome as the JSON object of ``apply --hosts -o json``: the host,
    its engine, root directory, number of pods, whether it is ok and its error, then -
    once it was synced - what ``apply -o json`` says of one engine (``apply_record``)."""
    record: dict[str, Any] = {
        "host": host.name,
        "engine": host.engine,
        "root_dir": outcome.root_dir,
        "pods": len(pods),
        "ok": _host_ok(outcome),
        "error": outcome.error or None,
    }
    result = outcome.result
    if result is not None:
        record.update(apply_record(result.plan, result.apply_result if result.applied else None))
    return record


def _host_ok(outcome: HostResult) -> bool:
    return outcome.ok and outcome.result is not None and not outcome.result.plan.rejected


def _report(
    console: Console,
    fmt: str | None,
    hosts: Sequence[Host],
    desired: Mapping[str, Sequence[Pod]],
    result: FleetResult,
) -> int:
    records = [host_record(h, result[h.name], desired[h.name]) for h in hosts]
    failed = [r["host"] for r in records if not r["ok"]]
    for record in records:
        line = _summary_line(record)
        if fmt is None:
            console.print(line)
        if console.json:
            console.record("host-summary", line, **record)
        if record["error"]:
            console.error(f"host {record['host']} ({record['engine']}): {record['error']}")
        for failure in record.get("failures", ()):
            console.error(f"host {record['host']}: {failure}")
    fleet = f"Fleet: {len(hosts) - len(failed)} of {len(hosts)} host(s) applied" + (
        f"; failed: {', '.join(failed)}." if failed else "."
    )
    if fmt is not None:
        document = {
            "format_version": FLEET_FORMAT_VERSION,
            "ok": not failed,
            "failed": failed,
            "hosts": records,
        }
        print_document(console, fmt, json.dumps(document, indent=2, ensure_ascii=False))
    else:
        console.print(fleet)
    if failed:
        console.error(f"{len(failed)} of {len(hosts)} host(s) failed: {', '.join(failed)}")
        return EXIT_ERROR
    return EXIT_OK


def _summary_line(record: Mapping[str, Any]) -> str:
    name = record["host"]
    if record["error"]:
        return f"{name}: not applied: {record['error']}"
    if not record["applied"]:
        return f"{name}: No changes. {record['pods']} pod(s) up to date."
    outcome = "complete!" if record["failed"] == 0 else "failed!"
    rejected = f", {len(record['rejected'])} pod(s) rejected" if record["rejected"] else ""
    return (
        f"{name}: Apply {outcome} {record['done']} done, {record['failed']} failed, "
        f"{record['skipped']} skipped in {record['duration']:.1f}s{rejected}."
    )
