"""Env values read from the pod's labels and annotations (issue 27): the loader gives
the engine the value and the spec hash the reference (``PodFieldText``), through
``$(VAR)`` too, so that a label edit restarts nothing."""

from __future__ import annotations

import copy
import pickle

from podsync import parse_pods
from podsync.model._pod_fields import PodFieldRef, PodFieldText
from podsync.model._secrets import SecretText
from podsync.spec._hashing import canonical_spec

POD = """\
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: hunter2}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {tier: frontend}
  annotations: {team: payments}
spec:
  containers:
  - name: app
    image: busybox
    command: ["echo", "$(TIER)/$(TEAM)"]
    args: ["--tier=$(TIER)", "plain"]
    env:
    - name: TIER
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}
    - name: TEAM
      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['team']"}}
    - name: MISSING
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['absent']"}}
    - name: NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: db, key: password}}
    - name: DSN
      value: "$(TIER):$(PASSWORD)"
"""

TIER = PodFieldRef("metadata.labels['tier']")
TEAM = PodFieldRef("metadata.annotations['team']")


def app(text: str = POD):  # type: ignore[no-untyped-def]
    (pod,) = parse_pods(text, source_name="pod.yaml", secret_key=b"k" * 32)
    return pod, pod.containers[0]


def test_values_read_from_labels_know_their_reference() -> None:
    _, c = app()
    env = {e.name: e.value for e in c.env}

    assert ("frontend", (TIER,)) == (env["TIER"], env["TIER"].parts)
    assert ("payments", (TEAM,)) == (env["TEAM"], env["TEAM"].parts)
    # An absent label reads as empty, and is still a reference.
    assert ("", (PodFieldRef("metadata.labels['absent']"),)) == (
        env["MISSING"],
        env["MISSING"].parts,
    )
    # The pod's name does not change while the pod exists: a plain value.
    assert type(env["NAME"]) is str
    # Expanded into command and args, the pieces keep the references.
    assert ["frontend/payments", "--tier=frontend", "plain"] == [*c.command[1:], *c.args]
    assert (TIER, "/", TEAM) == c.command[1].parts
    assert ("--tier=", TIER) == c.args[0].parts
    assert type(c.args[1]) is str


def test_a_value_with_a_secret_follows_the_secrets_rules() -> None:
    """A Secret's value and a label's in one value: the Secret's rules win (sealed,
    never shown), the label's value recorded as text."""
    _, c = app()
    dsn = next(e.value for e in c.env if e.name == "DSN")

    assert type(dsn) is SecretText
    assert "frontend:hunter2" == dsn.get_secret_value()
    assert "frontend:<secret default/db key password>" == dsn.shown


def test_the_hash_form_holds_the_references() -> None:
    pod, c = app()
    spec = canonical_spec(c, pod)
    edited_pod, edited = app(POD.replace("tier: frontend", "tier: backend"))

    assert {"from_pod": [{"field": "metadata.labels['tier']"}]} == spec["env"][0]["value"]
    assert {"from_pod": ["--tier=", {"field": "metadata.labels['tier']"}]} == spec["args"][0]
    assert "frontend" not in str(spec["command"]) + str(spec["args"])
    # The env value that holds a Secret's too records the label's value as text.
    assert canonical_spec(edited, edited_pod)["env"][:5] == spec["env"][:5]
    assert canonical_spec(edited, edited_pod)["env"][5] != spec["env"][5]


def test_a_pod_field_text_survives_copies() -> None:
    _, c = app()
    value = c.args[0]

    for copied in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert (type(copied), copied, copied.parts) == (PodFieldText, value, value.parts)
