"""Image references and the pull decision: the seed's TestParseImageName and
TestSyncPodsWithPullPolicy (reference §1.7, §4.1 #17)."""

from __future__ import annotations

import pytest
from hypothesis import given

from podsync import PullPolicy
from podsync.spec._images import (
    default_pull_policy,
    effective_pull_policy,
    has_latest_tag,
    image_reference_problem,
    is_pinned_digest,
    normalize_image,
    pull_reference,
    should_pull,
    split_image,
)
from tests.support.image_references import (
    DIGEST_SPELLINGS,
    INVALID,
    LISTED,
    NEWER_GRAMMAR,
)
from tests.support.strategies import images

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        # The seed's table: untagged.
        ("ubuntu", ("ubuntu", "")),
        # A numeric tag.
        ("ubuntu:2342", ("ubuntu", "2342")),
        # An explicit latest.
        ("ubuntu:latest", ("ubuntu", "latest")),
        # A namespaced repository.
        ("foo/bar:445566", ("foo/bar", "445566")),
        # A registry port is not a tag.
        ("registry.example.com:5000/foobar", ("registry.example.com:5000/foobar", "")),
        # A registry port and a tag.
        ("registry.example.com:5000/foobar:5342", ("registry.example.com:5000/foobar", "5342")),
        # A registry port and latest.
        ("registry.example.com:5000/foobar:latest", ("registry.example.com:5000/foobar", "latest")),
        # Beyond the seed: a registry port and a nested repository.
        ("host:5000/a/b:tag", ("host:5000/a/b", "tag")),
        # A nested repository without a tag.
        ("host:5000/a/b", ("host:5000/a/b", "")),
        # The seed's caveat: a bare host:port reads as name and tag.
        ("host:5000", ("host", "5000")),
        # A digest: the repository, no tag.
        (f"busybox@{DIGEST}", ("busybox", "")),
        # A digest after a tag: the tag is dropped, the digest decides.
        (f"busybox:1.36@{DIGEST}", ("busybox", "")),
        # A digest with a registry port.
        (f"host:5000/a/b@{DIGEST}", ("host:5000/a/b", "")),
        # The empty reference.
        ("", ("", "")),
    ],
)
def test_split_image(image, expected):
    """parseImageName's table, plus registries with paths and digests."""

    assert expected == split_image(image)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        # An explicit :latest.
        ("ubuntu:latest", True),
        # With a registry port.
        ("registry.example.com:5000/foobar:latest", True),
        # Untagged is not "latest" for this rule.
        ("ubuntu", False),
        # Another tag.
        ("ubuntu:22.04", False),
        # A registry port without a tag has no tag at all.
        ("registry:5000/x", False),
        # A digest-pinned image never is.
        (f"ubuntu:latest@{DIGEST}", False),
        # Case matters.
        ("ubuntu:LATEST", False),
        # The seed's test image.
        ("want:latest", True),
    ],
)
def test_has_latest_tag(image, expected):
    """Only an explicit :latest tag counts (seed RequireLatestImage)."""

    assert expected == has_latest_tag(image)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        # A digest reference.
        (f"busybox@{DIGEST}", True),
        # A tag.
        ("busybox:1.36", False),
        # Nothing.
        ("busybox", False),
    ],
)
def test_is_pinned_digest(image, expected):
    """A reference with @ is pinned to a digest."""

    assert expected == is_pinned_digest(image)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        # Untagged pulls latest (seed dockerPuller.Pull).
        ("ubuntu", ("ubuntu", "latest")),
        # A tag is kept.
        ("ubuntu:22.04", ("ubuntu", "22.04")),
        # A registry port is part of the repository.
        ("registry.example.com:5000/foobar", ("registry.example.com:5000/foobar", "latest")),
        # A digest is passed as the tag (the Engine API's "tag or digest").
        (f"busybox@{DIGEST}", ("busybox", DIGEST)),
        # A digest beats a tag.
        (f"busybox:1.36@{DIGEST}", ("busybox", DIGEST)),
        # The seed pulled "" for an empty image: it became ("", "latest").
        ("", ("", "latest")),
    ],
)
def test_pull_reference(image, expected):
    """What the engine's pull gets: repository and tag (or digest)."""

    assert expected == pull_reference(image)


PRESENT = {"existing_one", "want:latest", "want:1"}


@pytest.mark.parametrize(
    ("policy", "image", "expected"),
    [
        # TestSyncPodsWithPullPolicy: Always pulls.
        (PullPolicy.ALWAYS, "pull_always_image", True),
        # Never does not.
        (PullPolicy.NEVER, "pull_never_image", False),
        # IfNotPresent pulls a missing image.
        (PullPolicy.IF_NOT_PRESENT, "pull_if_not_present_image", True),
        # IfNotPresent keeps a present one.
        (PullPolicy.IF_NOT_PRESENT, "existing_one", False),
        # An explicit IfNotPresent keeps a present :latest (the seed pulled it, kubernetes
        # #2388; the modern kubelet honours a given policy).
        (PullPolicy.IF_NOT_PRESENT, "want:latest", False),
        # No policy given: the default follows the tag - Always for :latest or none ...
        (None, "want:latest", True),
        (None, "existing_one", True),
        # ... IfNotPresent for another tag.
        (None, "existing_one:1", True),
        (None, "want:1", False),
        # Always pulls even a present image.
        (PullPolicy.ALWAYS, "existing_one", True),
        # Never does not pull even a :latest.
        (PullPolicy.NEVER, "want:latest", False),
    ],
)
def test_should_pull(policy, image, expected):
    """The pull rule over TestSyncPodsWithPullPolicy's images (the modern kubelet's
    shouldPullImage)."""

    assert expected == should_pull(policy, image, image in PRESENT)


