"""Shared test configuration: Hypothesis profiles, the markers of the folders, the
Docker engine and etcd for the tests that need them, and the clock guard.

The layout: ``tests/unit/`` (one folder per folder of podsync; no engine, no etcd, no
real clock), ``tests/engine/`` (a real Docker engine), ``tests/etcd/`` (a real etcd),
``tests/engine/etcd/`` (both), ``tests/support/`` (shared helpers) and ``tests/data/``
(files the tests read). A test's folder is its marker: everything below
``tests/engine/`` is marked ``engine``, everything below a folder named ``etcd`` is
marked ``etcd``, and a test elsewhere that uses the ``engine``, ``cleanup`` or ``etcd``
fixture is a usage error.

Every engine test runs once per engine of ``PODSYNC_TEST_ENGINES`` (``docker``, or
``docker,podman``: the ``engine_name`` fixture of ``tests/engine/conftest.py``). Before
each engine test its engine is checked once per session - a client, a ping, and the
local test images (``tests/support/engine.py``) - and when that fails the test is
skipped with the reason, or, with ``PODSYNC_REQUIRE_ENGINE=1`` (as CI sets), fails: in
CI a configured engine that does not answer is an error, never a silent skip.

Containers: every container an engine test creates should carry
``tests.support.engine.run_labels()``; those, and any container registered with the
``cleanup`` fixture, are force-removed after each engine test and again at the end of
the session. Leftovers of earlier runs that died are removed when the engine is first
used.

The ``etcd`` fixture starts Debian's ``etcd`` (``etcd-server``) on 127.0.0.1 with free
ports and a data directory of its own, and stops it after the test
(``tests/support/etcd_server.py``). Without an ``etcd`` binary or the ``etcd`` extra
(``etcd3gw``) the etcd tests skip with the reason, or fail under
``PODSYNC_REQUIRE_ENGINE=1``.

The clock: a test not marked ``engine`` (nor ``real_clock``, nor ``etcd``) runs with the
clock guard of ``tests/support/clock_guard.py``: podsync reading the real clock fails
it, with how to pass a clock instead. Engine tests allow for a loaded machine: no
deadline below 3 s on an engine call.
"""

from __future__ import annotations

import os
import types
from collections.abc import Generator, Iterator
from pathlib import Path

import attrs
import docker
import docker.errors
import hypothesis
import pytest
import requests

from tests.support.clock_guard import (
    HOW_TO_PASS_A_CLOCK,
    ClockRead,
    Guard,
    install,
    podsync_modules,
)
from tests.support.engine import (
    Cleanup,
    EngineUnreachable,
    connect,
    engine_address,
    ensure_test_images,
    remove_run_containers,
    remove_stale_test_containers,
)
from tests.support.etcd_server import EtcdServer, etcd_binary

# --- Hypothesis ------------------------------------------------------------------------

