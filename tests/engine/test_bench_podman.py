"""``python -m benchmarks.bench_podman`` runs end to end on podman (two pods, one
round): both contenders' phases are timed, every cold phase and re-apply ran every
container (the benchmark stops otherwise), podman's own teardown left nothing, and the
run leaves nothing of its own behind. No time is asserted: the figures are the
benchmark's, for the documentation.

podman only: the benchmark compares podsync with ``podman kube play`` on the same
podman; on another engine it is skipped, with that reason.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks import bench_podman
from podsync.labels import LABEL_SCOPE
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, engine_address


def test_the_podman_benchmark_runs_end_to_end(engine_name: str, tmp_path: Path) -> None:
    if engine_name != "podman":
        pytest.skip(f"podman only: compares podsync with podman kube play, not on {engine_name}")
    out = tmp_path / "times.json"
    argv = ["--pods", "2", "--repeat", "1", "-H", engine_address("podman"), "--json", str(out)]
    assert bench_podman.main([*argv, "--plot", str(tmp_path / "chart.svg")]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["pods"] == 2
    assert data["containers_per_pod"] == 3
    for phase in bench_podman.PHASES:
        for contender in bench_podman.CONTENDERS:
            runs = data["phases"][phase][contender]
            assert len(runs["seconds"]) == 1, (phase, contender)
            assert runs["seconds"][0] > 0
            if phase != bench_podman.TEARDOWN:
                assert runs["exit_codes"] == [0], (phase, contender)
    kube = data["phases"][bench_podman.TEARDOWN][bench_podman.KUBE]
    assert kube["exit_codes"] == [0]
    assert kube["left_behind"] == [0]
    podsync = data["phases"][bench_podman.TEARDOWN][bench_podman.PODSYNC]
    # What the benchmark says of podsync's teardown is what it saw: a clean exit left nothing.
    if podsync["exit_codes"] == [0]:
        assert podsync["left_behind"] == [0]
    assert (tmp_path / "chart.svg").read_text(encoding="utf-8").startswith("<svg")
    # Nothing of the run is left: containers, pods, podsync's pod volumes, image tags.
    token = bench_podman.RUN_TOKEN
    assert bench_podman.containers(token) == []
    assert bench_podman.pods(f"{bench_podman.POD_PREFIX}{token}-") == []
    scope = f"label={LABEL_SCOPE}={bench_podman.SCOPE_PREFIX}{token}"
    assert bench_podman.podman("volume", "ls", "-q", "--filter", scope).split() == []
    for reference in (TEST_IMAGE, PAUSE_IMAGE):
        tagged = bench_podman.image(reference, token)
        exists = subprocess.run(["podman", "image", "exists", tagged], check=False)
        assert exists.returncode == 1, f"{tagged} is still tagged"
