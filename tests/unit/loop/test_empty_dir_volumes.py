"""``emptyDir`` volumes as engine volumes (issue 18): one named volume per pod volume,
labelled as podsync's, created and set up (mode 0777, or the fsGroup's) before the
first container that mounts it, removed with its pod; and the move of pods that earlier
podsync versions gave host directories."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest

from podsync import (
    Create,
    CreateSpec,
    CreateVolume,
    GCPolicy,
    Kill,
    ObservedVolume,
    Plan,
    PlanOptions,
    Pod,
    PodPlan,
    Reason,
    Remove,
    RemoveVolume,
    apply,
    parse_pods,
    plan,
    plan_from_json,
    plan_to_json,
    sync,
    volume_ownership,
)
from podsync.actions._options import NODE_SCOPE
from podsync.labels import (
    LABEL_CONTAINER,
    LABEL_EMPTY_DIRS,
    LABEL_POD_UID,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAME,
    LABEL_VOLUME_NAMESPACE,
)
from podsync.model._volume_entries import EntryKind
from podsync.spec import claim_volume_name
from podsync.spec._labels import LABEL_POD_STATE
from podsync.spec._volumes import Mount, NamedVolumeMount, empty_dir_volume_name
from podsync.testing import FakeClock, FakeRuntime

PAUSE = "registry.k8s.io/pause:3.10"
IMAGES = ["busybox", PAUSE]
ROOT = "/srv/podsync"
OPTIONS = PlanOptions(scope=NODE_SCOPE, root_dir=ROOT)


def pod_file(*, fs_group: str = "", image: str = "busybox", extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: shop, uid: web-uid}}
spec:
  {fs_group}
  volumes:
  - name: cache
    emptyDir: {{}}
  - name: scratch
    emptyDir: {{medium: Memory}}
  containers:
  - name: app
    image: {image}
    volumeMounts:
    - {{name: cache, mountPath: /var/cache/app}}
    - {{name: scratch, mountPath: /scratch}}
  - name: sidecar
    image: busybox
    volumeMounts:
    - {{name: cache, mountPath: /cache, readOnly: true}}
  - name: plain
    image: busybox{extra}
"""


def parse(text: str) -> Pod:
    (pod,) = parse_pods(text, source_name="pod.yaml", source="file")
    return pod


POD = parse(pod_file())
VOLUME = "podsync-emptydir_web-uid_cache"
# The pod's state volume (its termination-message files).
STATE = "podsync-state_web-uid"


def creates(actions: Sequence[object]) -> dict[str, Create]:
    return {a.container: a for a in actions if isinstance(a, Create)}


def kinds(actions: Sequence[object]) -> list[str]:
    return [
        f"{type(a).__name__} {getattr(a, 'container', '') or getattr(a, 'volume', '')}"
        for a in actions
    ]


# --- the volume's name ------------------------------------------------------------------


def test_the_volume_name_is_the_pods_and_never_a_claims() -> None:
    """``podsync-emptydir_<pod uid>_<volume>``: a pod uid and a volume name have no
    ``_``, so a name names exactly one pod volume; a claim's volume starts with
    ``podsync_`` and can never be one; every name is one Docker's local driver takes."""
    assert VOLUME == empty_dir_volume_name("web-uid", "cache")
    pairs = [("a", "b-c"), ("a-b", "c"), ("a.b", "c"), ("ab", "c"), ("a", "bc")]
    names = {empty_dir_volume_name(uid, volume) for uid, volume in pairs}
    assert len(pairs) == len(names)
    claims = {claim_volume_name(ns, claim) for ns, claim in pairs}
    assert not names & claims
    local_driver = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]+")
    assert all(local_driver.fullmatch(n) for n in names)


def test_a_name_too_long_for_a_directory_is_cut_with_a_digest() -> None:
    """A uid may have 253 characters: the name is cut to 255 (the local driver makes a
    directory of that name), still one per pod volume."""
    uid = "u" * 253
    first, second = empty_dir_volume_name(uid, "a" * 63), empty_dir_volume_name(uid, "b" * 63)
    assert 255 == len(first) == len(second)
    assert first != second
    assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]+", first)


# --- the plan -----------------------------------------------------------------------------


