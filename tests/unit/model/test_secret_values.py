"""Secret values stay secret: the mechanism (``podsync.model._secrets``) as the planner, the
spec label, the plan's text and JSON, apply and ``repr`` see it.

The values here are made as the loader makes them (``SecretText`` with the Secret's
reference and keyed digest); tests/unit/load/test_secret_env.py reads them from pod files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from podsync import Container, EnvVar, Pod, apply, plan, plan_from_json, plan_to_json
from podsync.actions._actions import Create, Plan
from podsync.actions._options import PlanOptions
from podsync.model._pod import ObservedContainer
from podsync.model._secrets import (
    SecretMismatch,
    SecretPart,
    SecretText,
    from_record,
    join_texts,
    map_secret_texts,
    revealed,
    sealed_record,
    secret_digest,
    secret_texts,
    unseal,
)
from podsync.spec._labels import LABEL_CONTAINER, LABEL_SPEC, LABEL_SPEC_HASH
from podsync.testing import FakeClock, FakeRuntime

NOW = 1_700_000_000.0
HOST_KEY = b"k" * 32
PASSWORD = "hunter2-s3cr3t"
PAUSE = "registry.k8s.io/pause:3.10"


def secret(value: str, name: str = "db-creds", key: str = "password") -> SecretText:
    """A value as the loader reads it from key ``key`` of Secret ``default/<name>``."""
    digest = secret_digest(HOST_KEY, "default", name, key, value.encode())
    return SecretText(value, (SecretPart("default", name, key, digest),))


def web(password: str = PASSWORD) -> Pod:
    value = secret(password)
    url = join_texts(["postgres://app:", value, "@db/app"])
    return Pod(
        "web",
        (
            Container(
                "app",
                "busybox",
                command=("sh", "-c", join_texts(["login --password=", value])),
                env=(
                    EnvVar("DB_PASSWORD", value, "Secret default/db-creds"),
                    EnvVar("DB_URL", url),
                    EnvVar("MODE", "production"),
                ),
            ),
        ),
        source="file",
    )


def engine() -> FakeRuntime:
    return FakeRuntime(images=["busybox", "busybox:2", PAUSE], clock=FakeClock(NOW - 100))


def planned(pods: list[Pod], rt: FakeRuntime | None, root: Path, now: float = NOW) -> Plan:
    seen = rt.list_containers() if rt is not None else []
    return plan(pods, seen, now=now, options=PlanOptions(root_dir=str(root)))


def run(the_plan: Plan, rt: FakeRuntime):  # type: ignore[no-untyped-def]
    return apply(the_plan, rt, clock=FakeClock(NOW))


def everything_written(p: Pod) -> str:
    """The plan's JSON, its text for people, and every repr on the way."""
    the_plan = plan([p], [], now=NOW)
    return "\n".join(
        [plan_to_json(the_plan), the_plan.describe(), the_plan.render(), repr(the_plan), repr(p)]
    )


# --- the digest -----------------------------------------------------------------------


def test_the_digest_is_keyed_and_names_the_secret():
    """Not the sha256 of the value (a dictionary attack on a label would find a short
    password), another under another host's key, and another for the same value in
    another Secret or key."""
    value = PASSWORD.encode()
    digest = secret_digest(HOST_KEY, "default", "db-creds", "password", value)

    assert 64 == len(digest)
    assert digest != hashlib.sha256(value).hexdigest()
    assert digest != secret_digest(b"x" * 32, "default", "db-creds", "password", value)
    assert digest != secret_digest(HOST_KEY, "default", "other", "password", value)
    assert digest != secret_digest(HOST_KEY, "default", "db-creds", "pass", value)
    assert digest == secret_digest(HOST_KEY, "default", "db-creds", "password", value)
    with pytest.raises(ValueError, match="needs the host's key"):
        secret_digest(b"", "default", "db-creds", "password", value)


# --- repr, and what a text says of itself -----------------------------------------------


