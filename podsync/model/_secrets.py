"""Secret values: held in memory for apply, written down only as references and digests.

A value that came from a Secret - wholly (``secretKeyRef``, ``envFrom.secretRef``, a
Secret volume's file) or in part (an ``env`` value or a ``command``/``args`` item that
``$(VAR)`` expanded with one) - must reach the container and nothing else: not the spec
label (``io.podsync.spec``, which anyone who can list containers reads), not the plan's
text, not a saved plan (``plan --out``, ``plan -o json``), not a log line, an error message
or a ``repr``. So the loader hands such a value on as a ``SecretText``: a ``str``
whose text is the *shown* form (``postgres://app:<secret default/db-creds key
password>@db``), so that whatever treats it as text - formatting, logging, JSON -
writes the mask, and whose value only ``get_secret_value()`` gives (``revealed``, at
the engine boundary). It also knows where each piece came from (``parts``): plain text
of the pod file, and ``SecretPart`` s - a Secret's namespace, name and key, and a keyed
digest of the key's value. Whatever writes a value down for later writes
``sealed_record(text)`` (the pieces, with digests).

The digest. A Secret value is often short and guessable (a password), and whoever can
read container labels or a plan file could test guesses against an unkeyed sha256 of it
(or of it with its Secret's name: the name is written next to it). So the digest is an
HMAC-SHA256 under a key of this host (``secret_digest``): 32 random bytes that the
command line keeps, mode 0600, in ``<root-dir>/secret-digest.key`` (``_secret_key``) and
passes to the loader as data; without the key, a digest tells nothing about the value.
The message also holds the Secret's namespace, name and key, so that one value in two
places gives two unrelated digests (a label does not tell that two Secrets hold the
same password). The digest still changes when, and only when, the value does, so the
spec hash replaces a container whose Secret changed, and the plan says which Secret.
A new key (the file removed) changes every digest: each container with a Secret value
is replaced once.

A plan read back from JSON has the references and digests, not the values:
``SecretText.known`` is then false and it has no value. ``unseal`` puts
the values back from the Secrets of the sources, checking each digest against the value
read now; ``podsync.apply`` refuses to create a container from a value that is not
known (see ``unknown_secrets``).

Layering: model and helpers; pure (``hmac`` and ``hashlib`` only); no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

# Everything in __all__ gets re-exported as part of the podsync public API; the rest is
# shared by the loader, hashing, the plan's JSON form and apply.
__all__ = ["SecretPart", "SecretText"]

#: The length of a host's digest key, in bytes (HMAC-SHA256's block is 64; 32 is the
#: digest's own strength).
SECRET_KEY_BYTES = 32

_DIGEST = re.compile(r"[0-9a-f]{64}")
# Domain separation: the message of a digest says what it is a digest of.
_CONTEXT = b"podsync secret value 1"


@attrs.frozen
class SecretPart:
    """Where a piece of a value came from: key ``key`` of Secret ``namespace/name``,
    and the keyed digest of that key's value (``secret_digest``)."""

    namespace: str
    name: str
    key: str
    digest: str

    @property
    def secret(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def __str__(self) -> str:
        return f"<secret {self.namespace}/{self.name} key {self.key}>"


def secret_digest(host_key: bytes, namespace: str, name: str, key: str, value: bytes) -> str:
    """The keyed digest of a Secret's value: HMAC-SHA256 under ``host_key`` of the
    Secret's namespace, name and key and the value, as 64 hex digits.

    Raises:
        ValueError: ``host_key`` is empty (an HMAC under no key is an unkeyed digest).
    """
    if not host_key:
        raise ValueError("a Secret digest needs the host's key, got an empty one")
    # NUL cannot occur in a namespace, a name or a key (validated), so the fields and
    # the value are unambiguously delimited.
    message = b"\0".join((_CONTEXT, namespace.encode(), name.encode(), key.encode(), value))
    return hmac.new(host_key, message, hashlib.sha256).hexdigest()


class _Hidden:
    """Holds a Secret's value out of sight: no ``repr``, no ``str``, no attributes that
    ``vars()`` or a debugger's listing would print."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def __repr__(self) -> str:
        return "<hidden>"

    __str__ = __repr__


class SecretText(str):
    """A text that holds Secret values, wholly or in part: fail-closed.

    As a ``str`` it is its *shown* form (``postgres://app:<secret default/db key
    password>@db``): ``str()``, formatting, f-strings, ``%``-formatting, logging,
    ``json.dumps``, concatenation, ``repr`` - whatever treats it as text - give that
    form, never the value. The value comes out of ``get_secret_value()`` only (as
    pydantic's ``SecretStr``), which the engine boundary calls explicitly (``revealed``:
    the Docker runtime's create, ``FakeRuntime``'s), and ``join_texts`` to build a
    ``$(VAR)`` expansion. A mistake is then a mask sent on, never a value written down.

    ``parts`` are its pieces in order: plain text, and a ``SecretPart`` where a Secret's
    value is. ``known`` is false in a plan read back from JSON before ``unseal``: it has
    no value then. Two texts are equal when their pieces are (the digests tell values
    apart), whatever ``str`` says of their shown forms.
    """

    parts: tuple[str | SecretPart, ...]
    known: bool
    _hidden: _Hidden | None

    def __new__(
        cls, value: str, parts: Iterable[str | SecretPart], *, known: bool = True
    ) -> SecretText:
        pieces = tuple(parts)
        self = super().__new__(cls, "".join(map(str, pieces)))
        self.parts = pieces
        self.known = known
        self._hidden = _Hidden(value) if known else None
        return self

    @property
    def shown(self) -> str:
        """The value with each Secret's piece as ``<secret ns/name key k>`` (what the
        text is as a ``str``), as a plain ``str``."""
        return str.__str__(self)

    @property
    def secrets(self) -> tuple[SecretPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, SecretPart))

    def get_secret_value(self) -> str:
        """The real value: for the engine, and nothing else.

        Raises:
            ValueError: the value is not known (a saved plan not unsealed)."""
        if self._hidden is None:
            raise ValueError(f"the value of {self.shown} is not known: unseal the plan")
        return self._hidden._value

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"SecretText({self.shown!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SecretText):
            return self.parts == other.parts and self.known == other.known
        return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((SecretText, self.parts))

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy or a pickle keeps what the text is (str's own would drop it).
        value = self._hidden._value if self._hidden is not None else ""
        return (_rebuild, (value, self.parts, self.known))


def _rebuild(value: str, parts: tuple[str | SecretPart, ...], known: bool) -> SecretText:
    return SecretText(value, parts, known=known)


def revealed(items: Iterable[str]) -> list[str]:
    """``items`` (an environment, a command) as the engine gets them: each
    ``SecretText`` replaced by its value (``get_secret_value``). The one place the
    engine boundary asks for Secret values.

    Raises:
        ValueError: a ``SecretText`` whose value is not known (apply refuses such a
            create first: ``unknown_secrets``)."""
    return [t.get_secret_value() if type(t) is SecretText else t for t in items]


def shown(text: str) -> str:
    """What may be written down of ``text``: itself, or its shown form."""
    return text.shown if isinstance(text, SecretText) else text


def join_texts(pieces: Iterable[str]) -> str:
    """The concatenation of ``pieces``: a plain ``str``, or a ``SecretText`` whose parts
    are those of the pieces when any piece holds a Secret value (a value expanded with
    ``$(VAR)``, ``NAME=value`` for the engine); its value is the pieces' values."""
    items = list(pieces)
    if not any(isinstance(p, SecretText) for p in items):
        return "".join(items)
    parts = merge_pieces(p.parts if isinstance(p, SecretText) else (p,) for p in items)
    known = all(p.known for p in items if isinstance(p, SecretText))
    value = "".join(revealed(items)) if known else ""
    return SecretText(value, parts, known=known)


