"""resolv.conf: read the host's name servers and search list, and put the cluster's first.

Contract: ``parse_resolv_conf(text)`` reads the two settings the engine takes per
container (``--dns`` and ``--dns-search``) out of resolv.conf text and never raises;
``cluster_dns(host, ...)`` puts the cluster DNS server and search domains in front of
the host's, for pods with the ``ClusterFirst`` DNS policy. Reading ``/etc/resolv.conf``
is the caller's business.

Ported from the seed's ``parseResolvConf`` and ``applyClusterDNS`` (reference §2.5, test
§4.1 #28). The parsing rules, after resolv.conf(5):

1. The text is split into lines on ``\\n`` only, and each line is stripped of
   surrounding whitespace.
2. A blank line is skipped. A line whose first character is ``#`` or ``;`` is a comment:
   resolv.conf(5) names both characters ("in the first column"). The seed only knew
   ``#``; no seed case starts with ``;``, so all of them still hold. As in the seed, the
   check is made *after* stripping, so an indented ``#`` starts a comment too.
3. ``nameserver`` lines accumulate: every field after the keyword is added, in order.
   (The resolver reads one address per line; the seed took all fields, and so does
   podsync.)
4. Each ``search`` line *replaces* the search list with its fields: the last one wins,
   and a bare ``search`` clears it (resolv.conf(5): "the last instance wins").
5. Every other keyword (``domain``, ``options``, ``sortlist``, ...) is ignored, as in the
   seed.

Loopback name servers. A host's resolv.conf may name a resolver on the host's own
loopback: systemd-resolved's stub ``127.0.0.53`` (Ubuntu's default), a dnsmasq on
``127.0.1.1``, ``::1``. A pod has its own network namespace and its own loopback, where
nothing answers. So, as Docker's resolv.conf filter does (libnetwork ``resolvconf``:
``127.0.0.0/8`` and ``::1``) and as kubeadm and Docker do when they switch to
``/run/systemd/resolve/resolv.conf`` (kubelet-modern.md §12, the kubernetes
dns-debugging-resolution "Known issues"), ``without_loopback`` leaves them out, and
``only_loopback_nameservers`` says when the host file is such a stub and the shell
should read systemd-resolved's own file (``SYSTEMD_RESOLV_CONF``) instead.

Nothing here does I/O.
"""

from __future__ import annotations

import ipaddress

import attrs

from podsync.model._pod import DNSPolicy

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "ResolvConf",
    "cluster_dns",
    "is_loopback_nameserver",
    "only_loopback_nameservers",
    "parse_resolv_conf",
    "pod_host_name",
    "without_loopback",
]

#: The host's resolv.conf (the kubelet's ``--resolv-conf`` default).
HOST_RESOLV_CONF = "/etc/resolv.conf"

#: The resolv.conf systemd-resolved writes with the upstream servers it uses; on a host
#: whose ``/etc/resolv.conf`` is its stub (``127.0.0.53``), the one pods can use.
SYSTEMD_RESOLV_CONF = "/run/systemd/resolve/resolv.conf"

_LOOPBACK_V4 = ipaddress.ip_network("127.0.0.0/8")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")


@attrs.frozen
class ResolvConf:
    """The DNS settings of a container: name servers and search domains, in order."""

    nameservers: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()


_COMMENT_STARTS = ("#", ";")


def parse_resolv_conf(text: str) -> ResolvConf:
    """The name servers and search domains of resolv.conf ``text``.

    Name servers accumulate over ``nameserver`` lines; the last ``search`` line gives the
    search domains. Comments (``#`` or ``;`` first) and unknown keywords are skipped.
    Never raises: text that is not resolv.conf simply yields empty lists.
    """
    nameservers: list[str] = []
    searches: tuple[str, ...] = ()
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith(_COMMENT_STARTS):
            continue
        keyword, *values = stripped.split()
        if keyword == "nameserver":
            nameservers.extend(values)
        elif keyword == "search":
            searches = tuple(values)
    return ResolvConf(nameservers=tuple(nameservers), searches=searches)


