"""Image references as people spell them, and what the Docker engine lists them as.

One table for three checks: podsync's ``normalize_image``
(``tests/unit/spec/test_images.py``), ``FakeRuntime``'s own reading of references
(``tests/unit/runtime/test_fake_runtime.py``) and the real engine, which is given each
spelling with ``docker tag`` and asked what it lists (``tests/engine/test_images.py``).
The ``LISTED`` rows were first recorded from Docker 20.10's ``GET /images/json``.
"""

from __future__ import annotations

__all__ = ["DIGEST", "DIGEST_SPELLINGS", "INVALID", "LISTED", "NEWER_GRAMMAR"]

#: A sha256 digest in the only form the engine accepts (64 lowercase hex digits).
DIGEST = "sha256:" + "0123456789abcdef" * 4

#: (spelling, what the engine lists) for references ``docker tag`` accepts.
LISTED: list[tuple[str, str]] = [
    ("busybox", "busybox:latest"),
    ("busybox:latest", "busybox:latest"),
    ("library/busybox", "busybox:latest"),
    ("docker.io/busybox", "busybox:latest"),
    ("docker.io/library/busybox", "busybox:latest"),
    ("index.docker.io/library/busybox:latest", "busybox:latest"),
    ("busybox:1.36", "busybox:1.36"),
    ("library/busybox:1.36", "busybox:1.36"),
    # Tags are case-sensitive.
    ("busybox:Edge_1", "busybox:Edge_1"),
    ("team/app", "team/app:latest"),
    ("docker.io/team/app:2", "team/app:2"),
    ("index.docker.io/team/tool", "team/tool:latest"),
    # "library/" is dropped only in front of a single component.
    ("docker.io/library/team/app", "library/team/app:latest"),
    # Registry hosts: a "." or a ":" or "localhost"; the port is not a tag.
    ("localhost:5000/app", "localhost:5000/app:latest"),
    ("localhost:5000/library/app:v1", "localhost:5000/library/app:v1"),
    ("localhost/app", "localhost/app:latest"),
    ("registry.example.com/a/b/c:9", "registry.example.com/a/b/c:9"),
    ("registry.example.com:5000/team/app", "registry.example.com:5000/team/app:latest"),
    # Host names keep their case, and only "docker.io" itself is Docker Hub.
    ("LOCALHOST:5000/app", "LOCALHOST:5000/app:latest"),
    ("Registry.Example.com/app", "Registry.Example.com/app:latest"),
    # A Hub namespace may have "_"; a first component with "." that is no valid host
    # name is read as a repository path, and listed as written.
    ("team_a/app", "team_a/app:latest"),
    ("my_registry.example.com/app", "my_registry.example.com/app:latest"),
    # Without a "/", "localhost" is a repository and "host:5000" a name and a tag.
    ("localhost", "localhost:latest"),
    ("apphost:5000", "apphost:5000"),
]

#: (spelling, normalized) with a digest; ``docker tag`` cannot make these (a digest comes
#: from a registry), so only podsync and the fake are checked. The engine lists them in
#: ``RepoDigests`` in the same familiar form, without the tag.
DIGEST_SPELLINGS: list[tuple[str, str]] = [
    (f"busybox@{DIGEST}", f"busybox@{DIGEST}"),
    (f"busybox:1.36@{DIGEST}", f"busybox@{DIGEST}"),
    (f"docker.io/library/busybox:1.36@{DIGEST}", f"busybox@{DIGEST}"),
    (f"library/busybox@{DIGEST}", f"busybox@{DIGEST}"),
    (f"localhost:5000/app:v1@{DIGEST}", f"localhost:5000/app@{DIGEST}"),
]

#: (spelling, why) for references the engine refuses.
INVALID: list[tuple[str, str]] = [
    ("Busybox", "repository name must be lowercase"),
    ("team/App:1", "repository name must be lowercase"),
    ("localhost:5000/App", "repository name must be lowercase"),
    ("docker.io/Team/app", "repository name must be lowercase"),
    ("my_registry.example.com:5000/app", "invalid registry host"),
    ("busybox:-edge", "invalid tag"),
    ("busybox:", "invalid tag"),
    ("a//b", "invalid repository name"),
    ("-busybox", "invalid repository name"),
    ("", "empty repository name"),
    ("f" * 64, "a 64-digit hexadecimal string is an image id, not a repository name"),
    ("busybox@sha256:" + "AB" * 32, "invalid digest"),
    ("busybox@sha256:abc", "invalid digest"),
    ("busybox@", "invalid digest"),
]

#: (spelling, normalized) that the current reference grammar accepts but Docker 20.10
#: refuses: podsync follows the current grammar (the engine then refuses the pull).
NEWER_GRAMMAR: list[tuple[str, str]] = [
    ("Team/app", "Team/app:latest"),
    ("[::1]:5000/app", "[::1]:5000/app:latest"),
]
