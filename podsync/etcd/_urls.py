"""Where etcd is and how to reach it: URLs, options, the key of a host.

* an ``etcd://HOST:PORT[,HOST:PORT...]/KEY`` URL names the endpoints and the key
  (``parse_etcd_url``); the endpoints are tried in order, and the one that answered is
  kept until it fails. Where endpoints alone are given (``publish --etcd``), they may
  also be written as etcdctl's ``--endpoints`` are: ``https://HOST:PORT,...`` or
  ``http://HOST:PORT,...`` - the scheme then says whether TLS is spoken;
* ``EtcdOptions`` holds TLS (a CA, a client certificate and its key, or ``tls`` alone
  for a server the system's CAs verify: the endpoints are then spoken to over https) and
  a user and password (etcd's simple or JWT tokens, got from ``/v3/auth/authenticate``
  and sent in ``Authorization``; an expired token is renewed once per call);
* a password and a token are never sent in clear (``check_credentials_transport``):
  a user with plain http to an endpoint that is not a loopback address is refused, unless
  ``insecure`` says to send them anyway;
* ``host_key`` is the key of a host's pods, ``/registry/hosts/<host>/kubelet``, as the
  seed's scheduler wrote it and its kubelet read it.

Contract: pure values and parsing; no I/O.
"""

from __future__ import annotations

import ipaddress
import re

import attrs

__all__ = ["EtcdOptions"]

#: What an etcd source starts with.
ETCD_SCHEME = "etcd://"

#: The schemes of etcdctl's ``--endpoints``, taken where endpoints alone are given, and
#: whether each speaks TLS.
ENDPOINT_SCHEMES = {"http://": False, "https://": True}

#: The key of a host's pods, as the seed's scheduler wrote it and its kubelet read it.
HOST_KEY = "/registry/hosts/{host}/kubelet"


#: Why a key that does not exist gives no pods: it is never read as "no pods" (a typo
#: in a key must not remove a host's pods); an empty list is.
NO_SUCH_KEY = "no such key (publish pods to it with podsync publish; an empty list runs none)"

# host:port, the host a name, an IPv4 address or an IPv6 address in brackets.
_ENDPOINT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")
# One endpoint of a list, an etcdctl scheme (``https://``) before it allowed.
_ENDPOINT_PART = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<endpoint>[^,/]*)")
# A host name of a key: a DNS subdomain (the kubelet's node names), no "/" of course.
_HOST_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@attrs.frozen(kw_only=True)
class EtcdOptions:
    """How to reach etcd besides its URL.

    Attributes:
        ca_file: the CA certificate (PEM) that signed the endpoints' certificates; given
            (or a client certificate given), the endpoints are spoken to over https.
        cert_file: a client certificate (PEM) for etcd's ``--client-cert-auth``.
        key_file: the client certificate's private key (PEM); with ``cert_file`` only.
        user: an etcd user (``etcdctl user add``), with ``password``.
        password: the user's password.
        timeout: seconds for connecting to an endpoint and for each request.
        tls: force https even without a CA or client certificate (a server whose
            certificate the system's CAs verify: ``ssl.create_default_context``'s, which
            ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` override, not ``certifi``'s bundle).
        insecure: send the user's password and token over plain http to an endpoint
            that is not a loopback address (else refused: ``check_credentials_transport``).
    """

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    user: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    timeout: float = 5.0
    tls: bool = False
    insecure: bool = False

    def __attrs_post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("a client certificate needs its key, and a key its certificate")
        if (self.user is None) != (self.password is None):
            raise ValueError("an etcd user needs a password, and a password a user")
        if isinstance(self.timeout, bool) or not self.timeout > 0:
            raise ValueError(f"the etcd timeout must be positive seconds, got {self.timeout!r}")

    @property
    def https(self) -> bool:
        return self.tls or self.ca_file is not None or self.cert_file is not None


