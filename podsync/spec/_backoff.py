"""Back-off: a delay that doubles after each failure, up to a maximum, and starts over
after a success.

The kubelet waits this way wherever it retries: a crash-looping container's restarts
(``pkg/kubelet/kuberuntime``, kubelet-modern.md: 10 s doubling to 5 min) and the
clients' ``flowcontrol.Backoff`` (``k8s.io/client-go/util/flowcontrol/backoff.go``).
podsync does the same in six places - crash-loop restarts (``BackOffPolicy``), a sync
round that failed and the engine's event stream (``podsync.loop._reconciler``), an etcd
watch (``podsync.load._etcd_watch``), ``apply --wait`` (``podsync.cli._wait``) and the
Docker runtime's wait for a name's holder (``podsync.runtime.docker``) - and all of them
take their delays from here.

Contract: pure. ``doubling`` is a function of its arguments; ``Backoff`` holds one
sequence of delays and is told of failures and successes: it reads no clock and waits
for nothing (the caller waits, on its own clock).
"""

from __future__ import annotations

import attrs

__all__: list[str] = []

# 2 ** 30 times any first delay is far beyond any sane maximum; capping the exponent
# keeps the float finite for absurd failure counts.
_MAX_DOUBLINGS = 30


def doubling(first: float, maximum: float, failures: int) -> float:
    """The delay after ``failures`` failures in a row: none before the first, ``first``
    after it, then twice as long after each further one, never more than ``maximum``."""
    if failures <= 0:
        return 0.0
    return float(min(first * 2 ** min(failures - 1, _MAX_DOUBLINGS), maximum))


@attrs.define
class Backoff:
    """One sequence of doubling delays: ``first``, ``2 * first``, ... up to ``maximum``.

    ``delay`` is the delay to wait now; ``next()`` returns it and doubles the one after
    (a failure); ``reset()`` starts over at ``first`` (a success). Not thread-safe: one
    loop owns one ``Backoff``.
    """

    first: float
    maximum: float
    failures: int = 0

    @property
    def delay(self) -> float:
        """The delay to wait now: ``first`` until the first failure is counted."""
        return doubling(self.first, self.maximum, self.failures + 1)

    def next(self) -> float:
        """The delay to wait now; the one after it is twice as long (up to ``maximum``)."""
        delay = self.delay
        self.failures += 1
        return delay

    def reset(self) -> None:
        """Start over: the next delay is ``first`` again."""
        self.failures = 0
