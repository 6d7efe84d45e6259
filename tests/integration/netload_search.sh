#!/bin/sh
# netload --search (RFC 9971 MLRsearch) against one netserve on 127.0.0.1 (a port from the kernel):
# - a short PDR search (loose goal: width 0.05, 2-s duration sum, half-second trials) ends by itself, and
#   its JSON carries the RFC's terms with the relations the RFC gives them: min load <= relevant lower
#   bound <= relevant upper bound <= max load, the conditional throughput between the lower bound less
#   the goal loss ratio and the lower bound, a regular result within its width; every trial netload ran
#   reached netserve (its log has one line per test);
# - the user's stop: SIGINT during a trial keeps that trial's figures (marked interrupted), SIGTERM in
#   the settle pause between trials ends the search there; either way the table so far and the results
#   are printed, the exit status is 128 + the signal, and netserve sees no test after the signal;
# - options a search cannot take are refused with one line, exit status 2.
# Arguments: the netload and netserve binaries.
set -u
netload=$1
netserve=$2
TMP_NAME=netload-search
. "$(dirname "$0")/netserve_fixture.sh"
tests_served() { grep -c "test [0-9]* UDP_STREAM forward" "$tmp/serve.log"; }
short="--duration-sum 2 --width 0.05 --initial-trial-duration 0.5 --final-trial-duration 0.5 --settle 0.2"

# A whole search, JSON.
before=$(tests_served)
status=0
timeout 110 "$netload" -H 127.0.0.1 -p "$port" -t UDP_STREAM --search pdr $short --json -- -m 64 \
  > "$tmp/pdr.json" 2> "$tmp/pdr.err" || status=$?
cat "$tmp/pdr.err"
[ "$status" -eq 0 ] || fail "search: exit status $status, want 0"
sleep 0.3
python3 - "$tmp/pdr.json" "$before" "$(tests_served)" <<'PY' || fail "search: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
served = int(sys.argv[3]) - int(sys.argv[2])
s = j["search"]
assert j["interrupted"] is False and j["stopped_by_cap"] is None, (j["interrupted"], j["stopped_by_cap"])
goal = s["goals"][0]
for term in ("loss_ratio", "exceed_ratio", "final_trial_duration", "duration_sum", "width", "initial_trial_duration"):
    assert term in goal, f"goal has no {term}: {goal}"
assert goal["name"] == "PDR" and goal["loss_ratio"] == 0.005 and goal["width"] == 0.05, goal
(r,) = s["goal_results"]
assert r["goal"]["name"] == "PDR" and r["goal"]["loss_ratio"] == goal["loss_ratio"], r["goal"]
print(f"  MRR sent {j['mrr']['sent_pps']:.0f} pps, received {j['mrr']['received_pps']:.0f} pps; {len(s['trials'])} trials, "
      f"{s['trial_seconds']:.1f} trial-seconds, {j['elapsed_s']:.1f} s; PDR: lower {r['relevant_lower_bound']}, "
      f"upper {r['relevant_upper_bound']}, conditional throughput {r['conditional_throughput']}, regular {r['regular']} "
      f"{r['irregularities']}")
lo, up, ct = r["relevant_lower_bound"], r["relevant_upper_bound"], r["conditional_throughput"]
assert lo is not None and ct is not None, r
assert s["min_load"] <= lo <= s["max_load"], (s["min_load"], lo, s["max_load"])
if up is not None:
    assert lo <= up <= s["max_load"] * (1 + 1e-9), (lo, up)
assert lo * (1 - goal["loss_ratio"]) - 1e-6 <= ct <= lo + 1e-6, f"conditional throughput {ct} outside [{lo} x (1 - loss ratio), {lo}]"
if r["regular"]:
    assert up is not None and (up - lo) / up <= goal["width"] * (1 + 1e-9), (lo, up)
else:
    assert r["irregularities"], "an irregular result names why"
# netload's tests: the MRR, each trial the search was told, and each load-limited one run again before it.
repeated = [t for t in j["tests"] if t["repeated"]]
assert all(t["load_limited"] for t in repeated) and len(repeated) == j["repeated_trials"], repeated
assert len(j["tests"]) == len(s["trials"]) + 1 + len(repeated) and j["tests"][0]["n"] == 0, (len(j["tests"]), len(s["trials"]))
assert served == len(j["tests"]), f"netserve served {served} tests, netload ran {len(j['tests'])}"
assert j["options"]["search"]["goals"] == "pdr" and j["options"]["test"] == "UDP_STREAM", j["options"]
PY

