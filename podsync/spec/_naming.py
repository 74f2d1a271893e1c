"""Container names: the seed's ``k8s_`` format, built and parsed back.

Ported from the seed's ``dockertools.BuildDockerName`` / ``ParseDockerName``
(reference §1.1, §1.2, §2.1); the pod full name in the middle is the seed's
``GetPodFullName``, which the model owns (``pod_full_name``, ``Pod.full_name``)::

    k8s_<container>.<hash-hex>_<podFullName>_<uid>_<suffix>
    k8s_<container>.<hash-hex>_<podFullName>_<suffix>          (no uid: 4 fields)

There is no escaping: ``_`` cannot occur in the parts because pod, namespace and
container names are DNS-1123 labels and uids are UUIDs (validated by the loader). ``.``
inside the pod full name is fine because only the first field is split on ``.``.

Two deliberate differences from the seed:

* The suffix is the *attempt number* in 8 lowercase hex digits, not ``rand.Uint32()``:
  the planner is pure, so it picks a number that no observed instance of the same pod
  container uses, and the name is a function of its inputs.
* Parsing the empty string returns an empty result; the seed indexed ``name[0]`` and
  panicked.

Nothing here does I/O.
"""

from __future__ import annotations

import re

import attrs

# The naming rules are the model's (its validators apply them to pods built in code);
# container names rely on them, and this module offers them to the rest of podsync.
from podsync.model._names import (
    NETWORK_CONTAINER,
    dns_label_problem,
    is_dns_label,
    is_safe_uid,
)

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "CONTAINER_NAME_PREFIX",
    "NETWORK_CONTAINER",
    "ParsedName",
    "container_name",
    "dns_label_problem",
    "is_dns_label",
    "is_safe_uid",
    "parse_2014_container_name",
    "parse_container_name",
]

#: The first field of every container name podsync (and the 2014 kubelet) writes.
CONTAINER_NAME_PREFIX = "k8s"


_HEX = re.compile(r"[0-9a-fA-F]+")
# What the seed's BuildDockerName writes: the hash as strconv.FormatUint(h, 16) of a
# 32-bit adler32 (lowercase, no padding), the random part as %08x.
_SEED_HASH = re.compile(r"[0-9a-f]{1,8}")
_SEED_SUFFIX = re.compile(r"[0-9a-f]{8}")
_MAX_UINT32 = 0xFFFFFFFF


@attrs.frozen
class ParsedName:
    """The fields of a container name, as ``ParseDockerName`` returned them.

    A name that is not ours parses to ``ParsedName()``: every field empty or zero.

    Attributes:
        pod_full_name: field 2 verbatim (may be empty).
        uid: field 3, only when the name has at least 5 fields; ``""`` otherwise.
        container: the text of field 1 before its first ``.``.
        hash: the hex number after that ``.``, as a 32-bit value; 0 when absent or not
            hex, ``0xffffffff`` when it overflows 32 bits (Go's ``ParseUint`` rules).
        suffix: the last of fields 3-4 (the seed's random part, podsync's attempt);
            the seed never parsed it.
    """

    pod_full_name: str = ""
    uid: str = ""
    container: str = ""
    hash: int = 0
    suffix: str = ""

    @property
    def attempt(self) -> int | None:
        """The suffix as a number, when it is hex (podsync writes the attempt there)."""
        if _HEX.fullmatch(self.suffix):
            return int(self.suffix, 16)
        return None


