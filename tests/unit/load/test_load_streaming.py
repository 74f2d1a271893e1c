"""``load_pods`` converts each file's pods as soon as the file is read (issue 16).

A directory of ten 1,000-pod files used to be read whole - every file's YAML data
alive at once - before the first pod was converted: the memory of all of it, and the
garbage collector walking all of it again and again while the pods were built. Now a
file's pods are converted right after it is read, and its YAML data dropped; only a
pod that read a ConfigMap or Secret is converted again at the end, with the objects of
every source, when a later source brought objects it could not have seen.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from podsync import ConfigError, EnvVar, NodeInfo, load_pods
from podsync.load import _config as config
from podsync.load import _streams as streams

NODE = NodeInfo(name="node-1", milli_cpu=4000, memory=8 * 2**30)

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox:1.36
    env:
    - name: PLAIN
      value: "yes"
"""

READS_CONFIG = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox:1.36
    env:
    - name: MODE
      valueFrom:
        configMapKeyRef: {{name: app-config, key: MODE, optional: true}}
"""

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  MODE: {mode}
"""


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the loader did, in order: ``read <file>`` and ``convert <file>``."""
    done: list[str] = []
    load, parse = config._load_stream, streams._parse_documents

    def loading(data, source_name, context):  # type: ignore[no-untyped-def]
        done.append(f"read {Path(source_name).name}")
        return load(data, source_name, context)

    def parsing(documents, source_name, context):  # type: ignore[no-untyped-def]
        done.append(f"convert {Path(source_name).name}")
        return parse(documents, source_name, context)

    monkeypatch.setattr(config, "_load_stream", loading)
    monkeypatch.setattr(streams, "_parse_documents", parsing)
    return done


def test_each_file_is_converted_before_the_next_is_read(tmp_path: Path, steps: list[str]) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text(POD.format(name=name))

    pods = load_pods([tmp_path], node=NODE)

    assert [p.name for p in pods] == ["a", "b", "c"]
    assert steps == [
        "read a.yaml",
        "convert a.yaml",
        "read b.yaml",
        "convert b.yaml",
        "read c.yaml",
        "convert c.yaml",
    ]


def test_a_pod_that_read_objects_is_converted_again_when_a_later_file_brings_some(
    tmp_path: Path, steps: list[str]
) -> None:
    """The optional reference found nothing when ``a.yaml`` was read; ``z.yaml`` holds
    the ConfigMap, so ``a.yaml``'s pods are converted again with it. ``b.yaml`` read no
    object: converted once."""
    (tmp_path / "a.yaml").write_text(READS_CONFIG.format(name="a"))
    (tmp_path / "b.yaml").write_text(POD.format(name="b"))
    (tmp_path / "z.yaml").write_text(CONFIG.format(mode="production"))

    a, b = load_pods([tmp_path], node=NODE)

    assert a.containers[0].env == (EnvVar("MODE", "production", "ConfigMap default/app-config"),)
    assert b.containers[0].env == (EnvVar("PLAIN", "yes"),)
    assert steps == [
        "read a.yaml",
        "convert a.yaml",
        "read b.yaml",
        "convert b.yaml",
        "read z.yaml",
        "convert z.yaml",
        "convert a.yaml",
    ]


def test_a_file_whose_pods_read_objects_is_converted_once_all_are_known(
    tmp_path: Path, steps: list[str]
) -> None:
    """``b.yaml``'s conversion stops at its first use of a ConfigMap (a later file might
    hold it) and runs again at the end, with the objects of every source."""
    (tmp_path / "a.yaml").write_text(CONFIG.format(mode="production"))
    (tmp_path / "b.yaml").write_text(READS_CONFIG.format(name="b"))
    (tmp_path / "c.yaml").write_text(POD.format(name="c"))

    b, c = load_pods([tmp_path], node=NODE)

    assert b.containers[0].env[0].value == "production"
    assert c.containers[0].env == (EnvVar("PLAIN", "yes"),)
    assert steps == [
        "read a.yaml",
        "convert a.yaml",
        "read b.yaml",
        "convert b.yaml",
        "read c.yaml",
        "convert c.yaml",
        "convert b.yaml",
    ]


def test_problems_keep_their_order_across_early_and_late_conversions(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(READS_CONFIG.format(name="a").replace("1.36", "1.36 x"))
    (tmp_path / "b.yaml").write_text(POD.format(name="b").replace("busybox:1.36", "Bad Image"))
    (tmp_path / "c.yaml").write_text(CONFIG.format(mode="x") + "  bad key: 1\n")

    with pytest.raises(ConfigError) as info:
        load_pods([tmp_path], node=NODE)

    assert [Path(p.source).name for p in info.value.problems] == [
        "a.yaml",
        "b.yaml",
        "c.yaml",
    ]


WITH_RESOURCES = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox:1.36
    resources:
      limits: {{cpu: 250m, memory: {memory}}}
"""


def test_equal_resources_of_a_load_are_one_object(tmp_path: Path) -> None:
    """A fleet repeats the same few resources; each pod holding its own copy was
    objects for the garbage collector to walk on every pass, for nothing."""
    (tmp_path / "a.yaml").write_text(WITH_RESOURCES.format(name="a", memory="128Mi"))
    (tmp_path / "b.yaml").write_text(WITH_RESOURCES.format(name="b", memory="128Mi"))
    (tmp_path / "c.yaml").write_text(WITH_RESOURCES.format(name="c", memory="256Mi"))

    a, b, c = (p.containers[0].resources for p in load_pods([tmp_path], node=NODE))

    assert a is b
    assert a is not None
    assert c is not None
    assert (a.limits.memory, c.limits.memory) == (128 * 2**20, 256 * 2**20)


def test_the_same_image_and_names_are_checked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet repeats its images, names and paths in every pod: a text the loader
    accepted is not checked again; a refused one is refused, with its path, each time."""
    from podsync.load.schema import _scalars

    checked: list[str] = []
    problem = _scalars.image_reference_problem

    def counting(text: str) -> str | None:
        checked.append(text)
        return problem(text)

    monkeypatch.setattr(_scalars, "image_reference_problem", counting)
    image = "registry.example:5000/checked-once/app:1.0"
    (tmp_path / "a.yaml").write_text(
        "\n---\n".join(POD.format(name=f"web-{i}").replace("busybox:1.36", image) for i in range(3))
    )
    (tmp_path / "b.yaml").write_text(
        "\n---\n".join(
            POD.format(name=f"bad-{i}").replace("busybox:1.36", "Bad/Image:x") for i in range(2)
        )
    )

    with pytest.raises(ConfigError) as error:
        load_pods([str(tmp_path)])

    assert [image, "bad/image:x"] == [t.lower() for t in dict.fromkeys(checked)]
    assert 1 == checked.count(image)
    assert 2 == str(error.value).count("is not a valid image reference")
