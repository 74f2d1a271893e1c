"""``podsync plan`` and Pod Security, without an engine: with the default flags the pods
of issue 28 are rejected, each with its failed checks named, and the flag that the
message names admits it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from podsync.testing import FakeRuntime
from tests.unit.cli import test_cli_unit as unit
from tests.unit.cli.test_cli_unit import Result, pod_yaml, write

# The command-line fixtures of tests/unit/cli/test_cli_unit.py (FakeRuntime, a fake clock).
clock, fake, run = unit.clock, unit.fake, unit.run


def with_spec(name: str, spec: str = "", container: str = "", init: str = "") -> str:
    """``pod_yaml(name)`` with more pod fields (``spec``), more fields of its container
    (``container``) and, with ``init``, an init container ``setup`` with those fields."""
    text = pod_yaml(name)
    if spec or init:
        init_block = (
            f"  initContainers:\n    - name: setup\n      image: app:1\n{init}" if init else ""
        )
        text = text.replace("  containers:\n", spec + init_block + "  containers:\n")
    return text + container


ROOT = "  volumes:\n    - name: root\n      hostPath: {path: /}\n"
SOCKET = "  volumes:\n    - name: sock\n      hostPath: {path: /var/run/docker.sock}\n"

#: (pod name, pod file, the flags that admit it, the violations of its rejection, reason)
ISSUE_PODS = [
    (
        "root",
        with_spec("root", ROOT),
        ["--allowed-host-paths", "/"],
        'hostPath volumes (volume "root" uses host path "/"; allow with --allowed-host-paths)',
        "host-path-not-allowed",
    ),
    (
        "socket",
        with_spec("socket", SOCKET),
        ["--allowed-host-paths", "/var/run/docker.sock:ro,/srv"],
        'hostPath volumes (volume "sock" uses host path "/var/run/docker.sock"; allow with '
        "--allowed-host-paths)",
        "host-path-not-allowed",
    ),
    (
        "sys-admin",
        with_spec(
            "sys-admin",
            container="      securityContext:\n        capabilities: {add: [SYS_ADMIN]}\n",
        ),
        ["--allowed-capabilities", "cap_sys_admin"],
        'non-default capabilities (container "app" must not include "SYS_ADMIN" in '
        "securityContext.capabilities.add; allow with --allowed-capabilities)",
        "pod-security",
    ),
    (
        "all-caps",
        with_spec(
            "all-caps", container="      securityContext:\n        capabilities: {add: [ALL]}\n"
        ),
        ["--allowed-capabilities", "ALL"],
        'non-default capabilities (container "app" must not include "ALL" in '
        "securityContext.capabilities.add; allow with --allowed-capabilities)",
        "pod-security",
    ),
    (
        "unconfined",
        with_spec("unconfined", "  securityContext:\n    seccompProfile: {type: Unconfined}\n"),
        ["--allow-unconfined"],
        'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined"; '
        "allow with --allow-unconfined)",
        "pod-security",
    ),
    (
        "privileged-init",
        with_spec("privileged-init", init="      securityContext: {privileged: true}\n"),
        ["--allow-privileged"],
        'privileged (container "setup" must not set securityContext.privileged=true; allow '
        "with --allow-privileged)",
        "privileged-not-allowed",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "flags", "violations", "reason"), ISSUE_PODS, ids=[p[0] for p in ISSUE_PODS]
)
def test_the_issues_pods_are_rejected_by_default_and_admitted_by_their_flag(
    run: Callable[..., Result],
    fake: FakeRuntime,
    tmp_path: Path,
    name: str,
    text: str,
    flags: list[str],
    violations: str,
    reason: str,
) -> None:
    source = write(tmp_path, f"{name}.yaml", text)

    rejected = run("plan", source, runtime=fake)
    admitted = run("plan", *flags, source, runtime=fake)
    opened = run("plan", "--pod-security", "privileged", source, runtime=fake)

    assert 0 == rejected.code
    assert [
        f"podsync: warning: pod default/{name} is rejected and left alone: violates "
        f'PodSecurity "baseline": {violations} [{reason}]'
    ] == [line for line in rejected.err_lines if "rejected and left alone" in line]
    assert name not in rejected.out
    for result in (admitted, opened):
        assert (0, False) == (result.code, "rejected" in result.err)
        assert f"default/{name}" in result.out


def test_a_read_only_host_path_refuses_a_writable_mount(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path
) -> None:
    mount = "      volumeMounts: [{name: sock, mountPath: /run/docker.sock}]\n"
    source = write(tmp_path, "socket.yaml", with_spec("socket", SOCKET, mount))

    result = run("plan", "--allowed-host-paths", "/var/run:ro", source, runtime=fake)

    assert (
        'hostPath volumes (container "app" must mount volume "sock" readOnly: host path '
        '"/var/run" is allowed read-only; allow with --allowed-host-paths)'
    ) in result.err
    assert "socket" not in result.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--pod-security", "strict"],
            "argument --pod-security: invalid choice: 'strict' (choose from 'privileged', "
            "'baseline', 'restricted')",
        ),
        (
            ["--allowed-host-paths", "srv/data"],
            "argument --allowed-host-paths: an allowed host path must be absolute, got 'srv/data'",
        ),
        (
            ["--allowed-host-paths", "/srv:rw"],
            "argument --allowed-host-paths: expected PATH or PATH:ro, got '/srv:rw' (only "
            "':ro' may follow a path)",
        ),
        (
            ["--allowed-capabilities", "NET_ADMIN,SUPERPOWER"],
            "argument --allowed-capabilities: 'SUPERPOWER' is not a capability name "
            "(NET_ADMIN, SYS_TIME, ..., or ALL)",
        ),
    ],
)
def test_bad_pod_security_options_are_usage_errors(
    run: Callable[..., Result], tmp_path: Path, argv: list[str], message: str
) -> None:
    source = write(tmp_path, "web.yaml", pod_yaml("web"))

    result = run("plan", *argv, source)

    assert 1 == result.code
    assert f"podsync plan: error: {message}" in result.err_lines
