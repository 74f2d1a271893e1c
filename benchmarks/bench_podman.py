"""podman benchmark: podsync against ``podman kube play`` and ``podman kube down`` (issue 31).

What it measures
================

The workload is ``--pods`` pods (default 20), written once as ordinary Kubernetes pod
YAML: one multi-document file, the same file given to both contenders. Each pod has two
app containers of the busybox test image under a tag of this run's own
(``podsync-test/busybox:bench-podman-<pid>-<random>``, tagged with ``podman tag`` and
untagged at the end), with ``imagePullPolicy: IfNotPresent``: nothing is ever pulled.
The app command is a shell that exits at once on SIGTERM (``benchmarks.bench_apply``'s
script), so a stop measures the engine rather than a grace period. With each pod's
network container (podsync) or infra container (podman), that is 3 containers a pod.

Two contenders do the same work on the same podman, in the same run:

* **podsync** - the CLI, process start to exit, through podman's Docker-compatible
  service (``-H``, default ``unix:///run/podsync-podman/podman.sock``): ``podsync
  apply`` (*cold*: from nothing to every container running), ``podsync apply`` again
  (*re-apply*: it must plan nothing - its ``-o name`` output lists no pod) and ``podsync
  down`` (*teardown*: stop, then remove), with ``--network-mode none``, the pause test
  image (same run tag) as the network image, ``--stop-timeout 10``, a scope of this run's
  own and its default apply workers.
* **podman kube play** - the podman CLI, process start to exit: ``podman kube play
  --network none FILE`` (*cold*), ``podman kube play --replace --network none FILE``
  (*re-apply*) and ``podman kube down FILE`` (*teardown*). kube play has no no-op: a
  second plain ``kube play`` fails (the pods exist), so what a user runs to re-apply a
  file is ``--replace``, which removes every pod and creates it again - the row compares
  podsync's no-op with that, and says so. ``kube down`` stops with timeout 0 (SIGKILL,
  seen in podman 4.3.1's debug log), where podsync sends SIGTERM (the apps exit at once).
  The podman CLI works on the local libpod store directly, not through the service; run
  as root, that is the service's store, so both contenders drive the same engine. Its
  pods' infra container is the same pause test image as podsync's network container:
  kube play has no flag for it, so it runs with ``CONTAINERS_CONF`` naming a copy of
  ``/etc/containers/containers.conf`` with ``infra_image`` set under ``[engine]`` (in
  podman 4.3, ``CONTAINERS_CONF`` replaces the system files; without an infra image
  podman builds its own pause image, which needs ``catatonit``).

After each cold phase and re-apply, every container of the workload must be running
(counted with ``podman ps``, 3 per pod, both contenders): a wrong count stops the
benchmark. After each teardown nothing of it may be left (no container, no pod): a
teardown that exits non-zero or leaves something is reported, not fatal - its time is
kept, it counts in the *failed runs* column (and in the JSON, with what it left), and
what it left is removed, untimed, before the next phase. On podman 4.3.1 ``podsync
down`` fails this way whenever a pod's plan removes its network container before an app
container that joins it (podman refuses: "has dependent containers"; the removal-order
rule of issue 31 is still open).

Each phase runs ``--repeat`` times (default 3) in rounds, a contender's three phases in a
row; the contenders' order alternates from round to round. Wall-clock times
(``time.perf_counter`` around the process) are reported as minimum and median, with the
ratio podsync / kube play of each; the CPU time of the processes (``RUSAGE_CHILDREN``)
is beside them - the engine's own work (conmon, runc, the service) is in neither. There
are no targets: the figures are for the documentation. The podman service may be shared
with other work on a small machine: compare ratios from the same run, not seconds across
runs. This is a benchmark script, not a test.

Safety: everything this script creates carries this run's token: podsync's pods are in
the namespace ``podsync-bench-podman`` under the scope ``bench-podman-<pid>-<random>``,
kube play's pods are named ``bpm-<pid>-<random>-<i>``, and every pod has the label
``podsync-bench-run=<pid>-<random>``. All of it is removed in a ``finally``; at start,
leftovers of runs on this host whose process has gone are removed. Nothing else is
touched.

Run it from the repository root, as root, with podman served (``bash .ci/podman``)::

    python -m benchmarks.bench_podman                      # plain-text table
    python -m benchmarks.bench_podman --markdown           # Markdown, for docs/benchmarks.md
    python -m benchmarks.bench_podman --pods 20 --repeat 3 --json podman.json
    python -m benchmarks.bench_podman --plot docs/images/bench-podman.svg
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks import svgchart
from benchmarks.bench_apply import (
    APP_CONTAINERS,
    APP_ENTRYPOINT,
    APP_SCRIPT,
    RUN_TOKEN,
    BenchError,
    Sample,
    Series,
    Timer,
    _alive,
    _phase_bar,
    _ratio,
    _seconds,
    render_markdown,
    render_text,
)
from benchmarks.bench_e2e import _compile_podsync
from podsync import DEFAULT_WORKERS
from podsync.labels import LABEL_SCOPE
from tests.support.engine import (
    DEFAULT_PODMAN_HOST,
    PAUSE_IMAGE,
    PODMAN_HOST_ENV,
    TEST_IMAGE,
    connect,
    remove_containers,
)

NAMESPACE = "podsync-bench-podman"  # podsync's pods (kube play ignores a namespace)
SCOPE_PREFIX = "bench-podman-"  # podsync's scope: bench-podman-<pid>-<random>
POD_PREFIX = "bpm-"  # pod names: bpm-<pid>-<random>-<i>
RUN_LABEL = "podsync-bench-run"  # every pod's label: <pid>-<random>
TAG_PREFIX = "bench-podman-"
CONTAINERS_PER_POD = 1 + len(APP_CONTAINERS)  # the network (infra) container and the apps
STOP_TIMEOUT = 10
SYSTEM_CONF = Path("/etc/containers/containers.conf")

PODSYNC, KUBE = "podsync", "podman kube play"
CONTENDERS = (PODSYNC, KUBE)
COLD, REAPPLY, TEARDOWN = "cold", "re-apply", "teardown"
PHASES = (COLD, REAPPLY, TEARDOWN)
#: What each contender runs in each phase, as the table and the chart name it.
COMMANDS = {
    PODSYNC: {COLD: "podsync apply", REAPPLY: "podsync apply (no-op)", TEARDOWN: "podsync down"},
    KUBE: {
        COLD: "podman kube play",
        REAPPLY: "podman kube play --replace",
        TEARDOWN: "podman kube down",
    },
}


def image(reference: str, token: str) -> str:
    """``reference`` (``repository:tag``) under this run's tag."""
    return f"{reference.rpartition(':')[0]}:{TAG_PREFIX}{token}"


