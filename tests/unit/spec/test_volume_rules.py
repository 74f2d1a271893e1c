"""The rules of podsync's engine volumes, one test per rule, pure and fast: the records
it keeps as labelled volumes (``podsync.spec._records``), the emptyDir volumes it plans
(``podsync.planner._empty_dirs``) and the atomic-writer layout of content volumes
(``podsync.spec._content_layout``). Each was found unchecked by mutation testing
(``tools/mutation.sh``): its docstring names the function and the mutants it kills
(mutmut 3.8's numbers when it was written; ``mutmut show NAME`` shows one).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from podsync import (
    Create,
    CreateSpec,
    CreateVolume,
    Kill,
    ObservedVolume,
    PlanOptions,
    Pod,
    Reason,
    parse_pods,
    plan,
)
from podsync.model._volume import VolumeContent, VolumeFile, VolumeKind, WrittenVolume
from podsync.model._volume_entries import EntryKind, VolumeEntry
from podsync.planner._empty_dirs import _may_mount_empty_dir
from podsync.spec._content_layout import (
    DATA_DIR,
    PAYLOADS,
    RECORD,
    parse_record,
    payload_entries,
    record_text,
)
from podsync.spec._hashing import canonical_spec_text
from podsync.spec._labels import (
    LABEL_CONTAINER,
    LABEL_EMPTY_DIRS,
    LABEL_POD_STATE,
    LABEL_POD_UID,
    LABEL_RECORD_CONTAINER,
    LABEL_RECORD_DATA,
    LABEL_RECORD_TIME,
    LABEL_VOLUME_KIND,
    VOLUME_KIND_EMPTY_DIR,
    VOLUME_KIND_PROBE_RECORD,
    VOLUME_KIND_STOP_RECORD,
)
from podsync.spec._records import (
    Record,
    probe_record_labels,
    probe_record_volume,
    probe_records,
    records_of,
    stop_record_labels,
    stop_record_volume,
    stop_records,
)
from podsync.spec._volumes import Mount, content_digest, empty_dir_volume_name
from podsync.testing import FakeClock, FakeRuntime

UID = "8f7c2a10-5d1e-4c5b-9a43-0e6d2f1b7c90"
CID = "3b1f0c9e8d7a"

# --- records: podsync's stop and probe records, as labelled volumes ---------------------


def _stop(cid: str = CID, reason: str = "replaced", without: str = "") -> ObservedVolume:
    """The stop record apply writes, with the label ``without`` left out."""
    labels = stop_record_labels(UID, cid, reason)
    labels.pop(without, None)
    return ObservedVolume(stop_record_volume(cid), labels)


def _probe(text: str, at: float, cid: str = CID) -> ObservedVolume:
    return ObservedVolume(probe_record_volume(cid, text), probe_record_labels(UID, cid, text, at))


def test_a_record_names_only_a_container_id_a_volume_name_can_hold() -> None:
    """A container id outside Docker's volume-name alphabet is refused, and the error
    names it (``_checked``: the message, mutant 3)."""
    with pytest.raises(ValueError, match=r"cannot name a record of container 'a/b'"):
        stop_record_volume("a/b")
    with pytest.raises(ValueError, match=r"cannot name a record of container '-x'"):
        probe_record_volume("-x", "{}")


def test_a_probe_record_reads_back_its_time() -> None:
    """The time a probe record is written at is read back exactly (``repr`` of a float):
    the newest record wins by it (``probe_record_labels``: mutant 1; ``records_of``:
    mutants 27, 29, 42, 48)."""
    (record,) = records_of([_probe('{"liveness": 1}', 1_000_000.25)])
    assert record == Record(
        probe_record_volume(CID, '{"liveness": 1}'),
        VOLUME_KIND_PROBE_RECORD,
        UID,
        CID,
        '{"liveness": 1}',
        1_000_000.25,
    )


def test_a_stop_record_has_no_time_and_an_unreadable_time_is_zero() -> None:
    """A stop record carries no time (0.0); a probe record whose time label is not a
    number - a label is engine data - reads as 0.0, the oldest, never as an error
    (``records_of``: mutants 34, 35)."""
    (stop,) = records_of([_stop()])
    assert stop.time == 0.0
    volume = _probe("{}", 5.0)
    volume.labels[LABEL_RECORD_TIME] = "yesterday"
    (probe,) = records_of([volume])
    assert probe.time == 0.0
    assert probe_records([probe]) == {CID: "{}"}


@pytest.mark.parametrize("missing", [LABEL_VOLUME_KIND, LABEL_POD_UID, LABEL_RECORD_CONTAINER])
def test_a_volume_is_a_record_only_with_kind_pod_and_container(missing: str) -> None:
    """A volume is a record only when its labels give a record kind, a pod and a
    container; without any one of them it is not a record - and a volume that is not
    one does not hide the records listed after it (``records_of``: mutants 14, 20, 21,
    26)."""
    broken = _stop("0000aaaa", without=missing)
    assert records_of([broken, _stop()]) == [
        Record(stop_record_volume(CID), VOLUME_KIND_STOP_RECORD, UID, CID, "replaced")
    ]


def test_a_volume_of_another_kind_with_record_labels_is_not_a_record() -> None:
    """Only the two record kinds are records, whatever else the labels say
    (``records_of``: mutant 22)."""
    labels = stop_record_labels(UID, CID, "replaced")
    labels[LABEL_VOLUME_KIND] = VOLUME_KIND_EMPTY_DIR
    assert records_of([ObservedVolume("podsync-stopped_" + CID, labels)]) == []


def test_a_stop_record_without_a_reason_says_unknown() -> None:
    """podsync stopped the container, the reason is lost: ``"unknown"``, whether the
    data label is empty, blank or missing (``stop_records``: mutants 2, 3;
    ``records_of``: mutants 50, 52, 53)."""
    records = records_of(
        [
            _stop("aaaa", ""),
            _stop("bbbb", "  "),
            _stop("cccc", without=LABEL_RECORD_DATA),
            _stop("dddd", "unhealthy"),
        ]
    )
    assert stop_records(records) == {
        "aaaa": "unknown",
        "bbbb": "unknown",
        "cccc": "unknown",
        "dddd": "unhealthy",
    }


def test_the_newest_probe_record_of_a_container_wins_in_any_order() -> None:
    """An interrupted replacement leaves two probe records of a container: the newer one
    (by its time) is read, whichever is listed first, and stop records among them are
    skipped, not the end of the list (``probe_records``: mutants 3, 4, 5)."""
    old, new = _probe('{"n": 1}', 100.0), _probe('{"n": 2}', 200.0)
    other = _probe('{"n": 9}', 50.0, cid="ffff")
    for volumes in ([old, new], [new, old]):
        records = [r for v in volumes for r in records_of([v])]
        assert probe_records(records) == {CID: '{"n": 2}'}
    stop_first = [*records_of([_stop()]), *records_of([new]), *records_of([other])]
    assert probe_records(stop_first) == {CID: '{"n": 2}', "ffff": '{"n": 9}'}


# --- emptyDir volumes: one engine volume per pod volume, and the move from host dirs -----

PAUSE = "registry.k8s.io/pause:3.10"
ROOT = "/srv/podsync"
OPTIONS = PlanOptions(root_dir=ROOT)
CACHE = "podsync-emptydir_web-uid_cache"
# The pod's state volume (its termination-message files): beside the network container
# of an earlier podsync, which does not mount it, created before the first new container.
STATE = "podsync-state_web-uid"
HOST_CACHE = f"{ROOT}/web-uid/volumes/empty/cache"


def web(*, plain: str = "busybox") -> Pod:
    """A pod with an on-disk emptyDir ``cache`` that the app and the sidecar share (the
    kubelet keeps an emptyDir for the life of its pod: pkg/volume/emptydir), a memory
    emptyDir, and a container of image ``plain`` that mounts neither."""
    (pod,) = parse_pods(
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: shop, uid: web-uid}}
spec:
  volumes:
  - name: cache
    emptyDir: {{}}
  - name: scratch
    emptyDir: {{medium: Memory}}
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - {{name: cache, mountPath: /var/cache/app}}
    - {{name: scratch, mountPath: /scratch}}
  - name: sidecar
    image: busybox
    volumeMounts:
    - {{name: cache, mountPath: /cache, readOnly: true}}
  - name: plain
    image: {plain}
""",
        source_name="web.yaml",
        source="file",
    )
    return pod


