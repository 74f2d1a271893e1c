"""Security settings on a real engine: what Docker got (``docker inspect``) for pod files
with security contexts, and the pods and containers podsync refuses without creating
anything.

The engine is ``dockerd --bridge=none``: pods use network mode ``none``. AppArmor is
checked where the engine's host has it, and its refusal where it has not.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

import podsync
import podsync.cli
import podsync.spec
from podsync import PlanOptions, Pod, Reason, SyncResult, parse_pods
from podsync.docker import DockerRuntime
from tests.support.engine import (
    PAUSE_IMAGE,
    TEST_IMAGE,
    Cleanup,
    apply_refused,
    remove_containers,
    volume_path,
)
from tests.support.podman_records import (
    recorded_ipc_mode,
    recorded_keys,
    recorded_seccomp,
    recorded_sysctls,
)

# An app process that exits at once on SIGTERM.
SERVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"


@pytest.fixture
def runtime(engine: docker.DockerClient) -> Iterator[DockerRuntime]:
    with DockerRuntime() as rt:
        yield rt


def _options(tmp_path: Path, **fields: Any) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,  # the engine is shared with other tests
        stop_timeout=1,
        **fields,
    )


def _load(cleanup: Cleanup, text: str) -> Pod:
    """The pod of ``text`` (its name is replaced by one unique to this test), registered
    for cleanup."""
    name = f"sec-{uuid.uuid4().hex[:8]}"
    (pod,) = parse_pods(text.replace("NAME", name))
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    for volume in pod.volumes:
        cleanup.add_volume(podsync.spec.empty_dir_volume_name(pod.uid, volume.name))
    return pod


def _sync(pods: list[Pod], runtime: DockerRuntime, options: PlanOptions) -> SyncResult:
    return podsync.sync(pods, runtime, options=options, probe=False)


def _inspect(engine: docker.DockerClient, pod: Pod) -> dict[str, dict[str, Any]]:
    """The pod's containers on the engine, inspected, by pod container name."""
    listed = engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
    )
    found = {}
    for entry in listed:
        inspected = engine.api.inspect_container(entry["Id"])
        found[inspected["Config"]["Labels"][podsync.labels.LABEL_CONTAINER]] = inspected
    return found


def _exec(runtime: DockerRuntime, container_id: str, *command: str) -> str:
    result = runtime.exec_in_container(container_id, list(command), 10.0)
    assert 0 == result.exit_code, result
    return result.output.decode()