def cluster_dns(
    host: ResolvConf, *, namespace: str, server: str = "", domain: str = ""
) -> ResolvConf:
    """The host's settings with the cluster's in front (seed applyClusterDNS).

    Args:
        host: the host's settings, usually ``parse_resolv_conf`` of ``/etc/resolv.conf``.
        namespace: the pod's namespace; its services resolve as ``<name>.<namespace>``.
        server: the cluster DNS server's address; empty leaves the name servers as the
            host's.
        domain: the cluster domain (e.g. ``cluster.local``); empty leaves the search
            list as the host's.

    Returns:
        Name servers ``[server, *host]`` when ``server`` is set; search domains
        ``["<namespace>.<domain>", domain, *host]`` when ``domain`` is set. The
        namespace's domain comes first so a bare service name finds the pod's own
        namespace before any other.
    """
    nameservers = host.nameservers
    if server:
        nameservers = (server, *nameservers)
    searches = host.searches
    if domain:
        searches = (f"{namespace}.{domain}", domain, *searches)
    return ResolvConf(nameservers=nameservers, searches=searches)


def is_loopback_nameserver(address: str) -> bool:
    """Whether ``address`` is a loopback address: in ``127.0.0.0/8``, or ``::1``
    (Docker's filter). A zone (``%eth0``) is ignored; text that is not an address is not
    loopback."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in _LOOPBACK_V4
    return ip == _LOOPBACK_V6


def without_loopback(conf: ResolvConf) -> ResolvConf:
    """``conf`` without its loopback name servers (``is_loopback_nameserver``): what a
    container in its own network namespace can use. The search domains stay."""
    kept = tuple(ns for ns in conf.nameservers if not is_loopback_nameserver(ns))
    return ResolvConf(nameservers=kept, searches=conf.searches)


def only_loopback_nameservers(conf: ResolvConf) -> bool:
    """Whether ``conf`` names at least one name server and every one is loopback - a
    local stub such as systemd-resolved's ``127.0.0.53``, which pods cannot reach."""
    return bool(conf.nameservers) and all(is_loopback_nameserver(ns) for ns in conf.nameservers)


def uses_cluster_dns(
    policy: DNSPolicy, *, server: str = "", domain: str = "", host_network: bool = False
) -> bool:
    """Whether a pod with DNS policy ``policy`` gets the cluster's DNS settings (and the
    host's after them) on its network container, rather than the engine's default.

    ``ClusterFirst`` pods not on the host's network and ``ClusterFirstWithHostNet`` pods,
    and only when a cluster DNS server or domain is configured: without either, the
    modern kubelet falls back to the host's settings (``getPodDNSType``,
    ``pkg/kubelet/network/dns/dns.go``), and podsync leaves DNS to the engine, which
    gives containers the host's resolv.conf. (Docker gives a container on the host's
    network a resolv.conf of its own when it is given DNS settings, and the containers
    that join its network share it.)
    """
    if not (server or domain):
        return False
    if policy is DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET:
        return True
    return policy is DNSPolicy.CLUSTER_FIRST and not host_network


def pod_host_name(
    name: str, hostname: str, subdomain: str, namespace: str, domain: str
) -> tuple[str, str]:
    """The hostname and the domain of a pod's network container, as the modern kubelet
    forms them (``GeneratePodHostNameAndDomain``, pkg/kubelet/kubelet_pods.go): the
    hostname is ``hostname``, else the pod's name; the domain is
    ``<subdomain>.<namespace>.svc.<cluster domain>`` when the pod has a subdomain and a
    cluster domain is configured, else empty. The fully qualified name is
    ``<hostname>.<domain>`` (Docker writes it into ``/etc/hosts``).
    """
    domain_name = f"{subdomain}.{namespace}.svc.{domain}" if subdomain and domain else ""
    return hostname or name, domain_name
