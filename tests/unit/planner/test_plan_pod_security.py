"""Pod Security admission, check by check and level by level, in the manner of the
kubelet's ``TestComputePodActions``: one row per case (the pod file, the options, the
rejection expected, or none), each message exact.

The checks are PodSecurity's (``k8s.io/pod-security-admission/policy/check_*.go``);
podsync's one difference is that host ports are allowed at every level.
"""

from __future__ import annotations

import textwrap
from typing import Any

import attrs
import pytest

from podsync import (
    AllowedHostPath,
    PlanOptions,
    PodSecurityLevel,
    Reason,
    plan_from_json,
    plan_to_json,
)
from tests.support import paths
from tests.unit.load.test_bad_inputs import EXPECTED_FILE, read_expected
from tests.unit.planner.test_plan_security import creates, plan_of

BASELINE = PodSecurityLevel.BASELINE
RESTRICTED = PodSecurityLevel.RESTRICTED
PRIVILEGED = PodSecurityLevel.PRIVILEGED

POD_SECURITY = Reason.POD_SECURITY
HOST_PATH = Reason.HOST_PATH_NOT_ALLOWED

#: A container that passes the restricted level, as people write one.
HARDENED = """\
securityContext:
  allowPrivilegeEscalation: false
  runAsNonRoot: true
  runAsUser: 1000
  seccompProfile: {type: RuntimeDefault}
  capabilities: {drop: [ALL]}
"""


def pod_file(spec: str = "", app: str = "", *, init: str | None = None, meta: str = "") -> str:
    """A pod ``web`` with one app container ``app`` (``app``: more of its fields) and,
    with ``init``, an init container ``setup`` (``init``: more of its fields; a sidecar
    when they say ``restartPolicy: Always``); ``spec``: more pod fields."""
    text = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n{textwrap.indent(meta, '  ')}"
    text += "spec:\n" + textwrap.indent(spec, "  ")
    if init is not None:
        text += "  initContainers:\n  - name: setup\n    image: busybox\n"
        text += textwrap.indent(init, "    ")
    text += "  containers:\n  - name: app\n    image: busybox\n"
    return text + textwrap.indent(app, "    ")


@attrs.frozen
class Case:
    id: str
    pod: str
    #: the rejection expected: its reason and the violations after the level's prefix
    rejected: tuple[Reason, str] | None
    options: dict[str, Any] = attrs.field(factory=dict)

    @property
    def level(self) -> PodSecurityLevel:
        level: PodSecurityLevel = self.options.get("pod_security", BASELINE)
        return level


def restricted(case_id: str, pod: str, rejected: tuple[Reason, str] | None, **options) -> Case:
    return Case(case_id, pod, rejected, {"pod_security": RESTRICTED, **options})


ROOT_VOLUME = "volumes:\n- name: root\n  hostPath: {path: /}\n"
SOCKET_VOLUME = "volumes:\n- name: sock\n  hostPath: {path: /var/run/docker.sock}\n"


def data_volume(path: str, read_only: bool = False) -> tuple[str, str]:
    """(pod fields, app container fields) of a hostPath volume ``data`` at ``path``."""
    mount = "volumeMounts:\n- {name: data, mountPath: /data" + (
        ", readOnly: true}" if read_only else "}"
    )
    return f"volumes:\n- name: data\n  hostPath: {{path: {path}}}\n", mount + "\n"


def allowed(*entries: str) -> dict[str, Any]:
    """The options of ``--allowed-host-paths`` with ``entries`` (``PATH`` or ``PATH:ro``)."""
    paths = tuple(
        AllowedHostPath(e.removesuffix(":ro"), read_only=e.endswith(":ro")) for e in entries
    )
    return {"allowed_host_paths": paths}


