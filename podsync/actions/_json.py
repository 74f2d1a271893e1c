"""A plan's JSON form: saved by ``podsync plan --out``, shown by ``podsync show -o json``.

One private cattrs converter turns a ``Plan`` into plain data and back. Actions carry
an ``"action"`` tag (``create``, ``kill``, ``remove``, ``wait``, ``removepoddir``,
``writevolume``, ``createvolume``, ``removevolume``, ``pull``, ``removeimage``); enums are
written as their values, bytes (the files a ``writevolume`` writes) as base64 text. The
text is canonical (sorted keys, fixed indentation: indented down to each pod's actions,
each action on one line, without spaces), so equal plans give byte-identical JSON. Any
JSON layout of the same data reads back (plans saved fully indented by earlier versions
included). From format 11, a pod's plan leaves out what the rest of it says
(``_json_pods``), and a plan is always written in the format of this podsync.

The top-level ``format_version`` is checked on load: a plan written by an incompatible
podsync is refused instead of being misread. Format 3 added ``options``, the
``PlanOptions`` the plan was made with (``apply`` takes its root directory from them); an
older plan cannot say which root directory its paths belong to, so it is refused and has
to be made again. Format 4 made ``CreateSpec`` runtime-neutral (``join``/``network``,
``ports``, ``mounts``, ``milli_cpu`` instead of Docker's network mode, port and bind
strings and CPU shares); a format-3 plan is refused the same way.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs

from podsync.actions._actions import PLAN_FORMAT_VERSION, CreateSpec, Plan, PodAction, PodPlan
from podsync.actions._json_pods import compact_pod, expand_pod
from podsync.actions._options import Capability, PlanOptions
from podsync.exceptions import ConfigError
from podsync.model._secrets import SEALABLE_FIELDS as _SEALABLE
from podsync.model._secrets import SecretText, from_record, sealed_record
from podsync.model._volume import VolumeFile
from podsync.spec._volumes import NamedVolumeMount

if TYPE_CHECKING:
    import cattrs

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["plan_from_json", "plan_to_json"]


@functools.cache
def _converter(omit: bool = True) -> cattrs.Converter:
    """The plan's converter, made on first use: cattrs is imported only by a program
    that reads or writes a plan's JSON (made once: it is the same for every plan)."""
    import cattrs
    import cattrs.gen
    from cattrs.strategies import configure_tagged_union

    # Format 11 leaves every field at its default out (issue 33: a third of a create's
    # text was defaults); reading puts them back, as it always did for a missing field
    # that has a default.
    converter = cattrs.Converter(forbid_extra_keys=True, omit_if_default=omit)
    # (Before the specs' hooks, which take it when made.) A named volume's labels (a pod's
    # state volume, made at its network container's create) are a JSON object, written
    # only where there are some: other mounts read as before.
    converter.register_unstructure_hook(
        NamedVolumeMount,
        cattrs.gen.make_dict_unstructure_fn(
            NamedVolumeMount,
            converter,
            _cattrs_omit_if_default=omit,
            labels=cattrs.gen.override(omit_if_default=True, unstruct_hook=dict),
        ),
    )
    converter.register_structure_hook(
        NamedVolumeMount,
        cattrs.gen.make_dict_structure_fn(
            NamedVolumeMount,
            converter,
            labels=cattrs.gen.override(struct_hook=_labels_from_json),
        ),
    )
    # Before the union of actions, whose functions take the spec's hooks when made.
    _seal_create_specs(converter, omit)

    # VolumeFile.data (a WriteVolume's files): bytes, as base64 text.
    def structure_bytes(value: Any, _: Any) -> bytes:
        if not isinstance(value, str):
            raise ValueError(f"expected base64 text, got {value!r}")
        return base64.b64decode(value.encode("ascii"), validate=True)

    converter.register_unstructure_hook(bytes, lambda value: base64.b64encode(value).decode())
    converter.register_structure_hook(bytes, structure_bytes)
    _seal_volume_files(converter, omit)

    configure_tagged_union(
        PodAction, converter, tag_name="action", tag_generator=lambda cls: cls.__name__.lower()
    )

    # HTTPGetAction.port / TCPSocketAction.port: a number or a port name, kept as is.
    def structure_port(value: Any, _: Any) -> int | str:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"expected a port number or name, got {value!r}")
        return value

    converter.register_structure_hook(int | str, structure_port)

    # PlanOptions.ready_sources: a set, written sorted so the text stays canonical.
    converter.register_unstructure_hook(
        frozenset[str] | None, lambda value: None if value is None else sorted(value)
    )
    # PlanOptions.capabilities: a set too, written sorted (format 10; an older plan has
    # none, and reads as made for every capability, as it was).
    converter.register_unstructure_hook_func(
        lambda kind: kind == frozenset[Capability], lambda value: sorted(c.value for c in value)
    )
    # ... and written only when some are missing: a plan for a full runtime reads as
    # before.
    converter.register_unstructure_hook(
        PlanOptions,
        cattrs.gen.make_dict_unstructure_fn(
            PlanOptions,
            converter,
            _cattrs_omit_if_default=omit,
            capabilities=cattrs.gen.override(omit_if_default=True),
        ),
    )
    # A plan without Secret values says nothing of its sources (and reads as before);
    # its format is always written (a reader checks it first).
    converter.register_unstructure_hook(
        Plan,
        cattrs.gen.make_dict_unstructure_fn(
            Plan,
            converter,
            _cattrs_omit_if_default=omit,
            format_version=cattrs.gen.override(omit_if_default=False),
            sources=cattrs.gen.override(omit_if_default=True),
        ),
    )
    return converter


