"""Beyond one host: a fleet's hosts file, one sync per host from one process, and
publishing a host's pods to etcd.

``_hosts`` (the hosts file, and a fleet's pods by ``spec.nodeName``), ``_sync_hosts``
(``sync_hosts``) and ``_publish`` (``publish``: validation, diff, compare-and-swap).

May import: model, actions, runtime, host, applier, load, load/schema, load/convert,
loop, exceptions.
"""
