"""HTTP sources with credentials, on a real server on loopback (issue 28): a URL's
``user:password@`` is sent as Basic authentication, ``HttpOptions.headers`` as given,
an ``https`` source is checked against ``HttpOptions.ca_file``, credentials never
follow a redirect, and every message names the URL by ``shown_url``.

Marked real_clock: a fetch's deadline is real time (load_pods' http_timeout)."""

from __future__ import annotations

import base64
import http.server
import ssl
import threading
from collections.abc import Iterator

import pytest

from podsync import ConfigError, HttpOptions, Reconciler, load_pods, shown_url
from podsync.load._sources import _fetch
from podsync.testing import FakeRuntime
from tests.support.etcd_server import make_tls_files

USER, PASSWORD, TOKEN = "deploy", "pa ss:w@rd", "SEKRIT-TOKEN"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
MANIFEST = b"version: v1beta1\nid: web\ncontainers:\n- name: app\n  image: busybox\n"


class Handler(http.server.BaseHTTPRequestHandler):
    """``/pod`` answers 200 with a manifest (or the server's ``body``) only to Basic
    ``USER:PASSWORD``, and only when ``X-Node: a`` came too; ``/open`` to anyone;
    ``/away`` redirects to the other server's ``/seen``, which answers with the
    Authorization header it got."""

    def log_message(self, format, *args):
        """Quiet."""

    def reply(self, status: int, body: bytes = b"", location: str = "") -> None:
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/pod":
            if self.headers.get("Authorization") != BASIC:
                self.reply(401)
            elif self.headers.get("X-Node") != "a":
                self.reply(403)
            else:
                self.reply(200, getattr(self.server, "body", MANIFEST))
        elif path == "/open":
            self.reply(200, MANIFEST)
        elif path == "/away":
            self.reply(302, location=self.server.elsewhere + "/seen")  # type: ignore[attr-defined]
        elif path == "/seen":
            seen = self.headers.get("Authorization", "none")
            self.reply(200, f"# {seen}\n".encode() + MANIFEST)
        else:
            self.reply(404)


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def serve(context: ssl.SSLContext | None = None) -> Iterator[http.server.HTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def server(no_proxy: None) -> Iterator[str]:
    """``http://127.0.0.1:PORT``; its ``/away`` redirects to a second server."""
    for other in serve():
        for first in serve():
            first.elsewhere = f"http://127.0.0.1:{other.server_address[1]}"  # type: ignore[attr-defined]
            yield f"127.0.0.1:{first.server_address[1]}"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory):
    try:
        return make_tls_files(tmp_path_factory.mktemp("tls"))
    except FileNotFoundError:
        pytest.skip("no openssl")


@pytest.fixture
def tls_server(no_proxy: None, tls) -> Iterator[str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls.server_cert, tls.server_key)
    for server in serve(context):
        yield f"127.0.0.1:{server.server_address[1]}"


AUTH = f"{USER}:pa%20ss%3Aw%40rd@"  # the password percent-escaped, as a URL holds it
NODE = HttpOptions(headers=(("X-Node", "a"),))

# id, the URL after "http://" (HOST is the server), options, the error (None: the pod)
_CASES = [
    ("basic-and-header", f"{AUTH}HOST/pod", NODE, None),
    ("no-credentials", "HOST/pod", NODE, "HTTP status 401 (Unauthorized)"),
    ("no-header", f"{AUTH}HOST/pod", None, "HTTP status 403 (Forbidden)"),
    ("wrong-password", f"{USER}:nope@HOST/pod", NODE, "HTTP status 401 (Unauthorized)"),
    ("query-token-open", f"HOST/open?token={TOKEN}", None, None),
    ("query-token-missing", f"HOST/nothing?token={TOKEN}&x=1", None, "HTTP status 404 (Not Found)"),
]


@pytest.mark.real_clock
@pytest.mark.parametrize(
    ("address", "options", "error"), [c[1:] for c in _CASES], ids=[c[0] for c in _CASES]
)
def test_a_urls_credentials_authenticate_and_are_never_shown(server, address, options, error):
    url = "http://" + address.replace("HOST", server)
    if error is None:
        pods = load_pods([url], http=options)
        assert ["web"] == [p.name for p in pods]
        return
    with pytest.raises(ConfigError) as caught:
        load_pods([url], http=options)
    assert str(caught.value) == f"{shown_url(url)}: {error}"
    for secret in ("pa ss", "pa%20ss", TOKEN, "nope"):
        assert secret not in str(caught.value)


