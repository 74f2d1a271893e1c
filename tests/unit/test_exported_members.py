"""The public surface: ``podsync.__all__`` is a deliberate list, and nothing else is public.

Every name in ``__all__`` is a promise to users, so the list is written out here too: a
change to the public surface is a conscious edit of two places (``podsync/__init__.py``
and ``PUBLIC`` below), and the README's API table (``tests/unit/test_readme.py``) a third.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import pathlib
import warnings

import pytest

import podsync
import podsync.labels

PACKAGE = pathlib.Path(podsync.__file__).resolve().parent

#: What an orchestrator syncs pods with: the model, loading pod files, the pure helpers
#: of the project card (container naming and hashing, port bindings, CPU shares,
#: resolv.conf parsing, host-port conflicts), ``plan`` and the plan's vocabulary,
#: apply/sync/observe, pod status, the continuous loop, etcd and the errors. At most
#: about 120 names (issue 26): the names of one concern beyond that are on its folder's
#: face (``FACES``); the container labels are in ``podsync.labels``.
PUBLIC = sorted(
    [
        # the pod model, and what runtimes report
        *("Pod", "Container", "Port", "PortProtocol", "Volume", "VolumeMount", "EnvVar"),
        "MemoryMedium",
        *("VolumeContent", "VolumeFile", "VolumeKind", "WrittenVolume"),
        *("Probe", "Handler", "HTTPGetAction", "TCPSocketAction", "Lifecycle"),
        "HTTPHeader",
        *("RestartPolicy", "DNSPolicy", "PullPolicy", "derive_pod_uid"),
        # A failed image pull, remembered for its back-off (plan's pull_failures).
        "PullFailure",
        *("Resources", "ResourceList", "HostAlias", "TerminationMessagePolicy"),
        *("ObservedContainer", "ObservedImage", "ObservedVolume", "ClaimSource"),
        # security settings of the model
        *("SecurityContext", "PodSecurityContext", "Capabilities", "SecurityProfile"),
        *("ProfileType", "Sysctl"),
        # reading pod files
        *("load_pods", "parse_pods", "DEFAULT_MAX_BYTES", "NodeInfo", "PodFileCache"),
        # pods as YAML again, and pods held in memory for the loop (issue 29)
        *("dump_pods", "PodSet"),
        *("HttpOptions", "shown_url"),
        # Secret values: held for the engine, written down as references and digests
        *("SecretText", "SecretPart", "host_secret_key"),
        # errors
        *("PodsyncError", "ConfigError", "Problem", "RuntimeCallError", "EngineUnavailable"),
        *("NameConflict", "NotFound", "Conflict", "ActionError"),
        # container names and spec hashes
        *("container_name", "parse_container_name", "ParsedName", "pod_full_name"),
        *("NETWORK_CONTAINER", "spec_hash"),
        # ports, host-port conflicts, CPU shares, DNS
        *("port_bindings", "exposed_ports", "filter_host_port_conflicts", "cpu_shares"),
        *("cpu_quota", "CPU_PERIOD"),
        *("parse_resolv_conf", "ResolvConf"),
        # planning
        *("PlanOptions", "GCPolicy", "BackOffPolicy", "DEFAULT_NETWORK_IMAGE", "DEFAULT_ROOT_DIR"),
        *("PodSecurityLevel", "AllowedHostPath", "NODE_SCOPE"),
        "plan",
        # the plan's vocabulary
        *("Plan", "PodPlan", "Reason", "Rejection", "CreateSpec", "Action", "PodAction"),
        *("Pull", "Create", "Kill", "Remove", "Wait", "RemovePodDir", "RemoveImage"),
        *("WriteVolume", "CreateVolume", "RemoveVolume"),
        "PLAN_FORMAT_VERSION",
        *("ownership", "Ownership", "VolumeOwnership", "volume_ownership"),
        *("plan_to_json", "plan_from_json", "plan_fingerprint"),
        # the runtime boundary (what a runtime author needs: podsync.runtime)
        "Runtime",
        # applying plans, sync
        *("apply", "ApplyResult", "ActionResult", "ActionStatus", "Event", "EventKind"),
        *("DEFAULT_WORKERS", "DEFAULT_HOOK_TIMEOUT"),
        *("sync", "SyncResult", "observe", "Observation", "down"),
        # the continuous loop
        *("Reconciler", "LoopNotice", "NoticeKind"),
        # beyond one host: etcd sources and publishing to etcd
        *("EtcdOptions", "EtcdError", "publish", "PublishResult", "PublishConflict"),
        # a host reporting its heartbeat, pod statuses and events to etcd (issue 32)
        "HostReporter",
        # pod status
        *("pod_status", "PodStatus", "PodPhase", "ContainerStatus", "ContainerState"),
        "PodCondition",
        # resource usage, as the runtime reads it and reports show it (issue 32)
        *("ContainerUsage", "UsageFigures", "PodUsage"),
    ]
)

#: The optional capabilities of a runtime (issue 29), first public on ``podsync.runtime``.
RUNTIME_CAPABILITY_NAMES = (
    *("Capability", "MissingCapability", "capabilities", "require", "FullRuntime"),
    *("VolumeRuntime", "FileRuntime", "ExecRuntime", "LogRuntime", "EventRuntime"),
    "NodeRuntime",
    # issue 32: usage is discovered with isinstance alone (no Capability member)
    *("UsageRuntime", "require_usage"),
)

#: The public faces of one concern each, and what each shows (a name may be on a face
#: and at the top level too: the same object).
FACES: dict[str, list[str]] = {
    "podsync.runtime": sorted(
        [
            *("Runtime", "CreateSpec", "ExecResult", "LogLine", "EngineEvent", "Stream"),
            *("ContainerSecurity", "PortMapping", "Mount", "TmpfsMount", "NamedVolumeMount"),
            *("VolumeFileMount", "VolumeEntry", "EntryKind"),
            # issue 29: the optional capabilities, and every type the protocols take
            *RUNTIME_CAPABILITY_NAMES,
            *("ObservedContainer", "ObservedImage", "ObservedVolume", "ResourceList"),
            "ContainerUsage",
            # issue 33: a pod's own list, for the loop's sync of a pod that died
            "PodListRuntime",
        ]
    ),
    "podsync.status": sorted(
        [
            *("pod_status", "PodStatus", "PodPhase", "PodCondition", "ContainerStatus"),
            *("ContainerState", "orphaned_pod_statuses", "statuses_to_json"),
            *("STATUS_FORMAT_VERSION", "pod_events", "PodEngineEvent"),
            *("termination_inputs", "previous_instance"),
            # podsync's verdict on a pod, what apply --wait waits for (issue 29)
            "PodState",
            # issue 32: pods' usage from two readings
            *("pod_usage", "usage_figures"),
        ]
    ),
    "podsync.prober": sorted(
        ["ProbeState", "ProbeKind", "ProbeResult", "probe_liveness", "DEFAULT_PROBE_TIMEOUT"]
    ),
    "podsync.fleet": sorted(
        [
            *("Host", "HostTLS", "load_hosts", "parse_hosts", "load_host_pods"),
            *("host_root_dir", "sync_hosts", "HostResult", "FleetResult"),
            *("publish", "PublishResult"),
        ]
    ),
    # issue 32: reading a fleet back from etcd (podsync hosts, status --etcd, events --etcd)
    "podsync.report": sorted(
        [
            *("fleet_hosts", "fleet_statuses", "fleet_events", "HostView", "FleetPodStatus"),
            *("HostRecord", "EventRecord", "SourceState"),
        ]
    ),
    "podsync.spec": sorted(
        [
            *("parse_2014_container_name", "CONTAINER_NAME_PREFIX", "network_spec_hash"),
            *("SpecHash", "SPEC_HASH_VERSION", "claim_volume_name", "empty_dir_volume_name"),
            "default_pull_policy",
        ]
    ),
}

#: Names first public on a face (never at the top level).
NEW_ON_FACES = {
    "VolumeEntry",
    "EntryKind",
    "default_pull_policy",
    "PodState",
    *RUNTIME_CAPABILITY_NAMES,
    *("pod_usage", "usage_figures"),
    *FACES["podsync.report"],
    "PodListRuntime",
}
#: Names that left the top level in 0.2.0 for the face of their folder.
MOVED_TO_FACES = {
    name: face
    for face, names in FACES.items()
    for name in names
    if name not in PUBLIC and name not in NEW_ON_FACES
}

#: The label keys, one public namespace for orchestrators that filter containers by label.
LABELS = sorted(
    [
        *("LABEL_POD_UID", "LABEL_POD_NAME", "LABEL_POD_NAMESPACE", "LABEL_POD_SOURCE"),
        *("LABEL_CONTAINER", "LABEL_ATTEMPT", "LABEL_SPEC_HASH", "LABEL_SPEC"),
        *("LABEL_RESTART_COUNT", "LABEL_PRE_STOP", "LABEL_GRACE_PERIOD"),
    ]
)
#: Label keys added after the top level stopped re-exporting them (never deprecated
#: there: they never were at the top level).
LABELS_ADDED = [
    *("LABEL_INIT_INDEX", "LABEL_INIT_RESTART_POLICY"),
    *("LABEL_VOLUME_KIND", "LABEL_VOLUME_NAMESPACE", "LABEL_VOLUME_CLAIM"),
    *("LABEL_VOLUME_NAME", "LABEL_EMPTY_DIRS", "LABEL_CONTENT_VOLUMES"),
    "LABEL_SCOPE",
]

#: Names that left the top level in 0.x and still import from it, with a
#: DeprecationWarning, for one release: the name -> where it lives now (``None``: it is
#: internal now, importable only from its private module).
DEPRECATED: dict[str, str | None] = {
    **{name: f"podsync.labels.{name}" for name in LABELS},
    "RejectedPod": "podsync.Rejection",
    **{name: f"{face}.{name}" for name, face in MOVED_TO_FACES.items()},
    **dict.fromkeys(
        [
            *("canonical_json", "canonical_spec", "network_spec"),
            *("is_dns_label", "dns_label_problem", "is_safe_uid"),
            *("cluster_dns", "without_loopback", "is_loopback_nameserver"),
            "only_loopback_nameservers",
            *("split_image", "has_latest_tag", "is_pinned_digest", "pull_reference"),
            *("should_pull", "normalize_image", "image_reference_problem"),
            "environment",
            *("binds", "volume_host_paths", "termination_message_file"),
        ]
    ),
}


def test_all_is_the_deliberate_list():
    assert sorted(podsync.__all__) == PUBLIC
    assert len(set(podsync.__all__)) == len(podsync.__all__)
    # "at most about 120": the rest is on the faces (127: issue 28's Pod Security level
    # and allowed host path are planning options, beside PlanOptions; 129: issue 29's
    # dump_pods and PodSet, the library's Pod objects as YAML and as the loop's source;
    # 131: the node scope and ``down``; 134: the errors an orchestrator tells apart by
    # class, NotFound, Conflict and ActionError; 138: issue 32's usage values, which
    # the reports an orchestrator reads carry, and HostReporter, the board that reports
    # a host to etcd)
    assert len(PUBLIC) <= 138


@pytest.mark.parametrize("face", sorted(FACES))
def test_each_face_shows_exactly_its_list(face: str) -> None:
    module = importlib.import_module(face)
    assert sorted(module.__all__) == FACES[face]
    for name in module.__all__:
        getattr(module, name)  # imported on first use
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert sorted(public) == FACES[face]
    for name in FACES[face]:
        if name in PUBLIC:
            assert getattr(podsync, name) is getattr(module, name)


@pytest.mark.parametrize(
    ("face", "name"), sorted((face, name) for face, names in FACES.items() for name in names)
)
def test_every_name_on_a_face_has_a_docstring(face: str, name: str) -> None:
    module = importlib.import_module(face)
    init = PACKAGE / face.removeprefix("podsync.").replace(".", "/") / "__init__.py"
    assert _documented(name, getattr(module, name), init)


def test_all_lists_exactly_the_public_names():
    """``podsync.__all__`` is the set of non-underscore names the package defines
    (submodules aside), so nothing becomes public by accident."""
    for name in podsync.__all__:
        getattr(podsync, name)  # some are imported on first use
    public = {
        name
        for name, value in vars(podsync).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }

    assert sorted(public) == sorted(podsync.__all__)


@pytest.mark.parametrize("face", ["podsync", "podsync.cli", *sorted(FACES)])
def test_names_imported_on_first_use_are_the_type_checkers_names(face: str) -> None:
    """The names ``__getattr__`` imports on first use are exactly those the
    ``TYPE_CHECKING`` block of the face's ``__init__.py`` imports, from the same
    modules, and every public name of the face is one of them (issue 33: importing a
    face imports nothing)."""
    shown = importlib.import_module(face)
    init = PACKAGE / face.removeprefix("podsync").replace(".", "/").lstrip("/") / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    checked = {
        (f"podsync.{node.module.removeprefix('podsync.')}", alias.name)
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "_TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    lazy = {(module, name) for module, names in shown._ON_FIRST_USE.items() for name in names}

    assert sorted(lazy) == sorted(checked)
    assert sorted(shown.__all__) == sorted(name for _, name in lazy)
    assert set(dir(shown)) >= set(shown.__all__)


def test_the_labels_module_holds_the_label_keys():
    assert sorted(podsync.labels.__all__) == sorted([*LABELS, *LABELS_ADDED])
    public = {n for n in vars(podsync.labels) if not n.startswith("_") and n != "annotations"}
    assert public == {*LABELS, *LABELS_ADDED}
    assert podsync.labels.LABEL_POD_UID == "io.podsync.pod.uid"
    assert all(getattr(podsync.labels, n).startswith("io.podsync.") for n in public)


def _defining_module(package_module: pathlib.Path, name: str) -> str:
    """The podsync module ``package_module`` imports ``name`` from."""
    tree = ast.parse(package_module.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            assert node.module is not None
            return node.module
    raise AssertionError(f"{package_module.name} does not import {name}")


def _has_attribute_docstring(module: str, name: str) -> bool:
    """Whether the module-level assignment of ``name`` in ``module`` is documented: a
    ``#:`` comment right above it or a string right after it (Sphinx's conventions)."""
    path = PACKAGE / (module.removeprefix("podsync.").replace(".", "/") + ".py")
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    body = ast.parse(source).body
    for i, node in enumerate(body):
        targets = (
            [node.target]
            if isinstance(node, ast.AnnAssign)
            else node.targets
            if isinstance(node, ast.Assign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            above = lines[node.lineno - 2].lstrip() if node.lineno > 1 else ""
            after = body[i + 1] if i + 1 < len(body) else None
            string_after = (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            )
            return above.startswith("#:") or string_after
    # Re-exported by ``module`` from another one (``_config`` from ``_sources``).
    return _has_attribute_docstring(_defining_module(path, name), name)


def _documented(name: str, value: object, package_module: pathlib.Path) -> bool:
    if inspect.isclass(value):
        return bool(vars(value).get("__doc__"))  # its own, not inherited
    if inspect.isfunction(value):
        return bool(value.__doc__)
    return _has_attribute_docstring(_defining_module(package_module, name), name)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_docstring(name: str) -> None:
    assert _documented(name, getattr(podsync, name), PACKAGE / "__init__.py")


@pytest.mark.parametrize("name", LABELS)
def test_every_label_key_has_a_docstring(name: str) -> None:
    assert _documented(name, getattr(podsync.labels, name), PACKAGE / "labels.py")


@pytest.mark.parametrize("name", sorted(DEPRECATED))
def test_a_name_off_the_top_level_imports_for_one_release_with_a_warning(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"podsync\.{name}\b") as caught:
        value = getattr(podsync, name)
    (warning,) = caught
    assert warning.filename == __file__  # it points at the user's line, not podsync's
    home = DEPRECATED[name]
    if home is not None:
        assert home in str(warning.message)
        module, _, attribute = home.rpartition(".")
        assert value is getattr(__import__(module, fromlist=["_"]), attribute)
    assert name not in podsync.__all__


def test_from_import_of_a_deprecated_name_warns_too():
    with pytest.warns(DeprecationWarning, match="podsync.labels.LABEL_POD_UID"):
        from podsync import LABEL_POD_UID
    assert LABEL_POD_UID == "io.podsync.pod.uid"


def test_a_name_podsync_never_had_is_an_attribute_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'plna'"):
            podsync.plna  # noqa: B018


def test_every_enum_is_a_str_enum():
    """Every enum podsync exports is of one kind, ``enum.StrEnum``: a member is its value
    (the string JSON, labels and saved plans hold), and ``.value`` is that string."""
    values = [getattr(podsync, name) for name in podsync.__all__]  # imported on first use
    enums = [value for value in values if isinstance(value, type) and issubclass(value, enum.Enum)]

    assert len(enums) >= 7  # Reason, EventKind, ActionStatus and the model's policies
    assert [] == [e.__name__ for e in enums if not issubclass(e, enum.StrEnum)]
    assert all(str(m) == m.value == m for e in enums for m in e)
