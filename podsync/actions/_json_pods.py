"""A pod's plan in JSON format 11: what the text leaves out, and how reading puts it back.

Format 11 (issue 33) states each thing once: a pod of three containers in under 2 KB,
from 12 KB in format 10. The converter (``_json``) already leaves out every field at its
default; this module works on the plain data of one pod plan (``PodPlan`` as the
converter gives it) and leaves out, on top of that, what the plan says anyway:

* an action's ``pod`` and ``pod_uid`` when they are the pod plan's ``pod`` and ``uid``;
* a create's or a volume create's message up to its ``note``: ``create POD/CONTAINER: ``
  and ``create volume VOLUME: ``; a create's whole message when its note is the one of
  its reason in ``_NOTES`` (``missing``: "no container yet");
* the labels that every create of the pod carries alike (the pod's own labels, ...):
  written once, as the pod plan's ``labels``; before that, the labels of podsync's record
  that the pod plan says (``_predicted_labels``: the container, the pod's name, namespace,
  uid and source, a first attempt, no restarts, the container joined and the ``File``
  termination-message policy), and a volume create's uid and namespace labels;
* a create's spec label (``LABEL_SPEC``, the canonical text of the container's spec)
  as an object of what the create's other fields do not predict (``_predicted_label``):
  its image, name, command, args, env, resources, working directory are the spec's own,
  a port is TCP and unpublished unless it says; keys the prediction has and the text has
  not are listed under ``"-"``. The object is written only when rebuilding the text
  from it gives the very same text (the canonical JSON of ``podsync.spec._hashing``);
  otherwise the text is written as it is;
* the spec hash label (``LABEL_SPEC_HASH``) when it is the digest of that text, and the
  container name when it is the one the planner makes of it (``container_name``);
* ``join`` when it is the name of the pod's network container's create (the pod plan's
  ``network``: its index among the actions, left out when 0), ``join_ipc`` and the
  joins label when they are ``join``; a file mount's fields when they are those of the
  create's termination-message file (``_file_mount_defaults``); the network
  container's mount of the pod's state volume; the engine settings its other fields
  say (``_predicted_fields``: the OOM score, no swap beyond the memory limit); a volume
  create's image when it is the network image.

A label written as ``null`` is one the action does not have although it would
otherwise be put back (a spec label without its hash, say); a field whose default here
is not its type's (``join_ipc``: ``join``) is written whenever it is not at this
default, even at the type's. Reading puts everything back in the opposite order (the
network container's create first: the others join it by its name), so the plan read is
equal (``==``) to the plan written. Data of the formats before 11 is not passed here: it
has everything written.

Contract: pure functions of plain JSON data (dicts, lists, strings, numbers).
"""

from __future__ import annotations

from typing import Any

import attrs

from podsync.spec._hashing import SpecHash, canonical_json, spec_digest
from podsync.spec._labels import (
    LABEL_ATTEMPT,
    LABEL_CONTAINER,
    LABEL_JOINS,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_SOURCE,
    LABEL_POD_STATE,
    LABEL_POD_UID,
    LABEL_RESTART_COUNT,
    LABEL_SPEC,
    LABEL_SPEC_HASH,
    LABEL_TERMINATION_MESSAGE_POLICY,
    LABEL_VOLUME_KIND,
    LABEL_VOLUME_NAMESPACE,
    POD_STATE_MOUNTED,
    VOLUME_KIND_POD_STATE,
)
from podsync.spec._naming import container_name
from podsync.spec._qos import NETWORK_OOM_SCORE_ADJ
from podsync.spec._volumes import (
    VOLUME_ACCESS_PATH,
    pod_state_volume_name,
    termination_message_entry,
)

__all__: list[str] = []

#: The key of a spec label's object that lists the predicted keys its text has not.
_ABSENT = "-"
#: The key of a pod plan's labels common to all its creates (format 11).
POD_LABELS = "labels"
#: The key of the index, in a pod plan's actions, of the create the pod's other creates
#: join when they leave their ``join`` out (format 11).
POD_NETWORK = "network"
#: The key of a create's message without its ``_message_prefix`` (format 11).
NOTE = "note"
#: Where a termination-message file is mounted unless the pod says (Kubernetes' default
#: ``terminationMessagePath``).
TERMINATION_MESSAGE_PATH = "/dev/termination-log"

