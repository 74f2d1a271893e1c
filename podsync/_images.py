"""Image references and the pull decision.

Contract: pure string handling of image references, and ``should_pull``, the seed's
decision whether to pull a container's image before creating it.

Ported from the seed's ``parseImageName``, ``RequireLatestImage`` and
``dockerPuller.Pull`` (reference §1.7) and the pull rule of ``syncPod`` (reference §2.4,
§7 #8, test §4.1 #17). The seed's name/tag rule is kept exactly: the first
``/``-separated segment is set aside before looking for ``:``, so the port of a
registry host (``registry.example.com:5000/foobar``) is not mistaken for a tag. As in
the seed, a bare ``host:port`` with no ``/`` *is* read as name and tag.

Added: digest references (``name@sha256:<hex>``, which the seed never saw). A digest
pins the image content, so such a reference has no tag (any ``:tag`` before the ``@`` is
dropped: the engine resolves the reference by its digest), is never "latest", and is
pulled by digest.

Nothing here does I/O.
"""

from __future__ import annotations

from podsync._models import PullPolicy

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = [
    "has_latest_tag",
    "is_pinned_digest",
    "pull_reference",
    "should_pull",
    "split_image",
]

# The tag the engine uses when none is given (seed dockerPuller.Pull: empty tag ->
# "latest"), and the tag that forces a pull even under IfNotPresent (kubernetes #2388).
_LATEST = "latest"


def _split_name_and_digest(image: str) -> tuple[str, str]:
    name, _, digest = image.partition("@")
    return name, digest


def _split_tag(name: str) -> tuple[str, str]:
    # Seed parseImageName: set the first "/"-segment aside (it may be "host:port"), split
    # the rest once on ":" (the first one), then put the segment back.
    registry, slash, rest = name.partition("/")
    if not slash:
        registry, rest = "", name
    repository, _, tag = rest.partition(":")
    if slash:
        repository = f"{registry}/{repository}"
    return repository, tag


def is_pinned_digest(image: str) -> bool:
    """True when ``image`` names its content by digest (``name@sha256:...``)."""
    return "@" in image


def split_image(image: str) -> tuple[str, str]:
    """``(repository, tag)`` of an image reference; the tag is ``""`` when there is none.

    Examples: ``ubuntu`` -> (``ubuntu``, ``""``); ``foo/bar:445566`` -> (``foo/bar``,
    ``445566``); ``registry.example.com:5000/foobar`` -> (same, ``""``);
    ``host:5000/a/b:tag`` -> (``host:5000/a/b``, ``tag``). A digest reference gives the
    repository and ``""``: ``repo:1.0@sha256:ab...`` -> (``repo``, ``""``); see
    ``is_pinned_digest`` and ``pull_reference`` for the digest itself.
    """
    name, _ = _split_name_and_digest(image)
    repository, tag = _split_tag(name)
    if is_pinned_digest(image):
        return repository, ""
    return repository, tag


def has_latest_tag(image: str) -> bool:
    """True only for an explicit ``:latest`` tag (seed RequireLatestImage).

    An untagged image is *not* "latest" here, even though the engine pulls ``latest``
    for it; ``registry:5000/x`` has no tag at all; a digest-pinned image never is.
    """
    return not is_pinned_digest(image) and split_image(image)[1] == _LATEST


def pull_reference(image: str) -> tuple[str, str]:
    """``(repository, tag)`` to hand to the engine's pull.

    An untagged image pulls ``latest`` (seed dockerPuller.Pull). A digest reference
    pulls ``(repository, "sha256:...")``: the docker SDK's ``images.pull(repository,
    tag=...)`` sends the tag field to the engine as given, and the Engine API accepts a
    digest there.
    """
    repository, tag = split_image(image)
    if is_pinned_digest(image):
        return repository, _split_name_and_digest(image)[1]
    return repository, tag or _LATEST


def should_pull(policy: PullPolicy, image: str, present: bool) -> bool:
    """Whether to pull ``image`` before creating a container from it.

    Args:
        policy: the container's pull policy.
        image: the image reference, as in the spec.
        present: whether the engine has the image already.

    Returns:
        ``NEVER``: never (the container is still created; the engine fails it if the
        image is missing). ``ALWAYS``: always. ``IF_NOT_PRESENT``: when the image is
        missing, or when it has an explicit ``:latest`` tag (kubernetes #2388: a
        ``latest`` image should be refreshed even if some version of it is present).
    """
    if policy is PullPolicy.NEVER:
        return False
    if policy is PullPolicy.ALWAYS:
        return True
    return not present or has_latest_tag(image)
