"""Resources as the modern kubelet honours them, and the pod fields of issue 13: pod
files as people write them (block YAML, KYAML flow style, JSON), what they load as, what
the planner asks of the engine, and what podsync refuses with why.

Engine tests that inspect what Docker got are in ``tests/engine/test_pod_fields.py``.
"""

from __future__ import annotations

import json

import attrs
import pytest

import podsync
from podsync import (
    ConfigError,
    Container,
    HostAlias,
    Pod,
    PodPhase,
    Reason,
    ResourceList,
    Resources,
    Wait,
    parse_pods,
    spec_hash,
)
from podsync.actions._actions import Create, CreateSpec
from podsync.actions._options import PlanOptions
from podsync.host._node import NodeInfo
from podsync.runtime.docker._api import docker_create_args
from podsync.spec._hashing import canonical_spec, network_spec_hash
from podsync.spec._labels import LABEL_POD_NAME, LABEL_POD_UID
from podsync.testing import FakeClock, FakeRuntime

MI = 2**20
NOW = 1_000_000.0
PAUSE = "registry.k8s.io/pause:3.10"


def problems_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_pods(text, source_name="pod.yaml", source="file")
    return [str(p) for p in info.value.problems]


def one_pod(text: str) -> Pod:
    (pod,) = parse_pods(text, source_name="pod.yaml", source="file")
    return pod


# --- resources: pod files ---------------------------------------------------------------

# Block YAML, as the Kubernetes documentation writes a pod with requests and limits
# ("Resource Management for Pods and Containers").
FRONTEND = """\
apiVersion: v1
kind: Pod
metadata:
  name: frontend
spec:
  containers:
  - name: app
    image: images.my-company.example/app:v4
    resources:
      requests:
        memory: "64Mi"
        cpu: "250m"
        ephemeral-storage: "2Gi"
      limits:
        memory: "128Mi"
        cpu: "500m"
  - name: log-aggregator
    image: images.my-company.example/log-aggregator:v6
    resources:
      requests:
        memory: "64Mi"
        cpu: "250m"
"""


def test_requests_and_limits_load_apart() -> None:
    """Requests and limits are kept apart in the model; the 2014 values stay 0."""
    pod = one_pod(FRONTEND)

    assert (
        Resources(
            requests=ResourceList(cpu=250, memory=64 * MI, ephemeral_storage=2 * 1024 * MI),
            limits=ResourceList(cpu=500, memory=128 * MI),
        ),
        Resources(requests=ResourceList(cpu=250, memory=64 * MI)),
    ) == tuple(c.resources for c in pod.containers)
    assert all((c.cpu, c.memory) == (0, 0) for c in pod.containers)


# KYAML, the flow-style YAML subset Kubernetes introduced.
KYAML_GPU = """\
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {name: "cuda-vectoradd"},
  spec: {
    restartPolicy: "OnFailure",
    containers: [{
      name: "cuda-vectoradd",
      image: "nvidia/samples:vectoradd-cuda11.2.1",
      resources: {limits: {"nvidia.com/gpu": 1}},
    }],
  },
}
"""


def _pod_with(resources: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
        "  containers:\n  - name: app\n    image: busybox\n"
        f"    resources: {resources}\n"
    )


