"""The planner and image references: presence, pull policies and pull deduplication
compare references the way the engine lists them (``normalize_image``)."""

from __future__ import annotations

import pytest

from podsync import Container, ObservedImage, Pod, PullPolicy, Reason
from podsync.actions._actions import Create, Pull, Wait
from podsync.actions._options import PlanOptions
from podsync.planner._plan import plan
from tests.support.image_references import DIGEST

NOW = 1_000_000.0
OPTIONS = PlanOptions(network_image="podsync-demo/pause:1")
PAUSE = ObservedImage("sha256:pause", ("podsync-demo/pause:1",))
# What the engine lists after `docker pull busybox`.
BUSYBOX = ObservedImage("sha256:busybox", ("busybox:latest",), (f"busybox@{DIGEST}",))


def _pod(name: str, *images: str, policy: PullPolicy | None = PullPolicy.IF_NOT_PRESENT) -> Pod:
    containers = tuple(
        Container(f"c{i}", image, image_pull_policy=policy) for i, image in enumerate(images)
    )
    return Pod(name, containers, uid=f"uid-{name}")


@pytest.mark.parametrize(
    "image",
    [
        "library/busybox",
        "docker.io/library/busybox",
        "index.docker.io/library/busybox",
        "docker.io/busybox",
        f"busybox@{DIGEST}",
        f"library/busybox:1.36@{DIGEST}",
    ],
)
def test_present_image_in_any_spelling_is_not_pulled(image):
    """IfNotPresent finds the image however it is spelled (``library/busybox`` used to
    be pulled on every sync)."""
    p = plan([_pod("web", image)], images=[PAUSE, BUSYBOX], now=NOW, options=OPTIONS)

    assert [] == list(p.pulls)
    assert ["net", "c0"] == [a.container for a in p.actions if isinstance(a, Create)]


def test_never_policy_finds_library_spelling():
    """Never with ``library/busybox`` present creates the container (it used to wait
    for ever)."""
    pod = _pod("web", "library/busybox", policy=PullPolicy.NEVER)

    p = plan([pod], images=[PAUSE, BUSYBOX], now=NOW, options=OPTIONS)

    assert [] == [a for a in p.actions if isinstance(a, Wait)]
    assert ["net", "c0"] == [a.container for a in p.actions if isinstance(a, Create)]


def test_spellings_of_one_image_are_one_pull():
    """``busybox``, ``busybox:latest`` and ``docker.io/library/busybox`` are one pull,
    needed by every pod that uses any of them; another tag is another pull."""
    pods = [
        _pod("a", "busybox"),
        _pod("b", "docker.io/library/busybox", "busybox:latest"),
        _pod("c", "library/busybox:1.36"),
    ]

    p = plan(pods, images=[PAUSE], now=NOW, options=OPTIONS)

    # Ordered by the normalized reference: busybox:1.36, then busybox:latest.
    assert [
        Pull(
            "library/busybox:1.36",
            Reason.IMAGE_ABSENT,
            "pull library/busybox:1.36: not present",
            ("uid-c",),
        ),
        Pull("busybox", Reason.IMAGE_ABSENT, "pull busybox: not present", ("uid-a", "uid-b")),
    ] == list(p.pulls)


def test_pull_reasons_merge_across_spellings():
    """A present image is pulled once when one spelling asks for it (``:latest`` with
    no policy given: Always by default), and the pull lists only the pods whose policy
    wanted it (an explicit IfNotPresent does not)."""
    pods = [_pod("a", "busybox"), _pod("b", "docker.io/library/busybox:latest", policy=None)]

    p = plan(pods, images=[PAUSE, BUSYBOX], now=NOW, options=OPTIONS)

    assert [
        Pull(
            "docker.io/library/busybox:latest",
            Reason.IMAGE_LATEST,
            "pull docker.io/library/busybox:latest: no pull policy given, and the default "
            "for a :latest or untagged image is Always",
            ("uid-b",),
        )
    ] == list(p.pulls)


def test_pod_with_an_invalid_reference_is_rejected():
    """A reference the engine refuses on every pull and create rejects the pod, with the
    engine's reason, and nothing is done to it; the other pods go on."""
    bad, good = _pod("bad", "busybox", "Team/App:1"), _pod("good", "busybox")

    p = plan([bad, good], images=[PAUSE, BUSYBOX], now=NOW, options=OPTIONS)

    assert [
        (
            "default/bad",
            Reason.INVALID_POD,
            "container c1: image 'Team/App:1' is not a valid reference: "
            "repository name must be lowercase",
        )
    ] == [(r.pod, r.reason, r.message) for r in p.rejected]
    assert ["default/good"] == [pp.pod for pp in p.pods]