def test_the_volume_is_created_and_set_up_before_the_first_container_that_mounts_it() -> None:
    made = plan([POD], now=100.0, options=OPTIONS)

    actions = made.pods[0].actions
    assert kinds(actions) == [
        "Create net",
        f"CreateVolume {VOLUME}",
        "Create app",
        "Create sidecar",
        "Create plain",
    ]
    (volume,) = [a for a in actions if isinstance(a, CreateVolume)]
    assert (
        CreateVolume(
            pod="shop/web",
            pod_uid="web-uid",
            volume=VOLUME,
            labels={
                LABEL_VOLUME_KIND: "empty-dir",
                LABEL_VOLUME_NAMESPACE: "shop",
                LABEL_POD_UID: "web-uid",
                LABEL_VOLUME_NAME: "cache",
            },
            reason=Reason.EMPTY_DIR_FIRST_USE,
            message=f"create volume {VOLUME}: emptyDir cache: first use",
            mode=0o777,
            gid=None,
            image=PAUSE,
        )
        == volume
    )
    owner = volume_ownership(ObservedVolume(VOLUME, volume.labels))
    assert owner is not None
    assert not owner.retained
    assert ("web-uid", "cache") == (owner.pod_uid, owner.volume)


def test_containers_mount_the_volume_never_a_host_directory() -> None:
    """Both containers mount the one volume (so they share it), never filled from the
    image; nothing of it is under the root directory; a memory emptyDir stays a tmpfs."""
    made = creates(plan([POD], now=100.0, options=OPTIONS).pods[0].actions)

    app, sidecar, plain = made["app"].spec, made["sidecar"].spec, made["plain"].spec
    assert (NamedVolumeMount(VOLUME, "/var/cache/app", False, True),) == app.volumes
    assert (NamedVolumeMount(VOLUME, "/cache", True, True),) == sidecar.volumes
    for spec in (app, sidecar):
        assert () == spec.directories
        assert not [m for m in spec.mounts if m.host_path.startswith(ROOT + "/web-uid/volumes")]
        assert "engine" == spec.labels[LABEL_EMPTY_DIRS]
    assert ["/scratch"] == [t.container_path for t in app.tmpfs]
    assert () == plain.volumes
    assert LABEL_EMPTY_DIRS not in plain.labels


def test_an_fs_group_owns_the_volume_with_setgid() -> None:
    """With an fsGroup the root is the group's, group-writable and setgid (the
    kubelet's SetVolumeOwnership over the emptyDir's 0777)."""
    pod = parse(pod_file(fs_group="securityContext: {fsGroup: 2000}"))

    (volume,) = [a for a in plan([pod], now=1.0).pods[0].actions if isinstance(a, CreateVolume)]

    assert (0o2777, 2000) == (volume.mode, volume.gid)


MINE = ObservedVolume(
    VOLUME, {LABEL_VOLUME_KIND: "empty-dir", LABEL_POD_UID: "web-uid", LABEL_VOLUME_NAME: "cache"}
)


def test_a_volume_a_container_of_the_pod_used_is_used_as_it_is(tmp_path: Path) -> None:
    """Once a container of the pod mounted the volume (``LABEL_EMPTY_DIRS``), a new
    container just mounts it: no set-up again (a restart costs no helper container)."""
    fake, clock = fake_and_clock()
    sync(
        [POD],
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        clock=clock,
        probe=False,
    )
    app = next(c for c in fake.containers if c.labels["io.podsync.container.name"] == "app")
    fake.exit(app.id, 1)

    made = plan(
        [POD],
        fake.list_containers(),
        now=2000.0,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        images=fake.list_images(),
        volumes=fake.list_volumes(),
    )

    assert ["Create app"] == kinds(made.pods[0].actions)


def test_a_volume_no_container_used_yet_is_set_up_again() -> None:
    """A volume of the pod that no container mounted yet (podsync stopped between its
    create and its set-up) is set up again before the first container: only its root's
    mode and group are written."""
    made = plan([POD], now=1.0, options=OPTIONS, volumes=[MINE])

    (setup,) = [a for a in made.pods[0].actions if isinstance(a, CreateVolume)]
    assert (0o777, "") == (setup.mode, setup.copy_from)