AT = "pod.yaml: $.spec.containers[0].resources"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            KYAML_GPU,
            [
                f"{AT}.limits['nvidia.com/gpu']: extended resource 'nvidia.com/gpu' is not "
                "supported by podsync: extended resources are counted by a cluster's "
                "scheduler and handed to the container by a device plugin; one Docker host "
                "has neither"
            ],
            id="gpu-kyaml",
        ),
        pytest.param(
            _pod_with("{requests: {example.com/foo: 1}, limits: {example.com/foo: 1}}"),
            [
                f"{AT}.requests['example.com/foo']: extended resource 'example.com/foo' is "
                "not supported by podsync: extended resources are counted by a cluster's "
                "scheduler and handed to the container by a device plugin; one Docker host "
                "has neither",
                f"{AT}.limits['example.com/foo']: extended resource 'example.com/foo' is "
                "not supported by podsync: extended resources are counted by a cluster's "
                "scheduler and handed to the container by a device plugin; one Docker host "
                "has neither",
            ],
            id="extended",
        ),
        pytest.param(
            _pod_with("{limits: {hugepages-2Mi: 100Mi, memory: 100Mi}}"),
            [
                f"{AT}.limits.hugepages-2Mi: hugepages-2Mi is not supported by podsync: huge "
                "pages are limited through the kubelet's hugetlb cgroup, which the Docker "
                "Engine API cannot set, and need pages the host has set aside"
            ],
            id="hugepages",
        ),
        pytest.param(
            _pod_with("{limits: {ephemeral-storage: 4Gi}}"),
            [
                f"{AT}.limits.ephemeral-storage: an ephemeral-storage limit is not supported "
                "by podsync: Docker cannot cap a container's writable layer and logs "
                "without a storage-driver quota, and the kubelet enforces this limit by "
                "evicting the pod, which podsync does not do (an ephemeral-storage request "
                "is accepted: it only informs scheduling)"
            ],
            id="ephemeral-storage-limit",
        ),
        pytest.param(
            _pod_with("{claims: [{name: gpu}]}"),
            [
                f"{AT}.claims: resources.claims is not supported by podsync: dynamic "
                "resource allocation needs a cluster's ResourceClaim objects and their "
                "drivers"
            ],
            id="claims",
        ),
        pytest.param(
            _pod_with("{limits: {cpus: 1}}"),
            [
                f"{AT}.limits.cpus: unknown resource 'cpus': a container's resources are "
                "cpu, memory, ephemeral-storage, hugepages-<size> or extended resources "
                "(example.com/name)"
            ],
            id="unknown-resource",
        ),
        pytest.param(
            _pod_with("{requests: {memory: 1Gi}, limits: {memory: 512Mi}}"),
            [
                f"{AT}.requests.memory: must not exceed the limit (536870912 bytes), "
                "got 1073741824 bytes"
            ],
            id="request-above-limit",
        ),
        pytest.param(
            _pod_with("{limits: {cpu: lots}}"),
            [
                f"{AT}.limits.cpu: 'lots' is not a valid quantity: expected a number with "
                "an optional suffix, like 500m, 0.5 or 2"
            ],
            id="bad-quantity",
        ),
        pytest.param(
            # Pod-level resources (KEP 2837), written as the documentation does.
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
            "  resources: {limits: {cpu: '1', memory: 200Mi}}\n"
            "  containers:\n  - {name: app, image: busybox}\n",
            [
                "pod.yaml: $.spec.resources: spec.resources (pod-level resources) is not "
                "supported by podsync: pod-level resources size the pod's own cgroup, and "
                "podsync makes none (each container is a Docker container of its own): give "
                "each container its resources"
            ],
            id="pod-level",
        ),
    ],
)
def test_resources_podsync_cannot_honour_are_refused(text: str, expected: list[str]) -> None:
    """What needs a cluster is refused with "not supported by podsync" and why, at its
    path; a misspelt resource is unknown, not "not supported"."""
    assert expected == problems_of(text)


def test_an_ephemeral_storage_request_loads() -> None:
    """An ephemeral-storage request is a scheduling hint: accepted, kept, passed to
    nothing, and named in the pod's one warning line."""
    warnings: list[str] = []
    (pod,) = parse_pods(
        _pod_with("{requests: {ephemeral-storage: 1Gi}}"),
        source_name="pod.yaml",
        on_warning=warnings.append,
        node=NodeInfo(name="node-1", milli_cpu=2000, memory=2**30),
    )

    assert [
        "pod.yaml: pod default/web: ignoring scheduling fields: "
        "containers[0].resources.requests.ephemeral-storage"
    ] == warnings

    assert Resources(requests=ResourceList(ephemeral_storage=2**30)) == pod.containers[0].resources
    assert spec_hash(pod.containers[0], pod) == spec_hash(Container("app", "busybox"), pod)


# --- resources: the model -----------------------------------------------------------------


