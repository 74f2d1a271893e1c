"""The hardened YAML loader: bytes or text to plain data (dict, list, str, int ...).

How one YAML stream is read:

1. Bytes to text (``_decode``): a NUL byte (binary data), invalid UTF-8 or a UTF-16/32
   byte-order mark is refused, naming the byte offset.
2. Characters YAML does not allow are refused with their line and column
   (``_check_characters``).
3. Text to YAML nodes: PyYAML's safe loading with a guarded composer (``_Guards``:
   depth limit, alias-expansion budget, no recursive aliases, no duplicate keys), on
   libyaml's parser when PyYAML has it and on the pure-Python one otherwise
   (``_LOADER``). Timestamps are not resolved, so a date stays a string.
4. Nodes to plain data, one document at a time (``_load_documents``).

Contract: ``_load_documents`` returns the documents of a stream or raises ``_Invalid``
(text that is no YAML text) or a ``yaml.YAMLError`` whose one-line message is
``_yaml_message``; it never builds more than the budget of nodes, however the YAML is
written. ``_Invalid`` and ``_describe`` (a value as messages show it) live here because
the loader's first layer that needs them is this one.

Layering: above ``_sources`` (whose bytes it reads) and below ``_scalars`` / ``_pod``;
it imports nothing of podsync and does no I/O. Its names keep their leading underscore:
they are shared among the loader's modules only; nothing here is public API.
"""

from __future__ import annotations

import codecs
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, cast

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

# Nothing here is public API: ``_config`` wires it into ``load_pods`` and ``parse_pods``.
__all__: list[str] = []

# YAML nesting deeper than this is refused while composing. A pod document nests about
# ten levels (List > items > spec > containers > probe > httpGet > port); the limit
# keeps PyYAML's recursive composer and constructor far from Python's recursion limit.
_MAX_DEPTH = 64

# A stream may expand (aliases counted at their full size) to at most this many nodes
# plus one per character of its text. Without aliases a node takes at least one
# character, so honest YAML never comes close; nine levels of ten aliases ("billion
# laughs") would expand to 10**9 nodes and are refused as soon as the budget runs out.
_NODE_BUDGET_BASE = 50_000

# ---------------------------------------------------------------------------------------
# YAML: a safe loader that refuses bombs
# ---------------------------------------------------------------------------------------

_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _LimitError(yaml.MarkedYAMLError):
    """The YAML is refused for its shape (too deep, too large once expanded)."""


def _mark(event: Event) -> yaml.Mark | None:
    # libyaml's events carry its own Mark type, with the same line and column fields.
    return cast("yaml.Mark | None", event.start_mark)


class _Guards(Composer):
    """A composer that refuses deep nesting, alias bombs, recursion and duplicate keys.

    Composition sees every alias as one event, so the node graph it builds is as small
    as the text; the danger is in what consumes it as a tree (the cattrs structuring
    walks each alias again). So every node's *expanded* size is computed bottom-up as it
    is composed (an alias counts the full size of its anchor) and the stream is refused
    as soon as the total exceeds the budget: before anything large exists.
    """

    # Dates stay strings: no pod field is a timestamp, and a label value like
    # 2014-11-01 should read as the text it is.
    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in Resolver.yaml_implicit_resolvers.items()
    }

    if TYPE_CHECKING:
        # Provided by the parser and constructor the guards are mixed with.
        def __init__(self, text: str, budget: int) -> None: ...
        def peek_event(self) -> Event: ...
        def construct_document(self, node: Node) -> Any: ...
        def dispose(self) -> None: ...

    def _init_guards(self, budget: int) -> None:
        self._budget = budget
        self._spent = 0
        self._depth = 0
        self._sizes: dict[int, int] = {}

    def compose_document(self) -> Node | None:
        # Anchors are per document, and so are the node ids kept in _sizes: ids of the
        # previous document's (freed) nodes may be reused.
        self._sizes = {}
        node = super().compose_document()
        if node is not None:
            self._spent += self._sizes.get(id(node), 1)
        return node

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            node = super().compose_node(parent, index)
            if node is not None and id(node) not in self._sizes:
                # The anchor is still being composed: the alias is inside it.
                raise _LimitError(
                    problem=f"recursive alias *{event.anchor} (used inside its own anchor)",
                    problem_mark=_mark(event),
                )
            return node
        if self._depth >= _MAX_DEPTH:
            raise _LimitError(
                problem=f"nested more than {_MAX_DEPTH} levels deep", problem_mark=_mark(event)
            )
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:
            return None
        size = 1
        if isinstance(node, SequenceNode):
            size += sum(self._sizes[id(item)] for item in node.value)
        elif isinstance(node, MappingNode):
            size += sum(self._sizes[id(k)] + self._sizes[id(v)] for k, v in node.value)
        if self._spent + size > self._budget:
            raise _LimitError(
                problem=f"the YAML expands to more than {self._budget} nodes through "
                "aliases (an alias bomb?)",
                problem_mark=_mark(event),
            )
        self._sizes[id(node)] = size
        return node

    def compose_mapping_node(self, anchor: Any) -> MappingNode:
        node = super().compose_mapping_node(anchor)
        # PyYAML keeps the last of two equal keys; a pod file with two ``image:`` lines
        # is a mistake, so say so. Keys brought in by a ``<<`` merge may be overridden.
        seen: dict[tuple[str, str], Node] = {}
        for key, _ in node.value:
            if not isinstance(key, ScalarNode) or key.tag == _MERGE_TAG:
                continue
            first = seen.setdefault((key.tag, key.value), key)
            if first is not key:
                raise ComposerError(
                    problem=f"duplicate key {key.value!r} (first at line "
                    f"{first.start_mark.line + 1})",
                    problem_mark=key.start_mark,
                )
        return node