# stopped NAME SIGNAL DELAY WANT ARGS...: a text-mode search, signalled DELAY seconds after its second trial
# line; checks the exit status, the INTERRUPTED line, the results, and that netserve got no test after it.
stopped() {
  name=$1 sig=$2 delay=$3 want=$4
  shift 4
  before=$(tests_served)
  "$netload" -H 127.0.0.1 -p "$port" -t UDP_STREAM --search "$@" -- -m 64 > "$tmp/$name.out" 2> "$tmp/$name.err" &
  pid=$!
  for i in $(seq 200); do [ "$(grep -c '^ *[0-9][0-9]* ' "$tmp/$name.out")" -ge 2 ] && break; sleep 0.05; done
  sleep "$delay"
  kill -"$sig" $pid
  at_signal=$(tests_served)
  status=0
  wait $pid || status=$?
  sleep 1.5  # a trial started after the signal would have reached netserve by now
  after=$(tests_served)
  [ "$status" -eq "$want" ] || fail "$name: exit status $status, want $want"
  grep -q "^INTERRUPTED by SIG$sig: no trial started after the stop" "$tmp/$name.out" || fail "$name: no INTERRUPTED line"
  grep -q "^Search: .* stopped by SIG$sig" "$tmp/$name.out" || fail "$name: no search summary"
  grep -q "relevant lower bound" "$tmp/$name.out" || fail "$name: no results"
  lines=$(grep -c '^ *[0-9][0-9]* ' "$tmp/$name.out")
  # netload's trial lines (the MRR's, each trial's, an interrupted one's) are the tests netserve saw, and
  # at most the one under way at the signal ended after it.
  [ $((after - before)) -eq "$lines" ] || fail "$name: netserve served $((after - before)) tests, netload printed $lines"
  [ $((after - at_signal)) -le 1 ] || fail "$name: $((after - at_signal)) tests ended after the signal"
  cat "$tmp/$name.out"
}

# In a 2-s trial (its line comes 1.3 s after the previous one's, after a 0.2-s pause and the connection).
stopped trial INT 1.3 130 pdr --initial-trial-duration 2 --final-trial-duration 2 --settle 0.2
grep -q 'INTERRUPTED by SIGINT after [0-9.]* s of 2 s: not counted' "$tmp/trial.out" || fail "trial: the stopped trial's figures are not shown"
# In the settle pause between trials (3 s long): no trial follows.
stopped pause TERM 1 143 ndr --initial-trial-duration 0.5 --final-trial-duration 0.5 --settle 3
grep -q 'INTERRUPTED by SIGTERM after' "$tmp/pause.out" && fail "pause: a trial was under way"

# refused WANT ARGS...: exit status 2, one line on stderr containing WANT.
refused() {
  want=$1
  shift
  status=0
  "$netload" "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || status=$?
  { [ "$status" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -qF -- "netload: " "$tmp/err" && grep -qF -- "$want" "$tmp/err"; } ||
    { fail "refused $*: status $status, stderr:"; cat "$tmp/err"; }
}
refused "--search: -t TCP_STREAM: the search runs UDP_STREAM only" -t TCP_STREAM --search pdr
refused "--search: -l is one test's length" -t UDP_STREAM -l 10 --search pdr
refused "--search: --pps / --rate: the search chooses each trial's load" -t UDP_STREAM --search --pps 1000
refused "--search 'fast': the goals are ndr, pdr or both" -t UDP_STREAM --search fast
refused "--loss-ratio is the PDR goal's" -t UDP_STREAM --search ndr --loss-ratio 0.01
refused "--width goes with --search" -t UDP_STREAM --width 0.01
refused "--duration-sum 0.5 s is shorter than one final trial" -t UDP_STREAM --search --duration-sum 0.5
refused "--search: the search runs against netserve only" -t UDP_STREAM --search pdr --peer iperf3
"$netload" --help > "$tmp/help" && grep -q '^Rate search (RFC 9971' "$tmp/help" && grep -q -- '--exceed-ratio' "$tmp/help" ||
  fail "--help has no rate search group"

[ "$fails" -eq 0 ] && echo "ok: netload --search (JSON with RFC 9971's terms, stops in a trial and in a pause, refusals)"
exit $fails
