#!/usr/bin/env bash
# Lab test: the harness's rate search (MLRsearch, RFC 9971) finds the circuit's packet-rate limit. The
# hosts and [lab] of configs/express-connect-lab.toml (renamed, so a lab a user has up is left alone), with
# one search test per role at -m 1: eight instances, an unpaced trial (MRR), then the trials the goals ask
# for, the aggregate load split equally over the instances.
# The circuit drops every packet over 20000 per second and direction (nft limit, test control included),
# so for both goals, NDR (loss ratio 0) and PDR (0.005), in both roles: the relevant lower bound within
# 3 % of 20000 pps, the relevant upper bound above it and within the goal's width, and summary.json in the
# RFC's terms. Prints each goal's bounds, conditional throughput and the search's trial-seconds.
#   lab_search.sh LAB_CLI HARNESS NETSERVE NETLOAD CONFIG
lab_cli=$1 harness=$2 netserve=$3 netload=$4 config=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

plan="$work/search.toml"
{
  cat <<'TOML'
name = "ec-lab-search"
[defaults]
duration = 3
warmup = 0
lead = 0.5
settle = 0.3
skew_bound_ms = 100    # eight senders on a busy 2-core machine: the last one may start late (not what this test measures)
ports = "11256-11263"
TOML
  # [hosts], [groups] and [lab] as the shipped plan has them; its [[tests]] replaced by searches.
  sed -n '/^\[hosts\]/,/^\[\[tests\]\]/p' "$config" | sed '$d'
  cat <<'TOML'
[[tests]]
name = "device-server"
kind = "UDP_STREAM"
message_size = 1
topology = "fan-in"
server = "device"
clients = "instances"
search = { max_trials = 40, goals = [
  { name = "NDR", loss_ratio = 0.0, exceed_ratio = 0.5, final_trial_duration = 1, duration_sum = 2, width = 0.01, initial_trial_duration = 0.5 },
  { name = "PDR", loss_ratio = 0.005, exceed_ratio = 0.5, final_trial_duration = 1, duration_sum = 2, width = 0.01, initial_trial_duration = 0.5 } ] }

[[tests]]
name = "device-client"
kind = "UDP_STREAM"
message_size = 1
topology = "fan-out"
client = "device"
servers = "instances"
search = { max_trials = 40, goals = [
  { name = "NDR", loss_ratio = 0.0, exceed_ratio = 0.5, final_trial_duration = 1, duration_sum = 2, width = 0.01, initial_trial_duration = 0.5 },
  { name = "PDR", loss_ratio = 0.005, exceed_ratio = 0.5, final_trial_duration = 1, duration_sum = 2, width = 0.01, initial_trial_duration = 0.5 } ] }
TOML
  sed -n '/^\[lab\]/,$p' "$config"
} | sed -E 's/"ec-/"lsr-/g; s/^name = "ec"/name = "lsr"/' >"$plan"
grep -q '"lsr-circuit"' "$plan" || { echo "FAIL: $config no longer has the expected [lab] names"; exit 1; }
grep -q '^pps = 20000' "$plan" || { echo "FAIL: $config no longer limits the circuit to 20000 pps"; exit 1; }
lab_start "$lab_cli" "$plan"

"$harness" run "$plan" --results "$work/results" --no-live >"$work/console" 2>&1 ||
  { tail -30 "$work/console"; echo "FAIL: harness run failed"; exit 1; }
sed -n '/^Rate search/,$p' "$work/console"

python3 - "$work" <<'PY'
import glob, json, sys
summary = json.load(open(glob.glob(f"{sys.argv[1]}/results/*/summary.json")[0]))
searches = [r for r in summary["runs"] if "search" in r]
ok = len(searches) == 2 or print(f"FAIL: {len(searches)} searches in summary.json, 2 expected")
limit = 20000.0
for run in searches:
    s = run["search"]
    mrr = s["mrr"]
    print(f"{run['run']:20} {run['role']:17} MRR received {mrr['forwarding_rate']:9.0f} pps (offered {mrr['offered_rate']:.0f} "
          f"unpaced), {len(s['trials'])} trials, {s['trial_seconds']:g} trial-seconds; {s['load_conversion']}")
    for t in s["trials"][1:]:
        figures = (f"sent {t['offered_rate']:9.0f} received {t['forwarding_rate']:9.0f} loss ratio {t['loss_ratio']:.6f}"
                   f"{' load-limited' if t['load_limited'] else ''}") if t["ran"] else f"FAILED: {t['failure']}"
        print(f"    {t['intended_load']:9.0f} pps {t['trial_duration']:4} s: {figures}   ({t['reason']})")
    for key in ("procedure", "goals", "goal_results", "trial_seconds", "load_conversion"):
        if key not in s:
            print(f"FAIL: summary.json's search has no '{key}'"); ok = False
    for r in s["goal_results"]:
        g, lower, upper = r["goal"], r["relevant_lower_bound"], r["relevant_upper_bound"]
        print(f"  {g['name']} (loss ratio {g['loss_ratio']}, width {g['width']}): relevant lower bound {lower} "
              f"({r['relevant_lower_bound_per_instance']} per instance), relevant upper bound {upper}, conditional "
              f"throughput {r['conditional_throughput']}, {'regular' if r['regular'] else 'irregular: ' + '; '.join(r['irregularities'])}, "
              f"{r['trial_seconds']:g} trial-seconds")
        if lower is None or upper is None:
            print("FAIL: no relevant lower or upper bound"); ok = False; continue
        if abs(lower / limit - 1) > 0.03:
            print(f"FAIL: the relevant lower bound is {100 * (lower / limit - 1):+.2f} % from the circuit's limit (3 % allowed)"); ok = False
        if not upper > lower or (upper - lower) / upper > g["width"] + 1e-9:
            print(f"FAIL: the relevant upper bound is not above the lower one within the goal width"); ok = False
sys.exit(0 if ok else 1)
PY