class _Constructor(SafeConstructor):
    """PyYAML's safe constructor, whose failures all carry a line and column.

    An explicit tag on a value that does not fit it (``!!int abc``, ``!!bool maybe``,
    ``!!timestamp soon``, an empty ``!!float``) makes SafeConstructor raise a bare
    ValueError, KeyError, IndexError or AttributeError; those become ConstructorErrors
    at the node.
    """

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError):
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            raise ConstructorError(
                problem=f"cannot read {_describe(node.value)} as {tag}",
                problem_mark=node.start_mark,
            ) from None


class _PyLoader(_Guards, _Constructor, yaml.SafeLoader):
    """The guarded safe loader on PyYAML's pure-Python parser."""

    def __init__(self, text: str, budget: int) -> None:
        yaml.SafeLoader.__init__(self, text)
        self._init_guards(budget)


def _c_loader() -> type[_Guards] | None:
    """The guarded safe loader on libyaml's parser, when PyYAML was built with it.

    Only the parser (events) comes from libyaml, about five times faster than the
    Python one; composing stays in Python so that the guards apply. (libyaml's own
    composer has no depth limit and overflows the C stack on deeply nested input.)
    """
    try:
        # yaml.cyaml re-exports it from here (its stubs do not say so).
        from yaml._yaml import CParser
    except ImportError:  # pragma: no cover - PyYAML without libyaml
        return None

    class _CLoader(_Guards, _Constructor, CParser, Resolver):
        def __init__(self, text: str, budget: int) -> None:
            CParser.__init__(self, text)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self._init_guards(budget)

    return _CLoader


_LOADER: type[_Guards] = _c_loader() or _PyLoader

_STR_TAG = "tag:yaml.org,2002:str"
_IMMUTABLE = (int, float, bool, type(None))
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_VALUE_TAG = "tag:yaml.org,2002:value"


class _Frame:
    """An open collection while a document is built from events."""

    __slots__ = ("anchor", "has_key", "key", "size", "value")

    def __init__(self, value: list[Any] | dict[Any, Any], anchor: str | None) -> None:
        self.value = value
        self.anchor = anchor
        self.size = 1
        self.key: Any = None
        self.has_key = False


