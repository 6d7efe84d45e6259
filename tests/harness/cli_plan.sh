#!/bin/sh
# The plan on the command line: --duration, --repeats and --only override it (in a dry run, a run, and
# the results' plan.toml and environment.json); an unknown test or a missing plan file is one clear line;
# a plan whose lab is not up says `harness lab up PLAN` in one line and makes no results folder, and
# `harness check` fails its hosts; a --min-change or --baseline-runs out of range is one line and status 2;
# a plan the host check refuses makes no results folder.
# Runs of 1 s on 127.0.0.x with free ports; the lab's namespaces are never created (nothing needs root).
set -eu
harness=$1
build=$2
tmp=$(mktemp -d /tmp/harness-cli.XXXXXX)
pids_to_clean=""
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }
. "$(dirname "$0")/common.sh"

# Two tests of 30 s each: without the overrides this would take a minute.
fan_in_plan cli 30 "[0, 0]" '["a"]'
cat >> "$tmp/cli.toml" <<'PLAN'
[[tests]]
name = "u"
message_size = 32
pps = 1000
topology = "fan-in"
server = "device"
clients = ["a"]
PLAN

# The regression options: a NaN, infinite, negative or 100 % --min-change, or a --baseline-runs that is not
# a whole number from 1 to 1000, would switch the judgement off or make it judge everything; each
# command refuses them with one line and CLI11's usage status 2.
refused() {  # the expected line's pattern, then the command line
  expect=$1
  shift
  status=0
  "$harness" "$@" > "$tmp/out" 2> "$tmp/err" || status=$?
  [ "$status" = 2 ] || fail "harness $* exited $status"
  [ "$(wc -l < "$tmp/err")" = 1 ] || fail "harness $* says more than one line"
  grep -q -- "$expect" "$tmp/err" || fail "harness $*: the error does not say what is wrong"
}
for cmd in "run $tmp/cli.toml --dry-run" "watch $tmp/cli.toml --every 1s" "history --db $tmp/none.sqlite"; do
  for pct in nan NaN inf -inf -1 100 1e9 5x; do
    refused "^harness: --min-change: '$pct' is not a percentage from 0 to below 100$" $cmd --min-change "$pct"
  done
  for n in -7 0 1001 2.5 x; do
    refused "^harness: --baseline-runs: '$n' is not a whole number from 1 to 1000$" $cmd --baseline-runs "$n"
  done
done
"$harness" run "$tmp/cli.toml" --dry-run --min-change 0 --baseline-runs 1000 > "$tmp/out" 2> "$tmp/err" ||
  fail "--min-change 0 --baseline-runs 1000 refused"
"$harness" run "$tmp/cli.toml" --dry-run --min-change 99.5 --baseline-runs 1 > "$tmp/out" 2> "$tmp/err" ||
  fail "--min-change 99.5 --baseline-runs 1 refused"
status=0
"$harness" history --db "$tmp/none.sqlite" --min-change 2.5 --baseline-runs 3 > "$tmp/out" 2> "$tmp/err" || status=$?
grep -q "no results database at $tmp/none.sqlite" "$tmp/err" || fail "history refused --min-change 2.5 --baseline-runs 3"

status=0
"$harness" run "$tmp/cli.toml" --only nope --dry-run > "$tmp/out" 2> "$tmp/err" || status=$?
[ "$status" = 1 ] || fail "--only of an unknown test exited $status"
grep -q "^harness: --only nope: plan 'cli' has no test of that name (its tests: t, u)$" "$tmp/err" ||
  fail "the unknown test's error does not name the plan's tests"

status=0
"$harness" run "$tmp/no-such-plan.toml" > "$tmp/out" 2> "$tmp/err" || status=$?
[ "$status" = 1 ] || fail "a missing plan file exited $status"
grep -q "no-such-plan.toml: cannot read the plan file: No such file or directory" "$tmp/err" ||
  fail "a missing plan file does not say why"

"$harness" run "$tmp/cli.toml" --only u --duration 1 --dry-run > "$tmp/out" 2> "$tmp/err" || fail "dry run failed"
grep -q -- "-m 32" "$tmp/out" || fail "the dry run lacks test u"
grep -q -- "-m 64" "$tmp/out" && fail "the dry run still has test t"
grep -q -- "-l 1 " "$tmp/out" || fail "the dry run's netload does not run 1 s"
grep -q -- "-l 30" "$tmp/out" && fail "the dry run still runs 30 s"

