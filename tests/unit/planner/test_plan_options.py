"""Options that shape containers are compared too (issue 10, part 3).

``--cluster-dns``, ``--cluster-domain``, the host resolv.conf content used, ``--network-mode``
and ``--root-dir`` shape the containers podsync creates. A change of one of them must
reach running pods: the plan rebuilds what the option affects and its message names the
option. A plan records the options it was made with, and ``apply`` takes the root
directory from it.
"""

from __future__ import annotations

import json

import attrs
import pytest

from podsync import (
    PLAN_FORMAT_VERSION,
    Container,
    DNSPolicy,
    Pod,
    Port,
    PortProtocol,
    Volume,
    VolumeMount,
    apply,
    cli,
    plan_from_json,
    plan_to_json,
)
from podsync.actions._actions import Create, Plan, Reason
from podsync.actions._json import _written_out
from podsync.actions._options import GCPolicy, PlanOptions
from podsync.exceptions import ConfigError
from podsync.planner._plan import plan
from podsync.spec._labels import LABEL_CONTAINER, LABEL_RESTART_COUNT, LABEL_SPEC, LABEL_SPEC_HASH
from podsync.testing import FakeClock, FakeRuntime
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
RESOLV = "nameserver 192.0.2.53\nsearch corp.example\n"
CLUSTER = PlanOptions(
    cluster_dns="10.0.0.10", cluster_domain="cluster.local", host_resolv_conf=RESOLV
)

# A pod as people write it: a web server with a sidecar that shares an emptyDir.
WEB = Pod(
    "web",
    (
        Container(
            "nginx",
            "busybox:1.36",
            volume_mounts=(VolumeMount("cache", "/cache"),),
        ),
        Container("logger", "busybox:1.36"),
    ),
    volumes=(Volume("cache"),),
    namespace="shop",
    source="file",
    uid="web-uid",
)


def running(pod: Pod, options: PlanOptions) -> EngineModel:
    """An engine on which podsync created ``pod`` with ``options``."""
    model = EngineModel(image_tags={"busybox:1.36", "registry.k8s.io/pause:3.10"})
    model.root_dir = options.root_dir
    first = plan([pod], [], images=model.images, now=NOW - 100, options=options)
    model.apply(first, NOW - 100)
    again = plan(
        [pod],
        model.observed,
        images=model.images,
        now=NOW - 100,
        options=options,
        volumes=model.observed_volumes,
    )
    assert not again.has_changes, again.describe()
    return model


def replan(pod: Pod, model: EngineModel, options: PlanOptions) -> Plan:
    return plan(
        [pod],
        model.observed,
        images=model.images,
        now=NOW,
        options=options,
        volumes=model.observed_volumes,
    )


def kinds(p: Plan) -> list[tuple[str, str]]:
    return [(type(a).__name__, getattr(a, "container", "")) for a in p.actions]


REBUILD = [
    ("Kill", "nginx"),
    ("Kill", "logger"),
    ("Kill", "net"),
    ("Create", "net"),
    ("Create", "nginx"),
    ("Create", "logger"),
]


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        (
            CLUSTER,
            attrs.evolve(CLUSTER, cluster_dns="10.0.0.11"),
            "--cluster-dns 10.0.0.10 -> 10.0.0.11",
        ),
        (
            PlanOptions(),
            PlanOptions(cluster_dns="10.0.0.10"),
            "--cluster-dns (none) -> 10.0.0.10",
        ),
        (
            CLUSTER,
            attrs.evolve(CLUSTER, cluster_domain="k8s.example"),
            "--cluster-domain cluster.local -> k8s.example",
        ),
        (
            CLUSTER,
            attrs.evolve(CLUSTER, host_resolv_conf="nameserver 198.51.100.53\n"),
            "host resolv.conf nameserver 192.0.2.53, search corp.example "
            "-> nameserver 198.51.100.53",
        ),
        (
            PlanOptions(),
            PlanOptions(network_mode="none"),
            "--network-mode (engine default) -> none",
        ),
        (
            PlanOptions(network_mode="none"),
            PlanOptions(network_mode="host"),
            "--network-mode none -> host",
        ),
    ],
)
def test_a_network_option_change_rebuilds_the_pod(before, after, said):
    """DNS and network mode shape the network container: a change rebuilds the pod,
    and the message names the option (the plan used to say "No changes")."""
    model = running(WEB, before)

    p = replan(WEB, model, after)

    assert REBUILD == kinds(p)
    stop_net = p.actions[2]
    assert Reason.NETWORK_CHANGED == stop_net.reason
    assert f"network spec changed ({said})" in stop_net.message
    assert f"pod rebuilt: network spec changed ({said})" in p.actions[0].message


