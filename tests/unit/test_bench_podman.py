"""``benchmarks.bench_podman``'s pieces that need no engine: the pod file both
contenders are given, kube play's ``CONTAINERS_CONF``, and the report drawn from
synthetic results. The benchmark itself runs in ``tests/engine/test_bench_podman.py``."""

from __future__ import annotations

import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from benchmarks import bench_podman
from benchmarks.bench_apply import Sample, Series
from benchmarks.svgchart import REFERENCE
from podsync import load_pods

SVG = "{http://www.w3.org/2000/svg}"
APP_IMAGE = "podsync-test/busybox:bench-podman-1-abc"


def test_the_workload_is_one_file_of_pods_podsync_reads(tmp_path: Path) -> None:
    """N pod documents in one file; podsync reads N pods of two app containers of the
    run's image, never pulled when present, each with its own name and the run's label."""
    path = bench_podman.write_workload(tmp_path / "pods.yaml", 4, "1-abc", APP_IMAGE)
    documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    assert [d["kind"] for d in documents] == ["Pod"] * 4
    pods = load_pods([str(path)])
    assert [p.name for p in pods] == [f"bpm-1-abc-{i:03d}" for i in range(4)]
    for pod in pods:
        assert pod.namespace == bench_podman.NAMESPACE
        assert pod.labels[bench_podman.RUN_LABEL] == "1-abc"
        assert [c.name for c in pod.containers] == ["a", "b"]
        for c in pod.containers:
            assert c.image == APP_IMAGE
            assert c.image_pull_policy == "IfNotPresent"
            assert c.command == ("/bin/sh", "-c")
            assert "trap 'exit 0' TERM" in c.args[0]


def test_kube_plays_conf_keeps_the_system_file_and_sets_the_infra_image(tmp_path: Path) -> None:
    """The system file's settings stay; ``infra_image`` lands under ``[engine]``, whether
    the system file has that table, has none, or does not exist."""
    infra = "podsync-test/pause:bench-podman-1-abc"
    cases = {
        "table": '[containers]\ndefault_ulimits = []\n[engine]\nevents_logger = "file"\n',
        "none": "[containers]\ndefault_ulimits = []\n",
    }
    for name, text in cases.items():
        system = tmp_path / f"{name}.conf"
        system.write_text(text, encoding="utf-8")
        out = bench_podman.kube_play_conf(tmp_path / f"{name}-out.conf", infra, system)
        conf = tomllib.loads(out.read_text(encoding="utf-8"))
        assert conf["engine"]["infra_image"] == infra, name
        assert conf["containers"]["default_ulimits"] == [], name
    missing = bench_podman.kube_play_conf(tmp_path / "out.conf", infra, tmp_path / "absent")
    assert tomllib.loads(missing.read_text(encoding="utf-8")) == {"engine": {"infra_image": infra}}


def _results() -> dict[str, Series]:
    podsync, kube = Series(bench_podman.PODSYNC, 8), Series(bench_podman.KUBE, 0)
    for k, (cold, again, down) in enumerate(((3.0, 0.5, 2.0), (3.4, 0.6, 2.2))):
        podsync.add(bench_podman.COLD, Sample(cold, 0.6))
        podsync.add(bench_podman.REAPPLY, Sample(again, 0.5))
        podsync.add(bench_podman.TEARDOWN, Sample(down, 0.5, detail={"exit": k, "left": 2 * k}))
        kube.add(bench_podman.COLD, Sample(2 * cold, 0.4))
        kube.add(bench_podman.REAPPLY, Sample(8 * again, 0.7))
        kube.add(bench_podman.TEARDOWN, Sample(down, 0.3, detail={"exit": 0, "left": 0}))
    return {bench_podman.PODSYNC: podsync, bench_podman.KUBE: kube}


def test_the_report_gives_each_phase_as_a_ratio_of_medians_with_its_failures() -> None:
    header, body = bench_podman.table(_results())
    rows = {row[0]: dict(zip(header, row, strict=True)) for row in body}
    assert list(rows) == ["cold", "re-apply", "teardown"]
    assert rows["cold"]["podsync / podman (median)"] == "0.50x"
    assert rows["re-apply"]["podsync / podman (median)"] == "0.12x"
    assert rows["teardown"]["podsync / podman (median)"] == "1.00x"
    assert rows["teardown"]["failed runs (podsync / podman)"] == "1/2 / 0/2"
    assert rows["cold"]["failed runs (podsync / podman)"] == "0/2 / 0/2"
    data = bench_podman.as_json(_results(), 20, {"podman": "4.3.1"})
    teardown = data["phases"]["teardown"]
    assert teardown["podsync"]["left_behind"] == [0, 2]
    assert teardown["podsync"]["failed_runs"] == 1
    assert data["phases"]["cold"]["ratio_median"] == 3.2 / 6.4


def test_the_plot_draws_each_phase_beside_podmans_command() -> None:
    root = ET.fromstring(bench_podman.plot(_results(), 20))
    bars = [
        (e.get("data-label", ""), float(e.get("data-value", "")), e.get("fill", ""))
        for e in root.iter(f"{SVG}rect")
        if e.get("class") == "bar"
    ]
    assert [label for label, _, _ in bars] == [
        "podsync apply",
        "podman kube play",
        "podsync apply (no-op)",
        "podman kube play --replace",
        "podsync down",
        "podman kube down",
    ]
    assert [value for _, value, _ in bars] == [3.0, 6.0, 0.5, 4.0, 2.0, 2.0]
    assert [fill == REFERENCE for _, _, fill in bars] == [False, True] * 3
    text = "\n".join("".join(e.itertext()) for e in root.iter(f"{SVG}text"))
    assert "(1.00x podman's, by the median) - failed in 1 of 2 runs" in text
    assert (
        "teardown: podsync 2.10 s - failed in 1 of 2 runs, podman 2.10 s (1.00x"
        in root.findtext(f"{SVG}desc", "")
    )
