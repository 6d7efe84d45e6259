#!/bin/sh
# Names on the terminal and under --results (issue 40, findings 8 and 9a). A plan whose test name holds
# ESC, BEL and CR, or whose name is "../escaped", is refused where the name is (file:line:col) in one line
# with the name escaped: nothing raw reaches the terminal and nothing is written outside --results. A
# results folder whose run.json was given such names (a folder from elsewhere) is reported with them
# escaped. Prints the raw control bytes counted in each output. Runs of 1 s on 127.0.0.x, free ports.
set -eu
harness=$1
build=$2
tmp=$(mktemp -d /tmp/harness-names.XXXXXX)
pids_to_clean=""
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" "$tmp/err" 2>/dev/null | od -c | head -20; exit 1; }
. "$(dirname "$0")/common.sh"

# The raw control bytes (C0 but newline, and DEL) in the files given.
raw_controls() { cat "$@" | tr -d '\n' | tr -cd '\000-\037\177' | wc -c; }

fan_in_plan names 1 "[0]" '["a"]'
sed 's/^name = "t"$/name = "t\\u001B[2J\\u001B]0;title\\u0007\\rFORGED: receiver ok"/' "$tmp/names.toml" > "$tmp/esc.toml"
grep -q 'FORGED' "$tmp/esc.toml" || fail "the plan was not made"
status=0
"$harness" run "$tmp/esc.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" ||
  status=$?
echo "harness run, a test name with ESC, BEL and CR: status $status, $(raw_controls "$tmp/out" "$tmp/err") raw control byte(s)"
[ "$(raw_controls "$tmp/out" "$tmp/err")" = 0 ] || fail "a raw control byte reached the terminal"
[ "$status" = 1 ] || fail "status $status, not 1"
grep -q "^harness: $tmp/esc.toml:[0-9]*:[0-9]*: tests\[0\]: name 't\\\\x1b\[2J\\\\x1b\]0;title\\\\x07\\\\rFORGED: receiver ok' holds a control character" "$tmp/err" ||
  fail "the refusal does not name the place and the escaped name"
[ ! -e "$tmp/results" ] || fail "a refused plan made a results folder"

# A plan name that leaves --results: refused, nothing written beside or above it.
sed 's|^name = "names"$|name = "../escaped"|' "$tmp/names.toml" > "$tmp/up.toml"
mkdir "$tmp/results"
status=0
"$harness" run "$tmp/up.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" ||
  status=$?
echo "harness run, plan name '../escaped': status $status; in $tmp: $(ls "$tmp" | tr '\n' ' ')"
[ "$status" = 1 ] || fail "status $status, not 1"
grep -q "^harness: $tmp/up.toml:1:8: plan: name '../escaped' would leave its folder" "$tmp/err" || fail "no refusal"
[ -z "$(ls -A "$tmp/results")" ] && ! ls -d "$tmp"/escaped* > /dev/null 2>&1 || fail "something was written"

# A results folder from elsewhere whose records carry control characters: `harness report` escapes them.
"$harness" run "$tmp/names.toml" --results "$tmp/results" --bin-dir "$build" --no-live --no-db > "$tmp/out" 2> "$tmp/err" ||
  fail "the plain run failed"
dir=$(ls -d "$tmp"/results/names-*)
python3 - "$dir"/raw/*/run.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    spec = json.load(open(path))
    spec["test"] = "t\x1b[2J\x07\rFORGED"
    spec["role"] = "role\x1b]0;title\x07"
    spec["instances"][0]["name"] = "01-\x1b[31mred"
    json.dump(spec, open(path, "w"))
PY
status=0
"$harness" report "$dir" > "$tmp/out" 2> "$tmp/err" || status=$?
echo "harness report, run.json names with ESC, BEL and CR: status $status, $(raw_controls "$tmp/out" "$tmp/err") raw control byte(s)"
[ "$(raw_controls "$tmp/out" "$tmp/err")" = 0 ] || fail "a raw control byte reached the terminal"
grep -q 'role\\x1b\]0;title\\x07' "$tmp/out" || fail "the role is not shown escaped"
grep -q '01-\\x1b\[31mred' "$tmp/out" || fail "the instance is not shown escaped"
echo "ok"
