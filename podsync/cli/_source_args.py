"""The HTTP options of the commands that read sources: ``--source-header`` (the
kubelet's ``--manifest-url-header``) and ``--source-ca``.

Kept apart from ``_args`` (the other commands' parser), which adds them to its
"reading" group; ``http_options`` turns them into the loader's ``HttpOptions``.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from podsync.load._sources import HttpOptions

__all__: list[str] = []

# An HTTP field name is a token (RFC 9110 §5.1); a value holds no line break (§5.5),
# which would let one --source-header smuggle in another header.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def source_header(text: str) -> tuple[str, str]:
    """``Name: value`` as a (name, value) pair, as the kubelet splits
    ``--manifest-url-header`` (at the first ``:``, the value without its surrounding
    blanks). The error says what is wrong, never the value (it is often a token)."""
    name, colon, value = text.partition(":")
    name = name.strip()
    if not colon or not _TOKEN.fullmatch(name):
        raise argparse.ArgumentTypeError(
            "expected 'Name: value', with a header name of letters, digits and "
            "!#$%&'*+.^_`|~- (the value is not shown)"
        )
    if any(c in value for c in "\r\n\0"):
        raise argparse.ArgumentTypeError(
            f"the value of header {name} holds a line break or NUL (the value is not shown)"
        )
    return name, value.strip()


def add_source_options(group: Any) -> None:
    """``--source-header`` (repeatable) and ``--source-ca``, in ``group``."""
    group.add_argument(
        "--source-header",
        metavar="'NAME: VALUE'",
        type=source_header,
        action="append",
        default=[],
        help="send this header with every request to an http(s) source (repeatable; the "
        "kubelet's --manifest-url-header). Authorization and Cookie are not sent again "
        "after a redirect. A URL's own user:password@ is sent as Basic authentication "
        "(refused over plain http to a host that is not loopback)",
    )
    group.add_argument(
        "--source-ca",
        metavar="FILE",
        help="the CA certificates (PEM) that https sources are checked against, in place "
        "of the system's",
    )


def http_options(args: argparse.Namespace) -> HttpOptions:
    """The ``HttpOptions`` the arguments give (a command without them: none)."""
    return HttpOptions(
        headers=tuple(getattr(args, "source_header", None) or ()),
        ca_file=getattr(args, "source_ca", None),
    )
