"""An ``ssh://`` engine's pooled connection is checked before it is reused.

The docker SDK's ``SSHConnectionPool`` hands back a pooled connection without urllib3's
check that its peer is still there; one whose ``docker system dial-stdio`` had ended
failed the next call ("I/O operation on closed file": a flaky CI run of
``tests/engine/test_remote_engines.py``). podsync's pool class skips such connections.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("paramiko", reason="the ssh extra (paramiko) is not installed")

from docker.transport import sshconn

from podsync.runtime.docker._connection import (
    _drop_ended_ssh_connections,
    _ssh_connection_ended,
)


class _Conn:
    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.closed = False

    def close(self) -> None:
        self.closed = True


def _channel(**state: Any) -> SimpleNamespace:
    """A paramiko channel's state: closed, eof_received, and whether its command exited."""
    exited = state.pop("exited", False)
    return SimpleNamespace(
        closed=state.get("closed", False),
        eof_received=state.get("eof_received", False),
        exit_status_ready=lambda: exited,
    )


def _process(returncode: int | None) -> SimpleNamespace:
    return SimpleNamespace(proc=SimpleNamespace(poll=lambda: returncode))


@pytest.mark.parametrize(
    ("sock", "ended"),
    [
        (None, False),  # not connected yet
        (_channel(), False),
        (_channel(closed=True), True),
        (_channel(eof_received=True), True),
        (_channel(exited=True), True),
        (_process(None), False),  # the ssh command runs
        (_process(255), True),  # it exited
    ],
    ids=["new", "open", "closed", "eof", "command-exited", "ssh-runs", "ssh-exited"],
)
def test_which_connections_have_ended(sock: Any, ended: bool) -> None:
    assert _ssh_connection_ended(sock) is ended


def test_the_pool_skips_and_closes_ended_connections() -> None:
    _drop_ended_ssh_connections()
    _drop_ended_ssh_connections()  # once: the class is replaced a single time
    pool_class = sshconn.SSHConnectionPool
    assert getattr(pool_class, "podsync_checks", False)
    assert pool_class.__mro__[1].__name__ == "SSHConnectionPool"
    pool = pool_class(host="core@node1", maxsize=4)
    ended, live = _Conn(_channel(eof_received=True)), _Conn(_channel())
    # urllib3 fills the queue with empty slots (None: make a new connection); the two
    # pooled connections take the place of two of them, the ended one on top.
    pool.pool.get_nowait()
    pool.pool.get_nowait()
    pool.pool.put_nowait(live)
    pool.pool.put_nowait(ended)

    assert pool._get_conn(timeout=0) is live
    assert ended.closed
    assert not live.closed
    # Then the empty slots: a new connection, not connected yet.
    fresh = pool._get_conn(timeout=0)
    assert fresh not in (ended, live)
    assert fresh.sock is None
