"""Reading desired pods from YAML: files, directories, HTTP(S) URLs and standard input.

This ports the config sources of the older seed kubelet (reference §6):
``extractFromFile`` / ``extractFromDir`` (one file, or every non-dot file of a directory
in name order) and ``extractFromHTTP`` (a body holding one manifest or a list of them),
together with the v1beta1 ``ContainerManifest`` document they read. Kubernetes ``v1``
``Pod``, ``List`` and ``PodList`` documents are read as well.

Deliberate differences from the seed:

* All or nothing. The seed logged a bad file and went on with the rest; here every
  problem of every source is collected and raised as one ``ConfigError``, so a
  half-read desired state is never used.
* Strict. Unknown keys, wrong types (``"80"`` for a port, ``8080`` for a string) and
  values the kubelet would have mis-handled later (a ``_`` in a name, which would
  break the container-name format; an unknown pull policy, which the seed silently
  treated as "never pull") are errors with their ``$.path``.
* Bounded. Sources larger than ``max_bytes``, HTTP servers slower than the timeout,
  YAML that nests too deeply or expands through aliases (a "billion laughs" bomb) are
  refused before anything large is built.

How one YAML stream is read (``parse_pods``):

1. Bytes to text: a NUL byte (binary data) or invalid UTF-8 is refused, naming the
   byte offset.
2. Text to YAML nodes: PyYAML's safe loading with a guarded composer (depth limit,
   alias-expansion budget, duplicate keys). Timestamps are not resolved, so a date
   stays a string.
3. Nodes to plain data, then data to private schema classes (attrs classes that mirror
   the YAML, one per mapping) through one private cattrs converter whose hooks are
   strict and carry the checks of single values (ranges, DNS labels, quantities,
   enumerations); every failure keeps its path.
4. Schema to model: the rules that involve several values (duplicate names, mounts
   that name no volume, host ports used twice, handlers with more than one action)
   and the conversion into ``Pod`` / ``Container``.

A problem reads ``<source>: <path>: <message>``, e.g.
``pods/web.yaml: $.spec.containers[1].ports[0].containerPort: must be 1-65535, got 70000``.
In a stream of several YAML documents the path starts with the document's 1-based
number: ``pods/all.yaml: document 2: $.spec.containers[0].name: ...``.
"""

from __future__ import annotations

import codecs
import difflib
import enum
import http.client
import ipaddress
import math
import os
import re
import stat
import string
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import IO, TYPE_CHECKING, Any, ClassVar, NewType, TypeVar, cast, get_args, get_origin

import attrs
import cattrs
import yaml
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, override
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent, Event
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from podsync._images import image_reference_problem
from podsync._labels import MAX_GRACE_PERIOD
from podsync._models import (
    Container,
    DNSPolicy,
    EnvVar,
    Handler,
    HTTPGetAction,
    Lifecycle,
    Pod,
    Port,
    PortProtocol,
    Probe,
    PullPolicy,
    RestartPolicy,
    TCPSocketAction,
    Volume,
    VolumeMount,
)
from podsync._naming import dns_label_problem
from podsync.exceptions import ConfigError, Problem

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "DEFAULT_MAX_BYTES",
    "load_pods",
    "parse_pods",
]

#: The largest file, HTTP body or standard input ``load_pods`` reads, in bytes.
#:
#: A pod manifest is a few KiB and Kubernetes itself caps a whole object at etcd's
#: 1.5 MiB request limit; 4 MiB leaves room for a ``List`` of several hundred pods.
#: The cap exists because YAML is expensive to read: PyYAML builds Python objects for
#: every node, about a second per MiB of pods, so an unbounded source (a wrong URL
#: serving a disk image, ``/dev/zero``) must be refused rather than read.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024

# YAML nesting deeper than this is refused while composing. A pod document nests about
# ten levels (List > items > spec > containers > probe > httpGet > port); the limit
# keeps PyYAML's recursive composer and constructor far from Python's recursion limit.
_MAX_DEPTH = 64

# A stream may expand (aliases counted at their full size) to at most this many nodes
# plus one per character of its text. Without aliases a node takes at least one
# character, so honest YAML never comes close; nine levels of ten aliases ("billion
# laughs") would expand to 10**9 nodes and are refused as soon as the budget runs out.
_NODE_BUDGET_BASE = 50_000

# Docker takes memory and CPU values as int64.
_INT64_MAX = 2**63 - 1

_SOURCE_NAME_STDIN = "<stdin>"

# A source that starts like a URL. Only http and https are fetched; anything else that
# looks like a URL (ftp://, file://) is an error rather than a file name.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")

# Read HTTP bodies in pieces of this size, checking the size and time limits between.
_CHUNK = 64 * 1024


# ---------------------------------------------------------------------------------------
# Sources: files, directories, URLs, standard input
# ---------------------------------------------------------------------------------------


def load_pods(
    sources: Sequence[str | os.PathLike[str]],
    *,
    stdin: IO[bytes] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    http_timeout: float = 10.0,
) -> tuple[Pod, ...]:
    """Read the desired pods from files, directories, URLs and standard input.

    Each source is one of:

    * a file: one YAML stream (see ``parse_pods`` for what it may contain);
    * a directory: every entry whose name does not start with ``.``, in name order,
      as the seed's ``extractFromDir``. Subdirectories are skipped (there is no
      recursion); an entry that is neither a file nor a directory is an error. An empty
      directory contributes no pods;
    * an ``http://`` or ``https://`` URL (the seed's ``extractFromHTTP``): the body is
      one YAML stream, and a top-level list of documents is accepted as the seed did.
      Redirects are followed and the usual proxy environment variables apply;
    * ``-`` (the string, not a path object): standard input, read once.

    Pods from files, directories and standard input get the source ``file``, pods from
    URLs get ``http``. Sources are read in order and their pods concatenated.

    Args:
        sources: the sources, in order.
        stdin: where ``-`` reads from; ``sys.stdin.buffer`` when not given.
        max_bytes: the largest file, body or standard input accepted, in bytes; a
            larger source is refused without reading all of it.
        http_timeout: seconds allowed for connecting, for each read, and for the whole
            transfer of one URL.

    Returns:
        The pods of all sources, in source order and then document order.

    Raises:
        ConfigError: anything was wrong with any source: it could not be read, it is
            too large, it is not valid YAML, a document is invalid, or two pods share a
            ``namespace/name`` or a uid. Every problem found is listed and no pods are
            returned.
        TypeError: ``sources`` is a single string or path instead of a sequence.
        ValueError: ``max_bytes`` is negative or ``http_timeout`` is not positive.
    """
    if isinstance(sources, (str, bytes, os.PathLike)):
        raise TypeError("sources must be a sequence of sources, not a single str or path")
    if max_bytes < 0:
        raise ValueError(f"max_bytes must not be negative, got {max_bytes!r}")
    if not http_timeout > 0:
        raise ValueError(f"http_timeout must be positive, got {http_timeout!r}")
    found: list[_Found] = []
    problems: list[Problem] = []
    stdin_read = False
    for raw in sources:
        if isinstance(raw, str) and raw == "-":
            if stdin_read:
                problems.append(Problem(_SOURCE_NAME_STDIN, "", "'-' is given more than once"))
                continue
            stdin_read = True
            stream = stdin if stdin is not None else sys.stdin.buffer
            streams: list[tuple[str, bytes | _Unreadable]] = [
                (_SOURCE_NAME_STDIN, _read_stream(stream, max_bytes))
            ]
            pod_source = "file"
        elif isinstance(raw, str) and _URL.match(raw):
            streams = [(raw, _fetch(raw, max_bytes, http_timeout))]
            pod_source = "http"
        else:
            streams = _read_path(os.fspath(raw), max_bytes)
            pod_source = "file"
        for source_name, data in streams:
            if isinstance(data, _Unreadable):
                problems.append(Problem(source_name, "", data.message))
                continue
            stream_found, stream_problems = _parse_stream(data, source_name, pod_source)
            found.extend(stream_found)
            problems.extend(stream_problems)
    problems.extend(_duplicates(found))
    if problems:
        raise ConfigError(problems)
    return tuple(f.pod for f in found)


