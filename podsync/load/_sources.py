"""Reading the sources of desired pods: files, directories, HTTP(S) URLs, standard input.

This ports the seed kubelet's config sources (reference §6): ``extractFromFile`` /
``extractFromDir`` (one file, or every non-dot file of a directory in name order) and
``extractFromHTTP``, and its etcd key (``etcd://HOST:PORT/KEY``, read by the function
the caller gives: ``podsync.etcd._client`` speaks to etcd). It gives bytes only: what the bytes
mean is ``_yaml.py``'s and ``_config.py``'s business.

Contract: ``_read_sources`` turns the sources given to ``load_pods`` into
``(source name, bytes or _Unreadable, pod source, file)`` tuples, one per stream, in order
(``file`` names the stream for a 2014 manifest without an ``id``: a file's absolute path,
a URL, or ``None`` for standard input),
reading each lazily as the caller asks for it. Every source that could be endless is
bounded: of an HTTP body, standard input, a pipe or a device at most ``max_bytes``
bytes are read (one more, to tell "at the limit" from "over it"), and an HTTP transfer
takes at most about twice ``http_timeout``. A regular file is read whole: its size is
known, and the user named it (or its directory). A source that cannot be read is
never an exception: it is an ``_Unreadable`` saying why.

Layering: this is the bottom of the loader (sources → ``_yaml`` → ``_scalars`` /
``schema._pod`` → ``convert._document``, wired by ``_config``). It is the only loader module that
does file or network I/O; it imports nothing of podsync, and nothing else of the loader.
Its helpers keep their leading underscore: they are shared among the loader's modules
only, and nothing here is public API except ``DEFAULT_MAX_BYTES`` (re-exported by
``_config``).
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import attrs

__all__ = ["DEFAULT_MAX_BYTES", "HttpOptions", "shown_url"]

#: The largest HTTP body, standard input or other stream (a pipe, a device) that
#: ``load_pods`` reads, in bytes.
#:
#: A pod manifest is a few KiB and Kubernetes itself caps a whole object at etcd's
#: 1.5 MiB request limit; 4 MiB leaves room for a ``List`` of several thousand small
#: pods. The cap is there for what could be endless or was not what the user meant (a
#: wrong URL serving a disk image, ``/dev/zero``): such a source is refused rather than
#: read. A regular file that the user named, or that is in a directory the user named,
#: is read whatever its size (its size is known, and it is what the user asked for):
#: a ``List`` of 10,000 pods is several MB.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024

_SOURCE_NAME_STDIN = "<stdin>"

# A source that starts like a URL. Only http and https are fetched; anything else that
# looks like a URL (ftp://, file://) is an error rather than a file name.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")

#: What stands for a URL's password and for each value of its query where it is shown.
URL_MASK = "***"

#: Headers that carry credentials: they go to the URL's own host only, never to where
#: it redirects (Go's net/http drops them on a redirect to another host; urllib would
#: send them along).
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})

# Read HTTP bodies in pieces of this size, checking the size and time limits between.
_CHUNK = 64 * 1024

# ---------------------------------------------------------------------------------------
# Sources: files, directories, URLs, standard input
# ---------------------------------------------------------------------------------------


#: What tells one version of a regular file from another without reading it: size,
#: modification time in nanoseconds, inode and device (a file replaced by another, as
#: editors and config managers do by renaming, has another inode).
FileKey = tuple[int, int, int, int]

#: Whether the file at a path, with a key, is one the caller has already parsed.
Unchanged = Callable[[str, FileKey], bool]


def _file_key(st: os.stat_result) -> FileKey:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


#: Reads the value of an ``etcd://`` source: its bytes, or why not.
EtcdReader = Callable[[str], "bytes | _Unreadable"]

_ETCD = "etcd://"


def _is_etcd(source: str) -> bool:
    return source[: len(_ETCD)].lower() == _ETCD


def etcd_file(url: str) -> str:
    """What names the stream of an etcd key (for a 2014 manifest without ``id``): the
    key without the endpoints, so that the same key read through other endpoints
    gives the same pods."""
    rest = url[len(_ETCD) :]
    return "etcd:" + rest[rest.find("/") :] if "/" in rest else "etcd:"


def _read_sources(
    sources: Sequence[str | os.PathLike[str]],
    stdin: IO[bytes] | None,
    max_bytes: int,
    http_timeout: float,
    unchanged: Unchanged | None = None,
    etcd: EtcdReader | None = None,
    http: HttpOptions | None = None,
) -> Iterator[tuple[str, bytes | _Unreadable | None, str, str | None, FileKey | None]]:
    """(source name, bytes or why not, pod source, file, file key) for each stream of
    ``sources``, in order.

    A directory gives one stream per entry; ``-`` (the string) is standard input, read
    once: given again, it is unreadable. Pods from URLs get the source ``http``, from
    etcd keys (read with ``etcd``) ``etcd``, all others ``file``. Each source is read
    only when its turn comes. A regular file has its ``FileKey``; when ``unchanged``
    says the caller knows that version, it is not read and its bytes are ``None``.
    Other streams have no key. A URL is fetched as ``http`` says, and named by
    ``shown_url``.
    """
    stdin_read = False
    for raw in sources:
        from_stdin = False
        if isinstance(raw, str) and _is_etcd(raw):
            value = etcd(raw) if etcd is not None else _Unreadable("etcd is not read here")
            if isinstance(value, bytes) and len(value) > max_bytes:
                value = _too_large(max_bytes)
            yield raw, value, "etcd", etcd_file(raw), None
            continue
        if isinstance(raw, str) and raw == "-":
            if stdin_read:
                again = _Unreadable("'-' is given more than once")
                yield _SOURCE_NAME_STDIN, again, "file", None, None
                continue
            stdin_read = True
            stream = stdin if stdin is not None else sys.stdin.buffer
            streams: Iterator[tuple[str, bytes | _Unreadable | None, FileKey | None]] = iter(
                [(_SOURCE_NAME_STDIN, _read_stream(stream, max_bytes), None)]
            )
            pod_source = "file"
            from_stdin = True
        elif isinstance(raw, str) and _URL.match(raw):
            # Named by its shown form from here on: every message, log line and status
            # key of the source says that, never its password or query values.
            fetched = _fetch(raw, max_bytes, http_timeout, http)
            streams = iter([(shown_url(raw), fetched, None)])
            pod_source = "http"
        else:
            streams = _read_path(os.fspath(raw), max_bytes, unchanged)
            pod_source = "file"
        for source_name, data, key in streams:
            if pod_source == "http":
                file: str | None = source_name
            elif from_stdin:
                file = None
            else:
                file = os.path.abspath(source_name)
            yield source_name, data, pod_source, file, key


@attrs.frozen
class _Unreadable:
    """Why a source could not be read (in place of its bytes)."""

    message: str


@attrs.frozen
class HttpOptions:
    """How ``http(s)://`` sources are fetched, beyond their URL.

    ``headers`` are sent with every request, in order (the kubelet's
    ``--manifest-url-header``; ``--source-header`` on the command line); a header that
    carries credentials (``Authorization``, ``Proxy-Authorization``, ``Cookie``) is not
    sent again after a redirect. ``ca_file`` is a PEM file of the certificate
    authorities an ``https`` source's certificate is checked against, in place of the
    system's (``--source-ca``).

    A URL's own ``user:password@`` is sent as Basic authentication (never after a
    redirect); it is refused over plain ``http`` to a host that is not loopback, where
    anyone on the path would read it.
    """

    headers: tuple[tuple[str, str], ...] = ()
    ca_file: str | None = None


def shown_url(url: str) -> str:
    """``url`` as it may be shown (an error, a log line, a status key, a metric's label):
    its password, the value of each query parameter and its fragment replaced by
    ``***`` (a user without a password too: it may be a token), the rest (scheme, user,
    host, path, parameter names) as given.

    The one function every output of a URL goes through: a source's credentials (a
    ``user:password@``, a ``?token=``) stay out of what others read. A text that is not
    a URL is returned as it is."""
    from urllib.parse import urlsplit, urlunsplit

    if not _URL.match(url):
        return url
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # an invalid port or host: nothing is known to be safe but the scheme
        return f"{url.split(':', 1)[0]}://{URL_MASK}"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        # A user alone may be the credential itself (https://TOKEN@host): masked too.
        shown = f"{user.split(':', 1)[0]}:{URL_MASK}" if password is not None else URL_MASK
        netloc = f"{shown}@{host}"
    query = parts.query
    if query:
        query = "&".join(
            f"{field.split('=', 1)[0]}={URL_MASK}" if "=" in field else (field and URL_MASK)
            for field in query.split("&")
        )
    fragment = URL_MASK if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def _too_large(max_bytes: int) -> _Unreadable:
    # The command line's option is named: that is where people meet the limit.
    return _Unreadable(f"larger than the limit of {max_bytes} bytes (raise it with --max-bytes)")


def _os_message(exc: OSError) -> _Unreadable:
    return _Unreadable(f"cannot read: {exc.strerror or exc}")


def _read_stream(stream: IO[bytes], max_bytes: int | None) -> bytes | _Unreadable:
    """The bytes of an open stream, at most ``max_bytes`` of them (None: all)."""
    try:
        # One byte more than allowed tells "exactly the limit" from "over it" without
        # reading the rest.
        data = stream.read() if max_bytes is None else stream.read(max_bytes + 1)
    except OSError as exc:
        return _os_message(exc)
    except ValueError as exc:  # e.g. a closed file
        return _Unreadable(f"cannot read: {exc}")
    if not isinstance(data, bytes):  # sys.stdin rather than sys.stdin.buffer
        return _Unreadable("cannot read: the stream gives text, not bytes")
    if max_bytes is not None and len(data) > max_bytes:
        return _too_large(max_bytes)
    return data


def _read_file(path: str, max_bytes: int | None) -> bytes | _Unreadable:
    try:
        with open(path, "rb") as stream:
            return _read_stream(stream, max_bytes)
    except OSError as exc:
        return _os_message(exc)


def _read_regular(
    path: str, st: os.stat_result, unchanged: Unchanged | None
) -> tuple[str, bytes | _Unreadable | None, FileKey]:
    key = _file_key(st)
    if unchanged is not None and unchanged(path, key):
        return path, None, key
    return path, _read_file(path, None), key


def _read_path(
    path: str, max_bytes: int, unchanged: Unchanged | None
) -> Iterator[tuple[str, bytes | _Unreadable | None, FileKey | None]]:
    """(source name, bytes or error message, file key) for a file, or for each file of
    a directory; a file ``unchanged`` knows is not read (its bytes are None)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        yield path, _os_message(exc), None
        return
    if stat.S_ISREG(st.st_mode):
        yield _read_regular(path, st, unchanged)
        return
    if not stat.S_ISDIR(st.st_mode):
        # Any non-directory is read, so /dev/stdin and <(curl ...) work as sources; a
        # pipe or a device like standard input, up to the limit.
        yield path, _read_file(path, max_bytes), None
        return
    try:
        # Sorted by name like the seed's sort.Strings (code-point order, which is
        # UTF-8 byte order); dot-files are skipped like its Glob("[^.]*").
        names = sorted(name for name in os.listdir(path) if not name.startswith("."))
    except OSError as exc:
        yield path, _Unreadable(f"cannot list directory: {exc.strerror or exc}"), None
        return
    for name in names:
        entry = os.path.join(path, name)
        try:
            entry_st = os.stat(entry)  # follows symlinks: a link to a file is a file
        except OSError as exc:
            yield entry, _os_message(exc), None
            continue
        if stat.S_ISDIR(entry_st.st_mode):
            continue  # no recursion into subdirectories
        if not stat.S_ISREG(entry_st.st_mode):
            # A FIFO or socket would block the read; devices make no sense here.
            yield entry, _Unreadable("not a regular file"), None
            continue
        # Read when its turn comes: one file's bytes at a time are held.
        yield _read_regular(entry, entry_st, unchanged)


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _request(url: str, options: HttpOptions) -> Any:
    """The ``urllib`` request for ``url``: its ``user:password@`` taken out of the
    address and sent as Basic authentication (RFC 7617; percent-escapes decoded, as Go's
    ``url.UserPassword``), and ``options.headers``; or ``_Unreadable`` when the URL's
    credentials would cross the network in clear."""
    import base64
    import urllib.request
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)  # the caller checked the scheme; a bad port raises ValueError
    credentials: str | None = None
    if "@" in parts.netloc:
        if parts.scheme.lower() == "http" and not _is_loopback(parts.hostname or ""):
            # Refused rather than warned about: a warning scrolls by while the password
            # goes on crossing the network at every poll.
            return _Unreadable(
                "the URL holds credentials, which plain http would send in clear to a "
                "host that is not loopback: use https"
            )
        user = unquote(parts.username or "")
        password = unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        credentials = f"Basic {token}"
        host = parts.netloc.rpartition("@")[2]
        url = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    request = urllib.request.Request(url, headers={"User-Agent": "podsync"})
    for name, value in options.headers:
        if name.lower() in _CREDENTIAL_HEADERS:
            request.add_unredirected_header(name.capitalize(), value)
        else:
            request.add_header(name, value)
    if credentials is not None:
        request.add_unredirected_header("Authorization", credentials)
    return request


