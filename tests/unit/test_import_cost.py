"""``import podsync`` stays small (issue 16) and imports nothing of podsync's but its
top (issue 33); a command imports only what it uses: what only some calls need is
imported when one of them runs, not up front. Checked by which modules an import or a
command loads, not by a clock: the time target is the benchmark's
(benchmarks/bench_e2e.py, ``import podsync`` at most 80 ms)."""

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
    """The modules a fresh interpreter holds after running ``code`` (which may print:
    the list is the last line)."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


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


# --- issue 33: ``import podsync`` imports nothing; a command imports what it uses ------

#: What none of the one-shot commands and none of the engine's operating commands use:
#: the continuous loop (``podsync run``), the fleet (``apply --hosts``, ``publish``) and
#: what reads it back from etcd (``hosts``, ``--etcd``), asyncio, and the docker
#: runtime's streams (logs, events, exec).
NOT_ONE_SHOT = [
    *("podsync.loop._reconciler", "podsync.loop._workers", "podsync.loop._board"),
    *("podsync.loop._reporting", "podsync.loop._usage_report", "podsync.load._source_set"),
    *("podsync.load._etcd_watch", "podsync.report._reporter", "podsync.report._fleet"),
    *("podsync.report._events", "podsync.etcd._client", "podsync.fleet._sync_hosts"),
    *("podsync.fleet._publish", "podsync.aio", "asyncio", "podsync.runtime.docker._streams"),
    *("podsync.cli._run", "podsync.cli._fleet", "podsync.cli._fleet_read"),
]
#: What reading pod files and planning load: the engine's status, logs and usage do not.
LOADING_AND_PLANNING = [
    *("yaml", "cattrs", "podsync.load._config", "podsync.planner._plan"),
    *("podsync.loop._sync", "podsync.applier._apply", "podsync.prober._probing"),
]


def test_import_podsync_imports_nothing_of_podsync():
    """``import podsync`` runs its top module alone: every public name is imported
    when first used, so the model, the planner and attrs wait for a name that needs
    them."""
    loaded = _modules_after("import podsync")

    assert ["podsync"] == sorted(m for m in loaded if m.startswith("podsync"))
    assert [] == [m for m in ("attrs", "attr", "cattrs", "yaml") if m in loaded]


@pytest.mark.parametrize(
    "face",
    [
        *("podsync.spec", "podsync.runtime", "podsync.status", "podsync.prober"),
        *("podsync.fleet", "podsync.report", "podsync.cli"),
    ],
)
def test_a_face_imports_its_names_when_first_used(face: str):
    """Importing a folder's face (as importing any module of the folder does) loads
    none of the modules its names come from."""
    loaded = _modules_after(f"import {face}")

    assert ["podsync", face] == sorted(m for m in loaded if m.startswith("podsync"))


def test_a_name_brings_its_module_only():
    """``from podsync import Pod`` loads the model, not the planner or apply."""
    loaded = _modules_after("from podsync import Pod")

    assert "podsync.model._pod" in loaded
    assert [] == [m for m in ("podsync.planner._plan", "podsync.applier._apply") if m in loaded]


def _command_modules(tmp_path, *argv: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``podsync ARGV`` on an
    empty FakeRuntime, with ``tmp_path/root`` as the root directory and
    ``tmp_path/pods`` (one pod) as the SOURCE where ``PODS`` is given."""
    pods = tmp_path / "pods"
    pods.mkdir(exist_ok=True)
    (pods / "web.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
        "spec: {containers: [{name: app, image: busybox}]}\n",
        encoding="utf-8",
    )
    args = [str(pods) if a == "PODS" else a for a in argv]
    args += ["--root-dir", str(tmp_path / "root")] if argv[0] != "hosts" else []
    return _modules_after(
        "import podsync.testing\n"
        "from podsync.cli import main\n"
        "fake = podsync.testing.FakeRuntime()\n"
        f"main({args!r}, runtime_factory=lambda host: fake)"
    )


@pytest.mark.parametrize(
    "argv",
    [("plan", "PODS"), ("apply", "PODS"), ("down", "PODS"), ("plan", "--json", "PODS")],
)
def test_a_one_shot_command_loads_no_loop_fleet_etcd_or_streams(tmp_path, argv):
    """``plan``, ``apply`` and ``down`` load the loader, the planner and apply, and
    none of the continuous loop, the fleet, etcd, asyncio or the engine's streams."""
    loaded = _command_modules(tmp_path, *argv)

    assert {"podsync.cli._oneshot", "podsync.planner._plan", "yaml"} <= loaded
    assert [] == [m for m in NOT_ONE_SHOT if m in loaded]


@pytest.mark.parametrize("argv", [("status",), ("top",), ("logs", "web"), ("describe", "web")])
def test_an_operating_command_on_the_engine_loads_no_loader_or_planner(tmp_path, argv):
    """``status``, ``top``, ``logs`` and ``describe`` without pod files read the engine:
    no YAML, no planner, no apply, no prober, and nothing of the loop, the fleet or
    etcd."""
    loaded = _command_modules(tmp_path, *argv)

    assert "podsync.cli._ops" in loaded
    assert [] == [m for m in LOADING_AND_PLANNING + NOT_ONE_SHOT if m in loaded]


def test_hosts_loads_etcd_and_the_fleet_reader_only(tmp_path):
    """``podsync hosts --etcd URL`` reads etcd (here a closed loopback port: the
    command fails, after importing what it uses): no engine runtime, no loader, no
    planner, no apply, no loop."""
    loaded = _command_modules(tmp_path, "hosts", "--etcd", "http://127.0.0.1:9")

    assert {"podsync.cli._fleet_read", "podsync.etcd._client"} <= loaded
    no_engine = ["podsync.runtime.docker._runtime", "podsync.loop._observe", "docker"]
    assert [] == [m for m in LOADING_AND_PLANNING + no_engine if m in loaded]


def test_the_docker_runtime_imports_its_streams_when_one_is_opened():
    """A ``DockerRuntime`` that only syncs opens no stream and reads no usage: the
    streams (logs, events, exec) and the thread pool of the usage reads are imported by
    the calls that need them."""
    loaded = _modules_after("import podsync.docker")

    assert "podsync.runtime.docker._runtime" in loaded
    assert [] == [
        m for m in ("podsync.runtime.docker._streams", "concurrent.futures") if m in loaded
    ]
