"""Planning security settings: what a create asks for, the pods refused with a reason
(host namespaces, sysctls), and runAsNonRoot held against the image's user."""

from __future__ import annotations

import attrs
import pytest

from podsync import (
    Capabilities,
    ObservedImage,
    Plan,
    PlanOptions,
    Reason,
    SecurityContext,
    parse_pods,
    plan,
    plan_from_json,
    plan_to_json,
    pod_status,
)
from podsync.actions._actions import Create, Pull, Wait
from podsync.runtime import ContainerSecurity

NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"


def images(**users: str | None) -> list[ObservedImage]:
    """The pause image and one image per keyword (``busybox=""``: present, no user)."""
    found = [ObservedImage("sha256:pause", (PAUSE,), user="")]
    found += [
        ObservedImage(f"sha256:{name}", (f"{name}:latest",), user=user)
        for name, user in users.items()
    ]
    return found


def plan_of(text: str, *, found: list[ObservedImage] | None = None, **options) -> Plan:
    return plan(
        parse_pods(text),
        [],
        now=NOW,
        images=images(busybox="") if found is None else found,
        options=PlanOptions(**options),
    )


def creates(p: Plan) -> dict[str, Create]:
    return {a.container: a for a in p.actions if isinstance(a, Create)}


def pod(spec: str = "", container: str = "", image: str = "busybox") -> str:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
    text += "".join(f"  {line}\n" for line in spec.splitlines())
    text += f"  containers:\n  - name: app\n    image: {image}\n"
    return text + "".join(f"    {line}\n" for line in container.splitlines())


# --- what the create asks for ----------------------------------------------------------


def test_restricted_container_spec():
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  securityContext:
    runAsUser: 1000
    fsGroup: 2000
    supplementalGroups: [4000, 5000]
    seccompProfile: {type: Localhost, localhostProfile: profiles/audit.json}
    sysctls:
    - {name: kernel.shm_rmid_forced, value: "1"}
    - {name: net.ipv4.ip_unprivileged_port_start, value: "80"}
  volumes:
  - {name: data, emptyDir: {}}
  containers:
  - name: app
    image: busybox
    volumeMounts: [{name: data, mountPath: /data}]
    securityContext:
      runAsGroup: 3000
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
      appArmorProfile: {type: RuntimeDefault}
