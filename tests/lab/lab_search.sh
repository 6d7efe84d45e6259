#!/usr/bin/env bash
# Lab test: the harness's rate search finds the circuit's packet-rate limit. The hosts and [lab] of
# configs/express-connect-lab.toml (renamed, so a lab a user has up is left alone), with one search test
# per role at -m 1: eight instances, an unpaced trial, paced trials, a final trial per loss target.
# The circuit drops every packet over 20000 per second and direction (nft limit, test control included),
# so both NDR (0 %) and PDR (0.5 %) must land within 5 % of 20000 pps, in both roles, each confirmed by a
# final trial at its rate that met its target.
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
skew_bound_ms = 50     # eight senders on a 2-core machine: the unpaced trial starts its last one late
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
search = { loss = [0.0, 0.5], trial = 1, final = 3, precision = 2, max_trials = 14 }

[[tests]]
name = "device-client"
kind = "UDP_STREAM"
message_size = 1
topology = "fan-out"
client = "device"
servers = "instances"
search = { loss = [0.0, 0.5], trial = 1, final = 3, precision = 2, max_trials = 14 }
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
    print(f"{run['run']:20} {run['role']:17} MRR received {mrr['received_pps']:9.0f} pps (offered {mrr['sent_pps']:.0f} "
          f"unpaced), {len(s['trials'])} trials")
    for t in s["trials"][1:]:
        figures = (f"sent {t['sent_pps']:9.0f} received {t['received_pps']:9.0f} loss {t['loss_pct']:8.4f} %"
                   f"{' sender-limited' if t['sender_limited'] else ''}") if t["ok"] else f"FAILED: {t['failure']}"
        print(f"    {t['phase']:6} {t.get('loss_target_pct', ''):>4} offered {t['offered_pps']:9.0f} pps {t['duration']:4} s: {figures}")
    for r in s["results"]:
        rate, final = r["rate_pps"], r["final"]
        if rate is None or final is None:
            print(f"FAIL: loss <= {r['loss_target_pct']} %: no rate ({r['note']})"); ok = False; continue
        err = rate / limit - 1
        print(f"  loss <= {r['loss_target_pct']:3} %: {rate:9.0f} pps ({err * 100:+.2f} % of the limit); final trial "
              f"sent {final['sent']} received {final['received']} loss {final['loss_pct']:.4f} %")
        if abs(err) > 0.05:
            print("FAIL: more than 5 % from the circuit's limit"); ok = False
        if final["loss_pct"] > r["loss_target_pct"] + 1e-9 or final["sender_limited"]:
            print("FAIL: the final trial did not meet its target"); ok = False
sys.exit(0 if ok else 1)
PY
