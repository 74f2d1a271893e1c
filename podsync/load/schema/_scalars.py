"""Checked scalars of the pod schema: each value the YAML may hold, validated alone.

Contract: every ``_check_*`` / ``_expect_*`` function (and ``_choose``, ``_milli_cpu``,
``_bytes``) takes a plain value as ``_yaml`` gives it and returns it checked (or
converted: a quantity to milli-CPU or bytes, a policy name to its enum), or raises
``_Invalid`` whose message says what was expected and what was given, without a path:
``_pod``'s converter adds the ``$.path`` (its ``NewType`` s name the checked kinds of
value and map each to its check here).

The rules of single values that other parts of podsync apply too are not copied here:
DNS-1123 labels and uids are ``_naming``'s (``dns_label_problem``, ``is_safe_uid``), the
network container's name is ``_naming.NETWORK_CONTAINER``, image references are
``_images``', and the largest grace period is ``_labels.MAX_GRACE_PERIOD``.

Layering: above ``_yaml`` (for ``_Invalid`` and ``_describe``), below ``_pod``; it
imports podsync's model enums and the rule modules named above, never the planner, and
does no I/O. Its names keep their leading underscore: they are shared among the loader's
modules only; nothing here is public API.
"""

from __future__ import annotations

import enum
import ipaddress
import math
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeVar

from podsync.load.schema._yaml import _describe, _Invalid
from podsync.model._names import (
    DNS_LABEL_MAX,
    ENV_NAME,
    NETWORK_CONTAINER,
    UID_CHARACTERS,
    UID_MAX,
    dns_label_problem,
    is_safe_uid,
)
from podsync.model._pod import (
    DNSPolicy,
    PortProtocol,
    PullPolicy,
    RestartPolicy,
    TerminationMessagePolicy,
)
from podsync.spec._images import image_reference_problem
from podsync.spec._labels import MAX_GRACE_PERIOD

# Nothing here is public API: ``_pod`` builds its converter from these checks.
__all__: list[str] = []

# Docker takes memory and CPU values as int64.
_INT64_MAX = 2**63 - 1
# Kubernetes' probe periods, timeouts and thresholds are int32.
_INT32_MAX = 2**31 - 1

# ---------------------------------------------------------------------------------------
# Values: strict primitives, checked scalars
# ---------------------------------------------------------------------------------------


