#!/usr/bin/env python3
"""A small orchestrator built on podsync's public API.

It keeps its desired pods in memory (``podsync.PodSet``, ``Pod`` objects built in
Python: no YAML), runs podsync's loop on them (``podsync.Reconciler(pods=...)``),
changes the set while the loop runs - adds a pod, edits one, removes one - prints the
engine's events as podsync reports them (``on_event``) and the pods' statuses
(``podsync.pod_status``), and exits by itself: 0 when every step converged, 1 when one
did not within ``--timeout`` seconds.

    python examples/orchestrator.py \\
        --image busybox:latest --network-image registry.k8s.io/pause:3.10

The pods run in the namespace ``--namespace`` (``podsync-example``), each in a network
of its own with ``--network-mode none`` (the default: loopback only). The images are
never pulled: ``--image`` and ``--network-image`` must be on the engine (or set
``EXAMPLE_IMAGE`` / ``EXAMPLE_NETWORK_IMAGE``).
``--keep`` leaves the pods running at the end; otherwise the set is emptied and the
loop stops them before the program exits.

Ownership. The example's pods are in a scope of their own (``--scope``, ``example``):
the loop removes the pods of that scope it no longer desires, and never touches any
other pod on the engine - another program's, another scope's, ``podsync run``'s.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time

import podsync
from podsync.docker import DockerRuntime

_OUTPUT = threading.Lock()


def say(line: str) -> None:
    """Print ``line`` whole: the loop's threads report events while the main thread
    reports statuses."""
    with _OUTPUT:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def sleeper(image: str, message: str) -> podsync.Container:
    """A container that says ``message`` and waits, and ends at once on SIGTERM."""
    script = f"echo {message}; trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"
    return podsync.Container(
        "app",
        image,
        command=("sh", "-c", script),
        env=(podsync.EnvVar("MESSAGE", message),),
        image_pull_policy=podsync.PullPolicy.NEVER,
    )


def make_pod(name: str, namespace: str, image: str, message: str) -> podsync.Pod:
    return podsync.Pod(
        name,
        (sleeper(image, message),),
        namespace=namespace,
        labels={"app": name, "managed-by": "orchestrator-example"},
        termination_grace_period_seconds=2,
    )


class Orchestrator:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.desired = podsync.PodSet()
        self.changed = threading.Event()  # an event came: look at the statuses again
        self.options = podsync.PlanOptions(
            network_image=args.network_image,
            network_mode=args.network_mode,
            root_dir=args.root_dir,
            # Exited containers go at the next collection, whatever their age; images
            # are left alone (the engine may be shared).
            gc=podsync.GCPolicy(min_age=0, remove_dangling_images=False),
            # What the loop creates is labelled with the scope; what it removes is
            # only what carries the label.
            scope=args.scope,
        )
        self.runtime = DockerRuntime()

    def on_event(self, event: podsync.Event) -> None:
        """The loop's report of each action and failed probe: said, and the statuses
        looked at again at once (``converge`` waits for this)."""
        say(f"event: {event.kind.value} {event.pod} {event.message}".rstrip())
        if event.kind is podsync.EventKind.FAILED:
            say(f"  {event.pod}: an action failed; the loop retries it")
        self.changed.set()

    def on_notice(self, notice: podsync.LoopNotice) -> None:
        say(f"notice: {notice.kind.value} {notice.message}")

    def statuses(self) -> tuple[list[podsync.PodStatus], list[str]]:
        """The desired pods' statuses, and the containers of pods no longer desired."""
        pods = self.desired.pods()
        # A dry run: observe and plan, apply nothing (the loop applies).
        result = podsync.sync(
            pods,
            self.runtime,
            options=self.options,
            probe=False,
            before_apply=lambda plan, observation: False,
        )
        containers = result.observation.containers
        statuses = [
            podsync.pod_status(p, containers, plan=result.plan, options=self.options) for p in pods
        ]
        names = {p.key for p in pods}
        uids = {p.uid for p in pods}
        scope = self.args.scope
        left = sorted(
            c.name
            for c in containers
            if (owner := podsync.ownership(c)) is not None
            and owner.scope == scope
            and owner.pod_key not in names
        )
        # The state volumes of the scope's pods removed go with them.
        left.extend(
            f"volume {v.name}"
            for v in self.runtime.list_volumes()
            if (vowner := podsync.volume_ownership(v)) is not None
            and vowner.scope == scope
            and vowner.pod_uid not in uids
        )
        return statuses, left

    def converge(self, step: str) -> bool:
        """Wait until every desired pod runs and is ready, and no other pod is left."""
        deadline = time.monotonic() + self.args.timeout
        while True:
            statuses, left = self.statuses()
            ready = all(
                s.phase is podsync.PodPhase.RUNNING
                and any(c.type == "Ready" and c.status for c in s.conditions)
                for s in statuses
            )
            if ready and not left:
                say(f"step {step}: converged")
                for s in statuses:
                    say(f"  status: {s.pod} {s.phase.value} {s.message}")
                return True
            if time.monotonic() > deadline:
                say(f"step {step}: did not converge in {self.args.timeout:g}s")
                for s in statuses:
                    say(f"  status: {s.pod} {s.phase.value} {s.message}")
                for name in left:
                    say(f"  left: {name}")
                return False
            # Woken by the next event, or after a second (a container that stays up
            # makes no event).
            self.changed.wait(1.0)
            self.changed.clear()

    def run(self) -> int:
        a = self.args
        ns, image = a.namespace, a.image
        loop = podsync.Reconciler(
            pods=self.desired,
            runtime=self.runtime,
            options=self.options,
            sync_period=5,
            gc_period=5,
            on_event=self.on_event,
            on_notice=self.on_notice,
        )
        ok = True
        with loop:
            self.desired.set(
                [make_pod("web", ns, image, "v1"), make_pod("worker", ns, image, "v1")]
            )
            ok = self.converge("start: web and worker")
            if ok:
                self.desired.add(make_pod("cache", ns, image, "v1"))  # a pod added
                self.desired.add(make_pod("web", ns, image, "v2"))  # a pod edited: replaced
                self.desired.remove(f"{ns}/worker")  # a pod removed: stopped
                ok = self.converge("change: cache added, web edited, worker removed")
            if not a.keep:
                self.desired.set([])
                ok = self.converge("stop: every pod removed") and ok
        return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--image",
        default=os.environ.get("EXAMPLE_IMAGE", "busybox:latest"),
        help="the pods' image, present on the engine (it is never pulled)",
    )
    parser.add_argument(
        "--network-image",
        default=os.environ.get("EXAMPLE_NETWORK_IMAGE", podsync.DEFAULT_NETWORK_IMAGE),
        help="the pods' network container image, present on the engine",
    )
    parser.add_argument(
        "--network-mode", default="none", help="the pods' network ('' for a bridge)"
    )
    parser.add_argument("--namespace", default="podsync-example")
    parser.add_argument("--scope", default="example", help="the scope the pods are in")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per step")
    parser.add_argument("--keep", action="store_true", help="leave the pods running")
    parser.add_argument("--root-dir", default="", help="podsync's root directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="podsync-example-") as scratch:
        args.root_dir = args.root_dir or scratch
        return Orchestrator(args).run()


if __name__ == "__main__":
    sys.exit(main())