class _Builder:
    """The fast way from libyaml's events to plain data, with the guards applied.

    libyaml parses in C; this builds the values straight from its events - no node graph
    is kept, so a large document leaves no long-lived YAML objects behind for the garbage
    collector to walk again and again (building a 1,000-pod document's node graph cost
    more in collector passes than the parsing itself). The guards are the composer's:
    depth, the expanded size of every node (an alias counts the full size of its
    anchor), aliases inside their own anchor, duplicate keys. Strings and collections
    are built directly, other scalars by the safe constructor; an alias gives the same
    value as its anchor, as the safe constructor does.

    It only decides whether the stream is fine: anything it does not accept (a guard,
    an explicit collection tag, a merge key, a value the constructor refuses, a YAML
    error) gives ``None``, and the guarded composer reads the stream again to find and
    word the problem, so the messages are the guarded loader's in every case.
    """

    def __init__(self, parser: Any, budget: int) -> None:
        self._parser = parser
        self._budget = budget
        self._constructor = _Constructor()
        self._tags: dict[tuple[str, tuple[bool, bool]], str] = {}
        # Scalars of other types (80, true, 1.5) by tag and text: built once per stream.
        self._made: dict[tuple[str, str], object] = {}

    def documents(self) -> list[object] | None:
        """Every document of the stream, or None (see above)."""
        get_event = self._parser.get_event
        get_event()  # StreamStartEvent
        documents: list[object] = []
        while type(get_event()) is DocumentStartEvent:
            built = self._document(get_event)
            if built is None:
                return None
            value, size = built
            self._budget -= size
            documents.append(value)
        return documents

    def _document(self, get_event: Callable[[], Event]) -> tuple[object, int] | None:
        budget = self._budget
        resolve = self._parser.resolve
        # The tag of an untagged scalar depends on its text and style only, and pod files
        # repeat the same keys and values thousands of times: each is resolved once per
        # stream (the resolver tries its regular expressions on every call).
        tags = self._tags
        made = self._made
        anchors: dict[str, tuple[object, int]] = {}
        stack: list[_Frame] = []
        result: tuple[object, int] | None = None
        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent:
                value: object
                if len(stack) >= _MAX_DEPTH:
                    return None
                tag = event.tag  # type: ignore[attr-defined]
                if tag is None or tag == "!":
                    seen = (event.value, event.implicit)  # type: ignore[attr-defined]
                    tag = tags.get(seen)
                    if tag is None:
                        tag = tags[seen] = resolve(ScalarNode, *seen)
                if tag == _STR_TAG:
                    value = event.value  # type: ignore[attr-defined]
                elif tag in (_MERGE_TAG, _VALUE_TAG):
                    return None  # "<<" and "=": the constructor's business
                elif (tag, event.value) in made:  # type: ignore[attr-defined]
                    value = made[tag, event.value]  # type: ignore[attr-defined]
                else:
                    node = ScalarNode(
                        tag,
                        event.value,  # type: ignore[attr-defined]
                        _mark(event),
                        cast("yaml.Mark | None", event.end_mark),
                        event.style,  # type: ignore[attr-defined]
                    )
                    try:
                        value = self._constructor.construct_object(node)
                    except yaml.YAMLError:
                        return None
                    if type(value) in _IMMUTABLE:  # the same text gives an equal value
                        made[tag, event.value] = value  # type: ignore[attr-defined]
                anchor = event.anchor  # type: ignore[attr-defined]
                if anchor is None and stack:
                    # Nearly every scalar: a plain value or key inside a collection.
                    parent = stack[-1]
                    parent.size += 1
                    container = parent.value
                    if type(container) is list:
                        container.append(value)
                    elif not parent.has_key:
                        if isinstance(value, (list, dict)):
                            return None  # "!!map" on a key: the constructor words it
                        parent.key, parent.has_key = value, True
                    elif parent.key in container:
                        return None  # a duplicate key
                    else:
                        container[parent.key] = value
                        parent.has_key = False
                    continue
                size = 1
            elif kind is SequenceStartEvent or kind is MappingStartEvent:
                if len(stack) >= _MAX_DEPTH:
                    return None
                sequence = kind is SequenceStartEvent
                tag = event.tag  # type: ignore[attr-defined]
                if tag is None or tag == "!":
                    tag = _SEQ_TAG if sequence else _MAP_TAG
                if tag != (_SEQ_TAG if sequence else _MAP_TAG):
                    return None  # an explicit collection tag (!!set, !!omap, !custom ...)
                anchor = event.anchor  # type: ignore[attr-defined]
                if anchor is not None and (anchor in anchors or _open(stack, anchor)):
                    return None  # a duplicate anchor
                stack.append(_Frame([] if sequence else {}, anchor))
                continue
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                frame = stack.pop()
                if frame.has_key:  # pragma: no cover - libyaml pairs keys and values
                    return None
                value, size, anchor = frame.value, frame.size, frame.anchor
                if size > budget:
                    return None
            elif kind is AliasEvent:
                known = anchors.get(event.anchor)  # type: ignore[attr-defined]
                if known is None:
                    return None  # undefined, or inside its own anchor
                value, size = known
                anchor = None
            elif kind is DocumentEndEvent:
                return result
            else:  # pragma: no cover - libyaml's stream is well formed
                return None
            if anchor is not None:
                if anchor in anchors:
                    return None  # a duplicate anchor
                anchors[anchor] = (value, size)
            if not stack:
                result = (value, size)
                continue
            parent = stack[-1]
            parent.size += size
            container = parent.value
            if type(container) is list:
                container.append(value)
            elif not parent.has_key:
                if isinstance(value, (list, dict)):
                    return None  # an unhashable key: the constructor words it
                parent.key, parent.has_key = value, True
            else:
                key = parent.key
                if key in container:
                    return None  # a duplicate key
                container[key] = value
                parent.has_key = False


def _open(stack: list[_Frame], anchor: str) -> bool:
    return any(frame.anchor == anchor for frame in stack)