# ---------------------------------------------------------------------------------------
# The workload


def pod_name(token: str, i: int) -> str:
    return f"{POD_PREFIX}{token}-{i:03d}"


def pod_document(i: int, token: str, app_image: str) -> dict[str, Any]:
    """Pod ``i`` of the workload: two app containers that exit at once on SIGTERM."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(token, i),
            "namespace": NAMESPACE,
            "labels": {RUN_LABEL: token},
        },
        "spec": {
            "containers": [
                {
                    "name": c,
                    "image": app_image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": list(APP_ENTRYPOINT),
                    "args": [APP_SCRIPT],
                    "env": [
                        {"name": "POD_INDEX", "value": str(i)},
                        {"name": "CONTAINER", "value": c},
                    ],
                }
                for c in APP_CONTAINERS
            ]
        },
    }


def write_workload(path: Path, n: int, token: str, app_image: str) -> Path:
    """Write the ``n`` pods as one multi-document YAML file at ``path``; return it."""
    documents = [pod_document(i, token, app_image) for i in range(n)]
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False), encoding="utf-8")
    return path


def kube_play_conf(path: Path, infra_image: str, system: Path = SYSTEM_CONF) -> Path:
    """Write the ``CONTAINERS_CONF`` of kube play's processes at ``path``: the system
    file (when there is one) with ``infra_image`` set under ``[engine]``; return it."""
    lines = system.read_text(encoding="utf-8").splitlines() if system.exists() else []
    setting = f"infra_image = {json.dumps(infra_image)}"
    headers = [k for k, line in enumerate(lines) if line.strip() == "[engine]"]
    if headers:
        lines.insert(headers[0] + 1, setting)
    else:
        lines += ["", "[engine]", setting]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------
# The engine, through the podman CLI (untimed)


def podman(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-10:])
        raise BenchError(f"podman {' '.join(args)} exited {done.returncode}:\n{tail}")
    return done.stdout


def _ours(c: dict[str, Any], token: str) -> bool:
    """Whether container ``c`` (``podman ps --format json``) is this run's: a pod's
    label (podsync's containers and kube play's apps), or a kube play pod's name
    (its infra container carries no label)."""
    labels = c.get("Labels") or {}
    return labels.get(RUN_LABEL) == token or str(c.get("PodName", "")).startswith(
        f"{POD_PREFIX}{token}-"
    )


def containers(token: str) -> list[dict[str, Any]]:
    """This run's containers, running or not."""
    return [c for c in _all_containers() if _ours(c, token)]


