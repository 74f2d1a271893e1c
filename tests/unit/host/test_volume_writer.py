"""The host writer of configMap, secret and downwardAPI volumes (issue 14): the kubelet's
atomic writer layout (``pkg/volume/util/atomic_writer.go``) under the pod's directory,
a ``..data`` swap on change, nothing written when unchanged, and podsync's record."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from podsync.host._files import POD_DIR_MARKER, HostPathRefused
from podsync.host._volume_writer import DATA_DIR, RECORD, parse_record, read_record, write_volume
from podsync.model._volume import VolumeContent, VolumeFile, VolumeKind

NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z
UID = "6b1c2d3e-0000-4000-8000-000000000001"


def settings(mode: str = "production", *, extra: bool = True) -> VolumeContent:
    files = [VolumeFile("app.conf", b"color=blue\n"), VolumeFile("env/mode", mode.encode(), 0o600)]
    if extra:
        files.append(VolumeFile("extra", b"x", 0o444))
    return VolumeContent(VolumeKind.CONFIG_MAP, tuple(files), {"ConfigMap default/settings": mode})


@pytest.fixture
def volume(tmp_path: Path) -> Path:
    return tmp_path / UID / "volumes" / "configmap" / "config"


def payloads(volume: Path) -> list[str]:
    return sorted(
        p.name
        for p in volume.iterdir()
        if p.name.startswith("..") and p.is_dir() and not p.is_symlink()
    )


def test_the_kubelets_layout(tmp_path: Path, volume: Path) -> None:
    os.umask(0o022)
    assert write_volume(str(volume), str(tmp_path), settings(), now=NOW)
    (payload,) = payloads(volume)
    assert payload.startswith("..2027_01_15_08_00_00.")
    assert os.readlink(volume / DATA_DIR) == payload
    # The user-visible names are symlinks into ..data, top-level names only.
    assert sorted(p.name for p in volume.iterdir() if not p.name.startswith("..")) == [
        "app.conf",
        "env",
        "extra",
    ]
    assert os.readlink(volume / "app.conf") == "..data/app.conf"
    assert os.readlink(volume / "env") == "..data/env"
    assert (volume / "env" / "mode").read_bytes() == b"production"
    # Modes as given, whatever the umask; directories readable by every user.
    assert stat.S_IMODE((volume / "env" / "mode").stat().st_mode) == 0o600
    assert stat.S_IMODE((volume / "app.conf").stat().st_mode) == 0o644
    assert stat.S_IMODE((volume / "extra").stat().st_mode) == 0o444
    assert stat.S_IMODE(volume.stat().st_mode) == 0o755
    assert stat.S_IMODE((volume / payload).stat().st_mode) == 0o755
    # The pod directory is podsync's (marked), so the teardown removes it.
    assert (tmp_path / UID / POD_DIR_MARKER).is_file()


def test_unchanged_content_is_not_written_again(tmp_path: Path, volume: Path) -> None:
    assert write_volume(str(volume), str(tmp_path), settings(), now=NOW)
    before = payloads(volume)
    assert not write_volume(str(volume), str(tmp_path), settings(), now=NOW + 60)
    assert payloads(volume) == before


def test_a_change_swaps_data_and_removes_the_old_payload(tmp_path: Path, volume: Path) -> None:
    write_volume(str(volume), str(tmp_path), settings(), now=NOW)
    (old,) = payloads(volume)
    reader = os.open(volume / "env" / "mode", os.O_RDONLY)  # a reader of the old payload
    assert write_volume(str(volume), str(tmp_path), settings("staging", extra=False), now=NOW + 60)
    (new,) = payloads(volume)
    assert new != old
    assert new.startswith("..2027_01_15_08_01_00.")
    assert os.readlink(volume / DATA_DIR) == new
    assert (volume / "env" / "mode").read_bytes() == b"staging"
    # A name the new payload does not have is gone; the old reader still reads its file.
    assert not os.path.lexists(volume / "extra")
    assert os.read(reader, 100) == b"production"
    os.close(reader)


def test_the_record_describes_the_files_it_swapped_with(tmp_path: Path, volume: Path) -> None:
    assert read_record(str(volume), str(tmp_path)) is None
    content = settings()
    write_volume(str(volume), str(tmp_path), content, now=NOW)
    data = read_record(str(volume), str(tmp_path))
    assert data is not None
    assert (volume / DATA_DIR / RECORD).read_bytes() == data
    observed = parse_record(UID, "config", data)
    assert observed is not None
    assert (observed.digest, observed.sources) == (content.digest, content.sources)
    assert parse_record(UID, "config", b"not json") is None


def test_fs_group_owns_the_files(tmp_path: Path, volume: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving files to another group needs root")
    write_volume(str(volume), str(tmp_path), settings(), fs_group=2345, now=NOW)
    mode_file = volume / "env" / "mode"
    assert mode_file.stat().st_gid == 2345
    # SetVolumeOwnership, read-only volume: 0440 ORed in; directories setgid and 0110.
    assert stat.S_IMODE(mode_file.stat().st_mode) == 0o640
    assert stat.S_IMODE((volume / "env").stat().st_mode) == 0o2755
    # A new fsGroup is another payload.
    assert write_volume(str(volume), str(tmp_path), settings(), fs_group=2346, now=NOW)
    assert mode_file.stat().st_gid == 2346


def test_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    with pytest.raises(HostPathRefused):
        write_volume(str(tmp_path.parent / "elsewhere"), str(tmp_path), settings(), now=NOW)
    with pytest.raises(HostPathRefused):
        write_volume(str(tmp_path / "x" / ".." / ".."), str(tmp_path), settings(), now=NOW)


def test_a_file_in_the_way_of_a_name_is_refused(tmp_path: Path, volume: Path) -> None:
    volume.mkdir(parents=True)
    (volume / "app.conf").write_text("someone else's")
    with pytest.raises(HostPathRefused, match="in the way"):
        write_volume(str(volume), str(tmp_path), settings(), now=NOW)
    # Nothing half-written is left: no payload, no ..data.
    assert payloads(volume) == []
    assert not os.path.lexists(volume / DATA_DIR)


def test_racing_writers_leave_a_whole_payload(tmp_path: Path, volume: Path) -> None:
    """Two syncs writing at once (one lock per volume directory): ``..data`` always
    names a whole payload, and only that one is left."""
    import threading

    def write(mode: str) -> None:
        for n in range(20):
            write_volume(str(volume), str(tmp_path), settings(f"{mode}{n}"), now=NOW + n)

    threads = [threading.Thread(target=write, args=(m,)) for m in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (payload,) = payloads(volume)
    assert os.readlink(volume / DATA_DIR) == payload
    assert (volume / "env" / "mode").read_bytes() in (b"a19", b"b19")
    record = read_record(str(volume), str(tmp_path))
    assert record is not None
