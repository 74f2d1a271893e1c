"""What Docker got for resources and the pod fields of issue 13, on a real engine.

A pod file as people write it is loaded, synced with ``podsync.sync`` and inspected:
CPU shares, period and quota and the memory limit per container (a memory request is
no limit); the pod's labels and annotations on every container; the hostname, domain
and extra hosts of the network container, as the app containers see them; a terminal
and an open standard input. A file with a refused field changes nothing on the engine.

Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>`` only.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

import podsync
import podsync.cli
from podsync import Pod, parse_pods
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, apply_refused
from tests.support.podman_records import recorded_config, sets_domain_names

MI = 2**20
# Stops at once on SIGTERM (busybox sh as PID 1 would ignore it).
SERVE = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: shop
  uid: {uid}
  labels:
    app: web
    app.kubernetes.io/part-of: shop
  annotations:
    example.com/owner: team a
spec:
  hostname: busybox-1
{subdomain}  hostAliases:
  - ip: 10.1.2.3
    hostnames: [foo.remote, bar.remote]
  terminationGracePeriodSeconds: 1
  containers:
  - name: both
    image: {image}
    workingDir: /tmp
    command: [/bin/sh, -c, "{serve}"]
    resources:
      requests: {{cpu: 250m, memory: 32Mi}}
      limits: {{cpu: 500m, memory: 64Mi}}
  - name: limit-only
    image: {image}
    command: [/bin/sh, -c, "{serve}"]
    resources:
      limits: {{cpu: 1500m}}
  - name: memory-request
    image: {image}
    command: [/bin/sh, -c, "{serve}"]
    resources:
      requests: {{memory: 64Mi, ephemeral-storage: 1Gi}}
  - name: console
    image: {image}
    command: [/bin/cat]
    tty: true
    stdin: true
    stdinOnce: true
  - name: reader
    image: {image}
    command: [/bin/cat]
    stdin: true
"""


# The test image under a tag of this run: present and not :latest, so never pulled.
IMAGE = f"{TEST_IMAGE.rpartition(':')[0]}:fields-{secrets.token_hex(4)}"


@pytest.fixture(scope="module", autouse=True)
def _image(engine: docker.DockerClient) -> Iterator[None]:
    repository, _, tag = IMAGE.rpartition(":")
    assert engine.api.tag(TEST_IMAGE, repository, tag)
    try:
        yield
    finally:
        engine.api.remove_image(IMAGE)


def _load(cleanup: Cleanup, *, subdomain: bool = True) -> Pod:
    """The pod above; ``subdomain``: with ``subdomain: workers`` (a domain name)."""
    uid = str(uuid.uuid4())
    text = POD.format(
        name=f"fields-{uid[:6]}",
        uid=uid,
        image=IMAGE,
        serve=SERVE.replace('"', '\\"'),
        subdomain="  subdomain: workers\n" if subdomain else "",
    )
    (pod,) = parse_pods(text, source="file")
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    return pod


def _inspected(engine: docker.DockerClient, pod: Pod) -> dict[str, dict[str, Any]]:
    listed = engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
    )
    found = {}
    for entry in listed:
        inspected = engine.api.inspect_container(entry["Id"])
        found[inspected["Config"]["Labels"][podsync.labels.LABEL_CONTAINER]] = inspected
    return found


def _options(tmp_path: Path) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        cluster_domain="cluster.local",
        allow_deletions=False,
    )


