"""Saved plans: ``plan --out FILE`` writes one, ``apply --plan FILE`` applies it, ``show
FILE`` prints it (``-o FORMAT``: as ``plan -o FORMAT`` prints a plan, ``print_plan``).

Saved plans (``plan --out FILE``, then ``apply --plan FILE``) carry a fingerprint of the
engine state they act on (``Plan.fingerprint``, computed with ``plan``'s digest over the
containers and pod directories of the pods in the plan and the images it uses; the rest
of the engine is left out, since applying the plan touches nothing else). ``apply
--plan`` observes the engine again and refuses the plan when the fingerprint differs -
including a plan made against an empty engine, once its pods exist (Terraform #24078).
A saved plan carries the options it was made with (``Plan.options``); ``apply --plan``
uses its root directory, and refuses a ``--root-dir`` that names another one.

A plan is written atomically, mode 0600 (it holds the containers' environment); its
Secret values are kept by reference only and read again from its sources when it is
applied (``podsync.cli._secrets``). The commands import this module when they use it,
and it imports the plan's JSON form, the Secret re-reading and temporary files where it
uses them: ``podsync apply SOURCE`` pays for none of it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from podsync.actions._actions import Plan
from podsync.actions._fingerprint import plan_fingerprint
from podsync.applier._content_engine import planned_engine_records
from podsync.cli._args import EXIT_ERROR, EXIT_OK, _Failure
from podsync.cli._console import Console, warn_rejected
from podsync.cli._engine import RuntimeFactory, _engine, _observe, _run_apply
from podsync.cli._etcd import etcd_options
from podsync.cli._output import (
    output_format,
    plan_names,
    print_apply,
    print_document,
    print_names,
)
from podsync.cli._output_args import NAME, YAML
from podsync.cli._planning import _given, _root_dir
from podsync.cli._source_args import http_options
from podsync.exceptions import ConfigError
from podsync.loop._sync import Observation
from podsync.runtime._protocol import Runtime

__all__: list[str] = []


def _fingerprint(the_plan: Plan, observation: Observation, runtime: Runtime) -> str:
    """The fingerprint of ``the_plan`` against ``observation`` and the records of the
    volumes it writes (``plan_fingerprint``): under the root directory, and in the
    engine volumes, read through ``runtime``."""
    from podsync.host._volume_writer import planned_volume_records

    engine = planned_engine_records(runtime, the_plan, observation.containers)
    volumes = planned_volume_records(the_plan) + engine
    return plan_fingerprint(
        the_plan,
        observation.containers,
        observation.images,
        observation.pod_dirs,
        volume_files=volumes,
    )


def _read_plan(path: str) -> Plan:
    from podsync.actions._json import plan_from_json

    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as stream:
                data = stream.read()
    except OSError as exc:
        raise _Failure(f"{source}: cannot read the saved plan: {exc.strerror or exc}") from None
    try:
        return plan_from_json(data, source=source)
    except ConfigError as exc:
        raise _Failure(*(str(p) for p in exc.problems)) from None


def _write_plan(path: str, the_plan: Plan) -> None:
    """Write atomically (a temporary file renamed over ``path``), mode 0600."""
    import tempfile

    from podsync.actions._json import plan_json_chunks

    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".podsync-plan-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                stream.writelines(plan_json_chunks(the_plan))
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise _Failure(f"cannot save the plan to {path}: {exc.strerror or exc}") from None


def print_plan(console: Console, fmt: str, the_plan: Plan) -> None:
    """``the_plan`` as ``plan -o FORMAT`` and ``show -o FORMAT`` print it: its JSON as
    saved (streamed), the same document as YAML (Secret values by reference and digest,
    as in the JSON), or the names of the pods it changes."""
    from podsync.actions._json import plan_json_chunks

    if fmt == NAME:
        print_names(console, plan_names(the_plan))
    elif fmt == YAML:
        print_document(console, YAML, "".join(plan_json_chunks(the_plan)))
    else:
        console.print_chunks(plan_json_chunks(the_plan))


def _cmd_show(args: argparse.Namespace, console: Console) -> int:
    the_plan = _read_plan(args.file)
    fmt = output_format(args)
    if fmt is not None:
        print_plan(console, fmt, the_plan)
        return EXIT_OK
    warn_rejected(console, the_plan)
    console.print(the_plan.render())
    console.print(f"Planned against engine state {the_plan.fingerprint[:12] or '(none)'}.")
    return EXIT_OK


def _apply_saved(args: argparse.Namespace, console: Console, factory: RuntimeFactory) -> int:
    from podsync.cli._secrets import _unsealed

    the_plan = _read_plan(args.plan_file)
    # The plan's paths and binds were made under its own root directory, and apply
    # takes it from the plan; a --root-dir naming another one is a mistake to report.
    root_dir = the_plan.options.root_dir
    if _given(args, "root_dir", None) is not None and _root_dir(args) != root_dir:
        raise _Failure(
            f"the saved plan was made with --root-dir {root_dir}, not {_root_dir(args)}; "
            "leave --root-dir out or make the plan again"
        )
    the_plan = _unsealed(
        the_plan,
        args.plan_file,
        etcd_options(args, console.warning),
        http_options(args),
        args.sources or (),
    )
    with _engine(factory, args.docker_host) as runtime:
        current = _fingerprint(the_plan, _observe(runtime, root_dir), runtime)
        if current != the_plan.fingerprint:
            raise _Failure(
                "Saved plan is stale: the engine changed since the plan was made "
                f"(fingerprint {the_plan.fingerprint[:12]}… != {current[:12]}…); "
                "run podsync plan again."
            )
        warn_rejected(console, the_plan)
        fmt = output_format(args)
        if fmt is None:
            console.print(f"Applying the saved plan {args.plan_file}: {the_plan.summary()}")
        result = None
        if the_plan.has_changes:
            result = _run_apply(console, the_plan, runtime, args, verb="Apply", summary=fmt is None)
    ok = result is None or result.ok
    if fmt is not None:
        print_apply(console, fmt, the_plan, result, ok)
    return EXIT_OK if ok else EXIT_ERROR
