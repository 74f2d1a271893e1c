"""``FakeRuntime``'s named volumes: the protocol's volume calls and the volumes a
container's create makes, as Docker 20.10's local volume driver does them.

Contract: a mixin of ``FakeRuntime`` (``podsync.testing``), which holds the state and
the lock, on the internals of ``FakeEngine``; in memory, no I/O. Docker's rules, by the
fake's own code: the local driver's names (``_rules.volume_name_refusal``), a create of
an existing volume that succeeds and leaves it as it is (labels included), a volume made
unlabelled by the create of a container that mounts it, and no removal of a volume a
container (running or not) mounts.
"""

from __future__ import annotations

import datetime
import functools
import posixpath
from collections.abc import Mapping, Sequence

import attrs

from podsync.actions._actions import CreateSpec
from podsync.exceptions import Conflict, NotFound, RuntimeCallError
from podsync.model._pod import ObservedImage, ObservedVolume
from podsync.model._volume_entries import EntryKind, VolumeEntry, entry_path_refusal
from podsync.runtime.fake._engine import FakeEngine
from podsync.runtime.fake._rules import image_id, volume_name_refusal
from podsync.runtime.fake._state import FakeContainer
from podsync.spec._volumes import VOLUME_ACCESS_PATH, VOLUME_HELPER_IMAGE

__all__ = ["VolumeCalls"]