def _ssl_context(options: HttpOptions) -> Any:
    """The TLS context of an ``https`` source: the system's CAs, or ``ca_file``'s."""
    import ssl

    return ssl.create_default_context(cafile=options.ca_file)


def _fetch(
    url: str, max_bytes: int, timeout: float, options: HttpOptions | None = None
) -> bytes | _Unreadable:
    """The body of an http(s) URL, or a message saying why it cannot be had.

    ``timeout`` bounds the connection and each read (urllib's socket timeout) and, by a
    deadline checked between reads, the whole transfer: a server that trickles bytes
    cannot hold the load open for longer than about twice the timeout.
    """
    # Imported here: urllib brings http.client, email and ssl, which a program that
    # reads only files never needs.
    import http.client
    import urllib.error
    import urllib.request

    scheme = url.split(":", 1)[0].lower()
    if scheme not in ("http", "https"):
        return _Unreadable(f"unsupported URL scheme {scheme!r} (only http and https are fetched)")
    timed_out = _Unreadable(f"timed out after {timeout:g} seconds")
    options = options if options is not None else HttpOptions()
    try:
        request = _request(url, options)
        if isinstance(request, _Unreadable):
            return request
        context = _ssl_context(options) if scheme == "https" else None
    except ValueError as exc:  # a port that is no number
        return _Unreadable(f"cannot fetch: {exc}")
    except OSError as exc:  # the CA file cannot be read, or is not PEM
        return _Unreadable(f"cannot read the CA file {options.ca_file}: {exc.strerror or exc}")
    deadline = time.monotonic() + timeout
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            status: int = response.status
            if not 200 <= status < 300:
                return _Unreadable(f"HTTP status {status} ({response.reason})")
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > max_bytes:
                return _too_large(max_bytes)
            chunks: list[bytes] = []
            total = 0
            while True:
                if time.monotonic() > deadline:
                    return timed_out
                chunk: bytes = response.read1(_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    return _too_large(max_bytes)
                chunks.append(chunk)
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:  # a status >= 400 (or a redirect not followed)
        exc.close()
        return _Unreadable(f"HTTP status {exc.code} ({exc.reason})")
    except urllib.error.URLError as exc:  # before a response: DNS, refused, TLS, timeout
        if isinstance(exc.reason, TimeoutError):
            return timed_out
        reason = exc.reason
        detail = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
        return _Unreadable(f"cannot fetch: {detail}")
    except TimeoutError:  # waiting for the status line or the body
        return timed_out
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return _Unreadable(f"cannot fetch: {str(exc) or type(exc).__name__}")