def _c_parser() -> type[Any] | None:
    """libyaml's parser with podsync's resolver, when PyYAML was built with libyaml."""
    try:
        from yaml._yaml import CParser
    except ImportError:  # pragma: no cover - PyYAML without libyaml
        return None

    class _CParser(CParser, Resolver):
        yaml_implicit_resolvers = _Guards.yaml_implicit_resolvers

        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            Resolver.__init__(self)

    return _CParser


_C_PARSER = _c_parser()
_log = logging.getLogger("podsync")


def _fast_documents(text: str, budget: int) -> list[object] | None:
    """The documents through libyaml's parser and ``_Builder``; None when that path is
    not available or does not vouch for the stream."""
    if _C_PARSER is None:  # pragma: no cover - depends on how PyYAML was built
        _log.debug(
            "reading YAML with the pure-Python loader: PyYAML's libyaml extension is not available"
        )
        return None
    parser = _C_PARSER(text)
    try:
        return _Builder(parser, budget).documents()
    except yaml.YAMLError:
        return None
    finally:
        parser.dispose()


def _yaml_message(exc: yaml.YAMLError) -> str:
    """One line for a YAML error: where (1-based line and column) and what."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem and not isinstance(exc, _LimitError):
            what = f"{exc.problem} ({exc.context})"
        prefix = "refused" if isinstance(exc, _LimitError) else "invalid YAML"
        if mark is None:  # pragma: no cover - PyYAML always marks its errors
            return f"{prefix}: {what}"
        return f"{prefix} at line {mark.line + 1}, column {mark.column + 1}: {what}"
    return f"invalid YAML: {' '.join(str(exc).split())}"


# Byte-order marks of the Unicode encodings YAML allows but podsync does not read
# (UTF-32 first: its little-endian mark starts with UTF-16's).
_OTHER_UNICODE = {
    "UTF-32": (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE),
    "UTF-16": (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE),
}


def _decode(data: bytes) -> str:
    """UTF-8 text from bytes; raises _Invalid naming the offending byte offset."""
    for encoding, boms in _OTHER_UNICODE.items():
        if data.startswith(boms):
            raise _Invalid(f"{encoding} text (by its byte-order mark): save it as UTF-8")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _Invalid(f"binary data, not YAML text (a NUL byte at byte offset {nul})")
    offset = 0
    if data.startswith(codecs.BOM_UTF8):
        offset = len(codecs.BOM_UTF8)
    try:
        return data[offset:].decode("utf-8")
    except UnicodeDecodeError as exc:
        position = exc.start + offset
        raise _Invalid(
            f"not UTF-8 text: byte 0x{data[position]:02x} at byte offset {position} ({exc.reason})"
        ) from None


# The characters YAML 1.1 allows in a stream ("printable"); PyYAML's reader refuses the
# others, but without a line and column, and libyaml's cannot encode lone surrogates.
_NOT_YAML_CHARACTER = re.compile(
    r"[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def _check_characters(text: str) -> None:
    bad = _NOT_YAML_CHARACTER.search(text)
    if bad is not None:
        position = bad.start()
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        raise _Invalid(
            f"invalid YAML at line {line}, column {column}: character "
            f"U+{ord(bad.group()):04X} is not allowed in YAML text"
        )


def _load_documents(text: str) -> list[object]:
    """The documents of a YAML stream as plain data (dict, list, str, int ...)."""
    _check_characters(text)
    fast = _fast_documents(text, _NODE_BUDGET_BASE + len(text))
    if fast is not None:
        return fast
    loader = _LOADER(text, _NODE_BUDGET_BASE + len(text))
    try:
        documents = []
        while loader.check_node():
            # Construct each document as soon as it is composed, so that its node graph
            # can be freed: keeping every graph alive costs more in garbage-collector
            # passes than the nodes themselves.
            node = loader.get_node()
            documents.append(None if node is None else loader.construct_document(node))
        return documents
    finally:
        loader.dispose()


# ---------------------------------------------------------------------------------------
# Values: what is wrong, and how messages show a value
# ---------------------------------------------------------------------------------------


class _Invalid(ValueError):
    """A value is wrong; the message says what was expected and what was given."""


#: What ``_kind`` calls each type of a YAML value.
_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "a number"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "a mapping"),
    (bytes, "binary data"),
)


def _kind(value: object) -> str:
    """What a value is, never what it holds: for a message about text that must not be
    shown (a Secret's value; a file that is not a pod, which may be any file a symlink
    points to)."""
    if value is None:
        return "null"
    return next((name for cls, name in _KINDS if isinstance(value, cls)), "another value")


def _describe(value: object) -> str:
    """A value as a message shows it: scalars in YAML spelling, containers by kind."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:37]) + "..."
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, bytes):
        return "binary data"
    return f"a {type(value).__name__}"
