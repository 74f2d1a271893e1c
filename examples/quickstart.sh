#!/usr/bin/env bash
# podsync's quickstart: bash examples/quickstart.sh
#
#  1. podsync and its dependencies in a virtual environment of the checkout, .venv
#     (.ci/venv.sh: made with PYTHON or the python3 on PATH, 3.11 or newer; as root on
#     Debian, python3-venv is installed when missing; then pip install --editable . in it).
#     Nothing is installed into the system's Python (Debian 12's is externally managed).
#  2. as root on Debian, when dockerd, the docker CLI or a static busybox is missing:
#     apt-get install docker.io busybox-static (no service is started by the install)
#  3. when no Docker engine answers: start dockerd with no bridge, no iptables and no
#     masquerading, as CI does (.ci/engine.sh), and wait for it
#  4. build two local images from busybox with docker import - nothing is pulled:
#     podsync-demo/busybox:1 (the apps) and podsync-demo/pause:1 (the network container)
#  5. podsync plan, podsync apply --wait, podsync plan --detailed-exitcode on examples/pods/
#
# Idempotent: a second run reuses .venv, installs and builds nothing, finds the pods running,
# and ends with the same "nothing left to do". It ends by saying how to run podsync yourself
# (.venv/bin/podsync) and how to remove the demo.
#
# Not root: a member of the docker group with a running engine needs nothing that needs root;
# what does (apt-get, starting dockerd) stops the script with a message saying so.
#
# Settings (environment): PYTHON (python3), PODSYNC_VENV (.venv), PODSYNC_ROOT_DIR (where the pods' emptyDir
# volumes live; /var/lib/podsync-demo as root), PODSYNC_NETWORK_MODE (none: the engine
# started here has no bridge, so pods get loopback only and the host port of the web pod
# is recorded but not published; set it to "" on an engine with a bridge), DOCKER_HOST.
#
# PODSYNC_ENGINE=podman: the same on podman instead of Docker (steps 2 and 3 are
# .ci/podman: apt-get install podman, its Docker-compatible service on a socket of its own -
# /run/podsync-podman/podman.sock as root, $XDG_RUNTIME_DIR/podman/podman.sock rootless,
# PODSYNC_PODMAN_SOCKET to choose - and the images are made with podman import). podsync
# reaches it through CONTAINER_HOST, which this script sets (and unsets DOCKER_HOST, which
# would win).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { printf '\n[quickstart] %s\n' "$*"; }
fail() { printf '\n[quickstart] FAILED: %s\n' "$*" >&2; exit 1; }
# install_debian_packages, start_engine, wait_for_engine, ensure_venv: the same setup as CI.
source .ci/engine.sh
source .ci/venv.sh

if [[ $(id -u) == 0 ]]; then
    ROOT_DIR=${PODSYNC_ROOT_DIR:-/var/lib/podsync-demo}
else
    ROOT_DIR=${PODSYNC_ROOT_DIR:-${TMPDIR:-/tmp}/podsync-demo}
fi
NETWORK_MODE=${PODSYNC_NETWORK_MODE-none}
ENGINE=${PODSYNC_ENGINE:-docker}
case $ENGINE in
    docker | podman) CLI=$ENGINE ;;
    *) fail "PODSYNC_ENGINE=$ENGINE: the engines are docker and podman" ;;
esac
APP_IMAGE=podsync-demo/busybox:1
PAUSE_IMAGE=podsync-demo/pause:1

# --- 1. podsync ------------------------------------------------------------------------
ensure_venv . || fail "could not install podsync (see above)"
PY=$VENV_PY
PODSYNC=("$VENV_DIR/bin/podsync")

