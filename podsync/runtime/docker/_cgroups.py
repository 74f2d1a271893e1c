"""A container's usage read from its cgroup's files, when the engine runs on this
machine; the host's from ``/proc``.

The Engine API's stats are dear: Docker's ``GET /containers/{id}/stats?stream=false``
waits for a second sample (about a second, two measured on Docker 20.10), and even with
``one-shot=true`` (API 1.41) it is one HTTP round trip per container in which the engine
reads these same files. When the engine is local the files are on this machine, and
reading them costs microseconds (``benchmarks/bench_usage.py``).

"Local" is verified per container, never assumed from the socket's address: the
container's main process (``State.Pid``) is looked up in this machine's ``/proc``, and
its ``/proc/<pid>/cgroup`` must name the container's id (cgroupfs: ``/docker/<id>``;
systemd: ``docker-<id>.scope``; podman: ``libpod-<id>.scope``). An engine in another
machine or another pid namespace fails that check (no such pid, or another process's
cgroup) and is read through the API.

What is read, as cAdvisor reads it (``container/libcontainer/handler.go``):

* cgroup v2 (one hierarchy; ``0::/path``): ``cpu.stat``'s ``usage_usec``;
  ``memory.current`` minus ``memory.stat``'s ``inactive_file``;
* cgroup v1 (a hierarchy per controller): ``cpuacct.usage`` (nanoseconds);
  ``memory.usage_in_bytes`` minus ``memory.stat``'s ``total_inactive_file``.

The working set is never below 0 (cAdvisor: when the inactive file cache is larger than
the usage, 0).

Contract: plain functions over paths; an ``OSError`` (or ``ValueError`` of a malformed
file) is the caller's to handle - the container stopped, its cgroup went away.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import attrs

__all__ = [
    "CGROUP_ROOT",
    "CgroupFiles",
    "cgroup_files",
    "host_cpu_seconds",
    "host_memory_working_set",
    "meminfo",
    "read_cgroup",
]

#: Where the cgroup hierarchies are mounted.
CGROUP_ROOT = "/sys/fs/cgroup"

# Where a v1 controller's hierarchy may be mounted (its own directory, or one shared with
# the other CPU controller, as systemd mounts them).
_V1_CPU_DIRS = ("cpuacct", "cpu,cpuacct", "cpuacct,cpu")
_V1_MEMORY_DIRS = ("memory",)


@attrs.frozen
class CgroupFiles:
    """Where one container's counters are.

    Attributes:
        cpu: the file of its CPU time: v2 ``cpu.stat`` (``usage_usec``), v1
            ``cpuacct.usage`` (nanoseconds).
        memory: its memory cgroup's directory.
        v2: the unified hierarchy (else v1's file names).
    """

    cpu: str
    memory: str
    v2: bool


def _v1_dir(root: str, names: Sequence[str], path: str) -> str | None:
    for name in names:
        candidate = os.path.join(root, name, path.lstrip("/"))
        if os.path.isdir(candidate):
            return candidate
    return None


def cgroup_files(
    pid: int, container_id: str, root: str = CGROUP_ROOT, proc: str = "/proc"
) -> CgroupFiles | None:
    """The counters of the container ``container_id`` whose main process is ``pid`` on
    this machine; ``None`` when ``/proc/<pid>/cgroup`` does not name the container (no
    such process here: a remote engine, another pid namespace, a container that
    stopped) or its cgroup's files are not where they should be. ``root`` and ``proc``
    are where the hierarchies and the processes are (the machine's by default)."""
    try:
        with open(f"{proc}/{pid}/cgroup", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    v1: dict[str, str] = {}
    unified = None
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if container_id not in path:
            continue
        if not controllers:
            unified = path
        for controller in controllers.split(","):
            v1[controller] = path
    if "cpuacct" in v1 and "memory" in v1:
        cpu_dir = _v1_dir(root, _V1_CPU_DIRS, v1["cpuacct"])
        memory_dir = _v1_dir(root, _V1_MEMORY_DIRS, v1["memory"])
        if cpu_dir is not None and memory_dir is not None:
            return CgroupFiles(os.path.join(cpu_dir, "cpuacct.usage"), memory_dir, v2=False)
    if unified is not None:
        directory = os.path.join(root, unified.lstrip("/"))
        if os.path.isfile(os.path.join(directory, "memory.current")):
            return CgroupFiles(os.path.join(directory, "cpu.stat"), directory, v2=True)
    return None


def _stat_value(text: str, key: str) -> int:
    """The value of ``key`` in a flat-keyed cgroup file (``cpu.stat``, ``memory.stat``);
    0 when it is absent."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


def _read(path: str) -> str:
    with open(path, encoding="ascii") as f:
        return f.read()


def read_cgroup(files: CgroupFiles) -> tuple[float, int]:
    """``(cpu_seconds, memory_working_set)`` of a container, from its cgroup's files.

    Raises:
        OSError: a file is gone (the container stopped) or unreadable.
        ValueError: a file is malformed.
    """
    stat = _read(os.path.join(files.memory, "memory.stat"))
    if files.v2:
        cpu = _stat_value(_read(files.cpu), "usage_usec") / 1e6
        usage = int(_read(os.path.join(files.memory, "memory.current")))
        inactive = _stat_value(stat, "inactive_file")
    else:
        cpu = int(_read(files.cpu)) / 1e9
        usage = int(_read(os.path.join(files.memory, "memory.usage_in_bytes")))
        inactive = _stat_value(stat, "total_inactive_file")
    return cpu, max(0, usage - inactive)


def host_cpu_seconds() -> float:
    """The CPU seconds this machine's CPUs have spent busy since it booted, all of them
    together: ``/proc/stat``'s ``cpu`` line without its ``idle`` and ``iowait`` (and
    without ``guest``/``guest_nice``, which ``user``/``nice`` already count), in clock
    ticks (``SC_CLK_TCK``).

    Raises:
        OSError, ValueError: ``/proc/stat`` is unreadable or malformed.
    """
    with open("/proc/stat", encoding="ascii") as f:
        first = f.readline().split()
    if not first or first[0] != "cpu":
        raise ValueError("/proc/stat: no cpu line")
    ticks = [int(v) for v in first[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks + [0] * (8 - len(ticks))
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def meminfo() -> dict[str, int]:
    """``/proc/meminfo``'s fields, in bytes.

    Raises:
        OSError, ValueError: ``/proc/meminfo`` is unreadable or malformed.
    """
    fields = {}
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            name, _, value = line.partition(":")
            amount = value.split()
            if amount:
                fields[name] = int(amount[0]) * (1024 if amount[1:] == ["kB"] else 1)
    return fields


def host_memory_working_set() -> int:
    """Bytes of this machine's memory in use: ``MemTotal - MemAvailable`` of
    ``/proc/meminfo`` (the memory the kernel cannot hand out without swapping).

    Raises:
        OSError, ValueError: ``/proc/meminfo`` is unreadable or malformed.
    """
    fields = meminfo()
    if "MemTotal" not in fields or "MemAvailable" not in fields:
        raise ValueError("/proc/meminfo: no MemTotal or MemAvailable")
    return max(0, fields["MemTotal"] - fields["MemAvailable"])