def _legacy(spec: CreateSpec) -> CreateSpec:
    """``spec`` as a podsync before emptyDirs were engine volumes made it: the emptyDir
    bound from its host directory, no ``LABEL_EMPTY_DIRS``; no termination-message file
    (the pod gives no path), no state volume mounted in the network container."""
    binds = [Mount(HOST_CACHE, m.container_path, m.read_only) for m in spec.volumes if not m.labels]
    return attrs.evolve(
        spec,
        labels={
            k: v for k, v in spec.labels.items() if k not in (LABEL_EMPTY_DIRS, LABEL_POD_STATE)
        },
        volumes=(),
        mounts=(*spec.mounts, *binds),
        directories=(HOST_CACHE,) if binds else (),
        file_mounts=(),
    )


def _legacy_engine(*exited: str) -> FakeRuntime:
    """An engine running ``web()`` as an earlier podsync ran it, with the containers
    ``exited`` exited (status 1) since."""
    fake = FakeRuntime(images=["busybox", "busybox:1.37", PAUSE], clock=FakeClock(100.0, step=0))
    for action in plan([web()], now=100.0, options=OPTIONS).pods[0].actions:
        if isinstance(action, Create):
            cid = fake.create_container(_legacy(action.spec))
            fake.start_container(cid)
    for c in fake.containers:
        if c.labels[LABEL_CONTAINER] in exited:
            fake.exit(c.id, 1)
    return fake