# --- 2. Docker and busybox from Debian -------------------------------------------------
have_static_busybox() {
    if command -v dpkg-query >/dev/null 2>&1; then
        dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed'
    else
        [[ -x /bin/busybox ]]
    fi
}
if [[ $ENGINE == podman ]]; then
    # Steps 2 and 3 on podman: busybox from Debian, then .ci/podman (podman, its service).
    if ! have_static_busybox; then
        if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
            say "apt-get install busybox-static"
            install_debian_packages busybox-static
        else
            fail "a static busybox is missing; install busybox-static"
        fi
    fi
    bash .ci/podman --no-test-images || fail "no podman service (see above)"
    if [[ $(id -u) == 0 ]]; then
        sock=${PODSYNC_PODMAN_SOCKET:-/run/podsync-podman/podman.sock}
    else
        sock=${PODSYNC_PODMAN_SOCKET:-${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/podman/podman.sock}
    fi
    export CONTAINER_HOST=unix://$sock
    unset DOCKER_HOST
    say "podsync uses podman at CONTAINER_HOST=$CONTAINER_HOST"
elif ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1 \
    || ! have_static_busybox; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        say "apt-get install docker.io busybox-static"
        install_debian_packages docker.io busybox-static
    elif ! command -v docker >/dev/null 2>&1 || ! have_static_busybox; then
        fail "the docker CLI or a static busybox is missing; install docker.io and busybox-static"
    fi
fi

# --- 3. a Docker engine ----------------------------------------------------------------
# Asked the way podsync asks: the docker SDK at DOCKER_HOST, or the local socket.
engine_answers() {
    timeout 20 "$PY" -c 'from podsync.docker import DockerRuntime; DockerRuntime().ping()' \
        >/dev/null 2>&1
}
if [[ $ENGINE == podman ]]; then
    engine_answers || fail "podman does not answer at $CONTAINER_HOST"
elif engine_answers; then
    say "a Docker engine answers at ${DOCKER_HOST:-unix:///var/run/docker.sock}"
else
    start_engine && wait_for_engine || fail "no Docker engine"
fi

# --- 4. the demo images, from the static busybox ---------------------------------------
build_image() {  # build_image REFERENCE CMD-JSON
    local reference=$1 cmd=$2 rootfs applet
    if "$CLI" image inspect "$reference" >/dev/null 2>&1; then
        say "$reference is present"
        return 0
    fi
    say "$CLI import $reference, from /bin/busybox"
    rootfs=$(mktemp -d -t podsync-rootfs.XXXXXX)
    mkdir -p "$rootfs"/{bin,dev,etc,proc,root,sys,tmp,var}
    chmod 1777 "$rootfs/tmp"
    cp /bin/busybox "$rootfs/bin/busybox"
    for applet in $("$rootfs/bin/busybox" --list); do
        [[ $applet == busybox ]] || ln -s busybox "$rootfs/bin/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' \
        >"$rootfs/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
    tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -cf - . \
        | "$CLI" import --change "CMD $cmd" - "$reference" >/dev/null
    rm -rf "$rootfs"
}
build_image "$APP_IMAGE" '["/bin/sh"]'
# The network container sleeps, and exits at once on SIGTERM (a plain sleep as PID 1
# would ignore it, and every stop would wait out its grace period).
build_image "$PAUSE_IMAGE" \
    '["/bin/sh", "-c", "trap '"'"'exit 0'"'"' TERM INT; while :; do sleep 3600 & wait $!; done"]'

# --- 5. podsync ------------------------------------------------------------------------
# --no-delete: podsync takes its sources as the complete desired state of the engine, so
# without it, apply would also stop every other pod podsync runs on this engine (left by
# tests, or your own). The demo touches only its own three pods; `down` removes them.
OPTIONS=(--network-mode "$NETWORK_MODE" --network-image "$PAUSE_IMAGE"
         --root-dir "$ROOT_DIR" --no-delete)
run() { printf '\n$ %s\n' "$*"; "$@"; }

say "1/3: what would podsync do? (podsync plan changes nothing)"
run "${PODSYNC[@]}" plan "${OPTIONS[@]}" examples/pods/

say "2/3: do it, and wait until the pods run (the job: until it has completed)"
run "${PODSYNC[@]}" apply --wait --timeout 60 "${OPTIONS[@]}" examples/pods/ \
    || fail "podsync apply --wait (exit $?)"

app=$("$CLI" ps --quiet --filter label=io.podsync.pod.name=web \
    --filter label=io.podsync.container.name=app | head -n 1)
if [[ -n $app ]]; then
    say "the web pod serves, inside its own network:"
    "$CLI" exec "$app" wget -q -O - http://127.0.0.1:8080/ || true
fi

say "3/3: plan again: exit code 0 means nothing is left to do (2: changes, 1: error)"
status=0
run "${PODSYNC[@]}" plan --detailed-exitcode "${OPTIONS[@]}" examples/pods/ || status=$?
case $status in
    0) say "done: the engine runs the pods of examples/pods/ ($SECONDS s)." ;;
    2) fail "podsync plan --detailed-exitcode found changes after apply --wait" ;;
    *) fail "podsync plan --detailed-exitcode failed (exit $status)" ;;
esac
printf '[quickstart] podsync is installed in %s. Run it yourself as\n  %s --help\n' \
    "$VENV_DIR" "${PODSYNC[*]}"
printf 'or put it on PATH for this shell:\n  . %s/bin/activate   (then: podsync --help)\n' \
    "$VENV_DIR"
printf '[quickstart] remove the demo pods with:\n  %s down --root-dir %s examples/pods/\n' \
    "${PODSYNC[*]}" "$ROOT_DIR"
if [[ $ENGINE == podman ]]; then
    printf '[quickstart] on podman, first (podsync reads it when DOCKER_HOST is unset):\n'
    printf '  export CONTAINER_HOST=%s; unset DOCKER_HOST\n' "$CONTAINER_HOST"
fi