"""
    made = creates(plan_of(text, root_dir="/srv/podsync"))

    net = made["net"].spec
    assert (
        ContainerSecurity(
            user="1000:3000",
            groups=(2000, 4000, 5000),
            cap_add=("NET_BIND_SERVICE",),
            cap_drop=("ALL",),
            no_new_privileges=True,
            read_only_root_filesystem=True,
            seccomp="localhost//srv/podsync/seccomp/profiles/audit.json",
            apparmor="runtime/default",
            sysctls=(("kernel.shm_rmid_forced", "1"),),
            fs_group=2000,
        )
        == made["app"].spec.security
    )
    # The network container holds the pod's network namespace: the net sysctls are its.
    assert ContainerSecurity(sysctls=(("net.ipv4.ip_unprivileged_port_start", "80"),)) == (
        net.security
    )


def test_a_pod_without_security_settings_asks_for_nothing():
    made = creates(plan_of(pod()))

    assert ContainerSecurity() == made["app"].spec.security == made["net"].spec.security


def test_share_process_namespace_joins_the_network_containers_pid_namespace():
    made = creates(plan_of(pod(spec="shareProcessNamespace: true")))

    assert made["net"].spec.name == made["app"].spec.security.share_pid_with


def test_host_namespaces_when_allowed():
    text = pod(
        spec="hostNetwork: true\nhostPID: true\nhostIPC: true",
        container="ports: [{containerPort: 80}]",
    )

    p = plan_of(text, allow_host_namespaces=True, cluster_dns="10.0.0.10")
    made = creates(p)

    net, app = made["net"].spec, made["app"].spec
    # The host's network: nothing to publish, the host's name and resolv.conf.
    assert ("host", "", (), ()) == (net.network, net.hostname, net.ports, net.dns)
    assert (True, True) == (net.security.host_pid, net.security.host_ipc)
    assert (True, True, net.name) == (app.security.host_pid, app.security.host_ipc, app.join)


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("hostNetwork: true", "hostNetwork=true"),
        ("hostPID: true", "hostPID=true"),
        ("hostIPC: true\nhostNetwork: true", "hostNetwork=true, hostIPC=true"),
    ],
)
def test_host_namespaces_are_refused_unless_allowed(spec, named):
    p = plan_of(pod(spec=spec))

    assert [] == list(p.actions)
    assert [
        (
            Reason.HOST_NAMESPACE_NOT_ALLOWED,
            f'violates PodSecurity "baseline": host namespaces ({named}; allow with '
            "--allow-host-namespaces)",
        )
    ] == [(r.reason, r.message) for r in p.rejected]


@pytest.mark.parametrize(
    ("sysctl", "allowed", "message"),
    [
        ("net.ipv4.tcp_syncookies", (), None),  # the safe set
        ("kernel.shm_rmid_forced", (), None),
        (
            "net.core.somaxconn",
            (),
            'violates PodSecurity "baseline": forbidden sysctls (net.core.somaxconn; allow '
            "with --allowed-unsafe-sysctls)",
        ),
        ("net.core.somaxconn", ("net.core.*",), None),
        ("kernel.msgmax", ("kernel.msgmax",), None),
        # A node-level sysctl is refused whatever is allowed: it would change the host.
        (
            "kernel.panic",
            ("kernel.*",),
            "sysctl kernel.panic is not namespaced: setting it would change the whole host, "
            "which podsync never does",
        ),
        (
            "vm.overcommit_memory",
            (),
            "sysctl vm.overcommit_memory is not namespaced: setting it would change the "
            "whole host, which podsync never does",
        ),
    ],
)
def test_sysctls(sysctl, allowed, message):
    text = pod(spec=f"securityContext:\n  sysctls: [{{name: {sysctl}, value: '1'}}]")

    p = plan_of(text, allowed_unsafe_sysctls=allowed)

    expected = [] if message is None else [(Reason.SYSCTL_NOT_ALLOWED, message)]
    assert expected == [(r.reason, r.message) for r in p.rejected]
    assert (message is None) == bool(creates(p))


# --- runAsNonRoot ----------------------------------------------------------------------

NON_ROOT = "securityContext: {runAsNonRoot: true}"


@pytest.mark.parametrize(
    ("image_user", "message"),
    [
        ("", "container has runAsNonRoot and image will run as root (image busybox)"),
        ("0", "container has runAsNonRoot and image will run as root (image busybox)"),
        ("0:1000", "container has runAsNonRoot and image will run as root (image busybox)"),
        (
            "nobody",
            "container has runAsNonRoot and image has non-numeric user (nobody), cannot "
            "verify user is non-root (image busybox)",
        ),
        ("1000", None),
        ("65534:65534", None),
    ],
)
def test_run_as_non_root_against_the_image_user(image_user, message):
    p = plan_of(pod(container=NON_ROOT), found=images(busybox=image_user))

    if message is None:
        assert {"net", "app"} == set(creates(p))
        assert "" == creates(p)["app"].spec.security.user  # the image's user
    else:
        # Held, with the kubelet's words; nothing is created, not even the network.
        assert [(Reason.RUN_AS_NON_ROOT, f"wait default/web/app: {message}")] == [
            (a.reason, a.message) for a in p.actions
        ]


def test_run_as_user_decides_run_as_non_root_without_the_image():
    """runAsUser 0 breaks the policy whatever the image; another uid satisfies it."""
    broken = plan_of(
        pod(
            spec="securityContext: {runAsNonRoot: true}",
            container="securityContext: {runAsUser: 0}",
        ),
        found=images(),
    )
    kept = plan_of(pod(container="securityContext: {runAsNonRoot: true, runAsUser: 7}"))

    assert [
        (
            Reason.RUN_AS_NON_ROOT,
            "wait default/web/app: container's runAsUser breaks non-root policy (image busybox)",
        )
    ] == [(a.reason, a.message) for a in broken.actions if isinstance(a, Wait)]
    assert "7" == creates(kept)["app"].spec.security.user


def test_an_absent_image_is_pulled_and_the_container_waits_for_its_user():
    p = plan_of(pod(container=NON_ROOT), found=images())

    assert [
        (Pull, Reason.IMAGE_ABSENT),
        (Wait, Reason.IMAGE_USER_UNKNOWN),
    ] == [(type(a), a.reason) for a in p.actions]
    assert (
        "wait default/web/app: runAsNonRoot needs the image's user, and it is absent "
        "(image busybox)"
    ) == p.actions[1].message


def test_an_image_whose_user_the_runtime_does_not_report_waits():
    # Present, and pulled only when absent: pulling it again would not tell its user.
    p = plan_of(
        pod(container=f"imagePullPolicy: IfNotPresent\n{NON_ROOT}"), found=images(busybox=None)
    )

    assert [
        (
            Reason.IMAGE_USER_UNKNOWN,
            "wait default/web/app: runAsNonRoot needs the image's user, and the runtime "
            "does not report its user (image busybox)",
        )
    ] == [(a.reason, a.message) for a in p.actions]


@pytest.mark.parametrize(("image_user", "user"), [("", "0:3000"), ("nginx:nginx", "nginx:3000")])
def test_run_as_group_alone_keeps_the_image_user(image_user, user):
    p = plan_of(
        pod(container="securityContext: {runAsGroup: 3000}"), found=images(busybox=image_user)
    )

    assert user == creates(p)["app"].spec.security.user


def test_only_the_container_with_the_policy_waits():
    """As the kubelet's CreateContainerConfigError: the pod's other containers run."""
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - {name: app, image: busybox, securityContext: {runAsNonRoot: true}}
  - {name: side, image: busybox}
"""
    p = plan_of(text)

    assert {"net", "side"} == set(creates(p))
    assert [Reason.RUN_AS_NON_ROOT] == [a.reason for a in p.actions if isinstance(a, Wait)]


