"""``podsync publish`` and the etcd options of the commands (``--etcd-ca`` ...).

``publish`` warns when the host has no live heartbeat (no ``podsync run`` reports from
it: nothing may run what is published), on standard error and in ``-o json``'s
``warnings``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podsync.cli._args import EXIT_OK, _Failure
from podsync.cli._console import Console
from podsync.cli._etcd_args import PASSWORD_ENV
from podsync.cli._output import output_format, print_document
from podsync.exceptions import ConfigError

if TYPE_CHECKING:
    from podsync.etcd._urls import EtcdOptions
    from podsync.fleet._publish import PublishResult

__all__: list[str] = []


#: The layout of ``publish -o json``'s document.
PUBLISH_FORMAT_VERSION = 1

#: The warning of ``--etcd-insecure`` with a user.
INSECURE_WARNING = (
    "--etcd-insecure: the --etcd-user's password and token may go over plain http, "
    "where anyone on the path can read them and write this host's pods"
)


def etcd_options(
    args: argparse.Namespace, on_warning: Callable[[str], object] | None = None
) -> EtcdOptions | None:
    """The ``EtcdOptions`` of the command line; ``None`` when no etcd option is given.

    Args:
        on_warning: told once when ``--etcd-insecure`` is given with ``--etcd-user``.
    """
    ca, cert, key = (getattr(args, n, None) for n in ("etcd_ca", "etcd_cert", "etcd_key"))
    user, password_file = (
        getattr(args, "etcd_user", None),
        getattr(args, "etcd_password_file", None),
    )
    tls, insecure = (
        bool(getattr(args, "etcd_tls", False)),
        bool(getattr(args, "etcd_insecure", False)),
    )
    if not any((ca, cert, key, user, password_file, tls, insecure)):
        return None
    from podsync.etcd._urls import EtcdOptions

    password: str | None = None
    if password_file is not None:
        if user is None:
            raise _Failure("--etcd-password-file is the password of an --etcd-user: give one")
        try:
            with open(password_file, encoding="utf-8") as stream:
                password = stream.readline().rstrip("\r\n")
        except OSError as exc:
            raise _Failure(f"--etcd-password-file {password_file}: {exc.strerror or exc}") from None
    elif user is not None:
        password = os.environ.get(PASSWORD_ENV)
        if password is None:
            raise _Failure(
                f"--etcd-user {user} needs a password: --etcd-password-file FILE or {PASSWORD_ENV}"
            )
    for option, path in (("--etcd-ca", ca), ("--etcd-cert", cert), ("--etcd-key", key)):
        if path is not None and not os.path.isfile(path):
            raise _Failure(f"{option} {path}: no such file")
    try:
        options = EtcdOptions(
            ca_file=ca,
            cert_file=cert,
            key_file=key,
            user=user,
            password=password,
            tls=tls,
            insecure=insecure,
        )
    except ValueError as exc:
        raise _Failure(f"etcd options: {exc}") from None
    if insecure and user is not None and on_warning is not None:
        on_warning(INSECURE_WARNING)
    return options


def endpoint_options(args: argparse.Namespace, console: Console) -> EtcdOptions | None:
    """The etcd options of a command whose ``--etcd`` gives endpoints only (``publish``,
    ``hosts``, ``status --etcd``, ``events --etcd``), after checking ``--etcd`` and that
    no password would go in clear (a ``_Failure`` naming ``--etcd``)."""
    from podsync.etcd._urls import EtcdOptions, check_credentials_transport, parse_etcd_url

    options = etcd_options(args, console.warning)
    try:
        endpoints = parse_etcd_url(args.etcd, key=False)
        check_credentials_transport(endpoints, options or EtcdOptions())
    except ValueError as exc:
        raise _Failure(f"--etcd {args.etcd}: {exc}") from None
    return options


def cmd_publish(args: argparse.Namespace, console: Console) -> int:
    """Validate, compare and write; 0 when written (or nothing to write, or a dry run)."""
    from podsync.etcd._urls import host_key
    from podsync.fleet._publish import publish
    from podsync.load._sources import DEFAULT_MAX_BYTES

    fmt = output_format(args)
    options = endpoint_options(args, console)
    try:
        host_key(args.host)
    except ValueError as exc:
        raise _Failure(f"--host: {exc}") from None
    try:
        result = publish(
            list(args.sources),
            etcd=args.etcd,
            host=args.host,
            options=options,
            dry_run=args.dry_run,
            if_revision=args.if_revision,
            max_bytes=args.max_bytes if args.max_bytes is not None else DEFAULT_MAX_BYTES,
            on_warning=console.warning,
        )
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None
    if result.heartbeat_warning is not None:
        console.warning(result.heartbeat_warning)
    if fmt is not None:
        print_document(console, fmt, json.dumps(publish_document(result, args.dry_run), indent=2))
        return EXIT_OK
    console.print(result.render())
    if args.dry_run:
        console.note("Dry run: nothing was written.")
    elif result.revision is not None:
        console.print(f"Published revision {result.revision} to {result.url}.")
    return EXIT_OK


def publish_document(result: PublishResult, dry_run: bool) -> dict[str, Any]:
    """``publish -o json``'s document (a changed Secret's diff hides its values, as
    ``render`` does; the value itself is not in it)."""
    return {
        "format_version": PUBLISH_FORMAT_VERSION,
        "url": result.url,
        "host": result.host,
        "dry_run": dry_run,
        "added": list(result.added),
        "changed": list(result.changed),
        "removed": list(result.removed),
        "diff": list(result.diff),
        "read_revision": result.read_revision,
        "revision": result.revision,
        "live_heartbeat": result.live_heartbeat,
        "warnings": [w for w in (result.heartbeat_warning,) if w is not None],
    }
