"""What the per-pod planner asks the engine to create (``PodPlanner`` inherits
``CreateSpecs``): the ``CreateSpec`` of a pod's network container and of each of its
containers, and the labels that record on each what podsync needs to read it back (the
pod, the container, the attempt, the spec hash and its canonical text, the restart
count, the preStop hook, the init index, the termination-message policy).

The network container carries the pod's ports, hostname, DNS and host aliases (seed
createNetworkContainer) and holds the pod's IPC namespace (the CRI's pod-level IPC);
every other container joins its network and its IPC namespace, and gets its binds and
engine volumes, its hooks, its resources (as the modern kubelet passes them, with the
OOM score of the pod's QoS class and no swap beyond a memory limit) and its security
settings.

Contract: pure; reads only the planner's state (asking ``PlanContext`` for the images a
create needs).

May import: the model, the vocabulary, the naming, ports, resolv.conf, volume and label
rules, the plan's shared state (``_context``), emptyDir storage (``_empty_dirs``) and the
hooks' named ports (``_init``). Never ``_pod`` (which imports it), ``_plan``, a runtime,
or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from podsync.actions._actions import CreateSpec
from podsync.actions._options import Capability
from podsync.model._pod import Container, Pod, PullPolicy, engine_resources
from podsync.model._security import app_security, network_security
from podsync.planner._context import PlanContext
from podsync.planner._empty_dirs import container_storage
from podsync.planner._init import _numbered
from podsync.spec._environment import environment
from podsync.spec._hashing import SpecHash
from podsync.spec._labels import (
    ANNOTATION_LABEL_PREFIX,
    EMPTY_DIRS_ENGINE,
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_EMPTY_DIRS,
    LABEL_GRACE_PERIOD,
    LABEL_JOINS,
    LABEL_POD_IPC,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_STATE,
    LABEL_POD_UID,
    LABEL_PRE_STOP,
    LABEL_RESTART_COUNT,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
    LABEL_TERMINATION_MESSAGE_POLICY,
    POD_IPC_SHAREABLE,
    POD_STATE_MOUNTED,
    encode_handler,
)
from podsync.spec._naming import NETWORK_CONTAINER, container_name
from podsync.spec._ownership import Instance
from podsync.spec._ports import network_ports, port_mappings
from podsync.spec._qos import NETWORK_OOM_SCORE_ADJ, oom_score_adj
from podsync.spec._resolv import cluster_dns, pod_host_name, uses_cluster_dns
from podsync.spec._volumes import (
    VolumeFileMount,
    container_tmpfs,
    content_labels,
    pod_state_mount,
    termination_file_mount,
)

__all__: list[str] = []  # the planner's own


def _next_attempt(instances: Sequence[Instance]) -> int:
    """The attempt number of a new instance of a pod container: one past the highest of
    ``instances`` (its own, and those of a 2014 kubelet that are not taken over)."""
    used = {i.attempt for i in instances if i.attempt is not None}
    if not used:
        return 0
    candidate = max(used) + 1
    if candidate <= 0xFFFFFFFF:
        return candidate
    # A 2014 kubelet wrote random suffixes; should they reach the top, take a free one.
    return next(n for n in range(len(used) + 1) if n not in used)


class CreateSpecs:
    """The create specs of ``PodPlanner``: what a ``Create`` of the pod's network
    container or of one of its containers asks of the engine. The methods it relies on
    are ``PodPlanner``'s, and ``InitPlanner``'s (``_init_labels``: ``PodPlanner`` lists
    ``InitPlanner`` first)."""

    pod: Pod
    ctx: PlanContext
    by_name: dict[str, list[Instance]]
    reserved: dict[str, list[Instance]]
    engine_empty_dirs: bool

    @property
    def _grace(self) -> int:
        """The seconds a container of this pod gets to stop (``PodPlanner._grace``)."""
        raise NotImplementedError

    def _app_hash(self, c: Container) -> tuple[SpecHash, str]:
        """``c``'s spec hash and the canonical text it is the digest of."""
        raise NotImplementedError

    def _init_labels(self, c: Container) -> dict[str, str]:
        """The labels that mark an init container (``InitPlanner._init_labels``)."""
        raise NotImplementedError

    def _labels(
        self, container: str, attempt: int, digest: SpecHash, spec: str, restarts: int
    ) -> dict[str, str]:
        """The labels of a new instance of the pod's ``container``: podsync's record of
        it (pod, container, attempt, spec hash and canonical text, restart count, grace
        period), over the pod's own labels and annotations as they are now. Those stay
        as they were when the instance was made (Docker cannot relabel a container; they
        are in no spec hash, so an edit replaces nothing: issue 27), and podsync never
        reads them back: whatever needs the pod's labels takes them from the pod."""
        pod = self.pod
        labels = {
            LABEL_POD_NAME: pod.name,
            LABEL_POD_NAMESPACE: pod.namespace,
            LABEL_POD_SOURCE: pod.source,
            LABEL_POD_UID: pod.uid,
            LABEL_CONTAINER: container,
            LABEL_ATTEMPT: str(attempt),
            LABEL_SPEC_HASH: str(digest),
            LABEL_SPEC: spec,
            LABEL_RESTART_COUNT: str(restarts),
        }
        if pod.termination_grace_period_seconds is not None:
            labels[LABEL_GRACE_PERIOD] = str(pod.termination_grace_period_seconds)
        if pod.labels or pod.annotations:
            # The pod's own labels as they are, its annotations as dockershim stored
            # them; podsync's record over them, so that nothing can overwrite it (the
            # loader and admission refuse such label keys anyway).
            annotations = {ANNOTATION_LABEL_PREFIX + k: v for k, v in pod.annotations.items()}
            labels = {**pod.labels, **annotations, **labels}
        return labels

    def _network_spec(self, name: str, digest: SpecHash, spec: str, attempt: int) -> CreateSpec:
        """The network container ``name``: the pod's ports, hostname, DNS and host
        aliases, on the host's network or the ``network_mode`` option's."""
        pod, options = self.pod, self.ctx.options
        host_network = pod.security_context is not None and pod.security_context.host_network
        all_ports = network_ports(pod)
        dns: tuple[str, ...] = ()
        search: tuple[str, ...] = ()
        if host_network:
            # The host's ports and name (and resolv.conf: ClusterFirst is Default there,
            # kubelet-modern.md §12; ClusterFirstWithHostNet is not, ``uses_cluster_dns``).
            all_ports = []
        if uses_cluster_dns(
            pod.dns_policy,
            server=options.cluster_dns,
            domain=options.cluster_domain,
            host_network=host_network,
        ):
            merged = cluster_dns(
                self.ctx.host_resolv,
                namespace=pod.namespace,
                server=options.cluster_dns,
                domain=options.cluster_domain,
            )
            dns, search = merged.nameservers, merged.searches
        hostname, domain = pod_host_name(
            pod.name, pod.hostname, pod.subdomain, pod.namespace, options.cluster_domain
        )
        labels = self._labels(NETWORK_CONTAINER, attempt, digest, spec, 0)
        security = network_security(pod.security_context)
        if not security.host_ipc:
            # It holds the pod's IPC namespace, which the pod's containers join (the
            # CRI's pod-level IPC); the label tells the plans that create them.
            labels[LABEL_POD_IPC] = POD_IPC_SHAREABLE
        # It mounts the pod's state volume: the termination-message files of the pod's
        # containers are written through it (the label tells the plans that create them).
        # A runtime without named volumes has no state volume (_keeps_pod_state).
        if self._keeps_pod_state:
            labels[LABEL_POD_STATE] = POD_STATE_MOUNTED
        return CreateSpec(
            name=name,
            image=options.network_image,
            labels=labels,
            hostname="" if host_network else hostname,
            network="host" if host_network else options.network_mode,
            ports=tuple(port_mappings(all_ports)),
            dns=dns,
            dns_search=search,
            domainname="" if host_network else domain,
            host_aliases=pod.host_aliases,
            security=security,
            # The sandbox outlives the pod's containers in an OOM (PodInfraOOMAdj).
            oom_score_adj=NETWORK_OOM_SCORE_ADJ,
            ipc_shareable=not security.host_ipc,
            volumes=(pod_state_mount(pod),) if self._keeps_pod_state else (),
        )

    def _app_spec(self, c: Container, net_name: str, digest: SpecHash, restarts: int) -> CreateSpec:
        """A new instance of container ``c`` (app, init or sidecar), joined to the
        network container ``net_name``: its next attempt, storage, hooks, resources and
        security; a termination-message file needs the network image too."""
        pod, options, user = self.pod, self.ctx.options, self.ctx.image_user(c.image)
        attempt = _next_attempt([*self.by_name.get(c.name, ()), *self.reserved.get(c.name, ())])
        name = container_name(c.name, digest.name_hash, pod.full_name, pod.uid, attempt)
        volume_mounts, directories, volumes = container_storage(
            pod, c, options.root_dir, engine=self.engine_empty_dirs
        )
        # Every container has a termination-message file, at /dev/termination-log unless
        # the pod says otherwise (SetDefaults_Container). It is written through the
        # network container, which mounts the pod's state volume; beside one made before
        # that, through a container of the network image made for it.
        # A runtime without named volumes (VolumeRuntime) has no file to bind: the
        # message is then the log tail's (FallbackToLogsOnError) or empty.
        file_mounts: tuple[VolumeFileMount, ...] = ()
        if self._keeps_pod_state:
            through = net_name if self._mounts_pod_state(net_name) else ""
            if not through:
                self.ctx.need_image(options.network_image, PullPolicy.IF_NOT_PRESENT, pod.uid)
            file_mounts = (
                termination_file_mount(pod.uid, c, name, options.network_image, through=through),
            )
        labels = self._labels(c.name, attempt, digest, self._app_hash(c)[1], restarts)
        # What status needs to read its termination message without the pod file: the
        # path is in the spec label already; the policy, in no hash, is recorded here,
        # as the kubelet records both as annotations of the container it creates
        # (newContainerAnnotations) and reads them back off the container that ran
        # (convertToKubeContainerStatus, kuberuntime_container.go).
        labels[LABEL_TERMINATION_MESSAGE_POLICY] = c.termination_message_policy.value
        # Which network container it joins, as the kubelet knows each container's
        # sandbox (PodSandboxId): what keeps that container until this one is gone
        # (planner._joins; no engine's container list says it - podman's lists no
        # network mode).
        labels[LABEL_JOINS] = net_name
        pre_stop = _numbered(c.lifecycle.pre_stop if c.lifecycle else None, c)
        if pre_stop is not None:
            labels[LABEL_PRE_STOP] = encode_handler(pre_stop)
        labels.update(self._init_labels(c))
        labels.update(content_labels(c.volume_mounts, pod))
        if any(v.no_copy for v in volumes):  # an emptyDir's engine volume
            labels[LABEL_EMPTY_DIRS] = EMPTY_DIRS_ENGINE
        # Requests and limits as the modern kubelet passes them (calculateLinuxResources,
        # kuberuntime_container_linux.go; kubelet-modern.md §6): the weight from the CPU
        # request (else the limit), the quota from the CPU limit, the memory limit from
        # the memory limit only, with no swap beyond it (the kubelet's NoSwap). A memory
        # request reaches the engine only through the OOM score of a Burstable pod.
        weight, cpu_limit, memory = engine_resources(c)
        security = app_security(
            c.security_context, pod.security_context, options.root_dir, net_name, user
        )
        return CreateSpec(
            name=name,
            image=c.image,
            labels=labels,
            command=c.command or None,
            args=c.args or None,
            env=tuple(environment(c.env)),
            working_dir=c.working_dir,
            join=net_name,
            mounts=tuple(volume_mounts),
            tmpfs=tuple(container_tmpfs(c.volume_mounts, pod)),
            milli_cpu=weight,
            memory=memory,
            privileged=c.privileged,
            directories=directories,
            post_start=_numbered(c.lifecycle.post_start if c.lifecycle else None, c),
            pre_stop=pre_stop,
            stop_timeout=self._grace,
            cpu_limit=cpu_limit,
            tty=c.tty,
            stdin=c.stdin,
            stdin_once=c.stdin_once,
            security=security,
            volumes=volumes,
            file_mounts=file_mounts,
            memory_swap=memory,
            # GetContainerOOMScoreAdjust (pkg/kubelet/qos/policy.go): from the pod's
            # QoS class, taken when the container is created (see _shares_ipc on why
            # settings like it are no part of the spec hash).
            oom_score_adj=oom_score_adj(pod, c, options.memory_capacity),
            join_ipc=net_name if not security.host_ipc and self._shares_ipc(net_name) else "",
        )

    @property
    def _keeps_pod_state(self) -> bool:
        """Whether the pod has a state volume (its termination-message files): only on a
        runtime with named volumes (``Capability.VOLUMES``). Without, every container of
        the pod is created without the file: the kubelet's message then comes from the
        logs under ``FallbackToLogsOnError``, else there is none (a file in the
        container's own ``/dev`` is gone with it, and podsync cannot read it)."""
        return Capability.VOLUMES in self.ctx.options.capabilities

    def _mounts_pod_state(self, net_name: str) -> bool:
        """Whether the network container ``net_name`` mounts the pod's state volume
        (``pod_state_mount``), so that the termination-message files are written through
        it: one this plan creates does; an observed one does when its label says so. One
        made before (issue 27) does not, and the files of its pod are written through a
        container made for each; upgrading restarts nothing for it."""
        for instance in self.by_name.get(NETWORK_CONTAINER, ()):
            if instance.observed.name == net_name:
                return instance.observed.labels.get(LABEL_POD_STATE) == POD_STATE_MOUNTED
        return True

    def _shares_ipc(self, net_name: str) -> bool:
        """Whether the network container ``net_name`` holds an IPC namespace the pod's
        containers join: one this plan creates does; an observed one does when its
        label says so.

        A network container made by podsync 0.2 or earlier has a private IPC namespace,
        which Docker lets nobody join: the containers of its pod keep theirs until the
        pod is rebuilt for a reason of its own. An upgrade restarts nothing for the
        engine settings of issue 27 - the IPC namespace, the OOM score, the swap limit
        and the CPU shares of BestEffort containers are derived from what the spec hash
        already records (or from the pod's QoS class), and apply to every container
        created from then on."""
        for instance in self.by_name.get(NETWORK_CONTAINER, ()):
            if instance.observed.name == net_name:
                return instance.observed.labels.get(LABEL_POD_IPC) == POD_IPC_SHAREABLE
        return True
