"""The schema of pod volumes: a pod's ``volumes`` (v1 and the seed's v1beta1) with the
``hostPath`` and ``emptyDir`` sources, and a container's ``volumeMounts``.

A part of ``_pod`` (see its docstring for the conventions). Contract: shapes only,
as ``_pod``'s classes (whose converter structures these too: ``_VOLUME_HOOKS`` gives
the checks of the ``NewType`` s here, ``_VOLUME_OBJECTS`` the Kubernetes object each
class reads, for ``_unsupported``'s tables); the configMap, secret, claim, downwardAPI
and projected sources are ``_objects``'. ``convert._document``, ``convert._pod`` and
``_projection`` turn them into the model. No I/O; nothing here is public API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NewType

import attrs

from podsync.load.schema import _objects as _obj
from podsync.load.schema._pod_fields import _Name
from podsync.load.schema._scalars import _bytes, _check_path

# Nothing here is public API: ``_pod`` uses these classes and types.
__all__: list[str] = []

_BindPath = NewType("_BindPath", str)  # an absolute path usable in a Docker bind
_Bytes = NewType("_Bytes", int)  # a quantity (128Mi, 1G, 1e9) in bytes


@attrs.frozen
class _Empty:
    """``{}``: emptyDir, and the three members of a v1beta1 restartPolicy."""


@attrs.frozen(kw_only=True)
class _HostPathSource:
    path: _BindPath


@attrs.frozen(kw_only=True)
class _HostPathV1(_HostPathSource):
    """A v1 ``hostPath``: its ``type`` is in ``_NOT_SUPPORTED`` ("" and DirectoryOrCreate,
    what a Docker bind does, are accepted)."""


@attrs.frozen(kw_only=True)
class _EmptyDirV1:
    """``emptyDir``: ``medium`` is checked by ``convert._document`` ("" or Memory; HugePages is
    refused), ``sizeLimit`` is honoured with ``medium: Memory`` only."""

    medium: str = ""
    size_limit: _Bytes | None = None


@attrs.frozen(kw_only=True)
class _VolumeV1:
    name: _Name
    host_path: _HostPathV1 | None = None
    empty_dir: _EmptyDirV1 | None = None
    config_map: _obj._ConfigMapVolumeSource | None = None
    secret: _obj._SecretVolumeSource | None = None
    persistent_volume_claim: _obj._ClaimSourceV1 | None = None
    downward_api: _obj._DownwardAPIVolumeSource | None = None
    projected: _obj._ProjectedVolumeSource | None = None


@attrs.frozen(kw_only=True)
class _VolumeMountSchema:
    name: _Name
    mount_path: _BindPath
    read_only: bool = False


@attrs.frozen(kw_only=True)
class _VolumeMountV1(_VolumeMountSchema):
    """A v1 mount: ``subPath``, ``mountPropagation`` ... are in ``_NOT_SUPPORTED``."""


@attrs.frozen(kw_only=True)
class _VolumeSourceV1Beta1:
    host_dir: _HostPathSource | None = None
    empty_dir: _Empty | None = None


@attrs.frozen(kw_only=True)
class _VolumeV1Beta1:
    name: _Name
    source: _VolumeSourceV1Beta1 | None = None


#: The check of each ``NewType`` here (``_pod._make_converter`` registers them).
_VOLUME_HOOKS: Mapping[Any, Callable[[object], Any]] = {
    _BindPath: lambda v: _check_path(v, optional=False, bind=True),
    _Bytes: _bytes,
}

#: Which Kubernetes object each class reads (``_pod._OBJECTS``).
_VOLUME_OBJECTS: Mapping[type, str] = {
    _VolumeMountV1: "VolumeMount",
    _VolumeV1: "Volume",
    _HostPathV1: "HostPathVolumeSource",
    _EmptyDirV1: "EmptyDirVolumeSource",
    _VolumeMountSchema: "VolumeMount (v1beta1)",
}
