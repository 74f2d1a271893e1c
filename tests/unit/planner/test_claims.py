"""``persistentVolumeClaim`` volumes (issue 14): a named engine volume per claim and
namespace, as podman's ``kube play`` maps claims to volumes; created by the plan before
the first container that mounts it, never removed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest

from podsync import (
    ConfigError,
    Create,
    CreateSpec,
    CreateVolume,
    GCPolicy,
    ObservedVolume,
    Plan,
    PlanOptions,
    Pod,
    Reason,
    load_pods,
    parse_pods,
    plan,
    plan_from_json,
    plan_to_json,
    sync,
    volume_ownership,
)
from podsync.actions._options import NODE_SCOPE
from podsync.labels import LABEL_VOLUME_CLAIM, LABEL_VOLUME_KIND, LABEL_VOLUME_NAMESPACE
from podsync.spec import claim_volume_name
from podsync.spec._volumes import NamedVolumeMount, volume_host_paths
from podsync.testing import FakeClock, FakeRuntime

IMAGES = ["busybox", "registry.k8s.io/pause:3.10"]


def pod_file(
    name: str = "db",
    *,
    namespace: str = "default",
    claim: str = "data",
    claim_read_only: str = "",
    mount_read_only: str = "",
) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  volumes:
  - name: store
    persistentVolumeClaim: {{claimName: {claim}{claim_read_only}}}
  - name: scratch
    emptyDir: {{medium: Memory}}
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - {{name: scratch, mountPath: /scratch}}
    - {{name: store, mountPath: /var/lib/data{mount_read_only}}}
  - name: sidecar
    image: busybox
"""


def parse(text: str) -> Pod:
    (pod,) = parse_pods(text, source_name="pod.yaml", source="file")
    return pod


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pod.yaml", source="file")
    return [str(p) for p in info.value.problems]


def claim_labels(namespace: str = "default", claim: str = "data") -> dict[str, str]:
    return {
        LABEL_VOLUME_KIND: "claim",
        LABEL_VOLUME_NAMESPACE: namespace,
        LABEL_VOLUME_CLAIM: claim,
    }


OPTIONS = PlanOptions(scope=NODE_SCOPE, root_dir="/srv/podsync")


def creates(pod_actions: Sequence[object]) -> list[Create]:
    return [a for a in pod_actions if isinstance(a, Create)]


# --- the volume's name -----------------------------------------------------------------


def test_the_volume_name_is_unambiguous() -> None:
    """``podsync_<namespace>_<claim>``: neither a namespace (a DNS label) nor a claim
    name (a DNS subdomain) has a ``_``, so the name splits back into exactly the two;
    claim names with dots stay apart from namespaces."""
    assert "podsync_default_data" == claim_volume_name("default", "data")
    assert "podsync_team-a_db.primary" == claim_volume_name("team-a", "db.primary")
    names = {
        claim_volume_name(ns, claim)
        for ns, claim in [("a", "b.c"), ("a-b", "c"), ("a", "b-c"), ("ab", "c"), ("a", "bc")]
    }
    assert 5 == len(names)


def test_a_volume_is_podsyncs_by_its_labels() -> None:
    """podsync's claim volumes carry its labels; an unlabelled volume of the same name
    (a pre-provisioned one) is not podsync's."""
    owned = volume_ownership(ObservedVolume("podsync_default_data", claim_labels()))
    assert owned is not None
    assert ("claim", "default", "data", True) == (
        owned.kind,
        owned.namespace,
        owned.claim,
        owned.retained,
    )
    assert volume_ownership(ObservedVolume("podsync_default_data")) is None
    assert volume_ownership(ObservedVolume("data", {"com.docker.compose.volume": "data"})) is None


# --- reading pod files -----------------------------------------------------------------


def test_a_claim_is_mounted_as_its_named_volume() -> None:
    """The claim's mount is the named volume of the claim in the pod's namespace; it
    has no host path and no directory under the root directory (beside a memory
    emptyDir, a tmpfs)."""
    pod = parse(pod_file(namespace="shop"))

    assert {} == volume_host_paths(pod, "/srv/podsync")
    made = plan([pod], now=100.0, options=OPTIONS)
    (app, _sidecar) = [c for c in creates(made.pods[0].actions) if c.container != "net"]
    assert (NamedVolumeMount("podsync_shop_data", "/var/lib/data"),) == app.spec.volumes
    assert ["/scratch"] == [t.container_path for t in app.spec.tmpfs]
    assert () == app.spec.directories


