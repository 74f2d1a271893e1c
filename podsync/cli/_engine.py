"""The engine a one-shot command works on, and one sync or apply of it on the console.

The engine is the runtime a ``RuntimeFactory`` makes from ``--docker-host`` (by default
``docker_factory``'s: a ``DockerRuntime``, its address checked before any call, reached
as the docker CLI reaches it - TLS from the ``--tls*`` flags and ``DOCKER_TLS_VERIFY`` /
``DOCKER_CERT_PATH`` (``EngineTLS``), ``ssh://`` through the ``ssh`` command), opened
for the command and closed after it (``_engine``). A command observes it (``_observe``),
syncs it (``_sync_pods``: observe, probe, plan, apply, through ``podsync.sync``) or
applies a plan it already has (``_run_apply``: a saved plan); either way an
applied plan shows its progress on standard error, then its summary on standard output
and its failures (``podsync.cli._console``). An engine or a root directory that cannot be
used is a ``_Failure``: one error line, exit code 1.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import urllib.parse
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from podsync.actions._actions import Plan
from podsync.actions._options import PlanOptions
from podsync.applier._defaults import DEFAULT_HOOK_TIMEOUT, DEFAULT_WORKERS
from podsync.applier._results import Event, EventKind
from podsync.cli._args import _Failure
from podsync.cli._console import Console, Progress, changes, report_apply
from podsync.cli._planning import _probe
from podsync.model._pod import Pod
from podsync.model._pulls import PullFailure
from podsync.runtime._protocol import Runtime

# ``sync``, ``observe`` and ``apply`` (the planner, the prober, the hooks' handlers) are
# imported by the functions that call them: ``main`` imports this module for the
# engine's address, and ``hosts`` or ``publish`` never contact an engine (issue 33).
if TYPE_CHECKING:
    import docker.tls

    from podsync.applier._results import ApplyResult
    from podsync.loop._sync import SyncResult
    from podsync.model._observation import Observation

__all__: list[str] = []

#: Makes a runtime for an engine address (``--docker-host``; ``None``: the environment).
RuntimeFactory = Callable[[str | None], Runtime]

# ---------------------------------------------------------------------------------------
# The engine


#: Where a warning about the engine's transport goes (``Console.warning``), if anywhere.
Warn = Callable[[str], None]

#: The docker CLI's TLS flags, in the order they are named in messages.
TLS_FLAGS = ("--tls", "--tlsverify", "--tlscacert", "--tlscert", "--tlskey")


@attrs.frozen
class EngineTLS:
    """How to speak TLS to a ``tcp://`` engine, resolved as the docker CLI resolves its
    flags and environment (``cli/flags.ClientOptions.SetDefaultOptions`` and
    ``cli/command.newAPIClientFromEndpoint`` of docker/cli):

    * ``--tlsverify``, or ``DOCKER_TLS_VERIFY`` set to anything but the empty string
      (even ``0``), turns on TLS *and* the verification of the engine's certificate;
    * ``--tls``, or ``DOCKER_TLS`` non-empty, turns on TLS without verification;
    * the files default to ``ca.pem``, ``cert.pem`` and ``key.pem`` in
      ``DOCKER_CERT_PATH``, else in the docker CLI's configuration directory
      (``DOCKER_CONFIG``, else ``~/.docker``); a default client certificate or key that
      does not exist is not used, a file named by a flag must exist;
    * ``DOCKER_CERT_PATH`` alone does not turn TLS on (the docker SDK's ``from_env``
      does; the docker CLI does not, and podsync's command line is the docker CLI's).

    ``enabled`` false: plain HTTP. ``given`` are the TLS flags on the command line.
    """

    enabled: bool
    verify: bool
    ca: str | None
    cert: str | None
    key: str | None
    given: tuple[str, ...] = ()

    @classmethod
    def resolve(cls, args: argparse.Namespace | None, environ: Mapping[str, str]) -> EngineTLS:
        """The TLS settings of ``args`` (the engine flags; ``None``: none given) and
        ``environ`` (``DOCKER_TLS_VERIFY``, ``DOCKER_TLS``, ``DOCKER_CERT_PATH``,
        ``DOCKER_CONFIG``, ``HOME``)."""

        def flag(name: str) -> Any:
            return getattr(args, name, None) if args is not None else None

        given = tuple(f for f in TLS_FLAGS if flag(f.removeprefix("--")) not in (None, False))
        verify = bool(flag("tlsverify")) or environ.get("DOCKER_TLS_VERIFY", "") != ""
        enabled = verify or bool(flag("tls")) or environ.get("DOCKER_TLS", "") != ""
        directory = environ.get("DOCKER_CERT_PATH", "") or _docker_config_dir(environ)

        def file(name: str, default: str, *, kept_when_missing: bool) -> str | None:
            chosen = flag(name)
            if chosen:
                return str(chosen)
            path = os.path.join(directory, default)
            return path if kept_when_missing or os.path.exists(path) else None

        return cls(
            enabled=enabled,
            verify=verify,
            # Without verification the CA is not read (docker/go-connections'
            # tlsconfig.Client reads CAFile only when InsecureSkipVerify is false).
            ca=file("tlscacert", "ca.pem", kept_when_missing=True) if verify else None,
            cert=file("tlscert", "cert.pem", kept_when_missing=False),
            key=file("tlskey", "key.pem", kept_when_missing=False),
            given=given,
        )

    def config(self) -> docker.tls.TLSConfig:
        """The docker SDK's ``TLSConfig`` for these settings.

        Raises:
            _Failure: a file is missing or unreadable, or a client certificate comes
                without its key (or the reverse); the message names the file and the
                flag that sets it.
        """
        import docker.tls

        for path, flag, what in (
            (self.ca, "--tlscacert", "CA certificate"),
            (self.cert, "--tlscert", "client certificate"),
            (self.key, "--tlskey", "client key"),
        ):
            if path is not None and not os.access(path, os.R_OK):
                reason = "does not exist" if not os.path.exists(path) else "cannot be read"
                raise _Failure(
                    f"cannot use TLS: the {what} {path} {reason} (set it with {flag}, or "
                    "DOCKER_CERT_PATH to a directory with ca.pem, cert.pem and key.pem)"
                )
        if (self.cert is None) != (self.key is None):
            raise _Failure(
                "cannot use TLS: a client certificate needs its key and a key its certificate "
                f"(--tlscert {self.cert or '?'}, --tlskey {self.key or '?'})"
            )
        return docker.tls.TLSConfig(
            client_cert=(self.cert, self.key) if self.cert and self.key else None,
            ca_cert=self.ca,
            verify=self.ca if self.verify and self.ca else self.verify,
        )


def _docker_config_dir(environ: Mapping[str, str]) -> str:
    """The docker CLI's configuration directory (``cli/config.Dir``): ``DOCKER_CONFIG``,
    else ``~/.docker``."""
    configured = environ.get("DOCKER_CONFIG", "")
    if configured:
        return configured
    home = environ.get("HOME", "") or os.path.expanduser("~")
    return os.path.join(home, ".docker")


def docker_factory(
    args: argparse.Namespace | None,
    warn: Warn | None = None,
    environ: Mapping[str, str] | None = None,
) -> RuntimeFactory:
    """The command line's runtime factory: a ``DockerRuntime`` for an address
    (``None``: ``DOCKER_HOST``, else podman's ``CONTAINER_HOST``, else the local socket:
    ``environment_host``), with the TLS of ``args``' flags
    and of the environment (``EngineTLS``), its address checked before any call.

    ``warn`` hears of a transport anyone on the way can read or change: plain HTTP to an
    engine that is not on the loopback interface, and TLS that verifies nothing. podsync
    warns and goes on, as the docker CLI goes on: a plain engine on a trusted network (or
    behind a tunnel ending on a private address) is a setup people run, and refusing it
    would break them; but the warning says that whoever reaches the port is root on the
    engine's host.
    """
    env = os.environ if environ is None else environ
    tls = EngineTLS.resolve(args, env)
    warned: set[str] = set()

    def say(message: str) -> None:
        if warn is not None and message not in warned:
            warned.add(message)
            warn(message)

    def make(host: str | None) -> Runtime:
        from podsync.runtime.docker._runtime import DockerRuntime, environment_host

        if host:
            address, where = host, "--docker-host"
        else:
            try:
                address, where = environment_host(env)
            except ValueError as exc:
                raise _Failure(str(exc)) from None
        scheme = address.partition("://")[0] if "://" in address else ""
        if scheme != "tcp":
            if tls.given:
                raise _Failure(
                    f"{', '.join(tls.given)}: TLS is for tcp:// engines, and the engine is "
                    f"{address} ({where})"
                )
            _check_docker_host(address, where)
            return DockerRuntime(host=address, use_ssh_client=scheme == "ssh")
        address = _with_default_port(address, tls=tls.enabled)
        _check_docker_host(address, where)
        if not tls.enabled:
            if not _loopback(address):
                say(
                    f"the Docker engine at {address} is spoken to in plain HTTP, with no "
                    "authentication: whoever can reach that port is root on the engine's "
                    "host, and whatever is on the way reads and changes every call; use "
                    "TLS (--tlsverify, the engine's port 2376) or ssh://"
                )
            return DockerRuntime(host=address)
        if not tls.verify:
            import urllib3.exceptions

            # --tls without --tlsverify is what the user asked for; the warning is said
            # once here, not by urllib3 on every call.
            warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
            say(
                f"the Docker engine at {address} is spoken to in TLS without verifying its "
                "certificate (--tls, not --tlsverify): whatever is on the way can pose as it"
            )
        return DockerRuntime(host=address, tls=tls.config())

    return make


def docker_runtime(host: str | None) -> Runtime:
    """A ``DockerRuntime`` for ``host`` (``None``: the ``DOCKER_*`` environment), as the
    command line makes it with no engine flags and no warnings (``docker_factory``)."""
    return docker_factory(None)(host)


def _with_default_port(address: str, *, tls: bool) -> str:
    """``tcp://host`` with the docker CLI's port when it names none (``opts.ParseTCPAddr``
    of docker/cli with ``DefaultHTTPPort`` or ``DefaultTLSHTTPPort``): 2376 with TLS,
    2375 without. The docker SDK refuses an address without a port."""
    rest = address.removeprefix("tcp://")
    netloc, slash, path = rest.partition("/")
    if netloc.endswith("]") or ":" not in netloc:
        netloc = f"{netloc}:{2376 if tls else 2375}"
    return f"tcp://{netloc}{slash}{path}"


def _loopback(address: str) -> bool:
    """Whether a ``tcp://`` address is on the loopback interface (127.0.0.0/8, ::1,
    ``localhost``): nothing but this machine is on the way."""
    host = urllib.parse.urlsplit(address).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_docker_host(address: str, where: str) -> None:
    import docker.errors
    import docker.utils

    try:
        docker.utils.parse_host(address)
    except (docker.errors.DockerException, ValueError) as exc:
        raise _Failure(f"invalid Docker host {address!r} ({where}): {exc}") from None


@contextlib.contextmanager
def _engine(factory: RuntimeFactory, host: str | None) -> Iterator[Runtime]:
    runtime = factory(host)
    try:
        yield runtime
    finally:
        runtime.close()


def _observe(
    runtime: Runtime, root_dir: str, *, images: bool = True, volumes: bool = False
) -> Observation:
    """``observe`` for a command: a root directory that cannot be listed is the
    command's failure, in one line (the operating commands need no images)."""
    from podsync.loop._observe import observe

    try:
        return observe(runtime, root_dir, images=images, volumes=volumes)
    except OSError as exc:
        raise _Failure(f"cannot list the root directory {root_dir}: {exc}") from None