def container_name(
    container: str, name_hash: int, pod_full_name: str, uid: str, attempt: int
) -> str:
    """Build a container name in the seed's format (seed BuildDockerName).

    Args:
        container: the container's name in the pod (``net`` for the network container).
        name_hash: the 32-bit hash written after the ``.`` in lowercase hex without
            padding, as the seed's ``strconv.FormatUint(h, 16)``.
        pod_full_name: ``<name>.<namespace>.<source>`` (see ``pod_full_name``).
        uid: the pod uid; when empty the uid field is left out (4 fields), as the seed.
        attempt: a number unique among the observed instances of this pod container;
            written as 8 lowercase hex digits where the seed wrote ``rand.Uint32()``.

    Raises:
        ValueError: ``name_hash`` or ``attempt`` is outside 0..2**32-1.
    """
    if not 0 <= name_hash <= _MAX_UINT32:
        raise ValueError(f"name_hash must fit in 32 bits, got {name_hash!r}")
    if not 0 <= attempt <= _MAX_UINT32:
        raise ValueError(f"attempt must fit in 32 bits, got {attempt!r}")
    fields = [CONTAINER_NAME_PREFIX, f"{container}.{name_hash:x}", pod_full_name]
    if uid:
        fields.append(uid)
    fields.append(f"{attempt:08x}")
    return "_".join(fields)


def _parse_hash(text: str) -> int:
    # Go's strconv.ParseUint(text, 16, 32): no sign, no 0x prefix, no underscores;
    # a syntax error gives 0, a value too large gives the largest uint32 (ErrRange).
    if not _HEX.fullmatch(text):
        return 0
    return min(int(text, 16), _MAX_UINT32)


def parse_container_name(name: str) -> ParsedName:
    """Parse a container name exactly as the seed's ParseDockerName did.

    One leading ``/`` (as the Docker API reports names) is stripped. A name whose first
    ``_``-field is not ``k8s`` - a foreign container, a raw id, the legacy ``k8s--``
    format - gives ``ParsedName()``. Never raises.
    """
    if name.startswith("/"):
        name = name[1:]
    parts = name.split("_")
    if parts[0] != CONTAINER_NAME_PREFIX:
        return ParsedName()
    container = ""
    name_hash = 0
    if len(parts) > 1:
        pieces = parts[1].split(".")
        container = pieces[0]
        if len(pieces) > 1:
            name_hash = _parse_hash(pieces[1])
    full_name = parts[2] if len(parts) > 2 else ""
    uid = parts[3] if len(parts) > 4 else ""
    if len(parts) > 4:
        suffix = parts[4]
    elif len(parts) == 4:
        suffix = parts[3]
    else:
        suffix = ""
    return ParsedName(
        pod_full_name=full_name, uid=uid, container=container, hash=name_hash, suffix=suffix
    )


def parse_2014_container_name(name: str) -> ParsedName | None:
    """Parse ``name`` only when it is exactly what the seed's BuildDockerName wrote.

    The form is ``k8s_<container>.<hash>_<name>.<namespace>.<source>_<uid>_<suffix>``
    (one leading ``/`` allowed), five ``_``-fields and nothing else: the container,
    pod name, namespace and source are DNS-1123 labels, the hash is 1-8 lowercase hex
    digits, the uid can be a pod uid (``is_safe_uid``) and the suffix is 8 lowercase hex
    digits. Anything else gives ``None``.

    ``parse_container_name`` reads any ``k8s_``-prefixed text, as the seed did; this is
    the test of whether a container without podsync's labels may be a 2014 kubelet's.
    It has to be strict: Docker Desktop's Kubernetes, cri-dockerd and dockershim name
    their containers ``k8s_<container>_<pod>_<namespace>_<uid>_<attempt>``, which the
    seed's parser reads as a container of pod ``<pod>``. Never raises.
    """
    bare = name[1:] if name.startswith("/") else name
    parts = bare.split("_")
    if len(parts) != 5 or parts[0] != CONTAINER_NAME_PREFIX:
        return None
    _, first, full_name, uid, suffix = parts
    container, dot, hash_text = first.partition(".")
    if not dot or not is_dns_label(container) or not _SEED_HASH.fullmatch(hash_text):
        return None
    pod_fields = full_name.split(".")
    if len(pod_fields) != 3 or not all(is_dns_label(f) for f in pod_fields):
        return None
    if not is_safe_uid(uid) or not _SEED_SUFFIX.fullmatch(suffix):
        return None
    return ParsedName(
        pod_full_name=full_name,
        uid=uid,
        container=container,
        hash=int(hash_text, 16),
        suffix=suffix,
    )
