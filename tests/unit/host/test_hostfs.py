"""Files on the host: pod directories, emptyDir volumes and termination-message files
under the root directory (seed runContainer, emptyDir SetUp, TearDown), and the
refusals that keep podsync inside the root."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from podsync import ActionStatus, Container, Pod, apply
from podsync.actions._actions import Create, CreateSpec, Plan, PodPlan, Reason, RemovePodDir
from podsync.actions._options import PlanOptions
from podsync.host._files import (
    POD_DIR_MARKER,
    HostPathRefused,
    list_pod_dirs,
    make_host_paths,
    remove_pod_dir,
)
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER
from podsync.testing import FakeRuntime


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "root"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the root with a file in it that must survive every test."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "precious").write_text("keep me")
    return path


def spec(directories: tuple[str, ...] = (), files: tuple[str, ...] = ()) -> CreateSpec:
    return CreateSpec(name="k8s_x", image="busybox", directories=directories, files=files)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_make_host_paths(root):
    """emptyDir directories and the termination-message file (empty) are made, with
    their parents, 0750 before the umask (seed), and the pod directory is marked; the
    emptyDir's own directory is 0777 whatever the umask, as the kubelet makes it (any
    user of the pod may write there)."""
    umask = os.umask(0o022)
    os.umask(umask)
    empty = root / "uid1" / "volumes" / "empty" / "scratch"
    message = root / "uid1" / "app" / "k8s_app.1_web.default.api_uid1_00000000"

    make_host_paths(spec((str(empty),), (str(message),)), str(root))

    assert empty.is_dir()
    assert b"" == message.read_bytes()
    assert (root / "uid1" / POD_DIR_MARKER).is_file()
    assert 0o777 == mode(empty)
    assert 0o750 & ~umask == mode(empty.parent)
    assert 0o750 & ~umask == mode(message.parent)
    assert {"uid1"} == list_pod_dirs(str(root))


def test_make_host_paths_keeps_what_exists(root):
    """Making the paths again changes nothing: an existing file is not truncated."""
    message = root / "uid1" / "app" / "instance"
    make_host_paths(spec(files=(str(message),)), str(root))
    message.write_text("died: out of memory")

    make_host_paths(spec(files=(str(message),)), str(root))

    assert "died: out of memory" == message.read_text()


@pytest.mark.parametrize(
    "make",
    [
        # A path that climbs out of the root with "..".
        lambda root, outside: spec((f"{root}/../outside/evil",)),
        # An absolute path elsewhere.
        lambda root, outside: spec(files=(f"{outside}/evil",)),
        # The root itself is not a pod directory.
        lambda root, outside: spec((str(root),)),
        # A file directly in the root is in no pod directory.
        lambda root, outside: spec(files=(f"{root}/evil",)),
        # A relative path.
        lambda root, outside: spec(("uid1/volumes",)),
    ],
)
def test_make_host_paths_refuses_paths_outside_the_root(root, outside, make):
    """Nothing is created outside the root directory, however the path is spelled."""
    root.mkdir()

    with pytest.raises(HostPathRefused):
        make_host_paths(make(root, outside), str(root))

    assert ["precious"] == os.listdir(outside)
    assert [] == os.listdir(root)


def test_make_host_paths_does_not_follow_a_symlink_out(root, outside):
    """A symlink inside the root that points out of it is not followed."""
    root.mkdir()
    (root / "uid1").symlink_to(outside)

    with pytest.raises(HostPathRefused, match="not inside the root directory"):
        make_host_paths(spec((f"{root}/uid1/volumes/empty/v",)), str(root))

    assert ["precious"] == os.listdir(outside)


def make_pod_dir(root: Path, uid: str) -> Path:
    make_host_paths(spec((f"{root}/{uid}/volumes/empty/v",)), str(root))
    (root / uid / "volumes" / "empty" / "v" / "data").write_text("pod data")
    return root / uid


def test_remove_pod_dir(root):
    """A pod directory goes with everything in it; a missing one is gone already."""
    pod_dir = make_pod_dir(root, "uid1")

    assert remove_pod_dir(str(pod_dir), str(root))
    assert not remove_pod_dir(str(pod_dir), str(root))
    assert not pod_dir.exists()


def test_remove_pod_dir_does_not_follow_symlinks_inside(root, outside):
    """A symlink inside the pod directory is removed, never followed."""
    pod_dir = make_pod_dir(root, "uid1")
    (pod_dir / "link").symlink_to(outside)

    remove_pod_dir(str(pod_dir), str(root))

    assert not pod_dir.exists()
    assert ["precious"] == os.listdir(outside)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        # ".." out of the root.
        ("{root}/../outside", "not a directory directly under"),
        # Deeper than a pod directory.
        ("{root}/uid1/volumes", "not a directory directly under"),
        # The root itself.
        ("{root}", "not a directory directly under"),
        # A relative path.
        ("outside", "expected an absolute path"),
    ],
)
def test_remove_pod_dir_refuses_paths(root, outside, path, message):
    """Only a directory directly under the root can be torn down."""
    make_pod_dir(root, "uid1")

    with pytest.raises(HostPathRefused, match=message):
        remove_pod_dir(path.format(root=root), str(root))

    assert ["precious"] == os.listdir(outside)
    assert (root / "uid1" / "volumes").is_dir()


def test_remove_pod_dir_refuses_a_symlinked_pod_dir(root, outside):
    """A pod directory that is a symlink (to outside the root) is not torn down, and
    nothing it points to is deleted."""
    root.mkdir()
    (outside / POD_DIR_MARKER).write_text("")
    (root / "uid1").symlink_to(outside)

    with pytest.raises(HostPathRefused, match="not a real directory"):
        remove_pod_dir(str(root / "uid1"), str(root))

    assert {"precious", POD_DIR_MARKER} == set(os.listdir(outside))


def test_remove_pod_dir_refuses_a_directory_podsync_did_not_make(root):
    """A directory without the marker is not podsync's: it stays."""
    (root / "photos").mkdir(parents=True)

    with pytest.raises(HostPathRefused, match="marker"):
        remove_pod_dir(str(root / "photos"), str(root))

    assert (root / "photos").is_dir()