def _replan(fake: FakeRuntime, pod: Pod) -> Sequence[object]:
    made = plan(
        [pod],
        fake.list_containers(),
        now=500.0,
        options=OPTIONS,
        images=fake.list_images(),
        volumes=fake.list_volumes(),
        empty_dirs=[("web-uid", "cache")],
    )
    (pod_plan,) = made.pods
    return pod_plan.actions


def _kinds(actions: Sequence[object]) -> list[str]:
    return [
        f"{type(a).__name__} {getattr(a, 'container', '') or getattr(a, 'volume', '')}"
        for a in actions
    ]


def _create(actions: Sequence[object], container: str) -> CreateSpec:
    (spec,) = [a.spec for a in actions if isinstance(a, Create) and a.container == container]
    return spec


def test_a_running_container_that_mounts_no_empty_dir_does_not_hold_the_move_back() -> None:
    """Both containers that bound the host directory have exited; the one still running
    never mounted it. The pod moves: the volume is made, the directory copied in (the
    message says from where), and the restarted containers mount the volume
    (``binds_host_dirs``: only a running container that mounts an on-disk emptyDir keeps
    the pod on host directories; mutant 7. ``empty_dir_setup``'s message, mutant 31)."""
    actions = _replan(_legacy_engine("app", "sidecar"), web())

    assert _kinds(actions) == [
        f"CreateVolume {STATE}",
        f"CreateVolume {CACHE}",
        "Create app",
        "Create sidecar",
    ]
    (volume,) = [a for a in actions if isinstance(a, CreateVolume) and a.volume == CACHE]
    assert volume.reason is Reason.EMPTY_DIR_MIGRATED
    assert volume.message == (
        f"create volume {CACHE}: emptyDir cache: copy in {HOST_CACHE},"
        " where an earlier podsync kept it, then remove that"
    )
    for name in ("app", "sidecar"):
        spec = _create(actions, name)
        assert [CACHE] == [v.volume for v in spec.volumes]
        assert HOST_CACHE not in [m.host_path for m in spec.mounts]
        assert LABEL_EMPTY_DIRS in spec.labels


def test_stopping_a_container_that_never_bound_the_directory_does_not_stop_the_others() -> None:
    """The pod moves (no container that bound the directory runs), and the container
    replaced in the same plan never mounted the emptyDir: nothing of the directory can
    change any more, so the replacement keeps its usual place - it does not stop first
    (``binds_stopping``: only a stopped container whose recorded spec mounts an on-disk
    emptyDir, mutants 2, 3, 6, 7, 9)."""
    fake = _legacy_engine("app", "sidecar")

    actions = _replan(fake, web(plain="busybox:1.37"))

    assert _kinds(actions) == [
        f"CreateVolume {STATE}",
        f"CreateVolume {CACHE}",
        "Create app",
        "Create sidecar",
        "Kill plain",
        "Create plain",
    ]


def test_while_the_directory_stays_bound_replacements_keep_their_order() -> None:
    """The app keeps running on the host directory: the pod does not move, so the
    restarted sidecar binds the directory too, and a replaced container is stopped just
    before its successor is made, not before everything (``empty_dir_mode``: no move
    while the directory stays bound, mutant 15)."""
    fake = _legacy_engine("sidecar")

    actions = _replan(fake, web(plain="busybox:1.37"))

    assert _kinds(actions) == [
        f"CreateVolume {STATE}",
        "Create sidecar",
        "Kill plain",
        "Create plain",
    ]
    assert Mount(HOST_CACHE, "/cache", True) in _create(actions, "sidecar").mounts


