"""Image references and the pull decision.

Contract: pure string handling of image references, and the pull decision:
``default_pull_policy`` (the modern kubelet's default, from the tag) and ``should_pull``
(whether to pull a container's image before creating it).

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

Added: ``normalize_image`` and ``image_reference_problem``, Docker's own reading of a
reference (distribution/reference ``ParseNormalizedNamed`` and ``FamiliarString``, the
rules the modern kubelet's ``ParseImageName`` uses, ``pkg/util/parsers/parsers.go``):
the form the engine *lists* an image under, so that "is this image present?" and "is this
the same pull?" compare what the engine compares. ``split_image`` and friends keep the
seed's rules: they decide what to ask the engine for, and the engine normalizes that
itself.

Changed (kubelet-modern.md §13): a container without a pull policy gets the modern
kubelet's default, ``Always`` for an image whose tag is ``latest`` - given, or supplied
because the reference has neither tag nor digest - and ``IfNotPresent`` otherwise
(``SetDefaults_Container``, ``pkg/apis/core/v1/defaults.go``, on the tag that
``ParseImageName``, ``pkg/util/parsers/parsers.go``, reads). A policy that is given is
honoured as it is: the seed's rule that pulled an explicit ``:latest`` even under
``IfNotPresent`` (kubernetes #2388) is gone, so a locally built ``myapp:latest`` with
``IfNotPresent`` or ``Never`` runs without asking any registry.

Nothing here does I/O.
"""

from __future__ import annotations

import functools
import re

from podsync.model._pod import PullPolicy

# What this module offers the rest of podsync; podsync/__init__.py re-exports the public
# part of it, not all of it.
__all__ = [
    "default_pull_policy",
    "effective_pull_policy",
    "has_latest_tag",
    "image_reference_problem",
    "is_pinned_digest",
    "normalize_image",
    "pull_reference",
    "should_pull",
    "split_image",
]

# The tag the engine uses when none is given (seed dockerPuller.Pull: empty tag ->
# "latest"), and the tag whose default pull policy is Always (SetDefaults_Container).
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


def default_pull_policy(image: str) -> PullPolicy:
    """The pull policy of a container that gives none, from its image's tag (the modern
    kubelet's ``SetDefaults_Container``, ``pkg/apis/core/v1/defaults.go``).

    ``ALWAYS`` when the tag is ``latest``: given (``nginx:latest``, also beside a digest,
    ``nginx:latest@sha256:...``), or supplied because the reference has neither tag nor
    digest (``nginx``: ``ParseImageName`` reads it as ``nginx:latest``).
    ``IF_NOT_PRESENT`` for any other tag and for a digest without a tag
    (``nginx@sha256:...``: the content is pinned). Tags are case-sensitive:
    ``nginx:Latest`` is another tag.
    """
    parsed = _parse(image)
    if isinstance(parsed, str):
        # A reference the engine refuses (admission rejects its pod): read it with the
        # seed's rules, so that the answer still follows the tag as written.
        tag, digest = _split_tag(_split_name_and_digest(image)[0])[1], is_pinned_digest(image)
    else:
        _, tag, digest_text = parsed
        digest = bool(digest_text)
    if tag == _LATEST or (not tag and not digest):
        return PullPolicy.ALWAYS
    return PullPolicy.IF_NOT_PRESENT


def effective_pull_policy(policy: PullPolicy | None, image: str) -> PullPolicy:
    """``policy`` when given, else ``default_pull_policy(image)``: only the default
    depends on the tag."""
    return default_pull_policy(image) if policy is None else policy


def should_pull(policy: PullPolicy | None, image: str, present: bool) -> bool:
    """Whether to pull ``image`` before creating a container from it.

    Args:
        policy: the container's pull policy; ``None`` when it gives none (the default
            then follows the tag: ``default_pull_policy``).
        image: the image reference, as in the spec.
        present: whether the engine has the image already.

    Returns:
        ``NEVER``: never (the planner holds the container while the image is absent:
        ``ErrImageNeverPull``). ``ALWAYS``: always. ``IF_NOT_PRESENT``: only when the
        image is absent - whatever its tag: an explicit ``IfNotPresent`` on a
        ``:latest`` image is honoured (the modern kubelet's ``shouldPullImage``).
    """
    effective = effective_pull_policy(policy, image)
    if effective is PullPolicy.NEVER:
        return False
    if effective is PullPolicy.ALWAYS:
        return True
    return not present


# -- Docker's reading of a reference -------------------------------------------------
#
# The grammar is distribution/reference's (``reference.go``, ``regexp.go``):
#
#   reference := name [ ":" tag ] [ "@" digest ]
#   name      := [ domain "/" ] path-component [ "/" path-component ]*
#   domain    := host [ ":" port ]        host: DNS labels joined by "." or "[IPv6]"
#   path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
#   tag       := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
#   digest    := algorithm ":" hex        (sha256: exactly 64 lowercase hex digits)
#
# and the name is at most 255 characters. Docker Hub is the default registry: a first
# component is a registry host only when it contains "." or ":" or is "localhost" (or,
# since distribution/reference v0.5, has an upper-case letter: Hub namespaces are
# lowercase; Docker 20.10 still refuses ``Team/app``, and an IPv6 host, as invalid);
# "index.docker.io" is an old spelling of "docker.io"; a one-component Hub repository
# lives under "library/". The engine lists references in the *familiar* form: the
# "docker.io/" and a lone "library/" dropped, and ":latest" added when there is neither
# tag nor digest. A tag before a digest is ignored: the digest names the content. Domains
# and tags are case-sensitive ("Docker.io/x" is not Docker Hub); repository paths must be
# lowercase. Checked against the engine by ``tests/engine/test_images.py``.

