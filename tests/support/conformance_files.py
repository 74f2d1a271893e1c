"""Files in the engine, one suite for two runtimes (see ``tests/support/conformance.py``):
``write_volume``, ``read_volume_file`` and ``read_container_file`` behave alike on
``FakeRuntime`` and on the real engine, where Docker's archive API is the point - what
an exited container still holds (its own files, its volumes) and what it does not (its
``/dev``), how an entry replaces what was at its path, what a refused path does.

The cases are collected with the rest of the suite, by
``tests/unit/runtime/test_conformance.py`` (the fake) and
``tests/engine/test_conformance.py`` (the engine). Modes and owners are checked on the
engine alone (``tests/engine/test_conformance.py``'s
``test_a_written_volume_has_the_entries_modes_and_owners``): the fake keeps what it is
given, the engine is the fact - but for a link's mode, 0777 on both
(``test_a_links_mode_is_always_0777``).
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import pytest

from podsync.model._security import ContainerSecurity
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.spec._volumes import (
    VOLUME_ACCESS_PATH,
    VOLUME_HELPER_IMAGE,
    NamedVolumeMount,
    VolumeFileMount,
)
from tests.support.conformance import Subject, _refusal, exits

LIMIT = 4096


def _dir(path: str, mode: int = 0o755) -> VolumeEntry:
    return VolumeEntry(path, EntryKind.DIRECTORY, mode=mode)


def _file(path: str, data: bytes, mode: int = 0o644) -> VolumeEntry:
    return VolumeEntry(path, EntryKind.FILE, mode=mode, data=data)


def test_written_files_are_read_back_from_the_volume(subject: Subject) -> None:
    """Entries written into a volume are read back from it: a file (cut at the limit),
    nothing for a directory, a link or a path that is not there."""
    volume = subject.volume("files")
    subject.runtime.create_volume(volume, {})
    subject.runtime.write_volume(
        volume,
        [
            _dir(".", 0o777),
            _dir("config"),
            _file("config/app.conf", b"listen 8080\n"),
            VolumeEntry("current", EntryKind.SYMLINK, mode=0o777, target="config/app.conf"),
        ],
    )

    def read(path: str, limit: int = LIMIT) -> bytes | None:
        return subject.runtime.read_volume_file(volume, path, limit=limit)

    assert b"listen 8080\n" == read("config/app.conf")
    assert b"listen" == read("config/app.conf", 6)
    assert (None, None, None) == (read("config"), read("current"), read("config/missing"))
    # The helper containers are gone.
    assert [] == subject.ours()


def test_an_entry_replaces_what_was_at_its_path(subject: Subject) -> None:
    """A file replaces a file; a file replaces a directory with its children; a
    directory over a directory keeps the children (Docker's untar)."""
    volume = subject.volume("replace")
    subject.runtime.create_volume(volume, {})
    write = subject.runtime.write_volume
    first = [_dir("a"), _file("a/one", b"1"), _dir("b"), _file("b/two", b"2")]
    write(volume, first)

    second = [_file("a", b"now a file"), _dir("b", 0o700), _file("b/three", b"3")]
    write(volume, second)

    def read(path: str) -> bytes | None:
        return subject.runtime.read_volume_file(volume, path, limit=LIMIT)

    assert (b"now a file", None) == (read("a"), read("a/one"))
    assert (b"2", b"3") == (read("b/two"), read("b/three"))


def test_a_bad_path_is_refused_and_no_image_is_named(subject: Subject) -> None:
    """A path out of the volume is refused before anything is sent; a good one is
    written with no image named: the runtime finds its own way into the volume, through
    an empty image of its own that the engine then lists."""
    volume = subject.volume("refused")
    subject.runtime.create_volume(volume, {})

    climbing = _refusal(
        lambda: subject.runtime.write_volume(volume, [_file("../x", b"x")]), status=None
    )
    assert "leaves the volume" in climbing.message
    assert None is subject.runtime.read_volume_file(volume, "x", limit=LIMIT)

    subject.runtime.write_volume(volume, [_file("x", b"x")])
    assert b"x" == subject.runtime.read_volume_file(volume, "x", limit=LIMIT)
    # Through a helper container of the runtime's own empty image, listed from then on.
    tags = {tag for image in subject.runtime.list_images() for tag in image.tags}
    assert VOLUME_HELPER_IMAGE in tags


def test_an_exited_container_keeps_its_files_and_volumes_but_not_its_dev(
    subject: Subject,
) -> None:
    """After the process exits, a file it wrote in its own filesystem and one in a
    mounted volume are read; one under ``/dev`` (Docker's tmpfs) is gone - why a
    termination message cannot simply be read from ``/dev/termination-log``."""
    volume = subject.volume("exited")
    process = exits(3)
    spec = subject.spec("app", process, volumes=(NamedVolumeMount(volume, "/data"),))
    if subject.kind == "engine":
        spec = attrs.evolve(
            spec,
            command=(
                "/bin/sh",
                "-c",
                "printf own > /tmp/own; printf kept > /data/kept; "
                "printf gone > /dev/termination-log; exit 3",
            ),
        )
    cid = subject.runtime.create_container(spec)
    subject.runtime.start_container(cid)
    if subject.kind == "fake":
        written = {"/tmp/own": b"own", "/data/kept": b"kept", "/dev/termination-log": b"gone"}
        for path, data in written.items():
            subject.fake.write_container_file(cid, path, data)
    subject.wait_exited(cid, spec.name)

    def read(path: str) -> bytes | None:
        return subject.runtime.read_container_file(cid, path, limit=LIMIT)

    assert b"own" == read("/tmp/own")
    assert b"kept" == read("/data/kept")
    assert None is read("/dev/termination-log")
    assert None is read("/tmp/never-written")
    subject.runtime.remove_container(cid)
    status, message = subject.answer(404, f"No such container: {cid}")
    gone = _refusal(lambda: read("/tmp/own"), status=status)
    assert message in gone.message


def test_a_volume_file_is_bound_in_the_container_and_read_after_it_exited(
    subject: Subject,
) -> None:
    """A file of a volume (``CreateSpec.file_mounts``), written first, is the file at
    ``/dev/termination-log`` for a process of another user: what it writes there is
    read from the exited container (its last bytes with ``tail``) and from the volume.
    How podsync keeps termination messages in the engine (Docker 20.10 mounts no part
    of a volume: the file is bound from the volume's mountpoint)."""
    volume = subject.volume("state")
    subject.runtime.create_volume(volume, {})
    entry = "termination/app-1"
    subject.runtime.write_volume(volume, [VolumeEntry(entry, EntryKind.FILE, mode=0o666)])
    mounted = VolumeFileMount(volume, entry, "/dev/termination-log")
    spec = subject.spec("message", exits(3), file_mounts=(mounted,))
    if subject.kind == "engine":
        spec = attrs.evolve(
            spec,
            command=("/bin/sh", "-c", "printf 'said: goodbye' > /dev/termination-log; exit 3"),
            security=ContainerSecurity(user="1000"),
        )
    cid = subject.runtime.create_container(spec)
    subject.runtime.start_container(cid)
    if subject.kind == "fake":
        subject.fake.write_container_file(cid, "/dev/termination-log", b"said: goodbye")
    subject.wait_exited(cid, spec.name)

    def read(**options: Any) -> bytes | None:
        return subject.runtime.read_container_file(cid, "/dev/termination-log", **options)

    assert b"said: goodbye" == read(limit=LIMIT)
    assert b"goodbye" == read(limit=7, tail=True)
    assert b"said" == read(limit=4)
    in_volume = subject.runtime.read_volume_file(volume, entry, limit=LIMIT)
    assert b"said: goodbye" == in_volume


def test_files_are_written_through_a_container_that_mounts_the_volume(
    subject: Subject,
) -> None:
    """How podsync writes a pod's termination-message files: its network container
    mounts the pod's state volume with the volume's labels - the engine makes the
    volume, labelled, at that create (``NamedVolumeMount.labels``) - and
    ``write_volume(..., through=<its name>)`` writes into the volume through it, created
    or running, without a container made for the write. A container that does not mount
    the volume at ``VOLUME_ACCESS_PATH`` takes the entries among its own files; one that
    does not exist is refused."""
    volume = subject.volume("through")
    labels = (("io.podsync.volume.kind", "pod-state"),)
    mounted = NamedVolumeMount(volume, VOLUME_ACCESS_PATH, no_copy=True, labels=labels)
    holder = subject.spec("holder", volumes=(mounted,))
    cid = subject.runtime.create_container(holder)
    assert [(volume, dict(labels))] == [(v.name, v.labels) for v in subject.our_volumes()]

    def write(path: str, through: str) -> None:
        entry = VolumeEntry(path, EntryKind.FILE, mode=0o666)
        subject.runtime.write_volume(volume, [entry], through=through)

    def read(path: str) -> bytes | None:
        return subject.runtime.read_volume_file(volume, path, limit=LIMIT)

    write("termination/created", holder.name)
    subject.runtime.start_container(cid)
    write("termination/running", holder.name)
    assert (b"", b"") == (read("termination/created"), read("termination/running"))
    bystander = subject.running("bystander")
    write("termination/elsewhere", bystander)
    assert read("termination/elsewhere") is None
    entry = VolumeEntry("termination/x", EntryKind.FILE)
    refused = _refusal(
        functools.partial(subject.runtime.write_volume, through=subject.name("gone")),
        volume,
        [entry],
        status=404,
    )
    assert "no such container" in refused.message.lower()


def test_a_file_mount_of_a_missing_volume_is_refused(subject: Subject) -> None:
    """The file's volume must exist: its mountpoint is the engine's answer."""
    mounted = VolumeFileMount(subject.volume("absent"), "f", "/dev/termination-log")
    refused = _refusal(
        subject.runtime.create_container,
        subject.spec("nofile", exits(0), file_mounts=(mounted,)),
        status=404,
    )
    assert "no such volume" in refused.message.lower()
    assert [] == subject.ours()


def test_a_file_mount_where_a_volume_is_mounted_is_refused(subject: Subject) -> None:
    """A volume's file is a bind: at the path where a volume is mounted too, Docker
    refuses the create with its words (a volume mounted at the termination-message
    file's path, issue 29)."""
    files = subject.volume("files")
    subject.runtime.create_volume(files, {})
    mounted = VolumeFileMount(files, "f", "/dev/termination-log")
    spec = subject.spec(
        "clash",
        exits(0),
        file_mounts=(mounted,),
        volumes=(NamedVolumeMount(subject.volume("data"), "/dev/termination-log"),),
    )

    status, message = subject.answer(400, "Duplicate mount point: /dev/termination-log")
    refused = _refusal(subject.runtime.create_container, spec, status=status)

    assert message == refused.message
    assert [] == subject.ours()


@pytest.mark.podman_differs(
    reason="podman's archive read of a link whose target has its name returns the target"
)
def test_a_read_follows_the_links_among_a_paths_parents(subject: Subject) -> None:
    """A read path whose parent is a symbolic link is resolved (``..data/key``, the
    way podsync reads a content volume's record), a link named last is not, and a link
    written over a link replaces it (the ``..data`` swap)."""
    volume = subject.volume("links")
    subject.runtime.create_volume(volume, {})
    write = subject.runtime.write_volume
    write(
        volume,
        [
            _dir("..payload-1"),
            _file("..payload-1/key", b"one"),
            VolumeEntry("..data", EntryKind.SYMLINK, mode=0o777, target="..payload-1"),
            VolumeEntry("key", EntryKind.SYMLINK, mode=0o777, target="..data/key"),
        ],
    )

    def read(path: str) -> bytes | None:
        return subject.runtime.read_volume_file(volume, path, limit=LIMIT)

    assert (b"one", None) == (read("..data/key"), read("key"))
    write(
        volume,
        [
            _dir("..payload-2"),
            _file("..payload-2/key", b"two"),
            VolumeEntry("..data", EntryKind.SYMLINK, mode=0o777, target="..payload-2"),
            _file("..payload-1", b""),
        ],
    )
    assert (b"two", b"", None) == (read("..data/key"), read("..payload-1"), read("..payload-1/key"))