def _labels_from_json(value: Any, _: Any) -> tuple[tuple[str, str], ...]:
    """``NamedVolumeMount.labels`` from its JSON object: (key, value) pairs, sorted."""
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"expected an object of strings, got {value!r}")
    return tuple(sorted(value.items()))


def _seal_volume_files(converter: cattrs.Converter, omit: bool) -> None:
    """A secret volume's file is written as its Secret reference and keyed digest
    (``secret``), never its bytes; read back, its value is not known (``known`` False,
    ``data`` empty) until the sources give it again (apply refuses it before)."""
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    unstructure = make_dict_unstructure_fn(
        VolumeFile,
        converter,
        _cattrs_omit_if_default=omit,
        secret=override(omit_if_default=True),
        known=override(omit=True),
    )
    structure = make_dict_structure_fn(VolumeFile, converter, known=override(omit=True))

    def unstructure_file(file: VolumeFile) -> dict[str, Any]:
        data = unstructure(file)
        if file.secret is not None:
            data.pop("data", None)
        return data

    def structure_file(data: Any, _: Any) -> VolumeFile:
        if isinstance(data, dict) and data.get("secret") is not None:
            if "data" in data:
                raise ValueError("a Secret's file holds no data in a saved plan")
            sealed = structure({**data, "data": ""}, VolumeFile)
            return attrs.evolve(sealed, known=False)
        return structure(data, VolumeFile)

    converter.register_unstructure_hook(VolumeFile, unstructure_file)
    converter.register_structure_hook(VolumeFile, structure_file)


def _seal_create_specs(converter: cattrs.Converter, omit: bool) -> None:
    """A create's Secret values are written as their ``sealed_record`` (references and
    keyed digests), never as themselves; read back, they are ``SecretText`` s whose
    value is not known until ``unseal`` puts it back (apply refuses them before)."""
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

    unstructure = make_dict_unstructure_fn(CreateSpec, converter, _cattrs_omit_if_default=omit)
    structure = make_dict_structure_fn(CreateSpec, converter)

    def unstructure_spec(spec: CreateSpec) -> dict[str, Any]:
        data = unstructure(spec)
        for key in _SEALABLE:
            items = data.get(key)
            # A plain str is the common case: one type test per item.
            if items and any(type(item) is SecretText for item in items):
                data[key] = [
                    sealed_record(item) if type(item) is SecretText else item for item in items
                ]
        return data

    def structure_spec(data: Any, _: Any) -> CreateSpec:
        sealed: dict[str, tuple[str, ...]] = {}
        if isinstance(data, dict):
            data = dict(data)
            for key in _SEALABLE:
                items = data.get(key)
                if not isinstance(items, list) or all(isinstance(i, str) for i in items):
                    continue
                texts = [from_record(i) if isinstance(i, dict) else i for i in items]
                if not all(isinstance(t, str) for t in texts):
                    raise ValueError(f"{key}: expected strings and Secret references")
                sealed[key] = tuple(texts)  # type: ignore[arg-type]
                data[key] = [str(t) for t in texts]
        spec = structure(data, CreateSpec)
        return attrs.evolve(spec, **sealed) if sealed else spec  # type: ignore[arg-type]

    converter.register_unstructure_hook(CreateSpec, unstructure_spec)
    converter.register_structure_hook(CreateSpec, structure_spec)


