"""One poll of one source of the continuous loop: what it gave (``SourceRead``), and the
reader of files, directories and URLs (``FileReader``).

A reader remembers what it read last, with the parse cache's rule: a regular file whose
``FileKey`` did not change is not read again, and an HTTP body equal to the last one is
not parsed again. A source that cannot be read (a named file or a URL, a directory that
cannot be listed) is a read with an error: never "no pods". One file of a directory that
cannot be read or whose YAML does not load is one bad file (``SourceRead.bad``): the
modern kubelet's ``extractFromDir`` (``pkg/kubelet/config/file.go``) logs such a file
and runs the others, and skips the names that start with a dot, as ``_sources`` does.
The etcd source's reader is ``_etcd_watch.EtcdSource``; the set of sources that merges
the reads is ``_source_set.SourceSet``.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from podsync.host._node import NodeInfo
from podsync.load._sources import _URL, FileKey, HttpOptions, _read_sources, _Unreadable, shown_url
from podsync.load._streams import _load_stream, _Stream

__all__: list[str] = []


def source_kind(source: str) -> str:
    """The pod source of a SOURCE (``etcd`` for an etcd URL, ``http`` for another URL,
    else ``file``), as ``load_pods`` gives its pods."""
    if source[:7].lower() == "etcd://":
        return "etcd"
    return "http" if _URL.match(source) else "file"


def _stream_names(read: SourceRead) -> tuple[str, ...]:
    return tuple(s.source_name for s in read.streams)


@attrs.frozen
class SourceRead:
    """One poll of one source.

    Attributes:
        streams: its loaded streams (one per file; one for a URL), the bad ones left
            out.
        changed: whether anything differs from the poll before.
        error: why the source as a whole cannot be used as it is ("" when it can): it
            keeps everything it had.
        bad: the files of the source that cannot be used as they are now, by stream name
            (the file's path), with why: each keeps what it had, and the others are
            taken.
        names: every stream's name (the good and the bad), in order.
    """

    streams: tuple[_Stream, ...] = ()
    changed: bool = False
    error: str = ""
    bad: Mapping[str, str] = attrs.field(factory=dict)
    names: tuple[str, ...] = attrs.field(default=attrs.Factory(_stream_names, takes_self=True))


class FileReader:
    """Polls one source; remembers what its files were, to skip the unchanged."""

    def __init__(
        self,
        source: str,
        node: NodeInfo,
        max_bytes: int,
        http_timeout: float,
        http: HttpOptions | None = None,
    ) -> None:
        self._source = source  # a URL with its credentials: fetched, never shown
        self.source = shown_url(source)
        self.kind = source_kind(source)
        self._node = node
        self._max_bytes = max_bytes
        self._http_timeout = http_timeout
        self._http = http
        self._loaded: dict[str, tuple[FileKey | bytes, _Stream]] = {}
        self._last: object = None

    def poll(self) -> SourceRead:
        from podsync.load.convert._document import _Context

        def unchanged(path: str, key: FileKey) -> bool:
            known = self._loaded.get(path)
            return known is not None and known[0] == key

        streams: list[_Stream] = []
        loaded: dict[str, tuple[FileKey | bytes, _Stream]] = {}
        bad: dict[str, str] = {}
        names: list[str] = []
        for name, data, pod_source, file, key in _read_sources(
            [self._source], None, self._max_bytes, self._http_timeout, unchanged, http=self._http
        ):
            if isinstance(data, _Unreadable):
                if name == self.source:
                    # The source itself (a named file, a URL, a directory that cannot
                    # be listed): it keeps all it had.
                    self._loaded, self._last = {}, None
                    return SourceRead((), False, f"{name}: {data.message}")
                names.append(name)
                bad[name] = f"{name}: {data.message}"
                continue
            if data is None:  # a regular file the last poll read
                version, stream = self._loaded[name]
            else:
                version = key if key is not None else data
                known = self._loaded.get(name)
                if known is not None and known[0] == version:
                    stream = known[1]  # the same body again
                else:
                    stream = _load_stream(data, name, _Context(pod_source, self._node, file))
                    stream.key = key
            loaded[name] = (version, stream)
            names.append(name)
            if stream.problems:  # not YAML, empty, ...: one bad file
                bad[name] = "; ".join(str(p) for p in stream.problems)
            else:
                streams.append(stream)
        self._loaded = loaded
        # Streams are compared by identity: a stream read again is a new object.
        now = (tuple((s.source_name, id(s)) for s in streams), tuple(bad.items()))
        changed, self._last = now != self._last, now
        return SourceRead(tuple(streams), changed, "", bad, tuple(names))