CASES = [
    # --- nothing to check -----------------------------------------------------------
    Case("a plain pod passes baseline", pod_file(), None),
    Case(
        "host ports are allowed (podsync's difference)",
        pod_file(app="ports:\n- {containerPort: 80, hostPort: 8080}\n"),
        None,
    ),
    # --- host namespaces ------------------------------------------------------------
    Case(
        "hostNetwork and hostPID",
        pod_file("hostNetwork: true\nhostPID: true\n"),
        (
            Reason.HOST_NAMESPACE_NOT_ALLOWED,
            "host namespaces (hostNetwork=true, hostPID=true; allow with --allow-host-namespaces)",
        ),
    ),
    Case(
        "hostIPC opened by --allow-host-namespaces",
        pod_file("hostIPC: true\n"),
        None,
        {"allow_host_namespaces": True},
    ),
    # --- privileged -----------------------------------------------------------------
    Case(
        "a privileged app container",
        pod_file(app="securityContext: {privileged: true}\n"),
        (
            Reason.PRIVILEGED_NOT_ALLOWED,
            'privileged (container "app" must not set securityContext.privileged=true; '
            "allow with --allow-privileged)",
        ),
    ),
    Case(
        "a privileged init container",
        pod_file(init="securityContext: {privileged: true}\n"),
        (
            Reason.PRIVILEGED_NOT_ALLOWED,
            'privileged (container "setup" must not set securityContext.privileged=true; '
            "allow with --allow-privileged)",
        ),
    ),
    Case(
        "a privileged sidecar and app container",
        pod_file(
            app="securityContext: {privileged: true}\n",
            init="restartPolicy: Always\nsecurityContext: {privileged: true}\n",
        ),
        (
            Reason.PRIVILEGED_NOT_ALLOWED,
            'privileged (containers "setup", "app" must not set '
            "securityContext.privileged=true; allow with --allow-privileged)",
        ),
    ),
    Case(
        "privileged opened by --allow-privileged",
        pod_file(init="securityContext: {privileged: true}\n"),
        None,
        {"allow_privileged": True},
    ),
    # --- capabilities ---------------------------------------------------------------
    Case(
        "SYS_ADMIN added",
        pod_file(app="securityContext:\n  capabilities: {add: [CHOWN, SYS_ADMIN]}\n"),
        (
            POD_SECURITY,
            'non-default capabilities (container "app" must not include "SYS_ADMIN" in '
            "securityContext.capabilities.add; allow with --allowed-capabilities)",
        ),
    ),
    Case(
        "ALL added by an init container",
        pod_file(init="securityContext:\n  capabilities: {add: [ALL]}\n"),
        (
            POD_SECURITY,
            'non-default capabilities (container "setup" must not include "ALL" in '
            "securityContext.capabilities.add; allow with --allowed-capabilities)",
        ),
    ),
    Case(
        "the baseline set passes",
        pod_file(
            app="securityContext:\n  capabilities: {add: [NET_BIND_SERVICE, KILL, SYS_CHROOT]}\n"
        ),
        None,
    ),
    Case(
        "SYS_ADMIN opened by --allowed-capabilities",
        pod_file(app="securityContext:\n  capabilities: {add: [SYS_ADMIN]}\n"),
        None,
        {"allowed_capabilities": ("SYS_ADMIN",)},
    ),
    Case(
        "two capabilities beyond the set, named together",
        pod_file(app="securityContext:\n  capabilities: {add: [NET_ADMIN, SYS_ADMIN]}\n"),
        (
            POD_SECURITY,
            'non-default capabilities (container "app" must not include "NET_ADMIN", '
            '"SYS_ADMIN" in securityContext.capabilities.add; allow with '
            "--allowed-capabilities)",
        ),
    ),
    Case(
        "--allowed-capabilities opens only what it names",
        pod_file(app="securityContext:\n  capabilities: {add: [SYS_ADMIN, NET_ADMIN]}\n"),
        (
            POD_SECURITY,
            'non-default capabilities (container "app" must not include "NET_ADMIN" in '
            "securityContext.capabilities.add; allow with --allowed-capabilities)",
        ),
        {"allowed_capabilities": ("SYS_ADMIN",)},
    ),
    Case(
        "ALL in --allowed-capabilities opens every one",
        pod_file(app="securityContext:\n  capabilities: {add: [ALL]}\n"),
        None,
        {"allowed_capabilities": ("ALL",)},
    ),
    Case(
        "ALL in --allowed-capabilities opens a named one too",
        pod_file(app="securityContext:\n  capabilities: {add: [SYS_ADMIN, NET_RAW]}\n"),
        None,
        {"allowed_capabilities": ("ALL",)},
    ),
    # --- hostPath -------------------------------------------------------------------
    Case(
        "a mount of /",
        pod_file(ROOT_VOLUME),
        (
            HOST_PATH,
            'hostPath volumes (volume "root" uses host path "/"; allow with --allowed-host-paths)',
        ),
    ),
    Case(
        "the engine's socket",
        pod_file(SOCKET_VOLUME),
        (
            HOST_PATH,
            'hostPath volumes (volume "sock" uses host path "/var/run/docker.sock"; allow '
            "with --allowed-host-paths)",
        ),
    ),
    Case(
        "under an allowed prefix", pod_file(*data_volume("/srv/data/x")), None, allowed("/srv/data")
    ),
    Case(
        "a prefix admits whole path components only",
        pod_file(*data_volume("/srv/database")),
        (
            HOST_PATH,
            'hostPath volumes (volume "data" uses host path "/srv/database"; allow with '
            "--allowed-host-paths)",
        ),
        allowed("/srv/data"),
    ),
    Case("/ admits every path", pod_file(*data_volume("/srv/data")), None, allowed("/")),
    Case(
        "a sibling of an allowed path is not admitted",
        pod_file(*data_volume("/opt/Y")),
        (
            HOST_PATH,
            'hostPath volumes (volume "data" uses host path "/opt/Y"; allow with '
            "--allowed-host-paths)",
        ),
        allowed("/opt/X"),
    ),
    Case(
        "a path is normalised before it is compared",
        pod_file(*data_volume("/srv/data/../../etc")),
        (
            HOST_PATH,
            'hostPath volumes (volume "data" uses host path "/srv/data/../../etc"; allow '
            "with --allowed-host-paths)",
        ),
        allowed("/srv/data/"),
    ),
    Case(
        "a writable mount of a read-only prefix",
        pod_file(*data_volume("/srv/data")),
        (
            HOST_PATH,
            'hostPath volumes (container "app" must mount volume "data" readOnly: host path '
            '"/srv/data" is allowed read-only; allow with --allowed-host-paths)',
        ),
        allowed("/srv/data:ro"),
    ),
    Case(
        "a read-only mount of a read-only prefix",
        pod_file(*data_volume("/srv/data", read_only=True)),
        None,
        allowed("/srv/data:ro"),
    ),
    Case(
        "a writable entry wins over a read-only one",
        pod_file(*data_volume("/srv/data/x")),
        None,
        allowed("/srv:ro", "/srv/data"),
    ),
    Case(
        "the deprecated host_path_prefixes still admit",
        pod_file(*data_volume("/srv/data")),
        None,
        {"host_path_prefixes": ("/srv",)},
    ),
    # --- AppArmor and seccomp -------------------------------------------------------
    Case(
        "seccomp Unconfined on the pod and a container",
        pod_file(
            "securityContext:\n  seccompProfile: {type: Unconfined}\n",
            "securityContext:\n  seccompProfile: {type: Unconfined}\n",
        ),
        (
            POD_SECURITY,
            'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined"; '
            'container "app" must not set securityContext.seccompProfile.type to "Unconfined"; '
            "allow with --allow-unconfined)",
        ),
    ),
    Case(
        "AppArmor Unconfined on an init container",
        pod_file(init="securityContext:\n  appArmorProfile: {type: Unconfined}\n"),
        (
            POD_SECURITY,
            'forbidden AppArmor profile (container "setup" must not set '
            'securityContext.appArmorProfile.type to "Unconfined"; allow with --allow-unconfined)',
        ),
    ),
    Case(
        "AppArmor Unconfined by the legacy annotation",
        pod_file(
            meta="annotations:\n  container.apparmor.security.beta.kubernetes.io/app: unconfined\n"
        ),
        (
            POD_SECURITY,
            'forbidden AppArmor profile (container "app" must not set '
            'securityContext.appArmorProfile.type to "Unconfined"; allow with --allow-unconfined)',
        ),
    ),
    Case(
        "Unconfined opened by --allow-unconfined",
        pod_file(
            "securityContext:\n  seccompProfile: {type: Unconfined}\n"
            "  appArmorProfile: {type: Unconfined}\n"
        ),
        None,
        {"allow_unconfined": True},
    ),
    Case(
        "RuntimeDefault passes",
        pod_file("securityContext:\n  seccompProfile: {type: RuntimeDefault}\n"),
        None,
    ),
    # --- sysctls --------------------------------------------------------------------
    Case(
        "unsafe namespaced sysctls",
        pod_file(
            "securityContext:\n  sysctls:\n  - {name: net.core.somaxconn, value: '1024'}\n"
            "  - {name: kernel.msgmax, value: '1'}\n"
        ),
        (
            Reason.SYSCTL_NOT_ALLOWED,
            "forbidden sysctls (net.core.somaxconn, kernel.msgmax; allow with "
            "--allowed-unsafe-sysctls)",
        ),
    ),
    Case(
        "the safe set passes",
        pod_file("securityContext:\n  sysctls: [{name: net.ipv4.tcp_syncookies, value: '1'}]\n"),
        None,
    ),
    Case(
        "an unsafe sysctl opened by --allowed-unsafe-sysctls",
        pod_file("securityContext:\n  sysctls: [{name: net.core.somaxconn, value: '1024'}]\n"),
        None,
        {"allowed_unsafe_sysctls": ("net.core.*",)},
    ),
    # --- every failed check at once -------------------------------------------------
    Case(
        "every violation of the issue's pods, in PodSecurity's order",
        pod_file(
            ROOT_VOLUME + "securityContext:\n  seccompProfile: {type: Unconfined}\n",
            "securityContext:\n  capabilities: {add: [SYS_ADMIN]}\n",
            init="securityContext: {privileged: true}\n",
        ),
        (
            POD_SECURITY,
            'non-default capabilities (container "app" must not include "SYS_ADMIN" in '
            "securityContext.capabilities.add; allow with --allowed-capabilities), "
            'hostPath volumes (volume "root" uses host path "/"; allow with '
            "--allowed-host-paths), "
            'privileged (container "setup" must not set securityContext.privileged=true; '
            "allow with --allow-privileged), "
            'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined"; '
            "allow with --allow-unconfined)",
        ),
    ),
    Case(
        "the privileged level checks nothing",
        pod_file(
            ROOT_VOLUME
            + "hostNetwork: true\nsecurityContext:\n  seccompProfile: {type: Unconfined}\n"
            "  sysctls: [{name: kernel.msgmax, value: '1'}]\n",
            "securityContext:\n  capabilities: {add: [ALL]}\n",
            init="securityContext: {privileged: true}\n",
        ),
        None,
        {"pod_security": PRIVILEGED},
    ),
    # --- restricted -----------------------------------------------------------------
    restricted(
        "a plain pod fails restricted",
        pod_file(),
        (
            POD_SECURITY,
            'allowPrivilegeEscalation != false (container "app" must set '
            "securityContext.allowPrivilegeEscalation=false; allow with --pod-security baseline), "
            'unrestricted capabilities (container "app" must set '
            'securityContext.capabilities.drop=["ALL"]; allow with --pod-security baseline), '
            'runAsNonRoot != true (pod or container "app" must set '
            "securityContext.runAsNonRoot=true; allow with --pod-security baseline), "
            'seccompProfile (pod or container "app" must set securityContext.seccompProfile.type '
            'to "RuntimeDefault" or "Localhost"; allow with --pod-security baseline)',
        ),
    ),
    restricted("a hardened pod passes", pod_file(app=HARDENED, init=HARDENED), None),
    restricted(
        "a hardened app container beside a plain init container",
        pod_file(app=HARDENED, init=""),
        (
            POD_SECURITY,
            'allowPrivilegeEscalation != false (container "setup" must set '
            "securityContext.allowPrivilegeEscalation=false; allow with --pod-security baseline), "
            'unrestricted capabilities (container "setup" must set '
            'securityContext.capabilities.drop=["ALL"]; allow with --pod-security baseline), '
            'runAsNonRoot != true (pod or container "setup" must set '
            "securityContext.runAsNonRoot=true; allow with --pod-security baseline), "
            'seccompProfile (pod or container "setup" must set securityContext.seccompProfile.type '
            'to "RuntimeDefault" or "Localhost"; allow with --pod-security baseline)',
        ),
    ),
    restricted(
        "pod-level runAsNonRoot and seccomp cover every container",
        pod_file(
            "securityContext:\n  runAsNonRoot: true\n  runAsUser: 1000\n"
            "  seccompProfile: {type: RuntimeDefault}\n",
            "securityContext:\n  allowPrivilegeEscalation: false\n  capabilities: {drop: [ALL]}\n",
        ),
        None,
    ),
    restricted(
        "host ports stay allowed at restricted",
        pod_file(app=HARDENED + "ports:\n- {containerPort: 80, hostPort: 8080}\n"),
        None,
    ),
    restricted(
        "runAsNonRoot false and runAsUser 0, pod and container",
        pod_file(
            "securityContext:\n  runAsNonRoot: false\n  runAsUser: 0\n",
            HARDENED.replace("runAsNonRoot: true", "runAsNonRoot: false").replace("1000", "0"),
        ),
        (
            POD_SECURITY,
            "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false; "
            'container "app" must not set securityContext.runAsNonRoot=false; allow with '
            "--pod-security baseline), "
            'runAsUser=0 (pod must not set runAsUser=0; container "app" must not set '
            "runAsUser=0; allow with --pod-security baseline)",
        ),
    ),
    restricted(
        "a hostPath volume is a restricted volume type",
        pod_file(ROOT_VOLUME, HARDENED),
        (
            HOST_PATH,
            'restricted volume types (volume "root" uses restricted volume type "hostPath"; '
            "allow with --allowed-host-paths)",
        ),
    ),
    restricted(
        "--allowed-host-paths opens hostPath at restricted too",
        pod_file(data_volume("/srv/data")[0], data_volume("/srv/data")[1] + HARDENED),
        None,
        **allowed("/srv/data"),
    ),
    restricted(
        "a capability beyond NET_BIND_SERVICE, and seccomp Unconfined",
        pod_file(
            app=HARDENED.replace(
                "{drop: [ALL]}", "{drop: [ALL], add: [NET_BIND_SERVICE, CHOWN]}"
            ).replace("RuntimeDefault", "Unconfined")
        ),
        (
            POD_SECURITY,
            'unrestricted capabilities (container "app" must not include "CHOWN" in '
            "securityContext.capabilities.add; allow with --allowed-capabilities), "
            'seccompProfile (container "app" must not set securityContext.seccompProfile.type '
            'to "Unconfined"; allow with --allow-unconfined)',
        ),
    ),
    restricted(
        "capabilities not dropped and one added: both options needed",
        pod_file(app=HARDENED.replace("{drop: [ALL]}", "{add: [SYS_TIME]}")),
        (
            POD_SECURITY,
            'unrestricted capabilities (container "app" must set '
            'securityContext.capabilities.drop=["ALL"]; container "app" must not include '
            '"SYS_TIME" in securityContext.capabilities.add; allow with --pod-security '
            "baseline and --allowed-capabilities)",
        ),
    ),
    restricted(
        "the exemptions open their checks at restricted",
        pod_file(
            "hostNetwork: true\n",
            HARDENED.replace("{drop: [ALL]}", "{drop: [ALL], add: [SYS_TIME]}"),
        ),
        None,
        allow_host_namespaces=True,
        allowed_capabilities=("SYS_TIME",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_pod_security(case: Case) -> None:
    p = plan_of(case.pod, **case.options)

    expected = []
    if case.rejected is not None:
        reason, violations = case.rejected
        expected = [(reason, f'violates PodSecurity "{case.level.value}": {violations}')]
    assert expected == [(r.reason, r.message) for r in p.rejected]
    # A rejected pod gets nothing; an admitted one its containers.
    assert (case.rejected is None) == bool(creates(p))


def test_a_rejected_pod_leaves_the_others_running() -> None:
    """Admission rejects the one pod; the pods beside it are planned as ever."""
    text = pod_file(ROOT_VOLUME) + "---\n" + pod_file().replace("name: web", "name: other")

    p = plan_of(text)

    assert ["default/web"] == [r.pod for r in p.rejected]
    assert {"default/other"} == {a.pod for a in creates(p).values()}


def test_the_default_level_is_baseline() -> None:
    assert BASELINE == PlanOptions().pod_security


@pytest.mark.parametrize("path", ["data", "", "srv/data"])
def test_an_allowed_host_path_is_absolute(path: str) -> None:
    with pytest.raises(ValueError, match="an allowed host path must be absolute"):
        AllowedHostPath(path)


# --- the corpus: one pod file per check, with its exact rejection --------------------

CORPUS = paths.DATA / "pod_security"
CORPUS_EXPECTED = read_expected(CORPUS)
CORPUS_CASES = sorted(p.name for p in CORPUS.iterdir() if p.name != EXPECTED_FILE)


def test_pod_security_corpus_and_expectations_match() -> None:
    assert sorted(CORPUS_EXPECTED) == CORPUS_CASES


@pytest.mark.parametrize("name", CORPUS_CASES)
def test_pod_security_corpus(name: str) -> None:
    """Each file loads (it is a valid pod) and is rejected with exactly the expected
    reason and message: at the default level, or at restricted for ``restricted_*``."""
    level = RESTRICTED if name.startswith("restricted_") else BASELINE

    p = plan_of((CORPUS / name).read_text(encoding="utf-8"), pod_security=level)

    assert [CORPUS_EXPECTED[name]] == [f"[{r.reason.value}] {r.message}" for r in p.rejected]


def test_the_options_survive_a_saved_plan() -> None:
    """A saved plan carries the level and the options that open checks, and reads back
    equal (``apply --plan`` applies what was admitted under them)."""
    options = PlanOptions(
        pod_security=RESTRICTED,
        allowed_host_paths=(AllowedHostPath("/srv/data/", read_only=True),),
        allowed_capabilities=("SYS_TIME",),
        allow_unconfined=True,
    )

    again = plan_from_json(
        plan_to_json(plan_of(pod_file(), **attrs.asdict(options, recurse=False)))
    )

    assert options == again.options
    assert "/srv/data" == again.options.allowed_host_paths[0].path_prefix