def pods(prefix: str) -> list[str]:
    """The names of the podman pods whose name starts with ``prefix``."""
    found = json.loads(podman("pod", "ps", "--format", "json") or "[]")
    return [str(p["Name"]) for p in found if str(p["Name"]).startswith(prefix)]


def expect_running(token: str, n: int, what: str) -> None:
    """Every container of the workload runs, and no other of this run is left."""
    found = containers(token)
    running = sum(1 for c in found if c.get("State") == "running")
    want = n * CONTAINERS_PER_POD
    if running != want or len(found) != want:
        raise BenchError(f"after {what}: {running} of {len(found)} containers run, want {want}")


def remove_run(token: str, host: str) -> None:
    """Force-remove whatever run ``token`` left: its pods, its containers (joined ones
    first: podman refuses the others) and podsync's pod volumes of its scope."""
    names = pods(f"{POD_PREFIX}{token}-")
    if names:
        podman("pod", "rm", "-f", *names)
    client = connect(host=host)
    try:
        remove_containers(client, [c["Id"] for c in containers(token)])
        scope = {"label": f"{LABEL_SCOPE}={SCOPE_PREFIX}{token}"}
        for volume in client.api.volumes(filters=scope).get("Volumes") or ():
            client.api.remove_volume(volume["Name"], force=True)
    finally:
        client.close()


def remove_leftovers(host: str) -> list[str]:
    """Remove the leftovers of runs on this host whose process has gone; their tokens."""
    tokens = {str((c.get("Labels") or {}).get(RUN_LABEL, "")) for c in _all_containers()}
    tokens |= {name[len(POD_PREFIX) :].rpartition("-")[0] for name in pods(POD_PREFIX)}
    volumes = json.loads(podman("volume", "ls", "--format", "json") or "[]")
    scopes = {str((v.get("Labels") or {}).get(LABEL_SCOPE, "")) for v in volumes}
    tokens |= {x.removeprefix(SCOPE_PREFIX) for x in scopes if x.startswith(SCOPE_PREFIX)}
    stale = sorted(t for t in tokens if _dead_token(t))
    for token in stale:
        remove_run(token, host)
        untag_images(token)
    return stale


def _all_containers() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(
        podman("ps", "-a", "--pod", "--format", "json") or "[]"
    )
    return found


def _dead_token(token: str) -> bool:
    pid, _, rest = token.partition("-")
    return pid.isdigit() and bool(rest) and not _alive(int(pid))


def tag_images(token: str) -> None:
    for reference in (TEST_IMAGE, PAUSE_IMAGE):
        podman("tag", reference, image(reference, token))


def untag_images(token: str) -> None:
    for reference in (TEST_IMAGE, PAUSE_IMAGE):
        tagged = f"localhost/{image(reference, token)}"
        subprocess.run(["podman", "untag", tagged, tagged], capture_output=True)


def why_not(host: str) -> str | None:
    """Why the benchmark cannot run here, or None when it can."""
    if shutil.which("podman") is None:
        return "no podman command"
    try:
        client = connect(timeout=10, host=host)
        client.close()
    except Exception as exc:  # the reason is printed, whatever it is
        return f"no podman service at {host} ({exc}): bash .ci/podman"
    try:
        podman("image", "exists", TEST_IMAGE)
        podman("image", "exists", PAUSE_IMAGE)
    except BenchError:
        return "the test images are missing on podman: bash .ci/podman"
    return None


