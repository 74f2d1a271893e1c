"""One sync's probing: which probes are due, running them, and the states they leave.

The prober's rules are ``_rules``'s (pure); this module is the part that does I/O. Per
running container of a desired pod that has probes, it reads the container's probe
record from the engine (``_records``; an earlier podsync's from the pod's directory,
``podsync.host._files``), runs the probes that are due
(``_handlers``), and folds their results into new states. The verdicts are what the plan
and the pod status need:

* ``liveness`` - False for a started container whose liveness verdict is failure: the
  plan kills it (``plan(..., liveness=...)``);
* ``startup`` - the decided startup verdicts: False kills the container as a liveness
  failure does, True says it has started (``plan(..., startup=...)``);
* ``readiness`` - the readiness verdicts (``pod_status(..., readiness=...)``).

A container whose startup probe succeeds gets its liveness and readiness probes run in
the same sync (when they are past their initial delay), as the kubelet triggers the
readiness probe of a started container that is not ready yet, so that one ``apply``
can see a slow starter both started and ready.

The new states are written back (``save``) by every sync but a dry run (``podsync
plan --probe``, ``sync(..., record_probes=False)``), which counts nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from podsync.host._files import prune_probe_records, read_probe_records
from podsync.model._pod import ObservedContainer, Pod
from podsync.prober._handlers import (
    ProbedContainer,
    ProbeOutcome,
    ProbeTarget,
    probed_containers,
    run_probes,
)
from podsync.prober._rules import (
    ProbeKind,
    ProbeResult,
    ProbeState,
    due_probes,
    probes_of,
    started,
    states_for,
    states_from_json,
    states_to_json,
)
from podsync.runtime._protocol import Runtime, VolumeRuntime
from podsync.spec._labels import VOLUME_KIND_PROBE_RECORD
from podsync.spec._records import Record, by_container, probe_record_labels, probe_record_volume

# Nothing here is public API: ``podsync.sync`` probes through it.
__all__: list[str] = []

States = dict[ProbeKind, ProbeState]


@attrs.frozen
class ProbeRound:
    """What one sync's probing found (see the module docstring).

    Attributes:
        liveness: by container id: False when its liveness verdict is failure; True for
            the other started containers with a liveness probe.
        startup: by container id: the decided startup verdicts (True: started).
        readiness: by container id: True when its readiness verdict is success.
        outcomes: every probe run, in the order run (``healthy`` None: could not run).
        states: by container id: the pod uid and the container's probe states.
        changed: the ids whose states differ from their records.
    """

    liveness: dict[str, bool] = attrs.field(factory=dict)
    startup: dict[str, bool] = attrs.field(factory=dict)
    readiness: dict[str, bool] = attrs.field(factory=dict)
    outcomes: tuple[ProbeOutcome, ...] = ()
    states: Mapping[str, tuple[str, States]] = attrs.field(factory=dict)
    changed: frozenset[str] = frozenset()

    def failures(self, outcome: ProbeOutcome) -> tuple[int, int]:
        """How many failures in a row ``outcome``'s probe has now, of how many that
        decide (its failureThreshold), for messages."""
        _, states = self.states[outcome.target.container_id]
        state = states[outcome.target.kind]
        threshold = outcome.target.failure_threshold
        count = state.run if state.last_result is ProbeResult.FAILURE and state.run else threshold
        return min(count, threshold), threshold

    def decided_kill(self, outcome: ProbeOutcome) -> bool:
        """Whether ``outcome`` made the verdict that kills its container."""
        if outcome.target.kind is ProbeKind.READINESS or outcome.healthy is not False:
            return False
        _, states = self.states[outcome.target.container_id]
        return states[outcome.target.kind].verdict is ProbeResult.FAILURE


def _records(
    probed: Sequence[ProbedContainer], root_dir: str, in_engine: Mapping[str, str]
) -> dict[str, str]:
    """The probe records of ``probed``: those in the engine, else (pods an earlier podsync
    kept a directory for) those under the root directory."""
    by_pod: dict[str, list[str]] = {}
    for p in probed:
        if p.observed.id not in in_engine:
            by_pod.setdefault(p.pod.uid, []).append(p.observed.id)
    found: dict[str, str] = {}
    for uid, ids in by_pod.items():
        found.update(read_probe_records(root_dir, uid, ids))
    found.update(
        (p.observed.id, in_engine[p.observed.id]) for p in probed if p.observed.id in in_engine
    )
    return found


def probe(
    desired: Sequence[Pod],
    observed: Sequence[ObservedContainer],
    runtime: Runtime,
    *,
    root_dir: str,
    now: float,
    timeout: float | None = None,
    adopt_2014_containers: bool = False,
    records: Mapping[str, str] | None = None,
) -> ProbeRound:
    """Run the due probes of the running containers of ``desired`` pods at ``now``.

    Args:
        desired: the desired pods.
        observed: every container on the engine.
        runtime: where exec probes run and addresses come from.
        root_dir: where an earlier podsync kept probe records (the pod directories):
            read for the containers without a record in the engine.
        now: the time of this round, seconds since the epoch.
        timeout: seconds every probe may take; ``None``: its own ``timeoutSeconds``.
        adopt_2014_containers: the plan's option (which containers are the pods').
        records: the probe records in the engine, by container id
            (``podsync.spec._records.probe_records``).

    Raises:
        OSError: a probe record exists but cannot be read.
    """
    probed = probed_containers(desired, observed, adopt_2014_containers=adopt_2014_containers)
    if not probed:
        return ProbeRound()
    by_id = {p.observed.id: p for p in probed}
    records = _records(probed, root_dir, records or {})
    states: dict[str, States] = {}
    recorded: dict[str, States | None] = {}
    for p in probed:
        text = records.get(p.observed.id)
        known = states_from_json(text) if text is not None else None
        recorded[p.observed.id] = known
        states[p.observed.id] = states_for(p.spec, known)

    outcomes: list[ProbeOutcome] = []
    due = {
        p.observed.id: due_probes(
            p.spec, states[p.observed.id], started_at=p.observed.start_time, now=now
        )
        for p in probed
    }
    # Two passes at most: the second runs the liveness and readiness probes of the
    # containers whose startup probe succeeded in the first.
    for _ in range(2):
        targets = [
            ProbeTarget.of(p, kind, probes_of(p.spec)[kind])
            for p in probed
            for kind in due.get(p.observed.id, ())
        ]
        if not targets:
            break
        for outcome in run_probes(targets, runtime, timeout=timeout):
            outcomes.append(outcome)
            if outcome.healthy is None:
                continue  # could not be run: the kubelet throws the result away
            cid, kind = outcome.target.container_id, outcome.target.kind
            result = ProbeResult.SUCCESS if outcome.healthy else ProbeResult.FAILURE
            spec_probe = probes_of(by_id[cid].spec)[kind]
            states[cid][kind] = states[cid][kind].after(spec_probe, result, now=now)
        just_started = {
            t.container_id
            for t in targets
            if t.kind is ProbeKind.STARTUP
            and states[t.container_id][ProbeKind.STARTUP].verdict is ProbeResult.SUCCESS
        }
        due = {
            p.observed.id: due_probes(
                p.spec, states[p.observed.id], started_at=p.observed.start_time, now=now
            )
            for p in probed
            if p.observed.id in just_started
        }

    liveness: dict[str, bool] = {}
    startup: dict[str, bool] = {}
    readiness: dict[str, bool] = {}
    for p in probed:
        cid, s = p.observed.id, states[p.observed.id]
        has_started = started(p.spec, s)
        if ProbeKind.STARTUP in s and s[ProbeKind.STARTUP].verdict is not ProbeResult.UNKNOWN:
            startup[cid] = s[ProbeKind.STARTUP].verdict is ProbeResult.SUCCESS
        if ProbeKind.LIVENESS in s and has_started:
            liveness[cid] = s[ProbeKind.LIVENESS].verdict is not ProbeResult.FAILURE
        if ProbeKind.READINESS in s:
            readiness[cid] = s[ProbeKind.READINESS].verdict is ProbeResult.SUCCESS
    return ProbeRound(
        liveness=liveness,
        startup=startup,
        readiness=readiness,
        outcomes=tuple(outcomes),
        states={p.observed.id: (p.pod.uid, states[p.observed.id]) for p in probed},
        changed=frozenset(cid for cid, s in states.items() if recorded.get(cid) != s),
    )


def save(
    probing: ProbeRound,
    root_dir: str,
    runtime: Runtime,
    records: Sequence[Record] = (),
    *,
    at: float,
) -> None:
    """Write the probe records whose states changed, in the engine
    (``podsync.spec._records``: a new record volume each, the container's older ones
    removed), and remove the records of the probed pods' containers that no longer run
    (a new container starts afresh) - in the engine (``records``: the ones listed),
    and under ``root_dir`` where an earlier podsync kept them.

    Raises:
        RuntimeCallError: the engine failed.
        OSError: the filesystem refused to remove an earlier podsync's record.
    """
    if not isinstance(runtime, VolumeRuntime):
        # No named volumes, no records: a probe's state lives in this process alone,
        # and a new podsync process starts its probes afresh (as a restarted kubelet).
        return
    listed = by_container(r for r in records if r.kind == VOLUME_KIND_PROBE_RECORD)
    keep: dict[str, set[str]] = {}
    for cid, (uid, states) in sorted(probing.states.items()):
        keep.setdefault(uid, set()).add(cid)
        if cid in probing.changed:
            text = states_to_json(states)
            name = probe_record_volume(cid, text)
            # The new record first, then the older ones: never none in between.
            runtime.create_volume(name, probe_record_labels(uid, cid, text, at))
            for old in listed.get(cid, ()):
                if old.volume != name:
                    runtime.remove_volume(old.volume)
    for cid, found in sorted(listed.items()):
        for record in found:
            if record.pod_uid in keep and cid not in keep[record.pod_uid]:
                runtime.remove_volume(record.volume)
    for uid, ids in sorted(keep.items()):
        prune_probe_records(root_dir, uid, ids)