def test_a_volume_podsync_did_not_make_is_used_as_it_is() -> None:
    """One the engine made unlabelled (a container mounted it before it existed) is used
    and never set up (it is not podsync's: never written into, never removed), and the
    plan says so."""
    made = plan([POD], now=1.0, options=OPTIONS, volumes=[ObservedVolume(VOLUME)])

    assert not [a for a in made.pods[0].actions if isinstance(a, CreateVolume)]
    app = creates(made.pods[0].actions)["app"]
    assert app.message.endswith(
        f"(volume {VOLUME} exists and was not made by podsync: used as it is)"
    )


def test_the_plan_shows_and_saves_the_volume_actions() -> None:
    made = plan([POD], now=1.0, options=OPTIONS)

    assert (
        f"create volume {VOLUME}: emptyDir cache: first use  [empty-dir-first-use]" in made.render()
    )
    assert "1 to create volume" in made.summary()
    assert made == plan_from_json(plan_to_json(made))


# --- upgrading from host directories --------------------------------------------------


def legacy(spec: CreateSpec, root: str) -> CreateSpec:
    """``spec`` as a podsync before engine volumes made it: the emptyDir bound from its
    host directory, no ``LABEL_EMPTY_DIRS``; no termination-message file (the pod gives
    no path), no state volume mounted in the network container."""
    host = f"{root}/web-uid/volumes/empty/cache"
    binds = [Mount(host, m.container_path, m.read_only) for m in spec.volumes if not m.labels]
    return attrs.evolve(
        spec,
        labels={
            k: v for k, v in spec.labels.items() if k not in (LABEL_EMPTY_DIRS, LABEL_POD_STATE)
        },
        volumes=(),
        mounts=(*spec.mounts, *binds),
        directories=(host,) if binds else (),
        file_mounts=(),
    )


def running_legacy_pod(fake: FakeRuntime, pod: Pod, root: str, *, now: float) -> None:
    """Run ``pod`` on ``fake`` as an earlier podsync did."""
    made = plan(
        [pod],
        now=now,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=root),
        images=fake.list_images(),
    )
    for action in made.pods[0].actions:
        if isinstance(action, Create):
            cid = fake.create_container(legacy(action.spec, root))
            fake.start_container(cid)


def test_upgrading_restarts_nothing() -> None:
    """Containers an earlier podsync made with host directories have the same spec hash:
    the mount kind is not in it. Nothing is stopped, created or set up."""
    clock = FakeClock(100.0, step=0)
    fake = FakeRuntime(images=IMAGES, clock=clock)
    running_legacy_pod(fake, POD, ROOT, now=100.0)

    made = plan(
        [POD], fake.list_containers(), now=200.0, options=OPTIONS, images=fake.list_images()
    )

    assert not made.has_changes, made.render()


def test_while_a_container_binds_the_host_directory_new_ones_bind_it_too() -> None:
    """The sidecar exits and restarts while the app (an earlier podsync's, binding the
    host directory) keeps running: the new sidecar binds the same directory, so the two
    keep sharing the data, and no volume is made."""
    clock = FakeClock(100.0, step=0)
    fake = FakeRuntime(images=IMAGES, clock=clock)
    running_legacy_pod(fake, POD, ROOT, now=100.0)
    sidecar = next(c for c in fake.containers if "sidecar" in c.name)
    fake.exit(sidecar.id, 1)

    made = plan(
        [POD], fake.list_containers(), now=500.0, options=OPTIONS, images=fake.list_images()
    )

    # (Beside a network container of that podsync, the termination-message file goes
    # into a state volume the plan creates: see test_plan_kubelet_volumes.)
    assert [f"CreateVolume {STATE}", "Create sidecar"] == kinds(made.pods[0].actions)
    spec = creates(made.pods[0].actions)["sidecar"].spec
    assert () == spec.volumes
    assert Mount(f"{ROOT}/web-uid/volumes/empty/cache", "/cache", True) in spec.mounts
    assert (f"{ROOT}/web-uid/volumes/empty/cache",) == spec.directories
    assert LABEL_EMPTY_DIRS not in spec.labels


