"""``FakeRuntime``'s images: what is present, and the calls that list, pull and remove them.

Contract: ``ImageCalls`` is a mixin of ``FakeRuntime`` (``podsync.testing``), on the
state and internals of ``FakeEngine``; in memory, no I/O. Docker's rules, by the fake's
own code: a reference is read as Docker reads it (``_rules.read_reference``: ``busybox``
is ``busybox:latest``, a malformed one is refused), a pull of a present image changes
nothing, and an image a container was created from cannot be removed.
"""

from __future__ import annotations

from podsync.exceptions import Conflict, RuntimeCallError
from podsync.model._pod import ObservedImage
from podsync.runtime.fake._engine import FakeEngine
from podsync.runtime.fake._rules import Reference as _Reference
from podsync.runtime.fake._rules import image_id as _image_id
from podsync.runtime.fake._rules import read_reference as _read_reference

__all__ = ["ImageCalls"]


class ImageCalls(FakeEngine):
    """The image half of ``FakeRuntime``: see the module docstring."""

    def add_image(self, image: str | ObservedImage) -> None:
        """Make an image present (no call is recorded): a reference, listed as the
        engine lists it (``library/busybox`` as ``busybox:latest``), or an
        ``ObservedImage`` as it is.

        Raises:
            ValueError: the reference is malformed (``invalid reference format``).
        """
        with self._lock:
            if isinstance(image, str):
                image = self._new_image(_read_reference(image))
            self._images[image.id] = image

    @staticmethod
    def _new_image(ref: _Reference) -> ObservedImage:
        if ref.digest:
            return ObservedImage(_image_id(ref.listed), (), (ref.listed,), user="")
        return ObservedImage(_image_id(ref.listed), (ref.listed,), user="")

    @property
    def images(self) -> list[ObservedImage]:
        """The images, as ``list_images`` would return them (no call recorded)."""
        with self._lock:
            return sorted(self._images.values(), key=lambda i: i.id)

    def list_images(self) -> list[ObservedImage]:
        """Every image."""
        self._sleep()
        with self._lock:
            self._record("list_images")
            return sorted(self._images.values(), key=lambda i: i.id)

    def pull_image(self, image: str) -> None:
        """Make ``image`` present (recorded as ``pull``).

        Raises:
            RuntimeCallError: the reference is malformed (``invalid reference format``).
        """
        self._sleep()
        with self._lock:
            self._record("pull", image)
            try:
                ref = _read_reference(image)
            except ValueError as e:
                raise RuntimeCallError("pull", image, str(e), status_code=400) from None
            if self._find_image(image) is None:
                pulled = self._new_image(ref)
                self._images[pulled.id] = pulled

    def remove_image(self, image_id: str) -> None:
        """Remove an image by id (or reference); removing a missing one succeeds (as
        ``DockerRuntime`` does).

        Raises:
            RuntimeCallError: a container was created from it.
        """
        self._sleep()
        with self._lock:
            self._record("remove_image", image_id)
            image = self._find_image(image_id)
            if image is None:
                return
            for c in self._containers.values():
                if c.image == image.id or self._find_image(c.image) is image:
                    raise Conflict(
                        "remove_image",
                        image_id,
                        f"image is being used by container {c.id}",
                        status_code=409,
                    )
            del self._images[image.id]
