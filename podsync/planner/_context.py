"""The state one plan shares between its per-pod planners: ``PlanContext``.

One ``plan`` call makes one ``PlanContext`` and hands it to every ``PodPlanner``: the
options, the clock reading, the images present (and the user each runs as), the probe
verdicts, the host's resolv.conf, the network container's option inputs, the failed
pulls still in back-off (``PullFailure``, by pod uid and image), and the pulls planned so
far: one per image as the engine names it (``normalize_image``), with the spelling and
the reason of the first container that needed it and every pod that needs it
(``Plan.pulls``, before every pod's actions).

Contract: pure; mutable, private to one ``plan`` call.

May import: the model, the vocabulary, options, the image rules and spec comparison
(``_spec_change``: the network container's inputs). Never ``_pod`` or ``_plan`` (which
import it), a runtime, or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import attrs

from podsync.actions._actions import Pull, Reason
from podsync.actions._options import PlanOptions
from podsync.model._pod import PullPolicy
from podsync.model._pulls import PullFailure
from podsync.planner._spec_change import network_inputs
from podsync.spec._images import normalize_image, should_pull
from podsync.spec._resolv import ResolvConf

__all__: list[str] = []  # the planner's own


@attrs.define
class _PullNeed:
    """A planned pull while the plan is made: the uids of the pods that need it, in
    order, as a dict (an ordered set), so that adding the 10,000th pod costs what adding
    the first did."""

    image: str
    reason: Reason
    pods: dict[str, None]

    def action(self) -> Pull:
        why = {
            Reason.IMAGE_ABSENT: "not present",
            Reason.IMAGE_LATEST: "no pull policy given, and the default for a :latest "
            "or untagged image is Always",
            Reason.PULL_ALWAYS: "pull policy Always",
        }[self.reason]
        return Pull(self.image, self.reason, f"pull {self.image}: {why}", tuple(self.pods))


@attrs.define
class PlanContext:
    """Per-plan state shared by the per-pod planners (mutable, private to one call)."""

    options: PlanOptions
    now: float
    present_images: frozenset[str]
    liveness: Mapping[str, bool]
    host_resolv: ResolvConf
    startup: Mapping[str, bool] = attrs.Factory(dict)
    # Keyed by the normalized reference: "busybox", "busybox:latest" and
    # "docker.io/library/busybox" are one image to the engine, hence one pull.
    pulls: dict[str, _PullNeed] = attrs.Factory(dict)
    normalized: dict[str, str] = attrs.Factory(dict)
    # ``ObservedImage.user`` of each present image that has one, by reference and id.
    image_users: Mapping[str, str] = attrs.Factory(dict)
    # The failed pulls handed to the plan, by (pod uid, normalized image).
    pull_failures: Mapping[tuple[str, str], PullFailure] = attrs.Factory(dict)
    # The network container's option inputs and their memo key (``network_inputs``):
    # the same for every pod of one plan, so made once.
    network: tuple[dict[str, Any], str] = attrs.field(
        default=attrs.Factory(lambda c: network_inputs(c.options, c.host_resolv), takes_self=True)
    )

    def normalize(self, image: str) -> str:
        """``normalize_image``, computed once per spelling and plan."""
        found = self.normalized.get(image)
        if found is None:
            found = self.normalized[image] = normalize_image(image)
        return found

    def need_image(self, image: str, policy: PullPolicy | None, pod_uid: str) -> None:
        """Record that a create needs ``image``; plan a pull when the policy says so.

        ``policy`` is the container's (``None``: none given, the default follows the
        tag); the network container and the helper containers pass ``IF_NOT_PRESENT``
        (seed createNetworkContainer: pulled only when absent). The pull keeps the
        spelling and the reason of the first container that needed it, and lists every
        pod that needs it.
        """
        key = self.normalize(image)
        present = key in self.present_images
        if not should_pull(policy, image, present):
            return
        if policy is PullPolicy.ALWAYS:
            reason = Reason.PULL_ALWAYS
        elif policy is None and present:
            # Pulled although present: only the default policy of a :latest image does.
            reason = Reason.IMAGE_LATEST
        else:
            reason = Reason.IMAGE_ABSENT
        known = self.pulls.get(key)
        if known is None:
            self.pulls[key] = _PullNeed(image, reason, {pod_uid: None})
        else:
            known.pods[pod_uid] = None

    def pull_back_off(
        self, image: str, policy: PullPolicy | None, pod_uid: str
    ) -> tuple[float, PullFailure] | None:
        """The seconds left of the back-off of ``image`` for ``pod_uid``, and its failure,
        when a create of it would pull (``should_pull``) and a pull of it for this pod
        failed less than its back-off ago; ``None`` otherwise (the kubelet's
        ``EnsureImageExists``: an image that need not be pulled is used, back-off or
        not; one that must be is not pulled while ``IsInBackOffSinceUpdate``)."""
        if not self.pull_failures:
            return None
        key = self.normalize(image)
        failure = self.pull_failures.get((pod_uid, key))
        if failure is None or not should_pull(policy, image, key in self.present_images):
            return None
        left = failure.back_off_left(self.now)
        return (left, failure) if left > 0 else None

    def image_present(self, image: str) -> bool:
        return self.normalize(image) in self.present_images

    def image_user(self, image: str) -> str | None:
        """The user ``image`` runs as (``""``: root); ``None`` when absent or unknown."""
        return self.image_users.get(self.normalize(image))

    def pull_actions(self) -> tuple[Pull, ...]:
        """The planned pulls, ordered by normalized reference."""
        return tuple(self.pulls[key].action() for key in sorted(self.pulls))


def by_pod_and_image(failures: Collection[PullFailure]) -> dict[tuple[str, str], PullFailure]:
    """``failures`` by (pod uid, image as the engine names it); of two for one key, the
    later failure: ``PlanContext.pull_failures``."""
    index: dict[tuple[str, str], PullFailure] = {}
    for failure in failures:
        key = (failure.pod_uid, normalize_image(failure.image))
        known = index.get(key)
        if known is None or failure.at > known.at:
            index[key] = failure
    return index
