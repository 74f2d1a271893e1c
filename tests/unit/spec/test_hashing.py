"""The spec hash: stable, canonical, and blind to what podsync runs itself (reference §1.3)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any, cast

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podsync import (
    Capabilities,
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HTTPGetAction,
    HTTPHeader,
    Lifecycle,
    Pod,
    PodSecurityContext,
    Port,
    PortProtocol,
    Probe,
    ProfileType,
    PullPolicy,
    ResolvConf,
    SecurityContext,
    SecurityProfile,
    Sysctl,
    Volume,
    VolumeMount,
    container_name,
    spec_hash,
)
from podsync.spec import SPEC_HASH_VERSION, SpecHash, network_spec_hash
from podsync.spec._hashing import canonical_json, canonical_spec, network_spec
from tests.support.strategies import containers, handlers, lifecycles, pods, probes, secured_pods

CONTAINER = Container(
    name="web",
    image="registry.example.com:5000/team/web:1.2",
    command=("/bin/server",),
    args=("--port", "8080"),
    working_dir="/srv",
    env=(EnvVar("MODE", "production"), EnvVar("GREETING", "grüß dich")),
    ports=(Port(8080, 80, PortProtocol.TCP, "http"), Port(53, 0, PortProtocol.UDP)),
    volume_mounts=(VolumeMount("data", "/var/data"), VolumeMount("cache", "/cache", True)),
    cpu=500,
    memory=64 * 2**20,
    termination_message_path="/dev/termination-log",
)
POD = Pod(
    name="web",
    containers=(CONTAINER,),
    volumes=(Volume("data", "/srv/data"), Volume("cache"), Volume("unused", "/x")),
    namespace="prod",
    source="file",
)
PAUSE = "kubernetes/pause:latest"

# The canonical form of CONTAINER in POD, pinned: a change here changes every hash in
# every deployment, so it must come with a SPEC_HASH_VERSION bump. With the default
# options, version 2's form (and so its digests) is version 1's byte for byte.
GOLDEN_CANONICAL = (
    '{"args":["--port","8080"],"command":["/bin/server"],"cpu":500,'
    '"env":[{"name":"MODE","value":"production"},{"name":"GREETING","value":"grüß dich"}],'
    '"image":"registry.example.com:5000/team/web:1.2","memory":67108864,"name":"web",'
    '"pod":{"dns_policy":"ClusterFirst","name":"web","volumes":[{"host_path":"/srv/data",'
    '"name":"data"},{"host_path":null,"name":"cache"}]},'
    '"ports":[{"container_port":8080,"host_ip":"","host_port":80,"protocol":"TCP"},'
    '{"container_port":53,"host_ip":"","host_port":0,"protocol":"UDP"}],"privileged":false,'
    '"termination_message_path":"/dev/termination-log",'
    '"volume_mounts":[{"mount_path":"/var/data","name":"data","read_only":false},'
    '{"mount_path":"/cache","name":"cache","read_only":true}],"working_dir":"/srv"}'
)
GOLDEN_POD_HASH = "3:359df9ce6d569219b47ba058c4b822904805466bd8997027e6f4c9e57d269a15"
GOLDEN_CONTAINER_HASH = "3:94cd1191d097b0f21297d946c61e38fa3f2aba6726002e8365af24492ec0142b"
GOLDEN_NETWORK_HASH = "3:5779ccc4bea1a40e13e98ce3d58f03b8fe93b56a7474ebb95ca10af44e1bfe11"


def test_golden_canonical_form():
    """The canonical JSON of a fixed container is pinned byte for byte."""
    expected = GOLDEN_CANONICAL

    assert expected == canonical_json(canonical_spec(CONTAINER, POD))


def test_golden_digests():
    """The hashes of a fixed container, with and without its pod, and of its network
    container are pinned."""
    expected = (GOLDEN_POD_HASH, GOLDEN_CONTAINER_HASH, GOLDEN_NETWORK_HASH)

    assert expected == (
        str(spec_hash(CONTAINER, POD)),
        str(spec_hash(CONTAINER)),
        str(network_spec_hash(POD, PAUSE)),
    )


def test_digest_is_sha256_of_canonical_utf8():
    """The digest is sha256 over the UTF-8 of the canonical JSON (compose's json_hash)."""
    expected = hashlib.sha256(GOLDEN_CANONICAL.encode("utf-8")).hexdigest()

    assert SpecHash(SPEC_HASH_VERSION, expected) == spec_hash(CONTAINER, POD)


_CHILD = """
from podsync import *
from podsync.spec import network_spec_hash
c = Container(
    name="web", image="nginx:1.25", command=("a", "b"), env=(EnvVar("X", "1"),),
    ports=(Port(80, 8080),), liveness_probe=Probe(Handler(exec_command=("true",))),
)
pod = Pod(name="web", containers=(c,))
print(spec_hash(c, pod), network_spec_hash(pod, "pause"))
"""


@pytest.mark.parametrize(
    "hash_seed",
    [
        # Two different str hash seeds: set and dict iteration orders differ between them.
        "1",
        "4242",
    ],
)
def test_deterministic_across_processes(hash_seed):
    """Another interpreter, with another PYTHONHASHSEED, computes the same hashes."""
    c = Container(
        name="web",
        image="nginx:1.25",
        command=("a", "b"),
        env=(EnvVar("X", "1"),),
        ports=(Port(80, 8080),),
        liveness_probe=Probe(Handler(exec_command=("true",))),
    )
    pod = Pod(name="web", containers=(c,))
    expected = f"{spec_hash(c, pod)} {network_spec_hash(pod, 'pause')}"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, check=True
    )

    assert expected == result.stdout.strip()