def test_list_pod_dirs(root, outside):
    """Only marked real directories are pod directories; a missing root has none."""
    assert set() == list_pod_dirs(str(root))
    make_pod_dir(root, "uid1")
    (root / "unmarked").mkdir()
    (root / "file").write_text("")
    (root / "link").symlink_to(root / "uid1")

    assert {"uid1"} == list_pod_dirs(str(root))


def test_apply_refuses_a_teardown_outside_the_root(root, outside):
    """A plan that asks to tear down a directory outside the root (a tampered saved
    plan, a wrong root_dir) gets a failed result, and nothing is deleted."""
    root.mkdir()
    (outside / POD_DIR_MARKER).write_text("")
    action = RemovePodDir("x", f"{root}/../outside", Reason.ORPHANED_POD_DIR, "tear down")
    the_plan = Plan(
        pods=(PodPlan("", "x", "", (action,)),), options=PlanOptions(root_dir=str(root))
    )

    rt = FakeRuntime()

    result = apply(the_plan, rt, clock=rt.clock)

    assert [ActionStatus.FAILED] == [r.status for r in result.results]
    assert "not a directory directly under" in result.results[0].error
    assert {"precious", POD_DIR_MARKER} == set(os.listdir(outside))


def test_apply_refuses_host_paths_outside_the_root(tmp_path, outside):
    """A create whose host paths are not under apply's root directory fails before the
    container is created."""
    create = Create(
        "default/x",
        "u",
        "c",
        spec(files=(f"{outside}/evil",)),
        Reason.MISSING,
        "create default/x/c",
    )
    rt = FakeRuntime(images=["busybox"])

    the_plan = Plan(
        pods=(PodPlan("default/x", "u", "", (create,)),),
        options=PlanOptions(root_dir=str(tmp_path / "root")),
    )

    result = apply(the_plan, rt, clock=rt.clock)

    assert ActionStatus.FAILED == result.results[0].status
    assert "not inside the root directory" in result.results[0].error
    assert [] == rt.calls
    assert ["precious"] == os.listdir(outside)


def test_a_long_pod_gets_its_termination_message_file(root):
    """Long names and a 253-character uid make a container name longer than a file
    name may be, and a state volume name longer than a volume's; the termination-
    message file is still written into the pod's state volume and bound, and nothing
    is made under the root directory."""
    pod = Pod(
        "w" * 63,
        (Container("c" * 63, "busybox", termination_message_path="/dev/termination-log"),),
        namespace="n" * 63,
        uid="u" * 253,
    )
    rt = FakeRuntime(images=["busybox", "registry.k8s.io/pause:3.10"])
    the_plan = plan([pod], now=1000.0, options=PlanOptions(root_dir=str(root)))

    result = apply(the_plan, rt, clock=rt.clock)

    assert [] == [r.error for r in result.failures]
    (app,) = [c for c in rt.containers if c.labels[LABEL_CONTAINER] == "c" * 63]
    (mount,) = rt.spec(app.id).file_mounts
    assert "/dev/termination-log" == mount.container_path
    assert len(mount.volume) <= 255
    assert mount.volume.startswith("podsync-state_uuu")
    assert len(mount.path.split("/")[-1]) <= 255
    assert mount.path in rt.volume_files(mount.volume)
    assert not os.path.exists(root)


def test_fs_group_owns_the_empty_dir_directories(root: Path) -> None:
    """With an fsGroup, each emptyDir directory belongs to that group, group-writable and
    setgid, so files made in it keep the group (the kubelet's SetVolumeOwnership,
    pkg/volume/volume_linux.go); the termination-message file is left alone."""
    from podsync.model._security import ContainerSecurity

    gid = 2000 if os.geteuid() == 0 else os.getegid()
    volume = root / "uid1" / "volumes" / "empty" / "data"
    message = root / "uid1" / "app" / "x" / "termination-log"
    spec = CreateSpec(
        name="x",
        image="busybox",
        directories=(str(volume),),
        files=(str(message),),
        security=ContainerSecurity(fs_group=gid),
    )

    make_host_paths(spec, str(root))

    info = volume.stat()
    assert (gid, 0o2770) == (info.st_gid, stat.S_IMODE(info.st_mode) & 0o2770)
    assert 0 == message.stat().st_mode & stat.S_ISGID


def test_without_fs_group_empty_dir_directories_keep_their_owner(root: Path) -> None:
    volume = root / "uid1" / "volumes" / "empty" / "data"

    make_host_paths(CreateSpec(name="x", image="b", directories=(str(volume),)), str(root))

    assert (os.getegid(), 0) == (volume.stat().st_gid, volume.stat().st_mode & stat.S_ISGID)
