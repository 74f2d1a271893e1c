"""Runs ``podsync`` (the command line, in this process) against a view of the Docker
engine holding only the containers of one pod namespace: ``python -m tests.support.loop_runner
NAMESPACE run ...``.

The engine tests of ``podsync run`` (``tests/engine/test_loop.py``) need deletions -
a pod file removed must stop its pod - and the engine is shared with other test
sessions: with the view, the loop deletes nothing outside its test's namespace. The
rest of the command is the real one: arguments, signals, logs, ``DockerRuntime``.
"""

from __future__ import annotations

import sys
from typing import Any

from podsync.cli import _main as cli
from podsync.cli._engine import docker_runtime
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_POD_NAMESPACE
from podsync.model._pod import ObservedContainer


class NamespaceView:
    """A ``DockerRuntime`` that lists only the containers of one pod namespace."""

    def __init__(self, inner: DockerRuntime, namespace: str) -> None:
        self.inner = inner
        self.namespace = namespace

    def list_containers(self) -> list[ObservedContainer]:
        return [
            c
            for c in self.inner.list_containers()
            if c.labels.get(LABEL_POD_NAMESPACE) == self.namespace
        ]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def main(argv: list[str]) -> int:
    namespace, rest = argv[0], argv[1:]

    def factory(host: str | None) -> Any:
        inner = docker_runtime(host)
        assert isinstance(inner, DockerRuntime)
        return NamespaceView(inner, namespace)

    return cli.main(rest, runtime_factory=factory)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