# Per action tag, whether the action names its pod (``pod``) and its pod's uid.
_NAMES_POD = frozenset(
    {"create", "kill", "remove", "wait", "writevolume", "createvolume", "removevolume"}
)
_NAMES_UID = _NAMES_POD | {"removepoddir"}


def _predicted_label(spec: dict[str, Any], container: str, ctx: _Pod) -> dict[str, Any]:
    """What a create's spec label (the canonical form of ``podsync.spec._hashing``)
    most likely holds, from the create's own spec data (defaults left out): the
    fields the canonical form and the spec share, the pod's name, and the values most
    pods have. Only a guess: a wrong one costs bytes, never correctness."""
    pod = {"name": ctx.name, "dns_policy": "ClusterFirst"}
    if not spec.get("join"):
        # A pod's network container (it joins no other): its canonical form is the
        # pod's network (``network_spec_hash``), nothing of a container's: the cluster
        # DNS options, and the host's resolv.conf as merged into its DNS settings.
        dns, searches = spec.get("dns", []), spec.get("dns_search", [])
        domain = ctx.cluster_domain
        return {
            "name": container,
            "image": spec.get("image", ""),
            "pod": pod,
            "cluster_dns": ctx.cluster_dns,
            "cluster_domain": domain,
            "ports": _PORTS,
            "host_resolv_conf": {
                "nameservers": [d for d in dns if d != ctx.cluster_dns],
                "searches": [s for s in searches if not domain or not s.endswith(domain)],
            },
        }
    predicted: dict[str, Any] = {
        "name": container,
        "image": spec.get("image", ""),
        "command": spec.get("command") or [],
        "args": spec.get("args") or [],
        "cpu": spec.get("milli_cpu", 0),
        "memory": spec.get("memory", 0),
        "working_dir": spec.get("working_dir", ""),
        "privileged": spec.get("privileged", False),
        "ports": _PORTS,
        "volume_mounts": _Each({"read_only": False}),
        "termination_message_path": "",
        "pod": {**pod, "volumes": _Each({"host_path": None})},
    }
    # The canonical form has a CPU limit only when one is set.
    if spec.get("cpu_limit"):
        predicted["cpu_limit"] = spec["cpu_limit"]
    env = spec.get("env", [])
    # A Secret value is a record (a dict), and its label form is the reference.
    if all(isinstance(item, str) and "=" in item for item in env):
        pairs = (e.partition("=") for e in env)
        predicted["env"] = [{"name": name, "value": value} for name, _, value in pairs]
    return predicted


@attrs.frozen
class _Each:
    """The prediction of a list of objects: each one is predicted as ``item`` (an
    empty list is as predicted)."""

    item: dict[str, Any]


# A port of the canonical form as most are (``_hashing._port``): TCP, not published.
_PORTS = _Each({"host_ip": "", "host_port": 0, "protocol": "TCP"})


def _residue(actual: dict[str, Any], predicted: dict[str, Any]) -> dict[str, Any]:
    """``actual`` without what ``predicted`` says of it (nested objects and the items
    of ``_Each`` lists alike); the predicted keys ``actual`` has not, under ``_ABSENT``."""
    out: dict[str, Any] = {}
    for key, value in actual.items():
        guess = predicted.get(key, _ABSENT)
        if isinstance(guess, _Each):
            if not _objects(value):
                out[key] = value
            elif value:
                out[key] = [_residue(item, guess.item) for item in value]
        elif isinstance(value, dict) and isinstance(guess, dict):
            inner = _residue(value, guess)
            if inner:
                out[key] = inner
        elif guess is _ABSENT or guess != value or type(guess) is not type(value):
            out[key] = value
    absent = sorted(k for k in predicted if k not in actual)
    if absent:
        out[_ABSENT] = absent
    return out


