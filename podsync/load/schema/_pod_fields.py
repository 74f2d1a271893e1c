"""The schema of the pod fields podsync honours beyond the 2014 ones: a container's
``resources``, a pod's ``hostAliases`` and ``schedulingGates``, and the checked kinds of
value they and the pod's metadata, hostname and subdomain hold.

Contract: shapes only, as ``_pod``'s classes (whose converter structures these too:
``_pod._make_converter`` maps each ``NewType`` here to its check in ``_scalars``);
``convert._pod`` holds the rules. No I/O; nothing here is public API.
"""

from __future__ import annotations

from typing import Any, NewType

import attrs

# Nothing here is public API: ``_pod`` uses these classes and types.
__all__: list[str] = []

_AsWritten = NewType("_AsWritten", object)  # kept as written: convert._pod decides
_Name = NewType("_Name", str)  # a DNS-1123 label: pod names, namespaces, volume names
_OptionalName = NewType("_OptionalName", str)  # "" or a DNS-1123 label
_LabelValue = NewType("_LabelValue", str)
_QualifiedName = NewType("_QualifiedName", str)  # example.com/name
_AliasIP = NewType("_AliasIP", str)
_Subdomain = NewType("_Subdomain", str)  # a DNS-1123 subdomain
_NO_NAME = _OptionalName("")
_DEFAULT_NAMESPACE = _Name("default")

# The metadata that marks an attribute as no YAML key (``_pod``'s converter omits it).
_INTERNAL = "internal"


def _ignored_keys() -> Any:
    """The attribute that records the keys of ``_IGNORED`` a mapping held (not a YAML key).

    The structure hook fills it with the keys whose values asked for something (not
    null, ``[]`` or ``{}``), in document order; ``convert._document`` turns them into the pod's
    warning.
    """
    return attrs.field(default=(), metadata={_INTERNAL: True})


@attrs.frozen(kw_only=True)
class _Resources:
    """A container's ``resources``: resource name -> amount as written. The name decides
    the unit, or that the resource is refused (``convert._pod._resource_list``);
    ``claims`` is refused whatever it holds."""

    limits: dict[str, _AsWritten] | None = None
    requests: dict[str, _AsWritten] | None = None
    claims: _AsWritten | None = None


@attrs.frozen(kw_only=True)
class _HostAliasSchema:
    ip: _AliasIP
    hostnames: tuple[_Subdomain, ...] = ()


@attrs.frozen(kw_only=True)
class _SchedulingGate:
    name: _QualifiedName
