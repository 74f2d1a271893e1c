"""How a canonical form is declared and written: the machinery of the spec hash's forms
(``podsync.spec._hashing`` declares the forms themselves).

A canonical form is a JSON object with sorted keys and no whitespace: the text
``canonical_json`` spells for the same data. Each form is declared once, as a
``_Record`` of ``_Field``s (``_APP`` for an app container, ``_NETWORK`` for the network
container, in ``_hashing``), and the record writes the text straight from the model - no
dict is built and encoded on the way: the planner hashes every desired container on
every plan (40,000 of them for 10,000 pods), and building a dict and encoding it
generically costs about three times as much. ``canonical_spec`` and ``network_spec`` are
the same texts read back as JSON, so there is nothing to keep equal by hand.

A record compiles its fields into one function that formats the whole object with a
single f-string (as attrs and dataclasses generate their methods): each field
contributes a piece of source text, ``"key":<value text>``, in sorted key order.

Nothing here does I/O. Its names keep their leading underscore: shared with
``_hashing`` only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

# Nothing here is public API: ``_hashing`` declares its forms with it.
__all__: list[str] = []

_string = json.encoder.encode_basestring  # JSON string with ensure_ascii=False

_KEY = re.compile(r"[a-z][a-z0-9_]*")  # written into source text: nothing to escape

#: Marks a field that is always written (version 1's fields).
_ALWAYS: Any = object()


def _strings(items: Sequence[str]) -> str:
    return "[" + ",".join(map(_string, items)) + "]" if items else "[]"


@attrs.frozen
class _Kind:
    """How a value is spelled: an f-string replacement field for a value expression
    (``{value}`` in ``fragment`` is replaced by the expression), and what the fragment
    refers to."""

    fragment: str
    names: Mapping[str, Any] = attrs.field(factory=dict)

    def spell(self, value: str) -> str:
        return self.fragment.replace("{value}", value)


_STR = _Kind("{_string({value})}", {"_string": _string})
_INT = _Kind("{{value}:d}")
_BOOL = _Kind('{"true" if {value} else "false"}')
# A str enum (``enum.StrEnum``), by its value, which is the string itself.
_ENUM = _Kind("{_string({value})}", {"_string": _string})
_STRS = _Kind("{_strings({value})}", {"_strings": _strings})  # a tuple of strings
_NULLABLE_STR = _Kind('{"null" if {value} is None else _string({value})}', {"_string": _string})

#: A default that leaves the field out whenever the value is falsy (empty, 0, False,
#: None): most added fields.
_UNSET: Any = object()


@attrs.frozen
class _Field:
    """One key of a canonical form.

    Attributes:
        key: the JSON key (snake_case, after the model's attribute name).
        value: the value, as a Python expression over the record's parameters.
        kind: how the value is spelled.
        default: the value at which the field is left out; ``_ALWAYS`` writes it always,
            ``_UNSET`` leaves it out whenever the value is falsy.
    """

    key: str
    value: str
    kind: _Kind
    default: Any = _ALWAYS


class _Record:
    """A JSON object of the fields given, written in sorted key order.

    ``params`` are the parameters of ``text``, which the fields' value expressions read;
    ``helpers`` the functions those expressions call.
    """

    def __init__(
        self, params: str, *fields: _Field, helpers: Mapping[str, Any] | None = None
    ) -> None:
        keys = [f.key for f in fields]
        if not all(_KEY.fullmatch(key) for key in keys):
            raise ValueError(f"canonical-form keys are snake_case words: {keys}")
        if len(set(keys)) != len(keys):
            raise ValueError(f"repeated canonical-form key in {keys}")
        self.params = params
        self.fields = tuple(sorted(fields, key=lambda f: f.key))
        self.text: Callable[..., str] = self._compile(helpers or {})

    def _compile(self, helpers: Mapping[str, Any]) -> Callable[..., str]:
        names: dict[str, Any] = dict(helpers)
        lines = [f"def text({self.params}):"]
        body = []
        for n, f in enumerate(self.fields):
            names.update(f.kind.names)
            piece = f'"{f.key}":' + f.kind.spell(f"v{n}" if f.default is not _ALWAYS else f.value)
            if f.default is _ALWAYS:
                body.append(piece + ",")
                continue
            # Left out at its default: a piece of its own, empty then.
            names[f"d{n}"] = f.default
            if f.default is _UNSET:
                test = f"not v{n}"
            elif f.default is None:
                test = f"v{n} is None"
            else:
                test = f"v{n} == d{n}"
            lines.append(f"    v{n} = {f.value}")
            lines.append(f"    f{n} = '' if {test} else f'{piece},'")
            body.append(f"{{f{n}}}")
        if self.fields and self.fields[-1].default is _ALWAYS:
            # The last piece is always there: it needs no comma, nor the text a copy.
            body[-1] = body[-1][:-1]
            lines.append(f"    return f'{{{{{''.join(body)}}}}}'")
        else:
            lines.append(f"    return '{{' + f'{''.join(body)}'[:-1] + '}}'")
        source = "\n".join(lines)
        self.source = source
        exec(compile(source, f"<canonical form {self.fields[0].key}...>", "exec"), names)
        function: Callable[..., str] = names["text"]
        return function


def _OBJECT(record: _Record, args: str = "{value}") -> _Kind:
    """An object of ``record``, written from the arguments ``args`` (by default the
    value itself; an object read from several parameters names them)."""
    name = f"_r{id(record)}"
    return _Kind(f"{{{name}({args})}}", {name: record.text})


def _LIST(record: _Record) -> _Kind:
    """A list of objects of ``record`` (a one-parameter record), in order."""
    name = f"_r{id(record)}"
    return _Kind(f'[{{",".join(map({name}, {{value}}))}}]', {name: record.text})
