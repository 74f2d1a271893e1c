"""configMap/secret/downwardAPI volumes in the engine (issue 18): what reading back a
record costs, and how long ``..data`` is missing while it is swapped.

What it measures
================

* **Record reads**: ``--reads`` times each, the wall time of reading a volume's record
  (``..data/..podsync``) through a container that mounts the volume
  (``Runtime.read_container_file``: one ``GET /containers/{id}/archive``) and through a
  helper container (``VolumeRuntime.read_volume_file``: a create, the ``GET`` and a remove),
  p50 and p95. podsync reads through a container; a sync at steady state makes one such
  read per content volume.
* **Writes**: the wall time of one ``WriteVolume`` (a helper container and one ``PUT``
  archive), p50 and p95 over the swaps below.
* **The ``..data`` window**: a container tests ``[ -e /etc/config/app.conf ]`` in a
  shell loop (a builtin, no process per test) while ``--swaps`` writes change the
  ConfigMap; it counts the tests that found the name missing, out of all it made. The
  engine writes ``..data`` over ``..data`` as an unlink then a symlink (no rename): a
  test that falls between the two sees nothing.

* **A steady sync of N pods** (``--steady-pods N``, instead of the above): N pods, each
  with a ConfigMap volume, started once; then ``--rounds`` steady syncs
  (``podsync.sync``, nothing to do), and the observation they start with two ways in
  the same run: as podsync makes it now (the containers and the volumes listed, each
  record read from its record volume's labels, ``podsync.spec._content_records``) and as
  podsync made it before record volumes - the reference (the containers listed, then
  one archive read per volume through a container that mounts it:
  ``read_content_records`` without the volume list). p50 and p95 of each.

The pod runs against the engine of ``DOCKER_HOST`` with the test images (``python -m
tests.support.engine images``); everything made is removed at the end. Not a test.

Run it from the repository root::

    python -m benchmarks.bench_content_volumes
    python -m benchmarks.bench_content_volumes --reads 20 --swaps 20   # a quick look
    python -m benchmarks.bench_content_volumes --steady-pods 50 --rounds 10
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Collection

import podsync
from podsync.docker import DockerRuntime
from podsync.spec._content_layout import RECORD_MAX_BYTES, RECORD_PATH
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE


def _pod_text(value: str, command: str) -> str:
    """A ConfigMap ``NAME`` holding ``app.conf: value`` and a pod ``NAME`` whose one
    container mounts it at /etc/config and runs ``command`` (a YAML flow sequence);
    ``NAME`` is replaced per pod."""
    return f"""\
apiVersion: v1
kind: ConfigMap
metadata: {{name: NAME}}
data: {{app.conf: "{value}"}}
---
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  volumes: [{{name: config, configMap: {{name: NAME}}}}]
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: {command}
    volumeMounts: [{{name: config, mountPath: /etc/config}}]