# Formats this podsync knows it cannot read, and why, so that an old saved plan is
# refused with what to do rather than with a bare version mismatch.
_OLDER_FORMATS = {
    "1": "its actions name pods without their uids",
    "2": "it does not say which options it was made with",
    "3": "its creates are spelled in Docker's terms",
    "4": "it was planned before resources, security settings and the other pod file "
    "fields were honoured",
}


# Formats read as they are: 5 is 6 without the actions and fields 6 added, 6 is 7
# without those 7 added (a format-6 plan's creates bind emptyDir host directories, as
# the podsync that made it did), 7 is 8 without the fields 8 added (its kills without
# ``concurrent`` and ``after`` run one after the other, as the podsync that made it ran them),
# 8 is 9 without the reasons and fields 9 added (see ``PLAN_FORMAT_VERSION``), 9 is
# 10 without those 10 added, with the process of its creates under its earlier names
# (``_PROCESS_NAMES``), and 10 is 11 with every field written, defaults and repeats
# included (11 leaves them out: ``_json_pods``).
_READABLE_FORMATS = frozenset({PLAN_FORMAT_VERSION, "10", "9", "8", "7", "6", "5"})

# The formats whose pod plans leave out what the rest of the pod plan says
# (``_json_pods``): 11 on. Data of the formats before is read as it is.
_COMPACT_FORMATS = frozenset({PLAN_FORMAT_VERSION})
# What a pod plan of format 11 is read with from the plan's options (``expand_pod``).
_POD_CONTEXT = ("network_image", "cluster_dns", "cluster_domain")


def _pod_context(options: Any) -> tuple[str, str, str]:
    """The options ``expand_pod`` takes, from the plan's options data (a field left
    out is at its default; what is not text is left for the converter to refuse)."""
    fields = attrs.fields_dict(PlanOptions)
    given = options if isinstance(options, dict) else {}
    values = [given.get(name, fields[name].default) for name in _POD_CONTEXT]
    first, second, third = (v if isinstance(v, str) else "" for v in values)
    return first, second, third


# The formats whose creates name the process as Docker does, each old key with its
# format-10 name (Kubernetes' ``command`` was the ``entrypoint``, ``args`` the
# ``command``): both are renamed at once, since each old name is the other's new one.
_PROCESS_NAMES = {"entrypoint": "command", "command": "args"}
_DOCKER_NAMED_PROCESS = frozenset({"9", "8", "7", "6", "5"})


def _kubernetes_named(data: dict[str, Any]) -> dict[str, Any]:
    """A plan's data of a format before 10 with its creates' ``entrypoint`` and
    ``command`` renamed to ``command`` and ``args``; anything else is left for the
    converter to read (and refuse, when it is not a plan)."""
    pods = data.get("pods")
    if not isinstance(pods, list):
        return data
    renamed = []
    for pod in pods:
        actions = pod.get("actions") if isinstance(pod, dict) else None
        if isinstance(actions, list):
            pod = {**pod, "actions": [_create_renamed(a) for a in actions]}
        renamed.append(pod)
    return {**data, "pods": renamed}


def _create_renamed(action: Any) -> Any:
    """One action of a plan before format 10, its spec's process renamed if it is a
    create."""
    if not isinstance(action, dict) or action.get("action") != "create":
        return action
    spec = action.get("spec")
    if not isinstance(spec, dict):
        return action
    spec = {_PROCESS_NAMES.get(key, key): value for key, value in spec.items()}
    return {**action, "spec": spec}


def plan_to_json(plan: Plan) -> str:
    """The plan as canonical JSON text (ends with a newline)."""
    return "".join(plan_json_chunks(plan))


# Containers nested this deep or deeper are written on one line. Down to a pod's list of
# actions everything is indented; each action is one line (a reader finds each action
# on a line of its own; indented, a create took about 300 lines per pod, and format 11
# has no room for it: 2 KB a pod, issue 33). That keeps the bulk of the encoding in the
# C encoder: json.dumps with indent=2 uses the pure-Python encoder, 4x slower on a plan
# of 10,000 pods.
_COMPACT_DEPTH = 4

# sort_keys and ensure_ascii=False as for the indented part; no space after the
# separators (format 11: about 150 bytes of a pod's 2 KB).
_compact = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode

# A string's JSON text, non-ASCII kept (the C function where there is one).
_string = json.encoder.encode_basestring


