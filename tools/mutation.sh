#!/usr/bin/env bash
# Mutation testing of podsync's decision modules with mutmut 3. Not part of CI.
#
#   bash tools/mutation.sh                          # every module of the folders, in turn
#   bash tools/mutation.sh spec/_naming spec/_images # only these modules (under podsync/)
#   bash tools/mutation.sh planner                  # every module of one folder
#   bash tools/mutation.sh --report                 # the scores of the last runs, and the survivors
#
# A mutant is a copy of one function with one small change (``<`` for ``<=``, ``and``
# for ``or``, a constant off by one, a call's result replaced by None ...). The tests
# should fail for it ("killed"); a mutant they pass ("survived") is a change of
# behaviour nothing checks - write a test for it, or, if it changes nothing anyone can
# observe, record it in tools/mutation-equivalent.txt with the reason.
#
# What runs: mutmut copies podsync and the tests to ./mutants/ (ignored by git) and
# mutates the folders that [tool.mutmut] only_mutate in pyproject.toml names (globs such
# as "podsync/planner/*": a module added to a folder is mutated without being listed).
# The tests are the unit-test folders listed there (pytest_add_cli_args_test_selection,
# about 20 s), not the whole suite (minutes, too slow per mutant on a 2-core machine);
# for each mutant mutmut runs only those of them that call the mutated function, in a
# process forked from a server that collected the tests and ran none (process_isolation
# "forkserver": forked from the process that ran them, a mutant would inherit what the
# unmutated code left in module-level objects, such as the planner's memo on a test
# module's pods, tests/unit/planner/test_plan_memo.py). Hypothesis
# uses the derandomized "mutation" profile (tests/conftest.py), so results repeat.
#
# Results are kept in ./mutants/ (`--report` reads them). Each run re-tests every mutant
# of the modules it names, against the tests as they are now; changing the test
# selection in pyproject.toml resets all results (a test added since the last run is
# mapped to the functions it calls first: "Found N new tests"). `rm -rf mutants` starts
# over. While a run is under way, `--report` mixes its results with the last run's. Inspect
# one mutant with `.venv/bin/mutmut show NAME` (a diff), all with `.venv/bin/mutmut
# browse`. Time on the 2-core machine, otherwise idle: host_ports ~15 s, images ~40 s,
# records and content_layout ~45 s, naming, empty_dir_planner, content_records and
# volume_planner ~1 min, hashing ~6 min, plan ~15-30 min (its functions are called by
# most selected tests: run it function by function,
# `mutmut run "podsync.planner._plan.x__NAME*"`).
#
# Environment: PYTHON (default .venv/bin/python, made by `bash .ci/test` or the
# quickstart), MUTATION_JOBS (parallel mutants, default 2).
set -euo pipefail

cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
JOBS=${MUTATION_JOBS:-2}

if [[ ! -x $PY ]]; then
    echo "mutation.sh: $PY not found; run bash .ci/test (or python3 -m venv .venv) first" >&2
    exit 1
fi
if ! "$PY" -c 'import mutmut' 2>/dev/null; then
    echo "mutation.sh: installing the mutation extra (mutmut)" >&2
    "$PY" -m pip install -q -e '.[mutation]'
fi

# Every module the only_mutate globs of pyproject.toml name, as paths under podsync/
# without .py (planner/_plan, spec/_naming, ...).
mapfile -t ALL < <("$PY" - <<'EOF'
import fnmatch, pathlib, tomllib
globs = tomllib.loads(pathlib.Path("pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]
for path in sorted(pathlib.Path("podsync").rglob("*.py")):
    if path.name != "__init__.py" and any(fnmatch.fnmatch(path.as_posix(), g) for g in globs):
        print(path.relative_to("podsync").with_suffix("").as_posix())
EOF
)

report() {
    "$PY" - "$@" <<'EOF'
"""Per-module mutation scores from mutmut's result files, and the survivors that
tools/mutation-equivalent.txt does not explain."""
import json
import sys
from pathlib import Path

KILLED = {1, 3, 37}
SURVIVED = {0}
equivalent = {}
for line in Path("tools/mutation-equivalent.txt").read_text().splitlines():
    name, _, why = line.partition(" ")
    if name and not name.startswith("#"):
        equivalent[name] = why.strip()
total = {"killed": 0, "equivalent": 0, "survived": 0, "other": 0, "unchecked": 0}
unexplained = []
for module in sys.argv[1:]:
    meta = Path(f"mutants/podsync/{module}.py.meta")
    if not meta.exists():
        print(f"{module:26} not run yet")
        continue
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    counts = dict.fromkeys(total, 0)
    for name, code in sorted(codes.items()):
        if code in KILLED:
            counts["killed"] += 1
        elif code in SURVIVED and name in equivalent:
            counts["equivalent"] += 1
        elif code in SURVIVED:
            counts["survived"] += 1
            unexplained.append(name)
        elif code is None:
            counts["unchecked"] += 1
        else:  # no tests, timeout, suspicious
            counts["other"] += 1
            unexplained.append(f"{name} (mutmut exit code {code})")
    for key in total:
        total[key] += counts[key]
    checked = counts["killed"] + counts["equivalent"] + counts["survived"]
    score = 100.0 * (counts["killed"] + counts["equivalent"]) / checked if checked else 0.0
    print(
        f"{module:26} {len(codes):5} mutants: {counts['killed']:5} killed, "
        f"{counts['equivalent']:3} equivalent, {counts['survived']:3} survived, "
        f"{counts['other']:3} other, {counts['unchecked']:4} not run; score {score:5.1f}%"
    )
checked = total["killed"] + total["equivalent"] + total["survived"]
if checked:
    score = 100.0 * (total["killed"] + total["equivalent"]) / checked
    print(f"{'all':26} score {score:5.1f}% ({total['survived']} survivors unexplained)")
if unexplained:
    print("\nSurvivors (show one with: .venv/bin/mutmut show NAME):")
    for name in unexplained:
        print(f"  {name}")
EOF
}

if [[ ${1:-} == --report ]]; then
    report "${ALL[@]}"
    exit 0
fi

modules=()
for asked in "$@"; do
    found=0
    for module in "${ALL[@]}"; do
        # a module (planner/_plan) or a folder (planner)
        if [[ $module == "$asked" || $module == "$asked"/* ]]; then
            modules+=("$module")
            found=1
        fi
    done
    if ((!found)); then
        echo "mutation.sh: $asked is no module or folder of: ${ALL[*]}" >&2
        exit 2
    fi
done
if ((${#modules[@]} == 0)); then modules=("${ALL[@]}"); fi

export HYPOTHESIS_PROFILE=mutation
mkdir -p mutants
for module in "${modules[@]}"; do
    echo "== podsync/$module.py"
    start=$SECONDS
    # mutmut's progress line is redrawn in place: keep the log short.
    log="mutants/last-run-${module//\//.}.log"
    "$PY" -m mutmut run --max-children "$JOBS" "podsync.${module//\//.}.*" > "$log" 2>&1 || {
        tail -n 40 "$log" >&2
        echo "mutation.sh: mutmut failed on $module (log: $log)" >&2
        exit 1
    }
    echo "   $((SECONDS - start)) s"
done
report "${modules[@]}"
