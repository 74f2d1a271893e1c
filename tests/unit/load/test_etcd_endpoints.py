"""How ``EtcdClient`` goes through its endpoints, for a call (``read``) and for a watch:
in order from the one that answered last, that one kept, every unreachable one's reason
in the error, an expired token renewed once. Without an etcd: the endpoints are stand-ins
for etcd3gw's clients (``etcd3gw.client``), which answer as the JSON gateway does."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from typing import Any

import etcd3gw
import etcd3gw.exceptions
import pytest
import requests

from podsync.etcd._client import EtcdClient, EtcdUnavailable, WatchBatch
from podsync.etcd._urls import EtcdOptions, parse_etcd_url
from podsync.exceptions import EtcdError

URL = "etcd://etcd-a:2379,etcd-b:2379,etcd-c:2379/registry/hosts/node-a/kubelet"
PODS = b"apiVersion: v1\nkind: List\nitems: []\n"
# What requests says when nothing listens (etcd3gw keeps it as the error's text).
REFUSED = (
    "HTTPConnectionPool(host='etcd-a', port=2379): Max retries exceeded with url: "
    "/v3/kv/range (Caused by NewConnectionError('<urllib3.connection.HTTPConnection "
    "object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused'))"
)


def _error_body(message: str) -> str:
    # The gateway's error body: grpc's status, its message prefixed by the server.
    return json.dumps({"error": message, "code": 16, "message": message})


class _Response:
    """A streaming response of the gateway's ``/watch``."""

    def __init__(self, status_code: int, text: str = "", lines: tuple[bytes, ...] = ()) -> None:
        self.status_code = status_code
        self.text = text
        self.lines = lines
        self.closed = False

    def iter_lines(self, chunk_size: int | None = None) -> Iterator[bytes]:
        yield from self.lines

    def close(self) -> None:
        self.closed = True


class _Session:
    def __init__(self, endpoint: _Endpoint) -> None:
        self.endpoint = endpoint
        self.headers: dict[str, str] = {}

    def post(self, url: str, **kwargs: Any) -> _Response:
        """The watch request (requests' own errors, no etcd3gw mapping)."""
        endpoint = self.endpoint
        endpoint.called(url, self.headers)
        if endpoint.down:
            raise requests.exceptions.ConnectionError(REFUSED)
        if endpoint.refusals:
            return _Response(401, _error_body(endpoint.refusals.pop(0)))
        created = {"result": {"header": {"revision": "7"}, "created": True}}
        return _Response(200, lines=(json.dumps(created).encode(),))

    def close(self) -> None:
        pass


class _Endpoint:
    """One endpoint's etcd3gw client: up or down, and the etcd errors it answers with next."""

    def __init__(self, host: str, port: int, log: list[tuple[str, str, str]]) -> None:
        self.host = host
        self.port = port
        self.session = _Session(self)
        self.log = log
        self.down = False
        self.refusals: list[str] = []
        self.tokens = 0

    def get_url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}/v3{path}"

    def called(self, url: str, headers: dict[str, str]) -> None:
        path = url.partition("/v3")[2]
        self.log.append((self.host, path, headers.get("Authorization", "")))

    def post(self, url: str, json: Any = None, **kwargs: Any) -> Any:
        """A call (etcd3gw's mapping of requests' errors and of the HTTP status)."""
        self.called(url, self.session.headers)
        if self.down:
            raise etcd3gw.exceptions.ConnectionFailedError(REFUSED)
        if url.endswith("/auth/authenticate"):
            self.tokens += 1
            return {"header": {"revision": "7"}, "token": f"{self.host}-token-{self.tokens}"}
        if self.refusals:
            raise etcd3gw.exceptions.Etcd3Exception(_error_body(self.refusals.pop(0)), "")
        value = base64.b64encode(PODS).decode()
        return {"header": {"revision": "7"}, "kvs": [{"value": value, "mod_revision": "5"}]}


@pytest.fixture
def endpoints(monkeypatch: pytest.MonkeyPatch) -> dict[str, _Endpoint]:
    """The stand-in endpoints by host, as ``EtcdClient`` makes them; their shared call
    log is ``endpoints["log"]``'s."""
    log: list[tuple[str, str, str]] = []
    made: dict[str, _Endpoint] = {}

    def client(*, host: str, port: int, **options: Any) -> _Endpoint:
        made[host] = _Endpoint(host, port, log)
        return made[host]

    monkeypatch.setattr(etcd3gw, "client", client)
    return made


def _log(endpoints: dict[str, _Endpoint]) -> list[tuple[str, str, str]]:
    return next(iter(endpoints.values())).log


def _hosts(endpoints: dict[str, _Endpoint]) -> list[str]:
    """The endpoints called, in order."""
    return [host for host, _, _ in _log(endpoints)]


def _client(options: EtcdOptions | None = None) -> EtcdClient:
    return EtcdClient(parse_etcd_url(URL), options)


def _first_batch(client: EtcdClient) -> WatchBatch:
    (batch,) = itertools.islice(client.watch(1, idle=5), 1)
    return batch


def _read(client: EtcdClient) -> object:
    return client.read()