def _layout(value: Any, indent: str, depth: int, out: list[str]) -> None:
    """Append ``value``'s text to ``out``: objects and arrays nested less than
    ``_COMPACT_DEPTH`` deep indented by two spaces a level (as ``json.dumps(indent=2)``
    does, ``indent`` being the current line's), deeper ones on one line."""
    if isinstance(value, str):
        out.append(_string(value))
        return
    if depth >= _COMPACT_DEPTH or not value or not isinstance(value, dict | list):
        out.append(_compact(value))
        return
    inner = indent + "  "
    if isinstance(value, dict):
        separator = "{\n" + inner
        for key in sorted(value):
            out.append(separator)
            out.append(_string(key))
            out.append(": ")
            _layout(value[key], inner, depth + 1, out)
            separator = ",\n" + inner
        out.append("\n" + indent + "}")
    else:
        separator = "[\n" + inner
        for item in value:
            out.append(separator)
            _layout(item, inner, depth + 1, out)
            separator = ",\n" + inner
        out.append("\n" + indent + "]")


def _dumps(data: Any, indent: str = "", depth: int = 0) -> str:
    out: list[str] = []
    _layout(data, indent, depth, out)
    return "".join(out)


def plan_json_chunks(plan: Plan) -> Iterator[str]:
    """``plan_to_json``'s text in pieces, for a writer that streams it: each pod plan is
    turned into plain data and encoded only when its turn comes, so a plan of 10,000
    pods is never held a second time as data, nor as one string."""
    # The plan without its pods, then the pods one by one where the sorted keys put
    # them: the text is what _dumps gives for the whole.
    # Always the format this podsync writes, whichever format a plan was read from.
    head = _converter().unstructure(attrs.evolve(plan, pods=(), format_version=PLAN_FORMAT_VERSION))
    if not plan.pods:
        yield _dumps(head) + "\n"
        return
    keys = sorted(head)
    before = {k: head[k] for k in keys if k < "pods"}
    after = {k: head[k] for k in keys if k > "pods"}
    # '{\n  "a": ...,\n  "b": ...\n}' minus its closing line, then the pods' key.
    text = _dumps(before)
    yield (text[:-2] + ",\n" if before else "{\n") + '  "pods": [\n'
    last = len(plan.pods) - 1
    options = plan.options
    context = (options.network_image, options.cluster_dns, options.cluster_domain)
    for n, pod in enumerate(plan.pods):
        # An element of a list two levels deep (the top object, the pods' list).
        data = compact_pod(_converter().unstructure(pod, PodPlan), context)
        element = _dumps(data, "    ", 2)
        yield "    " + element + (",\n" if n < last else "\n")
    text = _dumps(after)
    yield "  ]" + ("," + text[1:] if after else "\n}") + "\n"


def _written_out(plan: Plan) -> dict[str, Any]:
    """The plan's data with every field written, as format 10 wrote it (the version
    aside): for the tests that turn it into older formats' data."""
    return _converter(omit=False).unstructure(plan)  # type: ignore[no-any-return]


def plan_from_json(text: str | bytes, *, source: str = "") -> Plan:
    """Read a plan written by ``plan_to_json``.

    Args:
        text: the JSON text.
        source: where it came from (a file name), for error messages.

    Raises:
        ConfigError: the text is not JSON, not a plan, or of another ``format_version``.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError.single(source, "$", f"not a JSON plan: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError.single(source, "$", "not a JSON plan: expected an object")
    version = data.get("format_version")
    older = _OLDER_FORMATS.get(version) if isinstance(version, str) else None
    if older is not None:
        raise ConfigError.single(
            source,
            "$.format_version",
            f"plan format {version} was written by an older podsync ({older}); "
            "make the plan again with `podsync plan --out FILE`",
        )
    if version not in _READABLE_FORMATS:
        raise ConfigError.single(
            source,
            "$.format_version",
            f"this podsync reads plan format {PLAN_FORMAT_VERSION}, got {version!r}; "
            "make the plan again with this podsync (podsync plan --out FILE)",
        )
    if version in _DOCKER_NAMED_PROCESS:
        data = _kubernetes_named(data)
    if version in _COMPACT_FORMATS and isinstance(data.get("pods"), list):
        context = _pod_context(data.get("options"))
        try:
            data = {**data, "pods": [expand_pod(pod, context) for pod in data["pods"]]}
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            # Data no podsync wrote (expand_pod trusts the shapes it writes).
            raise ConfigError.single(source, "$.pods", f"invalid plan: {exc!r}") from None
    try:
        return _converter().structure(data, Plan)
    except Exception as exc:  # cattrs raises exception groups of many kinds
        import cattrs

        messages = (
            cattrs.transform_error(exc)
            if isinstance(exc, cattrs.BaseValidationError)
            else [str(exc)]
        )
        raise ConfigError.single(source, "$", "invalid plan: " + "; ".join(messages)) from None
