"""httpGet probes on the wire: the headers podsync sends, and HTTPS without certificate
verification, against servers on 127.0.0.1 (nothing but loopback is ever connected to).

The rules are the kubelet's (``pkg/probe/http/request.go``, ``http.go``;
kubelet-modern.md §4): the action's headers are sent, ``User-Agent`` and ``Accept:
*/*`` only when absent, an explicitly empty ``Accept`` sends none, a ``Host`` header
names the request's host, and an HTTPS certificate is not verified.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from podsync import HTTPHeader
from podsync.prober._handlers import HandlerError, http_get

LOOPBACK = "127.0.0.1"


class Recorder:
    def __init__(self, port: int) -> None:
        self.port = port
        self.requests: list[list[tuple[str, str]]] = []


def serve(httpd: ThreadingHTTPServer, recorder: Recorder) -> Iterator[Recorder]:
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def handler_for(recorder_box: list[Recorder]) -> type[BaseHTTPRequestHandler]:
    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            recorder_box[0].requests.append(list(self.headers.items()))
            self.send_response(200 if self.path == "/healthz" else 503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Answer


@pytest.fixture
def plain() -> Iterator[Recorder]:
    box: list[Recorder] = []
    httpd = ThreadingHTTPServer((LOOPBACK, 0), handler_for(box))
    box.append(Recorder(httpd.server_address[1]))
    yield from serve(httpd, box[0])


@pytest.fixture
def tls(tmp_path: Path) -> Iterator[Recorder]:
    """An HTTPS server with a self-signed certificate for another name."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a self-signed certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=not-this-host.example", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    box: list[Recorder] = []
    httpd = ThreadingHTTPServer((LOOPBACK, 0), handler_for(box))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    box.append(Recorder(httpd.server_address[1]))
    yield from serve(httpd, box[0])


def test_default_headers(plain):
    """No headers given: Host is the address, then podsync's User-Agent and Accept */*;
    no compression is asked for."""
    http_get(LOOPBACK, plain.port, "/healthz", "HTTP", 3.0)

    assert [
        [
            ("Host", f"{LOOPBACK}:{plain.port}"),
            ("User-Agent", "podsync"),
            ("Accept", "*/*"),
        ]
    ] == plain.requests


def test_custom_headers_as_given(plain):
    """The documentation's Custom-Header, a name given twice, a Host header and a
    User-Agent of one's own: sent as given, the defaults only where absent."""
    headers = (
        HTTPHeader("Custom-Header", "Awesome"),
        HTTPHeader("X-Token", "a"),
        HTTPHeader("X-Token", "b"),
        HTTPHeader("Host", "web.example"),
        HTTPHeader("User-Agent", "probe/1"),
    )

    http_get(LOOPBACK, plain.port, "/healthz", "HTTP", 3.0, headers)

    assert [
        [
            ("Host", "web.example"),
            ("Custom-Header", "Awesome"),
            ("X-Token", "a"),
            ("X-Token", "b"),
            ("User-Agent", "probe/1"),
            ("Accept", "*/*"),
        ]
    ] == plain.requests


def test_an_empty_accept_sends_no_accept(plain):
    http_get(LOOPBACK, plain.port, "/healthz", "HTTP", 3.0, (HTTPHeader("Accept", ""),))

    assert [[("Host", f"{LOOPBACK}:{plain.port}"), ("User-Agent", "podsync")]] == plain.requests


def test_an_accept_of_ones_own(plain):
    http_get(
        LOOPBACK, plain.port, "/healthz", "HTTP", 3.0, (HTTPHeader("Accept", "application/json"),)
    )

    assert ("Accept", "application/json") in plain.requests[0]
    assert ("Accept", "*/*") not in plain.requests[0]


def test_https_does_not_verify_the_certificate(tls):
    """A self-signed certificate for another name: the probe passes, as the kubelet's
    does (InsecureSkipVerify)."""
    http_get(LOOPBACK, tls.port, "/healthz", "HTTPS", 3.0, (HTTPHeader("X-Probe", "1"),))

    assert ("X-Probe", "1") in tls.requests[0]


def test_https_status_still_counts(tls):
    with pytest.raises(HandlerError, match=r"GET https://127\.0\.0\.1:\d+/ready: status 503"):
        http_get(LOOPBACK, tls.port, "/ready", "HTTPS", 3.0)


def test_a_readiness_probe_sends_its_headers_through_sync(plain, tmp_path):
    """From the pod file to the wire: a readiness httpGet probe with httpHeaders, on the
    pod's address (FakeRuntime reports 127.0.0.1), makes the container ready."""
    from podsync import parse_pods, sync
    from podsync.actions._options import PlanOptions
    from podsync.testing import FakeClock, FakeRuntime

    (pod,) = parse_pods(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n"
        "  - name: app\n    image: busybox\n    readinessProbe:\n      httpGet:\n"
        f"        port: {plain.port}\n        path: /healthz\n"
        "        httpHeaders: [{name: Custom-Header, value: Awesome}]\n"
    )
    clock = FakeClock(1000.0, step=0)
    fake = FakeRuntime(
        images=["busybox", "registry.k8s.io/pause:3.10"], clock=clock, address=LOOPBACK
    )
    options = PlanOptions(root_dir=str(tmp_path))
    assert sync([pod], fake, options=options, clock=clock).ok

    clock.advance(1)
    result = sync([pod], fake, options=options, clock=clock)

    assert [True] == list(result.readiness.values())
    assert ("Custom-Header", "Awesome") in plain.requests[0]
