"""What an engine says of itself: its kind and version (``EngineInfo``), as a host's
heartbeat reports them (``podsync.report``), the modern kubelet's
``NodeSystemInfo.containerRuntimeVersion`` (``docker://20.10.24``).

Contract: a frozen value; pure.
"""

from __future__ import annotations

import attrs

__all__: list[str] = []


@attrs.frozen
class EngineInfo:
    """An engine's kind and version.

    Attributes:
        kind: ``docker``, ``podman``, or another runtime's name (``fake``).
        version: the engine's version as it gives it (``20.10.24+dfsg1``, ``4.3.1``);
            ``""`` when it gives none.
    """

    kind: str
    version: str = ""

    @property
    def runtime_version(self) -> str:
        """``kind://version``, as the kubelet writes ``containerRuntimeVersion``."""
        return f"{self.kind}://{self.version}" if self.version else self.kind