def test_a_rebuilt_pod_moves_to_the_volume_and_copies_the_directory_first() -> None:
    """The network container is gone: every container stops, then the volume is made
    and the host directory copied in, before the first container that mounts it."""
    clock = FakeClock(100.0, step=0)
    fake = FakeRuntime(images=IMAGES, clock=clock)
    running_legacy_pod(fake, POD, ROOT, now=100.0)
    net = next(c for c in fake.containers if c.labels["io.podsync.container.name"] == "net")
    fake.exit(net.id, 0)

    made = plan(
        [POD],
        fake.list_containers(),
        now=500.0,
        options=OPTIONS,
        images=fake.list_images(),
        volumes=fake.list_volumes(),
        empty_dirs=[("web-uid", "cache")],
    )

    actions = made.pods[0].actions
    assert kinds(actions) == [
        "Kill app",
        "Kill sidecar",
        "Kill plain",
        "Create net",
        f"CreateVolume {VOLUME}",
        "Create app",
        "Create sidecar",
        "Create plain",
    ]
    (volume,) = [a for a in actions if isinstance(a, CreateVolume)]
    assert Reason.EMPTY_DIR_MIGRATED == volume.reason
    assert f"{ROOT}/web-uid/volumes/empty/cache" == volume.copy_from
    assert "[empty-dir-migrated]" in made.render()
    assert creates(actions)["app"].spec.volumes


def test_when_every_binding_container_is_replaced_all_stop_before_the_copy() -> None:
    """A new image for every container that binds the directory (the pod is not
    rebuilt): both stop before anything is created, then the copy, then the creates."""
    clock = FakeClock(100.0, step=0)
    fake = FakeRuntime(images=[*IMAGES, "busybox:1.37"], clock=clock)
    running_legacy_pod(fake, POD, ROOT, now=100.0)
    changed = parse(pod_file().replace("image: busybox", "image: busybox:1.37"))

    made = plan(
        [changed],
        fake.list_containers(),
        now=500.0,
        options=OPTIONS,
        images=fake.list_images(),
        volumes=fake.list_volumes(),
        empty_dirs=[("web-uid", "cache")],
    )

    actions = made.pods[0].actions
    assert kinds(actions) == [
        "Kill app",
        "Kill sidecar",
        "Kill plain",
        f"CreateVolume {STATE}",
        f"CreateVolume {VOLUME}",
        "Create app",
        "Create sidecar",
        "Create plain",
    ]
    assert all(isinstance(a, Kill) and a.reason is Reason.SPEC_CHANGED for a in actions[:3])


def test_one_replaced_container_of_two_keeps_binding_the_directory() -> None:
    """Only the app's image changes: the sidecar keeps running on the host directory, so
    the new app binds it too (the move waits for the pod's rebuild)."""
    clock = FakeClock(100.0, step=0)
    fake = FakeRuntime(images=[*IMAGES, "busybox:1.37"], clock=clock)
    running_legacy_pod(fake, POD, ROOT, now=100.0)
    changed = parse(pod_file(image="busybox:1.37"))

    made = plan(
        [changed],
        fake.list_containers(),
        now=500.0,
        options=OPTIONS,
        images=fake.list_images(),
        volumes=fake.list_volumes(),
        empty_dirs=[("web-uid", "cache")],
    )

    assert ["Kill app", f"CreateVolume {STATE}", "Create app"] == kinds(made.pods[0].actions)
    assert () == creates(made.pods[0].actions)["app"].spec.volumes