def _rebuilt(residue: dict[str, Any], predicted: dict[str, Any]) -> dict[str, Any]:
    """The object ``_residue`` left ``residue`` of (``predicted`` as it was then)."""
    absent = residue.get(_ABSENT, ())
    out = {k: _as_predicted(v) for k, v in predicted.items() if k not in absent}
    for key, value in residue.items():
        if key == _ABSENT:
            continue
        guess = predicted.get(key)
        if isinstance(guess, _Each) and _objects(value):
            value = [_rebuilt(item, guess.item) for item in value]
        elif isinstance(guess, dict) and isinstance(value, dict):
            value = _rebuilt(value, guess)
        out[key] = value
    # An object nested in the prediction whose residue was empty is as predicted.
    return out


def _as_predicted(guess: Any) -> Any:
    """The value a prediction stands for where nothing is left of it: an ``_Each`` list
    empty, an object with its values so."""
    if isinstance(guess, _Each):
        return []
    if isinstance(guess, dict):
        return {k: _as_predicted(v) for k, v in guess.items()}
    return guess


def _objects(value: Any) -> bool:
    """Whether ``value`` is a list of objects (what an ``_Each`` prediction's residue
    is: any other value under such a key is written as it is)."""
    return isinstance(value, list) and all(type(item) is dict for item in value)


def _label_object(text: str, predicted: dict[str, Any]) -> dict[str, Any] | None:
    """The spec label ``text`` as what ``predicted`` does not say, or None when that
    would not give the text back exactly: not canonical JSON, or a key named
    ``_ABSENT`` (its quoted name and a colon anywhere in the text).

    ``_rebuilt`` gives back what ``_residue`` was given: a value is left out only when
    it equals its prediction and has its type (at every level of objects: JSON's
    ``true`` is not ``1``), and the predicted lists are of strings and of objects of
    strings, whose equality is exact. So the text is canonical JSON again, once checked
    here that it is (a dumps, not a rebuild: half the time of format 11's writing)."""
    import json

    if f'"{_ABSENT}":' in text:
        return None
    try:
        actual = json.loads(text)
        if not isinstance(actual, dict) or canonical_json(actual) != text:
            return None
    except (TypeError, ValueError):
        return None
    return _residue(actual, predicted)


@attrs.frozen
class _Pod:
    """What a plan and a pod plan say that its creates' fields are predicted from."""

    key: str
    uid: str
    full_name: str
    network_image: str
    cluster_dns: str
    cluster_domain: str
    # The name of the create the pod's other creates join (its network container's).
    network: str = ""

    @property
    def name(self) -> str:
        return self.key.rpartition("/")[2]

    @property
    def namespace(self) -> str:
        return self.key.rpartition("/")[0]


def _message_prefix(action: dict[str, Any], key: str) -> str | None:
    """How the planner's message of ``action`` (of the pod ``key``) begins, when it is
    a create or a volume's create (the rest of it is the action's ``note`` in format
    11); None for the other actions, whose message is written whole."""
    tag = action.get("action")
    if tag == "create" and isinstance(action.get("container"), str):
        return f"create {key}/{action['container']}: "
    if tag == "createvolume" and isinstance(action.get("volume"), str):
        return f"create volume {action['volume']}: "
    return None


# The notes of the creates most plans are made of, by reason (``_restarts``, ``_pod``):
# a create whose note is its reason's here has neither note nor message in format 11.
_NOTES = {"missing": "no container yet", "network-missing": "network container missing"}


def _compact_message(action: dict[str, Any], key: str) -> None:
    prefix = _message_prefix(action, key)
    message = action.get("message")
    if prefix is None or not isinstance(message, str) or not message.startswith(prefix):
        return
    note = message[len(prefix) :]
    del action["message"]
    if action.get("action") != "create" or _NOTES.get(action.get("reason", "")) != note:
        action[NOTE] = note


def _expand_message(action: dict[str, Any], key: str) -> None:
    prefix = _message_prefix(action, key)
    if prefix is None or "message" in action:
        return
    note = action.pop(NOTE, None)
    if note is None and action.get("action") == "create":
        note = _NOTES.get(str(action.get("reason")))
    if isinstance(note, str):
        action["message"] = prefix + note