@pytest.mark.parametrize(
    ("claim_read_only", "mount_read_only", "read_only"),
    [
        ("", "", False),
        (", readOnly: true", "", True),
        ("", ", readOnly: true", True),
        (", readOnly: false", ", readOnly: true", True),
    ],
)
def test_read_only_from_the_mount_or_the_claim(
    claim_read_only: str, mount_read_only: str, read_only: bool
) -> None:
    """The kubelet mounts the claim read-only when the volume source or the mount says
    so (``pkg/volume/util``: ``readOnly`` of the mount or of the claim source)."""
    pod = parse(pod_file(claim_read_only=claim_read_only, mount_read_only=mount_read_only))

    made = plan([pod], now=100.0, options=OPTIONS)

    (app,) = [c for c in creates(made.pods[0].actions) if c.container == "app"]
    assert (NamedVolumeMount("podsync_default_data", "/var/lib/data", read_only),) == (
        app.spec.volumes
    )


def test_claim_read_only_changes_the_spec_hash() -> None:
    """Mounting the claim read-only is a change of the container."""
    writable = plan([parse(pod_file())], now=100.0, options=OPTIONS)
    read_only = plan(
        [parse(pod_file(claim_read_only=", readOnly: true"))], now=100.0, options=OPTIONS
    )

    def app_hash(p: Plan) -> str:
        (app,) = [c for c in creates(p.pods[0].actions) if c.container == "app"]
        return app.spec.labels["io.podsync.spec-hash"]

    assert app_hash(writable) != app_hash(read_only)


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        (
            "Data",
            "claimName: 'Data' is not a valid DNS-1123 subdomain (lowercase letters, "
            "digits, '-' and '.', at most 253 characters)",
        ),
        (
            '""',
            "claimName: '' is not a valid DNS-1123 subdomain (lowercase letters, "
            "digits, '-' and '.', at most 253 characters)",
        ),
    ],
)
def test_a_bad_claim_name_is_refused(claim: str, message: str) -> None:
    assert [f"pod.yaml: $.spec.volumes[0].persistentVolumeClaim.{message}"] == errors(
        pod_file(claim=claim)
    )


def test_a_claim_whose_volume_name_is_too_long_is_refused() -> None:
    """Docker's local driver makes a directory named after the volume: 255 characters at
    most. ``podsync_default_`` and a 239-character claim name fit; one more does not."""
    fits = parse(pod_file(claim="a" * 239))
    assert 255 == len(claim_volume_name(fits.namespace, "a" * 239))
    assert [
        "pod.yaml: $.spec.volumes[0].persistentVolumeClaim.claimName: too long: the claim's "
        "volume name podsync_default_aaaaaaaaaaaaaaaaaaaaaaaa... would have 256 characters, "
        "and a Docker volume name at most 255"
    ] == errors(pod_file(claim="a" * 240))


# --- planning --------------------------------------------------------------------------


def test_the_volume_is_created_before_the_first_container_that_mounts_it() -> None:
    """A claim without its volume: the plan creates the volume, labelled as podsync's,
    right before the first container that mounts it, and says why."""
    pod = parse(pod_file())

    made = plan([pod], now=100.0, options=OPTIONS)

    actions = made.pods[0].actions
    kinds = [(type(a).__name__, getattr(a, "container", "")) for a in actions]
    assert [
        ("Create", "net"),
        ("CreateVolume", ""),
        ("Create", "app"),
        ("Create", "sidecar"),
    ] == kinds
    volume = actions[1]
    assert isinstance(volume, CreateVolume)
    assert (
        "podsync_default_data",
        claim_labels(),
        Reason.CLAIM_FIRST_USE,
        "create volume podsync_default_data: claim default/data: first use",
        pod.uid,
    ) == (volume.volume, volume.labels, volume.reason, volume.message, volume.pod_uid)
    assert "Plan: 2 to pull, 3 to create, 1 to create volume." == made.summary()
    assert "  create volume podsync_default_data: claim default/data: first use" in (
        made.describe().splitlines()
    )


