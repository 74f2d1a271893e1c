"""``podsync.publish``: pod files to a host's etcd key, validated first, written with a
compare-and-swap; against a real etcd (the ``etcd`` fixture)."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path

import pytest

import podsync
from podsync.etcd._urls import EtcdOptions
from podsync.exceptions import ConfigError, PublishConflict
from podsync.fleet._publish import PublishResult, publish
from tests.support.etcd_server import EtcdServer

KEY = "/registry/hosts/node-a/kubelet"


def pod(name: str, image: str = "podsync-test/busybox:latest") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: {image}
    command: [sleep, "3600"]
"""


GREETER = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
data:
  message: hello
---
apiVersion: v1
kind: Pod
metadata:
  name: greeter
spec:
  containers:
  - name: app
    image: podsync-test/busybox:latest
    env:
    - name: MESSAGE
      valueFrom:
        configMapKeyRef: {name: greeting, key: message}
"""

SEED = """\
version: v1beta1
id: seed
containers:
  - name: hello
    image: podsync-test/busybox:latest
"""


@pytest.fixture
def pods(tmp_path: Path) -> Path:
    directory = tmp_path / "pods"
    directory.mkdir()
    (directory / "web.yaml").write_text(pod("web"))
    (directory / "greeter.yaml").write_text(GREETER)
    (directory / "seed.yaml").write_text(SEED)
    return directory


def endpoints(etcd: EtcdServer) -> str:
    return f"etcd://{etcd.endpoint}"


def test_publishes_the_pods_the_etcd_source_reads_back(etcd: EtcdServer, pods: Path) -> None:
    result = publish([pods], etcd=endpoints(etcd), host="node-a")

    assert etcd.url(KEY) == result.url
    assert ("configmap default/greeting", "pod default/greeter", "pod default/seed") == (
        result.added[:3]
    )
    assert "pod default/web" in result.added
    assert result.revision is not None
    assert result.read_revision == 0
    from_files = podsync.load_pods([pods])
    from_etcd = podsync.load_pods([etcd.url(KEY)])
    # The same pods, but of the etcd source.
    assert [(p.name, p.containers) for p in from_files] == [
        (p.name, p.containers) for p in from_etcd
    ]
    assert {"etcd"} == {p.source for p in from_etcd}
    value = json.loads(etcd.get(KEY) or b"")
    assert isinstance(value, list)
    assert 4 == len(value)


def test_invalid_pods_name_the_file_and_path_and_nothing_is_written(
    etcd: EtcdServer, pods: Path
) -> None:
    (pods / "web.yaml").write_text(pod("web", image="UPPER CASE"))

    with pytest.raises(ConfigError) as caught:
        publish([pods], etcd=endpoints(etcd), host="node-a")

    (problem,) = caught.value.problems
    assert problem.source == str(pods / "web.yaml")
    assert problem.path == "$.spec.containers[0].image"
    assert etcd.get(KEY) is None


def test_dry_run_shows_what_is_added_changed_and_removed(etcd: EtcdServer, pods: Path) -> None:
    first = publish([pods], etcd=endpoints(etcd), host="node-a")
    (pods / "web.yaml").write_text(pod("web", image="podsync-test/busybox:other"))
    (pods / "seed.yaml").unlink()
    (pods / "db.yaml").write_text(pod("db"))
    before = etcd.get(KEY)

    result = publish([pods], etcd=endpoints(etcd), host="node-a", dry_run=True)

    assert ("pod default/db",) == result.added
    assert ("pod default/web",) == result.changed
    assert ("pod default/seed",) == result.removed
    assert result.revision is None
    assert result.read_revision == first.revision
    assert before == etcd.get(KEY)  # nothing written
    (diff,) = result.diff
    assert '-        "image": "podsync-test/busybox:latest",' in diff.splitlines()
    assert '+        "image": "podsync-test/busybox:other",' in diff.splitlines()
    text = result.render()
    assert "+ pod default/db" in text
    assert "~ pod default/web" in text
    assert text.endswith(
        f"Publish: 1 to add, 1 to change, 1 to remove at {etcd.url(KEY)} "
        f"(revision {first.revision})."
    )


def test_nothing_changed_writes_nothing(etcd: EtcdServer, pods: Path) -> None:
    first = publish([pods], etcd=endpoints(etcd), host="node-a")
    again = publish([pods], etcd=endpoints(etcd), host="node-a")

    assert not again.has_changes
    assert again.revision is None
    assert again.read_revision == first.revision
    assert "No changes" in again.render()


def test_a_lost_race_writes_nothing_and_says_so(
    etcd: EtcdServer, pods: Path, tmp_path: Path
) -> None:
    # Two publishers looked at the key at the same revision (a dry run each).
    seen = publish([pods], etcd=endpoints(etcd), host="node-a", dry_run=True).read_revision
    mine = tmp_path / "mine.yaml"
    mine.write_text(pod("mine"))
    theirs = tmp_path / "theirs.yaml"
    theirs.write_text(pod("theirs"))

    won = publish([theirs], etcd=endpoints(etcd), host="node-a", if_revision=seen)
    with pytest.raises(PublishConflict) as caught:
        publish([mine], etcd=endpoints(etcd), host="node-a", if_revision=seen)

    assert caught.value.read_revision == seen
    assert caught.value.revision == won.revision
    assert "changed by another writer since it was read" in str(caught.value)
    assert ["theirs"] == [p.name for p in podsync.load_pods([etcd.url(KEY)])]


def test_racing_publishers_never_lose_an_update(etcd: EtcdServer, tmp_path: Path) -> None:
    """Publishers racing on one key: every write that succeeds was made against the
    value the write before it left (its read revision is that write's revision): no
    publisher ever wrote over a value it had not seen."""
    results: list[PublishResult] = []
    conflicts: list[PublishConflict] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def publisher(number: int) -> None:
        start.wait()
        for round_ in range(8):
            source = tmp_path / f"p{number}-{round_}.yaml"
            source.write_text(pod(f"p{number}-{round_}"))
            try:
                result = publish([source], etcd=endpoints(etcd), host="node-a")
            except PublishConflict as exc:
                with lock:
                    conflicts.append(exc)
                continue
            with lock:
                results.append(result)

    threads = [threading.Thread(target=publisher, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    chain = sorted(results, key=lambda r: r.revision or 0)
    assert chain, "no publish succeeded"
    assert 0 == chain[0].read_revision
    for before, after in itertools.pairwise(chain):
        assert after.read_revision == before.revision
    assert len(chain) + len(conflicts) == 32
    # The key holds the last successful write.
    last = chain[-1]
    assert last.value == etcd.get(KEY)


def test_bad_arguments(etcd: EtcdServer, pods: Path) -> None:
    with pytest.raises(ValueError, match="host name 'Node_A'"):
        publish([pods], etcd=endpoints(etcd), host="Node_A")
    with pytest.raises(ValueError, match="give the endpoints only"):
        publish([pods], etcd=etcd.url(KEY), host="node-a")


def test_with_user_and_password(etcd: EtcdServer, pods: Path) -> None:
    etcd.enable_auth("publisher", "pub-pw")

    result = publish(
        [pods],
        etcd=endpoints(etcd),
        host="node-a",
        options=EtcdOptions(user="publisher", password="pub-pw"),
    )

    assert result.revision is not None