def test_the_2014_values_and_resources_are_one_setting() -> None:
    """``cpu`` is a request (a weight, no quota) and ``memory`` a limit, as in the seed;
    given with ``resources`` they are refused, never merged by guess."""
    legacy = Container("app", "busybox", cpu=500, memory=64 * MI)

    assert (
        Resources(requests=ResourceList(cpu=500), limits=ResourceList(memory=64 * MI))
        == legacy.effective_resources
    )
    with pytest.raises(ValueError, match="not both"):
        Container("app", "busybox", cpu=500, resources=Resources())
    with pytest.raises(ValueError, match="exceeds its limit"):
        Resources(requests=ResourceList(cpu=2), limits=ResourceList(cpu=1))
    with pytest.raises(ValueError, match="ephemeral-storage limit"):
        Resources(limits=ResourceList(ephemeral_storage=1))
    with pytest.raises(ValueError, match="0 or more"):
        ResourceList(cpu=-1)


def test_v1beta1_cpu_and_memory_keep_their_seed_meaning() -> None:
    """A 2014 manifest's cpu is the weight and its memory the limit; no quota."""
    (pod,) = parse_pods(
        "version: v1beta1\nid: web\ncontainers:\n"
        "- {name: app, image: busybox, cpu: 500, memory: 67108864}\n"
    )

    spec = _app_spec(pod)

    assert (500, 0, 64 * MI) == (spec.milli_cpu, spec.cpu_limit, spec.memory)


# --- resources: what the engine is asked for ---------------------------------------------


def _sync(*pods: Pod, options: PlanOptions | None = None) -> FakeRuntime:
    clock = FakeClock(NOW, step=0)
    fake = FakeRuntime(images=["busybox", PAUSE], clock=clock)
    result = podsync.sync(pods, fake, options=options or PlanOptions(), clock=clock)
    assert result.ok, result.apply_result.summary()
    return fake


def _specs(fake: FakeRuntime) -> dict[str, CreateSpec]:
    """The created containers' specs by pod container name."""
    found = {}
    for c in fake.containers:
        spec = fake.spec(c.id)
        assert spec is not None
        found[c.labels[podsync.labels.LABEL_CONTAINER]] = spec
    return found


def _app_spec(pod: Pod) -> CreateSpec:
    return _specs(_sync(pod))[pod.containers[0].name]


@pytest.mark.parametrize(
    ("resources", "weight", "limit", "memory"),
    [
        # A request alone: the weight, no quota, no memory cap (a memory request is
        # never a limit: it used to be one, an OOM kill waiting to happen).
        ("{requests: {cpu: 250m, memory: 64Mi}}", 250, 0, 0),
        # A limit alone: the weight too (the API copies it into the request), and a quota.
        ("{limits: {cpu: 500m, memory: 128Mi}}", 500, 500, 128 * MI),
        # Both: the weight from the request, the quota from the limit.
        (
            "{requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: '1', memory: 128Mi}}",
            250,
            1000,
            128 * MI,
        ),
        # Neither: the engine's defaults.
        ("{}", 0, 0, 0),
    ],
)
def test_what_the_engine_is_asked_for(resources: str, weight: int, limit: int, memory: int) -> None:
    """The modern kubelet's calculateLinuxResources: weight from the request (else the
    limit), quota from the limit, memory limit from the limit only."""
    spec = _app_spec(one_pod(_pod_with(resources)))

    assert (weight, limit, memory) == (spec.milli_cpu, spec.cpu_limit, spec.memory)


@pytest.mark.parametrize(
    ("spec", "host_config"),
    [
        (
            CreateSpec("a", "busybox", milli_cpu=250, cpu_limit=500, memory=128 * MI),
            {"cpu_shares": 256, "cpu_period": 100000, "cpu_quota": 50000, "mem_limit": 128 * MI},
        ),
        # 5m is under the kubelet's smallest quota: 1 ms per 100 ms.
        (
            CreateSpec("a", "busybox", milli_cpu=5, cpu_limit=5),
            {"cpu_shares": 5, "cpu_period": 100000, "cpu_quota": 1000, "mem_limit": None},
        ),
        (
            CreateSpec("a", "busybox", milli_cpu=1),
            {"cpu_shares": 2, "cpu_period": None, "cpu_quota": None, "mem_limit": None},
        ),
        # No request nor limit: 2 shares, the kubelet's MilliCPUToShares(0).
        (
            CreateSpec("a", "busybox"),
            {"cpu_shares": 2, "cpu_period": None, "cpu_quota": None, "mem_limit": None},
        ),
        # A memory limit with swap at the same value: no swap beyond the limit.
        (
            CreateSpec("a", "busybox", memory=64 * MI, memory_swap=64 * MI),
            {"mem_limit": 64 * MI, "memswap_limit": 64 * MI},
        ),
    ],
)
def test_docker_cpu_and_memory_arguments(spec: CreateSpec, host_config: dict[str, object]) -> None:
    """CpuShares, CpuPeriod, CpuQuota, Memory and MemorySwap as Docker gets them."""
    args = docker_create_args(spec).host_config

    assert host_config == {key: args[key] for key in host_config}