_DOCKER_HUB_SPELLINGS = frozenset({"docker.io", "index.docker.io"})
_OFFICIAL = "library/"
_MAX_NAME = 255

_DOMAIN_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_RE = re.compile(rf"(?:{_DOMAIN_LABEL}(?:\.{_DOMAIN_LABEL})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?")
_PATH_COMPONENT_RE = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_TAG_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_DIGEST_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")
_SHA256_RE = re.compile(r"sha256:[0-9a-f]{64}")
_IMAGE_ID_RE = re.compile(r"[a-f0-9]{64}")


# A fleet names a few images thousands of times, and a cold plan of 10,000 pods of 3
# containers read them 70,000 times (pull policy, normalized name, problem): about a
# tenth of its CPU time in regular expressions (issue 33). The result depends on the
# text alone and is immutable, so each distinct reference is read once; the bound keeps
# a long-running loop fed ever-new references from growing without end.
@functools.lru_cache(maxsize=4096)
def _parse(reference: str) -> tuple[str, str, str] | str:
    """``(familiar name, tag, digest)`` of ``reference``, or the engine's complaint."""
    if _IMAGE_ID_RE.fullmatch(reference):
        # The engine refuses a repository that reads as an image id.
        return "a 64-digit hexadecimal string is an image id, not a repository name"
    name, at, digest = reference.partition("@")
    if at and not (
        _DIGEST_RE.fullmatch(digest)
        and (not digest.startswith("sha256:") or _SHA256_RE.fullmatch(digest))
    ):
        return "invalid digest"
    # The tag follows the last ":" after the last "/" (a ":" before it is a port).
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = ""
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
        if not _TAG_RE.fullmatch(tag):
            return "invalid tag"
    first, slash_found, rest = name.partition("/")
    if slash_found and (
        "." in first or ":" in first or first == "localhost" or first.lower() != first
    ):
        domain, path = first, rest
        if not _DOMAIN_RE.fullmatch(domain):
            if not all(_PATH_COMPONENT_RE.fullmatch(c) for c in name.split("/")):
                return "invalid registry host"
            # Not a host, yet valid as a repository path ("my_registry.example/app"):
            # the engine's grammar reads it so, and lists it as written.
            domain, path = "", name
    else:
        domain, path = "", name
    if not path:
        return "empty repository name"
    if len(name) > _MAX_NAME:
        return f"repository name must not be more than {_MAX_NAME} characters"
    components = path.split("/")
    if any(not _PATH_COMPONENT_RE.fullmatch(c) for c in components):
        if all(_PATH_COMPONENT_RE.fullmatch(c.lower()) for c in components):
            return "repository name must be lowercase"
        return "invalid repository name"
    if domain in _DOCKER_HUB_SPELLINGS:
        domain = ""
    if domain:
        familiar = f"{domain}/{path}"
    elif path.startswith(_OFFICIAL) and path.count("/") == 1:
        familiar = path[len(_OFFICIAL) :]
    else:
        familiar = path
    return familiar, tag, digest


def image_reference_problem(reference: str) -> str | None:
    """Why the engine would refuse ``reference``, or ``None`` when it is valid.

    The message is the engine's reason without its ``invalid reference format:`` prefix:
    ``repository name must be lowercase`` for ``Busybox``, ``invalid tag``,
    ``invalid digest`` ... Where engines differ, the current grammar is followed: an
    upper-case first component (``Team/app``) or an IPv6 host (``[::1]:5000/app``) is a
    registry host, which Docker 20.10 refuses at pull or create.
    """
    parsed = _parse(reference)
    return parsed if isinstance(parsed, str) else None


def normalize_image(reference: str) -> str:
    """The reference in the form the engine lists it, the key images are compared by.

    ``busybox``, ``busybox:latest``, ``library/busybox``, ``docker.io/library/busybox``
    and ``index.docker.io/library/busybox:latest`` are all ``busybox:latest``;
    ``docker.io/team/app`` is ``team/app:latest``; ``localhost:5000/app`` is
    ``localhost:5000/app:latest``; ``busybox:1.36@sha256:<hex>`` is
    ``busybox@sha256:<hex>`` (the digest decides, as in the engine's ``RepoDigests``).

    A reference the engine would refuse (``image_reference_problem``) is returned
    unchanged: no engine lists it, so it matches nothing.
    """
    parsed = _parse(reference)
    if isinstance(parsed, str):
        return reference
    familiar, tag, digest = parsed
    if digest:
        return f"{familiar}@{digest}"
    return f"{familiar}:{tag or _LATEST}"
