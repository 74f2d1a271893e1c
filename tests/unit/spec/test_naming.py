"""Container names: the seed's ParseDockerName examples and round trips (reference §1.2,
§4.2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podsync import Container, ParsedName, container_name, parse_container_name, spec_hash
from podsync.spec import parse_2014_container_name
from podsync.spec._naming import dns_label_problem
from tests.support.strategies import dns_labels, pod_full_names, pod_uids

UID = "d1b925c9-444a-11e4-a576-42010af0a203"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # Five fields: uid, then the suffix (the seed's random part).
        (
            "/k8s_bar_foo.new.test_12345678_0",
            ParsedName("foo.new.test", "12345678", "bar", 0, "0"),
        ),
        # A one-character uid.
        ("/k8s_baz_fiz.new.test_6_42", ParsedName("fiz.new.test", "6", "baz", 0, "42")),
        # The uid field is taken verbatim, dots and all.
        (
            "/k8s_net_foo.new.test_.deadbeef_42",
            ParsedName("foo.new.test", ".deadbeef", "net", 0, "42"),
        ),
        # Four fields: the fourth is the suffix, the uid is empty; no leading slash.
        ("k8s_container_foo.test_12345", ParsedName("foo.test", "", "container", 0, "12345")),
        # Four fields with a short pod full name.
        ("/k8s_foo_qux_1234", ParsedName("qux", "", "foo", 0, "1234")),
        # An empty fourth field (reference §1.2: `k8s_net_foo.test_`).
        ("k8s_net_foo.test_", ParsedName("foo.test", "", "net", 0, "")),
        # The hash after the first dot of field 1, as hex.
        (
            "/k8s_bar.1234_foo.new.test_12345678_42",
            ParsedName("foo.new.test", "12345678", "bar", 0x1234, "42"),
        ),
        # Fields beyond the fifth are ignored.
        ("k8s_c.1_pod_uid_2a_extra_more", ParsedName("pod", "uid", "c", 1, "2a")),
        # Three fields: the pod full name, no uid and no suffix.
        ("k8s_bar.1_foo.new.test", ParsedName("foo.new.test", "", "bar", 1, "")),
        # Only the prefix and a container: no pod, no uid, no suffix.
        ("k8s_c.ff", ParsedName("", "", "c", 0xFF, "")),
        # The prefix alone.
        ("k8s", ParsedName()),
    ],
)
def test_parse_container_name_seed_examples(name, expected):
    """ParseDockerName's examples parse to the seed's fields."""

    assert expected == parse_container_name(name)


@pytest.mark.parametrize(
    "name",
    [
        # A foreign container.
        "nginx",
        "/nginx",
        # The legacy mid-2014 format, dash-separated.
        "k8s--bar--foo--1234",
        "/k8s--bar--foo--1234",
        # The empty string (the seed indexed name[0] and panicked).
        "",
        # Only the slash the Docker API adds.
        "/",
        # Only one slash is stripped.
        "//k8s_bar_foo_1_2",
        # The prefix must be exactly "k8s".
        "K8S_bar_foo_1_2",
        "k8sx_bar_foo_1_2",
        # A raw container id.
        "4c01db0b339c",
    ],
)
def test_parse_container_name_foreign(name):
    """A name that is not podsync's parses to the empty ParsedName."""

    assert ParsedName() == parse_container_name(name)


@pytest.mark.parametrize(
    ("hash_text", "expected"),
    [
        # Not hex: Go's ParseUint syntax error gives 0.
        ("zz", 0),
        # More than 32 bits: ParseUint's range error gives the largest uint32.
        ("1ffffffff", 0xFFFFFFFF),
        # Exactly the largest uint32.
        ("ffffffff", 0xFFFFFFFF),
        # A sign is a syntax error for ParseUint.
        ("+1", 0),
        ("-1", 0),
        # So is a 0x prefix (base 16 is given explicitly, not inferred).
        ("0x1", 0),
        # An empty hash.
        ("", 0),
        # Upper case is hex too.
        ("ABCDEF", 0xABCDEF),
        # Leading zeros are fine.
        ("00000001", 1),
    ],
)
def test_parse_container_name_hash_edge_cases(hash_text, expected):
    """The hash field follows Go's strconv.ParseUint(text, 16, 32) rules."""

    assert expected == parse_container_name(f"k8s_c.{hash_text}_p_u_1").hash


