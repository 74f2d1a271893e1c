"""Observe, plan and apply in one call, and the continuous loop around it.

``_sync`` (``observe``, ``sync``: the seed's SyncPods), ``_reconciler`` (``Reconciler``:
the seed's syncLoop, with its triggers and rounds), ``_reporting`` (what the loop
reports and to whom: ``LoopNotice``s for the log, the ``Board`` protocol a status board
answers), ``_workers`` (per-pod workers) and ``_board`` (the status board: health, pod
statuses, metrics, and their HTTP endpoints).

May import: model, spec, actions, planner, status, runtime, runtime/docker, host,
prober, applier, load, etcd, exceptions.
"""