def test_the_rebuilt_network_container_has_the_new_settings():
    """After the rebuild the network container carries the new option values, and the
    next plan has nothing to do."""
    model = running(WEB, CLUSTER)
    after = attrs.evolve(CLUSTER, cluster_dns="10.0.0.11", network_mode="none")

    p = replan(WEB, model, after)
    net = next(a for a in p.actions if isinstance(a, Create) and a.container == "net")
    model.apply(p, NOW)

    assert ("10.0.0.11", "192.0.2.53") == net.spec.dns
    assert "none" == net.spec.network
    assert not replan(WEB, model, after).has_changes


@pytest.mark.parametrize(
    "options",
    [
        PlanOptions(),
        CLUSTER,
        attrs.evolve(CLUSTER, network_mode="none", root_dir="/srv/podsync"),
    ],
)
def test_unchanged_options_change_nothing(options):
    """The same options, default or not, leave running pods alone."""
    model = running(WEB, options)

    assert not replan(WEB, model, options).has_changes


def test_dns_options_leave_pods_that_do_not_use_cluster_dns_alone():
    """A pod with dnsPolicy Default gets the engine's DNS: the cluster DNS options and the
    host resolv.conf content do not shape it, so changing them rebuilds nothing."""
    pod = attrs.evolve(WEB, dns_policy=DNSPolicy.DEFAULT)
    model = running(pod, CLUSTER)
    after = PlanOptions(cluster_dns="10.0.0.11", host_resolv_conf="nameserver 198.51.100.1\n")

    assert not replan(pod, model, after).has_changes


def test_host_resolv_conf_is_compared_only_as_it_is_used():
    """Comments, keywords podsync does not pass to the engine, and a loopback name server
    (which pods cannot reach, so it is left out) change nothing."""
    model = running(WEB, CLUSTER)
    after = attrs.evolve(
        CLUSTER,
        host_resolv_conf="# edited\nnameserver 127.0.0.53\n" + RESOLV + "options ndots:2\n",
    )

    assert not replan(WEB, model, after).has_changes


def test_a_root_dir_change_replaces_only_the_containers_that_bind_under_it():
    """The root directory is the source of emptyDir and termination-message binds: the
    containers with such binds are replaced, the network container and the others
    stay, and the message names --root-dir."""
    pod = attrs.evolve(
        WEB,
        containers=(
            WEB.containers[0],  # mounts the emptyDir
            WEB.containers[1],  # binds nothing from the root directory
            # A termination-message file, under the root directory.
            Container("job", "busybox:1.36", termination_message_path="/dev/termination-log"),
        ),
    )
    model = running(pod, PlanOptions(root_dir="/var/lib/podsync"))

    p = replan(pod, model, PlanOptions(root_dir="/srv/podsync"))

    # (The job's new termination-message file is in the pod's state volume, which
    # exists: the plan is made with the volume list.)
    assert [("Kill", "nginx"), ("Create", "nginx"), ("Kill", "job"), ("Create", "job")] == kinds(p)
    assert {Reason.SPEC_CHANGED} == {a.reason for a in p.actions}
    assert "spec changed (--root-dir /var/lib/podsync -> /srv/podsync)" in p.actions[1].message
    nginx = p.actions[1]
    assert isinstance(nginx, Create)
    # (Its emptyDir is an engine volume now, which the root directory does not shape; the
    # root directory stays in the hash, so that containers of earlier versions, which
    # bound it from under the root directory, keep theirs.)
    assert () == nginx.spec.mounts