def test_what_docker_got(
    engine: docker.DockerClient, engine_name: str, cleanup: Cleanup, tmp_path: Path
) -> None:
    # Without its subdomain where the engine cannot set a domain name (podman: the pod
    # would be refused, test_a_domain_name_is_set_or_refused).
    with_domain = sets_domain_names(engine_name)
    domain = "workers.shop.svc.cluster.local" if with_domain else ""
    pod = _load(cleanup, subdomain=with_domain)
    options = _options(tmp_path)

    with DockerRuntime() as runtime:
        result = podsync.sync([pod], runtime, options=options)
        assert result.ok, result.apply_result.summary()
        found = _inspected(engine, pod)
        assert {"net", "both", "limit-only", "memory-request", "console", "reader"} == set(found)

        def resources(name: str) -> tuple[int, int, int, int]:
            host = found[name]["HostConfig"]
            return host["CpuShares"], host["CpuPeriod"], host["CpuQuota"], host["Memory"]

        # The weight from the request, the quota from the limit, the memory limit from
        # the limit; a memory request is no limit (only the OOM score reads it), and no
        # CPU request is the smallest weight (MilliCPUToShares(0) = 2).
        assert (256, 100000, 50000, 64 * MI) == resources("both")
        assert (1536, 100000, 150000, 0) == resources("limit-only")
        assert (2, 0, 0, 0) == resources("memory-request")

        assert "/tmp" == found["both"]["Config"]["WorkingDir"]

        # Labels as they are, annotations as annotation.<key>, podsync's record beside.
        for inspected in found.values():
            labels = inspected["Config"]["Labels"]
            assert "web" == labels["app"]
            assert "shop" == labels["app.kubernetes.io/part-of"]
            assert "team a" == labels["annotation.example.com/owner"]
            assert pod.uid == labels[podsync.labels.LABEL_POD_UID]

        # The pod's host identity is the network container's; its apps share it.
        net = found["net"]
        assert ("busybox-1", domain) == (
            net["Config"]["Hostname"],
            net["Config"].get("Domainname", ""),
        )
        assert ["foo.remote:10.1.2.3", "bar.remote:10.1.2.3"] == net["HostConfig"]["ExtraHosts"]
        app = found["both"]["Id"]
        hostname = runtime.exec_in_container(app, ["/bin/hostname"], 10.0)
        assert (0, b"busybox-1\n") == (hostname.exit_code, hostname.output)
        uts_domain = runtime.exec_in_container(
            app, ["/bin/cat", "/proc/sys/kernel/domainname"], 10.0
        )
        assert (0, f"{domain or '(none)'}\n".encode()) == (
            uts_domain.exit_code,
            uts_domain.output,
        )
        hosts = runtime.exec_in_container(app, ["/bin/cat", "/etc/hosts"], 10.0)
        assert 0 == hosts.exit_code
        assert "10.1.2.3\tfoo.remote" in hosts.output.decode()
        assert "10.1.2.3\tbar.remote" in hosts.output.decode()

        # A terminal and an open standard input: cat waits on it instead of exiting.
        console, reader = found["console"]["Config"], found["reader"]["Config"]
        stdin_once = recorded_config(engine_name, "StdinOnce", True)
        assert (True, True, stdin_once) == (
            console["Tty"],
            console["OpenStdin"],
            console["StdinOnce"],
        )
        assert (False, True, False) == (reader["Tty"], reader["OpenStdin"], reader["StdinOnce"])
        for name in ("console", "reader"):
            state = engine.api.inspect_container(found[name]["Id"])["State"]
            assert state["Running"], (name, state)

        # A second sync changes nothing: what was created is what the hash describes.
        again = podsync.sync([pod], runtime, options=options)
        assert not again.plan.has_changes, again.plan.describe()


def test_a_refused_file_changes_nothing(
    engine: docker.DockerClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad input: the error names the file and the path; nothing is created."""
    name = f"gpu-{uuid.uuid4().hex[:6]}"
    good = tmp_path / "a-good.yaml"
    good.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}-ok}}\n"
        f"spec: {{containers: [{{name: app, image: {TEST_IMAGE}}}]}}\n"
    )
    bad = tmp_path / "b-gpu.yaml"
    bad.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
        f"spec: {{containers: [{{name: app, image: {TEST_IMAGE}, "
        "resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
    )
    code = apply_refused(engine, tmp_path, tmp_path / "root")

    assert 1 == code
    err = capsys.readouterr().err
    assert (
        f"{bad}: $.spec.containers[0].resources.limits['nvidia.com/gpu']: extended resource "
        "'nvidia.com/gpu' is not supported by podsync" in err
    ), err


def test_a_domain_name_is_set_or_refused(
    engine: docker.DockerClient, engine_name: str, cleanup: Cleanup, tmp_path: Path
) -> None:
    """A pod with a subdomain (and a cluster domain) has the domain name
    ``<subdomain>.<namespace>.svc.<domain>``: set in its containers where the engine
    can; refused where it cannot (podman, ``sets_domain_names``), before its network
    container is made - never run without it."""
    pod = _load(cleanup, subdomain=True)

    with DockerRuntime() as runtime:
        result = podsync.sync([pod], runtime, options=_options(tmp_path))
        found = _inspected(engine, pod)
        if sets_domain_names(engine_name):
            assert result.ok, result.apply_result.summary()
            app = found["both"]["Id"]
            uts_domain = runtime.exec_in_container(
                app, ["/bin/cat", "/proc/sys/kernel/domainname"], 10.0
            )
            assert (0, b"workers.shop.svc.cluster.local\n") == (
                uts_domain.exit_code,
                uts_domain.output,
            )
        else:
            (failure,) = result.apply_result.failures
            assert "cannot give a container a domain name (workers.shop.svc" in str(
                failure.exception
            )
            assert {} == found
