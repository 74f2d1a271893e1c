"""Values read from the pod's own labels and annotations: the engine gets the value, the
spec hash the reference.

A container's ``env`` may take a value from the pod's metadata
(``valueFrom.fieldRef: metadata.labels['tier']`` or ``metadata.annotations['k']``), and
``$(VAR)`` carries such a value on into later ``env`` values, ``command`` and ``args``.
The kubelet reads these when it starts the container (``makeEnvironmentVariables``,
``pkg/kubelet/kubelet_pods.go``) and never changes the environment of a running one;
its container hash (``HashContainer``, ``pkg/kubelet/container/helpers.go``) covers the
container's spec only, so an edit of a label or an annotation restarts nothing. A
container that starts later (a crash, a replacement for another reason) gets the values
of that time.

podsync resolves the values when it reads the pod (``podsync.load.convert._env``), so the
resolved value is part of the container's spec. So that a label edit still restarts
nothing, the loader hands such a value on as a ``PodFieldText``: a ``str`` whose content
is the value (what the engine gets) and which also knows its pieces (``parts``) - plain
text of the pod file, and a ``PodFieldRef`` where the value of a label or an annotation
is. The spec hash (``podsync.spec._hashing``) writes the pieces, with the references in
place of the values (``field_record``): the same container with another label value has
the same hash, while another reference (another key, or a label turned into an
annotation) is another spec.

A value that holds a Secret's too is a ``SecretText`` (``podsync.model._secrets``), and
the Secret's rules win: such a value is recorded by its Secret's digest and its other
text, a label's value in it included (``join_values``).

Layering: model; pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from podsync.model._secrets import SecretText, join_texts, merge_pieces

# Shared by the loader and the spec hash; nothing here is public API.
__all__: list[str] = []


@attrs.frozen
class PodFieldRef:
    """Where a piece of a value came from: the pod's metadata field ``path``, as the pod
    file spells it (``metadata.labels['tier']``, ``metadata.annotations['team']``)."""

    path: str


class PodFieldText(str):
    """A ``str`` that holds the value of a label or an annotation of its pod, wholly or
    in part.

    Its content is the value (what the engine gets); ``parts`` are its pieces in order:
    plain text, and a ``PodFieldRef`` where a label's or annotation's value is. Equal
    to any ``str`` of the same content, as a ``str`` is: only the spec hash reads the
    parts.
    """

    parts: tuple[str | PodFieldRef, ...]

    def __new__(cls, value: str, parts: Iterable[str | PodFieldRef]) -> PodFieldText:
        self = super().__new__(cls, value)
        self.parts = tuple(parts)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy or a pickle keeps what the text is (str's own would drop it).
        return (PodFieldText, (str.__str__(self), self.parts))


def field_record(text: PodFieldText) -> dict[str, Any]:
    """What the spec hash records in place of ``text``: its pieces, each label's or
    annotation's as its reference (``{"field": "metadata.labels['tier']"}``). Equal for
    any values of the fields it refers to."""
    return {"from_pod": [p if isinstance(p, str) else {"field": p.path} for p in text.parts]}


def join_values(pieces: Iterable[str]) -> str:
    """The concatenation of ``pieces`` (a value ``$(VAR)`` expanded): a ``SecretText``
    when any piece holds a Secret's value (``join_texts``; the Secret's rules win), a
    ``PodFieldText`` when any piece holds a label's or annotation's, else a plain
    ``str``."""
    items = list(pieces)
    if any(isinstance(p, SecretText) for p in items):
        return join_texts(items)
    if not any(isinstance(p, PodFieldText) for p in items):
        return "".join(items)
    parts = merge_pieces(p.parts if isinstance(p, PodFieldText) else (p,) for p in items)
    return PodFieldText("".join(items), parts)
