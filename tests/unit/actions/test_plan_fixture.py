"""A plan saved in format 10 (``tests/data/plans/format-10.json``, written by podsync
before format 11 from ``format-10-pods.yaml``: env from a ConfigMap and a Secret,
ports, emptyDir, configMap, secret and hostPath volumes, probes, resources, a preStop
hook) still reads, to the plan this podsync makes of the same pods, and applies."""

from __future__ import annotations

from pathlib import Path

import attrs

from podsync import PlanOptions, apply, load_pods, plan, plan_from_json, plan_to_json
from podsync.actions._actions import Create, Plan
from podsync.actions._options import AllowedHostPath
from podsync.host._volume_writer import unseal_write
from podsync.model._secrets import map_secret_texts, unseal
from podsync.testing import FakeRuntime

HERE = Path(__file__).parents[2] / "data" / "plans"
NOW = 1_700_000_000.0
# The host's Secret digest key the fixture was planned with.
KEY = b"podsync-fixture-key-0123456789ab"
IMAGES = [
    "nginx:1.27",
    "registry.example:5000/shop/app:2.3",
    "busybox:1.36",
    "registry.k8s.io/pause:3.10",
]
OPTIONS = PlanOptions(
    root_dir="/var/lib/podsync-fixture", allowed_host_paths=(AllowedHostPath("/srv/logs"),)
)
PASSWORD = "hunter2-s3cr3t"


def _made() -> Plan:
    """The plan of the fixture's pods as this podsync makes it (what was saved)."""
    pods = load_pods([str(HERE / "format-10-pods.yaml")], secret_key=lambda: KEY)
    images = FakeRuntime(images=IMAGES, clock=lambda: NOW).images
    made = plan(pods, [], images=images, now=NOW, options=OPTIONS)
    return attrs.evolve(made, sources=("/srv/pods/format-10-pods.yaml",))


def _saved() -> Plan:
    return plan_from_json((HERE / "format-10.json").read_bytes(), source="format-10.json")


def test_a_format_10_plan_reads_as_the_plan_of_its_pods() -> None:
    """Read, it is the plan of today's podsync with its Secret values sealed (as any
    saved plan reads back), of format 10; written again, it is format 11 and reads
    back equal."""
    saved = _saved()
    sealed = plan_from_json(plan_to_json(_made()))

    assert "10" == saved.format_version
    assert attrs.evolve(sealed, format_version="10") == saved
    again = plan_from_json(plan_to_json(saved))
    assert attrs.evolve(saved, format_version="11") == again
    assert len(plan_to_json(saved)) < len((HERE / "format-10.json").read_text()) / 2


def _unsealed(saved: Plan) -> Plan:
    """``saved`` with its Secret values put back (as ``apply --plan`` does)."""

    def found(namespace: str, name: str) -> dict[str, bytes] | None:
        return (
            {"password": PASSWORD.encode()} if (namespace, name) == ("shop", "db-creds") else None
        )

    pods = tuple(
        attrs.evolve(
            pod,
            actions=tuple(
                map_secret_texts(a, lambda t: unseal(t, found, KEY))
                if isinstance(a, Create)
                else unseal_write(a, found, KEY)
                if hasattr(a, "content")
                else a
                for a in pod.actions
            ),
        )
        for pod in saved.pods
    )
    return attrs.evolve(saved, pods=pods)


def test_a_format_10_plan_applies() -> None:
    """Its creates run, the app with the Secret's value in its environment."""
    fake = FakeRuntime(images=IMAGES, clock=lambda: NOW)

    result = apply(_unsealed(_saved()), fake, clock=fake.clock)

    assert result.ok, result
    envs = [fake.spec(c.id) for c in fake.containers if c.running]
    assert any(f"DB_PASSWORD={PASSWORD}" in s.env for s in envs if s is not None)
    assert 5 == sum(c.running for c in fake.containers)