def merge_pieces(groups: Iterable[Iterable[Any]]) -> list[Any]:
    """The pieces of ``groups`` in order, as the parts of a text joined from others:
    adjacent plain text (``str``) is one piece, empty text none; every other piece (a
    ``SecretPart``, a ``podsync.model._pod_fields.PodFieldRef``) is kept as it is."""
    parts: list[Any] = []
    for group in groups:
        for part in group:
            if isinstance(part, str) and parts and isinstance(parts[-1], str):
                parts[-1] += part
            elif part != "":
                parts.append(part)
    return parts


def sealed_record(text: SecretText) -> dict[str, Any]:
    """What is written down in place of ``text`` (spec label, saved plan): its pieces,
    each Secret's as its reference and digest. Equal for equal values; another value
    of any Secret it holds gives another record."""
    return {
        "sealed": [
            p if isinstance(p, str) else {"secret": p.secret, "key": p.key, "digest": p.digest}
            for p in text.parts
        ]
    }


def from_record(record: object) -> SecretText | None:
    """The ``SecretText`` a ``sealed_record`` describes, its value not known (the
    shown form in its place); ``None`` when ``record`` is not one."""
    if not isinstance(record, dict) or set(record) != {"sealed"}:
        return None
    pieces = record["sealed"]
    if not isinstance(pieces, list):
        return None
    parts: list[str | SecretPart] = []
    for piece in pieces:
        if isinstance(piece, str):
            parts.append(piece)
            continue
        if not isinstance(piece, dict) or set(piece) != {"secret", "key", "digest"}:
            return None
        secret, key, digest = piece["secret"], piece["key"], piece["digest"]
        if not (isinstance(secret, str) and isinstance(key, str) and isinstance(digest, str)):
            return None
        namespace, slash, name = secret.partition("/")
        if not slash or not _DIGEST.fullmatch(digest):
            return None
        parts.append(SecretPart(namespace, name, key, digest))
    return SecretText("", parts, known=False)


