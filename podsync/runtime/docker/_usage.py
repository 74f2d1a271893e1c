"""The Docker runtime's usage readings (``UsageRuntime``): from the cgroup files when the
engine runs on this machine, else from the Engine API's one-shot stats.

Contract: ``UsageCalls`` is a mixin of ``DockerRuntime``, on the clients and error
translation of ``EngineConnection``. Each container is read the cheapest way that is
verified to be its own:

1. *Its cgroup's files* (``_cgroups``), on an engine reached through a unix socket: the
   first reading of a container inspects it once for its main process, and keeps the
   files its ``/proc/<pid>/cgroup`` names when that names the container's id (cached by
   id; a failed read drops the entry and the container is looked at again; one found
   not local is read through the API for a minute before it is looked at again).
2. *The Engine API*: ``GET /containers/{id}/stats?stream=false&one-shot=true`` (API
   1.41: Docker answers with its collector's next sample instead of waiting for a
   second one; podman 4's compat handler returns at once with or without it), 32
   containers at a time (``_API_CALLS_AT_ONCE``).
   Docker's ``memory_stats`` has the cgroup's ``stats`` and the working set is computed
   as the docker CLI does (``usage`` minus ``total_inactive_file`` on v1,
   ``inactive_file`` on v2); podman's compat answer has no ``stats``, so there it is
   ``usage`` as podman counts it. On podman, several containers are read in one call of
   its own API (``GET /libpod/containers/stats?stream=false&containers=...``, 4.3.1's
   ``pkg/api/handlers/libpod``: ``CPUNano``, ``MemUsage``), one by one only when it
   refuses the batch (a container of it is gone).

A container that does not run is left out either way: no cgroup, an API error 404 or
409 (podman's 500 "container state improper"), Docker's zeroed answer for a stopped one
(no ``memory_stats.usage``), or podman 4.3's empty one (200 and no body).
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from podsync.exceptions import NotFound, RuntimeCallError
from podsync.model._usage import ContainerUsage
from podsync.runtime.docker._api import as_int
from podsync.runtime.docker._cgroups import (
    CgroupFiles,
    cgroup_files,
    host_cpu_seconds,
    host_memory_working_set,
    meminfo,
    read_cgroup,
)
from podsync.runtime.docker._connection import EngineConnection

__all__ = ["UsageCalls", "api_usage"]

# The API's stats calls made at once. Docker answers a stats call, one-shot too, when its
# stats collector next publishes (moby's daemon/stats: the call subscribes and takes the
# first frame; the collector publishes every container subscribed once a second), so a
# reading costs a second per wave of calls: 50 containers 8 at a time took 7.2 s, all
# at once one tick (benchmarks/bench_usage.py). 32 keeps the runtime's pool of clients
# (one per concurrent call, kept for reuse) moderate.
_API_CALLS_AT_ONCE = 32


class _Outcome(enum.Enum):
    NOT_RUNNING = "not running"  # nothing to read: leave it out
    NOT_LOCAL = "not local"  # read it through the API


# A container whose cgroup was not found is not inspected again for so many seconds.
_NOT_LOCAL_FOR = 60.0


def api_usage(stats: Mapping[str, Any], at: float) -> ContainerUsage | None:
    """A reading from the Engine API's stats of one container (``/containers/{id}/stats``:
    ``cpu_stats.cpu_usage.total_usage`` nanoseconds, ``memory_stats``); ``None`` for the
    answer of a container that does not run (no memory usage)."""
    memory = stats.get("memory_stats") or {}
    if "usage" not in memory:
        return None
    cpu = ((stats.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage")
    cache = memory.get("stats") or {}
    inactive = as_int(cache.get("total_inactive_file", cache.get("inactive_file", 0)))
    usage = as_int(memory["usage"])
    return ContainerUsage(as_int(cpu) / 1e9, max(0, usage - inactive), at)


class UsageCalls(EngineConnection):
    """``DockerRuntime``'s ``container_usage`` and ``node_usage``."""

    # Set by DockerRuntime's constructor: the verified cgroup files by container id, and
    # the ids found not to be local with when (monotonic), under their lock.
    _usage_lock: threading.Lock
    _cgroups: dict[str, CgroupFiles]
    _not_local: dict[str, float]
    _local_host: bool | None = None  # node_usage: /proc is the engine's host's

    def container_usage(self, container_ids: Sequence[str]) -> dict[str, ContainerUsage]:
        """``UsageRuntime.container_usage``: from the cgroup files of the containers
        verified local, from the API for the others; containers that do not run are
        left out.

        Raises:
            EngineUnavailable: the engine cannot be reached (to find a container's
                process, or for the API).
            RuntimeCallError: the engine failed otherwise.
        """
        readings: dict[str, ContainerUsage] = {}
        remote: list[str] = []
        for cid in dict.fromkeys(container_ids):
            reading = self._cgroup_reading(cid)
            if reading is _Outcome.NOT_LOCAL:
                remote.append(cid)
            elif isinstance(reading, ContainerUsage):
                readings[cid] = reading
        readings.update(self._api_readings(remote))
        return readings

    def _cgroup_reading(self, cid: str) -> ContainerUsage | _Outcome:
        """The reading of ``cid`` from its cgroup files, or why there is none."""
        if not self._host.startswith("unix://"):
            # tcp:// and ssh:// reach another machine: no inspect for a check that fails.
            return _Outcome.NOT_LOCAL
        for attempt in range(2):
            with self._usage_lock:
                files = self._cgroups.get(cid)
                not_local_since = self._not_local.get(cid)
            if files is None:
                recent = not_local_since is not None and (
                    time.monotonic() - not_local_since < _NOT_LOCAL_FOR
                )
                if recent:
                    return _Outcome.NOT_LOCAL
                found = self._find_cgroup(cid)
                if isinstance(found, _Outcome):
                    return found
                files = found
            try:
                cpu, memory = read_cgroup(files)
            except (OSError, ValueError):
                # Gone: the container stopped, or was restarted into another cgroup.
                with self._usage_lock:
                    self._cgroups.pop(cid, None)
                if attempt:
                    return _Outcome.NOT_LOCAL
                continue
            return ContainerUsage(cpu, memory, time.time())
        return _Outcome.NOT_LOCAL

    def _find_cgroup(self, cid: str) -> CgroupFiles | _Outcome:
        """Inspect ``cid`` for its main process and verify its cgroup here: its files,
        or why there are none."""
        try:
            with self._call("stats", cid) as api:
                state = cast(dict[str, Any], api.inspect_container(cid)).get("State") or {}
        except NotFound:
            return _Outcome.NOT_RUNNING
        if not state.get("Running"):
            return _Outcome.NOT_RUNNING
        files = cgroup_files(as_int(state.get("Pid")), cid)
        with self._usage_lock:
            if files is None:
                self._not_local[cid] = time.monotonic()
            else:
                self._cgroups[cid] = files
                self._not_local.pop(cid, None)
        return _Outcome.NOT_LOCAL if files is None else files

    def _api_readings(self, ids: Sequence[str]) -> dict[str, ContainerUsage]:
        if not ids:
            return {}
        if len(ids) > 1 and self._is_libpod():
            batch = self._libpod_readings(ids)
            if batch is not None:
                return batch
        if len(ids) == 1:
            reading = self._api_reading(ids[0])
            return {} if reading is None else {ids[0]: reading}
        # The thread pool is imported here: only ``top`` and a reporting loop read usage.
        import concurrent.futures

        workers = min(_API_CALLS_AT_ONCE, len(ids))
        with concurrent.futures.ThreadPoolExecutor(workers, "podsync-stats") as pool:
            answers = list(pool.map(self._api_reading, ids))
        return {cid: r for cid, r in zip(ids, answers, strict=True) if r is not None}

    def _libpod_readings(self, ids: Sequence[str]) -> dict[str, ContainerUsage] | None:
        """podman's own stats of many containers in one call
        (``/libpod/containers/stats?stream=false&containers=...``); ``None`` when podman
        refuses the batch (a container is gone: ``{"Error": {}, "Stats": null}``), to be
        read one by one. A container that does not run comes back with every figure 0
        and no reading time (``SystemNano``): left out."""
        with self._call("stats", "") as api:
            response = api.get(
                f"{api.base_url}/v4.0.0/libpod/containers/stats",
                params={"stream": "false", "containers": list(ids)},
                timeout=self._timeout,
            )
            try:
                if not response.ok:
                    return None
                try:
                    answer = response.json()
                except ValueError:
                    return None
            finally:
                response.close()
        if not isinstance(answer, dict) or answer.get("Error") is not None:
            return None
        stats = answer.get("Stats")
        if not isinstance(stats, list):
            return None
        readings = {}
        for entry in stats:
            cid, at = str(entry.get("ContainerID", "")), as_int(entry.get("SystemNano"))
            if cid in ids and at:
                cpu, memory = as_int(entry.get("CPUNano")) / 1e9, as_int(entry.get("MemUsage"))
                readings[cid] = ContainerUsage(cpu, memory, at / 1e9)
        return readings

    def _api_reading(self, cid: str) -> ContainerUsage | None:
        """One container's one-shot stats; ``None`` when it does not run: 404, 409 or
        podman's 500 "container state improper", Docker's zeroed answer and podman
        4.3's empty one (200 with no body)."""
        from docker.utils import version_lt

        with self._call("stats", cid) as api:
            # one-shot from API 1.41 on: older engines take their two samples.
            params = {"stream": "false"}
            if not version_lt(api.api_version, "1.41"):
                params["one-shot"] = "true"
            url = f"{api.base_url}/v{api.api_version}/containers/{cid}/stats"
            before = time.time()
            response = api.get(url, params=params, timeout=self._timeout)
            try:
                at = (before + time.time()) / 2
                text = response.text
                if response.status_code in (404, 409) or "state improper" in text:
                    return None
                if not response.ok:
                    raise RuntimeCallError.from_status(
                        "stats", cid, text.strip(), response.status_code
                    )
                if not text.strip():
                    return None
                try:
                    stats = response.json()
                except ValueError:
                    raise RuntimeCallError(
                        "stats", cid, f"the engine's stats are not JSON: {text[:80]!r}"
                    ) from None
            finally:
                response.close()
        return api_usage(stats, at)

    def node_usage(self) -> ContainerUsage | None:
        """``UsageRuntime.node_usage``: this machine's ``/proc`` when it is the engine's
        host - the engine's ``docker info`` ``MemTotal`` is this machine's, asked once
        - else ``None``.

        Raises:
            EngineUnavailable: the engine cannot be reached (the first call asks it).
            RuntimeCallError: the engine failed otherwise.
        """
        if self._local_host is None:
            with self._call("info", "") as api:
                engine_total = as_int(api.info().get("MemTotal"))
            try:
                here = meminfo()["MemTotal"]
            except (OSError, ValueError, KeyError):
                here = 0
            self._local_host = engine_total > 0 and engine_total == here
        if not self._local_host:
            return None
        try:
            return ContainerUsage(host_cpu_seconds(), host_memory_working_set(), time.time())
        except (OSError, ValueError):
            return None