# ``ci`` (the default): the default number of examples, no deadline (a shared 2-core
# machine makes timings noisy), and derandomized: every run tries the same examples, so
# a red CI run is a change of the code, never the luck of the draw, and a failure
# reproduces on any machine. Exploring is what development runs are for (``dev``, or
# ``HYPOTHESIS_SEED``); every counterexample they find is pinned with ``@example`` in
# the property's module, so it is checked forever. ``print_blob`` prints the
# reproduction blob (``@reproduce_failure``) of a failure. Derandomized runs use no
# example database. ``dev``: random, with the example database (replays failures found
# before); ``fast``: a quick look while editing. Choose with HYPOTHESIS_PROFILE.
hypothesis.settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
    derandomize=True,
    print_blob=True,
)
hypothesis.settings.register_profile(
    "dev",
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
    print_blob=True,
)
hypothesis.settings.register_profile("fast", max_examples=10, deadline=None)
# ``mutation``: for tools/mutation.sh. Derandomized and without the example database, so
# a mutant is killed or survives the same way on every run (a database would replay a
# failure found for one mutant against the next).
hypothesis.settings.register_profile(
    "mutation",
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# --- the engine ------------------------------------------------------------------------

REQUIRE_ENGINE_ENV = "PODSYNC_REQUIRE_ENGINE"


@attrs.define
class _EngineState:
    """The session's check of one engine, made once: a client, or why there is none."""

    name: str
    checked: bool = False
    client: docker.DockerClient | None = None
    problem: str = ""


#: One state per engine (``docker``, ``podman``): the engine tests run once per engine
#: (the ``engine_name`` fixture of ``tests/engine/conftest.py``).
_ENGINE_KEY = pytest.StashKey[dict[str, _EngineState]]()


def _engine_name(item: pytest.Item) -> str:
    """The engine an engine test runs on: its ``engine_name`` parameter."""
    callspec = getattr(item, "callspec", None)
    return str(callspec.params.get("engine_name", "docker")) if callspec else "docker"


def _engine_state(config: pytest.Config, name: str) -> _EngineState:
    return config.stash.setdefault(_ENGINE_KEY, {}).setdefault(name, _EngineState(name))


def _engine_required() -> bool:
    return os.environ.get(REQUIRE_ENGINE_ENV, "") not in ("", "0")


def _check_engine(state: _EngineState) -> None:
    state.checked = True
    address = engine_address(state.name)
    try:
        client = connect(host=address)
    except EngineUnreachable as exc:
        state.problem = str(exc)
        return
    try:
        remove_stale_test_containers(client)
        ensure_test_images(client)
    except (docker.errors.DockerException, requests.RequestException, OSError, RuntimeError) as exc:
        client.close()
        state.problem = f"the {state.name} engine at {address} is not usable for tests: {exc}"
        return
    state.client = client


def _engine_or_skip(config: pytest.Config, name: str = "docker") -> docker.DockerClient:
    """The session's client of the engine ``name``; skips (or fails, when required) the
    calling test if there is none."""
    state = _engine_state(config, name)
    if not state.checked:
        _check_engine(state)
    if state.client is None:
        if _engine_required():
            pytest.fail(f"{state.problem} ({REQUIRE_ENGINE_ENV}=1: the engine is required)")
        start = "bash .ci/podman" if name == "podman" else "bash .ci/test"
        pytest.skip(f"{state.problem}; run {start} to start one")
    return state.client


#: The folders of ``tests/`` whose tests need a real component, and the marker each
#: gives every test below it: where a test lives says what it needs.
MARKED_FOLDERS = {"engine": pytest.mark.engine, "etcd": pytest.mark.etcd}
#: The fixtures that bring a real component, and the folder a test using one lives in.
_FIXTURE_FOLDERS = {"engine": "engine", "cleanup": "engine", "etcd": "etcd"}
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test by its folder: ``engine`` below ``tests/engine/``, ``etcd`` below a
    folder named ``etcd`` (``tests/etcd/``, ``tests/engine/etcd/``), so ``-m 'not
    engine'`` deselects the engine tests. A test elsewhere that asks for a real
    component's fixture is an error: it belongs in that component's folder."""
    misplaced: list[str] = []
    for item in items:
        folders = set(item.path.resolve().relative_to(_TESTS).parts[:-1])
        for folder in folders & MARKED_FOLDERS.keys():
            item.add_marker(MARKED_FOLDERS[folder])
        for fixture in getattr(item, "fixturenames", ()):
            needs = _FIXTURE_FOLDERS.get(fixture)
            if needs is not None and needs not in folders:
                misplaced.append(
                    f"{item.nodeid} uses the {fixture} fixture: move it to tests/{needs}/"
                )
    if misplaced:
        raise pytest.UsageError("tests outside their folder:\n  " + "\n  ".join(misplaced))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every ``engine`` test gets the engine check, whether it uses the fixture or not."""
    if item.get_closest_marker("engine") is not None:
        _engine_or_skip(item.config, _engine_name(item))
    if item.get_closest_marker("etcd") is not None:
        _etcd_or_skip()


def pytest_sessionfinish(session: pytest.Session) -> None:
    for state in session.config.stash.get(_ENGINE_KEY, {}).values():
        if state.client is not None:
            try:
                remove_run_containers(state.client)
            finally:
                state.client.close()
                state.client = None


def _etcd_problem() -> str:
    """Why the etcd tests cannot run here, or ""."""
    if etcd_binary() is None:
        return "no etcd server (Debian: apt-get install etcd-server)"
    try:
        import etcd3gw  # noqa: F401
    except ImportError:
        return "no etcd3gw, the etcd extra (pip install -e '.[dev]')"
    return ""


def _etcd_or_skip() -> None:
    problem = _etcd_problem()
    if problem:
        if _engine_required():
            pytest.fail(f"{problem} ({REQUIRE_ENGINE_ENV}=1: etcd is required)")
        pytest.skip(problem)


@pytest.fixture
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    """A real etcd on 127.0.0.1 (free ports, a data directory of its own), stopped after
    the test; ``etcd.url(key)`` is the podsync source of a key."""
    _etcd_or_skip()
    server = EtcdServer(tmp_path_factory.mktemp("etcd"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def engine(pytestconfig: pytest.Config, engine_name: str) -> docker.DockerClient:
    """A ``docker.DockerClient`` for the engine the test runs on (``engine_name``: its
    address is ``DOCKER_HOST`` meanwhile), pinged, with the test images present. The
    low-level API is ``engine.api``."""
    return _engine_or_skip(pytestconfig, engine_name)


@pytest.fixture
def cleanup(engine: docker.DockerClient) -> Iterator[Cleanup]:
    """Register containers to remove at the end of the test (``tests.support.engine.Cleanup``)."""
    registry = Cleanup()
    yield registry
    registry.remove(engine)


@pytest.fixture(autouse=True)
def _remove_run_containers_after_engine_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each engine test, remove the containers labelled with this run's id."""
    yield
    if request.node.get_closest_marker("engine") is None:
        return
    state = request.config.stash.get(_ENGINE_KEY, {}).get(_engine_name(request.node))
    if state is not None and state.client is not None:
        remove_run_containers(state.client)


# --- the clock -------------------------------------------------------------------------

_PODSYNC_MODULES = podsync_modules()
_CALL_REPORT = pytest.StashKey[pytest.TestReport]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep the report of the test's call, for the clock guard's verdict."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_REPORT] = report
    return report


@pytest.fixture(autouse=True)
def clock_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Guard]:
    """Outside engine tests, podsync (and the test's own module) cannot read the real
    clock: a read raises ``ClockRead`` saying how to pass a clock, and a read that
    something swallowed still fails the test at its end. A test may look at
    ``clock_guard.reads`` (and clear it) to check the guard itself."""
    guard = Guard()
    node = request.node
    if not any(node.get_closest_marker(m) is not None for m in ("engine", "real_clock", "etcd")):
        modules: list[types.ModuleType] = list(_PODSYNC_MODULES)
        test_module = getattr(node, "module", None)
        if test_module is not None:
            modules.append(test_module)
        install(monkeypatch, guard, modules)
    yield guard
    report = node.stash.get(_CALL_REPORT, None)
    if guard.reads and (report is None or report.passed):
        pytest.fail(
            f"podsync read the real clock ({', '.join(guard.reads)}) and something "
            f"swallowed the {ClockRead.__name__}: {HOW_TO_PASS_A_CLOCK}",
            pytrace=False,
        )