def test_repr_never_shows_the_value():
    p = web()
    the_plan = plan([p], [], now=NOW)
    create = next(a for a in the_plan.actions if isinstance(a, Create) and a.container == "app")

    for shown in (repr(p), repr(p.containers[0]), repr(create), repr(create.spec), repr(the_plan)):
        assert PASSWORD not in shown
    assert "<secret default/db-creds key password>" in repr(p.containers[0].env[0])
    # The engine gets the value, asked for explicitly.
    assert f"DB_PASSWORD={PASSWORD}" in revealed(create.spec.env)
    assert f"DB_URL=postgres://app:{PASSWORD}@db/app" in revealed(create.spec.env)
    assert not any(PASSWORD in item for item in create.spec.env)


def test_a_joined_text_keeps_its_pieces():
    value = secret(PASSWORD)

    url = join_texts(["postgres://app:", value, "@db", "/app"])

    assert isinstance(url, SecretText)
    assert f"postgres://app:{PASSWORD}@db/app" == url.get_secret_value()
    assert "postgres://app:<secret default/db-creds key password>@db/app" == url.shown == str(url)
    assert ("postgres://app:", value.parts[0], "@db/app") == url.parts
    assert type(join_texts(["a", "b"])) is str


# --- the spec label and the spec hash ---------------------------------------------------


def test_labels_plan_text_and_plan_json_hold_digests_not_the_value():
    text = everything_written(web())

    assert PASSWORD not in text
    the_plan = plan([web()], [], now=NOW)
    create = next(a for a in the_plan.actions if isinstance(a, Create) and a.container == "app")
    spec = json.loads(create.spec.labels[LABEL_SPEC])
    digest = secret_digest(HOST_KEY, "default", "db-creds", "password", PASSWORD.encode())
    reference = {"secret": "default/db-creds", "key": "password", "digest": digest}
    assert {"sealed": [reference]} == spec["env"][0]["value"]
    assert {"sealed": ["postgres://app:", reference, "@db/app"]} == spec["env"][1]["value"]
    assert {"sealed": ["login --password=", reference]} == spec["command"][2]
    assert "production" == spec["env"][2]["value"]


def test_another_value_of_the_secret_replaces_the_container_and_says_which(tmp_path):
    """The digest is in the hash: a changed Secret replaces the containers whose env it
    gives (env cannot change in place), and the plan names the Secret."""
    rt = engine()
    assert run(planned([web()], None, tmp_path), rt).ok
    running = [c for c in rt.list_containers() if c.labels.get(LABEL_CONTAINER) == "app"]

    same = planned([web()], rt, tmp_path, NOW + 5)
    changed = planned([web("another-one")], rt, tmp_path, NOW + 5)

    assert not same.has_changes
    create = next(a for a in changed.actions if isinstance(a, Create))
    assert "Secret default/db-creds changed" in create.message
    assert "env changed" not in create.message
    assert "command changed" not in create.message
    assert running[0].labels[LABEL_SPEC_HASH] != create.spec.labels[LABEL_SPEC_HASH]
    assert "another-one" not in plan_to_json(changed) + changed.describe()


def test_a_secret_change_is_named_beside_other_changes(tmp_path):
    rt = engine()
    assert run(planned([web()], None, tmp_path), rt).ok
    p = web("another-one")
    app = p.containers[0]
    edited = Pod(
        p.name,
        (Container(app.name, "busybox:2", command=app.command, env=app.env),),
        source="file",
    )

    create = next(a for a in planned([edited], rt, tmp_path).actions if isinstance(a, Create))

    assert "Secret default/db-creds changed" in create.message
    assert "image" in create.message


# --- a saved plan ----------------------------------------------------------------------


def secrets_of(password: str) -> dict[tuple[str, str], dict[str, bytes]]:
    return {("default", "db-creds"): {"password": password.encode()}}