def test_parse_container_name_ignores_extra_dot_pieces():
    """Only the piece after the first dot of field 1 is the hash."""

    assert ParsedName("p", "u", "c", 0x12, "1") == parse_container_name("k8s_c.12.34_p_u_1")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # With a uid: five fields, the attempt as 8 lowercase hex digits.
        (
            ("bar", 0x1234, "foo.new.test", "12345678", 0),
            "k8s_bar.1234_foo.new.test_12345678_00000000",
        ),
        # Without a uid the field is left out (4 fields), as the seed did.
        (("bar", 0x1234, "foo.new.test", "", 42), "k8s_bar.1234_foo.new.test_0000002a"),
        # The hash is lowercase hex without padding.
        (
            ("net", 0xABC, "web.default.file", UID, 0xFFFFFFFF),
            f"k8s_net.abc_web.default.file_{UID}_ffffffff",
        ),
        # A zero hash is written as 0.
        (("c", 0, "p.n.s", "u", 1), "k8s_c.0_p.n.s_u_00000001"),
    ],
)
def test_container_name_format(args, expected):
    """container_name writes the seed's BuildDockerName format with an attempt suffix."""

    assert expected == container_name(*args)


@pytest.mark.parametrize(
    ("name_hash", "attempt"),
    [
        # A hash above 32 bits.
        (2**32, 0),
        # A negative hash.
        (-1, 0),
        # An attempt above 32 bits.
        (0, 2**32),
        # A negative attempt.
        (0, -1),
    ],
)
def test_container_name_rejects_out_of_range(name_hash, attempt):
    """Hash and attempt must fit in 32 bits."""

    with pytest.raises(ValueError, match="32 bits"):
        container_name("c", name_hash, "p.n.s", "u", attempt)


def test_container_name_takes_the_largest_32_bit_values():
    """2**32 - 1 fits in 32 bits, as hash and as attempt."""

    assert "k8s_c.ffffffff_p.n.s_u_ffffffff" == container_name(
        "c", 2**32 - 1, "p.n.s", "u", 2**32 - 1
    )


@pytest.mark.parametrize(
    ("namespace", "uid", "pod_name", "container"),
    [
        # The plain case.
        ("file", UID, "manifest1234", "container5678"),
        # Dashes in the pod name.
        ("file", UID, "mani-fest-1234", "container5678"),
        # A pod named like its uid.
        ("file", UID, UID, "container123"),
        # An empty namespace: the full name ends in ".".
        ("", UID, UID, "container123"),
        # No uid: a 4-field name.
        ("other", "", UID, "container456"),
        # An empty container name.
        ("other", "", UID, ""),
    ],
)
def test_container_manifest_naming(namespace, uid, pod_name, container):
    """TestContainerManifestNaming: a built name parses back to its parts (with the
    two-part full name that test used, podsync's 32-bit name hash and an attempt)."""
    full_name = f"{pod_name}.{namespace}"
    # No Container has an empty name (it is refused when built): the seed's last row
    # takes another container's hash, which is any 32-bit value to this round trip.
    name_hash = spec_hash(Container(name=container or "other", image="")).name_hash
    name = container_name(container, name_hash, full_name, uid, 42)

    assert ParsedName(full_name, uid, container, name_hash, "0000002a") == parse_container_name(
        "/" + name
    )


@pytest.mark.parametrize(
    ("suffix", "expected"),
    [
        # podsync's 8-digit attempt.
        ("0000002a", 42),
        # The seed's test suffixes are hex too.
        ("42", 0x42),
        # No suffix.
        ("", None),
        # Not hex.
        ("xyz", None),
    ],
)
def test_parsed_name_attempt(suffix, expected):
    """ParsedName.attempt reads the suffix as hex, or None."""

    assert expected == ParsedName(suffix=suffix).attempt


@given(
    container=dns_labels(max_size=63),
    name_hash=st.integers(min_value=0, max_value=2**32 - 1),
    full_name=pod_full_names(),
    uid=pod_uids(allow_empty=True),
    attempt=st.integers(min_value=0, max_value=2**32 - 1),
    slash=st.booleans(),
)
def test_container_name_round_trip(container, name_hash, full_name, uid, attempt, slash):
    """Every name podsync builds parses back to what it was built from."""
    name = container_name(container, name_hash, full_name, uid, attempt)
    parsed = parse_container_name("/" + name if slash else name)

    assert (full_name, uid, container, name_hash, attempt) == (
        parsed.pod_full_name,
        parsed.uid,
        parsed.container,
        parsed.hash,
        parsed.attempt,
    )


@given(st.text())
def test_parse_container_name_never_raises(name):
    """Any text parses, to something or to the empty ParsedName."""

    assert isinstance(parse_container_name(name), ParsedName)