def _network_index(actions: list[Any]) -> int | None:
    """The index of the pod's network container's create, as written before format 11
    (the first create that joins no other container), or None."""
    for n, action in enumerate(actions):
        if isinstance(action, dict) and action.get("action") == "create":
            spec = action.get("spec")
            if isinstance(spec, dict) and not spec.get("join"):
                return n
    return None


def compact_pod(pod: dict[str, Any], options: tuple[str, str, str]) -> dict[str, Any]:
    """A pod plan's data (the converter's, defaults left out) in format 11: what the
    module docstring lists left out. ``pod`` is not changed; ``options`` are the plan's
    network image, cluster DNS server and cluster domain."""
    ctx = _Pod(pod.get("pod", ""), pod.get("uid", ""), pod.get("full_name", ""), *options)
    actions = [dict(a) for a in pod.get("actions", [])]
    out = {**pod, "actions": actions}
    network = _network_index(actions)
    if network is not None:
        ctx = attrs.evolve(ctx, network=actions[network]["spec"].get("name", ""))
    for n, action in enumerate(actions):
        tag = action.get("action")
        if tag in _NAMES_POD and action.get("pod") == ctx.key:
            del action["pod"]
        if tag in _NAMES_UID and action.get("pod_uid") == ctx.uid:
            del action["pod_uid"]
        if tag == "create":
            action["spec"] = _compact_spec(action["spec"], action["container"], ctx, n == network)
        elif tag == "createvolume":
            _compact_labels(action, _volume_labels(ctx))
            if action.get("image", "") == ctx.network_image:
                action.pop("image", None)
            else:
                action["image"] = action.get("image", "")
        _compact_message(action, ctx.key)
    # Most pod plans that create begin with their network container's create.
    if network != 0 and any(a.get("action") == "create" for a in actions):
        out[POD_NETWORK] = network
    creates = [a for a in actions if a.get("action") == "create"]
    common = _common_labels([a["spec"] for a in creates])
    if common:
        out[POD_LABELS] = common
        for action in creates:
            labels = action["spec"]["labels"]
            for name in common:
                del labels[name]
            if not labels:
                del action["spec"]["labels"]
    return out


def _volume_labels(ctx: _Pod) -> dict[str, str]:
    """The labels of a volume podsync makes for the pod (``LABEL_VOLUME_KIND`` aside)."""
    return {LABEL_POD_UID: ctx.uid, LABEL_VOLUME_NAMESPACE: ctx.namespace}


def _compact_labels(data: dict[str, Any], predicted: dict[str, str]) -> None:
    """``data["labels"]`` without those at ``predicted``, those it lacks there as
    null."""
    labels = dict(data.get("labels", {}))
    for label, value in predicted.items():
        if label not in labels:
            labels[label] = None
        elif labels[label] == value:
            del labels[label]
    data["labels"] = labels
    if not labels:
        del data["labels"]


def _common_labels(specs: list[dict[str, Any]]) -> dict[str, Any]:
    """The labels (null ones included) that every one of two or more specs has alike."""
    if len(specs) < 2:
        return {}
    first, *rest = (s.get("labels", {}) for s in specs)
    return {k: v for k, v in first.items() if all(k in o and o[k] == v for o in rest)}


def _predicted_fields(spec: dict[str, Any], network: bool) -> dict[str, int]:
    """The engine settings of a create that its other fields say: the pod's network
    container's OOM score (``NETWORK_OOM_SCORE_ADJ``); with a memory limit, a swap
    limit of the same (no swap) and a Guaranteed container's OOM score (-997, the
    kubelet's guaranteedOOMScoreAdj). Written when they differ, even at 0."""
    if network:
        return {"oom_score_adj": NETWORK_OOM_SCORE_ADJ}
    memory = spec.get("memory")
    if isinstance(memory, int) and not isinstance(memory, bool) and memory:
        return {"memory_swap": memory, "oom_score_adj": -997}
    return {}


