"""A pure, in-memory model of a container engine, for planner tests.

It applies a ``Plan`` the way an engine would react to the runtime calls, and checks the
engine's own rules while doing so: names are unique, a container can only join a
running network container (and only the IPC namespace of a running, shareable one), a
running container cannot be removed, nor one that another container joins (podman's
rule, which podsync's plans keep on every engine: ``planner._joins``), and a host port is
published by one running container at a time (Docker on a bridge network: the same
port and protocol on overlapping addresses, ``0.0.0.0`` overlapping every address). What it holds is
then observed again, so tests can check that planning converges.
"""

from __future__ import annotations

import attrs

from podsync import ObservedContainer, ObservedImage, ObservedVolume
from podsync.actions._actions import (
    Create,
    CreateVolume,
    Kill,
    Plan,
    Remove,
    RemoveImage,
    RemovePodDir,
    RemoveVolume,
    Wait,
)
from podsync.spec._images import normalize_image
from podsync.spec._labels import (
    LABEL_JOINS,
    LABEL_POD_IPC,
    LABEL_POD_STATE,
    POD_IPC_SHAREABLE,
    POD_STATE_MOUNTED,
)
from podsync.spec._naming import NETWORK_CONTAINER
from podsync.spec._ownership import identify


class EngineRuleBroken(AssertionError):
    """The plan asked the engine for something a real engine refuses."""


