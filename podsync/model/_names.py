"""The naming rules of the model: what a pod, namespace, container, port or volume name,
a pod uid and an environment variable name may be.

One implementation, read by three readers: the model's validators (a ``Pod`` or a
``Container`` built in code refuses a bad name when it is built), the loader (which
says the same with the file and ``$.path``: ``podsync.load.schema._scalars``), and the
container names of ``podsync.spec._naming``, which rely on these names holding no
``_``.

Contract: pure; no I/O.
"""

from __future__ import annotations

import re
import string

__all__ = [
    "DNS_LABEL_MAX",
    "ENV_NAME",
    "NETWORK_CONTAINER",
    "UID_CHARACTERS",
    "UID_MAX",
    "dns_label_problem",
    "is_dns_label",
    "is_safe_uid",
]

#: The name of the network container in every pod (seed: ``"net"``), so no container
#: of a pod may have it.
NETWORK_CONTAINER = "net"

# RFC 1123 label, as Kubernetes validates names: lowercase letters, digits and "-",
# starting and ending with a letter or digit, at most 63 characters.
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DNS_LABEL_MAX = 63
_DNS_LABEL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
# The uid rule (``is_safe_uid``); the loader explains a failure with these too.
UID_MAX = 253
UID_CHARACTERS = frozenset(string.ascii_letters + string.digits + ".-")
_SAFE_UID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9.-]{{0,{UID_MAX - 1}}}")

#: An environment variable name: a C identifier, as the 2014 validation required
#: (``util.IsCIdentifier``); the engine gets ``NAME=value``.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_dns_label(text: str) -> bool:
    """Whether ``text`` is a DNS-1123 label (pod, namespace and container names).

    Labels never contain ``_``, which is what lets container names be split on it.
    """
    return _DNS_LABEL.fullmatch(text) is not None


def dns_label_problem(text: str) -> str | None:
    """Why ``text`` is not a DNS-1123 label, in words for people; ``None`` when it is one.

    The same rule as ``is_dns_label``, explained: the loader puts this after the value
    and its ``$.path``, a model validator after the field's name.
    """
    if is_dns_label(text):
        return None
    if not text:
        return "it is empty"
    if len(text) > DNS_LABEL_MAX:
        return f"it has {len(text)} characters, at most {DNS_LABEL_MAX} are allowed"
    for char in text:
        if char not in _DNS_LABEL_CHARACTERS:
            why = "uppercase letters are" if char.isupper() else f"{char!r} is"
            return f"{why} not allowed (only lowercase letters, digits and '-')"
    return "it must start and end with a letter or digit"


def is_safe_uid(text: str) -> bool:
    """Whether ``text`` can be a pod uid: it becomes a container-name field and a
    directory name under the root directory, so no ``_``, no ``/``, no leading ``.``
    (which also rules out ``.`` and ``..``), at most 253 characters."""
    return _SAFE_UID.fullmatch(text) is not None