def _predicted_labels(container: str, join: str, ctx: _Pod) -> dict[str, str]:
    """The labels of podsync's record of a container (``CreateSpecs._labels``) that
    the rest of the pod plan says, as a new instance has them; a container that joins
    another also names it and its termination-message policy."""
    labels = {
        LABEL_CONTAINER: container,
        LABEL_POD_NAME: ctx.name,
        LABEL_POD_NAMESPACE: ctx.namespace,
        LABEL_POD_UID: ctx.uid,
        LABEL_POD_SOURCE: ctx.full_name.rpartition(".")[2],
        LABEL_ATTEMPT: "0",
        LABEL_RESTART_COUNT: "0",
    }
    if join:
        labels[LABEL_JOINS] = join
        labels[LABEL_TERMINATION_MESSAGE_POLICY] = "File"
    return labels


def _predicted_name(spec: dict[str, Any], labels: dict[str, Any], container: str, ctx: _Pod) -> str:
    """The create's container name as the planner makes it (``container_name``) from
    its spec hash and attempt labels, or "" when they do not say."""
    digest = SpecHash.parse(labels.get(LABEL_SPEC_HASH, ""))
    attempt = labels.get(LABEL_ATTEMPT, "")
    if digest is None or not isinstance(attempt, str) or not attempt.isdigit():
        return ""
    try:
        return container_name(container, digest.name_hash, ctx.full_name, ctx.uid, int(attempt))
    except ValueError:
        return ""


def _state_volumes(ctx: _Pod) -> list[dict[str, Any]]:
    """A network container's mounts when it mounts the pod's state volume
    (``pod_state_mount``), as the converter writes them."""
    return [
        {
            "container_path": VOLUME_ACCESS_PATH,
            "labels": {
                LABEL_POD_UID: ctx.uid,
                LABEL_VOLUME_KIND: VOLUME_KIND_POD_STATE,
                LABEL_VOLUME_NAMESPACE: ctx.namespace,
            },
            "no_copy": True,
            "volume": pod_state_volume_name(ctx.uid),
        }
    ]


def _compact_spec(spec: dict[str, Any], container: str, ctx: _Pod, network: bool) -> dict[str, Any]:
    spec = dict(spec)
    labels = dict(spec.get("labels", {}))
    join = spec.get("join", "")
    name = spec.get("name", "")
    if name == _predicted_name(spec, labels, container, ctx):
        del spec["name"]
    if labels.get(LABEL_POD_STATE) == POD_STATE_MOUNTED:
        if spec.get("volumes", []) == _state_volumes(ctx):
            del spec["volumes"]
        else:
            spec["volumes"] = spec.get("volumes", [])
    text = labels.get(LABEL_SPEC)
    if isinstance(text, str):
        if LABEL_SPEC_HASH not in labels:
            labels[LABEL_SPEC_HASH] = None
        elif labels[LABEL_SPEC_HASH] == str(spec_digest(text)):
            del labels[LABEL_SPEC_HASH]
        residue = _label_object(text, _predicted_label(spec, container, ctx))
        if residue is not None:
            labels[LABEL_SPEC] = residue
    for label, value in _predicted_labels(container, join, ctx).items():
        if label not in labels:
            labels[label] = None
        elif labels[label] == value:
            del labels[label]
    for field, setting in _predicted_fields(spec, network).items():
        if spec.get(field, 0) == setting:
            spec.pop(field, None)
        else:
            spec[field] = spec.get(field, 0)
    if join:
        if spec.get("join_ipc", "") == join:
            del spec["join_ipc"]
        else:
            spec["join_ipc"] = spec.get("join_ipc", "")
    if "file_mounts" in spec:
        defaults = _file_mount_defaults(spec, name, ctx)
        spec["file_mounts"] = [_left_out(m, defaults) for m in spec["file_mounts"]]
    if not network and ctx.network:
        if join == ctx.network:
            del spec["join"]
        else:
            spec["join"] = join
    spec["labels"] = labels
    if not labels:
        del spec["labels"]
    return spec


def _file_mount_defaults(spec: dict[str, Any], name: str, ctx: _Pod) -> dict[str, Any]:
    """A file mount's fields as the termination-message file of the create of the
    container ``name`` has them."""
    return {
        "through": spec.get("join", ""),
        "volume": pod_state_volume_name(ctx.uid),
        "path": termination_message_entry(name),
        "container_path": TERMINATION_MESSAGE_PATH,
        "image": ctx.network_image,
    }


