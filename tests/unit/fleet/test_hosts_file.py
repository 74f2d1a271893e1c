"""A fleet's hosts file (``podsync.fleet.load_hosts``): read as strictly as a pod file, every
problem with the file and its ``$.path``."""

from __future__ import annotations

from pathlib import Path

import pytest

from podsync import ConfigError, NodeInfo
from podsync.fleet import Host, HostTLS, host_root_dir, load_host_pods, load_hosts

HERE = NodeInfo(name="builder", milli_cpu=2000, memory=4 * 2**30)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_hosts(path, this_host=HERE)
    return [str(p) for p in caught.value.problems]


def test_names_map_to_engines_short_and_long_forms(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    path = _write(
        tmp_path,
        f"""\
hosts:
  node-a: unix:///run/podsync/a.sock
  node-b.example.com:
    engine: tcp://127.0.0.1:2376
    tls:
      ca: {ca}
    cpu: "4"
    memory: 8Gi
  node-c: ssh://ops@node-c
""",
    )
    assert load_hosts(path, this_host=HERE) == (
        Host("node-a", "unix:///run/podsync/a.sock", NodeInfo("node-a", 2000, 4 * 2**30)),
        Host(
            "node-b.example.com",
            "tcp://127.0.0.1:2376",
            NodeInfo("node-b.example.com", 4000, 8 * 2**30),
            HostTLS(ca=str(ca)),
        ),
        Host("node-c", "ssh://ops@node-c", NodeInfo("node-c", 2000, 4 * 2**30)),
    )


def test_every_problem_is_named_with_the_file_and_its_path(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
hosts:
  Node_A: unix:///a.sock
  node-b: http://example.com
  node-c:
    engine: unix:///c.sock
    tls: {ca: /nonexistent/ca.pem}
    cpus: 4
  node-d:
    memory: lots
  node-e: 42
extra: 1
""",
    )
    assert _problems(path) == [
        f"{path}: $.extra: unknown key (expected only 'hosts')",
        f"{path}: $.hosts.Node_A: 'Node_A' is not a valid node name: a DNS-1123 subdomain "
        "(lowercase letters, digits, '-' and '.', at most 253 characters)",
        f"{path}: $.hosts.node-b: 'http://example.com' is not an engine address: expected "
        "unix://, tcp:// or ssh://",
        f"{path}: $.hosts.node-c.cpus: unknown key (expected engine, tls, cpu, memory)",
        f"{path}: $.hosts.node-c.tls: TLS is for tcp:// engines, not 'unix:///c.sock'",
        f"{path}: $.hosts.node-c.tls.ca: no such file: /nonexistent/ca.pem",
        f"{path}: $.hosts.node-d.engine: expected an engine address (unix://, tcp://, ssh://), "
        "got nothing",
        f"{path}: $.hosts.node-d.memory: 'lots' is not a valid quantity: expected a number "
        "with an optional suffix, like 128Mi, 1G or 512",
        f"{path}: $.hosts.node-e: expected an engine address or a mapping, got 42",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected one document with 'hosts:', found nothing"),
        ("hosts: {}\n", "$.hosts: expected a mapping of host names to engines, got a mapping"),
        ("- a\n", "$: expected a mapping with 'hosts:', got a list"),
        ("hosts:\n  a: unix:///a\n  a: unix:///b\n", "duplicate key"),
        ("hosts: [\n", "YAML"),
    ],
)
def test_a_file_that_is_not_a_hosts_mapping(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    (problem,) = _problems(path)
    assert problem.startswith(f"{path}: ")
    assert message.lower() in problem.lower()


def test_an_unreadable_file(tmp_path: Path) -> None:
    (problem,) = _problems(tmp_path / "missing.yaml")
    assert problem == f"{tmp_path / 'missing.yaml'}: cannot read: No such file or directory"


def test_each_host_has_its_own_state_root() -> None:
    assert host_root_dir("/var/lib/podsync", "node-a") == "/var/lib/podsync/hosts/node-a"
    assert host_root_dir("/r", "a") != host_root_dir("/r", "b")


def test_relative_tls_files_are_the_hosts_files_neighbours(tmp_path: Path) -> None:
    (tmp_path / "certs").mkdir()
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / "certs" / name).write_text("x")
    path = _write(
        tmp_path,
        "hosts:\n  a:\n    engine: tcp://127.0.0.1:2376\n"
        "    tls: {ca: certs/ca.pem, cert: certs/cert.pem, key: certs/key.pem}\n",
    )
    (host,) = load_hosts(path, this_host=HERE)
    certs = tmp_path / "certs"
    assert host.tls == HostTLS(
        str(certs / "ca.pem"), str(certs / "cert.pem"), str(certs / "key.pem")
    )


def test_each_pod_is_read_for_its_hosts_node(tmp_path: Path) -> None:
    """The downward API of a fleet's pod is its host's: ``spec.nodeName`` and the CPU a
    container without a limit may use are the host's, not this machine's."""
    hosts = load_hosts(
        _write(
            tmp_path,
            "hosts:\n  node-a: unix:///a.sock\n"
            "  node-b:\n    engine: unix:///b.sock\n    cpu: '8'\n",
        ),
        this_host=HERE,
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: web}
  spec:
    nodeName: node-b
    containers:
    - name: app
      image: busybox:1
      env:
      - name: NODE
        valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
      - name: CPUS
        valueFrom: {resourceFieldRef: {resource: limits.cpu}}
"""
    )
    desired = load_host_pods([pod], hosts, hosts_file="hosts.yaml")
    assert list(desired) == ["node-a", "node-b"]
    assert desired["node-a"] == ()
    ((web,),) = [desired["node-b"]]
    env = {e.name: str(e.value) for e in web.containers[0].env}
    assert (env["NODE"], env["CPUS"]) == ("node-b", "8")