@attrs.define
class EngineModel:
    containers: dict[str, ObservedContainer] = attrs.Factory(dict)
    image_tags: set[str] = attrs.Factory(set)
    pod_dirs: set[str] = attrs.Factory(set)
    volumes: dict[str, ObservedVolume] = attrs.Factory(dict)
    root_dir: str = "/var/lib/podsync"
    counter: int = 0
    calls: list[str] = attrs.Factory(list)
    # The host ports each container publishes while it runs: (port, protocol, address).
    published: dict[str, tuple[tuple[int, str, str], ...]] = attrs.Factory(dict)
    # The volumes each container mounts: a volume a container mounts, running or not,
    # cannot be removed (Docker: "volume is in use").
    mounted: dict[str, tuple[str, ...]] = attrs.Factory(dict)
    # The containers whose IPC namespace others may join (Docker's IpcMode shareable).
    shareable: set[str] = attrs.Factory(set)
    # The container each container made here joins (network, and IPC when shared), by id.
    joined: dict[str, str] = attrs.Factory(dict)

    def add(self, container: ObservedContainer) -> None:
        self.containers[container.id] = container

    @property
    def observed(self) -> list[ObservedContainer]:
        return list(self.containers.values())

    @property
    def images(self) -> list[ObservedImage]:
        return [ObservedImage(id=f"sha256:{t}", tags=(t,)) for t in sorted(self.image_tags)]

    @property
    def observed_volumes(self) -> list[ObservedVolume]:
        return [self.volumes[n] for n in sorted(self.volumes)]

    def _shares_ipc(self, container: ObservedContainer) -> bool:
        """Whether others may join ``container``'s IPC namespace: it was created so, or
        was put here as podsync makes such a container (its label says so)."""
        labelled = container.labels.get(LABEL_POD_IPC) == POD_IPC_SHAREABLE
        return container.id in self.shareable or labelled

    def _mounts(self, name: str, volume: str) -> bool:
        """Whether the container ``name`` mounts ``volume``: as it was created, or - one
        put here as podsync makes it - as its label says (a network container of this
        podsync mounts its pod's state volume)."""
        holder = self.by_name(name)
        if holder is None:
            return False
        if holder.id in self.mounted:
            return volume in self.mounted[holder.id]
        return holder.labels.get(LABEL_POD_STATE) == POD_STATE_MOUNTED

    def by_name(self, name: str) -> ObservedContainer | None:
        return next((c for c in self.containers.values() if c.name == name), None)

    def apply(self, plan: Plan, now: float) -> None:
        for pull in plan.pulls:
            self.calls.append("pull")
            self.image_tags.add(normalize_image(pull.image))
        for pod in plan.pods:
            for action in pod.actions:
                self._apply(action, now)
        for removal in plan.cleanup:
            self._apply(removal, now)

    def _apply(self, action: object, now: float) -> None:
        if isinstance(action, Create):
            spec = action.spec
            if self.by_name(spec.name) is not None:
                raise EngineRuleBroken(f"name conflict: {spec.name}")
            joins = None
            if spec.join:
                target = self.by_name(spec.join)
                if target is None or not target.running:
                    raise EngineRuleBroken(
                        f"{spec.name} joins a network container that does not run"
                    )
                joins = target.id
            if spec.join_ipc:
                donor = self.by_name(spec.join_ipc)
                if donor is None or not donor.running or not self._shares_ipc(donor):
                    raise EngineRuleBroken(
                        f"{spec.name} joins an IPC namespace that does not run or is not shareable"
                    )
            for mounted in spec.file_mounts:
                # Docker binds the file from the volume's mountpoint: the volume must
                # exist, and a container written through must mount it.
                if mounted.volume not in self.volumes:
                    raise EngineRuleBroken(f"{spec.name}: no such volume {mounted.volume}")
                if mounted.through and not self._mounts(mounted.through, mounted.volume):
                    raise EngineRuleBroken(
                        f"{spec.name}: {mounted.through} does not mount {mounted.volume}"
                    )
            self.counter += 1
            if joins is not None:
                self.joined[f"id{self.counter:06d}"] = joins
            if spec.ipc_shareable:
                self.shareable.add(f"id{self.counter:06d}")
            self.calls += ["create", "start"]
            wanted = tuple((p.host_port, p.protocol.value.lower(), p.host_ip) for p in spec.ports)
            clash = self.port_holder(wanted)
            if clash is not None:
                raise EngineRuleBroken(f"{spec.name}: host port already allocated by {clash}")
            self.published[f"id{self.counter:06d}"] = wanted
            for volume in spec.volumes:
                # The engine makes a missing volume itself, unlabelled but for the
                # mount's labels.
                made = ObservedVolume(volume.volume, dict(volume.labels))
                self.volumes.setdefault(volume.volume, made)
            self.mounted[f"id{self.counter:06d}"] = tuple(v.volume for v in spec.volumes)
            for path in (*spec.directories, *spec.files):
                if path.startswith(self.root_dir + "/"):
                    self.pod_dirs.add(path[len(self.root_dir) + 1 :].split("/")[0])
            self.add(
                ObservedContainer(
                    id=f"id{self.counter:06d}",
                    name=spec.name,
                    image=spec.image,
                    labels=dict(spec.labels),
                    created=now,
                    running=True,
                )
            )
        elif isinstance(action, Kill):
            self.calls.append("stop")
            current = self.containers.get(action.id)
            if current is not None and current.running:
                # apply writes podsync's stop record first, and observe reports it.
                record = action.reason.value if action.record_stop else ""
                self.containers[action.id] = attrs.evolve(
                    current,
                    running=False,
                    exit_code=137,
                    finished_at=now,
                    stopped_by_podsync=record,
                )
        elif isinstance(action, Remove):
            self.calls.append("remove")
            current = self.containers.get(action.id)
            if current is not None and current.running:
                raise EngineRuleBroken(f"remove of running container {current.name}")
            dependents = sorted(
                c.name for c in self.containers.values() if self.joins(c) == action.id
            )
            if current is not None and dependents:
                raise EngineRuleBroken(
                    f"remove of {current.name}, which {', '.join(dependents)} join(s)"
                )
            self.containers.pop(action.id, None)
        elif isinstance(action, RemovePodDir):
            self.pod_dirs.discard(action.pod_uid)
        elif isinstance(action, CreateVolume):
            self.volumes.setdefault(action.volume, ObservedVolume(action.volume, action.labels))
        elif isinstance(action, RemoveVolume):
            users = [c for c in self.containers if action.volume in self.mounted.get(c, ())]
            if users:
                raise EngineRuleBroken(f"remove of volume {action.volume} in use by {users}")
            self.volumes.pop(action.volume, None)
        elif isinstance(action, RemoveImage):
            self.image_tags = {t for t in self.image_tags if f"sha256:{t}" != action.image_id}
        elif isinstance(action, Wait):
            pass
        else:  # pragma: no cover - a new action type must be taught here
            raise AssertionError(f"unknown action {action!r}")

    def joins(self, container: ObservedContainer) -> str | None:
        """The id of the container whose network ``container`` joins: as it was created
        here, else - one put here as it is - the network container its ``LABEL_JOINS``
        names, else the newest network container of its own pod created at or before it
        (ties: the greatest id), as podsync and a 2014 kubelet create a pod's containers;
        ``None`` for a network container, a foreign one, or one that joins none."""
        if container.id in self.joined:
            return self.joined[container.id]
        named = container.labels.get(LABEL_JOINS)
        if named is not None:
            target = self.by_name(named)
            return None if target is None else target.id
        me = identify(container)
        if me is None or me.container == NETWORK_CONTAINER:
            return None
        nets = [
            (other.created, other.id)
            for other in self.containers.values()
            if other.created <= container.created
            and (net := identify(other)) is not None
            and net.container == NETWORK_CONTAINER
            and (net.pod_uid, net.full_name) == (me.pod_uid, me.full_name)
        ]
        return max(nets)[1] if nets else None

    def port_holder(self, wanted: tuple[tuple[int, str, str], ...]) -> str | None:
        """The name of a running container that publishes one of ``wanted``, or None."""
        every = ("", "0.0.0.0", "::")
        for cid, held in self.published.items():
            current = self.containers.get(cid)
            if current is None or not current.running:
                continue
            for port, protocol, ip in wanted:
                for h_port, h_protocol, h_ip in held:
                    if (port, protocol) == (h_port, h_protocol) and (
                        ip == h_ip or ip in every or h_ip in every
                    ):
                        return current.name
        return None

    def exit(self, container_id: str, code: int, now: float) -> None:
        """The container's process exits by itself."""
        current = self.containers[container_id]
        self.containers[container_id] = attrs.evolve(
            current, running=False, exit_code=code, finished_at=now
        )
