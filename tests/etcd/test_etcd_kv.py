"""The client's calls beyond one key, against a real etcd (the ``etcd`` fixture):
prefix ranges, many-write transactions, and leases whose keys etcd deletes at expiry."""

from __future__ import annotations

import time

import pytest

from podsync.etcd._client import EtcdClient
from podsync.etcd._kv import MAX_TXN_OPS, Delete, Put, Range, prefix_end
from podsync.etcd._urls import parse_etcd_url
from tests.support.etcd_server import EtcdServer


def _client(etcd: EtcdServer) -> EtcdClient:
    return EtcdClient(parse_etcd_url(etcd.url("/registry/hosts/")))


def test_a_prefix_range_gives_every_key_under_it_and_nothing_beside(etcd: EtcdServer) -> None:
    for key in ("/registry/hosts/a/x", "/registry/hosts/a/y", "/registry/hosts/b/x"):
        etcd.put(key, key.upper())
    etcd.put("/registry/hosts/a", "the prefix itself, without its slash")
    client = _client(etcd)

    found, revision = client.range_prefix("/registry/hosts/a/")
    keys_only, _ = client.range_prefix("/registry/hosts/", keys_only=True)

    assert ["/registry/hosts/a/x", "/registry/hosts/a/y"] == [kv.key for kv in found]
    assert [b"/REGISTRY/HOSTS/A/X", b"/REGISTRY/HOSTS/A/Y"] == [kv.value for kv in found]
    assert revision == etcd.revision()
    assert {b""} == {kv.value for kv in keys_only}
    assert 4 == len(keys_only)


def test_a_transaction_writes_and_deletes_at_one_revision(etcd: EtcdServer) -> None:
    etcd.put("/registry/hosts/a/pods/default/old", "old")
    etcd.put("/registry/hosts/a/events/1", "e1")
    etcd.put("/registry/hosts/a/events/2", "e2")
    client = _client(etcd)
    before = etcd.revision()

    revision = client.commit(
        [
            Put("/registry/hosts/a/pods/default/web", b"running"),
            Delete("/registry/hosts/a/pods/default/old"),
            Delete("/registry/hosts/a/events/", prefix=True),
        ]
    )

    assert before + 1 == revision
    found, _ = client.range_prefix("/registry/hosts/a/")
    assert [("/registry/hosts/a/pods/default/web", b"running")] == [
        (kv.key, kv.value) for kv in found
    ]
    with pytest.raises(ValueError, match="1 to 128"):
        client.commit([Put(f"/k/{i}", b"") for i in range(MAX_TXN_OPS + 1)])


def test_a_key_bound_to_a_lease_lives_while_it_is_kept_alive(etcd: EtcdServer) -> None:
    client = _client(etcd)
    lease = client.grant_lease(2)
    client.commit([Put("/registry/hosts/a/heartbeat", b"alive", lease=lease)])

    for _ in range(3):  # 3 s of renewals: longer than the TTL
        time.sleep(1)
        assert 2 == client.keep_alive(lease)
    ttl = client.lease_ttl(lease)
    found, _ = client.range_prefix("/registry/hosts/a/")

    assert ttl is not None
    assert 2 == ttl.granted
    assert 0 <= ttl.since_renewal <= 2
    assert [lease] == [kv.lease for kv in found]

    time.sleep(3.5)  # no renewal: etcd expires the lease and deletes its key
    assert None is client.lease_ttl(lease)
    assert 0 == client.keep_alive(lease)
    assert ([], etcd.revision()) == client.range_prefix("/registry/hosts/a/")
    client.revoke_lease(lease)  # gone already: no error


def test_revoking_a_lease_deletes_its_keys_at_once(etcd: EtcdServer) -> None:
    client = _client(etcd)
    lease = client.grant_lease(60)
    client.commit([Put("/registry/hosts/a/heartbeat", b"alive", lease=lease)])

    client.revoke_lease(lease)

    assert None is etcd.get("/registry/hosts/a/heartbeat")


@pytest.mark.parametrize(
    ("prefix", "end"),
    [("/a/", b"/a0"), ("a", b"b"), ("a\xff", b"a\xc3\xc0"), ("", b"\0")],
)
def test_the_end_of_a_prefix_is_its_last_byte_plus_one(prefix: str, end: bytes) -> None:
    assert end == prefix_end(prefix)


def test_ranges_read_keys_and_prefixes_in_order_a_transaction_per_128(
    etcd: EtcdServer,
) -> None:
    client = _client(etcd)
    client.commit([Put(f"/registry/hosts/h{i:03d}/node", str(i).encode()) for i in range(100)])
    client.commit([Put(f"/registry/hosts/h{i:03d}/pods/x", b"p") for i in range(100, 130)])
    wanted = [Range(f"/registry/hosts/h{i:03d}/node") for i in range(130)]
    wanted += [Range("/registry/hosts/h12", prefix=True, keys_only=True)]  # h120..h129
    calls: list[str] = []
    call = client._call

    def counted(path: str, body: dict[str, object]) -> object:
        calls.append(path)
        return call(path, body)

    client._call = counted  # type: ignore[method-assign]
    found = client.ranges(wanted)

    assert ["/kv/txn", "/kv/txn"] == calls  # 131 ranges: 128 and 3
    assert [[str(i).encode()] for i in range(100)] == [[kv.value for kv in f] for f in found[:100]]
    assert [[]] * 30 == found[100:130]
    assert [f"/registry/hosts/h{i}/pods/x" for i in range(120, 130)] == [
        kv.key for kv in found[130]
    ]
    assert {b""} == {kv.value for kv in found[130]}