"""


# The swap benchmark's pod: counts, until /tmp/stop exists, the existence tests of its
# file and the misses among them.
POD = _pod_text(
    "VALUE",
    "[/bin/sh, -c, 'n=0; m=0; while [ ! -e /tmp/stop ]; do n=$((n+1)); "
    "[ -e /etc/config/app.conf ] || m=$((m+1)); done; echo $n $m > /tmp/counts; sleep 3600']",
)
# The steady-sync benchmark's pod: sleeps, and stops at once on TERM.
STEADY_POD = _pod_text(
    "color=blue", """[/bin/sh, -c, "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"]"""
)


def _quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms"


def _remove_pods(runtime: DockerRuntime, uids: Collection[str]) -> None:
    """Remove the containers and every volume (content volumes and their record
    volumes) of the pods ``uids``."""
    for container in runtime.list_containers():
        if container.labels.get(podsync.labels.LABEL_POD_UID) in uids:
            runtime.stop_container(container.id, 1)
            runtime.remove_container(container.id)
    for volume in runtime.list_volumes():
        if volume.labels.get(podsync.labels.LABEL_POD_UID) in uids:
            runtime.remove_volume(volume.name)


def _timed(call: Callable[[], object], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def steady(pods: int, rounds: int) -> None:
    """``--steady-pods``: a steady sync of ``pods`` pods with a ConfigMap volume, and
    its observation now and as before record volumes (see the module docstring)."""
    from podsync.applier._content_engine import read_content_records
    from podsync.host._files import list_pod_dirs

    run = uuid.uuid4().hex[:6]
    desired = [
        pod
        for n in range(pods)
        for pod in podsync.parse_pods(STEADY_POD.replace("NAME", f"steady-{run}-{n}"))
    ]
    root = tempfile.mkdtemp(prefix="podsync-bench-")
    options = podsync.PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=root,
        allow_deletions=False,
        stop_timeout=1,
    )
    uids = {p.uid for p in desired}
    with DockerRuntime() as runtime:
        try:
            started = podsync.sync(desired, runtime, options=options, probe=False)
            assert started.ok, started.apply_result.summary()
            syncs: list[float] = []
            for _ in range(rounds):
                start = time.perf_counter()
                result = podsync.sync(desired, runtime, options=options, probe=False)
                syncs.append(time.perf_counter() - start)
                assert not result.plan.has_changes, result.plan.describe()
            now = _timed(
                lambda: podsync.observe(runtime, root, images=False, desired=desired, probed=False),
                rounds,
            )

            def before() -> None:
                containers = runtime.list_containers()
                found = read_content_records(
                    runtime, root, desired, containers, list_pod_dirs(root)
                )
                assert len(found) == pods

            reference = _timed(before, rounds)
            print(f"{pods} pods with a ConfigMap volume, {rounds} rounds")
            print(f"steady sync (now)                           : {_quantiles(syncs)}")
            print(f"observation now (list + record volumes)     : {_quantiles(now)}")
            print(f"observation before (list + {pods} archive reads): {_quantiles(reference)}")
        finally:
            _remove_pods(runtime, uids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, default=50)
    parser.add_argument("--swaps", type=int, default=50)
    parser.add_argument("--steady-pods", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if args.steady_pods:
        steady(args.steady_pods, args.rounds)
        return
    name = f"bench-{uuid.uuid4().hex[:8]}"
    options = podsync.PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=tempfile.mkdtemp(prefix="podsync-bench-"),
        allow_deletions=False,
        stop_timeout=1,
    )

    def load(value: str) -> podsync.Pod:
        (pod,) = podsync.parse_pods(POD.replace("NAME", name).replace("VALUE", value))
        return pod

    with DockerRuntime() as runtime:
        pod = load("v0")
        try:
            result = podsync.sync([pod], runtime, options=options, probe=False)
            assert result.ok, result.apply_result.summary()
            (app,) = [
                c
                for c in runtime.list_containers()
                if c.labels.get(podsync.labels.LABEL_POD_UID) == pod.uid
                and c.labels.get(podsync.labels.LABEL_CONTAINER) == "app"
            ]
            volume = f"podsync-content_{pod.uid}_config"
            through_container = _timed(
                lambda: runtime.read_container_file(
                    app.id, f"/etc/config/{RECORD_PATH}", limit=RECORD_MAX_BYTES
                ),
                args.reads,
            )
            through_helper = _timed(
                lambda: runtime.read_volume_file(volume, RECORD_PATH, limit=RECORD_MAX_BYTES),
                args.reads,
            )
            writes: list[float] = []
            for n in range(1, args.swaps + 1):
                start = time.perf_counter()
                done = podsync.sync([load(f"v{n}")], runtime, options=options, probe=False)
                writes.append(time.perf_counter() - start)
                assert done.ok, done.apply_result.summary()
            runtime.exec_in_container(app.id, ["/bin/touch", "/tmp/stop"], 10.0)
            time.sleep(0.5)
            counts = runtime.exec_in_container(app.id, ["/bin/cat", "/tmp/counts"], 10.0)
            tests, missing = (int(x) for x in counts.output.split())
            print(f"record read, through the container : {_quantiles(through_container)}")
            print(f"record read, through a helper      : {_quantiles(through_helper)}")
            print(f"sync that rewrites the volume      : {_quantiles(writes)}")
            print(
                f"..data window: {missing} of {tests} existence tests found the file "
                f"missing during {args.swaps} swaps"
            )
        finally:
            _remove_pods(runtime, {pod.uid})


if __name__ == "__main__":
    main()
