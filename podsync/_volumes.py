"""Volumes: where a pod's volumes live on the host, and the binds of a container.

Contract: pure path arithmetic. ``volume_host_paths`` says where each pod volume is on
the host, ``binds`` turns a container's mounts into Docker ``Binds`` strings, and
``termination_message_file`` names the host file behind a container's termination
message. Creating and removing the directories is the apply side's job.

Ported from the seed's ``makeBinds`` and the volume and termination-log paths of
``mountExternalVolumes`` / ``runContainer`` (reference §2.4, §2.5, test §4.1 #18). Paths
are POSIX paths (``posixpath``), whatever the machine podsync runs on, because they are
paths on the engine's host.

Differences from the seed:

* The seed put emptyDir volumes under ``<root>/<pod name>/volumes/empty/<volume>`` but
  the termination-log files under ``<root>/<pod uid>/...``. Two pods with the same name
  in two namespaces (or from two sources) therefore shared their emptyDir directories.
  podsync keys both by the pod uid.
* The seed named the termination-message file after the Docker container ID, which only
  exists after the container is created; a pure plan cannot know it. podsync names the
  file after the container instance (its container name), which the plan chooses.

Nothing here does I/O.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping

from podsync._models import Pod, VolumeMount

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "binds",
    "termination_message_file",
    "volume_host_paths",
]


def volume_host_paths(pod: Pod, root_dir: str) -> dict[str, str]:
    """The host path of each of ``pod``'s volumes, by volume name.

    A ``host_path`` volume is its path; an emptyDir is
    ``<root_dir>/<pod uid>/volumes/empty/<volume name>`` (the seed's layout, under the
    uid rather than the pod name - see the module docstring).
    """
    paths: dict[str, str] = {}
    for volume in pod.volumes:
        if volume.host_path is not None:
            paths[volume.name] = volume.host_path
        else:
            paths[volume.name] = posixpath.join(root_dir, pod.uid, "volumes", "empty", volume.name)
    return paths


def binds(mounts: Iterable[VolumeMount], host_paths: Mapping[str, str]) -> list[str]:
    """Docker ``Binds`` for ``mounts``: ``"<host path>:<mount path>"``, ``":ro"`` if read-only.

    In mount order. A mount naming a volume that is not in ``host_paths`` is skipped, as
    the seed did.
    """
    result: list[str] = []
    for mount in mounts:
        host_path = host_paths.get(mount.name)
        if host_path is None:
            continue
        bind = f"{host_path}:{mount.mount_path}"
        if mount.read_only:
            bind += ":ro"
        result.append(bind)
    return result


def termination_message_file(root_dir: str, pod_uid: str, container: str, instance: str) -> str:
    """The host file behind a container's termination message.

    ``<root_dir>/<pod uid>/<container>/<instance>``: one directory per pod container, as
    the seed had, and one file per container instance, named after the instance (its
    container name, without the ``/`` the Docker API puts in front) rather than the
    Docker ID the seed used.
    """
    return posixpath.join(root_dir, pod_uid, container, instance)