def test_the_hash_is_what_reaches_the_engine() -> None:
    """A 2014 container and the v1 one with the same weight and limit hash alike (no
    restart); a memory request changes nothing; a CPU limit does."""
    pod = Pod("web")
    legacy = Container("app", "busybox", cpu=250, memory=64 * MI)
    v1 = Container(
        "app",
        "busybox",
        resources=Resources(
            requests=ResourceList(cpu=250, memory=32 * MI), limits=ResourceList(memory=64 * MI)
        ),
    )
    capped = attrs.evolve(
        v1, resources=attrs.evolve(v1.resources, limits=ResourceList(cpu=500, memory=64 * MI))
    )

    assert spec_hash(legacy, pod) == spec_hash(v1, pod)
    assert spec_hash(v1, pod) != spec_hash(capped, pod)
    assert 500 == canonical_spec(capped, pod)["cpu_limit"]
    assert "cpu_limit" not in canonical_spec(v1, pod)


def test_a_memory_request_that_was_a_limit_replaces_the_container() -> None:
    """A container an older podsync made with a memory request as its limit is
    replaced, and the plan says so: its limit goes."""
    old = Pod("web", (Container("app", "busybox", memory=64 * MI),), uid="u1")
    fake = _sync(old)
    new = attrs.evolve(
        old,
        containers=(
            Container("app", "busybox", resources=Resources(requests=ResourceList(memory=64 * MI))),
        ),
    )

    observed = fake.list_containers()
    plan = podsync.plan([new], observed, now=NOW, images=fake.list_images())

    creates = [a for a in plan.actions if isinstance(a, Create)]
    assert ["app"] == [c.container for c in creates]
    assert Reason.SPEC_CHANGED == creates[0].reason
    assert "replace default/web/app: spec changed (memory 67108864 -> 0)" == creates[0].message
    assert 0 == creates[0].spec.memory


# --- labels and annotations -------------------------------------------------------------------

LABELLED = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
    app.kubernetes.io/name: shop
  annotations:
    example.com/owner: "team a"
spec:
  containers:
  - name: app
    image: busybox
"""


def test_labels_and_annotations_become_container_labels() -> None:
    """Labels as they are, annotations as ``annotation.<key>``, on every container;
    podsync's own labels beside them."""
    pod = one_pod(LABELLED)
    assert ({"app": "web", "app.kubernetes.io/name": "shop"}, {"example.com/owner": "team a"}) == (
        pod.labels,
        pod.annotations,
    )

    specs = _specs(_sync(pod))

    for name in ("net", "app"):
        labels = specs[name].labels
        assert "web" == labels["app"]
        assert "shop" == labels["app.kubernetes.io/name"]
        assert "team a" == labels["annotation.example.com/owner"]
        assert pod.uid == labels[LABEL_POD_UID]
        assert "web" == labels[LABEL_POD_NAME]