def test_a_podsync_volume_that_exists_is_used() -> None:
    pod = parse(pod_file())
    volumes = [ObservedVolume("podsync_default_data", claim_labels())]

    made = plan([pod], now=100.0, options=OPTIONS, volumes=volumes)

    assert not [a for a in made.pods[0].actions if isinstance(a, CreateVolume)]
    (app,) = [c for c in creates(made.pods[0].actions) if c.container == "app"]
    assert "create default/db/app: no container yet" == app.message


def test_a_volume_podsync_did_not_make_is_used_as_it_is_and_the_plan_says_so() -> None:
    """A volume of the claim's name that podsync did not make (someone made it with
    ``docker volume create``, a pre-provisioned volume, as podman's ``kube play`` uses
    one) is used as it is, never created or relabelled; the create says so."""
    pod = parse(pod_file())
    volumes = [ObservedVolume("podsync_default_data", {"owner": "ops"})]

    made = plan([pod], now=100.0, options=OPTIONS, volumes=volumes)

    assert not [a for a in made.pods[0].actions if isinstance(a, CreateVolume)]
    (app,) = [c for c in creates(made.pods[0].actions) if c.container == "app"]
    assert (
        "create default/db/app: no container yet (claim default/data: volume "
        "podsync_default_data exists and was not made by podsync: used as it is)"
    ) == app.message


def test_every_pod_that_mounts_a_missing_volume_creates_it_first() -> None:
    """Pods are applied in parallel: each pod that mounts a missing claim volume creates
    it before its own container (a second create of a volume is harmless), so no
    container can make it unlabelled first. Claims of two namespaces are two volumes."""
    pods = [
        parse(pod_file("a")),
        parse(pod_file("b")),
        parse(pod_file("c", namespace="shop")),
    ]

    made = plan(pods, now=100.0, options=OPTIONS)

    assert [
        ("default/a", "podsync_default_data"),
        ("default/b", "podsync_default_data"),
        ("shop/c", "podsync_shop_data"),
    ] == [(p.pod, a.volume) for p in made.pods for a in p.actions if isinstance(a, CreateVolume)]


def test_the_plan_json_keeps_volume_creates() -> None:
    made = plan([parse(pod_file())], now=100.0, options=OPTIONS)

    assert made == plan_from_json(plan_to_json(made))


def test_a_pod_without_claims_plans_no_volume() -> None:
    """(A memory emptyDir instead: an on-disk emptyDir is a volume too, see
    tests/unit/loop/test_empty_dir_volumes.py.)"""
    memory = "emptyDir: {medium: Memory}"
    pod = parse(pod_file().replace("persistentVolumeClaim: {claimName: data}", memory))

    made = plan([pod], now=100.0, options=OPTIONS)

    assert not [a for a in made.actions if isinstance(a, CreateVolume)]


# --- sync with FakeRuntime -------------------------------------------------------------


def claim_volumes(fake: FakeRuntime) -> list[ObservedVolume]:
    """The claims' volumes ``fake`` holds, their creation time left out (not the pod's
    state volume, which its network container's create makes)."""
    return [
        attrs.evolve(v, created="")
        for v in fake.volumes
        if v.labels.get(LABEL_VOLUME_KIND) == "claim"
    ]


def mounts_the_claim(spec: CreateSpec) -> bool:
    return any(v.volume == "podsync_default_data" for v in spec.volumes)


def fake_and_clock() -> tuple[FakeRuntime, FakeClock]:
    clock = FakeClock(1000.0, step=0)
    return FakeRuntime(images=IMAGES, clock=clock), clock


def test_sync_creates_the_labelled_volume_before_the_container(tmp_path: Path) -> None:
    """The first sync lists the volumes once (a plan creates a container that mounts a
    claim), creates the volume with podsync's labels before the container, and the next
    sync makes one list call."""
    fake, clock = fake_and_clock()
    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path))
    pod = parse(pod_file())

    result = sync([pod], fake, options=options, clock=clock, probe=False)

    assert result.ok, result.apply_result.summary()
    names = fake.call_names()
    assert 1 == names.count("list_volumes")
    assert names.index("create_volume") < next(
        i for i, c in enumerate(fake.calls) if c.name == "create" and mounts_the_claim(c.args[0])
    )
    assert [ObservedVolume("podsync_default_data", claim_labels())] == claim_volumes(fake)
    fake.clear_calls()
    clock.advance(1)
    sync([pod], fake, options=options, clock=clock, probe=False)
    assert ["list"] == fake.call_names()


