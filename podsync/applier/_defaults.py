"""The defaults of ``apply``: its workers and the time a postStart handler may take.

Apart from ``_apply`` so that the command line's parser shows them without importing
``apply`` itself (the hooks' handlers, the host's files: issue 33, a command imports only
what it uses). ``podsync.DEFAULT_WORKERS`` and ``podsync.DEFAULT_HOOK_TIMEOUT`` are these.
"""

from __future__ import annotations

__all__ = ["DEFAULT_HOOK_TIMEOUT", "DEFAULT_WORKERS"]

#: Worker threads of ``apply`` unless told otherwise. The work is engine-bound, not
#: CPU-bound: a worker spends nearly all its time waiting for one engine API call, so
#: the CPU count is irrelevant. Eight overlaps enough round trips to hide the latency
#: of each call, while the engine itself serializes much of create and start (name
#: reservation, network setup in containerd), so beyond a handful of concurrent calls
#: a sync gets little faster and the engine's latency for everyone else gets worse.
#: Each concurrent call also holds its own engine connection (``DockerRuntime`` lends
#: one client per call; over ``ssh://`` each is an ssh process), which stays cheap at
#: eight. The benchmark against the raw SDK is the place to revisit the number.
DEFAULT_WORKERS = 8

#: Seconds a postStart handler may take (exec, connect, HTTP request). A preStop
#: handler has the container's grace period instead (``Kill.timeout``).
DEFAULT_HOOK_TIMEOUT = 10.0
