"""The Docker runtime's images: list (with the user each runs as), pull, remove.

Contract: ``ImageCalls`` is a mixin of ``DockerRuntime``, on the clients and error
translation of ``EngineConnection``. An image id names immutable content, so what an
inspect of it said is kept for the runtime's life; a pull reads the engine's progress
stream to its end, for the errors it reports there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, cast

import attrs

from podsync.exceptions import RuntimeCallError
from podsync.model._pod import ObservedImage
from podsync.runtime.docker._api import image_from_list, qualified_by_podman
from podsync.runtime.docker._connection import EngineConnection
from podsync.spec._images import pull_reference

__all__ = ["ImageCalls"]


class ImageCalls(EngineConnection):
    """``DockerRuntime``'s image calls."""

    # Set by DockerRuntime's constructor.
    _image_users: dict[str, str]  # image id -> Config.User, see list_images

    def list_images(self) -> list[ObservedImage]:
        """Every (top-level) image on the engine, with the user it runs as; on podman,
        an image it names ``localhost/<name>`` is listed under ``<name>`` too
        (``image_from_list``).

        One list call; the list has no ``Config.User``, so each image this runtime has
        not seen before is inspected once for it (an image id names immutable content,
        so the answer is cached by id for the runtime's life).

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: a call failed.
        """
        import docker.errors

        with self._call("list images", "") as api:
            listed = cast(list[dict[str, Any]], api.images())
        images = []
        for entry in listed:
            image = image_from_list(entry)
            if any(qualified_by_podman(tag) for tag in image.tags) and self._is_libpod():
                image = image_from_list(entry, libpod=True)
            with self._lock:
                user = self._image_users.get(image.id)
            if user is None:
                with self._call("inspect image", image.id) as api:
                    try:
                        inspected = cast(
                            dict[str, Any],
                            api.inspect_image(image.id),  # type: ignore[no-untyped-call]
                        )
                    except docker.errors.NotFound:
                        continue  # removed between the list and the inspect: it is gone
                user = str((inspected.get("Config") or {}).get("User") or "")
                with self._lock:
                    self._image_users[image.id] = user
            images.append(attrs.evolve(image, user=user))
        return images

    def pull_image(self, image: str) -> None:
        """Pull ``image``; an untagged reference pulls ``:latest``, a digest reference
        pulls that digest.

        The engine reports some failures as an HTTP error and others (a layer that
        fails to download) as an ``error`` message inside the progress stream that
        follows a ``200 OK``; both raise.

        Raises:
            EngineUnavailable: the engine cannot be reached.
            RuntimeCallError: the pull failed (no such image, registry unreachable,
                access denied ...); the message is the engine's.
        """
        repository, tag = pull_reference(image)
        with self._call("pull", image) as api:
            for message in api.pull(repository, tag=tag, stream=True, decode=True):
                if isinstance(message, Mapping) and (
                    "error" in message or "errorDetail" in message
                ):
                    detail = message.get("errorDetail")
                    text = message.get("error") or (
                        detail.get("message") if isinstance(detail, Mapping) else None
                    )
                    raise RuntimeCallError("pull", image, str(text or message))

    def remove_image(self, image_id: str) -> None:
        """Remove an image by id; an image that is gone already counts as removed.

        Raises:
            RuntimeCallError: the engine refused (the image is in use by a container,
                or has several tags and was named by id).
        """
        import docker.errors

        with (
            self._call("remove image", image_id) as api,
            contextlib.suppress(docker.errors.NotFound),
        ):
            api.remove_image(image_id)