def test_sync_of_pods_without_claims_lists_no_volumes(tmp_path: Path) -> None:
    fake, clock = fake_and_clock()
    memory = "emptyDir: {medium: Memory}"
    pod = parse(pod_file().replace("persistentVolumeClaim: {claimName: data}", memory))

    sync(
        [pod],
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        clock=clock,
        probe=False,
    )

    assert "list_volumes" not in fake.call_names()


def test_teardown_and_gc_never_remove_the_volume(tmp_path: Path) -> None:
    """The pod leaves the desired state: its containers go, exited ones are collected,
    its directory is torn down - its claim's volume stays, and no plan names it."""
    fake, clock = fake_and_clock()
    options = PlanOptions(
        scope=NODE_SCOPE,
        root_dir=str(tmp_path),
        gc=GCPolicy(max_per_container=0, min_age=0.0, max_total=0),
    )
    sync([parse(pod_file())], fake, options=options, clock=clock, probe=False)
    clock.advance(5)

    for _ in range(3):
        result = sync([], fake, options=options, clock=clock, probe=False)
        assert result.ok, result.apply_result.summary()
        clock.advance(5)

    assert [] == fake.containers
    assert ["podsync_default_data"] == [v.name for v in fake.volumes]
    # (A removed container's stop record is removed with it: a call for another volume.)
    removed = [c.args[0] for c in fake.calls if c.name == "remove_volume"]
    assert "podsync_default_data" not in removed


def test_a_failed_volume_create_creates_no_container_that_mounts_it(tmp_path: Path) -> None:
    """A volume create that fails skips the rest of its pod: no container creates the
    volume unlabelled behind podsync's back; the next sync creates it."""
    fake, clock = fake_and_clock()
    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path))
    fake.fail("create_volume", times=1)

    first = sync([parse(pod_file())], fake, options=options, clock=clock, probe=False)

    assert not first.ok
    assert [] == claim_volumes(fake)
    assert not [c for c in fake.calls if c.name == "create" and mounts_the_claim(c.args[0])]
    clock.advance(1)
    second = sync([parse(pod_file())], fake, options=options, clock=clock, probe=False)
    assert second.ok, second.apply_result.summary()
    assert [ObservedVolume("podsync_default_data", claim_labels())] == claim_volumes(fake)


# --- kind: PersistentVolumeClaim documents -----------------------------------------------

CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 10Gi}
"""


def test_a_claim_document_is_optional_and_may_be_anywhere(tmp_path: Path) -> None:
    """A pod's claim needs no document; one given (in any file, before or after the
    pod, with the usual fields of one exported from a cluster) is validated and
    changes nothing about the pod."""
    without = parse(pod_file())
    (with_doc,) = parse_pods(pod_file() + "---\n" + CLAIM, source_name="pod.yaml", source="file")
    assert without == with_doc
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "data.yaml").write_text(
        CLAIM.replace(
            "  accessModes", "  volumeMode: Filesystem\n  storageClassName: ''\n  accessModes"
        )
        + "status: {phase: Bound, capacity: {storage: 10Gi}}\n"
    )
    (tmp_path / "pod.yaml").write_text(pod_file())
    (loaded,) = load_pods([str(tmp_path / "pod.yaml"), str(tmp_path / "claims")])
    assert [NamedVolumeMount("podsync_default_data", "/var/lib/data")] == [
        m
        for c in plan([loaded], now=1.0).pods[0].actions
        if isinstance(c, Create) and c.container != "net"
        for m in c.spec.volumes
    ]


def claim_errors(spec: str) -> list[str]:
    text = f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: data}}\nspec:\n{spec}"
    return errors(text)


REFUSED = "is not supported by podsync"


@pytest.mark.parametrize(
    ("spec", "problems"),
    [
        pytest.param(
            "  accessModes: []\n  resources: {requests: {storage: 1Gi}}\n",
            [
                "pod.yaml: $.spec.accessModes: at least one access mode is required "
                "(ReadWriteOnce, ReadOnlyMany or ReadWriteMany)"
            ],
            id="no-access-mode",
        ),
        pytest.param(
            "  accessModes: [ReadWriteSometimes]\n  resources: {requests: {storage: 1Gi}}\n",
            [
                "pod.yaml: $.spec.accessModes[0]: must be ReadWriteOnce, ReadOnlyMany, "
                "ReadWriteMany or ReadWriteOncePod, got 'ReadWriteSometimes'"
            ],
            id="unknown-access-mode",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOncePod]\n  resources: {requests: {storage: 1Gi}}\n",
            [
                f"pod.yaml: $.spec.accessModes[0]: accessModes: 'ReadWriteOncePod' {REFUSED}: "
                "podsync does not keep a second pod off a claim (ReadWriteOnce, ReadOnlyMany "
                "and ReadWriteMany are: every pod on one host may mount the volume)"
            ],
            id="read-write-once-pod",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n",
            [
                "pod.yaml: $.spec.resources.requests.storage: is required: the size the claim "
                "asks for (10Gi)"
            ],
            id="no-storage-request",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: lots}}\n",
            [
                "pod.yaml: $.spec.resources.requests.storage: 'lots' is not a valid quantity: "
                "expected a number with an optional suffix, like 128Mi, 1G or 512"
            ],
            id="bad-quantity",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n"
            "  resources: {requests: {storage: 1Gi}, limits: {storage: 2Gi}}\n",
            [
                f"pod.yaml: $.spec.resources.limits: limits {REFUSED}: Docker's local volumes "
                "have no size limit"
            ],
            id="storage-limit",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n  volumeMode: Block\n"
            "  resources: {requests: {storage: 1Gi}}\n",
            [
                f"pod.yaml: $.spec.volumeMode: volumeMode: 'Block' {REFUSED}: a claim is a "
                "Docker volume, a directory; raw block devices are not implemented (only "
                "'Filesystem', the default, is)"
            ],
            id="block",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n  storageClassName: fast-ssd\n"
            "  resources: {requests: {storage: 1Gi}}\n",
            [
                f"pod.yaml: $.spec.storageClassName: storageClassName: 'fast-ssd' {REFUSED}: "
                "every claim is a Docker local volume; a storage class needs a cluster's "
                "provisioner (the PersistentVolumeClaim document is optional: leave it out of "
                "the sources) (only '' is)"
            ],
            id="storage-class",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n  selector: {matchLabels: {tier: db}}\n"
            "  resources: {requests: {storage: 1Gi}}\n",
            [
                f"pod.yaml: $.spec.selector: selector {REFUSED}: a selector binds a claim to "
                "a cluster's PersistentVolumes; podsync makes a Docker volume for it"
            ],
            id="selector",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n  volumeName: pv-0001\n"
            "  resources: {requests: {storage: 1Gi}}\n",
            [
                f"pod.yaml: $.spec.volumeName: volumeName: 'pv-0001' {REFUSED}: it binds a "
                "claim to a cluster's PersistentVolume; podsync uses the Docker volume "
                "podsync_<namespace>_<claim>, made by podsync or by hand (only '' is)"
            ],
            id="volume-name",
        ),
        pytest.param(
            "  accessModes: [ReadWriteOnce]\n"
            "  dataSource: {kind: VolumeSnapshot, name: nightly}\n"
            "  resources: {requests: {storage: 1Gi}}\n",
            [
                f"pod.yaml: $.spec.dataSource: dataSource {REFUSED}: podsync creates empty "
                "volumes: a claim is not filled from a snapshot or another claim"
            ],
            id="data-source",
        ),
    ],
)
def test_a_claim_document_is_checked(spec: str, problems: list[str]) -> None:
    assert problems == claim_errors(spec)


def test_claim_documents_defined_twice() -> None:
    assert [
        "pod.yaml: document 2: $.metadata.name: duplicate PersistentVolumeClaim default/data "
        "(first at pod.yaml: document 1: $.metadata.name)"
    ] == errors(CLAIM + "---\n" + CLAIM)


def test_an_init_container_that_mounts_the_claim_comes_after_its_volume() -> None:
    """The first container that mounts the claim may be an init container: the volume
    is created before it, once."""
    text = pod_file().replace(
        "  containers:\n",
        "  initContainers:\n  - name: seed\n    image: busybox\n"
        "    volumeMounts: [{name: store, mountPath: /seed}]\n  containers:\n",
    )

    made = plan([parse(text)], now=100.0, options=OPTIONS)

    kinds = [(type(a).__name__, getattr(a, "container", "")) for a in made.pods[0].actions]
    assert [("Create", "net"), ("CreateVolume", ""), ("Create", "seed")] == kinds[:3]
    assert 1 == sum(isinstance(a, CreateVolume) for a in made.actions)