def lookup(found: dict[tuple[str, str], dict[str, bytes]]):  # type: ignore[no-untyped-def]
    return lambda namespace, name: found.get((namespace, name))


def test_a_saved_plan_has_references_and_apply_refuses_it_until_unsealed(tmp_path):
    the_plan = planned([web()], None, tmp_path)
    read = plan_from_json(plan_to_json(the_plan))

    texts = secret_texts(read)
    assert texts
    assert not any(t.known for t in texts)
    assert PASSWORD not in repr(read)
    assert PASSWORD not in plan_to_json(read)
    # The JSON of a plan read back is the JSON it was read from.
    assert plan_to_json(the_plan) == plan_to_json(read)

    rt = engine()
    result = run(read, rt)

    assert not result.ok
    failed = [r for r in result.results if r.error]
    assert failed
    assert "holds Secret values by reference" in failed[0].error
    assert all(c.labels.get(LABEL_CONTAINER) != "app" for c in rt.list_containers())

    unsealed = map_secret_texts(read, lambda t: unseal(t, lookup(secrets_of(PASSWORD)), HOST_KEY))
    assert unsealed == the_plan
    assert all(t.known for t in secret_texts(unsealed))
    assert run(unsealed, engine()).ok


@pytest.mark.parametrize(
    ("found", "message"),
    [
        (secrets_of("changed-since"), "is not the one the plan was made with"),
        ({}, "Secret default/db-creds is not in the sources"),
        ({("default", "db-creds"): {"user": b"x"}}, "has no key 'password'"),
    ],
)
def test_unsealing_refuses_another_or_a_missing_value(found, message):
    read = plan_from_json(plan_to_json(plan([web()], [], now=NOW)))

    with pytest.raises(SecretMismatch, match=message) as caught:
        map_secret_texts(read, lambda t: unseal(t, lookup(found), HOST_KEY))

    assert "changed-since" not in str(caught.value)


def test_a_record_reads_back():
    url = join_texts(["postgres://app:", secret(PASSWORD), "@db"])

    back = from_record(json.loads(json.dumps(sealed_record(url))))

    assert back is not None
    assert not back.known
    assert url.parts == back.parts
    assert url.shown == back.shown
    assert url != back  # one has its value, the other not
    for junk in (
        {},
        {"sealed": "x"},
        {"sealed": [{"secret": "nons", "key": "k", "digest": "0" * 64}]},
    ):
        assert from_record(junk) is None


def test_an_observed_label_is_compared_without_the_value(tmp_path):
    """What the engine lists back (labels) is all the planner compares."""
    rt = engine()
    assert run(planned([web()], None, tmp_path), rt).ok
    observed: list[ObservedContainer] = rt.list_containers()

    assert all(PASSWORD not in "".join(c.labels.values()) for c in observed)


# --- the host's key -----------------------------------------------------------------------


def test_the_host_key_is_made_once_private_and_kept(tmp_path):
    import os
    import stat

    from podsync.host._secret_key import SECRET_KEY_FILE, host_secret_key

    root = tmp_path / "root"
    key = host_secret_key(str(root))

    path = root / SECRET_KEY_FILE
    assert 32 == len(key)
    assert 0o600 == stat.S_IMODE(os.stat(path).st_mode)
    assert key == host_secret_key(str(root))
    assert [SECRET_KEY_FILE] == os.listdir(root)  # no temporary file left
    path.chmod(0o644)
    with pytest.raises(OSError, match="may be read by others"):
        host_secret_key(str(root))
    path.chmod(0o600)
    path.write_bytes(b"short")
    with pytest.raises(OSError, match="is not a key of 32 bytes"):
        host_secret_key(str(root))


def test_a_copy_or_a_pickle_stays_sealed():
    import copy
    import pickle

    url = join_texts(["postgres://app:", secret(PASSWORD), "@db"])

    for again in (copy.copy(url), copy.deepcopy(url), pickle.loads(pickle.dumps(url))):
        assert isinstance(again, SecretText)
        assert (url, url.parts, url.known) == (again, again.parts, again.known)
        assert PASSWORD not in repr(again)


