"""podsync's exceptions survive pickle and copy: orchestrators run podsync in process
pools, which pickle whatever a worker raises."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from podsync.exceptions import (
    ActionError,
    ConfigError,
    Conflict,
    EngineUnavailable,
    EtcdError,
    MissingCapability,
    NameConflict,
    NotFound,
    PodsyncError,
    Problem,
    PublishConflict,
    RuntimeCallError,
)

EXCEPTIONS: list[Callable[[], PodsyncError]] = [
    lambda: PodsyncError("something went wrong"),
    lambda: ConfigError(
        [
            Problem("pods/web.yaml", "$.spec.containers[0].name", "required field missing"),
            Problem("", "", "a pod built in code has no containers"),
        ]
    ),
    lambda: ConfigError.single("-", "$", "not a mapping"),
    lambda: RuntimeCallError("create", "k8s_app.1_web.default.file_u_0", "no such image"),
    lambda: RuntimeCallError("list", "", "engine on fire"),
    lambda: RuntimeCallError(
        "create", "app", "Minimum memory limit allowed is 6MB", status_code=400
    ),
    lambda: NotFound("start", "c0001", "No such container: c0001", status_code=404),
    lambda: Conflict("remove", "c0001", "You cannot remove a running container", status_code=409),
    lambda: EngineUnavailable("list", "unix:///var/run/docker.sock", "connection refused"),
    lambda: NameConflict("create", "k8s_net.1_web.default.file_u_0", "name in use by c0001"),
    lambda: NameConflict(
        "create",
        "k8s_net.1_web.default.file_u_0",
        "name in use by c0001",
        holder_id="c0001",
        holder_labels={"io.podsync.pod.uid": "u"},
    ),
    lambda: ActionError("write /var/lib/podsync/pods/u/volumes/cfg: Permission denied"),
    lambda: EtcdError("cannot reach etcd at 127.0.0.1:2379: connection refused"),
    lambda: PublishConflict("etcd://127.0.0.1:2379/registry/hosts/a/kubelet", 7, 9),
    lambda: MissingCapability("logs", "podsync logs", "LogRuntime: container_logs"),
    lambda: MissingCapability("exec", "podsync exec"),
]

FIELDS = ("problems", "operation", "target", "message", "status_code", "holder_id")
FIELDS += ("holder_labels",)
FIELDS += ("url", "read_revision", "revision")


def fields(exc: BaseException) -> dict[str, Any]:
    return {name: getattr(exc, name) for name in FIELDS if hasattr(exc, name)}


@pytest.mark.parametrize("make", EXCEPTIONS, ids=lambda make: type(make()).__name__)
@pytest.mark.parametrize(
    "clone",
    [
        lambda e: pickle.loads(pickle.dumps(e)),
        lambda e: pickle.loads(pickle.dumps(e, protocol=0)),
        copy.copy,
        copy.deepcopy,
    ],
    ids=["pickle", "pickle-0", "copy", "deepcopy"],
)
def test_round_trip_keeps_type_fields_and_text(
    make: Callable[[], PodsyncError], clone: Any
) -> None:
    """The clone is of the same class, with the same fields, str(), args and notes."""
    exc = make()
    exc.add_note("while syncing pods/")

    again = clone(exc)

    assert type(exc) is type(again)
    assert fields(exc) == fields(again)
    assert str(exc) == str(again)
    assert exc.args == again.args
    assert ["while syncing pods/"] == again.__notes__


def test_every_exception_class_is_covered() -> None:
    """A new exception in podsync.exceptions must be added to EXCEPTIONS above."""
    import podsync.exceptions as module

    classes = {
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, BaseException)
    }
    assert classes == {type(make()) for make in EXCEPTIONS}


@pytest.mark.parametrize(
    ("status_code", "kind"),
    [
        pytest.param(404, NotFound, id="404-not-found"),
        pytest.param(409, Conflict, id="409-conflict"),
        pytest.param(400, RuntimeCallError, id="400-refused"),
        pytest.param(500, RuntimeCallError, id="500-engine-error"),
        pytest.param(None, RuntimeCallError, id="no-answer"),
    ],
)
def test_an_engine_answer_picks_the_class(status_code: int | None, kind: type) -> None:
    """``from_status``: the class an orchestrator catches follows the HTTP status, which
    the error keeps; the text is the operation, the target and the engine's words."""
    error = RuntimeCallError.from_status("start", "c0001", "No such container: c0001", status_code)

    assert kind is type(error)
    assert ("start", "c0001", status_code) == (error.operation, error.target, error.status_code)
    assert "start c0001: No such container: c0001" == str(error)


def test_a_name_conflict_is_a_conflict_of_409() -> None:
    """Code that catches ``Conflict`` catches a taken name too."""
    error = NameConflict("create", "app", "name in use")

    assert isinstance(error, Conflict)
    assert 409 == error.status_code
