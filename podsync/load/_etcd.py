"""etcd, the seed's distributed store of desired pods: its URLs, its options and a client.

The seed kubelet read its pods from the etcd key ``/registry/hosts/<hostname>/kubelet``
(a list of manifests) and watched it, re-arming the watch every 30 s (reference,
"Older seed kubelet behaviour"; ``SyncAndSetupEtcdWatch``). podsync speaks etcd's v3 API
through its JSON gateway (``/v3/``, served by every etcd since 3.4 on the client port):

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
* ``EtcdClient`` reads a key with its revisions (``read``), writes it only if it is still
  at the revision read (``write_if``: a transaction comparing the key's ``mod_revision``,
  0 for a key that does not exist), and watches it from a revision (``watch``).

The client library is ``etcd3gw`` (the optional ``etcd`` extra: ``pip install
'podsync[etcd]'``): it holds the HTTP session (TLS verification, client certificate),
finds the gateway's API path and maps HTTP errors. Its own watch is not used: its
reader thread drops the responses that cancel a watch (a compacted start revision, an
expired token) and swallows a broken connection, so its iterator then waits forever.
podsync reads the gateway's watch stream itself, on etcd3gw's session, and turns those
into ``EtcdCompacted`` and ``EtcdUnavailable``.

Layering: this module does network I/O and imports nothing of podsync but its
exceptions; ``etcd3gw`` is imported when a client is made, so that ``import podsync``
and every source that is not etcd work without the extra.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import ipaddress
import json
import re
import socket
import ssl
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from podsync.exceptions import EtcdError

if TYPE_CHECKING:
    import etcd3gw

__all__ = ["EtcdOptions"]

_T = TypeVar("_T")

#: What an etcd source starts with.
ETCD_SCHEME = "etcd://"

#: The schemes of etcdctl's ``--endpoints``, taken where endpoints alone are given, and
#: whether each speaks TLS.
ENDPOINT_SCHEMES = {"http://": False, "https://": True}

#: The key of a host's pods, as the seed's scheduler wrote it and its kubelet read it.
HOST_KEY = "/registry/hosts/{host}/kubelet"

_INSTALL = "pip install 'podsync[etcd]'"

#: Why a key that does not exist gives no pods: it is never read as "no pods" (a typo
#: in a key must not remove a host's pods); an empty list is.
NO_SUCH_KEY = "no such key (publish pods to it with podsync publish; an empty list runs none)"

# host:port, the host a name, an IPv4 address or an IPv6 address in brackets.
_ENDPOINT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")
# One endpoint of a list, an etcdctl scheme (``https://``) before it allowed.
_ENDPOINT_PART = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<endpoint>[^,/]*)")
# A host name of a key: a DNS subdomain (the kubelet's node names), no "/" of course.
_HOST_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


class EtcdUnavailable(EtcdError):
    """No endpoint answered (connection refused, timed out, TLS failed)."""


class EtcdCompacted(EtcdError):
    """A watch asked for a revision etcd has compacted away: read the key again."""

    def __init__(self, message: str, compact_revision: int) -> None:
        super().__init__(message)
        self.compact_revision = compact_revision

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.compact_revision), self.__dict__)


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


@attrs.frozen
class KeyRead:
    """A key as read.

    Attributes:
        value: its bytes; ``None`` when the key does not exist.
        mod_revision: the revision of its last write; 0 when it does not exist.
        revision: the store's revision when it was read (a watch for what comes after
            starts at ``revision + 1``).
    """

    value: bytes | None
    mod_revision: int
    revision: int


@attrs.frozen
class WatchBatch:
    """What one watch response says about the key.

    Attributes:
        value: the key's value after the batch's events (``None``: deleted); only
            meaningful with ``events``.
        events: how many changes of the key it carries (0: the watch was created, or
            a progress notification).
        revision: the store revision it was sent at, or the last event's.
        progress: a progress notification: every change up to ``revision`` was sent
            (a watch made again may start after it).
    """

    value: bytes | None
    events: int
    revision: int
    progress: bool = False


def system_cas() -> str | bool:
    """The system's CA certificates, as ``ssl.create_default_context`` loads them: the
    file, else the directory, of ``ssl.get_default_verify_paths`` (``SSL_CERT_FILE`` and
    ``SSL_CERT_DIR`` override them, as for OpenSSL); ``True`` (requests' bundle) when the
    system has neither."""
    paths = ssl.get_default_verify_paths()
    return paths.cafile or paths.capath or True


def _import_etcd3gw() -> tuple[Any, Any]:
    """etcd3gw and its exceptions module; an ``EtcdError`` saying what to install."""
    try:
        import etcd3gw
        import etcd3gw.exceptions
    except ImportError:
        raise EtcdError(f"etcd needs the etcd3gw package: {_INSTALL}") from None
    return etcd3gw, etcd3gw.exceptions


def _b64(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: object) -> bytes:
    return base64.b64decode(str(text)) if text else b""


def _revision(header: object) -> int:
    # The gateway writes int64 fields as strings, and leaves out those that are 0.
    if isinstance(header, dict):
        return int(header.get("revision", 0) or 0)
    return 0


def _reason(text: str) -> str:
    """What an etcd error body says (``{"error": ..., "message": ...}``), else the text."""
    try:
        body = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:200]
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"]).removeprefix("etcdserver: ")
    return " ".join(text.split())[:200]


def _connection_reason(exc: BaseException) -> str:
    """A short reason for a failed connection (no urllib3 object reprs)."""
    # etcd3gw's exceptions hold requests' message in ``detail_text``.
    text = str(getattr(exc, "detail_text", None) or exc)
    for needle, said in (
        ("Connection refused", "connection refused"),
        ("timed out", "timed out"),
        ("CERTIFICATE_VERIFY_FAILED", "TLS certificate verify failed"),
        ("SSLError", "TLS error"),
        ("Name or service not known", "unknown host"),
        ("Connection aborted", "connection aborted"),
        ("RemoteDisconnected", "connection closed"),
        ("Connection reset", "connection reset"),
    ):
        if needle in text:
            return said
    return " ".join(text.split())[:200] or type(exc).__name__


class EtcdClient:
    """A client for one etcd URL's endpoints (thread-safe for one call at a time per
    thread: each call uses the endpoint that answered last).

    Args:
        url: the parsed URL (its key is the default of the calls).
        options: TLS, user and password, timeout.

    Raises:
        EtcdError: the ``etcd`` extra (``etcd3gw``) is not installed.
    """

    def __init__(self, url: EtcdURL, options: EtcdOptions | None = None) -> None:
        self.url = url
        self.options = options or EtcdOptions()
        opts = self.options
        try:
            https = url.https(opts)
            check_credentials_transport(url, opts)
        except ValueError as exc:
            raise EtcdError(str(exc)) from None
        module, self._exceptions = _import_etcd3gw()
        self._clients: list[etcd3gw.Etcd3Client] = [
            module.client(
                host=host,
                port=port,
                protocol="https" if https else "http",
                ca_cert=opts.ca_file,
                cert_key=opts.key_file,
                cert_cert=opts.cert_file,
                timeout=opts.timeout,
                # etcd 3.4 and later serve the v3 API at /v3/; no discovery call (it
                # would not verify with ``ca_file``: see ``_request``).
                api_path="/v3/",
            )
            for host, port in url.endpoints
        ]
        # Given with each request: requests lets REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE in
        # the environment override a session's ``verify`` (requests issue #3829), which
        # would check etcd's certificate against the system's CAs instead of ours.
        # Without a CA, the system's: requests' own ``verify=True`` is certifi's bundle.
        self._request: dict[str, Any] = {"verify": opts.ca_file or system_cas()} if https else {}
        self._current = 0
        self._closed = False

    @property
    def where(self) -> str:
        """The endpoints, for messages."""
        return ",".join(f"{h}:{p}" for h, p in self.url.endpoints)

    def close(self) -> None:
        """Close the HTTP sessions (a watch in progress ends with ``EtcdUnavailable``)."""
        self._closed = True
        for client in self._clients:
            client.session.close()

    # -- calls ---------------------------------------------------------------------------

    def read(self, key: str | None = None) -> KeyRead:
        """The key's value and revisions.

        Raises:
            EtcdUnavailable: no endpoint answered.
            EtcdError: etcd refused (credentials, permission).
        """
        the_key = self.url.key if key is None else key
        body = self._call("/kv/range", {"key": _b64(the_key)})
        revision = _revision(body.get("header"))
        for kv in body.get("kvs", ()):
            return KeyRead(_unb64(kv.get("value")), int(kv.get("mod_revision", 0)), revision)
        return KeyRead(None, 0, revision)

    def write_if(
        self, value: bytes, mod_revision: int, key: str | None = None
    ) -> tuple[bool, KeyRead]:
        """Write ``value`` if the key's last write is still ``mod_revision`` (0: if it
        does not exist), in one transaction; else change nothing.

        Returns:
            Whether it was written, and the key: as written (its new ``mod_revision``),
            or, on a lost race, as it is now.
        """
        the_key = self.url.key if key is None else key
        k = _b64(the_key)
        txn = {
            "compare": [
                {"key": k, "result": "EQUAL", "target": "MOD", "mod_revision": mod_revision}
            ],
            "success": [{"request_put": {"key": k, "value": _b64(value)}}],
            "failure": [{"request_range": {"key": k}}],
        }
        body = self._call("/kv/txn", txn)
        revision = _revision(body.get("header"))
        if body.get("succeeded"):
            return True, KeyRead(value, revision, revision)
        for response in body.get("responses", ()):
            for kv in response.get("response_range", {}).get("kvs", ()):
                now = KeyRead(_unb64(kv.get("value")), int(kv.get("mod_revision", 0)), revision)
                return False, now
        return False, KeyRead(None, 0, revision)

    def watch(
        self,
        start_revision: int,
        *,
        idle: float,
        key: str | None = None,
        on_open: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[WatchBatch]:
        """The key's changes from ``start_revision`` on, one batch per watch response;
        first a batch with no events once the watch is created.

        The stream ends (the iterator returns) after ``idle`` seconds without a
        response: the caller watches again from the revision it saw last, as the seed
        re-armed its watch every 30 s - a server that hangs is noticed that way.

        Args:
            on_open: called with a function that closes the stream (from any thread).

        Raises:
            EtcdCompacted: etcd compacted ``start_revision`` away.
            EtcdUnavailable: no endpoint answered, or the connection broke.
            EtcdError: etcd refused the watch (credentials, permission).
        """
        import requests

        the_key = self.url.key if key is None else key
        # progress_notify: etcd then says, now and then (every 10 minutes by default),
        # up to which revision it has sent everything, so that a quiet key's watch
        # moves on and is not resumed from a revision compacted away meanwhile.
        create = {"key": _b64(the_key), "start_revision": start_revision, "progress_notify": True}
        request = {"create_request": create}
        for _ in range(2):
            response = self._open_watch(request, idle)
            if on_open is not None:
                on_open(functools.partial(_shut, response))
            try:
                yield from self._watch_stream(response, start_revision)
                return
            except _Renew:
                continue
            except requests.exceptions.ConnectionError as exc:
                if "timed out" in str(exc):
                    return  # idle: the caller watches again
                raise EtcdUnavailable(
                    f"lost the watch on etcd at {self.where}: {_connection_reason(exc)}"
                ) from None
            except requests.exceptions.Timeout:
                return
            except (requests.RequestException, AttributeError, ValueError, OSError) as exc:
                # A stream closed from another thread, or cut in the middle of a line.
                raise EtcdUnavailable(
                    f"lost the watch on etcd at {self.where}: {_connection_reason(exc)}"
                ) from None
            finally:
                response.close()
        raise EtcdError(f"etcd at {self.where} refused the watch: the token was renewed twice")

    def _open_watch(self, request: dict[str, Any], idle: float) -> Any:
        """The response of a watch request (its status 200), from the first endpoint
        that answers, from the one that answered last (``_on_endpoints``)."""
        import requests

        def post(client: etcd3gw.Etcd3Client) -> Any:
            response = client.session.post(
                client.get_url("/watch"),
                json=request,
                stream=True,
                timeout=(self.options.timeout, idle),
                **self._request,
            )
            if response.status_code == 200:
                return response
            reason = _reason(response.text)
            response.close()
            raise _Refused(
                reason,
                f"etcd at {self.where} refused the watch: {reason} (HTTP {response.status_code})",
            )

        # The watch is a plain request on etcd3gw's session: requests' own errors.
        return self._on_endpoints(post, unreachable=(requests.RequestException,))

    def _watch_stream(self, response: Any, start_revision: int) -> Iterator[WatchBatch]:
        for line in response.iter_lines(chunk_size=None):
            if not line.strip():
                continue
            result = json.loads(line).get("result", {})
            if not isinstance(result, dict):
                continue
            revision = _revision(result.get("header"))
            if result.get("canceled"):
                compact = int(result.get("compact_revision", 0) or 0)
                if compact:
                    raise EtcdCompacted(
                        f"revision {start_revision} was compacted (etcd keeps from "
                        f"revision {compact} on)",
                        compact,
                    )
                reason = str(result.get("cancel_reason", ""))
                if "auth token" in reason and self.options.user is not None:
                    self._authenticate(self._clients[self._current])
                    raise _Renew
                raise EtcdError(f"etcd at {self.where} cancelled the watch: {_reason(reason)}")
            events = result.get("events") or ()
            if result.get("created") and not events:
                yield WatchBatch(None, 0, revision)
                continue
            value: bytes | None = None
            for event in events:
                kv = event.get("kv", {})
                value = None if event.get("type") == "DELETE" else _unb64(kv.get("value"))
                revision = max(revision, int(kv.get("mod_revision", 0) or 0))
            if events:
                yield WatchBatch(value, len(events), revision)
            elif revision:
                # A progress notification: everything up to ``revision`` was sent.
                yield WatchBatch(None, 0, revision, progress=True)
        raise EtcdUnavailable(f"lost the watch on etcd at {self.where}: the stream ended")

    # -- endpoints, authentication, errors -----------------------------------------------

    def _client(self) -> etcd3gw.Etcd3Client:
        if self._closed:
            raise EtcdUnavailable(f"the client of etcd at {self.where} is closed")
        return self._clients[self._current]

    def _call(self, path: str, body: dict[str, Any]) -> Any:
        """POST to every endpoint in turn (from the one that answered last) until one
        answers (``_on_endpoints``)."""

        def post(client: etcd3gw.Etcd3Client) -> Any:
            return client.post(client.get_url(path), json=body, **self._request)

        return self._on_endpoints(post)

    def _on_endpoints(
        self,
        attempt: Callable[[etcd3gw.Etcd3Client], _T],
        *,
        unreachable: tuple[type[BaseException], ...] = (),
    ) -> _T:
        """``attempt`` on each endpoint's client in turn, from the one that answered last,
        until one answers; that one is kept for the next call. Each is authenticated
        first when a user is given and it holds no token yet.

        An endpoint that cannot be reached (etcd3gw's connection errors, ``unreachable``)
        is left for the next one, its reason kept. A refusal (an etcd error, or
        ``_Refused`` from ``attempt``) is final, but for an expired token: the token is
        dropped and the same endpoint tried again, authenticating anew, once per call.

        Raises:
            EtcdUnavailable: no endpoint answered (each one's reason, in the order tried).
            EtcdError: etcd refused.
        """
        exc_mod = self._exceptions
        reasons: list[str] = []
        renewed = False
        tries = 0
        while tries < len(self._clients):
            client = self._client()
            try:
                if self.options.user is not None and "Authorization" not in client.session.headers:
                    self._authenticate(client)
                return attempt(client)
            except (
                *unreachable,
                exc_mod.ConnectionFailedError,
                exc_mod.ConnectionTimeoutError,
            ) as exc:
                reasons.append(f"{client.host}:{client.port}: {_connection_reason(exc)}")
                self._current = (self._current + 1) % len(self._clients)
                tries += 1
                continue
            except exc_mod.Etcd3Exception as exc:
                reason = _reason(str(exc.detail_text or exc))
                message = f"etcd at {self.where} refused: {reason}"
                if "user name is empty" in reason:
                    message += " (etcd wants a user and password: --etcd-user and its password)"
            except _Refused as exc:
                reason, message = exc.reason, exc.message
            if "invalid auth token" in reason and self.options.user is not None and not renewed:
                renewed = True
                client.session.headers.pop("Authorization", None)
                continue
            raise EtcdError(message)
        raise EtcdUnavailable(f"cannot reach etcd at {'; '.join(reasons)}")

    def _authenticate(self, client: etcd3gw.Etcd3Client) -> None:
        client.session.headers.pop("Authorization", None)
        body = client.post(
            client.get_url("/auth/authenticate"),
            json={"name": self.options.user, "password": self.options.password},
            **self._request,
        )
        token = body.get("token") if isinstance(body, dict) else None
        if not token:
            raise EtcdError(f"etcd at {self.where} gave no token for user {self.options.user!r}")
        client.session.headers["Authorization"] = str(token)


def _shut(response: Any) -> None:
    """End a streaming response from another thread: shut its socket down, which wakes
    the thread blocked reading it (closing the response would wait for that read)."""
    with contextlib.suppress(Exception):
        fd = response.raw.fileno()
        with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.shutdown(socket.SHUT_RDWR)


class _Renew(Exception):
    """The watch was refused for an expired token, which was renewed: watch again."""


class _Refused(Exception):
    """An endpoint answered with a refusal that etcd3gw does not map (``_on_endpoints``).

    Attributes:
        reason: what etcd said (an expired token is renewed).
        message: the ``EtcdError`` message when it is final.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
