"""The combinations of arguments argparse cannot check, refused before a command runs.

A refused combination is a ``_UsageError``: ``main`` prints it under the usage line, as
argparse prints its own errors, and exits ``EXIT_USAGE`` (1). ``_check_combinations``
checks every command's; ``apply --hosts`` checks its own (``podsync.cli._fleet``). The
planning options can be told given or not (their argparse default is ``_UNSET``,
``podsync.cli._args``): they make no sense with ``apply --plan FILE``, whose plan was
made with its own.
"""

from __future__ import annotations

import argparse

from podsync.cli._args import _UNSET

__all__: list[str] = []


class _UsageError(Exception):
    """A combination of options argparse cannot express; exit code 1 with usage."""


# Options that shape a plan: they make no sense with ``apply --plan FILE``, whose plan
# was made with its own. Their argparse default is _UNSET, so "given" can be told apart.
_PLANNING_OPTIONS = {
    "network_image": "--network-image",
    "network_mode": "--network-mode",
    "cluster_dns": "--cluster-dns",
    "cluster_domain": "--cluster-domain",
    "pod_security": "--pod-security",
    "allow_privileged": "--allow-privileged",
    "allow_host_namespaces": "--allow-host-namespaces",
    "allowed_host_paths": "--allowed-host-paths",
    "allowed_capabilities": "--allowed-capabilities",
    "allow_unconfined": "--allow-unconfined",
    "allowed_unsafe_sysctls": "--allowed-unsafe-sysctls",
    "system_reserved": "--system-reserved",
    "no_delete": "--no-delete",
    "scope": "--scope",
    "stop_timeout": "--stop-timeout",
    "max_per_container": "--max-per-container",
    "min_age": "--min-age",
    "max_total": "--max-total",
    "remove_dangling_images": "--remove-dangling-images",
    "no_probe": "--no-probe",
    "adopt_2014_containers": "--adopt-2014-containers",
    "resolv_conf": "--resolv-conf",
}


def _check_combinations(args: argparse.Namespace) -> None:
    """Raise ``_UsageError`` for the first combination of ``args`` that cannot be used."""
    if args.command == "plan" and args.probe and args.no_probe is not _UNSET:
        raise _UsageError("--probe and --no-probe cannot be given together")
    if args.command == "exec" and not args.command_line:
        raise _UsageError("give the command to run: podsync exec POD -- COMMAND...")
    if args.command == "run":
        if not args.sources:
            raise _UsageError("give the pods' SOURCEs")
        if "-" in args.sources:
            raise _UsageError("standard input ('-') is read once and cannot be a SOURCE of run")
        if args.resolv_conf is not _UNSET and (args.cluster_dns, args.cluster_domain) == (
            _UNSET,
            _UNSET,
        ):
            raise _UsageError("--resolv-conf is used only with --cluster-dns or --cluster-domain")
    if args.command == "down":
        _check_down(args)
    if args.command not in ("plan", "apply"):
        return
    if args.command == "apply" and args.plan_file is not None:
        # A saved plan keeps its URLs without their credentials (shown_url); a URL
        # SOURCE gives them back. Anything else is a second set of pods.
        if any(not s.startswith(("http://", "https://", "etcd://")) for s in args.sources):
            raise _UsageError(
                "give SOURCEs or --plan FILE, not both (with --plan, a SOURCE may only be a "
                "URL the plan was saved with, to give its credentials)"
            )
        if args.wait:
            raise _UsageError(
                "--wait needs the pods: use podsync apply --wait SOURCE..., not --plan"
            )
        given = [
            flag for name, flag in _PLANNING_OPTIONS.items() if getattr(args, name) is not _UNSET
        ]
        if given:
            raise _UsageError(
                f"{', '.join(given)} cannot be used with --plan: a saved plan was made "
                "with its own options"
            )
    elif not args.sources:
        raise _UsageError("give the pods' SOURCEs, or --plan FILE")
    cluster = (args.cluster_dns, args.cluster_domain)
    if args.resolv_conf is not _UNSET and cluster == (_UNSET, _UNSET):
        # Pods then get the engine's own DNS settings: the file would not be used.
        raise _UsageError("--resolv-conf is used only with --cluster-dns or --cluster-domain")


def _check_down(args: argparse.Namespace) -> None:
    """``down`` takes ``apply``'s options (``podsync.cli._args.DOWN_OPTIONS_NOTE``) and
    ignores those that cannot change what it removes; it refuses those that would, were
    they ignored: a saved plan, a fleet, and ``--no-delete`` over a whole scope. Its
    ``-o``/``--json`` print what it did, as ``apply``'s."""
    if args.plan_file is not None:
        raise _UsageError("down takes the pods' SOURCEs or --scope NAME, not --plan FILE")
    if args.hosts is not None:
        raise _UsageError("down removes pods from one engine: give it with -H, not --hosts")
    if args.no_delete is not _UNSET and not args.sources:
        # --no-delete keeps the pods the sources do not describe: over a scope alone,
        # that is every pod down would remove.
        raise _UsageError(
            "--no-delete with --scope and no SOURCEs would remove nothing: give the SOURCEs"
        )
