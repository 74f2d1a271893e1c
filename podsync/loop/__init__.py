"""Observe, plan and apply in one call, and the continuous loop around it.

``_sync`` (``observe``, ``sync``: the seed's SyncPods), ``_reconciler`` (``Reconciler``:
the seed's syncLoop, with its triggers and rounds), ``_workers`` (per-pod workers) and
``_board`` (what the loop reports: health, pod statuses, metrics, and their HTTP
endpoints).

May import: model, spec, actions, planner, status, runtime, runtime/docker, host,
prober, applier, load, exceptions.
"""