def _left_out(mount: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """A file mount without its fields at ``defaults``, with the rest of them written
    (even at their type's default, which is not theirs here)."""
    out = {k: v for k, v in mount.items() if defaults.get(k) != v}
    for name, value in defaults.items():
        if name not in mount and value != "":
            out[name] = ""
    return out


def expand_pod(pod: Any, options: tuple[str, str, str]) -> Any:
    """A pod plan's data of format 11 with what ``compact_pod`` left out put back
    (``options`` as for ``compact_pod``).
    Anything not shaped as a pod plan is returned as it is, for the converter to
    refuse."""
    if not isinstance(pod, dict) or not isinstance(pod.get("actions"), list):
        return pod
    key, uid, full_name = pod.get("pod", ""), pod.get("uid", ""), pod.get("full_name", "")
    common = pod.get(POD_LABELS, {})
    network = pod.get(POD_NETWORK, 0)
    if not all(isinstance(v, str) for v in (key, uid, full_name)) or not isinstance(common, dict):
        return pod
    ctx = _Pod(key, uid, full_name, *options)
    actions = list(pod["actions"])
    # The network container's create first: the others join it by its name.
    order = list(range(len(actions)))
    if isinstance(network, int) and 0 <= network < len(actions):
        order.remove(network)
        order.insert(0, network)
    for n in order:
        action = actions[n]
        if not isinstance(action, dict):
            continue
        action = dict(action)
        tag = action.get("action")
        if tag in _NAMES_POD:
            action.setdefault("pod", key)
        if tag in _NAMES_UID:
            action.setdefault("pod_uid", uid)
        _expand_message(action, key)
        spec, container = action.get("spec"), action.get("container")
        if tag == "createvolume":
            action.setdefault("image", ctx.network_image)
        if tag == "createvolume" and isinstance(action.get("labels", {}), dict):
            labels = {**_volume_labels(ctx), **action.get("labels", {})}
            action["labels"] = {k: v for k, v in labels.items() if v is not None}
        if tag == "create" and isinstance(spec, dict) and isinstance(container, str):
            if ctx.network and "join" not in spec:
                spec = {**spec, "join": ctx.network}
            action["spec"] = spec = _expand_spec(spec, container, ctx, common, n == network)
            if n == network and isinstance(spec.get("name"), str):
                ctx = attrs.evolve(ctx, network=spec["name"])
        actions[n] = action
    out = {k: v for k, v in pod.items() if k not in (POD_LABELS, POD_NETWORK)}
    out["actions"] = actions
    return out


def _expand_spec(
    spec: dict[str, Any], container: str, ctx: _Pod, common: dict[str, Any], network: bool
) -> dict[str, Any]:
    spec = dict(spec)
    labels = spec.get("labels", {})
    if not isinstance(labels, dict):
        return spec
    labels = {**common, **labels}
    join = spec.get("join", "")
    join = join if isinstance(join, str) else ""
    for label, value in _predicted_labels(container, join, ctx).items():
        labels.setdefault(label, value)
    if join:
        spec.setdefault("join_ipc", join)
    for field, setting in _predicted_fields(spec, network).items():
        spec.setdefault(field, setting)
    residue = labels.get(LABEL_SPEC)
    if isinstance(residue, dict):
        predicted = _predicted_label(spec, container, ctx)
        labels[LABEL_SPEC] = canonical_json(_rebuilt(residue, predicted))
    text = labels.get(LABEL_SPEC)
    if isinstance(text, str):
        labels.setdefault(LABEL_SPEC_HASH, str(spec_digest(text)))
    labels = {k: v for k, v in labels.items() if v is not None}
    if "name" not in spec:
        spec["name"] = _predicted_name(spec, labels, container, ctx)
    if labels.get(LABEL_POD_STATE) == POD_STATE_MOUNTED and "volumes" not in spec:
        spec["volumes"] = _state_volumes(ctx)
    mounts = spec.get("file_mounts")
    if isinstance(mounts, list):
        defaults = _file_mount_defaults(spec, spec["name"], ctx)
        spec["file_mounts"] = [{**defaults, **m} if isinstance(m, dict) else m for m in mounts]
    spec["labels"] = labels
    return spec
