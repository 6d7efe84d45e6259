#!/usr/bin/env bash
# Lab test: netload alone finds the circuit's packet-rate limit. One instance namespace sends to netserve
# in the device namespace across a circuit that drops every packet over 20000 per second and direction
# (nft limit, burst 200, test control included). `netload --search both` (RFC 9971 MLRsearch: an unpaced
# trial, then paced trials) must put both goals' relevant lower bounds and conditional throughputs within
# 3 % of 20000 pps, each relevant upper bound above its lower bound, and print the figures.
#   lab_netload_search.sh LAB_CLI NETSERVE NETLOAD [SEARCH OPTIONS...]
# The goals: 1-s trials, a 1-% width and a 5-s duration sum (about a minute); other options replace them.
lab_cli=$1 netserve=$2 netload=$3
shift 3
goals=("$@")
[[ ${#goals[@]} -eq 0 ]] && goals=(--width 0.01 --duration-sum 5)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

limit=20000
lab_start "$lab_cli" "$(lab_file lnsr 1 "pps = $limit" 'mtu_onprem = 1500' 'mtu_vpc = 1500')"
netserve_in lnsr-dev 198.18.0.2 11256 "$work/ns-dev"

start=$(date +%s.%N)
ip netns exec lnsr-i1 "$netload" -H 198.18.0.2 -p 11256 -t UDP_STREAM --search both "${goals[@]}" --json -- -m 1 \
  >"$work/search.json" 2>"$work/search.err" || { cat "$work/search.err"; echo "FAIL: netload --search exited $?"; exit 1; }
cat "$work/search.err"

python3 - "$work/search.json" "$limit" "$start" <<'PY'
import json, sys, time
j = json.load(open(sys.argv[1]))
limit, took = float(sys.argv[2]), time.time() - float(sys.argv[3])
s = j["search"]
print(f"MRR: sent {j['mrr']['sent_pps']:.0f} pps, received {j['mrr']['received_pps']:.0f} pps; {len(s['trials'])} trials, "
      f"{s['trial_seconds']:.1f} trial-seconds, {took:.1f} s wall clock; circuit limit {limit:.0f} pps")
ok = True
for r in s["results"]:
    lo, up, ct = r["relevant_lower_bound"], r["relevant_upper_bound"], r["conditional_throughput"]
    print(f"  {r['goal']}: relevant lower bound {lo}, relevant upper bound {up}, conditional throughput {ct}, "
          f"regular {r['regular']} {r['irregularities']}, {r['trial_seconds']:.1f} trial-seconds")
    if lo is None or ct is None or up is None:
        print(f"FAIL: {r['goal']}: a bound or the conditional throughput is missing"); ok = False; continue
    for name, v in (("relevant lower bound", lo), ("conditional throughput", ct)):
        off = v / limit - 1
        print(f"    {name}: {off * 100:+.2f} % of the limit")
        if abs(off) > 0.03:
            print(f"FAIL: {r['goal']}: {name} more than 3 % from the circuit's limit"); ok = False
    if not lo < up:
        print(f"FAIL: {r['goal']}: the relevant upper bound is not above the lower"); ok = False
sys.exit(0 if ok else 1)
PY
