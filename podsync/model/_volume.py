"""The volumes of the model: a pod's volumes and their sources, the files podsync writes
for configMap, secret, downwardAPI and projected volumes and the record of what it
wrote (``WrittenVolume``), and where a container mounts a volume.

Contract: frozen attrs classes, as ``_pod``'s (they hash, compare by value and cannot
change; sequences are tuples); ``Volume`` refuses two sources. ``_pod``'s ``Pod`` and
``Container`` hold them, ``podsync`` re-exports them as public API. The loader
(``podsync.load.convert``: ``_document``, ``_projection``) makes them; the planner and
the runtimes read them.

Layering: the model layer, beside ``_pod``; it imports ``_secrets`` only (a secret
file's reference and keyed digest), never ``_pod``, and does no I/O.
"""

from __future__ import annotations

import enum
import functools
import hashlib

import attrs

from podsync.model._secrets import SecretPart
from podsync.model._validators import absolute_path, dns_label

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "ClaimSource",
    "MemoryMedium",
    "Volume",
    "VolumeContent",
    "VolumeFile",
    "VolumeKind",
    "VolumeMount",
    "WrittenVolume",
]


@attrs.frozen
class MemoryMedium:
    """An ``emptyDir`` in memory (``medium: Memory``): a tmpfs of ``size`` bytes.

    ``size`` is what the kubelet's ``calculateEmptyDirMemorySize``
    (``pkg/volume/emptydir/empty_dir.go``) gives: the node's allocatable memory, or
    the pod's memory limit when every container has one and it is smaller, or the
    volume's ``sizeLimit`` when given and smaller still. The loader resolves it.
    """

    size: int


class VolumeKind(enum.StrEnum):
    """The kinds of volume whose files podsync writes (``VolumeContent``), by their
    Kubernetes volume source."""

    CONFIG_MAP = "configMap"
    SECRET = "secret"
    DOWNWARD_API = "downwardAPI"
    #: The files of several configMap, secret and downwardAPI sources in one volume.
    PROJECTED = "projected"


@attrs.frozen
class VolumeFile:
    """One file of a ``VolumeContent``: ``path`` relative to the volume (``/``
    between directories; never absolute, never with a ``..`` element), its bytes and
    its permission bits.

    A file of a secret volume names the Secret key it holds (``secret``: its reference
    and the keyed digest of its value, ``podsync.model._secrets``): that is all a plan's text,
    its JSON form or a digest ever shows of it. ``known`` is False in a plan read back
    from JSON, where ``data`` is empty until the value is read from the sources again
    (``podsync apply --plan`` does); nothing is written from such a file.
    """

    path: str
    data: bytes = attrs.field(repr=False)
    mode: int = 0o644
    secret: SecretPart | None = None
    known: bool = True


@attrs.frozen
class VolumeContent:
    """The files of a ``configMap``, ``secret``, ``downwardAPI`` or ``projected`` volume,
    as the loader projects them from the sources' objects and the pod (kubelet-modern.md
    §9; a projected volume's are those of all its sources).

    Attributes:
        kind: the volume source they come from.
        files: the files, sorted by path.
        sources: what the files were read from, each with a digest of what it
            contributed (``{"ConfigMap default/settings": "<sha256>"}``): a plan that
            rewrites the volume names the source whose digest changed.

    The content is not part of any container's spec hash: when it changes, the files
    are rewritten in place (the kubelet's ``..data`` swap) and the containers that
    mount the volume keep running.
    """

    kind: VolumeKind
    files: tuple[VolumeFile, ...] = ()
    sources: dict[str, str] = attrs.field(factory=dict, hash=False)

    @functools.cached_property
    def digest(self) -> str:
        """The sha256 (hex) of the kind, the files' paths, modes and bytes and the
        sources' names: equal for equal content, whatever process computes it. Computed
        once per value (every plan compares it). A Secret's file counts by its keyed
        digest, never its bytes: no digest of a Secret's value without the host's key
        is ever made (and a saved plan's sealed file has the same digest)."""
        total = hashlib.sha256(f"{self.kind.value}\0".encode())
        for f in sorted(self.files, key=lambda f: f.path):
            total.update(f"{f.path}\0{f.mode:o}\0".encode("utf-8", "surrogatepass"))
            if f.secret is not None:
                total.update(f"secret\0{f.secret.digest}\0".encode())
            else:
                total.update(f"{len(f.data)}\0".encode())
                total.update(f.data)
        for name in sorted(self.sources):
            total.update(f"{name}\0".encode())
        return total.hexdigest()


@attrs.frozen
class ClaimSource:
    """A ``persistentVolumeClaim`` volume source: the data of claim ``claim_name`` in the
    pod's namespace, kept in a named engine volume (``podsync.claim_volume_name``) that
    outlives every pod; ``read_only`` mounts it read-only in every container."""

    claim_name: str
    read_only: bool = False


@attrs.frozen
class Volume:
    """A pod volume, of one source: a host directory (``host_path``, the seed's ``hostDir``),
    a claim's named engine volume (``claim``), files podsync writes (``content``:
    ``configMap``, ``secret``, ``downwardAPI`` and ``projected`` volumes, mounted read-only),
    or, when all are ``None``, an empty directory that lives as long as the pod
    (``emptyDir``; with ``memory``, a tmpfs the engine mounts in the one container that uses
    it). Two sources raise ``ValueError`` (Kubernetes refuses them; a plan would use one),
    as does a ``name`` that is not a DNS-1123 label."""

    name: str = attrs.field(validator=dns_label)
    host_path: str | None = None
    memory: MemoryMedium | None = None
    claim: ClaimSource | None = None
    content: VolumeContent | None = None

    def __attrs_post_init__(self) -> None:
        sources = ("host_path", "memory", "claim", "content")
        if len(given := [s for s in sources if getattr(self, s) is not None]) > 1:
            raise ValueError(f"volume {self.name!r} has more than one source: {', '.join(given)}")

    @property
    def is_empty_dir(self) -> bool:
        """True for an ``emptyDir`` volume (on disk or in memory)."""
        return self.host_path is None and self.claim is None and self.content is None

    @property
    def on_disk(self) -> bool:
        """True for an ``emptyDir`` volume whose directory is under the root directory."""
        return self.is_empty_dir and self.memory is None


@attrs.frozen
class VolumeMount:
    """Where a pod volume appears inside a container: ``mount_path`` is absolute, without
    ``:`` (Docker's binds use it); another raises ``ValueError``. The pod checks that
    ``name`` is one of its volumes."""

    name: str
    mount_path: str = attrs.field(validator=absolute_path(optional=False, bind=True))
    read_only: bool = False


@attrs.frozen
class WrittenVolume:
    """The files podsync last wrote for a pod volume with content (configMap, secret,
    downwardAPI), as its record says (read back through the engine, from a record
    volume or the volume itself; for pods of an earlier podsync, under the root).

    Attributes:
        pod_uid: the pod.
        name: the volume's name in the pod.
        digest: what was written: ``VolumeContent.digest``, then ``:<gid>`` for an
            fsGroup.
        sources: the digest of each source (``VolumeContent.sources``): which changed.
        volume: the engine volume (``_volumes.content_volume_name``); empty for a
            record under the root directory.
        payload: the payload directory ``..data`` names (the next write: the other).
        names: the payload's top-level names, each a link ``<name> -> ..data/<name>``.
    """

    pod_uid: str
    name: str
    digest: str
    sources: dict[str, str] = attrs.field(factory=dict, hash=False)
    volume: str = ""
    payload: str = ""
    names: tuple[str, ...] = ()