@pytest.mark.parametrize("policy", ["IfNotPresent", "Never"])
def test_apply_copies_the_directory_into_the_volume_and_removes_it(
    tmp_path: Path, policy: str
) -> None:
    """A sync of a pod an earlier podsync ran, whose network container died: the host
    directory's files (modes and nested directories too) end up in the volume, whose
    root is 0777, and the directory is gone; the pod directory stays. (With pull policy
    Never, a plan made before the image list waits for the images instead of creating:
    the volumes are listed with the images, for the one plan made again.)"""
    root = str(tmp_path)
    clock = FakeClock(100.0, step=0)
    fake = FakeRuntime(images=IMAGES, clock=clock)
    pod = parse(
        pod_file().replace("image: busybox", f"image: busybox\n    imagePullPolicy: {policy}")
    )
    running_legacy_pod(fake, pod, root, now=100.0)
    host = tmp_path / "web-uid" / "volumes" / "empty" / "cache"
    host.mkdir(parents=True)
    (tmp_path / "web-uid" / ".podsync-pod").touch()
    (host / "index.html").write_bytes(b"<h1>cached</h1>")
    (host / "sub").mkdir()
    (host / "sub" / "run.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(host / "sub" / "run.sh", 0o755)
    os.symlink("index.html", host / "latest")
    net = next(c for c in fake.containers if c.labels["io.podsync.container.name"] == "net")
    fake.exit(net.id, 0)
    clock.advance(400)

    result = sync(
        [pod], fake, options=PlanOptions(scope=NODE_SCOPE, root_dir=root), clock=clock, probe=False
    )

    assert result.ok, result.apply_result.summary()
    assert Reason.EMPTY_DIR_MIGRATED in [a.reason for a in result.plan.actions]
    files = fake.volume_files(VOLUME)
    assert b"<h1>cached</h1>" == files["index.html"].data
    assert (EntryKind.FILE, 0o755) == (files["sub/run.sh"].kind, files["sub/run.sh"].mode)
    assert (EntryKind.SYMLINK, "index.html") == (files["latest"].kind, files["latest"].target)
    assert 0o777 == files["."].mode
    assert not host.exists()
    assert (tmp_path / "web-uid").is_dir()
    assert 1 == fake.call_names().count("list_volumes")


# --- sync, teardown and garbage collection -----------------------------------------------


def fake_and_clock() -> tuple[FakeRuntime, FakeClock]:
    clock = FakeClock(1000.0, step=0)
    return FakeRuntime(images=IMAGES, clock=clock), clock


def test_sync_creates_and_sets_up_the_volume_then_lists_nothing_more(tmp_path: Path) -> None:
    fake, clock = fake_and_clock()
    options = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path))

    result = sync([POD], fake, options=options, clock=clock, probe=False)

    assert result.ok, result.apply_result.summary()
    names = fake.call_names()
    assert 1 == names.count("list_volumes")
    first_mount = next(
        i
        for i, c in enumerate(fake.calls)
        if c.name == "create" and any(v.volume == VOLUME for v in c.args[0].volumes)
    )
    assert names.index("create_volume") < names.index("write_volume") < first_mount
    assert [VOLUME, STATE] == [v.name for v in fake.volumes]
    assert 0o777 == fake.volume_files(VOLUME)["."].mode
    assert not (tmp_path / "web-uid" / "volumes").exists()
    fake.clear_calls()
    clock.advance(1)
    sync([POD], fake, options=options, clock=clock, probe=False)
    assert ["list"] == fake.call_names()


def test_the_pods_containers_share_the_volume(tmp_path: Path) -> None:
    fake, clock = fake_and_clock()
    sync(
        [POD],
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        clock=clock,
        probe=False,
    )
    app = next(c for c in fake.containers if c.labels.get("io.podsync.container.name") == "app")
    side = next(
        c for c in fake.containers if c.labels.get("io.podsync.container.name") == "sidecar"
    )

    fake.write_container_file(app.id, "/var/cache/app/page", b"hello")

    assert b"hello" == fake.read_container_file(side.id, "/cache/page", limit=100)