RESTRICTED = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  securityContext:
    runAsUser: 1000
    fsGroup: 2000
    supplementalGroups: [4000]
    seccompProfile: {{type: Localhost, localhostProfile: audit.json}}
    sysctls:
    - {{name: kernel.shm_rmid_forced, value: "1"}}
    - {{name: net.ipv4.tcp_syncookies, value: "0"}}
  volumes:
  - {{name: data, emptyDir: {{}}}}
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    volumeMounts: [{{name: data, mountPath: /data}}]
    securityContext:
      runAsGroup: 3000
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {{drop: [ALL], add: [NET_BIND_SERVICE, CHOWN]}}
"""

# Docker's default seccomp action list shortened to "allow everything": a valid profile
# that changes nothing, so the container runs.
ALLOW_ALL = {"defaultAction": "SCMP_ACT_ALLOW"}


def test_what_docker_gets_for_a_restricted_pod(
    engine: docker.DockerClient,
    engine_name: str,
    cleanup: Cleanup,
    runtime: DockerRuntime,
    tmp_path: Path,
) -> None:
    options = _options(tmp_path)
    profiles = Path(options.root_dir) / "seccomp"
    profiles.mkdir(parents=True)
    (profiles / "audit.json").write_text(json.dumps(ALLOW_ALL))
    pod = _load(cleanup, RESTRICTED)

    result = _sync([pod], runtime, options)

    assert result.ok, result.plan.describe() + result.apply_result.summary()
    found = _inspect(engine, pod)
    app, net = found["app"], found["net"]
    host = app["HostConfig"]
    assert "1000:3000" == app["Config"]["User"]
    expected = {
        "GroupAdd": ["2000", "4000"],
        "CapAdd": ["NET_BIND_SERVICE", "CHOWN"],
        "CapDrop": ["ALL"],
        "ReadonlyRootfs": True,
        "Sysctls": recorded_sysctls(engine_name, {"kernel.shm_rmid_forced": "1"}),
    }
    keys = recorded_keys(engine_name, tuple(expected))
    assert {key: expected[key] for key in keys} == {key: host.get(key) for key in keys}
    profile = recorded_seccomp(engine_name, profiles / "audit.json")
    assert ["no-new-privileges", profile] == host["SecurityOpt"]
    # The profile applies: a seccomp filter on the process (checked below, /proc/1/status).
    # The network container holds the pod's network namespace, and its net sysctls.
    assert recorded_sysctls(engine_name, {"net.ipv4.tcp_syncookies": "0"}) == net["HostConfig"].get(
        "Sysctls"
    )
    # The process really runs so, and the emptyDir belongs to the fsGroup, setgid.
    status = _exec(runtime, app["Id"], "/bin/cat", "/proc/1/status")
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    assert ["1000", "3000", "1", "0000000000000401", "2"] == [
        fields["Uid"].split()[0],
        fields["Gid"].split()[0],
        fields["NoNewPrivs"].strip(),
        fields["CapBnd"].strip(),  # CHOWN (bit 0) and NET_BIND_SERVICE (bit 10)
        fields["Seccomp"].strip(),  # 2: a filter
    ]
    # The fsGroup and supplementalGroups (Docker lists the primary group there too).
    assert {"2000", "4000"} <= set(fields["Groups"].split())
    # The app container shares that namespace, so it sees the value; its IPC one is its own.
    assert ["0", "1"] == [
        _exec(runtime, app["Id"], "/bin/cat", f"/proc/sys/{name}").strip()
        for name in ("net/ipv4/tcp_syncookies", "kernel/shm_rmid_forced")
    ]
    _exec(runtime, app["Id"], "/bin/touch", "/data/made-by-1000")
    volume = volume_path(engine, podsync.spec.empty_dir_volume_name(pod.uid, "data"))
    made = (volume / "made-by-1000").stat()
    assert (1000, 2000) == (made.st_uid, made.st_gid)
    root = volume.stat()
    assert (0o2777, 0, 2000) == (root.st_mode & 0o7777, root.st_uid, root.st_gid)


def test_host_namespaces_and_a_shared_process_namespace(
    engine: docker.DockerClient,
    engine_name: str,
    cleanup: Cleanup,
    runtime: DockerRuntime,
    tmp_path: Path,
) -> None:
    shared = _load(
        cleanup,
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  shareProcessNamespace: true
  containers:
  - {{name: app, image: {TEST_IMAGE}, imagePullPolicy: Never, command: [/bin/sh, -c, "{SERVE}"]}}
""",
    )
    hosted = _load(
        cleanup,
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  hostNetwork: true
  hostPID: true
  hostIPC: true
  containers:
  - {{name: app, image: {TEST_IMAGE}, imagePullPolicy: Never, command: [/bin/sh, -c, "{SERVE}"]}}
""",
    )

    result = _sync([shared, hosted], runtime, _options(tmp_path, allow_host_namespaces=True))

    assert result.ok, result.plan.describe() + result.apply_result.summary()
    first, second = _inspect(engine, shared), _inspect(engine, hosted)
    assert f"container:{first['net']['Id']}" == first["app"]["HostConfig"]["PidMode"]
    # One PID namespace: the network container's.
    assert 1 == len(
        {
            _exec(runtime, c["Id"], "/bin/readlink", "/proc/self/ns/pid")
            for c in (first["app"], first["net"])
        }
    )
    assert [("host", recorded_ipc_mode(engine_name, "host"))] * 2 == [
        (c["HostConfig"]["PidMode"], c["HostConfig"]["IpcMode"]) for c in second.values()
    ]
    # The host's PID and IPC namespaces themselves (the engine runs on this machine).
    host = [os.readlink(f"/proc/self/ns/{ns}") for ns in ("pid", "ipc")]
    assert [host] * 2 == [
        [
            _exec(runtime, c["Id"], "/bin/readlink", f"/proc/self/ns/{ns}").strip()
            for ns in ("pid", "ipc")
        ]
        for c in second.values()
    ]
    assert "host" == second["net"]["HostConfig"]["NetworkMode"]
    assert f"container:{second['net']['Id']}" == second["app"]["HostConfig"]["NetworkMode"]


def test_run_as_non_root_on_a_root_image_creates_nothing(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    """The test image names no user: it runs as root, so a runAsNonRoot pod is held with
    the kubelet's words, and not even its network container is created."""
    pod = _load(
        cleanup,
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  securityContext: {{runAsNonRoot: true}}
  containers:
  - {{name: app, image: {TEST_IMAGE}, imagePullPolicy: Never}}
""",
    )

    result = _sync([pod], runtime, _options(tmp_path))

    assert [(Reason.RUN_AS_NON_ROOT, "app")] == [
        (a.reason, a.container) for a in result.plan.actions
    ], result.plan.describe()
    assert "container has runAsNonRoot and image will run as root" in result.plan.describe()
    assert {} == _inspect(engine, pod)


def test_apparmor_is_applied_or_refused(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    """Where the engine's host has AppArmor the profile is Docker's; where it has not, the
    create fails with the reason, and the container does not run unconfined."""
    pod = _load(
        cleanup,
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: NAME
  annotations:
    container.apparmor.security.beta.kubernetes.io/app: runtime/default
spec:
  containers:
  - {{name: app, image: {TEST_IMAGE}, imagePullPolicy: Never, command: [/bin/sh, -c, "{SERVE}"]}}
""",
    )
    has_apparmor = any("apparmor" in str(o) for o in engine.info().get("SecurityOptions") or ())

    result = _sync([pod], runtime, _options(tmp_path))

    found = _inspect(engine, pod)
    if has_apparmor:
        assert result.ok
        assert "docker-default" == found["app"]["AppArmorProfile"]
    else:
        assert ["app"] == [r.action.container for r in result.apply_result.failures]
        assert (
            "AppArmor profile runtime/default asked for, but AppArmor is not enabled on the "
            "Docker engine's host: podsync does not run the container without it"
        ) in str(result.apply_result.failures[0].error)
        assert "app" not in found


def test_a_missing_seccomp_profile_is_refused(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    pod = _load(
        cleanup,
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    securityContext: {{seccompProfile: {{type: Localhost, localhostProfile: missing.json}}}}
""",
    )
    options = _options(tmp_path)

    result = _sync([pod], runtime, options)

    assert ["app"] == [r.action.container for r in result.apply_result.failures]
    path = os.path.join(options.root_dir, "seccomp", "missing.json")
    assert f"seccomp profile {path} does not exist" in str(result.apply_result.failures[0].error)
    assert "app" not in _inspect(engine, pod)


def test_a_bad_security_setting_changes_nothing_on_the_engine(
    engine: docker.DockerClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: sec-bad-{uuid.uuid4().hex[:8]}}}
spec:
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    securityContext: {{capabilities: {{add: [NET_ADMN]}}}}
"""
    )
    code = apply_refused(engine, path, tmp_path / "root")

    assert 1 == code
    assert (
        f"{path}: $.spec.containers[0].securityContext.capabilities.add[0]: unknown "
        "capability 'NET_ADMN'"
    ) in capsys.readouterr().err


@pytest.fixture
def non_root_image(engine: docker.DockerClient, cleanup: Cleanup) -> Iterator[str]:
    """The test image with ``USER 1000:1000``, made by a commit (nothing is pulled)."""
    reference = f"podsync-test/busybox:user-{uuid.uuid4().hex[:8]}"
    made = engine.api.create_container(TEST_IMAGE, command=["/bin/true"])
    cleanup.add(made["Id"])
    repository, _, tag = reference.rpartition(":")
    engine.api.commit(made["Id"], repository, tag, changes=["USER 1000:1000"])
    try:
        yield reference
    finally:
        # The pod's containers use it: they go first, so the image leaves nothing behind.
        # Found by the image's id: podman's "ancestor" filter does not match the name as
        # given (its containers name the image docker.io/...).
        image_id = engine.api.inspect_image(reference)["Id"]
        users = [c["Id"] for c in engine.api.containers(all=True) if c["ImageID"] == image_id]
        remove_containers(engine, users)
        engine.api.remove_image(reference)


def test_run_as_non_root_on_a_non_root_image_runs(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    runtime: DockerRuntime,
    tmp_path: Path,
    non_root_image: str,
) -> None:
    """The runtime reports each image's user (``ObservedImage.user``), and a runAsNonRoot
    pod on an image whose user is 1000 runs as 1000."""
    users = {t: i.user for i in runtime.list_images() for t in i.tags}
    pod = _load(
        cleanup,
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  securityContext: {{runAsNonRoot: true}}
  containers:
  - {{name: app, image: {non_root_image}, command: [/bin/sh, -c, "{SERVE}"]}}
""",
    )

    result = _sync([pod], runtime, _options(tmp_path))

    assert ("", "1000:1000") == (users[TEST_IMAGE], users[non_root_image])
    assert result.ok, result.plan.describe() + result.apply_result.summary()
    app = _inspect(engine, pod)["app"]
    assert "1000" == _exec(runtime, app["Id"], "/bin/id", "-u").strip()


NON_ROOT_WRITER = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: NAME}}
spec:
  securityContext: {{runAsUser: 1000}}
  volumes:
  - {{name: scratch, emptyDir: {{}}}}
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: [/bin/sh, -c, "{SERVE}"]
    volumeMounts: [{{name: scratch, mountPath: /scratch}}]
"""


def test_a_non_root_user_can_write_to_an_empty_dir_without_fs_group(
    engine: docker.DockerClient, cleanup: Cleanup, runtime: DockerRuntime, tmp_path: Path
) -> None:
    """An emptyDir is writable by any user of the pod, as the kubelet makes it (mode
    0777, empty_dir.go setupDir): a pod that runs as user 1000 without an fsGroup can
    still write its scratch files."""
    pod = _load(cleanup, NON_ROOT_WRITER)

    result = _sync([pod], runtime, _options(tmp_path))

    assert result.ok, result.plan.describe() + result.apply_result.summary()
    app = _inspect(engine, pod)["app"]
    _exec(runtime, app["Id"], "/bin/touch", "/scratch/made-by-1000")
    volume = volume_path(engine, podsync.spec.empty_dir_volume_name(pod.uid, "scratch"))
    assert 1000 == (volume / "made-by-1000").stat().st_uid
    # The volume's root is the kubelet's 0777, root's.
    root = volume.stat()
    assert (0o777, 0, 0) == (root.st_mode & 0o7777, root.st_uid, root.st_gid)
