"""podsync on rootless podman: an unprivileged user's own podman service, on its own
socket (``$XDG_RUNTIME_DIR/podman/podman.sock``), reached as podman's users reach it
(``CONTAINER_HOST``).

Runs when ``PODSYNC_PODMAN_ROOTLESS_HOST`` names such a socket (the engine tests run
as root, which may connect to it), once, beside the ``[podman]`` tests. ``.ci/test``
sets it when the engine tests run on podman, as root: ``.ci/podman-rootless`` creates
the user ``podsync-rootless`` (subuid/subgid ranges from ``useradd``; Debian's
``uidmap`` for ``newuidmap``), serves podman as that user on
``/run/user/<uid>/podman/podman.sock`` and prints that address::

    export PODSYNC_PODMAN_ROOTLESS_HOST=$(bash .ci/podman-rootless)

User namespaces are open to unprivileged users on Debian 12 (``unshare -U`` as the
user; the script checks it first). The pod has no network (``--network-mode none``):
rootless podman's default network needs ``slirp4netns``, which is not installed. The
test images are imported into the user's storage, as for the other engines.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import podsync.cli
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, connect, ensure_test_images

ROOTLESS_ENV = "PODSYNC_PODMAN_ROOTLESS_HOST"

POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: rootless-{os.getpid()}
spec:
  terminationGracePeriodSeconds: 1  # sleep, pid 1, ignores SIGTERM: down waited 30 s
  containers:
    - name: app
      image: {TEST_IMAGE}
      imagePullPolicy: Never
"""


def test_a_pod_runs_converges_and_goes_on_rootless_podman(
    engine_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """apply --wait runs the pod as the unprivileged user, a second plan has nothing
    to do (exit 0), and down removes it - through CONTAINER_HOST alone."""
    address = os.environ.get(ROOTLESS_ENV, "")
    if engine_name != "podman" or not address:
        pytest.skip(f"set {ROOTLESS_ENV} to a rootless podman socket (and run the podman tests)")
    client = connect(host=address)
    try:
        info = client.api.get(f"{client.api.base_url}/v4.0.0/libpod/info").json()
        assert info["host"]["security"]["rootless"] is True, "the service is not rootless"
        ensure_test_images(client)
    finally:
        client.close()
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setenv("CONTAINER_HOST", address)
    source = tmp_path / "pod.yaml"
    source.write_text(POD)
    options = ["--network-mode", "none", "--network-image", PAUSE_IMAGE]
    options += ["--root-dir", str(tmp_path / "root")]
    try:
        assert (
            podsync.cli.main(
                ["apply", "--no-delete", "--wait", "--timeout", "60", *options, str(source)]
            )
            == 0
        )
        assert (
            podsync.cli.main(["plan", "--detailed-exitcode", "--no-delete", *options, str(source)])
            == 0
        )
    finally:
        assert podsync.cli.main(["down", *options, str(source)]) == 0
