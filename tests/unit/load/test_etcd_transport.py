"""How etcd's endpoints are written and when credentials may go in clear: the endpoint
forms of ``parse_etcd_url`` (``etcd://``, and etcdctl's ``http://`` and ``https://``),
the refusal of a user over plain http off loopback (``check_credentials_transport``),
and the system's CAs. Without an etcd: nothing here connects."""

from __future__ import annotations

import re

import pytest

from podsync.etcd._client import EtcdClient, system_cas
from podsync.etcd._urls import EtcdOptions, EtcdURL, check_credentials_transport, parse_etcd_url
from podsync.exceptions import EtcdError

KEY = "/registry/hosts/node-a/kubelet"


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("etcd://10.0.0.1:2379" + KEY, True, EtcdURL((("10.0.0.1", 2379),), KEY)),
        (
            "etcd://a:2379,[::1]:2380" + KEY,
            True,
            EtcdURL((("a", 2379), ("::1", 2380)), KEY),
        ),
        ("ETCD://a:2379/", False, EtcdURL((("a", 2379),), "")),
        ("https://a:2379", False, EtcdURL((("a", 2379),), "", True)),
        ("http://a:2379/", False, EtcdURL((("a", 2379),), "", False)),
        (
            "https://a:2379,https://b:2379",
            False,
            EtcdURL((("a", 2379), ("b", 2379)), "", True),
        ),
        ("HTTPS://a:2379,b:2379", False, EtcdURL((("a", 2379), ("b", 2379)), "", True)),
        ("https://[fd00::2]:2379" + KEY, True, EtcdURL((("fd00::2", 2379),), KEY, True)),
    ],
    ids=[
        "etcd-key",
        "etcd-two-endpoints-ipv6",
        "etcd-endpoints-only",
        "https",
        "http",
        "https-each-endpoint",
        "https-once-upper-case",
        "https-ipv6-with-key",
    ],
)
def test_endpoint_forms(text: str, key: bool, expected: EtcdURL) -> None:
    parsed = parse_etcd_url(text, key=key)

    assert expected == parsed
    # Written back, it parses to itself.
    assert parsed == parse_etcd_url(parsed.url(), key=key)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a:2379", "an etcd URL starts with etcd://, http:// or https://"),
        ("unix://a:2379", "an etcd URL starts with etcd://, http:// or https://"),
        ("https://a:2379,http://b:2379", "'http://b:2379': every endpoint has the scheme"),
        ("http://a:2379,etcd://b:2379", "'etcd://b:2379': every endpoint has the scheme"),
        ("https://a", "'a' is not HOST:PORT (https://HOST:PORT[,HOST:PORT...])"),
        ("https://a:0", "'a:0' is not HOST:PORT"),
        ("https://a:2379/x", "give the endpoints only"),
    ],
    ids=["no-scheme", "other-scheme", "mixed-tls", "mixed-etcd", "no-port", "port-0", "key"],
)
def test_bad_endpoints_say_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(problem)):
        parse_etcd_url(text, key=False)


USER = {"user": "node-a", "password": "secret-pw"}
REFUSED = "--etcd-user: refusing to send the password and token over plain HTTP"


@pytest.mark.parametrize(
    ("endpoints", "options", "refused"),
    [
        ("etcd://10.0.0.1:2379", EtcdOptions(**USER), "to 10.0.0.1:2379 (not a loopback"),
        ("http://etcd.example:2379", EtcdOptions(**USER), "to etcd.example:2379"),
        (
            "etcd://127.0.0.1:2379,10.0.0.2:2379",
            EtcdOptions(**USER),
            "to 10.0.0.2:2379 (not a loopback",
        ),
        ("etcd://localhost:2379", EtcdOptions(**USER), "to localhost:2379"),
        ("etcd://127.0.0.1:2379", EtcdOptions(**USER), None),
        ("etcd://127.8.9.10:2379,[::1]:2379", EtcdOptions(**USER), None),
        ("etcd://10.0.0.1:2379", EtcdOptions(**USER, insecure=True), None),
        ("https://10.0.0.1:2379", EtcdOptions(**USER), None),
        ("etcd://10.0.0.1:2379", EtcdOptions(**USER, tls=True), None),
        ("etcd://10.0.0.1:2379", EtcdOptions(**USER, ca_file="ca.pem"), None),
        ("etcd://10.0.0.1:2379", EtcdOptions(), None),
        ("http://10.0.0.1:2379", EtcdOptions(ca_file="ca.pem"), "TLS options are given"),
        ("http://10.0.0.1:2379", EtcdOptions(tls=True), "write the endpoints https://"),
    ],
    ids=[
        "user-http-remote",
        "user-http-scheme-name",
        "user-one-remote-of-two",
        "user-localhost-is-a-name",
        "user-loopback",
        "user-loopback-v4-and-v6",
        "user-insecure",
        "user-https-scheme",
        "user-etcd-tls",
        "user-ca",
        "no-user",
        "http-with-a-ca",
        "http-with-tls",
    ],
)
def test_credentials_never_go_in_clear_off_loopback(
    endpoints: str, options: EtcdOptions, refused: str | None
) -> None:
    url = parse_etcd_url(endpoints, key=False)

    if refused is None:
        check_credentials_transport(url, options)
        return
    with pytest.raises(ValueError, match=r"refusing|TLS options") as caught:
        check_credentials_transport(url, options)
    assert refused in str(caught.value)
    assert "secret-pw" not in str(caught.value)
    # The client refuses before it is made: nothing is sent.
    with pytest.raises(EtcdError) as client_error:
        EtcdClient(attrs_key(url), options)
    assert str(caught.value) == str(client_error.value)


def attrs_key(url: EtcdURL) -> EtcdURL:
    return EtcdURL(url.endpoints, KEY, url.tls)


def test_refused_names_both_ways_out() -> None:
    url = parse_etcd_url("etcd://10.0.0.1:2379", key=False)

    with pytest.raises(ValueError, match=r"^--etcd-user: ") as caught:
        check_credentials_transport(url, EtcdOptions(**USER))

    assert str(caught.value) == (
        "--etcd-user: refusing to send the password and token over plain HTTP to "
        "10.0.0.1:2379 (not a loopback address): speak TLS (https:// endpoints, --etcd-tls "
        "or --etcd-ca), or give --etcd-insecure to send them in clear"
    )


def test_system_cas_follow_ssl_cert_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pytest.TempPathFactory
) -> None:
    bundle = tmp_path / "cas.pem"  # type: ignore[operator]
    bundle.write_text("")
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))

    assert str(bundle) == system_cas()