# --- the exact 2014 format (what may be taken over without labels) --------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "/k8s_bar.2a1b3c4d_foo.new.file_12345678_8a3c01f2",
            ParsedName("foo.new.file", "12345678", "bar", 0x2A1B3C4D, "8a3c01f2"),
        ),
        (
            f"k8s_net.0_web.default.etcd_{UID}_00000000",
            ParsedName("web.default.etcd", UID, "net", 0, "00000000"),
        ),
    ],
)
def test_parse_2014_container_name_accepts_what_the_seed_wrote(name, expected):
    """BuildDockerName's output: container.hash, name.namespace.source, uid, %08x."""
    assert expected == parse_2014_container_name(name)


@pytest.mark.parametrize(
    "name",
    [
        # cri-dockerd / dockershim / Docker Desktop's Kubernetes: six fields.
        f"k8s_POD_kube-apiserver-docker-desktop_kube-system_{UID}_0",
        f"k8s_kube-apiserver_kube-apiserver-docker-desktop_kube-system_{UID}_1",
        f"/k8s_coredns_coredns-5d78c9869d-x7k2p_kube-system_{UID}_3",
        # No hash after the container name.
        "k8s_bar_foo.new.file_12345678_8a3c01f2",
        # A pod field of two parts (the Oct 2014 format) or four.
        "k8s_bar.1_foo.new_12345678_8a3c01f2",
        "k8s_bar.1_foo.new.file.x_12345678_8a3c01f2",
        # An empty source (a missing annotation) or name.
        "k8s_bar.1_foo.new._12345678_8a3c01f2",
        "k8s_bar.1_.new.file_12345678_8a3c01f2",
        # Four fields: no uid.
        "k8s_bar.1_foo.new.file_8a3c01f2",
        # A suffix that %08x cannot have written.
        "k8s_bar.1_foo.new.file_12345678_42",
        "k8s_bar.1_foo.new.file_12345678_8A3C01F2",
        "k8s_bar.1_foo.new.file_12345678_8a3c01f2a",
        # A hash that FormatUint(h, 16) of a 32-bit value cannot have written.
        "k8s_bar.123456789_foo.new.file_12345678_8a3c01f2",
        "k8s_bar.ABC_foo.new.file_12345678_8a3c01f2",
        "k8s_bar._foo.new.file_12345678_8a3c01f2",
        "k8s_bar.1.2_foo.new.file_12345678_8a3c01f2",
        # Not DNS labels.
        "k8s_Bar.1_foo.new.file_12345678_8a3c01f2",
        "k8s_bar.1_foo.New.file_12345678_8a3c01f2",
        "k8s_bar.1_foo.new.testSource_12345678_8a3c01f2",
        # A uid podsync could not use.
        "k8s_bar.1_foo.new.file_.._8a3c01f2",
        # Not k8s_ at all.
        "k8s--bar--foo--1234",
        "nginx",
        "",
    ],
)
def test_parse_2014_container_name_refuses_anything_else(name):
    """Anything that is not exactly the seed's format is not a 2014 kubelet's."""
    assert parse_2014_container_name(name) is None


@given(
    container=dns_labels(max_size=63),
    name_hash=st.integers(min_value=0, max_value=2**32 - 1),
    full_name=pod_full_names(),
    uid=pod_uids(),
    attempt=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_parse_2014_container_name_reads_every_name_podsync_writes(
    container, name_hash, full_name, uid, attempt
):
    """podsync writes the seed's format, so the strict parser agrees with the seed's."""
    name = container_name(container, name_hash, full_name, uid, attempt)

    assert parse_container_name(name) == parse_2014_container_name("/" + name)


@given(st.text())
def test_parse_2014_container_name_never_raises(name):
    parsed = parse_2014_container_name(name)

    assert parsed is None or parsed == parse_container_name(name)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("web", None),
        ("a" * 63, None),
        ("", "it is empty"),
        ("a" * 64, "it has 64 characters, at most 63 are allowed"),
        # 63 characters are allowed: the problem is the trailing dash.
        ("a" * 62 + "-", "it must start and end with a letter or digit"),
        ("-web", "it must start and end with a letter or digit"),
        ("Web", "uppercase letters are not allowed (only lowercase letters, digits and '-')"),
        ("my_app", "'_' is not allowed (only lowercase letters, digits and '-')"),
    ],
)
def test_dns_label_problem_says_what_is_wrong(text, problem):
    """The loader's message for a name that is not a DNS label names the first rule it
    breaks."""

    assert problem == dns_label_problem(text)
