"""The Docker runtime's containers: the list that observes them (with the inspect cache
of exited ones), their network address, create (with the holder of a name taken),
start, stop and remove.

Contract: ``ContainerCalls`` is a mixin of ``DockerRuntime``, on the clients and error
translation of ``EngineConnection``; the runtime's theory of operation
(``podsync.runtime.docker._runtime``: "Observation is one list call", "Idempotent stops
and removals") says how. A ``CreateSpec`` becomes the SDK's arguments in ``_api``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any, cast

import attrs

from podsync.actions._actions import CreateSpec
from podsync.exceptions import Conflict, NameConflict, NotFound, RuntimeCallError
from podsync.model._pod import ObservedContainer
from podsync.runtime.docker._api import (
    FINISHED_STATES,
    STATUS_AGE,
    Outcome,
    address_of,
    as_int,
    docker_create_args,
    domain_name_refusal,
    familiar_image,
    observed_from_list,
    podman_joining,
    qualified_by_podman,
    timestamp,
)
from podsync.runtime.docker._connection import EngineConnection
from podsync.runtime.docker._unchecked import unchecked_create_refusal
from podsync.spec._backoff import Backoff
from podsync.spec._labels import LABEL_HELPER, LABEL_POD_UID
from podsync.spec._ownership import ownership
from podsync.spec._volumes import POD_STATE_VOLUME_PREFIX

if TYPE_CHECKING:
    import docker.errors

__all__ = ["ContainerCalls"]

_log = logging.getLogger("podsync")

# The entrypoint of the probe that tells whether the engine can lower an OOM score: a
# path no image has, so the probe never runs a process (see _lowers_oom_scores).
_OOM_PROBE = "/podsync-oom-probe"
# One probe at a time: the creates of one apply run concurrently, and each would probe
# (and warn) before the first one had its answer.
_OOM_PROBE_LOCK = threading.Lock()

# Seconds a create that met a name conflict waits for the container holding the name
# to become visible (see ``ContainerCalls._holder``).
_HOLDER_WAIT = 5.0


class ContainerCalls(EngineConnection):
    """``DockerRuntime``'s container calls."""

    # Set by DockerRuntime's constructor.
    _finished: dict[tuple[str, str], Outcome]  # see list_containers
    _security_options: frozenset[str] | None  # see _check_security
    # Whether the engine can lower a process's OOM score (see _lowers_oom_scores);
    # None until asked.
    _oom_lowering: bool | None = None

    # -- observation ---------------------------------------------------------------

    def list_containers(self) -> list[ObservedContainer]:
        """Every container on the engine, running and exited, in the engine's order.

        One list call; in addition each exited container that a plan may own and that
        this runtime has not seen exited before is inspected once, for its exact exit
        code and finish time. "May own" is ``ownership`` with 2014 containers taken over:
        the runtime does not know the plan's options, and reading the exit of a 2014
        kubelet's container a plan then leaves alone changes nothing. A Kubernetes
        node's container (``io.kubernetes.*`` labels) is never inspected.
        A container in state ``created`` (never started, or its start failed) has
        ``running=False`` and ``finished_at=None``; ``paused`` and ``restarting``
        containers run (Docker's ``State.Running`` is true for both).

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the list call, or an inspect, failed.
        """
        with self._call("list", "") as api:
            listed = cast(list[dict[str, Any]], api.containers(all=True))
        return self._observed(listed, whole=True)

    def list_pod_containers(self, pod_uid: str) -> list[ObservedContainer]:
        """``PodListRuntime.list_pod_containers``: one list call with a label filter
        (Docker's and podman's ``label=<key>=<value>``), each exited container of it
        inspected once as ``list_containers`` does.

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the list call, or an inspect, failed.
        """
        with self._call("list", pod_uid) as api:
            listed = cast(
                list[dict[str, Any]],
                api.containers(all=True, filters={"label": f"{LABEL_POD_UID}={pod_uid}"}),
            )
        return self._observed(listed, whole=False)

    def _observed(self, listed: list[dict[str, Any]], *, whole: bool) -> list[ObservedContainer]:
        """The containers of a list call's answer, the exited ones that a plan may own
        with how they ended (``_outcome``). ``whole``: the answer is every container of
        the engine, and the cache keeps what it saw exited and nothing else; a filtered
        answer only adds to the cache (the next whole list prunes it)."""
        observed: list[ObservedContainer] = []
        seen: dict[tuple[str, str], Outcome] = {}
        for entry in listed:
            container = observed_from_list(entry)
            if qualified_by_podman(container.image) and self._is_libpod():
                container = attrs.evolve(container, image=familiar_image(container.image))
            if (
                str(entry.get("State", "")) in FINISHED_STATES
                and ownership(container, adopt_2014_containers=True) is not None
            ):
                # The cache key carries the Status text without its clock ("Exited
                # (137)"), so a container someone restarted by hand and that exited
                # differently is inspected again.
                key = (container.id, STATUS_AGE.sub("", str(entry.get("Status") or "")))
                outcome = self._outcome(key)
                if outcome is None:
                    continue  # removed between the list and the inspect: it is gone
                seen[key] = outcome
                container = attrs.evolve(
                    container,
                    exit_code=outcome.exit_code,
                    finished_at=outcome.finished_at,
                    oom_killed=outcome.oom_killed,
                    started_at=outcome.started_at,
                )
            observed.append(container)
        with self._lock:
            if whole:
                # Keep what this list saw exited, and nothing else: the cache never
                # grows past the engine's exited containers.
                self._finished = seen
            else:
                self._finished.update(seen)
        return observed

    def _outcome(self, key: tuple[str, str]) -> Outcome | None:
        """How an exited container ended, from the cache or one inspect; ``None`` when
        the container no longer exists."""
        with self._lock:
            cached = self._finished.get(key)
        if cached is not None:
            return cached
        container_id = key[0]
        try:
            with self._call("inspect", container_id) as api:
                inspected = cast(dict[str, Any], api.inspect_container(container_id))
        except NotFound:
            # gone since it was listed: Docker's 404, and podman's 500 read as one
            return None
        state = inspected.get("State") or {}
        finished = timestamp(state.get("FinishedAt"))
        started = timestamp(state.get("StartedAt"))
        if started is not None and finished is not None:
            # A process that exits at once can be reported to have started a moment
            # after it finished (Docker stamps StartedAt once its start returned; seen
            # 1.6 ms apart): a run never starts after its end.
            started = min(started, finished)
        outcome = Outcome(
            as_int(state.get("ExitCode")),
            finished,
            bool(state.get("OOMKilled")),
            started,
        )
        with self._lock:
            self._finished[key] = outcome
        return outcome

    def container_address(self, container_id: str) -> str | None:
        """The container's IP address; ``None`` when its network has none.

        A container in network mode ``container:<x>`` (every app container of a pod)
        shares the network of ``x``, so the address is ``x``'s.

        Raises:
            RuntimeCallError: the container (or the one whose network it shares) does
                not exist, or the engine failed.
        """
        target = container_id
        for _ in range(4):  # container:<x> chains are one step long in practice
            with self._call("inspect", target) as api:
                inspected = cast(dict[str, Any], api.inspect_container(target))
            mode = str((inspected.get("HostConfig") or {}).get("NetworkMode") or "")
            if not mode.startswith("container:"):
                return address_of(inspected.get("NetworkSettings") or {})
            target = mode.removeprefix("container:")
        raise RuntimeCallError(
            "inspect", container_id, f"network mode chain too long at {target!r}"
        )

    # -- containers ----------------------------------------------------------------

    def create_container(self, spec: CreateSpec) -> str:
        """Create (not start) the container ``spec`` describes; return its id.

        The spec is translated by ``podsync.runtime.docker._api.docker_create_args``:
        ``join`` is network mode ``container:<name>``, ports are ``PortBindings`` and
        ``ExposedPorts``, mounts ``Binds``, milli-CPU ``CpuShares``. Empty strings and
        zeros mean "unset"; ``command`` / ``args`` of ``None`` or ``()`` keep the
        image's (Docker's ``Entrypoint`` / ``Cmd``).

        Raises:
            NameConflict: a container named ``spec.name`` exists already (HTTP 409);
                it names that container and its labels when one inspect can tell.
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the engine refused: no such image (nothing is pulled
                here), conflicting options (hostname, DNS servers or ports
                beside ``join``), a bad bind ...; on podman, what Docker refuses and
                podman would create is refused first, in Docker's words, with no
                status (``_unchecked``), and so is a domain name, which podman
                cannot set (``domain_name_refusal``).
        """
        refusal = domain_name_refusal(spec) if spec.domainname and self._is_libpod() else None
        if refusal is not None:
            raise RuntimeCallError("create", spec.name, refusal)
        try:
            return self._create(spec)
        except NameConflict as exc:
            holder = self._holder(spec.name)
            if holder is None:
                raise
            raise NameConflict(
                exc.operation,
                exc.target,
                exc.message,
                holder_id=holder[0],
                holder_labels=holder[1],
                status_code=exc.status_code,
            ) from exc

    def _holder(self, name: str) -> tuple[str, dict[str, str]] | None:
        """The id and labels of the container named ``name``; ``None`` when it cannot
        be inspected in time: the conflict then stands as it is.

        Docker reserves a name before the container it is creating exists: a create
        racing another one for the name gets its 409 while an inspect of the name
        still answers 404. So a 404 is asked again, briefly, until the other create
        has registered its container (or has failed, releasing the name).
        """
        deadline = time.monotonic() + _HOLDER_WAIT
        backoff = Backoff(0.02, 0.5)
        while True:
            try:
                with self._call("inspect", name) as api:
                    inspected = cast(dict[str, Any], api.inspect_container(name))
                break
            except NotFound:
                if time.monotonic() + backoff.delay > deadline:
                    return None
            except RuntimeCallError:
                return None
            time.sleep(backoff.next())
        labels = (inspected.get("Config") or {}).get("Labels") or {}
        return str(inspected.get("Id") or ""), {str(k): str(v) for k, v in labels.items()}

    def _create(self, spec: CreateSpec) -> str:
        seccomp = self._check_security(spec)
        if self._is_libpod():
            # What Docker refuses at create and podman creates (_unchecked), refused
            # here before anything changes; and Docker's leading "/" of a name, which
            # podman refuses, dropped as Docker drops it.
            refusal = unchecked_create_refusal(spec)
            if refusal is not None:
                raise RuntimeCallError("create", spec.name, refusal)
            spec = attrs.evolve(spec, name=spec.name.removeprefix("/"))
        # A score below -1000 goes to the engine as it is: the engine refuses it.
        if -1000 <= spec.oom_score_adj < 0 and not self._lowers_oom_scores(spec.image):
            spec = attrs.evolve(spec, oom_score_adj=0)
        args = docker_create_args(spec, seccomp, self._mountpoints(spec))
        labelled = [v for v in spec.volumes if v.labels]
        if labelled and self._is_libpod():
            # Docker makes a missing volume of a mount with the mount's labels
            # (VolumeOptions.Labels); podman's Docker-compatible create makes it without
            # them, and podsync finds its volumes by their labels. So on podman the
            # volume is made first, labelled (a volume that exists is left unchanged,
            # as the create would leave it), with podman's options (_make_volume).
            with self._call("create", spec.name) as api:
                for volume in labelled:
                    self._make_volume(api, volume.volume, dict(volume.labels))
        with self._call("create", spec.name) as api:
            host_config = self._host_config(api, spec, args.host_config)
            created = api.create_container(spec.image, host_config=host_config, **args.container)
        return str(cast(dict[str, Any], created)["Id"])

    def _host_config(self, api: Any, spec: CreateSpec, host_config: dict[str, Any]) -> Any:
        """The SDK's ``HostConfig`` of ``spec``; on podman, one that joins a network
        container also gets its UTS namespace and hosts file (``podman_joining``, and
        ``_hosts_file``; the SDK takes no ``container:`` UTS mode, so both are set in
        the dictionary it makes)."""
        made = api.create_host_config(**host_config)
        if spec.join and self._is_libpod():
            extra = podman_joining(spec, _hosts_file(api, spec))
            made["UTSMode"] = extra["UTSMode"]
            made["Binds"] = [*(made.get("Binds") or []), *extra["Binds"]]
        return made

    def _lowers_oom_scores(self, image: str) -> bool:
        """Whether the engine can give a container a negative OOM score adjustment (the
        kubelet's -997 of a Guaranteed container, -998 of a network container).

        Lowering an OOM score takes ``CAP_SYS_RESOURCE``, which an engine without it
        (rootless Docker, an engine in a container that dropped the capability) lacks:
        runc then fails every such start, with nothing but "can't get final child's PID
        from pipe". So the runtime asks once, with a probe - a container of ``image``
        (present: it is about to be created) with the score -1 and an entrypoint that
        does not exist, started and removed: runc sets the score before it looks for
        the entrypoint, so a start that fails for the missing entrypoint says the
        engine can. On an engine that cannot, negative scores are raised to 0, as
        containerd's ``restrict_oom_score_adj`` does for a rootless kubelet: the pod's
        containers keep their order (Guaranteed 0, Burstable 3 to 999, BestEffort
        1000), and a warning says so once.

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the probe could not be created.
        """
        with self._lock:
            known = self._oom_lowering
        if known is not None:
            return known
        with _OOM_PROBE_LOCK:
            with self._lock:
                known = self._oom_lowering
            if known is not None:  # another thread of this runtime probed meanwhile
                return known
            return self._probe_oom_lowering(image)

    def _probe_oom_lowering(self, image: str) -> bool:
        """The probe of ``_lowers_oom_scores``, run once per runtime (under
        ``_OOM_PROBE_LOCK``); records and returns its answer."""
        with self._call("create", "oom-score probe") as api:
            probe = str(
                api.create_container(
                    image,
                    entrypoint=[_OOM_PROBE],
                    labels={LABEL_HELPER: "oom-score-probe"},
                    network_disabled=True,
                    host_config=api.create_host_config(network_mode="none", oom_score_adj=-1),
                )["Id"]
            )
        try:
            with self._call("start", probe) as api:
                api.start(probe)
            lowers = True  # an image that has the path: the score was set all the same
        except RuntimeCallError as exc:
            lowers = _OOM_PROBE in exc.message
        finally:
            with self._call("remove", probe) as api:
                api.remove_container(probe, force=True)
        if not lowers:
            _log.warning(
                "the Docker engine cannot lower OOM scores (it lacks CAP_SYS_RESOURCE): "
                "Guaranteed and network containers get 0 instead of the kubelet's "
                "-997 and -998"
            )
        with self._lock:
            self._oom_lowering = lowers
        return lowers

    def _mountpoints(self, spec: CreateSpec) -> dict[str, str]:
        """Where the engine keeps each volume of ``spec.file_mounts`` (one ``GET
        /volumes/{name}`` per volume): the engine's own path, on the engine's host,
        which is where it resolves binds - never a path of this machine.

        Raises:
            RuntimeCallError: a volume does not exist ("no such volume"), or the engine
                reports no mountpoint for it (a driver that keeps volumes elsewhere).
        """
        found: dict[str, str] = {}
        for volume in dict.fromkeys(m.volume for m in spec.file_mounts):
            with self._call("inspect volume", volume) as api:
                inspected = api.inspect_volume(volume)
            mountpoint = str(inspected.get("Mountpoint") or "")
            if not mountpoint.startswith("/"):
                raise RuntimeCallError(
                    "inspect volume", volume, f"the engine reports no mountpoint for {volume}"
                )
            found[volume] = mountpoint
        return found

    def _check_security(self, spec: CreateSpec) -> str | None:
        """Refuse, before the engine sees it, a profile the engine would not apply; return
        what the engine takes for the Localhost seccomp profile ``spec`` names, if any:
        on Docker its content, on podman its absolute path.

        Docker applies no AppArmor profile on a host without AppArmor - not even one
        asked for by name - and runs the container unconfined without a word
        (``apparmor.HostSupports``, which reads ``/sys/module/apparmor/parameters/
        enabled``). Its answer is in ``docker info``'s ``SecurityOptions``
        (``name=apparmor``, ``name=seccomp``), read once per runtime: a profile other
        than ``unconfined`` on an engine without the feature is refused here.

        Raises:
            RuntimeCallError: the engine has no AppArmor (or no seccomp) for a profile
                that needs it, or the Localhost seccomp profile cannot be read.
        """
        security = spec.security
        wanted = [
            (feature, profile)
            for feature, profile in (("AppArmor", security.apparmor), ("seccomp", security.seccomp))
            if profile not in ("", "unconfined")
        ]
        if wanted:
            supported = self._engine_security_options()
            for feature, profile in wanted:
                if feature.lower() not in supported:
                    raise RuntimeCallError(
                        "create",
                        spec.name,
                        f"{feature} profile {profile} asked for, but {feature} is not "
                        f"enabled on the Docker engine's host: podsync does not run the "
                        "container without it",
                    )
        if not security.seccomp.startswith("localhost/"):
            return None
        path = security.seccomp.removeprefix("localhost/")
        try:
            with open(path, encoding="utf-8") as file:
                profile = file.read()
        except FileNotFoundError:
            raise RuntimeCallError(
                "create", spec.name, f"seccomp profile {path} does not exist"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RuntimeCallError(
                "create", spec.name, f"cannot read seccomp profile {path}: {exc}"
            ) from None
        # Docker takes the profile itself in SecurityOpt (as the docker CLI sends it);
        # podman's compat create opens the value as a path on its own host
        # (containers/podman#27710, podman 4.3.1 here: "opening seccomp profile failed:
        # open {...}"), so there it gets the file podsync just read, by its absolute
        # path - the same file when the engine runs on this machine.
        return os.path.abspath(path) if self._is_libpod() else profile

    def _engine_security_options(self) -> frozenset[str]:
        """The security features of the engine's host (``docker info``), lower case."""
        with self._lock:
            known = self._security_options
        if known is not None:
            return known
        with self._call("info", "") as api:
            info = api.info()
        names = set()
        for option in info.get("SecurityOptions") or ():
            # "name=seccomp,profile=default"; engines before 1.13 listed bare names.
            fields = dict(part.partition("=")[::2] for part in str(option).split(","))
            names.add((fields.get("name") or str(option)).lower())
        found = frozenset(names)
        with self._lock:
            self._security_options = found
        return found

    def start_container(self, container_id: str) -> None:
        """Start a created container (starting a running one is a no-op: HTTP 304).
        A start refused because its termination-message file was being written again
        by another sync of the pod is tried again (``_termination_file_replaced``).

        Raises:
            Conflict: the container joins the network of a container that does not
                run (HTTP 409).
            RuntimeCallError: no such container, or the engine could not start it (its
                entrypoint does not exist, the container whose IPC it joins does not
                run ...).
        """
        for attempt in range(3):
            try:
                with self._call("start", container_id) as api:
                    if self._is_libpod():
                        _refuse_a_dead_namespace(api, container_id)
                    api.start(container_id)
                return
            except RuntimeCallError as exc:
                if attempt == 2 or not _termination_file_replaced(str(exc)):
                    raise
                time.sleep(_REPLACED_FILE_PAUSE)

    def stop_container(self, container_id: str, timeout: int) -> None:
        """Stop a container: SIGTERM (or its image's stop signal), SIGKILL after
        ``timeout`` seconds. A container that is not running (HTTP 304) or does not
        exist (404) counts as stopped.

        Raises:
            RuntimeCallError: the engine failed to stop it.
        """
        import docker.errors

        # The SDK waits the call timeout *plus* ``timeout`` for the answer.
        with self._call("stop", container_id) as api, contextlib.suppress(docker.errors.NotFound):
            try:
                api.stop(container_id, timeout=timeout)
            except docker.errors.APIError as exc:
                if not _refused_as_paused(api, container_id, exc):
                    raise
                # Docker stops a paused container: it sends the signal, then resumes
                # the container so that the signal lands (moby's
                # daemon.killWithSignal). podman 4.3 refuses ("... is running or
                # paused, refusing to clean up: container state improper", HTTP 500):
                # resume it, then stop it as Docker would have.
                api.unpause(container_id)
                api.stop(container_id, timeout=timeout)

    def remove_container(self, container_id: str) -> None:
        """Remove a container that does not run, with its anonymous volumes (as the
        kubelet's dockershim did: ``RemoveVolumes: true``; binds and named volumes
        stay). A container that does not exist counts as removed, and so does one that
        another caller is removing at the same moment (two syncs at once): the call
        returns once that removal ended.

        Raises:
            RuntimeCallError: the container runs (HTTP 409; nothing is forced), or the
                engine failed.
        """
        import docker.errors

        with self._call("remove", container_id) as api, contextlib.suppress(docker.errors.NotFound):
            try:
                api.remove_container(container_id, v=True)
            except docker.errors.APIError as exc:
                # HTTP 409 "removal of container <id> is already in progress": wait for
                # that removal (Docker's wait for the condition "removed"), whose end is
                # this one's. Any other refusal is this call's.
                if exc.status_code != 409 or "already in progress" not in str(exc.explanation):
                    raise
                api.wait(container_id, condition="removed")


def _refused_as_paused(api: Any, container_id: str, refusal: docker.errors.APIError) -> bool:
    """Whether the engine refused a stop because the container is paused: podman's
    answer (HTTP 500, libpod's "container state improper") to a stop of a paused
    container, which Docker stops. Docker never refuses so; any other refusal stays the
    stop's."""
    explanation = str(refusal.explanation or "")
    if refusal.status_code != 500 or "container state improper" not in explanation:
        return False
    state = api.inspect_container(container_id).get("State") or {}
    return bool(state.get("Paused"))


# How long a start waits for a termination-message file that another sync is writing
# again (``_termination_file_replaced``): an archive upload of a few empty files takes
# milliseconds.
_REPLACED_FILE_PAUSE = 0.05


def _termination_file_replaced(refusal: str) -> bool:
    """Whether the engine refused a start because the termination-message file it binds
    (a file of the pod's state volume, ``termination_file_mount``) was missing.

    Two syncs of one pod at once each write the files of the containers they create;
    the second upload replaces the first's file (the tar extraction removes an existing
    file before it writes it), and a start that lands in between fails: podman's runc
    "error mounting ".../podsync-state_<uid>/_data/termination/<name>" ...: no such
    file or directory" (seen about once in 35 runs of two racing syncs). The file is
    back milliseconds later, so the start is tried again, three times at most."""
    return (
        "error mounting" in refusal
        and f"/{POD_STATE_VOLUME_PREFIX}_" in refusal
        and "no such file or directory" in refusal
    )


def _hosts_file(api: Any, spec: CreateSpec) -> str:
    """On podman, the hosts file of the network container ``spec`` joins (its
    ``HostsPath``); ``""`` when it has none, or does not exist.

    podman writes it when the container starts, so ``apply`` does not overlap a pod's
    creates with its network container's start on podman (``overlapping_calls``). A
    network container that never started has none: its joiner is made without one, and
    cannot start before it runs anyway (``_refuse_a_dead_namespace``). A missing one is
    left to the create, which the engine refuses in its own words."""
    import docker.errors

    try:
        joined = cast(dict[str, Any], api.inspect_container(spec.join))
    except docker.errors.NotFound:
        return ""
    return str(joined.get("HostsPath") or "")


def _refuse_a_dead_namespace(api: Any, container_id: str) -> None:
    """On podman, refuse - as Docker does - the start of a container that joins the
    network or IPC namespace (``container:<x>``) of a container that does not run.

    podman (4.3) starts ``x`` instead (libpod starts a container's dependencies), so a
    pod whose network container died would get it back with a new network namespace,
    its old containers left in the dead one, where Docker refuses and podsync rebuilds
    the pod. Docker's words and statuses: 409 for the network (checked first), 500 for
    the IPC namespace. A paused ``x`` may be joined, as on Docker. Two inspects."""
    import docker.errors

    host_config = api.inspect_container(container_id).get("HostConfig") or {}
    for field in ("NetworkMode", "IpcMode"):
        mode = str(host_config.get(field) or "")
        if not mode.startswith("container:"):
            continue
        target = mode.removeprefix("container:")
        try:
            running = bool(api.inspect_container(target)["State"]["Running"])
        except docker.errors.NotFound:
            continue  # the engine's own refusal says so
        if running:
            continue
        if field == "NetworkMode":
            raise Conflict(
                "start",
                container_id,
                f"cannot join network of a non running container: {target}",
                status_code=409,
            )
        raise RuntimeCallError(
            "start",
            container_id,
            f"can't join IPC of container {target}: container {target} is not running",
            status_code=500,
        )
