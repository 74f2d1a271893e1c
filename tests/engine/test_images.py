"""Image references on a real Docker engine: what the engine lists for each spelling,
and a pod whose image is spelled another way than the engine lists it.

Nothing is pulled (no registry is reachable): every spelling is made with ``docker tag``
of the local test image. The engine is shared, so each spelling's repository gets a
suffix unique to this test run (``busybox`` becomes ``busybox-1a2b3c4d``), and every tag
made here is removed again (the image keeps its own tags).
"""

from __future__ import annotations

import contextlib
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path

import attrs
import docker
import docker.errors
import pytest

import podsync
from podsync import Container, Pod, PullPolicy, Reason
from podsync.actions._actions import Create
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from podsync.spec._images import normalize_image
from podsync.testing import FakeRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, tag_image
from tests.support.image_references import INVALID, LISTED

SUFFIX = f"-{secrets.token_hex(4)}"


def _unique(reference: str) -> str:
    """``reference`` with this run's suffix at the end of its repository name."""
    slash, colon = reference.rfind("/"), reference.rfind(":")
    if colon > slash:
        return f"{reference[:colon]}{SUFFIX}{reference[colon:]}"
    return reference + SUFFIX


@pytest.fixture
def tags(engine: docker.DockerClient) -> Iterator[list[str]]:
    """References to untag at the end of the test."""
    made: list[str] = []
    yield made
    for reference in made:
        # Gone already, or never made (a refused spelling): nothing to untag.
        with contextlib.suppress(docker.errors.APIError):
            engine.api.remove_image(reference)


def _tag(engine: docker.DockerClient, reference: str) -> None:
    # The Engine API parses "repo" as a whole reference, tag included (Docker's; see
    # tag_image for podman's, which takes only valid references).
    engine.api.tag(TEST_IMAGE, reference)


#: What podman (4.3) says in its own words where Docker's refusal holds "invalid"
#: (Docker: "invalid reference format: repository name must be lowercase"; podman:
#: "normalizing name for compat API: repository name must be lowercase").
PODMAN_OWN_WORDS = ("repository name must be lowercase",)

#: References podsync refuses that podman (4.3) tags all the same: a 64-digit
#: hexadecimal repository name, which Docker refuses as an image id. podsync refuses
#: it before any engine sees it (normalize_image), so a pod never reaches podman with it.
PODMAN_TAGS = ("f" * 64,)


def test_engine_lists_every_spelling_as_normalize_image_says(
    engine: docker.DockerClient, tags: list[str]
) -> None:
    """Each spelling, tagged on the engine, is listed exactly as ``normalize_image``
    predicts, and as FakeRuntime lists it (``library/x`` is ``x:latest``,
    ``docker.io/`` and ``index.docker.io/`` go, host names keep their case...)."""
    spellings = [(_unique(spelling), _unique(listed)) for spelling, listed in LISTED]
    for spelling, listed in spellings:
        tags.append(listed)
        tag_image(engine, TEST_IMAGE, spelling)

    with DockerRuntime() as runtime:
        on_engine = {t for image in runtime.list_images() for t in image.tags}
    rows = [
        (
            spelling,
            listed in on_engine,
            normalize_image(spelling),
            FakeRuntime(images=[spelling]).images[0].tags,
        )
        for spelling, listed in spellings
    ]

    assert [(s, True, listed, (listed,)) for s, listed in spellings] == rows


@pytest.mark.parametrize(
    ("spelling", "why"),
    [(s, why) for s, why in INVALID if s and "@" not in s],
)
def test_engine_refuses_what_podsync_refuses(
    engine: docker.DockerClient, engine_name: str, tags: list[str], spelling: str, why: str
) -> None:
    """Every reference podsync calls invalid, the engine refuses too (on podman, but
    for ``PODMAN_TAGS``, which it takes)."""
    tags.append(spelling)  # untagged should the engine ever take it

    if engine_name == "podman" and spelling in PODMAN_TAGS:
        tags.append(f"docker.io/library/{spelling}:latest")  # as podman lists it
        _tag(engine, spelling)
        assert spelling in {t.rpartition("/")[2].partition(":")[0] for t in _all_tags(engine)}
        return
    if engine_name == "podman" and why in PODMAN_OWN_WORDS:
        # The tag apart (tag_image), so that podman reads the name, not the tag in it.
        with pytest.raises(docker.errors.APIError, match=why):
            tag_image(engine, TEST_IMAGE, spelling)
        return
    with pytest.raises(docker.errors.APIError, match="invalid"):
        _tag(engine, spelling)


def _all_tags(engine: docker.DockerClient) -> set[str]:
    return {t for image in engine.api.images() for t in image.get("RepoTags") or ()}


def test_pod_with_the_library_spelling_of_a_present_image_starts(
    engine: docker.DockerClient, cleanup: Cleanup, tags: list[str], tmp_path: Path
) -> None:
    """A pod whose images are spelled ``library/<name>`` (pull policy Never) and
    ``library/<name>:<tag>`` (IfNotPresent) while the engine lists
    ``<name>:latest`` and ``<name>:<tag>`` runs at once and pulls nothing (Never used to
    wait for ever, and IfNotPresent to pull on every sync)."""
    name = f"podsync-img{SUFFIX}"
    for reference in (f"{name}:latest", f"{name}:v1"):
        tags.append(reference)
        tag_image(engine, TEST_IMAGE, reference)
    serve = ("/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done")
    pod = Pod(
        f"images-{uuid.uuid4().hex[:6]}",
        (
            Container(
                "never",
                f"library/{name}",
                command=serve,
                image_pull_policy=PullPolicy.NEVER,
            ),
            Container("present", f"library/{name}:v1", command=serve),
        ),
        uid=str(uuid.uuid4()),
    )
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
        stop_timeout=1,
    )

    with DockerRuntime() as runtime:
        result = podsync.sync([pod], runtime, options=options)

    assert result.ok, result.apply_result.summary()
    assert () == result.plan.pulls
    assert [
        ("net", Reason.NETWORK_MISSING),
        ("never", Reason.MISSING),
        ("present", Reason.MISSING),
    ] == [(a.container, a.reason) for a in result.plan.actions if isinstance(a, Create)]
    listed = engine.api.containers(filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"})
    assert 3 == len(listed)


def test_explicit_if_not_present_runs_a_local_latest_image_without_a_pull(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """A locally built ``:latest`` image (the test image, which no registry has) with an
    explicit ``imagePullPolicy: IfNotPresent`` runs without any pull: the policy is
    honoured whatever the tag. Without a policy, its default is Always, and the plan
    pulls it first (a registry the engine cannot reach would then hold the pod)."""
    uid = str(uuid.uuid4())
    text = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: local-{uid[:6]}
  uid: {uid}
spec:
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: IfNotPresent
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]
"""
    (pod,) = podsync.parse_pods(text)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
        stop_timeout=1,
    )
    defaulted = attrs.evolve(
        pod, containers=(attrs.evolve(pod.containers[0], image_pull_policy=None),)
    )

    with DockerRuntime() as runtime:
        images = runtime.list_images()
        would = podsync.plan([defaulted], [], now=0.0, images=images, options=options)
        result = podsync.sync([pod], runtime, options=options)

    assert [(TEST_IMAGE, Reason.IMAGE_LATEST)] == [(p.image, p.reason) for p in would.pulls]
    assert result.ok, result.apply_result.summary()
    assert () == result.plan.pulls
    assert ["net", "app"] == [a.container for a in result.plan.actions if isinstance(a, Create)]
    listed = engine.api.containers(filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"})
    assert 2 == len(listed)
