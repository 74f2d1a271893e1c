"""``-o FORMAT`` / ``--output FORMAT``: the result of a command as a document or as names,
with kubectl's meanings (issue 30).

Each command takes the formats of its kubectl counterpart (``podsync.cli._output_args.FORMATS``,
the parser's): ``json`` and ``yaml`` print one document - YAML being the JSON's document
itself, loaded back from the JSON text and dumped with ``yaml.safe_dump`` in the JSON's
key order, so that what the JSON keeps secret (a saved plan's Secret values, held by
reference and keyed digest) the YAML keeps secret too; ``name`` prints one
``pod/NAMESPACE/NAME`` line per pod; ``wide`` (``status`` only) adds columns to the
table. ``--json`` is ``-o json``, kept (it is documented and used): the two given with
different formats is a usage error.

Names: kubectl writes ``pod/NAME`` and leaves the namespace to ``-n``; podsync lists
every namespace at once (``kubectl get pods -A``), so a name carries the pod key that
podsync prints everywhere else: ``pod/default/web``. A pod known only by its directory
(no key) is ``pod/UID``. The POD argument of ``describe``, ``logs`` and ``exec`` takes
``pod/NAMESPACE/NAME`` back (``pod_query``), so that ``podsync status -o name`` feeds
them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from podsync.actions._actions import Plan, Wait
from podsync.applier._results import ActionStatus, ApplyResult
from podsync.cli._checks import _UsageError
from podsync.cli._console import Console
from podsync.cli._output_args import FORMATS, JSON, NAME, YAML

if TYPE_CHECKING:
    from podsync.status._pod import PodStatus

__all__: list[str] = []

#: The layout of the document ``apply -o json`` and ``down -o json`` print.
APPLY_FORMAT_VERSION = 1

#: What ``plan -o FILE`` says on standard error, for the one release it still saves.
DEPRECATED_SAVE = (
    "-o FILE is deprecated: use --out FILE; in 0.3.0 -o takes only a format (json, yaml, name)"
)


def output_format(args: argparse.Namespace, command: str | None = None) -> str | None:
    """The format the arguments ask for (``-o FORMAT``, or ``--json``), or ``None``
    for the command's text.

    Raises:
        _UsageError: a format ``command`` does not take (the formats listed), or
            ``--json`` with another ``-o``.
    """
    command = command or args.command
    given = getattr(args, "output", None)
    if deprecated_plan_file(args) is not None:
        # plan -o FILE: the deprecated save (_cmd_plan), not a format.
        given = None
    if getattr(args, "json", False):
        if given not in (None, JSON):
            raise _UsageError(f"--json is -o json: give one format, not --json and -o {given}")
        given = JSON
    if given is not None and given not in FORMATS[command]:
        raise _UsageError(
            f"-o {given}: {command} prints {', '.join(FORMATS[command])} (or, without -o, text)"
        )
    return given


def check_output(args: argparse.Namespace) -> None:
    """Refuse, before the command runs, a format its command does not take
    (``output_format``) and ``plan -o FILE`` given with ``--out`` (two files).

    Raises:
        _UsageError: the first of them.
    """
    if args.command not in FORMATS:
        return
    hosts = args.command == "apply" and args.hosts is not None
    output_format(args, "apply --hosts" if hosts else None)
    plan_file = deprecated_plan_file(args)
    if plan_file is not None and args.out is not None:
        raise _UsageError(
            f"-o {plan_file} and --out {args.out}: -o FILE is the deprecated spelling of "
            f"--out FILE; give --out alone (or -o with a format: {', '.join(FORMATS['plan'])})"
        )


def deprecated_plan_file(args: argparse.Namespace) -> str | None:
    """The FILE of ``plan -o FILE`` - a ``-o`` that names none of plan's formats - which
    saves the plan for one release more (``DEPRECATED_SAVE``); else ``None``."""
    given: str | None = getattr(args, "output", None)
    if args.command != "plan" or given in FORMATS["plan"]:
        return None
    return given


def yaml_text(document: Any) -> str:
    """``document`` (plain JSON data) as YAML: the keys in their order, block style."""
    import yaml

    text: str = yaml.safe_dump(
        document, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100
    )
    return text


def print_document(console: Console, fmt: str, json_text: str) -> None:
    """A document given as its JSON text, printed as ``fmt`` (``json`` or ``yaml``)."""
    if fmt == YAML:
        console.print_chunks([yaml_text(json.loads(json_text))])
    else:
        console.print_chunks([json_text if json_text.endswith("\n") else json_text + "\n"])


def print_record(console: Console, fmt: str, record: Mapping[str, Any]) -> None:
    """One record of a stream (an event, a changed pod of ``status --watch``): a JSON
    line, or a YAML document that starts with ``---`` (``yaml.safe_load_all`` reads the
    stream)."""
    line = json.dumps(record, sort_keys=True)
    if fmt == YAML:
        console.print_chunks(["---\n", yaml_text(json.loads(line))])
    else:
        console.print(line)


def pod_name(key: str, uid: str = "") -> str:
    """A pod's ``name`` line: ``pod/NAMESPACE/NAME`` (``pod/UID`` without a key)."""
    return f"pod/{key or uid}"