def test_a_crashed_container_whose_root_dir_changed_starts_at_once():
    """An exited container waiting out its back-off is judged with the options too: with
    another root directory it is a new container, started at once."""
    model = running(WEB, PlanOptions())
    nginx = next(c for c in model.observed if c.labels.get(LABEL_CONTAINER) == "nginx")
    # Its third crash: the next restart waits 40 s.
    model.containers[nginx.id] = attrs.evolve(
        nginx, labels={**nginx.labels, LABEL_RESTART_COUNT: "3"}
    )
    model.exit(nginx.id, 1, NOW - 1)
    assert [("Wait", "nginx")] == kinds(replan(WEB, model, PlanOptions()))

    p = replan(WEB, model, PlanOptions(root_dir="/srv/podsync"))

    assert [("Create", "nginx")] == kinds(p)
    assert Reason.SPEC_CHANGED == p.actions[0].reason
    assert "--root-dir /var/lib/podsync -> /srv/podsync" in p.actions[0].message


def test_root_dir_spelled_differently_is_the_same_directory():
    """A trailing slash names the same directory: nothing is replaced."""
    model = running(WEB, PlanOptions(root_dir="/srv/podsync"))

    assert not replan(WEB, model, PlanOptions(root_dir="/srv/podsync/")).has_changes


# --- upgrading from spec hash version 1 -----------------------------------------------


def as_version_1(model: EngineModel) -> None:
    """Relabel the model's containers as podsync with spec hash version 1 made them.

    Version 1 knew no option fields. With default options its canonical form is the
    current one byte for byte, so only the version in the hash label differs."""
    for cid, c in list(model.containers.items()):
        version, digest = c.labels[LABEL_SPEC_HASH].split(":")
        assert version != "1"
        labels = {**c.labels, LABEL_SPEC_HASH: f"1:{digest}"}
        spec = json.loads(labels[LABEL_SPEC])
        assert not {"cluster_dns", "cluster_domain", "network_mode", "root_dir"} & set(spec)
        model.containers[cid] = attrs.evolve(c, labels=labels)


def test_upgrading_podsync_restarts_nothing_with_default_options():
    """Containers of the previous spec hash version are compared field by field: with
    the default options nothing is restarted."""
    model = running(WEB, PlanOptions())
    as_version_1(model)

    assert not replan(WEB, model, PlanOptions()).has_changes


def test_upgrading_podsync_detects_a_real_option_change():
    """A version 1 container recorded no DNS: with cluster DNS now configured, podsync
    cannot tell the container has it, so the pod is rebuilt, and the message says the
    value was not recorded."""
    model = running(WEB, PlanOptions())
    as_version_1(model)

    p = replan(WEB, model, PlanOptions(cluster_dns="10.0.0.10"))

    assert REBUILD == kinds(p)
    assert "network spec changed (--cluster-dns (not recorded) -> 10.0.0.10)" in (
        p.actions[2].message
    )


# --- the plan records its options -----------------------------------------------------


OPTIONS = PlanOptions(
    network_image="registry.k8s.io/pause:3.9",
    network_mode="none",
    cluster_dns="10.0.0.10",
    cluster_domain="cluster.local",
    host_resolv_conf=RESOLV,
    allow_privileged=True,
    host_path_prefixes=("/data", "/srv"),
    allow_deletions=False,
    ready_sources=frozenset({"file", "http", "api"}),
    root_dir="/srv/podsync",
    stop_timeout=30,
    gc=GCPolicy(max_per_container=None, min_age=0.0, max_total=100),
)


def test_a_plan_records_its_options():
    """The plan carries the options it was made with."""
    p = plan([WEB], [], now=NOW, options=OPTIONS)

    assert OPTIONS == p.options
    assert PlanOptions() == plan([WEB], [], now=NOW).options


def test_saved_plans_carry_the_options():
    """The JSON form round-trips the options, canonically (sets sorted)."""
    p = plan([WEB], [], now=NOW, options=OPTIONS)

    text = plan_to_json(p)

    assert p == plan_from_json(text)
    assert ["api", "file", "http"] == json.loads(text)["options"]["ready_sources"]
    assert text == plan_to_json(plan_from_json(text))


