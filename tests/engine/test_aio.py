"""``podsync.aio`` on the real engine: the events of a pod's start, read by the docker
SDK in a thread, arrive through the async iterator while ``podsync.aio.sync`` starts the
pod, and leaving the iterator closes the engine's stream."""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path

import docker

import podsync
import podsync.aio
from podsync import PlanOptions, parse_pods
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_CONTAINER, LABEL_POD_UID
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

POD_YAML = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: aio-{uuid.uuid4().hex[:8]}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
"""


def test_the_events_of_a_pods_start_arrive_through_the_async_iterator(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    (pod,) = parse_pods(POD_YAML, source="file")
    cleanup.add_label(f"{LABEL_POD_UID}={pod.uid}")
    options = PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
    )

    async def main() -> tuple[podsync.SyncResult, list[str]]:
        started: list[str] = []
        with DockerRuntime() as runtime:
            async with podsync.aio.events(runtime) as feed:
                synced = await podsync.aio.sync([pod], runtime, options=options)
                async with asyncio.timeout(30):
                    async for event in feed:
                        if event.labels.get(LABEL_POD_UID) == pod.uid and event.action == "start":
                            # Each container once, when it first starts: podman (4.3)
                            # sends the network container's start again as an app
                            # that joins it starts (libpod starts its dependencies).
                            name = event.labels[LABEL_CONTAINER]
                            if name not in started:
                                started.append(name)
                        if len(started) == 2:
                            break
        return synced, started

    synced, started = asyncio.run(main())

    assert synced.ok, synced.apply_result.summary()
    assert ["net", "app"] == started  # the network container first, as apply starts them
    for reader in [t for t in threading.enumerate() if t.name == "podsync-aio-events"]:
        reader.join(10)  # the stream is closed: its reader ends
        assert not reader.is_alive()