"$harness" run "$tmp/cli.toml" --only u --duration 1 --repeats 2 --results "$tmp/results" --bin-dir "$build" --no-live \
  > "$tmp/out" 2> "$tmp/err" || fail "the overridden run failed"
dir=$(ls -d "$tmp"/results/cli-*)
[ "$(ls "$dir/raw")" = "$(printf 'u-m32-r1\nu-m32-r2')" ] || fail "raw/ holds $(ls "$dir/raw" | tr '\n' ' ')"
grep -q "^# The plan as it ran: the command line's --duration 1 --repeats 2 --only u changed" "$dir/plan.toml" ||
  fail "plan.toml does not say what changed it"
grep -q "^duration = 1$" "$dir/plan.toml" || fail "plan.toml does not give the duration that ran"
grep -q '^# name = "t"$' "$dir/plan.toml" || fail "plan.toml still has test t"
python3 - "$dir" <<'PY' || fail "environment.json does not record the overrides"
import json, sys
env = json.load(open(sys.argv[1] + "/environment.json"))
o = env["overrides"]
assert o["options"] == "--duration 1 --repeats 2 --only u", o
assert "tests left out (--only): t" in o["changes"], o
assert env["planned_runs"] == ["u-m32-r1", "u-m32-r2"], env["planned_runs"]
run = json.load(open(sys.argv[1] + "/raw/u-m32-r1/run.json"))
assert run["duration"] == 1, run["duration"]
PY

# A lab plan whose namespaces do not exist (the names carry this shell's pid: never a real lab's).
ns="nbcli$$"
cat > "$tmp/lab.toml" <<PLAN
[defaults]
duration = 1
warmup = 0
ports = [0]
[hosts]
device = { address = "198.18.0.2", launcher = "netns", namespace = "$ns-dev" }
i1 = { address = "198.19.0.2", launcher = "netns", namespace = "$ns-i1" }
[[tests]]
name = "t"
message_size = 1473
topology = "fan-in"
server = "device"
clients = ["i1"]
[lab]
name = "nbcli"
circuit_namespace = "$ns-c"
onprem_gateway = "198.18.0.1/24"
vpc_gateway = "198.19.0.1/24"
device = { namespace = "$ns-dev", address = "198.18.0.2" }
instances = [ { namespace = "$ns-i1", address = "198.19.0.2" } ]
PLAN
status=0
"$harness" run "$tmp/lab.toml" --results "$tmp/lab-results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" || status=$?
[ "$status" = 1 ] || fail "the lab plan without its lab exited $status"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "the lab plan without its lab says more than one line"
grep -q "^harness: the lab of $tmp/lab.toml is not up (namespace '$ns-c' and 2 more missing): run \`harness lab up $tmp/lab.toml\` first$" \
  "$tmp/err" || fail "the lab plan without its lab does not say to run harness lab up"
[ ! -e "$tmp/lab-results" ] || fail "a results folder was made for a lab that is not up"

status=0
"$harness" check "$tmp/lab.toml" --bin-dir "$build" > "$tmp/out" 2> "$tmp/err" || status=$?
[ "$status" = 1 ] || fail "check of hosts whose namespaces do not exist exited $status"
grep -q "^device .* NO " "$tmp/out" || fail "check says the device is reachable"
grep -q "^error: host 'i1' (198.19.0.2): network namespace '$ns-i1' does not exist .*: run \`harness lab up $tmp/lab.toml\`$" \
  "$tmp/out" || { cat "$tmp/out"; fail "check does not name the missing namespace and harness lab up"; }
# A plan the host check refuses (a local host whose address is not this machine's: the check only tries
# to bind it) makes no results folder, and the error says where nothing was written.
sed 's/^a = { address = "127.0.0.2" }$/a = { address = "192.0.2.1" }/' "$tmp/cli.toml" > "$tmp/refused.toml"
status=0
"$harness" run "$tmp/refused.toml" --results "$tmp/refused-results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" ||
  status=$?
[ "$status" = 1 ] || fail "the plan the host check refuses exited $status"
grep -q "^error: host 'a' (192.0.2.1): 192.0.2.1 is not an address of this machine" "$tmp/err" || fail "no host check error"
grep -q "^harness: the host check found 1 error(s) (above); no test was started; nothing was written (no results folder was made in $tmp/refused-results)$" \
  "$tmp/err" || fail "the refusal does not say that nothing was written, and where"
[ ! -e "$tmp/refused-results" ] || fail "a results folder was made for a plan the host check refused: $(find "$tmp/refused-results")"

echo "ok: overrides in the dry run, the run, plan.toml and environment.json; the errors are one clear line"