def test_a_label_change_replaces_nothing() -> None:
    """Docker labels cannot change after create, and the kubelet restarts nothing for a
    label edit (its hash covers the container's spec): the containers keep the labels
    they were made with (issue 27; tests/unit/planner/test_plan_metadata.py has the
    cases)."""
    pod = one_pod(LABELLED)
    fake = _sync(pod)
    edited = attrs.evolve(pod, labels={"app": "web", "tier": "front"})

    plan = podsync.plan([edited], fake.list_containers(), now=NOW, images=fake.list_images())

    assert not plan.has_changes, plan.describe()


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (
            "{name: web, labels: {io.podsync.pod.uid: x}}",
            "pod.yaml: $.metadata.labels['io.podsync.pod.uid']: label key 'io.podsync.pod.uid' "
            "is reserved: io.podsync.* labels are podsync's own record of the container",
        ),
        (
            "{name: web, labels: {io.kubernetes.pod.name: web}}",
            "pod.yaml: $.metadata.labels['io.kubernetes.pod.name']: label key "
            "'io.kubernetes.pod.name' is reserved: io.kubernetes.* labels mark the "
            "containers of a Kubernetes node, which podsync leaves alone",
        ),
        (
            "{name: web, labels: {annotation.owner: a}, annotations: {owner: b}}",
            "pod.yaml: $.metadata.labels['annotation.owner']: label key 'annotation.owner' "
            "collides with annotation 'owner', which containers carry as label "
            "'annotation.owner'",
        ),
        (
            "{name: web, labels: {'bad key': a}}",
            "pod.yaml: $.metadata.labels['bad key']: 'bad key' is not a valid label key: the "
            "name must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a "
            "letter or digit, after an optional DNS subdomain prefix and '/'",
        ),
        (
            "{name: web, labels: {app: 'two words'}}",
            "pod.yaml: $.metadata.labels.app: 'two words' is not a valid label value: at "
            "most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or "
            "digit",
        ),
    ],
)
def test_bad_labels_are_refused(metadata: str, expected: str) -> None:
    """A label cannot overwrite podsync's record nor make a container a Kubernetes
    node's; Kubernetes' own label rules hold."""
    text = (
        f"apiVersion: v1\nkind: Pod\nmetadata: {metadata}\n"
        "spec: {containers: [{name: app, image: busybox}]}\n"
    )

    assert [expected] == problems_of(text)


def test_a_reserved_label_from_code_is_rejected_at_admission() -> None:
    """Pods built in code get the loader's rule at admission: nothing is created."""
    pod = Pod("web", (Container("app", "busybox"),), labels={"io.podsync.pod.uid": "x"})

    plan = podsync.plan([pod], now=NOW)

    assert [] == list(plan.actions)
    assert [
        (
            Reason.INVALID_POD,
            "label 'io.podsync.pod.uid' is reserved for podsync's and Kubernetes' own records",
        )
    ] == [(r.reason, r.message) for r in plan.rejected]


# --- hostname, subdomain, hostAliases: JSON, as kubectl writes it -------------------------

HOSTS_JSON = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "hostaliases-pod", "namespace": "shop"},
        "spec": {
            "hostname": "busybox-1",
            "subdomain": "busybox-subdomain",
            "hostAliases": [
                {"ip": "127.0.0.1", "hostnames": ["foo.local", "bar.local"]},
                {"ip": "10.1.2.3", "hostnames": ["foo.remote", "bar.remote"]},
            ],
            "containers": [
                {
                    "name": "cat-hosts",
                    "image": "busybox",
                    "command": ["cat"],
                    "args": ["/etc/hosts"],
                    "tty": True,
                    "stdin": True,
                    "stdinOnce": True,
                    "workingDir": "/tmp",
                }
            ],
        },
    },
    indent=2,
)


def test_host_fields_load() -> None:
    pod = one_pod(HOSTS_JSON)

    assert ("busybox-1", "busybox-subdomain") == (pod.hostname, pod.subdomain)
    assert (
        HostAlias("127.0.0.1", ("foo.local", "bar.local")),
        HostAlias("10.1.2.3", ("foo.remote", "bar.remote")),
    ) == pod.host_aliases
    c = pod.containers[0]
    assert (True, True, True, "/tmp") == (c.tty, c.stdin, c.stdin_once, c.working_dir)


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        # The kubelet's GeneratePodHostNameAndDomain: a domain needs a cluster domain.
        ("cluster.local", "busybox-subdomain.shop.svc.cluster.local"),
        ("", ""),
    ],
)
def test_the_network_container_has_the_pods_host_identity(domain: str, expected: str) -> None:
    """Hostname, domain and extra hosts go to the network container (its joiners share
    its UTS namespace and /etc/hosts; Docker refuses them beside container:)."""
    pod = one_pod(HOSTS_JSON)

    specs = _specs(_sync(pod, options=PlanOptions(cluster_domain=domain)))

    net, app = specs["net"], specs["cat-hosts"]
    assert ("busybox-1", expected, pod.host_aliases) == (
        net.hostname,
        net.domainname,
        net.host_aliases,
    )
    assert ("", "", ()) == (app.hostname, app.domainname, app.host_aliases)
    assert (True, True, True) == (app.tty, app.stdin, app.stdin_once)
    extra = docker_create_args(net).host_config["extra_hosts"]
    assert [
        "foo.local:127.0.0.1",
        "bar.local:127.0.0.1",
        "foo.remote:10.1.2.3",
        "bar.remote:10.1.2.3",
    ] == extra


