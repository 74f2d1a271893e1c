"""Loading security settings from pod files as people write them: container and pod
``securityContext``, host namespaces, and the AppArmor and seccomp annotations.

Each case is a whole pod file (block YAML, flow-style KYAML, JSON) and the exact model
or the exact message it gives.
"""

from __future__ import annotations

import pytest

from podsync import (
    Capabilities,
    ConfigError,
    Container,
    Pod,
    PodSecurityContext,
    Port,
    ProfileType,
    SecurityContext,
    SecurityProfile,
    Sysctl,
    load_pods,
)

RUNTIME_DEFAULT = SecurityProfile(ProfileType.RUNTIME_DEFAULT)
UNCONFINED = SecurityProfile(ProfileType.UNCONFINED)


def load_one(tmp_path, text: str, name: str = "pod.yaml") -> Pod:
    path = tmp_path / name
    path.write_text(text)
    (pod,) = load_pods([str(path)])
    return pod


def problems(tmp_path, text: str, name: str = "pod.yaml") -> list[str]:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_pods([str(path)])
    prefix = f"{path}: "
    return [str(p).removeprefix(prefix) for p in info.value.problems]


# --- files that load -------------------------------------------------------------------

# The Kubernetes documentation's "security-context-2" example, extended: a container
# that runs as a given user and group, drops every capability but one and cannot gain
# privileges, on a read-only root filesystem.
RESTRICTED = """\
apiVersion: v1
kind: Pod
metadata:
  name: security-context-demo
spec:
  securityContext:
    runAsUser: 1000
    runAsGroup: 3000
    fsGroup: 2000
    supplementalGroups: [4000, 5000]
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - name: sec-ctx-vol
    emptyDir: {}
  containers:
  - name: sec-ctx-demo
    image: busybox:1.28
    command: ["sh", "-c", "sleep 1h"]
    volumeMounts:
    - name: sec-ctx-vol
      mountPath: /data/demo
    securityContext:
      runAsUser: 2000
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities:
        drop: ["ALL"]
        add: ["NET_BIND_SERVICE"]
"""

# The same in KYAML, the flow-style subset Kubernetes' documentation now uses.
RESTRICTED_KYAML = """\
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "security-context-demo",
  },
  spec: {
    securityContext: {
      runAsUser: 1000,
      runAsGroup: 3000,
      fsGroup: 2000,
      supplementalGroups: [4000, 5000],
      seccompProfile: {type: "RuntimeDefault"},
    },
    volumes: [{name: "sec-ctx-vol", emptyDir: {}}],
    containers: [
      {
        name: "sec-ctx-demo",
        image: "busybox:1.28",
        command: ["sh", "-c", "sleep 1h"],
        volumeMounts: [{name: "sec-ctx-vol", mountPath: "/data/demo"}],
        securityContext: {
          runAsUser: 2000,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: {drop: ["ALL"], add: ["NET_BIND_SERVICE"]},
        },
      },
    ],
  },
}
"""

RESTRICTED_JSON = """\
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "security-context-demo"},
  "spec": {
    "securityContext": {
      "runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000,
      "supplementalGroups": [4000, 5000], "seccompProfile": {"type": "RuntimeDefault"}
    },
    "volumes": [{"name": "sec-ctx-vol", "emptyDir": {}}],
    "containers": [{
      "name": "sec-ctx-demo",
      "image": "busybox:1.28",
      "command": ["sh", "-c", "sleep 1h"],
      "volumeMounts": [{"name": "sec-ctx-vol", "mountPath": "/data/demo"}],
      "securityContext": {
        "runAsUser": 2000,
        "allowPrivilegeEscalation": false,
        "readOnlyRootFilesystem": true,
        "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}
      }
    }]
  }
}
"""

RESTRICTED_POD_CONTEXT = PodSecurityContext(
    run_as_user=1000,
    run_as_group=3000,
    fs_group=2000,
    supplemental_groups=(4000, 5000),
    seccomp_profile=RUNTIME_DEFAULT,
)
RESTRICTED_CONTEXT = SecurityContext(
    run_as_user=2000,
    allow_privilege_escalation=False,
    read_only_root_filesystem=True,
    capabilities=Capabilities(add=("NET_BIND_SERVICE",), drop=("ALL",)),
)


@pytest.mark.parametrize(
    ("name", "text"),
    [("pod.yaml", RESTRICTED), ("pod.kyaml", RESTRICTED_KYAML), ("pod.json", RESTRICTED_JSON)],
)
def test_restricted_pod_in_every_spelling(tmp_path, name, text):
    """Block YAML, KYAML and JSON give the same model, field by field."""
    pod = load_one(tmp_path, text, name)

    assert RESTRICTED_POD_CONTEXT == pod.security_context
    assert RESTRICTED_CONTEXT == pod.containers[0].security_context


