"""The engines the engine tests run on: every test below ``tests/engine/`` runs once per
engine named in ``PODSYNC_TEST_ENGINES`` (``docker``, the default, and ``podman``), as
``test_x[docker]`` and ``test_x[podman]``.

The ``engine_name`` fixture is session-scoped, autouse and parametrised, so pytest runs
every test of one engine before it switches to the next. While an engine's tests run,
``DOCKER_HOST`` is that engine's address (``tests.support.engine.engine_docker_host``:
unset for Docker when it was unset) and
``CONTAINER_HOST`` is unset, so that whatever a test makes without the ``engine``
fixture - ``DockerRuntime()``, ``podsync`` in a subprocess, the docker CLI - talks to
the same engine as the ``engine`` client.

A test that is about dockerd itself (stopping and restarting it, starting extra
dockerds) is marked ``docker_only`` with the reason; on another engine it is skipped
with that reason. Not a silent subset: the skip and its reason show in the summary.

A test that shows a difference of podman's that podsync does not handle (the rows of
``docs/engines.md`` that say "not handled": an OOM kill podman does not report, a
volume's ``CreatedAt``) is marked ``podman_differs`` with the reason: on podman it is a
strict xfail - it must fail there, and a pass fails the run, so that the row is
revisited when podman or podsync changes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# The conformance cases live in tests/support/ (shared with the fake's run): rewritten,
# so that a failing case says what each engine answered.
pytest.register_assert_rewrite("tests.support.conformance", "tests.support.conformance_files")

from tests.support.engine import configured_engines, engine_docker_host  # noqa: E402

DOCKER_ONLY = "docker_only"
PODMAN_DIFFERS = "podman_differs"


@pytest.fixture(scope="session", autouse=True, params=configured_engines())
def engine_name(request: pytest.FixtureRequest) -> Iterator[str]:
    """The engine this test runs on (``docker`` or ``podman``), with ``DOCKER_HOST`` set
    to its address while the test runs."""
    name = str(request.param)
    docker_host = engine_docker_host(name)
    with pytest.MonkeyPatch.context() as patch:
        if docker_host is None:
            patch.delenv("DOCKER_HOST", raising=False)
        else:
            patch.setenv("DOCKER_HOST", docker_host)
        patch.delenv("CONTAINER_HOST", raising=False)
        yield name


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip a ``docker_only`` test on any engine but Docker, with the marker's reason;
    make a ``podman_differs`` test a strict xfail on podman, with its reason."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            continue
        name = callspec.params.get("engine_name", "docker")
        marker = item.get_closest_marker(DOCKER_ONLY)
        if marker is not None and name != "docker":
            item.add_marker(pytest.mark.skip(reason=f"Docker only on {name}: {_reason(marker)}"))
        marker = item.get_closest_marker(PODMAN_DIFFERS)
        if marker is not None and name == "podman":
            reason = f"podman differs, not handled (docs/engines.md): {_reason(marker)}"
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))


def _reason(marker: pytest.Mark) -> str:
    return str(marker.kwargs.get("reason") or (marker.args[0] if marker.args else ""))