# ---------------------------------------------------------------------------------------
# The contenders


def run_timed(
    argv: Sequence[str], env: dict[str, str] | None = None, *, check: bool = True
) -> tuple[Sample, subprocess.CompletedProcess[str]]:
    """Run ``argv`` (with ``check``, it must succeed); its wall and CPU time, and the
    finished process (exit code in ``detail["exit"]``)."""
    with Timer(children=True) as timer:
        done = subprocess.run(list(argv), capture_output=True, text=True, env=env)
    if check and done.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited {done.returncode}:\n{_tail(done)}")
    return Sample(timer.seconds, timer.cpu, detail={"exit": done.returncode}), done


def _tail(done: subprocess.CompletedProcess[str], lines: int = 15) -> str:
    return "\n".join((done.stderr or done.stdout).strip().splitlines()[-lines:])


def teardown_checked(sample: Sample, done: subprocess.CompletedProcess[str], w: Workload) -> None:
    """Record in ``sample`` how many containers the teardown left (``detail["left"]``).
    A failed or incomplete teardown is reported, not fatal: its time is kept, marked,
    and what it left is removed (untimed) before the next phase."""
    left = len(containers(w.token)) + len(pods(f"{POD_PREFIX}{w.token}-"))
    sample.detail["left"] = left
    if done.returncode != 0 or left:
        first = next((x for x in done.stderr.splitlines() if "error" in x), _tail(done, 3))
        print(f"  teardown failed ({left} left): {first[:300]}", file=sys.stderr, flush=True)


@dataclass
class Workload:
    """One run's pod file, its token, and the engine both contenders drive."""

    n: int
    token: str
    file: Path
    conf: Path  # kube play's CONTAINERS_CONF
    root_dir: Path  # podsync's --root-dir
    host: str


def podsync_argv(command: str, w: Workload, *args: str) -> list[str]:
    """``python -m podsync COMMAND`` on the workload's engine, root directory and scope."""
    return [
        sys.executable,
        "-m",
        "podsync",
        command,
        "-H",
        w.host,
        "--root-dir",
        str(w.root_dir),
        "--scope",
        f"{SCOPE_PREFIX}{w.token}",
        "--stop-timeout",
        str(STOP_TIMEOUT),
        *args,
    ]


def run_podsync(w: Workload, series: Series) -> None:
    """podsync apply, apply again (nothing to do), down."""
    network = ["--network-mode", "none", "--network-image", image(PAUSE_IMAGE, w.token)]
    apply = podsync_argv("apply", w, *network, "-o", "name", str(w.file))
    cold, done = run_timed(apply)
    if len(done.stdout.split()) != w.n:
        raise BenchError(f"podsync apply changed {len(done.stdout.split())} pods, want {w.n}")
    expect_running(w.token, w.n, "podsync apply")
    again, done = run_timed(apply)
    if done.stdout.strip():
        raise BenchError(f"podsync apply again changed pods: {done.stdout.split()[:5]}")
    expect_running(w.token, w.n, "podsync apply again")
    down, done = run_timed(podsync_argv("down", w, str(w.file)), check=False)
    teardown_checked(down, done, w)
    series.add(COLD, cold)
    series.add(REAPPLY, again)
    series.add(TEARDOWN, down)


def run_kube(w: Workload, series: Series) -> None:
    """podman kube play, kube play --replace, kube down."""
    env = {**os.environ, "CONTAINERS_CONF": str(w.conf)}
    play = ["podman", "kube", "play", "--network", "none"]
    cold, _ = run_timed([*play, str(w.file)], env)
    expect_running(w.token, w.n, "podman kube play")
    again, _ = run_timed([*play, "--replace", str(w.file)], env)
    expect_running(w.token, w.n, "podman kube play --replace")
    down, done = run_timed(["podman", "kube", "down", str(w.file)], env, check=False)
    teardown_checked(down, done, w)
    series.add(COLD, cold)
    series.add(REAPPLY, again)
    series.add(TEARDOWN, down)


RUNNERS: dict[str, Callable[[Workload, Series], None]] = {PODSYNC: run_podsync, KUBE: run_kube}


