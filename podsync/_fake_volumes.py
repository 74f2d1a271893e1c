"""``FakeRuntime``'s named volumes: the protocol's volume calls and the volumes a
container's create makes, as Docker 20.10's local volume driver does them.

Contract: a mixin of ``FakeRuntime`` (``podsync.testing``), which holds the state and
the lock; in memory, no I/O. Docker's rules, by the fake's own code: the local driver's
names (``_fake_rules.volume_name_refusal``), a create of an existing volume that
succeeds and leaves it as it is (labels included), a volume made unlabelled by the
create of a container that mounts it, and no removal of a volume a container (running or
not) mounts.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from podsync._actions import CreateSpec
from podsync._fake_rules import volume_name_refusal
from podsync._fake_state import FakeContainer
from podsync._models import ObservedVolume
from podsync.exceptions import RuntimeCallError

__all__ = ["VolumeCalls"]


class VolumeCalls:
    """The named-volume half of ``FakeRuntime``."""

    # What FakeRuntime provides.
    _lock: threading.RLock
    _volumes: dict[str, ObservedVolume]

    def _record(self, name: str, *args: Any) -> None:  # pragma: no cover - FakeRuntime's
        raise NotImplementedError

    def _sleep(self) -> None:  # pragma: no cover - FakeRuntime's
        raise NotImplementedError

    def _sorted(self) -> list[FakeContainer]:  # pragma: no cover - FakeRuntime's
        raise NotImplementedError

    def add_volume(self, volume: ObservedVolume | str) -> None:
        """Put a named volume on the engine as it is (no call is recorded): an
        ``ObservedVolume``, or a name (unlabelled, as a volume someone made by hand)."""
        with self._lock:
            if isinstance(volume, str):
                volume = ObservedVolume(volume)
            self._volumes[volume.name] = volume

    @property
    def volumes(self) -> list[ObservedVolume]:
        """The named volumes, as ``list_volumes`` would return them (no call recorded)."""
        with self._lock:
            return [self._volumes[n] for n in sorted(self._volumes)]

    def _mount_volumes(self, spec: CreateSpec) -> str | None:
        """At a container's create: the driver's refusal of a volume name it mounts, or
        ``None`` after creating the volumes that do not exist yet, without labels, as
        Docker does (the volume service's ``CreateWithRef``). Called under the lock."""
        for mounted in spec.volumes:
            if (refusal := volume_name_refusal(mounted.volume)) is not None:
                return refusal
        for mounted in spec.volumes:
            self._volumes.setdefault(mounted.volume, ObservedVolume(mounted.volume))
        return None

    def list_volumes(self) -> list[ObservedVolume]:
        """Every named volume, by name."""
        self._sleep()
        with self._lock:
            self._record("list_volumes")
            return [self._volumes[n] for n in sorted(self._volumes)]

    def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create the named volume; one that exists is left as it is, labels included
        (Docker returns it).

        Raises:
            RuntimeCallError: the local driver refuses the name.
        """
        self._sleep()
        with self._lock:
            self._record("create_volume", name, dict(labels))
            refusal = volume_name_refusal(name)
            if refusal is not None:
                raise RuntimeCallError("create_volume", name, refusal)
            self._volumes.setdefault(name, ObservedVolume(name, dict(labels)))

    def remove_volume(self, name: str) -> None:
        """Remove the named volume; removing a missing one succeeds.

        Raises:
            RuntimeCallError: a container, running or not, mounts it ("remove <name>:
                volume is in use - [<ids>]").
        """
        self._sleep()
        with self._lock:
            self._record("remove_volume", name)
            if name not in self._volumes:
                return
            users = [
                c.id
                for c in self._sorted()
                if c.spec is not None and any(v.volume == name for v in c.spec.volumes)
            ]
            if users:
                raise RuntimeCallError(
                    "remove_volume", name, f"remove {name}: volume is in use - [{' '.join(users)}]"
                )
            del self._volumes[name]