def test_a_pod_no_longer_desired_loses_its_volumes_after_its_containers(tmp_path: Path) -> None:
    """Its containers stop and go, then its emptyDir volume is removed - never a claim's
    volume, nor one podsync does not own, nor a desired pod's."""
    fake, clock = fake_and_clock()
    options = PlanOptions(
        scope=NODE_SCOPE, root_dir=str(tmp_path), gc=GCPolicy(max_per_container=0, min_age=0.0)
    )
    sync([POD], fake, options=options, clock=clock, probe=False)
    fake.add_volume(ObservedVolume("podsync_shop_data", {LABEL_VOLUME_KIND: "claim"}))
    fake.add_volume("podsync-emptydir_web-uid_handmade")
    other = ObservedVolume(
        "podsync-emptydir_other_cache",
        {LABEL_VOLUME_KIND: "empty-dir", LABEL_POD_UID: "other", LABEL_VOLUME_NAME: "cache"},
    )
    fake.add_volume(other)
    clock.advance(5)
    desired_other = parse(
        pod_file().replace("web-uid", "other").replace("name: web", "name: other")
    )

    result = sync([desired_other], fake, options=options, clock=clock, probe=False)

    assert result.ok, result.apply_result.summary()
    web = next(p for p in result.plan.pods if p.uid == "web-uid").actions
    assert isinstance(web[-1], RemoveVolume) or isinstance(web[-2], RemoveVolume)
    removal = next(a for a in web if isinstance(a, RemoveVolume))
    assert (VOLUME, Reason.ORPHANED_POD_VOLUME) == (removal.volume, removal.reason)
    assert all(isinstance(a, Kill | Remove) for a in web[: web.index(removal)])
    names = {v.name for v in fake.volumes}
    assert VOLUME not in names
    assert {"podsync_shop_data", "podsync-emptydir_web-uid_handmade", other.name} <= names
    assert 1 == [c.args for c in fake.calls if c.name == "remove_volume"].count((VOLUME,))


def test_a_volume_stays_while_a_container_of_its_pod_is_kept(tmp_path: Path) -> None:
    """An exited container younger than the minimum age is kept: the volume it mounts
    stays (the engine would refuse), and goes with the container later."""
    fake, clock = fake_and_clock()
    options = PlanOptions(
        scope=NODE_SCOPE, root_dir=str(tmp_path), gc=GCPolicy(max_per_container=0, min_age=60.0)
    )
    sync([POD], fake, options=options, clock=clock, probe=False)
    clock.advance(5)

    first = sync([], fake, options=options, clock=clock, probe=False)

    assert first.ok, first.apply_result.summary()
    assert not [a for a in first.plan.actions if isinstance(a, RemoveVolume)]
    assert [VOLUME, STATE] == [v.name for v in fake.volumes]
    clock.advance(120)
    second = sync([], fake, options=options, clock=clock, probe=False)
    assert second.ok, second.apply_result.summary()
    assert [] == fake.volumes


def test_without_deletions_nothing_is_removed(tmp_path: Path) -> None:
    fake, clock = fake_and_clock()
    sync(
        [POD],
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        clock=clock,
        probe=False,
    )
    keep = PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path), allow_deletions=False)

    made = plan([], fake.list_containers(), now=2000.0, options=keep, volumes=fake.list_volumes())

    assert not made.has_changes


def test_a_volume_left_without_containers_is_removed_when_listed() -> None:
    """A pod's volume whose containers are all gone (a removal that failed before) is
    removed by the next plan that has the volume list."""
    mine = ObservedVolume(
        VOLUME,
        {LABEL_VOLUME_KIND: "empty-dir", LABEL_POD_UID: "web-uid", LABEL_VOLUME_NAME: "cache"},
    )

    made = plan([], now=1.0, options=OPTIONS, volumes=[mine])

    (pod_plan,) = made.pods
    assert ("", "web-uid") == (pod_plan.pod, pod_plan.uid)
    assert [f"RemoveVolume {VOLUME}"] == kinds(pod_plan.actions)
    assert (
        f"remove volume {VOLUME}: the emptyDir cache of a pod that is no longer desired"
        in made.render()
    )

    # ...but not before every source was read: whose pod it is cannot be told.
    waiting = attrs.evolve(OPTIONS, ready_sources=frozenset())
    assert not plan([], now=1.0, options=waiting, volumes=[mine]).has_changes


