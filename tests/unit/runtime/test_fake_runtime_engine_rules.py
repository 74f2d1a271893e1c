"""FakeRuntime's reading of image references and its host-port bindings: the engine
rules that podsync's image normalization and host-port admission are checked against.

The fake reads references by its own implementation of Docker's reference grammar (not
podsync's ``normalize_image``), so a mistake in the planner cannot hide in the fake; both
are checked against one table (``tests/support/image_references.py``), and that table against
the real engine (``tests/engine/test_images.py``).
"""

from __future__ import annotations

import pytest

from podsync import ObservedContainer, Port, PortProtocol, RuntimeCallError
from podsync.actions._actions import CreateSpec
from podsync.runtime import PortMapping
from podsync.spec._ports import port_mappings
from podsync.testing import FakeRuntime
from tests.support.image_references import DIGEST, DIGEST_SPELLINGS, INVALID, LISTED, NEWER_GRAMMAR


@pytest.mark.parametrize(("image", "listed"), LISTED + NEWER_GRAMMAR)
def test_added_image_is_listed_as_docker_lists_it(image, listed):
    """An image added under any spelling lists as the engine lists it, and every
    spelling of it finds it."""
    rt = FakeRuntime(images=[image])

    assert [(listed,)] == [i.tags for i in rt.list_images()]
    rt.create_container(CreateSpec(name="app", image=listed))
    rt.create_container(CreateSpec(name="box", image=image))


@pytest.mark.parametrize(("image", "listed"), DIGEST_SPELLINGS)
def test_pulled_digest_is_listed_as_a_repo_digest(image, listed):
    """A pull by digest gives an image with that repo digest and no tag (the tag of
    ``name:tag@digest`` is ignored, as the engine does)."""
    rt = FakeRuntime()

    rt.pull_image(image)

    assert [((), (listed,))] == [(i.tags, i.digests) for i in rt.list_images()]
    rt.create_container(CreateSpec(name="app", image=image))


def test_spellings_of_one_image_are_one_image():
    """``busybox``, ``library/busybox`` and ``docker.io/library/busybox:latest`` are one
    image: pulling all three leaves one."""
    rt = FakeRuntime()

    for image in ("busybox", "library/busybox", "docker.io/library/busybox:latest"):
        rt.pull_image(image)

    assert [("busybox:latest",)] == [i.tags for i in rt.list_images()]


@pytest.mark.parametrize(("image", "why"), INVALID)
def test_invalid_references_are_refused(image, why):
    """The engine refuses a malformed reference at pull and at create."""
    rt = FakeRuntime(images=["busybox"])

    with pytest.raises(RuntimeCallError, match="invalid reference format"):
        rt.pull_image(image)
    with pytest.raises(RuntimeCallError, match="invalid reference format"):
        rt.create_container(CreateSpec(name="app", image=image))
    with pytest.raises(ValueError, match="invalid reference format"):
        FakeRuntime(images=[image])


def test_lowercase_is_named():
    """Docker's own words for an upper-case repository."""
    rt = FakeRuntime()

    with pytest.raises(RuntimeCallError, match="repository name must be lowercase"):
        rt.pull_image("team/App")


def test_digest_does_not_find_the_tag():
    """A tag does not answer for a digest the engine has never seen."""
    rt = FakeRuntime(images=["busybox"])

    with pytest.raises(RuntimeCallError, match="No such image"):
        rt.create_container(CreateSpec(name="app", image=f"busybox@{DIGEST}"))


# --- host ports ------------------------------------------------------------------------


def _net(rt: FakeRuntime, name: str, *ports: Port, network: str = "") -> str:
    return rt.create_container(
        CreateSpec(name=name, image="pause", network=network, ports=tuple(port_mappings(ports)))
    )