def pod_file(spec: str = "", container: str = "", annotations: str = "") -> str:
    """A pod file with one container ``app``; the arguments are YAML lines of the spec,
    of the container and of the metadata's annotations."""
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
    if annotations:
        text += "  annotations:\n" + "".join(f"    {line}\n" for line in annotations.splitlines())
    text += "spec:\n" + "".join(f"  {line}\n" for line in spec.splitlines())
    text += "  containers:\n  - name: app\n    image: busybox\n"
    text += "".join(f"    {line}\n" for line in container.splitlines())
    return text


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ("", None),
        # Only privileged: the container's flag, no security context of its own.
        ("securityContext: {privileged: true}", None),
        ("securityContext: {}", None),
        ("securityContext: {runAsUser: 0}", SecurityContext(run_as_user=0)),
        (
            "securityContext: {runAsNonRoot: true, runAsGroup: 10}",
            SecurityContext(run_as_non_root=True, run_as_group=10),
        ),
        # Docker's spellings are read as Kubernetes': CAP_ prefix and case do not matter.
        (
            "securityContext:\n  capabilities: {add: [CAP_SYS_TIME, net_admin], drop: [all]}",
            SecurityContext(
                capabilities=Capabilities(add=("SYS_TIME", "NET_ADMIN"), drop=("ALL",))
            ),
        ),
        (
            "securityContext: {allowPrivilegeEscalation: true}",
            SecurityContext(allow_privilege_escalation=True),
        ),
        (
            "securityContext:\n  seccompProfile: {type: Localhost, localhostProfile: "
            "profiles/audit.json}",
            SecurityContext(
                seccomp_profile=SecurityProfile(ProfileType.LOCALHOST, "profiles/audit.json")
            ),
        ),
        (
            "securityContext:\n  appArmorProfile: {type: Localhost, localhostProfile: k8s-deny}",
            SecurityContext(app_armor_profile=SecurityProfile(ProfileType.LOCALHOST, "k8s-deny")),
        ),
        (
            "securityContext: {appArmorProfile: {type: Unconfined}}",
            SecurityContext(app_armor_profile=UNCONFINED),
        ),
    ],
)
def test_container_security_context(tmp_path, container, expected):
    pod = load_one(tmp_path, pod_file(container=container))

    assert expected == pod.containers[0].security_context


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("", None),
        ("securityContext: {}", None),
        ("hostNetwork: false", None),
        ("hostPID: true", PodSecurityContext(host_pid=True)),
        ("hostIPC: true", PodSecurityContext(host_ipc=True)),
        ("shareProcessNamespace: true", PodSecurityContext(share_process_namespace=True)),
        (
            "securityContext:\n  sysctls:\n  - {name: kernel.shm_rmid_forced, value: '0'}\n"
            "  - {name: net/ipv4/ip_local_port_range, value: '1024 65535'}",
            PodSecurityContext(
                sysctls=(
                    Sysctl("kernel.shm_rmid_forced", "0"),
                    # Slashes are read as dots, as the kubelet converts them.
                    Sysctl("net.ipv4.ip_local_port_range", "1024 65535"),
                )
            ),
        ),
        (
            "securityContext: {runAsNonRoot: true, appArmorProfile: {type: RuntimeDefault}}",
            PodSecurityContext(run_as_non_root=True, app_armor_profile=RUNTIME_DEFAULT),
        ),
    ],
)
def test_pod_security_context(tmp_path, spec, expected):
    pod = load_one(tmp_path, pod_file(spec=spec))

    assert expected == pod.security_context


def test_host_network_publishes_container_ports(tmp_path):
    """With hostNetwork a container port is a host port (Kubernetes' defaulting), so
    host-port conflicts are found as for any published port."""
    pod = load_one(
        tmp_path,
        pod_file(spec="hostNetwork: true", container="ports: [{containerPort: 8080}]"),
    )

    assert PodSecurityContext(host_network=True) == pod.security_context
    assert (Port(8080, host_port=8080),) == pod.containers[0].ports