def test_a_plan_of_the_previous_format_is_refused():
    """A plan saved before plans carried their options cannot say what root directory
    it was made for: it is refused with a way out."""
    data = _written_out(plan([WEB], [], now=NOW))
    data["format_version"] = "2"
    data.pop("options", None)

    with pytest.raises(ConfigError) as caught:
        plan_from_json(json.dumps(data), source="old.json")

    assert (
        "old.json: $.format_version: plan format 2 was written by an older podsync (it does "
        "not say which options it was made with); make the plan again with "
        "`podsync plan --out FILE`" in str(caught.value)
    )


def test_a_plan_with_docker_spelled_creates_is_refused():
    """Format 3 creates carried Docker's spellings (``network_mode: container:<net>``,
    ``"80/tcp"`` keys, bind strings, CPU shares); format 4 reads none of them, so such a
    plan is refused with a way out rather than misread."""
    data = _written_out(plan([WEB], [], now=NOW))
    data["format_version"] = "3"
    for pod_plan in data["pods"]:
        for action in pod_plan["actions"]:
            if "spec" not in action:
                continue  # a volume's create
            spec = action["spec"]
            spec["network_mode"] = f"container:{spec.pop('join')}" if spec["join"] else ""
            spec["binds"] = [f"{m['host_path']}:{m['container_path']}" for m in spec.pop("mounts")]
            spec["cpu_shares"] = spec.pop("milli_cpu") * 1024 // 1000
            del spec["network"], spec["ports"]

    with pytest.raises(ConfigError) as caught:
        plan_from_json(json.dumps(data), source="old.json")

    assert (
        "old.json: $.format_version: plan format 3 was written by an older podsync (its "
        "creates are spelled in Docker's terms); make the plan again with `podsync plan --out FILE`"
        in str(caught.value)
    )


def test_a_plan_of_format_4_is_refused():
    """Format 4 was written by a podsync that read memory requests as limits and did not
    honour security settings: its creates are not what this podsync would make."""
    data = json.loads(plan_to_json(plan([WEB], [], now=NOW)))
    data["format_version"] = "4"

    with pytest.raises(ConfigError) as caught:
        plan_from_json(json.dumps(data), source="old.json")

    assert (
        "old.json: $.format_version: plan format 4 was written by an older podsync (it was "
        "planned before resources, security settings and the other pod file fields were "
        "honoured); make the plan again with `podsync plan --out FILE`" in str(caught.value)
    )


def test_saved_creates_are_structured_and_canonical():
    """A saved create holds the neutral spec's values as JSON objects: the network it
    joins, its mounts and ports as fields, its CPU in milli-CPU; the text round-trips."""
    pod = Pod(
        name="web",
        namespace="default",
        uid="web-uid",
        containers=(
            Container(
                name="nginx",
                image="nginx:1.25",
                cpu=250,
                ports=(Port(80, 8080, host_ip="127.0.0.1"), Port(53, 5353, PortProtocol.UDP)),
                volume_mounts=(VolumeMount("cache", "/cache", read_only=True),),
            ),
        ),
        volumes=(Volume("cache"),),
    )
    p = plan([pod], [], now=NOW, options=PlanOptions(network_mode="none"))
    text = plan_to_json(p)
    # Every field, as format 10 wrote them (format 11 leaves out what the rest says).
    net, app = (a["spec"] for a in _written_out(p)["pods"][0]["actions"] if "spec" in a)

    assert ("none", "") == (net["network"], net["join"])
    assert [
        {"container_port": 80, "host_port": 8080, "protocol": "TCP", "host_ip": "127.0.0.1"},
        {"container_port": 53, "host_port": 5353, "protocol": "UDP", "host_ip": ""},
    ] == net["ports"]
    assert ("", net["name"], [], 250) == (
        app["network"],
        app["join"],
        app["ports"],
        app["milli_cpu"],
    )
    assert [] == app["mounts"]
    assert [
        {
            "volume": "podsync-emptydir_web-uid_cache",
            "container_path": "/cache",
            "read_only": True,
            "no_copy": True,
        }
    ] == app["volumes"]
    assert p == plan_from_json(text)
    assert text == plan_to_json(plan_from_json(text))


# --- apply takes the root directory from the plan -------------------------------------


