"""What ``FakeRuntime`` records of the calls made to it, and the faults a test scripts.

Every call is recorded in the seed's vocabulary (``list``, ``create``, ``start``, ...),
as the 2014 kubelet's ``FakeDockerClient`` recorded its ``called`` list, so tests can
assert which calls a sync made; ``FakeRuntime.fail`` scripts a ``Fault`` for chosen calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

__all__ = ["CALL_NAMES", "MUTATING_CALL_NAMES", "Call", "Fault", "triggered"]

#: Every call name ``FakeRuntime`` records, one per ``Runtime`` method but ``close``
#: (counted in ``FakeRuntime.closes`` instead: it changes nothing an engine shows).
CALL_NAMES = frozenset(
    {
        "list",  # list_containers()
        "list_pod",  # list_pod_containers(pod_uid)
        "list_images",  # list_images()
        "info",  # node_capacity()
        "pull",  # pull_image(image)
        "create",  # create_container(spec)
        "start",  # start_container(id)
        "stop",  # stop_container(id, timeout)
        "remove",  # remove_container(id)
        "exec",  # exec_in_container(id, command, timeout)
        "address",  # container_address(id)
        "remove_image",  # remove_image(image_id)
        "exec_attached",  # exec_attached(id, command, ..., tty)
        "logs",  # container_logs(id, tail, since, follow)
        "events",  # engine_events(since, until)
        "list_volumes",  # list_volumes()
        "create_volume",  # create_volume(name, labels)
        "remove_volume",  # remove_volume(name)
        "write_volume",  # write_volume(volume, entries, image)
        "read_volume_file",  # read_volume_file(volume, path, image, limit)
        "read_file",  # read_container_file(id, path, limit)
        "usage",  # container_usage(ids)
        "node_usage",  # node_usage()
    }
)

#: The calls that change the engine (the others only look).
MUTATING_CALL_NAMES = frozenset(
    {
        "pull",
        "create",
        "start",
        "stop",
        "remove",
        "remove_image",
        "create_volume",
        "remove_volume",
        "write_volume",
    }
)


@attrs.frozen
class Call:
    """One recorded runtime call.

    Attributes:
        name: the call, in the seed's vocabulary (see ``CALL_NAMES``).
        args: its arguments as passed: ``create`` has ``(spec,)``, ``stop`` has
            ``(container_id, timeout)``, ``exec`` has ``(container_id, command,
            timeout)`` with the command as a tuple, ``list`` has ``()``.
    """

    name: str
    args: tuple[Any, ...] = ()


@attrs.define
class Fault:
    """A scripted failure (``FakeRuntime.fail``): of the calls named ``name`` that
    ``match`` selects, the next ``times`` (all when ``None``) fail with ``error``, as
    ``EngineUnavailable`` when ``unavailable``, else as the engine's answer
    ``status_code`` would (``RuntimeCallError.from_status``)."""

    name: str
    times: int | None
    match: str | Callable[[Call], bool] | None
    error: str
    unavailable: bool
    status_code: int | None = None


def triggered(
    faults: list[Fault], call: Call, targets: Callable[[Call], Sequence[str]]
) -> Fault | None:
    """The first of ``faults`` that fails ``call``, counted down (and dropped from
    ``faults`` once spent); ``None`` when none does. A string ``match`` fails a call one
    of whose ``targets`` (its container's id or name, the created spec's name, the
    image, the volume) contains it."""
    for fault in faults:
        if fault.name != call.name:
            continue
        if isinstance(fault.match, str):
            if not any(fault.match in target for target in targets(call)):
                continue
        elif fault.match is not None and not fault.match(call):
            continue
        if fault.times is not None:
            fault.times -= 1
            if fault.times == 0:
                faults.remove(fault)
        return fault
    return None