def _one_of(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _expect_str(value: object) -> str:
    # cattrs' default would turn 42 into "42"; a number where text belongs is a mistake.
    if not isinstance(value, str):
        raise _Invalid(f"expected a string, got {_describe(value)}{_quote_hint(value)}")
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
        unquote = " (write it without quotes)" if isinstance(value, str) and value.isdigit() else ""
        raise _Invalid(f"expected an integer, got {_describe(value)}{unquote}")
    return value


def _expect_bool(value: object) -> bool:
    # bool("false") is True: only YAML booleans are booleans.
    if not isinstance(value, bool):
        unquote = " (write it without quotes)" if value in ("true", "false") else ""
        raise _Invalid(f"expected true or false, got {_describe(value)}{unquote}")
    return value


def _quote_hint(value: object) -> str:
    """What to do about a YAML scalar that is not text but was meant to be: a label
    ``version: 1.10``, an env ``value: 8080`` or ``value: yes`` (the API server refuses
    them too; quotes make them strings)."""
    if isinstance(value, bool):
        return " (put it in quotes: YAML reads it as true or false)"
    if isinstance(value, int | float):
        return " (put it in quotes: YAML reads it as a number)"
    return ""


def _check_label(value: object) -> str:
    """A DNS-1123 label (RFC 1123): it becomes part of container and host names."""
    text = _expect_str(value)
    if not text:
        raise _Invalid("must not be empty")
    problem = dns_label_problem(text)
    if problem is not None:
        shown = _describe(text) if len(text) > DNS_LABEL_MAX else repr(text)
        raise _Invalid(f"{shown} is not a valid DNS-1123 label: {problem}")
    return text


def _check_container_name(value: object) -> str:
    name = _check_label(value)
    if name == NETWORK_CONTAINER:
        raise _Invalid(f"{name!r} is reserved for the pod's network container")
    return name


def _check_port_name(value: object) -> str:
    text = _expect_str(value)
    return text and _check_label(text)


def _check_uid(value: object) -> str:
    # The uid is a field of every container name, whose fields are separated by "_",
    # and the name of the pod's directory under the runtime's root: no "_", no "/",
    # and no leading "." or "-" (which keeps out "." and ".."). The rule is
    # ``is_safe_uid``'s, which the planner applies to pods built in code; what follows
    # it only says which part of the rule the value breaks.
    text = _expect_str(value)
    if not text:
        raise _Invalid("must not be empty (leave it out to derive a uid)")
    if is_safe_uid(text):
        return text
    if len(text) > UID_MAX:
        raise _Invalid(f"must be at most {UID_MAX} characters, got {len(text)}")
    for char in text:
        if char not in UID_CHARACTERS:
            raise _Invalid(
                f"{_describe(text)} is not a valid uid: {char!r} is not allowed "
                "(only letters, digits, '.' and '-')"
            )
    # What is left of the rule: the first character is a letter or digit.
    raise _Invalid(f"{_describe(text)} is not a valid uid: it must start with a letter or digit")


def _check_image(value: object) -> str:
    text = _expect_str(value)
    if not text:
        raise _Invalid("must not be empty")
    if any(char.isspace() for char in text):
        raise _Invalid(f"{_describe(text)} is not a valid image reference: it contains whitespace")
    # The engine's reference grammar: a reference it would refuse on every pull and
    # create is refused here, with the file and path (see podsync.spec._images).
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
    if not ENV_NAME.fullmatch(text):
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


def _check_alias_ip(value: object) -> str:
    # hostAliases[].ip: required, an IPv4 or IPv6 address (ValidateHostAliases).
    text = _expect_str(value)
    if not text:
        raise _Invalid("must not be empty")
    return _check_host_ip(text)


# Kubernetes' qualified names (label and annotation keys, scheduling gates:
# k8s.io/apimachinery/pkg/util/validation IsQualifiedName): an optional DNS-1123
# subdomain prefix and "/", then a name of at most 63 characters.
_QUALIFIED_NAME = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(
    r"(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
)
# A label value: empty, or a qualified name's name part (IsValidLabelValue).
_LABEL_VALUE_MAX = 63


def _qualified_name_problem(text: str) -> str | None:
    """Why ``text`` is not a Kubernetes qualified name (``example.com/name``); None when it is."""
    prefix, slash, name = text.rpartition("/")
    if slash and not _DNS_SUBDOMAIN.fullmatch(prefix):
        return f"the prefix {prefix!r} is not a DNS-1123 subdomain"
    if not _QUALIFIED_NAME.fullmatch(name):
        return (
            "the name must be 1-63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit, after an optional DNS subdomain prefix and '/'"
        )
    return None


def _check_qualified_name(value: object) -> str:
    text = _expect_str(value)
    problem = _qualified_name_problem(text)
    if problem is not None:
        raise _Invalid(f"{_describe(text)} is not a valid qualified name: {problem}")
    return text


def _check_label_value(value: object) -> str:
    text = _expect_str(value)
    if text and (len(text) > _LABEL_VALUE_MAX or not _QUALIFIED_NAME.fullmatch(text)):
        raise _Invalid(
            f"{_describe(text)} is not a valid label value: at most 63 letters, digits, "
            "'-', '_' or '.', starting and ending with a letter or digit"
        )
    return text


def _check_subdomain(value: object) -> str:
    # hostAliases[].hostnames[]: DNS-1123 subdomains (ValidateHostAliases).
    text = _expect_str(value)
    if not _DNS_SUBDOMAIN.fullmatch(text):
        raise _Invalid(
            f"{_describe(text)} is not a valid DNS-1123 subdomain (lowercase letters, "
            "digits, '-' and '.', at most 253 characters)"
        )
    return text


def _raw_quantity(value: object) -> object:
    # A value kept as written: a resource amount, whose unit and so whose check depend
    # on the resource its key names (``convert._pod``), or a field refused whatever it
    # holds.
    return value


def _check_range(value: object, low: int, high: int) -> int:
    number = _expect_int(value)
    if not low <= number <= high:
        raise _Invalid(f"must be {low}-{high}, got {number}")
    return number


def _check_probe_count(value: object) -> int:
    """A probe's period, timeout or threshold: Kubernetes' minimum is 1, its type int32."""
    number = _expect_int(value)
    if number < 1:
        raise _Invalid(f"must be at least 1, got {number}")
    if number > _INT32_MAX:
        raise _Invalid(f"must be at most {_INT32_MAX}, got {number}")
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


def _choose(
    value: object,
    choices: Mapping[str, _E],
    default: _E,
    *,
    fold_case: bool,
    unsupported: Mapping[str, str] | None = None,
    field: str = "",
) -> _E:
    """One of ``choices`` by name; the empty string means ``default`` (Go's zero value).

    A value of ``unsupported`` (a Kubernetes value podsync cannot honour) is refused
    with its reason, ``<field>: 'None' is not supported by podsync: <why>``.
    """
    text = _expect_str(value)
    if not text:
        return default
    for name, choice in choices.items():
        if text == name or (fold_case and text.lower() == name.lower()):
            return choice
    for name, why in (unsupported or {}).items():
        if text == name or (fold_case and text.lower() == name.lower()):
            raise _Invalid(f"{field}: {_describe(text)} is not supported by podsync: {why}")
    names = _one_of(list(choices))
    if fold_case:
        raise _Invalid(f"must be {names} (any case), got {_describe(text)}")
    close = [name for name in choices if name.lower() == text.lower()]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise _Invalid(f"must be {names}, got {_describe(text)}{hint}")


_PROTOCOLS = {"TCP": PortProtocol.TCP, "UDP": PortProtocol.UDP}
_UNSUPPORTED_PROTOCOLS = {"SCTP": "podsync publishes and probes TCP and UDP ports only"}
_RESTART_POLICIES = {
    "Always": RestartPolicy.ALWAYS,
    "OnFailure": RestartPolicy.ON_FAILURE,
    "Never": RestartPolicy.NEVER,
}
_DNS_POLICIES = {
    "ClusterFirst": DNSPolicy.CLUSTER_FIRST,
    "Default": DNSPolicy.DEFAULT,
    "ClusterFirstWithHostNet": DNSPolicy.CLUSTER_FIRST_WITH_HOST_NET,
}
_UNSUPPORTED_DNS_POLICIES = {
    "None": "podsync sets no per-pod name servers (see --cluster-dns and --resolv-conf)",
}
_PULL_POLICIES = {
    "Always": PullPolicy.ALWAYS,
    "Never": PullPolicy.NEVER,
    "IfNotPresent": PullPolicy.IF_NOT_PRESENT,
}
# The 2014 internal names, compared case-insensitively like the seed's pullPoliciesEqual.
_TERMINATION_MESSAGE_POLICIES = {
    "File": TerminationMessagePolicy.FILE,
    "FallbackToLogsOnError": TerminationMessagePolicy.FALLBACK_TO_LOGS_ON_ERROR,
}
_LEGACY_PULL_POLICIES = {
    "PullAlways": PullPolicy.ALWAYS,
    "PullNever": PullPolicy.NEVER,
    "PullIfNotPresent": PullPolicy.IF_NOT_PRESENT,
}


# Kubernetes' IsHTTPHeaderName (apimachinery's validation): letters, digits and '-'.
_HEADER_NAME = re.compile(r"[-A-Za-z0-9]+")


def _check_header_name(value: object) -> str:
    text = _expect_str(value)
    if not _HEADER_NAME.fullmatch(text):
        raise _Invalid(
            f"{_describe(text)} is not a valid HTTP header name (letters, digits and '-' only)"
        )
    return text


def _check_header_value(value: object) -> str:
    # A line break would end the header and start another (request splitting); Go's
    # HTTP client refuses such a value at every request, so refuse it once, here.
    text = _expect_str(value)
    if "\r" in text or "\n" in text:
        raise _Invalid(f"{_describe(text)} contains a line break, which no HTTP header may")
    return text


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


def _quantity_value(value: object, *, unit: str, examples: str) -> Fraction:
    """The exact, non-negative value of a quantity (``500m`` is 1/2, ``1Ki`` is 1024).

    Values beyond int64 ``unit`` s are errors even here: every use scales them into
    int64 amounts, and bounding the exponent keeps ``1e999999999`` from building a huge
    number.
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
        return Fraction(0)
    if match["sign"] == "-":
        raise _Invalid(f"must not be negative, got {_describe(value)}")
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if exponent > _MAX_EXPONENT:
            raise _Invalid(f"{_describe(value)} is too large: at most {_INT64_MAX} {unit}")
        factor = Fraction(10) ** max(exponent, -_MAX_EXPONENT)
    else:
        factor = _SUFFIXES[match["suffix"] or ""]
    return number * factor


# The spellings nearly every pod file uses (250m, 128Mi, 2, 512): a whole number and a
# suffix, computed in integers. Anything else (fractions, exponents, signs) takes the
# general way through ``_quantity_value``; both give the same amounts.
_WHOLE_QUANTITY = re.compile(r"([0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?")
_WHOLE_FACTORS = {suffix: int(factor) for suffix, factor in _SUFFIXES.items() if suffix != "m"}


def _quantity(value: object, *, scale: int, unit: str, examples: str) -> int:
    """A quantity in units of ``1/scale`` (1000 for milli-CPU, 1 for bytes).

    Fractions of a unit round up, as Kubernetes' ``Quantity.MilliValue`` / ``Value`` do:
    ``0.0001`` CPU is 1 milli-CPU and ``0.5`` bytes is 1 byte. Negative values and
    values beyond int64 are errors.
    """
    whole = _WHOLE_QUANTITY.fullmatch(value) if type(value) is str else None
    if type(value) is int and value >= 0:
        amount = value * scale
    elif whole is not None:
        number, suffix = int(whole[1]), whole[2] or ""
        if suffix == "m":
            amount = -(-number * scale // 1000)  # rounded up
        else:
            amount = number * _WHOLE_FACTORS[suffix] * scale
    else:
        amount = math.ceil(_quantity_value(value, unit=unit, examples=examples) * scale)
    if amount > _INT64_MAX:
        raise _Invalid(f"{_describe(value)} is too large: at most {_INT64_MAX} {unit}")
    return amount


def _milli_cpu(value: object) -> int:
    return _quantity(value, scale=1000, unit="milli-CPU", examples="500m, 0.5 or 2")


def _bytes(value: object) -> int:
    return _quantity(value, scale=1, unit="bytes", examples="128Mi, 1G or 512")


def _divisor(value: object) -> Fraction:
    """A ``resourceFieldRef.divisor``: an exact quantity (which ones a resource allows is
    ``convert._document``'s rule, as it depends on the resource)."""
    return _quantity_value(value, unit="units", examples="1m, 1 or 1Mi")


# How many accepted texts a ``_remembered`` hook keeps (then it starts over): names,
# images, paths and policies repeat across the pods of a fleet; unique texts (a pod's
# own name) only cost the memo's lookups.
_REMEMBERED = 4096
_UNSEEN = object()


def _remembered(check: Callable[[object], Any]) -> Callable[[object, object], Any]:
    """A cattrs hook (value, type) for ``check``, a check that depends on the text
    alone and gives back an immutable value (the text, an enum member): the value of a
    text it accepted is remembered, so the same image or name in 10,000 pods is checked
    once. What it refuses is checked (and worded) every time; anything but a plain
    ``str`` too."""
    known: dict[str, Any] = {}

    def hook(value: object, _: object) -> Any:
        if type(value) is not str:
            return check(value)
        found = known.get(value, _UNSEEN)
        if found is _UNSEEN:
            found = check(value)
            if len(known) >= _REMEMBERED:
                known.clear()
            known[value] = found
        return found

    return hook