class VolumeCalls(FakeEngine):
    """The named-volume part of ``FakeRuntime``."""

    # Set by FakeRuntime's constructor.
    _volumes: dict[str, ObservedVolume]

    def _new_volume(self, name: str, labels: Mapping[str, str] | None = None) -> ObservedVolume:
        """A volume the engine makes now: its ``created`` is the clock's time as Docker's
        ``CreatedAt`` says it (RFC 3339, whole seconds, UTC), so one made again within
        the same second reports the same time, as Docker's does (which is the time its
        root directory last changed: see ``_root_changed``)."""
        at = datetime.datetime.fromtimestamp(int(self.clock()), datetime.UTC)
        return ObservedVolume(name, dict(labels or {}), at.strftime("%Y-%m-%dT%H:%M:%SZ"))

    def _root_changed(self, name: str) -> None:
        """An entry at the root of volume ``name`` was made, replaced or removed, or the
        root itself written: Docker's local driver reports as ``CreatedAt`` the time
        its root directory last changed (its modification time), so it says now."""
        found = self._volumes[name]
        self._volumes[name] = attrs.evolve(found, created=self._new_volume(name).created)

    @functools.cached_property
    def _volume_files(self) -> dict[str, dict[str, VolumeEntry]]:
        """Each volume's entries by path (``"."`` its root), made on first use."""
        return {}

    def add_volume(self, volume: ObservedVolume | str) -> None:
        """Put a named volume on the engine as it is (no call is recorded): an
        ``ObservedVolume``, or a name (unlabelled, as a volume someone made by hand)."""
        with self._lock:
            if isinstance(volume, str):
                volume = ObservedVolume(volume)
            self._volumes[volume.name] = volume

    @property
    def volumes(self) -> list[ObservedVolume]:
        """The named volumes, as ``list_volumes`` would return them (no call recorded)."""
        with self._lock:
            return [self._volumes[n] for n in sorted(self._volumes)]

    def _mount_volumes(self, spec: CreateSpec) -> tuple[str, int] | None:
        """At a container's create: the driver's refusal of a volume name it mounts
        (Docker answers 400) or of a file mount's missing volume (404), or ``None``
        after creating the volumes that do not exist yet, without labels but
        the mount's (``NamedVolumeMount.labels``), as Docker does (the volume service's
        ``CreateWithRef``). Called under the lock."""
        for mounted in spec.volumes:
            if (refusal := volume_name_refusal(mounted.volume)) is not None:
                return refusal, 400
        for file_mount in spec.file_mounts:
            # Docker inspects the volume for its mountpoint: a missing one is refused.
            if file_mount.volume not in self._volumes:
                return f"get {file_mount.volume}: no such volume", 404
        for mounted in spec.volumes:
            # With the mount's labels (Docker's VolumeOptions.Labels), if it has any.
            made = self._new_volume(mounted.volume, dict(mounted.labels))
            self._volumes.setdefault(mounted.volume, made)
        for file_mount in spec.file_mounts:
            # For a bind source that does not exist, Docker makes a directory.
            if file_mount.path not in self._volume_files.get(file_mount.volume, {}):
                self._put(file_mount.volume, VolumeEntry(file_mount.path, EntryKind.DIRECTORY))
        return None

    def list_volumes(self) -> list[ObservedVolume]:
        """Every named volume, by name."""
        self._sleep()
        with self._lock:
            self._record("list_volumes")
            return [self._volumes[n] for n in sorted(self._volumes)]

    def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create the named volume; one that exists is left as it is, labels included
        (Docker returns it).

        Raises:
            RuntimeCallError: the local driver refuses the name.
        """
        self._sleep()
        with self._lock:
            self._record("create_volume", name, dict(labels))
            refusal = volume_name_refusal(name)
            if refusal is not None:
                raise RuntimeCallError("create_volume", name, refusal, status_code=400)
            self._volumes.setdefault(name, self._new_volume(name, labels))

    def remove_volume(self, name: str) -> None:
        """Remove the named volume; removing a missing one succeeds.

        Raises:
            RuntimeCallError: a container, running or not, mounts it ("remove <name>:
                volume is in use - [<ids>]").
        """
        self._sleep()
        with self._lock:
            self._record("remove_volume", name)
            if name not in self._volumes:
                return
            users = [
                c.id
                for c in self._sorted()
                if c.spec is not None and any(v.volume == name for v in c.spec.volumes)
            ]
            if users:
                raise Conflict(
                    "remove_volume",
                    name,
                    f"remove {name}: volume is in use - [{' '.join(users)}]",
                    status_code=409,
                )
            del self._volumes[name]
            # Its data goes with it: a volume made again under the name is empty.
            self._volume_files.pop(name, None)

    # -- files in the engine -----------------------------------------------------------

    def volume_files(self, volume: str) -> dict[str, VolumeEntry]:
        """What ``volume`` holds, by path relative to its root (no call recorded)."""
        with self._lock:
            return dict(self._volume_files.get(volume, {}))

    def write_container_file(self, container: str, path: str, data: bytes) -> None:
        """What a container's process wrote at the absolute ``path`` (no call recorded):
        into the volume mounted there, else into the container's own filesystem."""
        with self._lock:
            found = self._find(container)
            if found is None:
                raise KeyError(container)
            mounted = _volume_at(found, path)
            if mounted is None:
                found.files[path] = data
            else:
                volume, inside = mounted
                old = self._volume_files.get(volume, {}).get(inside)
                if old is not None and old.kind is EntryKind.FILE:
                    # A process writes into a file: its mode and owner stay.
                    self._put(volume, attrs.evolve(old, data=data))
                else:
                    self._put(volume, VolumeEntry(inside, EntryKind.FILE, data=data))
                    if "/" not in inside:
                        self._root_changed(volume)

    def write_volume(
        self, volume: str, entries: Sequence[VolumeEntry], *, through: str = ""
    ) -> None:
        """Write ``entries`` into ``volume`` (created unlabelled when missing); with
        ``through``, through that container: into ``volume`` when the container mounts
        it at ``VOLUME_ACCESS_PATH``, else - as Docker's archive upload, which writes
        the container's own files there - not into any volume.

        Raises:
            RuntimeCallError: the container ``through`` does not exist ("No such
                container: <ref>"), or a path is refused; nothing is written then.
        """
        self._sleep()
        with self._lock:
            if through:
                self._record("write_volume", volume, tuple(entries), through)
                holder = self._find(through)
                if holder is None:
                    raise NotFound(
                        "write_volume", volume, f"No such container: {through}", status_code=404
                    )
                mounted = holder.spec is not None and any(
                    v.volume == volume and v.container_path == VOLUME_ACCESS_PATH
                    for v in holder.spec.volumes
                )
            else:
                self._record("write_volume", volume, tuple(entries))
                self._helper_image()
                mounted = True
            for entry in entries:
                refusal = entry_path_refusal(entry.path)
                if refusal is not None:
                    raise RuntimeCallError(
                        "write_volume", volume, f"cannot write {entry.path!r}: {refusal}"
                    )
            if not mounted:
                return
            self._volumes.setdefault(volume, self._new_volume(volume))
            for entry in entries:
                self._put(volume, entry)
            if any("/" not in entry.path for entry in entries):
                self._root_changed(volume)

    def read_volume_file(self, volume: str, path: str, *, limit: int) -> bytes | None:
        """At most ``limit`` bytes of the file ``path`` in ``volume``; ``None`` when it
        is not a regular file there.

        Raises:
            RuntimeCallError: the path is refused.
        """
        self._sleep()
        with self._lock:
            self._record("read_volume_file", volume, path, limit)
            self._helper_image()
            refusal = entry_path_refusal(path)
            if refusal is not None:
                raise RuntimeCallError(
                    "read_volume_file", volume, f"cannot read {path!r}: {refusal}"
                )
            self._volumes.setdefault(volume, self._new_volume(volume))
            return self._file_in(volume, path, limit)

    def read_container_file(
        self, container_id: str, path: str, *, limit: int, tail: bool = False
    ) -> bytes | None:
        """At most ``limit`` bytes (the last ones with ``tail``) of the file at ``path``
        in the container: in the volume (or volume file) mounted there, else in the
        container's own files; ``None`` when absent, and for a path under ``/dev`` or a
        tmpfs mount once the container has exited.

        Raises:
            RuntimeCallError: no such container ("No such container: <id>").
        """
        self._sleep()
        with self._lock:
            self._record("read_file", container_id, path, limit)
            found = self._find(container_id)
            if found is None:
                raise NotFound(
                    "read_file", container_id, f"No such container: {container_id}", status_code=404
                )
            mounted = _volume_at(found, path)
            if mounted is not None:
                data = self._file_in(mounted[0], mounted[1], None)
            elif not found.running and _on_tmpfs(found, path):
                return None
            else:
                data = found.files.get(path)
            if data is None:
                return None
            return (data[-limit:] if limit else b"") if tail else data[:limit]

    def _helper_image(self) -> None:
        # Docker's runtime reaches a volume through a helper container of an empty image
        # it imports when the engine lacks it: the image is listed from then on.
        if self._find_image(VOLUME_HELPER_IMAGE) is None:
            helper = ObservedImage(image_id(VOLUME_HELPER_IMAGE), (VOLUME_HELPER_IMAGE,), user="")
            self._images[helper.id] = helper

    def _file_in(self, volume: str, path: str, limit: int | None) -> bytes | None:
        files = self._volume_files.get(volume, {})
        resolved = _resolve(files, path)
        entry = files.get(resolved) if resolved is not None else None
        if entry is None or entry.kind is not EntryKind.FILE:
            return None
        return entry.data if limit is None else entry.data[:limit]

    def _put(self, volume: str, entry: VolumeEntry) -> None:
        """Docker's untar of one entry: parents made 0755 as needed; what was at the
        path replaced (with its children), unless both are directories; a symbolic link
        0777 whatever mode the entry gives (Linux has no mode for a link: Docker's untar
        sets none, ``lchmod`` does not exist; its owner is set, with ``lchown``)."""
        if entry.kind is EntryKind.SYMLINK and entry.mode != _LINK_MODE:
            entry = attrs.evolve(entry, mode=_LINK_MODE)
        files = self._volume_files.setdefault(volume, {})
        files.setdefault(".", VolumeEntry(".", EntryKind.DIRECTORY, mode=0o755))
        parent = posixpath.dirname(entry.path)
        while parent and parent not in files:
            files[parent] = VolumeEntry(parent, EntryKind.DIRECTORY, mode=0o755)
            parent = posixpath.dirname(parent)
        old = files.get(entry.path)
        both_directories = (
            old is not None
            and old.kind is EntryKind.DIRECTORY
            and entry.kind is EntryKind.DIRECTORY
        )
        if old is not None and not both_directories:
            prefix = entry.path + "/"
            for path in [p for p in files if p.startswith(prefix)]:
                del files[path]
        files[entry.path] = entry


# The mode every symbolic link has on Linux.
_LINK_MODE = 0o777
# Linux's limit on the symbolic links one lookup follows (ELOOP beyond it).
_MAX_LINKS = 40


def _resolve(files: Mapping[str, VolumeEntry], path: str) -> str | None:
    """``path`` with the symbolic links among its parents followed, as the engine's
    archive API resolves a path (``FollowSymlinkInScope``): the last component is not
    followed (a ``GET`` of a link answers the link). ``None`` when a link leads out of
    the volume (an absolute target, or ``..`` above the root: the fake knows only the
    volume), or loops."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    done: list[str] = []
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            if not done:
                return None
            done.pop()
            continue
        current = "/".join([*done, part])
        entry = files.get(current)
        if parts and entry is not None and entry.kind is EntryKind.SYMLINK:
            hops += 1
            if hops > _MAX_LINKS or entry.target.startswith("/"):
                return None
            parts = [p for p in entry.target.split("/") if p not in ("", ".")] + parts
            continue
        done.append(part)
    return "/".join(done) or "."


def _volume_at(container: FakeContainer, path: str) -> tuple[str, str] | None:
    """The named volume mounted at or above the absolute ``path`` in ``container`` (the
    deepest mount wins) and the path inside it - or the volume and file of the file
    mount at ``path`` (``CreateSpec.file_mounts``) - or ``None``."""
    if container.spec is None:
        return None
    for file_mount in container.spec.file_mounts:
        if file_mount.container_path == path:
            return file_mount.volume, file_mount.path
    best: tuple[str, str] | None = None
    depth = -1
    for mount in container.spec.volumes:
        target = mount.container_path.rstrip("/") or "/"
        under = path == target or path.startswith(target.rstrip("/") + "/")
        if under and len(target) > depth:
            inside = posixpath.relpath(path, target)
            best, depth = (mount.volume, inside), len(target)
    return best


def _on_tmpfs(container: FakeContainer, path: str) -> bool:
    """Whether ``path`` lies on a tmpfs that is gone once the container has exited:
    Docker's ``/dev`` or one of the container's tmpfs mounts."""
    targets = ["/dev"] + (
        [t.container_path for t in container.spec.tmpfs] if container.spec else []
    )
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in targets)
