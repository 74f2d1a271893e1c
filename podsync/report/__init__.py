"""A fleet seen from one place: what a host reports to etcd (its heartbeat, its pod
statuses, its events) and what anyone reads back from there.

``_records`` (the keys under ``/registry/hosts/<host>/`` and their JSON records),
``_reporter`` (``HostReporter``: a ``podsync run`` writing them, a board of the loop),
``_events`` (apply's events and the loop's notices in the kubelet's reasons),
``_scrub`` (Secret values masked in what is reported).

May import: model, status, runtime, host, applier, loop, etcd, exceptions.
"""
