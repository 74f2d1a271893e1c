"""resolv.conf: the seed's TestParseResolvConf and applyClusterDNS (reference §2.5,
§4.1 #28)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podsync import ResolvConf, parse_resolv_conf
from podsync.spec._resolv import (
    cluster_dns,
    is_loopback_nameserver,
    only_loopback_nameservers,
    without_loopback,
)

NS = ("1.2.3.4",)


@pytest.mark.parametrize(
    ("text", "nameservers", "searches"),
    [
        # 1. Empty text.
        ("", (), ()),
        # 2. Only a space.
        (" ", (), ()),
        # 3. Only a newline.
        ("\n", (), ()),
        # 4. Only whitespace over two lines.
        ("\t\n\t", (), ()),
        # 5. A comment.
        ("#comment\n", (), ()),
        # 6. An indented comment (the seed strips before looking for "#").
        (" #comment\n", (), ()),
        # 7. Two comments.
        ("#comment\n#comment", (), ()),
        # 8. A bare nameserver keyword adds nothing.
        ("#comment\nnameserver", (), ()),
        # 9. A bare nameserver and a bare search.
        ("#comment\nnameserver\nsearch", (), ()),
        # 10. One name server.
        ("nameserver 1.2.3.4", NS, ()),
        # 11. Leading space.
        (" nameserver 1.2.3.4", NS, ()),
        # 12. Leading tab.
        ("\tnameserver 1.2.3.4", NS, ()),
        # 13. A tab between keyword and value.
        ("nameserver\t1.2.3.4", NS, ()),
        # 14. Mixed whitespace between keyword and value.
        ("nameserver \t 1.2.3.4", NS, ()),
        # 15. Name servers accumulate.
        ("nameserver 1.2.3.4\nnameserver 5.6.7.8", ("1.2.3.4", "5.6.7.8"), ()),
        # 16. One search domain.
        ("search foo", (), ("foo",)),
        # 17. Two search domains.
        ("search foo bar", (), ("foo", "bar")),
        # 18. Three search domains and a trailing newline.
        ("search foo bar bat\n", (), ("foo", "bar", "bat")),
        # 19. The last search line wins.
        ("search foo\nsearch bar", (), ("bar",)),
        # 20. Both settings.
        ("nameserver 1.2.3.4\nsearch foo bar", NS, ("foo", "bar")),
        # 21. Interleaved: name servers accumulate, the last search wins.
        (
            "nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar",
            ("1.2.3.4", "5.6.7.8"),
            ("bar",),
        ),
        # 22. Comments between settings, and an unknown keyword at the end.
        ("#comment\nnameserver 1.2.3.4\n#comment\nsearch foo\ncomment", NS, ("foo",)),
    ],
)
def test_parse_resolv_conf_seed_cases(text, nameservers, searches):
    """TestParseResolvConf's 22 cases."""

    assert ResolvConf(nameservers, searches) == parse_resolv_conf(text)


@pytest.mark.parametrize(
    ("text", "nameservers", "searches"),
    [
        # resolv.conf(5): ";" starts a comment too (the seed only knew "#").
        (";nameserver 9.9.9.9\nnameserver 1.2.3.4", NS, ()),
        # Also indented, like "#".
        ("  ; search nope\nsearch foo", (), ("foo",)),
        # A bare search line clears the list.
        ("search foo bar\nsearch", (), ()),
        # Other keywords are ignored, "domain" included (as in the seed).
        ("domain example.com\noptions ndots:5\nsortlist 10.0.0.0\nnameserver 1.2.3.4", NS, ()),
        # CRLF line endings.
        ("nameserver 1.2.3.4\r\nsearch foo\r\n", NS, ("foo",)),
        # Several addresses on one line are all kept (the seed took every field).
        ("nameserver 1.2.3.4 5.6.7.8", ("1.2.3.4", "5.6.7.8"), ()),
        # Keywords are case-sensitive.
        ("NAMESERVER 1.2.3.4\nSearch foo", (), ()),
        # A keyword must be a whole field.
        ("nameservers 1.2.3.4\nsearchfoo", (), ()),
    ],
)
def test_parse_resolv_conf_more_cases(text, nameservers, searches):
    """Cases beyond the seed's: ";" comments, clearing, ignored keywords, line endings."""

    assert ResolvConf(nameservers, searches) == parse_resolv_conf(text)