def test_a_pod_that_no_longer_has_an_empty_dir_replaces_its_containers_one_by_one() -> None:
    """The emptyDir is dropped from the pod: nothing is to be copied, so the containers
    that bound it are replaced one after the other, as any changed container is - not
    all stopped first (``empty_dir_mode``: a pod without on-disk emptyDirs never moves,
    mutant 1)."""
    fake = _legacy_engine()
    pod = web()
    pod = attrs.evolve(
        pod,
        volumes=tuple(v for v in pod.volumes if v.name != "cache"),
        containers=tuple(
            attrs.evolve(c, volume_mounts=tuple(m for m in c.volume_mounts if m.name != "cache"))
            for c in pod.containers
        ),
    )

    actions = _replan(fake, pod)

    assert _kinds(actions) == [
        "Kill app",
        f"CreateVolume {STATE}",
        "Create app",
        "Kill sidecar",
        "Create sidecar",
    ]
    assert all(a.reason is Reason.SPEC_CHANGED for a in actions if isinstance(a, Kill))


def test_each_empty_dir_of_a_pod_is_its_own_volume() -> None:
    """Two on-disk emptyDirs mounted by one container are two engine volumes, each made
    for its own pod volume (``empty_dir_of``: the volume whose engine name it is,
    mutant 1)."""
    (pod,) = parse_pods(
        """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: web-uid}
spec:
  volumes:
  - {name: cache, emptyDir: {}}
  - {name: data, emptyDir: {}}
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - {name: cache, mountPath: /cache}
    - {name: data, mountPath: /data}
""",
        source_name="web.yaml",
        source="file",
    )

    actions = plan([pod], now=1.0, options=OPTIONS).pods[0].actions

    made = {a.volume: a.message for a in actions if isinstance(a, CreateVolume)}
    data = empty_dir_volume_name("web-uid", "data")
    assert made == {
        CACHE: f"create volume {CACHE}: emptyDir cache: first use",
        data: f"create volume {data}: emptyDir data: first use",
    }


def test_a_container_that_mounts_only_a_host_path_never_bound_an_empty_dir() -> None:
    """A stopped container whose recorded spec mounts only a hostPath volume cannot have
    bound an emptyDir host directory (``_may_mount_empty_dir``: a hostPath volume is not
    an emptyDir, mutants 9-11)."""
    (pod,) = parse_pods(
        """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: web-uid}
spec:
  volumes:
  - {name: cache, emptyDir: {}}
  - {name: logs, hostPath: {path: /var/log/web}}
  containers:
  - name: shipper
    image: busybox
    volumeMounts:
    - {name: logs, mountPath: /logs}
""",
        source_name="web.yaml",
        source="file",
    )

    assert not _may_mount_empty_dir(canonical_spec_text(pod.containers[0], pod))


# --- content volumes: the kubelet's atomic-writer layout ---------------------------------
# pkg/volume/util/atomic_writer.go (kubelet-modern.md §9): the payload in a hidden
# directory, ``..data`` naming it, each top-level name a link ``<name> -> ..data/<name>``;
# owner and modes as SetVolumeOwnership for a read-only volume (pkg/volume/volume_linux.go,
# kubelet-modern.md §7): root's, with an fsGroup its group, files 0440 ORed in,
# directories 0550 and setgid.

SETTINGS = VolumeContent(
    VolumeKind.CONFIG_MAP,
    (
        VolumeFile("app.conf", b"debug=1\n", 0o600),
        VolumeFile("conf/nginx/site.conf", b"server {}\n"),
        VolumeFile("conf/nginx/mime.types", b"types {}\n"),
    ),
    # Not in sorted order: the record sorts them.
    {"Secret default/tls": "d2", "ConfigMap default/settings": "d1"},
)