@attrs.frozen
class _Unreadable:
    """Why a source could not be read (in place of its bytes)."""

    message: str


def _too_large(max_bytes: int) -> _Unreadable:
    return _Unreadable(f"larger than the limit of {max_bytes} bytes")


def _os_message(exc: OSError) -> _Unreadable:
    return _Unreadable(f"cannot read: {exc.strerror or exc}")


def _read_stream(stream: IO[bytes], max_bytes: int) -> bytes | _Unreadable:
    """The bytes of an open stream, at most ``max_bytes`` of them."""
    try:
        # One byte more than allowed tells "exactly the limit" from "over it" without
        # reading the rest.
        data = stream.read(max_bytes + 1)
    except OSError as exc:
        return _os_message(exc)
    except ValueError as exc:  # e.g. a closed file
        return _Unreadable(f"cannot read: {exc}")
    if not isinstance(data, bytes):  # sys.stdin rather than sys.stdin.buffer
        return _Unreadable("cannot read: the stream gives text, not bytes")
    if len(data) > max_bytes:
        return _too_large(max_bytes)
    return data


def _read_file(path: str, max_bytes: int) -> bytes | _Unreadable:
    try:
        with open(path, "rb") as stream:
            return _read_stream(stream, max_bytes)
    except OSError as exc:
        return _os_message(exc)


def _read_path(path: str, max_bytes: int) -> list[tuple[str, bytes | _Unreadable]]:
    """(source name, bytes or error message) for a file, or for each file of a directory."""
    try:
        is_dir = stat.S_ISDIR(os.stat(path).st_mode)
    except OSError as exc:
        return [(path, _os_message(exc))]
    if not is_dir:
        # Any non-directory is read, so /dev/stdin and <(curl ...) work as sources.
        return [(path, _read_file(path, max_bytes))]
    try:
        # Sorted by name like the seed's sort.Strings (code-point order, which is
        # UTF-8 byte order); dot-files are skipped like its Glob("[^.]*").
        names = sorted(name for name in os.listdir(path) if not name.startswith("."))
    except OSError as exc:
        return [(path, _Unreadable(f"cannot list directory: {exc.strerror or exc}"))]
    result: list[tuple[str, bytes | _Unreadable]] = []
    for name in names:
        entry = os.path.join(path, name)
        try:
            st = os.stat(entry)  # follows symlinks: a link to a file is a file
        except OSError as exc:
            result.append((entry, _os_message(exc)))
            continue
        if stat.S_ISDIR(st.st_mode):
            continue  # no recursion into subdirectories
        if not stat.S_ISREG(st.st_mode):
            # A FIFO or socket would block the read; devices make no sense here.
            result.append((entry, _Unreadable("not a regular file")))
            continue
        result.append((entry, _read_file(entry, max_bytes)))
    return result


