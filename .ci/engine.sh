# Shared by .ci/test and examples/quickstart.sh (sourced, not run): Debian packages and a Docker
# engine with no bridge, as CI uses.
#
# The caller defines, before calling these functions:
#   say            prints one progress line
#   engine_answers exits 0 when the engine at DOCKER_HOST (or the default socket) answers
#
# Functions:
#   install_debian_packages PKG...  as root with apt-get: apt-get update + install, with
#                                   a policy-rc.d that keeps the packages' init scripts
#                                   from starting a default dockerd (bridge, iptables)
#   start_engine                    starts dockerd --bridge=none --iptables=false
#                                   --ip-masq=false in the background, in its own session
#                                   (it outlives the caller); sets DOCKERD_PID, DOCKERD_LOG.
#                                   A DOCKER_HOST=unix:///some/dir/x.sock that does not
#                                   answer gets a private dockerd (state under
#                                   /some/dir/x.d), beside any other engine.
#   wait_for_engine                 waits at most PODSYNC_ENGINE_WAIT (60) s for it

install_debian_packages() {
    local policy=/usr/sbin/policy-rc.d made_policy=""
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
    if [[ -n $made_policy ]]; then rm -f "$policy"; fi
}

start_engine() {
    local host=${DOCKER_HOST:-unix:///var/run/docker.sock} sock state
    local -a args=(--bridge=none --iptables=false --ip-masq=false)
    case $host in
        unix://*) sock=${host#unix://} ;;
        *) say "DOCKER_HOST=$host does not answer, and is no local socket to start one on"
           return 1 ;;
    esac
    if [[ $sock != /var/run/docker.sock && $sock != /run/docker.sock ]]; then
        state=${sock%.sock}.d
        mkdir -p "$state"
        args+=(-H "unix://$sock" --data-root "$state/data" --exec-root "$state/exec"
               --pidfile "$state/dockerd.pid")
    elif pidof dockerd >/dev/null 2>&1; then
        say "a dockerd runs (pid $(pidof dockerd)) but does not answer yet; waiting for it"
        DOCKERD_LOG=""
        return 0
    fi
    if [[ $(id -u) != 0 ]]; then
        say "no Docker engine answers at $host, and starting dockerd needs root: start the"
        say "  engine (as root: systemctl start docker, or run this as root), or, if it runs,"
        say "  join the group that may use its socket (usermod -aG docker $(id -un), log in again)"
        return 1
    fi
    if ! command -v dockerd >/dev/null 2>&1; then
        say "no Docker engine answers at $host, and there is no dockerd to start"
        say "  (Debian: apt-get install docker.io)"
        return 1
    fi
    DOCKERD_LOG=$(mktemp -t podsync-dockerd.XXXXXX)
    say "starting dockerd ${args[*]} (log: $DOCKERD_LOG)"
    # Its own session, so a Ctrl-C in the caller does not stop it; it outlives the caller.
    setsid nohup dockerd "${args[@]}" >"$DOCKERD_LOG" 2>&1 </dev/null &
    DOCKERD_PID=$!
}

wait_for_engine() {
    local deadline=$((SECONDS + ${PODSYNC_ENGINE_WAIT:-60}))
    until engine_answers; do
        if [[ -n ${DOCKERD_PID:-} ]] && ! kill -0 "$DOCKERD_PID" 2>/dev/null; then
            say "dockerd exited; the end of its log:"
            tail -n 40 "$DOCKERD_LOG" >&2 || true
            return 1
        fi
        if ((SECONDS >= deadline)); then
            say "no Docker engine answered within ${PODSYNC_ENGINE_WAIT:-60} s"
            if [[ -n ${DOCKERD_LOG:-} ]]; then
                say "the end of the dockerd log ($DOCKERD_LOG):"
                tail -n 40 "$DOCKERD_LOG" >&2 || true
            fi
            return 1
        fi
        sleep 0.5
    done
    say "the Docker engine answers after ${SECONDS} s of this run"
}