@pytest.mark.real_clock
def test_credentials_do_not_follow_a_redirect(server):
    """Basic authentication and an Authorization header go to the URL's host only."""
    options = HttpOptions(headers=(("Authorization", "Bearer " + TOKEN), ("X-Node", "a")))
    for url, opts in ((f"http://{AUTH}{server}/away", None), (f"http://{server}/away", options)):
        body = _fetch(url, 10_000, 5.0, opts)
        assert isinstance(body, bytes)
        assert body.startswith(b"# none\n")


@pytest.mark.real_clock
def test_https_is_checked_against_the_ca_option(tls_server, tls):
    url = f"https://{AUTH}localhost:{tls_server.split(':')[1]}/pod"

    with pytest.raises(ConfigError) as caught:
        load_pods([url], http=NODE)  # the system's CAs do not know the test's
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert str(caught.value).startswith(shown_url(url) + ": cannot fetch: ")

    pods = load_pods([url], http=HttpOptions(headers=NODE.headers, ca_file=tls.ca))
    assert ["web"] == [p.name for p in pods]


def test_a_ca_file_that_cannot_be_read_names_it(tmp_path):
    missing = str(tmp_path / "ca.pem")
    with pytest.raises(ConfigError) as caught:
        load_pods(["https://127.0.0.1:1/pod"], http=HttpOptions(ca_file=missing))
    assert str(caught.value) == (
        f"https://127.0.0.1:1/pod: cannot read the CA file {missing}: No such file or directory"
    )


# id, URL with credentials, over plain http, to a host that is not loopback (on
# loopback they are sent: test_a_urls_credentials_authenticate_and_are_never_shown)
_CLEAR_CASES = [
    ("remote-http-password", f"http://{USER}:{PASSWORD}@192.0.2.1/pod"),
    ("remote-http-user-token", f"http://{TOKEN}@pods.example/pod"),
    ("remote-ipv6", f"http://{USER}:{PASSWORD}@[2001:db8::1]:8080/pod"),
    ("loopback-lookalike-name", f"http://{USER}:{PASSWORD}@localhost.example/pod"),
]


@pytest.mark.parametrize("url", [c[1] for c in _CLEAR_CASES], ids=[c[0] for c in _CLEAR_CASES])
def test_credentials_are_not_sent_in_clear_beyond_loopback(url):
    """Refused before any connection (192.0.2.1 is TEST-NET: nothing would answer)."""
    with pytest.raises(ConfigError) as caught:
        load_pods([url], http_timeout=0.5)
    assert str(caught.value) == (
        f"{shown_url(url)}: the URL holds credentials, which plain http would send in clear "
        "to a host that is not loopback: use https"
    )
    assert TOKEN not in str(caught.value)
    assert PASSWORD not in str(caught.value)


# id, URL, shown
_SHOWN_CASES = [
    (
        "password",
        "https://u:p%40ss@h:8443/pods?token=abc&node=a#frag",
        "https://u:***@h:8443/pods?token=***&node=***#***",
    ),
    ("user-alone", "https://TOKEN@h/pods", "https://***@h/pods"),
    ("bare-query-field", "http://h/p?abc", "http://h/p?***"),
    ("nothing-secret", "https://h/pods.yaml", "https://h/pods.yaml"),
    ("a-file", "/etc/pods/web.yaml", "/etc/pods/web.yaml"),
    ("bad-port", "http://u:p@h:port/x", "http://u:***@h:port/x"),
    ("not-parsable", "http://u:p@[::1/x?t=1", "http://***"),
]


@pytest.mark.parametrize(
    ("url", "shown"), [c[1:] for c in _SHOWN_CASES], ids=[c[0] for c in _SHOWN_CASES]
)
def test_shown_url_masks_credentials(url, shown):
    assert shown_url(url) == shown


@pytest.mark.real_clock
def test_the_loop_names_a_url_source_without_its_credentials(server):
    """The loop's notices and status keys hold the shown URL only."""
    url = f"http://{USER}:wrong@{server}/pod?token={TOKEN}"
    notices = []
    loop = Reconciler(
        [url], FakeRuntime(), on_notice=notices.append, probe=False, follow_events=False
    )
    try:
        loop.tick()
    finally:
        loop.stop()
    said = [f"{n.source} {n.message}" for n in notices]
    assert said
    assert all(TOKEN not in s and "wrong" not in s for s in said)
    assert any(shown_url(url) in s for s in said)