_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def _shuffled(value: Any, rnd: Any) -> Any:
    # The same value with every dict's insertion order shuffled (lists keep their order).
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        return {k: _shuffled(value[k], rnd) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


@given(value=_json_values, rnd=st.randoms(use_true_random=False))
def test_canonical_json_ignores_key_order(value, rnd):
    """Dicts with the same items in any insertion order give the same canonical text."""

    assert canonical_json(value) == canonical_json(_shuffled(value, rnd))


@given(value=_json_values)
def test_canonical_json_is_json(value):
    """The canonical text reads back as the value it was made from."""

    assert value == json.loads(canonical_json(value))


def test_canonical_json_keeps_list_order():
    """List order is meaningful and changes the text."""

    assert canonical_json([1, 2]) != canonical_json([2, 1])


BASE = Container(
    name="app",
    image="busybox:1.36",
    command=("sh",),
    args=("-c", "sleep 1000"),
    env=(EnvVar("A", "1"), EnvVar("B", "2")),
    ports=(Port(80, 8080),),
    volume_mounts=(VolumeMount("data", "/data"),),
)
BASE_POD = Pod(name="web", containers=(BASE,), volumes=(Volume("data", "/srv"),))


@pytest.mark.parametrize(
    "changed",
    [
        # Another name.
        attrs.evolve(BASE, name="app2"),
        # Another image, or just another tag.
        attrs.evolve(BASE, image="busybox:1.37"),
        # Another command.
        attrs.evolve(BASE, command=("bash",)),
        # Other arguments.
        attrs.evolve(BASE, args=("-c", "sleep 1")),
        # Arguments moved into the command (same argv, different entrypoint split).
        attrs.evolve(BASE, command=("sh", "-c"), args=("sleep 1000",)),
        # Another working directory.
        attrs.evolve(BASE, working_dir="/tmp"),
        # Another env value.
        attrs.evolve(BASE, env=(EnvVar("A", "1"), EnvVar("B", "3"))),
        # Env reordered: with repeated names the later one wins in Docker.
        attrs.evolve(BASE, env=(EnvVar("B", "2"), EnvVar("A", "1"))),
        # Another host port.
        attrs.evolve(BASE, ports=(Port(80, 8081),)),
        # Another protocol.
        attrs.evolve(BASE, ports=(Port(80, 8080, PortProtocol.UDP),)),
        # Another host IP.
        attrs.evolve(BASE, ports=(Port(80, 8080, host_ip="127.0.0.1"),)),
        # A mount made read-only.
        attrs.evolve(BASE, volume_mounts=(VolumeMount("data", "/data", True),)),
        # A mount moved.
        attrs.evolve(BASE, volume_mounts=(VolumeMount("data", "/data2"),)),
        # A CPU limit.
        attrs.evolve(BASE, cpu=250),
        # A memory limit.
        attrs.evolve(BASE, memory=2**20),
        # Privileged.
        attrs.evolve(BASE, privileged=True),
        # A termination-message path.
        attrs.evolve(BASE, termination_message_path="/dev/termination-log"),
    ],
)
def test_spec_hash_changes_with_what_runs(changed):
    """A change to anything the engine is given changes the hash."""

    assert spec_hash(BASE, BASE_POD) != spec_hash(changed, BASE_POD)


@pytest.mark.parametrize(
    "changed",
    [
        # A liveness probe added: podsync runs probes, the container does not change.
        attrs.evolve(BASE, liveness_probe=Probe(Handler(http_get=HTTPGetAction(port=80)))),
        # Readiness and startup probes, and any probe's timing: podsync runs them too.
        attrs.evolve(BASE, readiness_probe=Probe(Handler(exec_command=("ready",)))),
        attrs.evolve(
            BASE,
            startup_probe=Probe(
                Handler(exec_command=("up",)), failure_threshold=30, period_seconds=5
            ),
        ),
        attrs.evolve(
            BASE,
            liveness_probe=Probe(
                Handler(
                    http_get=HTTPGetAction(
                        port=80, scheme="HTTPS", http_headers=(HTTPHeader("X", "y"),)
                    )
                ),
                timeout_seconds=5,
                termination_grace_period_seconds=3,
            ),
        ),
        # A lifecycle hook added: podsync runs hooks too.
        attrs.evolve(BASE, lifecycle=Lifecycle(pre_stop=Handler(exec_command=("stop",)))),
        # Another pull policy: it decides pulling, not what runs.
        attrs.evolve(BASE, image_pull_policy=PullPolicy.ALWAYS),
        # A port renamed: names only serve probes and hooks.
        attrs.evolve(BASE, ports=(Port(80, 8080, name="http"),)),
    ],
)
def test_spec_hash_ignores_what_podsync_runs(changed):
    """Probes, hooks, the pull policy and port names do not change the hash (the seed's
    pointer hashing restarted such containers on every config copy)."""

    assert spec_hash(BASE, BASE_POD) == spec_hash(changed, BASE_POD)


@pytest.mark.parametrize(
    ("pod", "changes"),
    [
        # The pod name is the hostname.
        (attrs.evolve(BASE_POD, name="web2"), True),
        # The DNS policy decides the resolv settings.
        (attrs.evolve(BASE_POD, dns_policy=DNSPolicy.DEFAULT), True),
        # A mounted volume now points elsewhere.
        (attrs.evolve(BASE_POD, volumes=(Volume("data", "/other"),)), True),
        # A mounted volume turned into an emptyDir.
        (attrs.evolve(BASE_POD, volumes=(Volume("data"),)), True),
        # An unmounted volume added: not this container's business.
        (attrs.evolve(BASE_POD, volumes=(Volume("data", "/srv"), Volume("more"))), False),
        # The namespace, source and uid are in the container name, not in the hash.
        (attrs.evolve(BASE_POD, namespace="other", source="file", uid="x"), False),
    ],
)
def test_spec_hash_pod_inputs(pod, changes):
    """The pod's name, DNS policy and mounted volumes are part of a container's hash."""

    assert changes == (spec_hash(BASE, BASE_POD) != spec_hash(BASE, pod))


def test_spec_hash_without_pod_differs_from_with_pod():
    """The pod-less hash is a different canonical form, not the same one."""

    assert spec_hash(BASE) != spec_hash(BASE, BASE_POD)


def test_canonical_spec_spells_enums_as_values():
    """Enums appear as their string values, so the form is plain JSON."""
    spec = canonical_spec(attrs.evolve(BASE, ports=(Port(53, 53, PortProtocol.UDP),)), BASE_POD)
    expected = ("UDP", "ClusterFirst")

    assert expected == (spec["ports"][0]["protocol"], spec["pod"]["dns_policy"])


# Rich strategies cost ~10 ms an example; for these pure, deterministic functions a few
# dozen varied examples say as much as the default hundred.
_RICH = settings(max_examples=30)


@_RICH
@given(
    container=containers(extras=True),
    probe=st.one_of(st.none(), probes()),
    lifecycle=st.one_of(st.none(), lifecycles()),
    policy=st.sampled_from(PullPolicy),
)
def test_spec_hash_ignores_probes_hooks_and_pull_policy(container, probe, lifecycle, policy):
    """For any container, swapping probe, hooks and pull policy keeps the hash."""
    changed = attrs.evolve(
        container, liveness_probe=probe, lifecycle=lifecycle, image_pull_policy=policy
    )

    assert spec_hash(container) == spec_hash(changed)


@_RICH
@given(pod=pods(minimal=True))
def test_spec_hash_round_trips_and_fits_a_name(pod):
    """Every hash parses back from its text, and its name hash is a 32-bit number that
    container names accept."""
    for container in pod.containers:
        h = spec_hash(container, pod)
        container_name(container.name, h.name_hash, pod.full_name, pod.uid, 0)

        assert (h, True) == (SpecHash.parse(str(h)), 0 <= h.name_hash < 2**32)


def test_name_hash_is_the_first_32_bits():
    """name_hash reads the first 8 hex digits of the digest."""
    expected = 0xDEADBEEF

    assert expected == SpecHash(1, "deadbeef" + "0" * 56).name_hash


_DIGEST = "ab" * 32


@pytest.mark.parametrize(
    "text",
    [
        # Empty.
        "",
        # No digest.
        "1",
        "1:",
        # No version.
        f":{_DIGEST}",
        f"{_DIGEST}",
        # Version 0, a signed, padded or non-decimal version.
        f"0:{_DIGEST}",
        f"-1:{_DIGEST}",
        f"+1:{_DIGEST}",
        f"01:{_DIGEST}",
        f"v1:{_DIGEST}",
        f"a:{_DIGEST}",
        # A digest one digit short or long.
        f"1:{_DIGEST[:-1]}",
        f"1:{_DIGEST}0",
        # Upper-case or non-hex digest.
        f"1:{_DIGEST.upper()}",
        f"1:{'g' * 64}",
        # Surrounding whitespace or a trailing newline.
        f" 1:{_DIGEST}",
        f"1:{_DIGEST}\n",
        # Another separator.
        f"1-{_DIGEST}",
        # A seed-era hex name hash.
        "1234abcd",
        # Non-ASCII digits.
        f"\u0661:{_DIGEST}",
    ],
)
def test_spec_hash_parse_junk(text):
    """Anything but "<version>:<64 lowercase hex>" parses to None."""

    assert None is SpecHash.parse(text)


def test_spec_hash_parse_not_a_string():
    """A label value that is not a string at all parses to None rather than raising."""

    assert None is SpecHash.parse(cast(str, None))


@given(st.text())
def test_spec_hash_parse_never_raises(text):
    """Parsing any text gives None or a hash that prints as that text."""
    parsed = SpecHash.parse(text)

    assert parsed is None or text == str(parsed)


def test_spec_hash_parse_round_trip():
    """str() and parse() are inverses."""
    h = SpecHash(12, _DIGEST)

    assert h == SpecHash.parse(str(h))


NET_POD = Pod(
    name="web",
    containers=(
        Container(name="a", image="x", ports=(Port(80, 8080), Port(81))),
        Container(name="b", image="y", ports=(Port(53, 53, PortProtocol.UDP),)),
    ),
)


def test_network_spec_lists_all_ports_in_container_order():
    """The network container carries every port of every container, in order."""
    expected = [
        {"container_port": 80, "host_port": 8080, "protocol": "TCP", "host_ip": ""},
        {"container_port": 81, "host_port": 0, "protocol": "TCP", "host_ip": ""},
        {"container_port": 53, "host_port": 53, "protocol": "UDP", "host_ip": ""},
    ]

    assert expected == network_spec(NET_POD, PAUSE)["ports"]


def _with_ports(pod: Pod, index: int, ports: tuple[Port, ...]) -> Pod:
    changed = list(pod.containers)
    changed[index] = attrs.evolve(changed[index], ports=ports)
    return attrs.evolve(pod, containers=tuple(changed))


@pytest.mark.parametrize(
    ("pod", "image", "changes"),
    [
        # A host port of the second container changed.
        (_with_ports(NET_POD, 1, (Port(53, 5353, PortProtocol.UDP),)), PAUSE, True),
        # A port added to the first container.
        (_with_ports(NET_POD, 0, (Port(80, 8080), Port(81), Port(82))), PAUSE, True),
        # Another network image.
        (NET_POD, "registry.k8s.io/pause:3.9", True),
        # Another pod name (hostname).
        (attrs.evolve(NET_POD, name="web2"), PAUSE, True),
        # Another DNS policy.
        (attrs.evolve(NET_POD, dns_policy=DNSPolicy.DEFAULT), PAUSE, True),
        # An app container's image: the network container does not care.
        (
            attrs.evolve(
                NET_POD,
                containers=(
                    attrs.evolve(NET_POD.containers[0], image="z"),
                    *NET_POD.containers[1:],
                ),
            ),
            PAUSE,
            False,
        ),
        # A port renamed.
        (_with_ports(NET_POD, 0, (Port(80, 8080, name="http"), Port(81))), PAUSE, False),
    ],
)
def test_network_spec_hash_changes(pod, image, changes):
    """Any port of the pod, the image, the hostname and the DNS policy shape the network
    container; the app containers' other fields do not."""

    assert changes == (network_spec_hash(NET_POD, PAUSE) != network_spec_hash(pod, image))


@_RICH
@given(pod=pods(minimal=True), handler=handlers())
def test_network_spec_hash_ignores_hooks(pod, handler):
    """Hooks on app containers never touch the network container's hash."""
    hooked = attrs.evolve(
        pod,
        containers=tuple(
            attrs.evolve(c, lifecycle=Lifecycle(post_start=handler)) for c in pod.containers
        ),
    )

    assert network_spec_hash(pod, PAUSE) == network_spec_hash(hooked, PAUSE)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_canonical_json_refuses_numbers_json_cannot_spell(number):
    """NaN and the infinities have no JSON spelling: refused, never hashed as ``NaN``."""

    with pytest.raises(ValueError, match="JSON compliant"):
        canonical_json({"cpu": number})


# --- the option fields (spec hash version 2) -------------------------------------------

_root_dirs = st.sampled_from(["/var/lib/podsync", "/var/lib/podsync/", "/srv/podsync", "/r ü"])
_resolvs = st.builds(
    ResolvConf,
    st.lists(st.sampled_from(["192.0.2.53", "::1", "10.0.0.2"]), max_size=2).map(tuple),
    st.lists(st.sampled_from(["corp.example", "ü.example"]), max_size=2).map(tuple),
)


@_RICH
@given(pod=pods(extras=True), root_dir=_root_dirs)
def test_spec_hash_is_the_digest_of_canonical_spec(pod, root_dir):
    """The written-out hash text and the canonical form agree, root directory included."""
    for c in pod.containers:
        text = canonical_json(canonical_spec(c, pod, root_dir=root_dir))
        expected = hashlib.sha256(text.encode("utf-8")).hexdigest()

        assert SpecHash(SPEC_HASH_VERSION, expected) == spec_hash(c, pod, root_dir=root_dir)


@_RICH
@given(
    pod=pods(extras=True),
    mode=st.sampled_from(["", "none", "host"]),
    server=st.sampled_from(["", "10.0.0.10"]),
    domain=st.sampled_from(["", "cluster.local"]),
    host=st.none() | _resolvs,
)
def test_network_spec_hash_is_the_digest_of_network_spec(pod, mode, server, domain, host):
    """The written-out network hash text and the canonical form agree, options included."""
    kwargs = {
        "network_mode": mode,
        "cluster_dns": server,
        "cluster_domain": domain,
        "host_dns": host,
    }
    text = canonical_json(network_spec(pod, PAUSE, **kwargs))
    expected = hashlib.sha256(text.encode("utf-8")).hexdigest()

    assert SpecHash(SPEC_HASH_VERSION, expected) == network_spec_hash(pod, PAUSE, **kwargs)


def test_options_at_their_defaults_leave_the_version_1_form():
    """Default options add no field: the canonical forms stay version 1's, so containers
    made by the previous podsync compare equal."""
    host = ResolvConf(("192.0.2.53",), ("corp.example",))

    assert GOLDEN_CANONICAL == canonical_json(
        canonical_spec(CONTAINER, POD, root_dir="/var/lib/podsync/")
    )
    # Without cluster DNS, the host's resolv.conf does not reach the network container.
    assert network_spec(POD, PAUSE) == network_spec(POD, PAUSE, host_dns=host)


def test_root_dir_is_recorded_only_for_containers_that_bind_under_it():
    """The root directory shapes a container through its emptyDir and termination-message
    binds only."""
    pod = Pod(
        "web",
        (
            Container("empty", "x", volume_mounts=(VolumeMount("cache", "/c"),)),
            Container("host", "x", volume_mounts=(VolumeMount("data", "/d"),)),
            Container("log", "x", termination_message_path="/dev/termination-log"),
            Container("plain", "x"),
        ),
        volumes=(Volume("cache"), Volume("data", "/srv/data")),
    )

    recorded = {
        c.name: canonical_spec(c, pod, root_dir="/srv/podsync/").get("root_dir")
        for c in pod.containers
    }

    assert {"empty": "/srv/podsync", "host": None, "log": "/srv/podsync", "plain": None} == (
        recorded
    )


def test_network_options_are_recorded_as_they_shape_the_network_container():
    """Network mode always; the DNS settings only for a ClusterFirst pod with a cluster
    DNS server or domain, with the host's name servers and search domains."""
    host = ResolvConf(("192.0.2.53",), ("corp.example",))
    default_dns = attrs.evolve(POD, dns_policy=DNSPolicy.DEFAULT)

    spec = network_spec(POD, PAUSE, network_mode="none", cluster_dns="10.0.0.10", host_dns=host)
    ignored = network_spec(default_dns, PAUSE, cluster_dns="10.0.0.10", host_dns=host)

    assert "none" == spec["network_mode"]
    assert "10.0.0.10" == spec["cluster_dns"]
    assert "cluster_domain" not in spec
    assert {"nameservers": ["192.0.2.53"], "searches": ["corp.example"]} == spec["host_resolv_conf"]
    assert network_spec(default_dns, PAUSE) == ignored


# --- security settings -------------------------------------------------------------------


@_RICH
@given(pod=secured_pods(), root_dir=_root_dirs)
def test_spec_hash_is_the_digest_of_canonical_spec_with_security(pod, root_dir):
    """The fast hash text and the canonical form agree on security settings too."""
    for c in pod.containers:
        text = canonical_json(canonical_spec(c, pod, root_dir=root_dir))
        expected = hashlib.sha256(text.encode("utf-8")).hexdigest()

        assert SpecHash(SPEC_HASH_VERSION, expected) == spec_hash(c, pod, root_dir=root_dir)


@_RICH
@given(pod=secured_pods(), mode=st.sampled_from(["", "none"]), host=st.none() | _resolvs)
def test_network_spec_hash_is_the_digest_of_network_spec_with_security(pod, mode, host):
    kwargs = {"network_mode": mode, "cluster_dns": "10.0.0.10", "host_dns": host}
    text = canonical_json(network_spec(pod, PAUSE, **kwargs))
    expected = hashlib.sha256(text.encode("utf-8")).hexdigest()

    assert SpecHash(SPEC_HASH_VERSION, expected) == network_spec_hash(pod, PAUSE, **kwargs)


def test_security_settings_at_their_defaults_leave_the_form_unchanged():
    """Empty security contexts add no field: a container made by an older podsync keeps
    its hash (no restart on upgrade)."""
    container = attrs.evolve(CONTAINER, security_context=SecurityContext())
    pod = attrs.evolve(POD, containers=(container,), security_context=PodSecurityContext())

    assert GOLDEN_CANONICAL == canonical_json(canonical_spec(container, pod))
    assert GOLDEN_NETWORK_HASH == str(network_spec_hash(pod, PAUSE))


SECURED = [
    SecurityContext(run_as_user=1000),
    SecurityContext(run_as_group=1000),
    SecurityContext(run_as_non_root=True),
    SecurityContext(capabilities=Capabilities(add=("NET_ADMIN",))),
    SecurityContext(capabilities=Capabilities(drop=("ALL",))),
    SecurityContext(allow_privilege_escalation=False),
    SecurityContext(read_only_root_filesystem=True),
    SecurityContext(seccomp_profile=SecurityProfile(ProfileType.UNCONFINED)),
    SecurityContext(seccomp_profile=SecurityProfile(ProfileType.LOCALHOST, "a.json")),
    SecurityContext(app_armor_profile=SecurityProfile(ProfileType.RUNTIME_DEFAULT)),
]


@pytest.mark.parametrize("context", SECURED)
def test_each_container_security_setting_changes_the_hash(context):
    secured = attrs.evolve(BASE, security_context=context)

    assert spec_hash(BASE, BASE_POD) != spec_hash(secured, BASE_POD)


@pytest.mark.parametrize(
    "context",
    [
        PodSecurityContext(run_as_user=1000),
        PodSecurityContext(fs_group=2000),
        PodSecurityContext(supplemental_groups=(4000,)),
        PodSecurityContext(sysctls=(Sysctl("kernel.shm_rmid_forced", "1"),)),
        PodSecurityContext(host_pid=True),
        PodSecurityContext(host_ipc=True),
        PodSecurityContext(share_process_namespace=True),
        PodSecurityContext(seccomp_profile=SecurityProfile(ProfileType.RUNTIME_DEFAULT)),
    ],
)
def test_each_pod_security_setting_changes_the_app_hash(context):
    assert spec_hash(BASE, BASE_POD) != spec_hash(
        BASE, attrs.evolve(BASE_POD, security_context=context)
    )


@pytest.mark.parametrize(
    ("context", "changes"),
    [
        (PodSecurityContext(host_network=True), True),
        (PodSecurityContext(host_pid=True), True),
        (PodSecurityContext(host_ipc=True), True),
        (PodSecurityContext(sysctls=(Sysctl("net.ipv4.tcp_syncookies", "0"),)), True),
        # What the app containers get does not change the network container.
        (PodSecurityContext(sysctls=(Sysctl("kernel.shm_rmid_forced", "1"),)), False),
        (PodSecurityContext(run_as_user=1000, fs_group=1), False),
        (PodSecurityContext(share_process_namespace=True), False),
    ],
)
def test_pod_security_settings_that_shape_the_network_container(context, changes):
    pod = attrs.evolve(POD, security_context=context)

    assert changes == (network_spec_hash(POD, PAUSE) != network_spec_hash(pod, PAUSE))


def test_a_setting_moved_between_pod_and_container_keeps_the_hash():
    """The hash is of the effective settings: a runAsUser moved from the container to the
    pod is the same container."""
    on_container = attrs.evolve(BASE, security_context=SecurityContext(run_as_user=7))
    on_pod = attrs.evolve(BASE_POD, security_context=PodSecurityContext(run_as_user=7))

    assert spec_hash(on_container, BASE_POD) == spec_hash(BASE, on_pod)


def test_host_network_ignores_the_network_options():
    """The host's network gets neither the network mode nor the cluster DNS settings."""
    pod = attrs.evolve(POD, security_context=PodSecurityContext(host_network=True))

    assert network_spec(pod, PAUSE) == network_spec(
        pod, PAUSE, network_mode="none", cluster_dns="10.0.0.10", cluster_domain="cluster.local"
    )


def test_cluster_first_with_host_net_takes_the_cluster_dns_on_the_hosts_network():
    """On the host's network only ClusterFirstWithHostNet gets the cluster's DNS
    settings, so only its network spec changes with them."""
    pod = attrs.evolve(
        POD,
        dns_policy=DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET,
        security_context=PodSecurityContext(host_network=True),
    )
    cluster = {"cluster_dns": "10.0.0.10", "cluster_domain": "cluster.local"}

    assert network_spec(pod, PAUSE) != network_spec(pod, PAUSE, **cluster)
    assert network_spec(pod, PAUSE, **cluster) == network_spec(
        pod, PAUSE, network_mode="none", **cluster
    )


def test_a_host_network_pod_records_no_network_mode():
    """The network mode option does not reach a pod on the host's network, whatever its
    DNS policy: its network spec has no ``network_mode`` field at all."""
    for policy in (DNSPolicy.CLUSTER_FIRST, DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET):
        pod = attrs.evolve(
            POD, dns_policy=policy, security_context=PodSecurityContext(host_network=True)
        )
        for cluster in ({}, {"cluster_dns": "10.0.0.10"}):
            assert "network_mode" not in network_spec(pod, PAUSE, network_mode="none", **cluster)


def test_the_hosts_name_servers_alone_or_search_domains_alone_are_recorded():
    """A host resolv.conf is left out only when it has neither name servers nor search
    domains: either one alone follows the cluster's and shapes the container."""
    servers = ResolvConf(("192.0.2.53",), ())
    searches = ResolvConf((), ("corp.example",))

    assert {"nameservers": ["192.0.2.53"], "searches": []} == network_spec(
        POD, PAUSE, cluster_dns="10.0.0.10", host_dns=servers
    )["host_resolv_conf"]
    assert {"nameservers": [], "searches": ["corp.example"]} == network_spec(
        POD, PAUSE, cluster_dns="10.0.0.10", host_dns=searches
    )["host_resolv_conf"]
    assert "host_resolv_conf" not in network_spec(
        POD, PAUSE, cluster_dns="10.0.0.10", host_dns=ResolvConf((), ())
    )


def test_a_subdomain_pods_domain_name_is_recorded_with_or_without_cluster_dns():
    """hostname.subdomain.namespace.svc.<cluster domain>: the domain name shapes the
    network container whether the pod gets the cluster's DNS settings or not."""
    pod = attrs.evolve(POD, hostname="db-0", subdomain="db")
    default_dns = attrs.evolve(pod, dns_policy=DNSPolicy.DEFAULT)
    domain = f"db.{pod.namespace}.svc.cluster.local"

    assert domain == network_spec(pod, PAUSE, cluster_domain="cluster.local")["domainname"]
    assert domain == network_spec(default_dns, PAUSE, cluster_domain="cluster.local")["domainname"]


def test_root_and_false_are_settings():
    """runAsUser 0 and allowPrivilegeEscalation false are recorded (not taken for unset)."""
    root = attrs.evolve(BASE, security_context=SecurityContext(run_as_user=0))
    no_escalation = attrs.evolve(
        BASE, security_context=SecurityContext(allow_privilege_escalation=False)
    )

    assert 0 == canonical_spec(root, BASE_POD)["security"]["run_as_user"]
    assert {"allow_privilege_escalation": False} == canonical_spec(no_escalation)["security"]


# --- known hashes, pinned -----------------------------------------------------------
# Several containers and option sets, their hashes computed by podsync 0.x before the
# canonical text got its one definition (issue 16). Every container any podsync created
# must keep its hash byte for byte, or an upgrade restarts it: a change here is a
# SPEC_HASH_VERSION bump, never an edit of these strings.

_ESCAPES = Container(
    name="esc",
    image="busybox@sha256:" + "a" * 64,
    command=("sh", "-c", 'echo "quoted" \\ back\tslash\n\x01 \u2028 😀'),
    env=(EnvVar("EMPTY", ""), EnvVar("EMPTY", "again"), EnvVar("NL", "a\nb")),
    working_dir="/wörk",
    privileged=True,
)
_BARE = Container(name="bare", image="pause")
_MOUNTS = Container(
    name="mounts",
    image="x",
    ports=(Port(8080, 0, PortProtocol.TCP, "http", host_ip="127.0.0.1"),),
    volume_mounts=(VolumeMount("cache", "/c"), VolumeMount("data", "/d", True)),
    termination_message_path="/dev/termination-log",
    cpu=1,
    memory=1,
)
_POD2 = Pod(
    name="p2",
    containers=(_ESCAPES, _BARE, _MOUNTS),
    volumes=(Volume("data", '/srv/da"ta'), Volume("cache")),
    namespace="ns",
    dns_policy=DNSPolicy.DEFAULT,
)
_HOST = ResolvConf(("192.0.2.53", "::1"), ("corp.example", "ü.example"))
_APP_CASES = {
    "golden, pod": (CONTAINER, POD, "/var/lib/podsync"),
    "golden, no pod": (CONTAINER, None, "/var/lib/podsync"),
    "golden, root dir": (CONTAINER, POD, "/srv/podsync/"),
    "escapes": (_ESCAPES, _POD2, "/var/lib/podsync"),
    "escapes, no pod": (_ESCAPES, None, "/var/lib/podsync"),
    "bare": (_BARE, _POD2, "/srv/r ü"),
    "bare, no pod": (_BARE, None, "/var/lib/podsync"),
    "mounts": (_MOUNTS, _POD2, "/var/lib/podsync"),
    "mounts, root dir": (_MOUNTS, _POD2, "/srv/r ü"),
    "mounts, no pod, root": (_MOUNTS, None, "/srv/r ü"),
}
_NET_CASES = {
    "net golden": (POD, PAUSE, {}),
    "net mode": (POD, PAUSE, {"network_mode": "none"}),
    "net dns": (
        POD,
        PAUSE,
        {"cluster_dns": "10.0.0.10", "cluster_domain": "cluster.local", "host_dns": _HOST},
    ),
    "net dns domain only": (
        POD,
        PAUSE,
        {"cluster_domain": "cluster.local", "host_dns": ResolvConf((), ())},
    ),
    "net dns, Default policy": (
        _POD2,
        "registry.k8s.io/pause:3.9",
        {"network_mode": "host", "cluster_dns": "10.0.0.10", "host_dns": _HOST},
    ),
    "net no ports": (
        Pod(name="solo", containers=(_BARE,)),
        PAUSE,
        {"network_mode": "bridge", "cluster_dns": "10.0.0.10"},
    ),
}

_KNOWN_APP_HASHES = {
    "golden, pod": "3:359df9ce6d569219b47ba058c4b822904805466bd8997027e6f4c9e57d269a15",
    "golden, no pod": "3:94cd1191d097b0f21297d946c61e38fa3f2aba6726002e8365af24492ec0142b",
    "golden, root dir": "3:2d767be9e682cca57f815a5f407bcf97d61a77a84a502cc7d9e719a8788ca237",
    "escapes": "3:6d4656897407f13ed7ee00b79e2954ec3edac2603bfd3cf93ed0f69dd059586f",
    "escapes, no pod": "3:e8e38dc512c435bca79e367060dadccd612ed1e63decb53a4aafb492f81ede67",
    "bare": "3:07c0fbfb66dc28bfb006aa1027c0f56ac46e1461ee7d67bc1cc8d9d058351f3a",
    "bare, no pod": "3:56a49a27a2a4bc665ce988c7e4f47393f0f3e3dfc95b50d59f1c43a06d23bd95",
    "mounts": "3:2964fe92c241ba9317bf4a775521a31e97c6267f1f66e52dc6e6591ebaa79505",
    "mounts, root dir": "3:2d7b671ee66fe41dd959e6de6a3de8692aa88979e14de6cfd82edae9248d429e",
    "mounts, no pod, root": "3:c94ca891fb9e096676285efdbd29be23a9d49ab3048e7ecc3403e8d4d7edd6ca",
}
_KNOWN_NETWORK_HASHES = {
    "net golden": "3:5779ccc4bea1a40e13e98ce3d58f03b8fe93b56a7474ebb95ca10af44e1bfe11",
    "net mode": "3:284efc61407f6ddad1dc979c7dfaa0c6134a65f017347460556dad4ddc9a7393",
    "net dns": "3:2fe7f88ff243bed10a1bc7f68ac5750e031b55e98e9baa0fd4578bcd3e111973",
    "net dns domain only": "3:861c78b7fc2cb99ff7edd0a2ce7f2441dc38008b02fedf275e87511793f6585f",
    "net dns, Default policy": "3:272b55b451050a02e40fabd3c7961dfcf9d1c0102132a624a25bdc1456d6cd24",
    "net no ports": "3:b1292b6eebb121aa7f371bc7dbcfc96939d97dfc58f2a59f0e7da9206031573b",
}


@pytest.mark.parametrize("case", sorted(_APP_CASES))
def test_known_app_container_hashes(case):
    """Known containers, with and without their pod and root directory, keep their hash."""
    container, pod, root_dir = _APP_CASES[case]
    expected = _KNOWN_APP_HASHES[case]

    assert expected == str(spec_hash(container, pod, root_dir=root_dir))


@pytest.mark.parametrize("case", sorted(_NET_CASES))
def test_known_network_container_hashes(case):
    """Known network containers, with each option that shapes them, keep their hash."""
    pod, image, kwargs = _NET_CASES[case]
    expected = _KNOWN_NETWORK_HASHES[case]

    assert expected == str(network_spec_hash(pod, image, **kwargs))


def test_added_fields_are_left_out_at_their_default():
    """Every field a version after the first added is written only when it is not at
    its default, so a container an older podsync made keeps its hash (the one
    definition of each form is its record: ``_APP`` and ``_NETWORK``; the fields
    version 3 took out are in version 2's ``_APP_POD_V2`` only)."""
    from podsync.spec._canonical_forms import _ALWAYS
    from podsync.spec._hashing import (
        _ADDED_FIELDS,
        _APP,
        _APP_POD,
        _APP_POD_V2,
        _NETWORK,
        _NETWORK_POD,
        _REMOVED_POD_FIELDS,
    )

    records = (_APP, _APP_POD, _APP_POD_V2, _NETWORK, _NETWORK_POD)
    fields = {f.key: f for record in records for f in record.fields if f.default is not _ALWAYS}
    added = sorted(key for keys in _ADDED_FIELDS.values() for key in keys)
    removed = {key for keys in _REMOVED_POD_FIELDS.values() for key in keys}
    current = {f.key for record in (_APP_POD, _NETWORK_POD) for f in record.fields}

    assert [] == [key for key in added if key not in fields]
    assert (removed, set()) == (removed & {f.key for f in _APP_POD_V2.fields}, removed & current)


def test_canonical_text_is_canonical_json():
    """The written-out texts are exactly what canonical_json spells for the same data:
    sorted keys, no whitespace, UTF-8 kept."""
    from podsync.spec._hashing import canonical_spec_text, network_spec_text

    texts = [canonical_spec_text(c, p, root_dir=r) for c, p, r in _APP_CASES.values()]
    texts += [network_spec_text(pod, image, **kw) for pod, image, kw in _NET_CASES.values()]

    assert texts == [canonical_json(json.loads(t)) for t in texts]


def test_init_containers_in_the_canonical_forms():
    """An init container's role is part of its spec (the fast text agrees with the
    definition); the network container records the init containers that run to
    completion, by name and hash; pods without init containers hash as before."""
    from podsync import RestartPolicy
    from podsync.spec._hashing import canonical_spec_text, network_spec

    app = Container("app", "busybox", tty=True)
    setup = Container("setup", "busybox", command=("sh",))
    proxy = Container("proxy", "busybox", restart_policy=RestartPolicy.ALWAYS, stdin=True)
    plain = Pod("web", (app,))
    pod = attrs.evolve(plain, init_containers=(setup, proxy))

    for c in (app, setup, proxy):
        assert canonical_json(canonical_spec(c, pod, root_dir="/srv")) == canonical_spec_text(
            c, pod, root_dir="/srv"
        )
    assert {"init_container": True} == {
        k: v for k, v in canonical_spec(setup, pod).items() if k.startswith("init")
    }
    assert "Always" == canonical_spec(proxy, pod)["restart_policy"]
    assert spec_hash(app, pod) == spec_hash(app, plain)
    assert spec_hash(setup, pod) != spec_hash(setup, Pod("web", (setup,)))
    assert [{"name": "setup", "spec_hash": spec_hash(setup, pod).digest}] == network_spec(
        pod, "pause"
    )["init_containers"]
    assert "init_containers" not in network_spec(plain, "pause")


def test_network_spec_texts_defaults_are_the_options_defaults():
    """``network_spec_text`` without options is the text of every option at its default
    (the planner passes them all; a library caller may pass none)."""
    from podsync.spec._hashing import network_spec_text

    pod = attrs.evolve(POD, hostname="db-0", subdomain="db")

    assert network_spec_text(pod, PAUSE) == network_spec_text(
        pod, PAUSE, network_mode="", cluster_dns="", cluster_domain="", host_dns=None
    )
    assert canonical_json(network_spec(pod, PAUSE)) == network_spec_text(pod, PAUSE)


def test_the_root_directory_reaches_the_init_containers_record_with_cluster_dns():
    """With the cluster's DNS settings too, the network spec records its init containers'
    hashes as they depend on the root directory (a termination-message file is bound
    from under it)."""
    setup = Container("setup", "busybox", termination_message_path="/dev/termination-log")
    pod = attrs.evolve(POD, init_containers=(setup,))
    cluster = {"cluster_dns": "10.0.0.10"}

    assert network_spec(pod, PAUSE, root_dir="/srv/podsync", **cluster) != network_spec(
        pod, PAUSE, **cluster
    )
