"""Spec comparison: why a running (or last) instance differs from its desired spec.

``spec_change`` answers with a short text for people (``image busybox:1 -> busybox:2``,
``--network-mode (engine default) -> none``) or ``None`` when the instance matches; the
planner replaces or restarts on its answer. It reads the instance's spec-hash and spec
labels, across hash versions (a change of the hash function restarts nothing): a label
of version 1 or 2 recorded the pod's labels and annotations, which version 3 leaves out
(issue 27: the kubelet's ``HashContainer`` covers the container's spec only), and they
are left out of the comparison too.

Contract: pure.

May import: the model and helpers (``_hashing``, ``_volumes``), ownership (``Instance``).
Never the planner modules that use it, a runtime, or anything that does I/O.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection
from typing import Any

from podsync.actions._options import PlanOptions
from podsync.model._pod import Container, Pod
from podsync.spec._hashing import (
    SpecHash,
    added_fields,
    canonical_spec_text,
    network_spec_text,
    older_init_record,
    removed_pod_fields,
    spec_digest,
)
from podsync.spec._ownership import Instance
from podsync.spec._resolv import ResolvConf
from podsync.spec._volumes import (
    DEFAULT_ROOT_DIR,
)

__all__: list[str] = []  # the planner's own


# The canonical-spec fields that come from options rather than from the pod, and how a
# message names them: the option, so that people know what they changed.
_OPTION_NAMES = {
    "cluster_dns": "--cluster-dns",
    "cluster_domain": "--cluster-domain",
    "host_resolv_conf": "host resolv.conf",
    "network_mode": "--network-mode",
    "root_dir": "--root-dir",
}
# What an absent option field means (it is written only when not at its default).
_OPTION_DEFAULTS = {"network_mode": "(engine default)", "root_dir": DEFAULT_ROOT_DIR}


def _show_option(key: str, value: Any) -> str:
    if value is None:
        return _OPTION_DEFAULTS.get(key, "(none)")
    if isinstance(value, dict):  # host_resolv_conf
        parts = []
        if value.get("nameservers"):
            parts.append("nameserver " + " ".join(map(str, value["nameservers"])))
        if value.get("searches"):
            parts.append("search " + " ".join(map(str, value["searches"])))
        return ", ".join(parts) or "(none)"
    return _show(value)


def _spec_difference(old: Any, new: Any, unrecorded: Collection[str] = ()) -> str:
    """A short, readable list of what differs between two canonical specs.

    ``unrecorded`` are fields the old spec's version did not record: their absence
    there is shown as "(not recorded)" rather than as the default.
    """
    if not isinstance(old, dict) or not isinstance(new, dict):
        return "spec differs"
    # Secret values are recorded as references with keyed digests (podsync.model._secrets):
    # another digest of the same Secret key is another value of it - said first, and
    # the fields it alone changed are not listed again.
    parts = [f"Secret {name} changed" for name in _changed_secrets(old, new)]
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b or (parts and _without_digests(a) == _without_digests(b)):
            continue
        scalar = (str, int, float, bool, type(None))
        option = _OPTION_NAMES.get(key)
        if option is not None:
            before = (
                "(not recorded)" if key in unrecorded and key not in old else _show_option(key, a)
            )
            parts.append(f"{option} {before} -> {_show_option(key, b)}")
        elif key == "init_containers":
            parts.append(_init_difference(a, b))
        elif isinstance(a, scalar) and isinstance(b, scalar):
            parts.append(f"{key} {_show(a)} -> {_show(b)}")
        elif key == "env":
            parts.append(_env_change(a, b))
        else:
            parts.append(f"{key} changed")
    if not parts:
        return "spec differs"
    if len(parts) > 3:
        parts = [*parts[:3], f"{len(parts) - 3} more"]
    return ", ".join(parts)


def _secret_digests(value: Any, found: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """The digest of each Secret key a canonical spec records, by (``ns/name``, key)."""
    if isinstance(value, dict):
        if set(value) == {"secret", "key", "digest"}:
            found[(str(value["secret"]), str(value["key"]))] = str(value["digest"])
        else:
            for item in value.values():
                _secret_digests(item, found)
    elif isinstance(value, list):
        for item in value:
            _secret_digests(item, found)
    return found


def _changed_secrets(old: Any, new: Any) -> list[str]:
    """The Secrets (``ns/name``) of which a key both specs use has another digest."""
    before, after = _secret_digests(old, {}), _secret_digests(new, {})
    return sorted({ref[0] for ref, digest in after.items() if before.get(ref, digest) != digest})


def _without_digests(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secret", "key", "digest"}:
            return {"secret": value["secret"], "key": value["key"]}
        return {k: _without_digests(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_digests(v) for v in value]
    return value


def _env_change(old: Any, new: Any) -> str:
    """``env changed``, naming the objects whose values changed (issue 14: an edited
    ConfigMap replaces the containers whose env it gives, and the plan says which)."""
    if not isinstance(old, list) or not isinstance(new, list):
        return "env changed"
    before = [e for e in old if isinstance(e, dict)]
    changed = [e for e in new if isinstance(e, dict) and e not in before]
    sources = sorted({str(e["source"]) for e in changed if e.get("source")})
    # A value expanded from one of them ($(VAR)) changed with it, and has no source.
    if sources:
        return f"env changed (from {', '.join(sources)})"
    return "env changed"


def _init_difference(old: Any, new: Any) -> str:
    """Which init containers a network container's record (``init_containers``, by name
    and spec hash) says changed: ``init container setup changed``."""

    def named(record: Any) -> dict[str, Any]:
        if not isinstance(record, list):
            return {}
        return {str(e.get("name")): e.get("spec_hash") for e in record if isinstance(e, dict)}

    before, after = named(old), named(new)
    changed = [n for n in after if n in before and before[n] != after[n]]
    words = [f"init container {n} changed" for n in changed]
    words += [f"init container {n} added" for n in after if n not in before]
    words += [f"init container {n} removed" for n in before if n not in after]
    if not words and list(before) != list(after):
        words.append("init containers reordered")
    return ", ".join(words) or "init containers changed"


def _show(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    return str(value)


#: How the desired spec reads as an older label would have recorded it, given that
#: label's spec and the desired spec (``spec_change``'s ``older_spec``).
OlderSpec = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def spec_change(
    instance: Instance,
    expected: SpecHash,
    expected_spec: Callable[[], dict[str, Any]],
    image: str,
    *,
    older_spec: OlderSpec | None = None,
) -> str | None:
    """Why the running ``instance`` differs from the desired spec, or ``None``.

    * Same hash version: the digests decide.
    * Another version (or a hash label podsync cannot read): the specs are compared field
      by field from the spec label, so a change of the hash function restarts nothing.
      A field that versions after the label's added (the option fields of version 2)
      is absent from its spec label, and is compared as absent - at its default, which
      the older form was equal to (the newer form writes these fields only when they
      are not at their default). So after an upgrade a container made with default
      options is kept, while one whose option is now set is rebuilt, once: nothing
      recorded that it has the setting, and keeping it would leave the option change
      unseen for as long as it runs. An older label whose digest equals the expected
      one needs no parsing: the two canonical forms are the same text. The fields an
      older label records and later versions do not write (version 3: the pod's
      ``labels`` and ``annotations``) are not compared, and a value the desired spec
      records by its pod field's reference (``{"from_pod": ...}``, an env value read
      from a label) is compared as the value it had with the labels the older label
      recorded: so a container of version 1 or 2 whose pod's labels or annotations
      changed is kept, as one of version 3 is, and one whose env now reads another
      label is replaced (``as_older``). ``older_spec`` (the network container's:
      ``older_network_spec``) gives the desired spec as an older label would hold it
      where the comparison needs more than that.
    * No hash label (a 2014 kubelet's container): a name hash of 0 means "do not
      compare" (seed); any other value was computed by Go's ``%#v`` and cannot be
      reproduced, so the only field podsync can compare, the image, decides.

    ``expected_spec`` is only called when the digests alone do not decide.
    """
    text = instance.hash_text
    if text is not None:
        if text == str(expected):
            return None
        label = SpecHash.parse(text)
        if label is not None and label.version == expected.version:
            return _describe_change(instance, expected_spec())
        older = label is not None and label.version < expected.version
        if older and label is not None and label.digest == expected.digest:
            return None
        if instance.spec_label is None:
            return None if instance.observed.image == image else _image_change(instance, image)
        try:
            old = json.loads(instance.spec_label)
        except ValueError:
            return "spec label unreadable"
        new = expected_spec()
        if old == new:
            return None
        if not older or label is None:
            return _spec_difference(old, new)
        if older_spec is not None:
            new = older_spec(old, new)
        old, new = as_older(old, new, label.version)
        if old == new:
            return None
        return _spec_difference(old, new, added_fields(label.version))
    if instance.legacy_hash == 0:
        return None
    return None if instance.observed.image == image else _image_change(instance, image)


def as_older(old: Any, new: Any, version: int) -> tuple[Any, Any]:
    """The spec label ``old`` of hash ``version`` and the desired spec ``new``, made
    comparable: the ``pod`` fields later versions stopped writing left out of ``old``,
    and in ``new`` each value recorded by reference (``from_pod``) that reads, from the
    labels and annotations ``old`` recorded, what ``old`` holds in its place, replaced
    by that text. So an edit of a label restarts nothing, while a reference to another
    label (which read another value then) is a change."""
    recorded = old.get("pod") if isinstance(old, dict) else None
    if not isinstance(recorded, dict):
        return old, new
    fields = {
        "labels": _string_map(recorded.get("labels")),
        "annotations": _string_map(recorded.get("annotations")),
    }
    gone = removed_pod_fields(version)
    old = {**old, "pod": {k: v for k, v in recorded.items() if k not in gone}}
    return old, _as_recorded(new, old, fields)


def _as_recorded(new: Any, old: Any, fields: dict[str, dict[str, str]]) -> Any:
    if isinstance(new, dict):
        if set(new) == {"from_pod"} and isinstance(old, str):
            return old if _value_then(new["from_pod"], fields) == old else new
        if isinstance(old, dict):
            return {k: _as_recorded(v, old.get(k), fields) for k, v in new.items()}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [_as_recorded(n, o, fields) for n, o in zip(new, old, strict=True)]
    return new


def _value_then(pieces: Any, fields: dict[str, dict[str, str]]) -> str | None:
    """The value a ``from_pod`` record's pieces had with the labels and annotations an
    older label recorded (``metadata.labels['k']``: its value, empty when absent, as
    the loader reads it); ``None`` for a record that is not one."""
    if not isinstance(pieces, list):
        return None
    text = []
    for piece in pieces:
        if isinstance(piece, str):
            text.append(piece)
            continue
        path = piece.get("field") if isinstance(piece, dict) else None
        base, _, key = str(path).partition("['")
        which = base.removeprefix("metadata.")
        if which not in fields or not key.endswith("']"):
            return None
        text.append(fields[which].get(key[:-2], ""))
    return "".join(text)


def older_network_spec(pod: Pod, root_dir: str) -> OlderSpec:
    """``spec_change``'s ``older_spec`` for ``pod``'s network container: its record of
    the init containers (``init_containers``, each by its spec hash) as an older
    network container holds it - the hashes over version 2's form, with the labels and
    annotations that container recorded (``older_init_record``). Without it, every
    pod with labels and init containers would be rebuilt and initialised again on an
    upgrade to version 3."""

    def as_recorded(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        if "init_containers" not in new:
            return new
        recorded = old.get("pod")
        labels = _string_map(recorded.get("labels") if isinstance(recorded, dict) else None)
        annotations = _string_map(
            recorded.get("annotations") if isinstance(recorded, dict) else None
        )
        return {**new, "init_containers": older_init_record(pod, root_dir, labels, annotations)}

    return as_recorded


def _string_map(value: Any) -> dict[str, str]:
    # A label is engine data: anything but a map of strings is taken as none.
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def _describe_change(instance: Instance, expected_spec: dict[str, Any]) -> str:
    if instance.spec_label is not None:
        try:
            return _spec_difference(json.loads(instance.spec_label), expected_spec)
        except ValueError:
            pass
    return "spec hash differs"


def _image_change(instance: Instance, image: str) -> str:
    return f"image {_show(instance.observed.image)} -> {image}"


def remembered_hash(pod: Pod, c: Container, root_dir: str, remember: bool) -> tuple[SpecHash, str]:
    """``c``'s spec hash and canonical text, from what an earlier plan of this very Pod
    object computed when it can (the same container object, the same root directory:
    everything the text is made of, as Pod and Container are immutable); with
    ``remember``, what is computed is kept for the next plan. Nothing outside the Pod
    object holds it, so a pod no longer planned takes its texts with it."""
    # Keyed by the container's id: only containers the pod holds (alive as long as the
    # pod) are remembered.
    key = (id(c), root_dir)
    known = _recall(pod, key)
    if known is not None:
        return known
    text = canonical_spec_text(c, pod, root_dir=root_dir)
    spec_hash = spec_digest(text)
    if remember and any(c is mine for mine in (*pod.containers, *pod.init_containers)):
        _keep(pod, key, spec_hash, text)
    return spec_hash, text


def network_inputs(options: PlanOptions, host_resolv: ResolvConf) -> tuple[dict[str, Any], str]:
    """The options that shape the network container, as ``network_spec`` takes them
    (what is hashed and compared is what the planner passes to the engine), and their
    ``network_memo_key``: the same for every pod of a plan."""
    inputs = {
        "network_mode": options.network_mode,
        "cluster_dns": options.cluster_dns,
        "cluster_domain": options.cluster_domain,
        "host_dns": host_resolv,
        # An init container's spec hash, which the network spec records, depends on the
        # root directory behind its binds.
        "root_dir": options.root_dir,
    }
    return inputs, network_memo_key(options.network_image, inputs)


def network_memo_key(image: str, inputs: dict[str, Any]) -> str:
    """What identifies the network container's options for ``remembered_network_hash``
    (the same for every pod of a plan: the planner makes it once)."""
    return repr((image, sorted(inputs.items())))


def remembered_network_hash(
    pod: Pod, image: str, inputs: dict[str, Any], remember: bool, *, key: str | None = None
) -> tuple[SpecHash, str]:
    """The network container's spec hash and canonical text (``network_spec_text`` of
    ``image`` and the option ``inputs``), remembered with the Pod object as
    ``remembered_hash`` does: the rest of the text is the pod's own. ``key`` is
    ``network_memo_key(image, inputs)``, when the caller has it already."""
    memo_key = ("network", key if key is not None else network_memo_key(image, inputs))
    known = _recall(pod, memo_key)
    if known is not None:
        return known
    text = network_spec_text(pod, image, **inputs)
    spec_hash = spec_digest(text)
    if remember:
        _keep(pod, memo_key, spec_hash, text)
    return spec_hash, text


def planned_before(pod: Pod) -> bool:
    """Whether this very Pod object was planned before (so admitted then); unlike
    ``replanned``, asking changes nothing."""
    return pod._planned is not None


def replanned(pod: Pod) -> bool:
    """Whether this very Pod object was planned before; from now on it was. Only a pod
    planned again remembers its texts: keeping them costs the first plan of every pod
    (a one-shot ``podsync plan``) more than it saves.

    Safe from any number of threads planning the same pod at once: each may answer
    ``False`` (none of them remembers, which changes no plan), and none wipes out what
    another kept meanwhile."""
    if pod._planned is not None:
        return True
    with _MEMO_LOCK:
        if pod._planned is None:
            object.__setattr__(pod, "_planned", ())  # frozen, but no part of the pod
            return False
    return True


# A pod remembers a few entries (one per container): a tuple of tuples of strings and
# numbers, which the garbage collector stops walking after one pass over it (a dict of
# them stays in its walks until a full collection: 10,000 of them slowed the first plan
# that made them).
#
# Threads may plan the same Pod objects at once ("Threads and processes" in docs/library.md).
# A reader takes the tuple as it is (one attribute read: a whole tuple, never a half
# written one), and every entry is a function of its key alone, so whoever computed it
# gives the same value. A writer replaces the tuple by a longer one, a read-modify-write
# that would lose another thread's entry written in between: writers take this lock (one
# for every pod: a write is rare, once per container of a pod planned again, and short).
_MEMO_LOCK = threading.Lock()


def _recall(pod: Pod, key: tuple[Any, ...]) -> tuple[SpecHash, str] | None:
    for known, version, digest, text in pod._planned or ():
        if known == key:
            return SpecHash(version, digest), text
    return None


def _keep(pod: Pod, key: tuple[Any, ...], spec_hash: SpecHash, text: str) -> None:
    entry = (key, spec_hash.version, spec_hash.digest, text)
    with _MEMO_LOCK:
        kept = tuple(e for e in pod._planned or () if e[0] != key)
        object.__setattr__(pod, "_planned", (*kept, entry))  # frozen, but no part of the pod
