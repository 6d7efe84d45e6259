#!/usr/bin/env bash
# Lab test: an MTU step on the circuit (device side 1500, VPC side 1400, the OCI tutorial's mismatch or
# an IPsec overhead in miniature). The device's own link says 1500, so it learns the smaller path MTU only
# from the circuit router's ICMP "fragmentation needed" (the lab never drops ICMP):
#  - the first UDP -m 1472 run sends, the router drops the datagram and answers with ICMP, netload's next
#    send fails with EMSGSIZE and it stops with the path-MTU error (1 datagram sent, 0 received);
#  - the second run fails before sending, the route cache now holding MTU 1400;
#  - -m 1372 (1400 - 28) passes; TCP_STREAM reports an MSS <= 1360 (1400 - 40, less TCP options).
#  - `harness check` of a plan sending -m 1373 from the device warns that 1373 + 28 bytes cannot cross the
#    1400 it measures there now; -m 1372 gets no warning.
#   lab_mtu.sh LAB_CLI NETSERVE NETLOAD HARNESS
lab_cli=$1 netserve=$2 netload=$3 harness=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

lab_start "$lab_cli" "$(lab_file lmtu 1 'mtu_onprem = 1500' 'mtu_vpc = 1400')"
netserve_in lmtu-i1 198.19.0.2 11256 "$work/ns"
load() { ip netns exec lmtu-dev "$netload" -H 198.19.0.2 -p 11256 -l 0.5 "$@"; }
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

for attempt in first second; do
  if load -t UDP_STREAM --pps 1000 --json -- -m 1472 >"$work/$attempt.json" 2>"$work/$attempt.err"; then
    echo "FAIL: UDP -m 1472 across a 1400 MTU did not fail ($attempt run)"; exit 1
  fi
  err=$(field "$work/$attempt.json" 'r["error"]')
  grep -q 'does not fit the path MTU 1400' <<<"$err" || { echo "FAIL: $attempt run: unclear error: $err"; exit 1; }
  grep -q 'largest UDP payload 1372' <<<"$err" || { echo "FAIL: $attempt run: no largest payload: $err"; exit 1; }
  echo "$attempt run: sent $(field "$work/$attempt.json" 'r["sender"]["packets"]'), received" \
       "$(field "$work/$attempt.json" 'r["receiver"]["packets"]'): $err"
done
# The device's route now holds the path MTU: `harness check` measures it and judges the plan's sizes by it.
check_plan() {
  cat >"$work/check-$1.toml" <<PLAN
[defaults]
ports = [11300]
[hosts]
dev = { address = "198.18.0.2", launcher = "netns", namespace = "lmtu-dev" }
i1 = { address = "198.19.0.2", launcher = "netns", namespace = "lmtu-i1" }
[[tests]]
name = "m$1"
message_size = $1
topology = "fan-in"
server = "i1"
clients = ["dev"]
PLAN
  "$harness" check "$work/check-$1.toml" --bin-dir "$(dirname "$(dirname "$netload")")" >"$work/check-$1.out" 2>&1 ||
    { cat "$work/check-$1.out"; echo "FAIL: harness check -m $1 failed"; exit 1; }
}
check_plan 1373
grep -q "^warning: host 'dev': test 'm1373' sends 1373-byte UDP datagrams to 198.19.0.2, but the path MTU there is 1400" \
  "$work/check-1373.out" || { cat "$work/check-1373.out"; echo "FAIL: harness check does not warn of -m 1373 over MTU 1400"; exit 1; }
check_plan 1372
grep -q "^warning:" "$work/check-1372.out" && { cat "$work/check-1372.out"; echo "FAIL: harness check warns of -m 1372"; exit 1; }
echo "harness check: $(grep '^warning:' "$work/check-1373.out")"
# exit 4: ran and reconciles, but this short paced test missed its rate; not what is tested here
load -t UDP_STREAM --pps 1000 --json -- -m 1372 >"$work/fits.json" 2>"$work/fits.err" || [[ $? -eq 4 ]] || { echo "FAIL: -m 1372 fits 1400 but failed: $(cat "$work/fits.err")"; exit 1; }
load -t TCP_STREAM --rate 20M --json >"$work/tcp.json" 2>/dev/null || [[ $? -eq 4 ]] || { echo "FAIL: TCP_STREAM across the step failed"; exit 1; }
mss=$(field "$work/tcp.json" 'r["mss"]') pmtu=$(field "$work/tcp.json" 'r["path_mtu"]')
(( mss > 0 && mss <= 1360 )) || { echo "FAIL: TCP MSS $mss does not follow the 1400 path MTU"; exit 1; }
# The sending connection's own view (TCP_INFO at its end): the path MTU it learnt, and the MSS it sent with.
tcp_pmtu=$(field "$work/tcp.json" 'r["tcp"]["pmtu"]') tcp_mss=$(field "$work/tcp.json" 'r["tcp"]["snd_mss"]')
(( tcp_pmtu == 1400 )) || { echo "FAIL: TCP_INFO path MTU $tcp_pmtu, not the circuit's 1400"; exit 1; }
(( tcp_mss > 0 && tcp_mss <= 1360 )) || { echo "FAIL: TCP_INFO MSS $tcp_mss does not follow the 1400 path MTU"; exit 1; }
echo "ok: -m 1372 passes; TCP_STREAM MSS $mss, path MTU $pmtu; TCP_INFO path MTU $tcp_pmtu, MSS $tcp_mss"