def test_a_host_network_pod_keeps_the_hosts_identity() -> None:
    """On the host's network the network container is the host's: no hostname and no
    domain of the pod (Docker refuses them with --network host), whatever the cluster
    domain; and a new network container starts its restart count at 0."""
    pod = attrs.evolve(
        one_pod(HOSTS_JSON), security_context=podsync.PodSecurityContext(host_network=True)
    )

    specs = _specs(
        _sync(pod, options=PlanOptions(cluster_domain="cluster.local", allow_host_namespaces=True))
    )

    net = specs["net"]
    assert ("host", "", "") == (net.network, net.hostname, net.domainname)
    assert "0" == net.labels["io.podsync.restart-count"]


def test_host_fields_enter_the_network_hash() -> None:
    pod = Pod("web", (Container("app", "busybox"),))
    hashes = {
        network_spec_hash(p, PAUSE, cluster_domain="cluster.local")
        for p in (
            pod,
            attrs.evolve(pod, hostname="other"),
            attrs.evolve(pod, subdomain="sub"),
            attrs.evolve(pod, host_aliases=(HostAlias("10.0.0.1", ("a",)),)),
        )
    }

    assert 4 == len(hashes)
    # Labels and annotations are no host field: they enter no hash (issue 27).
    assert network_spec_hash(pod, PAUSE) == network_spec_hash(
        attrs.evolve(pod, labels={"app": "web"}, annotations={"team": "a"}), PAUSE
    )
    # Without a cluster domain a subdomain reaches nothing, as in the kubelet.
    assert network_spec_hash(pod, PAUSE) == network_spec_hash(
        attrs.evolve(pod, subdomain="sub"), PAUSE
    )


APP = "containers: [{name: app, image: busybox}]}"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "{hostAliases: [{ip: not-an-ip, hostnames: [a]}], " + APP,
            "pod.yaml: $.spec.hostAliases[0].ip: 'not-an-ip' is not an IP address",
        ),
        (
            "{hostAliases: [{ip: 10.0.0.1, hostnames: [Foo_Bar]}], " + APP,
            "pod.yaml: $.spec.hostAliases[0].hostnames[0]: 'Foo_Bar' is not a valid DNS-1123 "
            "subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)",
        ),
        (
            "{hostname: My.Host, " + APP,
            "pod.yaml: $.spec.hostname: 'My.Host' is not a valid DNS-1123 label: uppercase "
            "letters are not allowed (only lowercase letters, digits and '-')",
        ),
        (
            "{containers: [{name: app, image: busybox, tty: 'yes'}]}",
            "pod.yaml: $.spec.containers[0].tty: expected true or false, got 'yes'",
        ),
    ],
)
def test_bad_host_fields_are_refused(spec: str, expected: str) -> None:
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web}}\nspec: {spec}\n"

    assert [expected] == problems_of(text)


# --- schedulingGates ---------------------------------------------------------------------------

GATED = """\
apiVersion: v1
kind: Pod
metadata:
  name: test-pod
spec:
  schedulingGates:
  - name: example.com/foo
  - name: example.com/bar
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.6
"""


def test_a_gated_pod_waits_and_nothing_is_created() -> None:
    """A pod with scheduling gates is not ready to run: its plan waits with the reason,
    nothing is pulled or created, and its status is Pending, SchedulingGated."""
    pod = one_pod(GATED)
    assert ("example.com/foo", "example.com/bar") == pod.scheduling_gates

    plan = podsync.plan([pod], now=NOW)

    assert not plan.has_changes
    assert () == plan.pulls
    assert [
        Wait(
            pod="default/test-pod",
            pod_uid=pod.uid,
            container="pause",
            seconds=0.0,
            reason=Reason.SCHEDULING_GATED,
            message="wait default/test-pod/pause: the pod has scheduling gates "
            "(example.com/foo, example.com/bar): not ready to run",
        )
    ] == list(plan.actions)
    status = podsync.pod_status(pod, [], plan=plan)
    assert PodPhase.PENDING == status.phase
    assert ["SchedulingGated"] == [c.reason for c in status.containers]


