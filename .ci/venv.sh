# Shared by .ci/test and examples/quickstart.sh (sourced, not run): the checkout's own virtual
# environment, so that neither command ever installs into a system Python. Debian 12's python3
# is "externally managed" (PEP 668): `pip install` into it is refused, and rightly so.
#
# The caller defines `say` (one progress line) and sources .ci/engine.sh first
# (install_debian_packages). Settings (environment):
#   PYTHON        the interpreter the environment is made with (python3 on PATH); 3.11 or newer
#   PODSYNC_VENV  where the environment lives (.venv in the checkout; git ignores it)
#
# Functions:
#   ensure_venv SPEC   makes sure PODSYNC_VENV exists, was made with PYTHON, and has
#                      `pip install --editable SPEC` of this checkout ('.' or '.[dev]');
#                      sets VENV_DIR and VENV_PY. A second run reuses the environment and
#                      installs nothing unless setup.cfg or pyproject.toml changed; a
#                      different PYTHON re-creates it. Returns non-zero with a message that
#                      says what to install when it cannot.

# The interpreter PYTHON names, checked: prints "<sys.executable> <X.Y.Z>" on stdout.
_venv_base_identity() {
    local base=$1
    "$base" -c 'import sys; print(sys.executable, "%d.%d.%d" % sys.version_info[:3])' 2>/dev/null
}

_venv_packaging_digest() {  # what an editable install depends on: the packaging files
    cat setup.cfg pyproject.toml 2>/dev/null | sha256sum | cut -c1-16
}

_venv_usable() {  # the environment at VENV_DIR runs, as Python 3.11 or newer
    [[ -x $VENV_PY ]] && "$VENV_PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        >/dev/null 2>&1
}

# Makes VENV_DIR with the interpreter PYTHON names (python3), checked first; keeps it when it was
# made with that interpreter already.
_venv_create() {
    local base=${PYTHON:-python3} found identity executable version
    if ! found=$(command -v "$base"); then
        say "no '$base' on PATH: podsync needs Python 3.11 or newer."
        say "  on Debian 12: apt-get install python3 python3-venv; or set PYTHON=/path/to/python3.11"
        return 1
    fi
    if ! identity=$(_venv_base_identity "$found") || [[ -z $identity ]]; then
        say "'$found' does not run as Python 3: podsync needs Python 3.11 or newer (set PYTHON=...)"
        return 1
    fi
    executable=${identity% *}
    version=${identity##* }
    if ! "$found" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        say "podsync needs Python 3.11 or newer, and $found is Python $version."
        say "  install Python 3.11+ (Debian 12: apt-get install python3; Ubuntu 22.04:"
        say "  apt-get install python3.11 python3.11-venv; or pyenv), then run again with"
        say "  PYTHON=/path/to/python3.11 if it is not the python3 on PATH"
        return 1
    fi

    local stamp=$VENV_DIR/.podsync-python
    if _venv_usable && [[ -f $stamp && $(<"$stamp") == "$identity" ]]; then
        return 0  # made with this interpreter already
    fi
    if [[ -e $VENV_DIR ]]; then
        say "re-creating $VENV_DIR with $executable (Python $version)"
        rm -rf "$VENV_DIR"
    fi

    # Debian splits venv's pip bootstrap (ensurepip) into python3.X-venv; without it
    # `python3 -m venv` fails and leaves a half-made environment behind.
    if ! "$found" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        local package=python${version%.*}-venv
        if [[ $(readlink -f /usr/bin/python3 2>/dev/null) == "$(readlink -f "$executable")" ]]; then
            package=python3-venv  # Debian's default python3
        fi
        if [[ $(id -u) == 0 && $executable == /usr/bin/* ]] && command -v apt-get >/dev/null 2>&1
        then
            say "$found cannot make virtual environments: apt-get install $package"
            install_debian_packages "$package" || return 1
        else
            say "$found cannot make virtual environments (its venv or ensurepip module is"
            say "  missing). On Debian or Ubuntu, as root: apt-get install $package; or set"
            say "  PYTHON= to a Python 3.11+ that has venv"
            return 1
        fi
    fi
    say "python -m venv $VENV_DIR (with $executable, Python $version)"
    if ! "$found" -m venv "$VENV_DIR"; then
        rm -rf "$VENV_DIR"
        say "could not create the virtual environment $VENV_DIR"
        return 1
    fi
    printf '%s\n' "$identity" >"$stamp"
}

ensure_venv() {
    local spec=$1
    VENV_DIR=${PODSYNC_VENV:-$PWD/.venv}
    VENV_PY=$VENV_DIR/bin/python

    # Without PYTHON, a working environment is reused whatever made it (a developer's own
    # .venv too); PYTHON chooses the interpreter, and re-creates one made with another.
    if [[ -n ${PYTHON:-} ]] || ! _venv_usable; then
        _venv_create || return 1
    fi

    # --- podsync, editable, with SPEC's extras --------------------------------------------
    local installed=$VENV_DIR/.podsync-installed want have
    want="$(_venv_packaging_digest) $spec"
    have=$(cat "$installed" 2>/dev/null || true)
    # '.[dev]' includes '.': an environment the tests made serves the quickstart as it is.
    if [[ -n $have && ($have == "$want" || ($spec == . && $have == "${want% *} .[dev]")) ]] \
        && (cd / && "$VENV_PY" -c 'import podsync') >/dev/null 2>&1; then
        say "podsync ($spec) is installed in $VENV_DIR"
        return 0
    fi
    say "pip install --editable '$spec' into $VENV_DIR"
    if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV_PY" -m pip install --quiet --editable "$spec"; then
        say "pip install --editable '$spec' failed (is PyPI reachable?)"
        return 1
    fi
    printf '%s\n' "$want" >"$installed"
}