@pytest.mark.parametrize(
    ("annotations", "spec", "container", "expected_pod", "expected_container"),
    [
        # The AppArmor annotation of a container is its profile...
        (
            "container.apparmor.security.beta.kubernetes.io/app: runtime/default",
            "",
            "",
            None,
            SecurityContext(app_armor_profile=RUNTIME_DEFAULT),
        ),
        (
            "container.apparmor.security.beta.kubernetes.io/app: localhost/k8s-apparmor-example",
            "",
            "",
            None,
            SecurityContext(
                app_armor_profile=SecurityProfile(ProfileType.LOCALHOST, "k8s-apparmor-example")
            ),
        ),
        # ... unless the container's field says otherwise: fields win.
        (
            "container.apparmor.security.beta.kubernetes.io/app: runtime/default",
            "",
            "securityContext: {appArmorProfile: {type: Unconfined}}",
            None,
            SecurityContext(app_armor_profile=UNCONFINED),
        ),
        # The seccomp annotations: the pod's is the pod's profile, a container's its own.
        (
            "seccomp.security.alpha.kubernetes.io/pod: docker/default\n"
            "container.seccomp.security.alpha.kubernetes.io/app: localhost/trace.json",
            "",
            "",
            PodSecurityContext(seccomp_profile=RUNTIME_DEFAULT),
            SecurityContext(seccomp_profile=SecurityProfile(ProfileType.LOCALHOST, "trace.json")),
        ),
        (
            "seccomp.security.alpha.kubernetes.io/pod: unconfined",
            "securityContext: {seccompProfile: {type: RuntimeDefault}}",
            "",
            PodSecurityContext(seccomp_profile=RUNTIME_DEFAULT),
            None,
        ),
        # Other annotations are nobody's business here.
        ("example.com/owner: team-a", "", "", None, None),
    ],
)
def test_annotations(tmp_path, annotations, spec, container, expected_pod, expected_container):
    pod = load_one(tmp_path, pod_file(spec=spec, container=container, annotations=annotations))

    assert expected_pod == pod.security_context
    assert expected_container == pod.containers[0].security_context


def test_two_containers_with_pod_defaults(tmp_path):
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    container.apparmor.security.beta.kubernetes.io/proxy: unconfined
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 101}
  containers:
  - {name: app, image: nginx, securityContext: {runAsUser: 8080}}
  - {name: proxy, image: envoy}
