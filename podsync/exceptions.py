"""Every error podsync raises.

The tree::

    PodsyncError                 base: catch this to catch everything podsync raises
    ├── ConfigError              bad desired state: a pod file, directory, URL or stdin
    │                            (carries one ``Problem`` per mistake, each with its
    │                            source and ``$.path``)
    ├── MissingCapability        the runtime lacks an optional capability asked of it
    ├── RuntimeCallError         a container runtime call failed (carries the operation,
    │   │                        the target and the engine's HTTP ``status_code``)
    │   ├── EngineUnavailable    the engine could not be reached at all (no status code)
    │   ├── NotFound             404: no such container, image or volume
    │   └── Conflict             409: the object's state refuses the call (a running or
    │       │                    paused container, a volume in use)
    │       └── NameConflict     create: a container with that name exists already
    ├── ActionError              an action failed outside a runtime call (host files, a
    │                            postStart handler, a plan holding Secrets by reference)
    └── EtcdError                etcd could not be used (unreachable, refused, no extra)
        └── PublishConflict      publish: another writer changed the key meanwhile

Usage::

    try:
        pods = podsync.load_pods(["pods/"])
    except podsync.exceptions.ConfigError as exc:
        for problem in exc.problems:
            print(problem)          # pods/web.yaml: $.spec.containers[0].name: ...

A failed action of ``apply`` or ``sync`` carries the exception it failed with
(``ActionResult.exception``), always one of these: an orchestrator tells an unreachable
engine from a refused create by class, ``operation`` and ``status_code``, never by
parsing the text::

    for failed in result.failures:
        if isinstance(failed.exception, podsync.EngineUnavailable): ...
        elif isinstance(failed.exception, podsync.NotFound): ...

Nothing podsync raises is a bare ``KeyError``, ``TypeError``, ``yaml.YAMLError`` or
docker SDK exception: those are translated at the edge where they happen.

Every exception here survives ``pickle`` and ``copy.copy``/``copy.deepcopy`` with its
class, fields, ``str()`` and notes: orchestrators run podsync in process pools, which
pickle what a worker raises. (An exception whose ``__init__`` takes other arguments
than ``args`` holds cannot be rebuilt by the default ``BaseException.__reduce__``;
these say how to rebuild themselves.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "ActionError",
    "ConfigError",
    "Conflict",
    "EngineUnavailable",
    "EtcdError",
    "MissingCapability",
    "NameConflict",
    "NotFound",
    "PodsyncError",
    "Problem",
    "PublishConflict",
    "RuntimeCallError",
]


class PodsyncError(Exception):
    """Base class of every podsync exception."""


@attrs.frozen
class Problem:
    """One mistake in the desired state.

    Attributes:
        source: where the document came from, as the user named it (a path, a URL, or
            ``<stdin>``); empty for pods built in code.
        path: a JSONPath-like location inside the document, ``$`` being the document
            itself, e.g. ``$.spec.containers[1].ports[0].containerPort``.
        message: what is wrong: what was expected, and what was given.
    """

    source: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        location = f"{self.path}: " if self.path else ""
        return f"{where}{location}{self.message}"


class ConfigError(PodsyncError):
    """The desired state is invalid; nothing was (or may be) changed on any engine.

    ``problems`` lists every mistake found, in document order; ``str(exc)`` is one line
    per problem.
    """

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("ConfigError needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its problems, then given back its attributes (notes included).
        return (type(self), (self.problems,), self.__dict__)

    @classmethod
    def single(cls, source: str, path: str, message: str) -> ConfigError:
        """A ``ConfigError`` with exactly one problem."""
        return cls([Problem(source, path, message)])


class RuntimeCallError(PodsyncError):
    """A call to a container runtime failed.

    A runtime raises the subclass its engine's answer names (``from_status``): a
    ``NotFound`` for 404, a ``Conflict`` for 409, this class for any other refusal
    (Docker answers 400 for a create it finds invalid, 500 when a pull cannot reach
    the registry) and for a call that failed without an answer.

    Attributes:
        operation: the runtime operation, in the seed's vocabulary (``create``,
            ``start``, ``stop``, ``remove``, ``pull``, ``list`` ...).
        target: what the call was about (a container name or id, an image), or ``""``.
        message: the engine's words (Docker's ``explanation``), for people.
        status_code: the engine's HTTP status (Docker's ``APIError.status_code``: 400,
            404, 409, 500 ...); ``None`` when there was no answer with one (the engine
            could not be reached, a call timed out, a streamed pull reported an error,
            a runtime without HTTP).
    """

    def __init__(
        self, operation: str, target: str, message: str, *, status_code: int | None = None
    ) -> None:
        self.operation = operation
        self.target = target
        self.message = message
        self.status_code = status_code
        prefix = f"{operation} {target}" if target else operation
        super().__init__(f"{prefix}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses keep this constructor, so one rule rebuilds them all; the keyword
        # fields (status_code, a NameConflict's holder) come back with __dict__.
        return (type(self), (self.operation, self.target, self.message), self.__dict__)

    @staticmethod
    def from_status(
        operation: str, target: str, message: str, status_code: int | None
    ) -> RuntimeCallError:
        """The error for an engine's answer ``status_code``: ``NotFound`` for 404,
        ``Conflict`` for 409 (a ``NameConflict`` is raised by name, where a create's
        conflict is known to be its name's), ``RuntimeCallError`` otherwise. What
        ``DockerRuntime`` and ``FakeRuntime`` raise, and what another runtime may use."""
        kind = _BY_STATUS.get(status_code, RuntimeCallError) if status_code else RuntimeCallError
        return kind(operation, target, message, status_code=status_code)


class EngineUnavailable(RuntimeCallError):
    """The container engine did not answer (wrong host, daemon down, no permission).
    ``status_code`` is ``None``."""


class NotFound(RuntimeCallError):
    """The engine has no such object (HTTP 404): the container, image or volume the call
    names does not exist (``No such container: <id>``, ``No such image: <ref>``)."""


class Conflict(RuntimeCallError):
    """The object's state refuses the call (HTTP 409): removing a running or paused
    container, starting a paused one, exec in one that does not run, removing a volume
    a container mounts. The call changed nothing; it may succeed once the state has
    changed (a stop, an unpause)."""


class NameConflict(Conflict):
    """``create`` found the container name taken (Docker answers HTTP 409).

    Container names carry the pod uid and an attempt number, so a conflict means that
    an earlier create succeeded although its caller saw it fail (a timeout), or that
    another podsync instance works on the same engine. ``target`` is the name.

    Attributes:
        holder_id: the id of the container holding the name, when the runtime could
            tell; ``""`` otherwise.
        holder_labels: that container's labels (empty when unknown): ``apply`` adopts
            a holder with the pod uid and spec hash it wanted to create - a racing
            apply made it - instead of failing.
    """

    def __init__(
        self,
        operation: str,
        target: str,
        message: str,
        *,
        holder_id: str = "",
        holder_labels: Mapping[str, str] | None = None,
        status_code: int | None = 409,
    ) -> None:
        super().__init__(operation, target, message, status_code=status_code)
        self.holder_id = holder_id
        self.holder_labels: dict[str, str] = dict(holder_labels or {})


_BY_STATUS: dict[int | None, type[RuntimeCallError]] = {404: NotFound, 409: Conflict}


class ActionError(PodsyncError):
    """An action of a plan failed outside a runtime call: a host file or directory
    could not be written or removed (``write <path>: ...``), a postStart handler
    failed, a saved plan holds Secret values by reference only. ``str()`` says which
    and why; ``__cause__`` (not kept by ``pickle``) is the error underneath."""


class EtcdError(PodsyncError):
    """etcd could not be used, by an etcd source or ``publish``: no endpoint answered,
    etcd refused (credentials, permissions), or the ``etcd`` extra is not installed
    (``pip install 'podsync[etcd]'``). ``str()`` names the endpoints."""


class PublishConflict(EtcdError):
    """``publish``: another writer changed the host's key between the read and the
    write (or it is not at the revision asked for); nothing was written.

    Attributes:
        url: the key (``etcd://ENDPOINTS/registry/hosts/<host>/kubelet``).
        read_revision: the key's revision as read (or as asked for).
        revision: its revision now.
    """

    def __init__(self, url: str, read_revision: int, revision: int) -> None:
        super().__init__(
            f"{url}: changed by another writer since it was read (revision {read_revision}, "
            f"now {revision}): nothing was written; publish again to see the difference "
            "with what is there now"
        )
        self.url, self.read_revision, self.revision = url, read_revision, revision

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.url, self.read_revision, self.revision), self.__dict__)


class MissingCapability(PodsyncError):
    """The runtime lacks an optional capability that was asked of it
    (``podsync.runtime``: ``logs``, ``exec``, ``events`` ...): nothing was done.

    Attributes:
        capability: the capability's name (``podsync.Capability``).
        purpose: what needed it (``podsync logs``).
        protocol: the protocol and methods a runtime implements to have it.
    """

    def __init__(self, capability: str, purpose: str, protocol: str = "") -> None:
        how = f" (a runtime has it with {protocol})" if protocol else ""
        super().__init__(f"{purpose}: the runtime has no {capability} capability{how}")
        self.capability, self.purpose, self.protocol = capability, purpose, protocol

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.capability, self.purpose, self.protocol), self.__dict__)
