"""``podsync top`` without an engine: ``podsync.cli.main`` with a ``FakeRuntime`` whose
containers use what the test says (``set_usage``), and kubectl's cell forms. The same
command on a real engine is in ``tests/engine/test_usage.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from podsync import PodUsage, UsageFigures, cli
from podsync.cli._top import cpu_text, memory_text, table_lines, top_rows
from podsync.testing import FakeClock, FakeRuntime
from tests.unit.cli.test_cli_ops import PAUSE, Result, container, pod_yaml

MiB = 1024 * 1024


@pytest.mark.parametrize(
    ("cores", "text"),
    [
        (None, "-"),
        (0.0, "0m"),
        (0.0021, "3m"),
        (0.25, "250m"),
        (1.0, "1000m"),
        (0.9999999, "1000m"),
    ],
)
def test_cpu_is_whole_millicores_rounded_up(cores: float | None, text: str) -> None:
    assert text == cpu_text(cores)


def test_memory_is_whole_mebibytes_rounded_down() -> None:
    assert ["0Mi", "12Mi", "12Mi", "1024Mi"] == [
        memory_text(b) for b in (MiB - 1, 12 * MiB, 13 * MiB - 1, 1024 * MiB)
    ]


def test_the_tables_have_kubectls_columns() -> None:
    web = PodUsage(
        "default/web",
        "u1",
        UsageFigures(0.5, 30 * MiB),
        {"app": UsageFigures(0.5, 29 * MiB), "net": UsageFigures(0.0, MiB)},
    )
    assert [
        "NAME          CPU(cores)   MEMORY(bytes)",
        "default/web   500m         30Mi",
    ] == table_lines(top_rows([web], containers=False))
    assert [
        "POD           NAME   CPU(cores)   MEMORY(bytes)",
        "default/web   app    500m         29Mi",
        "default/web   net    0m           1Mi",
    ] == table_lines(top_rows([web], containers=True))


@pytest.fixture
def fake() -> FakeRuntime:
    return FakeRuntime(images=["app:1", PAUSE], clock=FakeClock(1000.0, step=0))


@pytest.fixture
def run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fake: FakeRuntime
) -> Callable[..., Result]:
    """``podsync`` on the fake; its sleep moves the fake's clock (``top --window``)."""

    def runner(*argv: str, sleep: Callable[[float], None] | None = None) -> Result:
        extra = ["--root-dir", str(tmp_path / "root")]
        if argv[0] == "apply":
            extra += ["--network-image", PAUSE, "--network-mode", "none"]
        code = cli.main(
            [argv[0], *extra, *argv[1:]],
            runtime_factory=lambda host: fake,
            sleep=sleep or fake.clock.advance,  # type: ignore[attr-defined]
            clock=fake.clock,
        )
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return Result(code, captured.out, captured.err)

    return runner


@pytest.fixture
def web(run: Callable[..., Result], tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web", "app", "side"))
    (pods / "db.yaml").write_text(pod_yaml("db", namespace="data"))
    assert 0 == run("apply", str(pods)).code


def test_top_reads_twice_a_window_apart(
    run: Callable[..., Result], fake: FakeRuntime, web: None
) -> None:
    fake.set_usage(container(fake, "web", "app").id, cpu_cores=0.25, memory=20 * MiB)
    fake.set_usage(container(fake, "web", "side").id, cpu_cores=0.003, memory=5 * MiB)
    fake.set_usage(container(fake, "db", "app").id, cpu_cores=1.5, memory=300 * MiB)
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(seconds)
        fake.clock.advance(seconds)

    result = run("top", "--window", "2s", sleep=sleep)
    assert (0, "") == (result.code, result.err)
    assert [2.0] == waited
    assert [
        "NAME          CPU(cores)   MEMORY(bytes)",
        "data/db       1500m        300Mi",
        "default/web   253m         25Mi",
    ] == result.out.splitlines()

    result = run("top", "web", "--containers", sleep=sleep)
    assert [
        "POD           NAME   CPU(cores)   MEMORY(bytes)",
        "default/web   app    250m         20Mi",
        "default/web   net    0m           0Mi",
        "default/web   side   3m           5Mi",
    ] == result.out.splitlines()

    document = json.loads(run("top", "data/db", "-o", "json", sleep=sleep).out)
    assert 1.0 == document["window_seconds"]
    (db,) = document["pods"]
    assert ("data/db", 300 * MiB) == (db["pod"], db["memory_bytes"])
    assert db["cpu_cores"] == pytest.approx(1.5)
    assert ["app", "net"] == [c["name"] for c in db["containers"]]
    assert ["usage", "usage"] == [n for n in fake.call_names() if n == "usage"][-2:]


def test_top_errors_are_one_line(run: Callable[..., Result], fake: FakeRuntime, web: None) -> None:
    result = run("top", "nosuch")
    assert 1 == result.code
    assert 'no pod "nosuch" on the engine' in result.err
    assert 1 == run("top", "-o", "wide").code


def test_top_without_running_pods_says_so(run: Callable[..., Result], fake: FakeRuntime) -> None:
    result = run("top")
    assert (0, "", "No running pods.") == (result.code, result.out, result.err.strip())
    assert "usage" not in fake.call_names()  # nothing to read


def test_top_on_a_runtime_without_usage_names_the_protocol(
    capsys: pytest.CaptureFixture[str],
) -> None:
    class Core:
        def list_containers(self) -> list[object]:
            return []

        def close(self) -> None:
            pass

    code = cli.main(["top"], runtime_factory=lambda host: Core())  # type: ignore[arg-type,return-value]
    err = capsys.readouterr().err
    assert 1 == code
    assert "podsync top: the runtime has no usage capability" in err
    assert "UsageRuntime: container_usage, node_usage" in err