# A call and a watch, each with its path, and how etcd's refusal of it reads.
CALL = pytest.param(_read, "/kv/range", "refused: {}", id="call")
WATCH = pytest.param(_first_batch, "/watch", "refused the watch: {} (HTTP 401)", id="watch")


def test_a_call_tries_the_endpoints_in_order_and_keeps_the_one_that_answered(
    endpoints: dict[str, _Endpoint],
) -> None:
    client = _client()
    endpoints["etcd-a"].down = True

    assert PODS == client.read().value
    assert PODS == client.read().value  # straight to etcd-b, which answered

    assert ["etcd-a", "etcd-b", "etcd-b"] == _hosts(endpoints)


def test_a_watch_starts_at_the_endpoint_that_answered_last(
    endpoints: dict[str, _Endpoint],
) -> None:
    client = _client()
    endpoints["etcd-a"].down = True
    client.read()
    endpoints["etcd-b"].down = True

    assert WatchBatch(None, 0, 7) == _first_batch(client)
    assert PODS == client.read().value  # the watch's endpoint is kept too

    assert [
        ("etcd-a", "/kv/range", ""),
        ("etcd-b", "/kv/range", ""),
        ("etcd-b", "/watch", ""),
        ("etcd-c", "/watch", ""),
        ("etcd-c", "/kv/range", ""),
    ] == _log(endpoints)


def test_the_endpoints_are_tried_round_from_the_one_that_answered_last(
    endpoints: dict[str, _Endpoint],
) -> None:
    client = _client()
    endpoints["etcd-a"].down = endpoints["etcd-b"].down = True
    client.read()  # etcd-c answers
    endpoints["etcd-a"].down = False
    endpoints["etcd-c"].down = True

    client.read()

    assert ["etcd-a", "etcd-b", "etcd-c", "etcd-c", "etcd-a"] == _hosts(endpoints)


@pytest.mark.parametrize(("use", "path", "refusal"), [CALL, WATCH])
def test_no_endpoint_answering_names_each_with_its_reason_in_the_order_tried(
    endpoints: dict[str, _Endpoint], use: Any, path: str, refusal: str
) -> None:
    client = _client()
    endpoints["etcd-a"].down = True
    client.read()  # etcd-b answers
    for endpoint in endpoints.values():
        endpoint.down = True
    del _log(endpoints)[:]

    with pytest.raises(EtcdUnavailable) as caught:
        use(client)

    assert (
        "cannot reach etcd at etcd-b:2379: connection refused; etcd-c:2379: connection "
        "refused; etcd-a:2379: connection refused"
    ) == str(caught.value)
    assert [("etcd-b", path, ""), ("etcd-c", path, ""), ("etcd-a", path, "")] == _log(endpoints)


@pytest.mark.parametrize(("use", "path", "refusal"), [CALL, WATCH])
def test_an_expired_token_is_renewed_once(
    endpoints: dict[str, _Endpoint], use: Any, path: str, refusal: str
) -> None:
    # insecure: the stand-in endpoints are names, not loopback addresses.
    client = _client(EtcdOptions(user="node-a", password="secret-pw", insecure=True))
    a = endpoints["etcd-a"]
    a.refusals = ["etcdserver: invalid auth token"]

    use(client)

    assert [
        ("etcd-a", "/auth/authenticate", ""),
        ("etcd-a", path, "etcd-a-token-1"),
        ("etcd-a", "/auth/authenticate", ""),
        ("etcd-a", path, "etcd-a-token-2"),
    ] == _log(endpoints)
    a.refusals = ["etcdserver: invalid auth token", "etcdserver: invalid auth token"]
    with pytest.raises(EtcdError) as caught:
        use(client)
    where = "etcd-a:2379,etcd-b:2379,etcd-c:2379"
    assert f"etcd at {where} {refusal.format('invalid auth token')}" == str(caught.value)
    assert {"etcd-a"} == set(_hosts(endpoints))  # a refusal is not tried elsewhere


@pytest.mark.parametrize(("use", "path", "refusal"), [CALL, WATCH])
def test_a_refusal_is_not_tried_on_the_next_endpoint(
    endpoints: dict[str, _Endpoint], use: Any, path: str, refusal: str
) -> None:
    client = _client()
    endpoints["etcd-a"].refusals = ["etcdserver: permission denied"]

    with pytest.raises(EtcdError) as caught:
        use(client)

    where = "etcd-a:2379,etcd-b:2379,etcd-c:2379"
    assert f"etcd at {where} {refusal.format('permission denied')}" == str(caught.value)
    assert [("etcd-a", path, "")] == _log(endpoints)


def test_a_call_without_a_user_says_etcd_wants_one(endpoints: dict[str, _Endpoint]) -> None:
    client = _client()
    endpoints["etcd-a"].refusals = ["etcdserver: user name is empty"]

    with pytest.raises(EtcdError) as caught:
        client.read()

    assert (
        "etcd at etcd-a:2379,etcd-b:2379,etcd-c:2379 refused: user name is empty (etcd wants "
        "a user and password: --etcd-user and its password)"
    ) == str(caught.value)
