"""Saved plans that hold Secret values, for the command line: ``plan --out`` records the
sources a plan's Secret values are read again from, and ``apply --plan`` puts them back.

A saved plan holds a Secret value by reference and keyed digest only
(``podsync.model._secrets``); this is where the command line reads the Secrets of the plan's
sources again, checks each value against the digest it was planned with, and refuses
the plan when one changed or is missing - for a create's env and command, and for the
files of a secret volume (``WriteVolume``). Moved out of ``cli`` to keep one concept per
module.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from podsync.actions._actions import Create, Plan, PodAction
from podsync.cli._args import _Failure
from podsync.cli._planning import _host_key
from podsync.exceptions import ConfigError
from podsync.host._volume_writer import sealed_writes, unseal_write
from podsync.load._config import _read_secrets
from podsync.load._sources import URL_MASK, shown_url
from podsync.model._secrets import SecretMismatch, map_secret_texts, spec_texts, unseal

if TYPE_CHECKING:
    from podsync.etcd._urls import EtcdOptions
    from podsync.load._sources import HttpOptions

__all__: list[str] = []


def _sealed_creates(the_plan: Plan) -> Iterator[Create]:
    """The creates of ``the_plan`` that hold Secret values (a type test per item)."""
    for pod in the_plan.pods:
        for action in pod.actions:
            if isinstance(action, Create) and spec_texts(action.spec):
                yield action


def _with_sources(the_plan: Plan, sources: Sequence[str]) -> Plan:
    """A plan to save, with the sources its Secret values are read again from
    (``Plan.sources``, absolute) when it holds any."""
    if next(_sealed_creates(the_plan), None) is None and not sealed_writes(the_plan):
        return the_plan
    # A URL is saved as shown_url shows it: a plan file is read by others than the
    # user who made it, and must not carry a source's password or token.
    where = tuple(
        shown_url(s)
        if s == "-" or s.startswith(("http://", "https://", "etcd://"))
        else os.path.abspath(s)
        for s in sources
    )
    return attrs.evolve(the_plan, sources=where)


def _with_credentials(saved: Sequence[str], given: Sequence[str], plan_file: str) -> list[str]:
    """The saved plan's sources, each URL saved without its credentials replaced by
    the SOURCE given to ``apply --plan`` that shows as it does.

    Raises:
        _Failure: a URL whose credentials were masked is not among ``given``, or one of
            ``given`` is not a source of the plan."""
    by_shown = {shown_url(g): g for g in given}
    for shown in by_shown:
        if shown not in saved:
            raise _Failure(f"{plan_file}: {shown} is not a source the plan was saved with")
    sources: list[str] = []
    for s in saved:
        if URL_MASK not in s:
            sources.append(s)
        elif s in by_shown:
            sources.append(by_shown[s])
        else:
            raise _Failure(
                f"{plan_file}: the saved plan reads Secrets from {s}, saved without its "
                "credentials: give that URL, with them, as a SOURCE of apply --plan"
            )
    return sources


def _unsealed(
    the_plan: Plan,
    source: str,
    etcd: EtcdOptions | None = None,
    http: HttpOptions | None = None,
    given: Sequence[str] = (),
) -> Plan:
    """A saved plan with its Secret values put back from its sources, each checked
    against the digest it was planned with (``podsync.model._secrets``); a URL saved
    without its credentials is read from the one of ``given`` (apply's SOURCEs) that
    shows as it does."""
    creates = list(_sealed_creates(the_plan))
    # A secret volume's files, held by reference too (VolumeFile.secret).
    writes = [w for w in sealed_writes(the_plan) if any(not f.known for f in w.content.files)]
    if not writes and not any(not t.known for c in creates for t in spec_texts(c.spec)):
        return the_plan
    if not the_plan.sources or "-" in the_plan.sources:
        raise _Failure(
            f"{source}: the saved plan uses Secret values, which a saved plan holds by "
            "reference only, and its Secrets cannot be read again (it was made from "
            "standard input or by another program); make the plan from files"
        )
    try:
        sources = _with_credentials(the_plan.sources, given, source)
        secrets = _read_secrets(sources, etcd=etcd, http=http)
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None
    key = _host_key(the_plan.options.root_dir)()

    def found(namespace: str, name: str) -> Mapping[str, bytes] | None:
        return secrets.get((namespace, name))

    try:
        # Only the creates that hold Secret values are walked (a plan of many pods).
        unsealed: dict[int, PodAction] = {
            id(c): map_secret_texts(c, lambda text: unseal(text, found, key)) for c in creates
        }
        unsealed.update({id(w): unseal_write(w, found, key) for w in writes})
    except SecretMismatch as exc:
        raise _Failure(
            f"the saved plan cannot be applied: {exc}; make the plan again "
            "(podsync plan --out FILE)"
        ) from None
    pods = tuple(
        attrs.evolve(pod, actions=tuple(unsealed.get(id(a), a) for a in pod.actions))
        for pod in the_plan.pods
    )
    return attrs.evolve(the_plan, pods=pods)