def _fetch(url: str, max_bytes: int, timeout: float) -> bytes | _Unreadable:
    """The body of an http(s) URL, or a message saying why it cannot be had.

    ``timeout`` bounds the connection and each read (urllib's socket timeout) and, by a
    deadline checked between reads, the whole transfer: a server that trickles bytes
    cannot hold the load open for longer than about twice the timeout.
    """
    scheme = url.split(":", 1)[0].lower()
    if scheme not in ("http", "https"):
        return _Unreadable(f"unsupported URL scheme {scheme!r} (only http and https are fetched)")
    timed_out = _Unreadable(f"timed out after {timeout:g} seconds")
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(url, headers={"User-Agent": "podsync"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status: int = response.status
            if not 200 <= status < 300:
                return _Unreadable(f"HTTP status {status} ({response.reason})")
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > max_bytes:
                return _too_large(max_bytes)
            chunks: list[bytes] = []
            total = 0
            while True:
                if time.monotonic() > deadline:
                    return timed_out
                chunk: bytes = response.read1(_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    return _too_large(max_bytes)
                chunks.append(chunk)
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:  # a status >= 400 (or a redirect not followed)
        exc.close()
        return _Unreadable(f"HTTP status {exc.code} ({exc.reason})")
    except urllib.error.URLError as exc:  # before a response: DNS, refused, TLS, timeout
        if isinstance(exc.reason, TimeoutError):
            return timed_out
        reason = exc.reason
        detail = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
        return _Unreadable(f"cannot fetch: {detail}")
    except TimeoutError:  # waiting for the status line or the body
        return timed_out
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return _Unreadable(f"cannot fetch: {str(exc) or type(exc).__name__}")


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
# Values: descriptions, strict primitives, checked scalars
# ---------------------------------------------------------------------------------------


class _Invalid(ValueError):
    """A value is wrong; the message says what was expected and what was given."""


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


def _one_of(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _expect_str(value: object) -> str:
    # cattrs' default would turn 42 into "42"; a number where text belongs is a mistake.
    if not isinstance(value, str):
        raise _Invalid(f"expected a string, got {_describe(value)}")
    # A raw NUL byte is refused as binary data, but YAML's escapes ("\0", "\x00",
    # "\u0000") and JSON's put one in a string. Every string podsync reads ends up as a
    # name, a path, an argument or an environment entry, which the kernel takes as C
    # strings: Docker would cut the value short or fail the create, so refuse it here,
    # with its path.
    if "\0" in value:
        raise _Invalid(
            f"{_describe(value)} contains a NUL character, which no engine can pass on "
            "(arguments, environment and paths are C strings)"
        )
    return value


def _expect_int(value: object) -> int:
    # YAML's true is a Python int subclass; "80" and 80.0 are not integers either.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Invalid(f"expected an integer, got {_describe(value)}")
    return value


def _expect_bool(value: object) -> bool:
    # bool("false") is True: only YAML booleans are booleans.
    if not isinstance(value, bool):
        raise _Invalid(f"expected true or false, got {_describe(value)}")
    return value


# Checked scalars: each NewType has a hook below that validates the value, so its error
# carries the path of the field.
_Name = NewType("_Name", str)  # a DNS-1123 label: pod names, namespaces, volume names
_ContainerName = NewType("_ContainerName", str)  # a DNS-1123 label, and not "net"
_PortName = NewType("_PortName", str)  # "" or a DNS-1123 label
_Uid = NewType("_Uid", str)
_Image = NewType("_Image", str)
_BindPath = NewType("_BindPath", str)  # an absolute path usable in a Docker bind
_OptionalBindPath = NewType("_OptionalBindPath", str)  # "" or a _BindPath
_WorkingDir = NewType("_WorkingDir", str)  # "" or an absolute path
_EnvName = NewType("_EnvName", str)
_HostIP = NewType("_HostIP", str)
_Scheme = NewType("_Scheme", str)
_APIVersion = NewType("_APIVersion", str)
_PodKind = NewType("_PodKind", str)
_ManifestVersion = NewType("_ManifestVersion", str)
_LegacyPullPolicy = NewType("_LegacyPullPolicy", str)  # holds a PullPolicy value
_ContainerPort = NewType("_ContainerPort", int)
_HostPort = NewType("_HostPort", int)
_Seconds = NewType("_Seconds", int)
_Count = NewType("_Count", int)  # a non-negative int64: v1beta1 memory bytes, milli-CPU
_GracePeriod = NewType("_GracePeriod", int)  # 0-MAX_GRACE_PERIOD seconds
_MilliCPU = NewType("_MilliCPU", int)  # a quantity (500m, 0.5, 2) in milli-CPU
_Bytes = NewType("_Bytes", int)  # a quantity (128Mi, 1G, 1e9) in bytes

_LABEL_MAX = 63
_UID_CHARS = frozenset(string.ascii_letters + string.digits + ".-")
_UID_MAX = 253
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NETWORK_CONTAINER = "net"


def _check_label(value: object) -> str:
    """A DNS-1123 label (RFC 1123): it becomes part of container and host names."""
    text = _expect_str(value)
    if not text:
        raise _Invalid("must not be empty")
    problem = dns_label_problem(text)
    if problem is not None:
        shown = _describe(text) if len(text) > _LABEL_MAX else repr(text)
        raise _Invalid(f"{shown} is not a valid DNS-1123 label: {problem}")
    return text


def _check_container_name(value: object) -> str:
    name = _check_label(value)
    if name == _NETWORK_CONTAINER:
        raise _Invalid(f"{name!r} is reserved for the pod's network container")
    return name


def _check_port_name(value: object) -> str:
    text = _expect_str(value)
    return text and _check_label(text)


def _check_uid(value: object) -> str:
    # The uid is a field of every container name, whose fields are separated by "_",
    # and the name of the pod's directory under the runtime's root: no "_", no "/",
    # and no leading "." or "-" (which keeps out "." and "..").
    text = _expect_str(value)
    if not text:
        raise _Invalid("must not be empty (leave it out to derive a uid)")
    if len(text) > _UID_MAX:
        raise _Invalid(f"must be at most {_UID_MAX} characters, got {len(text)}")
    for char in text:
        if char not in _UID_CHARS:
            raise _Invalid(
                f"{_describe(text)} is not a valid uid: {char!r} is not allowed "
                "(only letters, digits, '.' and '-')"
            )
    if text[0] in ".-":
        raise _Invalid(
            f"{_describe(text)} is not a valid uid: it must start with a letter or digit"
        )
    return text


def _check_image(value: object) -> str:
    text = _expect_str(value)
    if not text:
        raise _Invalid("must not be empty")
    if any(char.isspace() for char in text):
        raise _Invalid(f"{_describe(text)} is not a valid image reference: it contains whitespace")
    # The engine's reference grammar: a reference it would refuse on every pull and
    # create is refused here, with the file and path (see podsync._images).
    problem = image_reference_problem(text)
    if problem is not None:
        raise _Invalid(f"{_describe(text)} is not a valid image reference: {problem}")
    return text


def _check_path(value: object, *, optional: bool, bind: bool) -> str:
    text = _expect_str(value)
    if not text:
        if optional:
            return text
        raise _Invalid("must not be empty")
    if not text.startswith("/"):
        raise _Invalid(f"must be an absolute path, got {_describe(text)}")
    if bind and ":" in text:
        # Binds are passed to Docker as "<host>:<container>[:ro]" (seed makeBinds).
        raise _Invalid(f"must not contain ':' (Docker binds use it), got {_describe(text)}")
    return text


def _check_env_name(value: object) -> str:
    # The 2014 validation required C identifiers (util.IsCIdentifier); the variable is
    # passed to Docker as "NAME=value".
    text = _expect_str(value)
    if not _ENV_NAME.fullmatch(text):
        raise _Invalid(
            f"{_describe(text)} is not a valid environment variable name "
            "(letters, digits and '_', not starting with a digit)"
        )
    return text


def _check_host_ip(value: object) -> str:
    text = _expect_str(value)
    if text:
        try:
            ipaddress.ip_address(text)
        except ValueError:
            raise _Invalid(f"{_describe(text)} is not an IP address") from None
    return text


def _check_range(value: object, low: int, high: int) -> int:
    number = _expect_int(value)
    if not low <= number <= high:
        raise _Invalid(f"must be {low}-{high}, got {number}")
    return number


def _check_count(value: object) -> int:
    number = _expect_int(value)
    if number < 0:
        raise _Invalid(f"must not be negative, got {number}")
    if number > _INT64_MAX:
        raise _Invalid(f"must be at most {_INT64_MAX}, got {number}")
    return number


def _check_grace_period(value: object) -> int:
    # Kubernetes takes any non-negative int64; the grace period becomes Docker's stop
    # timeout, whole seconds that must fit an int on every platform.
    number = _check_count(value)
    if number > MAX_GRACE_PERIOD:
        raise _Invalid(f"must be at most {MAX_GRACE_PERIOD}, got {number}")
    return number


def _check_port_ref(value: object, _: object = None) -> int | str:
    """A port of an httpGet or tcpSocket action: a number, or the name of a container port."""
    if isinstance(value, str):
        return _check_label(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _check_range(value, 1, 65535)
    raise _Invalid(f"expected a port number or name, got {_describe(value)}")


def _check_exact(value: object, expected: str, hint: str = "") -> str:
    text = _expect_str(value)
    if text != expected:
        raise _Invalid(f"must be {expected!r}, got {_describe(text)}{hint}")
    return text


def _check_api_version(value: object) -> str:
    text = _expect_str(value)
    hint = ""
    if text.startswith("v1beta"):
        hint = " (a v1beta1 ContainerManifest has 'version: v1beta1' and no apiVersion or kind)"
    return _check_exact(text, "v1", hint)


def _check_manifest_version(value: object) -> str:
    # The 2014 validation accepted both (supportedManifestVersions); they read the same.
    text = _expect_str(value)
    if text not in ("v1beta1", "v1beta2"):
        raise _Invalid(f"must be 'v1beta1' or 'v1beta2', got {_describe(text)}")
    return text


_E = TypeVar("_E", bound=enum.Enum)
_T = TypeVar("_T")


def _choose(value: object, choices: Mapping[str, _E], default: _E, *, fold_case: bool) -> _E:
    """One of ``choices`` by name; the empty string means ``default`` (Go's zero value)."""
    text = _expect_str(value)
    if not text:
        return default
    for name, choice in choices.items():
        if text == name or (fold_case and text.lower() == name.lower()):
            return choice
    names = _one_of(list(choices))
    if fold_case:
        raise _Invalid(f"must be {names} (any case), got {_describe(text)}")
    close = [name for name in choices if name.lower() == text.lower()]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise _Invalid(f"must be {names}, got {_describe(text)}{hint}")


_PROTOCOLS = {"TCP": PortProtocol.TCP, "UDP": PortProtocol.UDP}
_RESTART_POLICIES = {
    "Always": RestartPolicy.ALWAYS,
    "OnFailure": RestartPolicy.ON_FAILURE,
    "Never": RestartPolicy.NEVER,
}
_DNS_POLICIES = {"ClusterFirst": DNSPolicy.CLUSTER_FIRST, "Default": DNSPolicy.DEFAULT}
_PULL_POLICIES = {
    "Always": PullPolicy.ALWAYS,
    "Never": PullPolicy.NEVER,
    "IfNotPresent": PullPolicy.IF_NOT_PRESENT,
}
# The 2014 internal names, compared case-insensitively like the seed's pullPoliciesEqual.
_LEGACY_PULL_POLICIES = {
    "PullAlways": PullPolicy.ALWAYS,
    "PullNever": PullPolicy.NEVER,
    "PullIfNotPresent": PullPolicy.IF_NOT_PRESENT,
}


def _check_scheme(value: object) -> str:
    text = _expect_str(value)
    if text not in ("", "HTTP", "HTTPS"):
        raise _Invalid(f"must be HTTP or HTTPS, got {_describe(text)}")
    return text or "HTTP"


# Kubernetes quantities (resource.Quantity): a decimal number, then a binary suffix
# (Ki = 2**10 ... Ei = 2**60), a decimal suffix (m = 1/1000, k = 10**3 ... E = 10**18)
# or a decimal exponent (e9, E-3). A YAML float like 1.0e+9 arrives as a Python float
# and is read through its repr, which is a quantity too.
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)|[eE](?P<exponent>[+-]?[0-9]+))?"
)
_SUFFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "m": Fraction(1, 1000),
    **{suffix: Fraction(10) ** (3 * (i + 1)) for i, suffix in enumerate("kMGTPE")},
    **{suffix + "i": Fraction(2) ** (10 * (i + 1)) for i, suffix in enumerate("KMGTPE")},
}
# Exponents beyond this are out of any int64 range (or round up to one unit) anyway;
# bounding them keeps 1e999999999 from building a huge number.
_MAX_EXPONENT = 40


def _quantity(value: object, *, scale: int, unit: str, examples: str) -> int:
    """A quantity in units of ``1/scale`` (1000 for milli-CPU, 1 for bytes).

    Fractions of a unit round up, as Kubernetes' ``Quantity.MilliValue`` / ``Value`` do:
    ``0.0001`` CPU is 1 milli-CPU and ``0.5`` bytes is 1 byte. Negative values and
    values beyond int64 are errors.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _Invalid(f"expected a quantity like {examples}, got {_describe(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise _Invalid(f"must be a finite number, got {_describe(value)}")
    text = value if isinstance(value, str) else repr(value)
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise _Invalid(
            f"{_describe(value)} is not a valid quantity: expected a number with an "
            f"optional suffix, like {examples}"
        )
    number = Fraction(Decimal(match["number"]))
    if number == 0:
        return 0
    if match["sign"] == "-":
        raise _Invalid(f"must not be negative, got {_describe(value)}")
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if exponent > _MAX_EXPONENT:
            raise _Invalid(f"{_describe(value)} is too large: at most {_INT64_MAX} {unit}")
        factor = Fraction(10) ** max(exponent, -_MAX_EXPONENT)
    else:
        factor = _SUFFIXES[match["suffix"] or ""]
    amount = math.ceil(number * factor * scale)
    if amount > _INT64_MAX:
        raise _Invalid(f"{_describe(value)} is too large: at most {_INT64_MAX} {unit}")
    return amount


def _milli_cpu(value: object) -> int:
    return _quantity(value, scale=1000, unit="milli-CPU", examples="500m, 0.5 or 2")


def _bytes(value: object) -> int:
    return _quantity(value, scale=1, unit="bytes", examples="128Mi, 1G or 512")


# ---------------------------------------------------------------------------------------
# Schema: attrs classes that mirror the YAML
# ---------------------------------------------------------------------------------------
#
# Attribute names are snake_case; the YAML key is the camelCase spelling (``_key``), or
# ``metadata["key"]`` where that differs (hostIP). ``metadata["hook"]`` replaces the
# structure hook of one field. The classes hold the shape only; rules that relate
# several values are checked when converting to the model.

_KEY = "key"
_HOOK = "hook"


def _key(attribute: attrs.Attribute[Any]) -> str:
    """The YAML key of a schema attribute: ``host_port`` is ``hostPort``, ``exec_`` is ``exec``."""
    explicit: str | None = attribute.metadata.get(_KEY)
    if explicit is not None:
        return explicit
    head, *rest = attribute.name.rstrip("_").split("_")
    return head + "".join(part.capitalize() for part in rest)


@attrs.frozen
class _Empty:
    """``{}``: emptyDir, and the three members of a v1beta1 restartPolicy."""


@attrs.frozen(kw_only=True)
class _ObjectMeta:
    name: _Name
    namespace: _Name = _Name("default")
    uid: _Uid | None = None
    # Accepted so that ordinary manifests load; podsync does not use them.
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class _HostPathSource:
    path: _BindPath


@attrs.frozen(kw_only=True)
class _VolumeV1:
    name: _Name
    host_path: _HostPathSource | None = None
    empty_dir: _Empty | None = None


@attrs.frozen(kw_only=True)
class _ExecAction:
    command: tuple[str, ...]


@attrs.frozen(kw_only=True)
class _HTTPGetV1Beta1:
    port: int | str = attrs.field(metadata={_HOOK: _check_port_ref})
    path: str = ""
    host: str = ""


@attrs.frozen(kw_only=True)
class _HTTPGetV1(_HTTPGetV1Beta1):
    scheme: _Scheme = _Scheme("HTTP")


@attrs.frozen(kw_only=True)
class _TCPSocketV1Beta1:
    port: int | str = attrs.field(metadata={_HOOK: _check_port_ref})


@attrs.frozen(kw_only=True)
class _TCPSocketV1(_TCPSocketV1Beta1):
    host: str = ""


@attrs.frozen(kw_only=True)
class _HandlerV1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1 | None = None
    tcp_socket: _TCPSocketV1 | None = None


@attrs.frozen(kw_only=True)
class _HandlerV1Beta1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1Beta1 | None = None


@attrs.frozen(kw_only=True)
class _ProbeV1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1 | None = None
    tcp_socket: _TCPSocketV1 | None = None
    initial_delay_seconds: _Seconds = _Seconds(0)


@attrs.frozen(kw_only=True)
class _ProbeV1Beta1:
    exec_: _ExecAction | None = None
    http_get: _HTTPGetV1Beta1 | None = None
    tcp_socket: _TCPSocketV1Beta1 | None = None
    initial_delay_seconds: _Seconds = _Seconds(0)


@attrs.frozen(kw_only=True)
class _LifecycleV1:
    post_start: _HandlerV1 | None = None
    pre_stop: _HandlerV1 | None = None


@attrs.frozen(kw_only=True)
class _LifecycleV1Beta1:
    post_start: _HandlerV1Beta1 | None = None
    pre_stop: _HandlerV1Beta1 | None = None


@attrs.frozen(kw_only=True)
class _EnvVarSchema:
    name: _EnvName
    value: str = ""


@attrs.frozen(kw_only=True)
class _PortSchema:
    name: _PortName = _PortName("")
    container_port: _ContainerPort
    host_port: _HostPort = _HostPort(0)
    protocol: PortProtocol = PortProtocol.TCP
    host_ip: _HostIP = attrs.field(default=_HostIP(""), metadata={_KEY: "hostIP"})


@attrs.frozen(kw_only=True)
class _VolumeMountSchema:
    name: _Name
    mount_path: _BindPath
    read_only: bool = False


@attrs.frozen(kw_only=True)
class _ResourceList:
    cpu: _MilliCPU | None = None
    memory: _Bytes | None = None


@attrs.frozen(kw_only=True)
class _Resources:
    limits: _ResourceList | None = None
    requests: _ResourceList | None = None


@attrs.frozen(kw_only=True)
class _SecurityContext:
    privileged: bool = False


@attrs.frozen(kw_only=True)
class _ContainerV1:
    name: _ContainerName
    image: _Image
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    working_dir: _WorkingDir = _WorkingDir("")
    env: tuple[_EnvVarSchema, ...] = ()
    ports: tuple[_PortSchema, ...] = ()
    volume_mounts: tuple[_VolumeMountSchema, ...] = ()
    resources: _Resources | None = None
    image_pull_policy: PullPolicy = PullPolicy.IF_NOT_PRESENT
    liveness_probe: _ProbeV1 | None = None
    lifecycle: _LifecycleV1 | None = None
    security_context: _SecurityContext | None = None
    termination_message_path: _OptionalBindPath = _OptionalBindPath("")


@attrs.frozen(kw_only=True)
class _PodSpecV1:
    containers: tuple[_ContainerV1, ...]
    volumes: tuple[_VolumeV1, ...] = ()
    restart_policy: RestartPolicy = RestartPolicy.ALWAYS
    dns_policy: DNSPolicy = DNSPolicy.CLUSTER_FIRST
    termination_grace_period_seconds: _GracePeriod | None = None


@attrs.frozen(kw_only=True)
class _PodV1:
    api_version: _APIVersion
    kind: _PodKind
    metadata: _ObjectMeta
    spec: _PodSpecV1


@attrs.frozen(kw_only=True)
class _PodItemV1:
    """A pod inside a List or PodList, where apiVersion and kind may be left out."""

    api_version: _APIVersion = _APIVersion("v1")
    kind: _PodKind = _PodKind("Pod")
    metadata: _ObjectMeta
    spec: _PodSpecV1


@attrs.frozen(kw_only=True)
class _ListMeta:
    resource_version: str = ""
    self_link: str = ""


@attrs.frozen(kw_only=True)
class _ListV1:
    api_version: _APIVersion
    kind: str
    metadata: _ListMeta | None = None
    items: tuple[_PodItemV1, ...]


def _flag(value: object, _: object = None) -> _Empty:
    # ``never: {}`` and ``never:`` (null) both set the member: Go would read the null
    # as "unset" and silently fall back to Always, the opposite of what was written.
    if value is None:
        return _Empty()
    return _CONVERTER.structure(value, _Empty)


@attrs.frozen(kw_only=True)
class _RestartPolicyV1Beta1:
    always: _Empty | None = attrs.field(default=None, metadata={_HOOK: _flag})
    on_failure: _Empty | None = attrs.field(default=None, metadata={_HOOK: _flag})
    never: _Empty | None = attrs.field(default=None, metadata={_HOOK: _flag})


@attrs.frozen(kw_only=True)
class _VolumeSourceV1Beta1:
    host_dir: _HostPathSource | None = None
    empty_dir: _Empty | None = None


@attrs.frozen(kw_only=True)
class _VolumeV1Beta1:
    name: _Name
    source: _VolumeSourceV1Beta1 | None = None


@attrs.frozen(kw_only=True)
class _ContainerV1Beta1:
    name: _ContainerName
    image: _Image
    command: tuple[str, ...] = ()
    working_dir: _WorkingDir = _WorkingDir("")
    ports: tuple[_PortSchema, ...] = ()
    env: tuple[_EnvVarSchema, ...] = ()
    memory: _Count = _Count(0)  # bytes
    cpu: _Count = _Count(0)  # milli-CPU
    volume_mounts: tuple[_VolumeMountSchema, ...] = ()
    liveness_probe: _ProbeV1Beta1 | None = None
    lifecycle: _LifecycleV1Beta1 | None = None
    termination_message_path: _OptionalBindPath = _OptionalBindPath("")
    privileged: bool = False
    image_pull_policy: _LegacyPullPolicy = _LegacyPullPolicy(PullPolicy.IF_NOT_PRESENT.value)


@attrs.frozen(kw_only=True)
class _ManifestV1Beta1:
    version: _ManifestVersion
    id: _Name
    uuid: _Uid | None = None
    volumes: tuple[_VolumeV1Beta1, ...] = ()
    containers: tuple[_ContainerV1Beta1, ...]
    restart_policy: _RestartPolicyV1Beta1 | None = None
    dns_policy: DNSPolicy = DNSPolicy.CLUSTER_FIRST


# ---------------------------------------------------------------------------------------
# The converter
# ---------------------------------------------------------------------------------------


def _structure_attrs_factory(cls: type[Any], converter: cattrs.BaseConverter) -> Callable[..., Any]:
    """Structure a schema class from a mapping with its camelCase keys, nothing else."""
    overrides: dict[str, Any] = {
        a.name: override(rename=_key(a), struct_hook=a.metadata.get(_HOOK))
        for a in attrs.fields(cls)
    }
    structure = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True, **overrides)

    def hook(value: object, type_: object) -> Any:
        if not isinstance(value, dict):
            raise _Invalid(f"expected a mapping, got {_describe(value)}")
        return structure(value, type_)

    return hook


def _structure_tuple_factory(type_: Any, converter: cattrs.BaseConverter) -> Callable[..., Any]:
    """``tuple[X, ...]`` from a YAML list only: cattrs would split ``"ls -l"`` into letters."""
    element = get_args(type_)[0]
    structure_element = converter.get_structure_hook(element)

    def hook(value: object, _: object) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise _Invalid(f"expected a list, got {_describe(value)}")
        result = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                result.append(structure_element(item, element))
            except Exception as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", []),
                    IterableValidationNote(f"Structuring item @ index {index}", index, element),
                ]
                errors.append(exc)
        if errors:
            raise IterableValidationError("While structuring a list", errors, type_)
        return tuple(result)

    return hook


def _structure_dict_factory(type_: Any, converter: cattrs.BaseConverter) -> Callable[..., Any]:
    """``dict[str, X]`` from a YAML mapping with string keys."""
    value_type = get_args(type_)[1]
    structure_value = converter.get_structure_hook(value_type)

    def hook(value: object, _: object) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _Invalid(f"expected a mapping, got {_describe(value)}")
        result = {}
        errors: list[Exception] = []
        for key, item in value.items():
            try:
                result[_expect_str(key)] = structure_value(item, value_type)
            except Exception as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", []),
                    IterableValidationNote(f"Structuring value @ key {key!r}", key, value_type),
                ]
                errors.append(exc)
        if errors:
            raise IterableValidationError("While structuring a mapping", errors, type_)
        return result

    return hook


def _is_tuple(type_: Any) -> bool:
    return get_origin(type_) is tuple


def _is_dict(type_: Any) -> bool:
    return get_origin(type_) is dict


def _simple(check: Callable[[object], Any]) -> Callable[[object, object], Any]:
    """A cattrs hook (value, type) from a one-argument check."""
    return lambda value, _: check(value)


def _make_converter() -> cattrs.Converter:
    # A private converter: hooks registered here affect nobody else (never the global
    # cattrs converter).
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    hooks: dict[Any, Callable[[object], Any]] = {
        str: _expect_str,
        int: _expect_int,
        bool: _expect_bool,
        _Name: _check_label,
        _ContainerName: _check_container_name,
        _PortName: _check_port_name,
        _Uid: _check_uid,
        _Image: _check_image,
        _BindPath: lambda v: _check_path(v, optional=False, bind=True),
        _OptionalBindPath: lambda v: _check_path(v, optional=True, bind=True),
        _WorkingDir: lambda v: _check_path(v, optional=True, bind=False),
        _EnvName: _check_env_name,
        _HostIP: _check_host_ip,
        _Scheme: _check_scheme,
        _APIVersion: _check_api_version,
        _PodKind: lambda v: _check_exact(v, "Pod"),
        _ManifestVersion: _check_manifest_version,
        _ContainerPort: lambda v: _check_range(v, 1, 65535),
        _HostPort: lambda v: _check_range(v, 0, 65535),  # 0: not published
        _Seconds: _check_count,
        _Count: _check_count,
        _GracePeriod: _check_grace_period,
        _MilliCPU: _milli_cpu,
        _Bytes: _bytes,
        PortProtocol: lambda v: _choose(v, _PROTOCOLS, PortProtocol.TCP, fold_case=True),
        RestartPolicy: lambda v: _choose(
            v, _RESTART_POLICIES, RestartPolicy.ALWAYS, fold_case=False
        ),
        DNSPolicy: lambda v: _choose(v, _DNS_POLICIES, DNSPolicy.CLUSTER_FIRST, fold_case=False),
        PullPolicy: lambda v: _choose(
            v, _PULL_POLICIES, PullPolicy.IF_NOT_PRESENT, fold_case=False
        ),
        _LegacyPullPolicy: lambda v: (
            _choose(v, _LEGACY_PULL_POLICIES, PullPolicy.IF_NOT_PRESENT, fold_case=True).value
        ),
    }
    for type_, check in hooks.items():
        converter.register_structure_hook(type_, _simple(check))
    converter.register_structure_hook_factory(_is_tuple, _structure_tuple_factory)
    converter.register_structure_hook_factory(_is_dict, _structure_dict_factory)
    converter.register_structure_hook_factory(attrs.has, _structure_attrs_factory)
    return converter


_CONVERTER = _make_converter()


def _index(index: object) -> str:
    if isinstance(index, int):
        return f"[{index}]"
    if isinstance(index, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", index):
        return f".{index}"
    return f"[{index!r}]"


def _unknown_key(key: object, known: Sequence[str]) -> str:
    message = f"unknown key {key!r}"
    if isinstance(key, str):
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        if close:
            message += f" (did you mean {close[0]!r}?)"
    return message


def _collect(exc: BaseException, path: str, out: list[tuple[str, str]]) -> None:
    """Flatten a cattrs error tree into (path, message) pairs, in the order found."""
    if isinstance(exc, ClassValidationError):
        keys = {a.name: _key(a) for a in attrs.fields(exc.cl)}
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            _collect(sub, f"{path}.{keys.get(note.name, note.name)}", out)
        for sub in without:
            _collect(sub, path, out)
    elif isinstance(exc, IterableValidationError):
        with_index, without_index = exc.group_exceptions()
        for sub, index_note in with_index:
            _collect(sub, path + _index(index_note.index), out)
        for sub in without_index:
            _collect(sub, path, out)
    elif isinstance(exc, ForbiddenExtraKeysError):
        known = [_key(a) for a in attrs.fields(exc.cl)]
        for key in sorted(exc.extra_fields, key=str):
            out.append((path, _unknown_key(key, known)))
    elif isinstance(exc, KeyError):  # the generated code's o['key'] for a missing key
        out.append((path, "required field missing"))
    elif isinstance(exc, _Invalid):
        out.append((path, str(exc)))
    else:  # pragma: no cover - every hook raises _Invalid; kept so nothing escapes
        out.append((path, f"invalid value ({type(exc).__name__}: {exc})"))


def _structure(data: object, cls: type[_T], path: str, out: list[tuple[str, str]]) -> _T | None:
    try:
        return _CONVERTER.structure(data, cls)
    except Exception as exc:
        _collect(exc, path, out)
        return None


# ---------------------------------------------------------------------------------------
# Schema to model
# ---------------------------------------------------------------------------------------


@attrs.frozen
class _Found:
    """A pod and where it was defined, for duplicate messages."""

    pod: Pod
    source_name: str
    name_path: str
    uid_path: str  # the name's path when the uid was derived

    def place(self, path: str) -> str:
        return f"{self.source_name}: {path}" if self.source_name else path


def _handler(
    exec_: _ExecAction | None,
    http_get: _HTTPGetV1Beta1 | None,
    tcp_socket: _TCPSocketV1Beta1 | None,
    allowed: Sequence[str],
    path: str,
    out: list[tuple[str, str]],
) -> Handler | None:
    given = [
        key
        for key, action in (("exec", exec_), ("httpGet", http_get), ("tcpSocket", tcp_socket))
        if action is not None
    ]
    if len(given) != 1:
        got = " and ".join(given) if given else "none"
        out.append((path, f"needs exactly one of {_one_of(allowed)}, got {got}"))
        return None
    if exec_ is not None:
        if not exec_.command:
            out.append((f"{path}.exec.command", "must not be empty"))
            return None
        return Handler(exec_command=exec_.command)
    if http_get is not None:
        scheme = http_get.scheme if isinstance(http_get, _HTTPGetV1) else "HTTP"
        return Handler(
            http_get=HTTPGetAction(
                port=http_get.port, path=http_get.path, host=http_get.host, scheme=scheme
            )
        )
    assert tcp_socket is not None
    host = tcp_socket.host if isinstance(tcp_socket, _TCPSocketV1) else ""
    return Handler(tcp_socket=TCPSocketAction(port=tcp_socket.port, host=host))


_PROBE_ACTIONS = ("exec", "httpGet", "tcpSocket")


def _probe(
    probe: _ProbeV1 | _ProbeV1Beta1 | None, path: str, out: list[tuple[str, str]]
) -> Probe | None:
    if probe is None:
        return None
    handler = _handler(probe.exec_, probe.http_get, probe.tcp_socket, _PROBE_ACTIONS, path, out)
    if handler is None:
        return None
    return Probe(handler=handler, initial_delay_seconds=probe.initial_delay_seconds)


def _lifecycle(
    lifecycle: _LifecycleV1 | _LifecycleV1Beta1 | None, path: str, out: list[tuple[str, str]]
) -> Lifecycle | None:
    if lifecycle is None:
        return None
    hooks: list[Handler | None] = []
    for key, handler in (("postStart", lifecycle.post_start), ("preStop", lifecycle.pre_stop)):
        if handler is None:
            hooks.append(None)
        elif isinstance(handler, _HandlerV1):
            hooks.append(
                _handler(
                    handler.exec_,
                    handler.http_get,
                    handler.tcp_socket,
                    _PROBE_ACTIONS,
                    f"{path}.{key}",
                    out,
                )
            )
        else:  # v1beta1 handlers had exec and httpGet only
            hooks.append(
                _handler(
                    handler.exec_, handler.http_get, None, ("exec", "httpGet"), f"{path}.{key}", out
                )
            )
    return Lifecycle(post_start=hooks[0], pre_stop=hooks[1])


def _ports(ports: Sequence[_PortSchema]) -> tuple[Port, ...]:
    return tuple(
        Port(
            container_port=p.container_port,
            host_port=p.host_port,
            protocol=p.protocol,
            name=p.name,
            host_ip=p.host_ip,
        )
        for p in ports
    )


def _env(env: Sequence[_EnvVarSchema]) -> tuple[EnvVar, ...]:
    return tuple(EnvVar(name=e.name, value=e.value) for e in env)


def _mounts(mounts: Sequence[_VolumeMountSchema]) -> tuple[VolumeMount, ...]:
    return tuple(
        VolumeMount(name=m.name, mount_path=m.mount_path, read_only=m.read_only) for m in mounts
    )


def _resource(
    resources: _Resources | None, name: str, unit: str, path: str, out: list[tuple[str, str]]
) -> int:
    """The limit of one resource; the request when only that is given; else 0 (unset).

    The 2014 kubelet had a single value per resource, which it passed to Docker as a
    limit (memory) and as a weight (CPU shares); a request that is the only value given
    is the best approximation of what the author wants.
    """
    if resources is None:
        return 0
    limit = getattr(resources.limits, name, None)
    request = getattr(resources.requests, name, None)
    if limit is not None and request is not None and request > limit:
        out.append(
            (
                f"{path}.resources.requests.{name}",
                f"must not exceed the limit ({limit} {unit}), got {request} {unit}",
            )
        )
    if limit is not None:
        return int(limit)
    return int(request) if request is not None else 0


def _container_v1(c: _ContainerV1, path: str, out: list[tuple[str, str]]) -> Container:
    return Container(
        name=c.name,
        image=c.image,
        command=c.command,
        args=c.args,
        working_dir=c.working_dir,
        env=_env(c.env),
        ports=_ports(c.ports),
        volume_mounts=_mounts(c.volume_mounts),
        cpu=_resource(c.resources, "cpu", "milli-CPU", path, out),
        memory=_resource(c.resources, "memory", "bytes", path, out),
        image_pull_policy=c.image_pull_policy,
        liveness_probe=_probe(c.liveness_probe, f"{path}.livenessProbe", out),
        lifecycle=_lifecycle(c.lifecycle, f"{path}.lifecycle", out),
        privileged=c.security_context.privileged if c.security_context else False,
        termination_message_path=c.termination_message_path,
    )


def _container_v1beta1(c: _ContainerV1Beta1, path: str, out: list[tuple[str, str]]) -> Container:
    return Container(
        name=c.name,
        image=c.image,
        # v1beta1's ``command`` replaced the image's CMD, not its ENTRYPOINT: the seed's
        # runContainer passed it as Docker's ``Cmd``. That is ``args`` in the v1 model.
        args=c.command,
        working_dir=c.working_dir,
        env=_env(c.env),
        ports=_ports(c.ports),
        volume_mounts=_mounts(c.volume_mounts),
        cpu=c.cpu,
        memory=c.memory,
        image_pull_policy=PullPolicy(c.image_pull_policy),
        liveness_probe=_probe(c.liveness_probe, f"{path}.livenessProbe", out),
        lifecycle=_lifecycle(c.lifecycle, f"{path}.lifecycle", out),
        privileged=c.privileged,
        termination_message_path=c.termination_message_path,
    )


def _volume(
    name: str,
    host: _HostPathSource | None,
    empty: _Empty | None,
    keys: tuple[str, str],
    path: str,
    out: list[tuple[str, str]],
) -> Volume:
    if host is not None and empty is not None:
        out.append((path, f"needs at most one of {keys[0]} or {keys[1]}, got both"))
    # No source at all means emptyDir (the 2014 validation default).
    return Volume(name=name, host_path=host.path if host is not None else None)


def _restart_v1beta1(
    policy: _RestartPolicyV1Beta1 | None, path: str, out: list[tuple[str, str]]
) -> RestartPolicy:
    if policy is None:
        return RestartPolicy.ALWAYS
    chosen = [
        (key, value)
        for key, flag, value in (
            ("always", policy.always, RestartPolicy.ALWAYS),
            ("onFailure", policy.on_failure, RestartPolicy.ON_FAILURE),
            ("never", policy.never, RestartPolicy.NEVER),
        )
        if flag is not None
    ]
    if len(chosen) > 1:
        got = " and ".join(key for key, _ in chosen)
        out.append((path, f"must set only one of always, onFailure or never, got {got}"))
    # None set means Always, as the 2014 validation defaulted it (and syncPod read it).
    return chosen[0][1] if chosen else RestartPolicy.ALWAYS


def _check_pod(
    containers: Sequence[Container],
    volumes: Sequence[Volume],
    spec_path: str,
    out: list[tuple[str, str]],
) -> None:
    """The rules that relate values across the pod (paths are the same in v1 and v1beta1)."""
    if not containers:
        out.append((f"{spec_path}.containers", "a pod needs at least one container"))
    volume_paths: dict[str, str] = {}
    for i, volume in enumerate(volumes):
        at = f"{spec_path}.volumes[{i}]"
        first = volume_paths.setdefault(volume.name, at)
        if first != at:
            out.append((f"{at}.name", f"duplicate volume name {volume.name!r} (first at {first})"))
    container_paths: dict[str, str] = {}
    host_ports: dict[tuple[int, PortProtocol], str] = {}
    for i, container in enumerate(containers):
        at = f"{spec_path}.containers[{i}]"
        first = container_paths.setdefault(container.name, at)
        if first != at:
            out.append(
                (f"{at}.name", f"duplicate container name {container.name!r} (first at {first})")
            )
        port_names: dict[str, str] = {}
        for j, port in enumerate(container.ports):
            port_at = f"{at}.ports[{j}]"
            if port.name:
                first = port_names.setdefault(port.name, port_at)
                if first != port_at:
                    out.append(
                        (f"{port_at}.name", f"duplicate port name {port.name!r} (first at {first})")
                    )
            if port.host_port:
                # One pod cannot publish the same host port twice (the seed's
                # checkHostPortConflicts). The seed keyed on the number alone; here
                # 53/TCP and 53/UDP are different ports, as they are to the kernel.
                key = (port.host_port, port.protocol)
                first = host_ports.setdefault(key, port_at)
                if first != port_at:
                    out.append(
                        (
                            f"{port_at}.hostPort",
                            f"host port {port.host_port}/{port.protocol.value} is already "
                            f"used by {first}",
                        )
                    )
        mount_paths: dict[str, str] = {}
        for j, mount in enumerate(container.volume_mounts):
            mount_at = f"{at}.volumeMounts[{j}]"
            if mount.name not in volume_paths:
                # The seed silently skipped such mounts (makeBinds).
                known = (
                    f"volumes: {', '.join(sorted(volume_paths))}"
                    if volume_paths
                    else "the pod has no volumes"
                )
                out.append(
                    (
                        f"{mount_at}.name",
                        f"no volume named {mount.name!r} in this pod ({known})",
                    )
                )
            first = mount_paths.setdefault(mount.mount_path, mount_at)
            if first != mount_at:
                out.append(
                    (
                        f"{mount_at}.mountPath",
                        f"duplicate mount path {mount.mount_path!r} (first at {first})",
                    )
                )
        _check_named_ports(container, at, out)


def _check_named_ports(container: Container, path: str, out: list[tuple[str, str]]) -> None:
    """A port given by name in a probe or hook must be a named port of the container."""
    names = {port.name for port in container.ports if port.name}
    handlers: list[tuple[str, Handler | None]] = []
    if container.liveness_probe is not None:
        handlers.append((f"{path}.livenessProbe", container.liveness_probe.handler))
    if container.lifecycle is not None:
        handlers.append((f"{path}.lifecycle.postStart", container.lifecycle.post_start))
        handlers.append((f"{path}.lifecycle.preStop", container.lifecycle.pre_stop))
    for at, handler in handlers:
        if handler is None:
            continue
        for key, action in (("httpGet", handler.http_get), ("tcpSocket", handler.tcp_socket)):
            if action is not None and isinstance(action.port, str) and action.port not in names:
                out.append((f"{at}.{key}.port", f"no port named {action.port!r} in this container"))


def _pod_from_v1(
    doc: _PodV1 | _PodItemV1, root: str, source: str, out: list[tuple[str, str]]
) -> tuple[Pod, str, str] | None:
    spec_path = f"{root}.spec"
    before = len(out)
    volumes = [
        _volume(
            v.name,
            v.host_path,
            v.empty_dir,
            ("hostPath", "emptyDir"),
            f"{spec_path}.volumes[{i}]",
            out,
        )
        for i, v in enumerate(doc.spec.volumes)
    ]
    containers = [
        _container_v1(c, f"{spec_path}.containers[{i}]", out)
        for i, c in enumerate(doc.spec.containers)
    ]
    _check_pod(containers, volumes, spec_path, out)
    if len(out) > before:
        return None
    meta = doc.metadata
    pod = _make_pod(
        meta.name,
        meta.namespace,
        meta.uid,
        source,
        containers,
        volumes,
        doc.spec.restart_policy,
        doc.spec.dns_policy,
        doc.spec.termination_grace_period_seconds,
    )
    uid_path = f"{root}.metadata.uid" if meta.uid is not None else f"{root}.metadata.name"
    return pod, f"{root}.metadata.name", uid_path


def _pod_from_v1beta1(
    doc: _ManifestV1Beta1, root: str, source: str, out: list[tuple[str, str]]
) -> tuple[Pod, str, str] | None:
    before = len(out)
    volumes = []
    for i, v in enumerate(doc.volumes):
        host = v.source.host_dir if v.source else None
        empty = v.source.empty_dir if v.source else None
        volumes.append(
            _volume(
                v.name, host, empty, ("hostDir", "emptyDir"), f"{root}.volumes[{i}].source", out
            )
        )
    containers = [
        _container_v1beta1(c, f"{root}.containers[{i}]", out) for i, c in enumerate(doc.containers)
    ]
    restart = _restart_v1beta1(doc.restart_policy, f"{root}.restartPolicy", out)
    _check_pod(containers, volumes, root, out)
    if len(out) > before:
        return None
    pod = _make_pod(
        doc.id, "default", doc.uuid, source, containers, volumes, restart, doc.dns_policy
    )
    uid_path = f"{root}.uuid" if doc.uuid is not None else f"{root}.id"
    return pod, f"{root}.id", uid_path


def _make_pod(
    name: str,
    namespace: str,
    uid: str | None,
    source: str,
    containers: Sequence[Container],
    volumes: Sequence[Volume],
    restart_policy: RestartPolicy,
    dns_policy: DNSPolicy,
    termination_grace_period_seconds: int | None = None,
) -> Pod:
    fields: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "source": source,
        "containers": tuple(containers),
        "volumes": tuple(volumes),
        "restart_policy": restart_policy,
        "dns_policy": dns_policy,
        "termination_grace_period_seconds": termination_grace_period_seconds,
    }
    if uid is not None:  # otherwise Pod derives it from source, namespace and name
        fields["uid"] = uid
    return Pod(**fields)


# ---------------------------------------------------------------------------------------
# Documents and streams
# ---------------------------------------------------------------------------------------

_NOT_A_POD = (
    "expected a Kubernetes Pod (apiVersion: v1, kind: Pod), a List or PodList of pods, "
    "or a v1beta1 ContainerManifest (version: v1beta1)"
)


def _read_document(
    data: object, root: str, source: str, out: list[tuple[str, str]]
) -> list[tuple[Pod, str, str]]:
    """The pods of one document (or of one item of a top-level list)."""
    if not isinstance(data, dict):
        out.append((root, f"{_NOT_A_POD}, got {_describe(data)}"))
        return []
    results: list[tuple[Pod, str, str] | None] = []
    if "kind" in data or "apiVersion" in data:
        kind = data.get("kind")
        if "kind" not in data:
            out.append((f"{root}.kind", "required field missing (Pod, List or PodList)"))
        elif not isinstance(kind, str):
            out.append((f"{root}.kind", f"expected a string, got {_describe(kind)}"))
        elif kind == "Pod":
            pod = _structure(data, _PodV1, root, out)
            if pod is not None:
                results.append(_pod_from_v1(pod, root, source, out))
        elif kind in ("List", "PodList"):
            pod_list = _structure(data, _ListV1, root, out)
            if pod_list is not None:
                results.extend(
                    _pod_from_v1(item, f"{root}.items[{i}]", source, out)
                    for i, item in enumerate(pod_list.items)
                )
        else:
            out.append(
                (f"{root}.kind", f"unsupported kind {kind!r}: expected Pod, List or PodList")
            )
    elif "version" in data:
        manifest = _structure(data, _ManifestV1Beta1, root, out)
        if manifest is not None:
            results.append(_pod_from_v1beta1(manifest, root, source, out))
    else:
        out.append((root, f"not a pod: {_NOT_A_POD}"))
    return [r for r in results if r is not None]


def _parse_stream(
    data: str | bytes, source_name: str, source: str
) -> tuple[list[_Found], list[Problem]]:
    """The pods of one YAML stream and the problems found in it."""
    try:
        text = _decode(data) if isinstance(data, bytes) else data
        documents = _load_documents(text)
    except _Invalid as exc:
        return [], [Problem(source_name, "", str(exc))]
    except yaml.YAMLError as exc:
        # The stream's structure cannot be trusted past a YAML error: report it alone.
        return [], [Problem(source_name, "", _yaml_message(exc))]
    if all(document is None for document in documents):
        return [], [Problem(source_name, "", "no pods found (the source is empty)")]
    found: list[_Found] = []
    problems: list[Problem] = []
    for number, document in enumerate(documents, start=1):
        if document is None:  # an empty document between two "---"
            continue
        prefix = f"document {number}: " if len(documents) > 1 else ""
        out: list[tuple[str, str]] = []
        items = document if isinstance(document, list) else [document]
        for i, item in enumerate(items):
            root = f"$[{i}]" if isinstance(document, list) else "$"
            for pod, name_path, uid_path in _read_document(item, root, source, out):
                found.append(_Found(pod, source_name, prefix + name_path, prefix + uid_path))
        problems.extend(Problem(source_name, prefix + path, message) for path, message in out)
    return found, problems


def _duplicates(found: Sequence[_Found]) -> list[Problem]:
    """Pods defined twice: the same namespace/name, or the same uid (both places named)."""
    problems: list[Problem] = []
    by_key: dict[str, _Found] = {}
    by_uid: dict[str, _Found] = {}
    for f in found:
        first = by_key.setdefault(f.pod.key, f)
        if first is not f:
            problems.append(
                Problem(
                    f.source_name,
                    f.name_path,
                    f"duplicate pod {f.pod.key} (first at {first.place(first.name_path)})",
                )
            )
            continue
        first = by_uid.setdefault(f.pod.uid, f)
        if first is not f:
            problems.append(
                Problem(
                    f.source_name,
                    f.uid_path,
                    f"duplicate uid {f.pod.uid!r}: already used by pod {first.pod.key} "
                    f"(at {first.place(first.uid_path)})",
                )
            )
    return problems


_SOURCE = re.compile(r"[a-z0-9]+")


def parse_pods(text: str | bytes, *, source_name: str = "", source: str = "api") -> tuple[Pod, ...]:
    """Parse the pods of one YAML stream; no I/O.

    The stream holds one or more YAML documents (separated by ``---``; empty documents
    are skipped, but a stream with no document at all is an error, "no pods found").
    Each document is one of:

    * a Kubernetes ``apiVersion: v1`` ``kind: Pod``. ``metadata.labels`` and
      ``metadata.annotations`` are accepted and ignored;
    * a ``kind: List`` or ``kind: PodList`` with ``items``, each a Pod (whose
      ``apiVersion`` and ``kind`` may be left out); an empty ``items`` is zero pods;
    * a v1beta1 ``ContainerManifest`` (``version: v1beta1``; ``id`` is the pod name,
      ``uuid`` its uid, the namespace is ``default``);
    * a list of the above (the seed's HTTP source accepted a list of manifests).

    The v1beta1 keys are the 2014 ones: ``imagePullPolicy`` is ``PullAlways``,
    ``PullNever`` or ``PullIfNotPresent`` in any case, ``memory`` is bytes and ``cpu``
    milli-CPU (integers), lifecycle handlers have ``exec`` or ``httpGet`` (probes also
    ``tcpSocket``), and the fields deprecated before the seed (``VolumeMount.path`` and
    ``mountType``, ``EnvVar.key``) are unknown keys.

    Pods without a uid get ``derive_pod_uid(source, namespace, name)``. Quantities round
    up to whole milli-CPU and bytes; a container's CPU and memory are its
    ``resources.limits``, or its ``requests`` for a resource without a limit. Empty
    policy strings mean the default (``Always``, ``ClusterFirst``, ``IfNotPresent``).
    Within a document, problems are listed field by field; the rules that relate
    several fields (duplicates, references) are checked once the shapes are right.

    Args:
        text: the YAML, as text or as UTF-8 bytes (a UTF-8 byte-order mark is allowed).
        source_name: names the stream in error messages, e.g. ``pods/web.yaml``.
        source: the pods' source (``file``, ``http``, ``api``); part of each pod's full
            name and of derived uids.

    Returns:
        The pods, in document order.

    Raises:
        ConfigError: the stream is not valid YAML (the problem gives the line and
            column), is refused for its shape (too deep, alias bomb), or any document is
            invalid; every problem found is listed. Two pods with the same
            ``namespace/name`` or uid are an error too.
        ValueError: ``source`` is not a lowercase word (it becomes part of container
            names).
    """
    if not _SOURCE.fullmatch(source):
        raise ValueError(f"source must be lowercase letters and digits, got {source!r}")
    found, problems = _parse_stream(text, source_name, source)
    problems.extend(_duplicates(found))
    if problems:
        raise ConfigError(problems)
    return tuple(f.pod for f in found)