# --- pods built in code ----------------------------------------------------------------


def test_pods_built_in_code_get_the_loaders_rules():
    (web,) = parse_pods(pod())
    bad = attrs.evolve(
        web,
        containers=(
            attrs.evolve(
                web.containers[0],
                security_context=SecurityContext(capabilities=Capabilities(add=("CAP_CHOWN",))),
            ),
        ),
    )

    p = plan([bad], [], now=NOW, images=images(busybox=""))

    assert [
        (
            Reason.INVALID_POD,
            "container app: 'CAP_CHOWN' is not a capability name (NET_ADMIN, SYS_TIME, ..., "
            "or ALL)",
        )
    ] == [(r.reason, r.message) for r in p.rejected]


def test_a_plan_with_security_settings_round_trips_through_json():
    """Saved plans keep the security settings of their creates and the new options."""
    text = pod(
        spec="hostPID: true\nsecurityContext: {fsGroup: 5, sysctls: [{name: net.core.somaxconn, "
        "value: '9'}]}",
        container="securityContext: {runAsUser: 1, capabilities: {add: [CHOWN]}}",
    )
    made = plan_of(text, allow_host_namespaces=True, allowed_unsafe_sysctls=("net.core.*",))

    assert creates(made)["app"].spec.security.cap_add == ("CHOWN",)
    assert made == plan_from_json(plan_to_json(made))


def test_status_of_a_container_held_by_run_as_non_root():
    """As the kubelet reports it: waiting, CreateContainerConfigError, with the reason."""
    (web,) = parse_pods(pod(container=NON_ROOT))
    p = plan([web], [], now=NOW, images=images(busybox=""))

    status = pod_status(web, [], plan=p)

    assert (
        "waiting",
        "CreateContainerConfigError",
        "app: container has runAsNonRoot and image will run as root (image busybox)",
    ) == (
        status.containers[0].state.value,
        status.containers[0].reason,
        status.containers[0].message,
    )


@pytest.mark.parametrize("image_user", [None, "", "1000", "nobody:users"])
def test_a_container_without_any_security_setting_asks_for_nothing(image_user) -> None:
    """Without a security context on the container or the pod, what the engine is asked
    for is what empty contexts give (issue 16: it is one shared value, not worked out
    anew for each of 30,000 containers)."""
    from podsync.model._security import (
        ContainerSecurity,
        PodSecurityContext,
        SecurityContext,
        app_security,
        network_security,
    )

    none = app_security(None, None, "/srv/podsync", "k8s_net", image_user)
    empty = app_security(
        SecurityContext(), PodSecurityContext(), "/srv/podsync", "k8s_net", image_user
    )

    assert none == empty == ContainerSecurity()
    assert network_security(None) == network_security(PodSecurityContext()) == none
