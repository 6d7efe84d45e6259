#!/bin/sh
# The netns launcher for real: two network namespaces made by this test, joined by a veth pair on
# 198.18.0.0/30 (the benchmarking range), a netserve in one and two netload instances in the other,
# every command through `ip netns exec`. The namespaces are removed at the end.
set -eu
harness=$1
build=$2
[ "$(id -u)" = 0 ] || { echo "SKIP: creating network namespaces needs root"; exit 77; }
ns_s="hns-$$-s"
ns_c="hns-$$-c"
tmp=$(mktemp -d /tmp/harness-ns.XXXXXX)
cleanup() { ip netns del "$ns_s" 2>/dev/null || true; ip netns del "$ns_c" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
ip netns add "$ns_s" || { echo "SKIP: ip netns add failed"; exit 77; }
ip netns add "$ns_c"
ip link add "hv$$s" netns "$ns_s" type veth peer name "hv$$c" netns "$ns_c"
ip -n "$ns_s" addr add 198.18.0.1/30 dev "hv$$s"
ip -n "$ns_c" addr add 198.18.0.2/30 dev "hv$$c"
for ns in "$ns_s" "$ns_c"; do ip -n "$ns" link set lo up; done
ip -n "$ns_s" link set "hv$$s" up
ip -n "$ns_c" link set "hv$$c" up

cat > "$tmp/ns.toml" <<PLAN
name = "netns"
[defaults]
duration = 2
warmup = 1
ports = [0, 0]
[hosts]
server = { address = "198.18.0.1", launcher = "netns", namespace = "$ns_s" }
client = { address = "198.18.0.2", launcher = "netns", namespace = "$ns_c" }
[[tests]]
name = "across-veth"
message_size = 1000
rate = "20M"
topology = "fan-in"
server = "server"
clients = ["client", "client"]
PLAN
"$harness" run "$tmp/ns.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" || {
  echo "FAIL: harness with the netns launcher exited $?"; cat "$tmp/err" "$tmp/out"; exit 1; }
cat "$tmp/out"
dir=$(ls -d "$tmp"/results/netns-*)
grep -q '"ok": true' "$dir/summary.json" || { echo "FAIL: run not ok"; cat "$dir/summary.json"; exit 1; }
grep -q "ip netns exec $ns_c" "$dir/environment.json" || { echo "FAIL: netload not run through ip netns exec"; exit 1; }
grep -q '"host": "198.18.0.1"' "$dir/raw/across-veth-m1000/01-client.json" || { echo "FAIL: not sent to 198.18.0.1"; exit 1; }
echo "ok: two instances across a veth pair between namespaces $ns_c -> $ns_s"
