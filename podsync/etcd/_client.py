"""The etcd client: podsync speaks etcd's v3 API through its JSON gateway.

The seed kubelet read its pods from the etcd key ``/registry/hosts/<hostname>/kubelet``
(a list of manifests) and watched it, re-arming the watch every 30 s (reference,
"Older seed kubelet behaviour"; ``SyncAndSetupEtcdWatch``); the mid-2014 one also wrote
its events there (``LogEvent``). podsync speaks etcd's v3 API through its JSON gateway
(``/v3/``, served by every etcd since 3.4 on the client port), to the endpoints of a
URL (``podsync.etcd._urls``), with its options (TLS, user and password):

* ``EtcdClient`` reads a key with its revisions (``read``), writes it only if it is still
  at the revision read (``write_if``: a transaction comparing the key's ``mod_revision``,
  0 for a key that does not exist), and watches it from a revision (``watch``);
  prefix ranges, many-write transactions and leases are ``podsync.etcd._kv``'s.

The client library is ``etcd3gw`` (the optional ``etcd`` extra: ``pip install
'podsync[etcd]'``): it holds the HTTP session (TLS verification, client certificate),
finds the gateway's API path and maps HTTP errors. Its own watch is not used: its
reader thread drops the responses that cancel a watch (a compacted start revision, an
expired token) and swallows a broken connection, so its iterator then waits forever.
podsync reads the gateway's watch stream itself, on etcd3gw's session, and turns those
into ``EtcdCompacted`` and ``EtcdUnavailable``.

Layering: this module does network I/O and imports nothing of podsync but its
exceptions and the URLs; ``etcd3gw`` is imported when a client is made, so that ``import podsync``
and every source that is not etcd work without the extra.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import ssl
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from podsync.etcd._kv import KeyValueCalls, _b64, _unb64
from podsync.etcd._urls import EtcdOptions, EtcdURL, check_credentials_transport
from podsync.exceptions import EtcdError

if TYPE_CHECKING:
    import etcd3gw

__all__: list[str] = []

_T = TypeVar("_T")

_INSTALL = "pip install 'podsync[etcd]'"


class EtcdUnavailable(EtcdError):
    """No endpoint answered (connection refused, timed out, TLS failed)."""


class EtcdCompacted(EtcdError):
    """A watch asked for a revision etcd has compacted away: read the key again."""

    def __init__(self, message: str, compact_revision: int) -> None:
        super().__init__(message)
        self.compact_revision = compact_revision

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.compact_revision), self.__dict__)


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


class EtcdClient(KeyValueCalls):
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
