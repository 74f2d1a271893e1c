"""``import podsync`` stays small (issue 16): what only some calls need is imported when
one of them runs, not up front. Checked by which modules an import loads, not by a
clock: the time target is the benchmark's (benchmarks/bench_e2e.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests.support import paths

ROOT = paths.REPO

# Loaded by the loader (YAML, cattrs), the HTTP source, the plan's JSON form and the
# probes: none of them is needed to import podsync, build pods and plan.
DEFERRED = ["yaml", "cattrs", "http.client", "urllib.request", "ssl", "email", "socket"]


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return set(json.loads(result.stdout))


@pytest.mark.parametrize(
    "code",
    [
        "import podsync",
        # A library user who only plans.
        "import podsync\n"
        "pod = podsync.Pod('web', (podsync.Container('app', 'busybox'),))\n"
        "podsync.plan([pod], [], now=0.0)",
    ],
)
def test_import_and_plan_leave_the_heavy_modules_unloaded(code):
    """Importing podsync and planning load no YAML, cattrs, HTTP, TLS or socket module."""
    loaded = _modules_after(code)

    assert [] == [m for m in DEFERRED if m in loaded]


def test_the_deferred_modules_load_when_needed():
    """Loading pods and writing a plan's JSON still work, loading what they need."""
    loaded = _modules_after(
        "import podsync\n"
        "pods = podsync.parse_pods('apiVersion: v1\\nkind: Pod\\nmetadata: {name: a}\\n"
        "spec: {containers: [{name: c, image: busybox}]}\\n')\n"
        "podsync.plan_from_json(podsync.plan_to_json(podsync.plan(pods, [], now=0.0)))"
    )

    assert {"yaml", "cattrs"} <= loaded


def test_the_command_line_loads_the_loop_only_for_run():
    """``podsync apply`` and the other one-shot commands do not pay for the continuous
    loop: its modules are imported when ``podsync run`` runs, not by the parser that
    shows its defaults."""
    loaded = _modules_after("import podsync.cli")

    loop = [
        "podsync.loop._reconciler",
        "podsync.loop._workers",
        "podsync.load._source_set",
        "podsync.loop._board",
        "podsync.loop._reporting",
    ]
    assert [] == [m for m in loop if m in loaded]
    assert [] == [m for m in loop if importlib.util.find_spec(m) is None]  # a real name


def test_the_command_line_loads_saved_plan_and_status_code_only_when_used():
    """``podsync apply SOURCE`` (issue 16: a one-pod apply, process start to running)
    does not import what only saved plans (``plan -o``, ``apply --plan``, ``show``,
    ``--json``) or ``--wait`` need: the plan's JSON form, the Secret re-reading of
    saved plans, pod status, temporary files."""
    loaded = _modules_after("import podsync.cli")

    only_sometimes = [
        "podsync.actions._json",
        "podsync.cli._secrets",
        "podsync.cli._saved",
        "podsync.cli._wait",
        "podsync.status._pod",
        "tempfile",
    ]
    assert [] == [m for m in only_sometimes if m in loaded]
    assert [] == [m for m in only_sometimes if importlib.util.find_spec(m) is None]
