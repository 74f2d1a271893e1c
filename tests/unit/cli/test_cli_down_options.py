"""``podsync down`` takes every option ``podsync apply`` takes (issue 30), so that a
script keeps one set of flags for both, as ``terraform destroy`` takes apply's
variables. One row per option of apply's parser: it is honoured as apply honours it,
ignored (it cannot change what down removes: the removal is the same as without it), or
refused (it would change what is removed, were it ignored). The table must name every
option apply has, so that a new one is classified when it is added."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from podsync.cli._args import _DEFAULT_STOP_TIMEOUT, build_parser
from podsync.cli._checks import _check_combinations, _UsageError
from podsync.testing import MUTATING_CALL_NAMES, FakeRuntime
from tests.unit.cli import test_cli_unit as unit
from tests.unit.cli.test_cli_unit import PAUSE, Result, pod_yaml, running_pods, write

# The command-line fixtures of tests/unit/cli/test_cli_unit.py (FakeRuntime, a fake clock).
clock, fake, run = unit.clock, unit.fake, unit.run

HONOURED, IGNORED, REFUSED = "honoured", "ignored", "refused"

# (apply's option, down's arguments with it, what down does with it, refusal message).
# Honoured rows of the planning group run on FakeRuntime; those of the engine, reading
# and output groups (down took them before) are parsed and checked only: they need an
# engine, a URL or an etcd to act on.
ROWS: list[tuple[str, list[str], str, str]] = [
    ("--docker-host", ["-H", "unix:///run/other.sock"], HONOURED, ""),
    ("--tls", ["--tls"], HONOURED, ""),
    ("--tlsverify", ["--tlsverify"], HONOURED, ""),
    ("--tlscacert", ["--tlscacert", "ca.pem"], HONOURED, ""),
    ("--tlscert", ["--tlscert", "cert.pem"], HONOURED, ""),
    ("--tlskey", ["--tlskey", "key.pem"], HONOURED, ""),
    ("--root-dir", ["--root-dir", "/var/lib/podsync-other"], HONOURED, ""),
    ("--network-image", ["--network-image", "other/pause:9"], IGNORED, ""),
    ("--network-mode", ["--network-mode", "bridge"], IGNORED, ""),
    ("--cluster-dns", ["--cluster-dns", "10.0.0.10"], IGNORED, ""),
    ("--cluster-domain", ["--cluster-domain", "cluster.local"], IGNORED, ""),
    # Not read: the file does not exist, and down does not fail on it.
    ("--resolv-conf", ["--resolv-conf", "/nonexistent/resolv.conf"], IGNORED, ""),
    ("--pod-security", ["--pod-security", "restricted"], IGNORED, ""),
    ("--allow-privileged", ["--allow-privileged"], IGNORED, ""),
    ("--allow-host-namespaces", ["--allow-host-namespaces"], IGNORED, ""),
    ("--allowed-host-paths", ["--allowed-host-paths", "/srv/data:ro"], IGNORED, ""),
    ("--allowed-capabilities", ["--allowed-capabilities", "NET_ADMIN"], IGNORED, ""),
    ("--allow-unconfined", ["--allow-unconfined"], IGNORED, ""),
    ("--allowed-unsafe-sysctls", ["--allowed-unsafe-sysctls", "net.core.*"], IGNORED, ""),
    ("--system-reserved", ["--system-reserved", "cpu=500m,memory=1Gi"], IGNORED, ""),
    ("--scope", ["--scope", "team-a"], HONOURED, ""),
    ("--no-delete", ["--no-delete"], IGNORED, ""),
    ("--stop-timeout", ["--stop-timeout", "3"], HONOURED, ""),
    ("--no-probe", ["--no-probe"], IGNORED, ""),
    ("--adopt-2014-containers", ["--adopt-2014-containers"], HONOURED, ""),
    ("--max-per-container", ["--max-per-container", "5"], IGNORED, ""),
    ("--min-age", ["--min-age", "3600"], IGNORED, ""),
    ("--max-total", ["--max-total", "9"], IGNORED, ""),
    ("--remove-dangling-images", ["--remove-dangling-images"], IGNORED, ""),
    ("--workers", ["--workers", "2"], HONOURED, ""),
    ("--hook-timeout", ["--hook-timeout", "3"], HONOURED, ""),
    ("--max-bytes", ["--max-bytes", "1000000"], HONOURED, ""),
    ("--source-header", ["--source-header", "X-Team: a"], HONOURED, ""),
    ("--source-ca", ["--source-ca", "ca.pem"], HONOURED, ""),
    ("--etcd-ca", ["--etcd-ca", "ca.pem"], HONOURED, ""),
    ("--etcd-tls", ["--etcd-tls"], HONOURED, ""),
    ("--etcd-cert", ["--etcd-cert", "cert.pem"], HONOURED, ""),
    ("--etcd-key", ["--etcd-key", "key.pem"], HONOURED, ""),
    ("--etcd-user", ["--etcd-user", "root"], HONOURED, ""),
    ("--etcd-password-file", ["--etcd-password-file", "pw"], HONOURED, ""),
    ("--etcd-insecure", ["--etcd-insecure"], HONOURED, ""),
    ("--log-format", ["--log-format", "json"], HONOURED, ""),
    ("--plan", ["--plan", "p.json"], REFUSED, "not --plan FILE"),
    ("--wait", ["--wait"], IGNORED, ""),
    ("--timeout", ["--timeout", "5"], IGNORED, ""),
    ("--output", ["-o", "json"], HONOURED, ""),
    ("--hosts", ["--hosts", "hosts.yaml"], REFUSED, "not --hosts"),
    ("--json", ["--json"], HONOURED, ""),
]
_IDS = [row[0] for row in ROWS]


def _options(command: str) -> set[str]:
    """The options of one command's parser, each by its long name."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        next(s for s in action.option_strings if s.startswith("--"))
        for action in commands.choices[command]._actions
        if action.option_strings and action.dest != "help"
    }