def test_apply_takes_the_root_directory_from_the_plan(tmp_path):
    """Host paths are made under the plan's root directory; there is no second place to
    give it, so it cannot be given inconsistently."""
    root = str(tmp_path / "root")
    options = PlanOptions(root_dir=root)
    clock = FakeClock(NOW, step=0.001)
    fake = FakeRuntime(images=["busybox", "registry.k8s.io/pause:3.10"], clock=clock)

    made = plan([WEB], [], now=NOW, options=options)
    result = apply(made, fake, clock=clock)

    assert result.ok, result.summary()
    assert root == made.options.root_dir
    with pytest.raises(TypeError):
        apply(plan([WEB], [], now=NOW, options=options), fake, root_dir=root, clock=clock)  # type: ignore[call-arg]


# --- the command line -------------------------------------------------------------------

WEB_YAML = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: web-uid}
spec:
  containers:
    - name: nginx
      image: busybox
      volumeMounts: [{name: cache, mountPath: /cache}]
      terminationMessagePath: /dev/termination-log
  volumes: [{name: cache, emptyDir: {}}]
"""


def test_a_saved_plan_is_applied_under_its_own_root_dir(tmp_path, capsys):
    """apply --plan needs no --root-dir: the plan carries the one it was made with. One
    that names another directory is refused before the engine is touched."""
    source = tmp_path / "web.yaml"
    source.write_text(WEB_YAML)
    saved = str(tmp_path / "plan.json")
    root = tmp_path / "root"
    clock = FakeClock(NOW, step=0.001)
    fake = FakeRuntime(images=["busybox", "registry.k8s.io/pause:3.10"], clock=clock)

    def run(*argv: str) -> int:
        return cli.main(
            list(argv), runtime_factory=lambda host: fake, clock=clock, sleep=clock.advance
        )

    common = ["--network-mode", "none", "--root-dir", str(root)]
    assert 0 == run("plan", *common, "--out", saved, str(source))
    fake.clear_calls()
    capsys.readouterr()

    refused = run("apply", "--plan", saved, "--root-dir", str(tmp_path / "elsewhere"))
    err = capsys.readouterr().err

    assert 1 == refused
    assert [] == fake.call_names()
    assert f"the saved plan was made with --root-dir {root}, not {tmp_path}/elsewhere" in err

    assert 0 == run("apply", "--plan", saved)
    assert "create" in fake.call_names()


@pytest.mark.parametrize("pods", [0, 1, 3])
def test_plan_json_chunks_spell_the_canonical_text(pods):
    """The streamed pieces join to exactly the canonical text of the whole plan, with
    and without pods, rejections and pulls, and that text is the plan's data."""
    from podsync.actions._json import _converter, _dumps, plan_json_chunks
    from podsync.actions._json_pods import compact_pod

    desired = [attrs.evolve(WEB, name=f"web{i}", uid=f"uid-{i}") for i in range(pods)]
    p = plan(desired, [], now=NOW)
    context = (p.options.network_image, p.options.cluster_dns, p.options.cluster_domain)
    data = _converter().unstructure(p)
    if "pods" in data:
        data["pods"] = [compact_pod(pod, context) for pod in data["pods"]]
    text = "".join(plan_json_chunks(p))

    assert _dumps(data) + "\n" == text
    assert data == json.loads(text)


def test_a_plan_of_format_5_is_still_read():
    """Format 6 added actions and fields (claims' volumes, volume files, Secret values
    by reference) that a format-5 plan never holds: such a plan reads as it was saved."""
    made = plan([WEB], [], now=NOW)
    assert json.loads(plan_to_json(made))["format_version"] == PLAN_FORMAT_VERSION
    data = _written_out(made)
    data["format_version"] = "5"

    read = plan_from_json(json.dumps(data), source="old.json")

    assert read.pods == made.pods


def test_a_plan_of_a_newer_format_is_refused_by_its_version():
    data = json.loads(plan_to_json(plan([WEB], [], now=NOW)))
    newer = str(int(PLAN_FORMAT_VERSION) + 1)
    data["format_version"] = newer

    with pytest.raises(ConfigError) as caught:
        plan_from_json(json.dumps(data), source="new.json")

    assert (
        f"new.json: $.format_version: this podsync reads plan format {PLAN_FORMAT_VERSION}, "
        f"got '{newer}'" in str(caught.value)
    )
