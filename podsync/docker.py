"""The Docker runtime: podsync's ``Runtime`` protocol on the docker SDK.

Usage::

    from podsync.docker import DockerRuntime

    with DockerRuntime() as runtime:                    # DOCKER_HOST, or the local socket
        containers = runtime.list_containers()

    DockerRuntime(host="ssh://admin@node1")            # any host the SDK accepts
    DockerRuntime(host="tcp://node1:2376", tls=docker.tls.TLSConfig(...))

This module is the public face of ``podsync/runtime/docker/``, where the runtime lives
split by concern (its docstring says how it works).
"""

from __future__ import annotations

from podsync.runtime.docker._runtime import DEFAULT_HOST, DEFAULT_TIMEOUT, DockerRuntime

__all__ = ["DEFAULT_HOST", "DEFAULT_TIMEOUT", "DockerRuntime"]
