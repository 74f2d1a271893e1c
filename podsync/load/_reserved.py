"""The kubelet's spelling of reserved resources (``--system-reserved``):
``cpu=500m,memory=1Gi``, each amount a Kubernetes quantity read as pod files read it.

Contract: pure; ``resource_list`` gives a ``ResourceList`` or raises ``ValueError`` with
the reason.

May import: the model and the loader's scalars.
"""

from __future__ import annotations

from podsync.load.schema._scalars import _bytes, _milli_cpu
from podsync.load.schema._yaml import _Invalid
from podsync.model._pod import ResourceList

__all__: list[str] = []  # the command line's


def resource_list(text: str) -> ResourceList:
    """``text`` (``cpu=500m,memory=1Gi``) as amounts: milli-CPU and bytes. Only CPU and
    memory are admitted against: any other resource is refused rather than ignored, and
    so is a resource given twice.

    Raises:
        ValueError: the text is not such a list; the message says why.
    """
    amounts: dict[str, int] = {}
    for item in text.split(","):
        name, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not name or not value:
            raise ValueError(
                f"expected RESOURCE=QUANTITY pairs like cpu=500m,memory=1Gi, got {item!r}"
            )
        if name not in ("cpu", "memory"):
            raise ValueError(
                f"{name!r} cannot be reserved: podsync admits pods against cpu and memory only"
            )
        if name in amounts:
            raise ValueError(f"{name} is given twice")
        try:
            amounts[name] = (_milli_cpu if name == "cpu" else _bytes)(value)
        except _Invalid as exc:
            raise ValueError(f"{name}: {exc}") from None
    return ResourceList(**amounts)
