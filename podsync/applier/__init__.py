"""Applying a plan: runtime calls, hooks, host files, and what it did.

``_apply`` runs a plan's actions as written, on one bounded pool (its defaults in
``_defaults``); ``_results`` holds what it did (results and events); ``_content_engine``
writes content volumes through the engine and reads their records back;
``_host_empty_dirs`` moves the emptyDir host directories of earlier versions into engine
volumes. Nothing here decides: the planner has.

May import: model, spec, actions, runtime, host, prober, exceptions.
"""