@given(images())
def test_split_image_rebuilds_tagged_references(image):
    """Without a digest, repository and tag put back together are the reference."""
    repository, tag = split_image(image)
    rebuilt = f"{repository}:{tag}" if tag else repository

    assert is_pinned_digest(image) or image == rebuilt


# --- Docker's reading of references (tests/support/image_references.py) ----------------------


@pytest.mark.parametrize(("image", "listed"), LISTED + DIGEST_SPELLINGS + NEWER_GRAMMAR)
def test_normalize_image_gives_what_docker_lists(image, listed):
    """Every spelling normalizes to the reference the engine lists, so presence checks
    and pull deduplication compare what the engine compares (``library/busybox`` used
    to become ``library/busybox:latest``, which Docker never lists)."""

    assert (listed, None) == (normalize_image(image), image_reference_problem(image))


@pytest.mark.parametrize(("image", "problem"), INVALID)
def test_invalid_references_are_named_and_left_unchanged(image, problem):
    """A reference the engine refuses gets the engine's reason, and normalizes to
    itself (it matches nothing the engine lists)."""

    assert (problem, image) == (image_reference_problem(image), normalize_image(image))


@pytest.mark.parametrize("image", ["localhost/", "localhost:5000/", "registry.example.com/"])
def test_a_registry_host_without_a_repository_is_an_empty_name(image):
    """``localhost`` is a registry host like one with a dot or a port: ``localhost/``
    names no repository on it, and the user reads that, not that ``localhost/`` is an
    invalid repository path (read as a path, its empty last component would be). Kills
    the ``_parse`` mutants that stop reading ``localhost`` as a host (once recorded as
    equivalent)."""

    assert image_reference_problem(image) == "empty repository name"


@given(images())
def test_normalize_image_is_idempotent(image):
    """The listed form reads back as itself."""
    once = normalize_image(image)

    assert once == normalize_image(once)


def test_repository_names_may_have_255_characters():
    """The engine's limit: a name of 255 characters is valid, 256 is too long (the tag
    does not count)."""
    longest = "team/" + "a" * 250

    assert (None, f"{longest}:1") == (
        image_reference_problem(f"{longest}:1"),
        normalize_image(f"{longest}:1"),
    )
    assert "repository name must not be more than 255 characters" == image_reference_problem(
        longest + "a"
    )


def test_a_colon_inside_the_repository_path_is_not_a_tag():
    """Only a ":" after the last "/" starts a tag: one in the middle of the path makes
    the repository name invalid."""

    assert "invalid repository name" == image_reference_problem("registry.example.com/team:1/app")


@pytest.mark.parametrize("reference", ["localhost/", "localhost:5000/", "example.com/"])
def test_a_registry_host_without_a_repository_says_so(reference):
    """``localhost`` is a registry host as ``example.com`` is: ``localhost/`` names a
    host and no repository (read as a path, it would be an "invalid repository name")."""

    assert "empty repository name" == image_reference_problem(reference)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        # No tag and no digest: ParseImageName supplies "latest", so Always.
        ("nginx", PullPolicy.ALWAYS),
        ("docker.io/library/nginx", PullPolicy.ALWAYS),
        ("localhost:5000/app", PullPolicy.ALWAYS),
        # An explicit :latest.
        ("nginx:latest", PullPolicy.ALWAYS),
        ("registry.example.com:5000/team/app:latest", PullPolicy.ALWAYS),
        # Another tag, or a digest alone: IfNotPresent.
        ("nginx:1.25", PullPolicy.IF_NOT_PRESENT),
        (f"nginx@{DIGEST}", PullPolicy.IF_NOT_PRESENT),
        (f"nginx:1.25@{DIGEST}", PullPolicy.IF_NOT_PRESENT),
        # The tag beside a digest still decides (SetDefaults_Container reads the tag).
        (f"nginx:latest@{DIGEST}", PullPolicy.ALWAYS),
        # Tags are case-sensitive.
        ("nginx:Latest", PullPolicy.IF_NOT_PRESENT),
        # A reference the engine refuses is read by the seed's rules, tag as written.
        ("Team/App:latest", PullPolicy.ALWAYS),
        ("Team/App:1", PullPolicy.IF_NOT_PRESENT),
        ("Team/App", PullPolicy.ALWAYS),
    ],
)
def test_default_pull_policy(image, expected):
    """SetDefaults_Container's tag-or-digest rule."""

    assert expected == default_pull_policy(image)


@pytest.mark.parametrize(
    ("policy", "image", "expected"),
    [
        (None, "nginx", PullPolicy.ALWAYS),
        (None, "nginx:1.25", PullPolicy.IF_NOT_PRESENT),
        # A given policy is kept, whatever the tag.
        (PullPolicy.IF_NOT_PRESENT, "nginx:latest", PullPolicy.IF_NOT_PRESENT),
        (PullPolicy.NEVER, "nginx", PullPolicy.NEVER),
        (PullPolicy.ALWAYS, "nginx:1.25", PullPolicy.ALWAYS),
    ],
)
def test_effective_pull_policy(policy, image, expected):
    """Only the default depends on the tag."""

    assert expected == effective_pull_policy(policy, image)