# ---------------------------------------------------------------------------------------
# Syncing and applying


def _sync_pods(
    console: Console,
    runtime: Runtime,
    pods: Sequence[Pod],
    options: PlanOptions,
    args: argparse.Namespace,
    *,
    verb: str,
    before_apply: Callable[[Plan, Observation], bool],
    record_probes: bool = True,
    pull_failures: dict[tuple[str, str], PullFailure] | None = None,
    summary: bool = True,
) -> SyncResult:
    """One ``podsync.sync`` (observe, probe, plan, apply): ``before_apply`` sees the
    plan first and says whether to apply it; an applied plan is reported with progress
    on stderr, then the summary (stdout, unless ``summary`` is false: ``-o``) and the
    failures. ``pull_failures`` keeps the failed pulls across the syncs of one command
    (``apply --wait``), for their back-off."""
    from podsync.loop._sync import sync

    progress: Progress | None = None

    def decide(the_plan: Plan, observation: Observation) -> bool:
        nonlocal progress
        if not before_apply(the_plan, observation):
            return False
        progress = Progress(console, changes(the_plan))
        return True

    def on_event(event: Event) -> None:
        # The progress of applying the plan. Probes run before the plan is made: a
        # failure that decided a kill shows in the plan, as the reason of a replacement;
        # the others (below failureThreshold, readiness, a probe that could not run)
        # change no plan, so they are warnings here.
        if progress is not None:
            progress(event)
        elif event.kind in (EventKind.UNHEALTHY, EventKind.PROBE_ERROR) and event.reason is None:
            console.warning(
                f"{event.pod}/{event.container}: {event.message}",
                pod=event.pod,
                container=event.container,
            )

    try:
        result = sync(
            pods,
            runtime,
            options=options,
            workers=getattr(args, "workers", DEFAULT_WORKERS),
            on_event=on_event,
            probe=_probe(args),
            hook_timeout=getattr(args, "hook_timeout", DEFAULT_HOOK_TIMEOUT),
            clock=console.clocks.given,
            before_apply=decide,
            record_probes=record_probes,
            pull_failures=pull_failures,
        )
    except BrokenPipeError:
        raise
    except OSError as exc:
        # Observing lists it; probing reads and writes the probe records in it.
        raise _Failure(f"cannot use the root directory {options.root_dir}: {exc}") from None
    finally:
        if progress is not None:
            progress.close()
    if result.applied:
        report_apply(console, result.apply_result, verb=verb, summary=summary)
    return result


def _run_apply(
    console: Console,
    the_plan: Plan,
    runtime: Runtime,
    args: argparse.Namespace,
    *,
    verb: str,
    summary: bool = True,
) -> ApplyResult:
    """Apply with progress on stderr, then the summary (stdout, unless ``summary`` is
    false) and the failures."""
    from podsync.applier._apply import apply

    progress = Progress(console, changes(the_plan))
    try:
        result = apply(
            the_plan,
            runtime,
            workers=args.workers,
            on_event=progress,
            hook_timeout=args.hook_timeout,
            clock=console.clocks.given,
        )
    finally:
        progress.close()
    report_apply(console, result, verb=verb, summary=summary)
    return result