def measure(w: Workload, repeat: int) -> dict[str, Series]:
    """Every phase of both contenders ``repeat`` times, their order alternating."""
    results = {PODSYNC: Series(PODSYNC, DEFAULT_WORKERS), KUBE: Series(KUBE, 0)}
    for k in range(repeat):
        for name in CONTENDERS if k % 2 == 0 else CONTENDERS[::-1]:
            try:
                RUNNERS[name](w, results[name])
            finally:
                remove_run(w.token, w.host)
            print(f"  round {k + 1}: {name} done", file=sys.stderr, flush=True)
    return results


# ---------------------------------------------------------------------------------------
# Reporting


def failed(s: Series, phase: str) -> int:
    """The runs of ``phase`` that failed (non-zero exit) or left something behind."""
    return sum(1 for x in s.samples(phase) if x.detail.get("exit") or x.detail.get("left"))


def _failures(results: dict[str, Series], phase: str) -> str:
    runs = [f"{failed(results[c], phase)}/{len(results[c].times(phase))}" for c in CONTENDERS]
    return " / ".join(runs)


def _failed_note(s: Series, phase: str) -> str:
    """What a bar's note says of the runs that failed, if any did."""
    bad = failed(s, phase)
    return f" - failed in {bad} of {len(s.times(phase))} runs" if bad else ""


def _median_ratio(results: dict[str, Series], phase: str) -> str:
    return _ratio(results[PODSYNC].median(phase), results[KUBE].median(phase))


def _min_ratio(results: dict[str, Series], phase: str) -> str:
    return _ratio(results[PODSYNC].min(phase), results[KUBE].min(phase))


def table(results: dict[str, Series]) -> tuple[list[str], list[list[str]]]:
    header = [
        "phase",
        "podsync",
        "median",
        "min",
        "podman",
        "median",
        "min",
        "podsync / podman (median)",
        "(min)",
        "runs",
        "failed runs (podsync / podman)",
    ]
    p, k = results[PODSYNC], results[KUBE]
    body = [
        [
            phase,
            f"`{COMMANDS[PODSYNC][phase]}`",
            _seconds(p.median(phase)),
            _seconds(p.min(phase)),
            f"`{COMMANDS[KUBE][phase]}`",
            _seconds(k.median(phase)),
            _seconds(k.min(phase)),
            _median_ratio(results, phase),
            _min_ratio(results, phase),
            str(min(len(p.times(phase)), len(k.times(phase)))),
            _failures(results, phase),
        ]
        for phase in PHASES
    ]
    return header, body


