#!/usr/bin/env bash
# Lab test: a packet-rate limiter behind a device that passes UDP GSO buffers whole. Three namespaces,
# client - router - server, joined by veth pairs as ip(8) makes them (tx-udp-segmentation on, gso_max_segs
# 65535); the router forwards and drops UDP to the server over 20000 packets per second (nft limit).
#  - `netload --search pdr -- -m 1` with no other option lands within 3 % of the limit, and its JSON says
#    it sent datagram by datagram, naming the veth. Forced GSO (--gso) crosses the limiter whole: more
#    than the limit arrives (the premise: without the automatic choice the search reads a wrong figure).
#  - netserve sending (--reverse) makes the same choice for its own route, and says so.
#  - With gso_max_segs 1 on the client's veth (the wire-like path) the kernel cuts each buffer before the
#    device: GSO stays, and the JSON says why.
#   lab_gso_limiter.sh NETSERVE NETLOAD
[[ $# -eq 2 ]] || { echo "usage: lab_gso_limiter.sh NETSERVE NETLOAD" >&2; exit 2; }
netserve=$1 netload=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

limit=20000
c=gsol$$-c r=gsol$$-r s=gsol$$-s
work=$(mktemp -d)
cleanup() {
  local rc=$? ns
  for p in "${server_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for ns in "$c" "$r" "$s"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
for ns in "$c" "$r" "$s"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n "$c" link add eth0 type veth peer name toc netns "$r"
ip -n "$s" link add eth0 type veth peer name tos netns "$r"
ip -n "$c" addr add 198.18.40.1/24 dev eth0
ip -n "$r" addr add 198.18.40.254/24 dev toc
ip -n "$r" addr add 198.18.41.254/24 dev tos
ip -n "$s" addr add 198.18.41.1/24 dev eth0
for pair in "$c eth0" "$r toc" "$r tos" "$s eth0"; do ip -n ${pair% *} link set ${pair#* } up; done
ip -n "$c" route add default via 198.18.40.254
ip -n "$s" route add default via 198.18.41.254
ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
ip netns exec "$r" nft -f - <<NFT
table inet gsolab {
  chain forward {
    type filter hook forward priority 0; policy accept;
    ip protocol udp limit rate over $limit/second burst 200 packets drop
  }
}
NFT
netserve_in "$s" 198.18.41.1 11256 "$work/ns"

json_field() {  # FILE PYTHON-EXPRESSION-ON-j
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
fail() { echo "FAIL: $*"; exit 1; }

# 1. The premise: GSO buffers cross the limiter whole, so more than the limit arrives.
ip netns exec "$c" "$netload" -H 198.18.41.1 -p 11256 -t UDP_STREAM -l 2 --gso --json -- -m 1 >"$work/gso.json" \
  2>"$work/gso.err" || true
premise=$(json_field "$work/gso.json" 'round(j["receiver"]["pps"])')
echo "forced GSO: $premise pps received through a $limit pps limit"
((premise > limit * 103 / 100)) || fail "forced GSO did not cross the limiter whole ($premise pps): the test's premise"

# 2. The search, with no extra option.
ip netns exec "$c" "$netload" -H 198.18.41.1 -p 11256 -t UDP_STREAM --search pdr --json -- -m 1 >"$work/pdr.json" \
  2>"$work/pdr.err" || { cat "$work/pdr.err"; fail "netload --search pdr exited non-zero"; }
python3 - "$work/pdr.json" "$limit" <<'PY' || exit 1
import json, sys
j, limit = json.load(open(sys.argv[1])), float(sys.argv[2])
seg = j["mrr"]["segmentation"]
print(f"search: MRR sent {j['mrr']['sent_pps']:.0f} pps, received {j['mrr']['received_pps']:.0f} pps; segmentation {seg}")
if seg["mode"] != "datagram" or not seg["automatic"] or "eth0 (veth)" not in seg["why"]:
    sys.exit("FAIL: the JSON does not say datagram by datagram, automatic, naming eth0 (veth)")
ok = True
for r in j["search"]["goal_results"]:
    for name in ("relevant_lower_bound", "conditional_throughput"):
        v = r[name]
        print(f"  {r['goal']['name']}: {name} {v} ({'-' if v is None else f'{(v / limit - 1) * 100:+.2f} %'} of the limit)")
        if v is None or abs(v / limit - 1) > 0.03:
            print(f"FAIL: {r['goal']['name']}: {name} not within 3 % of {limit:.0f} pps"); ok = False
sys.exit(0 if ok else 1)
PY

# 3. netserve sending: the same rule on its route back.
ip netns exec "$c" "$netload" -H 198.18.41.1 -p 11256 -t UDP_STREAM -l 1 --reverse --pps 10000 --json -- -m 64 \
  >"$work/rev.json" 2>"$work/rev.err" || { cat "$work/rev.err"; fail "reverse run failed"; }
rev=$(json_field "$work/rev.json" 'j["segmentation"]["mode"] + " | " + j["segmentation"]["why"]')
echo "reverse: $rev"
[[ $rev == "datagram | eth0 (veth) hands UDP GSO buffers whole"* ]] || fail "netserve's reverse choice: $rev"

# 4. The wire-like path: the kernel cuts each buffer before the veth, so GSO stays.
ip -n "$c" link set eth0 gso_max_segs 1
ip netns exec "$c" "$netload" -H 198.18.41.1 -p 11256 -t UDP_STREAM -l 1 --pps 10000 --json -- -m 64 \
  >"$work/wl.json" 2>"$work/wl.err" || true
wl=$(json_field "$work/wl.json" 'j["segmentation"]["mode"] + " | " + j["sender"]["batching"] + " | " + j["segmentation"]["why"]')
echo "gso_max_segs 1: $wl"
[[ $wl == "gso | gso | eth0's gso_max_segs is 1"* ]] || fail "with gso_max_segs 1: $wl"

# 5. Routing by source address: the main table reaches the server by a second link without the offload
# (eth1), a rule sends what comes from eth0's address by eth0. netload -L that address asks the route it
# will take, from its source: datagram by datagram, by eth0.
ip -n "$c" link set eth0 gso_max_segs 65535
ip -n "$c" link add eth1 type veth peer name toc1 netns "$r"
ip -n "$c" addr add 198.18.42.1/24 dev eth1
ip -n "$r" addr add 198.18.42.254/24 dev toc1
ip -n "$c" link set eth1 up
ip -n "$r" link set toc1 up
ip netns exec "$c" ethtool -K eth1 tx-udp-segmentation off >/dev/null
ip -n "$c" route replace default via 198.18.42.254 dev eth1
ip -n "$c" route add default via 198.18.40.254 dev eth0 table 100
ip -n "$c" rule add from 198.18.40.1 lookup 100
ip netns exec "$c" "$netload" -H 198.18.41.1 -p 11256 -L 198.18.40.1 -t UDP_STREAM -l 1 --pps 10000 --json -- -m 64 \
  >"$work/src.json" 2>"$work/src.err" || true
src=$(json_field "$work/src.json" 'j["segmentation"]["mode"] + " | " + j["segmentation"]["why"]')
echo "from 198.18.40.1, routed by source: $src"
[[ $src == "datagram | eth0 (veth) hands UDP GSO buffers whole"* ]] || fail "the route from -L's address: $src"
echo "ok: the search found the limiter's $limit pps with no option; the choice is said in both directions"