def test_a_first_write_sends_the_atomic_writers_layout_in_order() -> None:
    """A first write (the previous payload not known), with an fsGroup: the root; both
    payload places emptied (0600, nobody reads them); the payload directory; each
    parent directory once, before its files, at every depth; the files (0440 ORed in);
    the record (0400: podsync's); a link per top-level name; ``..data`` last. Every
    directory and file the fsGroup's, every link 0777 as Linux shows any link
    (``payload_entries``: mutants 33, 36, 55-66, 84, 88, 91, 103-121; ``top_names``
    takes the first component at any depth, mutant 7)."""
    one, two = PAYLOADS

    def directory(path: str) -> VolumeEntry:
        return VolumeEntry(path, EntryKind.DIRECTORY, mode=0o2755, gid=2000)

    def file(path: str, data: bytes, mode: int) -> VolumeEntry:
        return VolumeEntry(f"{one}/{path}", EntryKind.FILE, mode=mode, gid=2000, data=data)

    def link(path: str, target: str) -> VolumeEntry:
        return VolumeEntry(path, EntryKind.SYMLINK, mode=0o777, target=target)

    entries = payload_entries(SETTINGS, 2000, payload=one, previous="")

    assert entries == [
        directory("."),
        VolumeEntry(two, EntryKind.FILE, mode=0o600),
        VolumeEntry(one, EntryKind.FILE, mode=0o600),
        directory(one),
        file("app.conf", b"debug=1\n", 0o640),
        directory(f"{one}/conf"),
        directory(f"{one}/conf/nginx"),
        file("conf/nginx/mime.types", b"types {}\n", 0o644),
        file("conf/nginx/site.conf", b"server {}\n", 0o644),
        VolumeEntry(
            f"{one}/{RECORD}", EntryKind.FILE, mode=0o400, data=record_text(SETTINGS, 2000, one)
        ),
        link("app.conf", f"{DATA_DIR}/app.conf"),
        link("conf", f"{DATA_DIR}/conf"),
        link(DATA_DIR, one),
    ]


def test_without_an_fs_group_everything_is_roots() -> None:
    """No fsGroup: every entry is owned by root, user and group (``payload_entries``:
    gid 0, mutants 7 and 9), and the modes are the files' own."""
    entries = payload_entries(SETTINGS, None, payload=PAYLOADS[1], previous=PAYLOADS[0])

    assert {(e.uid, e.gid) for e in entries} == {(0, 0)}
    modes = {e.path: e.mode for e in entries if e.kind is not EntryKind.SYMLINK}
    assert modes[f"{PAYLOADS[1]}/app.conf"] == 0o600
    assert modes["."] == modes[f"{PAYLOADS[1]}/conf"] == 0o755
    assert modes[PAYLOADS[0]] == 0o600  # the previous payload, emptied


def test_a_first_write_links_every_name_whatever_it_is_told_is_linked() -> None:
    """With the previous payload not known, no link can be trusted to be there: every
    top-level name gets its link (``payload_entries``: ``linked`` counts only with a
    known previous payload, mutant 98)."""
    entries = payload_entries(
        SETTINGS, None, payload=PAYLOADS[0], previous="", linked=("app.conf", "conf")
    )

    links = [e.path for e in entries if e.kind is EntryKind.SYMLINK]
    assert links == ["app.conf", "conf", DATA_DIR]


def test_the_record_is_canonical_json_of_what_was_written() -> None:
    """The record is a stored format - a later podsync reads what an earlier one wrote -
    and one text per content: canonical JSON (sorted keys, no spaces) of the digest
    with the fsGroup the files were written for (a new fsGroup rewrites them), the
    sources, the payload and the top-level names (``record_text``: mutants 5, 18-23)."""
    digest = content_digest(SETTINGS, 2000)
    assert digest != content_digest(SETTINGS, None)

    assert record_text(SETTINGS, 2000, PAYLOADS[1]) == (
        b'{"digest":"' + digest.encode() + b'","names":["app.conf","conf"],'
        b'"payload":"..payload-2",'
        b'"sources":{"ConfigMap default/settings":"d1","Secret default/tls":"d2"}}'
    )


def test_a_record_of_an_earlier_podsync_has_no_payload_and_no_names() -> None:
    """A record without ``payload`` and ``names`` (the host directories' records) reads
    as the payload not known and no links: empty, never None (``parse_record``:
    mutants 20, 22)."""
    found = parse_record("uid-1", "config", b'{"digest":"d","sources":{"ConfigMap a":"1"}}')

    assert found == WrittenVolume("uid-1", "config", "d", {"ConfigMap a": "1"}, "", "", ())


@pytest.mark.parametrize(
    "text",
    [
        b'{"digest":5,"sources":{}}',
        b'{"digest":"d","sources":{"ConfigMap a":1}}',
        b'{"digest":"d","sources":{},"names":"conf"}',
        b'{"digest":"d","sources":{},"names":5}',
    ],
)
def test_a_record_of_the_wrong_shape_is_none(text: bytes) -> None:
    """A record is engine data: a digest that is not a string, a source digest that is
    not one, names that are not a list of strings - it is not podsync's, and the volume
    is written again (``parse_record``: mutants 12, 17, 35)."""
    assert parse_record("uid-1", "config", text, "podsync-content_uid-1_config") is None
