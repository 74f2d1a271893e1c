"""Host-port conflicts between pods: the seed's TestCheckHostPortConflicts and its leak,
fixed (reference §2.2, §4.1 #20)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from podsync import (
    Container,
    Pod,
    Port,
    PortProtocol,
    Reason,
    Rejection,
    filter_host_port_conflicts,
)


def _pod(name: str, *host_ports: int, protocol: PortProtocol = PortProtocol.TCP) -> Pod:
    # One container per host port, as the seed's test built them.
    containers = tuple(
        Container(name=f"c{i}", image="busybox", ports=(Port(80, hp, protocol),))
        for i, hp in enumerate(host_ports)
    )
    return Pod(name=name, containers=containers)


def test_check_host_port_conflicts_no_conflict():
    """TestCheckHostPortConflicts: pods on 80, 81, 82 and 83 all run."""
    given_pods = [_pod("p0", 80), _pod("p1", 81), _pod("p2", 82), _pod("p3", 83)]

    assert (tuple(given_pods), ()) == filter_host_port_conflicts(given_pods)


def test_check_host_port_conflicts_last_dropped():
    """TestCheckHostPortConflicts: the fourth pod reuses 81 and is dropped, first come
    first served."""
    given_pods = [_pod("p0", 80), _pod("p1", 81), _pod("p2", 82), _pod("p3", 81)]
    expected_rejected = (
        Rejection(
            given_pods[3].key,
            given_pods[3].uid,
            Reason.HOST_PORT_CONFLICT,
            "host port 81/TCP is already used by pod default/p1",
        ),
    )

    assert (tuple(given_pods[:3]), expected_rejected) == filter_host_port_conflicts(given_pods)


def test_rejected_pod_reserves_nothing():
    """B=[81, 80] after A=[80] is rejected, and C=[81] still runs (the seed leaked 81)."""
    a, b, c = _pod("a", 80), _pod("b", 81, 80), _pod("c", 81)
    accepted, rejected = filter_host_port_conflicts([a, b, c])

    assert ((a, c), (b.uid,)) == (accepted, tuple(r.uid for r in rejected))


def test_tcp_and_udp_do_not_conflict():
    """80/TCP and 80/UDP are different sockets."""
    tcp, udp = _pod("tcp", 80), _pod("udp", 80, protocol=PortProtocol.UDP)

    assert ((tcp, udp), ()) == filter_host_port_conflicts([tcp, udp])


def test_same_protocol_conflicts_on_udp():
    """Two pods on 53/UDP conflict."""
    first, second = (
        _pod("a", 53, protocol=PortProtocol.UDP),
        _pod("b", 53, protocol=PortProtocol.UDP),
    )
    accepted, rejected = filter_host_port_conflicts([first, second])

    assert ((first,), ["host port 53/UDP is already used by pod default/a"]) == (
        accepted,
        [r.message for r in rejected],
    )


def test_duplicate_within_a_pod_is_rejected_and_reserves_nothing():
    """A pod publishing 80/TCP twice is rejected, and a later pod may take 80."""
    twice, later = _pod("twice", 80, 80), _pod("later", 80)
    expected_rejected = (
        Rejection(
            twice.key,
            twice.uid,
            Reason.HOST_PORT_CONFLICT,
            "host port 80/TCP is used twice in the pod",
        ),
    )

    assert ((later,), expected_rejected) == filter_host_port_conflicts([twice, later])


@pytest.mark.parametrize(
    ("first_ip", "second_ip", "conflict"),
    [
        # All addresses, then loopback: Docker refuses the overlap.
        ("", "127.0.0.1", True),
        # Loopback, then 0.0.0.0.
        ("127.0.0.1", "0.0.0.0", True),
        # One address twice.
        ("10.0.0.1", "10.0.0.1", True),
        # Two specific addresses: Docker binds both (HostPortInfo.CheckConflict agrees).
        ("10.0.0.1", "10.0.0.2", False),
    ],
)
def test_host_addresses_conflict_when_they_overlap(first_ip, second_ip, conflict):
    """A host port and protocol conflict on the same address, or when either is every
    address."""
    first = Pod(
        name="a", containers=(Container("c", "x", ports=(Port(80, 80, host_ip=first_ip),)),)
    )
    second = Pod(
        name="b", containers=(Container("c", "x", ports=(Port(80, 80, host_ip=second_ip),)),)
    )
    accepted, rejected = filter_host_port_conflicts([first, second])

    assert conflict == (accepted == (first,))
    assert [conflict] * len(rejected) == [r.reason is Reason.HOST_PORT_CONFLICT for r in rejected]


def test_running_pod_keeps_its_port_against_an_earlier_newcomer():
    """A pod that runs with 80 keeps it; the new pod listed before it is the one
    rejected (input order used to decide, so the running pod lost)."""
    newcomer, web = _pod("newcomer", 80), _pod("web", 80)
    web = attrs.evolve(web, uid="web-uid")

    accepted, rejected = filter_host_port_conflicts(
        [newcomer, web], running={"web-uid": [Port(80, 80)]}
    )

    assert ((web,), [(newcomer.uid, "host port 80/TCP is already used by pod default/web")]) == (
        accepted,
        [(r.uid, r.message) for r in rejected],
    )


def test_running_pod_reserves_the_ports_it_still_publishes():
    """A running pod moving from 80 to 81 holds 80 until it is rebuilt: a newcomer
    asking for 80 waits for the next sync."""
    web = attrs.evolve(_pod("web", 81), uid="web-uid")
    newcomer = _pod("newcomer", 80)

    accepted, rejected = filter_host_port_conflicts(
        [newcomer, web], running={"web-uid": [Port(80, 80)]}
    )

    assert ((web,), ["host port 80/TCP is already used by pod default/web"]) == (
        accepted,
        [r.message for r in rejected],
    )


def test_ports_held_elsewhere_are_taken():
    """Ports that running containers of other pods publish (pods that are not desired,
    or were not admitted) block every pod; on another address they do not."""
    wants_any, wants_other = (
        _pod("any", 8080),
        Pod(
            name="other",
            containers=(Container("c", "x", ports=(Port(80, 8080, host_ip="127.0.0.2"),)),),
        ),
    )

    accepted, rejected = filter_host_port_conflicts(
        [wants_any, wants_other],
        held_elsewhere=[("default/old", Port(80, 8080, host_ip="127.0.0.1"))],
    )

    assert ((wants_other,), ["host port 8080/TCP is held by running pod default/old"]) == (
        accepted,
        [r.message for r in rejected],
    )


def test_rejected_running_pod_still_holds_what_it_publishes():
    """Two running pods that both claim 80 (with no bridge, nothing is published, so
    both could start): the first keeps it, the second is rejected, and a newcomer gets
    neither 80 nor the port the rejected pod still publishes."""
    first = attrs.evolve(_pod("first", 80), uid="u1")
    second = attrs.evolve(_pod("second", 80, 81), uid="u2")
    newcomer = _pod("newcomer", 81)

    accepted, rejected = filter_host_port_conflicts(
        [newcomer, first, second],
        running={"u1": [Port(80, 80)], "u2": [Port(80, 80), Port(81, 81)]},
    )

    assert (
        (first,),
        [
            "host port 81/TCP is held by running pod default/second",
            "host port 80/TCP is already used by pod default/first",
        ],
    ) == (accepted, [r.message for r in rejected])


def test_unpublished_ports_never_conflict():
    """Host port 0 is not published, so any number of pods may use it."""
    given_pods = [_pod("a", 0), _pod("b", 0), _pod("c", 0, 0)]

    assert (tuple(given_pods), ()) == filter_host_port_conflicts(given_pods)


def test_no_pods():
    """No pods in, nothing out."""
    expected: tuple[tuple[Pod, ...], tuple[Rejection, ...]] = ((), ())

    assert expected == filter_host_port_conflicts([])


def _keys(pod: Pod) -> list[tuple[int, PortProtocol]]:
    return [(p.host_port, p.protocol) for c in pod.containers for p in c.ports if p.host_port != 0]


# Pods reduced to what the filter looks at: per container, a few (host port, protocol)
# pairs from a tiny range, so clashes - between pods and inside one pod - are common.
# (tests.support.strategies.pods() never repeats a host port inside a pod, and is much slower.)
_port_grid = st.lists(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=5), st.sampled_from(PortProtocol)),
        max_size=3,
    ),
    min_size=1,
    max_size=2,
)


def _grid_pod(index: int, grid: list[list[tuple[int, PortProtocol]]]) -> Pod:
    containers = tuple(
        Container(
            name=f"c{i}",
            image="busybox",
            ports=tuple(Port(1000 + j, hp, proto) for j, (hp, proto) in enumerate(pairs)),
        )
        for i, pairs in enumerate(grid)
    )
    return Pod(name=f"p{index}", containers=containers)


@given(st.lists(_port_grid, max_size=6))
def test_filter_properties(grids):
    """Accepted pods never share a host port and protocol; accepted and rejected split the
    input in order; every rejection clashes with an earlier accepted pod or itself."""
    given_pods = [_grid_pod(i, grid) for i, grid in enumerate(grids)]
    accepted, rejected = filter_host_port_conflicts(given_pods)
    accepted_keys = [k for pod in accepted for k in _keys(pod)]
    # Merge the two outputs back by identity, in order: this must give the input.
    by_uid = {pod.uid: pod for pod in given_pods}
    merged, a, r = [], list(accepted), [by_uid[x.uid] for x in rejected]
    for pod in given_pods:
        if a and a[0] is pod:
            merged.append(a.pop(0))
        elif r and r[0] is pod:
            merged.append(r.pop(0))
    earlier_ok: set[tuple[int, PortProtocol]] = set()
    justified = []
    for pod in given_pods:
        keys = _keys(pod)
        if any(pod is p for p in accepted):
            earlier_ok.update(keys)
        else:
            justified.append(bool(earlier_ok & set(keys)) or len(set(keys)) < len(keys))

    assert (len(accepted_keys), given_pods, [True] * len(rejected)) == (
        len(set(accepted_keys)),
        merged,
        justified,
    )


def test_host_port_1_is_a_port_like_any_other():
    """Port 1, the lowest a pod can publish, is reserved like any other: by an admitted
    pod, by running containers of pods outside the set, and by a rejected pod that
    still runs. (Only port 0 is "not published".)"""
    first, second = _pod("first", 1), _pod("second", 1)
    running_loser = attrs.evolve(_pod("loser", 80, 1), uid="u2")
    running_winner = attrs.evolve(_pod("winner", 80), uid="u1")
    newcomer = _pod("newcomer", 1)

    by_admitted = filter_host_port_conflicts([first, second])
    by_elsewhere = filter_host_port_conflicts(
        [newcomer], held_elsewhere=[("default/old", Port(80, 1))]
    )
    by_rejected_runner = filter_host_port_conflicts(
        [newcomer, running_winner, running_loser],
        running={"u1": [Port(80, 80)], "u2": [Port(80, 80), Port(80, 1)]},
    )

    assert ["host port 1/TCP is already used by pod default/first"] == [
        r.message for r in by_admitted[1]
    ]
    assert ["host port 1/TCP is held by running pod default/old"] == [
        r.message for r in by_elsewhere[1]
    ]
    assert (running_winner,) == by_rejected_runner[0]
    assert (
        "host port 1/TCP is held by running pod default/loser" == by_rejected_runner[1][0].message
    )


def test_conflict_on_one_address_names_the_address():
    """A rejection for a port bound to one host address says which address."""
    first, second = (
        Pod(name=n, containers=(Container("c", "x", ports=(Port(80, 8080, host_ip=ip),)),))
        for n, ip in (("a", "127.0.0.1"), ("b", "127.0.0.1"))
    )

    _, rejected = filter_host_port_conflicts([first, second])

    assert ["host port 127.0.0.1:8080/TCP is already used by pod default/a"] == [
        r.message for r in rejected
    ]


def test_running_pod_that_publishes_a_port_keeps_it_against_a_running_pod_that_does_not():
    """Two running pods ask for 80: ``web`` publishes it, ``job`` (listed first, running
    without its network container - a 2014 kubelet's container, say) does not. The port
    stays ``web``'s: giving it to ``job`` would make ``job``'s new network container
    fail to start for as long as ``web`` keeps running (found by the convergence
    property, tests/support/convergence_examples.py ``running_pods_clash_on_a_port``)."""
    job = attrs.evolve(_pod("job", 80), uid="job-uid")
    web = attrs.evolve(_pod("web", 80), uid="web-uid")

    accepted, rejected = filter_host_port_conflicts(
        [job, web], running={"job-uid": [], "web-uid": [Port(80, 80)]}
    )

    assert ((web,), ["host port 80/TCP is held by running pod default/web"]) == (
        accepted,
        [r.message for r in rejected],
    )


def _pod_on(name: str, host_ip: str, host_port: int) -> Pod:
    """A pod of one container asking for ``host_ip:host_port`` (TCP)."""
    return Pod(
        name=name,
        uid=f"{name}-uid",
        containers=(
            Container(name="c", image="busybox", ports=(Port(8080, host_port, host_ip=host_ip),)),
        ),
    )


@pytest.mark.parametrize(
    ("published", "asked", "clash"),
    [
        ("127.0.0.1", "127.0.0.1", True),  # the same address
        ("0.0.0.0", "127.0.0.1", True),  # every address against one
        ("127.0.0.1", "", True),  # one against every address
        ("127.0.0.1", "127.0.0.2", False),  # two addresses: both can bind
    ],
)
def test_a_running_pods_published_port_is_kept_by_address(published, asked, clash):
    """What a running pod publishes stays its own against a running pod listed first that
    asks for an overlapping address - and only an overlapping one (the kubelet's
    ``HostPortInfo.CheckConflict``)."""
    job = _pod_on("job", asked, 80)
    web = _pod_on("web", published, 80)

    accepted, rejected = filter_host_port_conflicts(
        [job, web],
        running={"job-uid": [], "web-uid": [Port(8080, 80, host_ip=published)]},
    )

    assert accepted == ((web,) if clash else (job, web))
    assert [r.uid for r in rejected] == (["job-uid"] if clash else [])


def test_a_running_pods_published_host_port_1_is_kept():
    """Port 1 is a host port like any other (0 alone means "not published")."""
    job = _pod_on("job", "", 1)
    web = _pod_on("web", "", 1)

    accepted, rejected = filter_host_port_conflicts(
        [job, web], running={"job-uid": [], "web-uid": [Port(8080, 1)]}
    )

    assert ((web,), ["job-uid"]) == (accepted, [r.uid for r in rejected])


@pytest.mark.parametrize("port", [80, 1])
def test_what_a_rejected_running_pod_publishes_stays_taken_in_input_order(port):
    """With no bridge, two running pods can both record host port 80. ``b`` is rejected
    (port 81 is ``a``'s) but keeps running with 80 recorded, so 80 stays taken: ``c``,
    later in the input and recording 80 too, is rejected - input order decides between
    pods that both record a port, as for pods that are not rejected."""
    a = attrs.evolve(_pod("a", 81), uid="a-uid")
    b = attrs.evolve(_pod("b", 81, port), uid="b-uid")
    c = attrs.evolve(_pod("c", port), uid="c-uid")

    accepted, rejected = filter_host_port_conflicts(
        [a, b, c],
        running={"a-uid": [Port(80, 81)], "b-uid": [Port(80, port)], "c-uid": [Port(80, port)]},
    )

    assert ((a,), ["b-uid", "c-uid"]) == (accepted, [r.uid for r in rejected])
    assert rejected[1].message == f"host port {port}/TCP is held by running pod default/b"