_KEY_FILE_CASES = [
    # id, owner (None: the running user), mode, message the key is refused with (None: read)
    ("own-0600", None, 0o600, None),
    ("own-0400", None, 0o400, None),
    ("group-writable", None, 0o620, "may be read by others"),
    ("other-readable", None, 0o604, "may be read by others"),
    ("another-users", 65534, 0o600, "is owned by uid 65534, not by the user running podsync"),
]


@pytest.mark.parametrize(
    ("owner", "mode", "refused"),
    [c[1:] for c in _KEY_FILE_CASES],
    ids=[c[0] for c in _KEY_FILE_CASES],
)
def test_the_host_key_must_be_the_running_users_alone(tmp_path, owner, mode, refused):
    import os

    from podsync.host._secret_key import SECRET_KEY_FILE, host_secret_key

    root = tmp_path / "root"
    key = host_secret_key(str(root))
    path = root / SECRET_KEY_FILE
    if owner is not None:
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user needs root")
        os.chown(path, owner, -1)
    path.chmod(mode)
    if refused is None:
        assert key == host_secret_key(str(root))
        return
    with pytest.raises(OSError, match=refused) as caught:
        host_secret_key(str(root))
    assert str(path) in str(caught.value)


# --- fail-closed: every way of writing text down shows the mask --------------------------


def _logged(text: object) -> str:
    import io
    import logging

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    log = logging.getLogger("podsync.test.secret")
    log.addHandler(handler)
    try:
        log.warning("value %s", text)
        log.warning(text)
    finally:
        log.removeHandler(handler)
    return stream.getvalue()


# id, how a SecretText is written down
_WRITTEN = [
    ("str", str),
    ("repr", repr),
    ("f-string", lambda t: f"{t}"),
    ("f-string-repr", lambda t: f"{t!r}"),
    ("format-spec", lambda t: f"{t:>80}"),
    ("str-format", "{}".format),
    ("percent", lambda t: "%s" % t),  # noqa: UP031 - the old way is one of the ways
    ("concatenation", lambda t: "x" + t),
    ("join", lambda t: ",".join([t, "y"])),
    ("json", json.dumps),
    ("json-in-a-list", lambda t: json.dumps({"env": [t]})),
    ("encode", lambda t: t.encode().decode()),
    ("upper", lambda t: t.upper().lower()),
    ("logging", _logged),
    ("slicing", lambda t: t[:]),
]


@pytest.mark.parametrize("write", [c[1] for c in _WRITTEN], ids=[c[0] for c in _WRITTEN])
def test_a_secret_text_written_down_shows_the_mask(write):
    url = join_texts(["postgres://app:", secret(PASSWORD), "@db"])

    written = write(url)

    assert PASSWORD not in written
    assert "<secret default/db-creds key password>" in written.replace("\\u003c", "<")
    assert f"postgres://app:{PASSWORD}@db" == url.get_secret_value()


def test_its_attributes_hide_the_value():
    assert PASSWORD not in str(vars(secret(PASSWORD)))


def test_only_a_known_text_reveals_and_equality_follows_the_digests():
    one, other = secret(PASSWORD), secret("another-password")
    back = from_record(sealed_record(one))

    assert back is not None
    assert one.shown == other.shown  # the same reference...
    assert one != other  # ...but another value: another digest
    assert one == secret(PASSWORD)
    assert hash(one) == hash(secret(PASSWORD))
    assert one != one.shown  # never equal to text, its shown form included
    with pytest.raises(ValueError, match="is not known"):
        back.get_secret_value()
    with pytest.raises(ValueError, match="is not known"):
        revealed(["A=1", back])
    assert ["A=1", PASSWORD] == revealed(["A=1", one])