def test_removing_the_gates_runs_the_pod_and_adding_one_touches_nothing() -> None:
    pod = one_pod(GATED)
    ungated = attrs.evolve(pod, scheduling_gates=())
    fake = _sync(ungated)
    running = fake.list_containers()
    assert 2 == len(running)

    plan = podsync.plan([pod], running, now=NOW, images=fake.list_images())

    assert {Wait} == {type(a) for a in plan.actions}


def test_duplicate_gates_are_refused() -> None:
    text = GATED.replace("example.com/bar", "example.com/foo")

    assert [
        "pod.yaml: $.spec.schedulingGates[1].name: duplicate scheduling gate "
        "'example.com/foo' (first at $.spec.schedulingGates[0].name)"
    ] == problems_of(text)


def test_nothing_is_loaded_when_anything_is_refused() -> None:
    """Bad input: one refused field fails the whole file, with its file and path."""
    text = FRONTEND + "---\n" + KYAML_GPU

    problems = problems_of(text)

    assert 1 == len(problems)
    assert problems[0].startswith("pod.yaml: document 2: $.spec.containers[0].resources.limits")


def test_docker_terminal_arguments() -> None:
    """tty and stdin as Docker's Tty/OpenStdin; StdinOnce exactly as written (the SDK
    would set it with OpenStdin unless detached)."""
    both = docker_create_args(CreateSpec("a", "busybox", tty=True, stdin=True, stdin_once=True))
    open_ = docker_create_args(CreateSpec("a", "busybox", stdin=True))
    plain = docker_create_args(CreateSpec("a", "busybox"))

    assert (True, True) == (both.container["tty"], both.container["stdin_open"])
    assert "detach" not in both.container
    assert (False, True, True) == (
        open_.container["tty"],
        open_.container["stdin_open"],
        open_.container["detach"],
    )
    assert (False, False) == (plain.container["tty"], plain.container["stdin_open"])
    assert "detach" not in plain.container


def test_saved_plans_keep_the_new_fields() -> None:
    """A saved plan carries the quota, the host identity, the terminal and the waits."""
    pod = one_pod(HOSTS_JSON)
    gated = one_pod(GATED)
    plan = podsync.plan([pod, gated], now=NOW, options=PlanOptions(cluster_domain="c.local"))

    again = podsync.plan_from_json(podsync.plan_to_json(plan))

    assert plan == again
    assert {Create, Wait} == {type(a) for a in again.actions if not isinstance(a, podsync.Pull)}


@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("app", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("example.com/name", True),
        ("Example.com/name", False),  # the prefix is a lowercase DNS subdomain
        ("example.com/", False),
        ("/name", False),
        ("a.b_c-D", True),
        ("-app", False),
        ("app-", False),
        (f"{'a' * 250}.com/x", False),  # a prefix over 253 characters
    ],
)
def test_label_keys_are_kubernetes_qualified_names(key: str, ok: bool) -> None:
    text = (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web, labels: {{'{key}': v}}}}\n"
        "spec: {containers: [{name: app, image: busybox}]}\n"
    )
    if ok:
        assert {key: "v"} == one_pod(text).labels
    else:
        assert [p for p in problems_of(text) if "is not a valid label key" in p]


@pytest.mark.parametrize(
    ("hostname", "subdomain", "domain", "expected"),
    [
        ("", "", "cluster.local", ("web", "")),
        ("h", "", "cluster.local", ("h", "")),
        ("", "sub", "cluster.local", ("web", "sub.shop.svc.cluster.local")),
        ("h", "sub", "", ("h", "")),
    ],
)
def test_pod_host_name(hostname: str, subdomain: str, domain: str, expected: object) -> None:
    """The kubelet's GeneratePodHostNameAndDomain."""
    from podsync.spec._resolv import pod_host_name

    assert expected == pod_host_name("web", hostname, subdomain, "shop", domain)
