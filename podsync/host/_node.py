"""The node pods are loaded for: this machine's name and what it can give a container.

Kubernetes resolves a few environment values from the node a pod runs on: the downward
API's ``spec.nodeName`` and ``resourceFieldRef`` limits a container does not set, which
fall back to the node's allocatable CPU and memory (``ExtractResourceValueByContainer
NameAndNodeAllocatable``, ``pkg/api/v1/resource/helpers.go``). The loader resolves them
when it reads a pod file, from a ``NodeInfo``: ``NodeInfo.this_host()`` by default, or
one the caller gives (tests, or a planner for another machine).

Layering: read by the loader (``podsync.load.convert._document``,
``podsync.load._config``); it reads the machine only in ``this_host``.
"""

from __future__ import annotations

import os
import socket

import attrs

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["NodeInfo"]


@attrs.frozen
class NodeInfo:
    """The node the pods run on, as the loader resolves environment values against it.

    Attributes:
        name: the node's name: ``spec.nodeName`` in ``fieldRef``, and the name a pod's
            ``nodeName`` is compared with (a pod naming another node is loaded with a
            warning).
        milli_cpu: the CPU a container without a CPU limit may use, in milli-CPU
            (``resourceFieldRef`` ``limits.cpu`` of such a container).
        memory: the memory a container without a memory limit may use, in bytes.
    """

    name: str
    milli_cpu: int
    memory: int

    @classmethod
    def this_host(cls) -> NodeInfo:
        """This machine: its host name lower-cased (the kubelet's default node name,
        ``nodeutil.GetHostname``), its online CPUs and its physical memory (the node's
        capacity; podsync reserves nothing, so allocatable is capacity)."""
        pages = os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
        page_size = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 0
        return cls(
            name=socket.gethostname().strip().lower(),
            milli_cpu=(os.cpu_count() or 1) * 1000,
            memory=max(pages, 0) * max(page_size, 0),
        )
