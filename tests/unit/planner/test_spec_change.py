"""Why a container differs from its spec (``podsync.planner._spec_change``), one row per
case: the text the plan says when it replaces a container, and the comparison across
spec hash versions (issue 27: a label of version 1 or 2 recorded the pod's labels and
annotations, which version 3 leaves out)."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from podsync import Container, EnvVar, ObservedContainer, Pod
from podsync.model._pod_fields import PodFieldRef, PodFieldText
from podsync.planner._spec_change import (
    _spec_difference,
    as_older,
    older_network_spec,
    spec_change,
)
from podsync.spec._hashing import (
    SPEC_HASH_VERSION,
    SpecHash,
    canonical_spec,
    network_spec,
    network_spec_text,
    older_init_record,
    spec_hash,
)
from podsync.spec._labels import LABEL_SPEC, LABEL_SPEC_HASH
from podsync.spec._ownership import Instance

A, B = "a" * 64, "b" * 64


def sealed(secret: str, key: str, digest: str) -> dict[str, Any]:
    return {"sealed": [{"secret": secret, "key": key, "digest": digest}]}


def env(*entries: tuple[str, Any]) -> dict[str, Any]:
    return {"env": [{"name": n, "value": v} for n, v in entries]}


DIFFERENCES = [
    ("not objects", "x", {}, (), "spec differs"),
    ("new not an object", {}, [], (), "spec differs"),
    ("nothing differs", {"image": "a"}, {"image": "a"}, (), "spec differs"),
    (
        "a scalar",
        {"image": "busybox:1"},
        {"image": "busybox:2"},
        (),
        "image busybox:1 -> busybox:2",
    ),
    ("from empty", {"working_dir": ""}, {"working_dir": "/app"}, (), "working_dir (none) -> /app"),
    ("from null", {"memory": None}, {"memory": 1}, (), "memory (none) -> 1"),
    ("scalar to list", {"command": "sh"}, {"command": ["sh"]}, (), "command changed"),
    ("list to scalar", {"command": ["sh"]}, {"command": "sh"}, (), "command changed"),
    ("an object", {"pod": {"name": "a"}}, {"pod": {"name": "b"}}, (), "pod changed"),
    (
        "an option set",
        {},
        {"network_mode": "none"},
        (),
        "--network-mode (engine default) -> none",
    ),
    (
        "an option not recorded",
        {},
        {"network_mode": "none"},
        ("network_mode",),
        "--network-mode (not recorded) -> none",
    ),
    (
        "an option recorded, then at its default",
        {"root_dir": "/srv/podsync"},
        {},
        ("root_dir",),
        "--root-dir /srv/podsync -> /var/lib/podsync",
    ),
    (
        "an option without a default",
        {"cluster_dns": "10.0.0.10"},
        {},
        (),
        "--cluster-dns 10.0.0.10 -> (none)",
    ),
    (
        "host resolv.conf",
        {"host_resolv_conf": {"nameservers": ["192.0.2.1", "192.0.2.2"], "searches": ["a", "b"]}},
        {"host_resolv_conf": {"nameservers": [], "searches": []}},
        (),
        "host resolv.conf nameserver 192.0.2.1 192.0.2.2, search a b -> (none)",
    ),
    (
        "three",
        {"a": 1, "b": 1, "c": 1},
        {"a": 2, "b": 2, "c": 2},
        (),
        "a 1 -> 2, b 1 -> 2, c 1 -> 2",
    ),
    (
        "four",
        {"a": 1, "b": 1, "c": 1, "d": 1},
        {"a": 2, "b": 2, "c": 2, "d": 2},
        (),
        "a 1 -> 2, b 1 -> 2, c 1 -> 2, 1 more",
    ),
    (
        "six",
        dict.fromkeys("abcdef", 1),
        dict.fromkeys("abcdef", 2),
        (),
        "a 1 -> 2, b 1 -> 2, c 1 -> 2, 3 more",
    ),
    # env: which objects the changed values came from.
    (
        "env from ConfigMaps",
        env(("A", "1")),
        {
            "env": [
                {"name": "A", "value": "2", "source": "ConfigMap default/cfg"},
                {"name": "B", "value": "x", "source": "ConfigMap default/other"},
            ]
        },
        (),
        "env changed (from ConfigMap default/cfg, ConfigMap default/other)",
    ),
    (
        "env entry added without source",
        {"env": [{"name": "A", "value": "1", "source": "ConfigMap default/cfg"}]},
        {"env": [{"name": "A", "value": "1", "source": "ConfigMap default/cfg"}, {"name": "B"}]},
        (),
        "env changed",
    ),
    ("env not recorded", {"env": None}, {"env": [{"name": "A", "source": "x"}]}, (), "env changed"),
    ("env no longer a list", {"env": []}, {"env": {"A": "1"}}, (), "env changed"),
    # Secrets: another digest of the same key is another value of it.
    (
        "a Secret's value",
        env(("P", sealed("default/db", "password", A))),
        env(("P", sealed("default/db", "password", B))),
        (),
        "Secret default/db changed",
    ),
    (
        "a Secret's value and another field",
        {**env(("P", sealed("default/db", "password", A))), "image": "a"},
        {**env(("P", sealed("default/db", "password", B))), "image": "b"},
        (),
        "Secret default/db changed, image a -> b",
    ),
    (
        "a Secret's value and another env value",
        env(("P", sealed("default/db", "password", A)), ("X", "1")),
        env(("P", sealed("default/db", "password", B)), ("X", "2")),
        (),
        "Secret default/db changed, env changed",
    ),
    (
        "one key of a Secret changed, not another",
        env(("P", sealed("default/db", "password", A)), ("U", sealed("default/db", "user", A))),
        env(("P", sealed("default/db", "password", B)), ("U", sealed("default/db", "user", A))),
        (),
        "Secret default/db changed",
    ),
    (
        "a Secret key now used",
        env(("U", sealed("default/db", "user", A))),
        env(("U", sealed("default/db", "user", A)), ("P", sealed("default/db", "password", B))),
        (),
        "env changed",
    ),
    # The network container's record of the pod's init containers.
    (
        "init containers",
        {"init_containers": [{"name": "a", "spec_hash": "1"}, {"name": "b", "spec_hash": "2"}]},
        {"init_containers": [{"name": "a", "spec_hash": "9"}, {"name": "c", "spec_hash": "3"}]},
        (),
        "init container a changed, init container c added, init container b removed",
    ),
    (
        "init containers reordered",
        {"init_containers": [{"name": "a", "spec_hash": "1"}, {"name": "b", "spec_hash": "2"}]},
        {"init_containers": [{"name": "b", "spec_hash": "2"}, {"name": "a", "spec_hash": "1"}]},
        (),
        "init containers reordered",
    ),
    (
        "init record otherwise different",
        {"init_containers": [{"name": "a", "spec_hash": "1", "x": 1}]},
        {"init_containers": [{"name": "a", "spec_hash": "1"}]},
        (),
        "init containers changed",
    ),
    (
        "init record not a list",
        {"init_containers": None},
        {"init_containers": [{"name": "a", "spec_hash": "1"}]},
        (),
        "init container a added",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "unrecorded", "expected"),
    [row[1:] for row in DIFFERENCES],
    ids=[row[0] for row in DIFFERENCES],
)
def test_spec_difference(old: Any, new: Any, unrecorded: tuple[str, ...], expected: str) -> None:
    assert expected == _spec_difference(old, new, unrecorded)


# --- spec_change: hash labels of each version --------------------------------------------

TIER = PodFieldText("frontend", (PodFieldRef("metadata.labels['tier']"),))
GREETING = PodFieldText(
    "serving the frontend tier",
    ("serving the ", PodFieldRef("metadata.labels['tier']"), " tier"),
)
APP = Container("app", "busybox", env=(EnvVar("TIER", TIER), EnvVar("GREETING", GREETING)))
POD = Pod("web", (APP,), labels={"tier": "frontend", "app": "web"}, annotations={"team": "a"})


def instance(labels: dict[str, str], image: str = "busybox", name_hash: str = "0") -> Instance:
    name = f"k8s_app.{name_hash}_web.default.api_uid_0"
    observed = ObservedContainer("id1", name, image, labels, 0.0)
    return Instance(observed, "uid", "web.default.api", "default/web", "api", "app")


def labelled(version: int, spec: dict[str, Any] | None, digest: str = A) -> Instance:
    labels = {LABEL_SPEC_HASH: f"{version}:{digest}"}
    if spec is not None:
        labels[LABEL_SPEC] = json.dumps(spec)
    return instance(labels)


def as_version_2(spec: dict[str, Any], pod: Pod = POD, **values: str) -> dict[str, Any]:
    """``spec`` as a version 2 label recorded it: the pod's labels and annotations in
    its ``pod`` object, env values by value (``values``)."""
    recorded = json.loads(json.dumps(spec))
    recorded["pod"].update(labels=dict(pod.labels), annotations=dict(pod.annotations))
    for entry in recorded["env"]:
        if entry["name"] in values:
            entry["value"] = values[entry["name"]]
    return recorded


CURRENT = spec_hash(APP, POD)
SPEC = canonical_spec(APP, POD)
V2 = as_version_2(SPEC, TIER="frontend", GREETING="serving the frontend tier")

CHANGES = [
    ("same hash", instance({LABEL_SPEC_HASH: str(CURRENT)}), None),
    ("same version, no spec label", labelled(SPEC_HASH_VERSION, None), "spec hash differs"),
    (
        "same version, unreadable spec label",
        instance({LABEL_SPEC_HASH: f"{SPEC_HASH_VERSION}:{A}", LABEL_SPEC: "{"}),
        "spec hash differs",
    ),
    (
        "same version, another spec",
        labelled(SPEC_HASH_VERSION, {**SPEC, "image": "busybox:1"}),
        "image busybox:1 -> busybox",
    ),
    ("older version, same digest", labelled(2, None, CURRENT.digest), None),
    (
        "older version, same digest, no spec label, another image",
        instance({LABEL_SPEC_HASH: f"2:{CURRENT.digest}"}, image="busybox:1"),
        None,
    ),
    ("older version, no spec label, same image", labelled(2, None), None),
    (
        "older version, no spec label, another image",
        instance({LABEL_SPEC_HASH: f"2:{A}"}, image="busybox:1"),
        "image busybox:1 -> busybox",
    ),
    (
        "older version, unreadable spec label",
        instance({LABEL_SPEC_HASH: f"2:{A}", LABEL_SPEC: "{"}),
        "spec label unreadable",
    ),
    # A label is engine data: JSON that is no object is a difference, not a crash.
    (
        "older version, spec label not an object",
        instance({LABEL_SPEC_HASH: f"2:{A}", LABEL_SPEC: "[]"}),
        "spec differs",
    ),
    ("version 2 with the labels of then", labelled(2, V2), None),
    (
        "version 2 with other labels then",
        labelled(
            2,
            as_version_2(
                SPEC,
                attrs.evolve(POD, labels={"tier": "x"}),
                TIER="x",
                GREETING="serving the x tier",
            ),
        ),
        None,
    ),
    (
        "version 2 whose env read another label",
        labelled(2, as_version_2(SPEC, TIER="web", GREETING="serving the frontend tier")),
        "env changed",
    ),
    (
        "version 2 and another image",
        labelled(2, {**V2, "image": "busybox:1"}),
        "image busybox:1 -> busybox",
    ),
    (
        "version 1: no labels recorded",
        labelled(
            1,
            {
                **V2,
                "pod": {k: v for k, v in V2["pod"].items() if k not in ("labels", "annotations")},
            },
        ),
        "env changed",
    ),
    ("a newer version", labelled(SPEC_HASH_VERSION + 1, V2), "env changed, pod changed"),
    (
        "a newer version of the same digest",
        labelled(SPEC_HASH_VERSION + 1, V2, CURRENT.digest),
        "env changed, pod changed",
    ),
    # A 2014 kubelet's container: its name hash cannot be reproduced, the image decides;
    # a name hash of 0 means "do not compare" (seed).
    ("2014, same image", instance({}, name_hash="1a2b"), None),
    ("2014, another image", instance({}, "busybox:1", "1a2b"), "image busybox:1 -> busybox"),
    ("2014, hash 0", instance({}, "busybox:1"), None),
    ("unparsable hash label", instance({LABEL_SPEC_HASH: "x", LABEL_SPEC: json.dumps(SPEC)}), None),
    (
        "unparsable hash label, no spec",
        instance({LABEL_SPEC_HASH: "x"}, image="busybox:1"),
        "image busybox:1 -> busybox",
    ),
]


@pytest.mark.parametrize(
    ("observed", "expected"), [row[1:] for row in CHANGES], ids=[row[0] for row in CHANGES]
)
def test_spec_change(observed: Instance, expected: str | None) -> None:
    assert expected == spec_change(observed, CURRENT, lambda: canonical_spec(APP, POD), "busybox")


def test_the_hash_records_a_label_by_its_reference() -> None:
    """Another value of the label is the same spec; another reference is another."""
    relabelled = attrs.evolve(POD, labels={"tier": "backend"})
    other = PodFieldText("web", (PodFieldRef("metadata.labels['app']"),))
    moved = attrs.evolve(APP, env=(EnvVar("TIER", other), APP.env[1]))

    assert spec_hash(APP, POD) == spec_hash(APP, relabelled)
    assert spec_hash(APP, POD) != spec_hash(moved, POD)
    assert {"from_pod": [{"field": "metadata.labels['tier']"}]} == SPEC["env"][0]["value"]
    assert {"from_pod": ["serving the ", {"field": "metadata.labels['tier']"}, " tier"]} == (
        SPEC["env"][1]["value"]
    )


def test_as_older_leaves_out_what_version_3_does_not_write() -> None:
    old, new = as_older(V2, SPEC, 2)

    assert (old, new) == ({**V2, "pod": SPEC["pod"]}, V2 | {"pod": SPEC["pod"]})
    # Version 3's own label has nothing to leave out.
    assert (SPEC, SPEC) == as_older(SPEC, SPEC, 3)
    # A label without a pod object is compared as it is.
    assert ({"image": "a"}, SPEC) == as_older({"image": "a"}, SPEC, 2)


@pytest.mark.parametrize(
    ("path", "compared"),
    [
        ("metadata.labels['tier']", "frontend"),
        ("metadata.annotations['team']", "a"),
        ("metadata.labels['absent']", ""),
        ("metadata.labels[tier]", None),
        ("metadata.name", None),
        ("spec.labels['tier']", None),
    ],
)
def test_a_reference_reads_the_labels_the_older_label_recorded(
    path: str, compared: str | None
) -> None:
    """A value recorded by reference is taken as the old label's text when it read that
    with the labels and annotations of then; otherwise it stays a difference."""
    new = {"env": [{"name": "X", "value": {"from_pod": [{"field": path}]}}]}
    for then in ("frontend", "a", "", "other"):
        old = {"env": [{"name": "X", "value": then}], "pod": V2["pod"]}
        _, compared_new = as_older(old, new, 2)
        expected = then if then == compared else new["env"][0]["value"]
        assert expected == compared_new["env"][0]["value"], (path, then)


def test_a_reference_record_of_another_shape_stays_a_difference() -> None:
    old = {"pod": {"name": "web"}, "args": ["x"]}
    for record in ({"from_pod": "x"}, {"from_pod": [1]}, {"from_pod": [{"other": 1}]}):
        assert [record] == as_older(old, {"args": [record]}, 2)[1]["args"]
    # An object where the old label has text (a value now a Secret's) stays as it is.
    secret = {"sealed": [{"secret": "default/db", "key": "k", "digest": A}]}
    assert [secret] == as_older({**old, "args": ["x"]}, {"args": [secret]}, 2)[1]["args"]
    # A list of another length is compared as it is.
    assert [{"from_pod": []}, "y"] == as_older(old, {"args": [{"from_pod": []}, "y"]}, 2)[1]["args"]


INIT = Container("migrate", "busybox", command=("sh", "-c", "$(TIER)"), env=(EnvVar("TIER", TIER),))
INIT_POD = attrs.evolve(POD, init_containers=(INIT,))


def test_older_network_spec_records_init_containers_as_version_2_did() -> None:
    labels, annotations = dict(INIT_POD.labels), dict(INIT_POD.annotations)
    new = network_spec(INIT_POD, "pause")
    old = {**new, "pod": {**new["pod"], "labels": labels, "annotations": annotations}}

    older = older_network_spec(INIT_POD, "/var/lib/podsync")(old, new)

    assert older["init_containers"] == older_init_record(
        INIT_POD, "/var/lib/podsync", labels, annotations
    )
    assert older["init_containers"] != new["init_containers"]
    # Recorded labels that are not strings count as none.
    odd = {**old, "pod": {"labels": {"tier": 1}, "annotations": []}}
    assert older_network_spec(INIT_POD, "/var/lib/podsync")(odd, new)["init_containers"] == (
        older_init_record(INIT_POD, "/var/lib/podsync", {}, {})
    )
    assert older_network_spec(INIT_POD, "/var/lib/podsync")({}, new)["init_containers"] == (
        older_init_record(INIT_POD, "/var/lib/podsync", {}, {})
    )
    # Without init containers there is nothing to record.
    plain = network_spec(POD, "pause")
    assert plain == older_network_spec(POD, "/var/lib/podsync")(old, plain)


def test_an_older_network_container_of_an_unchanged_pod_is_kept() -> None:
    """Its record of the init containers was made over version 2's form with the labels
    of then: read so, it matches, whatever the labels are now; an edited init
    container still rebuilds the pod."""
    then = attrs.evolve(INIT_POD, labels={"tier": "frontend"})
    now = attrs.evolve(INIT_POD, labels={"tier": "backend", "new": "x"})
    recorded = network_spec(then, "pause")
    recorded["pod"]["labels"] = dict(then.labels)
    recorded["pod"]["annotations"] = dict(then.annotations)
    recorded["init_containers"] = older_init_record(
        then, "/var/lib/podsync", then.labels, then.annotations
    )
    net = labelled(2, recorded)

    def change(pod: Pod) -> str | None:
        return spec_change(
            net,
            SpecHash(SPEC_HASH_VERSION, B),
            lambda: network_spec(pod, "pause"),
            "pause",
            older_spec=older_network_spec(pod, "/var/lib/podsync"),
        )

    assert change(now) is None
    edited = attrs.evolve(now, init_containers=(attrs.evolve(INIT, image="busybox:1"),))
    assert "init container migrate changed" == change(edited)


# --- what a Pod object remembers of its hashes (issue 16) ---------------------------------


def test_only_the_pods_own_containers_are_remembered() -> None:
    """A text is kept by the container's id: one the pod does not hold (whose id may be
    reused once it is gone) is computed, never kept."""
    from podsync.planner._spec_change import remembered_hash

    pod = Pod("web", (Container("app", "busybox"),))
    stranger = Container("app", "busybox:1")

    assert (spec_hash(stranger, pod), True) == (
        remembered_hash(pod, stranger, "/var/lib/podsync", True)[0],
        pod._planned is None,
    )
    own = remembered_hash(pod, pod.containers[0], "/var/lib/podsync", True)
    assert [(id(pod.containers[0]), "/var/lib/podsync")] == [e[0] for e in pod._planned or ()]
    assert own == remembered_hash(pod, pod.containers[0], "/var/lib/podsync", False)


def test_the_network_text_is_remembered_by_image_and_options() -> None:
    """Without the caller's key, the key is made of the image and the option inputs:
    another of either is another text, not the remembered one."""
    from podsync.planner._spec_change import network_memo_key, remembered_network_hash

    pod = Pod("web", (Container("app", "busybox"),))
    plain = {"network_mode": ""}
    other = {"network_mode": "none"}

    first = remembered_network_hash(pod, "pause", plain, True)
    assert first[0] == remembered_network_hash(pod, "pause", plain, True)[0]
    assert remembered_network_hash(pod, "pause", other, True)[1] == network_spec_text(
        pod, "pause", network_mode="none"
    )
    assert remembered_network_hash(pod, "pause:2", plain, True)[1] == network_spec_text(
        pod, "pause:2"
    )
    # The caller's key is the same key.
    keyed = remembered_network_hash(
        pod, "pause", plain, False, key=network_memo_key("pause", plain)
    )
    assert first == keyed


def test_the_network_memo_key_holds_the_network_image() -> None:
    """The same Pod object planned with another network image gets another network
    text, not the one remembered for the first."""
    from podsync.actions._options import PlanOptions
    from podsync.planner._spec_change import network_inputs
    from podsync.spec._resolv import ResolvConf

    host = ResolvConf(nameservers=("192.0.2.53",), searches=())
    keys = {
        network_inputs(PlanOptions(network_image=image), host)[1]
        for image in ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.9")
    }

    assert 2 == len(keys)
