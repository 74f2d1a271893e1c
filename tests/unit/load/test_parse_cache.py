"""The parse cache of ``load_pods`` (issue 16): an unchanged file is not parsed again.

A continuous loop re-reads its sources every few seconds; with a ``PodFileCache`` that
it owns, an unchanged file costs a ``stat``. Nothing is cached without one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import podsync
from podsync import ConfigError, PodFileCache, load_pods
from podsync.load import _config as config

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox:{tag}
"""


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The source names of the streams parsed, in order."""
    names: list[str] = []
    parse = config._load_stream

    def counting(data, source_name, source):
        names.append(source_name)
        return parse(data, source_name, source)

    monkeypatch.setattr(config, "_load_stream", counting)
    return names


def write(path: Path, name: str, tag: str = "1.36") -> str:
    path.write_text(POD.format(name=name, tag=tag))
    return str(path)


def test_unchanged_files_are_not_parsed_again(tmp_path: Path, parsed: list[str]) -> None:
    """The second load with the same cache parses nothing and gives the same pods."""
    a = write(tmp_path / "a.yaml", "a")
    (tmp_path / "more").mkdir()
    b = write(tmp_path / "more" / "b.yaml", "b")
    cache = PodFileCache()

    first = load_pods([a, tmp_path / "more"], cache=cache)
    second = load_pods([a, tmp_path / "more"], cache=cache)

    assert (2, first) == (len(first), second)
    assert ([a, b], 2) == (parsed, len(cache))


def test_a_changed_file_is_parsed_again(tmp_path: Path, parsed: list[str]) -> None:
    """Another size or modification time: parsed again, the new pods are returned."""
    a = write(tmp_path / "a.yaml", "a")
    cache = PodFileCache()
    load_pods([a], cache=cache)
    write(tmp_path / "a.yaml", "a", tag="1.37")  # the same size, another time
    os.utime(a, ns=(1, 1))

    pods = load_pods([a], cache=cache)

    assert ("busybox:1.37", [a, a]) == (pods[0].containers[0].image, parsed)


def test_a_replaced_file_is_parsed_again(tmp_path: Path, parsed: list[str]) -> None:
    """A file replaced by another one of the same size and time (another inode, as an
    editor or a config manager that writes and renames) is parsed again."""
    a = write(tmp_path / "a.yaml", "a")
    cache = PodFileCache()
    load_pods([a], cache=cache)
    stat = os.stat(a)
    other = write(tmp_path / "new.tmp", "a", tag="1.37")
    os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    keep = tmp_path / "keep"  # keeps the old inode alive, so it is not reused
    os.link(a, keep)
    os.replace(other, a)

    pods = load_pods([a], cache=cache)

    assert ("busybox:1.37", [a, a]) == (pods[0].containers[0].image, parsed)


def test_problems_are_cached_too(tmp_path: Path, parsed: list[str]) -> None:
    """An unchanged bad file gives the same problems without being parsed again."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\n")
    cache = PodFileCache()

    with pytest.raises(ConfigError) as first:
        load_pods([bad], cache=cache)
    with pytest.raises(ConfigError) as second:
        load_pods([bad], cache=cache)

    assert (str(first.value), [str(bad)]) == (str(second.value), parsed)


def test_duplicates_across_cached_files_are_still_found(tmp_path: Path) -> None:
    """Pods defined twice are found across files, cached or not."""
    a = write(tmp_path / "a.yaml", "a")
    b = write(tmp_path / "b.yaml", "b")
    cache = PodFileCache()
    load_pods([a, b], cache=cache)
    write(tmp_path / "b.yaml", "a")

    with pytest.raises(ConfigError) as info:
        load_pods([a, b], cache=cache)

    assert "duplicate pod default/a" in str(info.value)


def test_the_cache_holds_the_files_of_the_last_load(tmp_path: Path) -> None:
    """Files no longer read are forgotten: a loop over changing sources does not grow."""
    a = write(tmp_path / "a.yaml", "a")
    b = write(tmp_path / "b.yaml", "b")
    cache = PodFileCache()
    load_pods([a, b], cache=cache)

    load_pods([a], cache=cache)

    assert 1 == len(cache)


def test_without_a_cache_every_load_parses(tmp_path: Path, parsed: list[str]) -> None:
    """Nothing is cached behind the caller's back: no process-wide state."""
    a = write(tmp_path / "a.yaml", "a")

    load_pods([a])
    load_pods([a])

    assert [a, a] == parsed


def test_streams_are_never_cached(tmp_path: Path, parsed: list[str]) -> None:
    """Standard input is read and parsed on every load."""
    import io

    cache = PodFileCache()
    for _ in range(2):
        load_pods(["-"], stdin=io.BytesIO(POD.format(name="a", tag="1").encode()), cache=cache)

    assert (["<stdin>", "<stdin>"], 0) == (parsed, len(cache))


def test_cache_is_public() -> None:
    """PodFileCache is part of the public API."""

    assert "PodFileCache" in podsync.__all__


CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  MODE: {mode}
"""

POD_WITH_CONFIG = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1.36
    env:
    - name: MODE
      valueFrom:
        configMapKeyRef: {name: settings, key: MODE}
"""


def test_an_edited_config_map_reaches_the_pods_of_unchanged_files(
    tmp_path: Path, parsed: list[str]
) -> None:
    """A pod's environment may come from a ConfigMap of another file: when that file
    changes, the cached pods that read it are read again, not served stale."""
    config_map, pod = tmp_path / "config.yaml", tmp_path / "pod.yaml"
    config_map.write_text(CONFIG_MAP.format(mode="fast"))
    pod.write_text(POD_WITH_CONFIG)
    cache = PodFileCache()

    (first,) = load_pods([config_map, pod], cache=cache)
    config_map.write_text(CONFIG_MAP.format(mode="careful"))
    (second,) = load_pods([config_map, pod], cache=cache)
    (third,) = load_pods([config_map, pod], cache=cache)

    values = [p.containers[0].env[0].value for p in (first, second, third)]
    assert ["fast", "careful", "careful"] == values
    # The pod file was read again once, when the ConfigMap changed; then served cached.
    assert [str(config_map), str(pod), str(config_map), str(pod)] == parsed


def test_a_config_map_error_is_reported_again_from_the_cache(tmp_path: Path) -> None:
    """The problems of a cached file's ConfigMaps are found again on every load."""
    config_map, pod = tmp_path / "config.yaml", tmp_path / "pod.yaml"
    config_map.write_text(CONFIG_MAP.format(mode="fast").replace("MODE:", "bad key!:"))
    pod.write_text(
        POD_WITH_CONFIG.replace("configMapKeyRef: {", "configMapKeyRef: {optional: true, ")
    )
    cache = PodFileCache()

    messages = []
    for _ in range(2):
        with pytest.raises(ConfigError) as caught:
            load_pods([config_map, pod], cache=cache)
        messages.append(str(caught.value))

    assert messages[0] == messages[1]
    assert "config.yaml: $.data" in messages[0]
