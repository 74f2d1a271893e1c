"""Failed image pulls, remembered between syncs: the kubelet's image pull back-off.

A pull that failed is not tried again at once. The modern kubelet keeps one back-off
entry per pod and image (``EnsureImageExists``, ``pkg/kubelet/images/image_manager.go``:
the key ``<pod uid>_<image>``) in a client-go ``flowcontrol.Backoff``
(``k8s.io/client-go/util/flowcontrol/backoff.go``) that starts at 10 s and doubles up to
300 s (``imageBackOffPeriod``, ``MaxImageBackOff``, ``pkg/kubelet/kubelet.go``); an
entry not updated for twice the maximum is forgotten (``hasExpired``). While a pod's
entry is in back-off, its container waits with ``ImagePullBackOff`` instead of pulling:
a registry that refuses, or a name that does not exist, is not asked every sync period,
which would use up the registry's rate limit for every pod of the host.

``PullFailure`` is one entry, a value; ``pull_failed`` makes the next one after a
failure (``Backoff.Next``) and ``PullFailure.back_off_left`` answers
``IsInBackOffSinceUpdate``. Whoever runs syncs keeps the entries (the loop, ``apply
--wait``; ``podsync.sync(pull_failures=...)``) and hands them to ``plan``, which stays
pure: it reads the failures as it reads probe verdicts.

The entries live in memory only, as the kubelet's: its image back-off is a
``flowcontrol.Backoff`` made when the kubelet starts (``NewMainKubelet``) and never
written down, so a restarted kubelet pulls again at once - and so does a restarted
podsync. Persisting them would hold a pod back after a restart that an operator may
have made to retry it (a registry's credentials fixed, an image pushed).

Contract: frozen values and arithmetic; no clock (the caller says what time it is).
"""

from __future__ import annotations

import attrs

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["PullFailure"]

#: The first back-off after a failed pull, in seconds (the kubelet's imageBackOffPeriod).
IMAGE_BACK_OFF_INITIAL = 10.0
#: The longest back-off, in seconds (the kubelet's MaxImageBackOff).
IMAGE_BACK_OFF_MAX = 300.0
#: Seconds without a failure after which an entry is forgotten and the next failure
#: starts over at ``IMAGE_BACK_OFF_INITIAL`` (client-go's hasExpired: twice the maximum).
IMAGE_BACK_OFF_RESET = 2 * IMAGE_BACK_OFF_MAX


@attrs.frozen
class PullFailure:
    """The last failed pull of ``image`` for pod ``pod_uid``, and how long it holds the
    next one back.

    Attributes:
        pod_uid: the pod whose container needed the image.
        image: the image as the engine names it (``podsync.spec``'s
            ``normalize_image``: ``busybox`` and ``docker.io/library/busybox`` are one).
        at: when the pull failed, seconds since the epoch.
        back_off: seconds after ``at`` during which the image is not pulled again for
            this pod: 10, then doubled after each failure within the back-off's memory,
            at most 300.
        message: the engine's error, for people (the status's ``ErrImagePull``
            message).
    """

    pod_uid: str
    image: str
    at: float
    back_off: float = IMAGE_BACK_OFF_INITIAL
    message: str = ""

    def expired(self, now: float) -> bool:
        """Whether the entry is forgotten at ``now``: no failure for longer than
        ``IMAGE_BACK_OFF_RESET`` (client-go's hasExpired)."""
        return now - self.at > IMAGE_BACK_OFF_RESET

    def back_off_left(self, now: float) -> float:
        """Seconds until the image may be pulled again for the pod; 0 when it may be
        now (the kubelet's ``IsInBackOffSinceUpdate``: in back-off while less than
        ``back_off`` has passed since the failure, and the entry is not forgotten).
        A clock that went back never makes the wait longer than ``back_off``."""
        if self.expired(now):
            return 0.0
        return max(min(self.at + self.back_off - now, self.back_off), 0.0)


def pull_failed(
    previous: PullFailure | None, pod_uid: str, image: str, now: float, message: str
) -> PullFailure:
    """The entry after a pull of ``image`` for ``pod_uid`` failed at ``now`` (client-go's
    ``Backoff.Next``, without its jitter, which is zero for the kubelet's image back-off):
    ``IMAGE_BACK_OFF_INITIAL`` after the first failure, or after ``previous`` was
    forgotten; else twice ``previous.back_off``, at most ``IMAGE_BACK_OFF_MAX``."""
    if previous is None or previous.expired(now):
        back_off = IMAGE_BACK_OFF_INITIAL
    else:
        back_off = min(previous.back_off * 2, IMAGE_BACK_OFF_MAX)
    return PullFailure(pod_uid, image, now, back_off, message)
