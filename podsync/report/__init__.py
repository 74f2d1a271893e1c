"""A fleet seen from one place: what a host reports to etcd (its heartbeat, its pods'
statuses, its events) and what anyone reads back from there.

``_records`` (the keys under ``/registry/hosts/<host>/`` and their JSON records).

May import: nothing of podsync.
"""
