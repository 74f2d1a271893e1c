"""podsync's exceptions survive pickle and copy: orchestrators run podsync in process
pools, which pickle whatever a worker raises."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from podsync.exceptions import (
    ConfigError,
    EngineUnavailable,
    EtcdError,
    MissingCapability,
    NameConflict,
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
    lambda: EngineUnavailable("list", "unix:///var/run/docker.sock", "connection refused"),
    lambda: NameConflict("create", "k8s_net.1_web.default.file_u_0", "name in use by c0001"),
    lambda: NameConflict(
        "create",
        "k8s_net.1_web.default.file_u_0",
        "name in use by c0001",
        holder_id="c0001",
        holder_labels={"io.podsync.pod.uid": "u"},
    ),
    lambda: EtcdError("cannot reach etcd at 127.0.0.1:2379: connection refused"),
    lambda: PublishConflict("etcd://127.0.0.1:2379/registry/hosts/a/kubelet", 7, 9),
    lambda: MissingCapability("logs", "podsync logs", "LogRuntime: container_logs"),
    lambda: MissingCapability("exec", "podsync exec"),
]

FIELDS = ("problems", "operation", "target", "message", "holder_id", "holder_labels")
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