def print_names(console: Console, names: Iterable[str]) -> None:
    for name in names:
        console.print(name)


def pod_query(query: str) -> str:
    """A POD argument with ``-o name``'s ``pod/`` taken off (``pod/default/web`` is
    ``default/web``); anything else as given (``pod/web`` stays: the namespace ``pod``)."""
    kind, _, rest = query.partition("/")
    return rest if kind == "pod" and rest.count("/") == 1 else query


def plan_names(the_plan: Plan) -> list[str]:
    """The pods ``the_plan`` changes (an action that is not a wait), in plan order."""
    return [
        pod_name(p.pod, p.uid)
        for p in the_plan.pods
        if any(not isinstance(a, Wait) for a in p.actions)
    ]


def changed_pods(result: ApplyResult) -> list[str]:
    """The pods an apply changed (an action done that is not a wait), by key (the uid
    for a pod known only by its directory), sorted."""
    return sorted(
        {
            r.pod or r.pod_uid
            for r in result.results
            if r.status is ActionStatus.DONE and not isinstance(r.action, Wait) and r.pod_uid
        }
    )


def apply_record(the_plan: Plan, result: ApplyResult | None) -> dict[str, Any]:
    """What an apply (or ``down``) did, as the JSON object ``apply -o json`` prints and
    ``apply --hosts -o json`` gives each host: whether the plan was applied and had
    changes, its summary, the rejected pods, the actions done, failed and skipped, the
    seconds it took, the failures (``action: error``, as the error lines say them) and
    the pods it changed (``changed``, by key). ``result`` is ``None`` when nothing
    was applied."""
    applied = result if result is not None else ApplyResult()
    counts = dict.fromkeys(ActionStatus, 0)
    for r in applied.results:
        if not isinstance(r.action, Wait):
            counts[r.status] += 1
    return {
        "applied": result is not None,
        "changes": the_plan.has_changes,
        "summary": the_plan.summary(),
        "rejected": [r.pod for r in the_plan.rejected],
        "done": counts[ActionStatus.DONE],
        "failed": counts[ActionStatus.FAILED],
        "skipped": counts[ActionStatus.SKIPPED],
        "duration": round(applied.duration, 3),
        "failures": [f"{r.action.message}: {r.error}" for r in applied.failures],
        "changed": changed_pods(applied),
    }


def print_apply(
    console: Console,
    fmt: str,
    the_plan: Plan,
    result: ApplyResult | None,
    ok: bool,
    waited: Sequence[PodStatus] | None = None,
) -> None:
    """The outcome of ``apply`` or ``down`` in ``fmt``: the document
    (``format_version`` ``APPLY_FORMAT_VERSION``, ``ok``, then ``apply_record``), or
    the changed pods' names. ``waited`` (``apply --wait``) are the pods' statuses when
    the wait ended: the document's ``wait`` lists each pod's ``pod``, ``uid``, ``state``
    (``podsync.PodState``), ``phase`` and ``message``, and ``ok`` says whether every pod
    came up; the counts and ``changed`` are the first apply's."""
    record = apply_record(the_plan, result)
    if fmt == NAME:
        print_names(console, (pod_name(key) for key in record["changed"]))
        return
    document = {"format_version": APPLY_FORMAT_VERSION, "ok": ok, **record}
    if waited is not None:
        document["wait"] = [
            {
                "pod": s.pod,
                "uid": s.uid,
                "state": s.state.value,
                "phase": s.phase.value,
                "message": s.message,
            }
            for s in waited
        ]
    print_document(console, fmt, json.dumps(document, indent=2, ensure_ascii=False))