def cpu_line(results: dict[str, Series]) -> str:
    """The client processes' CPU time (median) of each phase."""

    def cpu(s: Series, phase: str) -> str:
        values = sorted(x.cpu for x in s.samples(phase))
        return _seconds(values[len(values) // 2]) if values else "-"

    return "client CPU (median): " + "; ".join(
        f"{phase} podsync {cpu(results[PODSYNC], phase)}, podman {cpu(results[KUBE], phase)}"
        for phase in PHASES
    )


def as_json(results: dict[str, Series], n: int, meta: dict[str, Any]) -> dict[str, Any]:
    """The ``--json`` document: every run's times, and the ratios."""
    phases: dict[str, Any] = {}
    for phase in PHASES:
        entry: dict[str, Any] = {}
        for name in CONTENDERS:
            s = results[name]
            entry[name] = {
                "command": COMMANDS[name][phase],
                "seconds": s.times(phase),
                "cpu_seconds": [x.cpu for x in s.samples(phase)],
                "exit_codes": [int(x.detail.get("exit", 0)) for x in s.samples(phase)],
                "left_behind": [int(x.detail.get("left", 0)) for x in s.samples(phase)],
                "failed_runs": failed(s, phase),
                "min": s.min(phase),
                "median": s.median(phase),
            }
        p, k = results[PODSYNC], results[KUBE]
        pm, km, pn, kn = p.median(phase), k.median(phase), p.min(phase), k.min(phase)
        entry["ratio_median"] = pm / km if pm is not None and km else None
        entry["ratio_min"] = pn / kn if pn is not None and kn else None
        phases[phase] = entry
    return {"pods": n, "containers_per_pod": CONTAINERS_PER_POD, **meta, "phases": phases}


def plot(results: dict[str, Series], n: int, notes: Sequence[str] = ()) -> str:
    """The ``--plot`` figure: each phase, podsync beside podman's own command (the
    reference), bars at the minimum of the runs, whiskers to the slowest."""
    p, k = results[PODSYNC], results[KUBE]
    groups = []
    for phase in PHASES:
        note = f"({_median_ratio(results, phase)} podman's, by the median)"
        groups.append(
            svgchart.BarGroup(
                phase,
                (
                    _phase_bar(COMMANDS[PODSYNC][phase], p, phase, note + _failed_note(p, phase)),
                    _phase_bar(COMMANDS[KUBE][phase], k, phase, _failed_note(k, phase), True),
                ),
            )
        )
    chart = svgchart.BarChart(
        f"{n} pods of {CONTAINERS_PER_POD} containers on podman, process start to exit",
        svgchart.Axis(
            "seconds (bar: minimum of the runs; whisker: to the slowest run)",
            format=svgchart.seconds,
        ),
        tuple(groups),
    )
    desc = " ".join(
        f"{phase}: podsync {_seconds(p.median(phase))}{_failed_note(p, phase)}, podman "
        f"{_seconds(k.median(phase))}{_failed_note(k, phase)} "
        f"({_median_ratio(results, phase)}, medians)."
        for phase in PHASES
    )
    return svgchart.figure("podsync against podman kube play", desc, [chart], notes)


def podman_version() -> str:
    return podman("version", "--format", "{{.Client.Version}}").strip()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--pods", type=int, default=20, help="pods (default 20)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument(
        "-H",
        "--host",
        default=os.environ.get(PODMAN_HOST_ENV) or DEFAULT_PODMAN_HOST,
        help=f"podman's service, for podsync (default: {PODMAN_HOST_ENV}, else "
        f"{DEFAULT_PODMAN_HOST})",
    )
    parser.add_argument("--markdown", action="store_true", help="Markdown table")
    parser.add_argument("--json", metavar="FILE", help="also write every run's times as JSON")
    parser.add_argument("--plot", metavar="FILE.svg", help="also draw the times as an SVG chart")
    args = parser.parse_args(argv)
    if args.pods < 1 or args.repeat < 1:
        parser.error("--pods and --repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    reason = why_not(args.host)
    if reason is not None:
        print(f"cannot run: {reason}")
        return 2
    load = os.getloadavg()[0]
    version = podman_version()
    print(
        f"podsync against podman kube play - podman {version}, Python "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load:.1f}; {args.pods} pods x "
        f"{CONTAINERS_PER_POD} containers, {args.repeat} rounds."
    )
    _compile_podsync()
    stale = remove_leftovers(args.host)
    if stale:
        print(f"removed the leftovers of gone runs {', '.join(stale)}", file=sys.stderr)
    token = RUN_TOKEN
    try:
        tag_images(token)
        with tempfile.TemporaryDirectory(prefix="podsync-bench-podman-") as work:
            w = Workload(
                n=args.pods,
                token=token,
                file=write_workload(
                    Path(work, "pods.yaml"), args.pods, token, image(TEST_IMAGE, token)
                ),
                conf=kube_play_conf(Path(work, "containers.conf"), image(PAUSE_IMAGE, token)),
                root_dir=Path(work, "root"),
                host=args.host,
            )
            results = measure(w, args.repeat)
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    finally:
        remove_run(token, args.host)
        untag_images(token)
    header, body = table(results)
    if not args.markdown:
        body = [[cell.strip("`") for cell in row] for row in body]
    print(render_markdown(header, body) if args.markdown else render_text(header, body))
    print(cpu_line(results))
    end_load = os.getloadavg()[0]
    print(f"load average {load:.1f} at the start, {end_load:.1f} at the end")
    if args.json:
        meta = {
            "podman": version,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": [load, end_load],
            "rounds": args.repeat,
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(as_json(results, args.pods, meta), f, indent=2)
            f.write("\n")
        print(f"times written to {args.json}")
    if args.plot:
        notes = svgchart.run_notes(
            "benchmarks.bench_podman", sys.argv[1:] if argv is None else argv
        )
        notes.append(f"podman {version}")
        svgchart.save(args.plot, plot(results, args.pods, notes))
        print(f"chart written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
