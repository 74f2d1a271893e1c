"""The layout of a configMap/secret/downwardAPI volume written through the engine: the
entries a write sends, and what the volume holds after it (FakeRuntime applies entries
as Docker's archive API does: tests/support/conformance_files.py)."""

from __future__ import annotations

import pytest

from podsync.model._pod import ObservedImage
from podsync.model._volume import VolumeContent, VolumeFile, VolumeKind
from podsync.model._volume_entries import EntryKind
from podsync.spec._content_layout import (
    PAYLOADS,
    RECORD_PATH,
    next_payload,
    parse_record,
    payload_entries,
)
from podsync.testing import FakeRuntime

IMAGE = "podsync-test/pause:latest"
VOLUME = "podsync-content_uid-1_config"


def _content(**files: bytes) -> VolumeContent:
    return VolumeContent(
        VolumeKind.CONFIG_MAP,
        tuple(VolumeFile(k.replace("__", "/"), v) for k, v in sorted(files.items())),
        {"ConfigMap default/settings": "d1"},
    )


def _engine() -> FakeRuntime:
    runtime = FakeRuntime()
    runtime.add_image(ObservedImage("sha256:pause", (IMAGE,)))
    return runtime


def _write(runtime: FakeRuntime, content: VolumeContent, fs_group: int | None = None) -> None:
    """What apply does: the payload after the one the record names."""
    record = runtime.read_volume_file(VOLUME, RECORD_PATH, limit=65536)
    found = parse_record("uid-1", "config", record, VOLUME) if record else None
    previous = found.payload if found else ""
    entries = payload_entries(
        content,
        fs_group,
        payload=next_payload(previous),
        previous=previous,
        linked=found.names if found else (),
    )
    runtime.write_volume(VOLUME, entries)


def _visible(runtime: FakeRuntime) -> dict[str, bytes | None]:
    """What a reader of each top-level name gets (None: ENOENT), following the links."""
    files = runtime.volume_files(VOLUME)
    data_target = files["..data"].target
    out: dict[str, bytes | None] = {}
    for path, entry in files.items():
        if "/" in path or path.startswith("..") or path == ".":
            continue
        assert entry.kind is EntryKind.SYMLINK
        assert entry.target == f"..data/{path}"
        real = files.get(f"{data_target}/{path}")
        if real is None:
            out[path] = None
        else:
            out[path] = real.data if real.kind is EntryKind.FILE else b"<directory>"
    return out


def test_a_first_write_makes_the_kubelets_layout() -> None:
    runtime = _engine()
    _write(runtime, _content(**{"app.conf": b"debug=1\n", "nested__key": b"v"}))
    files = runtime.volume_files(VOLUME)
    assert files["..data"].kind is EntryKind.SYMLINK
    assert files["..data"].target == PAYLOADS[0]
    assert files[f"{PAYLOADS[0]}/app.conf"].data == b"debug=1\n"
    assert files[f"{PAYLOADS[0]}/nested"].kind is EntryKind.DIRECTORY
    assert files["nested"].target == "..data/nested"
    # The other payload's place is an empty file.
    assert files[PAYLOADS[1]].kind is EntryKind.FILE
    assert files[PAYLOADS[1]].data == b""
    assert _visible(runtime) == {"app.conf": b"debug=1\n", "nested": b"<directory>"}
    record = runtime.read_volume_file(VOLUME, RECORD_PATH, limit=65536)
    assert record is not None
    found = parse_record("uid-1", "config", record, VOLUME)
    assert found is not None
    assert (found.payload, found.names, found.volume) == (
        PAYLOADS[0],
        ("app.conf", "nested"),
        VOLUME,
    )
    assert found.digest == _content(**{"app.conf": b"debug=1\n", "nested__key": b"v"}).digest


def test_a_new_payload_swaps_and_leaves_nothing_of_the_old_one() -> None:
    runtime = _engine()
    _write(runtime, _content(password=b"old-secret", other=b"x"))
    _write(runtime, _content(password=b"new-secret"))
    files = runtime.volume_files(VOLUME)
    assert files["..data"].target == PAYLOADS[1]
    # The old payload is an empty file: none of its files is left.
    assert files[PAYLOADS[0]].kind is EntryKind.FILE
    assert files[PAYLOADS[0]].data == b""
    assert not any(p.startswith(PAYLOADS[0] + "/") for p in files)
    assert b"old-secret" not in b"".join(e.data for e in files.values())
    # A removed key's link dangles (open fails with ENOENT), a kept one reads the new value.
    assert _visible(runtime) == {"password": b"new-secret", "other": None}
    _write(runtime, _content(password=b"third", other=b"back"))
    assert runtime.volume_files(VOLUME)["..data"].target == PAYLOADS[0]
    assert _visible(runtime) == {"password": b"third", "other": b"back"}


def test_a_write_does_not_rewrite_the_links_the_current_payload_has() -> None:
    content = _content(a=b"1", b=b"2")
    entries = payload_entries(
        _content(a=b"1", c=b"3"), None, payload=PAYLOADS[1], previous=PAYLOADS[0], linked=("a", "b")
    )
    links = [e.path for e in entries if e.kind is EntryKind.SYMLINK]
    # Only the new name and ..data: a link written over a link is removed for a moment.
    assert links == ["c", "..data"]
    assert entries[-1].path == PAYLOADS[0]
    assert entries[-1].data == b""
    assert content.files  # (the content a and b: the current payload)


def test_secret_files_keep_their_mode_and_fs_group_owns_everything() -> None:
    content = VolumeContent(
        VolumeKind.SECRET, (VolumeFile("password", b"s3cret", 0o400),), {"Secret default/db": "x"}
    )
    entries = payload_entries(content, 2000, payload=PAYLOADS[0], previous="")
    by_path = {e.path: e for e in entries}
    assert by_path[f"{PAYLOADS[0]}/password"].mode == 0o440
    assert by_path[f"{PAYLOADS[0]}/password"].gid == 2000
    assert by_path["."].mode == 0o2755
    assert by_path["."].gid == 2000
    assert by_path[PAYLOADS[0]].mode == 0o2755
    plain = payload_entries(content, None, payload=PAYLOADS[0], previous="")
    assert {e.path: e for e in plain}[f"{PAYLOADS[0]}/password"].mode == 0o400
    assert {e.path: e for e in plain}["."].mode == 0o755


def test_a_payload_is_never_written_over_the_current_one() -> None:
    with pytest.raises(ValueError, match="cannot write payload"):
        payload_entries(_content(a=b"1"), None, payload=PAYLOADS[0], previous=PAYLOADS[0])


def test_a_record_that_podsync_did_not_write_is_none() -> None:
    assert parse_record("u", "v", b"[]", VOLUME) is None
    assert parse_record("u", "v", b'{"digest":"d","sources":{},"payload":"..x"}', VOLUME) is None
