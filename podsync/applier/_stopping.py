"""A pod-wide stop: its kills at once, each in its turn (``Kill.concurrent``).

The kubelet's killContainersWithSyncResult (pkg/kubelet/kuberuntime/
kuberuntime_manager.go) runs one killContainer per container, all at the same time, so
that the pod stops within one grace period rather than one per container; a
container's turn (waitForTurn, kuberuntime_termination_order.go) holds its stop signal
until the containers it waits for (``Kill.after``) have stopped. The planner wrote the
turns (``podsync.planner._termination``); this module only keeps them.

``Runtime.stop_container`` blocks until the container has exited, so each kill gets a
thread of its own, outside apply's pool (nothing waits on the pool from inside it).
Every kill runs whatever the others do: one that fails still lets the kills waiting
for it go on (the kubelet marks a container terminated whether its stop failed or not).

May import: the vocabulary, the results, the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import attrs

from podsync.actions._actions import Kill, PodAction
from podsync.applier._results import ActionResult
from podsync.host._clock import Clock

__all__: list[str] = []  # apply's own


@attrs.frozen
class Turn:
    """One kill's place in a pod-wide stop.

    Attributes:
        began: when the kill began, on apply's duration clock: the moment the pod-wide
            stop started, read once for all its kills (so each measures its preStop
            handler and its wait from the same moment, whichever thread runs first).
        wait: ``wait(since, seconds)`` waits until the kills it comes after have
            ended, but no longer than ``seconds`` after ``since`` (a reading of the same
            clock): waitForTurn, whose timer is the grace period left. ``None`` for a
            kill that comes after none.
    """

    began: float
    wait: Callable[[float, float], None] | None


def concurrent_kills(actions: Sequence[PodAction], start: int) -> list[Kill]:
    """The concurrent kills that follow one another from ``actions[start]`` on: one
    pod-wide stop (empty when ``actions[start]`` is not one of them)."""
    group: list[Kill] = []
    for action in actions[start:]:
        if not isinstance(action, Kill) or not action.concurrent:
            break
        group.append(action)
    return group


class _Turns:
    """Who has stopped in one pod-wide stop, and waiting for one's turn."""

    def __init__(self, kills: Sequence[Kill], elapsed: Clock) -> None:
        self.elapsed = elapsed
        self.began = elapsed()
        self.ended = [threading.Event() for _ in kills]
        self.by_container: dict[str, list[threading.Event]] = {}
        for kill, ended in zip(kills, self.ended, strict=True):
            self.by_container.setdefault(kill.container, []).append(ended)

    def turn(self, kill: Kill) -> Turn:
        """``kill``'s turn: its wait lasts until every kill of a container in
        ``kill.after`` has ended, or ``seconds`` have passed since ``since``. A grace
        period used up ends the wait whoever is still stopping: the kubelet's sidecars
        then get their signal together."""

        def wait(since: float, seconds: float) -> None:
            for name in kill.after:
                for ended in self.by_container.get(name, ()):
                    left = seconds - (self.elapsed() - since)
                    if left <= 0 or not ended.wait(left):
                        return

        return Turn(self.began, wait if kill.after else None)


def run_concurrently(
    kills: Sequence[Kill],
    run: Callable[[Kill, Turn], ActionResult],
    elapsed: Clock,
) -> list[ActionResult]:
    """Run ``kills`` at the same time, each through ``run`` with its turn; their
    results, in the order of ``kills``. A kill that raises (a bug: ``run`` reports
    failures as results) ends its turn too, and the first such exception is re-raised
    once every kill has ended."""
    turns = _Turns(kills, elapsed)
    results: list[ActionResult | None] = [None] * len(kills)
    bugs: list[BaseException] = []

    def one(index: int) -> None:
        kill = kills[index]
        try:
            results[index] = run(kill, turns.turn(kill))
        except BaseException as exc:
            bugs.append(exc)
        finally:
            turns.ended[index].set()

    threads = [
        threading.Thread(target=one, args=(i,), name=f"podsync-apply-stop-{i}")
        for i in range(len(kills))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if bugs:
        raise bugs[0]
    done: list[ActionResult] = []
    for result in results:
        assert result is not None  # every thread ended with a result or a bug
        done.append(result)
    return done
