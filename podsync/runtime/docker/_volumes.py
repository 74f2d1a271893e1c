"""The Docker runtime's named volumes, and the files it writes and reads in the engine:
a volume's entries written, one file of a volume or of a container read, through the
archive API, nothing read or written on this machine.

Contract: ``VolumeCalls`` is a mixin of ``DockerRuntime``, on the clients and error
translation of ``EngineConnection``. A volume is reached through a helper container
that mounts it and never starts (labelled ``LABEL_HELPER``, removed when the call ends,
whatever happened); ``_archive`` makes and reads the tar archives.

The helper image (``HELPER_IMAGE``) is the runtime's own, so that no caller names one:
an empty image (no files, no command) that the runtime imports into the engine from an
empty tar archive (``POST /images/create?fromSrc=-``, ``docker import``) the first
time it needs it, and again when someone removed it. No registry is reached, so it
works offline and on a remote engine alike; it is a few hundred bytes of metadata.
Nothing of it runs: a helper container is created and removed, never started, and
needs a command only because Docker refuses to create a container without one. It is
tagged, so the dangling-image collection (``GCPolicy.remove_dangling_images``: untagged
images only) never removes it; an operator's ``docker image prune -a`` may, and the
next write imports it again.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from podsync.exceptions import RuntimeCallError
from podsync.model._pod import ObservedVolume
from podsync.model._volume_entries import VolumeEntry, entry_path_refusal
from podsync.runtime.docker._api import volume_from_list
from podsync.runtime.docker._archive import first_file, tar_of
from podsync.runtime.docker._connection import EngineConnection
from podsync.runtime.docker._unchecked import unchecked_volume_refusal
from podsync.spec._labels import LABEL_HELPER
from podsync.spec._volumes import VOLUME_ACCESS_PATH, VOLUME_HELPER_IMAGE

__all__ = ["HELPER_IMAGE", "VolumeCalls"]

#: The empty image of the volume helper containers, imported by the runtime itself.
HELPER_IMAGE = VOLUME_HELPER_IMAGE

# Where a volume helper container (``VolumeCalls._volume_helper``) mounts its volume, as
# a network container mounts its pod's state volume.
_HELPER_MOUNT = VOLUME_ACCESS_PATH


class VolumeCalls(EngineConnection):
    """``DockerRuntime``'s named volumes, and the files it writes and reads in the engine."""

    # -- named volumes -------------------------------------------------------------

    def list_volumes(self) -> list[ObservedVolume]:
        """Every named volume on the engine (one ``GET /volumes``), with its labels.

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the call failed.
        """
        with self._call("list volumes", "") as api:
            listed = api.volumes()
        # "Volumes" is null on an engine without any.
        return [volume_from_list(entry) for entry in listed.get("Volumes") or ()]

    def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create the named volume ``name`` (local driver) with ``labels``; the engine
        answers a create of an existing volume with that volume, unchanged.

        Raises:
            RuntimeCallError: the engine refused the name, or failed.
        """
        if self._is_libpod():
            # podman creates a volume of a one-character name, which Docker refuses.
            refusal = unchecked_volume_refusal(name)
            if refusal is not None:
                raise RuntimeCallError("create volume", name, refusal)
        with self._call("create volume", name) as api:
            self._make_volume(api, name, labels)

    def remove_volume(self, name: str) -> None:
        """Remove the named volume ``name``; one that is gone counts as removed.

        Raises:
            RuntimeCallError: a container uses it (HTTP 409, "volume is in use"; nothing
                is forced), or the engine failed.
        """
        import docker.errors

        with (
            self._call("remove volume", name) as api,
            contextlib.suppress(docker.errors.NotFound),
        ):
            api.remove_volume(name)

    # -- files in the engine -------------------------------------------------------

    def write_volume(
        self, volume: str, entries: Sequence[VolumeEntry], *, through: str = ""
    ) -> None:
        """Write ``entries`` into the named volume ``volume`` through a helper container
        that mounts it and never starts (one create, one ``PUT .../archive``, one
        remove), or through the container ``through``, which mounts it at
        ``VOLUME_ACCESS_PATH`` (one ``PUT .../archive``): nothing is read or written on
        this machine.

        Raises:
            RuntimeCallError: a path is refused, the container ``through`` does not
                exist, or the engine failed.
        """
        # Extracted at "/": the volume's root is the entry "podsync-volume", whose mode
        # and owner Docker sets (see tar_of). podman (4.3) drops an archive extracted at
        # "/" whose top directory is a volume's mount point (containers/podman#3550:
        # the upload answers 200 and writes nothing); extracted in the mount point, it
        # lands in the volume, and podman, unlike Docker, applies the root entry "."
        # (mode, owner) to that directory.
        where, under = ("/", _HELPER_MOUNT.removeprefix("/"))
        if self._is_libpod():
            where, under = _HELPER_MOUNT, "."
        try:
            archive = tar_of(entries, under=under)
        except ValueError as exc:
            raise RuntimeCallError("write volume", volume, str(exc)) from exc
        if through:
            # Docker mounts a container's volumes for an archive upload, whether the
            # container runs or not (a created one's too).
            self._put_archive(through, where, archive, volume)
            return
        with self._volume_helper(volume, "write volume") as helper:
            self._put_archive(helper, where, archive, volume)

    def _put_archive(self, container: str, where: str, archive: bytes, volume: str) -> None:
        """One archive upload into ``container``; on podman tried up to three times when
        its tar process broke ("passing bulk input to subprocess: write |1: broken
        pipe", HTTP 500, seen on a loaded machine), or when another upload of the same
        file replaced it under this one ("copier: put: error setting ownership of
        <file>: ... no such file or directory", HTTP 500, seen when two syncs of one
        pod write its state volume at once): the same entries written again land the
        same, so a retry is safe."""
        for attempt in range(3):
            try:
                with self._call("write volume", volume) as api:
                    api.put_archive(container, where, archive)
                return
            except RuntimeCallError as exc:
                if attempt == 2 or not _passing(str(exc)) or not self._is_libpod():
                    raise

    def read_volume_file(self, volume: str, path: str, *, limit: int) -> bytes | None:
        """At most ``limit`` bytes of the regular file ``path`` in the named volume,
        through a helper container as ``write_volume``; ``None`` when absent.

        Raises:
            RuntimeCallError: the path is refused, or the engine failed.
        """
        refusal = entry_path_refusal(path)
        if refusal is not None:
            raise RuntimeCallError("read volume", volume, f"cannot read {path!r}: {refusal}")
        with self._volume_helper(volume, "read volume") as helper:
            return self._read_file(helper, posixpath.join(_HELPER_MOUNT, path), limit, volume)

    def read_container_file(
        self, container_id: str, path: str, *, limit: int, tail: bool = False
    ) -> bytes | None:
        """At most ``limit`` bytes of the regular file ``path`` in the container - its
        first ones, or its last ones with ``tail`` - (``GET /containers/{id}/archive``:
        Docker mounts an exited container's volumes and binds for it); ``None`` when
        absent or not a regular file.

        Raises:
            RuntimeCallError: the container does not exist, or the engine failed.
        """
        if self._is_libpod():
            bound = self._volume_file_bound_at(container_id, path)
            if bound is not None:
                # podman (4.3) cannot read a file bound into a container through the
                # archive API ("chdir <source>: not a directory": it enters a bind's
                # source as a directory); the file is read from its volume instead.
                volume, entry = bound
                with self._volume_helper(volume, "read file") as helper:
                    return self._read_file(
                        helper, posixpath.join(_HELPER_MOUNT, entry), limit, container_id, tail=tail
                    )
        return self._read_file(container_id, path, limit, container_id, tail=tail)

    def _volume_file_bound_at(self, container_id: str, path: str) -> tuple[str, str] | None:
        """The volume and the entry in it of the file bound at ``path`` in the
        container (a ``VolumeFileMount``: a bind whose source is in a volume's
        mountpoint), or ``None`` when ``path`` is no such bind. One inspect, and one
        volume list when it is."""
        import docker.errors

        with self._call("read file", container_id) as api:
            try:
                inspected = cast(dict[str, Any], api.inspect_container(container_id))
            except docker.errors.NotFound:
                return None  # the read says so, as on Docker
            sources = [
                str(m.get("Source") or "")
                for m in inspected.get("Mounts") or ()
                if m.get("Type") == "bind" and m.get("Destination") == path
            ]
            if not sources:
                return None
            listed = api.volumes().get("Volumes") or ()
        for volume in listed:
            root = str(volume.get("Mountpoint") or "").rstrip("/") + "/"
            if root != "/" and sources[0].startswith(root):
                return str(volume["Name"]), sources[0].removeprefix(root)
        return None

    def _read_file(
        self, container_id: str, path: str, limit: int, target: str, *, tail: bool = False
    ) -> bytes | None:
        import docker.errors

        with self._call("read file", target) as api:
            try:
                chunks, _ = api.get_archive(container_id, path)
            except docker.errors.NotFound as exc:
                # 404 is both "no such container" and "no such path": only the second
                # is an answer.
                if "no such container" in (exc.explanation or "").lower():
                    raise
                return None
            except docker.errors.APIError as exc:
                # A parent that is a file: the engine's lstat answers ENOTDIR (HTTP
                # 500), which for a reader means the same as a missing path.
                if (exc.explanation or "").endswith(": not a directory"):
                    return None
                raise
            try:
                # A symbolic link is no regular file, on podman too (see first_file).
                name = posixpath.basename(posixpath.normpath(path))
                return first_file(chunks, limit=limit, tail=tail, name=name)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()

    @contextlib.contextmanager
    def _volume_helper(self, volume: str, operation: str) -> Iterator[str]:
        """A created (never started) container of ``HELPER_IMAGE`` with ``volume``
        mounted at ``_HELPER_MOUNT``, removed when the block ends, whatever happened in
        it. The image is imported when the engine does not have it."""
        import docker.errors

        try:
            helper = self._create_helper(volume, operation)
        except RuntimeCallError as exc:
            if not isinstance(exc.__cause__, docker.errors.ImageNotFound):
                raise
            self._import_helper_image(operation, volume)
            helper = self._create_helper(volume, operation)
        try:
            yield helper
        finally:
            with self._call(operation, volume) as api:
                api.remove_container(helper, force=True)

    def _create_helper(self, volume: str, operation: str) -> str:
        """The helper container's create; its id."""
        with self._call(operation, volume) as api:
            created = api.create_container(
                HELPER_IMAGE,
                # Never run: Docker creates no container without a command.
                command=["/podsync-volume-helper"],
                labels={LABEL_HELPER: "volume"},
                network_disabled=True,
                host_config=api.create_host_config(
                    binds=[f"{volume}:{_HELPER_MOUNT}"], network_mode="none"
                ),
            )
        return str(created["Id"])

    def _import_helper_image(self, operation: str, volume: str) -> None:
        """Import ``HELPER_IMAGE``: an empty tar archive, through the engine (``docker
        import``), labelled as podsync's helper. Two runtimes importing it at once both
        succeed (the tag moves to an identical image)."""
        empty = io.BytesIO()
        with tarfile.open(fileobj=empty, mode="w"):
            pass
        with self._call(operation, volume) as api:
            # The tag rides in the repository (``repo:tag``): podman's Docker-compatible
            # import ignores the ``tag`` parameter and tags ``latest``; Docker reads both.
            api.import_image_from_data(
                empty.getvalue(),
                repository=HELPER_IMAGE,
                changes=[f"LABEL {LABEL_HELPER}=volume"],
            )


def _passing(refusal: str) -> bool:
    """Whether podman's refusal of an archive upload is one that passes: its tar process
    broke, or a concurrent upload of the same file replaced it (``_put_archive``)."""
    broken = "passing bulk input to subprocess" in refusal
    replaced = "copier: put:" in refusal and "no such file or directory" in refusal
    return broken or replaced
