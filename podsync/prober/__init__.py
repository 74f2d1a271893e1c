"""Probes and lifecycle hooks.

``_rules`` holds the prober's rules, purely (thresholds, periods, the startup gate, the
stored form); ``_handlers`` runs exec, httpGet and tcpSocket handlers against
containers; ``_probing`` is one sync's probing: which probes are due, running them, and
the states they leave.

May import: model, spec, runtime, host, exceptions.
"""