@given(st.text())
def test_parse_resolv_conf_never_raises(text):
    """Any text parses, and every value is one non-empty whitespace-free field."""
    result = parse_resolv_conf(text)
    values = result.nameservers + result.searches
    expected: list[str] = []

    assert expected == [v for v in values if not v or v != "".join(v.split())]


HOST = ResolvConf(nameservers=("8.8.8.8",), searches=("corp.example",))


@pytest.mark.parametrize(
    ("server", "domain", "expected"),
    [
        # Both set: the cluster's server and domains go first.
        (
            "10.0.0.10",
            "cluster.local",
            ResolvConf(
                ("10.0.0.10", "8.8.8.8"), ("prod.cluster.local", "cluster.local", "corp.example")
            ),
        ),
        # Only a server: the search list stays the host's.
        ("10.0.0.10", "", ResolvConf(("10.0.0.10", "8.8.8.8"), ("corp.example",))),
        # Only a domain: the name servers stay the host's.
        (
            "",
            "cluster.local",
            ResolvConf(("8.8.8.8",), ("prod.cluster.local", "cluster.local", "corp.example")),
        ),
        # Neither: the host's settings unchanged.
        ("", "", HOST),
    ],
)
def test_cluster_dns(server, domain, expected):
    """applyClusterDNS: cluster server and "<ns>.<domain>", "<domain>" before the host's."""

    assert expected == cluster_dns(HOST, namespace="prod", server=server, domain=domain)


def test_cluster_dns_with_empty_host():
    """An empty host resolv.conf gives just the cluster's settings."""
    expected = ResolvConf(("10.0.0.10",), ("default.cluster.local", "cluster.local"))

    assert expected == cluster_dns(
        ResolvConf(), namespace="default", server="10.0.0.10", domain="cluster.local"
    )


# --- loopback name servers (systemd-resolved's stub, dnsmasq, ...) --------------------


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.53", True),  # systemd-resolved's stub listener
        ("127.0.0.1", True),
        ("127.0.1.1", True),  # Debian/Ubuntu's NetworkManager dnsmasq
        ("127.255.255.254", True),
        ("::1", True),
        ("0:0:0:0:0:0:0:1", True),
        ("10.0.0.10", False),
        ("8.8.8.8", False),
        ("128.0.0.1", False),
        ("fe80::1%eth0", False),  # link-local with a zone: reachable is not ours to judge
        ("::ffff:127.0.0.1", False),  # mapped: as libnetwork, only 127/8 and ::1
        ("localhost", False),  # not an address: left for the resolver to refuse
        ("", False),
    ],
)
def test_is_loopback_nameserver(address, loopback):
    """Loopback is 127.0.0.0/8 and ::1 (what Docker's resolv.conf filter removes)."""
    assert loopback == is_loopback_nameserver(address)


def test_without_loopback_keeps_the_rest_in_order():
    """Loopback name servers go; the others and the search domains stay, in order."""
    conf = parse_resolv_conf(
        "nameserver 127.0.0.53\nnameserver 10.0.0.2\nnameserver ::1\n"
        "nameserver 10.0.0.3\nsearch lan corp.example\n"
    )

    assert ResolvConf(("10.0.0.2", "10.0.0.3"), ("lan", "corp.example")) == without_loopback(conf)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # systemd-resolved's stub file (Ubuntu's /etc/resolv.conf).
        ("nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n", True),
        ("nameserver 127.0.0.1\nnameserver ::1\n", True),
        ("nameserver 127.0.0.53\nnameserver 10.0.0.2\n", False),
        ("nameserver 10.0.0.2\n", False),
        # No name server at all: nothing to replace (the resolver's default applies).
        ("search lan\n", False),
        ("", False),
    ],
)
def test_only_loopback_nameservers(text, expected):
    """When every name server is a loopback address (and there is one), a pod in its
    own network namespace can reach none of them."""
    assert expected == only_loopback_nameservers(parse_resolv_conf(text))