class SecretMismatch(ValueError):
    """A saved plan's Secret value cannot be put back: the Secret or its key is not in
    the sources, or its value is not the one the plan was made with."""


#: Finds a Secret's data by namespace and name (``None``: no such Secret).
SecretLookup = Callable[[str, str], Mapping[str, bytes] | None]


def checked_value(part: SecretPart, lookup: SecretLookup, host_key: bytes) -> bytes:
    """The value ``part`` refers to, from the Secrets ``lookup`` finds, once its keyed
    digest is the one ``part`` was made with.

    Raises:
        SecretMismatch: the Secret or key is missing, or its value is not the one the
            digest was made of.
    """
    data = lookup(part.namespace, part.name)
    if data is None:
        raise SecretMismatch(f"Secret {part.secret} is not in the sources")
    if part.key not in data:
        raise SecretMismatch(f"Secret {part.secret} has no key {part.key!r}")
    value = data[part.key]
    digest = secret_digest(host_key, part.namespace, part.name, part.key, value)
    if not hmac.compare_digest(digest, part.digest):
        raise SecretMismatch(
            f"the value of Secret {part.secret} key {part.key} is not the one the plan "
            "was made with"
        )
    return value


def unseal(text: SecretText, lookup: SecretLookup, host_key: bytes) -> SecretText:
    """``text`` with its value put back from the Secrets ``lookup`` finds, each piece's
    digest checked against the value found (a text whose value is known is returned
    as it is).

    Raises:
        SecretMismatch: a Secret or key is missing, a value is not UTF-8 text, or a
            value is not the one the digest was made of.
    """
    if text.known:
        return text
    pieces: list[str] = []
    for part in text.parts:
        if isinstance(part, str):
            pieces.append(part)
            continue
        value = checked_value(part, lookup, host_key)
        try:
            pieces.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            raise SecretMismatch(f"Secret {part.secret} key {part.key} is not UTF-8 text") from None
    return SecretText("".join(pieces), text.parts, known=True)


def map_secret_texts(value: Any, change: Callable[[SecretText], SecretText]) -> Any:
    """``value`` (attrs instances, tuples, lists and dicts of them, strings) with every
    ``SecretText`` in it replaced by ``change(text)``; what holds none is returned as it
    is (the same object)."""
    if isinstance(value, SecretText):
        return change(value)
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, tuple | list):
        items = [map_secret_texts(v, change) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    if isinstance(value, dict):
        mapped = {k: map_secret_texts(v, change) for k, v in value.items()}
        if all(mapped[k] is v for k, v in value.items()):
            return value
        return type(value)(mapped)
    if attrs.has(type(value)):
        changes = {}
        for field in attrs.fields(type(value)):
            if not field.init:
                continue
            old = getattr(value, field.name)
            new = map_secret_texts(old, change)
            if new is not old:
                changes[field.alias or field.name] = new
        return attrs.evolve(value, **changes) if changes else value
    return value


def secret_texts(value: Any) -> list[SecretText]:
    """Every ``SecretText`` in ``value`` (as ``map_secret_texts`` walks it), in order."""
    found: list[SecretText] = []
    _collect(value, found)
    return found


def _collect(value: Any, found: list[SecretText]) -> None:
    if isinstance(value, str):
        if type(value) is SecretText:
            found.append(value)
    elif isinstance(value, tuple | list):
        for item in value:
            _collect(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, found)
    elif attrs.has(type(value)):
        for field in attrs.fields(type(value)):
            _collect(getattr(value, field.name), found)


def unknown_secrets(value: Any) -> list[SecretPart]:
    """The Secret pieces of ``value`` whose values are not known (a plan read back from
    JSON, not unsealed): nothing may be created from them."""
    return [p for t in secret_texts(value) if not t.known for p in t.secrets]


#: The fields of a ``CreateSpec`` that may hold ``SecretText`` s (tuples of strings): an
#: ``env`` entry, a ``command`` or ``args`` item that came from a Secret or was expanded
#: with one. The plan's JSON form seals them, apply checks them; a new field that may
#: hold a Secret's value is added here.
SEALABLE_FIELDS = ("env", "command", "args")


def spec_texts(spec: Any) -> list[SecretText]:
    """The ``SecretText`` s of a ``CreateSpec``'s ``SEALABLE_FIELDS``: the fast check
    (a type test per item) that apply makes for every create."""
    found: list[SecretText] = []
    for name in SEALABLE_FIELDS:
        for item in getattr(spec, name) or ():
            if type(item) is SecretText:
                found.append(item)
    return found