@attrs.frozen
class EtcdURL:
    """A parsed ``etcd://HOST:PORT[,HOST:PORT...]/KEY`` (or ``http(s)://...``).

    Attributes:
        endpoints: (host, port) in the order given; an IPv6 host without brackets.
        key: the key, with its leading ``/``; ``""`` when the URL has no path.
        tls: ``True`` for ``https://`` endpoints, ``False`` for ``http://`` ones,
            ``None`` for ``etcd://`` (the options decide: ``EtcdOptions.https``).
    """

    endpoints: tuple[tuple[str, int], ...]
    key: str
    tls: bool | None = None

    def url(self, key: str | None = None) -> str:
        """The URL, with ``key`` in place of its own when given."""
        hosts = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.endpoints)
        scheme = {None: ETCD_SCHEME, False: "http://", True: "https://"}[self.tls]
        return f"{scheme}{hosts}{self.key if key is None else key}"

    def https(self, options: EtcdOptions) -> bool:
        """Whether the endpoints are spoken to over https: as the URL's scheme says,
        else as the options do.

        Raises:
            ValueError: ``http://`` endpoints with TLS options (a CA, a client
                certificate, ``tls``): never silently in clear.
        """
        if self.tls is False and options.https:
            raise ValueError(
                "http:// endpoints speak plain HTTP, but TLS options are given "
                "(--etcd-ca, --etcd-cert, --etcd-tls): write the endpoints https://"
            )
        return options.https if self.tls is None else self.tls


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``127.0.0.0/8``, ``::1``), written as an
    address: a name (even ``localhost``) is resolved when connecting, by whatever
    resolver the host has, and is not taken on trust."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_credentials_transport(url: EtcdURL, options: EtcdOptions) -> None:
    """Refuse to send a user's password and token in clear.

    A user (``--etcd-user``) with plain http is refused unless every endpoint is a
    loopback address or ``options.insecure`` (``--etcd-insecure``) is set. etcdctl sends
    them in clear to any endpoint (its token credentials do not require transport
    security); podsync does not, since whoever reads them can write the pods a host runs.

    Loopback counts as safe: its bytes never leave the kernel, and reading another
    process's loopback traffic takes root (or ``CAP_NET_RAW``), which already owns the
    engine podsync drives. The same line is drawn by the old kube-apiserver, whose
    unauthenticated ``--insecure-port`` was bound to 127.0.0.1 only, and by the W3C
    Secure Contexts rules, which trust ``http://127.0.0.1`` and ``http://[::1]``.

    Raises:
        ValueError: the user would be sent in clear (the message names the flags).
    """
    if url.https(options) or options.user is None or options.insecure:
        return
    remote = [f"{h}:{p}" for h, p in url.endpoints if not is_loopback(h)]
    if remote:
        raise ValueError(
            f"--etcd-user: refusing to send the password and token over plain HTTP to "
            f"{', '.join(remote)} (not a loopback address): speak TLS (https:// endpoints, "
            f"--etcd-tls or --etcd-ca), or give --etcd-insecure to send them in clear"
        )


def is_etcd_url(source: str) -> bool:
    """Whether a SOURCE is an etcd URL."""
    return source[: len(ETCD_SCHEME)].lower() == ETCD_SCHEME


def _scheme(text: str) -> tuple[bool | None, str] | None:
    """The TLS of ``text``'s scheme (``None``: ``etcd://``) and the rest; ``None`` for
    another scheme or none."""
    lowered = text.lower()
    if lowered.startswith(ETCD_SCHEME):
        return None, text[len(ETCD_SCHEME) :]
    for scheme, tls in ENDPOINT_SCHEMES.items():
        if lowered.startswith(scheme):
            return tls, text[len(scheme) :]
    return None


def parse_etcd_url(url: str, *, key: bool = True) -> EtcdURL:
    """The endpoints and key of an etcd URL.

    Args:
        url: ``etcd://HOST:PORT[,HOST:PORT...]/KEY`` (``key=False``: without the key,
            ``etcd://HOST:PORT[,...]``, a trailing ``/`` allowed). ``http://`` and
            ``https://`` in place of ``etcd://`` say whether to speak TLS; each
            endpoint after the first may repeat the scheme, as etcdctl's
            ``--endpoints`` do (``https://a:2379,https://b:2379``), but all share one.
        key: whether the URL must name a key.

    Raises:
        ValueError: the URL is not one (the message says what is wrong, without the URL).
    """
    parsed = _scheme(url)
    if parsed is None:
        raise ValueError(f"an etcd URL starts with {ETCD_SCHEME}, http:// or https://")
    tls, rest = parsed
    form = "etcd://HOST:PORT[,HOST:PORT...]/KEY" if key else "https://HOST:PORT[,HOST:PORT...]"
    endpoints: list[tuple[str, int]] = []
    at = 0
    while True:
        written = _ENDPOINT_PART.match(rest, at)
        assert written is not None  # it matches the empty string
        at = written.end()
        part = written.group("endpoint")
        if written.group("scheme") is not None:
            again = _scheme(written.group(0))
            if not endpoints or again is None or again[0] != tls:
                raise ValueError(
                    f"{written.group(0)!r}: every endpoint has the scheme of the first"
                )
        match = _ENDPOINT.fullmatch(part)
        port = int(match.group("port")) if match else 0
        if match is None or not 0 < port < 65536:
            raise ValueError(f"{part!r} is not HOST:PORT ({form})")
        endpoints.append((match.group("host").strip("[]"), port))
        if rest[at : at + 1] != ",":
            break
        at += 1
    the_key = rest[at:]
    if key and the_key in ("", "/"):
        raise ValueError(f"names no key (etcd://HOST:PORT/KEY, e.g. {HOST_KEY})")
    if not key and the_key not in ("", "/"):
        raise ValueError("give the endpoints only (etcd://HOST:PORT[,HOST:PORT...]), no key")
    return EtcdURL(tuple(endpoints), the_key if key else "", tls)


def host_key(host: str) -> str:
    """The key of a host's pods (``/registry/hosts/<host>/kubelet``).

    Raises:
        ValueError: ``host`` is not a lower-case DNS name (as node names are).
    """
    if len(host) > 253 or not _HOST_NAME.fullmatch(host):
        raise ValueError(
            f"host name {host!r} is not a lower-case DNS name (letters, digits, '-' and '.')"
        )
    return HOST_KEY.format(host=host)
