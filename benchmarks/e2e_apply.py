"""The one-pod apply of the end-to-end benchmark (``benchmarks.bench_e2e``): ``podsync
apply`` of one pod, process start to running, against two ``docker run -d`` doing the
same, the SDK floor (the same four engine calls from a minimal docker SDK script) and the
Python floors, in the same runs. Moved out of ``bench_e2e`` to keep one concept per
module; ``bench_e2e`` reports and draws what it measures."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.bench_plan import Timing

PAUSE_IMAGE = "podsync-test/pause:latest"
APP_IMAGE = "podsync-test/busybox:latest"
# The images under a tag of this benchmark's: an explicit :latest is always pulled (as
# in the seed), and nothing may be pulled here.
BENCH_TAG = "bench-e2e"
NAMESPACE = "bench-e2e"

# The processes timed here run as a user's do: with their bytecode cached (compiled
# once, before the first timing), whatever this environment says.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


ONE_POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: one
  namespace: {NAMESPACE}
spec:
  containers:
  - name: app
    image: {APP_IMAGE.replace(":latest", ":" + BENCH_TAG)}
"""


def _docker(*args: str) -> str:
    out = subprocess.run(["docker", *args], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _remove_ours(run_id: str) -> None:
    ids = _docker("ps", "-aq", "--filter", f"label=io.podsync.bench.e2e={run_id}").split()
    ids += _docker("ps", "-aq", "--filter", f"label=io.podsync.pod.namespace={NAMESPACE}").split()
    if ids:
        _docker("rm", "-f", *ids)


# The SDK floor: the four engine calls of a one-pod apply, and nothing else, from a
# Python process using the docker SDK (argv: API version, label, network image, app
# image). The API version is given, so the client asks the engine nothing first.
_SDK_FLOOR = """\
import os, sys
import docker
version, label, net_image, app_image = sys.argv[1:]
key, _, value = label.partition("=")
api = docker.APIClient(base_url=os.environ.get("DOCKER_HOST"), version=version)
net = api.create_container(
    net_image, labels={key: value}, host_config=api.create_host_config(network_mode="none")
)["Id"]
api.start(net)
app = api.create_container(
    app_image,
    labels={key: value},
    host_config=api.create_host_config(network_mode="container:" + net),
)["Id"]
api.start(app)
"""


@dataclass
class Timed:
    """Wall-clock times of a contender, and the CPU time (user + system) its processes
    used: on a shared machine the CPU time moves less with the load than the wall
    clock does, and it leaves out the engine's work (in dockerd, not in the process)."""

    wall: Timing = field(default_factory=Timing)
    cpu: Timing = field(default_factory=Timing)

    def add(self, wall: float, cpu: float) -> None:
        self.wall.runs.append(wall)
        self.cpu.runs.append(cpu)

    @property
    def min(self) -> float:
        return self.wall.min

    @property
    def median(self) -> float:
        return self.wall.median


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_all(commands: Sequence[Sequence[str]], cwd: str | None = None) -> tuple[float, float]:
    """Run the commands one after the other (each must succeed); (wall seconds, CPU
    seconds of their processes: the growth of this process's reaped children's usage)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    for argv in commands:
        subprocess.run(argv, capture_output=True, check=True, env=ENV, cwd=cwd)
    return time.perf_counter() - start, _children_cpu() - cpu


@dataclass
class ApplyTimings:
    """One-pod apply and its comparisons, process start to running (or to exit)."""

    podsync: Timed = field(default_factory=Timed)
    baseline: Timed = field(default_factory=Timed)  # --baseline's podsync apply
    docker: Timed = field(default_factory=Timed)  # two docker run -d
    sdk_floor: Timed = field(default_factory=Timed)  # _SDK_FLOOR
    python: Timed = field(default_factory=Timed)  # python -c pass
    import_docker: Timed = field(default_factory=Timed)  # python -c "import docker"


def measure_apply(work: str, repeat: int, baseline: str | None = None) -> ApplyTimings:
    """podsync apply, two docker run -d, and the Python floors, for one pod: process
    start to running, alternating the order of the contenders from run to run.
    ``baseline``: the root of another podsync source tree (an earlier commit), whose
    ``podsync apply`` is timed in the same runs."""
    run_id = uuid.uuid4().hex[:12]
    pod_file = os.path.join(work, "one.yaml")
    with open(pod_file, "w", encoding="utf-8") as f:
        f.write(ONE_POD)
    pause, app = (image.replace(":latest", ":" + BENCH_TAG) for image in (PAUSE_IMAGE, APP_IMAGE))
    _docker("tag", PAUSE_IMAGE, pause)
    _docker("tag", APP_IMAGE, app)
    apply_argv = [
        sys.executable,
        "-m",
        "podsync",
        "apply",
        "--network-image",
        pause,
        "--network-mode",
        "none",
        "--root-dir",
        os.path.join(work, "root"),
        pod_file,
    ]
    label = f"io.podsync.bench.e2e={run_id}"
    version = _docker("version", "--format", "{{.Server.APIVersion}}")
    sdk_argv = [sys.executable, "-c", _SDK_FLOOR, version, label, PAUSE_IMAGE, APP_IMAGE]
    timings = ApplyTimings()
    contenders = ["podsync", "docker", "sdk", "python", "import docker"]
    if baseline is not None:
        contenders.insert(1, "baseline")
        # Its bytecode compiled once, as ours (_compile_podsync).
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", os.path.join(baseline, "podsync")],
            check=True,
            env=ENV,
        )

    def docker_runs(k: int) -> list[list[str]]:
        net = f"bench-e2e-net-{run_id}-{k}"
        common = ["docker", "run", "-d", "--label", label, "--network"]
        return [
            [*common, "none", "--name", net, PAUSE_IMAGE],
            [*common, f"container:{net}", APP_IMAGE],
        ]

    try:
        _remove_ours(run_id)
        for k in range(repeat):
            for contender in contenders if k % 2 == 0 else contenders[::-1]:
                if contender == "podsync":
                    timings.podsync.add(*_run_all([apply_argv]))
                elif contender == "baseline":
                    # ``python -m podsync`` finds the package in its working directory.
                    timings.baseline.add(*_run_all([apply_argv], cwd=baseline))
                elif contender == "sdk":
                    timings.sdk_floor.add(*_run_all([sdk_argv]))
                elif contender == "python":
                    timings.python.add(*_run_all([[sys.executable, "-c", "pass"]]))
                elif contender == "import docker":
                    argv = [sys.executable, "-c", "import docker"]
                    timings.import_docker.add(*_run_all([argv]))
                else:
                    timings.docker.add(*_run_all(docker_runs(k)))
                _remove_ours(run_id)
    finally:
        _remove_ours(run_id)
        _docker("rmi", pause, app)
    return timings