"""
    pod = load_one(tmp_path, text)

    assert (
        Container("app", "nginx", security_context=SecurityContext(run_as_user=8080)),
        Container("proxy", "envoy", security_context=SecurityContext(app_armor_profile=UNCONFINED)),
    ) == pod.containers
    assert PodSecurityContext(run_as_non_root=True, run_as_user=101) == pod.security_context


# --- files that do not load ------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "container", "annotations", "expected"),
    [
        (
            "",
            "securityContext: {capabilities: {add: [NET_ADMN]}}",
            "",
            "$.spec.containers[0].securityContext.capabilities.add[0]: unknown capability "
            "'NET_ADMN': expected a Linux capability without the CAP_ prefix (NET_ADMIN, "
            "SYS_TIME, ...) or ALL",
        ),
        (
            "",
            "securityContext: {runAsUser: -1}",
            "",
            "$.spec.containers[0].securityContext.runAsUser: must be 0-2147483647, got -1",
        ),
        (
            "",
            "securityContext: {runAsNonRoot: 'yes'}",
            "",
            "$.spec.containers[0].securityContext.runAsNonRoot: expected true or false, got 'yes'",
        ),
        (
            "",
            "securityContext: {privileged: true, allowPrivilegeEscalation: false}",
            "",
            "$.spec.containers[0].securityContext.allowPrivilegeEscalation: cannot be false "
            "when privileged is true",
        ),
        (
            "",
            "securityContext:\n  allowPrivilegeEscalation: false\n"
            "  capabilities: {add: [CAP_SYS_ADMIN]}",
            "",
            "$.spec.containers[0].securityContext.allowPrivilegeEscalation: cannot be false "
            "when capabilities.add has SYS_ADMIN",
        ),
        (
            "",
            "securityContext: {seccompProfile: {type: Localhost}}",
            "",
            "$.spec.containers[0].securityContext.seccompProfile.localhostProfile: required "
            "when type is Localhost",
        ),
        (
            "",
            "securityContext:\n  seccompProfile: {type: Localhost, localhostProfile: ../x.json}",
            "",
            "$.spec.containers[0].securityContext.seccompProfile.localhostProfile: must not "
            "contain '..', got '../x.json'",
        ),
        (
            "",
            "securityContext:\n  seccompProfile: {type: Localhost, localhostProfile: /etc/x.json}",
            "",
            "$.spec.containers[0].securityContext.seccompProfile.localhostProfile: must be a "
            "path relative to <root-dir>/seccomp, got '/etc/x.json'",
        ),
        (
            "",
            "securityContext:\n  seccompProfile: {type: RuntimeDefault, localhostProfile: x}",
            "",
            "$.spec.containers[0].securityContext.seccompProfile.localhostProfile: may only "
            "be set when type is Localhost",
        ),
        (
            "",
            "securityContext: {appArmorProfile: {type: runtime/default}}",
            "",
            "$.spec.containers[0].securityContext.appArmorProfile.type: must be "
            "RuntimeDefault, Unconfined or Localhost, got 'runtime/default'",
        ),
        (
            "securityContext: {sysctls: [{name: Kernel.Panic, value: '1'}]}",
            "",
            "",
            "$.spec.securityContext.sysctls[0].name: 'Kernel.Panic' is not a "
            "sysctl name (lower-case words separated by dots, such as "
            "net.ipv4.ip_local_port_range)",
        ),
        (
            "hostNetwork: true\nsecurityContext: {sysctls: [{name: net.core.somaxconn, "
            "value: '1024'}]}",
            "",
            "",
            "$.spec.securityContext.sysctls[0].name: a net.* sysctl cannot be set with hostNetwork",
        ),
        (
            "hostIPC: true\nsecurityContext: {sysctls: [{name: kernel.shm_rmid_forced, "
            "value: '1'}]}",
            "",
            "",
            "$.spec.securityContext.sysctls[0].name: kernel.shm_rmid_forced cannot be set "
            "with hostIPC",
        ),
        (
            "securityContext:\n  sysctls:\n  - {name: kernel.shm_rmid_forced, value: '1'}\n"
            "  - {name: kernel/shm_rmid_forced, value: '0'}",
            "",
            "",
            "$.spec.securityContext.sysctls[1].name: duplicate sysctl 'kernel.shm_rmid_forced' "
            "(first at $.spec.securityContext.sysctls[0])",
        ),
        (
            "securityContext: {supplementalGroups: [100, x]}",
            "",
            "",
            "$.spec.securityContext.supplementalGroups[1]: expected an integer, got 'x'",
        ),
        (
            "hostPID: true\nshareProcessNamespace: true",
            "",
            "",
            "$.spec.shareProcessNamespace: cannot be true when hostPID is true: the pod "
            "would share the host's process namespace",
        ),
        (
            "hostNetwork: true",
            "ports: [{containerPort: 80, hostPort: 8080}]",
            "",
            "$.spec.containers[0].ports[0].hostPort: must be 80 (the containerPort) or unset "
            "with hostNetwork",
        ),
        (
            "",
            "",
            "container.apparmor.security.beta.kubernetes.io/ap: runtime/default",
            "$.metadata.annotations['container.apparmor.security.beta.kubernetes.io/ap']: no "
            "container named 'ap' in this pod",
        ),
        (
            "",
            "",
            "container.apparmor.security.beta.kubernetes.io/app: enforce",
            "$.metadata.annotations['container.apparmor.security.beta.kubernetes.io/app']: "
            "must be runtime/default, unconfined or localhost/<profile>, got 'enforce'",
        ),
        (
            "",
            "",
            "seccomp.security.alpha.kubernetes.io/pod: localhost//etc/x.json",
            "$.metadata.annotations['seccomp.security.alpha.kubernetes.io/pod']: "
            "localhost/<name>: the name must be a path relative to <root-dir>/seccomp, got "
            "'/etc/x.json'",
        ),
    ],
)
def test_bad_security_settings(tmp_path, spec, container, annotations, expected):
    assert [expected] == problems(
        tmp_path, pod_file(spec=spec, container=container, annotations=annotations)
    )


@pytest.mark.parametrize(
    ("spec", "container", "expected"),
    [
        (
            "",
            "securityContext: {seLinuxOptions: {level: 's0:c123,c456'}}",
            "$.spec.containers[0].securityContext.seLinuxOptions: seLinuxOptions is not "
            "supported by "
            "podsync: SELinux labels are not implemented",
        ),
        (
            "",
            "securityContext: {procMount: Unmasked}",
            "$.spec.containers[0].securityContext.procMount: procMount: 'Unmasked' is not "
            "supported by podsync: podsync keeps the engine's masked /proc paths "
            "(only 'Default' is)",
        ),
        (
            "securityContext: {supplementalGroupsPolicy: Strict}",
            "",
            "$.spec.securityContext.supplementalGroupsPolicy: supplementalGroupsPolicy: "
            "'Strict' is not supported by podsync: Docker also gives the process the groups "
            "of its user in the image's /etc/group (only 'Merge', the default, is)",
        ),
    ],
)
def test_security_fields_podsync_cannot_apply_are_refused(tmp_path, spec, container, expected):
    """Refused with the reason, never "unknown key", and never ignored."""
    assert [expected] == problems(tmp_path, pod_file(spec=spec, container=container))


def test_settings_that_ask_for_nothing_more_are_accepted(tmp_path):
    text = pod_file(
        spec="securityContext: {fsGroup: 1, fsGroupChangePolicy: OnRootMismatch}",
        container="securityContext: {procMount: Default}",
    )

    assert PodSecurityContext(fs_group=1) == load_one(tmp_path, text).security_context
