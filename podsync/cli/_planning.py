"""What the arguments say about planning: the planning options they give
(``PlanOptions``, the host's resolv.conf included), the root directory, whether to
probe before planning, and the host's key for Secret digests under the root directory.

A planning option that was not given holds ``_UNSET``, the parser's default
(``podsync.cli._args``), so that ``_given`` tells it from a value and puts the default
in its place: ``apply --plan`` refuses a ``--root-dir`` other than its plan's, and the
checks (``podsync.cli._checks``) refuse planning options given with it. With
``--cluster-dns`` or ``--cluster-domain``, ClusterFirst pods get the host's name servers
and search domains after the cluster's, read from the resolv.conf ``_host_resolv_conf``
chooses (``--resolv-conf``, else the host's, as Docker and kubeadm choose it). A file
that cannot be read, or a key that cannot be made, is a ``_Failure``: one error line,
exit code 1.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from podsync.actions._options import (
    DEFAULT_NETWORK_IMAGE,
    NODE_SCOPE,
    GCPolicy,
    PlanOptions,
    PodSecurityLevel,
)
from podsync.cli._args import (
    _DEFAULT_GC,
    _DEFAULT_ROOT_DIR,
    _DEFAULT_STOP_TIMEOUT,
    _UNSET,
    _Failure,
)
from podsync.cli._console import Console
from podsync.model._pod import ResourceList
from podsync.spec._resolv import (
    HOST_RESOLV_CONF,
    SYSTEMD_RESOLV_CONF,
    is_loopback_nameserver,
    only_loopback_nameservers,
    parse_resolv_conf,
)

__all__: list[str] = []

# Where the host's DNS settings are read from (module attributes, so tests point them
# at files of their own).
_RESOLV_CONF = HOST_RESOLV_CONF
_SYSTEMD_RESOLV_CONF = SYSTEMD_RESOLV_CONF


def _host_resolv_conf(args: argparse.Namespace, console: Console) -> str:
    """The text of the resolv.conf ClusterFirst pods get their host settings from.

    ``--resolv-conf FILE`` names it (``""``: none), as the kubelet's. Otherwise it is
    ``/etc/resolv.conf`` - or, when that lists only loopback name servers (the
    systemd-resolved stub ``127.0.0.53``) and ``/run/systemd/resolve/resolv.conf``
    exists, that file, as Docker (libnetwork ``resolvconf.Path``) and kubeadm choose it.
    A missing ``/etc/resolv.conf`` gives no host settings; any other file that cannot be
    read fails the command. The loopback name servers the planner will leave out are
    reported as warnings.
    """
    given = _given(args, "resolv_conf", None)
    if given == "":
        return ""
    if given is not None:
        path, text = str(given), _read_resolv_conf(str(given))
    else:
        path = _RESOLV_CONF
        try:
            text = _read_resolv_conf(path, missing_ok=True)
        except FileNotFoundError:
            return ""
        if only_loopback_nameservers(parse_resolv_conf(text)) and os.path.exists(
            _SYSTEMD_RESOLV_CONF
        ):
            path, text = _SYSTEMD_RESOLV_CONF, _read_resolv_conf(_SYSTEMD_RESOLV_CONF)
    if _given(args, "network_mode", "") != "host":
        for server in parse_resolv_conf(text).nameservers:
            if is_loopback_nameserver(server):
                console.warning(
                    f"{path}: name server {server} is a loopback address, unreachable from "
                    "the pods' own network namespace: it is left out of their DNS (use "
                    "--resolv-conf FILE to name a resolv.conf with reachable servers)"
                )
    return text


def _read_resolv_conf(path: str, *, missing_ok: bool = False) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()
    except FileNotFoundError:
        if missing_ok:
            raise
        raise _Failure(f"cannot read {path}: No such file or directory") from None
    except OSError as exc:
        raise _Failure(f"cannot read {path}: {exc.strerror or exc}") from None


def _host_key(root_dir: str) -> Callable[[], bytes]:
    """The host's digest key for Secret values under ``root_dir``, read (or made) when
    the loader first needs it (``load_pods(secret_key=...)``)."""

    def read() -> bytes:
        from podsync.host._secret_key import host_secret_key

        try:
            return host_secret_key(root_dir)
        except OSError as exc:
            raise _Failure(
                f"cannot use the key for Secret digests under {root_dir}: {exc.strerror or exc}"
            ) from None

    return read


def _root_dir(args: argparse.Namespace) -> str:
    # Absolute: the plan's binds and pod directories are built from it, and the engine
    # only takes absolute bind sources.
    return os.path.abspath(str(_given(args, "root_dir", _DEFAULT_ROOT_DIR)))


def _given(args: argparse.Namespace, name: str, default: Any) -> Any:
    """A planning option's value, or ``default`` when it was not given."""
    value = getattr(args, name, _UNSET)
    return default if value is _UNSET else value


def _probe(args: argparse.Namespace) -> bool:
    """Whether to run liveness probes before planning. ``plan`` is a dry run: probes
    (exec probes run commands inside containers) only with ``--probe``; ``apply``
    probes unless ``--no-probe``."""
    if args.command == "plan":
        return bool(args.probe)
    return not _given(args, "no_probe", False)


def _plan_options(args: argparse.Namespace, console: Console | None = None) -> PlanOptions:
    """The planning options of ``args``; warnings (about the host's resolv.conf) go to
    ``console``, by default text on standard error."""

    def given(name: str, default: Any) -> Any:
        return _given(args, name, default)

    dns = given("cluster_dns", "")
    domain = given("cluster_domain", "")
    return PlanOptions(
        network_image=given("network_image", DEFAULT_NETWORK_IMAGE),
        network_mode=given("network_mode", ""),
        cluster_dns=dns,
        cluster_domain=domain,
        host_resolv_conf=_host_resolv_conf(args, console or Console()) if dns or domain else "",
        pod_security=PodSecurityLevel(given("pod_security", PodSecurityLevel.BASELINE)),
        allow_privileged=given("allow_privileged", False),
        allow_host_namespaces=given("allow_host_namespaces", False),
        allowed_host_paths=tuple(p for paths in given("allowed_host_paths", []) for p in paths),
        allowed_capabilities=tuple(
            dict.fromkeys(c for caps in given("allowed_capabilities", []) for c in caps)
        ),
        allow_unconfined=given("allow_unconfined", False),
        allowed_unsafe_sysctls=tuple(
            item.strip()
            for value in given("allowed_unsafe_sysctls", [])
            for item in value.split(",")
            if item.strip()
        ),
        adopt_2014_containers=given("adopt_2014_containers", False),
        system_reserved=given("system_reserved", ResourceList()),
        allow_deletions=not given("no_delete", False),
        # A node agent owns the node (the kubelet's rule); plan and apply own the pods
        # they are given (``PlanOptions.scope``).
        scope=given("scope", NODE_SCOPE if args.command == "run" else None),
        root_dir=_root_dir(args),
        stop_timeout=given("stop_timeout", _DEFAULT_STOP_TIMEOUT),
        gc=GCPolicy(
            max_per_container=given("max_per_container", _DEFAULT_GC.max_per_container),
            min_age=given("min_age", _DEFAULT_GC.min_age),
            max_total=given("max_total", _DEFAULT_GC.max_total),
            remove_dangling_images=given("remove_dangling_images", False),
        ),
    )
