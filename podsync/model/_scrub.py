"""Secret values out of what podsync says: a ``Scrubber`` made from pods (or any value
holding ``SecretText`` s, an action) masks every Secret value they hold wherever it
appears in a message - what a host reports to etcd, and apply's failure messages.

A pod status holds no environment and no file, but its messages are the engine's and
the processes' words: a command expanded with ``$(PASSWORD)`` that the engine cannot
run comes back as ``exec: "s3cret": executable file not found``, a termination message
may print its environment. podsync knows each Secret value of a desired pod - the
loader hands it on as a ``SecretText`` (``podsync.model._secrets``) whose text is the
*shown* form and whose value only ``get_secret_value()`` gives - so the reporter asks
the pods for their values (``secret_texts``) and replaces each occurrence of one, in
every string of a record, with its shown form (``<secret ns/name key k>``): the same
mask ``podsync status`` and the plan's text show.

Two values per text: the whole value (``postgres://app:s3cret@db``) and each Secret's
piece of it (``s3cret``, found between the plain pieces around it). Longest first, so
that a value inside another is masked by the longer one's mask. A value shorter than
``MIN_SCRUBBED`` characters is not masked: a one-letter "value" would mask that letter
in every message and hide nothing a reader could not guess.

Contract: pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from podsync.model._pod import Pod
from podsync.model._secrets import SecretPart, SecretText, secret_texts

__all__: list[str] = []

#: The shortest Secret value that is masked.
MIN_SCRUBBED = 4


class Scrubber:
    """Masks the Secret values of some pods in text (``__call__``) and in JSON-able
    records (``record``)."""

    def __init__(self, masks: Mapping[str, str] | None = None) -> None:
        # value -> mask, longest value first.
        items = sorted((masks or {}).items(), key=lambda item: -len(item[0]))
        self._masks = tuple((v, m) for v, m in items if len(v) >= MIN_SCRUBBED)

    @classmethod
    def of_value(cls, value: Any) -> Scrubber:
        """A scrubber of every Secret value ``value`` holds (``secret_texts``: an
        action, a spec, a pod)."""
        masks: dict[str, str] = {}
        for text in secret_texts(value):
            masks.update(_masks_of(text))
        return cls(masks)

    @classmethod
    def of_pods(cls, pods: Iterable[Pod]) -> Scrubber:
        """A scrubber of every Secret value the pods hold (whose value is known)."""
        masks: dict[str, str] = {}
        for pod in pods:
            for text in secret_texts(pod):
                masks.update(_masks_of(text))
        return cls(masks)

    def __bool__(self) -> bool:
        return bool(self._masks)

    def __call__(self, text: str) -> str:
        """``text`` with each Secret value masked."""
        for value, mask in self._masks:
            if value in text:
                text = text.replace(value, mask)
        return text

    def record(self, value: Any) -> Any:
        """``value`` (dicts, lists and strings) with every string scrubbed."""
        if not self._masks:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list | tuple):
            return [self.record(v) for v in value]
        if isinstance(value, dict):
            return {k: self.record(v) for k, v in value.items()}
        return value


def _masks_of(text: SecretText) -> dict[str, str]:
    """The value of ``text`` and each Secret piece's value, with their masks."""
    if not text.known:
        return {}
    value = text.get_secret_value()
    masks = {value: text.shown}
    at, parts = 0, text.parts
    i = 0
    while i < len(parts):
        part = parts[i]
        if not isinstance(part, SecretPart):
            at += len(part) if value.startswith(part, at) else 0
            i += 1
            continue
        # Secret pieces side by side are one run; it ends where the next plain piece
        # begins (or at the end).
        j = i
        while j < len(parts) and isinstance(parts[j], SecretPart):
            j += 1
        end = len(value) if j == len(parts) else value.find(str(parts[j]), at)
        if end < at:
            end = len(value)
        masks[value[at:end]] = "".join(str(p) for p in parts[i:j])
        at, i = end, j
    return masks