def test_the_table_names_every_option_of_apply_and_down_has_them_all() -> None:
    assert _options("apply") == set(_IDS)
    assert _options("apply") <= _options("down")


@pytest.mark.parametrize(("option", "argv", "kind", "message"), ROWS, ids=_IDS)
def test_down_parses_every_option_of_apply(
    option: str, argv: list[str], kind: str, message: str
) -> None:
    """No usage error, except where ignoring the option would remove something else."""
    args = build_parser().parse_args(["down", *argv, "web.yaml"])

    if kind == REFUSED:
        with pytest.raises(_UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
            _check_combinations(args)
    else:
        _check_combinations(args)


def _removal(fake: FakeRuntime, since: int) -> list[tuple[str, object]]:
    """The engine changes made after call ``since``: each call's name, and a stop's
    timeout (sorted: the workers make them in any order)."""
    return sorted(
        (c.name, c.args[1] if c.name == "stop" else None)
        for c in fake.calls[since:]
        if c.name in MUTATING_CALL_NAMES
    )


_IGNORED = [row for row in ROWS if row[2] == IGNORED]


@pytest.mark.parametrize(
    ("option", "argv", "kind", "message"), _IGNORED, ids=[row[0] for row in _IGNORED]
)
def test_an_ignored_option_does_not_change_what_down_removes(
    run: Callable[..., Result],
    fake: FakeRuntime,
    tmp_path: Path,
    option: str,
    argv: list[str],
    kind: str,
    message: str,
) -> None:
    """``down OPTION FILE`` makes the same engine changes as ``down FILE``, and exits 0."""
    web = write(tmp_path, "web.yaml", pod_yaml("web"))
    assert 0 == run("apply", web, runtime=fake).code
    mark = len(fake.calls)
    assert 0 == run("down", web, runtime=fake).code
    plain = _removal(fake, mark)
    assert 0 == run("apply", web, runtime=fake).code
    mark = len(fake.calls)

    result = run("down", *argv, web, runtime=fake)

    assert 0 == result.code, result.err
    assert plain == _removal(fake, mark)
    # Something was removed (the comparison is not of two empty lists), stopped within
    # the default timeout.
    assert ("stop", _DEFAULT_STOP_TIMEOUT) in plain
    assert [] == fake.containers


def test_stop_timeout_is_honoured(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """A planning option that changes the removal is used as apply uses it."""
    web = write(tmp_path, "web.yaml", pod_yaml("web"))
    assert 0 == run("apply", web, runtime=fake).code
    mark = len(fake.calls)

    assert 0 == run("down", "--stop-timeout", "3", web, runtime=fake).code
    assert ("stop", 3) in _removal(fake, mark)
    assert ("stop", _DEFAULT_STOP_TIMEOUT) not in _removal(fake, mark)


def test_no_delete_over_a_whole_scope_is_refused(
    run: Callable[..., Result], fake: FakeRuntime
) -> None:
    """``--no-delete`` keeps the pods the sources do not describe: with ``--scope`` and
    no SOURCEs that is every pod, so it is refused rather than ignored."""
    result = run("down", "--scope", "team-a", "--no-delete", runtime=fake)

    assert 1 == result.code
    assert "would remove nothing" in result.err
    assert [] == [c for c in fake.call_names() if c in MUTATING_CALL_NAMES]


def test_a_scripts_shared_flags_work_for_apply_then_down(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    """One flag set, kept by a script for both commands: apply runs the pods, down
    removes them (and only them: another scope's pod stays)."""
    pods = tmp_path / "pods"
    pods.mkdir()
    write(pods, "web.yaml", pod_yaml("web"))
    write(pods, "db.yaml", pod_yaml("db"))
    other = write(tmp_path, "cache.yaml", pod_yaml("cache"))
    flags = [
        *("--root-dir", str(tmp_path / "root")),
        *("--network-image", PAUSE, "--network-mode", "none"),
        *("--scope", "team-a", "--stop-timeout", "5", "--pod-security", "baseline"),
        *("--cluster-dns", "10.0.0.10", "--cluster-domain", "cluster.local"),
        *("--resolv-conf", "", "--no-probe", "--min-age", "0", "--workers", "2"),
    ]
    assert 0 == run("apply", "--scope", "team-b", other, runtime=fake).code

    applied = run("apply", *flags, str(pods), runtime=fake, engine_options=False)
    assert 0 == applied.code, applied.err
    assert {"web", "db", "cache"} == running_pods(fake)

    downed = run("down", *flags, str(pods), runtime=fake, engine_options=False)

    assert 0 == downed.code, downed.err
    assert {"cache"} == running_pods(fake)