def test_every_kind_of_a_gone_pods_volumes_is_removed_and_said_so() -> None:
    """Each volume podsync made for a pod that is no longer desired - its state, an
    emptyDir's, a content volume's, a record - gets its own removal, with its pod's uid,
    the reason of its kind and a message naming what it held; a desired pod's volume,
    listed first, is left alone and holds none of them back."""

    def labelled(name: str, kind: str, uid: str) -> ObservedVolume:
        return ObservedVolume(name, {LABEL_VOLUME_KIND: kind, LABEL_POD_UID: uid})

    volumes = [
        labelled("a-kept", "empty-dir", "web-uid"),
        labelled("b-state", "pod-state", "gone-uid"),
        labelled("c-stopped", "stop-record", "gone-uid"),
        labelled("d-files", "content", "gone-uid"),
        labelled("e-cache", "empty-dir", "gone-uid"),
        labelled("f-record", "content-record", "gone-uid"),
    ]

    made = plan([POD], now=1.0, options=OPTIONS, volumes=volumes, images=[])

    def gone(name: str, reason: Reason, what: str) -> RemoveVolume:
        message = f"remove volume {name}: the {what} of a pod that is no longer desired"
        return RemoveVolume("", "gone-uid", name, reason, message)

    assert [
        gone("b-state", Reason.ORPHANED_POD_VOLUME, "state"),
        gone("c-stopped", Reason.ORPHANED_RECORD, "stop-record"),
        gone("d-files", Reason.ORPHANED_POD_VOLUME, "files of volume ?"),
        gone("e-cache", Reason.ORPHANED_POD_VOLUME, "emptyDir ?"),
        gone("f-record", Reason.ORPHANED_RECORD, "record of the files of volume ?"),
    ] == [a for a in made.actions if isinstance(a, RemoveVolume)]
    # One pod plan for them, as for the pod directory of a pod without containers.
    assert [("", "")] == [(p.pod, p.full_name) for p in made.pods if p.uid == "gone-uid"]


def test_a_gone_pods_volume_goes_with_its_containers_under_its_own_name(tmp_path: Path) -> None:
    """A pod no longer desired whose exited containers this plan removes: its emptyDir
    volume is removed after them, in the pod's own plan (named by its pod). While a
    source is not ready, a volume of a pod without containers is kept - and the volumes
    after it are still looked at."""
    fake, clock = fake_and_clock()
    sync(
        [POD],
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        clock=clock,
        probe=False,
    )
    for c in fake.containers:
        fake.exit(c.id, 0)
        if c.labels[LABEL_CONTAINER] != "net":
            fake.remove_container(c.id)  # only the network container is left
    unknown = ObservedVolume("a-unknown", {LABEL_VOLUME_KIND: "empty-dir", LABEL_POD_UID: "zz"})
    options = PlanOptions(
        scope=NODE_SCOPE, root_dir=str(tmp_path), ready_sources=frozenset({"file"})
    )

    # An hour on: past the garbage collector's minimum age of exited containers.
    later = clock() + 3600
    made = plan(
        [], fake.list_containers(), now=later, options=options, volumes=[unknown, *fake.volumes]
    )

    (web,) = [p for p in made.pods if p.uid == "web-uid"]
    assert isinstance(web.actions[-1], RemoveVolume)
    assert ("shop/web", STATE) == (web.actions[-1].pod, web.actions[-1].volume)
    assert [VOLUME, STATE] == [a.volume for a in made.actions if isinstance(a, RemoveVolume)]


@pytest.mark.parametrize("running", [True, False])
def test_a_removal_refused_by_the_engine_fails_the_action(tmp_path: Path, running: bool) -> None:
    """FakeRuntime, as Docker, refuses to remove a volume a container mounts, running or
    not; apply reports it as a failed action, and the volume stays."""
    fake, clock = fake_and_clock()
    sync(
        [POD],
        fake,
        options=PlanOptions(scope=NODE_SCOPE, root_dir=str(tmp_path)),
        clock=clock,
        probe=False,
    )
    if not running:
        for c in fake.containers:
            fake.exit(c.id, 0)
    removal = RemoveVolume("shop/web", "web-uid", VOLUME, Reason.ORPHANED_POD_VOLUME, "remove it")
    pod_plan = PodPlan("shop/web", "web-uid", "web.shop.file", (removal,))

    result = apply(Plan(pods=(pod_plan,)), fake, clock=clock)

    assert not result.ok
    assert "volume is in use" in result.failures[0].error
    assert [VOLUME, STATE] == [v.name for v in fake.volumes]


# --- the host directories of earlier versions ----------------------------------------