def test_start_fails_when_the_host_port_is_allocated():
    """As Docker: the second container that publishes 8080/tcp fails to start, with the
    engine's message, and stays created; the first runs on."""
    rt = FakeRuntime(images=["pause"])
    first = _net(rt, "first", Port(80, 8080))
    second = _net(rt, "second", Port(80, 8080))
    rt.start_container(first)

    with pytest.raises(RuntimeCallError) as info:
        rt.start_container(second)

    assert (
        "driver failed programming external connectivity on endpoint second (c0002): "
        "Bind for 0.0.0.0:8080 failed: port is already allocated"
    ) == info.value.message
    assert [("second", False), ("first", True)] == [(c.name, c.running) for c in rt.containers]


@pytest.mark.parametrize(
    ("held", "wanted", "conflict"),
    [
        # All addresses against one address, either way round.
        (Port(80, 8080), Port(80, 8080, host_ip="127.0.0.1"), True),
        (Port(80, 8080, host_ip="127.0.0.1"), Port(80, 8080, host_ip="0.0.0.0"), True),
        (Port(80, 8080, host_ip="127.0.0.1"), Port(80, 8080), True),
        # Two specific addresses.
        (Port(80, 8080, host_ip="127.0.0.1"), Port(80, 8080, host_ip="127.0.0.2"), False),
        (Port(80, 8080, host_ip="127.0.0.1"), Port(81, 8080, host_ip="127.0.0.1"), True),
        # Another protocol, another port.
        (Port(80, 8080), Port(80, 8080, protocol=PortProtocol.UDP), False),
        (Port(80, 8080), Port(80, 8081), False),
    ],
)
def test_host_port_conflicts_follow_docker(held, wanted, conflict):
    """Docker 20.10 on a bridge network: same port and protocol on overlapping
    addresses (0.0.0.0 overlaps every address) cannot be bound twice."""
    rt = FakeRuntime(images=["pause"])
    rt.start_container(_net(rt, "first", held))
    second = _net(rt, "second", wanted)

    if conflict:
        with pytest.raises(RuntimeCallError, match="already"):
            rt.start_container(second)
    else:
        rt.start_container(second)


def test_address_in_use_message_for_overlapping_addresses():
    """0.0.0.0 against a specific address passes Docker's port allocator and fails in
    the userland proxy's bind."""
    rt = FakeRuntime(images=["pause"])
    rt.start_container(_net(rt, "first", Port(80, 8080, host_ip="127.0.0.1")))
    second = _net(rt, "second", Port(80, 8080))

    with pytest.raises(RuntimeCallError) as info:
        rt.start_container(second)

    assert info.value.message.endswith(
        "Error starting userland proxy: listen tcp4 0.0.0.0:8080: bind: address already in use"
    )


def test_stopped_containers_release_their_ports():
    """A stopped container holds nothing: the port can be bound again."""
    rt = FakeRuntime(images=["pause"])
    first = _net(rt, "first", Port(80, 8080))
    rt.start_container(first)
    rt.stop_container(first, 10)

    rt.start_container(_net(rt, "second", Port(80, 8080)))


@pytest.mark.parametrize("network", ["none", "host"])
def test_modes_without_a_bridge_publish_nothing(network):
    """Network modes ``none`` and ``host`` publish no ports (Docker accepts and ignores
    the bindings), so they never conflict."""
    rt = FakeRuntime(images=["pause"])
    rt.start_container(_net(rt, "first", Port(80, 8080), network=network))

    rt.start_container(_net(rt, "second", Port(80, 8080), network=network))


def test_engine_without_a_bridge_publishes_nothing():
    """``dockerd --bridge=none`` (what CI runs): the default network mode publishes
    nothing either."""
    rt = FakeRuntime(images=["pause"], bridge=False)
    rt.start_container(_net(rt, "first", Port(80, 8080)))

    rt.start_container(_net(rt, "second", Port(80, 8080)))


def test_added_container_holds_its_bindings():
    """A running container put on the engine with ``add_container`` can hold ports."""
    rt = FakeRuntime(images=["pause"])
    rt.add_container(
        ObservedContainer(id="old", name="old", running=True),
        ports=[PortMapping(80, 8080)],
    )

    with pytest.raises(RuntimeCallError, match="port is already allocated"):
        rt.start_container(_net(rt, "new", Port(80, 8080)))
