"""The ownership rules read straight from labels (``podsync.spec._ownership``): what
``identify`` makes of a container's labels, and what ``volume_ownership`` makes of a
named volume's. The planner's tests cover them through plans; these pin each label's
reading, including labels that are missing."""

from __future__ import annotations

from podsync.model._pod import ObservedContainer, ObservedVolume
from podsync.spec._labels import (
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_UID,
    LABEL_VOLUME_CLAIM,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    LABEL_VOLUME_NAMESPACE,
)
from podsync.spec._ownership import (
    Instance,
    VolumeOwnership,
    identify,
    newest_first,
    volume_ownership,
)


def test_a_labelled_container_is_read_from_its_labels() -> None:
    found = identify(
        ObservedContainer(
            "c1",
            "anything",
            labels={
                LABEL_POD_UID: "uid-1",
                LABEL_POD_NAME: "web",
                LABEL_POD_NAMESPACE: "shop",
                LABEL_POD_SOURCE: "file",
                LABEL_CONTAINER: "app",
            },
        )
    )

    assert found is not None
    assert ("uid-1", "web.shop.file", "shop/web", "file", "app") == (
        found.pod_uid,
        found.full_name,
        found.pod_key,
        found.pod_source,
        found.container,
    )


def test_missing_pod_labels_read_as_empty_and_the_container_comes_from_the_name() -> None:
    """Only the ownership label: the pod's name, namespace and source are empty (never
    "None"), and the container's name in the pod is read from the container's name."""
    found = identify(
        ObservedContainer("c2", "k8s_side_web_shop_uid-2_0", labels={LABEL_POD_UID: "uid-2"})
    )

    assert found is not None
    assert ("uid-2", "..", "/", "", "side") == (
        found.pod_uid,
        found.full_name,
        found.pod_key,
        found.pod_source,
        found.container,
    )


def test_only_a_key_that_starts_with_the_kubernetes_prefix_makes_a_container_foreign() -> None:
    ours = {LABEL_POD_UID: "uid-3", LABEL_CONTAINER: "app"}
    # The prefix inside a key, or across two keys, is not a Kubernetes label.
    inside = ObservedContainer("c3", "a", labels={**ours, "team.io.kubernetes.x": "1"})
    across = ObservedContainer("c4", "b", labels={**ours, "io.kube": "1", "rnetes.x": "2"})
    kubernetes = ObservedContainer("c5", "c", labels={**ours, "io.kubernetes.pod.uid": "u"})

    assert identify(inside) is not None
    assert identify(across) is not None
    assert identify(kubernetes) is None


def test_a_volume_is_read_from_its_labels() -> None:
    empty_dir = ObservedVolume(
        "podsync-emptydir_uid-1_cache",
        {
            LABEL_VOLUME_KIND: "empty-dir",
            LABEL_VOLUME_NAMESPACE: "shop",
            LABEL_POD_UID: "uid-1",
            LABEL_VOLUME_NAME: "cache",
        },
    )
    claim = ObservedVolume(
        "podsync_shop_data",
        {LABEL_VOLUME_KIND: "claim", LABEL_VOLUME_NAMESPACE: "shop", LABEL_VOLUME_CLAIM: "data"},
    )
    bare = ObservedVolume("podsync-state_uid-4", {LABEL_VOLUME_KIND: "pod-state"})

    assert VolumeOwnership("empty-dir", "shop", "", "uid-1", "cache") == volume_ownership(empty_dir)
    assert VolumeOwnership("claim", "shop", "data", "", "") == volume_ownership(claim)
    assert VolumeOwnership("pod-state", "", "", "", "") == volume_ownership(bare)
    assert (True, False) == (
        VolumeOwnership("claim", "shop", "data").retained,
        VolumeOwnership("empty-dir", "shop", "", "uid-1", "cache").retained,
    )


def test_a_volume_without_podsyncs_kind_or_with_a_kubernetes_label_is_not_podsyncs() -> None:
    assert volume_ownership(ObservedVolume("data")) is None
    assert volume_ownership(ObservedVolume("data", {LABEL_VOLUME_KIND: ""})) is None
    assert (
        volume_ownership(
            ObservedVolume("x", {LABEL_VOLUME_KIND: "claim", "io.kubernetes.pvc": "x"})
        )
        is None
    )


def _instance(cid: str, created: float, attempt: str | None) -> Instance:
    labels = {LABEL_POD_UID: "uid-5", LABEL_CONTAINER: "app"}
    if attempt is not None:
        labels[LABEL_ATTEMPT] = attempt
    found = identify(ObservedContainer(cid, f"n-{cid}", labels=labels, created=created))
    assert found is not None
    return found


def test_instances_created_in_the_same_second_are_ordered_by_attempt_then_id() -> None:
    """Docker's creation times have a resolution the seed's engine rounded to seconds:
    at equal times the higher attempt is the newer, an instance without an attempt
    counts as attempt 0, and the id breaks what is left (a total order)."""
    second = _instance("aaa", 100.0, "2")
    first = _instance("bbb", 100.0, "1")
    unnumbered = _instance("yyy", 100.0, None)
    older = _instance("zzzz", 99.0, "9")

    order = newest_first([older, unnumbered, first, second])

    assert ["aaa", "bbb", "yyy", "zzzz"] == [i.observed.id for i in order]
