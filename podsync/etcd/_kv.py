"""The calls of etcd's v3 API beyond one key: prefix ranges, transactions of many
writes, and leases - what a host's reports (heartbeat, pod statuses, events) need.

``KeyValueCalls`` is a part of ``EtcdClient`` (which inherits it): each method is one
gateway call, through the client's endpoints, authentication and error mapping
(``EtcdClient._call``).

* ``range_prefix``: every key under a prefix (etcd's ``range_end``: the prefix with its
  last byte plus one), with or without values, in key order; ``ranges``: many keys and
  prefixes read at one revision, in one transaction of ranges (per ``MAX_TXN_OPS``).
* ``commit``: puts and deletes in one transaction - all of them or none, at one
  revision. etcd refuses a transaction of more than ``--max-txn-ops`` operations (128
  by default): ``MAX_TXN_OPS``; a caller with more writes splits them.
* Leases: ``grant_lease`` (a TTL in seconds), ``keep_alive`` (renews it: the TTL starts
  again), ``lease_ttl`` (what is left of it, and what it was granted: the time since the
  last renewal is their difference), ``revoke_lease`` (ends it now, deleting its keys).
  A key put with a lease is deleted by etcd when the lease expires - how the modern
  kubelet's node Lease works, with etcd itself doing the expiry.

Contract: the errors of ``EtcdClient`` (``EtcdUnavailable`` when no endpoint answered,
``EtcdError`` when etcd refused); a lease that has expired is not an error: ``keep_alive``
gives 0 and ``lease_ttl`` ``None``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import attrs

from podsync.exceptions import EtcdError

__all__: list[str] = []

#: etcd's default ``--max-txn-ops``: the most operations one transaction may hold.
MAX_TXN_OPS = 128


@attrs.frozen
class KeyValue:
    """A key as a range gives it.

    Attributes:
        key: the key.
        value: its bytes (``b""`` from a range with ``keys_only``).
        mod_revision: the revision of its last write.
        lease: the lease it is bound to, 0 for none.
    """

    key: str
    value: bytes
    mod_revision: int
    lease: int = 0


@attrs.frozen
class Put:
    """A put of a transaction: ``key`` set to ``value``, bound to ``lease`` (0: none)."""

    key: str
    value: bytes
    lease: int = 0


@attrs.frozen
class Delete:
    """A delete of a transaction: ``key``, or every key under it with ``prefix``."""

    key: str
    prefix: bool = False


@attrs.frozen
class Range:
    """A read of ``ranges``: ``key``, or every key under it with ``prefix``; without
    the values with ``keys_only``."""

    key: str
    prefix: bool = False
    keys_only: bool = False


@attrs.frozen
class LeaseTTL:
    """What is left of a lease.

    Attributes:
        remaining: seconds until it expires (etcd counts whole seconds).
        granted: the TTL it was granted (and is renewed to).
    """

    remaining: int
    granted: int

    @property
    def since_renewal(self) -> int:
        """Seconds since it was granted or last renewed (to etcd's second)."""
        return max(0, self.granted - self.remaining)


def _b64(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: object) -> bytes:
    return base64.b64decode(str(text)) if text else b""


def prefix_end(prefix: str) -> bytes:
    """The ``range_end`` of every key under ``prefix``: the prefix with its last byte
    plus one (bytes ``0xff`` at the end are dropped first, as etcd's ``GetPrefixRangeEnd``);
    ``b"\\0"`` (every key) for a prefix of ``0xff`` bytes only."""
    raw = bytearray(prefix.encode())
    while raw and raw[-1] == 0xFF:
        raw.pop()
    if not raw:
        return b"\0"
    raw[-1] += 1
    return bytes(raw)


def _int(value: object) -> int:
    # The gateway writes int64 fields as strings and leaves out those that are 0.
    return int(str(value)) if value not in (None, "") else 0


def _key_value(kv: dict[str, Any]) -> KeyValue:
    return KeyValue(
        _unb64(kv.get("key")).decode("utf-8", "replace"),
        _unb64(kv.get("value")),
        _int(kv.get("mod_revision")),
        _int(kv.get("lease")),
    )


def _range_op(wanted: Range) -> dict[str, Any]:
    body: dict[str, Any] = {"key": _b64(wanted.key)}
    if wanted.prefix:
        body["range_end"] = _b64(prefix_end(wanted.key))
    if wanted.keys_only:
        body["keys_only"] = True
    return {"request_range": body}


def _op(op: Put | Delete) -> dict[str, Any]:
    if isinstance(op, Put):
        put: dict[str, Any] = {"key": _b64(op.key), "value": _b64(op.value)}
        if op.lease:
            put["lease"] = str(op.lease)
        return {"request_put": put}
    delete: dict[str, Any] = {"key": _b64(op.key)}
    if op.prefix:
        delete["range_end"] = _b64(prefix_end(op.key))
    return {"request_delete_range": delete}


class KeyValueCalls:
    """Prefix ranges, many-write transactions and leases; mixed into ``EtcdClient``."""

    def _call(self, path: str, body: dict[str, Any]) -> Any:  # pragma: no cover - EtcdClient's
        raise NotImplementedError

    def range_prefix(self, prefix: str, *, keys_only: bool = False) -> tuple[list[KeyValue], int]:
        """Every key under ``prefix``, in key order, and the store's revision.

        ``keys_only``: without their values (``KeyValue.value`` is ``b""``).
        """
        body: dict[str, Any] = {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))}
        if keys_only:
            body["keys_only"] = True
        answer = self._call("/kv/range", body)
        found = [_key_value(kv) for kv in answer.get("kvs", ())]
        return found, _int(answer.get("header", {}).get("revision"))

    def ranges(self, wanted: Sequence[Range]) -> list[list[KeyValue]]:
        """Each of ``wanted`` read, in order: a transaction of ranges per
        ``MAX_TXN_OPS`` of them (one call for up to 128), each transaction at one
        revision. A key that does not exist gives an empty list."""
        found: list[list[KeyValue]] = []
        for start in range(0, len(wanted), MAX_TXN_OPS):
            chunk = wanted[start : start + MAX_TXN_OPS]
            answer = self._call("/kv/txn", {"success": [_range_op(r) for r in chunk]})
            responses = answer.get("responses") or []
            for index in range(len(chunk)):
                response = responses[index] if index < len(responses) else {}
                kvs = response.get("response_range", {}).get("kvs", ())
                found.append([_key_value(kv) for kv in kvs])
        return found

    def commit(self, ops: Sequence[Put | Delete]) -> int:
        """``ops`` in one transaction, all or none; the revision it made.

        Raises:
            ValueError: more than ``MAX_TXN_OPS`` operations, or none.
        """
        if not ops or len(ops) > MAX_TXN_OPS:
            raise ValueError(f"a transaction holds 1 to {MAX_TXN_OPS} operations, not {len(ops)}")
        answer = self._call("/kv/txn", {"success": [_op(op) for op in ops]})
        return _int(answer.get("header", {}).get("revision"))

    def grant_lease(self, ttl: int) -> int:
        """A new lease of ``ttl`` seconds; its ID."""
        answer = self._call("/lease/grant", {"TTL": str(int(ttl))})
        lease = _int(answer.get("ID"))
        if not lease:
            raise ValueError(f"etcd granted no lease: {answer.get('error', answer)}")
        return lease

    def keep_alive(self, lease: int) -> int:
        """Renew ``lease``; the TTL it was renewed to, 0 when it has expired (or was
        revoked): the keys bound to it are gone, and a new lease is needed."""
        answer = self._call("/lease/keepalive", {"ID": str(lease)})
        result = answer.get("result", answer) if isinstance(answer, dict) else {}
        return _int(result.get("TTL"))

    def lease_ttl(self, lease: int) -> LeaseTTL | None:
        """What is left of ``lease``; ``None`` when it has expired or never was."""
        answer = self._call("/lease/timetolive", {"ID": str(lease)})
        remaining = _int(answer.get("TTL"))
        if remaining < 0:
            return None
        return LeaseTTL(remaining, _int(answer.get("grantedTTL")))

    def revoke_lease(self, lease: int) -> None:
        """End ``lease`` now: etcd deletes the keys bound to it. One that has expired
        already is no error."""
        try:
            self._call("/lease/revoke", {"ID": str(lease)})
        except EtcdError as exc:
            if "lease not found" not in str(exc):
                raise
