"""One bad file is one bad file: the pods of the good streams when some are bad.

The modern kubelet's file source reads every non-dot file of its directory and, when it
cannot process one, logs it and runs the pods of the others (``extractFromDir``,
``pkg/kubelet/config/file.go``: "Do not return an error if only some files were
problematic"). ``kubectl apply -f DIR`` does the same for a one-shot command: it
applies what it could read, reports each file it could not, exits non-zero, and prunes
nothing after an error. ``load_pods(on_bad_file=...)`` reads so:

1. Each stream (a file, one file of a directory, a URL's body, an etcd key, standard
   input) is taken or refused whole: a stream with any problem - it cannot be read, it
   is not YAML, one of its documents or objects is invalid, it defines a pod an earlier
   stream defines - gives none of its pods, and ``on_bad_file`` hears its problems,
   each with its source and ``$.path``.
2. A refused stream's ConfigMaps and Secrets do not count either: the others are read
   again without them, which may refuse more streams (a volume of a ConfigMap that was
   only in a bad file), until no stream is refused.
3. A duplicate is the fault of the later definition (in source order, then document
   order): the first keeps its pod.

A missing ConfigMap or Secret key is not a problem of the stream: the container that
reads it carries it (``Container.config_error``, the kubelet's
``CreateContainerConfigError``), and the other containers and pods run.

What the caller does with the refused streams' pods is the caller's decision: they are
unknown. ``podsync plan``/``apply`` delete no pod of the kind of source (``file``,
``http``, ``etcd``) that had a refused stream; the loop keeps each file's last good
pods (``_source_set``).

Layering: part of the loader, below ``_config`` (which calls it), above ``_streams``
(whose streams and conversion it uses); no I/O of its own (``reread`` reads the files a
cache vouched for again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.exceptions import ConfigError, Problem
from podsync.load._streams import (
    SecretKey,
    _converted,
    _duplicates_in,
    _object_items,
    _objects_of,
    _Parsed,
    _Stream,
    _warned,
)
from podsync.model._pod import Pod

if TYPE_CHECKING:
    from podsync.load.convert._objects import _Objects

__all__: list[str] = []


def _good_pods(
    streams: Sequence[_Stream],
    objects: _Objects,
    secret_key: SecretKey,
    on_warning: Callable[[str], object] | None,
    on_bad_file: Callable[[ConfigError], object],
    reread: Callable[[Sequence[str]], Sequence[_Stream]],
) -> tuple[tuple[Pod, ...], dict[str, _Parsed], _Objects]:
    """The pods of the streams without a problem; each refused stream's problems go to
    ``on_bad_file``, once per stream, in source order.

    ``objects`` are the ConfigMaps and Secrets of all ``streams`` (``_objects_of``, whose
    problems the streams hold); ``reread`` reads again the files a cache vouched for,
    when refusing a stream took away objects their pods may use.

    Returns:
        The pods, what a ``PodFileCache`` is to hold of the regular files of the good
        streams, and the objects their pods were made with."""
    streams = list(streams)
    refused: dict[int, list[Problem]] = {}
    while True:
        kept = [i for i in range(len(streams)) if i not in refused]
        converted = {i: _converted(streams[i], objects) for i in kept}
        problems = {i: [*streams[i].problems, *converted[i][2]] for i in kept}
        found = ((i, f) for i in kept for f in converted[i][1])
        for number, problem in _duplicates_in(found):
            problems[number].append(problem)
        bad = [i for i in kept if problems[i]]
        if not bad:
            break
        refused.update((i, problems[i]) for i in bad)
        if not any(_object_items(streams[i]) for i in bad):
            continue  # the others' objects are what they were
        # Without the refused streams' objects: a cached file is read again (its pods
        # were made with the objects there were), the others are converted again.
        kept = [i for i in kept if i not in refused]
        vouched = [streams[i].source_name for i in kept if streams[i].entry is not None]
        again = {s.source_name: s for s in reread(vouched)} if vouched else {}
        for i in kept:
            if streams[i].entry is not None and streams[i].source_name in again:
                streams[i] = again[streams[i].source_name]
        # Copies: reading the objects adds their problems to the streams they read,
        # which the streams kept hold already.
        objects = _objects_of([attrs.evolve(streams[i], problems=[]) for i in kept], secret_key)
    for i in sorted(refused):
        on_bad_file(ConfigError(refused[i]))
    parsed: dict[str, _Parsed] = {}
    for i, (entry, _, _) in converted.items():
        if entry is not None:
            parsed[streams[i].source_name] = entry
    pods = _warned([f for i in sorted(converted) for f in converted[i][1]], on_warning)
    return pods, parsed, objects
