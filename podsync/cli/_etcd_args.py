"""The etcd options of the commands that read sources, ``podsync publish``'s arguments,
and those that read a fleet back: ``podsync hosts`` and ``--etcd`` / ``--host`` of
``status`` and ``events``.

Kept apart from ``_args`` (the other commands' parser), which adds them; what the
options mean is ``_etcd``'s (``etcd_options``), ``_fleet_read``'s and
``podsync.etcd._client``'s.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__: list[str] = []

#: Where the password of ``--etcd-user`` is read when no file is given.
PASSWORD_ENV = "PODSYNC_ETCD_PASSWORD"


def add_etcd_options(parser: argparse.ArgumentParser) -> None:
    """``--etcd-ca``, ``--etcd-tls``, ``--etcd-cert``, ``--etcd-key``, ``--etcd-user``,
    ``--etcd-password-file`` and ``--etcd-insecure``: how etcd sources (and ``publish``)
    reach etcd."""
    group = parser.add_argument_group("etcd (etcd://HOST:PORT[,HOST:PORT...]/KEY sources)")
    group.add_argument(
        "--etcd-ca",
        metavar="FILE",
        help="the CA certificate (PEM) of etcd's endpoints: etcd is then spoken to over https",
    )
    group.add_argument(
        "--etcd-tls",
        action="store_true",
        help="speak https to etcd's endpoints, verified with the system's CAs (or --etcd-ca)",
    )
    group.add_argument(
        "--etcd-cert", metavar="FILE", help="a client certificate (PEM), with --etcd-key"
    )
    group.add_argument("--etcd-key", metavar="FILE", help="the client certificate's key (PEM)")
    group.add_argument(
        "--etcd-user",
        metavar="NAME",
        help=f"an etcd user; its password is read from --etcd-password-file or {PASSWORD_ENV}",
    )
    group.add_argument(
        "--etcd-password-file",
        metavar="FILE",
        help="a file whose first line is the --etcd-user's password",
    )
    group.add_argument(
        "--etcd-insecure",
        action="store_true",
        help="send the --etcd-user's password and token over plain http to an endpoint "
        "that is not a loopback address (refused without it)",
    )


def add_publish_command(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """``podsync publish --etcd URL --host NAME [--dry-run] [--if-revision N] SOURCE...``."""
    p = commands.add_parser(
        "publish",
        parents=parents,
        allow_abbrev=False,
        help="write a host's pods to etcd",
        description="Validate the pods of the sources as plan does and write them to the "
        "host's etcd key, /registry/hosts/<NAME>/kubelet, where podsync run "
        "etcd://HOST:PORT/registry/hosts/<NAME>/kubelet on that host reads them. The write "
        "is a compare-and-swap on the key's revision as read: when another publisher wrote "
        "the key in between, nothing is written and the command fails (publish again to see "
        "the difference with what is there now).",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="pod files, directories, URLs, -")
    p.add_argument(
        "--etcd",
        required=True,
        metavar="URL",
        help="etcd's endpoints: etcd://HOST:PORT[,HOST:PORT...], or as etcdctl's "
        "--endpoints, https://HOST:PORT[,...] (TLS) or http://HOST:PORT[,...]",
    )
    p.add_argument("--host", required=True, metavar="NAME", help="the host the pods run on")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show the pods added, changed and removed, and write nothing",
    )
    p.add_argument(
        "--if-revision",
        type=int,
        metavar="N",
        help="write only if the key is still at revision N (the one a --dry-run showed; "
        "0: only if it does not exist)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FORMAT",
        help="print what was (or would be) published as json or yaml instead of text: the "
        "objects added, changed and removed, the revisions, and whether the host has a live "
        "heartbeat; an unknown format is a usage error",
    )


def add_fleet_read_options(command: argparse.ArgumentParser, what: str) -> None:
    """``--etcd URL`` and ``--host NAME`` on ``status`` and ``events``: ``what`` (the
    statuses, the events) read from the fleet's reports in etcd instead of the engine
    (``podsync.cli._fleet_read``), and the etcd options."""
    group = command.add_argument_group("fleet (reading what podsync run reports to etcd)")
    group.add_argument(
        "--etcd",
        metavar="URL",
        help=f"read {what} of every host that reports to this etcd (etcd://HOST:PORT[,...], "
        "or https:// / http:// endpoints) instead of the engine's",
    )
    group.add_argument(
        "--host",
        metavar="NAME",
        help="with --etcd: only this host's (its name under /registry/hosts/)",
    )
    add_etcd_options(command)


def add_hosts_command(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """``podsync hosts --etcd URL [-o json|yaml|wide]``."""
    p = commands.add_parser(
        "hosts",
        parents=parents,
        allow_abbrev=False,
        help="list the hosts that report to etcd, as kubectl get nodes",
        description="A row per host that reports to etcd (podsync run on it): Ready while its "
        "heartbeat's lease lives, NotReady once it expired; the age of its last heartbeat, "
        "its pods running and desired, and its engine. Changes nothing.",
    )
    p.add_argument(
        "--etcd",
        required=True,
        metavar="URL",
        help="etcd's endpoints: etcd://HOST:PORT[,HOST:PORT...], or as etcdctl's "
        "--endpoints, https://HOST:PORT[,...] (TLS) or http://HOST:PORT[,...]",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FORMAT",
        help="print the hosts as json, yaml or wide (the table with the podsync version, "
        "CPUs, memory, usage, last sync and sources) instead of text; an unknown format is "
        "a usage error",
    )
    add_etcd_options(p)
