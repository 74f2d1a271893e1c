"""``DockerRuntime``'s usage readings without an engine: the cgroup files of a container
found from its process (cgroup v1 as cgroupfs lays it out, v2 as systemd and podman do,
in a tree under ``tmp_path``), the working set as cAdvisor computes it, and the Engine
API's stats answers of Docker (v1 and v2) and podman. The same readings on the real
engines are in ``tests/engine/test_usage.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from podsync import ContainerUsage
from podsync.runtime.docker._cgroups import CgroupFiles, cgroup_files, read_cgroup
from podsync.runtime.docker._usage import api_usage

CID = "f0bdd88aadc4ea67bd1d73f40aaf8fb9143443ca696888b77c4c6e8bfb13ea71"
MiB = 1024 * 1024


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _process(proc: Path, pid: int, lines: str) -> None:
    _write(proc / str(pid) / "cgroup", lines)


def test_v1_cgroupfs(tmp_path: Path) -> None:
    root, proc = tmp_path / "cgroup", tmp_path / "proc"
    _process(proc, 42, f"4:memory:/docker/{CID}\n2:cpuacct:/docker/{CID}\n0::/docker/{CID}\n")
    _write(root / "cpuacct" / "docker" / CID / "cpuacct.usage", "2500000000\n")
    memory = root / "memory" / "docker" / CID
    _write(memory / "memory.usage_in_bytes", f"{30 * MiB}\n")
    _write(memory / "memory.stat", f"inactive_file 1\ntotal_inactive_file {10 * MiB}\n")
    files = cgroup_files(42, CID, str(root), str(proc))
    assert files == CgroupFiles(
        str(root / "cpuacct" / "docker" / CID / "cpuacct.usage"), str(memory), v2=False
    )
    assert (2.5, 20 * MiB) == read_cgroup(files)


@pytest.mark.parametrize(
    "path",
    [
        f"/system.slice/docker-{CID}.scope",  # Docker, systemd driver
        f"/machine.slice/libpod-{CID}.scope/container",  # podman
    ],
)
def test_v2_unified(tmp_path: Path, path: str) -> None:
    root, proc = tmp_path / "cgroup", tmp_path / "proc"
    _process(proc, 7, f"0::{path}\n")
    directory = root / path.lstrip("/")
    _write(directory / "cpu.stat", "usage_usec 1500000\nuser_usec 1000000\n")
    _write(directory / "memory.current", f"{8 * MiB}\n")
    _write(directory / "memory.stat", f"anon {6 * MiB}\ninactive_file {9 * MiB}\n")
    files = cgroup_files(7, CID, str(root), str(proc))
    assert files == CgroupFiles(str(directory / "cpu.stat"), str(directory), v2=True)
    # More inactive cache than usage: a working set of 0, never below (cAdvisor).
    assert (1.5, 0) == read_cgroup(files)


def test_a_process_of_another_container_or_none_is_not_local(tmp_path: Path) -> None:
    root, proc = tmp_path / "cgroup", tmp_path / "proc"
    _process(proc, 9, "0::/system.slice/docker-0123.scope\n")
    assert cgroup_files(9, CID, str(root), str(proc)) is None  # another container's
    assert cgroup_files(10, CID, str(root), str(proc)) is None  # no such process here
    _process(proc, 11, f"0::/docker/{CID}\n")
    assert cgroup_files(11, CID, str(root), str(proc)) is None  # named, but no files here


def test_a_gone_cgroup_raises_for_the_caller(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_cgroup(CgroupFiles(str(tmp_path / "cpu.stat"), str(tmp_path), v2=True))


def test_api_answers() -> None:
    docker_v1 = {
        "cpu_stats": {"cpu_usage": {"total_usage": 3_000_000_000}},
        "memory_stats": {"usage": 50 * MiB, "stats": {"total_inactive_file": 20 * MiB}},
    }
    assert ContainerUsage(3.0, 30 * MiB, 9.0) == api_usage(docker_v1, 9.0)
    docker_v2 = {
        "cpu_stats": {"cpu_usage": {"total_usage": 500_000_000}},
        "memory_stats": {"usage": 5 * MiB, "stats": {"inactive_file": MiB}},
    }
    assert ContainerUsage(0.5, 4 * MiB, 1.0) == api_usage(docker_v2, 1.0)
    # podman's compat answer has no stats: its usage as it is.
    podman = {"cpu_stats": {"cpu_usage": {"total_usage": 1}}, "memory_stats": {"usage": 7}}
    assert ContainerUsage(1e-9, 7, 1.0) == api_usage(podman, 1.0)
    # Docker's answer for a stopped container: zeroes, and no memory usage.
    stopped = {"cpu_stats": {"cpu_usage": {"total_usage": 0}}, "memory_stats": {}}
    assert api_usage(stopped, 1.0) is None