def test_only_emptydir_directories_of_marked_pod_directories_are_read_or_removed(
    tmp_path: Path,
) -> None:
    """The copy and the removal touch nothing but ``<root>/<uid>/volumes/empty/<volume>``
    of a pod directory podsync made (its marker), never through a symlink."""
    from podsync.applier._host_empty_dirs import (
        list_host_empty_dirs,
        read_host_tree,
        remove_host_empty_dir,
    )
    from podsync.host._files import HostPathRefused

    root = tmp_path / "root"
    made = root / "uid-a" / "volumes" / "empty" / "cache"
    made.mkdir(parents=True)
    (made / "f").write_bytes(b"data")
    unmarked = root / "uid-b" / "volumes" / "empty" / "cache"
    unmarked.mkdir(parents=True)
    (root / "uid-a" / ".podsync-pod").touch()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret").write_bytes(b"not podsync's")
    (root / "uid-c").mkdir()
    (root / "uid-c" / ".podsync-pod").touch()
    (root / "uid-c" / "volumes").symlink_to(outside)

    pods = [("uid-a", ["cache", "other"]), ("uid-b", ["cache"]), ("uid-c", ["empty"])]
    assert {("uid-a", "cache")} == list_host_empty_dirs(str(root), pods)
    assert ["f"] == [e.path for e in read_host_tree(str(made), str(root))]
    for refused in (unmarked, root / "uid-c" / "volumes" / "empty" / "x", outside, root / "uid-a"):
        with pytest.raises(HostPathRefused):
            list(read_host_tree(str(refused), str(root)))
        with pytest.raises(HostPathRefused):
            remove_host_empty_dir(str(refused), str(root))
    assert (outside / "secret").exists()
    assert remove_host_empty_dir(str(made), str(root))
    assert not made.exists()
    assert (root / "uid-a" / ".podsync-pod").exists()
    assert not remove_host_empty_dir(str(made), str(root))


def test_a_dry_run_shows_the_volume_and_down_removes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``podsync plan`` shows the volume's create with its reason and changes nothing;
    ``podsync down`` removes the pod's containers, then its volume."""
    from podsync.cli import _main as cli

    source = tmp_path / "web.yaml"
    source.write_text(pod_file())
    clock = FakeClock(1000.0, step=0.001)
    fake = FakeRuntime(images=IMAGES, clock=clock)

    def run(*argv: str) -> int:
        common = ["--root-dir", str(tmp_path / "root")]
        if argv[0] != "down":
            common += ["--network-mode", "none"]
        return cli.main(
            [argv[0], *common, *argv[1:], str(source)],
            runtime_factory=lambda host: fake,
            clock=clock,
            sleep=clock.advance,
        )

    assert 0 == run("plan")
    out = capsys.readouterr().out
    assert f"create volume {VOLUME}: emptyDir cache: first use  [empty-dir-first-use]" in out
    assert [] == fake.volumes
    assert 0 == run("apply")
    assert [VOLUME, STATE] == [v.name for v in fake.volumes]
    capsys.readouterr()

    assert 0 == run("down")

    assert f"remove volume {VOLUME}: the emptyDir cache of a pod that is no longer desired" in (
        capsys.readouterr().out
    )
    assert [] == fake.containers
    assert [] == fake.volumes


def test_a_spec_label_says_whether_its_container_mounted_an_empty_dir_on_disk() -> None:
    """How a stopped container of an earlier podsync is judged (may it bind an emptyDir
    host directory?): from its canonical spec, as ``_hashing`` writes it."""
    from podsync.planner._empty_dirs import _may_mount_empty_dir
    from podsync.spec._hashing import canonical_spec_text

    pod = parse(
        pod_file().replace(
            "  - name: scratch\n",
            "  - name: host\n    hostPath: {path: /srv}\n  - name: scratch\n",
        )
    )
    app, sidecar, plain = pod.containers
    assert _may_mount_empty_dir(canonical_spec_text(app, pod))  # cache and scratch
    assert _may_mount_empty_dir(canonical_spec_text(sidecar, pod))  # cache
    assert not _may_mount_empty_dir(canonical_spec_text(plain, pod))
    memory_only = attrs.evolve(app, volume_mounts=app.volume_mounts[1:])
    assert not _may_mount_empty_dir(canonical_spec_text(memory_only, pod))
    assert _may_mount_empty_dir("")  # no record: it may
